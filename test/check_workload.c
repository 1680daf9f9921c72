/*
 * Workloads (common/workload.c): the workload root of each shape of
 * workload, the gang a pod is in, the gang's size and member order.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy.h"
#include "workload.h"
#include "xmalloc.h"
#include "check_suites.h"

/* The objects the test lookup knows, one per kind (borrowed). */
static json_t *known[WORKLOAD_KINDS];

static json_t *
test_lookup(void *arg, enum workload_kind kind, const char *ns,
    const char *name)
{
	json_t *o = known[kind];

	(void)arg;
	if (o == NULL || k8s_obj_namespace(o) == NULL ||
	    strcmp(k8s_obj_namespace(o), ns) != 0 ||
	    strcmp(k8s_obj_name(o), name) != 0)
		return (NULL);
	return (json_incref(o));
}

static const struct workload_lookup lookup = { test_lookup, NULL };

static json_t *
pod(const char *name, const char *group, const char *min, const char *gang)
{
	json_t *p = json_pack("{s:{s:s, s:s, s:{}, s:{}}}", "metadata", "name",
	    name, "namespace", "ns", "labels", "annotations");
	json_t *md = json_object_get(p, "metadata");

	if (group != NULL)
		json_object_set_new(json_object_get(md, "labels"),
		    LABEL_POD_GROUP, json_string(group));
	if (min != NULL)
		json_object_set_new(json_object_get(md, "annotations"),
		    ANN_MIN_MEMBER, json_string(min));
	if (gang != NULL)
		json_object_set_new(json_object_get(md, "annotations"),
		    ANN_PREFIX "gang", json_string(gang));
	return (p);
}

/* Adds a controller ownerReference. */
static void
owned_by(json_t *p, const char *apiv, const char *kind, const char *name,
    const char *uid)
{
	json_t *refs = json_array();

	json_array_append_new(refs,
	    json_pack("{s:s, s:s, s:s, s:s, s:b}", "apiVersion", apiv, "kind",
		kind, "name", name, "uid", uid, "controller", 1));
	json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
	    refs);
}

static void
set_label(json_t *p, const char *k, const char *v)
{
	json_object_set_new(k8s_obj_get(p, "metadata.labels"), k,
	    json_string(v));
}

/* An object of the shape the caches hold. */
static json_t *
object(const char *name, const char *uid, json_t *spec)
{
	return (json_pack("{s:{s:s, s:s, s:s}, s:o}", "metadata", "name", name,
	    "namespace", "ns", "uid", uid, "spec", spec));
}

/* The group of a pod from its own labels and annotations alone. */
static const struct {
	const char *pod;
	const char *group; /* pod-group label */
	const char *min;   /* min-member annotation */
	const char *gang;  /* gang annotation */
	const char *key;   /* NULL: refused, with error */
	int	    min_member;
	int	    is_gang;
	const char *error; /* substring */
} own_groups[] = {
	{ "a", "train", "8", NULL, "gang:ns/train", 8, 1, NULL },
	/* Label without min-member: the PodGroup CR decides (0). */
	{ "a", "pg", NULL, NULL, "gang:ns/pg", 0, 1, NULL },
	/* gang: "false" wins over the label. */
	{ "solo", "train", "8", "false", "pod:ns/solo", 1, 0, NULL },
	{ "a", "train", "lots", NULL, NULL, 0, 0,
	    ANN_MIN_MEMBER ": \"lots\" is not a whole number" },
	{ "a", NULL, NULL, "maybe", NULL, 0, 0, "gang: \"maybe\"" },
};

START_TEST(test_workload_own_groups)
{
	struct group_id g;
	char		err[256] = "";
	json_t	       *p;

	p = pod(own_groups[_i].pod, own_groups[_i].group, own_groups[_i].min,
	    own_groups[_i].gang);
	if (own_groups[_i].key == NULL) {
		ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)),
		    -1);
		ck_assert_msg(strstr(err, own_groups[_i].error) != NULL,
		    "error \"%s\"", err);
	} else {
		ck_assert_msg(workload_group(p, NULL, &g, err, sizeof(err)) ==
			0,
		    "%s", err);
		ck_assert_str_eq(g.key, own_groups[_i].key);
		ck_assert_int_eq(g.min_member, own_groups[_i].min_member);
		ck_assert_int_eq(g.gang, own_groups[_i].is_gang);
	}
	json_decref(p);
}
END_TEST

