/*
 * The submit threads: SUBMIT_THREADS of them make the reconcile thread's
 * allocation requests (sctl_submit, through slurm.c) and changes of
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
 * Threads: reconcile, submit (submitter_main).
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct submitter {
	pthread_mutex_t lock;
	pthread_cond_t	work; /* a request came, or stop */
	struct lanes   *waiting;
	int		stop;
	int		started; /* threads */
	pthread_t	threads[SUBMIT_THREADS];
	struct queue   *done;
};

static void *
submitter_main(void *arg)
{
	struct submitter *sb = arg;
	struct msg	 *msg;
	struct sreq	 *s;

	log_setname("submit");
	pthread_mutex_lock(&sb->lock);
	for (;;) {
		while (!sb->stop && lanes_count(sb->waiting) == 0)
			pthread_cond_wait(&sb->work, &sb->lock);
		if (sb->stop)
			break;
		s = lanes_take(sb->waiting);
		pthread_mutex_unlock(&sb->lock);
		if (atomic_load(&s->withdrawn)) {
			s->rc = -1;
			snprintf(s->err, sizeof(s->err),
			    "withdrawn: its pods "
			    "changed before it was made");
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
		pthread_mutex_lock(&sb->lock);
	}
	pthread_mutex_unlock(&sb->lock);
	return (NULL);
}

static void
submitter_drop(void *s)
{
	sreq_free(s);
}

struct submitter *
submitter_new(struct queue *done)
{
	struct submitter *sb = xcalloc(1, sizeof(*sb));

	pthread_mutex_init(&sb->lock, NULL);
	pthread_cond_init(&sb->work, NULL);
	sb->waiting = lanes_new();
	sb->done = done;
	for (; sb->started < SUBMIT_THREADS; sb->started++)
		if (pthread_create(&sb->threads[sb->started], NULL,
			submitter_main, sb) != 0) {
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
	pthread_mutex_lock(&sb->lock);
	sb->stop = 1;
	pthread_cond_broadcast(&sb->work);
	pthread_mutex_unlock(&sb->lock);
	while (sb->started > 0)
		pthread_join(sb->threads[--sb->started], NULL);
	lanes_free(sb->waiting, submitter_drop);
	pthread_mutex_destroy(&sb->lock);
	pthread_cond_destroy(&sb->work);
	free(sb);
}

void
submitter_push(struct submitter *sb, struct sreq *s)
{
	pthread_mutex_lock(&sb->lock);
	lanes_push(sb->waiting, s->ns, s);
	pthread_cond_signal(&sb->work);
	pthread_mutex_unlock(&sb->lock);
}
