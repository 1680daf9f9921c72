/*
 * Every write the bridge makes to a pod, and only here: the reconcile
 * thread asks, the writepool (writepool.c) writes, and the result comes
 * back as an MSG_WRITE message.  Events (through the eventer), the
 * PodScheduled condition, Bindings, bridge metadata (job id label, node and
 * GRES annotations, the finalizer), finalizer release, Failed status,
 * deletion when a job ended, a preempted pod's DisruptionTarget and
 * graceful deletion (writes_preempt), the final deletion of a pod whose
 * node never
 * confirmed, and the extender's Bindings of pods that are not ours.  A
 * Binding carries the writes of the pod's ResourceClaims that must come
 * before it (claims.c plans them; the same writer makes them first, the
 * pod's status.extendedResourceClaimStatus among them).  At
 * most one metadata, bind or release write per pod is in flight (e->busy),
 * one condition (e->cond_busy), and one deletion is asked until it fails
 * (e->del_sent), so a sweep before the watch shows the pod deleting asks
 * nothing twice.
 *
 * Threads: reconcile.
 */

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

/* Records an Event about the pod, from an eventer thread. */
void
writes_event(struct reconcile *r, struct pod_entry *e, const char *type,
    const char *reason, const char *action, const char *msg)
{
	eventer_post(r->eventer, podrec_ref(e->rec), type, reason, action, msg);
}

void
writes_node_event(struct reconcile *r, const char *node, const char *type,
    const char *reason, const char *action, const char *msg)
{
	eventer_post(r->eventer,
	    json_pack("{s:s, s:s, s:{s:s}}", "kind", "Node", "apiVersion", "v1",
		"metadata", "name", node),
	    type, reason, action, msg);
}

/*
 * Bridge metadata for a pod as one strategic merge patch (new reference):
 * the jobid label (removed with jobid 0), our finalizer (finalizers merge
 * as a set, so nobody else's are touched and no resourceVersion is
 * needed), and the node and GRES annotations when node is set.
 */
static json_t *
writes_metadata_patch(const struct pod_entry *e, uint32_t jobid,
    const char *node, const char *gres)
{
	json_t *md;
	char	id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	md = json_object();
	json_object_set_new(md, "labels",
	    json_pack("{s:o}", LABEL_JOBID,
		jobid != 0 ? json_string(id) : json_null()));
	if (node != NULL)
		json_object_set_new(md, "annotations",
		    json_pack("{s:s, s:o}", ANN_SLURM_NODE, node,
			ANN_SLURM_GRES,
			gres != NULL ? json_string(gres) : json_null()));
	if (jobid != 0 && !e->finalizer)
		json_object_set_new(md, "finalizers",
		    json_pack("[s]", FINALIZER));
	return (json_pack("{s:o}", "metadata", md));
}

/* The patch that removes our finalizer, keeping everyone else's. */
static json_t *
writes_release_patch(void)
{
	return (json_pack("{s:{s:[s]}}", "metadata",
	    "$deleteFromPrimitiveList/finalizers", FINALIZER));
}

/* Hands the PodScheduled=False message msg to the writepool. */
static void
writes_condition_send(struct reconcile *r, struct pod_entry *e, const char *msg)
{
	struct wreq *w;

	w = wreq_new(WREQ_STATUS, e, NULL);
	w->msg = xstrdup(msg);
	w->at = (int64_t)time(NULL);
	e->cond_busy = 1;
	writepool_submit(r->writepool, w);
}

/*
 * Writes PodScheduled=False with msg, once per distinct message, and never
 * once the pod is being bound: the Binding sets PodScheduled=True, and a
 * late False must not undo it.  One write per pod is in flight at a time;
 * messages that come meanwhile coalesce into the latest (e->cond_text).
 * warn also records a FailedScheduling Event.
 */
void
writes_condition(struct reconcile *r, struct pod_entry *e, const char *msg,
    int warn)
{
	uint64_t h = map_hash(msg);

	if (e->cond == h || e->state != PS_UNBOUND || e->busy == WREQ_BIND)
		return;
	if (warn)
		writes_event(r, e, "Warning", "FailedScheduling", "Scheduling",
		    msg);
	e->cond = h;
	free(e->cond_text);
	e->cond_text = e->foreign || e->cond_busy ? xstrdup(msg) : NULL;
	if (e->cond_busy)
		e->cond_queued = 1;
	else
		writes_condition_send(r, e, msg);
}

