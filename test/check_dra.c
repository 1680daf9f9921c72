/*
 * Dynamic Resource Allocation as GRES (common/dra.c): which requests a
 * GRES expresses, what is refused and how it is named, the allocation
 * built from Slurm's indices, and the config's deviceClasses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "config.h"
#include "k8s.h"
#include "dra.h"
#include "check_suites.h"

/* A lookup over one object per kind: the claim and the template. */
static json_t *lk_claim, *lk_template;

static json_t *
lk_fn(void *arg, enum dra_kind kind, const char *ns, const char *name)
{
	json_t *o = kind == DRA_CLAIM ? lk_claim : lk_template;

	(void)arg;
	if (o == NULL || strcmp(ns, "team") != 0 ||
	    strcmp(json_string_value(
		       json_object_get(json_object_get(o, "metadata"), "name")),
		name) != 0)
		return (NULL);
	return (json_incref(o));
}

/* The scheduler's word on a claim (lk_busy_why: busy, and why). */
static const char *lk_busy_why;

static int
lk_busy(void *arg, const json_t *claim, char *why, size_t len)
{
	(void)arg;
	(void)claim;
	if (lk_busy_why == NULL)
		return (0);
	snprintf(why, len, "%s", lk_busy_why);
	return (1);
}

static const struct dra_lookup lk = { lk_fn, lk_busy, NULL, NULL };
/* The Slurm node a shared claim holds the pod to. */
static char *join_node;
/* The GRES of the pod's PodGroup's claims: none here. */
static char *group_gres;

/* A claim spec of one request: REQ is the body of exactly. */
static json_t *
spec_of(const char *exactly)
{
	char	     buf[1024];
	json_error_t e;
	json_t	    *j;

	snprintf(buf, sizeof(buf),
	    "{\"devices\": {\"requests\": [{\"name\": \"gpus\", "
	    "\"exactly\": %s}]}}",
	    exactly);
	j = json_loads(buf, 0, &e);
	ck_assert_msg(j != NULL, "%s: %s", buf, e.text);
	return (j);
}

static json_t *
pod_with(const char *spec_json)
{
	json_t *p = json_loads(spec_json, 0, NULL);

	ck_assert_ptr_nonnull(p);
	return (p);
}

static void
set_template(const char *exactly)
{
	json_decref(lk_template);
	lk_template = json_pack("{s:{s:s, s:s}, s:{s:o}}", "metadata", "name",
	    "two", "namespace", "team", "spec", "spec", spec_of(exactly));
	/* The claim kube-controller-manager makes of it. */
	json_decref(lk_claim);
	lk_claim = json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name",
	    "p-gpu-x1", "namespace", "team", "spec", spec_of(exactly));
}

static const char *claim_pod =
    "{\"metadata\": {\"name\": \"p\", \"namespace\": \"team\", \"uid\": "
    "\"u-p\"}, \"spec\": {\"resourceClaims\": [{\"name\": \"gpu\", "
    "\"resourceClaimTemplateName\": \"two\"}], \"containers\": [{\"name\": "
    "\"c\"}]}, \"status\": {\"resourceClaimStatuses\": [{\"name\": "
    "\"gpu\", \"resourceClaimName\": \"p-gpu-x1\"}]}}";

/* The pod's GRES with the template's request exactly; rc and message. */
static int
gres_of(const char *exactly, char **gres, char *err, size_t len)
{
	struct dra_classes c;
	json_t		  *pod = pod_with(claim_pod);
	int		   rc;

	dra_classes_defaults(&c);
	set_template(exactly);
	rc = dra_pod_gres(pod, &c, &lk, gres, &group_gres, &join_node, err,
	    len);
	dra_classes_cleanup(&c);
	json_decref(pod);
	return (rc);
}

