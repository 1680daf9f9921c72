/*
 * Node records: the fields of a Node that the scheduler reads, copied into
 * a new small object of the same shape.  A Node as the API sends it holds
 * every image on the machine (status.images), its addresses, its system
 * information, kubectl's last-applied annotation and every label a device
 * plugin adds: some 18 KB of decoded tree for a kwok node, more for a
 * kubelet's.  The scheduler caches a record per node instead, a few hundred
 * bytes.  Made on the node informer's thread, which drops the object there.
 * Pure; any thread.
 *
 * What is kept, and who reads it:
 *   metadata   name (the cache key, k8s_obj_name everywhere), the labels
 *              (nodes.c reads LABEL_SLURM_NODENAME, the Slurm node a
 *              Kubernetes node stands for; the placement rule, fit.c,
 *              any label a pod's selector or affinity names), and of
 *              the annotations ANN_TAINTED_BY alone (nodes.c: which
 *              install claims the managed-node taint)
 *   spec       taints[]: key, value, effect (translate_node_managed reads
 *              the key), unschedulable (noderec_cordoned)
 *   status     the condition of type Ready: type, status,
 *              lastTransitionTime (noderec_ready_cond; nodes.c reads its
 *              status and lastTransitionTime; fit.c its status), and
 *              allocatable (fit.c: the resources Slurm does not count)
 * The readers of those two are here too, so that one place says what a
 * record must keep.
 * A member that is present stays present, whatever its type, so a reader
 * tells absent from present (and a wrong type) on the record as on the
 * object.
 *
 * Threads: informer, reconcile (noderec_cordoned, noderec_ready_cond).
 */
#include <string.h>

#include "policy.h"
#include "bridge.h"

/* Copies src's member key into dst when src has it. */
static void
noderec_copy(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = json_object_get(src, key);

	if (v != NULL)
		json_object_set_new(dst, key, json_deep_copy(v));
}

/* A new object with src's members named in keys (NULL-ended). */
static json_t *
noderec_pick(const json_t *src, const char *const *keys)
{
	json_t *o = json_object();

	for (; *keys != NULL; keys++)
		noderec_copy(o, src, *keys);
	return (o);
}

/* The taints, each with its key, value and effect. */
static json_t *
noderec_taints(const json_t *taints)
{
	static const char *const keys[] = { "key", "value", "effect", NULL };
	json_t			*out;
	const json_t		*v;
	size_t			 i;

	if (!json_is_array(taints))
		return (json_deep_copy(taints));
	out = json_array();
	json_array_foreach (taints, i, v)
		json_array_append_new(out,
		    json_is_object(v) ? noderec_pick(v, keys) :
					json_deep_copy(v));
	return (out);
}

/* The node's conditions, of which only the first Ready one is kept. */
static json_t *
noderec_conditions(const json_t *node)
{
	static const char *const keys[] = { "type", "status",
		"lastTransitionTime", NULL };
	const json_t		*conds = k8s_obj_get(node, "status.conditions");
	const json_t		*ready = noderec_ready_cond(node);
	json_t			*out;

	if (!json_is_array(conds))
		return (json_deep_copy(conds));
	out = json_array();
	if (ready != NULL)
		json_array_append_new(out, noderec_pick(ready, keys));
	return (out);
}

json_t *
noderec_dup(const json_t *node)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *spec = json_object_get(node, "spec");
	const json_t *status = json_object_get(node, "status");
	const json_t *labels = json_object_get(meta, "labels");
	json_t	     *rec, *m, *s, *l, *by;

	if (!json_is_object(node))
		return (json_deep_copy(node));
	rec = json_object();
	if (json_is_object(meta)) {
		m = json_object();
		noderec_copy(m, meta, "name");
		/* All of them: node affinity and selectors read any. */
		if (json_is_object(labels)) {
			l = json_object();
			json_object_update(l, (json_t *)(uintptr_t)labels);
			json_object_set_new(m, "labels", l);
		} else if (labels != NULL)
			json_object_set_new(m, "labels",
			    json_deep_copy(labels));
		by = json_object_get(json_object_get(meta, "annotations"),
		    ANN_TAINTED_BY);
		if (by != NULL)
			json_object_set_new(m, "annotations",
			    json_pack("{s:O}", ANN_TAINTED_BY, by));
		json_object_set_new(rec, "metadata", m);
	} else if (meta != NULL)
		json_object_set_new(rec, "metadata", json_deep_copy(meta));
	if (json_is_object(spec)) {
		s = json_object();
		if (json_object_get(spec, "taints") != NULL)
			json_object_set_new(s, "taints",
			    noderec_taints(json_object_get(spec, "taints")));
		noderec_copy(s, spec, "unschedulable");
		json_object_set_new(rec, "spec", s);
	} else if (spec != NULL)
		json_object_set_new(rec, "spec", json_deep_copy(spec));
	if (json_is_object(status)) {
		s = json_object();
		if (json_object_get(status, "conditions") != NULL)
			json_object_set_new(s, "conditions",
			    noderec_conditions(node));
		noderec_copy(s, status, "allocatable");
		json_object_set_new(rec, "status", s);
	} else if (status != NULL)
		json_object_set_new(rec, "status", json_deep_copy(status));
	return (rec);
}

const json_t *
noderec_ready_cond(const json_t *node)
{
	const json_t *c;
	const char   *type;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "status.conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (type != NULL && strcmp(type, "Ready") == 0)
			return (c);
	}
	return (NULL);
}

int
noderec_cordoned(const json_t *node)
{
	return (json_is_true(k8s_obj_get(node, "spec.unschedulable")));
}
