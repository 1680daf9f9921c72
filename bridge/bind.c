/*
 * How a group's pods are placed and bound, on the reconcile thread: once
 * Slurm allocated the job (bind_allocated), each pod gets its Slurm node
 * and GRES share (placement.c), its claims' writes (claims.c) and one
 * Binding, handed to the writepool by bind_flush_writes; the results come
 * back through bind_write_done.  A labelled group (--jobid-label, or
 * another scheduler's pods) writes the job id label and our finalizer
 * first.  A gang that requires one topology domain takes the nodes of
 * each slice's domain together, and an allocation that splits a domain
 * is given back (bind_topology_holds).  All bound: G_BOUND.
 *
 * Threads: reconcile.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "topology.h"
#include "bridge.h"

/* Does the pod carry the job id, our finalizer and (if set) the node? */
static int
bind_meta_done(struct pod_entry *e, uint32_t jobid, const char *node)
{
	const char *have;

	if (e->label_jobid != jobid || !e->finalizer)
		return (0);
	if (node == NULL)
		return (1);
	have = e->slurm_node;
	return (have != NULL && strcmp(have, node) == 0);
}

/* A finalizer release came back. */
static void
bind_released(struct reconcile *r, struct pod_entry *e, struct wreq *w)
{
	if (w->rc == 0 || w->err.status == 404) {
		e->finalizer = 0;
		log_debug("pod %s: finalizer removed", e->rec->key);
		writes_force_delete(r, e);
	} else
		log_warnx("pod %s: remove finalizer: %ld %s: %s", e->rec->key,
		    w->err.status, w->err.reason, w->err.text);
}

/* A member's Binding landed. */
static void
bind_bound(struct reconcile *r, struct pod_entry *e, const struct wreq *w)
{
	char msg[384];

	if (e->state == PS_ENDED) {
		/* Failed or deleted while its Binding was on its way. */
		log_info("pod %s: bound to node %s after it ended", e->rec->key,
		    w->node);
		return;
	}
	e->state = PS_BOUND;
	intern_put(e->bound_node);
	e->bound_node = intern_get(w->node);
	atomic_fetch_add(&bstats.pods_bound, 1);
	metrics_hist_observe(&bstats.sched_latency, podentry_age(e));
	log_info("pod %s: bound to node %s (slurm job %u)", e->rec->key,
	    w->node, w->jobid);
	snprintf(msg, sizeof(msg),
	    "bound to %.100s: Slurm allocated node "
	    "%.100s to job %u%s%.100s",
	    w->node, w->slurm_node, w->jobid, w->gres != NULL ? ", GRES " : "",
	    w->gres != NULL ? w->gres : "");
	writes_event(r, e, "Normal", "Scheduled", "Binding", msg);
}

/* The job id label on the members of a pending job (labelled groups). */
static void
bind_plan_pending(struct reconcile *r, struct group *g)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < groups_job_list(g)->n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e == NULL || e->state == PS_ENDED || e->busy != 0 ||
		    bind_meta_done(e, g->jobid, NULL))
			continue;
		writes_label(r, e, g->key, g->jobid, NULL);
	}
}

/* The job's n pods onto its layout: by component for a heterogeneous job. */
static int
bind_place(const struct group *g, size_t n, struct assignment *a, char *err,
    size_t errlen)
{
	if (g->job->het != NULL)
		return (placement_assign_het(g->job->layout, g->job->het, n, a,
		    err, errlen));
	return (placement_assign(g->job->layout, n, (int)g->cpus_per_task,
	    g->exclusive ? 1 : 0, (int)g->gpus_per_task, a, err, errlen));
}

/* Does group g's job still serve its claims (allocated, not ending)? */
static int
bind_serves_claims(const struct group *g)
{
	return (g != NULL && !g->cancelled && g->job->disruption == NULL &&
	    g->job->end_msg == NULL &&
	    (g->state == G_SUBMITTING || g->state == G_PENDING ||
		g->state == G_ALLOCATED || g->state == G_BOUND));
}

/*
 * A claim this bridge allocated for job jobid and reserved for one pod
 * that is still not bound, while no group has that job any more (a
 * give-back whose release did not land): nobody else would release it
 * (kube-controller-manager keeps a pending pod's reservation), so the
 * bridge does.
 */
