/*
 * Pod -> job description, table-driven from test/data/translate/<case>/:
 * input.json is the pod; expect.json is the job description as JSON, or
 * {"error": "<substring of the message>"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "config.h"
#include "topology.h"
#include "check_suites.h"

#define TR_DIR TEST_DATA "/translate"

static void
set_str(json_t *o, const char *k, const char *v)
{
	if (v != NULL)
		json_object_set_new(o, k, json_string(v));
}

static void
set_uint(json_t *o, const char *k, uint64_t v)
{
	if (v != 0)
		json_object_set_new(o, k, json_integer((json_int_t)v));
}

static json_t *
jobspec_json(const struct jobspec *js)
{
	json_t *o = json_object();

	set_str(o, "name", js->name);
	set_str(o, "comment", js->comment);
	if (js->admin_comment != NULL)
		json_object_set_new(o, "admin_comment",
		    json_loads(js->admin_comment, 0, NULL));
	set_str(o, "partition", js->partition);
	set_str(o, "account", js->account);
	set_str(o, "qos", js->qos);
	set_str(o, "reservation", js->reservation);
	set_str(o, "constraints", js->constraints);
	set_str(o, "tres_per_task", js->tres_per_task);
	json_object_set_new(o, "ntasks", json_integer(js->ntasks));
	json_object_set_new(o, "cpus_per_task",
	    json_integer(js->cpus_per_task));
	json_object_set_new(o, "mem_per_cpu_mb",
	    json_integer((json_int_t)js->mem_per_cpu_mb));
	json_object_set_new(o, "time_limit", json_integer(js->time_limit));
	if (js->priority != 0)
		json_object_set_new(o, "priority", json_integer(js->priority));
	json_object_set_new(o, "exclusive", json_boolean(js->exclusive));
	set_str(o, "licenses", js->licenses);
	set_str(o, "wckey", js->wckey);
	set_str(o, "mcs_label", js->mcs_label);
	/* Optional numbers appear only when set, to keep cases short. */
	set_uint(o, "gpus_per_task", js->gpus_per_task);
	set_uint(o, "mem_per_node_mb", js->mem_per_node_mb);
	set_uint(o, "min_nodes", js->min_nodes);
	set_uint(o, "max_nodes", js->max_nodes);
	set_uint(o, "req_switch", js->req_switch);
	set_uint(o, "wait4switch", js->wait4switch);
	if (js->has_user_id)
		json_object_set_new(o, "user_id",
		    js->user_name != NULL ? json_string(js->user_name) :
					    json_integer(js->user_id));
	if (js->has_group_id)
		json_object_set_new(o, "group_id",
		    js->group_name != NULL ? json_string(js->group_name) :
					     json_integer(js->group_id));
	return (o);
}

