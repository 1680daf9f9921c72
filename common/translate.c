/*
 * Translation of a pod into a Slurm placeholder job description: resources,
 * the (compat) slurmjob.slinky.slurm.net/ annotations, and the job identity
 * (name, comment, admin_comment).  Pure: no I/O, so it is table-tested and
 * runs on the reconcile thread.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "xmalloc.h"
#include "policy.h"
#include "config.h"
#include "topology.h"

#define TR_MAX_STR 200 /* longest string we hand to Slurm */
/* The most GPUs one pod may ask for (Slurm's GRES counts are 32-bit). */
#define TR_MAX_GPUS 4096
#define MIB	    (1024LL * 1024)

static void
jobspec_init(struct jobspec *js)
{
	memset(js, 0, sizeof(*js));
}

void
translate_jobspec_cleanup(struct jobspec *js)
{
	free(js->name);
	free(js->comment);
	free(js->admin_comment);
	if (js->node_env != NULL)
		free(js->node_env[0]);
	free(js->node_env);
	free(js->partition);
	free(js->account);
	free(js->qos);
	free(js->reservation);
	free(js->constraints);
	free(js->tres_per_task);
	free(js->group_gres);
	free(js->tres_per_node);
	free(js->licenses);
	free(js->wckey);
	free(js->mcs_label);
	free(js->user_name);
	free(js->group_name);
	free(js->req_nodes);
	free(js->exc_nodes);
	free(js->topo_key);
	for (size_t i = 0; i < js->ncomps; i++) {
		free(js->comps[i].tres_per_task);
		free(js->comps[i].exc_nodes);
	}
	free(js->comp_of);
	jobspec_init(js);
}

/* One quantity of a container (or the pod); 0 when it names none. */
static int
res_one(const json_t *c, const char *what, const char *res, int milli,
    int limits, int64_t *q, char *err, size_t errlen)
{
	const char *v, *cname;
	int	    rc;

	*q = 0;
	v = json_string_value(
	    json_object_get(k8s_obj_get(c,
				limits ? "resources.limits" :
					 "resources.requests"),
		res));
	/* Requests default to limits, as the API server does. */
	if (v == NULL && !limits)
		v = json_string_value(
		    json_object_get(k8s_obj_get(c, "resources.limits"), res));
	if (v == NULL)
		return (0);
	rc = milli ? k8s_quantity_milli(v, q) : k8s_quantity_value(v, q);
	if (rc == -1 || *q < 0 || *q > INT64_MAX / 1024) {
		cname = json_string_value(json_object_get(c, "name"));
		snprintf(err, errlen,
		    "%s%s: resource %s: \"%.32s\" is not a valid quantity "
		    "(e.g. 500m, 2, 4Gi)",
		    what, cname != NULL ? cname : "", res, v);
		return (-1);
	}
	return (0);
}

int
translate_pod_request(const json_t *pod, const char *res, int milli, int limits,
    int64_t *out, char *err, size_t errlen)
{
	const json_t *c;
	json_t	     *ov;
	const char   *policy;
	int64_t	      app = 0, side = 0, init = 0, q;
	size_t	      i;
	int	      rc;

	/*
	 * Pod-level resources (KEP-2837) stand for the containers' CPU,
	 * memory and hugepages when set.
	 */
	if ((strcmp(res, "cpu") == 0 || strcmp(res, "memory") == 0 ||
		strncmp(res, "hugepages-", 10) == 0) &&
	    json_object_get(k8s_obj_get(pod, "spec.resources"),
		limits ? "limits" : "requests") != NULL) {
		if (res_one(k8s_obj_get(pod, "spec"), "spec.resources", res,
			milli, limits, &app, err, errlen) == -1)
			return (-1);
	}
	if (app == 0) {
		json_array_foreach (k8s_obj_get(pod, "spec.containers"), i, c) {
			if (res_one(c, "container ", res, milli, limits, &q,
				err, errlen) == -1)
				return (-1);
			app += q;
		}
		/*
		 * A sidecar (restartable init container) runs beside the app
		 * containers and the init containers after it; an init
		 * container runs alone with the sidecars started before it
		 * (component-helpers resource.PodRequests).
		 */
		json_array_foreach (k8s_obj_get(pod, "spec.initContainers"), i,
		    c) {
			if (res_one(c, "init container ", res, milli, limits,
				&q, err, errlen) == -1)
				return (-1);
			policy = json_string_value(
			    json_object_get(c, "restartPolicy"));
			if (policy != NULL && strcmp(policy, "Always") == 0)
				side += q;
			else if (q + side > init)
				init = q + side;
		}
		app = app + side > init ? app + side : init;
	}
	/* spec.overhead (the RuntimeClass's), added to what the pod asks. */
	q = 0;
	if (json_object_get(k8s_obj_get(pod, "spec.overhead"), res) != NULL) {
		ov = json_pack("{s:{s:O}}", "resources", "requests",
		    k8s_obj_get(pod, "spec.overhead"));
		rc = res_one(ov, "spec.overhead", res, milli, 0, &q, err,
		    errlen);
		json_decref(ov);
		if (rc == -1)
			return (-1);
	}
	*out = app + q;
	return (0);
}

static int
res_pod(const json_t *pod, const char *res, int milli, int limits, int64_t *out,
    char *err, size_t errlen)
{
	return (
	    translate_pod_request(pod, res, milli, limits, out, err, errlen));
}

