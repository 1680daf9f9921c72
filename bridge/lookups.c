/*
 * The lookups the rules of common/ call, over the reconcile thread's
 * caches (ns/name keyed maps in struct reconcile): of workload objects
 * (PodGroups of both APIs, CompositePodGroups, Workloads,
 * LeaderWorkerSets, JobSets, Jobs) for the workload rules
 * (common/workload.c); of ResourceClaims, their templates and the
 * ResourceSlices for the device rules (common/dra.c); and of Namespaces,
 * for which ones the bridge schedules in (lookups_namespace_enabled).
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <string.h>

#include "bridge.h"

json_t *
lookups_workload(struct reconcile *r, enum workload_kind kind, const char *ns,
    const char *name)
{
	struct map *m[WORKLOAD_KINDS] = { r->podgroups, r->lwss, r->jobsets,
		r->k8s_jobs, r->sched_podgroups, r->sched_workloads,
		r->sched_composites };
	char	    key[512];

	if (ns == NULL || name == NULL)
		return (NULL);
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	return (json_incref(map_get(m[kind], key)));
}

/* workload_lookup_fn over the owner caches; a new reference, or NULL. */
static json_t *
lookups_workload_fn(void *arg, enum workload_kind kind, const char *ns,
    const char *name)
{
	return (lookups_workload(arg, kind, ns, name));
}

void
lookups_workload_init(struct reconcile *r, struct workload_lookup *lk)
{
	lk->fn = lookups_workload_fn;
	lk->arg = r;
}

/*
 * dra_lookup_fn over the claim caches (and the PodGroups, for their
 * claims); a new reference, or NULL.
 */
static json_t *
lookups_claim_fn(void *arg, enum dra_kind kind, const char *ns,
    const char *name)
{
	struct reconcile *r = ((struct claims_asker *)arg)->r;
	char		  key[512];

	if (ns == NULL || name == NULL)
		return (NULL);
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	return (json_incref(map_get(kind == DRA_CLAIM ? r->claims :
		kind == DRA_TEMPLATE		      ? r->claim_tmpls :
							r->sched_podgroups,
	    key)));
}

json_t *
lookups_values(struct map *m)
{
	json_t *out = json_array();
	size_t	it = 0;
	void   *v;

	while (map_next(m, &it, NULL, &v))
		json_array_append(out, v);
	return (out);
}

json_t *
lookups_slices_by_node(struct reconcile *r)
{
	json_t	   *out = json_object(), *l;
	const char *nn;
	size_t	    it = 0;
	void	   *v;

	while (map_next(r->slices, &it, NULL, &v)) {
		if ((nn = json_string_value(k8s_obj_get(v, "spec.nodeName"))) ==
		    NULL)
			continue;
		if ((l = json_object_get(out, nn)) == NULL) {
			l = json_array();
			json_object_set_new(out, nn, l);
		}
		json_array_append(l, v);
	}
	return (out);
}

/*
 * dra_serves_fn over the caches: does some bridged node's slices publish
 * count devices of class k that tolerations allow (DeviceTaintRules too)?
 */
static int
lookups_serves(void *arg, const struct dra_class *k, long long count,
    const json_t *tolerations)
{
	struct reconcile *r = ((struct claims_asker *)arg)->r;
	json_t		 *by_node = lookups_slices_by_node(r);
	json_t		 *rules = lookups_values(r->taint_rules), *node;
	const char	 *name;
	size_t		  it = 0;
	int		  yes = 0;

	while (!yes && map_next(r->nodes, &it, &name, (void **)&node))
		yes = translate_node_managed(node) &&
		    dra_node_devices(json_object_get(by_node, name), k, name,
			rules, tolerations, NULL) >= count;
	json_decref(by_node);
	json_decref(rules);
	return (yes);
}

void
lookups_claims_init(struct claims_asker *ask, struct dra_lookup *lk)
{
	lk->fn = lookups_claim_fn;
	lk->busy = NULL;
	lk->serves = lookups_serves;
	lk->arg = ask;
}

/*
 * Which namespaces the bridge schedules in: one labelled
 * slurm-bridge=enabled, or one the config's managedNamespaces or
 * managedNamespaceSelector names.
 */
int
lookups_namespace_enabled(struct reconcile *r, const char *ns)
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