static json_t *
load(const char *cname, const char *file)
{
	char	     path[512];
	json_error_t jerr;
	json_t	    *j;

	snprintf(path, sizeof(path), TR_DIR "/%s/%s", cname, file);
	j = json_load_file(path, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
	return (j);
}

/* The scheduler's claim caches, empty: no claim or template exists. */
static json_t *
no_claims(void *arg, enum dra_kind kind, const char *ns, const char *name)
{
	(void)arg;
	(void)kind;
	(void)ns;
	(void)name;
	return (NULL);
}

static const struct dra_lookup no_claims_lk = { no_claims, NULL, NULL, NULL };

static void
translate_run(const char *cname, int slim)
{
	struct translate_conf conf = { .partition = "slurm-bridge" };
	struct translate_src  src;
	struct dra_classes    dra;
	struct jobspec	      js;
	json_t		     *pod, *expect, *got, *copy = NULL;
	const char	     *want;
	char		      err[512] = "", *dump;
	json_t		     *layers[WORKLOAD_LAYERS];
	int		      rc;

	pod = load(cname, "input.json");
	src.layers = layers;
	src.dra = &no_claims_lk;
	src.gang = 0;
	src.nlayers = 0;
	expect = load(cname, "expect.json");
	/*
	 * A plain pod, or {"pod", "root" or "layers" (least specific first),
	 * "namespace", "conf"}.
	 */
	if (json_object_get(pod, "pod") != NULL) {
		src.pod = json_object_get(pod, "pod");
		if ((layers[0] = json_object_get(pod, "root")) != NULL)
			src.nlayers = 1;
		while (src.nlayers < WORKLOAD_LAYERS &&
		    (layers[src.nlayers] = json_array_get(json_object_get(pod,
							      "layers"),
			 src.nlayers)) != NULL)
			src.nlayers++;
		src.ns = json_object_get(pod, "namespace");
		conf.default_account = k8s_obj_str(pod, "conf.default_account");
		conf.mcs_label = k8s_obj_str(pod, "conf.mcs_label");
		conf.exclusive = json_is_true(
		    k8s_obj_get(pod, "conf.exclusive"));
	} else {
		src.pod = pod;
		src.ns = NULL;
	}
	/* What the scheduler keeps of the pod must translate the same. */
	if (slim) {
		struct podrec *rec = podrec_new(src.pod);
		ck_assert_msg(rec != NULL, "%s: no record", cname);
		copy = podrec_json(rec);
		podrec_free(rec);
		src.pod = copy;
	}
	dra_classes_defaults(&dra);
	conf.dra = &dra;
	rc = translate_pod(&src, &conf, &js, err, sizeof(err));
	dra_classes_cleanup(&dra);
	json_decref(copy);
	if ((want = json_string_value(json_object_get(expect, "error"))) !=
	    NULL) {
		ck_assert_msg(rc != 0, "%s: accepted, expected an error",
		    cname);
		ck_assert_msg(strstr(err, want) != NULL,
		    "%s: error \"%s\" lacks \"%s\"", cname, err, want);
	} else {
		ck_assert_msg(rc == 0, "%s: refused: %s", cname, err);
		got = jobspec_json(&js);
		dump = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
		ck_assert_msg(json_equal(got, expect), "%s: got %s", cname,
		    dump);
		free(dump);
		json_decref(got);
		translate_jobspec_cleanup(&js);
	}
	json_decref(pod);
	json_decref(expect);
}

static void
translate_case(const char *cname)
{
	translate_run(cname, 0);
}

static void
translate_case_slim(const char *cname)
{
	translate_run(cname, 1);
}

/* Every case, then again on the pod as the scheduler keeps it (podrec.c). */
static void (*const translate_runs[])(
    const char *) = { translate_case, translate_case_slim };

START_TEST(test_translate_cases)
{
	ck_assert_int_ge(check_each_case(TR_DIR, translate_runs[_i]), 32);
}
END_TEST

/* A gang: one task per pod, named after the group unless job-name says. */
START_TEST(test_translate_group_name)
{
	struct translate_conf conf = { .partition = "slurm-bridge" };
	struct jobspec	      js;
	struct translate_src  src = { NULL, NULL, 1, NULL, NULL, 0 };
	json_t		     *in, *pods[2], *root;
	char		      err[256] = "";

	in = load("root-and-namespace", "input.json");
	pods[0] = pods[1] = json_object_get(in, "pod");
	root = json_deep_copy(json_object_get(in, "root"));
	json_object_del(k8s_obj_get(root, "metadata.annotations"),
	    ANN_PREFIX "job-name");
	src.layers = &root;
	ck_assert_msg(translate_group(pods, 2, "g", &src, &conf, &js, err,
			  sizeof(err)) == 0,
	    "%s", err);
	ck_assert_uint_eq(js.ntasks, 2);
	ck_assert_str_eq(js.name, "team/g");
	ck_assert_ptr_nonnull(strstr(js.admin_comment, "team/r"));
	translate_jobspec_cleanup(&js);
	json_object_set_new(k8s_obj_get(root, "metadata.annotations"),
	    ANN_PREFIX "job-name", json_string("from-root"));
	ck_assert_msg(translate_group(pods, 2, "g", &src, &conf, &js, err,
			  sizeof(err)) == 0,
	    "%s", err);
	ck_assert_str_eq(js.name, "from-root");
	translate_jobspec_cleanup(&js);
	json_decref(root);
	json_decref(in);
}
END_TEST

/* A pod of the gang test: name, CPUs and memory requested, GPUs. */
static json_t *
het_pod(const char *name, const char *cpu, const char *mem, const char *gpu)
{
	json_t *p = json_pack("{s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s, s:s}], "
			      "s:[{s:s, s:{s:{s:s, s:s}}}]}}",
	    "metadata", "name", name, "namespace", "team", "spec",
	    "schedulerName", "slurm-bridge", "tolerations", "key",
	    MANAGED_TAINT_KEY, "operator", "Exists", "effect",
	    MANAGED_TAINT_EFFECT_DEFAULT, "containers", "name", "main",
	    "resources", "requests", "cpu", cpu, "memory", mem);

	if (gpu != NULL)
		json_object_set_new(
		    k8s_obj_get(json_array_get(k8s_obj_get(p,
						   "spec.containers"),
				    0),
			"resources"),
		    "limits", json_pack("{s:s}", "nvidia.com/gpu", gpu));
	return (p);
}

/* The objects of the PodGroup-claim test, by kind (one of each). */
static json_t *pgc_objs[3];

static json_t *
pgc_lookup(void *arg, enum dra_kind kind, const char *ns, const char *name)
{
	json_t *o = pgc_objs[kind];

	(void)arg;
	if (o == NULL || strcmp(ns, "team") != 0 ||
	    strcmp(k8s_obj_name(o), name) != 0)
		return (NULL);
	return (json_incref(o));
}

/*
 * A gang whose pods share their PodGroup's claim (KEP-5729): the claim's
 * devices are asked once, per node, on one node, beside each task's own;
 * a pod of a basic PodGroup naming one is refused, naming the field.
 */
START_TEST(test_translate_group_claims)
{
	struct translate_conf conf = { .partition = "slurm-bridge" };
	struct dra_lookup     lk = { pgc_lookup, NULL, NULL, NULL };
	struct translate_src  src = { NULL, NULL, 0, NULL, &lk, 0 };
	struct dra_classes    dra;
	struct jobspec	      js;
	json_t		     *pods[4], *spec;
	char		      err[512] = "", name[8];
	size_t		      i;

	dra_classes_defaults(&dra);
	conf.dra = &dra;
	spec = json_pack("{s:{s:[{s:s, s:{s:s, s:i}}]}}", "devices", "requests",
	    "name", "gpus", "exactly", "deviceClassName", "gpu.example.com",
	    "count", 2);
	pgc_objs[DRA_TEMPLATE] = json_pack("{s:{s:s, s:s}, s:{s:O}}",
	    "metadata", "name", "two", "namespace", "team", "spec", "spec",
	    spec);
	pgc_objs[DRA_CLAIM] = json_pack("{s:{s:s, s:s}, s:O}", "metadata",
	    "name", "pgc-shared-x", "namespace", "team", "spec", spec);
	pgc_objs[DRA_PODGROUP] =
	    json_pack("{s:{s:s, s:s, s:s}, s:{s:{s:{s:i}}, "
		      "s:[{s:s, s:s}]}}",
		"metadata", "name", "pgc", "namespace", "team", "uid", "u-pg",
		"spec", "schedulingPolicy", "gang", "minCount", 4,
		"resourceClaims", "name", "shared", "resourceClaimTemplateName",
		"two");
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		pods[i] = het_pod(name, "1", "1Gi", NULL);
		json_object_set_new(json_object_get(pods[i], "spec"),
		    "schedulingGroup",
		    json_pack("{s:s}", "podGroupName", "pgc"));
		json_object_set_new(json_object_get(pods[i], "spec"),
		    "resourceClaims",
		    json_pack("[{s:s, s:s}]", "name", "shared",
			"resourceClaimTemplateName", "two"));
		json_object_set_new(pods[i], "status",
		    json_pack("{s:[{s:s, s:s}]}", "resourceClaimStatuses",
			"name", "shared", "resourceClaimName", "pgc-shared-x"));
	}
	ck_assert_msg(translate_group(pods, 4, "pgc", &src, &conf, &js, err,
			  sizeof(err)) == 0,
	    "%s", err);
	ck_assert_str_eq(js.group_gres, "gpu:2");
	ck_assert_str_eq(js.tres_per_node, "gres:gpu:2");
	ck_assert_ptr_null(js.tres_per_task);
	ck_assert_uint_eq(js.min_nodes, 1);
	ck_assert_uint_eq(js.max_nodes, 1);
	ck_assert_uint_eq(js.ncomps, 0);
	translate_jobspec_cleanup(&js);
	/* Alone, its PodGroup's claim is refused. */
	src.pod = pods[0];
	ck_assert_int_eq(translate_pod(&src, &conf, &js, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err,
	    "names a claim of its PodGroup pgc, whose pods are placed one by "
	    "one"));
	/* Not the PodGroup's (another name): each pod's own, as before. */
	json_object_set_new(json_array_get(k8s_obj_get(pgc_objs[DRA_PODGROUP],
					       "spec.resourceClaims"),
				0),
	    "name", json_string("other"));
	ck_assert_int_eq(translate_group(pods, 4, "pgc", &src, &conf, &js, err,
			     sizeof(err)),
	    0);
	ck_assert_ptr_null(js.group_gres);
	ck_assert_str_eq(js.tres_per_task, "gres:gpu:2");
	translate_jobspec_cleanup(&js);
	for (i = 0; i < 4; i++)
		json_decref(pods[i]);
	for (i = 0; i < 3; i++) {
		json_decref(pgc_objs[i]);
		pgc_objs[i] = NULL;
	}
	json_decref(spec);
	dra_classes_cleanup(&dra);
}
END_TEST

