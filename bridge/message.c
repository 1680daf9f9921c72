/*
 * The requests the reconcile thread hands to its workers, which come back
 * to it with their results as queue events: pod writes (writepool.c) and
 * allocations (submitter.c).  Made and freed here, so the queue can free
 * what it holds without knowing the workers.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"

struct wreq *
wreq_new(enum wreq_kind kind, const struct pod_entry *e, const char *gkey)
{
	struct wreq	*w = xcalloc(1, sizeof(*w));

	w->kind = kind;
	w->pkey = xstrdup(e->key);
	w->ns = xstrdup(e->ns);
	w->name = xstrdup(e->name);
	w->uid = xstrdup(e->rec->uid);
	w->gkey = gkey != NULL ? xstrdup(gkey) : NULL;
	return (w);
}

void
wreq_free(struct wreq *w)
{
	if (w == NULL)
		return;
	free(w->pkey);
	free(w->ns);
	free(w->name);
	free(w->uid);
	free(w->gkey);
	free(w->node);
	free(w->slurm_node);
	free(w->gres);
	free(w->msg);
	json_decref(w->body);
	free(w);
}

struct sreq *
sreq_new(const char *gkey, uint64_t seq)
{
	struct sreq	*s = xcalloc(1, sizeof(*s));

	s->gkey = xstrdup(gkey);
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
	jobspec_cleanup(&s->js);
	json_decref(s->pods);
	json_decref(s->layout);
	free(s);
}
