/*
 * The group state machine, run by the reconcile thread: a group (a gang,
 * or a pod alone) goes WAITING -> PENDING(job) -> ALLOCATED(layout) ->
 * BOUND -> ENDED.  It is submitted as one allocation-only placeholder job
 * once all its members are present; when Slurm allocates it, each member
 * is bound with one Binding that carries the job id, node and GRES.
 * A member that ends or leaves may give the job up (pending gang) or end
 * it (no member runs); finalizers are released once the job is gone.
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

/* Transient failures (slurmctld unreachable) retry quickly... */
#define RETRY_MIN_MS 2000
#define RETRY_MAX_MS 300000
/*
 * ...refusals that only a change on the Slurm side can fix slowly: every
 * refused allocation leaves a FAILED row in sacct.
 */
#define REFUSED_MIN_MS 60000
#define REFUSED_MAX_MS 1800000

/*
 * The group no longer wants the allocation it asked for: if the submit
 * thread has not made it yet, it will not (deleted pods do not queue up
 * jobs that are made only to be cancelled).
 */
static void
group_withdraw(struct group *g)
{
	if (g->inflight != NULL)
		atomic_store(&g->inflight->withdrawn, 1);
	g->inflight = NULL;
}

void
group_withdraw_all(struct reconcile *r)
{
	size_t it = 0;
	void  *v;

	while (map_next(r->groups, &it, NULL, &v))
		group_withdraw(v);
}

void
group_free(void *p)
{
	struct group *g = p;

	if (g == NULL)
		return;
	group_withdraw(g);
	free(g->key);
	intern_put(g->ns);
	intern_put(g->pending_reason);
	strv_clear(&g->members);
	strv_clear(&g->job_pods);
	json_decref(g->layout);
	json_decref(g->het);
	free(g->end_msg);
	free(g->disruption);
	free(g->spec);
	free(g->pg_cond);
	free(g);
}

static const char *
jobid_str(uint32_t jobid, char *buf, size_t len)
{
	snprintf(buf, len, "%u", jobid);
	return (buf);
}

void
group_index_put(struct reconcile *r, uint32_t jobid, const char *gkey)
{
	char id[16];

	map_put(r->jobs, jobid_str(jobid, id, sizeof(id)), xstrdup(gkey));
}

struct group *
group_by_job(struct reconcile *r, uint32_t jobid)
{
	char	    id[16];
	const char *gkey = map_get(r->jobs, jobid_str(jobid, id, sizeof(id)));

	return (gkey != NULL ? map_get(r->groups, gkey) : NULL);
}

/* A group linked by a wrong job id (hinted) never owned the entry. */
static void
group_index_del(struct reconcile *r, const struct group *g)
{
	char	    id[16];
	const char *gkey = map_get(r->jobs,
	    jobid_str(g->jobid, id, sizeof(id)));

	if (gkey != NULL && strcmp(gkey, g->key) == 0)
		map_del(r->jobs, id);
}

/* Writes a message on every unbound, live member of the group. */
void
group_condition(struct reconcile *r, struct group *g, const char *msg, int warn)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e != NULL && e->state == PS_UNBOUND)
			writer_condition(r, e, msg, warn);
	}
	writer_podgroup(r, g, 0, msg);
}

