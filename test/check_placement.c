/* Placement: GRES shares and tasks onto an allocation's nodes. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

static const struct {
	const char *detail;
	int	    per_task, k;
	const char *want;
} gres_cases[] = {
	{ "gpu:4(IDX:0-3)", 1, 0, "gpu:1(IDX:0)" },
	{ "gpu:4(IDX:0-3)", 1, 3, "gpu:1(IDX:3)" },
	{ "gpu:4(IDX:0-3)", 2, 1, "gpu:2(IDX:2-3)" },
	{ "gpu:a100:3(IDX:0,2,5)", 1, 1, "gpu:a100:1(IDX:2)" },
	{ "gpu:4(IDX:1,3-5)", 2, 0, "gpu:2(IDX:1,3)" },
	{ "gpu:4(IDX:0-3)", 1, 4, NULL }, /* not enough */
	{ "gpu:2", 1, 0, NULL },	  /* no index list */
	{ "gpu:2(IDX:x)", 1, 0, NULL },
	{ "(IDX:0)", 1, 0, NULL },
};

START_TEST(test_placement_gres_share)
{
	char *got = placement_gres_share(gres_cases[_i].detail,
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

START_TEST(test_placement_assign)
{
	json_t		 *layout;
	struct assignment a[8];
	char		  err[256];
	size_t		  i;

	/* Shared: 8 one-CPU tasks, 6 CPUs on n1 and 2 on n3. */
	layout = json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}]", "node", "n1",
	    "cpus", 6, "gres", "gpu:6(IDX:0-5)", "node", "n3", "cpus", 2,
	    "gres", "gpu:2(IDX:6-7)");
	memset(a, 0, sizeof(a));
	ck_assert_int_eq(placement_assign(layout, 8, 1, 0, 1, a, err,
			     sizeof(err)),
	    0);
	ck_assert_str_eq(a[0].node, "n1");
	ck_assert_str_eq(a[5].node, "n1");
	ck_assert_str_eq(a[6].node, "n3");
	ck_assert_str_eq(a[5].gres, "gpu:1(IDX:5)");
	ck_assert_str_eq(a[7].gres, "gpu:1(IDX:7)");
	for (i = 0; i < 8; i++)
		free(a[i].gres);
	/* Two-CPU tasks: only 4 fit. */
	ck_assert_int_eq(placement_assign(layout, 8, 2, 0, 0, a, err,
			     sizeof(err)),
	    -1);
	ck_assert_str_eq(err, "allocation holds 4 of 8 tasks");
	/* Exclusive: one per node. */
	ck_assert_int_eq(placement_assign(layout, 2, 32, 1, 0, a, err,
			     sizeof(err)),
	    0);
	ck_assert_str_eq(a[1].node, "n3");
	ck_assert_ptr_null(a[1].gres);
	json_decref(layout);
}
END_TEST

/*
 * A heterogeneous job: a leader of 4 CPUs (component 0, on n1) and three
 * workers of 1 CPU (component 1, 3 CPUs on n2): each member goes to its
 * component's nodes, in order.
 */
START_TEST(test_placement_het)
{
	struct assignment a[4];
	json_t		 *layout, *het;
	char		  err[256] = "";

	memset(a, 0, sizeof(a));
	layout = json_loads("[{\"node\":\"n2\",\"cpus\":3,\"comp\":1},"
			    "{\"node\":\"n1\",\"cpus\":4,\"comp\":0}]",
	    0, NULL);
	het = json_loads("{\"comps\":[1,0,1,1],\"shapes\":[[4,0],[1,0]]}", 0,
	    NULL);
	ck_assert_msg(placement_assign_het(layout, het, 4, a, err,
			  sizeof(err)) == 0,
	    "%s", err);
	ck_assert_str_eq(a[0].node, "n2");
	ck_assert_str_eq(a[1].node, "n1");
	ck_assert_str_eq(a[2].node, "n2");
	ck_assert_str_eq(a[3].node, "n2");
	/* A component short of CPUs fails, leaving nothing. */
	json_object_set_new(json_array_get(layout, 0), "cpus", json_integer(2));
	memset(a, 0, sizeof(a));
	ck_assert_int_eq(placement_assign_het(layout, het, 4, a, err,
			     sizeof(err)),
	    -1);
	ck_assert_ptr_nonnull(strstr(err, "holds 2 of 3"));
	/* Members that do not match the components fail. */
	ck_assert_int_eq(placement_assign_het(layout, het, 3, a, err,
			     sizeof(err)),
	    -1);
	json_decref(layout);
	json_decref(het);
}
END_TEST

Suite *
placement_suite(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("sched");

	tcase_add_loop_test(tc, test_placement_gres_share, 0,
	    sizeof(gres_cases) / sizeof(gres_cases[0]));
	tcase_add_test(tc, test_placement_assign);
	tcase_add_test(tc, test_placement_het);
	suite_add_tcase(s, tc);
	return (s);
}