START_TEST(test_dra_template_count)
{
	char *gres = NULL, err[512] = "";

	ck_assert_int_eq(gres_of("{\"deviceClassName\": \"gpu.example.com\", "
				 "\"count\": 2}",
			     &gres, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:2");
	free(gres);
	/* No count: one device (ExactCount's default). */
	ck_assert_int_eq(gres_of("{\"deviceClassName\": \"gpu.nvidia.com\", "
				 "\"allocationMode\": \"ExactCount\"}",
			     &gres, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:1");
	free(gres);
}
END_TEST

/* Every request a GRES cannot express, refused with what is supported. */
static const struct {
	const char *exactly;
	const char *want;
} refusals[] = {
	{ "{\"deviceClassName\": \"gpu.example.com\", \"allocationMode\": "
	  "\"All\"}",
	    "request \"gpus\": allocationMode All is not supported: Slurm "
	    "allocates a count of GRES; use allocationMode ExactCount" },
	{ "{\"deviceClassName\": \"gpu.example.com\", \"selectors\": "
	  "[{\"cel\": {\"expression\": \"true\"}}]}",
	    "request \"gpus\": selectors are not supported" },
	{ "{\"deviceClassName\": \"gpu.example.com\", \"adminAccess\": true}",
	    "request \"gpus\": adminAccess is not supported" },
	{ "{\"deviceClassName\": \"gpu.example.com\", \"capacity\": "
	  "{\"requests\": {\"memory\": \"1Gi\"}}}",
	    "capacity (sharing a device) is not supported" },
	{ "{\"deviceClassName\": \"fpga.example.com\"}",
	    "request \"gpus\": DeviceClass fpga.example.com is not mapped to a "
	    "Slurm GRES (mapped: gpu.nvidia.com, gpu.example.com); a site "
	    "admin maps it in the config's deviceClasses" },
	{ "{\"deviceClassName\": \"gpu.example.com\", \"count\": 65}",
	    "count must be a whole number from 1 to 64" },
	{ "{\"deviceClassName\": \"gpu.example.com\", \"count\": 0}",
	    "count must be a whole number from 1 to 64" },
};

START_TEST(test_dra_refusals)
{
	char *gres = NULL, err[512] = "";

	ck_assert_int_eq(gres_of(refusals[_i].exactly, &gres, err, sizeof(err)),
	    -1);
	ck_assert_ptr_null(gres);
	ck_assert_msg(strstr(err,
			  "spec.resourceClaims[0] (\"gpu\", "
			  "from ResourceClaimTemplate two): ") == err,
	    "the claim is named first: %s", err);
	ck_assert_msg(strstr(err, refusals[_i].want) != NULL,
	    "want \"%s\" in \"%s\"", refusals[_i].want, err);
}
END_TEST

START_TEST(test_dra_shapes_refused)
{
	struct dra_classes c;
	json_t		  *pod = pod_with(claim_pod);
	char		  *gres = NULL, err[512];

	dra_classes_defaults(&c);
	/* Constraints. */
	json_decref(lk_template);
	lk_template = json_loads(
	    "{\"metadata\": {\"name\": \"two\"}, \"spec\": {\"spec\": "
	    "{\"devices\": {\"requests\": [{\"name\": \"r\", \"exactly\": "
	    "{\"deviceClassName\": \"gpu.example.com\", \"count\": 2}}], "
	    "\"constraints\": [{\"matchAttribute\": \"x/numa\"}]}}}}",
	    0, NULL);
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "spec.devices.constraints"));
	/* A template that is not there yet: waiting, not refused. */
	json_decref(lk_template);
	lk_template = NULL;
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_str_eq(err,
	    "spec.resourceClaims[0] (\"gpu\", from ResourceClaimTemplate two): "
	    "waiting for it to exist");
	/* No lookup (the webhook): claims are the scheduler's to judge. */
	ck_assert_int_eq(dra_pod_gres(pod, &c, NULL, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    0);
	ck_assert_ptr_null(gres);
	json_decref(pod);
	dra_classes_cleanup(&c);
}
END_TEST

/* The claim the pod uses: made yet, free, or held by another pod. */
START_TEST(test_dra_claim_states)
{
	struct dra_classes c;
	json_t		  *pod = pod_with(claim_pod), *st;
	char		  *gres = NULL, err[512];

	dra_classes_defaults(&c);
	set_template(
	    "{\"deviceClassName\": \"gpu.example.com\", \"count\": 2}");
	/* kube-controller-manager has not made it yet. */
	st = json_object_get(pod, "status");
	json_object_del(st, "resourceClaimStatuses");
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err,
	    "waiting for kube-controller-manager "
	    "to make its ResourceClaim"));
	json_decref(pod);
	pod = pod_with(claim_pod);
	/* Allocated for another pod by another scheduler: this one waits. */
	json_object_set_new(lk_claim, "status",
	    json_pack("{s:{}, s:[{s:s, s:s, s:s}]}", "allocation",
		"reservedFor", "resource", "pods", "name", "q", "uid", "u-q"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_str_eq(err,
	    "spec.resourceClaims[0] (\"gpu\", from ResourceClaimTemplate two): "
	    "allocated for pod q by another scheduler, on a node Slurm does "
	    "not hold for it; this pod waits until the claim is free");
	ck_assert_ptr_null(join_node);
	/* A template's claim is one pod's: never shared, even if held. */
	json_object_set_new(json_object_get(lk_claim, "metadata"),
	    "annotations",
	    json_pack("{s:s, s:s}", "scheduler.slinky.slurm.net/slurm-jobid",
		"12", "slinky.slurm.net/slurm-node", "n3"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err, "is reserved for another pod"));
	/* The scheduler says wait (its holder is ending, say). */
	lk_busy_why = "Slurm job 12, which holds its devices, is ending";
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_str_eq(err,
	    "spec.resourceClaims[0] (\"gpu\", from ResourceClaimTemplate two): "
	    "Slurm job 12, which holds its devices, is ending");
	lk_busy_why = NULL;
	/* Allocated for this pod (a retry, a restart): its own. */
	json_object_set_new(lk_claim, "status",
	    json_pack("{s:{}, s:[{s:s, s:s, s:s}]}", "allocation",
		"reservedFor", "resource", "pods", "name", "p", "uid", "u-p"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:2");
	free(gres);
	json_decref(pod);
	dra_classes_cleanup(&c);
}
END_TEST

/*
 * A named claim allocated for pods of another job of this install is
 * shared: the pod joins it on its holder's node, and asks no GRES for it.
 */
START_TEST(test_dra_claim_shared)
{
	struct dra_classes c;
	json_t		  *pod, *claim2;
	char		  *gres = NULL, err[512];

	dra_classes_defaults(&c);
	pod = pod_with("{\"metadata\": {\"name\": \"p\", \"namespace\": "
		       "\"team\", \"uid\": \"u-p\"}, \"spec\": "
		       "{\"resourceClaims\": [{\"name\": \"gpu\", "
		       "\"resourceClaimName\": \"shared\"}], \"containers\": "
		       "[{\"name\": \"c\", \"resources\": {\"limits\": "
		       "{\"deviceclass.resource.kubernetes.io/"
		       "gpu.example.com\": \"1\"}}}]}}");
	json_decref(lk_claim);
	lk_claim = json_pack("{s:{s:s, s:s, s:{s:s, s:s}}, s:o, s:{s:{}, "
			     "s:[{s:s, s:s, s:s}]}}",
	    "metadata", "name", "shared", "namespace", "team", "annotations",
	    "scheduler.slinky.slurm.net/slurm-jobid", "12",
	    "slinky.slurm.net/slurm-node", "n3", "spec",
	    spec_of("{\"deviceClassName\": \"gpu.example.com\", \"count\": 2}"),
	    "status", "allocation", "reservedFor", "resource", "pods", "name",
	    "q", "uid", "u-q");
	/* Joins on n3; only its own extended resource is GRES. */
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:1");
	ck_assert_str_eq(join_node, "n3");
	free(gres);
	free(join_node);
	join_node = NULL;
	/* Its pods gone, kube-controller-manager releasing it: wait. */
	json_object_set_new(json_object_get(lk_claim, "status"), "reservedFor",
	    json_array());
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err,
	    "kube-controller-manager is "
	    "releasing its devices"));
	ck_assert_ptr_null(join_node);
	ck_assert_ptr_null(gres);
	/* A bad holder annotation is no holder: another scheduler's. */
	json_object_set_new(json_object_get(lk_claim, "status"), "reservedFor",
	    json_pack("[{s:s, s:s, s:s}]", "resource", "pods", "name", "q",
		"uid", "u-q"));
	claim2 = k8s_obj_get(lk_claim, "metadata.annotations");
	json_object_set_new(claim2, "scheduler.slinky.slurm.net/slurm-jobid",
	    json_string("12x"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err, "by another scheduler"));
	/* An extended resource's claim is its pod's alone. */
	json_object_set_new(claim2, "scheduler.slinky.slurm.net/slurm-jobid",
	    json_string("12"));
	json_object_set_new(claim2,
	    "resource.kubernetes.io/extended-resource-claim",
	    json_string("true"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err,
	    "made for the extended resources of "
	    "pod q, it cannot be shared"));
	json_object_del(claim2,
	    "resource.kubernetes.io/extended-resource-claim");
	/* Reserved for this pod by a job that is over: say how to get out. */
	json_array_append_new(k8s_obj_get(lk_claim, "status.reservedFor"),
	    json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", "p", "uid",
		"u-p"));
	lk_busy_why = "Slurm job 12, which holds its devices, is ending";
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err,
	    "reserved for this pod with the "
	    "devices of a Slurm job that is over"));
	ck_assert_ptr_nonnull(strstr(err, "delete the pod"));
	lk_busy_why = NULL;
	/* A request no GRES expresses is refused, whoever holds the claim. */
	json_object_set_new(lk_claim, "spec",
	    spec_of("{\"deviceClassName\": \"gpu.example.com\", "
		    "\"allocationMode\": \"All\"}"));
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err,
	    "allocationMode All is not "
	    "supported"));
	json_decref(pod);
	dra_classes_cleanup(&c);
}
END_TEST