static void
group_cancel(struct reconcile *r, struct group *g, const char *why)
{
	char err[256];

	if (g->jobid == 0 || g->cancelled)
		return;
	if (fence_check(r->conf->leader_elect, "cancelling a job")) {
		g->cancel_due = 1; /* the sweep tries again */
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

/*
 * The job's pods have all ended: Slurm records the job as they ended.  When
 * every pod it was made for ran and ended by itself (Succeeded or Failed,
 * not deleted), the job completes with the first failed one's exit code
 * and signal (sacct: COMPLETED 0:0, or FAILED 3:0); else it is cancelled
 * (CANCELLED).
 */
static void
group_finish(struct reconcile *r, struct group *g)
{
	const struct strv *pods = g->job_pods.n > 0 ? &g->job_pods :
						      &g->members;
	struct pod_entry  *e;
	int		   code = 0, sig = 0, failed = 0;
	size_t		   i;
	char		   err[256];

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
	if (fence_check(r->conf->leader_elect, "completing a job")) {
		g->cancel_due = 1; /* the sweep tries again */
		return;
	}
	if (sctl_complete(g->jobid, code, sig, err, sizeof(err)) == -1) {
		log_warnx("group %s: complete slurm job %u: %s", g->key,
		    g->jobid, err);
		g->cancel_due = 1; /* the sweep tries again */
		return;
	}
	g->cancel_due = 0;
	g->cancelled = 1;
	log_info("group %s: slurm job %u %s (exit code %d:%d)", g->key,
	    g->jobid, failed ? "failed" : "completed", code, sig);
	return;
cancel:
	group_cancel(r, g, "no member runs any more");
}

/* Maps a Slurm node to its Kubernetes node: label first, then same name. */
static const char *
group_node_name(struct reconcile *r, const char *slurm_node)
{
	size_t	    it = 0;
	const char *name, *label;
	void	   *v;

	while (map_next(r->nodes, &it, &name, &v)) {
		label = k8s_obj_label(v, LABEL_SLURM_NODENAME);
		if (label != NULL && strcmp(label, slurm_node) == 0)
			return (name);
	}
	if ((v = map_get(r->nodes, slurm_node)) != NULL &&
	    k8s_obj_label(v, LABEL_SLURM_NODENAME) == NULL)
		return (slurm_node);
	return (NULL);
}

int
group_ns_enabled(struct reconcile *r, const char *ns)
{
	json_t	   *obj = map_get(r->namespaces, ns);
	const char *v;
	size_t	    i;

	if (obj == NULL)
		return (0);
	v = k8s_obj_label(obj, BRIDGE_NS_LABEL);
	if (v != NULL && strcmp(v, BRIDGE_NS_LABEL_VALUE) == 0)
		return (1);
	/* The config's (compat) managedNamespaces and selector. */
	for (i = 0; r->conf->managed_namespaces != NULL &&
	     r->conf->managed_namespaces[i] != NULL;
	     i++)
		if (strcmp(r->conf->managed_namespaces[i], ns) == 0)
			return (1);
	return (r->conf->managed_namespace_selector != NULL &&
	    k8s_selector_matches(r->conf->managed_namespace_selector,
		k8s_obj_get(obj, "metadata.labels")) == 1);
}

static void
group_retry_later(struct group *g, int refused)
{
	long min = refused ? REFUSED_MIN_MS : RETRY_MIN_MS;
	long max = refused ? REFUSED_MAX_MS : RETRY_MAX_MS;

	g->retry_ms = g->retry_ms < min ? min : g->retry_ms * 2;
	if (g->retry_ms > max)
		g->retry_ms = max;
	g->next_try = reconcile_now_ms() + g->retry_ms;
}

static int
group_member_cmp(const void *a, const void *b)
{
	const struct pod_entry *pa = *(const struct pod_entry *const *)a;
	const struct pod_entry *pb = *(const struct pod_entry *const *)b;

	return (workload_member_order(pa->rec->index, pa->name, pb->rec->index,
	    pb->name));
}

/* Live members in placement order (borrowed); returns the count. */
size_t
group_live(struct reconcile *r, struct group *g, struct pod_entry **out,
    size_t max, int unbound_only)
{
	struct pod_entry *e;
	size_t		  i, n = 0;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state == PS_ENDED ||
		    (unbound_only && e->state != PS_UNBOUND))
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	/* An array of pointers: sizeof a pointer is meant. */
	if (n > 1 && n <= max)
		/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
		qsort(out, n, sizeof(*out), group_member_cmp);
	return (n);
}

/* Adds key to one of the sets the next flush works through. */
static void
group_want(json_t *set, const char *key)
{
	json_object_set_new(set, key, json_true());
}

/*
 * Does the group write the job id label and our finalizer on its members
 * before binding them?  Only where they buy something: when asked for
 * (--jobid-label), and for pods of another scheduler placed through the
 * extender, which the bridge watches by that label.  Otherwise the Binding
 * carries the job id, node and GRES as annotations, and a restarted bridge
 * finds the job by its admin_comment.
 */
static int
group_labelled(struct reconcile *r, struct group *g)
{
	return (r->conf->jobid_label || g->foreign);
}

/* A finalizer release came back. */
static void
group_released(struct reconcile *r, struct pod_entry *e, struct wreq *w)
{
	if (w->rc == 0 || w->err.status == 404) {
		e->finalizer = 0;
		log_debug("pod %s: finalizer removed", e->key);
		writer_force_delete(r, e);
	} else
		log_warnx("pod %s: remove finalizer: %ld %s: %s", e->key,
		    w->err.status, w->err.reason, w->err.text);
}

/* Does the pod carry the job id, our finalizer and (if set) the node? */
static int
group_meta_done(struct pod_entry *e, uint32_t jobid, const char *node)
{
	const char *have;

	if (e->label_jobid != jobid || !e->finalizer)
		return (0);
	if (node == NULL)
		return (1);
	have = e->slurm_node;
	return (have != NULL && strcmp(have, node) == 0);
}

/* A member's Binding landed. */
static void
group_bound(struct reconcile *r, struct pod_entry *e, const struct wreq *w)
{
	char msg[384];

	if (e->state == PS_ENDED) {
		/* Failed or deleted while its Binding was on its way. */
		log_info("pod %s: bound to node %s after it ended", e->key,
		    w->node);
		return;
	}
	e->state = PS_BOUND;
	intern_put(e->bound_node);
	e->bound_node = intern_get(w->node);
	atomic_fetch_add(&bstats.pods_bound, 1);
	metrics_hist_observe(&bstats.sched_latency, pods_age(e));
	log_info("pod %s: bound to node %s (slurm job %u)", e->key, w->node,
	    w->jobid);
	snprintf(msg, sizeof(msg),
	    "bound to %.100s: Slurm allocated node "
	    "%.100s to job %u%s%.100s",
	    w->node, w->slurm_node, w->jobid, w->gres != NULL ? ", GRES " : "",
	    w->gres != NULL ? w->gres : "");
	writer_event(r, e, "Normal", "Scheduled", "Binding", msg);
}

/* The job id label on the members of a pending job (labelled groups). */
static void
group_plan_pending(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < g->job_pods.n; i++) {
		e = map_get(r->pods, g->job_pods.v[i]);
		if (e == NULL || e->state == PS_ENDED || e->busy != 0 ||
		    group_meta_done(e, g->jobid, NULL))
			continue;
		writer_label(r, e, g->key, g->jobid, NULL);
	}
}

/* The job's n pods onto its layout: by component for a heterogeneous job. */
static int
group_place(const struct group *g, size_t n, struct assignment *a, char *err,
    size_t errlen)
{
	if (g->het != NULL)
		return (
		    placement_assign_het(g->layout, g->het, n, a, err, errlen));
	return (placement_assign(g->layout, n, (int)g->cpus_per_task,
	    g->exclusive ? 1 : 0, (int)g->gpus_per_task, a, err, errlen));
}

/* Does group g's job still serve its claims (allocated, not ending)? */
static int
group_serves_claims(const struct group *g)
{
	return (g != NULL && !g->cancelled && g->disruption == NULL &&
	    g->end_msg == NULL &&
	    (g->state == G_SUBMITTING || g->state == G_PENDING ||
		g->state == G_ALLOCATED || g->state == G_BOUND));
}

/*
 * dra_busy_fn (dra.h) for a struct claims_asker: a pod waits for a free
 * claim while another group's job, about to run, will allocate it, and for
 * a shared one while the job holding its devices is ending.
 */
