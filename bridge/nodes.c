/*
 * Nodes, on the reconcile thread: a Kubernetes node behind a Slurm node is
 * bridged (tainted so only bridge pods run there); cordon drains its Slurm
 * node and uncordon resumes only such a drain; a node NotReady or
 * unreachable for longer than its pods tolerate fails their gangs; and
 * which Kubernetes node stands for a Slurm node (the index of the label
 * LABEL_SLURM_NODENAME, nodes_k8s_name); and, at recovery, whether the
 * topology table's labels agree with Slurm's topology.
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"
#include "topology.h"

json_t *
nodes_pods(struct reconcile *r, const char *name, const char *why)
{
	struct k8s_error err;
	json_t		*list = NULL, *live;
	const json_t	*pod;
	const char	*phase;
	char		 path[512];
	size_t		 i;

	snprintf(path, sizeof(path),
	    "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", name);
	if (k8s_get(r->client, path, &list, &err) == -1) {
		log_warnx("node %s: its pods, %s: %ld %s: %s", name, why,
		    err.status, err.reason, err.text);
		return (NULL);
	}
	live = json_array();
	json_array_foreach (json_object_get(list, "items"), i, pod) {
		phase = k8s_obj_str(pod, "status.phase");
		if (phase == NULL ||
		    (strcmp(phase, "Succeeded") != 0 &&
			strcmp(phase, "Failed") != 0))
			json_array_append(live, (json_t *)(uintptr_t)pod);
	}
	json_decref(list);
	return (live);
}

/*
 * Before a NoExecute taint goes on: logs each pod on the node that it
 * evicts (running, and not tolerating it), so the admin who chose
 * NoExecute sees what it cost.  Returns how many.
 */
static int
node_report_evictions(struct reconcile *r, const char *name)
{
	json_t	     *list;
	const json_t *pod;
	size_t	      i;
	int	      n = 0;

	if ((list = nodes_pods(r, name, "before the NoExecute taint")) == NULL)
		return (-1);
	json_array_foreach (list, i, pod) {
		if (translate_tolerates(pod, "NoExecute"))
			continue;
		log_warnx("node %s: the NoExecute taint " MANAGED_TAINT_KEY
			  " (managedTaintEffect) evicts pod %s/%s, which does "
			  "not tolerate it",
		    name, k8s_obj_namespace(pod), k8s_obj_name(pod));
		n++;
	}
	json_decref(list);
	return (n);
}

/*
 * Taints a Kubernetes node whose Slurm node exists with the managed-node
 * taint of the configured effect (managedTaintEffect), replacing ours of
 * the other effect, so only pods that tolerate it (bridge pods) are
 * placed there.  The node's other taints stay: the whole list, read
 * fresh, goes back with the node's resourceVersion, so a taint added
 * meanwhile is not lost (a conflict is tried again on a fresh read).  The node is
 * annotated with the install's name (ANN_TAINTED_BY): uninstall takes
 * off only what its install added.  A taint of the configured effect that
 * no install claims (an earlier uninstall's leftover, or a bridge older
 * than the annotation) is claimed; one another install claims is left.
 */
