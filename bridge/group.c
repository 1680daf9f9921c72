/*
 * The group state machine, run by the reconcile thread: a group (a gang,
 * or a pod alone) goes WAITING -> SUBMITTING -> PENDING(job) ->
 * ALLOCATED(layout) -> BOUND -> ENDED.  group_evaluate decides what it
 * needs next: wait for its members (and its namespace, and its size), be
 * submitted as one allocation-only placeholder job (form.c), have its
 * members bound once Slurm allocated it (bind.c), or end (end.c).  A pod
 * joins the group the workload rules name (group_join).  A member that
 * arrives after the allocation takes a free slot of it, or, when the job
 * is full and the gang grows, is placed alone (group_beyond).
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "bridge.h"

/* Is pkey one of the pods the group's job was made for? */
static int
group_in_job(struct group *g, const char *pkey)
{
	return (strv_find(groups_job_list(g), pkey) != -1);
}

struct group *
group_join(struct reconcile *r, struct pod_entry *e)
{
	struct workload_lookup lk;
	struct group_id	       gid;
	struct group	      *g, *old;
	json_t		      *obj;
	char		       err[256], msg[320];
	int		       rc;

	obj = podrec_json(e->rec);
	lookups_workload_init(r, &lk);
	rc = workload_group(obj, &lk, &gid, err, sizeof(err));
	if (rc == 0 && gid.gang && e->beyond)
		rc = workload_group_alone(obj, &gid, err, sizeof(err));
	json_decref(obj);
	if (rc == -1) {
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		writes_condition(r, e, msg, 1);
		return (NULL);
	}
	if (e->group != NULL && strcmp(e->group, gid.key) != 0 &&
	    (old = map_get(r->groups, e->group)) != NULL) {
		groups_member_remove(old, e->rec->key);
		e->group = NULL; /* old may go now */
		end_member_gone(r, old);
	}
	g = groups_get(r, &gid, e->rec->ns);
	e->group = g->key;
	groups_member_add(g, e->rec->key);
	if (e->foreign)
		g->foreign = 1; /* labelled from now on */
	if (g->invalid) {
		/* A member changed: try a translation that failed again. */
		g->invalid = 0;
		g->next_try = 0;
		g->retry_ms = 0;
	}
	return (g);
}

/*
 * A member that came when its gang's Slurm job (jobid) was full, of a gang
 * that grows: it leaves the gang and is placed alone, as a job of its own;
 * its Binding marks it so (ANN_BEYOND_GANG, writes_bind).
 */
static void
group_beyond(struct reconcile *r, struct pod_entry *e, const char *gang,
    uint32_t jobid)
{
	struct group *g;

	log_info("pod %s: gang %s's Slurm job %u is full (a PodGroup's pods "
		 "beyond its minMember run once it has): placed alone, as a "
		 "Slurm job of its own",
	    e->rec->key, workload_key_name(gang), jobid);
	intern_put(e->beyond);
	e->beyond = intern_get(workload_key_name(gang));
	if ((g = group_join(r, e)) != NULL)
		group_evaluate(r, g);
}

/*
 * A member that arrives after its gang's job was allocated (a controller's
 * replacement for a member that ended) takes the slot of an ended or
 * vanished member: the allocation still holds it.  A member recreated
 * under the same name has its slot already.  Returns how many members now
 * need binding; one that finds no slot is placed alone when the gang
 * grows (group_beyond), else told why.
 */
static size_t
group_refill(struct reconcile *r, struct group *g)
{
	struct pod_entry *e, *old;
	struct strv	 *jp, beyond = { NULL, 0, 0 };
	size_t		  i, j, filled = 0;
	char		  msg[256];
	int		  found;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		/* Recreated under the same name: its slot is waiting. */
		if (group_in_job(g, e->rec->key)) {
			filled++;
			continue;
		}
		found = 0;
		groups_job_list_own(g);
		jp = &g->job->job_pods;
		for (j = 0; j < jp->n; j++) {
			old = map_get(r->pods, jp->v[j]);
			if (old != NULL && old->state != PS_ENDED)
				continue;
			log_info("pod %s: takes the slot of %s in slurm job %u",
			    e->rec->key, jp->v[j], g->jobid);
			strv_set(&groupjob_get(g)->job_pods, j, e->rec->key);
			filled++;
			found = 1;
			break;
		}
		if (!found && g->grows)
			strv_add(&beyond, e->rec->key);
		else if (!found) {
			snprintf(msg, sizeof(msg),
			    "gang %s: Slurm job %u has "
			    "no free slot for this pod; it waits until the "
			    "gang's job ends",
			    workload_key_name(g->key), g->jobid);
			writes_condition(r, e, msg, 0);
		}
	}
	/* After the loop: each leaves g's members. */
	for (i = 0; i < beyond.n; i++)
		if ((e = map_get(r->pods, beyond.v[i])) != NULL)
			group_beyond(r, e, g->key, g->jobid);
	strv_clear(&beyond);
	return (filled);
}

