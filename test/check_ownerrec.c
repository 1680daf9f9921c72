/*
 * Owner records (common/ownerrec.c): every rule reads the record of an
 * owner object exactly as it reads the object.  Each test runs the same
 * rules twice, over the objects and over their records, and compares all
 * they return: the translation table (test/data/translate) with its
 * layers, and with each pod's own annotations moved onto a layer; the
 * workload rules (roots, layers, gangs, sizes, JobSet stages, Kubernetes
 * PodGroups and Workloads) over every shape of owner, with the bulk a real
 * object carries; annotation values longer than a record keeps.  And a Job
 * with a 200 KB pod template makes a record of a few hundred bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "dra.h"
#include "policy.h"
#include "workload.h"
#include "ownerrec.h"
#include "xmalloc.h"
#include "check_suites.h"

#define OR_DIR TEST_DATA "/translate"

/* --- translation, full object against record -------------------------- */

static void
js_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v != NULL ? json_string(v) : json_null());
}

/* Every field of a job description, or the refusal, as one object. */
static json_t *
or_result(int rc, const struct jobspec *js, const char *err)
{
	json_t *o;

	if (rc != 0)
		return (json_pack("{s:i, s:s}", "rc", rc, "error", err));
	o = json_object();
	js_str(o, "name", js->name);
	js_str(o, "comment", js->comment);
	js_str(o, "admin_comment", js->admin_comment);
	js_str(o, "partition", js->partition);
	js_str(o, "account", js->account);
	js_str(o, "qos", js->qos);
	js_str(o, "reservation", js->reservation);
	js_str(o, "constraints", js->constraints);
	js_str(o, "tres_per_task", js->tres_per_task);
	js_str(o, "licenses", js->licenses);
	js_str(o, "wckey", js->wckey);
	js_str(o, "mcs_label", js->mcs_label);
	js_str(o, "user_name", js->user_name);
	js_str(o, "group_name", js->group_name);
	json_object_set_new(o, "numbers",
	    json_pack("[I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I, I]",
		(json_int_t)js->ntasks, (json_int_t)js->cpus_per_task,
		(json_int_t)js->gpus_per_task, (json_int_t)js->mem_per_cpu_mb,
		(json_int_t)js->mem_per_node_mb, (json_int_t)js->min_nodes,
		(json_int_t)js->max_nodes, (json_int_t)js->req_switch,
		(json_int_t)js->wait4switch, (json_int_t)js->user_id,
		(json_int_t)js->group_id, (json_int_t)js->has_user_id,
		(json_int_t)js->has_group_id, (json_int_t)js->time_limit,
		(json_int_t)js->priority, (json_int_t)js->exclusive,
		(json_int_t)js->ncomps));
	return (o);
}

/* translate_pod over src, as an or_result object. */
static json_t *
or_translate(const struct translate_src *src, const struct translate_conf *tc)
{
	struct jobspec js;
	char	       err[512] = "";
	json_t	      *r;
	int	       rc;

	rc = translate_pod(src, tc, &js, err, sizeof(err));
	r = or_result(rc, &js, err);
	if (rc == 0)
		translate_jobspec_cleanup(&js);
	return (r);
}

/* Fails the test unless a and b are equal (both taken). */
static void
or_same(json_t *a, json_t *b, const char *what)
{
	char *da, *db;

	if (!json_equal(a, b)) {
		da = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
		db = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);
		ck_abort_msg("%s: the record reads differently\n"
			     "  object: %s\n  record: %s",
		    what, da, db);
	}
	json_decref(a);
	json_decref(b);
}

/*
 * Translates with layers n full, then with each layer as the record of
 * each kind, and compares.
 */
static void
or_translate_both(const char *what, const json_t *pod, json_t *const *layers,
    size_t n, const json_t *ns, const struct translate_conf *tc)
{
	struct translate_src src;
	json_t		    *rec[WORKLOAD_LAYERS + 1], *full;
	char		     label[256];
	size_t		     i;
	int		     k;

	src.pod = pod;
	src.ns = ns;
	src.layers = layers;
	src.dra = NULL;
	src.gang = 0;
	src.dra = NULL;
	src.nlayers = n;
	full = or_translate(&src, tc);
	for (k = 0; k < WORKLOAD_KINDS; k++) {
		for (i = 0; i < n; i++)
			rec[i] = ownerrec_dup((enum workload_kind)k, layers[i]);
		src.layers = rec;
		snprintf(label, sizeof(label), "%s (kind %d)", what, k);
		or_same(json_incref(full), or_translate(&src, tc), label);
		for (i = 0; i < n; i++)
			json_decref(rec[i]);
	}
	json_decref(full);
}