static void
node_taint(struct reconcile *r, const json_t *node, const char *sname)
{
	struct k8s_error err;
	json_t		*patch, *taints, *fresh = NULL;
	const char	*effect = r->tconf.taint_effect, *have;
	const char	*name = k8s_obj_name(node);
	char		 path[512];
	int		 tries;

	if (r->slurm_nodes == NULL ||
	    json_object_get(r->slurm_nodes, sname) == NULL)
		return;
	if (effect == NULL)
		effect = MANAGED_TAINT_EFFECT_DEFAULT;
	have = translate_node_taint_effect(node);
	if (have != NULL && strcmp(have, effect) == 0 &&
	    k8s_obj_annotation(node, ANN_TAINTED_BY) != NULL)
		return;
	if (strcmp(effect, "NoExecute") == 0)
		node_report_evictions(r, name);
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	/*
	 * The record keeps neither the resourceVersion nor each taint's
	 * timeAdded: read the node itself, and write its list back whole.
	 */
	for (tries = 0; tries < 3; tries++) {
		json_decref(fresh);
		fresh = NULL;
		if (k8s_get(r->client, path, &fresh, &err) == -1)
			break;
		taints = translate_node_taints(fresh, effect);
		patch = json_pack("{s:{s:s?, s:{s:s}}, s:{s:o}}", "metadata",
		    "resourceVersion",
		    k8s_obj_str(fresh, "metadata.resourceVersion"),
		    "annotations", ANN_TAINTED_BY, r->tconf.install, "spec",
		    "taints", taints);
		if (k8s_patch(r->client, path, K8S_PATCH_MERGE, patch, NULL,
			&err) == 0) {
			log_info("node %s: %s " MANAGED_TAINT_KEY
				 "=" MANAGED_TAINT_VALUE ":%s (slurm node %s)",
			    name,
			    have != NULL && strcmp(have, effect) == 0 ?
				"claimed the unclaimed taint" :
				"tainted",
			    effect, sname);
			json_decref(patch);
			json_decref(fresh);
			return;
		}
		json_decref(patch);
		if (err.status != 409)
			break;
	}
	log_warnx("node %s: taint: %ld %s: %s", name, err.status, err.reason,
	    err.text);
	json_decref(fresh);
}

static int
node_ready(const json_t *node)
{
	const char *st = k8s_obj_str(noderec_ready_cond(node), "status");

	return (st != NULL && strcmp(st, "True") == 0);
}

/*
 * Fails the gangs of the pods on the NotReady node knode (since: when it
 * turned, unknown: unreachable rather than NotReady) whose tolerations of
 * it have run out, and ends their jobs.  A pod that tolerates it longer
 * is left alone, as Kubernetes' taint manager leaves it.
 */
static void
node_lost(struct reconcile *r, const char *knode, time_t since, int unknown)
{
	json_t	   *gkeys = json_array(), *k;
	size_t	    it = 0, i;
	void	   *v;
	const char *node;
	char	    msg[320];
	int32_t	    tol;
	time_t	    now = time(NULL);

	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		/*
		 * Its node as the watch shows it, else the one we bound it to:
		 * a Binding that landed (or is on its way) before its watch
		 * event came puts the pod there all the same.
		 */
		node = e->rec->node != NULL ? e->rec->node : e->bound_node;
		if (!((e->state == PS_BOUND || e->busy == WREQ_BIND) &&
			e->group != NULL && node != NULL &&
			strcmp(node, knode) == 0))
			continue;
		tol = unknown ? e->rec->tol_unreachable : e->rec->tol_notready;
		if (tol < 0 || now < since + tol)
			continue;
		json_array_append_new(gkeys, json_string(e->group));
	}
	snprintf(msg, sizeof(msg),
	    "node %s is %s for longer than the pod tolerates "
	    "(its NoExecute toleration of node.kubernetes.io/%s): the pod is "
	    "failed and its Slurm job ended",
	    knode, unknown ? "unreachable" : "NotReady",
	    unknown ? "unreachable" : "not-ready");
	json_array_foreach (gkeys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g != NULL && !g->failed)
			end_fail(r, g, "NodeNotReady", msg);
	}
	json_decref(gkeys);
}

/*
 * Are so many nodes NotReady at once that the cause is more likely the
 * control plane or the network than the nodes?  As Kubernetes' node
 * lifecycle controller judges a zone: more than 2 NotReady and at least
 * unhealthyNodesThreshold of all nodes (0.55), or every node.  Then no
 * pod is failed for NotReady until fewer are; said once as it starts and
 * ends (the log, and an Event on each node NotReady then), and in
 * slurm_bridge_node_disruption.
 */
