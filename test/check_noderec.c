/*
 * Node records (bridge/noderec.c): what the scheduler reads of a Node reads
 * the same on its record.  Each test reads a node and its record with the
 * same readers (the managed-node taint, the Slurm node name label, the
 * cordon, the Ready condition) and compares them, over a kubelet node as
 * the API sends it and over nodes that lack each part or carry a wrong
 * type there; and the kubelet node's record is a small part of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "policy.h"
#include "bridge.h"
#include "check_suites.h"

/* A Node as a kubelet on a GPU machine reports it, with IMAGES images. */
#define NR_IMAGES 40

static json_t *
nr_kubelet_node(void)
{
	json_t *node, *images, *labels;
	char	name[128];
	int	i;

	node = json_pack(
	    "{s:s, s:s,"
	    " s:{s:s, s:s, s:s, s:s, s:{s:s}, s:[{s:s, s:s}]},"
	    " s:{s:s, s:b, s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s}]},"
	    " s:{s:[{s:s, s:s}, {s:s, s:s}], s:{s:s, s:s, s:s},"
	    "    s:{s:s, s:s}, s:{s:{s:i}},"
	    "    s:[{s:s, s:s, s:s, s:s, s:s, s:s},"
	    "       {s:s, s:s, s:s, s:s, s:s, s:s},"
	    "       {s:s, s:s, s:s, s:s, s:s, s:s}],"
	    "    s:{s:s, s:s, s:s, s:s, s:s}}}",
	    "apiVersion", "v1", "kind", "Node", "metadata", "name", "gpu-17",
	    "uid", "5c1f", "resourceVersion", "8812", "creationTimestamp",
	    "2026-11-01T00:00:00Z", "annotations",
	    "kubectl.kubernetes.io/last-applied-configuration",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{}}",
	    "managedFields", "manager", "kubelet", "operation", "Update",
	    "spec", "podCIDR", "10.0.17.0/24", "unschedulable", 1, "taints",
	    "key", MANAGED_TAINT_KEY, "value", MANAGED_TAINT_VALUE, "effect",
	    "NoExecute", "timeAdded", "2026-11-02T00:00:00Z", "key",
	    "nvidia.com/gpu", "value", "present", "effect", "NoSchedule",
	    "status", "addresses", "type", "InternalIP", "address", "10.1.0.17",
	    "type", "Hostname", "address", "gpu-17", "capacity", "cpu", "96",
	    "memory", "1Ti", "nvidia.com/gpu", "8", "allocatable", "cpu", "95",
	    "memory", "1000Gi", "daemonEndpoints", "kubeletEndpoint", "Port",
	    10250, "conditions", "type", "MemoryPressure", "status", "False",
	    "lastHeartbeatTime", "2026-11-27T10:00:00Z", "lastTransitionTime",
	    "2026-11-01T00:00:00Z", "reason", "KubeletHasSufficientMemory",
	    "message", "kubelet has sufficient memory", "type", "Ready",
	    "status", "False", "lastHeartbeatTime", "2026-11-27T10:00:00Z",
	    "lastTransitionTime", "2026-11-27T09:58:00Z", "reason",
	    "KubeletNotReady", "message", "container runtime is down", "type",
	    "PIDPressure", "status", "False", "lastHeartbeatTime",
	    "2026-11-27T10:00:00Z", "lastTransitionTime",
	    "2026-11-01T00:00:00Z", "reason", "KubeletHasSufficientPID",
	    "message", "kubelet has sufficient PID", "nodeInfo",
	    "kubeletVersion", "v1.37.0", "osImage", "Debian GNU/Linux 12",
	    "kernelVersion", "6.1.0", "containerRuntimeVersion",
	    "containerd://1.7.0", "machineID", "0123456789abcdef");
	ck_assert_ptr_nonnull(node);
	labels = json_object();
	json_object_set_new(labels, LABEL_SLURM_NODENAME, json_string("n17"));
	for (i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "nvidia.com/gpu.feature-%d", i);
		json_object_set_new(labels, name, json_string("true"));
	}
	json_object_set_new(json_object_get(node, "metadata"), "labels",
	    labels);
	images = json_array();
	for (i = 0; i < NR_IMAGES; i++) {
		snprintf(name, sizeof(name),
		    "nvcr.io/nvidia/pytorch:24.%02d-py3@sha256:"
		    "%064d",
		    i % 12, i);
		json_array_append_new(images,
		    json_pack("{s:[s, s], s:I}", "names", name,
			"nvcr.io/nvidia/pytorch:latest", "sizeBytes",
			(json_int_t)9876543210));
	}
	json_object_set_new(json_object_get(node, "status"), "images", images);
	return (node);
}

/* The Ready condition's member key, as the scheduler reads it. */
static const char *
nr_ready(const json_t *node, const char *key)
{
	return (
	    json_string_value(json_object_get(noderec_ready_cond(node), key)));
}

static int
nr_same_str(const char *a, const char *b)
{
	return (a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0);
}

/* Every reader of a node answers the same on node and on its record. */
static void
nr_same(const json_t *node, const char *what)
{
	json_t *rec = noderec_dup(node);

	ck_assert_ptr_nonnull(rec);
	ck_assert_msg(translate_node_managed(node) ==
		translate_node_managed(rec),
	    "%s: managed", what);
	ck_assert_msg(nr_same_str(k8s_obj_name(node), k8s_obj_name(rec)),
	    "%s: name", what);
	ck_assert_msg(nr_same_str(k8s_obj_label(node, LABEL_SLURM_NODENAME),
			  k8s_obj_label(rec, LABEL_SLURM_NODENAME)),
	    "%s: slurm-nodename label", what);
	ck_assert_msg(noderec_cordoned(node) == noderec_cordoned(rec),
	    "%s: unschedulable", what);
	ck_assert_msg(nr_same_str(nr_ready(node, "status"),
			  nr_ready(rec, "status")),
	    "%s: Ready status", what);
	ck_assert_msg(nr_same_str(nr_ready(node, "lastTransitionTime"),
			  nr_ready(rec, "lastTransitionTime")),
	    "%s: Ready lastTransitionTime", what);
	ck_assert_msg(nr_same_str(nr_ready(node, "type"),
			  nr_ready(rec, "type")),
	    "%s: Ready found", what);
	json_decref(rec);
}