void
writes_condition_done(struct reconcile *r, struct pod_entry *e,
    const struct wreq *w)
{
	int queued = e->cond_queued;

	e->cond_busy = 0;
	e->cond_queued = 0;
	if (w->rc == -1) {
		if (w->err.status != 404)
			log_warnx("pod %s: condition: %ld %s: %s", e->rec->key,
			    w->err.status, w->err.reason, w->err.text);
		/* Asked again, it is written again. */
		if (!queued && e->cond == map_hash(w->msg))
			e->cond = 0;
	}
	/* A newer message came while this one was on its way. */
	if (queued && e->state == PS_UNBOUND && e->busy != WREQ_BIND)
		writes_condition_send(r, e, e->cond_text);
	if (!e->foreign) {
		free(e->cond_text);
		e->cond_text = NULL;
	}
}

/*
 * A metadata patch for jobid (and node, if set) landed: what the pod now
 * carries, in the cached copy too until its watch event brings it.
 */
void
writes_metadata_done(struct pod_entry *e, uint32_t jobid, const char *node)
{
	e->label_jobid = jobid;
	if (jobid != 0)
		e->finalizer = 1;
	if (node == NULL)
		return;
	intern_put(e->slurm_node);
	e->slurm_node = intern_get(node);
}

/* Hands a member's metadata (job id label, finalizer, node) to the pool. */
void
writes_label(struct reconcile *r, struct pod_entry *e, const char *gkey,
    uint32_t jobid, const struct assignment *a)
{
	struct wreq *w = wreq_new(WREQ_METADATA, e, gkey);

	w->jobid = jobid;
	w->node = a != NULL ? xstrdup(a->node) : NULL;
	w->body = writes_metadata_patch(e, jobid, a != NULL ? a->node : NULL,
	    a != NULL ? a->gres : NULL);
	e->busy = WREQ_METADATA;
	writepool_submit(r->writepool, w);
}

void
writes_unlabel(struct reconcile *r, struct pod_entry *e)
{
	writes_label(r, e, e->group, 0, NULL);
}

/* The jobs whose devices a pod's shared claims are (claims_plan's joins). */
static void
writes_device_jobs(json_t *annotations, const json_t *claims)
{
	const json_t *cw;
	char	      jobs[256] = "";
	size_t	      i, o = 0;

	json_array_foreach (claims, i, cw)
		if (json_is_integer(json_object_get(cw, "join")) &&
		    o < sizeof(jobs))
			o += (size_t)snprintf(jobs + o, sizeof(jobs) - o,
			    "%s%" JSON_INTEGER_FORMAT, o > 0 ? "," : "",
			    json_integer_value(json_object_get(cw, "join")));
	if (o > 0 && o < sizeof(jobs))
		json_object_set_new(annotations, ANN_SLURM_DEVICE_JOBS,
		    json_string(jobs));
}

void
writes_bind(struct reconcile *r, struct pod_entry *e, const char *gkey,
    uint32_t jobid, const char *knode, const struct assignment *a,
    json_t *claims)
{
	struct wreq *w = wreq_new(WREQ_BIND, e, gkey);
	char	     id[16];

	w->claims = claims;
	snprintf(id, sizeof(id), "%u", jobid);
	w->jobid = jobid;
	w->node = xstrdup(knode);
	w->slurm_node = xstrdup(a->node);
	w->gres = a->gres != NULL ? xstrdup(a->gres) : NULL;
	w->body = json_pack("{s:s, s:s}", ANN_SLURM_JOBID, id, ANN_SLURM_NODE,
	    a->node);
	if (a->gres != NULL)
		json_object_set_new(w->body, ANN_SLURM_GRES,
		    json_string(a->gres));
	/* Alone from now on, a restart included (workload_group). */
	if (e->beyond)
		json_object_set_new(w->body, ANN_BEYOND_GANG,
		    json_string(e->beyond));
	writes_device_jobs(w->body, claims);
	claims_joins_inflight(r, claims, 1);
	intern_put(e->bound_node);
	e->bound_node = intern_get(knode);
	e->busy = WREQ_BIND;
	writepool_submit(r->writepool, w);
}

