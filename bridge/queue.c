/*
 * The message queue: informers, the submit, poll and end threads, the
 * writepool and HTTP threads push, the reconcile thread pops.
 *
 * Threads: HTTP (queue_len, queue_push), reconcile (queue_msg_free,
 * queue_pop), end (queue_push), informer (queue_push), poll (queue_push),
 * submit (queue_push), writepool (queue_push).
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
	TAILQ_HEAD(, msg) msgs;
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
	TAILQ_INIT(&q->msgs);
	return (q);
}

void
queue_msg_free(struct msg *msg)
{
	if (msg == NULL)
		return;
	json_decref(msg->obj);
	podrec_free(msg->pod);
	if (msg->call != NULL)
		extcall_release(msg->call);
	wreq_free(msg->write);
	sreq_free(msg->submit);
	sctl_load_free(msg->load);
	ereq_free(msg->end);
	free(msg);
}

void
queue_free(struct queue *q)
{
	struct msg *msg;

	if (q == NULL)
		return;
	while ((msg = TAILQ_FIRST(&q->msgs)) != NULL) {
		TAILQ_REMOVE(&q->msgs, msg, entry);
		queue_msg_free(msg);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mtx);
	free(q);
}

void
queue_push(struct queue *q, struct msg *msg)
{
	pthread_mutex_lock(&q->mtx);
	TAILQ_INSERT_TAIL(&q->msgs, msg, entry);
	q->len++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

struct msg *
queue_pop(struct queue *q, int timeout_ms)
{
	struct msg     *msg;
	struct timespec ts;

	clock_deadline_ms(&ts, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&q->mtx);
	while (!q->closed && TAILQ_EMPTY(&q->msgs)) {
		if (pthread_cond_timedwait(&q->cond, &q->mtx, &ts) == ETIMEDOUT)
			break;
	}
	if (q->closed || (msg = TAILQ_FIRST(&q->msgs)) == NULL) {
		pthread_mutex_unlock(&q->mtx);
		return (NULL);
	}
	TAILQ_REMOVE(&q->msgs, msg, entry);
	q->len--;
	pthread_mutex_unlock(&q->mtx);
	return (msg);
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
