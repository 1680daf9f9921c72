/*
 * The placement rule (common/fit.c) against kube-scheduler's own Filter
 * cases, carried over as data (test/data/fit/<plugin>.json, each case a
 * pod, a node, the pods already on it, and kube-scheduler's verdict with
 * its reason text; test/data/fit/README.md says where each comes from),
 * then the FailedScheduling summary and what makes a pod wait.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>

#include "k8s.h"
#include "fit.h"
#include "check_suites.h"

#define FIT_DIR TEST_DATA "/fit"

static const char *const plugins[] = { "nodeaffinity", "tainttoleration",
	"nodeports", "nodeunschedulable", "nodename", "noderesources" };
#define NPLUGINS (sizeof(plugins) / sizeof(plugins[0]))

/* kube-scheduler's nodes always pass our Ready check: the cases test the rest. */
static json_t *
fit_ready_node(const json_t *node)
{
	json_t *n = json_deep_copy(node);

	if (!json_is_object(json_object_get(n, "status")))
		json_object_set_new(n, "status", json_object());
	json_object_set_new(json_object_get(n, "status"), "conditions",
	    json_pack("[{s:s, s:s}]", "type", "Ready", "status", "True"));
	return (n);
}

/*
 * kube-scheduler's verdict on what the rule decides: CPU, memory and the
 * pod count are Slurm's (a deliberate difference, docs/users/placement.md),
 * so a case refused only for them must fit here.  Returns the reasons
 * left (an array, new), empty when the node must fit.
 */
static json_t *
fit_expected(const json_t *c)
{
	static const char *const slurms[] = { "Insufficient cpu",
		"Insufficient memory", "Too many pods" };
	json_t			*out = json_array();
	const json_t		*reasons = json_object_get(c, "reasons"), *r;
	size_t			 i, k;
	int			 slurm;

	if (json_is_true(json_object_get(c, "fits")))
		return (out);
	if (!json_is_array(reasons))
		reasons = json_pack("[O]", json_object_get(c, "reason"));
	else
		json_incref((json_t *)(uintptr_t)reasons);
	json_array_foreach (reasons, i, r) {
		slurm = 0;
		for (k = 0; k < sizeof(slurms) / sizeof(slurms[0]); k++)
			if (json_is_string(r) &&
			    strcmp(json_string_value(r), slurms[k]) == 0)
				slurm = 1;
		if (!slurm)
			json_array_append(out, (json_t *)(uintptr_t)r);
	}
	json_decref((json_t *)(uintptr_t)reasons);
	return (out);
}

static int
fit_listed(const json_t *reasons, const char *why)
{
	const json_t *r;
	size_t	      i;

	json_array_foreach (reasons, i, r) {
		if (json_is_null(r) || strcmp(json_string_value(r), why) == 0)
			return (1);
	}
	return (0);
}

START_TEST(test_plugin_cases)
{
	char	     path[512], why[256];
	json_t	    *cases, *c, *node, *existing, **others, *want;
	json_error_t jerr;
	const char  *name;
	size_t	     i, j, n;
	int	     fits;

	snprintf(path, sizeof(path), FIT_DIR "/%s.json", plugins[_i]);
	cases = json_load_file(path, 0, &jerr);
	ck_assert_msg(cases != NULL, "%s: %s", path, jerr.text);
	ck_assert_msg(json_array_size(cases) > 0, "%s: no cases", path);
	json_array_foreach (cases, i, c) {
		name = json_string_value(json_object_get(c, "name"));
		node = fit_ready_node(json_object_get(c, "node"));
		existing = json_object_get(c, "existing");
		n = json_array_size(existing);
		/* An array of pointers: sizeof a pointer is meant. */
		/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
		others = calloc(n + 1, sizeof(*others));
		for (j = 0; j < n; j++)
			others[j] = json_array_get(existing, j);
		fits = fit_node(json_object_get(c, "pod"), node, others, n, why,
			   sizeof(why)) == FIT_OK;
		want = fit_expected(c);
		ck_assert_msg(fits == (json_array_size(want) == 0),
		    "%s: %s: fits %d, kube-scheduler %d (%s)", plugins[_i],
		    name, fits, !fits, why);
		if (!fits)
			ck_assert_msg(fit_listed(want, why),
			    "%s: %s: reason \"%s\", not kube-scheduler's",
			    plugins[_i], name, why);
		json_decref(want);
		free(others);
		json_decref(node);
	}
	json_decref(cases);
}
END_TEST

