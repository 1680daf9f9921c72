/*
 * The validation of a bridged pod: every refusal names the key, the bad
 * value and the accepted form.
 * - Annotations go through the scheduler's own translation and grouping
 *   (translate_pod, workload_group), with the namespace's defaults and
 *   bounds (bounds.c) and the workload layers' annotations, so what is
 *   admitted the scheduler can submit.
 * - Bridge-owned keys (set by "bridge" in docs/users/annotations.md) may
 *   not be set by users on CREATE nor changed later; only the bridge's own
 *   identities may.
 * - pods/resize of a bridged pod is refused: its resources are Slurm's.
 * Runs inside a request; namespaces and owners come from the store.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "xmalloc.h"
#include "policy.h"
#include "topology.h"
#include "admission.h"

void
validate_deny(struct review_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->denied != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&r->denied, fmt, ap) == -1)
		r->denied = NULL;
	va_end(ap);
}

/* Where a bridge-owned key lives in a pod. */
enum owned_where {
	OWNED_LABEL,
	OWNED_ANNOTATION
};

static const struct {
	enum owned_where where;
	const char	*key;
} owned_keys[] = {
	{ OWNED_LABEL, LABEL_JOBID },
	{ OWNED_ANNOTATION, ANN_SLURM_JOBID },
	{ OWNED_ANNOTATION, ANN_SLURM_NODE },
	{ OWNED_ANNOTATION, ANN_SLURM_GRES },
	{ OWNED_ANNOTATION, ANN_SLURM_DEVICE_JOBS },
	{ OWNED_ANNOTATION, ANN_BEYOND_GANG },
};

static const char *
owned_value(const json_t *pod, int i)
{
	if (pod == NULL)
		return (NULL);
	return (owned_keys[i].where == OWNED_LABEL ?
		k8s_obj_label(pod, owned_keys[i].key) :
		k8s_obj_annotation(pod, owned_keys[i].key));
}

static int
str_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* Is the requester one of the bridge's identities? */
static int
validate_is_bridge(const json_t *req, const struct review_conf *rc)
{
	const char *user = k8s_obj_str(req, "userInfo.username");
	size_t	    i;

	for (i = 0; user != NULL && rc->bridge_users != NULL &&
	     rc->bridge_users[i] != NULL;
	     i++)
		if (strcmp(user, rc->bridge_users[i]) == 0)
			return (1);
	return (0);
}

/* Bridge-owned keys: not on CREATE, never changed afterwards. */
static void
validate_owned(const json_t *pod, const json_t *old, const char *op,
    struct review_result *r)
{
	const char *have, *was, *what, *node;
	size_t	    i;

	for (i = 0; i < sizeof(owned_keys) / sizeof(owned_keys[0]); i++) {
		have = owned_value(pod, (int)i);
		was = owned_value(old, (int)i);
		what = owned_keys[i].where == OWNED_LABEL ? "label" :
							    "annotation";
		if (strcmp(op, "CREATE") == 0 && have != NULL) {
			validate_deny(r,
			    "%s %s=\"%.64s\" is set by "
			    "slurm-bridge, not by users: remove it from the "
			    "pod (or its template)",
			    what, owned_keys[i].key, have);
			return;
		}
		if (strcmp(op, "UPDATE") == 0 && !str_same(have, was)) {
			node = k8s_obj_str(old, "spec.nodeName");
			validate_deny(r,
			    "%s %s is owned by slurm-bridge and "
			    "cannot be changed by users (it is \"%.64s\", the "
			    "request makes it \"%.64s\")%s%s",
			    what, owned_keys[i].key, was != NULL ? was : "",
			    have != NULL ? have : "",
			    node != NULL && *node != '\0' ?
				"; the pod is bound to node " :
				"",
			    node != NULL ? node : "");
			return;
		}
	}
	if (strcmp(op, "CREATE") == 0 && k8s_obj_has_finalizer(pod, FINALIZER))
		validate_deny(r,
		    "finalizer " FINALIZER " is set by "
		    "slurm-bridge, not by users: remove it from the pod (or its "
		    "template)");
}