static int
group_claim_busy(void *arg, const json_t *claim, char *why, size_t whylen)
{
	const struct claims_asker *ask = arg;
	struct reconcile	  *r = ask->r;
	struct group		  *g;
	const char		  *owner, *snode;
	char			   key[512];
	uint32_t		   jobid;

	snprintf(key, sizeof(key), "%s/%s",
	    k8s_obj_namespace(claim) != NULL ? k8s_obj_namespace(claim) : "",
	    k8s_obj_name(claim) != NULL ? k8s_obj_name(claim) : "");
	if (k8s_obj_get(claim, "status.allocation") == NULL) {
		owner = json_string_value(
		    json_object_get(r->claim_allocators, key));
		if (owner == NULL || strcmp(owner, ask->gkey) == 0)
			return (0);
		g = map_get(r->groups, owner);
		/* Bound, its write of the claim is about to show. */
		if (!group_serves_claims(g)) {
			json_object_del(r->claim_allocators, key);
			return (0);
		}
		snprintf(why, whylen,
		    "the Slurm job of %.100s will allocate it; this pod "
		    "shares it once that job runs",
		    g->name);
		return (1);
	}
	json_object_del(r->claim_allocators, key);
	if (dra_claim_holder(claim, &jobid, &snode) == -1)
		return (0); /* not ours: dra.c says so */
	g = group_by_job(r, jobid);
	if (!group_serves_claims(g) ||
	    (g->state != G_ALLOCATED && g->state != G_BOUND)) {
		snprintf(why, whylen,
		    "Slurm job %u, which holds its devices, is ending; "
		    "waiting for them to be released",
		    jobid);
		return (1);
	}
	return (0);
}

/* The claim lookup for group g's pods (ask: its storage). */
static void
group_claims_lookup(struct reconcile *r, const struct group *g,
    struct claims_asker *ask, struct dra_lookup *dl)
{
	ask->r = r;
	ask->gkey = g->key;
	caches_claims_init(ask, dl);
	dl->busy = group_claim_busy;
}

/*
 * What an allocated group's members need next, given the writes in
 * flight.  The assignment is a pure function of the job's pod list and
 * layout, so a restarted bridge picks the same nodes.  A labelled group
 * binds only once every member carries its metadata; a gang binds nobody
 * while a member's node cannot be resolved.  All bound: G_BOUND.
 */
static void
group_plan_allocated(struct reconcile *r, struct group *g, int labelled)
{
	struct assignment  *a;
	struct pod_entry   *e;
	char		    msg[384], errs[256];
	size_t		    i, n = g->job_pods.n;
	size_t		    unbound = 0, meta = 0;
	int		    failed = 0, unplanned = 0, rc;
	struct claims_asker ask;
	struct dra_lookup   dl;

	group_claims_lookup(r, g, &ask, &dl);
	a = xcalloc(n ? n : 1, sizeof(*a));
	if (group_place(g, n, a, errs, sizeof(errs)) == -1) {
		log_warnx("group %s: slurm job %u: %s", g->key, g->jobid, errs);
		group_retry_later(g, 0);
		goto out;
	}
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, g->job_pods.v[i]);
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		unbound++;
		if (group_node_name(r, a[i].node) == NULL) {
			snprintf(msg, sizeof(msg),
			    "Slurm job %u was "
			    "allocated node %.100s, which has no Kubernetes "
			    "node (same name, or a node labelled " LABEL_SLURM_NODENAME
			    "=%.100s)",
			    g->jobid, a[i].node, a[i].node);
			if (e->cond == NULL || strcmp(e->cond, msg) != 0)
				log_warnx("pod %s: %s", e->key, msg);
			writer_condition(r, e, msg, 1);
			failed = 1;
			continue;
		}
		/* A labelled group binds nobody before all are labelled. */
		if (!labelled ||
		    (e->busy != WREQ_METADATA &&
			group_meta_done(e, g->jobid, a[i].node)))
			continue;
		meta++;
		if (e->busy == 0 && !e->cond_busy)
			writer_label(r, e, g->key, g->jobid, &a[i]);
	}
	if (unbound == 0) {
		group_set_state(r, g, G_BOUND);
		g->retry_ms = 0;
		snprintf(msg, sizeof(msg),
		    "Slurm job %u allocated the group; its %zu pods are bound",
		    g->jobid, n);
		writer_podgroup(r, g, 1, msg);
		goto out;
	}
	if (failed) {
		group_retry_later(g, 0);
		goto out;
	}
	if (meta > 0)
		goto out; /* binds follow once the metadata is on */
	for (i = 0; i < n; i++) {
		json_t *claims;

		e = map_get(r->pods, g->job_pods.v[i]);
		if (e == NULL || e->state != PS_UNBOUND || e->busy != 0 ||
		    e->cond_busy)
			continue;
		/* Its claims get the devices Slurm gave it, or no bind. */
		rc = claims_plan(r, e, g->jobid, group_node_name(r, a[i].node),
		    &a[i], &dl, &claims, errs, sizeof(errs));
		if (rc < 0) {
			snprintf(msg, sizeof(msg),
			    "Slurm job %u: not bound: %s%s", g->jobid, errs,
			    rc == -2 ? "; the job is given up and the pod "
				       "placed anew" :
				       "");
			log_warnx("pod %s: %s", e->key, msg);
			writer_condition(r, e, msg, 1);
			unplanned = 1;
			/* Given up only while nothing of it runs. */
			if (rc == -2 && !g->allocated_claims &&
			    group_live(r, g, NULL, 0, 0) ==
				group_live(r, g, NULL, 0, 1)) {
				group_cancel(r, g, "its shared claim moved");
				break;
			}
			continue;
		}
		if (claims_allocate(claims))
			g->allocated_claims = 1;
		writer_bind(r, e, g->key, g->jobid,
		    group_node_name(r, a[i].node), &a[i], claims);
	}
	/* One backoff for the round, not one per member. */
	if (unplanned)
		group_retry_later(g, 0);
out:
	/*
	 * a is xcalloc'd, never NULL; clang 14's analyzer ties it to a NULL
	 * return of group_node_name(r, a[0].node).
	 */
	for (i = 0; i < n; i++)
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
		free(a[i].gres);
	free(a);
}

/*
 * Hands the writes that groups asked for to the writer pool: bindings (and
 * labels, for labelled groups) of allocated groups, labels of pending
 * labelled ones, and finalizer releases.  Nothing waits for them: each
 * comes back through group_write_done, which asks for the next step.
 */