/* Two pods of a gang naming one claim: refused, naming both. */
START_TEST(test_dra_gang_shared)
{
	json_t *pods[3];
	char	err[512];
	int	i;

	for (i = 0; i < 3; i++)
		pods[i] = json_pack("{s:{s:s+}, s:{s:[{s:s, s:s}]}}",
		    "metadata", "name", "w",
		    i == 0     ? "0" :
			i == 1 ? "1" :
				 "2",
		    "spec", "resourceClaims", "name", "gpu",
		    "resourceClaimName",
		    i == 2 ? "shared" : (i == 0 ? "own-0" : "shared"));
	ck_assert_int_eq(dra_gang_shared(pods, 2, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(dra_gang_shared(pods, 3, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err,
	    "ResourceClaim shared is named by pods w1 and w2 of the gang: "
	    "the pods of one gang cannot share a claim"));
	for (i = 0; i < 3; i++)
		json_decref(pods[i]);
}
END_TEST

/* deviceclass.resource.kubernetes.io/CLASS: mapped, counted, refused. */
START_TEST(test_dra_extended)
{
	struct dra_classes c;
	json_t		  *pod;
	char		  *gres = NULL, err[512];

	dra_classes_defaults(&c);
	pod = pod_with("{\"metadata\": {\"name\": \"p\", \"namespace\": "
		       "\"team\"}, \"spec\": {\"containers\": [{\"name\": "
		       "\"a\", \"resources\": {\"limits\": "
		       "{\"deviceclass.resource.kubernetes.io/"
		       "gpu.example.com\": \"1\"}}}, {\"name\": \"b\", "
		       "\"resources\": {\"requests\": "
		       "{\"deviceclass.resource.kubernetes.io/"
		       "gpu.example.com\": \"2\"}}}]}}");
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:3");
	free(gres);
	/* A cluster that does not back them with DRA (before 1.36). */
	c.extended_off = 1;
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err,
	    "spec.containers[0].resources.limits: "
	    "deviceclass.resource.kubernetes.io/gpu.example.com: this cluster "
	    "does not back extended resources with Dynamic Resource "
	    "Allocation"));
	c.extended_off = 0;
	/* The webhook (no lookup) counts them the same. */
	ck_assert_int_eq(dra_pod_gres(pod, &c, NULL, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    0);
	ck_assert_str_eq(gres, "gpu:3");
	free(gres);
	json_decref(pod);
	pod = pod_with("{\"metadata\": {\"name\": \"p\", \"namespace\": "
		       "\"team\"}, \"spec\": {\"containers\": [{\"name\": "
		       "\"a\", \"resources\": {\"limits\": "
		       "{\"deviceclass.resource.kubernetes.io/"
		       "fpga.example.com\": \"1\"}}}]}}");
	ck_assert_int_eq(dra_pod_gres(pod, &c, &lk, &gres, &group_gres,
			     &join_node, err, sizeof(err)),
	    -1);
	ck_assert_str_eq(err,
	    "spec.containers[0].resources.limits: "
	    "deviceclass.resource.kubernetes.io/fpga.example.com: DeviceClass "
	    "fpga.example.com is not mapped to a Slurm GRES (mapped: "
	    "gpu.nvidia.com, gpu.example.com); a site admin maps it in the "
	    "config's deviceClasses");
	json_decref(pod);
	dra_classes_cleanup(&c);
}
END_TEST

START_TEST(test_dra_indices)
{
	long idx[8];
	char name[64];

	ck_assert_int_eq(dra_gres_indices("gpu:2(IDX:0-1)", name, sizeof(name),
			     idx, 8),
	    2);
	ck_assert_str_eq(name, "gpu");
	ck_assert_int_eq(idx[1], 1);
	ck_assert_int_eq(dra_gres_indices("gpu:a100:3(IDX:0,4-5)", name,
			     sizeof(name), idx, 8),
	    3);
	ck_assert_str_eq(name, "gpu:a100");
	ck_assert_int_eq(idx[2], 5);
	ck_assert_int_eq(dra_gres_indices("gpu:2", name, sizeof(name), idx, 8),
	    -1);
	ck_assert_int_eq(dra_gres_indices("gpu:2(IDX:0-9)", name, sizeof(name),
			     idx, 8),
	    -1);
	ck_assert_int_eq(dra_gres_indices("gpu:2(IDX:3-1)", name, sizeof(name),
			     idx, 8),
	    -1);
}
END_TEST

/* The slices the example driver publishes for node n1: gpu-0..gpu-3. */
static json_t *
slices_n1(int generation)
{
	json_t *devs = json_array(), *s;
	char	name[16];
	int	i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "gpu-%d", i);
		json_array_append_new(devs,
		    json_pack("{s:s, s:{s:{s:i}, s:{s:s}}}", "name", name,
			"attributes", "index", "int", i, "uuid", "string",
			name));
	}
	s = json_pack("{s:{s:s, s:s, s:{s:s, s:i}, s:o}}", "spec", "driver",
	    "gpu.example.com", "nodeName", "n1", "pool", "name", "n1",
	    "generation", generation, "devices", devs);
	return (json_pack("[o]", s));
}

