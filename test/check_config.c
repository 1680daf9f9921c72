/*
 * The configuration file (common/config.c): defaults, a full file, and each
 * kind of mistake reported with file, line, key and the expected form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "k8s.h"
#include "config.h"
#include "check_suites.h"
#include "check_util.h"

/* Loads text from a temporary file; returns config_load's result. */
static int
load_text(const char *text, struct config **out, char *err, size_t errlen)
{
	char path[] = "/tmp/check-settings-XXXXXX";
	int  rc;

	check_tmpfile(path, text, strlen(text), 0600);
	*out = config_new();
	rc = config_load(*out, path, err, errlen);
	unlink(path);
	/* Error messages start with the file: make them comparable. */
	if (rc == -1 && strncmp(err, path, strlen(path)) == 0) {
		memmove(err + 4, err + strlen(path),
		    strlen(err + strlen(path)) + 1);
		memcpy(err, "FILE", 4);
	}
	return (rc);
}

START_TEST(test_settings_defaults)
{
	struct config *c = config_new();

	ck_assert_str_eq(c->scheduler_name, "slurm-bridge");
	ck_assert_str_eq(c->partition, "slurm-bridge");
	ck_assert_int_eq(c->exclusive, 0);
	ck_assert_int_eq(c->poll_ms, 100);
	ck_assert_int_eq(c->preferred_wait_minutes, 5);
	ck_assert_ptr_null(c->managed_namespaces[0]);
	ck_assert_str_eq(c->taint_effect, "NoSchedule");
	ck_assert_int_eq(c->end_grace_max_s, 30);
	ck_assert_int_eq(c->unhealthy_nodes_pct, 55);
	config_free(c);
}
END_TEST

START_TEST(test_settings_full)
{
	struct config *c;
	char	       err[512] = "";

	ck_assert_msg(
	    load_text("# every key\n"
		      "schedulerName: my-bridge\n"
		      "partition: gpu\n"
		      "managedNamespaces: [a, b]\n"
		      "managedNamespaceSelector:\n"
		      "  matchLabels: {team: ml}\n"
		      "mcsLabel: ml\n"
		      "exclusive: true\n"
		      "defaultAccount: research\n"
		      "slurmPollInterval: 2s\n"
		      "gresTypes:\n"
		      "- nodeSelector: {nvidia.com/gpu.product: A100}\n"
		      "  type: a100\n"
		      "topology:\n"
		      "- {nodeLabel: example.com/leaf, slurm: switch}\n"
		      "- {nodeLabel: kubernetes.io/hostname, slurm: node}\n"
		      "- {nodeLabel: example.com/nvl, slurm: block, "
		      "slurmTopology: nvl}\n"
		      "gangGpuSwitchThreshold: 16\n"
		      "preferredTopologyWaitMinutes: 10\n",
		&c, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_str_eq(c->scheduler_name, "my-bridge");
	ck_assert_str_eq(c->partition, "gpu");
	ck_assert_str_eq(c->managed_namespaces[1], "b");
	ck_assert_ptr_null(c->managed_namespaces[2]);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_object_get(c->managed_namespace_selector,
				 "matchLabels"),
			     "team")),
	    "ml");
	ck_assert_str_eq(c->mcs_label, "ml");
	ck_assert_int_eq(c->exclusive, 1);
	ck_assert_str_eq(c->default_account, "research");
	ck_assert_int_eq(c->poll_ms, 2000);
	ck_assert_int_eq(c->ngres_types, 1);
	ck_assert_str_eq(c->gres_types[0].type, "a100");
	ck_assert_int_eq(c->ntopology, 3);
	ck_assert_int_eq(config_topo_find(c, "kubernetes.io/hostname")->kind,
	    TOPO_NODE);
	ck_assert_ptr_null(config_topo_find(c, "example.com/leaf")->slurm_name);
	ck_assert_str_eq(config_topo_find(c, "example.com/nvl")->slurm_name,
	    "nvl");
	ck_assert_ptr_null(config_topo_find(c, "rack"));
	ck_assert_int_eq(c->gang_gpu_switch_threshold, 16);
	ck_assert_int_eq(c->preferred_wait_minutes, 10);
	config_free(c);
}
END_TEST