void
group_flush_writes(struct reconcile *r)
{
	json_t	     *keys = r->writes, *rel = r->releases, *v;
	struct group *g;
	const char   *k;
	int64_t	      now;

	if (json_object_size(keys) + json_object_size(rel) == 0)
		return;
	now = reconcile_now_ms();
	r->writes = json_object();
	r->releases = json_object();
	json_object_foreach (keys, k, v) {
		if ((g = map_get(r->groups, k)) == NULL)
			continue;
		if (g->state == G_PENDING && g->next_try <= now &&
		    group_labelled(r, g))
			group_plan_pending(r, g);
		else if (g->state == G_ALLOCATED && g->next_try <= now &&
		    g->disruption == NULL)
			group_plan_allocated(r, g, group_labelled(r, g));
	}
	json_object_foreach (rel, k, v)
		writer_release(r, map_get(r->pods, k));
	json_decref(keys);
	json_decref(rel);
}

/*
 * A pod write came back.  A pod deleted or recreated under its name since
 * has nothing to learn from it; for one the API server no longer has (404)
 * it returns 1, and the caller forgets the pod.  A failure waits for the group's backoff (the sweep asks
 * again); anything else asks for the group's next step.
 */
int
group_write_done(struct reconcile *r, struct wreq *w)
{
	struct pod_entry *e = map_get(r->pods, w->pkey);
	const char	 *uid;
	struct group	 *g;

	if (w->kind == WREQ_BIND)
		claims_joins_inflight(r, w->claims, -1);
	uid = e != NULL ? e->rec->uid : NULL;
	if (e == NULL || strcmp(uid != NULL ? uid : "", w->uid) != 0) {
		log_debug("pod %s: gone before its write came back", w->pkey);
		return (0);
	}
	g = e->group != NULL ? map_get(r->groups, e->group) : NULL;
	if (w->kind == WREQ_STATUS) {
		writer_condition_done(r, e, w);
		if (g != NULL && g->state == G_ALLOCATED)
			group_want(r->writes, g->key);
		return (0);
	}
	e->busy = 0;
	if (w->kind == WREQ_RELEASE) {
		group_released(r, e, w);
		return (0);
	}
	if (w->rc == -1 && w->err.status == 404) {
		log_info("pod %s: gone from the API server", e->key);
		return (1);
	}
	if (w->rc == -1) {
		log_warnx("pod %s: %s for slurm job %u: %ld %s: %s", e->key,
		    w->kind == WREQ_BIND ? "bind" : "label", w->jobid,
		    w->err.status, w->err.reason, w->err.text);
		if (w->kind == WREQ_BIND) {
			intern_put(e->bound_node);
			e->bound_node = NULL;
		}
		/* One backoff for a round of writes, not one per member. */
		if (g != NULL && g->jobid == w->jobid &&
		    g->next_try <= reconcile_now_ms())
			group_retry_later(g, 0);
	} else if (w->kind == WREQ_BIND)
		group_bound(r, e, w);
	else {
		writer_metadata_done(e, w->jobid, w->node);
		if (w->jobid != 0 && (g == NULL || g->jobid != w->jobid))
			writer_unlabel(r, e);
	}
	if (g == NULL)
		return (0);
	if (g->state == G_ALLOCATED || g->state == G_PENDING)
		group_want(r->writes, g->key);
	/* An ended member whose write was in flight: its cleanup now. */
	if (e->state == PS_ENDED && e->finalizer)
		group_member_gone(r, g); /* may free g */
	return (0);
}

void
group_allocated(struct reconcile *r, struct group *g, const json_t *layout)
{
	json_decref(g->layout);
	g->layout = json_deep_copy(layout);
	group_set_state(r, g, G_ALLOCATED);
	log_info("group %s: slurm job %u allocated", g->key, g->jobid);
	group_want(r->writes, g->key);
}

/*
 * Translates a group's members (placement order) into one job description,
 * with the workload layers (workload_layers) and the namespace for defaults
 * and bounds (bounds.c).
 */
static int
group_translate(struct reconcile *r, struct group *g,
    struct pod_entry **members, size_t n, struct jobspec *js, char *err,
    size_t errlen)
{
	struct translate_src   src;
	struct workload_lookup lk;
	struct dra_lookup      dl;
	struct claims_asker    ask;
	json_t		     **pods, *layers[WORKLOAD_LAYERS];
	size_t		       i;
	int		       rc;

	/* The compact records, as the JSON the rules read. */
	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	pods = xreallocarray(NULL, n, sizeof(*pods));
	for (i = 0; i < n; i++)
		pods[i] = podrec_json(members[i]->rec);
	caches_lookup_init(r, &lk);
	src.pod = pods[0];
	src.ns = map_get(r->namespaces, g->ns);
	group_claims_lookup(r, g, &ask, &dl);
	src.dra = &dl;
	src.layers = layers;
	src.nlayers = workload_layers(pods[0], &lk, layers);
	if (g->gang)
		rc = translate_group(pods, n, g->name, &src, &r->tconf, js, err,
		    errlen);
	else
		rc = translate_pod(&src, &r->tconf, js, err, errlen);
	for (i = 0; i < n; i++)
		json_decref(pods[i]);
	free(pods);
	workload_layers_free(layers, src.nlayers);
	return (rc);
}

/*
 * What the owner of a pending job may change of it (sctl_update_pending),
 * as one string to compare; a new string.
 */
static char *
group_spec(const struct jobspec *js)
{
	char *s;

	xasprintf(&s, "%s\x1f%u\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
	    js->name != NULL ? js->name : "", js->time_limit,
	    js->account != NULL ? js->account : "",
	    js->qos != NULL ? js->qos : "",
	    js->partition != NULL ? js->partition : "",
	    js->reservation != NULL ? js->reservation : "",
	    js->constraints != NULL ? js->constraints : "",
	    js->licenses != NULL ? js->licenses : "",
	    js->wckey != NULL ? js->wckey : "");
	return (s);
}

/*
 * A pending job whose request may have changed (group->recheck): when what
 * its owner may change differs from what was asked, the change goes to
 * Slurm through the submit thread (group_updated has the answer).  A
 * request that no longer translates leaves the job as it is, and says why
 * on the members.
 */
