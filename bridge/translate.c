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

#include "xmalloc.h"
#include "bridge.h"

#define TR_MAX_STR	200	/* longest string we hand to Slurm */
#define MIB		(1024LL * 1024)

void
jobspec_init(struct jobspec *js)
{
	memset(js, 0, sizeof(*js));
}

void
jobspec_cleanup(struct jobspec *js)
{
	free(js->name);
	free(js->comment);
	free(js->admin_comment);
	free(js->partition);
	free(js->account);
	free(js->qos);
	free(js->reservation);
	free(js->constraints);
	free(js->tres_per_task);
	jobspec_init(js);
}

/* Sums a resource over a container list, returning the largest entry too. */
static int
res_containers(const json_t *list, const char *res, int milli, int limits,
    int64_t *sum, int64_t *max, char *err, size_t errlen)
{
	const json_t	*c;
	const char	*v, *cname;
	int64_t		 q;
	size_t		 i;
	int		 rc;

	*sum = *max = 0;
	json_array_foreach(list, i, c) {
		v = json_string_value(json_object_get(k8s_obj_get(c,
		    limits ? "resources.limits" : "resources.requests"),
		    res));
		/* Requests default to limits, as the API server does. */
		if (v == NULL && !limits)
			v = json_string_value(json_object_get(k8s_obj_get(c,
			    "resources.limits"), res));
		if (v == NULL)
			continue;
		rc = milli ? k8s_quantity_milli(v, &q) :
		    k8s_quantity_value(v, &q);
		if (rc == -1) {
			cname = json_string_value(json_object_get(c, "name"));
			snprintf(err, errlen, "container %s: resource %s: "
			    "\"%.32s\" is not a valid quantity (e.g. 500m, "
			    "2, 4Gi)", cname != NULL ? cname : "?", res, v);
			return (-1);
		}
		if (q > INT64_MAX - *sum) {
			snprintf(err, errlen, "resource %s: total overflows",
			    res);
			return (-1);
		}
		*sum += q;
		if (q > *max)
			*max = q;
	}
	return (0);
}

/* max(sum over containers, max over init containers), as the kubelet does. */
static int
res_pod(const json_t *pod, const char *res, int milli, int limits,
    int64_t *out, char *err, size_t errlen)
{
	int64_t	sum, max, isum, imax;

	if (res_containers(k8s_obj_get(pod, "spec.containers"), res, milli,
	    limits, &sum, &max, err, errlen) == -1 ||
	    res_containers(k8s_obj_get(pod, "spec.initContainers"), res, milli,
	    limits, &isum, &imax, err, errlen) == -1)
		return (-1);
	*out = sum > imax ? sum : imax;
	return (0);
}

int
translate_pod_resources(const json_t *pod, int64_t *cpu_milli,
    int64_t *mem_bytes, int64_t *gpus, char *err, size_t errlen)
{
	int64_t	cpu_req, cpu_lim, nv, amd;

	if (res_pod(pod, "cpu", 1, 0, &cpu_req, err, errlen) == -1 ||
	    res_pod(pod, "cpu", 1, 1, &cpu_lim, err, errlen) == -1 ||
	    res_pod(pod, "memory", 0, 0, mem_bytes, err, errlen) == -1 ||
	    res_pod(pod, "nvidia.com/gpu", 0, 1, &nv, err, errlen) == -1 ||
	    res_pod(pod, "amd.com/gpu", 0, 1, &amd, err, errlen) == -1)
		return (-1);
	/* A limit above the request is what the pod may use: reserve it. */
	*cpu_milli = cpu_req > cpu_lim ? cpu_req : cpu_lim;
	*gpus = nv + amd;
	return (0);
}

