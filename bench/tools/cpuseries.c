/*
 * cpuseries: the CPU over time of the machine and of named processes, for
 * a look at what kept the cores busy when a scenario's slowest pods came.
 * Every --interval-ms (default 100) it appends one line to --out:
 *
 *   MS BUSY NAME=TICKS ...
 *
 * MS the wall clock in epoch ms; BUSY the machine's busy ticks so far
 * (/proc/stat: all but idle and iowait); then, for each NAME given, the
 * ticks so far of every process whose name (/proc/PID/stat's comm) it is,
 * summed: user and system time, and that of the children they have waited
 * for (slurmd's epilogs).  Ticks are 1/sysconf(_SC_CLK_TCK) s.  The list
 * of processes is read again each second, so one started meanwhile counts
 * from then; one gone is left out from then on, and a name's sum can fall.
 * Runs until SIGINT or SIGTERM.  With --once it writes one line (to
 * stdout when --out is not given) and exits: the bench's snapshots of CPU
 * so far (busy_snap in bench/lib.sh).  Exits 0, 1 when the output cannot
 * be written, 2 on a usage error.
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define CS_MAX_NAMES 32
#define CS_MAX_PIDS  4096
#define CS_RESCAN_MS 1000

struct cs_proc {
	pid_t pid;
	int   name; /* index into names */
};

struct cpuseries {
	const char    *names[CS_MAX_NAMES];
	int	       nnames;
	struct cs_proc procs[CS_MAX_PIDS];
	int	       nprocs;
	FILE	      *out;
};

static void
cpuseries_usage(void)
{
	fprintf(stderr,
	    "usage: cpuseries --out FILE [--interval-ms N] NAME...\n"
	    "       cpuseries --once [--out FILE] NAME...\n"
	    "  Appends \"MS BUSY NAME=TICKS ...\" to FILE every N ms "
	    "(default 100): the\n"
	    "  machine's busy CPU ticks and those of the processes of each "
	    "NAME, until\n"
	    "  SIGINT or SIGTERM; with --once, one line (to stdout without "
	    "--out).\n");
}

/* The comm of a /proc/PID/stat line into name; the rest after it. */
static const char *
cpuseries_comm(const char *line, char *name, size_t len)
{
	const char *open = strchr(line, '(');
	const char *close = strrchr(line, ')');
	size_t	    n;

	if (open == NULL || close == NULL || close < open)
		return (NULL);
	n = (size_t)(close - open - 1);
	if (n >= len)
		n = len - 1;
	memcpy(name, open + 1, n);
	name[n] = '\0';
	return (close + 1);
}

/* Reads /proc/PID/stat into buf; 0, or -1 (the process is gone). */
static int
cpuseries_read_stat(pid_t pid, char *buf, size_t len)
{
	char  path[64];
	FILE *f;
	int   rc = -1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (-1);
	if (fgets(buf, (int)len, f) != NULL)
		rc = 0;
	fclose(f);
	return (rc);
}

/* The processes of the names given, from a walk of /proc. */
static void
cpuseries_scan(struct cpuseries *cs)
{
	DIR	      *d;
	struct dirent *de;
	char	       buf[1024], name[64], *end;
	long	       pid;
	int	       i;

	cs->nprocs = 0;
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL && cs->nprocs < CS_MAX_PIDS) {
		pid = strtol(de->d_name, &end, 10);
		if (pid <= 0 || *end != '\0' ||
		    cpuseries_read_stat((pid_t)pid, buf, sizeof(buf)) == -1 ||
		    cpuseries_comm(buf, name, sizeof(name)) == NULL)
			continue;
		for (i = 0; i < cs->nnames; i++)
			if (strcmp(name, cs->names[i]) == 0) {
				cs->procs[cs->nprocs].pid = (pid_t)pid;
				cs->procs[cs->nprocs++].name = i;
				break;
			}
	}
	closedir(d);
}

/* utime, stime, cutime and cstime (fields 14 to 17) of a stat line. */
static long long
cpuseries_ticks(const char *rest)
{
	long long v, sum = 0;
	int	  field = 3; /* rest starts at field 3, the state */
	char	 *end;

	while (*rest != '\0' && field <= 17) {
		while (*rest == ' ')
			rest++;
		if (field >= 14) {
			v = strtoll(rest, &end, 10);
			sum += v;
			rest = end;
		} else {
			while (*rest != ' ' && *rest != '\0')
				rest++;
		}
		field++;
	}
	return (sum);
}