static void
group_update_pending(struct reconcile *r, struct group *g)
{
	struct pod_entry *pods[WORKLOAD_MAX_GANG];
	struct jobspec	  js;
	struct sreq	 *s;
	char		  err[512], msg[600], *spec;
	size_t		  n;

	if (g->updating || g->jobid == 0)
		return;
	g->recheck = 0;
	n = group_live(r, g, pods, WORKLOAD_MAX_GANG, 1);
	if (n == 0 || n > WORKLOAD_MAX_GANG)
		return;
	if (group_translate(r, g, pods, n, &js, err, sizeof(err)) != 0) {
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: Slurm job %u keeps its request: %s",
		    g->jobid, err);
		group_condition(r, g, msg, 1);
		return;
	}
	spec = group_spec(&js);
	/*
	 * Unchanged; or a job adopted at a restart, whose request is not
	 * known: what the pods ask now is the baseline, so an admin's own
	 * scontrol update of it is not undone.
	 */
	if (g->spec == NULL || strcmp(spec, g->spec) == 0) {
		if (g->spec == NULL)
			g->spec = spec;
		else
			free(spec);
		jobspec_cleanup(&js);
		return;
	}
	if (fence_check(r->conf->leader_elect, "changing a pending job")) {
		g->recheck = 1; /* asked again at the next evaluation */
		free(spec);
		jobspec_cleanup(&js);
		return;
	}
	free(g->spec);
	g->spec = spec;
	g->updating = 1;
	s = sreq_new(g->key, g->submit_seq);
	s->update_jobid = g->jobid;
	s->js = js;
	submitter_push(r->submitter, s);
}

/*
 * The submit thread's answer to group_update_pending.  A refused change
 * leaves the job as it was: the members say why, and the next change of
 * the request tries again.
 */
static void
group_updated(struct reconcile *r, struct sreq *s)
{
	struct group *g = map_get(r->groups, s->gkey);
	char	      msg[512];

	if (g == NULL)
		return;
	g->updating = 0;
	if (g->jobid != s->update_jobid)
		return; /* an answer about a job the group gave up */
	if (s->rc == 0) {
		log_info("group %s: pending slurm job %u changed to what its "
			 "pods and workload now ask",
		    g->key, g->jobid);
		return;
	}
	/*
	 * g->spec keeps what was asked: the same request is not asked again
	 * (our own condition write would bring it back at once), a new one is.
	 */
	log_warnx("group %s: %s", g->key, s->err);
	snprintf(msg, sizeof(msg),
	    "slurm-bridge: Slurm refused to change pending job %u: %.400s",
	    g->jobid, s->err);
	group_condition(r, g, msg, 1);
}

/*
 * Translates the group's members into one job and hands it to the submit
 * thread; the answer comes back through group_submitted.
 */
static void
group_submit(struct reconcile *r, struct group *g, struct pod_entry **pods,
    size_t n)
{
	struct sreq   *s;
	struct jobspec js;
	char	       err[512], msg[600];
	size_t	       i;
	int	       rc;

	if ((rc = group_translate(r, g, pods, n, &js, err, sizeof(err))) == 1) {
		/*
		 * Waiting for an object (a claim to be made or freed): its
		 * event brings the group back, with no backoff or warning.
		 */
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		group_condition(r, g, msg, 0);
		return;
	}
	if (rc == -1) {
		log_warnx("group %s: not submitted: %s", g->key, err);
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		group_condition(r, g, msg, 1);
		/*
		 * Retried on any member change, and slowly anyway: the fix may
		 * be in the namespace, the PodGroup or the owning workload.
		 */
		g->invalid = 1;
		group_retry_later(g, 1);
		return;
	}
	free(g->spec);
	g->spec = group_spec(&js);
	g->recheck = 0;
	/* Until it runs, the claims it will allocate are its own. */
	claims_allocating(r, g, pods, n);
	s = sreq_new(g->key, ++r->submit_seq);
	s->js = js;
	for (i = 0; i < n; i++)
		json_array_append_new(s->pods, json_string(pods[i]->key));
	group_set_state(r, g, G_SUBMITTING);
	g->submit_seq = s->seq;
	r->submits++;
	g->inflight = s;
	submitter_push(r->submitter, s);
}

/* Are the request's pods all still unbound members of g? */
static int
group_request_current(struct reconcile *r, struct group *g,
    const struct sreq *s)
{
	struct pod_entry *e;
	json_t		 *v;
	size_t		  i;

	json_array_foreach (s->pods, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state != PS_UNBOUND || e->group == NULL ||
		    strcmp(e->group, g->key) != 0)
			return (0);
	}
	return (1);
}

/* The gang's size (workload_gang_size); 0 while unknown. */
static int
group_min(struct reconcile *r, struct group *g)
{
	struct workload_lookup lk;

	caches_lookup_init(r, &lk);
	return (workload_gang_size(g->ns, g->name, g->min_member, g->sized_by,
	    &lk));
}

/*
 * The submit thread's answer.  A job made for pods that changed meanwhile
 * (one was deleted, or left the gang) is cancelled, and the group decides
 * afresh.  1 when the job now waits on Slurm (poll soon), else 0.
 */
