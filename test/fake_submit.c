/*
 * The submit thread (submitter.c) for the group tests, run by hand: a
 * request waits until the test has it made (sctl_submit, unless the group
 * withdrew it first, as the thread does) and then delivered, as the
 * MSG_SUBMITTED message the reconcile thread handles.  Between the two, the
 * answer is "on its way" and the group may change under it.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

struct submitter {
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, sreq) waiting; /* not made yet */
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, sreq) made; /* answers on their way */
};

static int fake_asked;

void
fake_submit_reset(void)
{
	fake_asked = 0;
}

int
fake_submit_asked(void)
{
	return (fake_asked);
}

struct submitter *
submitter_new(struct queue *done)
{
	struct submitter *sb = xcalloc(1, sizeof(*sb));

	(void)done;
	TAILQ_INIT(&sb->waiting);
	TAILQ_INIT(&sb->made);
	return (sb);
}

void
submitter_free(struct submitter *sb)
{
	struct sreq *s;

	if (sb == NULL)
		return;
	while ((s = TAILQ_FIRST(&sb->waiting)) != NULL) {
		TAILQ_REMOVE(&sb->waiting, s, entry);
		sreq_free(s);
	}
	while ((s = TAILQ_FIRST(&sb->made)) != NULL) {
		TAILQ_REMOVE(&sb->made, s, entry);
		sreq_free(s);
	}
	free(sb);
}

void
submitter_push(struct submitter *sb, struct sreq *s)
{
	fake_asked++;
	TAILQ_INSERT_TAIL(&sb->waiting, s, entry);
}

size_t
fake_submit_waiting(struct submitter *sb)
{
	struct sreq *s;
	size_t	     n = 0;

	TAILQ_FOREACH (s, &sb->waiting, entry)
		n++;
	return (n);
}

void
fake_submit_make(struct submitter *sb)
{
	struct sreq *s;

	while ((s = TAILQ_FIRST(&sb->waiting)) != NULL) {
		TAILQ_REMOVE(&sb->waiting, s, entry);
		if (atomic_load(&s->withdrawn)) {
			s->rc = -1;
			snprintf(s->err, sizeof(s->err),
			    "withdrawn: its pods "
			    "changed before it was made");
		} else if (s->update_jobid != 0) {
			s->jobid = s->update_jobid;
			s->rc = 0;
		} else
			s->rc = sctl_submit(&s->js, &s->jobid, &s->layout,
			    &s->permanent, s->err, sizeof(s->err));
		TAILQ_INSERT_TAIL(&sb->made, s, entry);
	}
}

size_t
fake_submit_deliver(struct submitter *sb, struct reconcile *r)
{
	struct msg  *msg;
	struct sreq *s;
	size_t	     n = 0;

	while ((s = TAILQ_FIRST(&sb->made)) != NULL) {
		TAILQ_REMOVE(&sb->made, s, entry);
		msg = xcalloc(1, sizeof(*msg));
		msg->kind = MSG_SUBMITTED;
		msg->submit = s;
		reconcile_msg(r, msg);
		n++;
	}
	return (n);
}
