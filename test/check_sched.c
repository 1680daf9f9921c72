/* Pure scheduling decisions: groups, GRES shares, and task placement. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

static json_t *
pod(const char *name, const char *group, const char *min, const char *gang)
{
	json_t	*p = json_pack("{s:{s:s, s:s, s:{}, s:{}}}", "metadata",
	    "name", name, "namespace", "ns", "labels", "annotations");
	json_t	*md = json_object_get(p, "metadata");

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

START_TEST(test_sched_groups)
{
	struct group_id	 g;
	char		 err[256];
	json_t		*p, *job;

	p = pod("a", "train", "8", NULL);
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/train");
	ck_assert_int_eq(g.min_member, 8);
	ck_assert_int_eq(g.gang, 1);
	json_decref(p);

	/* Label without min-member: the PodGroup CR decides (0). */
	p = pod("a", "pg", NULL, NULL);
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)), 0);
	ck_assert_int_eq(g.min_member, 0);
	json_decref(p);

	/* gang: "false" wins over the label. */
	p = pod("solo", "train", "8", "false");
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/solo");
	ck_assert_int_eq(g.gang, 0);
	json_decref(p);

	/* Indexed Job owner with parallelism 4. */
	job = json_pack("{s:{s:s}, s:{s:s, s:i}}", "metadata", "name", "sim",
	    "spec", "completionMode", "Indexed", "parallelism", 4);
	p = pod("sim-0-abc", NULL, NULL, NULL);
	ck_assert_int_eq(sched_pod_group(p, job, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "gang:ns/sim");
	ck_assert_int_eq(g.min_member, 4);
	json_object_set_new(json_object_get(job, "spec"), "completionMode",
	    json_string("NonIndexed"));
	ck_assert_int_eq(sched_pod_group(p, job, NULL, &g, err, sizeof(err)), 0);
	ck_assert_str_eq(g.key, "pod:ns/sim-0-abc");
	json_decref(p);
	json_decref(job);

	/* LeaderWorkerSet: name + group index, size from the annotation. */
	p = pod("lws-1-2", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p, "metadata.labels"), LWS_LABEL_NAME,
	    json_string("lws"));
	json_object_set_new(k8s_obj_get(p, "metadata.labels"),
	    LWS_LABEL_GROUP_INDEX, json_string("1"));
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    LWS_ANN_SIZE, json_string("4"));
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)),
	    0);
	ck_assert_str_eq(g.key, "gang:ns/lws-1");
	ck_assert_int_eq(g.min_member, 4);
	json_object_set_new(k8s_obj_get(p, "metadata.annotations"),
	    LWS_ANN_SIZE, json_string("0"));
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)),
	    -1);
	json_decref(p);

	/* JobSet: 2 x 3 + 1 (defaults) pods; the Job owner does not win. */
	job = json_pack("{s:{s:s}, s:{s:[{s:i, s:{s:{s:i}}}, {s:{}}]}}",
	    "metadata", "name", "js", "spec", "replicatedJobs", "replicas", 2,
	    "template", "spec", "parallelism", 3, "template");
	ck_assert_int_eq(sched_jobset_size(job), 7);
	p = pod("js-w-0-0", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p, "metadata.labels"),
	    JOBSET_LABEL_NAME, json_string("js"));
	ck_assert_int_eq(sched_pod_group(p, NULL, job, &g, err, sizeof(err)),
	    0);
	ck_assert_str_eq(g.key, "gang:ns/js");
	ck_assert_int_eq(g.min_member, 7);
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)),
	    0);
	ck_assert_int_eq(g.min_member, 0);	/* JobSet not seen yet */
	json_decref(p);
	json_decref(job);

	p = pod("a", "train", "lots", NULL);
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ANN_MIN_MEMBER ": \"lots\" is not "
	    "a whole number"));
	json_decref(p);
	p = pod("a", NULL, NULL, "maybe");
	ck_assert_int_eq(sched_pod_group(p, NULL, NULL, &g, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "gang: \"maybe\""));
	json_decref(p);
}
END_TEST

static const struct {
	const char	*detail;
	int		 per_task, k;
	const char	*want;
} gres_cases[] = {
	{ "gpu:4(IDX:0-3)", 1, 0, "gpu:1(IDX:0)" },
	{ "gpu:4(IDX:0-3)", 1, 3, "gpu:1(IDX:3)" },
	{ "gpu:4(IDX:0-3)", 2, 1, "gpu:2(IDX:2-3)" },
	{ "gpu:a100:3(IDX:0,2,5)", 1, 1, "gpu:a100:1(IDX:2)" },
	{ "gpu:4(IDX:1,3-5)", 2, 0, "gpu:2(IDX:1,3)" },
	{ "gpu:4(IDX:0-3)", 1, 4, NULL },	/* not enough */
	{ "gpu:2", 1, 0, NULL },		/* no index list */
	{ "gpu:2(IDX:x)", 1, 0, NULL },
	{ "(IDX:0)", 1, 0, NULL },
};