static int
translate_pod_resources(const json_t *pod, int64_t *cpu_milli,
    int64_t *mem_bytes, int64_t *gpus, char *err, size_t errlen)
{
	int64_t cpu_req, cpu_lim, nv, amd;

	if (res_pod(pod, "cpu", 1, 0, &cpu_req, err, errlen) == -1 ||
	    res_pod(pod, "cpu", 1, 1, &cpu_lim, err, errlen) == -1 ||
	    res_pod(pod, "memory", 0, 0, mem_bytes, err, errlen) == -1 ||
	    res_pod(pod, "nvidia.com/gpu", 0, 1, &nv, err, errlen) == -1 ||
	    res_pod(pod, "amd.com/gpu", 0, 1, &amd, err, errlen) == -1)
		return (-1);
	/* A limit above the request is what the pod may use: reserve it. */
	*cpu_milli = cpu_req > cpu_lim ? cpu_req : cpu_lim;
	/* Each checked before the sum: 7E and 7E would overflow it. */
	if (nv > TR_MAX_GPUS || amd > TR_MAX_GPUS || nv + amd > TR_MAX_GPUS) {
		snprintf(err, errlen,
		    "resources: %" PRId64 " GPUs (nvidia.com/gpu %" PRId64
		    ", amd.com/gpu %" PRId64 ") is more than a pod may ask "
		    "for; at most %d, as a whole number",
		    nv <= TR_MAX_GPUS && amd <= TR_MAX_GPUS ? nv + amd :
			nv > amd			    ? nv :
							      amd,
		    nv, amd, TR_MAX_GPUS);
		return (-1);
	}
	*gpus = nv + amd;
	return (0);
}

/* Checks a string annotation for length and printable ASCII. */
static int
ann_str(const json_t *pod, const char *key, char **out, char *err,
    size_t errlen)
{
	char	    full[128];
	const char *v, *p;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	if (*v == '\0' || strlen(v) > TR_MAX_STR) {
		snprintf(err, errlen,
		    "annotation %s: must be 1 to %d "
		    "characters",
		    full, TR_MAX_STR);
		return (-1);
	}
	for (p = v; *p != '\0'; p++) {
		if (!isprint((unsigned char)*p)) {
			snprintf(err, errlen,
			    "annotation %s: must be "
			    "printable ASCII",
			    full);
			return (-1);
		}
	}
	free(*out);
	*out = xstrdup(v);
	return (0);
}

/* Parses a decimal integer annotation in [min, max]. */
static int
ann_uint(const json_t *pod, const char *key, uint32_t min, uint32_t max,
    const char *form, uint32_t *out, char *err, size_t errlen)
{
	char		   full[128], *end;
	const char	  *v;
	unsigned long long n;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0 ||
	    n < min || n > max) {
		snprintf(err, errlen, "annotation %s: \"%.32s\" is not %s",
		    full, v, form);
		return (-1);
	}
	*out = (uint32_t)n;
	return (0);
}

/*
 * user-id and group-id: a number, or a name in the form useradd takes (a
 * lower-case letter or _, then lower-case letters, digits, _, . or -, at
 * most 32 characters, an optional final $).  Only the form is checked here,
 * by both daemons; the scheduler resolves a name on its own host.
 */
static int
ann_ident(const json_t *pod, const char *key, const char *what, uint32_t *id,
    char **name, int *has, char *err, size_t errlen)
{
	char	    full[128];
	const char *v, *p;
	size_t	    len;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	*has = 1;
	if (isdigit((unsigned char)*v))
		return (
		    ann_uint(pod, key, 0, 0x7ffffffe, what, id, err, errlen));
	len = strlen(v);
	for (p = v; *p != '\0'; p++)
		if (!(islower((unsigned char)*p) || *p == '_' ||
			(p > v &&
			    (isdigit((unsigned char)*p) || *p == '.' ||
				*p == '-')) ||
			(*p == '$' && p[1] == '\0' && p > v)))
			break;
	if (len == 0 || len > 32 || *p != '\0') {
		snprintf(err, errlen, "annotation %s: \"%.32s\" is not %s",
		    full, v, what);
		return (-1);
	}
	free(*name);
	*name = xstrdup(v);
	return (0);
}

static int
ann_bool(const json_t *pod, const char *key, int *out, char *err, size_t errlen)
{
	char	    full[128];
	const char *v;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	if (strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0)
		*out = 0;
	else {
		snprintf(err, errlen,
		    "annotation %s: \"%.32s\" is not "
		    "\"true\" or \"false\"",
		    full, v);
		return (-1);
	}
	return (0);
}

/* gres: "name[:type]:count" entries, comma separated, e.g. gpu:a100:2. */
static int
gres_valid(const char *s)
{
	const char *p = s;
	int	    fields, digits;

	while (*p != '\0') {
		fields = 0;
		for (;;) {
			const char *start = p;
			digits = 1;
			while (*p != '\0' && *p != ':' && *p != ',') {
				if (!isalnum((unsigned char)*p) && *p != '_' &&
				    *p != '-' && *p != '.')
					return (0);
				if (!isdigit((unsigned char)*p))
					digits = 0;
				p++;
			}
			if (p == start)
				return (0);
			fields++;
			if (*p != ':')
				break;
			p++;
		}
		/* One field is a name (count 1); more must end in a count. */
		if (fields > 3 || (fields > 1 && !digits))
			return (0);
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return (0);
	}
	return (p != s);
}

uint32_t
translate_gres_gpus(const char *gres)
{
	const char *p = gres, *end, *colon;

	while (*p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		if (strncmp(p, "gpu", 3) == 0 &&
		    (p[3] == ':' || p + 3 == end)) {
			for (colon = end; colon > p && colon[-1] != ':';
			     colon--)
				;
			if (colon == p)
				return (1);
			return ((uint32_t)strtoul(colon, NULL, 10));
		}
		p = *end == ',' ? end + 1 : end;
	}
	return (0);
}

/*
 * The annotations that apply to a pod, as one object: namespace defaults
 * (account, partition, qos only), then the workload layers (least specific
 * first), then the pod, later ones winning.  Returned as
 * {"metadata":{"annotations":{...}}} so the ann_* readers take it like a
 * pod.  New reference.
 */
static json_t *
translate_view(const struct translate_src *src)
{
	const json_t		*pod = src->pod, *ns = src->ns;
	static const char *const defaults[] = { "account", "partition", "qos" };
	json_t			*merged = json_object();
	const char		*v;
	char			 key[128];
	size_t			 i;

	for (i = 0; ns != NULL && i < sizeof(defaults) / sizeof(defaults[0]);
	     i++) {
		snprintf(key, sizeof(key), ANN_PREFIX "%s", defaults[i]);
		if ((v = k8s_obj_annotation(ns, key)) != NULL)
			json_object_set_new(merged, key, json_string(v));
	}
	for (i = 0; i < src->nlayers; i++)
		json_object_update(merged,
		    k8s_obj_get(src->layers[i], "metadata.annotations"));
	json_object_update(merged, k8s_obj_get(pod, "metadata.annotations"));
	return (json_pack("{s:{s:o}}", "metadata", "annotations", merged));
}

