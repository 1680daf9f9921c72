/*
 * Pure scheduling decisions, tested without threads or I/O: which group a
 * pod belongs to, and which member goes to which node of an allocation.
 * Runs on the reconcile thread.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "policy.h"

/* Parses a positive decimal count; -1 if s is not one. */
static long
sched_count(const char *s, long max)
{
	char	*end;
	long	 n;

	if (s == NULL || !isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end != '\0' || errno != 0 || n < 1 || n > max)
		return (-1);
	return (n);
}

int
sched_jobset_size(const json_t *jobset)
{
	const json_t	*rj;
	json_int_t	 replicas, par;
	long		 total = 0;
	size_t		 i;

	json_array_foreach(k8s_obj_get(jobset, "spec.replicatedJobs"), i, rj) {
		replicas = json_integer_value(json_object_get(rj, "replicas"));
		par = json_integer_value(k8s_obj_get(rj,
		    "template.spec.parallelism"));
		/* The API's defaults: one replica, parallelism one. */
		if (json_object_get(rj, "replicas") == NULL)
			replicas = 1;
		if (k8s_obj_get(rj, "template.spec.parallelism") == NULL)
			par = 1;
		if (replicas < 0 || par < 0 || replicas > SCHED_MAX_GANG ||
		    par > SCHED_MAX_GANG)
			return (-1);
		total += (long)(replicas * par);
		if (total > SCHED_MAX_GANG)
			return (-1);
	}
	return ((int)total);
}

int
sched_pod_group(const json_t *pod, const json_t *owner,
    const json_t *jobset, struct group_id *gid, char *err, size_t errlen)
{
	const char	*ns = k8s_obj_namespace(pod), *name = k8s_obj_name(pod);
	const char	*group, *min, *gang, *mode, *lws, *idx, *size, *js;
	long		 n;
	int		 gang_override = -1;

	memset(gid, 0, sizeof(*gid));
	gang = k8s_obj_annotation(pod, ANN_PREFIX "gang");
	if (gang != NULL) {
		if (strcmp(gang, "true") == 0)
			gang_override = 1;
		else if (strcmp(gang, "false") == 0)
			gang_override = 0;
		else {
			snprintf(err, errlen, "annotation " ANN_PREFIX "gang: "
			    "\"%.32s\" is not \"true\" or \"false\"", gang);
			return (-1);
		}
	}
	group = k8s_obj_label(pod, LABEL_POD_GROUP);
	min = k8s_obj_annotation(pod, ANN_MIN_MEMBER);
	if (gang_override != 0 && group != NULL) {
		/* Label (from the webhook or the user) plus min-member. */
		if (strlen(group) > 63) {
			snprintf(err, errlen, "label " LABEL_POD_GROUP ": "
			    "longer than 63 characters");
			return (-1);
		}
		if (min == NULL) {
			/* A PodGroup CR gives the size; the caller looks it up. */
			gid->min_member = 0;
		} else if ((n = sched_count(min, SCHED_MAX_GANG)) == -1) {
			snprintf(err, errlen, "annotation " ANN_MIN_MEMBER
			    ": \"%.32s\" is not a whole number from 1 to %d",
			    min, SCHED_MAX_GANG);
			return (-1);
		} else
			gid->min_member = (int)n;
		snprintf(gid->key, sizeof(gid->key), "gang:%s/%s", ns, group);
		snprintf(gid->name, sizeof(gid->name), "%s", group);
		gid->gang = 1;
		return (0);
	}
	/* A LeaderWorkerSet group: leader and workers, "size" pods. */
	lws = k8s_obj_label(pod, LWS_LABEL_NAME);
	idx = k8s_obj_label(pod, LWS_LABEL_GROUP_INDEX);
	size = k8s_obj_annotation(pod, LWS_ANN_SIZE);
	if (gang_override != 0 && lws != NULL && idx != NULL) {
		if ((n = sched_count(size, SCHED_MAX_GANG)) == -1) {
			snprintf(err, errlen, "annotation " LWS_ANN_SIZE ": "
			    "\"%.32s\" is not a whole number from 1 to %d",
			    size != NULL ? size : "", SCHED_MAX_GANG);
			return (-1);
		}
		snprintf(gid->key, sizeof(gid->key), "gang:%s/%s-%s", ns, lws,
		    idx);
		snprintf(gid->name, sizeof(gid->name), "%s-%s", lws, idx);
		gid->min_member = (int)n;
		gid->gang = 1;
		return (0);
	}
	/* A JobSet: all its pods, replicas x parallelism over its jobs. */
	js = k8s_obj_label(pod, JOBSET_LABEL_NAME);
	if (gang_override != 0 && js != NULL) {
		snprintf(gid->key, sizeof(gid->key), "gang:%s/%s", ns, js);
		snprintf(gid->name, sizeof(gid->name), "%s", js);
		gid->gang = 1;
		gid->min_member = jobset != NULL ? sched_jobset_size(jobset) : 0;
		if (gid->min_member < 0) {
			snprintf(err, errlen, "JobSet %s: more than %d pods, or "
			    "negative replicas or parallelism", js,
			    SCHED_MAX_GANG);
			return (-1);
		}
		return (0);
	}
	/* No label: an Indexed Job with parallelism > 1 is a gang. */
	if (gang_override != 0 && owner != NULL &&
	    (mode = k8s_obj_str(owner, "spec.completionMode")) != NULL &&
	    strcmp(mode, "Indexed") == 0 &&
	    (n = json_integer_value(k8s_obj_get(owner, "spec.parallelism")))
	    > 1 && n <= SCHED_MAX_GANG) {
		snprintf(gid->key, sizeof(gid->key), "gang:%s/%s", ns,
		    k8s_obj_name(owner));
		snprintf(gid->name, sizeof(gid->name), "%s",
		    k8s_obj_name(owner));
		gid->min_member = (int)n;
		gid->gang = 1;
		return (0);
	}
	if ((size_t)snprintf(gid->key, sizeof(gid->key), "pod:%s/%s", ns,
	    name) >= sizeof(gid->key)) {
		snprintf(err, errlen, "namespace and pod name are too long");
		return (-1);
	}
	snprintf(gid->name, sizeof(gid->name), "%s", name);
	gid->min_member = 1;
	gid->gang = 0;
	return (0);
}