/* The group of a pod from its workload. */
START_TEST(test_workload_groups)
{
	struct group_id g;
	char		err[256];
	json_t	       *p, *job;

	/* Indexed Job owner with parallelism 4. */
	job = json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:i}}", "metadata", "name",
	    "sim", "namespace", "ns", "uid", "u-sim", "spec", "completionMode",
	    "Indexed", "parallelism", 4);
	p = pod("sim-0-abc", NULL, NULL, NULL);
	owned_by(p, "batch/v1", "Job", "sim", "u-sim");
	known[WORKLOAD_JOB] = job;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/sim");
	ck_assert_int_eq(g.min_member, 4);
	json_object_set_new(json_object_get(job, "spec"), "completionMode",
	    json_string("NonIndexed"));
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/sim-0-abc");
	json_decref(p);
	known[WORKLOAD_JOB] = NULL;
	json_decref(job);

	/* LeaderWorkerSet: name + group index, size from the annotation. */
	p = pod("lws-1-2", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p, "metadata.labels"), LWS_LABEL_NAME,
	    json_string("lws"));
	json_object_set_new(k8s_obj_get(p, "metadata.labels"),
	    LWS_LABEL_GROUP_INDEX, json_string("1"));
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    LWS_ANN_SIZE, json_string("4"));
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/lws-1");
	ck_assert_int_eq(g.min_member, 4);
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    LWS_ANN_SIZE, json_string("0"));
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), -1);
	json_decref(p);

	/* Kueue's pod group: its name, pod-group-total-count pods. */
	p = pod("kp-0", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p, "metadata.labels"),
	    KUEUE_LABEL_GROUP, json_string("kp"));
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    KUEUE_ANN_GROUP_TOTAL, json_string("3"));
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/kp");
	ck_assert_int_eq(g.min_member, 3);
	ck_assert_int_eq(g.gang, 1);
	ck_assert_int_eq(g.grows, 0); /* Kueue admits the group whole */
	json_object_del(k8s_obj_get(p, "metadata.annotations"),
	    KUEUE_ANN_GROUP_TOTAL);
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, KUEUE_ANN_GROUP_TOTAL ": \"\" is not") !=
		NULL,
	    "%s", err);
	json_decref(p);

	/*
	 * A scheduler-plugins PodGroup grows: a pod the scheduler placed
	 * beyond it (ANN_BEYOND_GANG) is alone from then on.
	 */
	p = pod("pg-extra", "pg", "2", NULL);
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/pg");
	ck_assert_int_eq(g.grows, 1);
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    ANN_BEYOND_GANG, json_string("pg"));
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/pg-extra");
	ck_assert_int_eq(g.gang, 0);
	json_decref(p);

	/* JobSet: 2 x 3 + 1 (defaults) pods; the Job owner does not win. */
	job = json_pack("{s:{s:s, s:s}, s:{s:[{s:i, s:{s:{s:i}}}, {s:{}}]}}",
	    "metadata", "name", "js", "namespace", "ns", "spec",
	    "replicatedJobs", "replicas", 2, "template", "spec", "parallelism",
	    3, "template");
	ck_assert_int_eq(workload_jobset_size(job), 7);
	p = pod("js-w-0-0", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p, "metadata.labels"),
	    JOBSET_LABEL_NAME, json_string("js"));
	known[WORKLOAD_JOBSET] = job;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	known[WORKLOAD_JOBSET] = NULL;
	ck_assert_str_eq(g.key, "gang:ns/js");
	ck_assert_int_eq(g.min_member, 7);
	ck_assert_int_eq(workload_group(p, NULL, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(g.min_member, 0); /* JobSet not seen yet */
	json_decref(p);
	json_decref(job);
}
END_TEST

/* The objects of the root cases; R_NONE is NULL. */
enum {
	R_NONE,
	R_PG,
	R_JS,
	R_JSDEP,
	R_LWS,
	R_JOB,
	R_JOB2,
	R_OBJS
};

/*
 * The workload root of each shape, as both daemons find it: a label names
 * the object; a Job must match the ownerReference's uid.  known: the
 * objects the lookup finds, by kind.
 */
static const struct {
	const char *pod;
	const char *group;     /* pod-group label */
	const char *jobset;    /* JobSet name label */
	const char *lws;       /* LeaderWorkerSet name label */
	const char *owner_api; /* controller ownerReference, or NULL */
	const char *owner_kind, *owner_name, *owner_uid;
	int	    known[WORKLOAD_KINDS];
	int	    root; /* workload_root */
	int	    job;  /* workload_job */
} roots[] = {
	/* PodGroup: its label; a Job owner does not win over it. */
	{ "a", "train", NULL, NULL, "batch/v1", "Job", "sim", "u-sim",
	    { [WORKLOAD_PODGROUP] = R_PG, [WORKLOAD_JOB] = R_JOB }, R_PG,
	    R_JOB },
	/* A pod-group label with no CR falls through to the Job. */
	{ "a", "train", NULL, NULL, "batch/v1", "Job", "sim", "u-sim",
	    { [WORKLOAD_JOB] = R_JOB }, R_JOB, R_JOB },
	/* JobSet, with and without dependsOn: the JobSet, not the Job. */
	{ "js-w-0-0", NULL, "js", NULL, "batch/v1", "Job", "sim", "u-sim",
	    { [WORKLOAD_JOBSET] = R_JS, [WORKLOAD_JOB] = R_JOB }, R_JS, R_JOB },
	{ "dep-init-0-0", NULL, "dep", NULL, NULL, NULL, NULL, NULL,
	    { [WORKLOAD_JOBSET] = R_JSDEP, [WORKLOAD_JOB] = R_JOB }, R_JSDEP,
	    R_NONE },
	/* LeaderWorkerSet: the LWS, before a JobSet label. */
	{ "lws-0-1", NULL, "dep", "lws", NULL, NULL, NULL, NULL,
	    { [WORKLOAD_LWS] = R_LWS,
		[WORKLOAD_JOBSET] = R_JSDEP,
		[WORKLOAD_JOB] = R_JOB },
	    R_LWS, R_NONE },
	/* Indexed Job: its controller Job, uid checked. */
	{ "sim-0-x", NULL, NULL, NULL, "batch/v1", "Job", "sim", "u-sim",
	    { [WORKLOAD_LWS] = R_LWS,
		[WORKLOAD_JOBSET] = R_JSDEP,
		[WORKLOAD_JOB] = R_JOB },
	    R_JOB, R_JOB },
	/* A Job of the same name made since is not the owner. */
	{ "sim-0-x", NULL, NULL, NULL, "batch/v1", "Job", "sim", "u-sim",
	    { [WORKLOAD_LWS] = R_LWS,
		[WORKLOAD_JOBSET] = R_JSDEP,
		[WORKLOAD_JOB] = R_JOB2 },
	    R_NONE, R_NONE },
	/* StatefulSet: no workload root; each pod is its own group. */
	{ "db-0", NULL, NULL, NULL, "apps/v1", "StatefulSet", "db", "u-db",
	    { [WORKLOAD_LWS] = R_LWS,
		[WORKLOAD_JOBSET] = R_JSDEP,
		[WORKLOAD_JOB] = R_JOB2 },
	    R_NONE, R_NONE },
	/* Nor is a Job that is not the controller, or of another group. */
	{ "sim-0-y", NULL, NULL, NULL, "batch.example.com/v1", "Job", "sim",
	    "u-sim",
	    { [WORKLOAD_LWS] = R_LWS,
		[WORKLOAD_JOBSET] = R_JSDEP,
		[WORKLOAD_JOB] = R_JOB },
	    R_NONE, R_NONE },
};

START_TEST(test_workload_roots)
{
	json_t *obj[R_OBJS], *p, *root, *job;
	int	k;

	obj[R_NONE] = NULL;
	obj[R_PG] = object("train", "u-pg", json_pack("{s:i}", "minMember", 3));
	obj[R_JS] = object("js", "u-js",
	    json_pack("{s:[{s:s, s:i}]}", "replicatedJobs", "name", "w",
		"replicas", 2));
	obj[R_JSDEP] = object("dep", "u-dep",
	    json_pack("{s:[{s:s}, {s:s, "
		      "s:[{s:s, s:s}]}]}",
		"replicatedJobs", "name", "init", "name", "workers",
		"dependsOn", "name", "init", "status", "Complete"));
	obj[R_LWS] = object("lws", "u-lws", json_pack("{s:i}", "replicas", 2));
	obj[R_JOB] = object("sim", "u-sim",
	    json_pack("{s:s, s:i}", "completionMode", "Indexed", "parallelism",
		4));
	obj[R_JOB2] = object("sim", "u-other",
	    json_pack("{s:i}", "parallelism", 1));
	for (k = 0; k < WORKLOAD_KINDS; k++)
		known[k] = obj[roots[_i].known[k]];

	p = pod(roots[_i].pod, roots[_i].group, NULL, NULL);
	if (roots[_i].jobset != NULL)
		set_label(p, JOBSET_LABEL_NAME, roots[_i].jobset);
	if (roots[_i].lws != NULL)
		set_label(p, LWS_LABEL_NAME, roots[_i].lws);
	if (roots[_i].owner_api != NULL)
		owned_by(p, roots[_i].owner_api, roots[_i].owner_kind,
		    roots[_i].owner_name, roots[_i].owner_uid);
	root = workload_root(p, &lookup);
	ck_assert_ptr_eq(root, obj[roots[_i].root]);
	job = workload_job(p, &lookup);
	ck_assert_ptr_eq(job, obj[roots[_i].job]);
	json_decref(root);
	json_decref(job);
	json_decref(p);

	memset(known, 0, sizeof(known));
	for (k = 0; k < R_OBJS; k++)
		json_decref(obj[k]);
}
END_TEST

/* The gang each shape forms, and its size. */
START_TEST(test_workload_gangs)
{
	struct group_id g;
	char		err[256];
	json_t	       *pg, *js, *job, *p;

	pg = object("train", "u-pg", json_pack("{s:i}", "minMember", 3));
	js = object("js", "u-js",
	    json_pack("{s:[{s:s, s:i, s:{s:{s:i}}}]}", "replicatedJobs", "name",
		"w", "replicas", 2, "template", "spec", "parallelism", 2));
	job = object("sim", "u-sim",
	    json_pack("{s:s, s:i}", "completionMode", "Indexed", "parallelism",
		4));

	/* PodGroup CR: size from spec.minMember. */
	p = pod("a", "train", NULL, NULL);
	known[WORKLOAD_PODGROUP] = pg;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(g.min_member, 0);
	ck_assert_int_eq(workload_gang_size("ns", g.name, g.min_member,
			     g.sized_by, &lookup),
	    3);
	/* min-member wins over the CR. */
	ck_assert_int_eq(workload_gang_size("ns", g.name, 5, g.sized_by,
			     &lookup),
	    5);
	/* A minMember out of range is unknown, not trusted. */
	json_object_set_new(json_object_get(pg, "spec"), "minMember",
	    json_integer(WORKLOAD_MAX_GANG + 1));
	ck_assert_int_eq(workload_gang_size("ns", g.name, 0, g.sized_by,
			     &lookup),
	    0);
	json_decref(p);

	/* JobSet: 2 x 2 pods, known once the JobSet is. */
	p = pod("js-w-0-0", NULL, NULL, NULL);
	set_label(p, JOBSET_LABEL_NAME, "js");
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(g.min_member, 0);
	known[WORKLOAD_JOBSET] = js;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/js");
	ck_assert_int_eq(g.min_member, 4);
	json_decref(p);

	/* Indexed Job: a gang of its parallelism, only with the right uid. */
	p = pod("sim-0-x", NULL, NULL, NULL);
	owned_by(p, "batch/v1", "Job", "sim", "u-sim");
	known[WORKLOAD_JOB] = job;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/sim");
	ck_assert_int_eq(g.min_member, 4);
	owned_by(p, "batch/v1", "Job", "sim", "u-stale");
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/sim-0-x");
	ck_assert_int_eq(g.gang, 0);
	json_decref(p);

	/* StatefulSet: one pod per group. */
	p = pod("db-0", NULL, NULL, NULL);
	owned_by(p, "apps/v1", "StatefulSet", "db", "u-db");
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/db-0");
	ck_assert_int_eq(g.min_member, 1);
	json_decref(p);

	memset(known, 0, sizeof(known));
	json_decref(pg);
	json_decref(js);
	json_decref(job);
}
END_TEST

/*
 * Kubernetes' own PodGroup (scheduling.k8s.io, spec.schedulingGroup): a
 * gang sized by its gang policy's minCount, over the pod-group label; each
 * pod alone under a basic policy; a gang of unknown size until the
 * PodGroup is known; the Job, when there is one, stays the root.
 */
START_TEST(test_workload_sched_podgroup)
{
	struct group_id g;
	char		err[256];
	json_t	       *pg, *basic, *job, *p, *root;

	pg = object("ring", "u-ring",
	    json_pack("{s:{s:{s:i}}}", "schedulingPolicy", "gang", "minCount",
		3));
	basic = object("ring", "u-basic",
	    json_pack("{s:{s:{}}}", "schedulingPolicy", "basic"));
	job = object("trainer", "u-job", json_pack("{s:i}", "parallelism", 3));
	p = pod("ring-0", "other", "2", NULL);
	json_object_set_new(p, "spec",
	    json_pack("{s:{s:s}}", "schedulingGroup", "podGroupName", "ring"));

	/* Not known yet: its gang, size unknown. */
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "podgroup:ns/ring");
	ck_assert_int_eq(g.gang, 1);
	ck_assert_int_eq(g.sized_by, WORKLOAD_SCHED_PODGROUP);
	ck_assert_int_eq(workload_gang_size("ns", g.name, g.min_member,
			     g.sized_by, &lookup),
	    0);
	/* Known: minCount, whatever the pod's label and min-member say. */
	known[WORKLOAD_SCHED_PODGROUP] = pg;
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "podgroup:ns/ring");
	ck_assert_int_eq(g.min_member, 0);
	ck_assert_int_eq(workload_gang_size("ns", g.name, g.min_member,
			     g.sized_by, &lookup),
	    3);
	ck_assert_int_eq(workload_podgroup_min(pg), 3);
	/* A CR PodGroup of the same name does not size it. */
	known[WORKLOAD_PODGROUP] = object("ring", "u-cr",
	    json_pack("{s:i}", "minMember", 9));
	ck_assert_int_eq(workload_gang_size("ns", g.name, g.min_member,
			     g.sized_by, &lookup),
	    3);
	json_decref(known[WORKLOAD_PODGROUP]);
	known[WORKLOAD_PODGROUP] = NULL;
	/* The gang annotation "false" still wins. */
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    ANN_PREFIX "gang", json_string("false"));
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(g.gang, 0);
	json_object_del(k8s_obj_get(p, "metadata.annotations"),
	    ANN_PREFIX "gang");
	/* A minCount out of range is unknown, not trusted. */
	json_object_set_new(k8s_obj_get(pg, "spec.schedulingPolicy.gang"),
	    "minCount", json_integer(WORKLOAD_MAX_GANG + 1));
	ck_assert_int_eq(workload_podgroup_min(pg), -1);
	ck_assert_int_eq(workload_gang_size("ns", "ring", 0,
			     WORKLOAD_SCHED_PODGROUP, &lookup),
	    0);
	/* Basic policy: each pod alone (the label's gang is not used). */
	known[WORKLOAD_SCHED_PODGROUP] = basic;
	ck_assert_int_eq(workload_podgroup_min(basic), 0);
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/other");
	json_object_del(k8s_obj_get(p, "metadata.labels"), LABEL_POD_GROUP);
	ck_assert_int_eq(workload_group(p, &lookup, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/ring-0");
	ck_assert_int_eq(g.gang, 0);
	/* Root: the PodGroup, unless a Job owns the pod. */
	root = workload_root(p, &lookup);
	ck_assert_ptr_eq(root, basic);
	json_decref(root);
	owned_by(p, "batch/v1", "Job", "trainer", "u-job");
	known[WORKLOAD_JOB] = job;
	root = workload_root(p, &lookup);
	ck_assert_ptr_eq(root, job);
	json_decref(root);

	memset(known, 0, sizeof(known));
	json_decref(p);
	json_decref(pg);
	json_decref(basic);
	json_decref(job);
}
END_TEST

/*
 * JobSet stages: with dependsOn, the replicated jobs created together (the
 * same dependsOn) form a gang each; without, the whole JobSet is one.
 */
static const struct {
	const char *spec; /* the JobSet's spec.replicatedJobs */
	const char *rj;	  /* the pod's replicatedjob-name label */
	const char *key;  /* its gang, or NULL: refused */
	int	    min;  /* the gang's size */
	const char *err;  /* ... or what the refusal says */
} stages[] = {
	/* SchedMD's example: an initializer, then 4 workers. */
	{ "[{\"name\":\"init\"},{\"name\":\"workers\",\"dependsOn\":"
	  "[{\"name\":\"init\",\"status\":\"Complete\"}],\"template\":"
	  "{\"spec\":{\"parallelism\":4}}}]",
	    "init", "gang:ns/js-init", 1, NULL },
	{ "[{\"name\":\"init\"},{\"name\":\"workers\",\"dependsOn\":"
	  "[{\"name\":\"init\",\"status\":\"Complete\"}],\"template\":"
	  "{\"spec\":{\"parallelism\":4}}}]",
	    "workers", "gang:ns/js-workers", 4, NULL },
	/* Two replicated jobs that wait on the same one start together. */
	{ "[{\"name\":\"driver\"},{\"name\":\"workers\",\"replicas\":2,"
	  "\"dependsOn\":[{\"name\":\"driver\",\"status\":\"Ready\"}]},"
	  "{\"name\":\"eval\",\"dependsOn\":[{\"name\":\"driver\","
	  "\"status\":\"Ready\"}]}]",
	    "eval", "gang:ns/js-workers", 3, NULL },
	/* No dependsOn: one gang of every pod, as before. */
	{ "[{\"name\":\"a\",\"replicas\":2},{\"name\":\"b\"}]", "b",
	    "gang:ns/js", 3, NULL },
	/* A dependsOn that names a later one (or itself: a cycle). */
	{ "[{\"name\":\"a\",\"dependsOn\":[{\"name\":\"b\",\"status\":"
	  "\"Ready\"}]},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	  "\"status\":\"Ready\"}]}]",
	    "a", NULL, 0,
	    "spec.replicatedJobs[0].dependsOn[0].name: \"b\" is not a "
	    "replicated job listed before it" },
	{ "[{\"name\":\"a\"},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	  "\"status\":\"Done\"}]}]",
	    "b", NULL, 0,
	    "spec.replicatedJobs[1].dependsOn[0].status: \"Done\" is not "
	    "Ready or Complete" },
	/* A pod whose replicated job the JobSet does not have. */
	{ "[{\"name\":\"a\"},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	  "\"status\":\"Ready\"}]}]",
	    "c", NULL, 0, "replicatedjob-name: \"c\" names no replicated job" },
};

START_TEST(test_workload_jobset_stages)
{
	struct group_id g;
	char		err[256] = "";
	json_t	       *js, *p;

	js = object("js", "u-js",
	    json_pack("{s:o}", "replicatedJobs",
		json_loads(stages[_i].spec, 0, NULL)));
	known[WORKLOAD_JOBSET] = js;
	p = pod("js-x-0-0", NULL, NULL, NULL);
	set_label(p, JOBSET_LABEL_NAME, "js");
	set_label(p, JOBSET_LABEL_RJ, stages[_i].rj);
	if (stages[_i].key != NULL) {
		ck_assert_int_eq(workload_group(p, &lookup, &g, err,
				     sizeof(err)),
		    0);
		ck_assert_str_eq(g.key, stages[_i].key);
		ck_assert_int_eq(g.min_member, stages[_i].min);
		ck_assert_int_eq(g.gang, 1);
	} else {
		ck_assert_int_eq(workload_group(p, &lookup, &g, err,
				     sizeof(err)),
		    -1);
		ck_assert_msg(strstr(err, stages[_i].err) != NULL,
		    "\"%s\" does not say \"%s\"", err, stages[_i].err);
		ck_assert_msg(strncmp(err, "JobSet js: ", 11) == 0,
		    "\"%s\" does not name the JobSet", err);
	}
	known[WORKLOAD_JOBSET] = NULL;
	json_decref(p);
	json_decref(js);
}
END_TEST

/* Placement order, as group.c sorts members: index, then name. */
static int
member_cmp(const void *a, const void *b)
{
	const json_t *pa = *(const json_t *const *)a;
	const json_t *pb = *(const json_t *const *)b;

	return (workload_member_order(workload_member_index(pa),
	    k8s_obj_name(pa), workload_member_index(pb), k8s_obj_name(pb)));
}

/* A group's name, read back from each kind of key the rules build. */
START_TEST(test_workload_key_name)
{
	char buf[64];

	ck_assert_str_eq(workload_key_name("pod:team/solo"), "solo");
	ck_assert_str_eq(workload_key_name("gang:team/train"), "train");
	ck_assert_str_eq(workload_key_name("podgroup:team/pg-1"), "pg-1");
	ck_assert_str_eq(workload_key_name("no-slash"), "no-slash");
	ck_assert_str_eq(workload_key_ns("gang:team/train", buf, sizeof(buf)),
	    "team");
	ck_assert_str_eq(workload_key_ns("pod:a/b/c", buf, sizeof(buf)), "a");
	ck_assert_str_eq(workload_key_ns("no-slash", buf, sizeof(buf)), "");
}
END_TEST

START_TEST(test_workload_member_order)
{
	json_t *p[3];
	size_t	i;

	p[0] = pod("w-b", NULL, NULL, NULL);
	p[1] = pod("w-a", NULL, NULL, NULL);
	p[2] = pod("w-c", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p[2], "metadata.labels"),
	    "batch.kubernetes.io/job-completion-index", json_string("10"));
	json_object_set_new(k8s_obj_get(p[0], "metadata.labels"),
	    "batch.kubernetes.io/job-completion-index", json_string("2"));
	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(p, 3, sizeof(p[0]), member_cmp);
	/* Index 2 before index 10 (numeric), names only break ties. */
	ck_assert_str_eq(k8s_obj_name(p[0]), "w-a");
	ck_assert_str_eq(k8s_obj_name(p[1]), "w-b");
	ck_assert_str_eq(k8s_obj_name(p[2]), "w-c");
	for (i = 0; i < 3; i++)
		json_decref(p[i]);
}
END_TEST