static void
bind_claim_orphan(struct reconcile *r, const json_t *claim, uint32_t jobid)
{
	const json_t	 *rf = k8s_obj_get(claim, "status.reservedFor");
	const json_t	 *memo;
	struct pod_entry *e;
	json_t		 *rel;
	char		  key[512];

	/*
	 * Only a claim this bridge allocated itself, and noted: the holder
	 * annotations could name another install's job.
	 */
	snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(claim),
	    k8s_obj_name(claim));
	memo = json_object_get(r->claim_holders, key);
	if (memo == NULL || k8s_obj_uid(claim) == NULL ||
	    k8s_obj_str(memo, "uid") == NULL ||
	    strcmp(k8s_obj_str(memo, "uid"), k8s_obj_uid(claim)) != 0 ||
	    json_integer_value(json_object_get(memo, "job")) != jobid)
		return;
	if (json_array_size(rf) != 1 ||
	    k8s_obj_str(json_array_get(rf, 0), "name") == NULL)
		return;
	snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(claim),
	    k8s_obj_str(json_array_get(rf, 0), "name"));
	e = map_get(r->pods, key);
	if (e == NULL || e->state != PS_UNBOUND || e->busy != 0 ||
	    (rel = claims_release(r, e, jobid)) == NULL)
		return;
	log_info("pod %s: releasing its claims of slurm job %u, which is "
		 "gone",
	    e->rec->key, jobid);
	writes_claims(r, e, e->group, jobid, rel);
}

/*
 * dra_busy_fn (dra.h) for a struct claims_asker: a pod waits for a free
 * claim while another group's job, about to run, will allocate it, and for
 * a shared one while the job holding its devices is ending.
 */
