/*
 * Topology requests: what a gang asks (topology_request), what Slurm is
 * asked for it (topology_apply) and the check before a Binding
 * (topology_holds).  See topology.h for the sources, in order.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "workload.h"
#include "topology.h"

/*
 * A required switch waits as long as Slurm lets it: slurmctld caps the
 * wait at SchedulerParameters=max_switch_wait (300 s unless the site
 * raises it), and the check before the Binding refuses an allocation
 * that spans switches once the wait is over.
 */
#define TOPO_REQUIRED_WAIT_S (525600u * 60u)

#define KUEUE_REQUIRED_TOPOLOGY	 "kueue.x-k8s.io/podset-required-topology"
#define KUEUE_PREFERRED_TOPOLOGY "kueue.x-k8s.io/podset-preferred-topology"
#define KUEUE_SLICE_TOPOLOGY	 "kueue.x-k8s.io/podset-slice-required-topology"
#define KUEUE_SLICE_SIZE	 "kueue.x-k8s.io/podset-slice-size"
#define LWS_EXCLUSIVE		 "leaderworkerset.sigs.k8s.io/exclusive-topology"
#define LWS_SUB_EXCLUSIVE \
	"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
#define LWS_SUB_SIZE	  "leaderworkerset.sigs.k8s.io/subgroup-size"
#define JOBSET_EXCLUSIVE  "alpha.jobset.sigs.k8s.io/exclusive-topology"
#define PODGROUP_TOPOLOGY "spec.schedulingConstraints.topology[0].key"

/* The pod's annotation, else its most specific layer's; NULL. */
static const char *
topology_ann(const json_t *pod, json_t *const *layers, size_t n,
    const char *key)
{
	const char *v;

	if ((v = k8s_obj_annotation(pod, key)) != NULL)
		return (v);
	while (n > 0)
		if ((v = k8s_obj_annotation(layers[--n], key)) != NULL)
			return (v);
	return (NULL);
}

/*
 * A label key: [DNS-subdomain/]name, the name as a label value but not
 * empty.
 */
static int
topology_key_ok(const char *k)
{
	const char *name = strrchr(k, '/'), *p;

	name = name != NULL ? name + 1 : k;
	if (name - k > 254 || *name == '\0' || !k8s_label_value_ok(name))
		return (0);
	for (p = k; p < name; p++)
		if (!isalnum((unsigned char)*p) && strchr("-_./", *p) == NULL)
			return (0);
	return (name == k || (name - k > 1 && isalnum((unsigned char)k[0])));
}

/* A pod count from 1 to WORKLOAD_MAX_GANG, or 0. */
static uint32_t
topology_count(const char *v)
{
	long n = workload_count(v, 1, WORKLOAD_MAX_GANG);

	return (n > 0 ? (uint32_t)n : 0);
}

/* A (Composite)PodGroup's spec.schedulingConstraints.topology[0].key. */
static const char *
topology_group_key(const json_t *pg)
{
	return (json_string_value(json_object_get(
	    json_array_get(k8s_obj_get(pg,
			       "spec.schedulingConstraints.topology"),
		0),
	    "key")));
}

/* The layer of that kind (apiVersion group prefix too), or NULL. */
static const json_t *
topology_layer(json_t *const *layers, size_t n, const char *group,
    const char *kind)
{
	const char *av, *k;

	while (n > 0) {
		n--;
		av = json_string_value(
		    json_object_get(layers[n], "apiVersion"));
		k = json_string_value(json_object_get(layers[n], "kind"));
		if (av != NULL && k != NULL && strcmp(k, kind) == 0 &&
		    strncmp(av, group, strlen(group)) == 0 &&
		    av[strlen(group)] == '/')
			return (layers[n]);
	}
	return (NULL);
}

/* A JobSet pod's child Job's size: its replicated job's parallelism. */
static uint32_t
topology_jobset_slice(const json_t *pod, json_t *const *layers, size_t n)
{
	const json_t *js = topology_layer(layers, n, "jobset.x-k8s.io",
			 "JobSet"),
		     *rj, *par;
	const char *name = k8s_obj_label(pod, JOBSET_LABEL_RJ);
	size_t	    i;

	if (js == NULL || name == NULL)
		return (0);
	json_array_foreach (k8s_obj_get(js, "spec.replicatedJobs"), i, rj) {
		if (!json_is_string(json_object_get(rj, "name")) ||
		    strcmp(json_string_value(json_object_get(rj, "name")),
			name) != 0)
			continue;
		par = k8s_obj_get(rj, "template.spec.parallelism");
		if (par == NULL)
			return (1);
		return (json_is_integer(par) && json_integer_value(par) >= 1 &&
			    json_integer_value(par) <= WORKLOAD_MAX_GANG ?
			(uint32_t)json_integer_value(par) :
			0);
	}
	return (0);
}

