/*
 * A pod write request, which the reconcile thread hands to the writepool
 * (writepool.c) and which comes back to it with its result as an
 * MSG_WRITE message.  Made and freed here, so the queue can free what it
 * holds without knowing the writepool.
 */
#include <stdio.h>
#include <stdlib.h>

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
	struct wreq *w = wreq_new_named(kind, e->rec->ns, e->rec->name,
	    e->rec->uid);

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
		extcall_release(w->call);
	json_decref(w->body);
	json_decref(w->claims);
	free(w);
}
