/*
 * The scheduler extender's answers, on the reconcile thread: a call made on
 * an HTTP thread (endpoints.c) is queued, answered here and handed
 * back (extcall_done, in queue.c).
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <string.h>

#include "bridge.h"

/*
 * A scheduler-extender call.  Filter: a pod of an enabled namespace is
 * taken in as if its watch had brought it (submitted, or found), and the
 * answer is the node it was bound to, or why it waits.  Bind: a bridged pod
 * is already bound by the bridge, to Slurm's node; any other pod is bound
 * as asked, since the extender is the scheduler's binder for all pods.
 */
void
extender_answer(struct reconcile *r, struct ext_call *c)
{
	struct pod_entry *e;
	struct podrec	 *rec;
	struct group	 *g;
	char		  key[600];

	if (c->op == EXT_FILTER) {
		k8s_obj_key(c->pod, key, sizeof(key));
		c->managed = lookups_namespace_enabled(r,
		    k8s_obj_namespace(c->pod));
		if (c->managed) {
			/* A known pod's own watch is newer than this copy. */
			if (map_get(r->pods, key) == NULL &&
			    (rec = podrec_new(c->pod)) != NULL)
				pods_update(r, rec);
			/* Allocated at once: its bind is on its way. */
			bind_flush_writes(r);
			e = map_get(r->pods, key);
			g = e != NULL && e->group != NULL ?
			    map_get(r->groups, e->group) :
			    NULL;
			if (g != NULL && !g->ext_asked) {
				/* Its scheduler asks: it may be placed now. */
				g->ext_asked = 1;
				group_evaluate(r, g);
				bind_flush_writes(r);
			}
			c->resolvable = g == NULL || !g->invalid;
			if (e != NULL &&
			    (e->state == PS_BOUND || e->busy == WREQ_BIND))
				snprintf(c->node_out, sizeof(c->node_out), "%s",
				    e->bound_node != NULL    ? e->bound_node :
					e->rec->node != NULL ? e->rec->node :
							       "");
			else if (g != NULL && g->jobid != 0)
				snprintf(c->msg, sizeof(c->msg),
				    "waiting for "
				    "Slurm allocation (Reason=%s, job %u)",
				    g->pending_reason != NULL ?
					g->pending_reason :
					"None",
				    g->jobid);
			else
				snprintf(c->msg, sizeof(c->msg),
				    "waiting for "
				    "Slurm allocation: %.400s",
				    e != NULL && e->foreign &&
					    e->cond_text != NULL ?
					e->cond_text :
					"not submitted yet");
		}
	} else {
		snprintf(key, sizeof(key), "%s/%s", c->ns, c->name);
		e = map_get(r->pods, key);
		c->managed = e != NULL;
		if (e != NULL &&
		    (e->state == PS_BOUND || e->busy == WREQ_BIND) &&
		    e->bound_node != NULL &&
		    strcmp(e->bound_node, c->node) == 0)
			c->msg[0] = '\0';
		else if (e != NULL)
			snprintf(c->msg, sizeof(c->msg),
			    "pod %.200s is placed "
			    "by Slurm, and Slurm has not allocated node %.64s to "
			    "it",
			    key, c->node);
		else {
			/* Answered when the Binding comes back. */
			writes_extender_bind(r, c);
			return;
		}
	}
	extcall_done(c);
}
