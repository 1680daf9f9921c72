/*
 * What every bench tool does alike (bench.h): flag values, clocks and the
 * blocked signals.  Runs on the calling thread; no state.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

int
bench_parse_int(const char *s, long long min, long long max, long long *out)
{
	char	 *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

int
bench_parse_double(const char *s, double min, double max, double *out)
{
	char  *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* Written so that NaN is out of every range. */
	if (errno != 0 || end == s || *end != '\0' || !(v >= min) ||
	    !(v <= max))
		return (-1);
	*out = v;
	return (0);
}

int64_t
bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int64_t
bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}

struct timespec
bench_ts_add(const struct timespec *base, int64_t us)
{
	struct timespec t = *base;
	int64_t		ns = (int64_t)t.tv_nsec + (us % 1000000) * 1000;

	t.tv_sec += (time_t)(us / 1000000 + ns / 1000000000);
	t.tv_nsec = (long)(ns % 1000000000);
	return (t);
}

int
bench_ts_before(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec < b->tv_sec ||
	    (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec));
}

void
bench_sleep_until(const struct timespec *at)
{
	while (
	    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, at, NULL) == EINTR)
		;
}

void
bench_signals(sigset_t *sigs)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
}