/*
 * With the NoSchedule taint a toleration of NoExecute counts too: it is
 * Slinky's taint, so its manifests carry that toleration, and the taint
 * only keeps other schedulers' pods off (the bridge binds its own).  With
 * NoExecute, only a NoExecute toleration keeps the pod from eviction.
 */
int
translate_tolerates(const json_t *pod, const char *effect)
{
	if (effect == NULL)
		effect = MANAGED_TAINT_EFFECT_DEFAULT;
	return (k8s_pod_tolerates(pod, MANAGED_TAINT_KEY, MANAGED_TAINT_VALUE,
		    effect) ||
	    (strcmp(effect, "NoSchedule") == 0 &&
		k8s_pod_tolerates(pod, MANAGED_TAINT_KEY, MANAGED_TAINT_VALUE,
		    "NoExecute")));
}

json_t *
translate_node_taints(const json_t *node, const char *effect)
{
	json_t	     *taints = json_array();
	const json_t *t;
	const char   *key;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "spec.taints"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		if (key == NULL || strcmp(key, MANAGED_TAINT_KEY) != 0)
			json_array_append(taints, (json_t *)(uintptr_t)t);
	}
	if (effect != NULL)
		json_array_append_new(taints,
		    json_pack("{s:s, s:s, s:s}", "key", MANAGED_TAINT_KEY,
			"value", MANAGED_TAINT_VALUE, "effect", effect));
	return (taints);
}

const char *
translate_node_taint_effect(const json_t *node)
{
	const json_t *t;
	const char   *key, *effect;
	size_t	      i;

	json_array_foreach (k8s_obj_get(node, "spec.taints"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		if (key != NULL && strcmp(key, MANAGED_TAINT_KEY) == 0) {
			effect = json_string_value(
			    json_object_get(t, "effect"));
			return (effect != NULL ? effect : "");
		}
	}
	return (NULL);
}

int
translate_node_managed(const json_t *node)
{
	return (translate_node_taint_effect(node) != NULL);
}

/* "N" or "N@MINUTES": at most N leaf switches, waiting up to MINUTES. */
static int
parse_switches(const char *s, uint32_t *count, uint32_t *wait_s)
{
	char	     *end;
	unsigned long n, m = 0;

	if (!isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno != 0 || n < 1 || n > 65535)
		return (-1);
	if (*end == '@') {
		if (!isdigit((unsigned char)end[1]))
			return (-1);
		m = strtoul(end + 1, &end, 10);
		if (errno != 0 || m > 525600)
			return (-1);
	}
	if (*end != '\0')
		return (-1);
	*count = (uint32_t)n;
	*wait_s = (uint32_t)m * 60;
	return (0);
}

/* Annotations read as text, parsed once the job's size is known. */
struct translate_raw {
	char *gres;
	char *switches;
	char *mem_per_node;
	char *cpu_per_task;
};

static void
translate_raw_cleanup(struct translate_raw *raw)
{
	free(raw->gres);
	free(raw->switches);
	free(raw->mem_per_node);
	free(raw->cpu_per_task);
}

/* The job's annotations (namespace, root, pod; later wins) into js. */
static int
translate_annotations(const json_t *view, struct jobspec *js,
    struct translate_raw *raw, char *err, size_t errlen)
{
	if (ann_str(view, "partition", &js->partition, err, errlen) == -1 ||
	    ann_str(view, "account", &js->account, err, errlen) == -1 ||
	    ann_str(view, "qos", &js->qos, err, errlen) == -1 ||
	    ann_str(view, "reservation", &js->reservation, err, errlen) == -1 ||
	    ann_str(view, "constraints", &js->constraints, err, errlen) == -1 ||
	    ann_str(view, "licenses", &js->licenses, err, errlen) == -1 ||
	    ann_str(view, "wckey", &js->wckey, err, errlen) == -1 ||
	    ann_str(view, "job-name", &js->name, err, errlen) == -1 ||
	    ann_str(view, "gres", &raw->gres, err, errlen) == -1 ||
	    ann_str(view, "switches", &raw->switches, err, errlen) == -1 ||
	    ann_str(view, "mem-per-node", &raw->mem_per_node, err, errlen) ==
		-1 ||
	    ann_str(view, "cpu-per-task", &raw->cpu_per_task, err, errlen) ==
		-1 ||
	    ann_uint(view, "timelimit", 1, 0x7ffffffe,
		"a whole number of minutes (1 or more)", &js->time_limit, err,
		errlen) == -1 ||
	    ann_uint(view, "priority", 1, 0x7ffffffe,
		"a whole number from 1 to 2147483646", &js->priority, err,
		errlen) == -1 ||
	    ann_uint(view, "min-nodes", 1, 100000,
		"a whole number of nodes from 1 to 100000", &js->min_nodes, err,
		errlen) == -1 ||
	    ann_uint(view, "max-nodes", 1, 100000,
		"a whole number of nodes from 1 to 100000", &js->max_nodes, err,
		errlen) == -1 ||
	    ann_ident(view, "user-id",
		"a user id (0 to 2147483646) or a user "
		"name (a-z or _, then a-z, 0-9, _ . -; at most 32)",
		&js->user_id, &js->user_name, &js->has_user_id, err,
		errlen) == -1 ||
	    ann_ident(view, "group-id",
		"a group id (0 to 2147483646) or a "
		"group name (a-z or _, then a-z, 0-9, _ . -; at most 32)",
		&js->group_id, &js->group_name, &js->has_group_id, err,
		errlen) == -1 ||
	    ann_bool(view, "exclusive", &js->exclusive, err, errlen) == -1)
		return (-1);
	if (js->min_nodes != 0 && js->max_nodes != 0 &&
	    js->max_nodes < js->min_nodes) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "max-nodes (%u) "
		    "is below " ANN_PREFIX "min-nodes (%u)",
		    js->max_nodes, js->min_nodes);
		return (-1);
	}
	if (raw->switches != NULL &&
	    parse_switches(raw->switches, &js->req_switch, &js->wait4switch) ==
		-1) {
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "switches: "
		    "\"%.32s\" is not N or N@MINUTES (e.g. 1 or 2@10)",
		    raw->switches);
		return (-1);
	}
	return (0);
}