START_TEST(test_dra_allocation)
{
	struct dra_classes c;
	json_t *spec = spec_of("{\"deviceClassName\": \"gpu.example.com\", "
			       "\"count\": 2}"),
	       *slices = slices_n1(1), *a, *classes;
	long   idx[2] = { 3, 1 };
	size_t used = 0;
	char   err[512], *s;

	dra_classes_defaults(&c);
	classes = json_pack("{s:{s:{s:[{s:{s:s, s:{s:i}}}]}}}",
	    "gpu.example.com", "spec", "config", "opaque", "driver",
	    "gpu.example.com", "parameters", "x", 1);
	a = dra_allocation(spec, classes, &c, slices, "n1", idx, 2, &used, err,
	    sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_uint_eq(used, 2);
	s = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(s,
	    "{\"devices\":{\"config\":[{\"opaque\":{\"driver\":\"gpu.example."
	    "com\",\"parameters\":{\"x\":1}},\"requests\":[\"gpus\"],"
	    "\"source\":\"FromClass\"}],\"results\":[{\"device\":\"gpu-3\","
	    "\"driver\":\"gpu.example.com\",\"pool\":\"n1\",\"request\":"
	    "\"gpus\"},{\"device\":\"gpu-1\",\"driver\":\"gpu.example.com\","
	    "\"pool\":\"n1\",\"request\":\"gpus\"}]},\"nodeSelector\":{"
	    "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata."
	    "name\",\"operator\":\"In\",\"values\":[\"n1\"]}]}]}}");
	free(s);
	json_decref(a);
	/* An index the node does not publish; another node; too few. */
	idx[0] = 7;
	used = 0;
	ck_assert_ptr_null(dra_allocation(spec, NULL, &c, slices, "n1", idx, 2,
	    &used, err, sizeof(err)));
	ck_assert_str_eq(err,
	    "request \"gpus\": node n1 publishes no device of driver "
	    "gpu.example.com whose attribute index is 7 (for Slurm's GRES "
	    "index 7) "
	    "in its ResourceSlices");
	idx[0] = 0;
	used = 0;
	ck_assert_ptr_null(dra_allocation(spec, NULL, &c, slices, "n2", idx, 2,
	    &used, err, sizeof(err)));
	used = 1;
	ck_assert_ptr_null(dra_allocation(spec, NULL, &c, slices, "n1", idx, 2,
	    &used, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "fewer than its claims ask for"));
	json_decref(classes);
	json_decref(spec);
	json_decref(slices);
	dra_classes_cleanup(&c);
}
END_TEST

/*
 * Binding conditions (KEP-5007): a device that has them carries them into
 * the allocation; the Binding waits until status.devices shows them True,
 * fails on a failure condition, and times out after the allocation.
 */
START_TEST(test_dra_binding_conditions)
{
	struct dra_classes c;
	json_t *spec = spec_of("{\"deviceClassName\": \"gpu.example.com\", "
			       "\"count\": 1}"),
	       *slices = slices_n1(1), *a, *claim, *dev, *conds;
	long   idx[1] = { 2 };
	size_t used = 0;
	char   err[512], why[512];

	dra_classes_defaults(&c);
	/* No conditions: nothing waits. */
	a = dra_allocation(spec, NULL, &c, slices, "n1", idx, 1, &used, err,
	    sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_int_eq(dra_allocation_waits(a), 0);
	json_decref(a);
	/* gpu-2 is attached over a fabric: Attached, or AttachFailed. */
	dev = json_array_get(
	    json_object_get(json_object_get(json_array_get(slices, 0), "spec"),
		"devices"),
	    2);
	json_object_set_new(dev, "bindingConditions",
	    json_pack("[s]", "Attached"));
	json_object_set_new(dev, "bindingFailureConditions",
	    json_pack("[s]", "AttachFailed"));
	used = 0;
	a = dra_allocation(spec, NULL, &c, slices, "n1", idx, 1, &used, err,
	    sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_int_eq(dra_allocation_waits(a), 1);
	ck_assert_str_eq(
	    json_string_value(json_array_get(
		json_object_get(
		    json_array_get(json_object_get(json_object_get(a,
						       "devices"),
				       "results"),
			0),
		    "bindingFailureConditions"),
		0)),
	    "AttachFailed");
	json_object_set_new(a, "allocationTimestamp",
	    json_string("2026-12-07T01:00:00Z"));
	claim = json_pack("{s:{s:s}, s:{s:o}}", "metadata", "name", "c1",
	    "status", "allocation", a);
	/* 1:00:30, 1:10:00: waiting, then past a 600 s timeout. */
	ck_assert_int_eq(dra_claim_binding(claim, 1796605230, 600, why,
			     sizeof(why)),
	    DRA_BINDING_WAIT);
	ck_assert_str_eq(why,
	    "ResourceClaim c1: device gpu-2: condition Attached is not True "
	    "yet");
	ck_assert_int_eq(dra_claim_binding(claim, 1796605800, 600, why,
			     sizeof(why)),
	    DRA_BINDING_TIMEOUT);
	ck_assert_str_eq(why,
	    "ResourceClaim c1: device gpu-2: condition Attached is not True "
	    "yet 600 s after its allocation");
	/* The driver's word, on another device first: still waiting. */
	conds = json_pack("[{s:s, s:s, s:s, s:s}]", "type", "Attached",
	    "status", "True", "reason", "Ok", "message", "");
	json_object_set_new(json_object_get(claim, "status"), "devices",
	    json_pack("[{s:s, s:s, s:s, s:O}]", "driver", "gpu.example.com",
		"pool", "n1", "device", "gpu-1", "conditions", conds));
	ck_assert_int_eq(dra_claim_binding(claim, 1796605230, 600, why,
			     sizeof(why)),
	    DRA_BINDING_WAIT);
	json_object_set_new(json_object_get(claim, "status"), "devices",
	    json_pack("[{s:s, s:s, s:s, s:O}]", "driver", "gpu.example.com",
		"pool", "n1", "device", "gpu-2", "conditions", conds));
	ck_assert_int_eq(dra_claim_binding(claim, 1796605800, 600, why,
			     sizeof(why)),
	    DRA_BINDING_READY);
	/* A failure condition True wins over the rest. */
	json_array_append_new(conds,
	    json_pack("{s:s, s:s, s:s, s:s}", "type", "AttachFailed", "status",
		"True", "reason", "FabricDown", "message", "switch 3 lost"));
	json_object_set_new(json_object_get(claim, "status"), "devices",
	    json_pack("[{s:s, s:s, s:s, s:O}]", "driver", "gpu.example.com",
		"pool", "n1", "device", "gpu-2", "conditions", conds));
	ck_assert_int_eq(dra_claim_binding(claim, 1796605230, 600, why,
			     sizeof(why)),
	    DRA_BINDING_FAILED);
	ck_assert_str_eq(why,
	    "ResourceClaim c1: device gpu-2 reports AttachFailed (FabricDown: "
	    "switch 3 lost)");
	json_decref(conds);
	json_decref(claim);
	json_decref(spec);
	json_decref(slices);
	dra_classes_cleanup(&c);
}
END_TEST

/* NVIDIA's class wants type gpu: a MIG device of that index is not it. */
START_TEST(test_dra_attributes)
{
	struct dra_classes c;
	json_t *spec = spec_of("{\"deviceClassName\": \"gpu.nvidia.com\"}");
	json_t *slices = json_loads(
	    "[{\"spec\": {\"driver\": \"gpu.nvidia.com\", \"nodeName\": "
	    "\"n1\", \"pool\": {\"name\": \"n1\", \"generation\": 2}, "
	    "\"devices\": [{\"name\": \"gpu-0-mig-1g\", \"attributes\": "
	    "{\"index\": {\"int\": 0}, \"type\": {\"string\": \"mig\"}}}, "
	    "{\"name\": \"gpu-0\", \"attributes\": {\"index\": {\"int\": 0}, "
	    "\"type\": {\"string\": \"gpu\"}}}]}}]",
	    0, NULL);
	json_t *a;
	long	idx = 0;
	size_t	used = 0;
	char	err[512];

	dra_classes_defaults(&c);
	a = dra_allocation(spec, NULL, &c, slices, "n1", &idx, 1, &used, err,
	    sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	ck_assert_str_eq(json_string_value(json_object_get(
			     json_array_get(json_object_get(json_object_get(a,
								"devices"),
						"results"),
				 0),
			     "device")),
	    "gpu-0");
	json_decref(a);
	json_decref(spec);
	json_decref(slices);
	dra_classes_cleanup(&c);
}
END_TEST

/* The device of a class with one device, per slice devices JSON. */
static const char *
device_of(const struct dra_classes *c, const char *cls, const char *devs,
    long idx, char *buf, size_t len)
{
	char	    sj[2048], err[512];
	json_t	   *spec, *slices, *a;
	const char *d;
	size_t	    used = 0;

	snprintf(sj, sizeof(sj), "{\"deviceClassName\": \"%s\"}", cls);
	spec = spec_of(sj);
	snprintf(sj, sizeof(sj),
	    "[{\"spec\": {\"driver\": \"gpu.nvidia.com\", \"nodeName\": "
	    "\"n1\", \"pool\": {\"name\": \"n1\", \"generation\": 1}, "
	    "\"devices\": %s}}]",
	    devs);
	slices = json_loads(sj, 0, NULL);
	ck_assert_ptr_nonnull(slices);
	a = dra_allocation(spec, NULL, c, slices, "n1", &idx, 1, &used, err,
	    sizeof(err));
	d = json_string_value(
	    json_object_get(json_array_get(k8s_obj_get(a, "devices.results"),
				0),
		"device"));
	snprintf(buf, len, "%s", d != NULL ? d : err);
	json_decref(a);
	json_decref(spec);
	json_decref(slices);
	return (buf);
}

/*
 * NVIDIA's driver from v25.8 publishes no index: a whole GPU is gpu-MINOR
 * (Slurm's index N is /dev/nvidiaN).  A site's MIG table names each index.
 */
START_TEST(test_dra_device_names)
{
	static const char devs[] =
	    "[{\"name\": \"gpu-0-mig-19-0-1\", \"attributes\": {\"type\": "
	    "{\"string\": \"mig\"}, \"profile\": {\"string\": "
	    "\"1g.10gb\"}}}, {\"name\": \"gpu-0-mig-19-1-1\", "
	    "\"attributes\": {\"type\": {\"string\": \"mig\"}, "
	    "\"profile\": {\"string\": \"1g.10gb\"}}}, {\"name\": \"gpu-1\", "
	    "\"attributes\": {\"type\": {\"string\": \"gpu\"}}}, "
	    "{\"name\": \"gpu-3\", \"attributes\": {\"type\": {\"string\": "
	    "\"gpu\"}}}]";
	struct config *cf = config_new();
	const char    *path = "/tmp/check_dra_names.yaml";
	char	       buf[512];
	FILE	      *fp;

	/* The built-in class: by name, and never a MIG device. */
	ck_assert_str_eq(device_of(&cf->dra, "gpu.nvidia.com", devs, 3, buf,
			     sizeof(buf)),
	    "gpu-3");
	ck_assert_str_eq(device_of(&cf->dra, "gpu.nvidia.com", devs, 0, buf,
			     sizeof(buf)),
	    "request \"gpus\": node n1 publishes no device of driver "
	    "gpu.nvidia.com whose name is gpu-0 (for Slurm's GRES index 0) in "
	    "its ResourceSlices");
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("deviceClasses:\n"
	      "- name: mig-1g.10gb.nvidia.com\n"
	      "  driver: gpu.nvidia.com\n"
	      "  gres: gpu:1g.10gb\n"
	      "  attributes: {type: mig, profile: 1g.10gb}\n"
	      "  deviceNames: [gpu-0-mig-19-0-1, gpu-0-mig-19-1-1]\n"
	      "- {name: whole, driver: gpu.nvidia.com, gres: gpu, "
	      "deviceName: \"gpu-{index}\", attributes: {type: gpu}}\n",
	    fp);
	fclose(fp);
	ck_assert_int_eq(config_load(cf, path, buf, sizeof(buf)), 0);
	ck_assert_str_eq(device_of(&cf->dra, "mig-1g.10gb.nvidia.com", devs, 1,
			     buf, sizeof(buf)),
	    "gpu-0-mig-19-1-1");
	/* Past the table, or of another type: no device. */
	ck_assert_ptr_nonnull(
	    strstr(device_of(&cf->dra, "mig-1g.10gb.nvidia.com", devs, 2, buf,
		       sizeof(buf)),
		"whose name is in deviceNames (it lists 2, none for index 2)"));
	ck_assert_str_eq(device_of(&cf->dra, "whole", devs, 1, buf,
			     sizeof(buf)),
	    "gpu-1");
	config_free(cf);
	cf = config_new();
	fp = fopen(path, "w");
	fputs("deviceClasses:\n- {name: x, driver: y, gres: gpu, "
	      "deviceName: gpu-N}\n",
	    fp);
	fclose(fp);
	ck_assert_int_eq(config_load(cf, path, buf, sizeof(buf)), -1);
	ck_assert_msg(
	    strstr(buf, "deviceClasses.deviceName: \"gpu-N\" has no {index}") !=
		NULL,
	    "%s", buf);
	config_free(cf);
	unlink(path);
}
END_TEST

/* The config's deviceClasses replace the built-in list. */
/*
 * What a pod asks of a node's slices: the class of each request and its
 * count (a template's, or the extended resources'); how many devices of
 * a class a node's newest slices publish, of its driver alone.
 */
START_TEST(test_dra_node_needs)
{
	struct dra_classes	c;
	const struct dra_class *k;
	const json_t	       *taint;
	json_t *pod = pod_with(claim_pod), *needs, *slices, *old, *dev, *tol;
	json_t *rules;

	dra_classes_defaults(&c);
	set_template("{\"deviceClassName\": \"gpu.example.com\", "
		     "\"count\": 2}");
	needs = dra_pod_needs(pod, &c, &lk);
	ck_assert_int_eq(json_integer_value(
			     json_object_get(json_object_get(needs,
						 "gpu.example.com"),
				 "count")),
	    2);
	ck_assert_ptr_nonnull(
	    strstr(json_string_value(json_object_get(json_object_get(needs,
							 "gpu.example.com"),
		       "where")),
		"request \"gpus\""));
	json_decref(needs);
	/* Unknown claims and unmapped classes are left out. */
	ck_assert_uint_eq(json_object_size(
			      needs = dra_pod_needs(pod, &c, NULL)),
	    0);
	json_decref(needs);
	json_decref(pod);
	pod = pod_with(
	    "{\"metadata\": {\"name\": \"e\", \"namespace\": "
	    "\"team\"}, \"spec\": {\"containers\": [{\"name\": "
	    "\"c\", \"resources\": {\"limits\": "
	    "{\"deviceclass.resource.kubernetes.io/gpu.nvidia.com\": "
	    "\"3\"}}}]}}");
	needs = dra_pod_needs(pod, &c, NULL);
	ck_assert_int_eq(json_integer_value(
			     json_object_get(json_object_get(needs,
						 "gpu.nvidia.com"),
				 "count")),
	    3);
	json_decref(needs);

	/* n1 publishes 4 devices of gpu.example.com, none of NVIDIA's. */
	slices = slices_n1(2);
	k = dra_class_find(&c, "gpu.example.com");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, NULL, &taint),
	    4);
	ck_assert_ptr_null(taint);
	ck_assert_int_eq(dra_node_devices(slices, k, "n2", NULL, NULL, NULL),
	    0);
	ck_assert_int_eq(dra_node_devices(slices,
			     dra_class_find(&c, "gpu.nvidia.com"), "n1", NULL,
			     NULL, NULL),
	    0);
	/* An older generation of the pool does not count. */
	old = slices_n1(1);
	json_array_extend(slices, old);
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, NULL, NULL),
	    4);
	json_decref(old);
	/*
	 * A device tainted NoSchedule is not counted, and is named, unless
	 * the request tolerates it; a None taint is no taint.
	 */
	dev = json_array_get(k8s_obj_get(json_array_get(slices, 0),
				 "spec.devices"),
	    2);
	json_object_set_new(dev, "taints",
	    json_pack("[{s:s, s:s, s:s}, {s:s, s:s}]", "key", "health", "value",
		"failing", "effect", "NoSchedule", "key", "note", "effect",
		"None"));
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, NULL, &taint),
	    3);
	ck_assert_str_eq(k8s_obj_str(taint, "value"), "failing");
	tol = json_pack("[{s:s, s:s, s:s}]", "key", "health", "operator",
	    "Equal", "value", "failing");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, tol, &taint),
	    4);
	ck_assert_ptr_null(taint);
	json_decref(tol);
	tol = json_pack("[{s:s, s:s}]", "key", "health", "effect", "NoExecute");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, tol, &taint),
	    3);
	json_decref(tol);
	tol = json_pack("[{s:s}]", "operator", "Exists");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", NULL, tol, &taint),
	    4);
	json_decref(tol);
	/*
	 * A DeviceTaintRule taints what its selector picks: the driver's
	 * gpu-0 of pool n1; another driver's, or another pool's, nothing.
	 */
	rules = json_pack("[{s:{s:{s:s, s:s, s:s}, s:{s:s, s:s}}},"
			  " {s:{s:{s:s}, s:{s:s, s:s}}}]",
	    "spec", "deviceSelector", "driver", "gpu.example.com", "pool", "n1",
	    "device", "gpu-0", "taint", "key", "maint", "effect", "NoExecute",
	    "spec", "deviceSelector", "pool", "n9", "taint", "key", "other",
	    "effect", "NoSchedule");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", rules, NULL, &taint),
	    2);
	tol = json_pack("[{s:s, s:s}]", "key", "health", "operator", "Exists");
	ck_assert_int_eq(dra_node_devices(slices, k, "n1", rules, tol, &taint),
	    3);
	ck_assert_str_eq(k8s_obj_str(taint, "key"), "maint");
	json_decref(tol);
	json_decref(rules);
	json_decref(slices);
	json_decref(pod);
	dra_classes_cleanup(&c);
}
END_TEST