/*
 * Members of different shapes (an LWS leader of 4 CPUs and 3 workers of
 * 1): one component per shape, exactly sized, in order of first member;
 * one shape, or an exclusive gang: an ordinary job.
 */
START_TEST(test_translate_group_het)
{
	struct translate_conf conf = { .partition = "slurm-bridge" };
	struct translate_src  none = { NULL, NULL, 0, NULL, NULL, 0 };
	struct jobspec	      js;
	json_t		     *pods[4];
	char		      err[256] = "";
	size_t		      i;

	pods[0] = het_pod("lead", "4", "4Gi", NULL);
	pods[1] = het_pod("w1", "1", "1Gi", NULL);
	pods[2] = het_pod("w2", "1", "1Gi", NULL);
	pods[3] = het_pod("w3", "1", "1Gi", NULL);
	ck_assert_msg(translate_group(pods, 4, "serve-0", &none, &conf, &js,
			  err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_uint_eq(js.ntasks, 4);
	ck_assert_uint_eq(js.ncomps, 2);
	ck_assert_uint_eq(js.comps[0].ntasks, 1);
	ck_assert_uint_eq(js.comps[0].cpus_per_task, 4);
	ck_assert_uint_eq(js.comps[1].ntasks, 3);
	ck_assert_uint_eq(js.comps[1].cpus_per_task, 1);
	ck_assert_uint_eq(js.comps[1].mem_per_cpu_mb, 1024);
	ck_assert_uint_eq(js.comp_of[0], 0);
	for (i = 1; i < 4; i++)
		ck_assert_uint_eq(js.comp_of[i], 1);
	ck_assert_ptr_nonnull(strstr(js.admin_comment, "\"comps\":[0,1,1,1]"));
	/* The largest member still sizes the job as a whole. */
	ck_assert_uint_eq(js.cpus_per_task, 4);
	translate_jobspec_cleanup(&js);

	/* A GPU worker is a shape of its own. */
	json_decref(pods[3]);
	pods[3] = het_pod("w3", "1", "1Gi", "1");
	ck_assert_int_eq(translate_group(pods, 4, "g", &none, &conf, &js, err,
			     sizeof(err)),
	    0);
	ck_assert_uint_eq(js.ncomps, 3);
	ck_assert_str_eq(js.comps[2].tres_per_task, "gres:gpu:1");
	ck_assert_uint_eq(js.comp_of[3], 2);
	translate_jobspec_cleanup(&js);

	/* One shape: an ordinary job, and no comps in admin_comment. */
	ck_assert_int_eq(translate_group(pods + 1, 2, "g", &none, &conf, &js,
			     err, sizeof(err)),
	    0);
	ck_assert_uint_eq(js.ncomps, 0);
	ck_assert_ptr_null(js.comp_of);
	ck_assert_ptr_null(strstr(js.admin_comment, "comps"));
	translate_jobspec_cleanup(&js);

	/*
	 * One shape in two Kubernetes PodGroups (a CompositePodGroup's
	 * children): a component per PodGroup.
	 */
	for (i = 1; i < 3; i++)
		json_object_set_new(json_object_get(pods[i], "spec"),
		    "schedulingGroup",
		    json_pack("{s:s}", "podGroupName", i == 1 ? "a" : "b"));
	ck_assert_int_eq(translate_group(pods + 1, 2, "g", &none, &conf, &js,
			     err, sizeof(err)),
	    0);
	ck_assert_uint_eq(js.ncomps, 2);
	ck_assert_uint_eq(js.comp_of[1], 1);
	ck_assert_ptr_null(js.comps[0].podgroup);
	translate_jobspec_cleanup(&js);

	/* Exclusive: whole nodes each, so no components. */
	conf.exclusive = 1;
	ck_assert_int_eq(translate_group(pods, 4, "g", &none, &conf, &js, err,
			     sizeof(err)),
	    0);
	ck_assert_uint_eq(js.ncomps, 0);
	translate_jobspec_cleanup(&js);
	for (i = 0; i < 4; i++)
		json_decref(pods[i]);
}
END_TEST

START_TEST(test_translate_admin_pods)
{
	json_t *a = translate_admin_pods("{\"pods\":[\"a/b\",\"a/c\"]}");

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(json_array_size(a), 2);
	ck_assert_str_eq(json_string_value(json_array_get(a, 1)), "a/c");
	json_decref(a);
	ck_assert_ptr_null(translate_admin_pods(NULL));
	ck_assert_ptr_null(translate_admin_pods("not json"));
	ck_assert_ptr_null(translate_admin_pods("{\"pods\":\"x\"}"));
}
END_TEST

/*
 * A Workload's (or PodGroup's) annotations are checked as its pods' would
 * be: the same message for a bad one, none for good ones.
 */
START_TEST(test_translate_owner_check)
{
	struct translate_conf conf = { .partition = "slurm-bridge" };
	json_t		     *wl, *pod;
	struct translate_src  src = { NULL, NULL, 0, NULL, NULL, 0 };
	struct jobspec	      js;
	char		      err[256] = "", perr[256] = "";

	wl = json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:s}}}", "kind", "Workload",
	    "metadata", "name", "training", "namespace", "team", "annotations",
	    ANN_PREFIX "timelimit", "5", ANN_PREFIX "job-name", "training-job");
	ck_assert_msg(translate_owner_check(wl, NULL, &conf, err,
			  sizeof(err)) == 0,
	    "%s", err);
	json_object_set_new(k8s_obj_get(wl, "metadata.annotations"),
	    ANN_PREFIX "timelimit", json_string("ten"));
	ck_assert_int_eq(translate_owner_check(wl, NULL, &conf, err,
			     sizeof(err)),
	    -1);
	/* A pod with the same annotation gets the same message. */
	pod = load("bad-timelimit", "input.json");
	src.pod = pod;
	ck_assert_int_eq(translate_pod(&src, &conf, &js, perr, sizeof(perr)),
	    -1);
	ck_assert_str_eq(err, perr);
	json_decref(pod);
	json_decref(wl);
}
END_TEST

