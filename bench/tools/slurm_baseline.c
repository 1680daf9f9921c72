/*
 * slurm-baseline: "Baseline A" of make bench.  Submits the allocation-only
 * placeholder jobs the bridge would submit for the same pods, straight
 * through libslurm and with no Kubernetes in the way, and measures how fast
 * Slurm allocates them.  One thread, as the bridge's reconcile thread: it
 * submits one job after another as fast as slurmctld answers, and when jobs
 * are left queued it polls slurm_load_jobs(update_time) every 50 ms (also
 * between submits) until each runs.  At the end it cancels every job it
 * submitted and waits until none shows in squeue, then prints one line of
 * JSON on stdout, with the RPCs it made until the last allocation (submits
 * and polls, not the clean-up), and with --dump one line per allocated job
 * for the bench's plot.  Exits 0 when every job was allocated, 1 when some
 * were refused or not allocated in time, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "bench.h"
#include "pct.h"

#define BL_PARTITION	  "slurm-bridge"
#define BL_COMMENT	  "bench-baseline"
#define BL_MEM_PER_CPU_MB 64 /* the bridge's for a 64Mi pod */
#define BL_POLL_S	  0.050
#define BL_DRAIN_POLL_S	  0.100
#define BL_DRAIN_S	  60.0
#define BL_TIMEOUT_S	  120

/* Exported by libslurm but not declared in slurm.h (22.05). */
extern void slurm_xfree(void **);

enum bl_state {
	BL_PENDING,
	BL_RUNNING,
	BL_ENDED /* ended before it ever ran */
};

struct bl_job {
	uint32_t      id;
	enum bl_state state;
	double	      t_submit; /* monotonic, just before the call */
	double	      t_alloc;	/* monotonic, allocation known */
};

struct bl_run {
	const char    *scenario;
	const char    *partition;
	uint32_t       njobs; /* asked for */
	uint32_t       size;  /* tasks per job */
	uint32_t       gpus;  /* GPUs per task */
	struct bl_job *jobs;  /* submitted, in submission order */
	size_t	       nsub;
	size_t	       npending;
	int	       sorted; /* jobs[] ascending by id */
	time_t	       since;  /* update_time for slurm_load_jobs */
	double	       last_poll;
	int	       poll_failed; /* a poll error was reported */
	uint32_t       errors;
	uint64_t       rpcs; /* submits and polls */
};

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: slurm-baseline [--timeout S] [--partition P] [--dump F] singles N\n"
	    "       slurm-baseline [--timeout S] [--partition P] [--dump F]\n"
	    "                      gangs G SIZE GPUS\n"
	    "  singles N          N jobs of 1 task x 1 CPU, 64 MiB per CPU\n"
	    "  gangs G SIZE GPUS  G jobs of SIZE tasks x 1 CPU, 64 MiB per CPU and\n"
	    "                     tres_per_task gres:gpu:GPUS (none when GPUS is 0)\n"
	    "  --timeout S        wait for queued jobs up to S seconds after the last\n"
	    "                     submit (default %d)\n"
	    "  --partition P      Slurm partition (default " BL_PARTITION ")\n"
	    "  --dump F           write \"alloc_ms latency_ms job_id\" per allocated job,\n"
	    "                     in allocation order; alloc_ms from the first submit\n"
	    "Prints one JSON line on stdout.  Every submitted job is cancelled at the\n"
	    "end, and the tool waits (up to %d s) until squeue shows none of them.\n",
	    BL_TIMEOUT_S, (int)BL_DRAIN_S);
}