/* CPUs per task and memory, from the pod's resources or annotations. */
static int
translate_size(struct jobspec *js, int64_t cpu_milli, int64_t mem,
    const struct translate_raw *raw, char *err, size_t errlen)
{
	const char *cpuq = raw->cpu_per_task, *memq = raw->mem_per_node;
	int64_t	    cpus, q;

	if (cpuq != NULL) {
		if (k8s_quantity_milli(cpuq, &q) == -1 || q <= 0) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX
			    "cpu-per-task: \"%.32s\" is not a CPU quantity "
			    "(e.g. 2 or 1500m)",
			    cpuq);
			return (-1);
		}
		cpu_milli = q;
	}
	/* Rounded up without overflowing near INT64_MAX. */
	cpus = cpu_milli / 1000 + (cpu_milli % 1000 != 0);
	if (cpus < 1)
		cpus = 1;
	if (cpus > 65535) {
		snprintf(err, errlen,
		    "%s%" PRId64 " CPUs per task is more "
		    "than Slurm accepts (at most 65535)",
		    cpuq != NULL ?
			"annotation " ANN_PREFIX "cpu-per-task: " :
			"resource cpu (the pod's request or limit): ",
		    cpus);
		return (-1);
	}
	js->cpus_per_task = (uint32_t)cpus;
	if (memq != NULL) {
		if (k8s_quantity_value(memq, &q) == -1 || q <= 0) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX
			    "mem-per-node: \"%.32s\" is not a memory quantity "
			    "(e.g. 64Gi or 500M)",
			    memq);
			return (-1);
		}
		js->mem_per_node_mb = (uint64_t)(q / MIB + (q % MIB != 0));
	} else if (mem > 0)
		js->mem_per_cpu_mb = ((uint64_t)(mem / MIB + (mem % MIB != 0)) +
					 (uint64_t)cpus - 1) /
		    (uint64_t)cpus;
	return (0);
}

/*
 * A deadline bounds the allocation when no timelimit is set: the pod's,
 * else the most specific layer's that has one (a Job's).
 */
static void
translate_deadline(struct jobspec *js, const struct translate_src *src)
{
	json_int_t deadline;
	size_t	   i;

	if (js->time_limit != 0)
		return;
	deadline = json_integer_value(
	    k8s_obj_get(src->pod, "spec.activeDeadlineSeconds"));
	for (i = src->nlayers; deadline <= 0 && i > 0; i--)
		deadline = json_integer_value(k8s_obj_get(src->layers[i - 1],
		    "spec.activeDeadlineSeconds"));
	if (deadline > 0 && deadline < (json_int_t)0x7ffffffe * 60)
		js->time_limit = (uint32_t)((deadline + 59) / 60);
}

/* A pod's UID as a JSON string ("" when it has none yet). */
static json_t *
translate_uid(const json_t *pod)
{
	const char *uid = k8s_obj_uid(pod);

	return (json_string(uid != NULL ? uid : ""));
}

/*
 * Names the install in the job's comment and admin_comment (ac, taken),
 * with its pods' UIDs (uids, taken): what recovery checks before it
 * pairs a job with a pod, since a pod's name alone may be another's.
 */
static void
translate_stamp(struct jobspec *js, const struct translate_conf *conf,
    json_t *ac, json_t *uids)
{
	struct buf  env;
	const char *uid;
	size_t	    i;
	char	   *c;

	buf_init(&env);
	buf_printf(&env, NODE_ENV_PODS "=");
	for (i = 0; i < json_array_size(uids); i++) {
		uid = json_string_value(json_array_get(uids, i));
		if (uid != NULL && *uid != '\0')
			buf_printf(&env, "%s%s", i > 0 ? "," : "", uid);
	}
	if (js->node_env == NULL)
		js->node_env = xcalloc(2, sizeof(*js->node_env));
	free(js->node_env[0]);
	js->node_env[0] = buf_release(&env);
	if (conf->install != NULL) {
		xasprintf(&c, "%s (install %s)", js->comment, conf->install);
		free(js->comment);
		js->comment = c;
		json_object_set(ac, "uids", uids);
		json_object_set_new(ac, "install", json_string(conf->install));
	}
	json_decref(uids);
	free(js->admin_comment);
	js->admin_comment = json_dumps(ac, JSON_COMPACT);
	json_decref(ac);
}

/* The config's defaults, then the namespace's bounds (bounds.c). */
static int
translate_account(struct jobspec *js, const struct translate_conf *conf,
    const json_t *nsobj, const char *ns, char *err, size_t errlen)
{
	if (js->partition == NULL)
		js->partition = xstrdup(conf->partition);
	if (js->account == NULL && conf->default_account != NULL)
		js->account = xstrdup(conf->default_account);
	if (conf->mcs_label != NULL)
		js->mcs_label = xstrdup(conf->mcs_label);
	return (bounds_check(conf->bounds, nsobj, ns, js, err, errlen));
}

/*
 * GRES per task: the annotation, else the pod's GPU request, else its
 * Dynamic Resource Allocation requests (dra, "gpu:2"); one of them.
 */
