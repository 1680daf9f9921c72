/*
 * Workloads: which Kubernetes object a pod belongs to (its workload root)
 * and which gang it is in.  Each rule is written here once; the scheduler
 * and the webhook both call it, each with its own lookup of the objects.
 * Pure apart from the lookup; any thread.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "workload.h"

long
workload_count(const char *s, long min, long max)
{
	char *end;
	long  n;

	if (s == NULL || !isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end != '\0' || errno != 0 || n < min || n > max)
		return (-1);
	return (n);
}

/* A replicated job's pods: replicas x parallelism; -1 if out of range. */
static long
workload_rj_pods(const json_t *rj)
{
	json_int_t replicas, par;

	replicas = json_integer_value(json_object_get(rj, "replicas"));
	par = json_integer_value(k8s_obj_get(rj, "template.spec.parallelism"));
	/* The API's defaults: one replica, parallelism one. */
	if (json_object_get(rj, "replicas") == NULL)
		replicas = 1;
	if (k8s_obj_get(rj, "template.spec.parallelism") == NULL)
		par = 1;
	if (replicas < 0 || par < 0 || replicas > WORKLOAD_MAX_GANG ||
	    par > WORKLOAD_MAX_GANG)
		return (-1);
	return ((long)(replicas * par));
}

int
workload_jobset_size(const json_t *jobset)
{
	const json_t *rj;
	long	      total = 0, n;
	size_t	      i;

	json_array_foreach (k8s_obj_get(jobset, "spec.replicatedJobs"), i, rj) {
		if ((n = workload_rj_pods(rj)) < 0 ||
		    (total += n) > WORKLOAD_MAX_GANG)
			return (-1);
	}
	return ((int)total);
}

/*
 * A replicated job's dependsOn as one string ("name=status;..."), "" when
 * it has none: replicated jobs with the same one are created together.
 * -1 with err when an entry names no replicated job before index i (which
 * also rules out cycles) or a status other than Ready or Complete.
 */
static int
workload_rj_deps(const json_t *rjs, size_t i, char *buf, size_t len, char *err,
    size_t errlen)
{
	const json_t *deps = json_object_get(json_array_get(rjs, i),
	    "dependsOn");
	const json_t *d;
	const char   *name, *status, *prev;
	size_t	      k, j, off = 0;

	buf[0] = '\0';
	json_array_foreach (deps, k, d) {
		name = json_string_value(json_object_get(d, "name"));
		status = json_string_value(json_object_get(d, "status"));
		for (j = 0; name != NULL && j < i; j++) {
			prev = k8s_obj_str(json_array_get(rjs, j), "name");
			if (prev != NULL && strcmp(prev, name) == 0)
				break;
		}
		if (name == NULL || j == i) {
			snprintf(err, errlen,
			    "spec.replicatedJobs[%zu].dependsOn[%zu].name: "
			    "\"%.64s\" is not a replicated job listed before "
			    "it (dependsOn may only name earlier ones)",
			    i, k, name != NULL ? name : "");
			return (-1);
		}
		if (status == NULL ||
		    (strcmp(status, "Ready") != 0 &&
			strcmp(status, "Complete") != 0)) {
			snprintf(err, errlen,
			    "spec.replicatedJobs[%zu].dependsOn[%zu].status: "
			    "\"%.32s\" is not Ready or Complete",
			    i, k, status != NULL ? status : "");
			return (-1);
		}
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s=%s;",
			    name, status);
	}
	return (0);
}

