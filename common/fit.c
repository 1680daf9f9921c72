/*
 * The placement rule (fit.h): kube-scheduler's Filter plugins, one
 * function each, read from Kubernetes 1.37's
 * pkg/scheduler/framework/plugins and the helpers they call
 * (k8s.io/component-helpers/scheduling/corev1, .../resource).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "fit.h"
#include "policy.h"

/* The kube-scheduler reason texts (each plugin's ErrReason). */
#define WHY_NODE_NAME	  "node(s) didn't match the requested node name"
#define WHY_UNSCHEDULABLE "node(s) were unschedulable"
#define WHY_NOT_READY	  "node(s) were not ready"
#define WHY_AFFINITY	  "node(s) didn't match Pod's node affinity/selector"
#define WHY_PORTS	  "node(s) didn't have free ports for the requested pod ports"
#define WHY_TAINT	  "node(s) had untolerated taint(s)"

/* The Ready condition's status is True. */
static int
fit_ready(const json_t *node)
{
	const json_t *c;
	const char   *type, *status;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "status.conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (type == NULL || strcmp(type, "Ready") != 0)
			continue;
		status = json_string_value(json_object_get(c, "status"));
		return (status != NULL && strcmp(status, "True") == 0);
	}
	/* No conditions at all: a node nobody reports on (kwok sets them). */
	return (0);
}

/* Is s one of the strings in values? */
static int
fit_in(const json_t *values, const char *s)
{
	const json_t *v;
	size_t	      i;

	json_array_foreach (values, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return (1);
	}
	return (0);
}

/*
 * Do all values convert to a selector?  A term with an invalid one
 * matches nothing, NotIn included (component-helpers nodeaffinity).
 */
static int
fit_values_valid(const json_t *values)
{
	const json_t *v;
	size_t	      i;

	json_array_foreach (values, i, v) {
		if (!json_is_string(v) ||
		    !k8s_label_value_ok(json_string_value(v)))
			return (0);
	}
	return (1);
}

/* A decimal integer, all of s; 0, or -1. */
static int
fit_int(const char *s, long long *out)
{
	char *end;

	if (s == NULL || *s == '\0')
		return (-1);
	/* Past int64 is no number, as strconv.ParseInt has it. */
	errno = 0;
	*out = strtoll(s, &end, 10);
	return (*end == '\0' && errno != ERANGE ? 0 : -1);
}

/*
 * One NodeSelectorRequirement against a value (have: the label's value,
 * or the field's; NULL when absent).  Unknown operators match nothing.
 */
static int
fit_requirement(const json_t *x, const char *have)
{
	const char   *op = json_string_value(json_object_get(x, "operator"));
	const json_t *values = json_object_get(x, "values");
	long long     a, b;

	if (op == NULL)
		return (0);
	if ((strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) &&
	    !fit_values_valid(values))
		return (0);
	if (strcmp(op, "In") == 0)
		return (have != NULL && fit_in(values, have));
	if (strcmp(op, "NotIn") == 0)
		return (have == NULL || !fit_in(values, have));
	if (strcmp(op, "Exists") == 0)
		return (have != NULL);
	if (strcmp(op, "DoesNotExist") == 0)
		return (have == NULL);
	if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
		if (json_array_size(values) != 1 || fit_int(have, &a) == -1 ||
		    fit_int(json_string_value(json_array_get(values, 0)), &b) ==
			-1)
			return (0);
		return (op[0] == 'G' ? a > b : a < b);
	}
	return (0);
}

/*
 * A NodeSelectorTerm: its expressions and fields ANDed; a term with
 * neither matches nothing (component-helpers nodeaffinity).
 */