int
group_submitted(struct reconcile *r, struct sreq *s)
{
	struct group	 *g = map_get(r->groups, s->gkey);
	struct pod_entry *e;
	char		  msg[640], err[256];
	size_t		  i, n = json_array_size(s->pods);

	if (s->update_jobid != 0) {
		group_updated(r, s);
		return (0);
	}
	r->submits--;
	/* A poll saw this job before its answer: load everything again. */
	if (s->rc == 0 && json_object_size(r->deferred) > 0) {
		snprintf(err, sizeof(err), "%u", s->jobid);
		if (json_object_get(r->deferred, err) != NULL) {
			json_object_del(r->deferred, err);
			r->slurm_since = 0;
		}
	}
	if (r->submits == 0 && json_object_size(r->deferred) > 0) {
		json_object_clear(r->deferred);
		r->slurm_since = 0;
	}
	if (g != NULL && (g->state != G_SUBMITTING || g->submit_seq != s->seq))
		g = NULL;
	if (g != NULL) {
		g->inflight = NULL;
		group_set_state(r, g, G_WAITING);
	}
	if (g == NULL || !group_request_current(r, g, s)) {
		if (s->rc == 0 &&
		    sctl_cancel(s->jobid, err, sizeof(err)) == -1) {
			log_warnx(
			    "slurm job %u: made for pods that changed "
			    "meanwhile; cancel: %s; retried after the next "
			    "poll",
			    s->jobid, err);
			json_array_append_new(r->orphans,
			    json_integer(s->jobid));
		} else if (s->rc == 0)
			log_info("slurm job %u: cancelled: made for pods that "
				 "changed meanwhile",
			    s->jobid);
		/* Withdrawn (not made): the group decides again at once. */
		if (g != NULL && s->rc == -1 && !atomic_load(&s->withdrawn))
			group_retry_later(g, s->permanent);
		if (g != NULL)
			group_evaluate(r, g);
		return (0);
	}
	if (s->rc == -1) {
		group_retry_later(g, s->permanent);
		log_warnx("group %s: submit: %s; retrying in %lds", g->key,
		    s->err, g->retry_ms / 1000);
		if (s->permanent == SUBMIT_REFUSED_HERE)
			snprintf(msg, sizeof(msg), "slurm-bridge: %s", s->err);
		else if (g->sized_by == WORKLOAD_SCHED_PODGROUP)
			snprintf(msg, sizeof(msg),
			    "slurm-bridge: Slurm refused the job for the %d "
			    "pods of PodGroup %.63s "
			    "(spec.schedulingPolicy.gang.minCount): %.400s",
			    group_min(r, g), g->name, s->err);
		else
			snprintf(msg, sizeof(msg),
			    "slurm-bridge: Slurm refused the "
			    "job: %.500s",
			    s->err);
		group_condition(r, g, msg, 1);
		return (0);
	}
	g->jobid = s->jobid;
	g->cancelled = 0;
	g->failed = 0;
	g->retry_ms = 0;
	g->cpus_per_task = s->js.cpus_per_task;
	g->gpus_per_task = s->js.gpus_per_task;
	g->exclusive = s->js.exclusive;
	group_job_pods(g, s->pods, s->js.admin_comment);
	group_index_put(r, g->jobid, g->key);
	group_set_state(r, g, G_PENDING);
	log_info("group %s: submitted slurm job %u for %zu pod%s%s", g->key,
	    g->jobid, n, n == 1 ? "" : "s",
	    s->layout != NULL ? ", allocated" : "");
	if (s->layout != NULL) {
		/* The Scheduled Event names the job: one Event per pod. */
		group_allocated(r, g, s->layout);
		return (0);
	}
	snprintf(msg, sizeof(msg),
	    "submitted Slurm job %u%s; it waits for "
	    "its allocation",
	    g->jobid, g->gang ? " for the gang" : "");
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, g->job_pods.v[i]);
		if (e != NULL)
			writer_event(r, e, "Normal", "SlurmJobSubmitted",
			    "Submit", msg);
	}
	group_want(r->writes, g->key);
	/* It waits on Slurm: poll soon, not at the idle interval. */
	return (1);
}

/* Says on the members what the gang's size waits for. */
static void
group_unsized(struct reconcile *r, struct group *g)
{
	json_t *pg;
	char	msg[512];
	int	warn = 0;

	if (g->sized_by != WORKLOAD_SCHED_PODGROUP)
		snprintf(msg, sizeof(msg),
		    "waiting for PodGroup or JobSet "
		    "%s/%s, or the " ANN_MIN_MEMBER " annotation, to give the "
		    "gang's size",
		    g->ns, g->name);
	else if ((pg = caches_get(r, WORKLOAD_SCHED_PODGROUP, g->ns,
		      g->name)) == NULL)
		snprintf(msg, sizeof(msg),
		    "waiting for PodGroup %s/%s (spec.schedulingGroup."
		    "podGroupName) to exist",
		    g->ns, g->name);
	else {
		snprintf(msg, sizeof(msg),
		    "PodGroup %s/%s: spec.schedulingPolicy.gang.minCount must "
		    "be a whole number from 1 to %d",
		    g->ns, g->name, WORKLOAD_MAX_GANG);
		warn = 1;
		json_decref(pg);
	}
	group_condition(r, g, msg, warn);
}

/*
 * Does g's job hold a shared claim's devices for a live pod of another
 * group?  Then it lives on (its pods ended).  Only a job whose pods name a
 * claim can: no walk of the claims for the others.
 */
static int
group_claims_held(struct reconcile *r, struct group *g)
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
group_end_joiner(void *arg, struct pod_entry *e, const json_t *claim)
{
	struct reconcile *r = ((void **)arg)[0];
	struct group	 *g = ((void **)arg)[1];
	char		  msg[512];

	if (e->rec->delete_at != 0)
		return;
	snprintf(msg, sizeof(msg),
	    "%s (it held the devices of ResourceClaim %.63s this pod "
	    "shares)",
	    g->disruption != NULL ? g->disruption : g->end_msg,
	    k8s_obj_name(claim));
	if (g->disruption != NULL)
		writer_preempt(r, e, msg, g->grace_end);
	else
		writer_delete(r, e, msg);
}

/*
 * Deletes the live members of a group whose job Slurm ended, with an Event
 * carrying Slurm's state and reason.  A failed delete is retried from the
 * sweep (group_evaluate) until the pod is deleting or gone.
 */
void
group_end_members(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state == PS_ENDED || e->rec->delete_at != 0)
			continue;
		if (g->disruption != NULL)
			writer_preempt(r, e, g->disruption, g->grace_end);
		else
			writer_delete(r, e, g->end_msg);
	}
	/* ... and the pods of other jobs that share its claims' devices. */
	if ((g->disruption != NULL || g->end_msg != NULL) &&
	    (g->claims_held || g->allocated_claims || claims_named(r, g))) {
		void *arg[2] = { r, g };

		(void)claims_joiners(r, g->jobid, g->key, group_end_joiner,
		    arg);
	}
}