int
workload_jobset_stage(const json_t *jobset, const char *rjname,
    const char **stage, int *pods, char *err, size_t errlen)
{
	const json_t *rjs = k8s_obj_get(jobset, "spec.replicatedJobs");
	const json_t *rj;
	const char   *name;
	char	      mine[512], deps[512];
	size_t	      i, at = (size_t)-1;
	int	      staged = 0;
	long	      total = 0, n;

	*stage = NULL;
	*pods = 0;
	/* Which replicated job the pod is of, and whether any depends. */
	json_array_foreach (rjs, i, rj) {
		if (workload_rj_deps(rjs, i, deps, sizeof(deps), err, errlen) ==
		    -1)
			return (-1);
		if (deps[0] != '\0')
			staged = 1;
		name = k8s_obj_str(rj, "name");
		if (rjname != NULL && name != NULL && strcmp(name, rjname) == 0)
			at = i;
	}
	if (!staged)
		return (1);
	if (at == (size_t)-1) {
		snprintf(err, errlen,
		    "label jobset.sigs.k8s.io/replicatedjob-name: \"%.64s\" "
		    "names no replicated job of the JobSet (its stages come "
		    "from dependsOn)",
		    rjname != NULL ? rjname : "");
		return (-1);
	}
	(void)workload_rj_deps(rjs, at, mine, sizeof(mine), err, errlen);
	/* The stage: every replicated job with the same dependsOn. */
	json_array_foreach (rjs, i, rj) {
		(void)workload_rj_deps(rjs, i, deps, sizeof(deps), err, errlen);
		if (strcmp(deps, mine) != 0)
			continue;
		if (*stage == NULL)
			*stage = k8s_obj_str(rj, "name");
		if ((n = workload_rj_pods(rj)) < 0 ||
		    (total += n) > WORKLOAD_MAX_GANG) {
			snprintf(err, errlen,
			    "JobSet stage %s: more than %d pods, or negative "
			    "replicas or parallelism",
			    *stage, WORKLOAD_MAX_GANG);
			return (-1);
		}
	}
	*pods = (int)total;
	return (0);
}

/* A new reference to the object, or NULL (no lookup, or unknown). */
static json_t *
workload_find(const struct workload_lookup *lk, enum workload_kind kind,
    const char *ns, const char *name)
{
	if (lk == NULL || lk->fn == NULL || name == NULL)
		return (NULL);
	return (lk->fn(lk->arg, kind, ns, name));
}

/* The controller ownerReference of kind in apiVersion, or NULL. */
static const json_t *
workload_controller(const json_t *pod, const char *kind, const char *apiv)
{
	const json_t *ref;
	const char   *k, *a;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pod, "metadata.ownerReferences"), i,
	    ref) {
		k = json_string_value(json_object_get(ref, "kind"));
		a = json_string_value(json_object_get(ref, "apiVersion"));
		if (json_is_true(json_object_get(ref, "controller")) &&
		    k != NULL && a != NULL && strcmp(k, kind) == 0 &&
		    strcmp(a, apiv) == 0)
			return (ref);
	}
	return (NULL);
}

json_t *
workload_job(const json_t *pod, const struct workload_lookup *lk)
{
	const json_t *ref = workload_controller(pod, "Job", "batch/v1");
	const char   *uid, *have;
	json_t	     *job;

	if (ref == NULL)
		return (NULL);
	job = workload_find(lk, WORKLOAD_JOB, k8s_obj_namespace(pod),
	    json_string_value(json_object_get(ref, "name")));
	uid = json_string_value(json_object_get(ref, "uid"));
	have = k8s_obj_str(job, "metadata.uid");
	if (job != NULL && uid != NULL && have != NULL &&
	    strcmp(uid, have) != 0) {
		json_decref(job);
		return (NULL);
	}
	return (job);
}

json_t *
workload_root(const json_t *pod, const struct workload_lookup *lk)
{
	static const struct {
		enum workload_kind kind;
		const char	  *label;
	} named[] = {
		{ WORKLOAD_PODGROUP, LABEL_POD_GROUP },
		{ WORKLOAD_LWS, LWS_LABEL_NAME },
		{ WORKLOAD_JOBSET, JOBSET_LABEL_NAME },
	};
	const char *ns = k8s_obj_namespace(pod);
	json_t	   *root;
	size_t	    i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if ((root = workload_find(lk, named[i].kind, ns,
			 k8s_obj_label(pod, named[i].label))) != NULL)
			return (root);
	if ((root = workload_job(pod, lk)) != NULL)
		return (root);
	return (workload_find(lk, WORKLOAD_SCHED_PODGROUP, ns,
	    k8s_obj_str(pod, "spec.schedulingGroup.podGroupName")));
}