/*
 * The first topology annotation the pod or its workload layers carry
 * (ours, Kueue's, LeaderWorkerSet's, JobSet's), and its slice.  -1 with
 * err on a bad slice size, or LeaderWorkerSet's whole-group exclusive
 * placement, which cannot be placed.
 */
static int
topology_from_annotations(const json_t *pod, json_t *const *layers,
    size_t nlayers, struct topology_req *req, char *err, size_t errlen)
{
	/* Each source: its annotation, the phrase messages name it by,
	 * whether it is required, and its slice's annotation (needed: the
	 * source means nothing without it). */
#define TOPO_ANN(k) k, "annotation " k
	static const struct {
		const char *key, *from, *size;
		int	    required, size_needed, exclusive;
	} anns[] = {
		{ TOPO_ANN(ANN_REQUIRED_TOPOLOGY), ANN_TOPOLOGY_SLICE, 1, 0,
		    0 },
		{ TOPO_ANN(ANN_EXCLUSIVE_TOPOLOGY), ANN_TOPOLOGY_SLICE, 1, 0,
		    1 },
		{ TOPO_ANN(ANN_PREFIX "preferred-topology"), ANN_TOPOLOGY_SLICE,
		    0, 0, 0 },
		{ TOPO_ANN(KUEUE_REQUIRED_TOPOLOGY), NULL, 1, 0, 0 },
		{ TOPO_ANN(KUEUE_SLICE_TOPOLOGY), KUEUE_SLICE_SIZE, 1, 1, 0 },
		{ TOPO_ANN(KUEUE_PREFERRED_TOPOLOGY), NULL, 0, 0, 0 },
		{ TOPO_ANN(LWS_EXCLUSIVE), NULL, 1, 0, 1 },
		{ TOPO_ANN(LWS_SUB_EXCLUSIVE), LWS_SUB_SIZE, 1, 1, 1 },
		{ TOPO_ANN(JOBSET_EXCLUSIVE), NULL, 1, 0, 1 },
	};
#undef TOPO_ANN
	const char *v, *sz;
	size_t	    i;

	for (i = 0; i < sizeof(anns) / sizeof(anns[0]); i++) {
		if ((v = topology_ann(pod, layers, nlayers, anns[i].key)) ==
		    NULL)
			continue;
		req->key = v;
		req->from = anns[i].from;
		req->required = anns[i].required;
		req->exclusive = anns[i].exclusive;
		sz = anns[i].size != NULL ?
		    topology_ann(pod, layers, nlayers, anns[i].size) :
		    NULL;
		if ((sz != NULL || anns[i].size_needed) &&
		    (req->slice = topology_count(sz)) == 0) {
			snprintf(err, errlen,
			    "annotation %s: \"%.32s\" is not a number of pods "
			    "from 1 to %d (%s asks for each slice of that many "
			    "pods in one domain)",
			    anns[i].size, sz != NULL ? sz : "",
			    WORKLOAD_MAX_GANG, anns[i].from);
			return (-1);
		}
		if (strcmp(anns[i].key, JOBSET_EXCLUSIVE) == 0)
			req->slice = topology_jobset_slice(pod, layers,
			    nlayers);
		if (strcmp(anns[i].key, LWS_EXCLUSIVE) == 0) {
			snprintf(err, errlen,
			    "annotation " LWS_EXCLUSIVE ": LeaderWorkerSet "
			    "creates a group's workers only once its leader is "
			    "bound, and slurm-bridge binds a gang only whole, "
			    "so the group would wait for good; set " ANN_EXCLUSIVE_TOPOLOGY
			    ": %.64s on the "
			    "LeaderWorkerSet instead (its annotations are read "
			    "for every pod of the group)",
			    v);
			return (-1);
		}
		break;
	}
	return (0);
}