static int
translate_gres(struct jobspec *js, const char *gres, int64_t gpus,
    const char *dra, char *err, size_t errlen)
{
	if (dra != NULL && (gres != NULL || gpus > 0)) {
		snprintf(err, errlen,
		    "the pod asks for devices through Dynamic Resource "
		    "Allocation (%s) and for GPUs as %s too; ask one way",
		    dra,
		    gres != NULL ? "the annotation " ANN_PREFIX "gres" :
				   "an extended resource (nvidia.com/gpu)");
		return (-1);
	}
	if (dra != NULL) {
		xasprintf(&js->tres_per_task, "gres:%s", dra);
		/* Split per task whatever its name: "mig:1g.10gb:2" too. */
		js->gpus_per_task = (uint32_t)strtoul(strrchr(dra, ':') + 1,
		    NULL, 10);
	} else if (gres != NULL) {
		if (!gres_valid(gres)) {
			snprintf(err, errlen,
			    "annotation " ANN_PREFIX "gres: "
			    "\"%.32s\" is not NAME[:TYPE]:COUNT[,...] "
			    "(e.g. gpu:a100:2)",
			    gres);
			return (-1);
		}
		xasprintf(&js->tres_per_task, "gres:%s", gres);
		js->gpus_per_task = translate_gres_gpus(gres);
	} else if (gpus > 0) {
		xasprintf(&js->tres_per_task, "gres:gpu:%" PRId64, gpus);
		js->gpus_per_task = (uint32_t)gpus;
	}
	return (0);
}

int
translate_pod(const struct translate_src *src,
    const struct translate_conf *conf, struct jobspec *js, char *err,
    size_t errlen)
{
	const json_t	    *pod = src->pod;
	const char	    *ns = k8s_obj_namespace(pod);
	const char	    *name = k8s_obj_name(pod);
	struct translate_raw raw = { NULL, NULL, NULL, NULL };
	int64_t		     cpu_milli, mem, gpus;
	json_t		    *ac, *view;
	char		    *dra = NULL, *join = NULL, *group = NULL;
	int		     rc = -1;

	jobspec_init(js);
	view = translate_view(src);
	if (ns == NULL || name == NULL) {
		snprintf(err, errlen, "pod has no namespace or name");
		goto fail;
	}
	if (!translate_tolerates(pod, conf->taint_effect)) {
		snprintf(err, errlen,
		    "spec.tolerations: the pod does not tolerate the taint " MANAGED_TAINT_KEY
		    "=" MANAGED_TAINT_VALUE ":%s of bridged "
		    "nodes; add that toleration (the webhook adds it in "
		    "enabled namespaces)",
		    conf->taint_effect != NULL ? conf->taint_effect :
						 MANAGED_TAINT_EFFECT_DEFAULT);
		goto fail;
	}
	if ((rc = dra_pod_gres(pod, conf->dra, src->dra, &dra, &group, &join,
		 err, errlen)) != 0)
		goto fail;
	rc = -1;
	if (group != NULL && !src->gang) {
		snprintf(err, errlen,
		    "spec.resourceClaims: the pod names a claim of its "
		    "PodGroup %.63s, whose pods are placed one by one (basic "
		    "policy): Slurm cannot give one job's devices to the "
		    "next; give the PodGroup a gang policy, or the pod a claim "
		    "of its own",
		    k8s_obj_str(pod, "spec.schedulingGroup.podGroupName"));
		goto fail;
	}
	js->group_gres = group;
	group = NULL;
	/* A shared claim's devices are on one node: the pod runs there. */
	js->req_nodes = join;
	join = NULL;
	if (translate_pod_resources(pod, &cpu_milli, &mem, &gpus, err,
		errlen) == -1)
		goto fail;
	js->ntasks = 1;
	js->exclusive = conf->exclusive;
	if (translate_annotations(view, js, &raw, err, errlen) == -1 ||
	    translate_size(js, cpu_milli, mem, &raw, err, errlen) == -1)
		goto fail;
	translate_deadline(js, src);
	if (translate_account(js, conf, src->ns, ns, err, errlen) == -1 ||
	    translate_gres(js, raw.gres, gpus, dra, err, errlen) == -1)
		goto fail;
	if (js->name == NULL)
		xasprintf(&js->name, "%s/%s", ns, name);
	xasprintf(&js->comment, BRIDGE_COMMENT_MARKER " pod %s/%s", ns, name);
	ac = json_pack("{s:[s++]}", "pods", ns, "/", name);
	translate_stamp(js, conf, ac, json_pack("[o]", translate_uid(pod)));
	translate_raw_cleanup(&raw);
	json_decref(view);
	free(dra);
	return (0);
fail:
	translate_raw_cleanup(&raw);
	json_decref(view);
	free(dra);
	free(group);
	translate_jobspec_cleanup(js);
	return (rc);
}

json_t *
translate_admin_pods(const char *admin_comment)
{
	json_t *ac, *pods;

	if (admin_comment == NULL ||
	    (ac = json_loads(admin_comment, 0, NULL)) == NULL)
		return (NULL);
	pods = json_object_get(ac, "pods");
	if (!json_is_array(pods)) {
		json_decref(ac);
		return (NULL);
	}
	json_incref(pods);
	json_decref(ac);
	return (pods);
}

enum admin_owner
translate_admin_owner(const char *admin_comment, const char *comment,
    const char *install)
{
	json_t		*ac;
	const char	*name, *p;
	enum admin_owner o = ADMIN_OTHER;
	size_t		 n = strlen(install);

	if (admin_comment == NULL || *admin_comment == '\0') {
		/* "... (install NAME)": this install's, by its own words. */
		if (comment != NULL && (p = strstr(comment, "(install ")) &&
		    strncmp(p + 9, install, n) == 0 &&
		    strcmp(p + 9 + n, ")") == 0)
			o = ADMIN_MINE;
		return (o);
	}
	if ((ac = json_loads(admin_comment, 0, NULL)) == NULL)
		return (ADMIN_OTHER);
	name = json_string_value(json_object_get(ac, "install"));
	if (name != NULL)
		o = strcmp(name, install) == 0 ? ADMIN_MINE : ADMIN_OTHER;
	else if (json_object_get(ac, "install") == NULL &&
	    json_is_array(json_object_get(ac, "pods")))
		o = ADMIN_LEGACY;
	json_decref(ac);
	return (o);
}