START_TEST(kubelet_node)
{
	json_t *node = nr_kubelet_node(), *rec;
	char   *full, *small;

	nr_same(node, "kubelet node");
	rec = noderec_dup(node);
	ck_assert_str_eq(k8s_obj_label(rec, LABEL_SLURM_NODENAME), "n17");
	ck_assert_int_eq(translate_node_managed(rec), 1);
	ck_assert_str_eq(nr_ready(rec, "status"), "False");
	/* Nothing the scheduler does not read. */
	ck_assert_ptr_null(k8s_obj_get(rec, "status.images"));
	ck_assert_ptr_null(k8s_obj_get(rec, "status.nodeInfo"));
	ck_assert_ptr_null(k8s_obj_get(rec, "metadata.annotations"));
	ck_assert_ptr_null(k8s_obj_get(rec, "metadata.managedFields"));
	json_decref(rec);
	/* Of the annotations, which install claims the taint, alone. */
	json_object_set_new(json_object_get(k8s_obj_get(node, "metadata"),
				"annotations"),
	    ANN_TAINTED_BY, json_string("site-a"));
	rec = noderec_dup(node);
	ck_assert_str_eq(k8s_obj_annotation(rec, ANN_TAINTED_BY), "site-a");
	ck_assert_int_eq(json_object_size(
			     k8s_obj_get(rec, "metadata.annotations")),
	    1);
	/* Every label: a pod's selector or affinity may name any. */
	ck_assert_int_eq(json_object_size(k8s_obj_get(rec, "metadata.labels")),
	    json_object_size(k8s_obj_get(node, "metadata.labels")));
	ck_assert_int_eq(json_array_size(k8s_obj_get(rec, "status.conditions")),
	    1);
	ck_assert_ptr_null(
	    json_object_get(json_array_get(k8s_obj_get(rec, "spec.taints"), 0),
		"timeAdded"));
	full = json_dumps(node, JSON_COMPACT);
	small = json_dumps(rec, JSON_COMPACT);
	ck_assert_msg(strlen(full) > 8000 && strlen(small) < 3000,
	    "node %zu bytes, record %zu: %s", strlen(full), strlen(small),
	    small);
	free(full);
	free(small);
	json_decref(rec);
	json_decref(node);
}
END_TEST

/* The kubelet node with one part taken away or of the wrong type. */
START_TEST(every_part)
{
	static const char *const paths[][2] = {
		{ "metadata", "labels" },
		{ "metadata", "name" },
		{ "spec", "taints" },
		{ "spec", "unschedulable" },
		{ "status", "conditions" },
		{ NULL, "metadata" },
		{ NULL, "spec" },
		{ NULL, "status" },
	};
	json_t *const wrong[] = { json_string("x"), json_integer(3),
		json_array(), json_object(), json_null(), json_true() };
	size_t	      i, k;
	char	      what[160];

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		for (k = 0; k <= sizeof(wrong) / sizeof(wrong[0]); k++) {
			json_t *node = nr_kubelet_node();
			json_t *in = paths[i][0] != NULL ?
			    json_object_get(node, paths[i][0]) :
			    node;

			if (k == 0)
				json_object_del(in, paths[i][1]);
			else
				json_object_set(in, paths[i][1], wrong[k - 1]);
			snprintf(what, sizeof(what), "%s.%s, case %zu",
			    paths[i][0] != NULL ? paths[i][0] : "", paths[i][1],
			    k);
			nr_same(node, what);
			json_decref(node);
		}
	}
	for (k = 0; k < sizeof(wrong) / sizeof(wrong[0]); k++)
		json_decref(wrong[k]);
}
END_TEST

/* Ready first, last, twice, absent; taints that are not objects. */
START_TEST(conditions_and_taints)
{
	static const char *const nodes[] = {
		"{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":"
		"[{\"type\":\"Ready\",\"status\":\"True\"},"
		"{\"type\":\"Ready\",\"status\":\"False\"}]}}",
		"{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":"
		"[{\"type\":\"DiskPressure\",\"status\":\"True\"}]}}",
		"{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":"
		"[7, {\"status\":\"True\"}, {\"type\":\"Ready\"}]}}",
		"{\"metadata\":{\"name\":\"a\"},\"spec\":{\"taints\":"
		"[\"" MANAGED_TAINT_KEY "\", {\"key\":7},"
		"{\"key\":\"" MANAGED_TAINT_KEY "\"}]}}",
		"{\"metadata\":{\"name\":\"a\",\"labels\":{\"" LABEL_SLURM_NODENAME
		"\":7}}}",
		"[]",
		"{}",
	};
	json_t *node;
	size_t	i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		node = json_loads(nodes[i], 0, NULL);
		ck_assert_ptr_nonnull(node);
		nr_same(node, nodes[i]);
		json_decref(node);
	}
}
END_TEST

Suite *
noderec_suite(void)
{
	Suite *s = suite_create("noderec");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, kubelet_node);
	tcase_add_test(tc, every_part);
	tcase_add_test(tc, conditions_and_taints);
	suite_add_tcase(s, tc);
	return (s);
}
