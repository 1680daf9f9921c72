/*
 * The end thread: it ends the jobs whose pods all ended, one at a time in
 * the order the reconcile thread asked (ender_push): the stopped mark for
 * the node epilog first when asked (sctl_mark_stopped), then the
 * completion (sctl_complete) or the cancel (sctl_cancel), through slurm.c.
 * Each comes back with its result as an MSG_ENDED message, which the
 * reconcile thread reads (end_done); what it makes is the function it was
 * given (end_make).  So the reconcile thread goes on
 * deciding and binding while slurmctld ends jobs, two RPCs each, and waits
 * on none of them while slurmctld is away.  It owns nothing but its list
 * of requests.
 */

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct ender {
	pthread_mutex_t lock;
	pthread_cond_t	work; /* a request came, or stop */
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ereq) waiting;
	int	      stop;
	int	      started;
	pthread_t     thread;
	struct queue *done;
	void (*make)(struct ereq *);
};

static void *
ender_main(void *arg)
{
	struct ender *en = arg;
	struct msg   *msg;
	struct ereq  *e;

	log_setname("end");
	pthread_mutex_lock(&en->lock);
	for (;;) {
		while (!en->stop && TAILQ_EMPTY(&en->waiting))
			pthread_cond_wait(&en->work, &en->lock);
		if (en->stop)
			break;
		e = TAILQ_FIRST(&en->waiting);
		TAILQ_REMOVE(&en->waiting, e, entry);
		pthread_mutex_unlock(&en->lock);
		en->make(e);
		msg = xcalloc(1, sizeof(*msg));
		msg->kind = MSG_ENDED;
		msg->end = e;
		queue_push(en->done, msg);
		pthread_mutex_lock(&en->lock);
	}
	pthread_mutex_unlock(&en->lock);
	return (NULL);
}

struct ender *
ender_new(struct queue *done, void (*make)(struct ereq *))
{
	struct ender *en = xcalloc(1, sizeof(*en));

	pthread_mutex_init(&en->lock, NULL);
	pthread_cond_init(&en->work, NULL);
	TAILQ_INIT(&en->waiting);
	en->done = done;
	en->make = make;
	if (pthread_create(&en->thread, NULL, ender_main, en) != 0) {
		ender_free(en);
		return (NULL);
	}
	en->started = 1;
	return (en);
}

void
ender_free(struct ender *en)
{
	struct ereq *e;

	if (en == NULL)
		return;
	pthread_mutex_lock(&en->lock);
	en->stop = 1;
	pthread_cond_signal(&en->work);
	pthread_mutex_unlock(&en->lock);
	if (en->started)
		pthread_join(en->thread, NULL);
	while ((e = TAILQ_FIRST(&en->waiting)) != NULL) {
		TAILQ_REMOVE(&en->waiting, e, entry);
		ereq_free(e);
	}
	pthread_mutex_destroy(&en->lock);
	pthread_cond_destroy(&en->work);
	free(en);
}

void
ender_push(struct ender *en, struct ereq *e)
{
	pthread_mutex_lock(&en->lock);
	TAILQ_INSERT_TAIL(&en->waiting, e, entry);
	pthread_cond_signal(&en->work);
	pthread_mutex_unlock(&en->lock);
}