static json_t *
or_load(const char *cname)
{
	char	     path[512];
	json_error_t jerr;
	json_t	    *j;

	snprintf(path, sizeof(path), OR_DIR "/%s/input.json", cname);
	j = json_load_file(path, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
	return (j);
}

/*
 * One translation case: its layers as records; then the pod's own
 * annotations (and deadline) moved onto a layer of their own, the most
 * specific, so that every annotation key the table tests is read from a
 * record too.
 */
static void
or_translate_case(const char *cname)
{
	struct translate_conf tc = { .partition = "slurm-bridge" };
	json_t		     *in = or_load(cname), *layers[WORKLOAD_LAYERS + 1];
	json_t		     *pod, *moved;
	const json_t	     *p, *ns = NULL;
	char		      what[300];
	size_t		      n = 0;

	p = in;
	if (json_object_get(in, "pod") != NULL) {
		p = json_object_get(in, "pod");
		if ((layers[0] = json_object_get(in, "root")) != NULL)
			n = 1;
		while (n < WORKLOAD_LAYERS &&
		    (layers[n] = json_array_get(json_object_get(in, "layers"),
			 n)) != NULL)
			n++;
		ns = json_object_get(in, "namespace");
		tc.default_account = k8s_obj_str(in, "conf.default_account");
		tc.mcs_label = k8s_obj_str(in, "conf.mcs_label");
		tc.exclusive = json_is_true(k8s_obj_get(in, "conf.exclusive"));
	}
	snprintf(what, sizeof(what), "translate/%s", cname);
	if (n > 0)
		or_translate_both(what, p, layers, n, ns, &tc);

	pod = json_deep_copy(p);
	moved = json_pack("{s:s, s:s, s:{s:s, s:s?, s:s?, s:O?}, s:{}}",
	    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
	    "moved", "namespace", k8s_obj_namespace(p), "uid", k8s_obj_uid(p),
	    "annotations", k8s_obj_get(p, "metadata.annotations"), "spec");
	if (k8s_obj_get(p, "spec.activeDeadlineSeconds") != NULL)
		json_object_set(json_object_get(moved, "spec"),
		    "activeDeadlineSeconds",
		    k8s_obj_get(p, "spec.activeDeadlineSeconds"));
	json_object_del(json_object_get(pod, "metadata"), "annotations");
	json_object_del(json_object_get(pod, "spec"), "activeDeadlineSeconds");
	layers[n] = moved;
	snprintf(what, sizeof(what),
	    "translate/%s, the pod's annotations on "
	    "a layer",
	    cname);
	or_translate_both(what, pod, layers, n + 1, ns, &tc);
	json_decref(moved);
	json_decref(pod);
	json_decref(in);
}

START_TEST(test_ownerrec_translate_cases)
{
	ck_assert_int_ge(check_each_case(OR_DIR, or_translate_case), 32);
}
END_TEST

/* A pod that translates: the managed toleration and one container. */
static json_t *
or_pod(const char *name)
{
	return (json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{}, s:{}}, "
			  "s:{s:s, s:[{s:s, s:s, s:s}], "
			  "s:[{s:s, s:{s:{s:s, s:s}}}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
	    "namespace", "ns", "uid", "u-pod", "labels", "annotations", "spec",
	    "schedulerName", "slurm-bridge", "tolerations", "key",
	    MANAGED_TAINT_KEY, "operator", "Exists", "effect",
	    MANAGED_TAINT_EFFECT_DEFAULT, "containers", "name", "main",
	    "resources", "requests", "cpu", "1", "memory", "1Gi"));
}

/*
 * Values longer than a record keeps, on a layer, under every key a record
 * keeps: refused with the same message (or, for a number padded with
 * zeros, taken as the same number).
 */
START_TEST(test_ownerrec_long_values)
{
	static const char *const keys[] = { "partition", "account", "qos",
		"reservation", "constraints", "licenses", "wckey", "job-name",
		"gres", "switches", "mem-per-node", "cpu-per-task", "timelimit",
		"priority", "min-nodes", "max-nodes", "user-id", "group-id",
		"exclusive" };
	struct translate_conf	 tc = { .partition = "slurm-bridge" };
	const size_t		 big = OWNERREC_MAX_VALUE * 3;
	json_t			*pod = or_pod("p"), *job, *rec;
	char			*v = xmalloc(big + 8), key[128], what[200];
	size_t			 i, k;

	for (i = 0; i < 10; i++) {
		/* Each shape of long value. */
		memset(v, '0', big);
		v[big] = '\0';
		switch (i) {
		case 0: /* zeros, then a number in range */
			v[big - 1] = '5';
			break;
		case 1: /* zeros only */
			break;
		case 2: /* a number of thousands of digits */
			v[0] = '7';
			break;
		case 3: /* digits past the cut, then a letter */
			v[big - 1] = 'x';
			break;
		case 4: /* a two-byte character across the cut */
			memcpy(v + OWNERREC_MAX_VALUE - 1, "\xc3\xa9", 2);
			break;
		case 5: /* a three-byte one, after fewer digits */
			memcpy(v + OWNERREC_MAX_VALUE - 2, "\xe2\x82\xac", 3);
			break;
		case 6: /* letters */
			memset(v, 'a', big);
			break;
		case 7: /* a name, then digits */
			memcpy(v, "true", 4);
			break;
		case 8: /* just over the limit: zeros, then a number */
			v[OWNERREC_MAX_VALUE + 1] = '\0';
			v[OWNERREC_MAX_VALUE] = '3';
			break;
		case 9: /* zeros the message quotes, then too many digits */
			memset(v + 100, '9', big - 100);
			break;
		}
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			job = json_pack("{s:{s:s, s:s, s:s, s:{}}}", "metadata",
			    "name", "j", "namespace", "ns", "uid", "u-j",
			    "annotations");
			snprintf(key, sizeof(key), ANN_PREFIX "%s", keys[k]);
			json_object_set_new(k8s_obj_get(job,
						"metadata.annotations"),
			    key, json_string(v));
			ck_assert_ptr_nonnull(k8s_obj_annotation(job, key));
			rec = ownerrec_dup(WORKLOAD_JOB, job);
			ck_assert_uint_le(strlen(k8s_obj_annotation(rec, key)),
			    OWNERREC_MAX_VALUE);
			json_decref(rec);
			snprintf(what, sizeof(what), "value shape %zu on %s", i,
			    key);
			or_translate_both(what, pod, &job, 1, NULL, &tc);
			json_decref(job);
		}
	}
	free(v);
	json_decref(pod);
}
END_TEST

