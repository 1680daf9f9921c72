/*
 * The end thread (ender.c) for the group tests: a request is made at once
 * (end_make, as the thread makes it, on the fake Slurm) and its answer
 * waits until the test delivers it (fake_ender_deliver, the MSG_ENDED
 * message the reconcile thread handles).  Between the two the end is on
 * its way, and the group may change under it.
 */
#include <sys/queue.h>

#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

struct ender {
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ereq) made; /* answers on their way */
};

static int fake_held;

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
	return (n);
}

struct ender *
ender_new(struct queue *done, void (*make)(struct ereq *))
{
	struct ender *en = xcalloc(1, sizeof(*en));

	(void)done;
	(void)make;
	TAILQ_INIT(&en->made);
	fake_held = 0;
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
	free(en);
}

void
ender_push(struct ender *en, struct ereq *e)
{
	end_make(e);
	TAILQ_INSERT_TAIL(&en->made, e, entry);
}

size_t
fake_ender_deliver(struct reconcile *r)
{
	struct msg  *msg;
	struct ereq *e;
	size_t	     n = 0;

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
