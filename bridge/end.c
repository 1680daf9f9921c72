/*
 * How a group's job ends: a member ended or left
 * (end_member_gone: give a pending gang's job up; end a gang whose
 * PodGroup's disruptionMode is all; once no member runs,
 * have the end thread complete or cancel the job, and release finalizers
 * when its answer confirms it, end_done), Slurm ended the job
 * (end_members deletes its pods with Slurm's reason) or took it back
 * (end_yield: preempted, suspended, requeued), a node was lost
 * (end_fail), and the job is forgotten so the group can start again
 * (end_reset).  A job whose pods ended lives on while pods of other jobs
 * share its claims' devices.  All of it runs on the reconcile thread but
 * end_make (and end_make_one), which the end thread (ender.c) runs to
 * complete or cancel jobs in Slurm.
 *
 * Threads: reconcile, end (end_make, end_make_one).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

/* The pods g's job was made for, or its members if that is not known. */
static const struct strv *
end_pods(const struct group *g)
{
	const struct strv *jl = groups_job_list(g);

	return (jl->n > 0 ? jl : &g->members);
}

/*
 * Hands the end of g's job to the end thread (ender.c): the completion
 * with code and sig, or (complete 0) the cancel: one Slurm RPC, no mark.
 * Whether its pods stopped is the node's to say, in the node epilog
 * (epilog/main.c), never the API server's: a force-deleted pod is gone
 * from the API while its containers still run.  The job counts as
 * cancelled from now; its members' finalizers stay until the answer
 * (end_done) confirms it.
 */
static void
end_ask(struct reconcile *r, struct group *g, int complete, int code, int sig,
    const char *why)
{
	struct ereq *e = ereq_new(g->key, g->jobid);

	/* A pending job holds no node: its cancel waits its turn in bulk. */
	e->bulk = !complete && g->state == G_PENDING;
	e->complete = complete;
	e->code = code;
	e->sig = sig;
	e->why = why;
	e->leader_elect = r->conf->leader_elect;
	g->cancelled = 1;
	g->ending = 1;
	g->cancel_due = 0;
	ender_push(r->ender, e);
}

/* Cancels g's job: here, or (ask) on the end thread (end_ask). */
static void
end_stop(struct reconcile *r, struct group *g, const char *why, int ask)
{
	char err[256];

	if (g->jobid == 0 || g->cancelled)
		return;
	if (leader_fenced(r->conf->leader_elect, "cancelling a job")) {
		g->cancel_due = 1; /* the sweep tries again */
		return;
	}
	if (ask) {
		end_ask(r, g, 0, 0, 0, why);
		return;
	}
	if (sctl_cancel(g->jobid, err, sizeof(err)) == -1) {
		log_warnx("group %s: cancel slurm job %u: %s", g->key, g->jobid,
		    err);
		g->cancel_due = 1; /* the sweep tries again */
		return;
	}
	g->cancel_due = 0;
	g->cancelled = 1;
	log_info("group %s: cancelled slurm job %u (%s)", g->key, g->jobid,
	    why);
}

void
end_cancel(struct reconcile *r, struct group *g, const char *why)
{
	end_stop(r, g, why, 0);
}

/*
 * The job's pods have all ended: Slurm records the job as they ended.  When
 * every pod it was made for ran and ended by itself (Succeeded or Failed,
 * not deleted), the job completes with the first failed one's exit code
 * and signal (sacct: COMPLETED 0:0, or FAILED 3:0); else it is cancelled
 * (CANCELLED).
 */
static void
end_finish(struct reconcile *r, struct group *g)
{
	const struct strv *pods = end_pods(g);
	struct pod_entry  *e;
	int		   code = 0, sig = 0, failed = 0;
	size_t		   i;

	if ((g->state != G_ALLOCATED && g->state != G_BOUND) || g->failed)
		goto cancel;
	for (i = 0; i < pods->n; i++) {
		e = map_get(r->pods, pods->v[i]);
		if (e == NULL || e->rec->delete_at != 0 ||
		    (e->rec->phase != PHASE_SUCCEEDED &&
			e->rec->phase != PHASE_FAILED))
			goto cancel;
		if (e->rec->phase == PHASE_FAILED && !failed) {
			failed = 1;
			code = e->rec->exit_code > 0 ? e->rec->exit_code : 1;
			sig = e->rec->exit_signal;
		}
	}
	if (leader_fenced(r->conf->leader_elect, "completing a job")) {
		g->cancel_due = 1; /* the sweep tries again */
		return;
	}
	end_ask(r, g, 1, code, sig, NULL);
	return;
cancel:
	end_stop(r, g, "no member runs any more", 1);
}

