/*
 * The mutation of a pod in an enabled namespace, as one idempotent JSON
 * Patch (a second pass over its own output adds nothing):
 * - schedulerName, a preset nodeName on CREATE, the managed-node toleration;
 * - the gang: pod-group label and min-member annotation from the owner
 *   (PodGroup CR, LeaderWorkerSet, JobSet, Indexed Job), with the
 *   scheduler's own grouping rules (workload_group);
 * - GPU limits as the gres annotation, typed by the config's gresTypes;
 * - a gang with gangGpuSwitchThreshold GPUs and no topology request of its
 *   own: the switches annotation (one leaf switch, a bounded wait); a
 *   preferred topology the table lacks: a warning;
 * - JobSet's and LeaderWorkerSet's exclusive placement in our own form
 *   (topology_exclusive).
 * Runs inside a request; owners come from the watch-based store.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "k8s.h"
#include "xmalloc.h"
#include "policy.h"
#include "fit.h"
#include "topology.h"
#include "admission.h"

/* JSON Pointer escaping of one path token (RFC 6901): ~ -> ~0, / -> ~1. */
char *
mutate_pointer_escape(const char *token)
{
	struct buf b;

	buf_init(&b);
	for (; *token != '\0'; token++) {
		if (*token == '~')
			buf_addstr(&b, "~0");
		else if (*token == '/')
			buf_addstr(&b, "~1");
		else
			buf_add(&b, token, 1);
	}
	return (buf_release(&b));
}

static void
mutate_warn(struct review_result *r, const char *fmt, ...)
{
	va_list ap;
	char   *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	if (r->warnings == NULL)
		r->warnings = json_array();
	json_array_append_new(r->warnings, json_string(msg));
	free(msg);
}

#define ANN_GRES      ANN_PREFIX "gres"
#define ANN_SWITCHES  ANN_PREFIX "switches"
#define ANN_MAX_NODES ANN_PREFIX "max-nodes"

/* Metadata the patch adds, collected so each map is created once. */
struct meta_adds {
	json_t *labels;
	json_t *annotations;
};

static void
patch_op(json_t *patch, const char *op, const char *path, json_t *value)
{
	json_t *o = json_pack("{s:s, s:s}", "op", op, "path", path);

	if (value != NULL)
		json_object_set_new(o, "value", value);
	json_array_append_new(patch, o);
}

/*
 * spec.nodeName as a required node affinity: matchFields metadata.name In
 * [node], ANDed into each of the pod's own terms (fit_restrict).
 */