/* Did any annotation or label the policy reads change? */
static int
validate_policy_changed(const json_t *pod, const json_t *old)
{
	const json_t *a = k8s_obj_get(pod, "metadata.annotations");
	const json_t *b = k8s_obj_get(old, "metadata.annotations");
	const char   *key;
	const json_t *v;

	if (!str_same(k8s_obj_label(pod, LABEL_POD_GROUP),
		k8s_obj_label(old, LABEL_POD_GROUP)))
		return (1);
	json_object_foreach ((json_t *)(uintptr_t)a, key, v)
		if (!json_equal(v, json_object_get(b, key)))
			return (1);
	json_object_foreach ((json_t *)(uintptr_t)b, key, v)
		if (json_object_get(a, key) == NULL)
			return (1);
	return (0);
}

/* The scheduler's translation settings, from the shared config. */
static void
validate_tconf(const struct review_conf *rc, struct translate_conf *tc)
{
	memset(tc, 0, sizeof(*tc)); /* no install: the webhook makes no job */
	tc->partition = rc->config->partition;
	tc->exclusive = rc->config->exclusive;
	tc->default_account = rc->config->default_account;
	tc->mcs_label = rc->config->mcs_label;
	tc->bounds = &rc->config->bounds;
	tc->dra = &rc->config->dra;
	tc->taint_effect = rc->config->taint_effect;
	tc->topology = rc->config;
}

/* The annotations, through the scheduler's translation and grouping. */
static void
validate_policy(const json_t *pod, const struct review_conf *rc,
    struct review_result *r)
{
	struct translate_src  src;
	struct translate_conf tc;
	struct jobspec	      js;
	struct group_id	      gid;
	struct owners_lookup  ol;
	struct topology_req   treq;
	json_t		     *ns, *layers[WORKLOAD_LAYERS];
	char		      err[512];

	ns = owners_get(rc->owners, OWN_NAMESPACE, NULL, k8s_obj_namespace(pod),
	    rc->owner_wait_ms);
	owners_lookup_init(&ol, rc->owners, rc->owner_wait_ms, 0);
	src.gang = 0;
	src.pod = pod;
	src.layers = layers;
	src.nlayers = workload_layers(pod, &ol.lk, layers);
	src.ns = ns;
	/* Claims are the scheduler's to read: the webhook does not watch them. */
	src.dra = NULL;
	validate_tconf(rc, &tc);
	if (translate_pod(&src, &tc, &js, err, sizeof(err)) == -1)
		validate_deny(r, "%s", err);
	else
		translate_jobspec_cleanup(&js);
	if (r->denied == NULL &&
	    workload_group(pod, NULL, &gid, err, sizeof(err)) == -1)
		validate_deny(r, "%s", err);
	if (r->denied == NULL &&
	    topology_request(pod, layers, src.nlayers, &treq, err,
		sizeof(err)) == -1)
		validate_deny(r, "%s", err);
	else if (r->denied == NULL && treq.key != NULL && treq.required &&
	    config_topo_find(rc->config, treq.key) == NULL)
		validate_deny(r,
		    "%s: \"%.64s\" is not a level in slurm-bridge's topology "
		    "table (config topology[].nodeLabel); use one of its node "
		    "labels or drop the requirement",
		    treq.from, treq.key);
	json_decref(ns);
	workload_layers_free(layers, src.nlayers);
}

void
validate_pod(const json_t *req, const json_t *pod, const struct review_conf *rc,
    struct review_result *r)
{
	const char *op = json_string_value(json_object_get(req, "operation"));
	const char *sub = json_string_value(
	    json_object_get(req, "subResource"));
	const char   *sched = k8s_obj_str(pod, "spec.schedulerName");
	const char   *job;
	const json_t *old = json_object_get(req, "oldObject");
	char	      placed[64];

	/* Only the bridge's pods; the bridge itself may do anything. */
	if (sched == NULL || strcmp(sched, rc->config->scheduler_name) != 0 ||
	    validate_is_bridge(req, rc))
		return;
	if (sub != NULL && strcmp(sub, "resize") == 0) {
		if ((job = k8s_obj_annotation(pod, ANN_SLURM_JOBID)) == NULL)
			job = k8s_obj_label(pod, LABEL_JOBID);
		snprintf(placed, sizeof(placed),
		    job != NULL ? " (job %.32s)" : "%s",
		    job != NULL ? job : "");
		validate_deny(r,
		    "pods/resize: pod %s/%s is placed by Slurm%s; "
		    "its CPU, memory and GPUs are fixed by that allocation. "
		    "Delete the pod and create it with the new resources "
		    "instead",
		    k8s_obj_namespace(pod), k8s_obj_name(pod), placed);
		return;
	}
	if (sub != NULL && *sub != '\0')
		return; /* status and other subresources */
	if (op == NULL ||
	    (strcmp(op, "CREATE") != 0 && strcmp(op, "UPDATE") != 0))
		return;
	validate_owned(pod, json_is_object(old) ? old : NULL, op, r);
	if (r->denied != NULL)
		return;
	if (strcmp(op, "CREATE") == 0 || !json_is_object(old) ||
	    validate_policy_changed(pod, old))
		validate_policy(pod, rc, r);
}