const char *
workload_ref_name(const json_t *pg)
{
	const char *name = k8s_obj_str(pg, "spec.workloadRef.workloadName");

	/* v1alpha2 (1.36) named it podGroupTemplateRef.workload. */
	if (name == NULL)
		name = k8s_obj_str(pg,
		    "spec.podGroupTemplateRef.workload.workloadName");
	return (name);
}

size_t
workload_layers(const json_t *pod, const struct workload_lookup *lk,
    json_t *out[WORKLOAD_LAYERS])
{
	const char *ns = k8s_obj_namespace(pod);
	json_t	   *pg;
	size_t	    n = 0;

	pg = workload_find(lk, WORKLOAD_SCHED_PODGROUP, ns,
	    k8s_obj_str(pod, "spec.schedulingGroup.podGroupName"));
	if (pg == NULL) {
		if ((out[0] = workload_root(pod, lk)) != NULL)
			n = 1;
		return (n);
	}
	if ((out[n] = workload_job(pod, lk)) != NULL)
		n++;
	if ((out[n] = workload_find(lk, WORKLOAD_SCHED_WORKLOAD, ns,
		 workload_ref_name(pg))) != NULL)
		n++;
	if ((out[n] = workload_find(lk, WORKLOAD_SCHED_COMPOSITE, ns,
		 k8s_obj_str(pg, "spec.parentCompositePodGroupName"))) != NULL)
		n++;
	out[n++] = pg;
	return (n);
}

void
workload_layers_free(json_t *out[], size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_decref(out[i]);
}

/* A schedulingPolicy's gang minCount, as workload_podgroup_min. */
static int
workload_policy_min(const json_t *policy)
{
	const json_t *gang = json_object_get(policy, "gang");
	json_int_t    n;

	if (gang == NULL)
		return (json_object_get(policy, "basic") != NULL ? 0 : -1);
	n = json_integer_value(json_object_get(gang, "minCount"));
	return (n >= 1 && n <= WORKLOAD_MAX_GANG ? (int)n : -1);
}

int
workload_podgroup_min(const json_t *pg)
{
	return (workload_policy_min(k8s_obj_get(pg, "spec.schedulingPolicy")));
}

int
workload_podgroup_disrupt_all(const json_t *pg)
{
	return (k8s_obj_get(pg, "spec.disruptionMode.all") != NULL);
}

/* The gang annotation: 1 "true", 0 "false", -1 absent; -2 with err. */
static int
workload_gang_override(const json_t *pod, char *err, size_t errlen)
{
	const char *gang = k8s_obj_annotation(pod, ANN_PREFIX "gang");

	if (gang == NULL)
		return (-1);
	if (strcmp(gang, "true") == 0)
		return (1);
	if (strcmp(gang, "false") == 0)
		return (0);
	snprintf(err, errlen,
	    "annotation " ANN_PREFIX "gang: "
	    "\"%.32s\" is not \"true\" or \"false\"",
	    gang);
	return (-2);
}

/* Fills gid as the gang called name; 0. */
static int
workload_gang(struct group_id *gid, const char *ns, const char *name,
    const char *suffix, int min_member)
{
	snprintf(gid->key, sizeof(gid->key), "gang:%s/%s%s", ns, name, suffix);
	snprintf(gid->name, sizeof(gid->name), "%s%s", name, suffix);
	gid->min_member = min_member;
	gid->gang = 1;
	gid->sized_by = WORKLOAD_KINDS;
	return (0);
}