/* --- the workload rules, full object against record ------------------- */

/* The owners a lookup knows: by kind, an array of objects. */
struct or_world {
	json_t *objs[WORKLOAD_KINDS];
	int	records; /* hand out records, not the objects */
};

static json_t *
or_lookup(void *arg, enum workload_kind kind, const char *ns, const char *name)
{
	struct or_world *w = arg;
	const json_t	*o;
	size_t		 i;

	json_array_foreach (w->objs[kind], i, o)
		if (strcmp(k8s_obj_namespace(o), ns) == 0 &&
		    strcmp(k8s_obj_name(o), name) == 0)
			return (w->records ?
				ownerrec_dup(kind, o) :
				json_incref((json_t *)(uintptr_t)o));
	return (NULL);
}

/* Bulk a real object carries, none of which a rule reads. */
static void
or_bulk(json_t *o)
{
	json_t *md = json_object_get(o, "metadata");

	json_object_set_new(md, "labels",
	    json_pack("{s:s, s:s}", "app", "trainer", LABEL_POD_GROUP, "x"));
	json_object_set_new(md, "ownerReferences",
	    json_pack("[{s:s, s:s, s:s, s:b}]", "kind", "Thing", "name", "t",
		"uid", "u-t", "controller", 1));
	json_object_set_new(md, "managedFields",
	    json_pack("[{s:s}]", "manager", "kubectl"));
	json_object_set_new(md, "finalizers", json_pack("[s]", "keep"));
	json_object_set_new(md, "creationTimestamp",
	    json_string("2026-01-01T00:00:00Z"));
	if (json_object_get(md, "annotations") == NULL)
		json_object_set_new(md, "annotations", json_object());
	json_object_set_new(json_object_get(md, "annotations"),
	    "kubectl.kubernetes.io/last-applied-configuration",
	    json_string("{\"big\":true}"));
	json_object_set_new(json_object_get(md, "annotations"),
	    ANN_PREFIX "not-a-key", json_string("x"));
	json_object_set_new(o, "status",
	    json_pack("{s:i, s:[{s:s, s:s}]}", "active", 3, "conditions",
		"type", "Complete", "status", "False"));
}

/* An owner: metadata (ns "ns"), its annotations and spec (taken). */
static json_t *
or_owner(const char *kind, const char *name, const char *uid, json_t *ann,
    json_t *spec)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}, s:o}",
	    "apiVersion", "x/v1", "kind", kind, "metadata", "name", name,
	    "namespace", "ns", "uid", uid, "resourceVersion", "42",
	    "generation", 7, "spec", spec);

	if (ann != NULL)
		json_object_set_new(json_object_get(o, "metadata"),
		    "annotations", ann);
	or_bulk(o);
	return (o);
}

static void
or_add(struct or_world *w, enum workload_kind k, json_t *o)
{
	if (w->objs[k] == NULL)
		w->objs[k] = json_array();
	json_array_append_new(w->objs[k], o);
}

/* The JobSets of the stage table (check_workload.c) and more. */
static const char *const or_jobsets[] = {
	"[{\"name\":\"init\"},{\"name\":\"workers\",\"dependsOn\":"
	"[{\"name\":\"init\",\"status\":\"Complete\"}],\"template\":"
	"{\"spec\":{\"parallelism\":4}}}]",
	"[{\"name\":\"driver\"},{\"name\":\"workers\",\"replicas\":2,"
	"\"dependsOn\":[{\"name\":\"driver\",\"status\":\"Ready\"}]},"
	"{\"name\":\"eval\",\"dependsOn\":[{\"name\":\"driver\","
	"\"status\":\"Ready\"}]}]",
	"[{\"name\":\"a\",\"replicas\":2},{\"name\":\"b\"}]",
	"[{\"name\":\"a\",\"dependsOn\":[{\"name\":\"b\",\"status\":"
	"\"Ready\"}]},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	"\"status\":\"Ready\"}]}]",
	"[{\"name\":\"a\"},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	"\"status\":\"Done\"}]}]",
	"[{\"name\":\"a\"},{\"name\":\"b\",\"dependsOn\":[{\"name\":\"a\","
	"\"status\":\"Ready\"}]}]",
	/* Sizes: 2 x 3, the defaults, and out of range. */
	"[{\"name\":\"w\",\"replicas\":2,\"template\":{\"spec\":"
	"{\"parallelism\":3}}},{\"name\":\"x\",\"template\":{}}]",
	"[{\"name\":\"w\",\"replicas\":5000}]",
	"[{\"name\":\"w\",\"replicas\":-1,\"template\":{\"spec\":"
	"{\"parallelism\":2}}}]",
	/* Odd shapes: no object, a string template, dependsOn not a list. */
	"[7,{\"name\":\"w\",\"template\":\"t\",\"dependsOn\":{}}]",
	"[{\"name\":\"w\",\"replicas\":null,\"dependsOn\":[5,{\"name\":"
	"{\"a\":1},\"status\":\"Ready\"}]}]",
};

