/*
 * Scheduler-extender calls: made on an HTTP thread (endpoints.c), queued
 * as a message, answered by the reconcile thread (extender.c), awaited by
 * the caller with a timeout.  Each call has two references, the caller's
 * and the message's
 * (and a third while a write for it is in flight), so a caller that gave
 * up waiting leaves nothing dangling.
 *
 * Threads: HTTP (extcall_new, extcall_release, extcall_wait), reconcile
 * (extcall_done, extcall_hold, extcall_release).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"

struct ext_call *
extcall_new(enum ext_op op)
{
	struct ext_call *c = xcalloc(1, sizeof(*c));

	c->op = op;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	atomic_init(&c->refs, 2);
	return (c);
}

struct ext_call *
extcall_hold(struct ext_call *c)
{
	atomic_fetch_add(&c->refs, 1);
	return (c);
}

void
extcall_release(struct ext_call *c)
{
	if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	json_decref(c->pod);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void
extcall_done(struct ext_call *c)
{
	pthread_mutex_lock(&c->lock);
	c->done = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

int
extcall_wait(struct ext_call *c, int ms)
{
	struct timespec ts;
	int		rc = 0;

	clock_deadline_ms(&ts, CLOCK_REALTIME, ms);
	pthread_mutex_lock(&c->lock);
	while (!c->done && rc == 0)
		rc = pthread_cond_timedwait(&c->cond, &c->lock, &ts);
	rc = c->done ? 0 : -1;
	pthread_mutex_unlock(&c->lock);
	return (rc);
}