static int
fit_term(const json_t *term, const json_t *node)
{
	const json_t *exprs = json_object_get(term, "matchExpressions");
	const json_t *fields = json_object_get(term, "matchFields");
	const json_t *labels = k8s_obj_get(node, "metadata.labels");
	const json_t *x;
	const char   *key;
	size_t	      i;

	if (json_array_size(exprs) == 0 && json_array_size(fields) == 0)
		return (0);
	json_array_foreach (exprs, i, x) {
		key = json_string_value(json_object_get(x, "key"));
		if (key == NULL ||
		    !fit_requirement(x,
			json_string_value(json_object_get(labels, key))))
			return (0);
	}
	json_array_foreach (fields, i, x) {
		key = json_string_value(json_object_get(x, "key"));
		/* metadata.name is the one field a node selector may name. */
		if (key == NULL || strcmp(key, "metadata.name") != 0 ||
		    !fit_requirement(x, k8s_obj_name(node)))
			return (0);
	}
	return (1);
}

int
fit_affinity(const json_t *pod, const json_t *node)
{
	const json_t *sel = k8s_obj_get(pod, "spec.nodeSelector");
	const json_t *labels = k8s_obj_get(node, "metadata.labels");
	const json_t *req, *terms, *t, *v;
	const char   *k, *have;
	size_t	      i;

	json_object_foreach ((json_t *)(uintptr_t)sel, k, v) {
		have = json_string_value(json_object_get(labels, k));
		if (have == NULL || !json_is_string(v) ||
		    strcmp(have, json_string_value(v)) != 0)
			return (0);
	}
	req = k8s_obj_get(pod,
	    "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution");
	if (req == NULL || json_is_null(req))
		return (1);
	terms = json_object_get(req, "nodeSelectorTerms");
	json_array_foreach (terms, i, t) {
		if (fit_term(t, node))
			return (1);
	}
	return (0);
}

/* The object member key of o, made when absent or not an object. */
static json_t *
fit_child(json_t *o, const char *key)
{
	json_t *c = json_object_get(o, key);

	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, key, c);
	}
	return (c);
}

json_t *
fit_restrict(const json_t *pod, const json_t *names)
{
	const json_t *terms, *t;
	json_t	     *out, *field, *nt, *fields, *na, *obj;

	out = json_deep_copy(pod);
	field = json_pack("{s:s, s:s, s:O}", "key", "metadata.name", "operator",
	    "In", "values", names);
	terms = k8s_obj_get(pod,
	    "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
	na = json_array();
	for (size_t i = 0; i < json_array_size(terms); i++) {
		t = json_array_get(terms, i);
		nt = json_deep_copy(t);
		fields = json_object_get(nt, "matchFields");
		if (!json_is_array(fields)) {
			fields = json_array();
			json_object_set_new(nt, "matchFields", fields);
		}
		json_array_append(fields, field);
		json_array_append_new(na, nt);
	}
	if (json_array_size(na) == 0)
		json_array_append_new(na,
		    json_pack("{s:[O]}", "matchFields", field));
	json_decref(field);
	obj = fit_child(fit_child(fit_child(out, "spec"), "affinity"),
	    "nodeAffinity");
	json_object_set_new(obj,
	    "requiredDuringSchedulingIgnoredDuringExecution",
	    json_pack("{s:o}", "nodeSelectorTerms", na));
	return (out);
}

/* v1helper.TolerationsTolerateTaint, one toleration. */
static int
fit_tolerates(const json_t *tol, const char *key, const char *value,
    const char *effect)
{
	const char *tk = json_string_value(json_object_get(tol, "key"));
	const char *op = json_string_value(json_object_get(tol, "operator"));
	const char *tv = json_string_value(json_object_get(tol, "value"));
	const char *te = json_string_value(json_object_get(tol, "effect"));

	if (te != NULL && *te != '\0' && strcmp(te, effect) != 0)
		return (0);
	if (tk != NULL && *tk != '\0' && strcmp(tk, key) != 0)
		return (0);
	if (op == NULL || *op == '\0' || strcmp(op, "Equal") == 0)
		return (strcmp(tv != NULL ? tv : "", value) == 0);
	return (strcmp(op, "Exists") == 0);
}

static int
fit_pod_tolerates(const json_t *pod, const char *key, const char *value,
    const char *effect)
{
	const json_t *t;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pod, "spec.tolerations"), i, t) {
		if (fit_tolerates(t, key, value, effect))
			return (1);
	}
	return (0);
}