/* A pod with these annotations (a JSON object text) and labels. */
static json_t *
topo_pod(const char *anns, const char *labels)
{
	json_t *p = het_pod("p", "1", "64Mi", NULL);

	json_object_set_new(json_object_get(p, "metadata"), "annotations",
	    json_loads(anns, 0, NULL));
	json_object_set_new(json_object_get(p, "metadata"), "labels",
	    json_loads(labels, 0, NULL));
	return (p);
}

/*
 * Every form of a topology request, in order; what Slurm is asked at
 * each kind of level; the check before the Binding.
 */
START_TEST(test_translate_topology)
{
	static const struct {
		const char *anns, *labels, *layer;
		const char *key, *err; /* err: a part of the message */
		int	    required;
		uint32_t    slice;
	} cases[] = {
		{ "{}", "{}", NULL, NULL, NULL, 0, 0 },
		{ "{\"slurmjob.slinky.slurm.net/required-topology\": \"r\", "
		  "\"kueue.x-k8s.io/podset-required-topology\": \"k\"}",
		    "{}", NULL, "r", NULL, 1, 0 },
		{ "{\"slurmjob.slinky.slurm.net/preferred-topology\": \"r\", "
		  "\"slurmjob.slinky.slurm.net/topology-slice-size\": \"2\"}",
		    "{}", NULL, "r", NULL, 0, 2 },
		{ "{\"kueue.x-k8s.io/podset-preferred-topology\": \"k\"}", "{}",
		    NULL, "k", NULL, 0, 0 },
		{ "{\"slurmjob.slinky.slurm.net/exclusive-topology\": \"x\", "
		  "\"slurmjob.slinky.slurm.net/topology-slice-size\": \"2\"}",
		    "{}", NULL, "x", NULL, 1, 2 },
		{ "{\"kueue.x-k8s.io/podset-slice-required-topology\": \"k\", "
		  "\"kueue.x-k8s.io/podset-slice-size\": \"4\"}",
		    "{}", NULL, "k", NULL, 1, 4 },
		{ "{\"kueue.x-k8s.io/podset-slice-required-topology\": \"k\"}",
		    "{}", NULL, NULL, "podset-slice-size: \"\" is not", 0, 0 },
		{ "{\"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology\": "
		  "\"l\", \"leaderworkerset.sigs.k8s.io/subgroup-size\": \"2\"}",
		    "{}", NULL, "l", NULL, 1, 2 },
		{ "{\"leaderworkerset.sigs.k8s.io/exclusive-topology\": \"l\"}",
		    "{}", NULL, NULL,
		    "creates a group's workers only once its leader is bound",
		    0, 0 },
		{ "{\"alpha.jobset.sigs.k8s.io/exclusive-topology\": \"j\"}",
		    "{\"jobset.sigs.k8s.io/replicatedjob-name\": \"w\"}",
		    "{\"apiVersion\": \"jobset.x-k8s.io/v1alpha2\", \"kind\": "
		    "\"JobSet\", \"spec\": {\"replicatedJobs\": [{\"name\": "
		    "\"d\"}, {\"name\": \"w\", \"template\": {\"spec\": "
		    "{\"parallelism\": 3}}}]}}",
		    "j", NULL, 1, 3 },
		{ "{}", "{}",
		    "{\"apiVersion\": \"scheduling.k8s.io/v1beta1\", \"kind\": "
		    "\"PodGroup\", \"spec\": {\"schedulingConstraints\": "
		    "{\"topology\": [{\"key\": \"topology.kubernetes.io/rack\"}]}}}",
		    "topology.kubernetes.io/rack", NULL, 1, 0 },
		{ "{\"kueue.x-k8s.io/podset-required-topology\": \"a b\"}",
		    "{}", NULL, NULL, "is not a node label key", 0, 0 },
	};
	struct topology_req req;
	json_t		   *pod, *layer;
	char		    err[256];
	size_t		    i;
	int		    rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pod = topo_pod(cases[i].anns, cases[i].labels);
		layer = cases[i].layer != NULL ?
		    json_loads(cases[i].layer, 0, NULL) :
		    NULL;
		err[0] = '\0';
		rc = topology_request(pod, &layer, layer != NULL, &req, err,
		    sizeof(err));
		if (cases[i].err != NULL) {
			ck_assert_msg(rc == -1 && strstr(err, cases[i].err),
			    "case %zu: %d %s", i, rc, err);
		} else {
			ck_assert_msg(rc == 0, "case %zu: %s", i, err);
			if (cases[i].key == NULL)
				ck_assert_msg(req.key == NULL, "case %zu", i);
			else {
				ck_assert_msg(req.key != NULL &&
					strcmp(req.key, cases[i].key) == 0,
				    "case %zu: %s", i,
				    req.key != NULL ? req.key : "(none)");
				ck_assert_int_eq(req.required,
				    cases[i].required);
				ck_assert_uint_eq(req.slice, cases[i].slice);
			}
		}
		json_decref(layer);
		json_decref(pod);
	}
}
END_TEST