int
translate_admin_names(const char *admin_comment, const char *key,
    const char *uid)
{
	json_t	   *ac, *pods, *uids, *v;
	const char *u;
	size_t	    i;
	int	    found = 0;

	if (admin_comment == NULL ||
	    (ac = json_loads(admin_comment, 0, NULL)) == NULL)
		return (0);
	pods = json_object_get(ac, "pods");
	uids = json_object_get(ac, "uids");
	json_array_foreach (pods, i, v) {
		if (json_string_value(v) == NULL ||
		    strcmp(json_string_value(v), key) != 0)
			continue;
		if (uids == NULL) {
			found = 1; /* legacy: no UIDs were kept */
			break;
		}
		u = json_string_value(json_array_get(uids, i));
		if (u != NULL && *u != '\0' && uid != NULL &&
		    strcmp(u, uid) == 0) {
			found = 1;
			break;
		}
	}
	json_decref(ac);
	return (found);
}

char *
translate_admin_claim(const char *admin_comment, const char *install,
    json_t *uids)
{
	json_t *ac;
	char   *out = NULL;

	if (admin_comment != NULL &&
	    (ac = json_loads(admin_comment, 0, NULL)) != NULL) {
		if (json_is_object(ac)) {
			json_object_set(ac, "uids", uids);
			json_object_set_new(ac, "install",
			    json_string(install));
			out = json_dumps(ac, JSON_COMPACT);
		}
		json_decref(ac);
	}
	json_decref(uids);
	return (out);
}

/* Do two members' jobs ask for the same per-task shape? */
static int
translate_same_shape(const struct jobcomp *c, const struct jobspec *one)
{
	return (c->cpus_per_task == one->cpus_per_task &&
	    c->mem_per_cpu_mb == one->mem_per_cpu_mb &&
	    c->gpus_per_task == one->gpus_per_task &&
	    ((c->tres_per_task == NULL && one->tres_per_task == NULL) ||
		(c->tres_per_task != NULL && one->tres_per_task != NULL &&
		    strcmp(c->tres_per_task, one->tres_per_task) == 0)));
}

/*
 * Puts member i (its job: one; its Kubernetes PodGroup: pg, or NULL) in
 * the component of its shape and PodGroup, or a new one: the children of
 * a CompositePodGroup are components of their own.  0, or -1 when there
 * would be more than JOBSPEC_MAX_COMPS.
 */
static int
translate_comp_add(struct jobspec *js, size_t i, struct jobspec *one,
    const char *pg)
{
	struct jobcomp *c;
	size_t		k;

	for (k = 0; k < js->ncomps; k++)
		if (translate_same_shape(&js->comps[k], one) &&
		    ((pg == NULL && js->comps[k].podgroup == NULL) ||
			(pg != NULL && js->comps[k].podgroup != NULL &&
			    strcmp(pg, js->comps[k].podgroup) == 0)))
			break;
	if (k == JOBSPEC_MAX_COMPS)
		return (-1);
	c = &js->comps[k];
	if (k == js->ncomps) {
		js->ncomps++;
		c->cpus_per_task = one->cpus_per_task;
		c->mem_per_cpu_mb = one->mem_per_cpu_mb;
		c->gpus_per_task = one->gpus_per_task;
		c->tres_per_task = one->tres_per_task;
		c->podgroup = pg;
		one->tres_per_task = NULL;
	}
	c->ntasks++;
	js->comp_of[i] = (uint8_t)k;
	return (0);
}

/* The largest member's per-task size, for every task. */
static void
translate_largest(struct jobspec *js, struct jobspec *one)
{
	if (one->cpus_per_task > js->cpus_per_task)
		js->cpus_per_task = one->cpus_per_task;
	if (one->mem_per_cpu_mb > js->mem_per_cpu_mb)
		js->mem_per_cpu_mb = one->mem_per_cpu_mb;
	if (one->gpus_per_task > js->gpus_per_task) {
		js->gpus_per_task = one->gpus_per_task;
		free(js->tres_per_task);
		js->tres_per_task = one->tres_per_task;
		one->tres_per_task = NULL;
	}
}

/* Drops the components: one shape, or too many. */
static void
translate_comps_drop(struct jobspec *js)
{
	size_t k;

	for (k = 0; k < js->ncomps; k++) {
		free(js->comps[k].tres_per_task);
		free(js->comps[k].exc_nodes);
	}
	memset(js->comps, 0, sizeof(js->comps));
	js->ncomps = 0;
	free(js->comp_of);
	js->comp_of = NULL;
}

json_t *
translate_admin_het(const char *admin_comment, size_t npods)
{
	json_t	     *ac, *het = NULL, *comps, *shapes;
	const json_t *v;
	size_t	      i;

	if (admin_comment == NULL ||
	    (ac = json_loads(admin_comment, 0, NULL)) == NULL)
		return (NULL);
	comps = json_object_get(ac, "comps");
	shapes = json_object_get(ac, "shapes");
	if (!json_is_array(comps) || json_array_size(comps) != npods ||
	    !json_is_array(shapes) || json_array_size(shapes) < 2 ||
	    json_array_size(shapes) > JOBSPEC_MAX_COMPS)
		goto out;
	json_array_foreach (comps, i, v)
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    (size_t)json_integer_value(v) >= json_array_size(shapes))
			goto out;
	json_array_foreach (shapes, i, v)
		if (json_integer_value(json_array_get(v, 0)) < 1 ||
		    json_integer_value(json_array_get(v, 1)) < 0)
			goto out;
	het = json_pack("{s:O, s:O}", "comps", comps, "shapes", shapes);
out:
	json_decref(ac);
	return (het);
}

/*
 * The claims of the gang's PodGroup that member one (pod) names: all the
 * members that name any must name the same (their GRES, one->group_gres,
 * is the gang's, js->group_gres).  0, or -1 with err.
 */
static int
translate_group_claims(struct jobspec *js, struct jobspec *one,
    const json_t *pod, char *err, size_t errlen)
{
	if (one->group_gres == NULL)
		return (0);
	if (js->group_gres == NULL) {
		js->group_gres = one->group_gres;
		one->group_gres = NULL;
		return (0);
	}
	if (strcmp(js->group_gres, one->group_gres) == 0)
		return (0);
	snprintf(err, errlen,
	    "pod %.63s names claims of PodGroup %.63s of GRES %.63s, and "
	    "another member %.63s: the pods of a gang must name the same "
	    "claims of their PodGroup",
	    k8s_obj_name(pod),
	    k8s_obj_str(pod, "spec.schedulingGroup.podGroupName"),
	    one->group_gres, js->group_gres);
	return (-1);
}