/*
 * Does g's job hold a shared claim's devices for a live pod of another
 * group?  Then it lives on (its pods ended).  Only a job whose pods name a
 * claim can: no walk of the claims for the others.
 */
static int
end_claims_held(struct reconcile *r, struct group *g)
{
	size_t n;

	if (!g->claims_held && !g->allocated_claims && !claims_named(r, g))
		return (0);
	n = claims_joiners(r, g->jobid, g->key, NULL, NULL) +
	    claims_joins_pending(r, g->jobid);
	if (n > 0 && !g->claims_held)
		log_info("group %s: its pods ended; slurm job %u keeps holding "
			 "the devices of its shared ResourceClaims for %zu "
			 "pod(s) of other jobs",
		    g->key, g->jobid, n);
	g->claims_held = n > 0;
	return (n > 0);
}

/* A pod sharing a claim of g's yields with g's job (claims_joiners' fn). */
static void
end_joiner(void *arg, struct pod_entry *e, const json_t *claim)
{
	struct reconcile *r = ((void **)arg)[0];
	struct group	 *g = ((void **)arg)[1];
	char		  msg[512];

	if (e->rec->delete_at != 0)
		return;
	snprintf(msg, sizeof(msg),
	    "%s (it held the devices of ResourceClaim %.63s this pod "
	    "shares)",
	    g->job->disruption != NULL ? g->job->disruption : g->job->end_msg,
	    k8s_obj_name(claim));
	if (g->job->disruption != NULL)
		writes_preempt(r, e, msg, g->job->grace_end);
	else
		writes_delete(r, e, msg);
}

/*
 * Deletes the live members of a group whose job Slurm ended, with an Event
 * carrying Slurm's state and reason.  A failed delete is retried from the
 * sweep (group_evaluate) until the pod is deleting or gone.
 */
void
end_members(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state == PS_ENDED || e->rec->delete_at != 0)
			continue;
		if (g->job->disruption != NULL)
			writes_preempt(r, e, g->job->disruption,
			    g->job->grace_end);
		else
			writes_delete(r, e, g->job->end_msg);
	}
	/* ... and the pods of other jobs that share its claims' devices. */
	if ((g->job->disruption != NULL || g->job->end_msg != NULL) &&
	    (g->claims_held || g->allocated_claims || claims_named(r, g))) {
		void *arg[2] = { r, g };

		(void)claims_joiners(r, g->jobid, g->key, end_joiner, arg);
	}
}

void
end_yield(struct reconcile *r, struct group *g, enum stats_yield cause,
    time_t grace_end)
{
	static const char *const why[YIELD_KINDS] = {
		[YIELD_PREEMPTED] = "preempted",
		[YIELD_SUSPENDED] = "suspended (a pod cannot be; it yields as "
				    "if preempted)",
		[YIELD_REQUEUED] = "requeued",
	};
	struct group_job *m;
	char		  msg[512];

	if (g->job->disruption != NULL || g->jobid == 0)
		return;
	if (grace_end > time(NULL))
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: Slurm %s job %u; its GraceTime ends in "
		    "%lds",
		    why[cause], g->jobid, (long)(grace_end - time(NULL)));
	else
		snprintf(msg, sizeof(msg), "slurm-bridge: Slurm %s job %u",
		    why[cause], g->jobid);
	log_info("group %s: %s: its pods yield", g->key, msg + 14);
	m = groupjob_get(g);
	m->disruption = xstrdup(msg);
	m->grace_end = grace_end;
	g->slurm_ends = cause == YIELD_PREEMPTED;
	free(m->end_msg);
	m->end_msg = xstrdup(msg);
	atomic_fetch_add(&bstats.disruptions[cause], 1);
	writes_podgroup_disrupted(r, g, msg);
	end_members(r, g);
	/* Slurm ends a preempted job itself (sacct: PREEMPTED). */
	if (g->slurm_ends)
		g->cancelled = 1;
}