/*
 * The world of JobSet spec i: one owner of every kind and shape, each
 * with its bulk; a JobSet's pod template is one too.
 */
static void
or_world_init(struct or_world *w, size_t i)
{
	json_t *rjs = json_loads(or_jobsets[i], 0, NULL), *rj;
	size_t	k;

	memset(w, 0, sizeof(*w));
	ck_assert_ptr_nonnull(rjs);
	json_array_foreach (rjs, k, rj)
		if (json_is_object(k8s_obj_get(rj, "template.spec")))
			json_object_set_new(k8s_obj_get(rj, "template.spec"),
			    "template",
			    json_pack("{s:{s:[{s:s, s:s}]}}", "spec",
				"containers", "name", "c", "image", "big"));
	or_add(w, WORKLOAD_JOBSET,
	    or_owner("JobSet", "js", "u-js",
		json_pack("{s:s}", ANN_PREFIX "qos", "from-jobset"),
		json_pack("{s:o, s:b}", "replicatedJobs", rjs, "suspend", 1)));
	or_add(w, WORKLOAD_JOB,
	    or_owner("Job", "sim", "u-sim",
		json_pack("{s:s, s:s, s:s}", ANN_PREFIX "qos", "from-job",
		    ANN_PREFIX "timelimit", "45", ANN_PREFIX "user-id", "1234"),
		json_pack("{s:s, s:i, s:i, s:i, s:{s:{s:[{s:s}]}}}",
		    "completionMode", "Indexed", "parallelism", 4,
		    "completions", 4, "activeDeadlineSeconds", 601, "template",
		    "spec", "containers", "image", "big")));
	or_add(w, WORKLOAD_JOB,
	    or_owner("Job", "train", "u-train",
		json_pack("{s:s}", ANN_PREFIX "account", "from-train"),
		json_pack("{s:i}", "parallelism", 3)));
	or_add(w, WORKLOAD_PODGROUP,
	    or_owner("PodGroup", "train", "u-pg",
		json_pack("{s:s}", ANN_PREFIX "partition", "from-pg"),
		json_pack("{s:i, s:s}", "minMember", 3, "scheduleTimeout",
		    "10s")));
	or_add(w, WORKLOAD_PODGROUP,
	    or_owner("PodGroup", "huge", "u-huge", NULL,
		json_pack("{s:i}", "minMember", WORKLOAD_MAX_GANG + 1)));
	or_add(w, WORKLOAD_LWS,
	    or_owner("LeaderWorkerSet", "lws", "u-lws",
		json_pack("{s:s, s:s}", ANN_PREFIX "wckey", "from-lws",
		    LWS_ANN_SIZE, "4"),
		json_pack("{s:i, s:{s:i, s:{s:{s:[{s:s}]}}}}", "replicas", 2,
		    "leaderWorkerTemplate", "size", 4, "workerTemplate", "spec",
		    "containers", "image", "big")));
	or_add(w, WORKLOAD_SCHED_PODGROUP,
	    or_owner("PodGroup", "ring", "u-ring",
		json_pack("{s:s}", ANN_PREFIX "reservation", "from-ring"),
		json_pack("{s:{s:{s:i}}, s:{s:s, s:s}}", "schedulingPolicy",
		    "gang", "minCount", 3, "workloadRef", "workloadName",
		    "training", "templateName", "workers")));
	/* kube-scheduler's condition, twice: the last one counts. */
	json_object_set_new(json_array_get(w->objs[WORKLOAD_SCHED_PODGROUP], 0),
	    "status",
	    json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}, "
		      "{s:s, s:s}]}",
		"conditions", "type", PODGROUP_CONDITION, "status", "False",
		"lastTransitionTime", "2026-01-01T00:00:00Z", "type",
		PODGROUP_CONDITION, "status", "True", "lastTransitionTime",
		"2026-01-02T00:00:00Z", "reason", "Scheduled", "message",
		"placed", "type", "Other", "status", "True"));
	or_add(w, WORKLOAD_SCHED_PODGROUP,
	    or_owner("PodGroup", "ring-basic", "u-rb", NULL,
		json_pack("{s:{s:{}}}", "schedulingPolicy", "basic")));
	or_add(w, WORKLOAD_SCHED_PODGROUP,
	    or_owner("PodGroup", "ring-alpha", "u-ra", NULL,
		json_pack("{s:{s:{s:i}}, s:{s:{s:s, s:s}}}", "schedulingPolicy",
		    "gang", "minCount", 2, "podGroupTemplateRef", "workload",
		    "workloadName", "training", "podGroupTemplateName",
		    "workers")));
	or_add(w, WORKLOAD_SCHED_PODGROUP,
	    or_owner("PodGroup", "ring-huge", "u-rh", NULL,
		json_pack("{s:{s:{s:i}}}", "schedulingPolicy", "gang",
		    "minCount", WORKLOAD_MAX_GANG + 1)));
	or_add(w, WORKLOAD_SCHED_PODGROUP,
	    or_owner("PodGroup", "ring-odd", "u-ro", NULL,
		json_pack("{s:{s:s, s:[]}, s:s}", "schedulingPolicy", "gang",
		    "x", "basic", "workloadRef", "training")));
	or_add(w, WORKLOAD_SCHED_WORKLOAD,
	    or_owner("Workload", "training", "u-wl",
		json_pack("{s:s, s:s}", ANN_PREFIX "job-name", "from-workload",
		    ANN_PREFIX "partition", "wl-part"),
		json_pack("{s:[{s:s, s:{s:{s:i}}}, 7], s:[{s:s}]}",
		    "podGroupTemplates", "name", "workers", "policy", "gang",
		    "minCount", 3, "compositePodGroupTemplates", "name",
		    "both")));
}