int32_t
sched_completion_index(const json_t *pod)
{
	const char	*v = k8s_obj_label(pod, "batch.kubernetes.io/"
			    "job-completion-index");
	char		*end;
	long		 idx;

	if (v == NULL || *v == '\0')
		return (-1);
	idx = strtol(v, &end, 10);
	return (*end == '\0' && idx >= 0 && idx <= INT32_MAX ? (int32_t)idx :
	    -1);
}

int
sched_member_order(int32_t ia, const char *na, int32_t ib, const char *nb)
{
	if (ia >= 0 && ib >= 0 && ia != ib)
		return (ia < ib ? -1 : 1);
	return (strcmp(na != NULL ? na : "", nb != NULL ? nb : ""));
}

/*
 * Splits a node's GRES detail ("gpu:4(IDX:0-3)", or "gpu:a100:4(IDX:0,2-4)")
 * into the share of task k when every task has per_task devices: task k
 * gets the k-th run of per_task indices.  Returns a new string, or NULL if
 * the detail has no index list or too few indices.
 */
char *
sched_gres_share(const char *detail, int per_task, int k)
{
	const char	*idx, *p;
	char		*end, name[128];
	long		 ids[1024], a, b;
	size_t		 n = 0, i, first;
	struct buf	 out;

	if (detail == NULL || per_task < 1 || k < 0 ||
	    (idx = strstr(detail, "(IDX:")) == NULL)
		return (NULL);
	/* Name and type, without the count: "gpu:4" -> "gpu", "gpu:a:4" -> "gpu:a". */
	p = idx;
	while (p > detail && p[-1] != ':')
		p--;
	if (p == detail || (size_t)(p - 1 - detail) >= sizeof(name))
		return (NULL);
	memcpy(name, detail, p - 1 - detail);
	name[p - 1 - detail] = '\0';
	for (p = idx + 5; *p != ')' && *p != '\0';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno != 0 || a < 0)
			return (NULL);
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || errno != 0 || b < a)
				return (NULL);
			p = end;
		}
		/* Stops at b rather than past it: b may be LONG_MAX. */
		for (;;) {
			if (n == sizeof(ids) / sizeof(ids[0]))
				return (NULL);
			ids[n++] = a;
			if (a == b)
				break;
			a++;
		}
		if (*p == ',')
			p++;
		else if (*p != ')')
			return (NULL);
	}
	first = (size_t)k * (size_t)per_task;
	if (first + (size_t)per_task > n)
		return (NULL);
	buf_init(&out);
	buf_printf(&out, "%s:%d(IDX:", name, per_task);
	for (i = first; i < first + (size_t)per_task; i++) {
		/* Compress runs: 0,1,2 -> 0-2. */
		size_t j = i;
		while (j + 1 < first + (size_t)per_task && ids[j + 1] ==
		    ids[j] + 1)
			j++;
		if (i != first)
			buf_addstr(&out, ",");
		if (j > i)
			buf_printf(&out, "%ld-%ld", ids[i], ids[j]);
		else
			buf_printf(&out, "%ld", ids[i]);
		i = j;
	}
	buf_addstr(&out, ")");
	return (buf_release(&out));
}

int
sched_assign(const json_t *layout, size_t nmembers, int cpus_per_task,
    int per_node, int gpus_per_task, struct assignment *out, char *err,
    size_t errlen)
{
	const json_t	*ent;
	size_t		 i, m = 0;
	int		 slots, k;

	json_array_foreach(layout, i, ent) {
		const char *node = json_string_value(json_object_get(ent,
		    "node"));
		const char *gres = json_string_value(json_object_get(ent,
		    "gres"));
		json_int_t cpus = json_integer_value(json_object_get(ent,
		    "cpus"));

		if (node == NULL) {
			snprintf(err, errlen, "allocation entry %zu has no "
			    "node", i);
			goto fail;
		}
		/* Shared: as many tasks as the node's CPUs hold. */
		slots = per_node > 0 ? per_node : (int)(cpus /
		    (cpus_per_task > 0 ? cpus_per_task : 1));
		for (k = 0; k < slots && m < nmembers; k++, m++) {
			snprintf(out[m].node, sizeof(out[m].node), "%s",
			    node);
			out[m].gres = gpus_per_task > 0 ?
			    sched_gres_share(gres, gpus_per_task, k) : NULL;
		}
	}
	if (m < nmembers) {
		snprintf(err, errlen, "allocation holds %zu of %zu tasks", m,
		    nmembers);
		goto fail;
	}
	return (0);
 fail:
	for (i = 0; i < m; i++) {
		free(out[i].gres);
		out[i].gres = NULL;
	}
	return (-1);
}