/* firstAvailable's pick: for every subrequest Slurm cannot be asked for, or no node serves, the next one is tried. */
static int serves_none;

static int
test_serves(void *arg, const struct dra_class *k, long long count,
    const json_t *tolerations)
{
	(void)arg;
	(void)k;
	(void)count;
	(void)tolerations;
	return (!serves_none);
}

START_TEST(test_dra_first_available)
{
	static const struct dra_lookup slk = { NULL, NULL, test_serves, NULL };
	struct dra_classes	       c;
	const json_t		      *ex;
	const char		      *sub;
	json_t			      *req;
	char			       err[512];

	dra_classes_defaults(&c);
	req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s, s:i}]}", "name", "r",
	    "firstAvailable", "name", "h100", "deviceClassName",
	    "h100.example.com", "name", "a100", "deviceClassName",
	    "gpu.example.com", "count", 2);
	/* The first cannot be asked (no GRES): the second. */
	ck_assert_int_eq(dra_request_pick(req, &c, &slk, "w", &ex, &sub, err,
			     sizeof(err)),
	    0);
	ck_assert_str_eq(sub, "a100");
	ck_assert_int_eq(json_integer_value(json_object_get(ex, "count")), 2);
	/* No node serves it: the pod waits, saying so. */
	serves_none = 1;
	ck_assert_int_eq(dra_request_pick(req, &c, &slk, "w", &ex, &sub, err,
			     sizeof(err)),
	    1);
	ck_assert_ptr_nonnull(strstr(err, "no node publishes the devices"));
	serves_none = 0;
	/* None can be asked: the first one's reason. */
	json_object_set_new(json_array_get(json_object_get(req,
					       "firstAvailable"),
				1),
	    "allocationMode", json_string("All"));
	ck_assert_int_eq(dra_request_pick(req, &c, &slk, "w", &ex, &sub, err,
			     sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "firstAvailable[0] (\"h100\")"));
	json_decref(req);
	/* exactly: itself, no subrequest. */
	req = json_pack("{s:s, s:{s:s}}", "name", "r", "exactly",
	    "deviceClassName", "gpu.example.com");
	ck_assert_int_eq(dra_request_pick(req, &c, NULL, "w", &ex, &sub, err,
			     sizeof(err)),
	    0);
	ck_assert_ptr_null(sub);
	json_decref(req);
	dra_classes_cleanup(&c);
}
END_TEST

