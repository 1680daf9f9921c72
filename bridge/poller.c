/*
 * The poll thread: it loads Slurm's jobs (sctl_load, in slurmload.c) when
 * the reconcile thread asks (poller_ask), one load at a time, and gives
 * the load back as an MSG_POLLED message, which the reconcile thread reads
 * (poll_loaded).  So the reconcile thread goes on deciding and binding
 * while slurmctld packs thousands of jobs and libslurm unpacks them.  The
 * records live in this thread's own malloc arena (main_malloc_tune), apart
 * from what lives on.  Once read, poll_loaded gives a load back
 * (poller_spent): this thread frees it and, after a load of
 * POLL_TRIM_JOBS or more, trims (stats_trim), giving its pages back, so
 * neither holds the reconcile thread (where each trim took 9 to 15 ms
 * at 47,000 pending jobs).  When
 * asked (poller_probe), it probes slurmctld's count of jobs started
 * (sctl_jobs_started) too, and gives it back as an MSG_PROBED message.
 * It owns nothing but the requests it was given.
 *
 * Threads: reconcile, poll (poller_run, poller_take).
 */

#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

/* What the thread does next (one runner: the worker's job is &p->job). */
enum poller_do {
	POLLER_FREE, /* a load read, to be freed (and trimmed after) */
	POLLER_LOAD, /* a load of the jobs changed since since */
	POLLER_PROBE /* a probe of jobs started */
};

struct poller {
	/* One thread, or none; its lock guards the rest. */
	struct worker *worker;
	int	       asked;
	time_t	       since;
	int	       probe; /* a probe of jobs started was asked */
	struct sload  *spent; /* read: to free */
	int	       spent_trim;
	struct {
		enum poller_do what;
		time_t	       since;
		struct sload  *spent;
		int	       trim;
	} job; /* taken, for the thread */
	struct queue *done;
};

/* A load read goes first: its memory is the largest the bridge holds. */
static void *
poller_take(void *owner)
{
	struct poller *p = owner;

	if (p->spent != NULL) {
		p->job.what = POLLER_FREE;
		p->job.spent = p->spent;
		p->job.trim = p->spent_trim;
		p->spent = NULL;
	} else if (p->asked) {
		p->asked = 0;
		p->job.what = POLLER_LOAD;
		p->job.since = p->since;
	} else if (p->probe) {
		p->probe = 0;
		p->job.what = POLLER_PROBE;
	} else
		return (NULL);
	return (&p->job);
}

static void
poller_run(void *owner, int i, void *job)
{
	struct poller *p = owner;
	struct msg    *msg;

	(void)i;
	(void)job;
	if (p->job.what == POLLER_FREE) {
		sctl_load_free(p->job.spent);
		if (p->job.trim)
			stats_trim();
		return;
	}
	msg = xcalloc(1, sizeof(*msg));
	if (p->job.what == POLLER_LOAD) {
		msg->kind = MSG_POLLED;
		msg->load = sctl_load(p->job.since);
	} else {
		msg->kind = MSG_PROBED;
		msg->probe_rc = sctl_jobs_started(&msg->started);
	}
	queue_push(p->done, msg);
}

static const struct worker_policy poller_policy = {
	.name = "poll",
	.take = poller_take,
	.run = poller_run,
};

struct poller *
poller_new(struct queue *done, int nthreads)
{
	struct poller *p = xcalloc(1, sizeof(*p));

	p->done = done;
	if ((p->worker = worker_new(&poller_policy, p, nthreads > 0 ? 1 : 0)) ==
	    NULL) {
		poller_free(p);
		return (NULL);
	}
	return (p);
}

void
poller_free(struct poller *p)
{
	if (p == NULL)
		return;
	worker_free(p->worker);
	sctl_load_free(p->spent);
	free(p);
}

void
poller_ask(struct poller *p, time_t since)
{
	worker_lock(p->worker);
	p->asked = 1;
	p->since = since;
	worker_wake(p->worker);
	worker_unlock(p->worker);
}

void
poller_probe(struct poller *p)
{
	worker_lock(p->worker);
	p->probe = 1;
	worker_wake(p->worker);
	worker_unlock(p->worker);
}

void
poller_spent(struct poller *p, struct sload *l, int trim)
{
	struct sload *old;

	worker_lock(p->worker);
	/* One the thread has not come to yet goes now, on this thread. */
	old = p->spent;
	p->spent = l;
	p->spent_trim = trim || (old != NULL && p->spent_trim);
	worker_wake(p->worker);
	worker_unlock(p->worker);
	sctl_load_free(old);
}

int
poller_step(struct poller *p)
{
	return (worker_step(p->worker));
}