/* Does the Workload have a pod group template called name? */
static int
validate_has_template(const json_t *workload, const char *name)
{
	static const char *const lists[] = { "spec.podGroupTemplates",
		"spec.compositePodGroupTemplates" };
	const json_t		*t, *c;
	const char		*n;
	size_t			 i, j, k;

	for (k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
		json_array_foreach (k8s_obj_get(workload, lists[k]), i, t)
			if ((n = k8s_obj_str(t, "name")) != NULL &&
			    strcmp(n, name) == 0)
				return (1);
	/* A CompositePodGroup's children: its template's PodGroups. */
	json_array_foreach (k8s_obj_get(workload,
				"spec.compositePodGroupTemplates"),
	    i, c)
		json_array_foreach (json_object_get(c, "podGroupTemplates"), j,
		    t)
			if ((n = k8s_obj_str(t, "name")) != NULL &&
			    strcmp(n, name) == 0)
				return (1);
	return (0);
}

void
validate_podgroup(const json_t *pg, const char *op,
    const struct review_conf *rc, struct review_result *r)
{
	const json_t *min = k8s_obj_get(pg,
	    "spec.schedulingPolicy.gang.minCount");
	const char   *ns = k8s_obj_namespace(pg), *wl, *tmpl;
	json_t	     *w;

	if (json_is_integer(min) &&
	    json_integer_value(min) > WORKLOAD_MAX_GANG) {
		validate_deny(r,
		    "spec.schedulingPolicy.gang.minCount: %lld pods are more "
		    "than one Slurm job gathers here (1 to %d); split the gang",
		    (long long)json_integer_value(min), WORKLOAD_MAX_GANG);
		return;
	}
	/* workloadRef is immutable: checked once, when the group is made. */
	wl = k8s_obj_str(pg, "spec.workloadRef.workloadName");
	if (strcmp(op, "CREATE") != 0 || wl == NULL)
		return;
	tmpl = k8s_obj_str(pg, "spec.workloadRef.templateName");
	/* The Job controller makes the Workload just before: wait for it. */
	w = owners_get(rc->owners, OWN_WORKLOAD, ns, wl, rc->owner_wait_ms);
	if (w == NULL)
		validate_deny(r,
		    "spec.workloadRef.workloadName: Workload %s/%s does not "
		    "exist; create the Workload first, or leave workloadRef "
		    "out for a PodGroup of its own",
		    ns != NULL ? ns : "", wl);
	else if (tmpl != NULL && !validate_has_template(w, tmpl))
		validate_deny(r,
		    "spec.workloadRef.templateName: Workload %s/%s has no "
		    "pod group template \"%.64s\" (spec.podGroupTemplates"
		    "[].name, or compositePodGroupTemplates[]"
		    ".podGroupTemplates[].name)",
		    ns != NULL ? ns : "", wl, tmpl);
	json_decref(w);
}

void
validate_inherited(const json_t *obj, const json_t *old, const char *kind,
    const struct review_conf *rc, struct review_result *r)
{
	struct translate_conf tc;
	json_t		     *ns;
	char		      err[512];

	if (json_is_object(old) &&
	    json_equal(k8s_obj_get(obj, "metadata.annotations"),
		k8s_obj_get(old, "metadata.annotations")))
		return;
	ns = owners_get(rc->owners, OWN_NAMESPACE, NULL, k8s_obj_namespace(obj),
	    rc->owner_wait_ms);
	validate_tconf(rc, &tc);
	if (translate_owner_check(obj, ns, &tc, err, sizeof(err)) == -1)
		validate_deny(r,
		    "%s %s/%s: its pods inherit its annotations: %s", kind,
		    k8s_obj_namespace(obj) != NULL ? k8s_obj_namespace(obj) :
						     "",
		    k8s_obj_name(obj) != NULL ? k8s_obj_name(obj) : "", err);
	json_decref(ns);
}
