/*
 * The end of a job whose pods ended, which the reconcile thread hands to
 * the end thread (ender.c) and which comes back to it with its result as
 * an MSG_ENDED message.  Made and freed here, so the queue can free what
 * it holds without knowing the end thread.
 *
 * Threads: reconcile.
 */
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

struct ereq *
ereq_new(const char *gkey, uint32_t jobid)
{
	struct ereq *e = xcalloc(1, sizeof(*e));

	e->gkey = gkey != NULL ? xstrdup(gkey) : NULL;
	e->jobid = jobid;
	return (e);
}

void
ereq_free(struct ereq *e)
{
	if (e == NULL)
		return;
	free(e->gkey);
	free(e);
}
