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
wreq_new_named(enum wreq_kind kind, const char *ns, const char *name,
    const char *uid)
{
	struct wreq *w = xcalloc(1, sizeof(*w));

	w->kind = kind;
	xasprintf(&w->pkey, "%s/%s", ns, name);
	w->ns = xstrdup(ns);
	w->name = xstrdup(name);
	w->uid = xstrdup(uid != NULL ? uid : "");
	return (w);
}

struct wreq *
wreq_new(enum wreq_kind kind, const struct pod_entry *e, const char *gkey)
{
	struct wreq *w = wreq_new_named(kind, e->ns, e->name, e->rec->uid);

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
	free(w->path);
	if (w->call != NULL)
		ext_call_release(w->call);
	json_decref(w->body);
	json_decref(w->claims);
	free(w);
}

struct sreq *
sreq_new(const char *gkey, uint64_t seq)
{
	struct sreq *s = xcalloc(1, sizeof(*s));

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
