/*
 * The hash map (put/get/replace/delete through growth and tombstones,
 * borrowed keys) and the string array.
 */
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

START_TEST(test_map_many)
{
	struct map *m = map_new(free);
	char	    key[32], *v;
	const char *k;
	void	   *val;
	size_t	    it = 0, seen = 0;
	int	    i;

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
		ck_assert_str_eq(strcmp(k, "ns/pod-7") == 0 ?
			"seven" :
			k + strlen("ns/pod-"),
		    val);
		seen++;
	}
	ck_assert_uint_eq(seen, 4999);
	map_free(m);
}
END_TEST

/*
 * The table fills to 7/8 before it doubles: 50,000 entries take 65,536
 * slots.  Distinct keys that come and go leave tombstones, which a rebuild
 * at the same size clears: every live key is still found, and the table
 * does not grow.  Once most entries went, it shrinks.
 */
START_TEST(test_map_fill)
{
	struct map *m = map_new_borrowed(NULL);
	static char keys[50000][24];
	char	    churn[2][32];
	size_t	    bytes;
	int	    i;

	for (i = 0; i < 50000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "ns/p-%d", i);
		map_put(m, keys[i], keys[i]);
	}
	bytes = map_bytes(m);
	ck_assert_uint_le(bytes, 65536 * 17 + 256);
	ck_assert_uint_ge(bytes, 65536 * 17);
	for (i = 0; i < 200000; i++) {
		snprintf(churn[i % 2], sizeof(churn[0]), "churn-%d", i);
		map_put(m, churn[i % 2], churn[i % 2]);
		if (i > 0)
			map_del(m, churn[(i + 1) % 2]);
	}
	ck_assert_uint_eq(map_count(m), 50001);
	ck_assert_uint_eq(map_bytes(m), bytes);
	for (i = 0; i < 50000; i++)
		ck_assert_ptr_eq(map_get(m, keys[i]), keys[i]);
	ck_assert_ptr_null(map_get(m, "churn-0"));
	ck_assert_ptr_nonnull(map_get(m, churn[(200000 - 1) % 2]));
	/* Most entries go: the next rebuild makes the table smaller. */
	for (i = 0; i < 49000; i++)
		map_del(m, keys[i]);
	for (i = 0; i < 70000; i++) {
		snprintf(churn[i % 2], sizeof(churn[0]), "again-%d", i);
		map_put(m, churn[i % 2], churn[i % 2]);
		map_del(m, churn[i % 2]);
	}
	ck_assert_uint_le(map_bytes(m), 4096 * 17 + 256);
	for (i = 49000; i < 50000; i++)
		ck_assert_ptr_eq(map_get(m, keys[i]), keys[i]);
	map_free(m);
}
END_TEST

/* Values that carry their own key: the map keeps the pointer, no copy. */
struct keyed {
	int  n;
	char key[32];
};

START_TEST(test_map_borrowed)
{
	struct map   *m = map_new_borrowed(free), *c = map_new(NULL);
	struct keyed *k;
	size_t	      i, before;
	char	      name[32];

	for (i = 0; i < 1000; i++) {
		k = xcalloc(1, sizeof(*k));
		k->n = (int)i;
		snprintf(k->key, sizeof(k->key), "ns/pod-%zu", i);
		map_put(m, k->key, k);
		map_put(c, k->key, NULL);
	}
	/* Lookups by an equal string, not the same pointer. */
	snprintf(name, sizeof(name), "ns/pod-%d", 417);
	k = map_get(m, name);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->n, 417);
	/* The copying map holds its keys' bytes; the borrowing one does not. */
	ck_assert_uint_gt(map_bytes(c), map_bytes(m) + 1000 * 10);
	before = map_bytes(c);
	map_del(c, name);
	ck_assert_uint_lt(map_bytes(c), before);
	/* A value freed by del takes its key with it: no use after free. */
	map_del(m, name);
	ck_assert_ptr_null(map_get(m, name));
	ck_assert_uint_eq(map_count(m), 999);
	map_free(m);
	map_free(c);
}
END_TEST