/* The machine's busy ticks: /proc/stat's cpu line but idle and iowait. */
static long long
cpuseries_busy(void)
{
	/* user nice system idle iowait irq softirq steal */
	static const int busy[8] = { 1, 1, 1, 0, 0, 1, 1, 1 };
	char		 line[512], *p, *end;
	long long	 v, sum = 0;
	FILE		*s;
	int		 i;

	if ((s = fopen("/proc/stat", "r")) == NULL)
		return (0);
	p = fgets(line, sizeof(line), s);
	fclose(s);
	if (p == NULL || strncmp(line, "cpu ", 4) != 0)
		return (0);
	for (p = line + 4, i = 0; i < 8; i++, p = end) {
		v = strtoll(p, &end, 10);
		if (end == p)
			return (0);
		if (busy[i])
			sum += v;
	}
	return (sum);
}

/* One line of the series; 0, or -1 when it could not be written. */
static int
cpuseries_sample(struct cpuseries *cs)
{
	long long   sums[CS_MAX_NAMES] = { 0 };
	char	    buf[1024], name[64];
	const char *rest;
	int	    i;

	for (i = 0; i < cs->nprocs; i++) {
		if (cpuseries_read_stat(cs->procs[i].pid, buf, sizeof(buf)) ==
			-1 ||
		    (rest = cpuseries_comm(buf, name, sizeof(name))) == NULL)
			continue;
		sums[cs->procs[i].name] += cpuseries_ticks(rest);
	}
	fprintf(cs->out, "%" PRId64 " %lld", bench_now_ms(), cpuseries_busy());
	for (i = 0; i < cs->nnames; i++)
		fprintf(cs->out, " %s=%lld", cs->names[i], sums[i]);
	fputc('\n', cs->out);
	return (fflush(cs->out) == 0 ? 0 : -1);
}

/* The time from now until next on CLOCK_MONOTONIC, 0 when it is past. */
static struct timespec
cpuseries_until(const struct timespec *next)
{
	struct timespec now, zero = { 0, 0 };
	int64_t		us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (int64_t)(next->tv_sec - now.tv_sec) * 1000000 +
	    (next->tv_nsec - now.tv_nsec) / 1000;
	return (bench_ts_add(&zero, us > 0 ? us : 0));
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct cpuseries cs;
	struct timespec		next, wait;
	sigset_t		sigs;
	const char	       *out = NULL;
	long long		interval = 100;
	int64_t			scanned = 0;
	int			c, once = 0, rc = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case '1':
			once = 1;
			break;
		case 'i':
			if (bench_parse_int(optarg, 10, 60000, &interval) ==
			    -1) {
				fprintf(stderr,
				    "cpuseries: --interval-ms: \"%s\" is not "
				    "a whole number of ms from 10 to 60000\n",
				    optarg);
				return (2);
			}
			break;
		default:
			cpuseries_usage();
			return (c == 'h' ? 0 : 2);
		}
	}
	if ((out == NULL && !once) || optind == argc ||
	    argc - optind > CS_MAX_NAMES) {
		if (argc - optind > CS_MAX_NAMES)
			fprintf(stderr, "cpuseries: at most %d names\n",
			    CS_MAX_NAMES);
		cpuseries_usage();
		return (2);
	}
	for (; optind < argc; optind++)
		cs.names[cs.nnames++] = argv[optind];
	if ((cs.out = out == NULL ? stdout : fopen(out, "a")) == NULL) {
		fprintf(stderr, "cpuseries: %s: %s\n", out, strerror(errno));
		return (1);
	}
	if (once) {
		cpuseries_scan(&cs);
		rc = cpuseries_sample(&cs);
		goto done;
	}
	bench_signals(&sigs);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		if (bench_now_ms() - scanned >= CS_RESCAN_MS) {
			cpuseries_scan(&cs);
			scanned = bench_now_ms();
		}
		if ((rc = cpuseries_sample(&cs)) == -1)
			break;
		next = bench_ts_add(&next, interval * 1000);
		wait = cpuseries_until(&next);
		if (sigtimedwait(&sigs, NULL, &wait) > 0)
			break;
	}
done:
	if (rc == -1)
		fprintf(stderr, "cpuseries: %s: %s\n",
		    out != NULL ? out : "stdout", strerror(errno));
	if (out != NULL)
		fclose(cs.out);
	return (rc == -1 ? 1 : 0);
}
