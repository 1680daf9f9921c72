/*
 * The nodes a group may not use, on the reconcile thread: the placement
 * rule (common/fit.c) over every bridged node (those carrying the
 * managed-node taint), with the pods already on each.  Slurm then decides
 * among the rest: they go to the job as its excluded nodes.  A pod whose
 * answer depends only on the nodes (no host port, no node-limited
 * resource) shares it with every pod of the same constraints, until a
 * node changes in what the rule reads (exclude_nodes_changed): then the
 * answers are made again and pending jobs follow.  A pod whose claims ask
 * for devices of a DeviceClass may use only the nodes whose
 * ResourceSlices publish that many of them, with no device of the class
 * tainted (in its slice or by a DeviceTaintRule) against the request
 * (exclude_devices): Slurm's GRES count does not say which driver a node
 * has, and Slurm may give any of its indices.  Just before a Binding
 * the node is checked again against the pods really on it
 * (exclude_recheck).
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "fit.h"
#include "config.h"
#include "bridge.h"

/* Does the pod's answer depend on the pods already on each node? */
static int
exclude_needs_others(const json_t *pod)
{
	static const char *const lists[] = { "spec.containers",
		"spec.initContainers" };
	static const char *const kinds[] = { "resources.requests",
		"resources.limits" };
	const json_t		*c, *v;
	const char		*name;
	size_t			 l, i, k;

	for (l = 0; l < 2; l++)
		json_array_foreach (k8s_obj_get(pod, lists[l]), i, c) {
			if (json_array_size(json_object_get(c, "ports")) > 0)
				return (1);
			for (k = 0; k < 2; k++)
				json_object_foreach ((json_t *)(uintptr_t)
							 k8s_obj_get(c,
							     kinds[k]),
				    name, v)
					if (fit_resource_node_limited(name))
						return (1);
		}
	return (0);
}

/*
 * The key of the answers a pod shares with others: what the rule reads
 * of it when no other pod matters, and the devices it asks (needs).  A
 * new string.
 */
static char *
exclude_key(const json_t *pod, const json_t *needs)
{
	json_t *k;
	char   *s;

	k = json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "s",
	    k8s_obj_get(pod, "spec.nodeSelector"), "a",
	    k8s_obj_get(pod, "spec.affinity.nodeAffinity"), "t",
	    k8s_obj_get(pod, "spec.tolerations"), "n",
	    k8s_obj_get(pod, "spec.nodeName"), "d",
	    json_object_size(needs) > 0 ? needs : NULL);
	s = json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(k);
	return (s);
}

/* The Slurm node a bridged Kubernetes node stands for. */
static const char *
exclude_slurm_name(const json_t *node)
{
	const char *s = k8s_obj_label(node, LABEL_SLURM_NODENAME);

	return (s != NULL ? s : k8s_obj_name(node));
}

/*
 * The bridge's pods on node (bound, or being bound) that name what
 * matters (a host port, or the resource names in want), decoded; *n of
 * them, a new array.
 */
