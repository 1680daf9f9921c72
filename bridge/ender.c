/*
 * The end thread: it ends the jobs whose pods all ended, in the order the
 * reconcile thread asked (ender_push): the completion (sctl_complete) or
 * the cancel (sctl_cancel), in slurmend.c.  An end
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
 * Threads: reconcile, end (ender_run, ender_take).
 */

#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

struct ender {
	/* One thread, or none; its lock guards the rest. */
	struct worker *worker;
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ereq) waiting; /* ends that free nodes */
	struct lanes *bulk;	    /* by namespace, taken in turn (queue.c) */
	size_t	      batch;  /* bulk cancels made at once, 1..END_BATCH */
	int	      in_row; /* ends made since the last bulk batch */
	struct ereq  *es[END_BATCH]; /* taken, for the thread */
	size_t	      n;
	struct queue *done;
	void (*make)(struct ereq **, size_t);
};

/*
 * Takes the next requests to make, under the lock: an end that frees
 * nodes, unless END_FAIR of them went in a row while bulk cancels wait;
 * else a batch of bulk cancels.  NULL when none waits.
 */
static void *
ender_take(void *owner)
{
	struct ender *en = owner;
	struct ereq  *e;

	en->n = 0;
	if ((e = TAILQ_FIRST(&en->waiting)) != NULL &&
	    (en->in_row < END_FAIR || lanes_count(en->bulk) == 0)) {
		TAILQ_REMOVE(&en->waiting, e, entry);
		en->es[en->n++] = e;
		en->in_row++;
		return (en);
	}
	while (en->n < en->batch && (e = lanes_take(en->bulk)) != NULL)
		en->es[en->n++] = e;
	if (en->n == 0)
		return (NULL);
	en->in_row = 0;
	return (en);
}

/* Makes the requests taken (end_make), and answers each MSG_ENDED. */
static void
ender_run(void *owner, int i, void *job)
{
	struct ender *en = owner;
	struct msg   *msg;
	size_t	      k;

	(void)i;
	(void)job;
	en->make(en->es, en->n);
	for (k = 0; k < en->n; k++) {
		msg = xcalloc(1, sizeof(*msg));
		msg->kind = MSG_ENDED;
		msg->end = en->es[k];
		queue_push(en->done, msg);
	}
}

static const struct worker_policy ender_policy = {
	.name = "end",
	.take = ender_take,
	.run = ender_run,
};

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
    size_t batch, int nthreads)
{
	struct ender *en = xcalloc(1, sizeof(*en));

	TAILQ_INIT(&en->waiting);
	en->bulk = lanes_new();
	en->done = done;
	en->make = make;
	en->batch = batch < 1 ? 1 : batch > END_BATCH ? END_BATCH : batch;
	if ((en->worker = worker_new(&ender_policy, en,
		 nthreads > 0 ? 1 : 0)) == NULL) {
		ender_free(en);
		return (NULL);
	}
	return (en);
}

void
ender_free(struct ender *en)
{
	struct ereq *e;

	if (en == NULL)
		return;
	worker_free(en->worker);
	while ((e = TAILQ_FIRST(&en->waiting)) != NULL) {
		TAILQ_REMOVE(&en->waiting, e, entry);
		ereq_free(e);
	}
	lanes_free(en->bulk, ender_drop);
	free(en);
}

void
ender_push(struct ender *en, struct ereq *e)
{
	char ns[256];

	worker_lock(en->worker);
	if (e->bulk)
		lanes_push(en->bulk,
		    e->gkey != NULL ? workload_key_ns(e->gkey, ns, sizeof(ns)) :
				      "",
		    e);
	else
		TAILQ_INSERT_TAIL(&en->waiting, e, entry);
	worker_wake(en->worker);
	worker_unlock(en->worker);
}

void
ender_promote(struct ender *en, uint32_t jobid)
{
	struct ereq *e;

	worker_lock(en->worker);
	if ((e = lanes_remove(en->bulk, ender_is_job, &jobid)) != NULL) {
		e->bulk = 0;
		TAILQ_INSERT_TAIL(&en->waiting, e, entry);
	}
	worker_unlock(en->worker);
}

size_t
ender_waiting(struct ender *en, size_t *bulk)
{
	struct ereq *e;
	size_t	     n;

	worker_lock(en->worker);
	*bulk = lanes_count(en->bulk);
	n = *bulk;
	TAILQ_FOREACH (e, &en->waiting, entry)
		n++;
	worker_unlock(en->worker);
	return (n);
}

int
ender_step(struct ender *en)
{
	return (worker_step(en->worker));
}