static void
or_world_cleanup(struct or_world *w)
{
	int k;

	for (k = 0; k < WORKLOAD_KINDS; k++)
		json_decref(w->objs[k]);
}

/* An object's identity in a result: kind, key and uid, or null. */
static json_t *
or_ident(json_t *o)
{
	json_t *r;
	char	key[512];

	if (o == NULL)
		return (json_null());
	r = json_pack("[s?, s, s?]", k8s_obj_str(o, "kind"),
	    k8s_obj_key(o, key, sizeof(key)), k8s_obj_uid(o));
	json_decref(o);
	return (r);
}

/*
 * What the rules make of pod in w: its group, the gang's size, its root,
 * its Job, its layers and their translation; and what the scheduler and
 * the webhook read of each owner it can find.
 */
static json_t *
or_rules(const json_t *pod, struct or_world *w)
{
	struct workload_lookup lk = { or_lookup, w };
	struct translate_conf  tc = { .partition = "slurm-bridge" };
	struct translate_src   src;
	struct group_id	       g;
	json_t		      *r = json_object(), *layers[WORKLOAD_LAYERS], *l;
	json_t		      *o, *t;
	const json_t	      *c, *cond;
	const char	      *stage;
	char		       err[256] = "";
	size_t		       n, i;
	int		       rc, pods;

	rc = workload_group(pod, &lk, &g, err, sizeof(err));
	json_object_set_new(r, "group",
	    rc == 0 ? json_pack("{s:s, s:s, s:i, s:i, s:i}", "key", g.key,
			  "name", g.name, "gang", g.gang, "min", g.min_member,
			  "sized_by", (int)g.sized_by) :
		      json_pack("{s:s}", "error", err));
	if (rc == 0)
		json_object_set_new(r, "size",
		    json_integer(workload_gang_size("ns", g.name, g.min_member,
			g.sized_by, &lk)));
	json_object_set_new(r, "root", or_ident(workload_root(pod, &lk)));
	json_object_set_new(r, "job", or_ident(workload_job(pod, &lk)));
	n = workload_layers(pod, &lk, layers);
	l = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(l, or_ident(json_incref(layers[i])));
	json_object_set_new(r, "layers", l);
	src.pod = pod;
	src.layers = layers;
	src.dra = NULL;
	src.nlayers = n;
	src.ns = NULL;
	src.gang = 0;
	json_object_set_new(r, "translate", or_translate(&src, &tc));
	workload_layers_free(layers, n);

	/* The JobSet: size, and the stage of each replicated job. */
	if ((o = or_lookup(w, WORKLOAD_JOBSET, "ns", "js")) != NULL) {
		t = json_array();
		json_array_foreach (k8s_obj_get(o, "spec.replicatedJobs"), i,
		    c) {
			err[0] = '\0';
			rc = workload_jobset_stage(o, k8s_obj_str(c, "name"),
			    &stage, &pods, err, sizeof(err));
			json_array_append_new(t,
			    json_pack("[i, s?, i, s]", rc, stage, pods, err));
		}
		json_object_set_new(r, "jobset",
		    json_pack("{s:i, s:o}", "size", workload_jobset_size(o),
			"stages", t));
		json_decref(o);
	}
	/* Kubernetes' PodGroups: as workload.c and writes.c read them. */
	json_array_foreach (w->objs[WORKLOAD_SCHED_PODGROUP], i, c) {
		if ((o = or_lookup(w, WORKLOAD_SCHED_PODGROUP, "ns",
			 k8s_obj_name(c))) == NULL)
			continue;
		t = json_pack("{s:i, s:s?, s:s?, s:I}", "min",
		    workload_podgroup_min(o), "ref", workload_ref_name(o),
		    "uid", k8s_obj_uid(o), "generation",
		    json_integer_value(k8s_obj_get(o, "metadata.generation")));
		json_array_foreach (k8s_obj_get(o, "status.conditions"), n,
		    cond)
			if (k8s_obj_str(cond, "type") != NULL &&
			    strcmp(k8s_obj_str(cond, "type"),
				PODGROUP_CONDITION) == 0)
				json_object_set_new(t, "condition",
				    json_pack("[s?, s?]",
					k8s_obj_str(cond, "status"),
					k8s_obj_str(cond,
					    "lastTransitionTime")));
		json_object_set_new(r, k8s_obj_name(c), t);
		json_decref(o);
	}
	/* The Workload's template names (the webhook's PodGroup check). */
	if ((o = or_lookup(w, WORKLOAD_SCHED_WORKLOAD, "ns", "training")) !=
	    NULL) {
		t = json_array();
		json_array_foreach (k8s_obj_get(o, "spec.podGroupTemplates"), i,
		    c)
			json_array_append_new(t,
			    json_pack("s?", k8s_obj_str(c, "name")));
		json_array_foreach (k8s_obj_get(o,
					"spec.compositePodGroupTemplates"),
		    i, c)
			json_array_append_new(t,
			    json_pack("s?", k8s_obj_str(c, "name")));
		json_object_set_new(r, "templates", t);
		json_decref(o);
	}
	return (r);
}

