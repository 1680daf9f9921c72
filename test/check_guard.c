/*
 * The guard (admission/guard.c): which tolerations tolerate the
 * managed-node taint, and the decisions of POST /guard, through
 * review_handle, over a guard that watches nothing (nodes put by hand) and
 * an owner store holding the namespaces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "k8s.h"
#include "config.h"
#include "admission.h"
#include "check_suites.h"

#define TAINT "slinky.slurm.net/managed-node"

/* A pod whose spec.tolerations is the JSON text tols (NULL: none). */
static json_t *
pod_with(const char *tols)
{
	json_t *pod = json_pack("{s:{s:s}, s:{}}", "metadata", "name", "p",
	    "spec");

	if (tols != NULL)
		json_object_set_new(json_object_get(pod, "spec"), "tolerations",
		    json_loads(tols, 0, NULL));
	return (pod);
}

static const struct {
	const char *tols;
	int	    want;
} tol_cases[] = {
	{ NULL, -1 },
	{ "[]", -1 },
	{ "\"Exists\"", -1 },
	{ "[{\"key\": \"" TAINT "\", \"operator\": \"Exists\", "
	  "\"effect\": \"NoExecute\"}]",
	    0 },
	/* Equal with the bridge's value, and with any other value. */
	{ "[{\"key\": \"a\", \"operator\": \"Exists\"}, {\"key\": \"" TAINT
	  "\", \"operator\": \"Equal\", \"value\": \"slurm-bridge\"}]",
	    1 },
	{ "[{\"key\": \"" TAINT "\", \"value\": \"other\"}]", 0 },
	/* Tolerate everything, or every NoExecute taint. */
	{ "[{\"operator\": \"Exists\"}]", 0 },
	{ "[{\"key\": \"\", \"operator\": \"Exists\", "
	  "\"effect\": \"NoExecute\"}]",
	    0 },
	/* Other effects do not tolerate a NoExecute taint. */
	{ "[{\"operator\": \"Exists\", \"effect\": \"NoSchedule\"}]", -1 },
	{ "[{\"key\": \"" TAINT "\", \"operator\": \"Exists\", "
	  "\"effect\": \"PreferNoSchedule\"}]",
	    -1 },
	{ "[{\"key\": \"node.kubernetes.io/not-ready\", \"operator\": "
	  "\"Exists\", \"effect\": \"NoExecute\", \"tolerationSeconds\": "
	  "300}, {\"key\": \"" TAINT "\", \"operator\": \"Exists\"}]",
	    1 },
	{ "[{\"key\": \"node.kubernetes.io/unreachable\", \"operator\": "
	  "\"Exists\", \"effect\": \"NoExecute\"}]",
	    -1 },
};

START_TEST(test_toleration)
{
	json_t *pod = pod_with(tol_cases[_i].tols);

	ck_assert_msg(guard_toleration(pod, "NoExecute") == tol_cases[_i].want,
	    "%s: got %d, want %d", tol_cases[_i].tols,
	    guard_toleration(pod, "NoExecute"), tol_cases[_i].want);
	json_decref(pod);
}
END_TEST

/*
 * With the default NoSchedule taint, a NoSchedule toleration of every
 * taint counts, and one of the managed key counts whatever its effect.
 */
START_TEST(test_toleration_noschedule)
{
	json_t *pod = pod_with(
	    "[{\"operator\": \"Exists\", \"effect\": \"NoSchedule\"}]");
	json_t *ne = pod_with("[{\"key\": \"" TAINT "\", \"operator\": "
			      "\"Exists\", \"effect\": \"NoExecute\"}]");

	ck_assert_int_eq(guard_toleration(pod, "NoSchedule"), 0);
	ck_assert_int_eq(guard_toleration(ne, "NoSchedule"), 0);
	json_decref(pod);
	json_decref(ne);
}
END_TEST

/* The world of the decision tests. */
static struct config	 *g_cfg;
static struct owners	 *g_owners;
static struct guard	 *g_guard;
static struct review_conf g_rc;
static const char *const  g_allowed[] = { "bridge-b", NULL };
static const char *const  g_extender[] = { "default-scheduler", NULL };