static void
mutate_node_name(struct review_result *r, const json_t *pod, const char *node)
{
	json_t *names = json_pack("[s]", node);
	json_t *limited = fit_restrict(pod, names);
	json_t *na = json_incref(k8s_obj_get(limited,
	    "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution"));

	patch_op(r->patch, "remove", "/spec/nodeName", NULL);
	if (k8s_obj_get(pod, "spec.affinity") == NULL)
		patch_op(r->patch, "add", "/spec/affinity",
		    json_pack("{s:{s:o}}", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution", na));
	else if (k8s_obj_get(pod, "spec.affinity.nodeAffinity") == NULL)
		patch_op(r->patch, "add", "/spec/affinity/nodeAffinity",
		    json_pack("{s:o}",
			"requiredDuringSchedulingIgnoredDuringExecution", na));
	else
		patch_op(r->patch, "add",
		    "/spec/affinity/nodeAffinity/"
		    "requiredDuringSchedulingIgnoredDuringExecution",
		    na);
	json_decref(limited);
	json_decref(names);
	mutate_warn(r,
	    "spec.nodeName: %s is placed through Slurm, so the node is kept as "
	    "a required node affinity (matchFields metadata.name In [%s]): "
	    "the pod runs there or waits",
	    node, node);
}

/* Adds the collected keys under /metadata/<map>. */
static void
patch_meta(json_t *patch, const json_t *pod, const char *map, json_t *adds)
{
	const char *key;
	json_t	   *v;
	char	   *esc, *path;

	if (json_object_size(adds) == 0)
		return;
	if (json_object_get(k8s_obj_get(pod, "metadata"), map) == NULL) {
		xasprintf(&path, "/metadata/%s", map);
		patch_op(patch, "add", path, json_incref(adds));
		free(path);
		return;
	}
	json_object_foreach (adds, key, v) {
		esc = mutate_pointer_escape(key);
		xasprintf(&path, "/metadata/%s/%s", map, esc);
		patch_op(patch, "add", path, json_incref(v));
		free(esc);
		free(path);
	}
}

/*
 * The gang: writes the pod-group label and min-member annotation the
 * scheduler would derive, so the pod says what it is part of.  Returns the
 * gang size (0 for a single pod or when unknown).
 */
static int
mutate_gang(const json_t *pod, const struct review_conf *rc,
    struct meta_adds *adds)
{
	struct owners_lookup ol;
	struct group_id	     gid;
	char		     err[256], n[16];
	int		     size;

	/* A pod-group label without min-member is sized by its PodGroup. */
	owners_lookup_init(&ol, rc->owners, rc->owner_wait_ms,
	    k8s_obj_label(pod, LABEL_POD_GROUP) != NULL ? rc->owner_wait_ms :
							  0);
	if (workload_group(pod, &ol.lk, &gid, err, sizeof(err)) == -1 ||
	    !gid.gang)
		return (0); /* bad input is the validating webhook's */
	size = workload_gang_size(k8s_obj_namespace(pod), gid.name,
	    gid.min_member, gid.sized_by, &ol.lk);
	/* Kubernetes' own PodGroup says it all: nothing to add. */
	if (gid.sized_by == WORKLOAD_SCHED_PODGROUP)
		return (size);
	/*
	 * A JobSet not seen yet: its stages (dependsOn) are unknown, so the
	 * label could name the wrong gang; the scheduler groups it itself.
	 */
	if (size == 0 && k8s_obj_label(pod, JOBSET_LABEL_NAME) != NULL)
		return (0);
	if (k8s_obj_label(pod, LABEL_POD_GROUP) == NULL && *gid.name != '\0' &&
	    k8s_label_value_ok(gid.name))
		json_object_set_new(adds->labels, LABEL_POD_GROUP,
		    json_string(gid.name));
	if (size > 0 && k8s_obj_annotation(pod, ANN_MIN_MEMBER) == NULL) {
		snprintf(n, sizeof(n), "%d", size);
		json_object_set_new(adds->annotations, ANN_MIN_MEMBER,
		    json_string(n));
	}
	return (size);
}

/* GPUs the pod asks for: the sum of its containers' GPU limits. */
static int64_t
mutate_gpus(const json_t *pod, const char **resource)
{
	static const char *const res[] = { "nvidia.com/gpu", "amd.com/gpu" };
	const json_t		*c;
	const char		*v;
	int64_t			 n, total = 0;
	size_t			 i, r;

	json_array_foreach (k8s_obj_get(pod, "spec.containers"), i, c) {
		for (r = 0; r < sizeof(res) / sizeof(res[0]); r++) {
			v = json_string_value(
			    json_object_get(k8s_obj_get(c, "resources.limits"),
				res[r]));
			if (v != NULL && k8s_quantity_value(v, &n) == 0 &&
			    n > 0 && total <= INT32_MAX) {
				total += n;
				*resource = res[r];
			}
		}
	}
	return (total);
}

/* The configured GRES type whose nodeSelector the pod's matches, or NULL. */
static const char *
mutate_gres_type(const json_t *pod, const struct config *c)
{
	const json_t *sel = k8s_obj_get(pod, "spec.nodeSelector"), *v;
	const char   *key, *have;
	size_t	      i;
	int	      all;

	for (i = 0; sel != NULL && i < c->ngres_types; i++) {
		all = 1;
		json_object_foreach (c->gres_types[i].selector, key, v) {
			have = json_string_value(json_object_get(sel, key));
			if (have == NULL ||
			    strcmp(have, json_string_value(v)) != 0) {
				all = 0;
				break;
			}
		}
		if (all)
			return (c->gres_types[i].type);
	}
	return (NULL);
}

/* GPU limits become the gres annotation, unless the user wrote one. */
static int64_t
mutate_gres(const json_t *pod, const struct review_conf *rc,
    struct meta_adds *adds)
{
	const char *type, *res = NULL;
	char	    gres[128];
	int64_t	    gpus;

	if (k8s_obj_annotation(pod, ANN_GRES) != NULL)
		return (0);
	if ((gpus = mutate_gpus(pod, &res)) <= 0)
		return (0);
	if ((type = mutate_gres_type(pod, rc->config)) != NULL)
		snprintf(gres, sizeof(gres), "gpu:%s:%lld", type,
		    (long long)gpus);
	else
		snprintf(gres, sizeof(gres), "gpu:%lld", (long long)gpus);
	json_object_set_new(adds->annotations, ANN_GRES, json_string(gres));
	return (gpus);
}

/*
 * Topology: a request in any of its forms (topology.c) is the scheduler's
 * to turn into Slurm's switches or segments; here a preference for a
 * level the table does not have gets a warning.  Without one, a gang
 * with at least gangGpuSwitchThreshold GPUs prefers one leaf switch with
 * a bounded wait ("1@MIN"), unless the user set switches.
 */
static void
mutate_topology(const json_t *pod, const struct review_conf *rc, int gang,
    int64_t gpus_per_pod, struct meta_adds *adds, struct review_result *r)
{
	const struct config	       *c = rc->config;
	const struct config_topo_level *lvl;
	struct topology_req		req;
	char				sw[32], err[256];

	if (topology_request(pod, NULL, 0, &req, err, sizeof(err)) == 0 &&
	    req.key != NULL) {
		/* An unknown required level is the validating webhook's. */
		lvl = config_topo_find(c, req.key);
		if (!req.required && lvl == NULL)
			mutate_warn(r,
			    "%s: \"%.64s\" is not a level in "
			    "slurm-bridge's topology table; the preference is "
			    "ignored",
			    req.from, req.key);
		if (req.exclusive && lvl != NULL && lvl->kind != TOPO_BLOCK)
			mutate_warn(r,
			    "%s: the gang is held in one value of %.64s, but "
			    "Slurm keeps other jobs out of a domain only at a "
			    "block level (--exclusive=topo): other jobs may "
			    "share this one",
			    req.from, req.key);
		return;
	}
	if (k8s_obj_annotation(pod, ANN_SWITCHES) != NULL)
		return;
	snprintf(sw, sizeof(sw), "1@%d", c->preferred_wait_minutes);
	if (c->gang_gpu_switch_threshold > 0 && gang > 1 &&
	    gpus_per_pod * gang >= c->gang_gpu_switch_threshold)
		json_object_set_new(adds->annotations, ANN_SWITCHES,
		    json_string(sw));
}

/*
 * JobSet's exclusive placement, LeaderWorkerSet's per subgroup: the same
 * request in slurm-bridge's own form, and their annotation and affinity
 * terms dropped (topology_exclusive says why), so that neither their
 * webhooks nor ours hold the gang back, and theirs add nothing again.
 */
static void
mutate_exclusive(const json_t *pod, const struct review_conf *rc,
    struct meta_adds *adds, struct review_result *r)
{
	static const char *const kinds[] = { "podAffinity", "podAntiAffinity" };
	struct owners_lookup	 ol;
	struct topology_exclusive x;
	json_t			 *layers[WORKLOAD_LAYERS], *list;
	size_t			  nl, k, i, dropped = 0;
	char			  err[256], n[16], path[256], *esc;
	int			  rc_x;

	owners_lookup_init(&ol, rc->owners, rc->owner_wait_ms, 0);
	nl = workload_layers(pod, &ol.lk, layers);
	rc_x = topology_exclusive(pod, layers, nl, &x, err, sizeof(err));
	workload_layers_free(layers, nl);
	if (rc_x != 1)
		return; /* bad input is the validating webhook's */
	if (k8s_obj_annotation(pod, ANN_REQUIRED_TOPOLOGY) == NULL &&
	    k8s_obj_annotation(pod, ANN_EXCLUSIVE_TOPOLOGY) == NULL) {
		json_object_set_new(adds->annotations, ANN_EXCLUSIVE_TOPOLOGY,
		    json_string(x.key));
		if (x.slice > 0 &&
		    k8s_obj_annotation(pod, ANN_TOPOLOGY_SLICE) == NULL) {
			snprintf(n, sizeof(n), "%u", x.slice);
			json_object_set_new(adds->annotations,
			    ANN_TOPOLOGY_SLICE, json_string(n));
		}
	}
	esc = mutate_pointer_escape(x.ann);
	snprintf(path, sizeof(path), "/metadata/annotations/%s", esc);
	free(esc);
	patch_op(r->patch, "remove", path, NULL);
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path),
		    "spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution",
		    kinds[k]);
		list = k8s_obj_get(pod, path);
		for (i = json_array_size(list); i-- > 0;) {
			if (!topology_exclusive_term(json_array_get(list, i),
				&x))
				continue;
			snprintf(path, sizeof(path),
			    "/spec/affinity/%s/"
			    "requiredDuringSchedulingIgnoredDuringExecution/%zu",
			    kinds[k], i);
			patch_op(r->patch, "remove", path, NULL);
			dropped++;
		}
	}
	mutate_warn(r,
	    "annotation %s: slurm-bridge places the gang through Slurm with "
	    "each %s (%u pods) in one value of %.64s (" ANN_EXCLUSIVE_TOPOLOGY
	    ", " ANN_TOPOLOGY_SLICE "); the annotation and %zu affinity "
	    "term%s of its placement are dropped",
	    x.ann,
	    strcmp(x.label, "jobset.sigs.k8s.io/job-key") == 0 ? "child Job" :
								 "subgroup",
	    x.slice, x.key, dropped, dropped == 1 ? "" : "s");
}