void
writes_claims(struct reconcile *r, struct pod_entry *e, const char *gkey,
    uint32_t jobid, json_t *claims)
{
	struct wreq *w = wreq_new(WREQ_CLAIMS, e, gkey);

	w->claims = claims;
	w->jobid = jobid;
	claims_joins_inflight(r, claims, 1);
	e->busy = WREQ_CLAIMS;
	writepool_submit(r->writepool, w);
}

void
writes_group_release(struct reconcile *r, const struct group *g)
{
	json_t	     *rels = claims_group_release(r, g);
	const json_t *v;
	struct wreq  *w;
	size_t	      i;

	json_array_foreach (rels, i, v) {
		/* About the PodGroup, which is no pod: nothing to learn back. */
		w = wreq_new_named(WREQ_CLAIMS, k8s_obj_str(v, "ns"),
		    k8s_obj_str(v, "podgroup"), "");
		w->gkey = xstrdup(g->key);
		w->jobid = g->jobid;
		w->claims = json_pack("[O]", json_object_get(v, "write"));
		writepool_submit(r->writepool, w);
	}
	json_decref(rels);
}

void
writes_release(struct reconcile *r, struct pod_entry *e)
{
	struct wreq *w;

	if (e == NULL || e->state != PS_ENDED || !e->finalizer || e->busy != 0)
		return;
	w = wreq_new(WREQ_RELEASE, e, e->group);
	w->body = writes_release_patch();
	e->busy = WREQ_RELEASE;
	writepool_submit(r->writepool, w);
}

/* Hands a deletion of the pod to the pool, unless one was asked. */
static void
writes_send_delete(struct reconcile *r, struct pod_entry *e, json_t *opts,
    const char *why)
{
	struct wreq *w;

	if (e->del_sent) {
		json_decref(opts);
		return;
	}
	/*
	 * Always with the pod's UID as a precondition: a StatefulSet's db-0
	 * made again under the same name while the delete waited is another
	 * pod, and the API server refuses to delete it (409).
	 */
	if (opts == NULL)
		opts = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind",
		    "DeleteOptions");
	if (podrec_uid(e->rec) != NULL && *podrec_uid(e->rec) != '\0')
		json_object_set_new(opts, "preconditions",
		    json_pack("{s:s}", "uid", podrec_uid(e->rec)));
	w = wreq_new(WREQ_DELETE, e, e->group);
	w->body = opts;
	w->msg = xstrdup(why);
	e->del_sent = 1;
	writepool_submit(r->writepool, w);
}

/*
 * Slurm ended the job: the pod's own grace period, up to
 * maxEndGraceSeconds (a pod that does not say gets Kubernetes' 30).
 */
void
writes_delete(struct reconcile *r, struct pod_entry *e, const char *msg)
{
	int64_t own, max = r->conf->end_grace_max_s;
	json_t *opts = NULL;

	if (e->del_sent)
		return;
	own = e->rec->grace_s >= 0 ? e->rec->grace_s : 30;
	if (max > 0 && own > max)
		opts = json_pack("{s:s, s:s, s:I}", "kind", "DeleteOptions",
		    "apiVersion", "v1", "gracePeriodSeconds", (json_int_t)max);
	writes_event(r, e, "Warning", "SlurmJobEnded", "Delete", msg);
	writes_send_delete(r, e, opts, msg);
}