/*
 * TaintToleration: the key of the first NoSchedule or NoExecute taint the
 * pod does not tolerate, or NULL.
 */
static const char *
fit_untolerated(const json_t *pod, const json_t *node)
{
	const json_t *t;
	const char   *key, *effect, *value;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "spec.taints"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		effect = json_string_value(json_object_get(t, "effect"));
		value = json_string_value(json_object_get(t, "value"));
		if (value == NULL)
			value = "";
		if (key == NULL || effect == NULL ||
		    (strcmp(effect, "NoSchedule") != 0 &&
			strcmp(effect, "NoExecute") != 0))
			continue;
		/* The bridge's own taint: translation's (policy.h). */
		if (strcmp(key, MANAGED_TAINT_KEY) == 0)
			continue;
		if (!fit_pod_tolerates(pod, key, value, effect))
			return (key);
	}
	return (NULL);
}

/*
 * Calls fn for each host port of the pod's containers and sidecars
 * (restartable init containers): an init container that runs to
 * completion holds its port only before the others start, and
 * kube-scheduler does not count it.
 */
static int
fit_ports_each(const json_t *pod,
    int (*fn)(const char *proto, const char *ip, json_int_t port, void *),
    void *arg)
{
	static const char *const lists[] = { "spec.initContainers",
		"spec.containers" };
	const json_t		*c, *p;
	const char		*proto, *ip;
	json_int_t		 port;
	size_t			 l, i, j;

	for (l = 0; l < 2; l++)
		json_array_foreach (k8s_obj_get(pod, lists[l]), i, c) {
			if (l == 0 &&
			    (k8s_obj_str(c, "restartPolicy") == NULL ||
				strcmp(k8s_obj_str(c, "restartPolicy"),
				    "Always") != 0))
				continue;
			json_array_foreach (json_object_get(c, "ports"), j, p) {
				port = json_integer_value(
				    json_object_get(p, "hostPort"));
				if (port <= 0)
					continue;
				proto = json_string_value(
				    json_object_get(p, "protocol"));
				ip = json_string_value(
				    json_object_get(p, "hostIP"));
				if (proto == NULL || *proto == '\0')
					proto = "TCP";
				if (ip == NULL || *ip == '\0')
					ip = "0.0.0.0";
				if (fn(proto, ip, port, arg))
					return (1);
			}
		}
	return (0);
}

struct fit_port {
	const char *proto, *ip;
	json_int_t  port;
};

/* HostPortInfo.CheckConflict: 0.0.0.0 clashes with every address. */
static int
fit_port_clash(const char *proto, const char *ip, json_int_t port, void *arg)
{
	const struct fit_port *want = arg;

	if (port != want->port || strcmp(proto, want->proto) != 0)
		return (0);
	return (strcmp(ip, want->ip) == 0 || strcmp(ip, "0.0.0.0") == 0 ||
	    strcmp(want->ip, "0.0.0.0") == 0);
}

struct fit_others {
	json_t *const *v;
	size_t	       n;
};

static int
fit_port_taken(const char *proto, const char *ip, json_int_t port, void *arg)
{
	const struct fit_others *o = arg;
	struct fit_port		 want = { proto, ip, port };
	size_t			 i;

	for (i = 0; i < o->n; i++)
		if (fit_ports_each(o->v[i], fit_port_clash, &want))
			return (1);
	return (0);
}

int
fit_resource_node_limited(const char *name)
{
	static const char *const slurm[] = { "cpu", "memory", "pods",
		"nvidia.com/gpu", "amd.com/gpu", NULL };
	size_t			 i;

	for (i = 0; slurm[i] != NULL; i++)
		if (strcmp(name, slurm[i]) == 0)
			return (0);
	return (strncmp(name, DRA_CLASS_PREFIX, strlen(DRA_CLASS_PREFIX)) != 0);
}