static int
bind_claim_busy(void *arg, const json_t *claim, char *why, size_t whylen)
{
	const struct claims_asker *ask = arg;
	struct reconcile	  *r = ask->r;
	struct group		  *g;
	const char		  *owner, *snode;
	char			   key[512];
	uint32_t		   jobid, held;

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
		if (!bind_serves_claims(g)) {
			json_object_del(r->claim_allocators, key);
			return (0);
		}
		snprintf(why, whylen,
		    "the Slurm job of %.100s will allocate it; this pod "
		    "shares it once that job runs",
		    workload_key_name(g->key));
		return (1);
	}
	json_object_del(r->claim_allocators, key);
	if (dra_claim_holder(claim, &jobid, &snode) == -1)
		return (0); /* not ours: dra.c says so */
	/* Its annotations name a job this bridge cannot vouch for. */
	if (claims_holder(r, claim, &held, &snode) == -1 || held != jobid) {
		snprintf(why, whylen,
		    "its annotation %s names Slurm job %u, which does not "
		    "hold its devices for namespace %.63s; this pod waits "
		    "until the claim is free",
		    ANN_SLURM_JOBID, jobid, k8s_obj_namespace(claim));
		return (1);
	}
	g = groups_by_job(r, jobid);
	if (g == NULL)
		bind_claim_orphan(r, claim, jobid);
	if (!bind_serves_claims(g) ||
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
void
bind_claims_lookup(struct reconcile *r, const struct group *g,
    struct claims_asker *ask, struct dra_lookup *dl)
{
	ask->r = r;
	ask->gkey = g->key;
	lookups_claims_init(ask, dl);
	dl->busy = bind_claim_busy;
}

/*
 * The node label whose one value must hold the gang (or each slice of
 * *slice pods; 0: the whole gang), from its first live member's required
 * topology request (topology_request): a new string, or NULL.
 */
static char *
bind_topology(struct reconcile *r, struct group *g, uint32_t *slice)
{
	struct pod_entry      *first;
	struct workload_lookup lk;
	struct topology_req    req;
	json_t		      *pod, *layers[WORKLOAD_LAYERS];
	size_t		       nl, n;
	char		      *key = NULL, err[256];

	*slice = 0;
	n = groups_live(r, g, &first, 1, 0);
	if (n == 0)
		return (NULL);
	pod = podrec_json(first->rec);
	lookups_workload_init(r, &lk);
	nl = workload_layers(pod, &lk, layers);
	if (topology_request(pod, layers, nl, &req, err, sizeof(err)) == 0 &&
	    req.key != NULL && req.required) {
		key = xstrdup(req.key);
		*slice = req.slice;
	}
	workload_layers_free(layers, nl);
	json_decref(pod);
	return (key);
}

/* The label key of the Kubernetes node behind Slurm node snode, or NULL. */
static const char *
bind_node_label(struct reconcile *r, const char *snode, const char *key)
{
	const char   *kname = nodes_k8s_name(r, snode);
	const json_t *node = kname != NULL ? map_get(r->nodes, kname) : NULL;

	return (node != NULL ? k8s_obj_label(node, key) : NULL);
}

/*
 * A gang in slices: members take the nodes of one value of key one after
 * the other (Slurm lists a job's nodes by name, not by segment), so that
 * consecutive members, a slice, share a domain.  Within a value Slurm's
 * order is kept, so the same allocation is always placed the same way.
 */
static void
bind_topology_order(struct reconcile *r, const char *key, struct assignment *a,
    size_t n)
{
	struct assignment *out = xcalloc(n, sizeof(*out));
	const char	 **val;
	char		  *done = xcalloc(n, 1);
	size_t		   i, j, k = 0;

	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	val = xcalloc(n, sizeof(*val));
	for (i = 0; i < n; i++)
		val[i] = bind_node_label(r, a[i].node, key);
	for (i = 0; i < n; i++)
		for (j = i; j < n && k < n; j++)
			if (!done[j] &&
			    (val[j] == val[i] ||
				(val[j] != NULL && val[i] != NULL &&
				    strcmp(val[j], val[i]) == 0))) {
				out[k++] = a[j];
				done[j] = 1;
			}
	memcpy(a, out, n * sizeof(*a));
	free(val);
	free(done);
	free(out);
}

/*
 * After an allocation given back for splitting a domain: the next submit
 * waits 2 s, then twice as long each time in a row, up to 5 minutes.
 */
static void
bind_refit_later(struct group *g)
{
	uint32_t n = ++groupjob_get(g)->topo_refits;

	g->retry_ms = n > 8 ? 300000 : 1000u << n;
	if (g->retry_ms > 300000)
		g->retry_ms = 300000;
	g->next_try = now_ms() + g->retry_ms;
}

/*
 * Does the allocation keep a gang that requires one value of key within
 * one, each slice of slice members (0: the whole gang) within one?  1, or
 * 0 with why.
 */
static int
bind_topology_holds(struct reconcile *r, const char *key, uint32_t slice,
    const struct assignment *a, size_t n, char *why, size_t len)
{
	const json_t **nodes;
	const char    *kname;
	size_t	       i;
	int	       ok = 1;

	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	nodes = xcalloc(n, sizeof(*nodes));
	for (i = 0; i < n && ok; i++)
		if ((kname = nodes_k8s_name(r, a[i].node)) == NULL ||
		    (nodes[i] = map_get(r->nodes, kname)) == NULL) {
			snprintf(why, len, "node %.63s is not known",
			    a[i].node);
			ok = 0;
		}
	if (ok)
		ok = topology_holds(key, slice < n ? slice : 0, nodes, n, why,
		    len);
	free(nodes);
	return (ok);
}

/*
 * A member's devices failed their binding conditions, or waited past the
 * timeout (why): while none of the gang is bound, each member's claims
 * the job allocated are deallocated and the job cancelled, so Slurm
 * places the gang anew; the next try backs off as after a split domain.
 */
static void
bind_give_back(struct reconcile *r, struct group *g, const char *why)
{
	struct pod_entry *e;
	json_t		 *rel;
	char		  msg[768];
	size_t		  i, live = groups_live(r, g, NULL, 0, 0);

	if (live != groups_live(r, g, NULL, 0, 1)) {
		snprintf(msg, sizeof(msg),
		    "Slurm job %u: not bound: %.400s; members of the gang run "
		    "already, so it is not given back",
		    g->jobid, why);
		groups_condition(r, g, msg, 1);
		groups_retry_later(g, 0);
		return;
	}
	snprintf(msg, sizeof(msg),
	    "Slurm job %u: not bound: %.400s; the devices' allocation and "
	    "the job are given back and the pod placed anew",
	    g->jobid, why);
	log_warnx("group %s: %s", g->key, msg);
	groups_condition(r, g, msg, 1);
	for (i = 0; i < groups_job_list(g)->n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e == NULL || e->state != PS_UNBOUND || e->busy != 0 ||
		    (rel = claims_release(r, e, g->jobid)) == NULL)
			continue;
		writes_claims(r, e, g->key, g->jobid, rel);
	}
	atomic_fetch_add(&bstats.refits, 1);
	end_cancel(r, g, "its devices did not meet their binding conditions");
	bind_refit_later(g);
}