/*
 * A gang sharing its PodGroup's claims: their devices are on one node
 * (they are node-local, as kube-scheduler holds them), so the job is one
 * node asking, per node, each task's GRES and the PodGroup's once
 * ("gres:gpu:6" for 4 tasks of 1 and a claim of 2).  One job of the
 * largest member's shape: Slurm's GRES per node is the job's, not a
 * component's.
 */
static int
translate_group_node(struct jobspec *js, char *err, size_t errlen)
{
	const char   *colon = strrchr(js->group_gres, ':');
	unsigned long n = strtoul(colon + 1, NULL, 10);

	if (js->exclusive && js->ntasks > 1) {
		snprintf(err, errlen,
		    "the gang shares claims of its PodGroup, whose devices "
		    "are on one node, and asks for whole nodes (exclusive: "
		    "one pod per node): both cannot hold; drop exclusive, or "
		    "the PodGroup's claims");
		return (-1);
	}
	translate_comps_drop(js);
	js->min_nodes = js->max_nodes = 1;
	xasprintf(&js->tres_per_node, "gres:%.*s:%lu",
	    (int)(colon - js->group_gres), js->group_gres,
	    n + (unsigned long)js->ntasks * js->gpus_per_task);
	free(js->tres_per_task);
	js->tres_per_task = NULL;
	return (0);
}

/* A gang's topology request (topology.c), read from its first member. */
static int
translate_topology(struct jobspec *js, const struct translate_src *src,
    const struct translate_conf *conf, char *err, size_t errlen)
{
	struct topology_req req;

	if (topology_request(src->pod, src->layers, src->nlayers, &req, err,
		errlen) == -1)
		return (-1);
	if (req.key == NULL || conf->topology == NULL)
		return (0);
	return (topology_apply(&req, conf->topology, js, err, errlen));
}

/*
 * Each member translated alone: the gang's job asks for the largest of
 * them, with a component per shape where the pods differ (dropped later
 * when they cannot be used), and their claims gathered.  0, -1 or 1
 * (waiting), as translate_group; js is cleaned up on failure.
 */
static int
translate_members(json_t *const *pods, size_t n, struct translate_src *src,
    const struct translate_conf *conf, struct jobspec *js, char *err,
    size_t errlen)
{
	struct jobspec one;
	size_t	       i;
	int	       het = 1, rc = 0;

	js->comp_of = xcalloc(n, sizeof(*js->comp_of));
	for (i = 0; i < n && rc == 0; i++) {
		src->pod = pods[i];
		if ((rc = translate_pod(src, conf, &one, err, errlen)) != 0)
			break;
		if (one.req_nodes != NULL) {
			snprintf(err, errlen,
			    "pod %.63s shares a ResourceClaim held by another "
			    "Slurm job on node %.63s: a gang's pods cannot join "
			    "another job's claim; waiting until it is free",
			    k8s_obj_name(pods[i]), one.req_nodes);
			rc = 1;
		} else if (translate_group_claims(js, &one, pods[i], err,
			       errlen) == -1)
			rc = -1;
		else {
			if (het &&
			    translate_comp_add(js, i, &one,
				k8s_obj_str(pods[i],
				    "spec.schedulingGroup.podGroupName")) == -1)
				het = 0;
			translate_largest(js, &one);
		}
		translate_jobspec_cleanup(&one);
	}
	if (rc != 0) {
		translate_jobspec_cleanup(js);
		return (rc);
	}
	for (i = 0; i < js->ncomps; i++)
		js->comps[i].podgroup = NULL; /* the pods' own */
	/*
	 * Exclusive gangs take whole nodes, and a job of its own size per
	 * member would not change that: components only for shared ones.
	 */
	if (!het || js->ncomps < 2 || js->exclusive || js->mem_per_node_mb > 0)
		translate_comps_drop(js);
	return (0);
}

/*
 * A gang's name (unless the pod or a workload layer gives one), comment
 * and admin_comment: its pods, and where they differ, each one's
 * component and the components' shapes, for placement.
 */
static void
translate_group_stamp(json_t *const *pods, size_t n, const char *group,
    struct translate_src *src, const struct translate_conf *conf,
    struct jobspec *js)
{
	json_t	   *view, *ac, *list, *comps;
	const char *ns = k8s_obj_namespace(pods[0]);
	char	    key[512];
	size_t	    i;

	src->pod = pods[0];
	view = translate_view(src);
	if (k8s_obj_annotation(view, ANN_PREFIX "job-name") == NULL) {
		free(js->name);
		xasprintf(&js->name, "%s/%s", ns, group);
	}
	json_decref(view);
	free(js->comment);
	xasprintf(&js->comment, BRIDGE_COMMENT_MARKER " gang %s/%s (%zu pods)",
	    ns, group, n);
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list,
		    json_string(k8s_obj_key(pods[i], key, sizeof(key))));
	ac = json_pack("{s:o}", "pods", list);
	if (js->ncomps > 1) {
		comps = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(comps,
			    json_integer(js->comp_of[i]));
		json_object_set_new(ac, "comps", comps);
		list = json_array();
		for (i = 0; i < js->ncomps; i++)
			json_array_append_new(list,
			    json_pack("[I, I]",
				(json_int_t)js->comps[i].cpus_per_task,
				(json_int_t)js->comps[i].gpus_per_task));
		json_object_set_new(ac, "shapes", list);
	}
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, translate_uid(pods[i]));
	translate_stamp(js, conf, ac, list);
}

int
translate_group(json_t *const *pods, size_t n, const char *group,
    const struct translate_src *from, const struct translate_conf *conf,
    struct jobspec *js, char *err, size_t errlen)
{
	struct translate_src src = *from;
	int		     rc;