/* The pods of the workload test: every way a pod names an owner. */
static json_t *
or_world_pod(size_t i)
{
	json_t *p = or_pod("p-0");
	json_t *labels = k8s_obj_get(p, "metadata.labels");
	json_t *ann = k8s_obj_get(p, "metadata.annotations");
	json_t *spec = json_object_get(p, "spec");

	switch (i) {
	case 0: /* nothing: alone */
		break;
	case 1: /* a PodGroup CR by label, sized by it */
		json_object_set_new(labels, LABEL_POD_GROUP,
		    json_string("train"));
		break;
	case 2: /* ... and one out of range */
		json_object_set_new(labels, LABEL_POD_GROUP,
		    json_string("huge"));
		break;
	case 3: /* a pod-group label with no CR: the Job */
		json_object_set_new(labels, LABEL_POD_GROUP,
		    json_string("none"));
		break;
	case 4: /* LeaderWorkerSet */
		json_object_set_new(labels, LWS_LABEL_NAME, json_string("lws"));
		json_object_set_new(labels, LWS_LABEL_GROUP_INDEX,
		    json_string("1"));
		json_object_set_new(ann, LWS_ANN_SIZE, json_string("4"));
		break;
	case 5: /* JobSet, each replicated job in turn below */
	case 6:
	case 7:
		json_object_set_new(labels, JOBSET_LABEL_NAME,
		    json_string("js"));
		json_object_set_new(labels, JOBSET_LABEL_RJ,
		    json_string(i == 5 ? "init" :
			    i == 6     ? "workers" :
					 "b"));
		break;
	case 8: /* Kubernetes' PodGroup of each kind */
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
		json_object_set_new(spec, "schedulingGroup",
		    json_pack("{s:s}", "podGroupName",
			i == 8	    ? "ring" :
			    i == 9  ? "ring-basic" :
			    i == 10 ? "ring-alpha" :
			    i == 11 ? "ring-huge" :
			    i == 12 ? "ring-odd" :
				      "ring-none"));
		break;
	case 14: /* the gang annotation says no */
		json_object_set_new(labels, LABEL_POD_GROUP,
		    json_string("train"));
		json_object_set_new(ann, ANN_PREFIX "gang",
		    json_string("false"));
		break;
	}
	/* Every other pod is also a Job's: the right uid, or a stale one. */
	if (i % 2 == 1 || i == 3)
		json_object_set_new(json_object_get(p, "metadata"),
		    "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
			"batch/v1", "kind", "Job", "name",
			i == 9 ? "train" : "sim", "uid",
			i == 11	   ? "u-stale" :
			    i == 9 ? "u-train" :
				     "u-sim",
			"controller", 1));
	return (p);
}

#define OR_PODS 15

START_TEST(test_ownerrec_workload)
{
	struct or_world w;
	json_t	       *pod, *full, *rec;
	char		what[128];
	size_t		i;

	or_world_init(&w, (size_t)_i);
	for (i = 0; i < OR_PODS; i++) {
		pod = or_world_pod(i);
		w.records = 0;
		full = or_rules(pod, &w);
		w.records = 1;
		rec = or_rules(pod, &w);
		snprintf(what, sizeof(what), "JobSet %d, pod %zu", _i, i);
		or_same(full, rec, what);
		json_decref(pod);
	}
	or_world_cleanup(&w);
}
END_TEST

/* --- what a record keeps and drops --------------------------------------- */

/* A Job as kubectl apply leaves it: a pod template of about 200 KB. */
static json_t *
or_big_job(void)
{
	json_t *job, *env = json_array();
	char	name[32], *val = xmalloc(1001);
	size_t	i;

	memset(val, 'v', 1000);
	val[1000] = '\0';
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "VAR_%zu", i);
		json_array_append_new(env,
		    json_pack("{s:s, s:s}", "name", name, "value", val));
	}
	free(val);
	job = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i, s:{s:s}, "
			"s:{s:s, s:s, s:s}, s:[{s:s, s:s}]}, "
			"s:{s:i, s:i, s:s, s:b, s:i, s:{s:{s:{s:s}}, "
			"s:{s:[{s:s, s:s, s:o}], s:s}}}, "
			"s:{s:i}}",
	    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", "big",
	    "namespace", "tenant", "uid", "u-big", "resourceVersion", "99",
	    "generation", 1, "labels", "app", "big", "annotations",
	    ANN_PREFIX "timelimit", "30", ANN_PREFIX "not-read", "x",
	    "kubectl.kubernetes.io/last-applied-configuration", "{...}",
	    "managedFields", "manager", "kubectl", "operation", "Update",
	    "spec", "parallelism", 8, "completions", 8, "completionMode",
	    "Indexed", "suspend", 1, "activeDeadlineSeconds", 600, "template",
	    "metadata", "labels", "app", "big", "spec", "containers", "name",
	    "main", "image", "registry/trainer:1", "env", env, "restartPolicy",
	    "Never", "status", "active", 0);
	ck_assert_ptr_nonnull(job);
	return (job);
}

