/*
 * AdmissionReview handling, from fixtures in test/data/review/<case>/:
 * input.json is the request body (sent as bytes, so it may be malformed);
 * expect.json is {"status":200,"response":<AdmissionReview with the patch
 * decoded>} or {"status":400,"error":"<substring>"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "k8s.h"
#include "../admission/admission.h"
#include "check_suites.h"

#define RV_DIR	TEST_DATA "/review"

static char *
slurp(const char *path, size_t *len)
{
	FILE	*fp = fopen(path, "r");
	char	*d;
	long	 n;

	ck_assert_msg(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	d = xmalloc((size_t)n + 1);
	ck_assert_int_eq(fread(d, 1, (size_t)n, fp), (size_t)n);
	d[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return (d);
}

/* Replaces the base64 patch of a response by the decoded JSON Patch. */
static void
decode_patch(json_t *review)
{
	json_t		*resp = json_object_get(review, "response");
	const char	*b64 = json_string_value(json_object_get(resp, "patch"));
	char		*raw;
	size_t		 n;

	if (b64 == NULL)
		return;
	ck_assert_int_eq(k8s_base64_decode(b64, &raw, &n), 0);
	json_object_set_new(resp, "patch", json_loadb(raw, n, 0, NULL));
	free(raw);
}

static void
review_case(const char *name)
{
	struct review_conf	 conf = { "slurm-bridge" };
	char			 path[512], err[256] = "", *body, *dump;
	size_t			 len;
	json_t			*expect, *out = NULL;
	int			 status;

	snprintf(path, sizeof(path), RV_DIR "/%s/input.json", name);
	body = slurp(path, &len);
	snprintf(path, sizeof(path), RV_DIR "/%s/expect.json", name);
	expect = json_load_file(path, 0, NULL);
	ck_assert_msg(expect != NULL, "%s: bad expect.json", name);
	status = review_handle(body, len, REVIEW_MUTATE, &conf, &out, err,
	    sizeof(err));
	ck_assert_msg(status == json_integer_value(json_object_get(expect,
	    "status")), "%s: status %d (%s)", name, status, err);
	if (status == 200) {
		decode_patch(out);
		dump = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
		ck_assert_msg(json_equal(out, json_object_get(expect,
		    "response")), "%s: got %s", name, dump);
		free(dump);
	} else
		ck_assert_msg(strstr(err, json_string_value(json_object_get(
		    expect, "error"))) != NULL, "%s: error \"%s\"", name, err);
	json_decref(out);
	json_decref(expect);
	free(body);
}

START_TEST(test_review_fixtures)
{
	ck_assert_int_ge(check_each_case(RV_DIR, review_case), 11);
}
END_TEST

START_TEST(test_review_oversize)
{
	struct review_conf	 conf = { "slurm-bridge" };
	char			 err[256];
	json_t			*out = NULL;
	char			*big = xcalloc(1, REVIEW_MAX_BODY + 2);

	memset(big, ' ', REVIEW_MAX_BODY + 1);
	ck_assert_int_eq(review_handle(big, REVIEW_MAX_BODY + 1,
	    REVIEW_MUTATE, &conf, &out, err, sizeof(err)), 400);
	ck_assert_ptr_nonnull(strstr(err, "larger than"));
	ck_assert_ptr_null(out);
	free(big);
}
END_TEST

START_TEST(test_review_pointer_escape)
{
	char	*s = review_pointer_escape("a/b~c");

	ck_assert_str_eq(s, "a~1b~0c");
	free(s);
}
END_TEST

Suite *
review_suite(void)
{
	Suite	*s = suite_create("review");
	TCase	*tc = tcase_create("admission");

	tcase_add_test(tc, test_review_fixtures);
	tcase_add_test(tc, test_review_oversize);
	tcase_add_test(tc, test_review_pointer_escape);
	suite_add_tcase(s, tc);
	return (s);
}