/*
 * The topology of the pod's Kubernetes PodGroup, or of the
 * CompositePodGroup around it, which the bridge places as one job (*from
 * says which).  NULL when neither has one; -1 in *bad, with err, when a
 * child names a domain of its own.
 */
static const char *
topology_from_podgroups(json_t *const *layers, size_t nlayers,
    const char **from, int *bad, char *err, size_t errlen)
{
	const json_t *pg, *cpg;
	const char   *v, *cv;

	*from = "PodGroup " PODGROUP_TOPOLOGY;
	pg = topology_layer(layers, nlayers, "scheduling.k8s.io", "PodGroup");
	v = topology_group_key(pg);
	cpg = topology_layer(layers, nlayers, "scheduling.k8s.io",
	    "CompositePodGroup");
	if (cpg == NULL ||
	    k8s_obj_get(cpg, "spec.schedulingPolicy.basic") != NULL)
		return (v);
	/*
	 * A composite gang is one Slurm job: the composite's domain holds for
	 * all of it, and a child's of its own cannot be placed apart (unless
	 * it names the same key).
	 */
	cv = topology_group_key(cpg);
	if (v != NULL && (cv == NULL || strcmp(v, cv) != 0)) {
		snprintf(err, errlen,
		    "PodGroup %.63s " PODGROUP_TOPOLOGY
		    ": \"%.64s\" inside CompositePodGroup %.63s, which the "
		    "bridge places as one Slurm job: a topology of one child "
		    "PodGroup alone cannot be placed; set it on the "
		    "CompositePodGroup (%s)",
		    k8s_obj_name(pg), v, k8s_obj_name(cpg),
		    cv != NULL ? cv : "it has none");
		*bad = -1;
		return (NULL);
	}
	*from = "CompositePodGroup " PODGROUP_TOPOLOGY;
	return (cv);
}

int
topology_request(const json_t *pod, json_t *const *layers, size_t nlayers,
    struct topology_req *req, char *err, size_t errlen)
{
	const char *v, *from;
	int	    bad = 0;

	memset(req, 0, sizeof(*req));
	if (topology_from_annotations(pod, layers, nlayers, req, err, errlen) ==
	    -1)
		return (-1);
	v = topology_from_podgroups(layers, nlayers, &from, &bad, err, errlen);
	if (bad)
		return (-1);
	if (req->key == NULL && v != NULL) {
		req->key = v;
		req->from = from;
		req->required = 1;
	}
	if (req->key != NULL && !topology_key_ok(req->key)) {
		snprintf(err, errlen,
		    "%s: \"%.64s\" is not a node label key ([prefix/]name, "
		    "e.g. topology.kubernetes.io/rack)",
		    req->from, req->key);
		return (-1);
	}
	return (0);
}

/*
 * Exclusive placement as JobSet and LeaderWorkerSet's subgroups state it:
 * the annotation, the hash label their webhooks' affinity terms select on
 * (their group's key, In for the group, NotIn for the others), and the
 * annotation of a group's size (NULL: a JobSet's child Job, its
 * parallelism).
 */
static const struct {
	const char *ann, *label, *size;
} topology_exclusives[] = {
	{ JOBSET_EXCLUSIVE, "jobset.sigs.k8s.io/job-key", NULL },
	{ LWS_SUB_EXCLUSIVE, "leaderworkerset.sigs.k8s.io/subgroup-key",
	    LWS_SUB_SIZE },
};

int
topology_exclusive(const json_t *pod, json_t *const *layers, size_t nlayers,
    struct topology_exclusive *x, char *err, size_t errlen)
{
	const char *v;
	size_t	    i;

	memset(x, 0, sizeof(*x));
	for (i = 0;
	     i < sizeof(topology_exclusives) / sizeof(topology_exclusives[0]);
	     i++) {
		if ((v = k8s_obj_annotation(pod, topology_exclusives[i].ann)) ==
		    NULL)
			continue;
		if (!topology_key_ok(v)) {
			snprintf(err, errlen,
			    "annotation %s: \"%.64s\" is not a node label key "
			    "([prefix/]name, e.g. topology.kubernetes.io/rack)",
			    topology_exclusives[i].ann, v);
			return (-1);
		}
		x->ann = topology_exclusives[i].ann;
		x->label = topology_exclusives[i].label;
		x->key = v;
		x->slice = topology_exclusives[i].size == NULL ?
		    topology_jobset_slice(pod, layers, nlayers) :
		    topology_count(
			k8s_obj_annotation(pod, topology_exclusives[i].size));
		return (1);
	}
	return (0);
}