/*
 * A pod in a Kubernetes PodGroup (spec.schedulingGroup.podGroupName): its
 * gang, sized by the PodGroup's minCount, while the PodGroup is unknown
 * (pods may come first) or has a gang policy; 1 when its policy is basic
 * (each pod alone).  A PodGroup with a parent CompositePodGroup
 * (spec.parentCompositePodGroupName) whose policy is gang, or not known
 * yet, is part of the composite's gang ("composite:ns/name"): one Slurm
 * job for every child group.
 */
static int
workload_group_sched(const json_t *pod, const char *pg_name,
    const struct workload_lookup *lk, struct group_id *gid)
{
	const char *ns = k8s_obj_namespace(pod), *parent;
	json_t *pg = workload_find(lk, WORKLOAD_SCHED_PODGROUP, ns, pg_name);
	json_t *cpg = NULL;
	int	min = pg != NULL ? workload_podgroup_min(pg) : -1;

	parent = k8s_obj_str(pg, "spec.parentCompositePodGroupName");
	if (parent != NULL &&
	    ((cpg = workload_find(lk, WORKLOAD_SCHED_COMPOSITE, ns, parent)) ==
		    NULL ||
		k8s_obj_get(cpg, "spec.schedulingPolicy.basic") == NULL)) {
		snprintf(gid->key, sizeof(gid->key), "composite:%s/%s", ns,
		    parent);
		snprintf(gid->name, sizeof(gid->name), "%s", parent);
		gid->min_member = 0;
		gid->gang = 1;
		gid->sized_by = WORKLOAD_SCHED_COMPOSITE;
		json_decref(cpg);
		json_decref(pg);
		return (0);
	}
	json_decref(cpg);
	json_decref(pg);
	if (min == 0)
		return (1);
	snprintf(gid->key, sizeof(gid->key), "podgroup:%s/%s", ns, pg_name);
	snprintf(gid->name, sizeof(gid->name), "%s", pg_name);
	gid->min_member = 0;
	gid->gang = 1;
	gid->sized_by = WORKLOAD_SCHED_PODGROUP;
	return (0);
}

int
workload_composite_size(const json_t *cpg, const struct workload_lookup *lk,
    char *why, size_t len)
{
	const char   *ns = k8s_obj_namespace(cpg), *wname, *tname, *name;
	const json_t *t = NULL, *pgt;
	json_t	     *wl;
	size_t	      i;
	int	      n, total = 0, want;

	name = k8s_obj_name(cpg);
	wname = k8s_obj_str(cpg, "spec.workloadRef.workloadName");
	tname = k8s_obj_str(cpg, "spec.workloadRef.templateName");
	if (wname == NULL || tname == NULL) {
		snprintf(why, len,
		    "CompositePodGroup %s/%s has no spec.workloadRef "
		    "(workloadName and templateName): the bridge sizes a "
		    "composite gang from its Workload's template",
		    ns, name);
		return (0);
	}
	if ((wl = workload_find(lk, WORKLOAD_SCHED_WORKLOAD, ns, wname)) ==
	    NULL) {
		snprintf(why, len,
		    "waiting for Workload %s/%s (CompositePodGroup %s "
		    "spec.workloadRef) to exist",
		    ns, wname, name);
		return (0);
	}
	json_array_foreach (k8s_obj_get(wl, "spec.compositePodGroupTemplates"),
	    i, pgt) {
		const char *tn = json_string_value(
		    json_object_get(pgt, "name"));
		if (tn != NULL && strcmp(tn, tname) == 0)
			t = pgt;
	}
	if (t == NULL) {
		snprintf(why, len,
		    "Workload %s/%s has no compositePodGroupTemplates entry "
		    "named %s (CompositePodGroup %s spec.workloadRef"
		    ".templateName)",
		    ns, wname, tname, name);
		goto out;
	}
	if (json_object_get(t, "compositePodGroupTemplates") != NULL) {
		snprintf(why, len,
		    "Workload %s/%s template %s nests CompositePodGroups: the "
		    "bridge places one level of composite (PodGroups in one "
		    "CompositePodGroup)",
		    ns, wname, tname);
		goto out;
	}
	json_array_foreach (json_object_get(t, "podGroupTemplates"), i, pgt) {
		n = workload_policy_min(
		    json_object_get(pgt, "schedulingPolicy"));
		if (n < 1) {
			snprintf(why, len,
			    "Workload %s/%s template %s: podGroupTemplates[%zu]"
			    ".schedulingPolicy must be gang with a minCount "
			    "from 1 to %d in a composite gang",
			    ns, wname, tname, i, WORKLOAD_MAX_GANG);
			total = 0;
			goto out;
		}
		total += n;
	}
	want = (int)json_integer_value(
	    k8s_obj_get(cpg, "spec.schedulingPolicy.gang.minGroupCount"));
	if (i == 0 || want < 1 || (size_t)want > i ||
	    total > WORKLOAD_MAX_GANG) {
		snprintf(why, len,
		    "CompositePodGroup %s/%s: spec.schedulingPolicy.gang"
		    ".minGroupCount must be from 1 to the %zu PodGroups of "
		    "template %s, and their pods at most %d",
		    ns, name, i, tname, WORKLOAD_MAX_GANG);
		total = 0;
	}
out:
	json_decref(wl);
	return (total);
}