static json_t **
exclude_others(struct reconcile *r, const char *node, const json_t *pod,
    size_t *n)
{
	struct pod_entry *e;
	const char	 *k, *on, *cold, *self = k8s_obj_name(pod);
	json_t		**v = NULL;
	size_t		  it = 0, cap = 0;

	*n = 0;
	while (map_next(r->pods, &it, &k, (void **)&e)) {
		on = e->bound_node != NULL ? e->bound_node : e->rec->node;
		if (on == NULL || strcmp(on, node) != 0 || podentry_over(e))
			continue;
		if (self != NULL && strcmp(podrec_name(e->rec), self) == 0 &&
		    strcmp(e->rec->ns, k8s_obj_namespace(pod)) == 0)
			continue;
		if ((cold = podrec_cold(e->rec)) == NULL ||
		    (strstr(cold, "hostPort") == NULL &&
			strstr(cold, "\"resources\"") == NULL))
			continue;
		if (*n == cap) {
			cap = cap != 0 ? cap * 2 : 8;
			/* An array of pointers: sizeof a pointer is meant. */
			/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[(*n)++] = podrec_json(e->rec);
	}
	return (v);
}

static void
exclude_others_free(json_t **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_decref(v[i]);
	free(v);
}

/*
 * Do knode's ResourceSlices (by_node: Kubernetes node -> its slices)
 * publish the devices the pod's claims ask (needs, dra_pod_needs)?  1, or
 * 0 with the DynamicResources text in why: Slurm's GRES count is no proof
 * that the node has the class's driver.
 */
static int
exclude_devices(struct reconcile *r, const json_t *needs, const json_t *by_node,
    const json_t *rules, const char *knode, char *why, size_t len)
{
	const struct dra_class *k;
	const char	       *cls;
	const json_t	       *taint;
	json_t		       *v;
	json_int_t		want;

	json_object_foreach ((json_t *)(uintptr_t)needs, cls, v) {
		if ((k = dra_class_find(r->conf->dra, cls)) == NULL)
			continue;
		want = json_integer_value(json_object_get(v, "count"));
		/*
		 * Slurm may give any of the node's GRES indices: a device
		 * of the class with a taint the request does not tolerate
		 * rules the node out, however many others it has.
		 */
		if (dra_node_devices(json_object_get(by_node, knode), k, knode,
			rules, json_object_get(v, "tolerations"),
			&taint) >= want &&
		    taint == NULL)
			continue;
		if (taint != NULL) {
			snprintf(why, len,
			    "node(s) had untolerated device taint {%s: %s} "
			    "(%s, DeviceClass %s)",
			    k8s_obj_str(taint, "key"),
			    k8s_obj_str(taint, "value") != NULL ?
				k8s_obj_str(taint, "value") :
				"",
			    json_string_value(json_object_get(v, "where")),
			    cls);
			return (0);
		}
		snprintf(why, len,
		    "node(s) cannot allocate all claims (%s: %lld device(s) of "
		    "DeviceClass %s, driver %s)",
		    json_string_value(json_object_get(v, "where")),
		    (long long)want, cls, k->driver);
		return (0);
	}
	return (1);
}

/*
 * The answer for one pod (its devices: needs): [excluded Slurm nodes
 * "a,b" or "", how many nodes fit, the FailedScheduling text, how many
 * bridged nodes were asked about], a new reference.
 */
static json_t *
exclude_pod(struct reconcile *r, const json_t *pod, const json_t *needs)
{
	struct fit_tally t;
	struct buf	 exc;
	enum fit_reason	 fr;
	const char	*name, *kn;
	json_t		*node, *ans, **others = NULL, *by_node = NULL;
	json_t		*rules = NULL;
	char		 why[320], msg[1024];
	size_t		 it = 0, n = 0;
	int		 needs_others = exclude_needs_others(pod);

	fit_tally_init(&t);
	buf_init(&exc);
	if (json_object_size(needs) > 0) {
		by_node = lookups_slices_by_node(r);
		rules = lookups_values(r->taint_rules);
	}
	while (map_next(r->nodes, &it, &name, (void **)&node)) {
		if (!translate_node_managed(node))
			continue;
		/*
		 * A node labelled for a Slurm node stands for it, not one
		 * merely of that name (a kwok node beside a real kubelet
		 * labelled for it): the other is not asked.
		 */
		kn = nodes_k8s_name(r, exclude_slurm_name(node));
		if (kn != NULL && strcmp(kn, name) != 0)
			continue;
		if (needs_others)
			others = exclude_others(r, name, pod, &n);
		fr = fit_node(pod, node, others, n, why, sizeof(why));
		if (fr == FIT_OK && by_node != NULL &&
		    !exclude_devices(r, needs, by_node, rules, name, why,
			sizeof(why)))
			fr = FIT_DEVICES;
		fit_tally_add(&t, fr, why);
		/* Two nodes labelled for one Slurm node: neither is its. */
		if (fr != FIT_OK ||
		    nodes_claimed(r, exclude_slurm_name(node)) > 1)
			buf_printf(&exc, "%s%s", exc.len > 0 ? "," : "",
			    exclude_slurm_name(node));
		if (needs_others)
			exclude_others_free(others, n);
		others = NULL;
		n = 0;
	}
	json_decref(by_node);
	json_decref(rules);
	fit_tally_message(&t, msg, sizeof(msg));
	buf_add(&exc, "", 1);
	ans = json_pack("[s, I, s, I]", exc.data, (json_int_t)t.fit, msg,
	    (json_int_t)t.nodes);
	buf_cleanup(&exc);
	fit_tally_cleanup(&t);
	return (ans);
}

/* The answer for a pod, from the shared ones where it can (borrowed). */
static const json_t *
exclude_answer(struct reconcile *r, const json_t *pod, const json_t *needs,
    json_t **owned)
{
	const json_t *ans;
	char	     *key;

	*owned = NULL;
	if (exclude_needs_others(pod))
		return (*owned = exclude_pod(r, pod, needs));
	key = exclude_key(pod, needs);
	if ((ans = json_object_get(r->fit_cache, key)) == NULL) {
		json_object_set_new(r->fit_cache, key,
		    exclude_pod(r, pod, needs));
		ans = json_object_get(r->fit_cache, key);
	}
	free(key);
	return (ans);
}

/* A comma list of Slurm node names as a set (a new object). */
static json_t *
exclude_set(const char *nodes)
{
	json_t *set = json_object();
	char   *list, *tok, *save = NULL;

	list = xstrdup(nodes != NULL ? nodes : "");
	for (tok = strtok_r(list, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save))
		json_object_set_new(set, tok, json_true());
	free(list);
	return (set);
}

/*
 * A gang that requires one value of a label Slurm knows nothing of
 * (topology level "none"): of the nodes its pods may use, those under the
 * value with the most of them (the first by name on a tie) stay; every
 * other is excluded too.  The choice depends on the nodes alone, so a
 * pending job's update asks for the same.  0; 1 with msg when no usable
 * node has the label.
 */
static int
exclude_domain(struct reconcile *r, struct jobspec *js, char *msg, size_t len)
{
	json_t *excl = exclude_set(js->exc_nodes), *count = json_object(), *v;
	const char *name, *val, *best = NULL;
	json_t	   *node;
	struct buf  exc;
	size_t	    it = 0;
	json_int_t  most = 0;
	int	    rc = 0;

	while (map_next(r->nodes, &it, &name, (void **)&node)) {
		if (!translate_node_managed(node) ||
		    json_object_get(excl, exclude_slurm_name(node)) != NULL ||
		    (val = k8s_obj_label(node, js->topo_key)) == NULL)
			continue;
		v = json_object_get(count, val);
		json_object_set_new(count, val,
		    json_integer(json_integer_value(v) + 1));
	}
	json_object_foreach (count, val, v)
		if (json_integer_value(v) > most ||
		    (json_integer_value(v) == most && best != NULL &&
			strcmp(val, best) < 0)) {
			most = json_integer_value(v);
			best = val;
		}
	if (best == NULL) {
		snprintf(msg, len,
		    "no node it may use has the label %.64s (its required "
		    "topology)",
		    js->topo_key);
		rc = 1;
		goto out;
	}
	buf_init(&exc);
	buf_printf(&exc, "%s", js->exc_nodes != NULL ? js->exc_nodes : "");
	it = 0;
	while (map_next(r->nodes, &it, &name, (void **)&node)) {
		if (!translate_node_managed(node) ||
		    json_object_get(excl, exclude_slurm_name(node)) != NULL)
			continue;
		val = k8s_obj_label(node, js->topo_key);
		if (val == NULL || strcmp(val, best) != 0)
			buf_printf(&exc, "%s%s", exc.len > 0 ? "," : "",
			    exclude_slurm_name(node));
	}
	buf_add(&exc, "", 1);
	free(js->exc_nodes);
	js->exc_nodes = *exc.data != '\0' ? xstrdup(exc.data) : NULL;
	buf_cleanup(&exc);
out:
	json_decref(excl);
	json_decref(count);
	return (rc);
}

/*
 * A gang whose members may use different nodes (Kueue's topology-aware
 * scheduling pins each pod to the node it chose): one component per set
 * of nodes, so Slurm allocates each pod where it may run.  A topology the
 * gang requires then holds only if every node any member may use is in
 * one domain; it is, and Slurm needs no request for it.  0, or 1 with msg.
 */
static int
exclude_split(struct reconcile *r, struct group *g, size_t n,
    struct jobspec *js, const char *const *exc, char *msg, size_t len)
{
	const char *name, *val, *dom = NULL;
	json_t	   *node, **excl;
	uint64_t    it = 0;
	char	    why[256];
	size_t	    i;
	int	    allowed, ok = 1;

	if (js->topo_key != NULL && js->topo_required) {
		/* Each member's excluded nodes, as a set (of pointers). */
		/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
		excl = xcalloc(n, sizeof(*excl));
		for (i = 0; i < n; i++)
			excl[i] = exclude_set(exc[i]);
		while (ok && map_next(r->nodes, &it, &name, (void **)&node)) {
			if (!translate_node_managed(node))
				continue;
			/* May any member use it? */
			allowed = 0;
			for (i = 0; i < n && !allowed; i++)
				allowed = json_object_get(excl[i],
					      exclude_slurm_name(node)) == NULL;
			if (!allowed)
				continue;
			val = k8s_obj_label(node, js->topo_key);
			if (val == NULL ||
			    (dom != NULL && strcmp(dom, val) != 0))
				ok = 0;
			dom = val;
		}
		for (i = 0; i < n; i++)
			json_decref(excl[i]);
		free(excl);
		if (!ok) {
			snprintf(msg, len,
			    "gang %s: its pods may use different nodes (their "
			    "nodeSelector, affinity, tolerations, host ports or "
			    "resources differ), and together nodes of more "
			    "than one value of %s, which it requires one of; "
			    "Slurm holds a topology request for each part of "
			    "such a job alone, so give the pods the same node "
			    "constraints, or constraints within one %s",
			    workload_key_name(g->key), js->topo_key,
			    js->topo_key);
			return (1);
		}
		free(js->topo_key);
		js->topo_key = NULL;
		js->topo_required = 0;
		js->req_switch = 0;
		js->wait4switch = 0;
		js->segment_size = 0;
	}
	if (translate_split_nodes(js, exc, n, why, sizeof(why)) == -1) {
		snprintf(msg, len,
		    "gang %s: its pods may use different nodes (their "
		    "nodeSelector, affinity, tolerations, host ports or "
		    "resources differ), and slurm-bridge cannot ask Slurm for "
		    "each set of nodes: %s",
		    workload_key_name(g->key), why);
		return (1);
	}
	log_info("group %s: its pods may use %zu different sets of nodes: "
		 "one heterogeneous job of a component per set",
	    g->key, js->ncomps);
	return (0);
}

int
exclude_group(struct reconcile *r, struct group *g, struct pod_entry **pods,
    size_t n, struct jobspec *js, char *msg, size_t len)
{
	struct claims_asker ask;
	struct dra_lookup   dl;
	const json_t	   *ans;
	const char	   *exc, **each;
	json_t		   *pod, *owned, *needs;
	size_t		    i;
	int		    rc = 0, differ = 0;

	g->unfit = 0;
	/* What the claims ask: the caches alone (dra_pod_needs). */
	memset(&ask, 0, sizeof(ask));
	ask.r = r;
	ask.gkey = g->key;
	lookups_claims_init(&ask, &dl);
	each = xcalloc(n, sizeof(*each));
	for (i = 0; i < n && rc == 0; i++) {
		pod = podrec_json(pods[i]->rec);
		if (fit_pod_waits(pod, msg, len)) {
			json_decref(pod);
			rc = 1;
			break;
		}
		needs = dra_pod_needs(pod, r->conf->dra, &dl);
		ans = exclude_answer(r, pod, needs, &owned);
		json_decref(needs);
		exc = json_string_value(json_array_get(ans, 0));
		/* No bridged node known yet: Slurm decides alone. */
		if (json_integer_value(json_array_get(ans, 1)) == 0 &&
		    json_integer_value(json_array_get(ans, 3)) > 0) {
			snprintf(msg, len, "%s",
			    json_string_value(json_array_get(ans, 2)));
			g->unfit = 1;
			rc = 1;
		} else {
			each[i] = xstrdup(exc);
			if (i > 0 && strcmp(each[0], each[i]) != 0)
				differ = 1;
		}
		json_decref(owned);
		json_decref(pod);
	}
	if (rc == 0 && !differ) {
		free(js->exc_nodes);
		js->exc_nodes = n > 0 && *each[0] != '\0' ? xstrdup(each[0]) :
							    NULL;
	} else if (rc == 0)
		rc = exclude_split(r, g, n, js, each, msg, len);
	for (i = 0; i < n; i++)
		free((char *)(uintptr_t)each[i]);
	free(each);
	if (rc == 0 && js->topo_key != NULL && js->topo_required &&
	    js->topo_kind == TOPO_LABEL &&
	    (rc = exclude_domain(r, js, msg, len)) != 0)
		g->unfit = 1;
	return (rc);
}

int
exclude_recheck(struct reconcile *r, const struct podrec *rec, const char *node,
    char *why, size_t len)
{
	const json_t *nrec = map_get(r->nodes, node), *p;
	json_t	     *pod = podrec_json(rec), *list = NULL, **others = NULL;
	json_t	    **ours = NULL, *uids = NULL;
	size_t	      n = 0, i, nours = 0;
	int	      fits;

	if (nrec == NULL) {
		snprintf(why, len, "node %s is gone", node);
		json_decref(pod);
		return (0);
	}
	/*
	 * A host port or a node-limited resource: against every pod on the
	 * node, other schedulers' (a DaemonSet's) included, and the bridge's
	 * own whose Binding is on its way.
	 */
	if (exclude_needs_others(pod) &&
	    (list = nodes_pods(r, node, "for the check before binding")) !=
		NULL) {
		ours = exclude_others(r, node, pod, &nours);
		i = json_array_size(list) + nours + 1;
		/* An array of pointers: sizeof a pointer is meant. */
		/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
		others = xreallocarray(NULL, i, sizeof(*others));
		uids = json_object();
		json_array_foreach (list, i, p) {
			if ((k8s_obj_uid(p) != NULL &&
				strcmp(k8s_obj_uid(p), podrec_uid(rec)) == 0))
				continue;
			if (k8s_obj_uid(p) != NULL)
				json_object_set_new(uids, k8s_obj_uid(p),
				    json_true());
			others[n++] = (json_t *)(uintptr_t)p;
		}
		for (i = 0; i < nours; i++)
			if (k8s_obj_uid(ours[i]) == NULL ||
			    json_object_get(uids, k8s_obj_uid(ours[i])) == NULL)
				others[n++] = ours[i];
	}
	fits = fit_node(pod, nrec, others, n, why, len) == FIT_OK;
	exclude_others_free(ours, nours);
	json_decref(uids);
	free(others);
	json_decref(list);
	json_decref(pod);
	return (fits);
}

void
exclude_nodes_changed(struct reconcile *r)
{
	json_object_clear(r->fit_cache);
	r->fit_dirty = 1;
	/*
	 * Before recovery no sweep runs (and recovery evaluates every
	 * group): a sweep due then would spin the loop without popping.
	 */
	if (r->recovered && !r->sweep_due) {
		r->sweep_due = 1;
		r->next_change = now_ms() + SWEEP_COALESCE_MS;
	}
}