/*
 * One round of planning an allocated group's Bindings: its members'
 * assignment (job list order) and what the steps found.
 */
struct bind_round {
	struct reconcile   *r;
	struct group	   *g;
	size_t		    n;	   /* the job's pods */
	struct assignment  *a;	   /* n, each member's node and shares */
	char		   *topo;  /* a gang's required topology, or NULL */
	uint32_t	    slice; /* ... its slice size */
	char		   *group_gres; /* what a one-node gang's tasks leave */
	struct claims_asker ask;
	struct dra_lookup   dl;
	json_t		   *claimed; /* devices planned this round */
	struct {
		json_t *claims; /* the member's planned claim writes */
		int	ok;	/* planned, and may be written to */
	} * plans;
	int  hold; /* a member's devices wait: no Binding this round */
	char holdmsg[512];
	int  unplanned; /* a member's claims could not be planned */
};

/*
 * The members' nodes, from the job's layout: in a gang with a required
 * topology, in the order its slices take; a one-node gang's PodGroup gets
 * what its tasks' shares leave.  -1 when the layout does not place them.
 */
static int
bind_assign(struct bind_round *b)
{
	struct group *g = b->g;
	char	      errs[256];
	size_t	      i;

	b->a = xcalloc(b->n ? b->n : 1, sizeof(*b->a));
	if (bind_place(g, b->n, b->a, errs, sizeof(errs)) == -1) {
		log_warnx("group %s: slurm job %u: %s", g->key, g->jobid, errs);
		return (-1);
	}
	if (g->gang && (b->topo = bind_topology(b->r, g, &b->slice)) != NULL &&
	    b->slice != 0 && b->slice < b->n)
		bind_topology_order(b->r, b->topo, b->a, b->n);
	if (g->gang && json_array_size(g->job->layout) == 1 &&
	    (b->group_gres = placement_gres_rest(
		 json_string_value(
		     json_object_get(json_array_get(g->job->layout, 0),
			 "gres")),
		 (int)g->gpus_per_task, (int)b->n)) != NULL)
		for (i = 0; i < b->n; i++)
			b->a[i].group_gres = b->group_gres;
	return (0);
}

/*
 * Each unbound member's node has a Kubernetes node (else the member says
 * why, and *failed is set); in a labelled group, the members not yet
 * labelled are labelled first (*meta counts them).  Returns how many
 * members are unbound.
 */
static size_t
bind_resolve(struct bind_round *b, int labelled, int *failed, size_t *meta)
{
	struct reconcile *r = b->r;
	struct group	 *g = b->g;
	struct pod_entry *e;
	char		  msg[512];
	size_t		  i, unbound = 0;

	for (i = 0; i < b->n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		unbound++;
		if (nodes_k8s_name(r, b->a[i].node) == NULL) {
			if (nodes_claimed(r, b->a[i].node) > 1)
				snprintf(msg, sizeof(msg),
				    "Slurm job %u was allocated node %.100s, "
				    "and %d Kubernetes nodes are labelled " LABEL_SLURM_NODENAME
				    "=%.100s: neither "
				    "stands for it until one label goes",
				    g->jobid, b->a[i].node,
				    nodes_claimed(r, b->a[i].node),
				    b->a[i].node);
			else
				snprintf(msg, sizeof(msg),
				    "Slurm job %u was allocated node %.100s, "
				    "which has no Kubernetes node (same name, "
				    "or a node labelled " LABEL_SLURM_NODENAME
				    "=%.100s)",
				    g->jobid, b->a[i].node, b->a[i].node);
			if (e->cond != map_hash(msg))
				log_warnx("pod %s: %s", e->rec->key, msg);
			writes_condition(r, e, msg, 1);
			*failed = 1;
			continue;
		}
		/* A labelled group binds nobody before all are labelled. */
		if (!labelled ||
		    (e->busy != WREQ_METADATA &&
			bind_meta_done(e, g->jobid, b->a[i].node)))
			continue;
		(*meta)++;
		if (e->busy == 0 && !e->cond_busy)
			writes_label(r, e, g->key, g->jobid, &b->a[i]);
	}
	return (unbound);
}