/* The pod's request of a resource, sized as translation sizes it. */
static int64_t
fit_pod_request(const json_t *pod, const char *name)
{
	int64_t q;
	char	err[8];

	if (translate_pod_request(pod, name, 0, 0, &q, err, sizeof(err)) == -1)
		return (0);
	return (q);
}

/*
 * NodeResourcesFit for the node-limited resources: the first the pod asks
 * more of than the node's allocatable has left beside others, or NULL.
 */
/* Is name short on node, beside others?  (A node-limited resource.) */
static int
fit_short_of(const json_t *pod, const char *name, const json_t *node,
    json_t *const *others, size_t n)
{
	const char *v;
	int64_t	    want, have, used = 0;
	size_t	    j;

	if (!fit_resource_node_limited(name) ||
	    (want = fit_pod_request(pod, name)) <= 0)
		return (0);
	v = json_string_value(
	    json_object_get(k8s_obj_get(node, "status.allocatable"), name));
	if (v == NULL || k8s_quantity_value(v, &have) == -1)
		have = 0;
	for (j = 0; j < n; j++)
		used += fit_pod_request(others[j], name);
	return (want > have - used);
}

static const char *
fit_short(const json_t *pod, const json_t *node, json_t *const *others,
    size_t n)
{
	static const char *const kinds[] = { "resources.requests",
		"resources.limits" };
	const json_t		*c, *lists[3];
	const char		*name;
	json_t			*q;
	size_t			 l, k, i;

	lists[0] = k8s_obj_get(pod, "spec.containers");
	lists[1] = k8s_obj_get(pod, "spec.initContainers");
	/* Pod-level resources: the spec, as one more "container". */
	lists[2] = json_pack("[O?]", json_object_get(pod, "spec"));
	for (l = 0; l < 3; l++)
		json_array_foreach (lists[l], i, c)
			for (k = 0; k < 2; k++)
				json_object_foreach ((json_t *)(uintptr_t)
							 k8s_obj_get(c,
							     kinds[k]),
				    name, q)
					if (fit_short_of(pod, name, node,
						others, n)) {
						json_decref(
						    (json_t *)(uintptr_t)
							lists[2]);
						return (name);
					}
	json_decref((json_t *)(uintptr_t)lists[2]);
	return (NULL);
}

enum fit_reason
fit_node(const json_t *pod, const json_t *node, json_t *const *others, size_t n,
    char *why, size_t len)
{
	struct fit_others o = { others, n };
	const char	 *want = k8s_obj_str(pod, "spec.nodeName");
	const char	 *res;

	if (want != NULL && *want != '\0' &&
	    strcmp(want, k8s_obj_name(node)) != 0) {
		snprintf(why, len, WHY_NODE_NAME);
		return (FIT_NODE_NAME);
	}
	if (json_is_true(k8s_obj_get(node, "spec.unschedulable")) &&
	    !fit_pod_tolerates(pod, "node.kubernetes.io/unschedulable", "",
		"NoSchedule")) {
		snprintf(why, len, WHY_UNSCHEDULABLE);
		return (FIT_UNSCHEDULABLE);
	}
	if (!fit_ready(node)) {
		snprintf(why, len, WHY_NOT_READY);
		return (FIT_NOT_READY);
	}
	if (!fit_affinity(pod, node)) {
		snprintf(why, len, WHY_AFFINITY);
		return (FIT_AFFINITY);
	}
	if (fit_untolerated(pod, node) != NULL) {
		/* 1.37 names no taint. */
		snprintf(why, len, WHY_TAINT);
		return (FIT_TAINT);
	}
	if (n > 0 && fit_ports_each(pod, fit_port_taken, &o)) {
		snprintf(why, len, WHY_PORTS);
		return (FIT_PORTS);
	}
	if ((res = fit_short(pod, node, others, n)) != NULL) {
		snprintf(why, len, "Insufficient %s", res);
		return (FIT_RESOURCE);
	}
	*why = '\0';
	return (FIT_OK);
}

/* Does a pod affinity term list (required) name anything? */
static int
fit_has_required(const json_t *pod, const char *kind)
{
	char path[128];

	snprintf(path, sizeof(path),
	    "spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution",
	    kind);
	return (json_array_size(k8s_obj_get(pod, path)) > 0);
}

