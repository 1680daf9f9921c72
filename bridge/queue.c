/*
 * The event queue: informers, the submit thread, pod writers and HTTP
 * threads push, the reconcile thread pops.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"

struct queue {
	pthread_mutex_t mtx;
	pthread_cond_t	cond;
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, event) events;
	size_t len;
	int    closed;
};

struct queue *
queue_new(void)
{
	struct queue	  *q;
	pthread_condattr_t ca;

	q = xcalloc(1, sizeof(*q));
	pthread_mutex_init(&q->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	TAILQ_INIT(&q->events);
	return (q);
}

void
event_free(struct event *ev)
{
	if (ev == NULL)
		return;
	json_decref(ev->obj);
	podrec_free(ev->pod);
	if (ev->call != NULL)
		ext_call_release(ev->call);
	wreq_free(ev->write);
	sreq_free(ev->submit);
	free(ev);
}

void
queue_free(struct queue *q)
{
	struct event *ev;

	if (q == NULL)
		return;
	while ((ev = TAILQ_FIRST(&q->events)) != NULL) {
		TAILQ_REMOVE(&q->events, ev, entry);
		event_free(ev);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mtx);
	free(q);
}

void
queue_push(struct queue *q, struct event *ev)
{
	pthread_mutex_lock(&q->mtx);
	TAILQ_INSERT_TAIL(&q->events, ev, entry);
	q->len++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

struct event *
queue_pop(struct queue *q, int timeout_ms)
{
	struct event   *ev;
	struct timespec ts;

	deadline_after_ms(&ts, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&q->mtx);
	while (!q->closed && TAILQ_EMPTY(&q->events)) {
		if (pthread_cond_timedwait(&q->cond, &q->mtx, &ts) == ETIMEDOUT)
			break;
	}
	if (q->closed || (ev = TAILQ_FIRST(&q->events)) == NULL) {
		pthread_mutex_unlock(&q->mtx);
		return (NULL);
	}
	TAILQ_REMOVE(&q->events, ev, entry);
	q->len--;
	pthread_mutex_unlock(&q->mtx);
	return (ev);
}

void
queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->mtx);
	q->closed = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

size_t
queue_len(struct queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mtx);
	n = q->len;
	pthread_mutex_unlock(&q->mtx);
	return (n);
}