static void
guard_setup(void)
{
	json_t *o;

	g_cfg = config_new();
	g_cfg->managed_namespace_selector = json_pack("{s:{s:s}}",
	    "matchLabels", "slurm-bridge.io/managed", "true");
	g_owners = owners_new(NULL, NULL, NULL);
	o = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "ext", "labels",
	    "slurm-bridge.io/managed", "true");
	owners_put(g_owners, OWN_NAMESPACE, o);
	json_decref(o);
	o = json_pack("{s:{s:s}}", "metadata", "name", "plain");
	owners_put(g_owners, OWN_NAMESPACE, o);
	json_decref(o);
	g_guard = guard_new(NULL, g_allowed, g_extender);
	o = json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s}]}}", "metadata", "name",
	    "n1", "spec", "taints", "key", TAINT, "value", "slurm-bridge",
	    "effect", "NoExecute");
	guard_node_put(g_guard, o);
	json_decref(o);
	o = json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name",
	    "sys", "spec", "taints", "key", "node-role.kubernetes.io/system",
	    "effect", "NoSchedule");
	guard_node_put(g_guard, o);
	json_decref(o);
	memset(&g_rc, 0, sizeof(g_rc));
	g_rc.config = g_cfg;
	g_rc.owners = g_owners;
	g_rc.guard = g_guard;
}

static void
guard_teardown(void)
{
	guard_free(g_guard);
	owners_free(g_owners);
	config_free(g_cfg);
}

/*
 * Reviews pod (taken) in ns with op (old: the pod before, for UPDATE,
 * taken); returns the refusal (owned) or NULL when admitted.
 */
static char *
review(const char *op, const char *ns, json_t *pod, json_t *old)
{
	json_t	   *rev, *out = NULL, *resp;
	char	   *body, err[256];
	const char *msg;
	char	   *denied = NULL;

	rev = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:s, s:s, "
			"s:o}}",
	    "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
	    "request", "uid", "u1", "kind", "group", "", "version", "v1",
	    "kind", "Pod", "operation", op, "namespace", ns, "object", pod);
	if (old != NULL)
		json_object_set_new(json_object_get(rev, "request"),
		    "oldObject", old);
	body = json_dumps(rev, JSON_COMPACT);
	ck_assert_int_eq(review_handle(body, strlen(body), REVIEW_GUARD, &g_rc,
			     &out, err, sizeof(err)),
	    200);
	resp = json_object_get(out, "response");
	if (!json_is_true(json_object_get(resp, "allowed"))) {
		msg = k8s_obj_str(resp, "status.message");
		ck_assert_ptr_nonnull(msg);
		denied = xstrdup(msg);
	}
	ck_assert_ptr_null(json_object_get(resp, "patch"));
	json_decref(out);
	json_decref(rev);
	free(body);
	return (denied);
}

/* A pod of scheduler sched tolerating the taint (tols NULL: the usual). */
static json_t *
pod_of(const char *sched, const char *tols)
{
	json_t *pod = pod_with(tols != NULL ? tols :
					      "[{\"key\": \"" TAINT "\", "
					      "\"operator\": \"Exists\", "
					      "\"effect\": \"NoExecute\"}]");

	json_object_set_new(json_object_get(pod, "spec"), "schedulerName",
	    json_string(sched));
	return (pod);
}

static void
assert_denied(char *got, const char *want)
{
	ck_assert_msg(got != NULL, "admitted, want \"%s\"", want);
	ck_assert_msg(strcmp(got, want) == 0, "got \"%s\"\nwant \"%s\"", got,
	    want);
	free(got);
}

static void
assert_denied_with(char *got, const char *part)
{
	ck_assert_msg(got != NULL, "admitted, want \"...%s...\"", part);
	ck_assert_msg(strstr(got, part) != NULL, "got \"%s\"", got);
	free(got);
}

START_TEST(test_other_scheduler)
{
	assert_denied(review("CREATE", "plain",
			  pod_of("default-scheduler", NULL), NULL),
	    "spec.tolerations[0]: tolerates " TAINT ", which only pods "
	    "scheduled by slurm-bridge may (schedulerName: slurm-bridge or "
	    "bridge-b; this pod has default-scheduler); remove the toleration "
	    "or let slurm-bridge schedule the pod");
	ck_assert_ptr_null(
	    review("CREATE", "plain", pod_of("slurm-bridge", NULL), NULL));
	ck_assert_ptr_null(
	    review("CREATE", "plain", pod_of("bridge-b", NULL), NULL));
}
END_TEST

