/*
 * A pod write request, which the reconcile thread hands to the writepool
 * (writepool.c) and which comes back to it with its result as an
 * MSG_WRITE message.  Made and freed here, so the queue can free what it
 * holds without knowing the writepool.
 *
 * Threads: reconcile, writepool (wreq_condition_time, wreq_status_body).
 */
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"

struct wreq *
wreq_new_named(enum wreq_kind kind, const char *ns, const char *name,
    const char *uid)
{
	size_t	     nl, kl, ul;
	struct wreq *w;
	char	    *p;

	if (uid == NULL)
		uid = "";
	nl = strlen(ns) + 1;
	kl = nl + strlen(name) + 1;
	ul = strlen(uid) + 1;
	w = xcalloc(1, sizeof(*w) + nl + kl + ul);
	w->kind = kind;
	p = w->buf;
	memcpy(p, ns, nl);
	w->ns = p;
	p += nl;
	snprintf(p, kl, "%s/%s", ns, name);
	w->pkey = p;
	w->name = p + nl;
	p += kl;
	memcpy(p, uid, ul);
	w->uid = p;
	return (w);
}

struct wreq *
wreq_new(enum wreq_kind kind, const struct pod_entry *e, const char *gkey)
{
	struct wreq *w = wreq_new_named(kind, e->rec->ns, podrec_name(e->rec),
	    podrec_uid(e->rec));

	w->gkey = gkey != NULL ? xstrdup(gkey) : NULL;
	return (w);
}

void
wreq_free(struct wreq *w)
{
	if (w == NULL)
		return;
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

void
wreq_condition_time(char *ts, size_t len, int64_t at)
{
	struct timeval tv = { (time_t)at, 0 };

	k8s_microtime(ts, len, at != 0 ? &tv : NULL);
	snprintf(ts + 19, len - 19, "Z");
}

json_t *
wreq_status_body(const struct wreq *w)
{
	char ts[64];

	wreq_condition_time(ts, sizeof(ts), w->at);
	return (json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "PodScheduled", "status", "False", "reason",
	    "Unschedulable", "message", w->msg != NULL ? w->msg : "",
	    "lastTransitionTime", ts));
}
