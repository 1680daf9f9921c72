/* Suites of the unit-test runner, one per tested module. */
#ifndef CHECK_SUITES_H
#define CHECK_SUITES_H

#include <check.h>

#ifndef TEST_DATA
#define TEST_DATA "test/data"
#endif

/* Runs fn on every case directory under dir; returns how many. */
int check_each_case(const char *dir, void (*fn)(const char *name));

Suite *quantity_suite(void);
Suite *watch_suite(void);
Suite *kubeconfig_suite(void);
Suite *translate_suite(void);
Suite *queue_suite(void);
Suite *map_suite(void);
Suite *placement_suite(void);
Suite *workload_suite(void);
Suite *ownerrec_suite(void);
Suite *review_suite(void);
Suite *config_suite(void);
Suite *podrec_suite(void);
Suite *noderec_suite(void);
Suite *certs_suite(void);
Suite *guard_suite(void);
Suite *dra_suite(void);
Suite *ender_suite(void);
Suite *fit_suite(void);
Suite *epilog_suite(void);
Suite *log_suite(void);
/* The group tests (check_group.c): a binary of their own, over the fakes. */
Suite *group_suite(void);

#endif /* CHECK_SUITES_H */