START_TEST(test_translate_topology_apply)
{
	struct config *c = config_new();
	char	       l0[] = "sw", l1[] = "blk", l2[] = "host", l3[] = "rack";
	struct config_topo_level lv[] = { { l0, TOPO_SWITCH, NULL },
		{ l1, TOPO_BLOCK, NULL }, { l2, TOPO_NODE, NULL },
		{ l3, TOPO_LABEL, NULL } };
	struct topology_req	 req = { "sw", "annotation-x", 1, 0, 0 };
	struct jobspec		 js;
	json_t			*nodes[4];
	char			 err[256] = "", why[256] = "";
	size_t			 i;

	c->topology = lv;
	c->ntopology = 4;
	memset(&js, 0, sizeof(js));
	js.ntasks = 4;
	ck_assert_msg(topology_apply(&req, c, &js, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_uint_eq(js.req_switch, 1);
	ck_assert_uint_gt(js.wait4switch, 86400);
	ck_assert_int_eq(js.topo_kind, TOPO_SWITCH);
	translate_jobspec_cleanup(&js);
	/* A preference waits preferredTopologyWaitMinutes. */
	js.ntasks = 4;
	req.required = 0;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_uint_eq(js.wait4switch, 5 * 60);
	translate_jobspec_cleanup(&js);
	/* Slices: only at block or node levels, and dividing the gang. */
	js.ntasks = 4;
	req.required = 1;
	req.slice = 2;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "this one is a switch level"));
	translate_jobspec_cleanup(&js);
	js.ntasks = 4;
	js.exclusive = 1;
	req.key = "blk";
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_uint_eq(js.segment_size, 2);
	translate_jobspec_cleanup(&js);
	js.ntasks = 4;
	js.exclusive = 1;
	req.slice = 0;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_uint_eq(js.segment_size, 4);
	ck_assert_int_eq(js.topo_exclusive, 0);
	translate_jobspec_cleanup(&js);
	/* Exclusive at a block level: the block is the job's alone. */
	js.ntasks = 4;
	js.exclusive = 1;
	req.exclusive = 1;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_int_eq(js.topo_exclusive, 1);
	translate_jobspec_cleanup(&js);
	/* ... at a switch level, Slurm has no such lever. */
	js.ntasks = 4;
	req.key = "sw";
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_int_eq(js.topo_exclusive, 0);
	translate_jobspec_cleanup(&js);
	req.key = "blk";
	req.exclusive = 0;
	js.ntasks = 5;
	req.slice = 2;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "do not divide the gang's 5"));
	translate_jobspec_cleanup(&js);
	/* A node level: one node; an exclusive gang cannot. */
	js.ntasks = 3;
	req.key = "host";
	req.slice = 0;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_uint_eq(js.max_nodes, 1);
	translate_jobspec_cleanup(&js);
	js.ntasks = 3;
	js.exclusive = 1;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), -1);
	translate_jobspec_cleanup(&js);
	/* A required level the table lacks; a preferred one is dropped. */
	js.ntasks = 3;
	req.key = "zone";
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "is not a level"));
	translate_jobspec_cleanup(&js);
	js.ntasks = 3;
	req.required = 0;
	ck_assert_int_eq(topology_apply(&req, c, &js, err, sizeof(err)), 0);
	ck_assert_ptr_null(js.topo_key);
	translate_jobspec_cleanup(&js);

	/* The check: whole gang, then slices of 2. */
	for (i = 0; i < 4; i++)
		nodes[i] = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name",
		    i < 2 ? (i == 0 ? "a" : "b") : (i == 2 ? "c" : "d"),
		    "labels", "rack", i < 2 ? "r1" : "r2");
	ck_assert_int_eq(topology_holds("rack", 2, (const json_t *const *)nodes,
			     4, why, sizeof(why)),
	    1);
	ck_assert_int_eq(topology_holds("rack", 0, (const json_t *const *)nodes,
			     4, why, sizeof(why)),
	    0);
	ck_assert_str_eq(why, "node a is under rack=r1, node c under r2");
	ck_assert_int_eq(topology_holds("rack", 0, (const json_t *const *)nodes,
			     2, why, sizeof(why)),
	    1);
	ck_assert_int_eq(topology_holds("zone", 0, (const json_t *const *)nodes,
			     2, why, sizeof(why)),
	    0);
	ck_assert_str_eq(why, "node a has no label zone");
	for (i = 0; i < 4; i++)
		json_decref(nodes[i]);
	c->topology = NULL;
	c->ntopology = 0;
	config_free(c);
}
END_TEST