/* Every member is bound: the group is. */
static void
bind_all_bound(struct reconcile *r, struct group *g, size_t n)
{
	char msg[128];

	groups_set_state(r, g, G_BOUND);
	g->retry_ms = 0;
	if (g->job->topo_refits != 0)
		groupjob_get(g)->topo_refits = 0;
	snprintf(msg, sizeof(msg),
	    "Slurm job %u allocated the group; its %zu pods are bound",
	    g->jobid, n);
	writes_podgroup(r, g, 1, msg);
}

/*
 * The node can change between Slurm's decision and the Binding (a taint,
 * a label, a host port taken): a gang none of whose pods is bound yet
 * must still lie in one topology domain, and each member's node must
 * still fit it.  Else a group none of whose pods runs yet gives the
 * allocation back, to be placed anew without that node.  1 when the
 * round ends here.
 */
static int
bind_recheck(struct bind_round *b, size_t unbound)
{
	struct reconcile *r = b->r;
	struct group	 *g = b->g;
	struct pod_entry *e;
	char		  msg[512], errs[256];
	size_t		  i;
	int		  alone;

	if (b->topo != NULL && unbound == b->n && !g->allocated_claims &&
	    !bind_topology_holds(r, b->topo, b->slice, b->a, b->n, errs,
		sizeof(errs))) {
		snprintf(msg, sizeof(msg),
		    "Slurm job %u: its nodes do not keep the gang in one "
		    "topology domain (%.200s); not bound: the allocation is "
		    "given back and the gang placed anew",
		    g->jobid, errs);
		log_warnx("group %s: %s", g->key, msg);
		groups_condition(r, g, msg, 1);
		atomic_fetch_add(&bstats.refits, 1);
		end_cancel(r, g, "the allocation spans topology domains");
		bind_refit_later(g);
		return (1);
	}
	for (i = 0; i < b->n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e == NULL || e->state != PS_UNBOUND || e->busy != 0 ||
		    e->cond_busy ||
		    exclude_recheck(r, e->rec, nodes_k8s_name(r, b->a[i].node),
			errs, sizeof(errs)))
			continue;
		/* Nothing of the job runs: it can be given back. */
		alone = groups_live(r, g, NULL, 0, 0) ==
		    groups_live(r, g, NULL, 0, 1);
		snprintf(msg, sizeof(msg),
		    "Slurm job %u: node %.100s no longer fits the pod (%.160s); "
		    "not bound%s",
		    g->jobid, nodes_k8s_name(r, b->a[i].node), errs,
		    alone ? "; the allocation is given back and the pod placed "
			    "anew" :
			    "");
		log_warnx("pod %s: %s", e->rec->key, msg);
		writes_condition(r, e, msg, 1);
		if (!g->allocated_claims && alone) {
			atomic_fetch_add(&bstats.refits, 1);
			end_cancel(r, g, "an allocated node no longer fits");
		} else
			groups_retry_later(g, 0);
		return (1);
	}
	return (0);
}

/*
 * Each member's claims get the devices Slurm gave it (claims_plan), or the
 * member is not bound.  A member whose condition write is in flight is
 * planned (its devices may hold the gang) but not written to; a member's
 * claims on their way, or devices with binding conditions, hold every
 * Binding of the round.  -1 when the job was given back or given up.
 */