void
writes_preempt(struct reconcile *r, struct pod_entry *e, const char *msg,
    time_t grace_end)
{
	struct wreq *w;
	char	     ts[64];
	int64_t	     grace = 1, own;

	if (e->del_sent)
		return;
	/* What is left of Slurm's grace, never more than the pod's own. */
	own = e->rec->grace_s >= 0 ? e->rec->grace_s : 30;
	if (grace_end > time(NULL))
		grace = (int64_t)(grace_end - time(NULL));
	if (grace > own)
		grace = own;
	if (r->conf->end_grace_max_s > 0 && grace > r->conf->end_grace_max_s)
		grace = r->conf->end_grace_max_s;
	if (grace < 1)
		grace = 1; /* 0 would remove it before its node stops it */
	writes_event(r, e, "Normal", "Preempted", "Preempting", msg);
	wreq_condition_time(ts, sizeof(ts), 0);
	w = wreq_new(WREQ_PREEMPT, e, e->group);
	w->body = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "DisruptionTarget", "status", "True",
	    "reason", "PreemptionByScheduler", "message", msg,
	    "lastTransitionTime", ts);
	w->msg = xstrdup(msg);
	w->grace = grace;
	e->del_sent = 1;
	writepool_submit(r->writepool, w);
}

/* The (Composite)PodGroup whose status g's condition goes to, or NULL. */
static json_t *
writes_group_obj(struct reconcile *r, struct group *g)
{
	if (g->sized_by != WORKLOAD_SCHED_PODGROUP &&
	    g->sized_by != WORKLOAD_SCHED_COMPOSITE)
		return (NULL);
	return (
	    lookups_workload(r, g->sized_by, g->ns, workload_key_name(g->key)));
}

void
writes_podgroup_disrupted(struct reconcile *r, struct group *g, const char *msg)
{
	struct wreq *w;
	json_t	    *pg;
	char	     ts[64];

	if ((pg = writes_group_obj(r, g)) == NULL)
		return;
	wreq_condition_time(ts, sizeof(ts), 0);
	/* No group key: its answer is logged, never compared (pg_cond). */
	w = wreq_new_named(WREQ_PODGROUP, g->ns, workload_key_name(g->key),
	    k8s_obj_uid(pg));
	w->msg = xstrdup(msg);
	xasprintf(&w->path, "%s/namespaces/%s/%s/%s/status",
	    g->sized_by == WORKLOAD_SCHED_COMPOSITE ? r->conf->composite_api :
						      r->conf->podgroup_api,
	    g->ns,
	    g->sized_by == WORKLOAD_SCHED_COMPOSITE ? "compositepodgroups" :
						      "podgroups",
	    workload_key_name(g->key));
	w->body = json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s, s:s, s:s, s:I}]}}",
	    "metadata", "uid", k8s_obj_uid(pg), "status", "conditions", "type",
	    "DisruptionTarget", "status", "True", "reason",
	    "PreemptionByScheduler", "message", msg, "lastTransitionTime", ts,
	    "observedGeneration",
	    json_integer_value(k8s_obj_get(pg, "metadata.generation")));
	json_decref(pg);
	writepool_submit(r->writepool, w);
}

void
writes_fail(struct reconcile *r, struct pod_entry *e, const char *reason,
    const char *msg)
{
	struct wreq *w = wreq_new(WREQ_FAIL, e, e->group);

	w->body = json_pack("{s:{s:s, s:s, s:s}}", "status", "phase", "Failed",
	    "reason", reason, "message", msg);
	w->msg = xstrdup(msg);
	writepool_submit(r->writepool, w);
	writes_event(r, e, "Warning", reason, "Fail", msg);
}

/*
 * A deleted pod whose grace period is over and whose node is gone from the
 * API server would stay Terminating for good: with the job gone, finish
 * the deletion (grace 0, UID precondition).  A pod whose node is still
 * there stays Terminating until that node confirms, as Kubernetes keeps
 * it: that is what keeps a StatefulSet at most one copy of each pod.
 */
void
writes_force_delete(struct reconcile *r, struct pod_entry *e)
{
	/*
	 * A pod never bound to a node has nobody to confirm: the API server
	 * removes it as soon as its finalizers are gone.
	 */
	if (e->rec->delete_at == 0 || e->state == PS_UNBOUND ||
	    e->rec->node == NULL || map_get(r->nodes, e->rec->node) != NULL ||
	    time(NULL) < e->rec->delete_at + FORCE_DELETE_SLACK_S)
		return;
	writes_send_delete(r, e,
	    json_pack("{s:s, s:s, s:i, s:{s:s}}", "apiVersion", "v1", "kind",
		"DeleteOptions", "gracePeriodSeconds", 0, "preconditions",
		"uid", podrec_uid(e->rec)),
	    "grace period over and its node is gone");
}