void
group_yield(struct reconcile *r, struct group *g, enum stats_yield cause,
    time_t grace_end)
{
	static const char *const why[YIELD_KINDS] = {
		[YIELD_PREEMPTED] = "preempted",
		[YIELD_SUSPENDED] = "suspended (a pod cannot be; it yields as "
				    "if preempted)",
		[YIELD_REQUEUED] = "requeued",
	};
	char msg[512];

	if (g->disruption != NULL || g->jobid == 0)
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
	g->disruption = xstrdup(msg);
	g->grace_end = grace_end;
	g->slurm_ends = cause == YIELD_PREEMPTED;
	free(g->end_msg);
	g->end_msg = xstrdup(msg);
	atomic_fetch_add(&bstats.disruptions[cause], 1);
	writer_podgroup_disrupted(r, g, msg);
	group_end_members(r, g);
	/* Slurm ends a preempted job itself (sacct: PREEMPTED). */
	if (g->slurm_ends)
		g->cancelled = 1;
}

void
group_job_pods(struct group *g, const json_t *pods, const char *admin_comment)
{
	strv_from_json(&g->job_pods, pods);
	g->job_pods_set = 1;
	json_decref(g->het);
	g->het = translate_admin_het(admin_comment, json_array_size(pods));
}

/* Forgets the group's job so it can be submitted again. */
void
group_reset(struct reconcile *r, struct group *g)
{
	if (g->jobid != 0)
		group_index_del(r, g);
	g->jobid = 0;
	g->cancelled = 0;
	g->failed = 0;
	group_set_state(r, g, G_WAITING);
	strv_clear(&g->job_pods);
	g->job_pods_set = 0;
	json_decref(g->layout);
	g->layout = NULL;
	json_decref(g->het);
	g->het = NULL;
	g->cpus_per_task = g->gpus_per_task = 0;
	free(g->end_msg);
	g->end_msg = NULL;
	free(g->disruption);
	g->disruption = NULL;
	g->grace_end = 0;
	g->slurm_ends = 0;
	free(g->spec);
	g->spec = NULL;
	g->recheck = 0;
	g->updating = 0;
	g->hinted = 0;
	g->claims_held = 0;
	g->allocated_claims = 0;
}

/* Is pkey one of the pods the group's job was made for? */
static int
group_in_job(struct group *g, const char *pkey)
{
	return (strv_find(&g->job_pods, pkey) != -1);
}

/*
 * A member that arrives after its gang's job was allocated (a controller's
 * replacement for a member that ended) takes the slot of an ended or
 * vanished member: the allocation still holds it.  A member recreated
 * under the same name has its slot already.  Returns how many members now
 * need binding; one that finds no slot is told why.
 */
static size_t
group_refill(struct reconcile *r, struct group *g)
{
	struct pod_entry *e, *old;
	size_t		  i, j, filled = 0;
	char		  msg[256];
	int		  found;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		/* Recreated under the same name: its slot is waiting. */
		if (group_in_job(g, e->key)) {
			filled++;
			continue;
		}
		found = 0;
		for (j = 0; j < g->job_pods.n; j++) {
			old = map_get(r->pods, g->job_pods.v[j]);
			if (old != NULL && old->state != PS_ENDED)
				continue;
			log_info("pod %s: takes the slot of %s in slurm job %u",
			    e->key, g->job_pods.v[j], g->jobid);
			strv_set(&g->job_pods, j, e->key);
			filled++;
			found = 1;
			break;
		}
		if (!found) {
			snprintf(msg, sizeof(msg),
			    "gang %s: Slurm job %u has "
			    "no free slot for this pod; it waits until the "
			    "gang's job ends",
			    g->name, g->jobid);
			writer_condition(r, e, msg, 0);
		}
	}
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

	if (!r->recovered)
		return;
	/*
	 * Slurm took the allocation back (suspended, requeued): a failed
	 * delete is asked again, and once no member it bound still runs, the
	 * job is cancelled (a controller's replacement pods get a new one).
	 */
	if (g->jobid != 0 && g->disruption != NULL && !g->cancelled) {
		group_end_members(r, g);
		if (group_live(r, g, NULL, 0, 0) !=
		    group_live(r, g, NULL, 0, 1))
			return;
		group_cancel(r, g, "Slurm took its allocation back");
	}
	/*
	 * A job that is over (ended, or cancelled by us) serves no new pod:
	 * once its bound members are gone, the group starts afresh, so a
	 * controller's new pods get a new job rather than a dead slot.
	 */
	if (g->jobid != 0 && (g->cancelled || g->state == G_ENDED)) {
		if (g->end_msg != NULL)
			group_end_members(r, g);
		if (group_live(r, g, NULL, 0, 0) !=
		    group_live(r, g, NULL, 0, 1))
			return;
		group_reset(r, g);
	}
	if ((g->state == G_ALLOCATED || g->state == G_BOUND) &&
	    group_refill(r, g) > 0)
		group_set_state(r, g, G_ALLOCATED);
	if (g->state == G_PENDING && g->recheck)
		group_update_pending(r, g);
	if (g->state == G_ALLOCATED || g->state == G_PENDING) {
		group_want(r->writes, g->key);
		return;
	}
	if (g->state != G_WAITING || g->next_try > reconcile_now_ms())
		return;
	n = group_live(r, g, pods, WORKLOAD_MAX_GANG, 1);
	if (n == 0)
		return;
	if (n > WORKLOAD_MAX_GANG) {
		snprintf(msg, sizeof(msg),
		    "gang %s has %zu pods; at most %d "
		    "are supported",
		    g->name, n, WORKLOAD_MAX_GANG);
		group_condition(r, g, msg, 1);
		return;
	}
	for (i = 0; i < n; i++)
		if (pods[i]->rec->gated)
			return;
	/*
	 * Another scheduler's pods are placed when its extender asks
	 * (reconcile_ext), never on the strength of a label they carry.
	 */
	if (g->foreign && !g->ext_asked)
		return;
	if (!group_ns_enabled(r, g->ns)) {
		snprintf(msg, sizeof(msg),
		    "namespace %s is not enabled for "
		    "slurm-bridge; enable it with: kubectl label namespace %s " BRIDGE_NS_LABEL
		    "=" BRIDGE_NS_LABEL_VALUE,
		    g->ns, g->ns);
		group_condition(r, g, msg, 1);
		return;
	}
	if ((min = group_min(r, g)) == 0) {
		group_unsized(r, g);
		return;
	}
	if ((int)n < min) {
		snprintf(msg, sizeof(msg),
		    "waiting for gang %s: %zu of %d "
		    "pods present",
		    g->name, n, min);
		group_condition(r, g, msg, 0);
		return;
	}
	group_submit(r, g, pods, n);
}