START_TEST(test_dra_config)
{
	struct config *c = config_new();
	const char    *path = "/tmp/check_dra_config.yaml";
	char	       err[512];
	FILE	      *fp;

	ck_assert_uint_eq(c->dra.n, 2);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("deviceClasses:\n"
	      "- {name: mig-1g.10gb.nvidia.com, driver: gpu.nvidia.com, "
	      "gres: gpu:1g.10gb, attributes: {type: mig}}\n",
	    fp);
	fclose(fp);
	ck_assert_int_eq(config_load(c, path, err, sizeof(err)), 0);
	ck_assert_uint_eq(c->dra.n, 1);
	ck_assert_str_eq(c->dra.v[0].gres, "gpu:1g.10gb");
	ck_assert_str_eq(c->dra.v[0].index_attr, "index");
	ck_assert_ptr_null(dra_class_find(&c->dra, "gpu.nvidia.com"));
	config_free(c);
	c = config_new();
	fp = fopen(path, "w");
	fputs("deviceClasses:\n- {name: x, driver: y, gres: \"gpu:a:b\"}\n",
	    fp);
	fclose(fp);
	ck_assert_int_eq(config_load(c, path, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err,
			  "deviceClasses.gres: \"gpu:a:b\" is not a "
			  "Slurm GRES NAME[:TYPE]") != NULL,
	    "%s", err);
	config_free(c);
	c = config_new();
	fp = fopen(path, "w");
	fputs("deviceClasses:\n- {name: x, gres: gpu}\n", fp);
	fclose(fp);
	ck_assert_int_eq(config_load(c, path, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "each entry needs name, driver and gres") !=
		NULL,
	    "%s", err);
	config_free(c);
	unlink(path);
}
END_TEST