void
writes_extender_bind(struct reconcile *r, struct ext_call *c)
{
	struct wreq *w = wreq_new_named(WREQ_EXTBIND, c->ns, c->name, c->uid);

	w->node = xstrdup(c->node);
	w->call = extcall_hold(c);
	writepool_submit(r->writepool, w);
}

/*
 * Sends g->job->pg_cond ("True|msg" or "False|msg") as the condition
 * cond of obj, at api/namespaces/NS/resource/NAME/status.
 */
static void
writes_group_cond(struct reconcile *r, struct group *g, const json_t *obj,
    const char *api, const char *resource, const char *cond)
{
	const json_t *c, *old = NULL;
	const char   *status = strncmp(g->job->pg_cond, "True|", 5) == 0 ?
	      "True" :
	      "False";
	const char   *msg = strchr(g->job->pg_cond, '|') + 1, *ltt = NULL;
	const char   *name = k8s_obj_name(obj);
	struct wreq  *w;
	char	      ts[64];
	size_t	      i;

	json_array_foreach (k8s_obj_get(obj, "status.conditions"), i, c) {
		const char *type = k8s_obj_str(c, "type");

		if (type != NULL && strcmp(type, cond) == 0)
			old = c;
	}
	/* The transition time moves only when the status does. */
	if (old != NULL && k8s_obj_str(old, "status") != NULL &&
	    strcmp(k8s_obj_str(old, "status"), status) == 0)
		ltt = k8s_obj_str(old, "lastTransitionTime");
	if (ltt == NULL) {
		wreq_condition_time(ts, sizeof(ts), 0);
		ltt = ts;
	}
	w = wreq_new_named(WREQ_PODGROUP, g->ns, name, k8s_obj_uid(obj));
	w->gkey = xstrdup(g->key);
	w->msg = xstrdup(g->job->pg_cond);
	xasprintf(&w->path, "%s/namespaces/%s/%s/%s/status", api, g->ns,
	    resource, name);
	w->body = json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s, s:s, s:s, s:I}]}}",
	    "metadata", "uid", k8s_obj_uid(obj), "status", "conditions", "type",
	    cond, "status", status, "reason",
	    status[0] == 'T' ? "Scheduled" : "Unschedulable", "message", msg,
	    "lastTransitionTime", ltt, "observedGeneration",
	    json_integer_value(k8s_obj_get(obj, "metadata.generation")));
	g->pg_busy++;
	writepool_submit(r->writepool, w);
}

/*
 * The Kubernetes PodGroups of g's members, by name (a composite gang's
 * children), as a new object.
 */
static json_t *
writes_child_groups(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	json_t		 *names = json_object(), *pod;
	const char	 *pg;
	size_t		  i;

	for (i = 0; i < g->members.n; i++) {
		if ((e = map_get(r->pods, g->members.v[i])) == NULL)
			continue;
		pod = podrec_json(e->rec);
		if ((pg = k8s_obj_str(pod,
			 "spec.schedulingGroup.podGroupName")) != NULL)
			json_object_set_new(names, pg, json_null());
		json_decref(pod);
	}
	return (names);
}

/*
 * Sends g->job->pg_cond to its PodGroup (obj); for a composite gang, to
 * the CompositePodGroup (obj) and to each of its members' PodGroups, as
 * kube-scheduler writes the condition on every group of the tree.
 */
static void
writes_podgroup_send(struct reconcile *r, struct group *g, const json_t *obj)
{
	json_t	   *names, *pg, *v;
	const char *name;

	g->pg_sent = 1;
	if (g->sized_by != WORKLOAD_SCHED_COMPOSITE) {
		writes_group_cond(r, g, obj, r->conf->podgroup_api, "podgroups",
		    PODGROUP_CONDITION);
		return;
	}
	writes_group_cond(r, g, obj, r->conf->composite_api,
	    "compositepodgroups", COMPOSITE_CONDITION);
	names = writes_child_groups(r, g);
	json_object_foreach (names, name, v) {
		if ((pg = lookups_workload(r, WORKLOAD_SCHED_PODGROUP, g->ns,
			 name)) == NULL)
			continue;
		writes_group_cond(r, g, pg, r->conf->podgroup_api, "podgroups",
		    PODGROUP_CONDITION);
		json_decref(pg);
	}
	json_decref(names);
}

