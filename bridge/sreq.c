/*
 * An allocation request, which the reconcile thread hands to the submit
 * thread (submitter.c) and which comes back to it with its result as an
 * MSG_SUBMITTED message.  Made and freed here, so the queue can free what
 * it holds without knowing the submit threads.
 *
 * Threads: reconcile.
 */
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

struct sreq *
sreq_new(const char *gkey, const char *ns, uint32_t seq)
{
	struct sreq *s = xcalloc(1, sizeof(*s));

	s->gkey = xstrdup(gkey);
	s->ns = intern_get(ns);
	s->seq = seq;
	s->pods = json_array();
	return (s);
}

void
sreq_free(struct sreq *s)
{
	if (s == NULL)
		return;
	free(s->gkey);
	intern_put(s->ns);
	translate_jobspec_cleanup(&s->js);
	json_decref(s->pods);
	json_decref(s->layout);
	free(s);
}