static void
dra_teardown(void)
{
	json_decref(lk_template);
	json_decref(lk_claim);
	lk_template = lk_claim = NULL;
	free(join_node);
	join_node = NULL;
	lk_busy_why = NULL;
}

Suite *
dra_suite(void)
{
	Suite *s = suite_create("dra");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, dra_teardown);
	tcase_add_test(tc, test_dra_template_count);
	tcase_add_loop_test(tc, test_dra_refusals, 0,
	    (int)(sizeof(refusals) / sizeof(refusals[0])));
	tcase_add_test(tc, test_dra_shapes_refused);
	tcase_add_test(tc, test_dra_claim_states);
	tcase_add_test(tc, test_dra_claim_shared);
	tcase_add_test(tc, test_dra_gang_shared);
	tcase_add_test(tc, test_dra_extended);
	tcase_add_test(tc, test_dra_indices);
	tcase_add_test(tc, test_dra_allocation);
	tcase_add_test(tc, test_dra_binding_conditions);
	tcase_add_test(tc, test_dra_attributes);
	tcase_add_test(tc, test_dra_device_names);
	tcase_add_test(tc, test_dra_config);
	tcase_add_test(tc, test_dra_first_available);
	tcase_add_test(tc, test_dra_node_needs);
	suite_add_tcase(s, tc);
	return (s);
}