void
writes_podgroup(struct reconcile *r, struct group *g, int scheduled,
    const char *msg)
{
	json_t *pg;
	char   *want;

	if ((g->sized_by != WORKLOAD_SCHED_PODGROUP &&
		g->sized_by != WORKLOAD_SCHED_COMPOSITE) ||
	    (g->pg_scheduled && !scheduled))
		return;
	xasprintf(&want, "%s|%s", scheduled ? "True" : "False", msg);
	if (g->job->pg_cond != NULL && strcmp(g->job->pg_cond, want) == 0 &&
	    g->pg_sent) {
		free(want);
		return;
	}
	if (g->job->pg_cond == NULL || strcmp(g->job->pg_cond, want) != 0)
		g->pg_sent = 0;
	free(g->job->pg_cond);
	groupjob_get(g)->pg_cond = want;
	if (scheduled)
		g->pg_scheduled = 1;
	/* The PodGroup may not be known yet: asked again once it is. */
	if (g->pg_busy > 0 || (pg = writes_group_obj(r, g)) == NULL)
		return;
	writes_podgroup_send(r, g, pg);
	json_decref(pg);
}

/*
 * A (Composite)PodGroup status write came back: once all of one send
 * are back, a newer wish goes now.
 */
static void
writes_podgroup_done(struct reconcile *r, struct wreq *w)
{
	struct group *g = w->gkey != NULL ? map_get(r->groups, w->gkey) : NULL;
	json_t	     *pg;

	if (w->rc == -1 && w->err.status != 404)
		log_warnx("PodGroup %s: status: %ld %s: %s", w->pkey,
		    w->err.status, w->err.reason, w->err.text);
	if (g == NULL || w->gkey == NULL)
		return;
	if (g->pg_busy > 0)
		g->pg_busy--;
	/* Failed: written again when asked again. */
	if (w->rc == -1 && strcmp(g->job->pg_cond, w->msg) == 0)
		g->pg_sent = 0;
	if (g->pg_busy > 0 || strcmp(g->job->pg_cond, w->msg) == 0)
		return;
	if ((pg = writes_group_obj(r, g)) != NULL) {
		writes_podgroup_send(r, g, pg);
		json_decref(pg);
	}
}

int
writes_done(struct reconcile *r, struct wreq *w)
{
	struct pod_entry *e;
	const char	 *uid;

	switch (w->kind) {
	case WREQ_PODGROUP:
		writes_podgroup_done(r, w);
		return (1);
	case WREQ_EXTBIND:
		if (w->rc == -1)
			snprintf(w->call->msg, sizeof(w->call->msg),
			    "bind "
			    "%.200s to %.64s: %.200s",
			    w->pkey, w->node, w->err.text);
		else
			log_info("pod %s: bound to node %s for kube-scheduler "
				 "(not a bridged pod)",
			    w->pkey, w->node);
		extcall_done(w->call);
		return (1);
	case WREQ_DELETE:
	case WREQ_FAIL:
	case WREQ_PREEMPT:
		break;
	default:
		return (0);
	}
	if (w->rc == 0)
		log_info("pod %s: %s: %s", w->pkey,
		    w->kind == WREQ_FAIL	? "failed" :
			w->kind == WREQ_PREEMPT ? "preempted, deleted" :
						  "deleted",
		    w->msg);
	else if (w->err.status != 404 && w->err.status != 409)
		log_warnx("pod %s: %s: %ld %s: %s; %s", w->pkey,
		    w->kind == WREQ_FAIL ? "fail" : "delete", w->err.status,
		    w->err.reason, w->err.text,
		    w->kind == WREQ_FAIL ? "its job is cancelled" :
					   "retried from the sweep");
	e = map_get(r->pods, w->pkey);
	uid = e != NULL ? podrec_uid(e->rec) : NULL;
	if (w->kind != WREQ_FAIL && w->rc == -1 && e != NULL &&
	    strcmp(uid != NULL ? uid : "", w->uid) == 0)
		e->del_sent = 0; /* asked again from the sweep */
	return (1);
}