static json_t *
fit_node_of(const char *name, const char *labels, const char *taints)
{
	json_t *n = json_pack("{s:{s:s, s:o}, s:{s:o}, s:{s:[{s:s, s:s}]}}",
	    "metadata", "name", name, "labels", json_loads(labels, 0, NULL),
	    "spec", "taints", json_loads(taints, 0, NULL), "status",
	    "conditions", "type", "Ready", "status", "True");

	return (n);
}

/* The summary counts and sorts as kube-scheduler's FitError does. */
START_TEST(test_tally_message)
{
	json_t *pod =
	    json_loads("{\"spec\": {\"nodeSelector\": {\"disk\": \"ssd\"}}}", 0,
		NULL);
	json_t		*nodes[4];
	struct fit_tally t;
	char		 why[256], msg[512];
	size_t		 i;

	nodes[0] = fit_node_of("n1", "{\"disk\": \"ssd\"}",
	    "[{\"key\": \"dedicated\", \"value\": \"team-a\", \"effect\": "
	    "\"NoSchedule\"}]");
	nodes[1] = fit_node_of("n2", "{}", "[]");
	nodes[2] = fit_node_of("n3", "{}", "[]");
	nodes[3] = fit_node_of("n4", "{\"disk\": \"ssd\"}", "[]");
	fit_tally_init(&t);
	for (i = 0; i < 4; i++)
		fit_tally_add(&t,
		    fit_node(pod, nodes[i], NULL, 0, why, sizeof(why)), why);
	fit_tally_message(&t, msg, sizeof(msg));
	ck_assert_str_eq(msg,
	    "1/4 nodes are available: 1 node(s) had untolerated taint(s), 2 "
	    "node(s) didn't match Pod's node affinity/selector.");
	fit_tally_cleanup(&t);
	for (i = 0; i < 4; i++)
		json_decref(nodes[i]);
	json_decref(pod);
}
END_TEST

/* Our own: a node not Ready, the managed taint, a sidecar's resource. */
START_TEST(test_deliberate)
{
	json_t *pod, *node, *other;
	char	why[256];

	node = json_loads("{\"metadata\": {\"name\": \"n1\"}, \"spec\": "
			  "{\"taints\": [{\"key\": "
			  "\"slinky.slurm.net/managed-node\", \"value\": "
			  "\"slurm-bridge\", \"effect\": \"NoSchedule\"}]}, "
			  "\"status\": {\"conditions\": [{\"type\": \"Ready\", "
			  "\"status\": \"False\"}], \"allocatable\": "
			  "{\"example.com/foo\": \"4\"}}}",
	    0, NULL);
	pod = json_loads("{\"spec\": {\"containers\": [{\"name\": \"c\"}]}}", 0,
	    NULL);
	ck_assert_int_eq(fit_node(pod, node, NULL, 0, why, sizeof(why)),
	    FIT_NOT_READY);
	json_object_set_new(json_array_get(k8s_obj_get(node,
					       "status.conditions"),
				0),
	    "status", json_string("True"));
	/* The bridge's own taint is translation's, not the rule's. */
	ck_assert_int_eq(fit_node(pod, node, NULL, 0, why, sizeof(why)),
	    FIT_OK);
	json_decref(pod);
	/* 2 in the app container and 1 in a sidecar, beside 2 in use. */
	pod = json_loads(
	    "{\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": "
	    "{\"requests\": {\"example.com/foo\": \"2\"}}}], "
	    "\"initContainers\": [{\"name\": \"s\", \"restartPolicy\": "
	    "\"Always\", \"resources\": {\"limits\": {\"example.com/foo\": "
	    "\"1\"}}}]}}",
	    0, NULL);
	other = json_loads("{\"spec\": {\"containers\": [{\"name\": \"o\", "
			   "\"resources\": {\"requests\": "
			   "{\"example.com/foo\": \"2\"}}}]}}",
	    0, NULL);
	ck_assert_int_eq(fit_node(pod, node, NULL, 0, why, sizeof(why)),
	    FIT_OK);
	ck_assert_int_eq(fit_node(pod, node, &other, 1, why, sizeof(why)),
	    FIT_RESOURCE);
	ck_assert_str_eq(why, "Insufficient example.com/foo");
	json_decref(other);
	json_decref(pod);
	/* A label past int64 is no number: Gt matches nothing (contract-diff). */
	json_object_set_new(json_object_get(node, "metadata"), "labels",
	    json_pack("{s:s}", "rank", "9223372036854775808"));
	pod = json_loads("{\"spec\": {\"affinity\": {\"nodeAffinity\": "
			 "{\"requiredDuringSchedulingIgnoredDuringExecution\": "
			 "{\"nodeSelectorTerms\": [{\"matchExpressions\": "
			 "[{\"key\": \"rank\", \"operator\": \"Gt\", "
			 "\"values\": [\"5\"]}]}]}}}}}",
	    0, NULL);
	ck_assert_int_eq(fit_node(pod, node, NULL, 0, why, sizeof(why)),
	    FIT_AFFINITY);
	json_decref(pod);
	json_decref(node);
}
END_TEST