/* Decides what a group needs next. */
void
group_evaluate(struct reconcile *r, struct group *g)
{
	struct pod_entry *pods[WORKLOAD_MAX_GANG];
	char		  msg[256];
	size_t		  n, i;
	int		  min;

	/* An end on the end thread: its answer (end_done) decides next. */
	if (!r->recovered || g->ending)
		return;
	/*
	 * Slurm took the allocation back (suspended, requeued): a failed
	 * delete is asked again, and once no member it bound still runs, the
	 * job is cancelled (a controller's replacement pods get a new one).
	 */
	if (g->jobid != 0 && g->job->disruption != NULL && !g->cancelled) {
		end_members(r, g);
		if (groups_live(r, g, NULL, 0, 0) !=
		    groups_live(r, g, NULL, 0, 1))
			return;
		end_cancel(r, g, "Slurm took its allocation back");
	}
	/*
	 * A job that is over (ended, or cancelled by us) serves no new pod:
	 * once its bound members are gone, the group starts afresh, so a
	 * controller's new pods get a new job rather than a dead slot.
	 */
	if (g->jobid != 0 && (g->cancelled || g->state == G_ENDED)) {
		if (g->job->end_msg != NULL)
			end_members(r, g);
		if (groups_live(r, g, NULL, 0, 0) !=
		    groups_live(r, g, NULL, 0, 1))
			return;
		end_reset(r, g);
	}
	if ((g->state == G_ALLOCATED || g->state == G_BOUND) &&
	    group_refill(r, g) > 0)
		groups_set_state(r, g, G_ALLOCATED);
	if (g->state == G_PENDING && g->recheck)
		form_update_pending(r, g);
	if (g->state == G_ALLOCATED || g->state == G_PENDING) {
		groups_want(r->writes, g->key);
		return;
	}
	if (g->state != G_WAITING || g->next_try > now_ms())
		return;
	n = groups_live(r, g, pods, WORKLOAD_MAX_GANG, 1);
	if (n == 0)
		return;
	if (n > WORKLOAD_MAX_GANG) {
		snprintf(msg, sizeof(msg),
		    "gang %s has %zu pods; at most %d "
		    "are supported",
		    workload_key_name(g->key), n, WORKLOAD_MAX_GANG);
		groups_condition(r, g, msg, 1);
		return;
	}
	for (i = 0; i < n; i++)
		if (pods[i]->rec->gated)
			return;
	/*
	 * Another scheduler's pods are placed when its extender asks
	 * (extender.c), never on the strength of a label they carry.
	 */
	if (g->foreign && !g->ext_asked)
		return;
	if (!lookups_namespace_enabled(r, g->ns)) {
		snprintf(msg, sizeof(msg),
		    "namespace %s is not enabled for "
		    "slurm-bridge; enable it with: kubectl label namespace %s " BRIDGE_NS_LABEL
		    "=" BRIDGE_NS_LABEL_VALUE,
		    g->ns, g->ns);
		groups_condition(r, g, msg, 1);
		return;
	}
	if ((min = form_min(r, g)) == 0) {
		form_unsized(r, g);
		return;
	}
	if ((int)n < min) {
		snprintf(msg, sizeof(msg),
		    "waiting for gang %s: %zu of %d "
		    "pods present",
		    workload_key_name(g->key), n, min);
		groups_condition(r, g, msg, 0);
		return;
	}
	form_submit(r, g, pods, n);
}

void
group_evaluate_ns(struct reconcile *r, const char *ns)
{
	struct map   *m = map_get(r->ns_groups, ns);
	struct strv   keys = { NULL, 0, 0 };
	struct group *g;
	const char   *k;
	size_t	      it = 0;
	uint32_t      i;

	if (m == NULL)
		return;
	/* Collect first: evaluating may free groups. */
	while (map_next(m, &it, &k, NULL))
		strv_add(&keys, k);
	for (i = 0; i < keys.n; i++)
		if ((g = map_get(r->groups, keys.v[i])) != NULL) {
			/* An owner object or the namespace changed. */
			g->recheck = 1;
			group_evaluate(r, g);
		}
	strv_clear(&keys);
}

/*
 * Does the periodic sweep have nothing to do for g?  A job that waits on
 * Slurm (its members unlabelled, or labelled already) hears from the
 * poll; a group whose members are all bound, and one backing off, wait
 * for an event or their time.  Any change to them comes as an event.
 */
int
group_quiet(struct reconcile *r, struct group *g, int64_t now)
{
	/* An end on the end thread: its answer brings the group back. */
	if (g->ending)
		return (1);
	if (g->cancelled || g->job->end_msg != NULL || g->claims_held)
		return (0);
	/* A cancel failed (slurmctld away): the sweep tries again. */
	if (g->cancel_due)
		return (0);
	switch (g->state) {
	case G_SUBMITTING:
		return (1);
	case G_PENDING:
		return (g->next_try > now || !groups_labelled(r, g));
	case G_BOUND:
		return (g->jobid != 0 && groups_live(r, g, NULL, 0, 1) == 0);
	case G_WAITING:
		return (g->next_try > now);
	default:
		return (0);
	}
}

/*
 * The submit thread's answer (s stays the caller's): 1 when its job now
 * waits on Slurm, which the caller then polls soon.
 */
int
group_submitted(struct reconcile *r, struct sreq *s)
{
	struct group *g;

	switch (form_submitted(r, s)) {
	case FORM_POLL:
		return (1);
	case FORM_AGAIN:
		if ((g = map_get(r->groups, s->gkey)) != NULL)
			group_evaluate(r, g);
		return (0);
	default:
		return (0);
	}
}
