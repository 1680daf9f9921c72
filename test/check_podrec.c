/*
 * The compact pod record (podrec.c): the fields the scheduler tests, what
 * it drops, what it costs, and the interned strings it shares.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

/* A pod as the API server sends it, with the bulk a real one carries. */
static json_t *
full_pod(const char *name)
{
	json_t *pod;

	pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:i, "
			"s:{s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:[s, s], "
			"s:[{s:s, s:s, s:s, s:b}], s:[{s:s}]}, "
			"s:{s:s, s:s, s:[{s:s}], s:[{s:s, s:s, s:[{s:s, s:s}], "
			"s:{s:{s:s, s:s}}}], s:[{s:s, s:s, s:s}]}, "
			"s:{s:s, s:[{s:s, s:s}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
	    "namespace", "team-a", "uid",
	    "0b9c6a5e-7d1f-4c1e-9b7a-3f2e1d0c9b8a", "resourceVersion", "123456",
	    "creationTimestamp", "2026-11-25T10:00:00Z", "deletionTimestamp",
	    "2026-11-25T10:05:00Z", "deletionGracePeriodSeconds", 0, "labels",
	    "app", "trainer", "pod-template-hash", "5d8f7c", LABEL_JOBID,
	    "4242", "batch.kubernetes.io/job-completion-index", "7",
	    "annotations", ANN_PREFIX "account", "physics",
	    "kubectl.kubernetes.io/last-applied-configuration", "{...big...}",
	    ANN_SLURM_NODE, "node-3", "finalizers", "example.com/keep",
	    FINALIZER, "ownerReferences", "kind", "Job", "name", "train", "uid",
	    "1111", "controller", 1, "managedFields", "manager", "kubectl",
	    "spec", "nodeName", "kw-3", "schedulerName", "slurm-bridge",
	    "schedulingGates", "name", "wait", "containers", "name", "main",
	    "image", "registry/trainer:1", "env", "name", "A", "value", "b",
	    "resources", "requests", "cpu", "2", "memory", "1Gi", "tolerations",
	    "key", MANAGED_TAINT_KEY, "operator", "Exists", "effect",
	    MANAGED_TAINT_EFFECT_DEFAULT, "status", "phase", "Failed",
	    "conditions", "type", "Ready", "status", "False");
	ck_assert_ptr_nonnull(pod);
	return (pod);
}

START_TEST(test_podrec_fields)
{
	json_t	      *pod = full_pod("w-7");
	struct podrec *r = podrec_new(pod);

	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->key, "team-a/w-7");
	ck_assert_str_eq(podrec_name(r), "w-7");
	ck_assert_str_eq(r->ns, "team-a");
	ck_assert_str_eq(podrec_uid(r), "0b9c6a5e-7d1f-4c1e-9b7a-3f2e1d0c9b8a");
	ck_assert_str_eq(podrec_rv(r), "123456");
	ck_assert_str_eq(r->node, "kw-3");
	ck_assert_str_eq(r->sched, "slurm-bridge");
	ck_assert_str_eq(r->slurm_node, "node-3");
	ck_assert_int_eq(r->created, 1795600800);
	ck_assert_int_eq(r->delete_at, 1795601100);
	ck_assert_int_eq(r->grace_zero, 1);
	ck_assert_uint_eq(r->label_jobid, 4242);
	ck_assert_uint_eq(r->ann_jobid, 0);
	ck_assert_int_eq(r->index, 7);
	ck_assert_int_eq(r->phase, PHASE_FAILED);
	ck_assert_int_eq(r->finalizer, 1);
	ck_assert_int_eq(r->tolerates, 1);
	ck_assert_int_eq(r->gated, 1);
	/* Only what translation and the gang rules read is kept. */
	ck_assert_ptr_nonnull(podrec_cold(r));
	ck_assert_ptr_null(strstr(podrec_cold(r), "registry/trainer"));
	ck_assert_ptr_null(strstr(podrec_cold(r), "last-applied"));
	ck_assert_ptr_null(strstr(podrec_cold(r), "trainer"));
	ck_assert_ptr_null(strstr(podrec_cold(r), "managedFields"));
	ck_assert_ptr_null(strstr(podrec_cold(r), "Ready"));
	ck_assert_ptr_nonnull(strstr(podrec_cold(r), ANN_PREFIX "account"));
	ck_assert_ptr_nonnull(strstr(podrec_cold(r), "\"Job\""));
	/* A few hundred bytes, not the kilobytes of a decoded tree. */
	ck_assert_uint_lt(malloc_usable_size(r), 640);
	podrec_free(r);
	json_decref(pod);
}
END_TEST