/* The string array groups keep their members in. */
START_TEST(test_strv)
{
	struct strv sv = { NULL, 0, 0 };
	json_t	   *a;

	strv_add(&sv, "a");
	strv_add(&sv, "b");
	strv_add(&sv, "c");
	ck_assert_int_eq(strv_find(&sv, "b"), 1);
	ck_assert_int_eq(strv_find(&sv, "z"), -1);
	strv_remove(&sv, 0);
	ck_assert_uint_eq(sv.n, 2);
	ck_assert_str_eq(sv.v[0], "b");
	ck_assert_str_eq(sv.v[1], "c");
	strv_set(&sv, 1, "d");
	ck_assert_str_eq(sv.v[1], "d");
	ck_assert_uint_gt(strv_bytes(&sv), 0);
	a = json_pack("[s, i, s]", "x", 3, "y");
	strv_from_json(&sv, a);
	ck_assert_uint_eq(sv.n, 2);
	ck_assert_str_eq(sv.v[1], "y");
	strv_from_json(&sv, NULL);
	ck_assert_uint_eq(sv.n, 0);
	ck_assert_ptr_null(sv.v);
	strv_clear(&sv);
	json_decref(a);
}
END_TEST

/* One string lives in the array's block: set, grow and remove from it. */
START_TEST(test_strv_single)
{
	struct strv sv = { NULL, 0, 0 }, two = { NULL, 0, 0 };
	const char *key = "bench-backlog/b30000-12345";

	strv_add(&sv, key);
	ck_assert_uint_eq(sv.n, 1);
	ck_assert_str_eq(sv.v[0], key);
	ck_assert_int_eq(strv_find(&sv, key), 0);
	/* One block: smaller than a pointer array and a copy apart. */
	strv_add(&two, key);
	strv_add(&two, key);
	ck_assert_uint_lt(strv_bytes(&sv), strv_bytes(&two) / 2 + 32);
	ck_assert_uint_eq(strv_bytes(&sv), malloc_usable_size(sv.v));
	strv_set(&sv, 0, "ns/other");
	ck_assert_str_eq(sv.v[0], "ns/other");
	/* A second string: the first is still there, and stays valid. */
	strv_add(&sv, "ns/second");
	ck_assert_uint_eq(sv.n, 2);
	ck_assert_str_eq(sv.v[0], "ns/other");
	ck_assert_str_eq(sv.v[1], "ns/second");
	strv_remove(&sv, 0);
	ck_assert_str_eq(sv.v[0], "ns/second");
	strv_clear(&sv);
	/* Removing the only one leaves an empty strv that takes more. */
	strv_add(&sv, "a");
	strv_remove(&sv, 0);
	ck_assert_uint_eq(sv.n, 0);
	ck_assert_ptr_null(sv.v);
	strv_add(&sv, "b");
	strv_add(&sv, "c");
	strv_add(&sv, "d");
	ck_assert_str_eq(sv.v[2], "d");
	strv_clear(&sv);
	strv_clear(&two);
}
END_TEST

/*
 * The borrowed form: nothing allocated, and each change copies first, so
 * the owner's string is never written or freed.
 */
START_TEST(test_strv_borrow)
{
	char	    key[] = "pod:ns/alone", *slot = key + 4;
	struct strv sv = { NULL, 0, 0 };

	strv_borrow(&sv, &slot);
	ck_assert_uint_eq(sv.n, 1);
	ck_assert_ptr_eq(sv.v[0], key + 4);
	ck_assert_int_eq(strv_find(&sv, "ns/alone"), 0);
	ck_assert_uint_eq(strv_bytes(&sv), 0);
	/* A second string: both copied, the owner's untouched. */
	strv_add(&sv, "ns/second");
	ck_assert_uint_eq(sv.n, 2);
	ck_assert_ptr_ne(sv.v[0], key + 4);
	ck_assert_str_eq(sv.v[0], "ns/alone");
	ck_assert_str_eq(sv.v[1], "ns/second");
	ck_assert_uint_gt(strv_bytes(&sv), 0);
	strv_clear(&sv);
	/* Set: a copy of its own; remove and clear: nothing freed. */
	strv_borrow(&sv, &slot);
	strv_set(&sv, 0, "ns/other");
	ck_assert_str_eq(sv.v[0], "ns/other");
	ck_assert_str_eq(key, "pod:ns/alone");
	strv_clear(&sv);
	strv_borrow(&sv, &slot);
	strv_remove(&sv, 0);
	ck_assert_uint_eq(sv.n, 0);
	ck_assert_ptr_null(sv.v);
	strv_borrow(&sv, &slot);
	strv_clear(&sv);
	ck_assert_ptr_eq(slot, key + 4);
	ck_assert_str_eq(key, "pod:ns/alone");
}
END_TEST

Suite *
map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("map");

	tcase_add_test(tc, test_map_many);
	tcase_add_test(tc, test_map_fill);
	tcase_add_test(tc, test_map_borrowed);
	tcase_add_test(tc, test_strv);
	tcase_add_test(tc, test_strv_single);
	tcase_add_test(tc, test_strv_borrow);
	suite_add_tcase(s, tc);
	return (s);
}
