/*
 * The poll thread: it loads Slurm's jobs (sctl_load, through slurm.c) when
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
 * Threads: reconcile, poll (poller_main).
 */

#include <pthread.h>
#include <stdlib.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct poller {
	pthread_mutex_t lock;
	pthread_cond_t	work; /* a load was asked for, or stop */
	int		asked;
	time_t		since;
	int		probe; /* a probe of jobs started was asked */
	struct sload   *spent; /* read: to free */
	int		spent_trim;
	int		stop;
	int		started;
	pthread_t	thread;
	struct queue   *done;
};

static void *
poller_main(void *arg)
{
	struct poller *p = arg;
	struct msg    *msg;
	struct sload  *spent;
	time_t	       since;
	int	       trim;

	log_setname("poll");
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && !p->asked && !p->probe && p->spent == NULL)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		if ((spent = p->spent) != NULL) {
			trim = p->spent_trim;
			p->spent = NULL;
			pthread_mutex_unlock(&p->lock);
			sctl_load_free(spent);
			if (trim)
				stats_trim();
			pthread_mutex_lock(&p->lock);
			continue;
		}
		msg = xcalloc(1, sizeof(*msg));
		if (p->asked) {
			p->asked = 0;
			since = p->since;
			pthread_mutex_unlock(&p->lock);
			msg->kind = MSG_POLLED;
			msg->load = sctl_load(since);
		} else {
			p->probe = 0;
			pthread_mutex_unlock(&p->lock);
			msg->kind = MSG_PROBED;
			msg->probe_rc = sctl_jobs_started(&msg->started);
		}
		queue_push(p->done, msg);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return (NULL);
}

struct poller *
poller_new(struct queue *done)
{
	struct poller *p = xcalloc(1, sizeof(*p));

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	p->done = done;
	if (pthread_create(&p->thread, NULL, poller_main, p) != 0) {
		poller_free(p);
		return (NULL);
	}
	p->started = 1;
	return (p);
}

void
poller_free(struct poller *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	sctl_load_free(p->spent);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	free(p);
}

void
poller_ask(struct poller *p, time_t since)
{
	pthread_mutex_lock(&p->lock);
	p->asked = 1;
	p->since = since;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void
poller_probe(struct poller *p)
{
	pthread_mutex_lock(&p->lock);
	p->probe = 1;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void
poller_spent(struct poller *p, struct sload *l, int trim)
{
	struct sload *old;

	pthread_mutex_lock(&p->lock);
	/* One the thread has not come to yet goes now, on this thread. */
	old = p->spent;
	p->spent = l;
	p->spent_trim = trim || (old != NULL && p->spent_trim);
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	sctl_load_free(old);
}