START_TEST(test_sched_gres_share)
{
	char	*got = sched_gres_share(gres_cases[_i].detail,
	    gres_cases[_i].per_task, gres_cases[_i].k);

	if (gres_cases[_i].want == NULL)
		ck_assert_msg(got == NULL, "%s -> %s", gres_cases[_i].detail,
		    got);
	else {
		ck_assert_msg(got != NULL, "%s -> NULL", gres_cases[_i].detail);
		ck_assert_str_eq(got, gres_cases[_i].want);
	}
	free(got);
}
END_TEST

START_TEST(test_sched_assign)
{
	json_t			*layout;
	struct assignment	 a[8];
	char			 err[256];
	size_t			 i;

	/* Shared: 8 one-CPU tasks, 6 CPUs on n1 and 2 on n3. */
	layout = json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}]",
	    "node", "n1", "cpus", 6, "gres", "gpu:6(IDX:0-5)",
	    "node", "n3", "cpus", 2, "gres", "gpu:2(IDX:6-7)");
	memset(a, 0, sizeof(a));
	ck_assert_int_eq(sched_assign(layout, 8, 1, 0, 1, a, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(a[0].node, "n1");
	ck_assert_str_eq(a[5].node, "n1");
	ck_assert_str_eq(a[6].node, "n3");
	ck_assert_str_eq(a[5].gres, "gpu:1(IDX:5)");
	ck_assert_str_eq(a[7].gres, "gpu:1(IDX:7)");
	for (i = 0; i < 8; i++)
		free(a[i].gres);
	/* Two-CPU tasks: only 4 fit. */
	ck_assert_int_eq(sched_assign(layout, 8, 2, 0, 0, a, err,
	    sizeof(err)), -1);
	ck_assert_str_eq(err, "allocation holds 4 of 8 tasks");
	/* Exclusive: one per node. */
	ck_assert_int_eq(sched_assign(layout, 2, 32, 1, 0, a, err,
	    sizeof(err)), 0);
	ck_assert_str_eq(a[1].node, "n3");
	ck_assert_ptr_null(a[1].gres);
	json_decref(layout);
}
END_TEST

/* Placement order, as group.c sorts members: index, then name. */
static int
member_cmp(const void *a, const void *b)
{
	const json_t	*pa = *(const json_t *const *)a;
	const json_t	*pb = *(const json_t *const *)b;

	return (sched_member_order(sched_completion_index(pa),
	    k8s_obj_name(pa), sched_completion_index(pb), k8s_obj_name(pb)));
}

START_TEST(test_sched_sort)
{
	json_t	*p[3];
	size_t	 i;

	p[0] = pod("w-b", NULL, NULL, NULL);
	p[1] = pod("w-a", NULL, NULL, NULL);
	p[2] = pod("w-c", NULL, NULL, NULL);
	json_object_set_new(k8s_obj_get(p[2], "metadata.labels"),
	    "batch.kubernetes.io/job-completion-index", json_string("10"));
	json_object_set_new(k8s_obj_get(p[0], "metadata.labels"),
	    "batch.kubernetes.io/job-completion-index", json_string("2"));
	qsort(p, 3, sizeof(p[0]), member_cmp);
	/* Index 2 before index 10 (numeric), names only break ties. */
	ck_assert_str_eq(k8s_obj_name(p[0]), "w-a");
	ck_assert_str_eq(k8s_obj_name(p[1]), "w-b");
	ck_assert_str_eq(k8s_obj_name(p[2]), "w-c");
	for (i = 0; i < 3; i++)
		json_decref(p[i]);
}
END_TEST

Suite *
sched_suite(void)
{
	Suite	*s = suite_create("sched");
	TCase	*tc = tcase_create("sched");

	tcase_add_test(tc, test_sched_groups);
	tcase_add_loop_test(tc, test_sched_gres_share, 0,
	    sizeof(gres_cases) / sizeof(gres_cases[0]));
	tcase_add_test(tc, test_sched_assign);
	tcase_add_test(tc, test_sched_sort);
	suite_add_tcase(s, tc);
	return (s);
}