/* Labels against Slurm's domains: agree, a value over two, a domain of two. */
START_TEST(test_translate_topology_agrees)
{
	json_t	   *nodes[4], *dom;
	const char *sn[4] = { "s1", "s2", "s3", "s4" };
	const char *lab[4] = { "r1", "r1", "r2", "r2" };
	char	    msg[512];
	size_t	    i;

	dom = json_pack("{s:s, s:s, s:s, s:s}", "s1", "leaf1", "s2", "leaf1",
	    "s3", "leaf2", "s4", "leaf2");
	for (i = 0; i < 4; i++)
		nodes[i] = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name",
		    sn[i] + 1, "labels", "rack", lab[i]);
	ck_assert_uint_eq(topology_agrees("rack", "leaf switch", dom,
			      (const json_t *const *)nodes, sn, 4, msg,
			      sizeof(msg)),
	    0);
	ck_assert_str_eq(msg, "");
	/* Node 2 labelled r2, Slurm puts it under leaf1. */
	json_object_set_new(json_object_get(json_object_get(nodes[1],
						"metadata"),
				"labels"),
	    "rack", json_string("r2"));
	ck_assert_uint_eq(topology_agrees("rack", "leaf switch", dom,
			      (const json_t *const *)nodes, sn, 4, msg,
			      sizeof(msg)),
	    2);
	ck_assert_str_eq(msg,
	    "rack=r2 spans Slurm's leaf switch leaf1 (node 2) and leaf2 "
	    "(node 3); Slurm's leaf switch leaf1 holds nodes of rack=r1 "
	    "(node 1) and =r2 (node 2)");
	/* A node Slurm has in no domain, and one without the label. */
	json_object_del(dom, "s4");
	json_object_del(json_object_get(json_object_get(nodes[0], "metadata"),
			    "labels"),
	    "rack");
	ck_assert_uint_eq(topology_agrees("rack", "block", dom,
			      (const json_t *const *)nodes, sn, 4, msg,
			      sizeof(msg)),
	    3);
	ck_assert_ptr_nonnull(strstr(msg,
	    "node 1 has no label rack (Slurm's block leaf1); node 4 "
	    "(rack=r2) is in no Slurm block"));
	for (i = 0; i < 4; i++)
		json_decref(nodes[i]);
	json_decref(dom);
}
END_TEST