/* A PodGroup's disruptionMode: all is kept, single (the default) is not. */
START_TEST(test_ownerrec_disruption_mode)
{
	json_t *all =
		   json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:{s:i}}, s:{s:{}}}}",
		       "apiVersion", "scheduling.k8s.io/v1beta1", "kind",
		       "PodGroup", "metadata", "name", "d", "spec",
		       "schedulingPolicy", "gang", "minCount", 2,
		       "disruptionMode", "all"),
	       *single = json_deep_copy(all), *ra, *rs, *entry;

	json_object_set_new(k8s_obj_get(single, "spec"), "disruptionMode",
	    json_pack("{s:{}}", "single"));
	ra = ownerrec_dup(WORKLOAD_SCHED_PODGROUP, all);
	rs = ownerrec_dup(WORKLOAD_SCHED_PODGROUP, single);
	ck_assert_int_eq(workload_podgroup_disrupt_all(all), 1);
	ck_assert_int_eq(workload_podgroup_disrupt_all(ra), 1);
	ck_assert_int_eq(workload_podgroup_disrupt_all(single), 0);
	ck_assert_int_eq(workload_podgroup_disrupt_all(rs), 0);
	json_decref(rs);
	/* Its claims (KEP-5729) are read from the record as from the object. */
	json_object_set_new(k8s_obj_get(single, "spec"), "resourceClaims",
	    json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "a",
		"resourceClaimName", "shared", "name", "b",
		"resourceClaimTemplateName", "two"));
	rs = ownerrec_dup(WORKLOAD_SCHED_PODGROUP, single);
	ck_assert(json_equal(k8s_obj_get(rs, "spec.resourceClaims"),
	    k8s_obj_get(single, "spec.resourceClaims")));
	entry = json_pack("{s:s, s:s}", "name", "b",
	    "resourceClaimTemplateName", "two");
	ck_assert_int_eq(dra_entry_podgroup(rs, entry), 1);
	json_object_set_new(entry, "name", json_string("a"));
	ck_assert_int_eq(dra_entry_podgroup(rs, entry), 0);
	json_decref(entry);
	json_decref(all);
	json_decref(single);
	json_decref(ra);
	json_decref(rs);
}
END_TEST

/* The composite's rules read the same from records as from the objects. */
static json_t *or_comp[WORKLOAD_KINDS];

static json_t *
or_comp_lookup(void *arg, enum workload_kind kind, const char *ns,
    const char *name)
{
	(void)arg;
	(void)ns;
	if (or_comp[kind] == NULL || name == NULL ||
	    strcmp(k8s_obj_name(or_comp[kind]), name) != 0)
		return (NULL);
	return (json_incref(or_comp[kind]));
}

START_TEST(test_ownerrec_composite)
{
	static const struct workload_lookup lk = { or_comp_lookup, NULL };
	json_t	       *obj[WORKLOAD_KINDS] = { NULL }, *pod;
	struct group_id gid;
	char		why[400], err[256];
	int		k, size[2];

	obj[WORKLOAD_SCHED_PODGROUP] = json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:{s:i}}, s:{s:s, s:s}}}",
	    "apiVersion", "scheduling.k8s.io/v1beta1", "kind", "PodGroup",
	    "metadata", "name", "workers", "namespace", "ns", "spec",
	    "parentCompositePodGroupName", "r0", "schedulingPolicy", "gang",
	    "minCount", 3, "workloadRef", "workloadName", "serve",
	    "templateName", "workers");
	obj[WORKLOAD_SCHED_COMPOSITE] = json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:i}}, s:{s:s, s:s},"
	    " s:{s:[{s:s}]}, s:{s:{}}}, s:{s:[{s:s, s:s, s:s, s:s}]}}",
	    "apiVersion", "scheduling.k8s.io/v1alpha3", "kind",
	    "CompositePodGroup", "metadata", "name", "r0", "namespace", "ns",
	    "spec", "schedulingPolicy", "gang", "minGroupCount", 2,
	    "workloadRef", "workloadName", "serve", "templateName", "replica",
	    "schedulingConstraints", "topology", "key", "example.com/rack",
	    "disruptionMode", "all", "status", "conditions", "type",
	    COMPOSITE_CONDITION, "status", "True", "reason", "Scheduled",
	    "lastTransitionTime", "2026-12-06T00:00:00Z");
	obj[WORKLOAD_SCHED_WORKLOAD] = json_pack(
	    "{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:[{s:s, s:{s:{s:i}},"
	    " s:{s:[]}}, {s:s, s:{s:{s:i}}}]}]}}",
	    "apiVersion", "scheduling.k8s.io/v1beta1", "kind", "Workload",
	    "metadata", "name", "serve", "namespace", "ns", "spec",
	    "compositePodGroupTemplates", "name", "replica",
	    "podGroupTemplates", "name", "leader", "schedulingPolicy", "gang",
	    "minCount", 1, "template", "containers", "name", "workers",
	    "schedulingPolicy", "gang", "minCount", 3);
	pod = json_pack("{s:{s:s, s:s}, s:{s:{s:s}}}", "metadata", "name",
	    "w-0", "namespace", "ns", "spec", "schedulingGroup", "podGroupName",
	    "workers");
	for (k = 0; k < 2; k++) {
		enum workload_kind kind;

		for (kind = 0; kind < WORKLOAD_KINDS; kind++) {
			json_decref(or_comp[kind]);
			or_comp[kind] = k == 0 ? json_incref(obj[kind]) :
						 ownerrec_dup(kind, obj[kind]);
		}
		ck_assert_int_eq(workload_group(pod, &lk, &gid, err,
				     sizeof(err)),
		    0);
		ck_assert_str_eq(gid.key, "composite:ns/r0");
		size[k] =
		    workload_composite_size(or_comp[WORKLOAD_SCHED_COMPOSITE],
			&lk, why, sizeof(why));
		ck_assert_int_eq(workload_podgroup_disrupt_all(
				     or_comp[WORKLOAD_SCHED_COMPOSITE]),
		    1);
		ck_assert_str_eq(
		    k8s_obj_str(json_array_get(
				    k8s_obj_get(or_comp
						    [WORKLOAD_SCHED_COMPOSITE],
					"status.conditions"),
				    0),
			"type"),
		    COMPOSITE_CONDITION);
	}
	ck_assert_int_eq(size[0], 4);
	ck_assert_int_eq(size[1], size[0]);
	/* The record keeps no pod template. */
	ck_assert_ptr_null(json_object_get(
	    json_array_get(
		k8s_obj_get(
		    json_array_get(k8s_obj_get(or_comp[WORKLOAD_SCHED_WORKLOAD],
				       "spec.compositePodGroupTemplates"),
			0),
		    "podGroupTemplates"),
		0),
	    "template"));
	for (k = 0; k < WORKLOAD_KINDS; k++) {
		json_decref(or_comp[k]);
		or_comp[k] = NULL;
		json_decref(obj[k]);
	}
	json_decref(pod);
}
END_TEST

