/*
 * AdmissionReview handling, from fixtures in test/data/review/<case>/:
 * input.json is the request body (sent as bytes, so it may be malformed);
 * expect.json is {"status":200,"response":<AdmissionReview with the patch
 * decoded>} or {"status":400,"error":"<substring>"}, with "mode":"validate"
 * for the validating webhook (default: mutate).  An optional owners.json
 * fills the owner store: {"namespaces":[...], "jobs":[...], "jobsets":[...],
 * "lws":[...], "podgroups":[...]}.  All cases share config.yaml (GRES type
 * and topology tables).  A mutation is applied and reviewed again: the
 * second pass must add nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "k8s.h"
#include "config.h"
#include "admission.h"
#include "check_suites.h"
#include "check_util.h"

#define RV_DIR TEST_DATA "/review"

static const char *const rv_users[] = { "system:slurm-bridge", NULL };
/* --adopt-scheduler: KubeRay's gang integration's scheduler. */
static const char *const rv_adopt[] = { "scheduler-plugins-scheduler", NULL };

/* Replaces the base64 patch of a response by the decoded JSON Patch. */
static void
decode_patch(json_t *review)
{
	json_t	   *resp = json_object_get(review, "response");
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	char	   *raw;
	size_t	    n;

	if (b64 == NULL)
		return;
	ck_assert_int_eq(k8s_base64_decode(b64, &raw, &n), 0);
	json_object_set_new(resp, "patch", json_loadb(raw, n, 0, NULL));
	free(raw);
}

/* Fills the store from owners.json, if the case has one. */
static void
load_owners(struct owners *o, const char *name)
{
	static const char *const keys[OWN_KINDS] = { "namespaces", "jobs",
		"jobsets", "lws", "podgroups", "schedpodgroups", "workloads" };
	char			 path[512];
	json_t			*all, *v;
	size_t			 i;
	int			 k;

	snprintf(path, sizeof(path), RV_DIR "/%s/owners.json", name);
	if ((all = json_load_file(path, 0, NULL)) == NULL)
		return;
	for (k = 0; k < OWN_KINDS; k++)
		json_array_foreach (json_object_get(all, keys[k]), i, v)
			owners_put(o, (enum owner_kind)k, v);
	json_decref(all);
}

/* The object a JSON Pointer's parent names, and the last token (owned). */
static json_t *
pointer_parent(json_t *doc, const char *path, char **last)
{
	char   *copy = xstrdup(path + 1), *tok, *save = NULL, *next, *o, *i;
	json_t *cur = doc;

	tok = strtok_r(copy, "/", &save);
	ck_assert_msg(tok != NULL, "patch path %s is empty", path);
	for (;;) {
		/* Unescape ~1 then ~0 in place. */
		for (o = i = tok; *i != '\0'; i++, o++) {
			if (i[0] == '~' && i[1] == '1') {
				*o = '/';
				i++;
			} else if (i[0] == '~' && i[1] == '0') {
				*o = '~';
				i++;
			} else
				*o = *i;
		}
		*o = '\0';
		if ((next = strtok_r(NULL, "/", &save)) == NULL)
			break;
		cur = json_is_array(cur) ?
		    json_array_get(cur, (size_t)strtoul(tok, NULL, 10)) :
		    json_object_get(cur, tok);
		ck_assert_msg(cur != NULL, "patch path %s does not exist",
		    path);
		tok = next;
	}
	*last = xstrdup(tok);
	free(copy);
	return (cur);
}

/* Applies a JSON Patch (add, replace, remove) to doc. */
static void
apply_patch(json_t *doc, const json_t *patch)
{
	const json_t *op;
	json_t	     *parent;
	const char   *kind, *path;
	char	     *last;
	size_t	      i;

	json_array_foreach (patch, i, op) {
		kind = json_string_value(json_object_get(op, "op"));
		path = json_string_value(json_object_get(op, "path"));
		parent = pointer_parent(doc, path, &last);
		if (json_is_array(parent) && strcmp(last, "-") == 0)
			json_array_append(parent, json_object_get(op, "value"));
		else if (json_is_array(parent) && strcmp(kind, "remove") == 0)
			ck_assert_int_eq(json_array_remove(parent,
					     strtoul(last, NULL, 10)),
			    0);
		else if (strcmp(kind, "remove") == 0)
			ck_assert_int_eq(json_object_del(parent, last), 0);
		else {
			ck_assert_msg(strcmp(kind, "add") == 0 ||
				json_object_get(parent, last) != NULL,
			    "replace of missing %s", path);
			json_object_set(parent, last,
			    json_object_get(op, "value"));
		}
		free(last);
	}
}