int
topology_exclusive_term(const json_t *term, const struct topology_exclusive *x)
{
	const json_t *e;
	const char   *tk = json_string_value(
	      json_object_get(term, "topologyKey"));
	size_t i;

	if (tk == NULL || strcmp(tk, x->key) != 0)
		return (0);
	json_array_foreach (k8s_obj_get(term, "labelSelector.matchExpressions"),
	    i, e) {
		if (json_is_string(json_object_get(e, "key")) &&
		    strcmp(json_string_value(json_object_get(e, "key")),
			x->label) == 0)
			return (1);
	}
	return (0);
}

int
topology_apply(const struct topology_req *req, const struct config *c,
    struct jobspec *js, char *err, size_t errlen)
{
	const struct config_topo_level *lvl;
	uint32_t			n = js->ntasks, slice = req->slice;

	if (req->key == NULL || n == 0)
		return (0);
	if ((lvl = config_topo_find(c, req->key)) == NULL) {
		/* A preference Slurm cannot be given: the webhook warns. */
		if (!req->required)
			return (0);
		snprintf(err, errlen,
		    "%s: \"%.64s\" is not a level in slurm-bridge's "
		    "topology table (config topology[].nodeLabel); use one of "
		    "its node labels or drop the requirement",
		    req->from, req->key);
		return (-1);
	}
	if (slice != 0 && (slice > n || n % slice != 0)) {
		snprintf(err, errlen,
		    "%s: slices of %u pods do not divide the gang's %u pods "
		    "(each slice must fill its domain's share)",
		    req->from, slice, n);
		return (-1);
	}
	if (slice == n)
		slice = 0;
	if (slice != 0 && lvl->kind != TOPO_BLOCK && lvl->kind != TOPO_NODE) {
		snprintf(err, errlen,
		    "%s: slices of %u pods, each in one value of %.64s: "
		    "Slurm can hold each slice in one domain only at a block "
		    "level (topology/block segments) or a node level, and "
		    "this one is a %s level",
		    req->from, slice, req->key,
		    lvl->kind == TOPO_SWITCH ? "switch" : "label-only");
		return (-1);
	}
	js->topo_key = xstrdup(req->key);
	js->topo_kind = (int)lvl->kind;
	js->topo_required = req->required;
	js->topo_slice = slice;
	/* Slurm keeps other jobs out of a job's blocks (--exclusive=topo). */
	js->topo_exclusive = req->exclusive && lvl->kind == TOPO_BLOCK;
	switch (lvl->kind) {
	case TOPO_SWITCH:
		/*
		 * No more nodes than pods: with no node count at all,
		 * slurmctld 22.05 leaves a switch-bound job pending where a
		 * leaf switch has the room (measured on the stack).
		 */
		if (js->max_nodes == 0)
			js->max_nodes = n;
		if (js->req_switch == 0) {
			js->req_switch = 1;
			js->wait4switch = req->required ?
			    TOPO_REQUIRED_WAIT_S :
			    (uint32_t)c->preferred_wait_minutes * 60;
		}
		break;
	case TOPO_BLOCK:
		/* Slurm's block plugin packs a job into few blocks anyway. */
		if (!req->required)
			break;
		if (js->exclusive)
			js->segment_size = (uint16_t)(slice != 0 ? slice : n);
		else if (slice != 0) {
			snprintf(err, errlen,
			    "%s: slices of %u pods need whole-node pods "
			    "(annotation " ANN_PREFIX "exclusive: \"true\"): "
			    "a shared gang's pods are packed by CPUs, so Slurm "
			    "cannot be told how many nodes a slice takes",
			    req->from, slice);
			return (-1);
		}
		break;
	case TOPO_NODE:
		if (!req->required)
			break;
		if (js->exclusive && (slice != 0 ? slice : n) > 1) {
			snprintf(err, errlen,
			    "%s: %.64s is a node level, and an exclusive "
			    "gang takes one node per pod",
			    req->from, req->key);
			return (-1);
		}
		if (js->max_nodes == 0)
			js->max_nodes = slice != 0 ? n / slice : 1;
		break;
	case TOPO_LABEL:
		/* exclude.c keeps the gang within one value. */
		break;
	}
	return (0);
}