/* Is sched one of the schedulers whose pods we place (--adopt-scheduler)? */
static int
mutate_adopted(const struct review_conf *rc, const char *sched)
{
	size_t i;

	for (i = 0;
	     rc->adopt_schedulers != NULL && rc->adopt_schedulers[i] != NULL;
	     i++)
		if (strcmp(rc->adopt_schedulers[i], sched) == 0)
			return (1);
	return (0);
}

void
mutate_pod(const json_t *pod, const char *operation,
    const struct review_conf *rc, struct review_result *r)
{
	struct meta_adds adds;
	const char	*sched, *node, *gres;
	json_t		*tol;
	int64_t		 gpus;
	int		 gang;

	r->patch = json_array();
	sched = k8s_obj_str(pod, "spec.schedulerName");
	if (sched == NULL)
		patch_op(r->patch, "add", "/spec/schedulerName",
		    json_string(rc->config->scheduler_name));
	else if (strcmp(sched, "default-scheduler") == 0 ||
	    mutate_adopted(rc, sched))
		patch_op(r->patch, "replace", "/spec/schedulerName",
		    json_string(rc->config->scheduler_name));
	else if (strcmp(sched, rc->config->scheduler_name) != 0)
		return; /* another scheduler's pod: leave it be */
	/*
	 * A preset node would bypass Slurm: the user's intent is kept as a
	 * required node affinity to that node (as the DaemonSet controller
	 * writes it), so Slurm places the pod there or it waits.
	 */
	node = k8s_obj_str(pod, "spec.nodeName");
	if (strcmp(operation, "CREATE") == 0 && node != NULL && *node != '\0')
		mutate_node_name(r, pod, node);
	/* No effect named: it tolerates the taint whichever effect it has. */
	if (!translate_tolerates(pod, rc->config->taint_effect)) {
		tol = json_pack("{s:s, s:s}", "key", MANAGED_TAINT_KEY,
		    "operator", "Exists");
		if (k8s_obj_get(pod, "spec.tolerations") == NULL)
			patch_op(r->patch, "add", "/spec/tolerations",
			    json_pack("[o]", tol));
		else
			patch_op(r->patch, "add", "/spec/tolerations/-", tol);
	}
	if (strcmp(operation, "CREATE") != 0)
		return;
	adds.labels = json_object();
	adds.annotations = json_object();
	gang = mutate_gang(pod, rc, &adds);
	gpus = mutate_gres(pod, rc, &adds);
	if (gpus == 0 && (gres = k8s_obj_annotation(pod, ANN_GRES)) != NULL)
		gpus = translate_gres_gpus(gres);
	mutate_topology(pod, rc, gang, gpus, &adds, r);
	mutate_exclusive(pod, rc, &adds, r);
	patch_meta(r->patch, pod, "labels", adds.labels);
	patch_meta(r->patch, pod, "annotations", adds.annotations);
	json_decref(adds.labels);
	json_decref(adds.annotations);
}
