/*
 * Nodes, on the reconcile thread: a Kubernetes node behind a Slurm node is
 * bridged (tainted so only bridge pods run there); cordon drains its Slurm
 * node and uncordon resumes only such a drain; a node turning NotReady
 * fails its gangs.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

int
nodes_managed(const json_t *node)
{
	const json_t *t;
	const char   *key;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "spec.taints"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		if (key != NULL && strcmp(key, MANAGED_TAINT_KEY) == 0)
			return (1);
	}
	return (0);
}

/*
 * Taints a Kubernetes node whose Slurm node exists with the managed-node
 * taint, so only pods that tolerate it (bridge pods) run there.
 */
static void
node_taint(struct reconcile *r, const json_t *node, const char *sname)
{
	struct k8s_error err;
	json_t		*patch, *taint;
	char		 path[512];

	if (r->slurm_nodes == NULL ||
	    json_object_get(r->slurm_nodes, sname) == NULL)
		return;
	taint = json_pack("{s:s, s:s, s:s}", "key", MANAGED_TAINT_KEY, "value",
	    MANAGED_TAINT_VALUE, "effect", MANAGED_TAINT_EFFECT);
	/* Taints merge by key: nobody else's taint is touched. */
	patch = json_pack("{s:{s:[o]}}", "spec", "taints", taint);
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", k8s_obj_name(node));
	if (k8s_patch(r->client, path, K8S_PATCH_STRATEGIC, patch, NULL,
		&err) == -1)
		log_warnx("node %s: taint: %ld %s: %s", k8s_obj_name(node),
		    err.status, err.reason, err.text);
	else
		log_info("node %s: tainted " MANAGED_TAINT_KEY
			 "=" MANAGED_TAINT_VALUE ":" MANAGED_TAINT_EFFECT
			 " (slurm node %s)",
		    k8s_obj_name(node), sname);
	json_decref(patch);
}

static int
node_ready(const json_t *node)
{
	const json_t *c;
	const char   *type, *st;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "status.conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		st = json_string_value(json_object_get(c, "status"));
		if (type != NULL && strcmp(type, "Ready") == 0)
			return (st != NULL && strcmp(st, "True") == 0);
	}
	return (0);
}

static int
node_cordoned(const json_t *node)
{
	return (json_is_true(k8s_obj_get(node, "spec.unschedulable")));
}

/* A bridged node became NotReady: fail its pods and end their jobs. */
static void
node_lost(struct reconcile *r, const char *knode)
{
	json_t	   *gkeys = json_array(), *k;
	size_t	    it = 0, i;
	void	   *v;
	const char *node;
	char	    msg[256];

	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		/*
		 * Its node as the watch shows it, else the one we bound it to:
		 * a Binding that landed (or is on its way) before its watch
		 * event came puts the pod there all the same.
		 */
		node = e->rec->node != NULL ? e->rec->node : e->bound_node;
		if ((e->state == PS_BOUND || e->busy == WREQ_BIND) &&
		    e->group != NULL && node != NULL &&
		    strcmp(node, knode) == 0)
			json_array_append_new(gkeys, json_string(e->group));
	}
	snprintf(msg, sizeof(msg),
	    "node %s is NotReady: the pod is failed "
	    "and its Slurm job ended",
	    knode);
	json_array_foreach (gkeys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g != NULL)
			group_fail(r, g, "NodeNotReady", msg);
	}
	json_decref(gkeys);
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
	if (!nodes_managed(node)) {
		/* A Slurm node's twin is bridged: taint it (until it is). */
		node_taint(r, node, sname);
		return;
	}
	/* At recovery, the one node load says whose drain each node has. */
	known = r->recovering && r->slurm_nodes != NULL ?
	    json_string_value(json_object_get(r->slurm_nodes, sname)) :
	    NULL;
	if (node_cordoned(node) && (old == NULL || !node_cordoned(old))) {
		if (known != NULL)
			; /* drained already: keep its owner and reason */
		else if (sctl_node_drain(sname,
			     DRAIN_REASON_PREFIX " node "
						 "cordoned in Kubernetes",
			     err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else
			log_info("node %s: cordoned: drained slurm node %s",
			    name, sname);
	} else if (!node_cordoned(node) &&
	    (old == NULL || node_cordoned(old))) {
		if (r->recovering && r->slurm_nodes != NULL &&
		    (known == NULL ||
			strncmp(known, DRAIN_REASON_PREFIX,
			    strlen(DRAIN_REASON_PREFIX)) != 0))
			; /* not drained by us: nothing to resume */
		else if (sctl_node_resume_ours(sname, DRAIN_REASON_PREFIX,
			     &resumed, err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else if (resumed)
			log_info("node %s: uncordoned: resumed slurm node %s",
			    name, sname);
	}
	if (!node_ready(node) && (old == NULL || node_ready(old))) {
		log_info("node %s: NotReady", name);
		node_lost(r, name);
	}
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