int
topology_holds(const char *key, uint32_t slice, const json_t *const *nodes,
    size_t n, char *why, size_t len)
{
	const char *first = NULL, *v;
	size_t	    i, per = slice != 0 ? slice : n;

	for (i = 0; i < n; i++) {
		v = k8s_obj_label(nodes[i], key);
		if (v == NULL) {
			snprintf(why, len, "node %.63s has no label %.64s",
			    k8s_obj_name(nodes[i]), key);
			return (0);
		}
		if (i % per == 0)
			first = v;
		else if (strcmp(first, v) != 0) {
			snprintf(why, len,
			    "%s %.63s is under %.64s=%.63s, node %.63s under "
			    "%.63s",
			    slice != 0 ? "in one slice, node" : "node",
			    k8s_obj_name(nodes[i - i % per]), key, first,
			    k8s_obj_name(nodes[i]), v);
			return (0);
		}
	}
	return (1);
}

/* Adds one disagreement to msg ("; " between), counting it in *bad. */
static void topology_disagree(char *msg, size_t len, size_t *bad,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
topology_disagree(char *msg, size_t len, size_t *bad, const char *fmt, ...)
{
	va_list ap;
	size_t	used = strlen(msg);

	if ((*bad)++ < 4 && used + 3 < len) {
		if (used > 0)
			used += (size_t)snprintf(msg + used, len - used, "; ");
		va_start(ap, fmt);
		vsnprintf(msg + used, len - used, fmt, ap);
		va_end(ap);
	}
}

/* by[outer][inner] = node, the first node seen for the pair. */
static void
topology_pair(json_t *by, const char *outer, const char *inner,
    const char *node)
{
	json_t *m;

	if ((m = json_object_get(by, outer)) == NULL)
		json_object_set_new(by, outer, m = json_object());
	if (json_object_get(m, inner) == NULL)
		json_object_set_new(m, inner, json_string(node));
}

/*
 * The first two inner keys of m, with their nodes; 0 when it has fewer.
 * jansson keeps an object's keys in the order they were set.
 */
static int
topology_two(const json_t *m, const char *k[2], const char *node[2])
{
	const char *key;
	json_t	   *v;
	int	    i = 0;

	json_object_foreach ((json_t *)(uintptr_t)m, key, v) {
		k[i] = key;
		node[i] = json_string_value(v);
		if (++i == 2)
			return (1);
	}
	return (0);
}

size_t
topology_agrees(const char *key, const char *what, const json_t *domains,
    const json_t *const *nodes, const char *const *snames, size_t n, char *msg,
    size_t len)
{
	json_t	   *by_val = json_object(), *by_dom = json_object(), *m;
	const char *val, *dom, *k[2], *at[2];
	size_t	    i, bad = 0;

	*msg = '\0';
	for (i = 0; i < n; i++) {
		val = k8s_obj_label(nodes[i], key);
		dom = json_string_value(json_object_get(domains, snames[i]));
		if (val == NULL && dom == NULL)
			continue;
		if (val == NULL) {
			topology_disagree(msg, len, &bad,
			    "node %.63s has no label %.64s (Slurm's %s %.63s)",
			    k8s_obj_name(nodes[i]), key, what, dom);
			continue;
		}
		if (dom == NULL) {
			topology_disagree(msg, len, &bad,
			    "node %.63s (%.64s=%.63s) is in no Slurm %s",
			    k8s_obj_name(nodes[i]), key, val, what);
			continue;
		}
		topology_pair(by_val, val, dom, k8s_obj_name(nodes[i]));
		topology_pair(by_dom, dom, val, k8s_obj_name(nodes[i]));
	}
	json_object_foreach (by_val, val, m)
		if (topology_two(m, k, at))
			topology_disagree(msg, len, &bad,
			    "%.64s=%.63s spans Slurm's %s %.63s (node %.63s) "
			    "and %.63s (node %.63s)",
			    key, val, what, k[0], at[0], k[1], at[1]);
	json_object_foreach (by_dom, dom, m)
		if (topology_two(m, k, at))
			topology_disagree(msg, len, &bad,
			    "Slurm's %s %.63s holds nodes of %.64s=%.63s "
			    "(node %.63s) and =%.63s (node %.63s)",
			    what, dom, key, k[0], at[0], k[1], at[1]);
	json_decref(by_val);
	json_decref(by_dom);
	return (bad);
}