/* Forgets the group's job so it can be submitted again. */
void
end_reset(struct reconcile *r, struct group *g)
{
	writes_group_release(r, g);
	if (g->jobid != 0)
		groups_index_del(r, g);
	g->jobid = 0;
	g->cancelled = 0;
	g->ending = 0;
	g->failed = 0;
	groups_set_state(r, g, G_WAITING);
	g->job_pods_set = 0;
	g->job_pods_members = 0;
	groupjob_forget(g);
	g->cpus_per_task = g->gpus_per_task = 0;
	g->slurm_ends = 0;
	g->spec = 0;
	g->recheck = 0;
	g->updating = 0;
	g->hinted = 0;
	g->claims_held = 0;
	g->allocated_claims = 0;
}

/*
 * A Kubernetes PodGroup with disruptionMode all: its members are disrupted
 * together.  In a composite gang (one Slurm job), the CompositePodGroup's
 * all, or that of the member's own PodGroup, ends the whole gang.  One that ended otherwise than Succeeded (deleted, evicted,
 * failed) while others of the bound gang run ends the gang: they are
 * deleted, saying why, and the job is cancelled.  With
 * single (the default) the others run on, and a replacement takes the
 * slot in the same job (group_refill).
 */
static void
end_disrupt_all(struct reconcile *r, struct group *g, size_t live)
{
	struct pod_entry *e, *gone = NULL;
	struct group_job *m;
	json_t		 *pg, *pod;
	char		  msg[512], who[200];
	size_t		  i;
	int		  all;

	if (live == 0 || g->state != G_BOUND || g->cancelled ||
	    g->job->disruption != NULL || g->job->end_msg != NULL ||
	    (g->sized_by != WORKLOAD_SCHED_PODGROUP &&
		g->sized_by != WORKLOAD_SCHED_COMPOSITE))
		return;
	for (i = 0; i < g->members.n && gone == NULL; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e != NULL && e->state == PS_ENDED &&
		    (e->rec->delete_at != 0 ||
			e->rec->phase != PHASE_SUCCEEDED))
			gone = e;
	}
	if (gone == NULL)
		return;
	pg = lookups_workload(r, g->sized_by, g->ns, workload_key_name(g->key));
	all = pg != NULL && workload_podgroup_disrupt_all(pg);
	json_decref(pg);
	snprintf(who, sizeof(who), "%s %s",
	    g->sized_by == WORKLOAD_SCHED_COMPOSITE ? "CompositePodGroup" :
						      "PodGroup",
	    workload_key_name(g->key));
	/* In a composite gang, the member's own PodGroup's mode too. */
	if (!all && g->sized_by == WORKLOAD_SCHED_COMPOSITE) {
		pod = podrec_json(gone->rec);
		pg = lookups_workload(r, WORKLOAD_SCHED_PODGROUP, g->ns,
		    k8s_obj_str(pod, "spec.schedulingGroup.podGroupName"));
		all = pg != NULL && workload_podgroup_disrupt_all(pg);
		if (all)
			snprintf(who, sizeof(who),
			    "PodGroup %.63s (of CompositePodGroup %.63s)",
			    k8s_obj_name(pg), workload_key_name(g->key));
		json_decref(pg);
		json_decref(pod);
	}
	if (!all)
		return;
	snprintf(msg, sizeof(msg),
	    "slurm-bridge: %s has disruptionMode all and its member "
	    "%s %s, so the gang ends (Slurm job %u cancelled)",
	    who, podrec_name(gone->rec),
	    gone->rec->delete_at != 0 ? "was deleted" : "failed", g->jobid);
	log_info("group %s: %s", g->key, msg + 14);
	m = groupjob_get(g);
	m->end_msg = xstrdup(msg);
	end_members(r, g);
	end_stop(r, g, "disruptionMode all: a member was disrupted", 1);
}

/*
 * A member ended or left.  A pending gang that lost a member gives its job
 * up (the gang is resubmitted once complete again); an allocated group's
 * job is cancelled once no member runs any more; finalizers are released
 * once the job is gone.
 */
