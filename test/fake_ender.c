/*
 * The end thread (ender.c) for the group tests: a request is made at once
 * (end_make, as the thread makes it, on the fake Slurm) and its answer
 * waits until the test delivers it (fake_ender_deliver, the MSG_ENDED
 * message the reconcile thread handles).  Between the two the end is on
 * its way, and the group may change under it.  A bulk cancel, which the
 * real thread makes only when no other end waits, and any request while
 * lazy, is made only when delivered: Slurm has not seen it before.
 */
#include <sys/queue.h>

#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

struct ender {
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ereq) made; /* answers on their way */
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ereq) unmade; /* lazy: asked, not made yet */
};

static int fake_held, fake_lazy, fake_promoted;

void
fake_ender_lazy(int lazy)
{
	fake_lazy = lazy;
}

void
fake_ender_hold(int hold)
{
	fake_held = hold;
}

size_t
fake_ender_waiting(struct reconcile *r)
{
	struct ereq *e;
	size_t	     n = 0;

	if (r->ender != NULL)
		TAILQ_FOREACH (e, &r->ender->made, entry)
			n++;
	if (r->ender != NULL)
		TAILQ_FOREACH (e, &r->ender->unmade, entry)
			n++;
	return (n);
}

struct ender *
ender_new(struct queue *done, void (*make)(struct ereq **, size_t),
    size_t		batch)
{
	struct ender *en = xcalloc(1, sizeof(*en));

	(void)done;
	(void)make;
	(void)batch;
	TAILQ_INIT(&en->made);
	TAILQ_INIT(&en->unmade);
	fake_held = fake_lazy = fake_promoted = 0;
	return (en);
}

void
ender_free(struct ender *en)
{
	struct ereq *e;

	if (en == NULL)
		return;
	while ((e = TAILQ_FIRST(&en->made)) != NULL) {
		TAILQ_REMOVE(&en->made, e, entry);
		ereq_free(e);
	}
	while ((e = TAILQ_FIRST(&en->unmade)) != NULL) {
		TAILQ_REMOVE(&en->unmade, e, entry);
		ereq_free(e);
	}
	free(en);
}

void
ender_push(struct ender *en, struct ereq *e)
{
	/* A bulk cancel waits its turn on the real thread: lazy. */
	if (fake_lazy || e->bulk) {
		TAILQ_INSERT_TAIL(&en->unmade, e, entry);
		return;
	}
	end_make(&e, 1);
	TAILQ_INSERT_TAIL(&en->made, e, entry);
}

size_t
fake_ender_deliver(struct reconcile *r)
{
	struct msg  *msg;
	struct ereq *e;
	size_t	     n = 0;

	while (!fake_held && r->ender != NULL &&
	    (e = TAILQ_FIRST(&r->ender->unmade)) != NULL) {
		TAILQ_REMOVE(&r->ender->unmade, e, entry);
		end_make(&e, 1);
		TAILQ_INSERT_TAIL(&r->ender->made, e, entry);
	}
	while (!fake_held && r->ender != NULL &&
	    (e = TAILQ_FIRST(&r->ender->made)) != NULL) {
		TAILQ_REMOVE(&r->ender->made, e, entry);
		msg = xcalloc(1, sizeof(*msg));
		msg->kind = MSG_ENDED;
		msg->end = e;
		reconcile_msg(r, msg);
		n++;
	}
	return (n);
}

void
ender_promote(struct ender *en, uint32_t jobid)
{
	struct ereq *e;

	TAILQ_FOREACH (e, &en->unmade, entry)
		if (e->bulk && e->jobid == jobid) {
			e->bulk = 0;
			fake_promoted++;
		}
}

int
fake_ender_promoted(void)
{
	return (fake_promoted);
}