/* A gang whose pods may use different nodes: a component per set. */
START_TEST(test_translate_split_nodes)
{
	static const char *const exc[] = { "n2,n3", "n1,n3", "n2,n3" };
	static const char *const many[] = { "a", "b", "c", "d", "e", "f", "g",
		"h", "i" };
	struct jobspec		 js;
	char			 err[256];
	json_t			*ac, *het;

	memset(&js, 0, sizeof(js));
	js.cpus_per_task = 2;
	js.ntasks = 3;
	js.exc_nodes = xstrdup("n9");
	js.admin_comment = xstrdup("{\"pods\":[\"ns/a\",\"ns/b\",\"ns/c\"]}");
	ck_assert_int_eq(translate_split_nodes(&js, exc, 3, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(js.ncomps, 2);
	ck_assert_uint_eq(js.comp_of[0], 0);
	ck_assert_uint_eq(js.comp_of[1], 1);
	ck_assert_uint_eq(js.comp_of[2], 0);
	ck_assert_uint_eq(js.comps[0].ntasks, 2);
	ck_assert_str_eq(js.comps[0].exc_nodes, "n2,n3");
	ck_assert_uint_eq(js.comps[1].ntasks, 1);
	ck_assert_str_eq(js.comps[1].exc_nodes, "n1,n3");
	ck_assert_uint_eq(js.comps[1].cpus_per_task, 2);
	ck_assert_ptr_null(js.exc_nodes); /* each component's own */
	ac = json_loads(js.admin_comment, 0, NULL);
	ck_assert_int_eq(json_integer_value(
			     json_array_get(json_object_get(ac, "comps"), 1)),
	    1);
	ck_assert_uint_eq(json_array_size(json_object_get(ac, "shapes")), 2);
	het = translate_admin_het(js.admin_comment, 3);
	ck_assert_ptr_nonnull(het);
	json_decref(het);
	json_decref(ac);
	translate_jobspec_cleanup(&js);

	/* Whole nodes, or more sets than components: refused, saying so. */
	memset(&js, 0, sizeof(js));
	js.cpus_per_task = 1;
	js.exclusive = 1;
	ck_assert_int_eq(translate_split_nodes(&js, exc, 3, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "whole nodes"));
	js.exclusive = 0;
	ck_assert_int_eq(translate_split_nodes(&js, many, 9, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 8"));
	ck_assert_uint_eq(js.ncomps, 0);
	translate_jobspec_cleanup(&js);
}
END_TEST

Suite *
translate_suite(void)
{
	Suite *s = suite_create("translate");
	TCase *tc = tcase_create("pod");

	tcase_add_loop_test(tc, test_translate_cases, 0,
	    sizeof(translate_runs) / sizeof(translate_runs[0]));
	tcase_add_test(tc, test_translate_admin_pods);
	tcase_add_test(tc, test_translate_group_name);
	tcase_add_test(tc, test_translate_group_het);
	tcase_add_test(tc, test_translate_group_claims);
	tcase_add_test(tc, test_translate_owner_check);
	tcase_add_test(tc, test_translate_topology);
	tcase_add_test(tc, test_translate_topology_apply);
	tcase_add_test(tc, test_translate_topology_agrees);
	tcase_add_test(tc, test_translate_split_nodes);
	suite_add_tcase(s, tc);
	return (s);
}