/* The record, decoded again, reads as the pod did for every rule. */
START_TEST(test_podrec_json)
{
	json_t	      *pod = full_pod("w-7"), *back;
	struct podrec *r = podrec_new(pod);

	back = podrec_json(r);
	ck_assert_str_eq(k8s_obj_name(back), "w-7");
	ck_assert_str_eq(k8s_obj_namespace(back), "team-a");
	ck_assert_str_eq(k8s_obj_uid(back), podrec_uid(r));
	ck_assert_str_eq(k8s_obj_str(back, "status.phase"), "Failed");
	ck_assert_str_eq(k8s_obj_str(back, "spec.nodeName"), "kw-3");
	ck_assert_str_eq(k8s_obj_annotation(back, ANN_PREFIX "account"),
	    "physics");
	ck_assert_str_eq(k8s_obj_label(back, LABEL_JOBID), "4242");
	ck_assert_int_eq(workload_member_index(back), 7);
	ck_assert_int_eq(translate_tolerates(back, NULL), 1);
	ck_assert_uint_eq(json_array_size(
			      k8s_obj_get(back, "metadata.ownerReferences")),
	    1);
	ck_assert_str_eq(k8s_obj_str(json_array_get(k8s_obj_get(back,
							"spec.containers"),
					 0),
			     "resources.requests.cpu"),
	    "2");
	json_decref(back);
	podrec_free(r);
	json_decref(pod);
}
END_TEST

/* A pod without namespace or name gives no record. */
START_TEST(test_podrec_refuses)
{
	json_t *pod = json_pack("{s:{s:s}}", "metadata", "name", "x");

	ck_assert_ptr_null(podrec_new(pod));
	json_decref(pod);
}
END_TEST

/* Namespaces and nodes are shared, and go with their last user. */
START_TEST(test_podrec_intern)
{
	json_t	      *a = full_pod("a"), *b = full_pod("b");
	struct podrec *ra = podrec_new(a), *rb = podrec_new(b);
	long long      n0, n1, b0;
	size_t	       ic, ib;

	ck_assert_ptr_eq(ra->ns, rb->ns);
	ck_assert_ptr_eq(ra->node, rb->node);
	podrec_stats(&n0, &b0);
	ck_assert_int_ge(n0, 2);
	ck_assert_int_ge(b0,
	    (long long)(malloc_usable_size(ra) + malloc_usable_size(rb)));
	intern_stats(&ic, &ib);
	ck_assert_uint_ge(ic, 4);
	podrec_free(ra);
	podrec_free(rb);
	podrec_stats(&n1, &b0);
	ck_assert_int_eq(n1, n0 - 2);
	intern_stats(&ic, &ib);
	ck_assert_uint_eq(ic, 0);
	json_decref(a);
	json_decref(b);
}
END_TEST

Suite *
podrec_suite(void)
{
	Suite *s = suite_create("podrec");
	TCase *tc = tcase_create("podrec");

	tcase_add_test(tc, test_podrec_fields);
	tcase_add_test(tc, test_podrec_json);
	tcase_add_test(tc, test_podrec_refuses);
	tcase_add_test(tc, test_podrec_intern);
	suite_add_tcase(s, tc);
	return (s);
}