static double
bl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
bl_sleep(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Has SIGINT or SIGTERM arrived (they are blocked and left pending)? */
static int
bl_interrupted(void)
{
	sigset_t pend;

	if (sigpending(&pend) == -1)
		return (0);
	return (sigismember(&pend, SIGINT) == 1 ||
	    sigismember(&pend, SIGTERM) == 1);
}

/* libslurm 22.05 leaks admin_comment in slurm_free_job_info_msg(). */
static void
bl_free_jobs(job_info_msg_t *msg)
{
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
	uint32_t i;

	for (i = 0; msg != NULL && i < msg->record_count; i++)
		slurm_xfree((void **)&msg->job_array[i].admin_comment);
#endif
	slurm_free_job_info_msg(msg);
}

static int
bl_job_cmp(const void *a, const void *b)
{
	const struct bl_job *x = a, *y = b;

	return (x->id < y->id ? -1 : x->id > y->id);
}

static struct bl_job *
bl_job_find(struct bl_run *r, uint32_t id)
{
	struct bl_job key;

	if (!r->sorted) {
		qsort(r->jobs, r->nsub, sizeof(*r->jobs), bl_job_cmp);
		r->sorted = 1;
	}
	memset(&key, 0, sizeof(key));
	key.id = id;
	return (bsearch(&key, r->jobs, r->nsub, sizeof(*r->jobs), bl_job_cmp));
}

/* The request sctl_desc_fill() makes for such pods (bridge/slurmsubmit.c). */
static void
bl_desc_fill(const struct bl_run *r, job_desc_msg_t *d, char *name,
    char *admin_comment, char *tres)
{
	slurm_init_job_desc_msg(d);
	d->name = name;
	d->comment = (char *)(uintptr_t)BL_COMMENT;
	d->admin_comment = admin_comment;
	d->partition = (char *)(uintptr_t)r->partition;
	d->tres_per_task = r->gpus > 0 ? tres : NULL;
	d->num_tasks = r->size;
	d->cpus_per_task = 1;
	d->min_cpus = r->size;
	d->min_nodes = 1;
	if (r->size == 1)
		d->max_nodes = 1;
	d->pn_min_memory = BL_MEM_PER_CPU_MB | MEM_PER_CPU;
	d->user_id = getuid();
	d->group_id = getgid();
	d->work_dir = (char *)(uintptr_t) "/";
}

/*
 * One incremental poll: marks our queued jobs that now run (or ended).
 * 0, or -1 when slurm_load_jobs failed (reported once).
 */
static int
bl_poll(struct bl_run *r)
{
	job_info_msg_t	 *msg = NULL;
	slurm_job_info_t *j;
	struct bl_job	 *b;
	uint32_t	  i, base;
	double		  now;
	int		  rc;

	rc = slurm_load_jobs(r->since, &msg, SHOW_ALL);
	now = bl_now();
	r->rpcs++;
	r->last_poll = now;
	if (rc != SLURM_SUCCESS) {
		if (slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA)
			return (0);
		if (!r->poll_failed)
			fprintf(stderr, "slurm-baseline: slurm_load_jobs: %s\n",
			    slurm_strerror(slurm_get_errno()));
		r->poll_failed = 1;
		return (-1);
	}
	r->since = msg->last_update;
	for (i = 0; i < msg->record_count && r->npending > 0; i++) {
		j = &msg->job_array[i];
		if (j->comment == NULL || strcmp(j->comment, BL_COMMENT) != 0 ||
		    (b = bl_job_find(r, j->job_id)) == NULL ||
		    b->state != BL_PENDING)
			continue;
		base = j->job_state & JOB_STATE_BASE;
		if (base == JOB_PENDING)
			continue;
		r->npending--;
		if (base == JOB_RUNNING || base == JOB_SUSPENDED) {
			b->state = BL_RUNNING;
			b->t_alloc = now;
		} else {
			b->state = BL_ENDED;
			fprintf(stderr,
			    "slurm-baseline: job %u (%s) ended "
			    "before it ran\n",
			    j->job_id, j->name != NULL ? j->name : "?");
		}
	}
	bl_free_jobs(msg);
	return (0);
}

/* Submits job i; a refusal is counted (and the first one printed). */
static void
bl_submit(struct bl_run *r, uint32_t i)
{
	resource_allocation_response_msg_t *resp = NULL;
	job_desc_msg_t			    d;
	struct bl_job			   *b;
	char				    name[64], ac[96], tres[32];
	double				    t0, t1;
	int				    rc;

	snprintf(name, sizeof(name), "bench/%s-%u",
	    strcmp(r->scenario, "singles") == 0 ? "single" : "gang", i);
	/* The bridge puts the pod list there; keep the request as big. */
	snprintf(ac, sizeof(ac), "{\"pods\":[\"%s\"]}", name);
	snprintf(tres, sizeof(tres), "gres:gpu:%u", r->gpus);
	bl_desc_fill(r, &d, name, ac, tres);
	t0 = bl_now();
	rc = slurm_allocate_resources(&d, &resp);
	t1 = bl_now();
	r->rpcs++;
	if (rc != SLURM_SUCCESS || resp == NULL) {
		if (r->errors++ == 0)
			fprintf(stderr,
			    "slurm-baseline: %s: "
			    "slurm_allocate_resources: %s\n",
			    name, slurm_strerror(slurm_get_errno()));
		slurm_free_resource_allocation_response_msg(resp);
		return;
	}
	b = &r->jobs[r->nsub++];
	b->id = resp->job_id;
	b->t_submit = t0;
	if (r->nsub > 1 && b->id < r->jobs[r->nsub - 2].id)
		r->sorted = 0;
	if (resp->node_list != NULL && *resp->node_list != '\0') {
		b->state = BL_RUNNING;
		b->t_alloc = t1;
	} else {
		b->state = BL_PENDING;
		r->npending++;
	}
	slurm_free_resource_allocation_response_msg(resp);
}

/* Is a job of ours still shown by squeue (pending, running, completing)? */
static int
bl_job_listed(const slurm_job_info_t *j)
{
	uint32_t base = j->job_state & JOB_STATE_BASE;

	return (base == JOB_PENDING || base == JOB_RUNNING ||
	    base == JOB_SUSPENDED || (j->job_state & JOB_COMPLETING));
}

/*
 * Cancels every job submitted and waits until squeue shows none of them.
 * 0, or -1 when some are still listed after BL_DRAIN_S.
 */
static int
bl_drain(struct bl_run *r)
{
	job_info_msg_t *msg = NULL;
	uint32_t	i;
	size_t		k, left = 0;
	double		deadline;
	int		e;

	for (k = 0; k < r->nsub; k++) {
		if (slurm_kill_job(r->jobs[k].id, SIGKILL, 0) == SLURM_SUCCESS)
			continue;
		e = slurm_get_errno();
		/* Already gone is what we wanted. */
		if (e != ESLURM_ALREADY_DONE && e != ESLURM_INVALID_JOB_ID)
			fprintf(stderr,
			    "slurm-baseline: slurm_kill_job %u: "
			    "%s\n",
			    r->jobs[k].id, slurm_strerror(e));
	}
	deadline = bl_now() + BL_DRAIN_S;
	do {
		if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
			bl_sleep(BL_DRAIN_POLL_S);
			continue;
		}
		left = 0;
		for (i = 0; i < msg->record_count; i++)
			if (bl_job_find(r, msg->job_array[i].job_id) != NULL &&
			    bl_job_listed(&msg->job_array[i]))
				left++;
		bl_free_jobs(msg);
		msg = NULL;
		if (left == 0)
			return (0);
		bl_sleep(BL_DRAIN_POLL_S);
	} while (bl_now() < deadline);
	fprintf(stderr, "slurm-baseline: %zu jobs still in squeue after %d s\n",
	    left, (int)BL_DRAIN_S);
	return (-1);
}