int
fit_pod_waits(const json_t *pod, char *msg, size_t len)
{
	const json_t *c, *v;
	const char   *when;
	size_t	      i;

	if (fit_has_required(pod, "podAffinity")) {
		snprintf(msg, len,
		    "spec.affinity.podAffinity."
		    "requiredDuringSchedulingIgnoredDuringExecution: "
		    "slurm-bridge cannot yet hold a pod next to other pods "
		    "through Slurm, so it waits rather than run where the "
		    "rule may not hold; use a nodeSelector, or the "
		    "preferred form");
		return (1);
	}
	if (fit_has_required(pod, "podAntiAffinity")) {
		snprintf(msg, len,
		    "spec.affinity.podAntiAffinity."
		    "requiredDuringSchedulingIgnoredDuringExecution: "
		    "slurm-bridge cannot yet keep a pod away from other pods "
		    "through Slurm, so it waits rather than run where the "
		    "rule may not hold; use the preferred form, or one gang "
		    "with exclusive placement");
		return (1);
	}
	json_array_foreach (k8s_obj_get(pod, "spec.topologySpreadConstraints"),
	    i, c) {
		when = json_string_value(
		    json_object_get(c, "whenUnsatisfiable"));
		if (when == NULL || strcmp(when, "DoNotSchedule") == 0) {
			snprintf(msg, len,
			    "spec.topologySpreadConstraints[%zu]: "
			    "whenUnsatisfiable DoNotSchedule cannot yet be "
			    "held through Slurm, so the pod waits rather "
			    "than run where the spread may not hold; use "
			    "ScheduleAnyway",
			    i);
			return (1);
		}
	}
	json_array_foreach (k8s_obj_get(pod, "spec.volumes"), i, v) {
		if (json_object_get(v, "persistentVolumeClaim") != NULL ||
		    json_object_get(v, "ephemeral") != NULL) {
			snprintf(msg, len,
			    "spec.volumes[%zu] (%.63s): slurm-bridge does "
			    "not yet place pods by their PersistentVolume's "
			    "node, so a pod with a claim waits rather than "
			    "run where its volume cannot be mounted",
			    i,
			    k8s_obj_str(v, "name") != NULL ?
				k8s_obj_str(v, "name") :
				"?");
			return (1);
		}
	}
	return (0);
}

void
fit_tally_init(struct fit_tally *t)
{
	t->nodes = t->fit = 0;
	t->why = json_object();
}

void
fit_tally_cleanup(struct fit_tally *t)
{
	json_decref(t->why);
	t->why = NULL;
}

void
fit_tally_add(struct fit_tally *t, enum fit_reason r, const char *why)
{
	json_t *c;

	t->nodes++;
	if (r == FIT_OK) {
		t->fit++;
		return;
	}
	c = json_object_get(t->why, why);
	json_object_set_new(t->why, why,
	    json_integer(c != NULL ? json_integer_value(c) + 1 : 1));
}

static int
fit_strcmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

void
fit_tally_message(const struct fit_tally *t, char *buf, size_t len)
{
	const char *k;
	json_t	   *v;
	char	  **s;
	size_t	    n = 0, i, off;

	s = calloc(json_object_size(t->why) + 1, sizeof(*s));
	json_object_foreach (t->why, k, v) {
		if (s == NULL ||
		    asprintf(&s[n], "%" JSON_INTEGER_FORMAT " %s",
			json_integer_value(v), k) == -1)
			break;
		n++;
	}
	if (s != NULL)
		qsort(s, n, sizeof(*s), fit_strcmp);
	off = (size_t)snprintf(buf, len, "%zu/%zu nodes are available", t->fit,
	    t->nodes);
	for (i = 0; i < n; i++) {
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
			    i == 0 ? ": " : ", ", s[i]);
		free(s[i]);
	}
	if (off < len)
		snprintf(buf + off, len - off, ".");
	free(s);
}
