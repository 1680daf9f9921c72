/*
 * readywait: polls a scheduler's readiness endpoint (the bridge's or
 * kube-scheduler's /readyz) every --interval ms on one kept-alive
 * connection, for make bench's t0: the moment a scheduler says it is ready.
 * One thread; a poll that gets no answer (the server is not listening yet)
 * is retried on the same schedule.  Prints the epoch ms of the first 200
 * on stdout and exits 0; exits 1 after --timeout seconds or once --pid is
 * gone, 2 on a usage error.
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

#include <curl/curl.h>

#include "bench.h"

#define RW_INTERVAL_MS 10
#define RW_TIMEOUT_S   120
#define RW_REQUEST_MS  1000 /* one poll; the next is due anyway */

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: readywait [--insecure] [--interval MS] [--timeout S] [--pid PID] URL\n"
	    "  --insecure       do not verify the server's certificate (kube-scheduler's\n"
	    "                   is self-signed)\n"
	    "  --interval MS    poll every MS milliseconds (default %d)\n"
	    "  --timeout S      give up after S seconds (default %d)\n"
	    "  --pid PID        give up once process PID is gone (the scheduler died)\n"
	    "Prints the epoch ms of the first 200 answer.\n",
	    RW_INTERVAL_MS, RW_TIMEOUT_S);
}

/* The body is not needed: only the status. */
static size_t
rw_discard_cb(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return (size * n);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "insecure", no_argument, NULL, 'k' },
		{ "interval", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct timespec at, mono;
	CURL	       *h;
	CURLcode	cc;
	long long	interval = RW_INTERVAL_MS, timeout = RW_TIMEOUT_S;
	long long	pid = 0;
	long		status;
	int64_t		deadline, now, ready = 0;
	int		ch, insecure = 0, rc = 1;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			insecure = 1;
			break;
		case 'i':
			if (bench_parse_int(optarg, 1, 10000, &interval) == -1)
				goto bad;
			break;
		case 't':
			if (bench_parse_int(optarg, 1, 86400, &timeout) == -1)
				goto bad;
			break;
		case 'p':
			if (bench_parse_int(optarg, 1, 1L << 30, &pid) == -1)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			goto bad;
		}
	}
	if (optind != argc - 1)
		goto bad;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 ||
	    (h = curl_easy_init()) == NULL) {
		fprintf(stderr, "readywait: cannot initialize libcurl\n");
		return (1);
	}
	curl_easy_setopt(h, CURLOPT_URL, argv[optind]);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)RW_REQUEST_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, rw_discard_cb);
	if (insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	clock_gettime(CLOCK_MONOTONIC, &at);
	deadline = bench_now_ms() + timeout * 1000;
	for (;;) {
		cc = curl_easy_perform(h);
		now = bench_now_ms();
		status = 0;
		if (cc == CURLE_OK)
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		if (status == 200) {
			ready = now;
			break;
		}
		if (now >= deadline) {
			fprintf(stderr,
			    "readywait: %s: not ready after %lld s "
			    "(%s, status %ld)\n",
			    argv[optind], timeout, curl_easy_strerror(cc),
			    status);
			break;
		}
		if (pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH) {
			fprintf(stderr, "readywait: process %lld is gone\n",
			    pid);
			break;
		}
		/*
		 * The next poll interval after the last one was due, or at
		 * once after a poll that took longer (no burst to catch up).
		 */
		at = bench_ts_add(&at, interval * 1000);
		clock_gettime(CLOCK_MONOTONIC, &mono);
		if (bench_ts_before(&at, &mono))
			at = mono;
		bench_sleep_until(&at);
	}
	curl_easy_cleanup(h);
	curl_global_cleanup();
	if (ready > 0) {
		printf("%" PRId64 "\n", ready);
		rc = 0;
	}
	return (rc);
bad:
	usage(stderr);
	return (2);
}