static int
bl_alloc_cmp(const void *a, const void *b)
{
	const struct bl_job *x = *(const struct bl_job *const *)a;
	const struct bl_job *y = *(const struct bl_job *const *)b;

	return (x->t_alloc < y->t_alloc ? -1 : x->t_alloc > y->t_alloc);
}

/*
 * --dump: "alloc_ms latency_ms job_id" per allocated job, in allocation
 * order, alloc_ms from the first submit.  0, or -1 (reported).
 */
static int
bl_dump(const struct bl_run *r, const char *path)
{
	const struct bl_job **v;
	FILE		     *fp;
	double		      first = 0;
	size_t		      k, n = 0;
	int		      rc = 0;

	if ((fp = fopen(path, "w")) == NULL ||
	    (v = calloc(r->nsub > 0 ? r->nsub : 1, sizeof(*v))) == NULL) {
		fprintf(stderr, "slurm-baseline: %s: %s\n", path,
		    strerror(errno));
		if (fp != NULL)
			fclose(fp);
		return (-1);
	}
	for (k = 0; k < r->nsub; k++) {
		if (k == 0 || r->jobs[k].t_submit < first)
			first = r->jobs[k].t_submit;
		if (r->jobs[k].state == BL_RUNNING)
			v[n++] = &r->jobs[k];
	}
	qsort(v, n, sizeof(*v), bl_alloc_cmp);
	for (k = 0; k < n; k++)
		fprintf(fp, "%.3f %.3f %u\n", (v[k]->t_alloc - first) * 1e3,
		    (v[k]->t_alloc - v[k]->t_submit) * 1e3, v[k]->id);
	if (fclose(fp) == EOF) {
		fprintf(stderr, "slurm-baseline: %s: %s\n", path,
		    strerror(errno));
		rc = -1;
	}
	free(v);
	return (rc);
}