/* The pod-group label's gang: min-member, or 0 for a PodGroup CR. */
static int
workload_group_label(const json_t *pod, const char *group, struct group_id *gid,
    char *err, size_t errlen)
{
	const char *min = k8s_obj_annotation(pod, ANN_MIN_MEMBER);
	long	    n = 0;

	if (strlen(group) > 63) {
		snprintf(err, errlen,
		    "label " LABEL_POD_GROUP ": "
		    "longer than 63 characters");
		return (-1);
	}
	if (min != NULL &&
	    (n = workload_count(min, 1, WORKLOAD_MAX_GANG)) == -1) {
		snprintf(err, errlen,
		    "annotation " ANN_MIN_MEMBER
		    ": \"%.32s\" is not a whole number from 1 to %d",
		    min, WORKLOAD_MAX_GANG);
		return (-1);
	}
	workload_gang(gid, k8s_obj_namespace(pod), group, "", (int)n);
	gid->grows = 1;
	return (0);
}

/*
 * A pod group of Kueue's pod integration: the pods with its group-name
 * label, pod-group-total-count of them.  Kueue admits them as one
 * Workload and ungates them together, so they are one Slurm job.
 */
static int
workload_group_kueue(const json_t *pod, const char *group, struct group_id *gid,
    char *err, size_t errlen)
{
	const char *total = k8s_obj_annotation(pod, KUEUE_ANN_GROUP_TOTAL);
	long	    n;

	if ((n = workload_count(total, 1, WORKLOAD_MAX_GANG)) == -1) {
		snprintf(err, errlen,
		    "annotation " KUEUE_ANN_GROUP_TOTAL
		    ": \"%.32s\" is not a whole number from 1 to %d (label " KUEUE_LABEL_GROUP
		    " makes the pod one of a Kueue pod "
		    "group)",
		    total != NULL ? total : "", WORKLOAD_MAX_GANG);
		return (-1);
	}
	return (workload_gang(gid, k8s_obj_namespace(pod), group, "", (int)n));
}

/* A LeaderWorkerSet group: leader and workers, "size" pods. */
static int
workload_group_lws(const json_t *pod, const char *lws, const char *idx,
    struct group_id *gid, char *err, size_t errlen)
{
	const char *size = k8s_obj_annotation(pod, LWS_ANN_SIZE);
	char	    suffix[80];
	long	    n;

	if ((n = workload_count(size, 1, WORKLOAD_MAX_GANG)) == -1) {
		snprintf(err, errlen,
		    "annotation " LWS_ANN_SIZE ": "
		    "\"%.32s\" is not a whole number from 1 to %d",
		    size != NULL ? size : "", WORKLOAD_MAX_GANG);
		return (-1);
	}
	snprintf(suffix, sizeof(suffix), "-%s", idx);
	return (
	    workload_gang(gid, k8s_obj_namespace(pod), lws, suffix, (int)n));
}

