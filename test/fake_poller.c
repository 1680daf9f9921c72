/*
 * The poll thread (poller.c) for the group tests, run by hand: a load the
 * reconcile thread asked for is made when the test says (fake_poller_make,
 * a snapshot of the fake Slurm then) and read when it says
 * (fake_poller_deliver, the MSG_POLLED message the reconcile thread
 * handles).  Between the two the load is on its way, and the groups may
 * change under it, as they do while the thread loads.  A probe of jobs
 * started is answered when the test says (fake_poller_probe_deliver,
 * the fake Slurm's count then).
 */
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

struct poller {
	int	      asked;
	int	      probes; /* asked, not made */
	time_t	      since;
	struct sload *made;
};

static struct poller *fake_poller;

struct poller *
poller_new(struct queue *done)
{
	(void)done;
	fake_poller = xcalloc(1, sizeof(*fake_poller));
	return (fake_poller);
}

void
poller_free(struct poller *p)
{
	if (p == NULL)
		return;
	sctl_load_free(p->made);
	if (p == fake_poller)
		fake_poller = NULL;
	free(p);
}

void
poller_ask(struct poller *p, time_t since)
{
	p->asked++;
	p->since = since;
}

/* Frees l at once; no trim (the group tests' heap is their own). */
void
poller_spent(struct poller *p, struct sload *l, int trim)
{
	(void)p;
	(void)trim;
	sctl_load_free(l);
}

void
poller_probe(struct poller *p)
{
	p->probes++;
}

int
fake_poller_probe_deliver(struct reconcile *r)
{
	struct poller *p = r->poller;
	struct msg    *msg;

	if (p == NULL || p->probes == 0)
		return (-1);
	p->probes--;
	msg = xcalloc(1, sizeof(*msg));
	msg->kind = MSG_PROBED;
	msg->probe_rc = sctl_jobs_started(&msg->started);
	reconcile_msg(r, msg);
	return (0);
}

int
fake_poller_asked(struct reconcile *r)
{
	return (r->poller != NULL ? r->poller->asked : 0);
}

int
fake_poller_make(struct reconcile *r)
{
	struct poller *p = r->poller;

	if (p == NULL || p->asked == 0 || p->made != NULL)
		return (-1);
	p->asked--;
	p->made = sctl_load(p->since);
	return ((int)sctl_load_count(p->made));
}

int
fake_poller_deliver(struct reconcile *r)
{
	struct poller *p = r->poller;
	struct msg    *msg;

	if (p == NULL || p->made == NULL)
		return (-1);
	msg = xcalloc(1, sizeof(*msg));
	msg->kind = MSG_POLLED;
	msg->load = p->made;
	p->made = NULL;
	reconcile_msg(r, msg);
	return (0);
}