	if (n == 0) {
		snprintf(err, errlen, "group %s has no pods", group);
		return (-1);
	}
	src.pod = pods[0];
	src.gang = 1;
	if ((rc = translate_pod(&src, conf, js, err, errlen)) != 0 ||
	    (rc = translate_members(pods, n, &src, conf, js, err, errlen)) != 0)
		return (rc);
	if (dra_gang_shared(pods, n, src.dra, err, errlen) == -1)
		goto fail;
	js->ntasks = (uint32_t)n;
	src.pod = pods[0];
	if (translate_topology(js, &src, conf, err, errlen) == -1)
		goto fail;
	/*
	 * Slurm holds --switches and --segment for each component of a
	 * heterogeneous job alone, not for the whole: a gang that must share
	 * a domain is one job of identical tasks (of its largest member).
	 */
	if (js->ncomps > 0 && js->topo_key != NULL && js->topo_required)
		translate_comps_drop(js);
	if (js->group_gres != NULL &&
	    translate_group_node(js, err, errlen) == -1)
		goto fail;
	translate_group_stamp(pods, n, group, &src, conf, js);
	return (0);
fail:
	translate_jobspec_cleanup(js);
	return (-1);
}

/* The admin_comment's "comps" and "shapes", from js->comps (n pods). */
static void
translate_comps_comment(struct jobspec *js, size_t n)
{
	json_t *ac, *comps, *shapes;
	size_t	i;

	if (js->admin_comment == NULL ||
	    (ac = json_loads(js->admin_comment, 0, NULL)) == NULL)
		return;
	comps = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(comps, json_integer(js->comp_of[i]));
	shapes = json_array();
	for (i = 0; i < js->ncomps; i++)
		json_array_append_new(shapes,
		    json_pack("[I, I]", (json_int_t)js->comps[i].cpus_per_task,
			(json_int_t)js->comps[i].gpus_per_task));
	json_object_set_new(ac, "comps", comps);
	json_object_set_new(ac, "shapes", shapes);
	free(js->admin_comment);
	js->admin_comment = json_dumps(ac, JSON_COMPACT);
	json_decref(ac);
}

int
translate_split_nodes(struct jobspec *js, const char *const *exc, size_t n,
    char *err, size_t errlen)
{
	struct jobcomp c[JOBSPEC_MAX_COMPS], *from;
	int	       cbase[JOBSPEC_MAX_COMPS]; /* the component it splits */
	uint8_t	      *of;
	size_t	       i, k, nc = 0;
	int	       base;

	if (js->exclusive || js->mem_per_node_mb > 0 ||
	    js->group_gres != NULL) {
		snprintf(err, errlen,
		    "it asks for %s, which Slurm gives a heterogeneous job's "
		    "components alone",
		    js->exclusive ? "whole nodes (exclusive)" :
			js->mem_per_node_mb > 0 ?
				    "memory per node" :
				    "its PodGroup's claims on one node");
		return (-1);
	}
	memset(c, 0, sizeof(c));
	of = xcalloc(n, sizeof(*of));
	for (i = 0; i < n; i++) {
		base = js->ncomps > 0 ? js->comp_of[i] : -1;
		for (k = 0; k < nc; k++)
			if (cbase[k] == base &&
			    strcmp(c[k].exc_nodes != NULL ? c[k].exc_nodes : "",
				exc[i]) == 0)
				break;
		if (k == JOBSPEC_MAX_COMPS) {
			snprintf(err, errlen,
			    "its pods may use more than %d different sets of "
			    "nodes (or shapes), and Slurm allocates it as one "
			    "heterogeneous job of a component per set: at most "
			    "%d here",
			    JOBSPEC_MAX_COMPS, JOBSPEC_MAX_COMPS);
			for (k = 0; k < nc; k++) {
				free(c[k].tres_per_task);
				free(c[k].exc_nodes);
			}
			free(of);
			return (-1);
		}
		if (k == nc) {
			from = base >= 0 ? &js->comps[base] : NULL;
			c[k].cpus_per_task = from != NULL ?
			    from->cpus_per_task :
			    js->cpus_per_task;
			c[k].mem_per_cpu_mb = from != NULL ?
			    from->mem_per_cpu_mb :
			    js->mem_per_cpu_mb;
			c[k].gpus_per_task = from != NULL ?
			    from->gpus_per_task :
			    js->gpus_per_task;
			if ((from != NULL ? from->tres_per_task :
					    js->tres_per_task) != NULL)
				c[k].tres_per_task = xstrdup(from != NULL ?
					from->tres_per_task :
					js->tres_per_task);
			c[k].exc_nodes = *exc[i] != '\0' ? xstrdup(exc[i]) :
							   NULL;
			cbase[k] = base;
			nc++;
		}
		c[k].ntasks++;
		of[i] = (uint8_t)k;
	}
	translate_comps_drop(js);
	memcpy(js->comps, c, sizeof(c));
	js->ncomps = nc;
	js->comp_of = of;
	free(js->exc_nodes);
	js->exc_nodes = NULL; /* each component's own */
	translate_comps_comment(js, n);
	return (0);
}

int
translate_owner_check(const json_t *obj, const json_t *ns,
    const struct translate_conf *conf, char *err, size_t errlen)
{
	struct translate_src src;
	struct jobspec	     js;
	json_t		    *pod, *layer = (json_t *)(uintptr_t)obj;
	int		     rc;

	/* A pod of one CPU that sets nothing itself: obj's annotations rule. */
	pod = json_pack("{s:{s:s?, s:s?}, s:{s:[{s:s, s:s}], "
			"s:[{s:s, s:{s:{s:s}}}]}}",
	    "metadata", "namespace", k8s_obj_namespace(obj), "name",
	    k8s_obj_name(obj), "spec", "tolerations", "key", MANAGED_TAINT_KEY,
	    "operator", "Exists", "containers", "name", "c", "resources",
	    "requests", "cpu", "1");
	src.gang = 0;
	src.pod = pod;
	src.layers = &layer;
	src.nlayers = 1;
	src.ns = ns;
	src.dra = NULL;
	if ((rc = translate_pod(&src, conf, &js, err, errlen)) == 0)
		translate_jobspec_cleanup(&js);
	json_decref(pod);
	return (rc);
}