static void
bl_report(const struct bl_run *r)
{
	double	*lat, first = 0, last = 0, wall;
	size_t	 k, n = 0;
	uint64_t tasks = (uint64_t)r->njobs * r->size;

	lat = calloc(r->nsub > 0 ? r->nsub : 1, sizeof(*lat));
	if (lat == NULL) {
		fprintf(stderr, "slurm-baseline: calloc: %s\n",
		    strerror(errno));
		exit(1);
	}
	for (k = 0; k < r->nsub; k++) {
		if (k == 0 || r->jobs[k].t_submit < first)
			first = r->jobs[k].t_submit;
		if (r->jobs[k].state != BL_RUNNING)
			continue;
		lat[n++] = (r->jobs[k].t_alloc - r->jobs[k].t_submit) * 1e3;
		if (r->jobs[k].t_alloc > last)
			last = r->jobs[k].t_alloc;
	}
	wall = n > 0 ? last - first : 0;
	printf("{\"scenario\":\"%s\",\"jobs\":%u,\"tasks\":%" PRIu64 ","
	       "\"allocated\":%zu,\"wall_s\":%.3f,",
	    r->scenario, r->njobs, tasks, n, wall);
	if (wall > 0)
		printf("\"jobs_per_s\":%.1f,\"tasks_per_s\":%.1f,",
		    (double)n / wall, (double)n * r->size / wall);
	else
		printf("\"jobs_per_s\":null,\"tasks_per_s\":null,");
	if (n > 0) {
		pct_sort(lat, n);
		printf("\"latency_ms\":{\"p50\":%.3f,\"p90\":%.3f,"
		       "\"p99\":%.3f,\"max\":%.3f},",
		    pct_rank(lat, n, 50), pct_rank(lat, n, 90),
		    pct_rank(lat, n, 99), lat[n - 1]);
	} else
		printf("\"latency_ms\":{\"p50\":null,\"p90\":null,"
		       "\"p99\":null,\"max\":null},");
	printf("\"rpcs\":%" PRIu64 ",", r->rpcs);
	if (n > 0)
		printf("\"rpcs_per_job\":%.3f,", (double)r->rpcs / (double)n);
	else
		printf("\"rpcs_per_job\":null,");
	printf("\"errors\":%u}\n", r->errors);
	fflush(stdout);
	free(lat);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "partition", required_argument, NULL, 'p' },
		{ "dump", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct bl_run r;
	sigset_t      sigs;
	const char   *dump = NULL;
	uint32_t      i, timeout = BL_TIMEOUT_S;
	long long     n, size, gpus;
	double	      deadline, wait;
	int	      ch, interrupted = 0, rc = 0;

	memset(&r, 0, sizeof(r));
	r.partition = BL_PARTITION;
	r.sorted = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (bench_parse_int(optarg, 0, 86400, &n) == -1) {
				fprintf(stderr,
				    "slurm-baseline: --timeout: "
				    "\"%s\" is not 0-86400 seconds\n",
				    optarg);
				return (2);
			}
			timeout = (uint32_t)n;
			break;
		case 'p':
			r.partition = optarg;
			break;
		case 'd':
			dump = optarg;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 2 && strcmp(argv[0], "singles") == 0) {
		r.scenario = "singles";
		r.size = 1;
		if (bench_parse_int(argv[1], 1, 1000000, &n) == -1)
			goto bad;
		r.njobs = (uint32_t)n;
	} else if (argc == 4 && strcmp(argv[0], "gangs") == 0) {
		r.scenario = "gangs";
		if (bench_parse_int(argv[1], 1, 1000000, &n) == -1 ||
		    bench_parse_int(argv[2], 1, 65535, &size) == -1 ||
		    bench_parse_int(argv[3], 0, 65535, &gpus) == -1)
			goto bad;
		r.njobs = (uint32_t)n;
		r.size = (uint32_t)size;
		r.gpus = (uint32_t)gpus;
	} else
		goto bad;
	if ((r.jobs = calloc(r.njobs, sizeof(*r.jobs))) == NULL) {
		fprintf(stderr, "slurm-baseline: calloc: %s\n",
		    strerror(errno));
		return (1);
	}

	/* Ctrl-C still cancels what was submitted and reports. */
	bench_signals(&sigs);
	slurm_init(NULL);

	r.last_poll = bl_now();
	for (i = 0; i < r.njobs && !(interrupted = bl_interrupted()); i++) {
		bl_submit(&r, i);
		/* Keep the 50 ms poll going while submitting. */
		if (r.npending > 0 && bl_now() - r.last_poll >= BL_POLL_S)
			bl_poll(&r);
	}
	deadline = bl_now() + timeout;
	while (r.npending > 0 && !interrupted) {
		if ((interrupted = bl_interrupted()))
			break;
		if (bl_now() >= deadline) {
			fprintf(stderr,
			    "slurm-baseline: %zu jobs still queued "
			    "after %u s\n",
			    r.npending, timeout);
			break;
		}
		wait = r.last_poll + BL_POLL_S - bl_now();
		bl_sleep(wait);
		bl_poll(&r);
	}
	if (interrupted)
		fprintf(stderr,
		    "slurm-baseline: interrupted: cancelling %zu "
		    "jobs\n",
		    r.nsub);
	if (bl_drain(&r) == -1)
		rc = 1;
	bl_report(&r);
	if (dump != NULL && bl_dump(&r, dump) == -1)
		rc = 1;
	if (r.errors > 0 || r.npending > 0 || r.nsub < r.njobs || interrupted)
		rc = 1;
	for (i = 0; i < r.nsub; i++)
		if (r.jobs[i].state != BL_RUNNING)
			rc = 1;
	free(r.jobs);
	slurm_fini();
	return (rc);
bad:
	usage(stderr);
	return (2);
}