void
end_member_gone(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  n, i;

	n = groups_live(r, g, NULL, 0, 0);
	end_disrupt_all(r, g, n);
	if (g->state == G_SUBMITTING)
		groups_withdraw(g);
	if (g->jobid != 0 && !g->cancelled) {
		if (g->state == G_PENDING && n < groups_job_list(g)->n) {
			/*
			 * On the end thread, in bulk: the group forgets the
			 * job (group_evaluate) only once Slurm confirmed its
			 * end (end_done), so no second job is made for the
			 * gang while the first may still start.
			 */
			end_stop(r, g,
			    g->gang ? "the gang lost a member while pending" :
				      "its pod went while pending",
			    1);
			/*
			 * Clear the stale job id label; a restart that finds
			 * the job still pending gives it up at its first poll
			 * (poll_job_cb: the gang is short of the job's pods).
			 */
			for (i = 0; i < g->members.n; i++) {
				e = map_get(r->pods, g->members.v[i]);
				if (e != NULL && e->state == PS_UNBOUND &&
				    e->label_jobid == g->jobid && e->busy == 0)
					writes_unlabel(r, e);
			}
		} else if (n == 0 && !end_claims_held(r, g))
			end_finish(r, g);
	}
	/*
	 * The finalizer guards the job's cleanup: once the job is gone (its
	 * end confirmed), or while other members still run (the last one to
	 * end holds it), an ended member may go.
	 */
	if (g->jobid == 0 || (g->cancelled && !g->ending) || n > 0) {
		for (i = 0; i < g->members.n; i++) {
			e = map_get(r->pods, g->members.v[i]);
			if (e == NULL || e->state != PS_ENDED)
				continue;
			if (e->finalizer)
				groups_want(r->releases, e->rec->key);
			else
				writes_force_delete(r, e);
		}
	}
	groups_gc(r, g);
}

/*
 * Fails every live member of a group whose node was lost, and ends its
 * job: a gang is all or nothing.
 */
void
end_fail(struct reconcile *r, struct group *g, const char *reason,
    const char *msg)
{
	struct pod_entry *e;
	json_t		 *v, *keys;
	size_t		  i;

	g->failed = 1; /* its Failed pods are ours: the job is cancelled */
	end_cancel(r, g, msg);
	keys = json_array();
	for (i = 0; i < g->members.n; i++)
		json_array_append_new(keys, json_string(g->members.v[i]));
	json_array_foreach (keys, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state == PS_ENDED)
			continue;
		writes_fail(r, e, reason, msg);
		e->state = PS_ENDED;
	}
	json_decref(keys);
	end_member_gone(r, g);
}

/* Makes one end: the completion or the cancel. */
static void
end_make_one(struct ereq *e)
{
	if (e->complete)
		e->rc = sctl_complete(e->jobid, e->code, e->sig, e->err,
		    sizeof(e->err));
	else
		e->rc = sctl_cancel(e->jobid, e->err, sizeof(e->err));
}

void
end_make(struct ereq **es, size_t n)
{
	uint32_t ids[END_BATCH];
	uint8_t	 ended[END_BATCH];
	char	 err[256];
	size_t	 i;

	if (n == 0)
		return;
	if (leader_fenced(es[0]->leader_elect,
		es[0]->complete ? "completing a job" : "cancelling a job")) {
		for (i = 0; i < n; i++) {
			es[i]->rc = -1;
			snprintf(es[i]->err, sizeof(es[i]->err),
			    "held back: this replica may no longer lead");
		}
		return;
	}
	if (n == 1 && !es[0]->bulk) {
		end_make_one(es[0]);
		return;
	}
	for (i = 0; i < n && i < END_BATCH; i++)
		ids[i] = es[i]->jobid;
	err[0] = '\0';
	(void)sctl_cancel_jobs(ids, i, ended, err, sizeof(err));
	for (i = 0; i < n && i < END_BATCH; i++) {
		es[i]->rc = ended[i] ? 0 : -1;
		if (!ended[i])
			snprintf(es[i]->err, sizeof(es[i]->err),
			    "job %u not ended; its batch's first failure: "
			    "%.180s",
			    es[i]->jobid, err);
	}
}

void
end_done(struct reconcile *r, const struct ereq *e)
{
	struct group *g = map_get(r->groups, e->gkey);

	/* Its group forgot the job since (end_reset), or let it go. */
	if (g == NULL || g->jobid != e->jobid || !g->ending)
		return;
	g->ending = 0;
	if (e->rc == -1) {
		/* A job Slurm itself ended meanwhile needs no second ask. */
		if (g->state != G_ENDED) {
			log_warnx("group %s: %s slurm job %u: %s", g->key,
			    e->complete ? "complete" : "cancel", g->jobid,
			    e->err);
			g->cancelled = 0;
			g->cancel_due = 1; /* the sweep tries again */
			return;
		}
	} else if (e->complete)
		log_info("group %s: slurm job %u %s (exit code %d:%d)", g->key,
		    g->jobid,
		    e->code != 0 || e->sig != 0 ? "failed" : "completed",
		    e->code, e->sig);
	else
		log_info("group %s: cancelled slurm job %u (%s)", g->key,
		    g->jobid, e->why);
	end_member_gone(r, g);
}