/*
 * A JobSet: all its pods, replicas x parallelism over its jobs.  With
 * dependsOn, the controller creates it stage by stage, so each stage is a
 * gang of its own ("<jobset>-<first replicated job of the stage>"): a gang
 * never waits for pods that cannot exist yet.
 */
static int
workload_group_jobset(const json_t *pod, const char *js,
    const struct workload_lookup *lk, struct group_id *gid, char *err,
    size_t errlen)
{
	const char *ns = k8s_obj_namespace(pod), *stage;
	json_t	   *jobset = workload_find(lk, WORKLOAD_JOBSET, ns, js);
	char	    suffix[80], why[256];
	int	    n = 0, rc = 1;

	if (jobset != NULL &&
	    (rc = workload_jobset_stage(jobset,
		 k8s_obj_label(pod, JOBSET_LABEL_RJ), &stage, &n, why,
		 sizeof(why))) == 1)
		n = workload_jobset_size(jobset);
	if (rc == 0)
		snprintf(suffix, sizeof(suffix), "-%s", stage);
	json_decref(jobset);
	if (rc == -1) {
		snprintf(err, errlen, "JobSet %s: %s", js, why);
		return (-1);
	}
	if (n < 0) {
		snprintf(err, errlen,
		    "JobSet %s: more than %d pods, or "
		    "negative replicas or parallelism",
		    js, WORKLOAD_MAX_GANG);
		return (-1);
	}
	return (workload_gang(gid, ns, js, rc == 0 ? suffix : "", n));
}

/* An Indexed Job with parallelism > 1 is a gang: 1, or 0 if not. */
static int
workload_group_job(const json_t *pod, const struct workload_lookup *lk,
    struct group_id *gid)
{
	json_t	   *job = workload_job(pod, lk);
	const char *mode = k8s_obj_str(job, "spec.completionMode");
	json_int_t n = json_integer_value(k8s_obj_get(job, "spec.parallelism"));
	int	   gang = 0;

	if (mode != NULL && strcmp(mode, "Indexed") == 0 && n > 1 &&
	    n <= WORKLOAD_MAX_GANG) {
		workload_gang(gid, k8s_obj_namespace(pod), k8s_obj_name(job),
		    "", (int)n);
		gang = 1;
	}
	json_decref(job);
	return (gang);
}

int
workload_group(const json_t *pod, const struct workload_lookup *lk,
    struct group_id *gid, char *err, size_t errlen)
{
	const char *v, *idx;
	int	    gang;

	memset(gid, 0, sizeof(*gid));
	if ((gang = workload_gang_override(pod, err, errlen)) == -2)
		return (-1);
	/* Placed beyond its gang's size, alone: so it stays. */
	if (k8s_obj_annotation(pod, ANN_BEYOND_GANG) != NULL)
		gang = 0;
	if (gang != 0) {
		if ((v = k8s_obj_str(pod,
			 "spec.schedulingGroup.podGroupName")) != NULL &&
		    workload_group_sched(pod, v, lk, gid) == 0)
			return (0);
		if ((v = k8s_obj_label(pod, LABEL_POD_GROUP)) != NULL)
			return (workload_group_label(pod, v, gid, err, errlen));
		if ((v = k8s_obj_label(pod, KUEUE_LABEL_GROUP)) != NULL)
			return (workload_group_kueue(pod, v, gid, err, errlen));
		if ((v = k8s_obj_label(pod, LWS_LABEL_NAME)) != NULL &&
		    (idx = k8s_obj_label(pod, LWS_LABEL_GROUP_INDEX)) != NULL)
			return (
			    workload_group_lws(pod, v, idx, gid, err, errlen));
		if ((v = k8s_obj_label(pod, JOBSET_LABEL_NAME)) != NULL)
			return (workload_group_jobset(pod, v, lk, gid, err,
			    errlen));
		if (workload_group_job(pod, lk, gid))
			return (0);
	}
	return (workload_group_alone(pod, gid, err, errlen));
}