/* label sets KEY=VALUE on pod p. */
static void
label(json_t *p, const char *key, const char *value)
{
	json_object_set_new(k8s_obj_get(p, "metadata.labels"), key,
	    json_string(value));
}

/*
 * A JobSet's pods: each child Job's together (job-global-index, then the
 * completion index), so a slice per child Job is consecutive; a
 * LeaderWorkerSet's: by worker index, 10 after 9.
 */
START_TEST(test_workload_member_order_workloads)
{
	static const char *const js[4][3] = { { "js-w-1-0", "1", "0" },
		{ "js-w-0-1", "0", "1" }, { "js-w-1-1", "1", "1" },
		{ "js-w-0-0", "0", "0" } };
	json_t			*p[4];
	size_t			 i;

	for (i = 0; i < 4; i++) {
		p[i] = pod(js[i][0], NULL, NULL, NULL);
		label(p[i], JOBSET_LABEL_GLOBAL_INDEX, js[i][1]);
		label(p[i], "batch.kubernetes.io/job-completion-index",
		    js[i][2]);
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(p, 4, sizeof(p[0]), member_cmp);
	ck_assert_str_eq(k8s_obj_name(p[0]), "js-w-0-0");
	ck_assert_str_eq(k8s_obj_name(p[1]), "js-w-0-1");
	ck_assert_str_eq(k8s_obj_name(p[2]), "js-w-1-0");
	ck_assert_str_eq(k8s_obj_name(p[3]), "js-w-1-1");
	for (i = 0; i < 4; i++)
		json_decref(p[i]);
	p[0] = pod("lws-0-10", NULL, NULL, NULL);
	p[1] = pod("lws-0-9", NULL, NULL, NULL);
	p[2] = pod("lws-0", NULL, NULL, NULL);
	label(p[0], LWS_LABEL_WORKER_INDEX, "10");
	label(p[1], LWS_LABEL_WORKER_INDEX, "9");
	label(p[2], LWS_LABEL_WORKER_INDEX, "0");
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(p, 3, sizeof(p[0]), member_cmp);
	ck_assert_str_eq(k8s_obj_name(p[0]), "lws-0");
	ck_assert_str_eq(k8s_obj_name(p[1]), "lws-0-9");
	ck_assert_str_eq(k8s_obj_name(p[2]), "lws-0-10");
	for (i = 0; i < 3; i++)
		json_decref(p[i]);
}
END_TEST

/*
 * The annotation layers of a pod of a Kubernetes PodGroup: its Job, the
 * Workload the PodGroup's workloadRef names (v1beta1, or v1alpha2's
 * podGroupTemplateRef), then the PodGroup; any other pod: its root alone.
 */
START_TEST(test_workload_layers)
{
	json_t *pg, *pg_alpha, *wl, *job, *p, *out[WORKLOAD_LAYERS];
	size_t	n;

	pg = object("train-workers", "u-pg",
	    json_pack("{s:{s:{s:i}}, s:{s:s, s:s}}", "schedulingPolicy", "gang",
		"minCount", 2, "workloadRef", "workloadName", "training",
		"templateName", "workers"));
	pg_alpha = object("train-workers", "u-pg2",
	    json_pack("{s:{s:{s:s, s:s}}}", "podGroupTemplateRef", "workload",
		"workloadName", "training", "podGroupTemplateName", "workers"));
	wl = object("training", "u-wl", json_object());
	job = object("train", "u-job", json_pack("{s:i}", "parallelism", 2));
	p = pod("train-0", NULL, NULL, NULL);
	json_object_set_new(p, "spec",
	    json_pack("{s:{s:s}}", "schedulingGroup", "podGroupName",
		"train-workers"));
	owned_by(p, "batch/v1", "Job", "train", "u-job");

	/* Nothing known: no layer (the PodGroup may come later). */
	ck_assert_uint_eq(workload_layers(p, &lookup, out), 0);
	/* The PodGroup alone. */
	known[WORKLOAD_SCHED_PODGROUP] = pg;
	n = workload_layers(p, &lookup, out);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], pg);
	workload_layers_free(out, n);
	/* All three, least specific first. */
	known[WORKLOAD_SCHED_WORKLOAD] = wl;
	known[WORKLOAD_JOB] = job;
	n = workload_layers(p, &lookup, out);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_eq(out[0], job);
	ck_assert_ptr_eq(out[1], wl);
	ck_assert_ptr_eq(out[2], pg);
	workload_layers_free(out, n);
	ck_assert_str_eq(workload_ref_name(pg), "training");
	/* v1alpha2's reference names it too. */
	known[WORKLOAD_SCHED_PODGROUP] = pg_alpha;
	n = workload_layers(p, &lookup, out);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_eq(out[1], wl);
	workload_layers_free(out, n);
	/* Not a PodGroup's pod: its root alone (the Job). */
	known[WORKLOAD_SCHED_PODGROUP] = NULL;
	n = workload_layers(p, &lookup, out);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], job);
	workload_layers_free(out, n);

	memset(known, 0, sizeof(known));
	json_decref(p);
	json_decref(pg);
	json_decref(pg_alpha);
	json_decref(wl);
	json_decref(job);
}
END_TEST

