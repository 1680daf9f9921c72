/*
 * The submit threads: SUBMIT_THREADS of them make the reconcile thread's
 * allocation requests (sctl_submit, in slurmsubmit.c) and changes of
 * pending jobs (sctl_update_pending), and give each back with its result
 * as an MSG_SUBMITTED message.  So the reconcile thread goes on deciding,
 * binding and answering while slurmctld works on an allocation, and one
 * request's round trip (munge, the network, libslurm) overlaps another's
 * turn in slurmctld.  A group has one request out at a time, so its own
 * requests stay in order; two groups' may reach slurmctld in either
 * order.  Requests wait in a lane per namespace, taken in turn (queue.c):
 * a tenant's backlog of thousands delays another tenant's pods by one
 * request per namespace with requests waiting, so Slurm soon holds both
 * tenants' jobs and orders them by its own priorities (fair share, QOS),
 * not by which namespace asked first.  The threads share nothing but the
 * lanes; the identity changes of user-id jobs (runas.c) are each
 * thread's own.
 *
 * Threads: reconcile, submit (submitter_run, submitter_take).
 */

#include <stdio.h>
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

struct submitter {
	/* SUBMIT_THREADS threads, or none; its lock guards waiting */
	struct worker *worker;
	struct lanes  *waiting;
	struct queue  *done;
};

static void *
submitter_take(void *owner)
{
	struct submitter *sb = owner;

	return (lanes_take(sb->waiting));
}

/* Makes the job (or changes a pending one) and answers MSG_SUBMITTED. */
static void
submitter_run(void *owner, int i, void *job)
{
	struct submitter *sb = owner;
	struct sreq	 *s = job;
	struct msg	 *msg;

	(void)i;
	if (atomic_load(&s->withdrawn)) {
		s->rc = -1;
		snprintf(s->err, sizeof(s->err),
		    "withdrawn: its pods changed before it was made");
	} else if (s->update_jobid != 0) {
		s->jobid = s->update_jobid;
		s->rc = sctl_update_pending(&s->js, s->jobid, s->err,
		    sizeof(s->err));
	} else
		s->rc = sctl_submit(&s->js, &s->jobid, &s->layout,
		    &s->permanent, s->err, sizeof(s->err));
	msg = xcalloc(1, sizeof(*msg));
	msg->kind = MSG_SUBMITTED;
	msg->submit = s;
	queue_push(sb->done, msg);
}

static const struct worker_policy submitter_policy = {
	.name = "submit",
	.take = submitter_take,
	.run = submitter_run,
};

static void
submitter_drop(void *s)
{
	sreq_free(s);
}

struct submitter *
submitter_new(struct queue *done, int nthreads)
{
	struct submitter *sb = xcalloc(1, sizeof(*sb));

	sb->waiting = lanes_new();
	sb->done = done;
	if ((sb->worker = worker_new(&submitter_policy, sb, nthreads)) ==
	    NULL) {
		submitter_free(sb);
		return (NULL);
	}
	return (sb);
}

void
submitter_free(struct submitter *sb)
{
	if (sb == NULL)
		return;
	worker_free(sb->worker);
	lanes_free(sb->waiting, submitter_drop);
	free(sb);
}

void
submitter_push(struct submitter *sb, struct sreq *s)
{
	worker_lock(sb->worker);
	lanes_push(sb->waiting, s->ns, s);
	worker_wake(sb->worker);
	worker_unlock(sb->worker);
}

size_t
submitter_waiting(struct submitter *sb)
{
	size_t n;

	worker_lock(sb->worker);
	n = lanes_count(sb->waiting);
	worker_unlock(sb->worker);
	return (n);
}

int
submitter_step(struct submitter *sb)
{
	return (worker_step(sb->worker));
}
