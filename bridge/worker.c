/*
 * The skeleton every worker thread shares (the submit, poll and end
 * threads, the writepool and the eventer's lanes): its threads, the lock
 * that guards its owner's list of work, the condition they wait on, and
 * their stop.  Each worker keeps only its policy (struct worker_policy):
 * what to take next from its list, under the lock, and what to do with
 * it, unlocked.  The owner puts work on its list under worker_lock and
 * wakes a thread (worker_wake); worker_free stops and joins the threads,
 * and the owner then frees what is left on its list.  A worker of no
 * threads runs nothing by itself: whoever holds it runs its next job on
 * its own thread (worker_step), as the group tests drive the submit, poll
 * and end threads' policies by hand.  And what a thread the daemon cannot
 * run without does when it fails (fail_thread, at the end).
 *
 * Threads: reconcile, eventer (fail_thread, worker_main), end (worker_main),
 * poll (worker_main), submit (worker_main), writepool (worker_main).
 */
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct worker {
	const struct worker_policy *policy;
	void			   *owner;
	pthread_mutex_t		    lock;
	pthread_cond_t		    work; /* work came, or stop */
	int			    stop;
	int			    nthreads; /* started */
	pthread_t		   *threads;
};

/* One thread's start: the worker and the thread's index. */
struct worker_start {
	struct worker *w;
	int	       i;
};

static void *
worker_main(void *arg)
{
	struct worker_start	   *st = arg;
	struct worker		   *w = st->w;
	const struct worker_policy *p = w->policy;
	void			   *job;
	int			    i = st->i;

	free(st);
	log_setname(p->name);
	if (p->init != NULL && p->init(w->owner, i) == -1)
		return (NULL);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		job = NULL;
		while (!w->stop && (job = p->take(w->owner)) == NULL)
			pthread_cond_wait(&w->work, &w->lock);
		if (w->stop)
			break;
		pthread_mutex_unlock(&w->lock);
		p->run(w->owner, i, job);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	if (p->fini != NULL)
		p->fini(w->owner, i);
	return (NULL);
}

struct worker *
worker_new(const struct worker_policy *policy, void *owner, int nthreads)
{
	struct worker	    *w = xcalloc(1, sizeof(*w));
	struct worker_start *st;

	w->policy = policy;
	w->owner = owner;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	w->threads = xcalloc((size_t)(nthreads > 0 ? nthreads : 1),
	    sizeof(*w->threads));
	for (; w->nthreads < nthreads; w->nthreads++) {
		st = xcalloc(1, sizeof(*st));
		st->w = w;
		st->i = w->nthreads;
		if (pthread_create(&w->threads[w->nthreads], NULL, worker_main,
			st) != 0) {
			free(st);
			worker_free(w);
			return (NULL);
		}
	}
	return (w);
}

void
worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	while (w->nthreads > 0)
		pthread_join(w->threads[--w->nthreads], NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	free(w->threads);
	free(w);
}

int
worker_step(struct worker *w)
{
	void *job;

	/* Its threads would race the caller; init is per thread. */
	if (w->nthreads > 0 || w->policy->init != NULL)
		return (-1);
	pthread_mutex_lock(&w->lock);
	job = w->stop ? NULL : w->policy->take(w->owner);
	pthread_mutex_unlock(&w->lock);
	if (job == NULL)
		return (0);
	w->policy->run(w->owner, 0, job);
	return (1);
}

void
worker_lock(struct worker *w)
{
	pthread_mutex_lock(&w->lock);
}

void
worker_unlock(struct worker *w)
{
	pthread_mutex_unlock(&w->lock);
}

void
worker_wake(struct worker *w)
{
	pthread_cond_signal(&w->work);
}

/*
 * A thread the daemon cannot run without failed: it says why, and the
 * daemon stops as if sent SIGTERM, then exits with status 1, so Kubernetes
 * restarts it instead of leaving a process that answers /healthz but does
 * nothing.  Any thread.
 */
static atomic_int fail_count;

void
fail_thread(const char *who, const char *fmt, ...)
{
	va_list ap;
	char	msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("%s: %s; the %s thread cannot go on, stopping the daemon",
	    who, msg, who);
	if (atomic_fetch_add(&fail_count, 1) == 0)
		kill(getpid(), SIGTERM);
}

int
fail_happened(void)
{
	return (atomic_load(&fail_count) > 0);
}