static int
nodes_disrupted(struct reconcile *r)
{
	size_t total = map_count(r->nodes),
	       down = json_object_size(r->notready);
	int	    now, was = (int)atomic_load(&bstats.node_disruption);
	const char *name;
	json_t	   *v;
	char	   *msg, *note;

	now = total > 0 && r->conf->unhealthy_nodes_threshold <= 1.0 &&
	    ((down > 2 &&
		 (double)down >=
		     r->conf->unhealthy_nodes_threshold * (double)total) ||
		down == total);
	if (now != was) {
		if (now) {
			xasprintf(&msg,
			    "%zu of %zu nodes are NotReady at once (at least "
			    "%.0f%%): no pod is failed for NotReady until "
			    "fewer are",
			    down, total,
			    r->conf->unhealthy_nodes_threshold * 100);
			log_warnx("%s", msg);
		} else {
			xasprintf(&msg,
			    "%zu of %zu nodes NotReady: pods are failed for "
			    "NotReady again, as they tolerate it",
			    down, total);
			log_info("%s", msg);
		}
		xasprintf(&note, "slurm-bridge: %s", msg);
		/* On each node that is NotReady, as kubectl describe shows. */
		json_object_foreach (r->notready, name, v)
			writes_node_event(r, name, now ? "Warning" : "Normal",
			    now ? "NodeDisruption" : "NodeDisruptionOver",
			    now ? "Hold" : "Resume", note);
		free(note);
		free(msg);
		atomic_store(&bstats.node_disruption, now);
	}
	return (now);
}

void
nodes_sweep(struct reconcile *r)
{
	json_t	   *fenced = r->fenced_nodes, *v;
	const char *name;
	void	   *tmp;

	/* Drains and resumes the fence held back: asked again, as new. */
	r->fenced_nodes = json_object();
	json_object_foreach_safe (fenced, tmp, name, v)
		if ((v = map_get(r->nodes, name)) != NULL)
			nodes_changed(r, NULL, v);
	json_decref(fenced);

	if (nodes_disrupted(r))
		return;
	json_object_foreach (r->notready, name, v)
		node_lost(r, name,
		    (time_t)json_integer_value(json_object_get(v, "since")),
		    json_is_true(json_object_get(v, "unknown")));
}

/*
 * Remembers since when a node is not Ready (its Ready condition's
 * lastTransitionTime, else now), or forgets it once Ready.
 */
static void
node_track_ready(struct reconcile *r, const json_t *node)
{
	const json_t *c = noderec_ready_cond(node);
	const char   *st = k8s_obj_str(c, "status");
	const char   *name = k8s_obj_name(node);
	const char   *ltt = k8s_obj_str(c, "lastTransitionTime");
	time_t	      since = time(NULL), t;
	int	      unknown = st == NULL || strcmp(st, "Unknown") == 0;

	if (node_ready(node)) {
		if (json_object_get(r->notready, name) != NULL)
			log_info("node %s: Ready again", name);
		json_object_del(r->notready, name);
		return;
	}
	if ((t = (time_t)k8s_time_parse(ltt)) > 0 && t <= since)
		since = t;
	if (json_object_get(r->notready, name) == NULL)
		log_info(
		    "node %s: %s since %lds ago; its pods stay for as long "
		    "as they tolerate it",
		    name, unknown ? "unreachable" : "NotReady",
		    (long)(time(NULL) - since));
	json_object_set_new(r->notready, name,
	    json_pack("{s:I, s:b}", "since", (json_int_t)since, "unknown",
		unknown));
	if (!nodes_disrupted(r))
		node_lost(r, name, since, unknown);
}

/*
 * Keeps a bridged node's Slurm side in step: cordon drains the Slurm node
 * (reason "slurm-bridge: ..."), uncordon resumes only such a drain, and a
 * node turning NotReady fails its pods.  old is NULL when the node is first
 * seen (or at recovery).
 */