START_TEST(test_waits)
{
	static const struct {
		const char *pod;
		const char *msg; /* a prefix; NULL: it does not wait */
	} cases[] = {
		{ "{\"spec\": {}}", NULL },
		{ "{\"spec\": {\"affinity\": {\"podAntiAffinity\": "
		  "{\"requiredDuringSchedulingIgnoredDuringExecution\": "
		  "[{\"topologyKey\": \"kubernetes.io/hostname\"}]}}}}",
		    "spec.affinity.podAntiAffinity." },
		{ "{\"spec\": {\"affinity\": {\"podAffinity\": "
		  "{\"preferredDuringSchedulingIgnoredDuringExecution\": "
		  "[{\"weight\": 1}]}}}}",
		    NULL },
		{ "{\"spec\": {\"topologySpreadConstraints\": [{\"maxSkew\": 1, "
		  "\"whenUnsatisfiable\": \"ScheduleAnyway\"}, {\"maxSkew\": 1, "
		  "\"whenUnsatisfiable\": \"DoNotSchedule\"}]}}",
		    "spec.topologySpreadConstraints[1]:" },
		{ "{\"spec\": {\"volumes\": [{\"name\": \"data\", "
		  "\"persistentVolumeClaim\": {\"claimName\": \"d\"}}]}}",
		    "spec.volumes[0] (data):" },
		{ "{\"spec\": {\"volumes\": [{\"name\": \"tmp\", \"emptyDir\": "
		  "{}}]}}",
		    NULL },
	};
	char	msg[512];
	json_t *pod;
	size_t	i;
	int	waits;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pod = json_loads(cases[i].pod, 0, NULL);
		waits = fit_pod_waits(pod, msg, sizeof(msg));
		ck_assert_msg(waits == (cases[i].msg != NULL), "case %zu: %d",
		    i, waits);
		if (waits)
			ck_assert_msg(strncmp(msg, cases[i].msg,
					  strlen(cases[i].msg)) == 0,
			    "case %zu: %s", i, msg);
		json_decref(pod);
	}
}
END_TEST

Suite *
fit_suite(void)
{
	Suite *s = suite_create("fit");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_plugin_cases, 0, (int)NPLUGINS);
	tcase_add_test(tc, test_tally_message);
	tcase_add_test(tc, test_deliberate);
	tcase_add_test(tc, test_waits);
	suite_add_tcase(s, tc);
	return (s);
}
