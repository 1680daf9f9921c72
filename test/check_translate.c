/*
 * Pod -> job description, table-driven from test/data/translate/<case>/:
 * input.json is the pod; expect.json is the job description as JSON, or
 * {"error": "<substring of the message>"}.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "xmalloc.h"
#include "bridge.h"
#include "check_suites.h"

#define TR_DIR	TEST_DATA "/translate"

static void
set_str(json_t *o, const char *k, const char *v)
{
	if (v != NULL)
		json_object_set_new(o, k, json_string(v));
}

static json_t *
jobspec_json(const struct jobspec *js)
{
	json_t	*o = json_object();

	set_str(o, "name", js->name);
	set_str(o, "comment", js->comment);
	if (js->admin_comment != NULL)
		json_object_set_new(o, "admin_comment",
		    json_loads(js->admin_comment, 0, NULL));
	set_str(o, "partition", js->partition);
	set_str(o, "account", js->account);
	set_str(o, "qos", js->qos);
	set_str(o, "reservation", js->reservation);
	set_str(o, "constraints", js->constraints);
	set_str(o, "tres_per_task", js->tres_per_task);
	json_object_set_new(o, "ntasks", json_integer(js->ntasks));
	json_object_set_new(o, "cpus_per_task",
	    json_integer(js->cpus_per_task));
	json_object_set_new(o, "mem_per_cpu_mb",
	    json_integer((json_int_t)js->mem_per_cpu_mb));
	json_object_set_new(o, "time_limit", json_integer(js->time_limit));
	if (js->priority != 0)
		json_object_set_new(o, "priority", json_integer(js->priority));
	json_object_set_new(o, "exclusive", json_boolean(js->exclusive));
	return (o);
}

static json_t *
load(const char *cname, const char *file)
{
	char		 path[512];
	json_error_t	 jerr;
	json_t		*j;

	snprintf(path, sizeof(path), TR_DIR "/%s/%s", cname, file);
	j = json_load_file(path, 0, &jerr);
	ck_assert_msg(j != NULL, "%s: %s", path, jerr.text);
	return (j);
}

static void
translate_case(const char *cname)
{
	struct translate_conf	 conf = { "slurm-bridge", 0 };
	struct jobspec		 js;
	json_t			*pod, *expect, *got;
	const char		*want;
	char			 err[256] = "", *dump;
	int			 rc;

	pod = load(cname, "input.json");
	expect = load(cname, "expect.json");
	rc = translate_pod(pod, &conf, &js, err, sizeof(err));
	if ((want = json_string_value(json_object_get(expect, "error")))
	    != NULL) {
		ck_assert_msg(rc == -1, "%s: accepted, expected an error",
		    cname);
		ck_assert_msg(strstr(err, want) != NULL,
		    "%s: error \"%s\" lacks \"%s\"", cname, err, want);
	} else {
		ck_assert_msg(rc == 0, "%s: refused: %s", cname, err);
		got = jobspec_json(&js);
		dump = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
		ck_assert_msg(json_equal(got, expect), "%s: got %s", cname,
		    dump);
		free(dump);
		json_decref(got);
		jobspec_cleanup(&js);
	}
	json_decref(pod);
	json_decref(expect);
}

START_TEST(test_translate_cases)
{
	DIR		*d = opendir(TR_DIR);
	struct dirent	*de;
	int		 n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		translate_case(de->d_name);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 10);
}
END_TEST

START_TEST(test_translate_admin_pods)
{
	json_t	*a = translate_admin_pods("{\"pods\":[\"a/b\",\"a/c\"]}");

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(json_array_size(a), 2);
	ck_assert_str_eq(json_string_value(json_array_get(a, 1)), "a/c");
	json_decref(a);
	ck_assert_ptr_null(translate_admin_pods(NULL));
	ck_assert_ptr_null(translate_admin_pods("not json"));
	ck_assert_ptr_null(translate_admin_pods("{\"pods\":\"x\"}"));
}
END_TEST

Suite *
translate_suite(void)
{
	Suite	*s = suite_create("translate");
	TCase	*tc = tcase_create("pod");

	tcase_add_test(tc, test_translate_cases);
	tcase_add_test(tc, test_translate_admin_pods);
	suite_add_tcase(s, tc);
	return (s);
}