START_TEST(test_tolerates_everything)
{
	assert_denied(review("CREATE", "plain",
			  pod_of("default-scheduler",
			      "[{\"key\": \"a\", \"operator\": \"Exists\"}, "
			      "{\"operator\": \"Exists\"}]"),
			  NULL),
	    "spec.tolerations[1]: tolerates every taint, " TAINT " among "
	    "them, which only pods scheduled by slurm-bridge may "
	    "(schedulerName: slurm-bridge or bridge-b; this pod has "
	    "default-scheduler); tolerate only the taints the pod needs, by "
	    "key, or let slurm-bridge schedule the pod");
	assert_denied(review("CREATE", "plain",
			  pod_of("x",
			      "[{\"operator\": \"Exists\", \"effect\": "
			      "\"NoSchedule\"}]"),
			  NULL),
	    "spec.tolerations[0]: tolerates every NoSchedule taint, " TAINT
	    " among them, which only pods scheduled by slurm-bridge may "
	    "(schedulerName: slurm-bridge or bridge-b; this pod has x); "
	    "tolerate only the taints the pod needs, by key, or let "
	    "slurm-bridge schedule the pod");
	ck_assert_ptr_null(review("CREATE", "plain",
	    pod_of("x",
		"[{\"operator\": \"Exists\", \"effect\": "
		"\"NoExecute\"}]"),
	    NULL));
}
END_TEST

/* An extender's pods pass only where the bridge manages the namespace. */
START_TEST(test_extender)
{
	ck_assert_ptr_null(
	    review("CREATE", "ext", pod_of("default-scheduler", NULL), NULL));
	assert_denied(review("CREATE", "ext", pod_of("other", NULL), NULL),
	    "spec.tolerations[0]: tolerates " TAINT ", which only pods "
	    "scheduled by slurm-bridge may (schedulerName: slurm-bridge, "
	    "bridge-b or default-scheduler; this pod has other); remove the "
	    "toleration or let slurm-bridge schedule the pod");
	assert_denied_with(review("CREATE", "unknown",
			       pod_of("default-scheduler", NULL), NULL),
	    "this pod has default-scheduler");
}
END_TEST

START_TEST(test_node_name)
{
	json_t *pod;

	pod = pod_of("slurm-bridge", "[]");
	json_object_set_new(json_object_get(pod, "spec"), "nodeName",
	    json_string("n1"));
	assert_denied(review("CREATE", "plain", pod, NULL),
	    "spec.nodeName: node n1 is managed by Slurm (it has the taint " TAINT
	    "), and a pod created with spec.nodeName is placed by no "
	    "scheduler, so Slurm would not know it runs there; leave "
	    "spec.nodeName unset and set schedulerName: slurm-bridge to run "
	    "on Slurm's nodes through Slurm");
	pod = pod_of("default-scheduler", "[]");
	json_object_set_new(json_object_get(pod, "spec"), "nodeName",
	    json_string("sys"));
	ck_assert_ptr_null(review("CREATE", "plain", pod, NULL));
	/* A bound pod's later updates carry the Binding's nodeName. */
	pod = pod_of("slurm-bridge", NULL);
	json_object_set_new(json_object_get(pod, "spec"), "nodeName",
	    json_string("n1"));
	ck_assert_ptr_null(review("UPDATE", "plain", pod, json_deep_copy(pod)));
}
END_TEST

/* On UPDATE only a toleration the update adds is refused. */
START_TEST(test_update)
{
	json_t *old = pod_of("default-scheduler", "[]");

	assert_denied_with(review("UPDATE", "plain",
			       pod_of("default-scheduler", NULL), old),
	    "spec.tolerations[0]: tolerates " TAINT);
	old = pod_of("default-scheduler", NULL);
	ck_assert_ptr_null(review("UPDATE", "plain",
	    pod_of("default-scheduler",
		"[{\"key\": \"" TAINT "\", \"operator\": \"Exists\"}, "
		"{\"key\": \"b\", \"operator\": \"Exists\"}]"),
	    old));
}
END_TEST

Suite *
guard_suite(void)
{
	Suite *s = suite_create("guard");
	TCase *tc = tcase_create("toleration");

	tcase_add_loop_test(tc, test_toleration, 0,
	    (int)(sizeof(tol_cases) / sizeof(tol_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("decision");
	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	tcase_add_test(tc, test_other_scheduler);
	tcase_add_test(tc, test_tolerates_everything);
	tcase_add_test(tc, test_toleration_noschedule);
	tcase_add_test(tc, test_extender);
	tcase_add_test(tc, test_node_name);
	tcase_add_test(tc, test_update);
	suite_add_tcase(s, tc);
	return (s);
}