static int
bind_plan_claims(struct bind_round *b)
{
	struct reconcile *r = b->r;
	struct group	 *g = b->g;
	struct pod_entry *e;
	char		  msg[512], errs[256];
	size_t		  i;
	int		  rc;

	b->plans = xcalloc(b->n ? b->n : 1, sizeof(*b->plans));
	for (i = 0; i < b->n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e == NULL || e->state != PS_UNBOUND || e->busy != 0) {
			if (e != NULL && e->busy == WREQ_CLAIMS)
				b->hold = 1;
			continue;
		}
		rc = claims_plan(r, e, g->jobid,
		    nodes_k8s_name(r, b->a[i].node), &b->a[i], &b->dl,
		    b->claimed, &b->plans[i].claims, errs, sizeof(errs));
		if (rc == -3) {
			bind_give_back(r, g, errs);
			return (-1);
		}
		if (rc == 1 && !b->hold) {
			snprintf(b->holdmsg, sizeof(b->holdmsg),
			    "Slurm job %u allocated node %.100s; the Binding "
			    "waits for the devices' binding conditions "
			    "(%.200s), at most %d s",
			    g->jobid, nodes_k8s_name(r, b->a[i].node), errs,
			    r->conf->binding_timeout_s);
			b->hold = 1;
		}
		if (rc < 0) {
			snprintf(msg, sizeof(msg),
			    "Slurm job %u: not bound: %s%s", g->jobid, errs,
			    rc == -2 ? "; the job is given up and the pod "
				       "placed anew" :
				       "");
			log_warnx("pod %s: %s", e->rec->key, msg);
			writes_condition(r, e, msg, 1);
			b->unplanned = 1;
			/* Given up only while nothing of it runs. */
			if (rc == -2 && !g->allocated_claims &&
			    groups_live(r, g, NULL, 0, 0) ==
				groups_live(r, g, NULL, 0, 1)) {
				end_cancel(r, g, "its shared claim moved");
				break;
			}
			continue;
		}
		b->plans[i].ok = !e->cond_busy;
	}
	return (g->cancelled ? -1 : 0);
}

/*
 * The round's writes: each planned member's Binding with its claims'
 * writes, or, while the round holds, its claims alone (and the condition
 * saying what it waits for); the sweep and each claim's change ask again.
 */
static void
bind_write_round(struct bind_round *b)
{
	struct reconcile *r = b->r;
	struct group	 *g = b->g;
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < b->n; i++) {
		if (!b->plans[i].ok)
			continue;
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (claims_allocate(b->plans[i].claims))
			g->allocated_claims = 1;
		if (b->hold) {
			if (b->holdmsg[0] != '\0')
				writes_condition(r, e, b->holdmsg, 0);
			if (json_array_size(b->plans[i].claims) > 0)
				writes_claims(r, e, g->key, g->jobid,
				    b->plans[i].claims);
			else
				json_decref(b->plans[i].claims);
		} else
			writes_bind(r, e, g->key, g->jobid,
			    nodes_k8s_name(r, b->a[i].node), &b->a[i],
			    b->plans[i].claims);
		b->plans[i].claims = NULL;
	}
}