/* Checks a string annotation for length and printable ASCII. */
static int
ann_str(const json_t *pod, const char *key, char **out, char *err,
    size_t errlen)
{
	char		 full[128];
	const char	*v, *p;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	if (*v == '\0' || strlen(v) > TR_MAX_STR) {
		snprintf(err, errlen, "annotation %s: must be 1 to %d "
		    "characters", full, TR_MAX_STR);
		return (-1);
	}
	for (p = v; *p != '\0'; p++) {
		if (!isprint((unsigned char)*p)) {
			snprintf(err, errlen, "annotation %s: must be "
			    "printable ASCII", full);
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
	char		 full[128], *end;
	const char	*v;
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

static int
ann_bool(const json_t *pod, const char *key, int *out, char *err,
    size_t errlen)
{
	char		 full[128];
	const char	*v;

	snprintf(full, sizeof(full), ANN_PREFIX "%s", key);
	if ((v = k8s_obj_annotation(pod, full)) == NULL)
		return (0);
	if (strcmp(v, "true") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0)
		*out = 0;
	else {
		snprintf(err, errlen, "annotation %s: \"%.32s\" is not "
		    "\"true\" or \"false\"", full, v);
		return (-1);
	}
	return (0);
}

/* gres: "name[:type]:count" entries, comma separated, e.g. gpu:a100:2. */
static int
gres_valid(const char *s)
{
	const char	*p = s;
	int		 fields, digits;

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

/* The GPU count of a valid gres string ("gpu:a100:2,nic:1" -> 2). */
static uint32_t
gres_gpu_count(const char *gres)
{
	const char	*p = gres, *end, *colon;

	while (*p != '\0') {
		end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		if (strncmp(p, "gpu", 3) == 0 && (p[3] == ':' || p + 3 == end)) {
			for (colon = end; colon > p && colon[-1] != ':'; colon--)
				;
			if (colon == p)
				return (1);
			return ((uint32_t)strtoul(colon, NULL, 10));
		}
		p = *end == ',' ? end + 1 : end;
	}
	return (0);
}

int
translate_pod(const json_t *pod, const struct translate_conf *conf,
    struct jobspec *js, char *err, size_t errlen)
{
	const char	*ns = k8s_obj_namespace(pod);
	const char	*name = k8s_obj_name(pod);
	int64_t		 cpu_milli, mem, gpus, cpus;
	char		*gres = NULL;
	json_t		*ac;

	jobspec_init(js);
	if (ns == NULL || name == NULL) {
		snprintf(err, errlen, "pod has no namespace or name");
		goto fail;
	}
	if (translate_pod_resources(pod, &cpu_milli, &mem, &gpus, err, errlen)
	    == -1)
		goto fail;
	cpus = (cpu_milli + 999) / 1000;
	if (cpus < 1)
		cpus = 1;
	if (cpus > 65535) {
		snprintf(err, errlen, "resource cpu: %" PRId64 " CPUs is more "
		    "than Slurm accepts per task (65535)", cpus);
		goto fail;
	}
	js->ntasks = 1;
	js->cpus_per_task = (uint32_t)cpus;
	if (mem > 0)
		js->mem_per_cpu_mb = (uint64_t)((mem + MIB - 1) / MIB +
		    cpus - 1) / (uint64_t)cpus;
	js->exclusive = conf->exclusive;

	if (ann_str(pod, "partition", &js->partition, err, errlen) == -1 ||
	    ann_str(pod, "account", &js->account, err, errlen) == -1 ||
	    ann_str(pod, "qos", &js->qos, err, errlen) == -1 ||
	    ann_str(pod, "reservation", &js->reservation, err, errlen) == -1 ||
	    ann_str(pod, "constraints", &js->constraints, err, errlen) == -1 ||
	    ann_str(pod, "job-name", &js->name, err, errlen) == -1 ||
	    ann_str(pod, "gres", &gres, err, errlen) == -1 ||
	    ann_uint(pod, "timelimit", 1, 0x7ffffffe,
	    "a whole number of minutes (1 or more)", &js->time_limit, err,
	    errlen) == -1 ||
	    ann_uint(pod, "priority", 1, 0x7ffffffe,
	    "a whole number from 1 to 2147483646", &js->priority, err,
	    errlen) == -1 ||
	    ann_bool(pod, "exclusive", &js->exclusive, err, errlen) == -1)
		goto fail;
	if (js->partition == NULL)
		js->partition = xstrdup(conf->partition);
	if (gres != NULL) {
		if (!gres_valid(gres)) {
			snprintf(err, errlen, "annotation " ANN_PREFIX "gres: "
			    "\"%.32s\" is not NAME[:TYPE]:COUNT[,...] "
			    "(e.g. gpu:a100:2)", gres);
			goto fail;
		}
		xasprintf(&js->tres_per_task, "gres:%s", gres);
		js->gpus_per_task = gres_gpu_count(gres);
	} else if (gpus > 0) {
		xasprintf(&js->tres_per_task, "gres:gpu:%" PRId64, gpus);
		js->gpus_per_task = (uint32_t)gpus;
	}
	if (js->name == NULL)
		xasprintf(&js->name, "%s/%s", ns, name);
	xasprintf(&js->comment, BRIDGE_COMMENT_MARKER " pod %s/%s", ns, name);
	ac = json_pack("{s:[s++]}", "pods", ns, "/", name);
	js->admin_comment = json_dumps(ac, JSON_COMPACT);
	json_decref(ac);
	free(gres);
	return (0);
 fail:
	free(gres);
	jobspec_cleanup(js);
	return (-1);
}

json_t *
translate_admin_pods(const char *admin_comment)
{
	json_t	*ac, *pods;

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

int
translate_group(json_t *const *pods, size_t n, const char *group,
    const struct translate_conf *conf, struct jobspec *js, char *err,
    size_t errlen)
{
	struct jobspec	 one;
	json_t		*ac, *list;
	const char	*ns;
	size_t		 i;
	char		 key[512];

	if (n == 0) {
		snprintf(err, errlen, "group %s has no pods", group);
		return (-1);
	}
	if (translate_pod(pods[0], conf, js, err, errlen) == -1)
		return (-1);
	ns = k8s_obj_namespace(pods[0]);
	/* The largest member decides the per-task size. */
	for (i = 1; i < n; i++) {
		if (translate_pod(pods[i], conf, &one, err, errlen) == -1) {
			jobspec_cleanup(js);
			return (-1);
		}
		if (one.cpus_per_task > js->cpus_per_task)
			js->cpus_per_task = one.cpus_per_task;
		if (one.mem_per_cpu_mb > js->mem_per_cpu_mb)
			js->mem_per_cpu_mb = one.mem_per_cpu_mb;
		if (one.gpus_per_task > js->gpus_per_task) {
			js->gpus_per_task = one.gpus_per_task;
			free(js->tres_per_task);
			js->tres_per_task = one.tres_per_task;
			one.tres_per_task = NULL;
		}
		jobspec_cleanup(&one);
	}
	js->ntasks = (uint32_t)n;
	if (k8s_obj_annotation(pods[0], ANN_PREFIX "job-name") == NULL) {
		free(js->name);
		xasprintf(&js->name, "%s/%s", ns, group);
	}
	free(js->comment);
	xasprintf(&js->comment, BRIDGE_COMMENT_MARKER " gang %s/%s (%zu pods)",
	    ns, group, n);
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, json_string(k8s_obj_key(pods[i],
		    key, sizeof(key))));
	ac = json_pack("{s:o}", "pods", list);
	free(js->admin_comment);
	js->admin_comment = json_dumps(ac, JSON_COMPACT);
	json_decref(ac);
	return (0);
}