/*
 * A PodGroup with a parent CompositePodGroup: its pods are the composite's
 * gang while the composite is unknown or a gang, sized by the minCounts of
 * the Workload template's children; a basic composite leaves each PodGroup
 * its own gang.  What cannot size it says why.
 */
START_TEST(test_workload_composite)
{
	struct group_id gid;
	json_t	       *pg, *cpg, *cbasic, *wl, *p, *out[WORKLOAD_LAYERS];
	char		err[256], why[400];
	size_t		n;

	pg = object("leader", "u-pg",
	    json_pack("{s:{s:{s:i}}, s:{s:s, s:s}, s:s}", "schedulingPolicy",
		"gang", "minCount", 1, "workloadRef", "workloadName", "serve",
		"templateName", "leader", "parentCompositePodGroupName",
		"replica-0"));
	cpg = object("replica-0", "u-cpg",
	    json_pack("{s:{s:{s:i}}, s:{s:s, s:s}}", "schedulingPolicy", "gang",
		"minGroupCount", 2, "workloadRef", "workloadName", "serve",
		"templateName", "replica"));
	cbasic = object("replica-0", "u-cb",
	    json_pack("{s:{s:{}}}", "schedulingPolicy", "basic"));
	wl = object("serve", "u-wl",
	    json_pack("{s:[{s:s, s:[{s:s, s:{s:{s:i}}}, {s:s, s:{s:{s:i}}}]}]}",
		"compositePodGroupTemplates", "name", "replica",
		"podGroupTemplates", "name", "leader", "schedulingPolicy",
		"gang", "minCount", 1, "name", "workers", "schedulingPolicy",
		"gang", "minCount", 3));
	p = pod("leader-0", NULL, NULL, NULL);
	json_object_set_new(p, "spec",
	    json_pack("{s:{s:s}}", "schedulingGroup", "podGroupName",
		"leader"));

	/* The PodGroup unknown: its own gang, until it says more. */
	ck_assert_int_eq(workload_group(p, &lookup, &gid, err, sizeof(err)), 0);
	ck_assert_str_eq(gid.key, "podgroup:ns/leader");
	/* Its parent unknown yet: the composite's gang, of no size yet. */
	known[WORKLOAD_SCHED_PODGROUP] = pg;
	ck_assert_int_eq(workload_group(p, &lookup, &gid, err, sizeof(err)), 0);
	ck_assert_str_eq(gid.key, "composite:ns/replica-0");
	ck_assert_int_eq(gid.sized_by, WORKLOAD_SCHED_COMPOSITE);
	ck_assert_int_eq(workload_gang_size("ns", "replica-0", 0,
			     WORKLOAD_SCHED_COMPOSITE, &lookup),
	    0);
	/* A gang composite without its Workload: waits, and says for what. */
	known[WORKLOAD_SCHED_COMPOSITE] = cpg;
	ck_assert_int_eq(workload_composite_size(cpg, &lookup, why,
			     sizeof(why)),
	    0);
	ck_assert_ptr_nonnull(strstr(why, "waiting for Workload ns/serve"));
	/* With it: 1 + 3 pods, every child's. */
	known[WORKLOAD_SCHED_WORKLOAD] = wl;
	ck_assert_int_eq(workload_gang_size("ns", "replica-0", 0,
			     WORKLOAD_SCHED_COMPOSITE, &lookup),
	    4);
	/* The composite is a layer, between the Workload and the PodGroup. */
	n = workload_layers(p, &lookup, out);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_eq(out[0], wl);
	ck_assert_ptr_eq(out[1], cpg);
	ck_assert_ptr_eq(out[2], pg);
	workload_layers_free(out, n);
	/* minGroupCount above its children: refused by name. */
	json_object_set_new(json_object_get(k8s_obj_get(cpg,
						"spec.schedulingPolicy"),
				"gang"),
	    "minGroupCount", json_integer(3));
	ck_assert_int_eq(workload_composite_size(cpg, &lookup, why,
			     sizeof(why)),
	    0);
	ck_assert_ptr_nonnull(strstr(why,
	    "minGroupCount must be from 1 to "
	    "the 2 PodGroups"));
	/* A child that is no gang cannot size a composite gang. */
	json_object_set_new(
	    json_array_get(
		json_object_get(
		    json_array_get(k8s_obj_get(wl,
				       "spec.compositePodGroupTemplates"),
			0),
		    "podGroupTemplates"),
		1),
	    "schedulingPolicy", json_pack("{s:{}}", "basic"));
	ck_assert_int_eq(workload_composite_size(cpg, &lookup, why,
			     sizeof(why)),
	    0);
	ck_assert_ptr_nonnull(strstr(why, "podGroupTemplates[1]"));
	/* A basic composite: each PodGroup is its own gang again. */
	known[WORKLOAD_SCHED_COMPOSITE] = cbasic;
	ck_assert_int_eq(workload_group(p, &lookup, &gid, err, sizeof(err)), 0);
	ck_assert_str_eq(gid.key, "podgroup:ns/leader");

	memset(known, 0, sizeof(known));
	json_decref(p);
	json_decref(pg);
	json_decref(cpg);
	json_decref(cbasic);
	json_decref(wl);
}
END_TEST

Suite *
workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_workload_own_groups, 0,
	    sizeof(own_groups) / sizeof(own_groups[0]));
	tcase_add_test(tc, test_workload_groups);
	tcase_add_loop_test(tc, test_workload_roots, 0,
	    sizeof(roots) / sizeof(roots[0]));
	tcase_add_test(tc, test_workload_gangs);
	tcase_add_test(tc, test_workload_sched_podgroup);
	tcase_add_test(tc, test_workload_layers);
	tcase_add_test(tc, test_workload_member_order);
	tcase_add_test(tc, test_workload_member_order_workloads);
	tcase_add_test(tc, test_workload_key_name);
	tcase_add_test(tc, test_workload_composite);
	tcase_add_loop_test(tc, test_workload_jobset_stages, 0,
	    (int)(sizeof(stages) / sizeof(stages[0])));
	suite_add_tcase(s, tc);
	return (s);
}
