/*
 * The unit-test runner: one suite per module, all in one SRunner so that
 * Check prints its standard summary line.  CK_RUN_SUITE picks one suite.
 */
#include <dirent.h>
#include <stdlib.h>

#include <check.h>

#include "check_suites.h"

int
check_each_case(const char *dir, void (*fn)(const char *name))
{
	DIR	      *d = opendir(dir);
	struct dirent *de;
	int	       n = 0;

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		/* Cases are directories; files beside them are shared. */
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		fn(de->d_name);
		n++;
	}
	closedir(d);
	return (n);
}

int
main(void)
{
	SRunner *sr;
	int	 failed;

	sr = srunner_create(quantity_suite());
	srunner_add_suite(sr, watch_suite());
	srunner_add_suite(sr, kubeconfig_suite());
	srunner_add_suite(sr, translate_suite());
	srunner_add_suite(sr, queue_suite());
	srunner_add_suite(sr, map_suite());
	srunner_add_suite(sr, placement_suite());
	srunner_add_suite(sr, workload_suite());
	srunner_add_suite(sr, ownerrec_suite());
	srunner_add_suite(sr, review_suite());
	srunner_add_suite(sr, config_suite());
	srunner_add_suite(sr, podrec_suite());
	srunner_add_suite(sr, noderec_suite());
	srunner_add_suite(sr, certs_suite());
	srunner_add_suite(sr, guard_suite());
	srunner_add_suite(sr, dra_suite());
	srunner_add_suite(sr, ender_suite());
	srunner_add_suite(sr, fit_suite());
	srunner_add_suite(sr, epilog_suite());
	srunner_add_suite(sr, log_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return (failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
}