void
nodes_changed(struct reconcile *r, const json_t *old, const json_t *node)
{
	const char *name = k8s_obj_name(node);
	const char *sname = k8s_obj_label(node, LABEL_SLURM_NODENAME);
	const char *known;
	char	    err[256];
	int	    resumed;

	if (name == NULL)
		return;
	if (sname == NULL)
		sname = name;
	if (!translate_node_managed(node)) {
		/* A Slurm node's twin is bridged: taint it (until it is). */
		node_taint(r, node, sname);
		return;
	}
	/* Ours, of the other effect (managedTaintEffect changed): retaint. */
	node_taint(r, node, sname);
	/* At recovery, the one node load says whose drain each node has. */
	known = r->recovering && r->slurm_nodes != NULL ?
	    json_string_value(json_object_get(r->slurm_nodes, sname)) :
	    NULL;
	if (noderec_cordoned(node) && (old == NULL || !noderec_cordoned(old))) {
		/* Drained already: keep its owner and reason. */
		if (known != NULL)
			;
		else if (leader_fenced(r->conf->leader_elect,
			     "draining a node"))
			json_object_set_new(r->fenced_nodes, name, json_true());
		else if (sctl_node_drain(sname,
			     DRAIN_REASON_PREFIX " node "
						 "cordoned in Kubernetes",
			     err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else
			log_info("node %s: cordoned: drained slurm node %s",
			    name, sname);
	} else if (!noderec_cordoned(node) &&
	    (old == NULL || noderec_cordoned(old))) {
		/* Not drained by us: nothing to resume. */
		if (r->recovering && r->slurm_nodes != NULL &&
		    (known == NULL ||
			strncmp(known, DRAIN_REASON_PREFIX,
			    strlen(DRAIN_REASON_PREFIX)) != 0))
			;
		else if (leader_fenced(r->conf->leader_elect,
			     "resuming a node"))
			json_object_set_new(r->fenced_nodes, name, json_true());
		else if (sctl_node_resume_ours(sname, DRAIN_REASON_PREFIX,
			     &resumed, err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else if (resumed)
			log_info("node %s: uncordoned: resumed slurm node %s",
			    name, sname);
	}
	node_track_ready(r, node);
}

/*
 * Each switch and block level of the topology table against Slurm's leaf
 * switches or blocks, over the Kubernetes nodes of Slurm's nodes: said once at
 * recovery, in the log (a label that disagrees shows later as allocations
 * given back before their Binding).
 */
void
nodes_check_topology(struct reconcile *r)
{
	const struct config	       *c = r->tconf.topology;
	const struct config_topo_level *lvl;
	const json_t		      **nodes;
	const char		      **snames, *sname, *what, *whats;
	json_t			       *domains, *node;
	char				err[256], msg[1024];
	size_t				i, n, it, bad;

	if (c == NULL || r->slurm_nodes == NULL)
		return;
	/* Arrays of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	nodes = xcalloc(map_count(r->nodes) + 1, sizeof(*nodes));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	snames = xcalloc(map_count(r->nodes) + 1, sizeof(*snames));
	for (i = 0; i < c->ntopology; i++) {
		lvl = &c->topology[i];
		if (lvl->kind != TOPO_SWITCH && lvl->kind != TOPO_BLOCK)
			continue;
		what = lvl->kind == TOPO_BLOCK ? "block" : "leaf switch";
		whats = lvl->kind == TOPO_BLOCK ? "blocks" : "leaf switches";
		if ((domains = sctl_topology(lvl->kind == TOPO_BLOCK,
			 lvl->slurm_name, err, sizeof(err))) == NULL) {
			log_warnx("topology: %s (level %s): %s; not checked",
			    lvl->label, what, err);
			continue;
		}
		n = 0;
		it = 0;
		while (map_next(r->nodes, &it, NULL, (void **)&node)) {
			sname = k8s_obj_label(node, LABEL_SLURM_NODENAME);
			if (sname == NULL)
				sname = k8s_obj_name(node);
			/* Its taint may not be written yet: Slurm knows it. */
			if (json_object_get(r->slurm_nodes, sname) == NULL)
				continue;
			nodes[n] = node;
			snames[n++] = sname;
		}
		bad = topology_agrees(lvl->label, what, domains, nodes, snames,
		    n, msg, sizeof(msg));
		if (bad > 0)
			log_warnx("topology: label %s disagrees with Slurm's "
				  "%s%s%s in %zu place%s: %s",
			    lvl->label, whats,
			    lvl->slurm_name != NULL ? " of topology " : "",
			    lvl->slurm_name != NULL ? lvl->slurm_name : "", bad,
			    bad == 1 ? "" : "s", msg);
		else
			log_info("topology: label %s agrees with Slurm's %s "
				 "over %zu nodes",
			    lvl->label, whats, n);
		json_decref(domains);
	}
	free(nodes);
	free(snames);
}

void
nodes_sync_all(struct reconcile *r)
{
	size_t it = 0;
	void  *v;

	r->recovering = 1;
	while (map_next(r->nodes, &it, NULL, &v))
		nodes_changed(r, NULL, v);
	r->recovering = 0;
}

/*
 * Drops the index entry sname -> name; another node that carries the same
 * label (a second node named for one Slurm node) takes its place.
 */
static void
nodes_index_drop(struct reconcile *r, const char *sname, const char *name)
{
	const char *have = map_get(r->node_index, sname);
	const char *k, *l;
	size_t	    it = 0;
	void	   *v;

	if (have == NULL || strcmp(have, name) != 0)
		return;
	map_del(r->node_index, sname);
	while (map_next(r->nodes, &it, &k, &v)) {
		l = k8s_obj_label(v, LABEL_SLURM_NODENAME);
		if (strcmp(k, name) != 0 && l != NULL &&
		    strcmp(l, sname) == 0) {
			map_put(r->node_index, sname, xstrdup(k));
			return;
		}
	}
}

/* Counts one more (delta 1) or one fewer node labelled sname. */
static void
nodes_count(struct reconcile *r, const char *sname, int delta)
{
	json_int_t n = json_integer_value(
			   json_object_get(r->node_label_count, sname)) +
	    delta;

	if (n > 0)
		json_object_set_new(r->node_label_count, sname,
		    json_integer(n));
	else
		json_object_del(r->node_label_count, sname);
}

void
nodes_index(struct reconcile *r, const char *name, const json_t *old,
    const json_t *node)
{
	const char *was = old != NULL ?
	    k8s_obj_label(old, LABEL_SLURM_NODENAME) :
	    NULL;
	const char *is = node != NULL ?
	    k8s_obj_label(node, LABEL_SLURM_NODENAME) :
	    NULL;

	if (was != NULL && (is == NULL || strcmp(was, is) != 0)) {
		nodes_index_drop(r, was, name);
		nodes_count(r, was, -1);
	}
	if (is != NULL && (was == NULL || strcmp(was, is) != 0)) {
		nodes_count(r, is, 1);
		if (nodes_claimed(r, is) > 1)
			log_warnx("node %s: labelled " LABEL_SLURM_NODENAME
				  "=%s as another node is: neither stands "
				  "for Slurm node %s until one label goes",
			    name, is, is);
	}
	if (is != NULL && map_get(r->node_index, is) == NULL)
		map_put(r->node_index, is, xstrdup(name));
}

int
nodes_claimed(struct reconcile *r, const char *slurm_node)
{
	return ((int)json_integer_value(
	    json_object_get(r->node_label_count, slurm_node)));
}

const char *
nodes_k8s_name(struct reconcile *r, const char *slurm_node)
{
	const char *name = map_get(r->node_index, slurm_node);
	void	   *v;

	if (name != NULL)
		return (nodes_claimed(r, slurm_node) > 1 ? NULL : name);
	if ((v = map_get(r->nodes, slurm_node)) != NULL &&
	    k8s_obj_label(v, LABEL_SLURM_NODENAME) == NULL)
		return (slurm_node);
	return (NULL);
}