int
workload_group_alone(const json_t *pod, struct group_id *gid, char *err,
    size_t errlen)
{
	const char *ns = k8s_obj_namespace(pod), *name = k8s_obj_name(pod);

	memset(gid, 0, sizeof(*gid));
	if ((size_t)snprintf(gid->key, sizeof(gid->key), "pod:%s/%s", ns,
		name) >= sizeof(gid->key)) {
		snprintf(err, errlen, "namespace and pod name are too long");
		return (-1);
	}
	snprintf(gid->name, sizeof(gid->name), "%s", name);
	gid->min_member = 1;
	gid->gang = 0;
	gid->sized_by = WORKLOAD_KINDS;
	return (0);
}

const char *
workload_key_name(const char *key)
{
	const char *slash = strchr(key, '/');

	return (slash != NULL ? slash + 1 : key);
}

const char *
workload_key_ns(const char *key, char *buf, size_t len)
{
	const char *colon = strchr(key, ':'), *slash = strchr(key, '/');

	if (colon == NULL || slash == NULL || slash < colon)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%.*s", (int)(slash - colon - 1), colon + 1);
	return (buf);
}

int32_t
workload_member_index(const json_t *pod)
{
	int32_t
	    c = (int32_t)
		workload_count(k8s_obj_label(pod,
				   "batch.kubernetes.io/job-completion-index"),
		    0, INT32_MAX),
	    g = (int32_t)workload_count(k8s_obj_label(pod,
					    JOBSET_LABEL_GLOBAL_INDEX),
		0, 32767);

	if (c < 0 && g < 0)
		return ((int32_t)workload_count(k8s_obj_label(pod,
						    LWS_LABEL_WORKER_INDEX),
		    0, INT32_MAX));
	if (g < 0)
		return (c);
	if (c > 65535)
		return (-1);
	return (g * 65536 + (c < 0 ? 0 : c));
}

int
workload_member_order(int32_t index_a, const char *name_a, int32_t index_b,
    const char *name_b)
{
	if (index_a >= 0 && index_b >= 0 && index_a != index_b)
		return (index_a < index_b ? -1 : 1);
	return (
	    strcmp(name_a != NULL ? name_a : "", name_b != NULL ? name_b : ""));
}

int
workload_gang_size(const char *ns, const char *name, int min_member,
    enum workload_kind sized_by, const struct workload_lookup *lk)
{
	json_t	  *o;
	json_int_t n;

	if (min_member > 0)
		return (min_member);
	if (sized_by == WORKLOAD_SCHED_PODGROUP) {
		o = workload_find(lk, WORKLOAD_SCHED_PODGROUP, ns, name);
		n = o != NULL ? workload_podgroup_min(o) : 0;
		json_decref(o);
		return (n > 0 ? (int)n : 0);
	}
	if (sized_by == WORKLOAD_SCHED_COMPOSITE) {
		char why[8];

		o = workload_find(lk, WORKLOAD_SCHED_COMPOSITE, ns, name);
		n = o != NULL ?
		    workload_composite_size(o, lk, why, sizeof(why)) :
		    0;
		json_decref(o);
		return ((int)n);
	}
	if ((o = workload_find(lk, WORKLOAD_PODGROUP, ns, name)) != NULL) {
		n = json_integer_value(k8s_obj_get(o, "spec.minMember"));
		json_decref(o);
		return (n >= 1 && n <= WORKLOAD_MAX_GANG ? (int)n : 0);
	}
	if ((o = workload_find(lk, WORKLOAD_JOBSET, ns, name)) != NULL) {
		n = workload_jobset_size(o);
		json_decref(o);
		return (n > 0 ? (int)n : 0);
	}
	return (0);
}