void
group_add(struct group *g, const char *pkey)
{
	if (strv_find(&g->members, pkey) == -1)
		strv_add(&g->members, pkey);
}

void
group_remove(struct group *g, const char *pkey)
{
	long i;

	if ((i = strv_find(&g->members, pkey)) != -1)
		strv_remove(&g->members, (size_t)i);
}

/*
 * The namespace index: ns -> its groups, so a change to a namespace or to
 * an owner object in it re-evaluates only those.
 */
static void
group_ns_index(struct reconcile *r, struct group *g, int add)
{
	struct map *m = map_get(r->ns_groups, g->ns);

	if (add) {
		if (m == NULL) {
			m = map_new_borrowed(NULL);
			map_put(r->ns_groups, g->ns, m);
		}
		map_put(m, g->key, g);
	} else if (m != NULL) {
		map_take(m, g->key);
		if (map_count(m) == 0)
			map_del(r->ns_groups, g->ns);
	}
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

void
group_set_state(struct reconcile *r, struct group *g, enum group_state s)
{
	r->nstate[g->state]--;
	r->nstate[s]++;
	g->state = s;
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
	if (g->cancelled || g->end_msg != NULL || g->claims_held)
		return (0);
	/* A cancel failed (slurmctld away): the sweep tries again. */
	if (g->cancel_due)
		return (0);
	switch (g->state) {
	case G_SUBMITTING:
		return (1);
	case G_PENDING:
		return (g->next_try > now || !group_labelled(r, g));
	case G_BOUND:
		return (g->jobid != 0 && group_live(r, g, NULL, 0, 1) == 0);
	case G_WAITING:
		return (g->next_try > now);
	default:
		return (0);
	}
}

/* Frees a group with no members and no live job. */
static void
group_gc(struct reconcile *r, struct group *g)
{
	if (g->members.n > 0 || (g->jobid != 0 && !g->cancelled))
		return;
	if (g->jobid != 0)
		group_index_del(r, g);
	claims_forget(r, g);
	r->nstate[g->state]--;
	group_ns_index(r, g, 0);
	map_del(r->groups, g->key);
}

/*
 * A member ended or left.  A pending gang that lost a member gives its job
 * up (the gang is resubmitted once complete again); an allocated group's
 * job is cancelled once no member runs any more; finalizers are released
 * once the job is gone.
 */
void
group_member_gone(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  n, i;

	n = group_live(r, g, NULL, 0, 0);
	if (g->state == G_SUBMITTING)
		group_withdraw(g);
	if (g->jobid != 0 && !g->cancelled) {
		if (g->state == G_PENDING && n < g->job_pods.n) {
			group_cancel(r, g,
			    "the gang lost a member while "
			    "pending");
			/* Clear the stale job id so a restart cannot adopt it. */
			for (i = 0; i < g->members.n; i++) {
				e = map_get(r->pods, g->members.v[i]);
				if (e != NULL && e->state == PS_UNBOUND &&
				    e->label_jobid == g->jobid && e->busy == 0)
					writer_unlabel(r, e);
			}
			/* Only a job Slurm took back may be forgotten. */
			if (g->cancelled)
				group_reset(r, g);
		} else if (n == 0 && !group_claims_held(r, g))
			group_finish(r, g);
	}
	/*
	 * The finalizer guards the job's cleanup: once the job is gone, or
	 * while other members still run (the last one to end holds it), an
	 * ended member may go.
	 */
	if (g->jobid == 0 || g->cancelled || n > 0) {
		for (i = 0; i < g->members.n; i++) {
			e = map_get(r->pods, g->members.v[i]);
			if (e == NULL || e->state != PS_ENDED)
				continue;
			if (e->finalizer)
				group_want(r->releases, e->key);
			else
				writer_force_delete(r, e);
		}
	}
	group_gc(r, g);
}

struct group *
group_get(struct reconcile *r, const struct group_id *gid, const char *ns)
{
	struct group *g;

	if ((g = map_get(r->groups, gid->key)) != NULL)
		return (g);
	g = xcalloc(1, sizeof(*g));
	g->key = xstrdup(gid->key);
	g->ns = intern_get(ns);
	g->name = strchr(g->key, '/') != NULL ? strchr(g->key, '/') + 1 :
						g->key;
	g->gang = gid->gang;
	g->min_member = gid->min_member;
	g->sized_by = gid->sized_by;
	map_put(r->groups, g->key, g);
	r->nstate[G_WAITING]++;
	group_ns_index(r, g, 1);
	return (g);
}

/* Fills the per-task sizes of an adopted job from its members. */
void
group_adopt_sizes(struct reconcile *r, struct group *g)
{
	struct pod_entry *pods[WORKLOAD_MAX_GANG];
	struct jobspec	  js;
	char		  err[256];
	size_t		  n;
	int		  rc;

	if (g->cpus_per_task != 0)
		return;
	n = group_live(r, g, pods, WORKLOAD_MAX_GANG, 0);
	if (n == 0 || n > WORKLOAD_MAX_GANG)
		return;
	rc = group_translate(r, g, pods, n, &js, err, sizeof(err));
	if (rc != 0)
		return;
	g->cpus_per_task = js.cpus_per_task;
	g->gpus_per_task = js.gpus_per_task;
	g->exclusive = js.exclusive;
	jobspec_cleanup(&js);
}

/*
 * Fails every live member of a group whose node was lost, and ends its
 * job: a gang is all or nothing.
 */
void
group_fail(struct reconcile *r, struct group *g, const char *reason,
    const char *msg)
{
	struct pod_entry *e;
	json_t		 *v, *keys;
	size_t		  i;

	g->failed = 1; /* its Failed pods are ours: the job is cancelled */
	group_cancel(r, g, msg);
	keys = json_array();
	for (i = 0; i < g->members.n; i++)
		json_array_append_new(keys, json_string(g->members.v[i]));
	json_array_foreach (keys, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state == PS_ENDED)
			continue;
		writer_fail(r, e, reason, msg);
		e->state = PS_ENDED;
	}
	json_decref(keys);
	group_member_gone(r, g);
}
