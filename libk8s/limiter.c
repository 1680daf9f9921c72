/*
 * A token bucket that several clients (and threads) can share, so that
 * all of them together stay within one API rate.  A caller that finds the
 * bucket empty reserves its token (the count goes negative) and sleeps
 * outside the lock, so waiters queue up in order without holding it.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "internal.h"

struct k8s_limiter {
	pthread_mutex_t lock;
	double		qps;
	double		burst;
	double		tokens;
	struct timespec last;
};

struct k8s_limiter *
k8s_limiter_new(double qps, int burst)
{
	struct k8s_limiter *l;

	l = xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
	k8s_limiter_set(l, qps, burst);
	return (l);
}

void
k8s_limiter_free(struct k8s_limiter *l)
{
	if (l == NULL)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void
k8s_limiter_set(struct k8s_limiter *l, double qps, int burst)
{
	pthread_mutex_lock(&l->lock);
	l->qps = qps;
	l->burst = burst < 1 ? 1 : burst;
	l->tokens = l->burst;
	clock_gettime(CLOCK_MONOTONIC, &l->last);
	pthread_mutex_unlock(&l->lock);
}

void
k8s_limiter_wait(struct k8s_limiter *l)
{
	struct timespec now, ts;
	double		dt, wait = 0;

	pthread_mutex_lock(&l->lock);
	if (l->qps <= 0) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	dt = (now.tv_sec - l->last.tv_sec) +
	    (now.tv_nsec - l->last.tv_nsec) / 1e9;
	l->last = now;
	l->tokens += dt * l->qps;
	if (l->tokens > l->burst)
		l->tokens = l->burst;
	l->tokens -= 1;
	if (l->tokens < 0)
		wait = -l->tokens / l->qps;
	pthread_mutex_unlock(&l->lock);
	if (wait <= 0)
		return;
	ts.tv_sec = (time_t)wait;
	ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}
