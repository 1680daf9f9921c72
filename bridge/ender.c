/*
 * The end thread: it ends the jobs whose pods all ended, in the order the
 * reconcile thread asked (ender_push): the completion (sctl_complete) or
 * the cancel (sctl_cancel), through slurm.c.  An end
 * that frees nodes goes first; bulk cancels (pending jobs, orphans), which
 * free none, wait until no such end does, or END_FAIR of them went in a
 * row, and go batch at a time (END_BATCH where Slurm cancels many in one
 * RPC, else 1: sctl_cancel_batch), a namespace at a time in turn
 * (queue.c; orphans' in a lane of their own).  A bulk cancel whose job
 * started is moved to the front (ender_promote).  So a tenant who deletes
 * thousands of pending pods delays neither the reconcile thread, nor
 * another tenant's nodes, nor by more than a cancel another tenant's
 * pending-job cancels, and its deletion still ends under steady churn.  Each
 * request comes back with its result as an MSG_ENDED message,
 * which the reconcile thread reads (end_done); what it makes is the
 * function it was given (end_make).  It owns nothing but its lists of
 * requests.
 *
 * Threads: reconcile, end (ender_main, ender_take).
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
	TAILQ_HEAD(, ereq) waiting; /* ends that free nodes */
	struct lanes *bulk;	    /* by namespace, taken in turn (queue.c) */
	int	      stop;
	int	      started;
	size_t	      batch;  /* bulk cancels made at once, 1..END_BATCH */
	int	      in_row; /* ends made since the last bulk batch */
	pthread_t     thread;
	struct queue *done;
	void (*make)(struct ereq **, size_t);
};

/* Takes the next requests to make, under the lock: their count. */
static size_t
ender_take(struct ender *en, struct ereq **es)
{
	struct ereq *e;
	size_t	     n = 0;

	if ((e = TAILQ_FIRST(&en->waiting)) != NULL &&
	    (en->in_row < END_FAIR || lanes_count(en->bulk) == 0)) {
		TAILQ_REMOVE(&en->waiting, e, entry);
		es[n++] = e;
		en->in_row++;
		return (n);
	}
	en->in_row = 0;
	while (n < en->batch && (e = lanes_take(en->bulk)) != NULL)
		es[n++] = e;
	return (n);
}

static void *
ender_main(void *arg)
{
	struct ender *en = arg;
	struct ereq  *es[END_BATCH];
	struct msg   *msg;
	size_t	      n, i;

	log_setname("end");
	pthread_mutex_lock(&en->lock);
	for (;;) {
		while (!en->stop && TAILQ_EMPTY(&en->waiting) &&
		    lanes_count(en->bulk) == 0)
			pthread_cond_wait(&en->work, &en->lock);
		if (en->stop)
			break;
		n = ender_take(en, es);
		pthread_mutex_unlock(&en->lock);
		en->make(es, n);
		for (i = 0; i < n; i++) {
			msg = xcalloc(1, sizeof(*msg));
			msg->kind = MSG_ENDED;
			msg->end = es[i];
			queue_push(en->done, msg);
		}
		pthread_mutex_lock(&en->lock);
	}
	pthread_mutex_unlock(&en->lock);
	return (NULL);
}

static void
ender_drop(void *e)
{
	ereq_free(e);
}

static int
ender_is_job(const void *e, const void *jobid)
{
	return (((const struct ereq *)e)->jobid == *(const uint32_t *)jobid);
}

struct ender *
ender_new(struct queue *done, void (*make)(struct ereq **, size_t),
    size_t		batch)
{
	struct ender *en = xcalloc(1, sizeof(*en));

	pthread_mutex_init(&en->lock, NULL);
	pthread_cond_init(&en->work, NULL);
	TAILQ_INIT(&en->waiting);
	en->bulk = lanes_new();
	en->done = done;
	en->make = make;
	en->batch = batch < 1 ? 1 : batch > END_BATCH ? END_BATCH : batch;
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
	lanes_free(en->bulk, ender_drop);
	pthread_mutex_destroy(&en->lock);
	pthread_cond_destroy(&en->work);
	free(en);
}

void
ender_push(struct ender *en, struct ereq *e)
{
	char ns[256];

	pthread_mutex_lock(&en->lock);
	if (e->bulk)
		lanes_push(en->bulk,
		    e->gkey != NULL ? workload_key_ns(e->gkey, ns, sizeof(ns)) :
				      "",
		    e);
	else
		TAILQ_INSERT_TAIL(&en->waiting, e, entry);
	pthread_cond_signal(&en->work);
	pthread_mutex_unlock(&en->lock);
}

void
ender_promote(struct ender *en, uint32_t jobid)
{
	struct ereq *e;

	pthread_mutex_lock(&en->lock);
	if ((e = lanes_remove(en->bulk, ender_is_job, &jobid)) != NULL) {
		e->bulk = 0;
		TAILQ_INSERT_TAIL(&en->waiting, e, entry);
	}
	pthread_mutex_unlock(&en->lock);
}