START_TEST(test_ownerrec_big_job)
{
	json_t *job = or_big_job(), *rec;
	char   *full, *small;

	full = json_dumps(job, JSON_COMPACT);
	rec = ownerrec_dup(WORKLOAD_JOB, job);
	small = json_dumps(rec, JSON_COMPACT);
	ck_assert_uint_gt(strlen(full), 200 * 1000);
	/* A few hundred bytes, and what the rules read is all there. */
	ck_assert_msg(strlen(small) < 512, "record of %zu bytes: %s",
	    strlen(small), small);
	ck_assert_str_eq(k8s_obj_name(rec), "big");
	ck_assert_str_eq(k8s_obj_namespace(rec), "tenant");
	ck_assert_str_eq(k8s_obj_uid(rec), "u-big");
	ck_assert_str_eq(k8s_obj_str(rec, "spec.completionMode"), "Indexed");
	ck_assert_int_eq(json_integer_value(
			     k8s_obj_get(rec, "spec.parallelism")),
	    8);
	ck_assert_int_eq(json_integer_value(
			     k8s_obj_get(rec, "spec.activeDeadlineSeconds")),
	    600);
	ck_assert_str_eq(k8s_obj_annotation(rec, ANN_PREFIX "timelimit"), "30");
	ck_assert_ptr_null(strstr(small, "registry/trainer"));
	ck_assert_ptr_null(strstr(small, "VAR_"));
	ck_assert_ptr_null(strstr(small, "last-applied"));
	ck_assert_ptr_null(strstr(small, "not-read"));
	ck_assert_ptr_null(strstr(small, "managedFields"));
	ck_assert_ptr_null(strstr(small, "labels"));
	ck_assert_ptr_null(strstr(small, "status"));
	free(full);
	free(small);
	json_decref(rec);
	json_decref(job);
}
END_TEST

/* A record of a record is the record; NULL gives NULL. */
START_TEST(test_ownerrec_idempotent)
{
	struct or_world w;
	json_t	       *once, *twice;
	const json_t   *o;
	size_t		i;
	int		k;

	ck_assert_ptr_null(ownerrec_dup(WORKLOAD_JOB, NULL));
	or_world_init(&w, 0);
	for (k = 0; k < WORKLOAD_KINDS; k++)
		json_array_foreach (w.objs[k], i, o) {
			once = ownerrec_dup((enum workload_kind)k, o);
			twice = ownerrec_dup((enum workload_kind)k, once);
			or_same(once, twice, k8s_obj_name(o));
		}
	or_world_cleanup(&w);
}
END_TEST

Suite *
ownerrec_suite(void)
{
	Suite *s = suite_create("ownerrec");
	TCase *tc = tcase_create("ownerrec");

	tcase_add_test(tc, test_ownerrec_translate_cases);
	tcase_add_test(tc, test_ownerrec_long_values);
	tcase_add_loop_test(tc, test_ownerrec_workload, 0,
	    (int)(sizeof(or_jobsets) / sizeof(or_jobsets[0])));
	tcase_add_test(tc, test_ownerrec_big_job);
	tcase_add_test(tc, test_ownerrec_disruption_mode);
	tcase_add_test(tc, test_ownerrec_composite);
	tcase_add_test(tc, test_ownerrec_idempotent);
	suite_add_tcase(s, tc);
	return (s);
}