static void
review_case(const char *name)
{
	struct review_conf conf;
	struct config	  *cfg = config_new();
	char		   path[512], err[512] = "", *body, *dump;
	size_t		   len;
	json_t		  *expect, *out = NULL, *again, *patch, *in;
	const char	  *mode;
	enum review_mode   m;
	int		   status;

	ck_assert_msg(config_load(cfg, RV_DIR "/config.yaml", err,
			  sizeof(err)) == 0,
	    "config.yaml: %s", err);
	memset(&conf, 0, sizeof(conf));
	conf.config = cfg;
	conf.owners = owners_new(NULL, NULL, NULL);
	conf.bridge_users = rv_users;
	conf.adopt_schedulers = rv_adopt;
	load_owners(conf.owners, name);
	snprintf(path, sizeof(path), RV_DIR "/%s/input.json", name);
	body = check_slurp(path, &len);
	snprintf(path, sizeof(path), RV_DIR "/%s/expect.json", name);
	expect = json_load_file(path, 0, NULL);
	ck_assert_msg(expect != NULL, "%s: bad expect.json", name);
	mode = json_string_value(json_object_get(expect, "mode"));
	m = mode != NULL && strcmp(mode, "validate") == 0 ? REVIEW_VALIDATE :
							    REVIEW_MUTATE;
	status = review_handle(body, len, m, &conf, &out, err, sizeof(err));
	ck_assert_msg(status ==
		json_integer_value(json_object_get(expect, "status")),
	    "%s: status %d (%s)", name, status, err);
	if (status == 200) {
		decode_patch(out);
		dump = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
		ck_assert_msg(json_equal(out,
				  json_object_get(expect, "response")),
		    "%s: got %s", name, dump);
		free(dump);
		patch = json_object_get(json_object_get(out, "response"),
		    "patch");
		if (m == REVIEW_MUTATE && patch != NULL) {
			/* Idempotent: the patched pod needs no patch. */
			in = json_loadb(body, len, 0, NULL);
			apply_patch(json_object_get(json_object_get(in,
							"request"),
					"object"),
			    patch);
			dump = json_dumps(in, JSON_COMPACT);
			ck_assert_int_eq(review_handle(dump, strlen(dump), m,
					     &conf, &again, err, sizeof(err)),
			    200);
			ck_assert_msg(json_object_get(json_object_get(again,
							  "response"),
					  "patch") == NULL,
			    "%s: a second pass patches again", name);
			json_decref(again);
			json_decref(in);
			free(dump);
		}
	} else
		ck_assert_msg(strstr(err,
				  json_string_value(json_object_get(expect,
				      "error"))) != NULL,
		    "%s: error \"%s\"", name, err);
	json_decref(out);
	json_decref(expect);
	owners_free(conf.owners);
	config_free(cfg);
	free(body);
}

START_TEST(test_review_fixtures)
{
	ck_assert_int_ge(check_each_case(RV_DIR, review_case), 55);
}
END_TEST

START_TEST(test_review_oversize)
{
	struct review_conf conf;
	char		   err[256];
	json_t		  *out = NULL;
	char		  *big = xcalloc(1, REVIEW_MAX_BODY + 2);

	memset(&conf, 0, sizeof(conf));
	memset(big, ' ', REVIEW_MAX_BODY + 1);
	ck_assert_int_eq(review_handle(big, REVIEW_MAX_BODY + 1, REVIEW_MUTATE,
			     &conf, &out, err, sizeof(err)),
	    400);
	ck_assert_ptr_nonnull(strstr(err, "larger than"));
	ck_assert_ptr_null(out);
	free(big);
}
END_TEST

START_TEST(test_mutate_pointer_escape)
{
	char *s = mutate_pointer_escape("a/b~c");

	ck_assert_str_eq(s, "a~1b~0c");
	free(s);
}
END_TEST

Suite *
review_suite(void)
{
	Suite *s = suite_create("review");
	TCase *tc = tcase_create("admission");

	tcase_add_test(tc, test_review_fixtures);
	tcase_add_test(tc, test_review_oversize);
	tcase_add_test(tc, test_mutate_pointer_escape);
	suite_add_tcase(s, tc);
	return (s);
}