START_TEST(test_settings_empty)
{
	struct config *c;
	char	       err[512] = "";

	ck_assert_int_eq(load_text("# nothing set\n", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->partition, "slurm-bridge");
	ck_assert_ptr_nonnull(c->path);
	config_free(c);
	ck_assert_int_eq(load_text("", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(c->partition, "slurm-bridge");
	config_free(c);
}
END_TEST

/* Each mistake, and the message it must give. */
static const struct {
	const char *text;
	const char *err;
} bad[] = {
	{ "partition: gpu\nparttion: x\n",
	    "FILE:2: parttion: unknown key (known: schedulerName," },
	{ "exclusive: yes\n", "FILE:1: exclusive: expected true or false" },
	{ "managedTaintEffect: PreferNoSchedule\n",
	    "FILE:1: managedTaintEffect: expected NoSchedule (the default) or "
	    "NoExecute" },
	{ "exclusive: \"true\"\n",
	    "FILE:1: exclusive: expected true or false" },
	{ "slurmPollInterval: fast\n",
	    "FILE:1: slurmPollInterval: expected a duration from 10ms to 60s" },
	{ "slurmPollInterval: 5ms\n",
	    "FILE:1: slurmPollInterval: expected a duration from 10ms to 60s" },
	{ "gangGpuSwitchThreshold: -1\n",
	    "FILE:1: gangGpuSwitchThreshold: expected a whole number from 0 to" },
	{ "unhealthyNodesThreshold: 0.55\n",
	    "FILE:1: unhealthyNodesThreshold: expected a whole number from 1 "
	    "to 101" },
	{ "maxEndGraceSeconds: 0\n",
	    "FILE:1: maxEndGraceSeconds: expected a whole number from 1 to "
	    "3600" },
	{ "partition: [a]\n", "FILE:1: partition: expected a string" },
	{ "managedNamespaces: a\n",
	    "FILE:1: managedNamespaces: expected a list of strings" },
	{ "partition: a\npartition: b\n", "FILE:2: partition: given twice" },
	{ "gresTypes:\n- type: a100\n",
	    "FILE:2: gresTypes: each entry needs both nodeSelector and type" },
	{ "gresTypes:\n- nodeSelector: {a: b}\n  type: \"a 100\"\n",
	    "FILE:3: gresTypes.type: \"a 100\" is not a Slurm GRES type" },
	{ "topology:\n- nodeLabel: x\n  slurm: rack\n",
	    "FILE:3: topology.slurm: \"rack\" is not switch (one leaf switch), "
	    "block (one block), node (one node) or none (the label alone)" },
	{ "topology:\n- {nodeLabel: x, slurm: block}\n- {nodeLabel: x, slurm: "
	  "none}\n",
	    "FILE:3: topology: node label x is listed twice" },
	{ "topology:\n- nodeLabel: x\n  level: switch\n",
	    "FILE:3: topology: unknown key level (expected nodeLabel, slurm "
	    "or slurmTopology)" },
	{ "managedNamespaceSelector: {matchLabel: {a: b}}\n",
	    "FILE:1: managedNamespaceSelector: unknown key matchLabel" },
	{ "managedNamespaceSelector:\n  matchExpressions:\n  - {key: a, "
	  "operator: In}\n",
	    "FILE:2: managedNamespaceSelector: a "
	    "matchExpressions entry needs key and operator" },
	{ "- a\n- b\n", "FILE:1: expected a mapping of settings" },
	{ "a: [\n", "FILE:2: not YAML:" },
	{ "a: &x 1\nb: *x\n",
	    "FILE:2: anchors, aliases and tags are not "
	    "supported" },
	{ "a: 1\n---\nb: 2\n", "FILE:3: only one YAML document is allowed" },
	/* The second document is refused before it is read. */
	{ "a: 1\n---\nb: [\n", "FILE:3: only one YAML document is allowed" },
	{ "*x\n", "FILE:1: anchors, aliases and tags are not supported" },
	{ "[a]: b\n", "FILE:1: a key must be a plain string" },
	{ "? {a: b}\n: c\n", "FILE:1: a key must be a plain string" },
	{ "---\n", "FILE:2: expected a mapping of settings" },
	/* 16 levels below the top are read, 17 refused; keys count. */
	{ "a: [[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]\n",
	    "FILE:1: nested deeper than 16 levels" },
	{ "a: [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]\n", "FILE:1: a: unknown key" },
	{ "a:\n b:\n  c:\n   d:\n    e:\n     f:\n      g:\n       h:\n"
	  "        i:\n         j:\n          k:\n           l:\n"
	  "            m:\n             n:\n              o:\n"
	  "               p:\n                q:\n                 v\n",
	    "FILE:17: nested deeper than 16 levels" },
};

START_TEST(test_settings_bad)
{
	struct config *c;
	char	       err[512];

	err[0] = '\0';
	ck_assert_int_eq(load_text(bad[_i].text, &c, err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, bad[_i].err, strlen(bad[_i].err)) == 0,
	    "case %d: got \"%s\", want \"%s...\"", _i, err, bad[_i].err);
	config_free(c);
}
END_TEST

START_TEST(test_settings_missing_file)
{
	struct config *c = config_new();
	char	       err[512];

	ck_assert_int_eq(config_load(c, "/nonexistent/config.yaml", err,
			     sizeof(err)),
	    -1);
	ck_assert_str_eq(err,
	    "/nonexistent/config.yaml: No such file or "
	    "directory");
	config_free(c);
}
END_TEST

/* managedNamespaceSelector matching (k8s_selector_matches). */
START_TEST(test_settings_selector)
{
	json_t *labels = json_pack("{s:s, s:s}", "team", "ml", "tier", "gpu");
	json_t *sel;

	sel = json_loads("{\"matchLabels\":{\"team\":\"ml\"}}", 0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 1);
	json_decref(sel);
	sel = json_loads("{\"matchLabels\":{\"team\":\"web\"}}", 0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 0);
	json_decref(sel);
	sel = json_loads(
	    "{\"matchExpressions\":[{\"key\":\"tier\","
	    "\"operator\":\"In\",\"values\":[\"cpu\",\"gpu\"]},{\"key\":"
	    "\"x\",\"operator\":\"DoesNotExist\"}]}",
	    0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 1);
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"tier\","
			 "\"operator\":\"NotIn\",\"values\":[\"gpu\"]}]}",
	    0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 0);
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"team\","
			 "\"operator\":\"Exists\"}]}",
	    0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, NULL), 0);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 1);
	json_decref(sel);
	/* Malformed: an operator Kubernetes does not know, In with no values. */
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"team\","
			 "\"operator\":\"Like\",\"values\":[\"m\"]}]}",
	    0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), -1);
	json_decref(sel);
	sel = json_loads("{\"matchExpressions\":[{\"key\":\"team\","
			 "\"operator\":\"In\"}]}",
	    0, NULL);
	ck_assert_int_eq(k8s_selector_matches(sel, labels), -1);
	json_decref(sel);
	sel = json_object();
	ck_assert_int_eq(k8s_selector_matches(sel, labels), 1);
	json_decref(sel);
	json_decref(labels);
}
END_TEST

Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config file");

	tcase_add_test(tc, test_settings_defaults);
	tcase_add_test(tc, test_settings_full);
	tcase_add_test(tc, test_settings_empty);
	tcase_add_loop_test(tc, test_settings_bad, 0,
	    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_settings_missing_file);
	tcase_add_test(tc, test_settings_selector);
	suite_add_tcase(s, tc);
	return (s);
}
