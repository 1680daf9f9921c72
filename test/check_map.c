/* The hash map: put/get/replace/delete through growth and tombstones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

START_TEST(test_map_many)
{
	struct map	*m = map_new(free);
	char		 key[32], *v;
	const char	*k;
	void		*val;
	size_t		 it = 0, seen = 0;
	int		 i;

	for (i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "ns/pod-%d", i);
		xasprintf(&v, "%d", i);
		map_put(m, key, v);
	}
	ck_assert_uint_eq(map_count(m), 10000);
	/* Replacing frees the old value (valgrind checks). */
	map_put(m, "ns/pod-7", xstrdup("seven"));
	ck_assert_str_eq(map_get(m, "ns/pod-7"), "seven");
	for (i = 0; i < 10000; i += 2) {
		snprintf(key, sizeof(key), "ns/pod-%d", i);
		map_del(m, key);
	}
	ck_assert_uint_eq(map_count(m), 5000);
	ck_assert_ptr_null(map_get(m, "ns/pod-2"));
	ck_assert_str_eq(map_get(m, "ns/pod-9999"), "9999");
	v = map_take(m, "ns/pod-1");
	ck_assert_str_eq(v, "1");
	free(v);
	ck_assert_ptr_null(map_take(m, "ns/pod-1"));
	/* Tombstones are reused: churn does not grow without bound. */
	for (i = 0; i < 100000; i++) {
		map_put(m, "churn", xstrdup("x"));
		map_del(m, "churn");
	}
	while (map_next(m, &it, &k, &val)) {
		ck_assert_str_eq(strcmp(k, "ns/pod-7") == 0 ? "seven" :
		    k + strlen("ns/pod-"), val);
		seen++;
	}
	ck_assert_uint_eq(seen, 4999);
	map_free(m);
}
END_TEST

Suite *
map_suite(void)
{
	Suite	*s = suite_create("cache");
	TCase	*tc = tcase_create("map");

	tcase_add_test(tc, test_map_many);
	suite_add_tcase(s, tc);
	return (s);
}
