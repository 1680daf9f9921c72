/*
 * The submit, poll and end threads for the group tests, driven by hand:
 * the daemon's own submitter.c, poller.c and ender.c, on workers of no
 * thread (worker.c).  A test makes what a thread would make next
 * (submitter_step, poller_step, ender_step: the thread's own policy, on
 * the fake Slurm) and the answers wait in the worker's own queue until the
 * test delivers them, as the messages the reconcile thread reads.  Between
 * the two an answer is on its way, and the group may change under it.
 *
 * The end thread's answers are made and delivered after each event
 * (drive_end_deliver, from the test's harness), unless held: then the ends
 * that free nodes are made and their answers wait; or lazy and held:
 * nothing is made, as when the thread has not come to them yet.  The poll
 * thread does its work in its own order (poller_take: a spent load freed,
 * then a load, then a probe), so making a probe makes a load asked before
 * it, and making a load with none asked makes the probe asked.
 */
#include <stdlib.h>

#include "bridge.h"
#include "fakes.h"

static struct {
	struct queue	 *submit, *poll, *end; /* each worker's answers */
	struct reconcile *r;		       /* between start and stop */
	int		  submits_made;	       /* since drive_reset */
	int		  submits_dropped;     /* waiting at a stop */
	int		  held, lazy;
} D;

void
drive_reset(void)
{
	D.submits_made = D.submits_dropped = 0;
}

void
drive_start(struct reconcile *r)
{
	D.submit = queue_new();
	D.poll = queue_new();
	D.end = queue_new();
	D.held = D.lazy = 0;
	D.r = r;
	r->submitter = submitter_new(D.submit, 0);
	r->poller = poller_new(D.poll, 0);
	r->ender = ender_new(D.end, end_make, END_BATCH, 0);
}

void
drive_stop(struct reconcile *r)
{
	D.submits_dropped += (int)submitter_waiting(r->submitter);
	reconcile_workers_stop(r);
	D.r = NULL;
	queue_free(D.submit);
	queue_free(D.poll);
	queue_free(D.end);
	D.submit = D.poll = D.end = NULL;
}

/*
 * Hands the answers of kind waiting in q to the reconcile thread, in
 * order, at most max of them; the others stay, in order.  How many.
 */
static size_t
drive_deliver(struct queue *q, struct reconcile *r, enum msg_kind kind,
    size_t max)
{
	struct msg *msg;
	size_t	    k, len = queue_len(q), n = 0;

	for (k = 0; k < len; k++) {
		msg = queue_pop(q, 0);
		if (msg->kind == kind && n < max) {
			reconcile_msg(r, msg);
			n++;
		} else
			queue_push(q, msg);
	}
	return (n);
}

/* The last answer of kind waiting in q, left there; NULL if none. */
static struct msg *
drive_find(struct queue *q, enum msg_kind kind)
{
	struct msg *msg, *found = NULL;
	size_t	    k, len = queue_len(q);

	for (k = 0; k < len; k++) {
		msg = queue_pop(q, 0);
		if (msg->kind == kind)
			found = msg;
		queue_push(q, msg);
	}
	return (found);
}

/* --- The submit thread ------------------------------------------------- */

int
drive_submit_asked(void)
{
	return (D.submits_made + D.submits_dropped +
	    (D.r != NULL ? (int)submitter_waiting(D.r->submitter) : 0));
}

size_t
drive_submit_waiting(struct reconcile *r)
{
	return (submitter_waiting(r->submitter));
}

void
drive_submit_make(struct reconcile *r)
{
	while (submitter_step(r->submitter) == 1)
		D.submits_made++;
}

size_t
drive_submit_deliver(struct reconcile *r)
{
	return (drive_deliver(D.submit, r, MSG_SUBMITTED, (size_t)-1));
}

/* --- The poll thread --------------------------------------------------- */

int
drive_poll_make(struct reconcile *r)
{
	struct msg *before = drive_find(D.poll, MSG_POLLED), *made;

	if (before != NULL)
		return (-1); /* one is on its way: none is asked */
	while (poller_step(r->poller) == 1)
		if ((made = drive_find(D.poll, MSG_POLLED)) != NULL)
			return ((int)sctl_load_count(made->load));
	return (-1);
}

int
drive_poll_deliver(struct reconcile *r)
{
	return (drive_deliver(D.poll, r, MSG_POLLED, 1) == 1 ? 0 : -1);
}

int
drive_probe_deliver(struct reconcile *r)
{
	while (drive_find(D.poll, MSG_PROBED) == NULL)
		if (poller_step(r->poller) != 1)
			return (-1);
	return (drive_deliver(D.poll, r, MSG_PROBED, 1) == 1 ? 0 : -1);
}

/* --- The end thread ---------------------------------------------------- */

void
drive_end_hold(int hold)
{
	D.held = hold;
}

void
drive_end_lazy(int lazy)
{
	D.lazy = lazy;
}

size_t
drive_end_deliver(struct reconcile *r)
{
	size_t bulk;

	if (r->ender == NULL)
		return (0);
	if (D.held) {
		/*
		 * What frees nodes is made as it comes; bulk cancels wait,
		 * unless the thread's own rule takes them first (END_FAIR
		 * ends in a row).
		 */
		while (!D.lazy && ender_waiting(r->ender, &bulk) > bulk &&
		    ender_step(r->ender) == 1)
			;
		return (0);
	}
	while (ender_step(r->ender) == 1)
		;
	return (drive_deliver(D.end, r, MSG_ENDED, (size_t)-1));
}

size_t
drive_end_waiting(struct reconcile *r, size_t *bulk)
{
	size_t b = 0, n = 0;

	if (r->ender != NULL)
		n = ender_waiting(r->ender, &b);
	if (bulk != NULL)
		*bulk = b;
	return (n + queue_len(D.end));
}