static void
bind_round_free(struct bind_round *b)
{
	size_t i;

	for (i = 0; b->plans != NULL && i < b->n; i++)
		json_decref(b->plans[i].claims);
	free(b->plans);
	free(b->group_gres);
	json_decref(b->claimed);
	/*
	 * a is xcalloc'd, never NULL; clang 14's analyzer ties it to a NULL
	 * return of nodes_k8s_name(r, a[0].node).
	 */
	for (i = 0; b->a != NULL && i < b->n; i++)
		/* NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
		free(b->a[i].gres);
	free(b->a);
	free(b->topo);
}

/*
 * What an allocated group's members need next, given the writes in
 * flight.  The assignment is a pure function of the job's pod list and
 * layout, so a restarted bridge picks the same nodes.  A labelled group
 * binds only once every member carries its metadata; a gang binds nobody
 * while a member's node cannot be resolved.  All bound: G_BOUND.
 */
static void
bind_plan_allocated(struct reconcile *r, struct group *g, int labelled)
{
	struct bind_round b = { .r = r, .g = g };
	size_t		  unbound, meta = 0;
	int		  failed = 0;

	b.n = groups_job_list(g)->n;
	b.claimed = json_object();
	bind_claims_lookup(r, g, &b.ask, &b.dl);
	if (bind_assign(&b) == -1) {
		groups_retry_later(g, 0);
		goto out;
	}
	unbound = bind_resolve(&b, labelled, &failed, &meta);
	if (unbound == 0) {
		bind_all_bound(r, g, b.n);
		goto out;
	}
	if (failed) {
		groups_retry_later(g, 0);
		goto out;
	}
	/* Binds follow once the metadata is on; a group given back ends. */
	if (meta > 0 || g->cancelled || bind_recheck(&b, unbound) ||
	    bind_plan_claims(&b) == -1)
		goto out;
	bind_write_round(&b);
	/* One backoff for the round, not one per member. */
	if (b.unplanned)
		groups_retry_later(g, 0);
out:
	bind_round_free(&b);
}

/*
 * Hands the writes that groups asked for to the writepool: bindings (and
 * labels, for labelled groups) of allocated groups, labels of pending
 * labelled ones, and finalizer releases.  Nothing waits for them: each
 * comes back through bind_write_done, which asks for the next step.
 */
void
bind_flush_writes(struct reconcile *r)
{
	json_t	     *keys = r->writes, *rel = r->releases, *v;
	struct group *g;
	const char   *k;
	int64_t	      now;

	if (json_object_size(keys) + json_object_size(rel) == 0)
		return;
	now = now_ms();
	r->writes = json_object();
	r->releases = json_object();
	json_object_foreach (keys, k, v) {
		if ((g = map_get(r->groups, k)) == NULL)
			continue;
		if (g->state == G_PENDING && g->next_try <= now &&
		    groups_labelled(r, g))
			bind_plan_pending(r, g);
		else if (g->state == G_ALLOCATED && g->next_try <= now &&
		    g->job->disruption == NULL)
			bind_plan_allocated(r, g, groups_labelled(r, g));
	}
	json_object_foreach (rel, k, v)
		writes_release(r, map_get(r->pods, k));
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
bind_write_done(struct reconcile *r, struct wreq *w)
{
	struct pod_entry *e = map_get(r->pods, w->pkey);
	const char	 *uid;
	struct group	 *g;

	if (w->kind == WREQ_BIND || w->kind == WREQ_CLAIMS)
		claims_joins_inflight(r, w->claims, -1);
	uid = e != NULL ? podrec_uid(e->rec) : NULL;
	if (e == NULL || strcmp(uid != NULL ? uid : "", w->uid) != 0) {
		log_debug("pod %s: gone before its write came back", w->pkey);
		return (0);
	}
	g = e->group != NULL ? map_get(r->groups, e->group) : NULL;
	if (w->kind == WREQ_STATUS) {
		writes_condition_done(r, e, w);
		if (g != NULL && g->state == G_ALLOCATED)
			groups_want(r->writes, g->key);
		return (0);
	}
	e->busy = 0;
	if (w->kind == WREQ_RELEASE) {
		bind_released(r, e, w);
		return (0);
	}
	if (w->rc == -1 && w->err.status == 404) {
		log_info("pod %s: gone from the API server", e->rec->key);
		return (1);
	}
	if (w->rc == -1) {
		log_warnx("pod %s: %s for slurm job %u: %ld %s: %s",
		    e->rec->key,
		    w->kind == WREQ_BIND       ? "bind" :
			w->kind == WREQ_CLAIMS ? "claims" :
						 "label",
		    w->jobid, w->err.status, w->err.reason, w->err.text);
		if (w->kind == WREQ_BIND) {
			intern_put(e->bound_node);
			e->bound_node = NULL;
		}
		/* One backoff for a round of writes, not one per member. */
		if (g != NULL && g->jobid == w->jobid &&
		    g->next_try <= now_ms())
			groups_retry_later(g, 0);
	} else if (w->kind == WREQ_BIND)
		bind_bound(r, e, w);
	else if (w->kind == WREQ_CLAIMS)
		log_debug("pod %s: its claims written for slurm job %u",
		    e->rec->key, w->jobid);
	else {
		writes_metadata_done(e, w->jobid, w->node);
		if (w->jobid != 0 && (g == NULL || g->jobid != w->jobid))
			writes_unlabel(r, e);
	}
	if (g == NULL)
		return (0);
	if (g->state == G_ALLOCATED || g->state == G_PENDING)
		groups_want(r->writes, g->key);
	/* An ended member whose write was in flight: its cleanup now. */
	if (e->state == PS_ENDED && e->finalizer)
		end_member_gone(r, g); /* may free g */
	return (0);
}

void
bind_allocated(struct reconcile *r, struct group *g, const json_t *layout)
{
	json_decref(g->job->layout);
	groupjob_get(g)->layout = json_deep_copy(layout);
	groups_set_state(r, g, G_ALLOCATED);
	groups_want(r->writes, g->key);
}
