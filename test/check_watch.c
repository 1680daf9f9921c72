/*
 * The watch-stream parser on canned byte streams: every split point, one
 * byte at a time, malformed JSON, an in-stream 410, bookmarks, and a
 * truncated final object; the list parser on pages in any member order,
 * with tricky strings and nested arrays, fed whole, in two pieces split
 * anywhere, a byte at a time, holding one item at a time, and cut short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"
#include "k8s.h"
#include "check_suites.h"
#include "check_util.h"

struct seen {
	char log[1024];
	int  n;
	int  stop_after; /* 0: never ask to stop */
};

static int
seen_cb(enum k8s_watch_type t, json_t *obj, void *arg)
{
	struct seen *s = arg;
	const char  *rv = json_string_value(
	     json_object_get(json_object_get(obj, "metadata"),
		 "resourceVersion"));
	json_int_t code = json_integer_value(json_object_get(obj, "code"));
	size_t	   len = strlen(s->log);

	snprintf(s->log + len, sizeof(s->log) - len, "%s:%s%s%.0lld ",
	    k8s_watch_type_name(t), rv != NULL ? rv : "-", code != 0 ? ":" : "",
	    (long long)code);
	json_decref(obj);
	s->n++;
	return (s->stop_after != 0 && s->n >= s->stop_after ? -1 : 0);
}

#define WATCH_DIR  TEST_DATA "/watch/"
#define STREAM_LOG "ADDED:101 MODIFIED:102 BOOKMARK:150 DELETED:160 "

START_TEST(test_watch_every_split)
{
	struct k8s_watch_parser *p;
	struct k8s_error	 err;
	struct seen		 s;
	size_t			 len, cut;
	char *data = check_slurp(WATCH_DIR "stream.json", &len);

	for (cut = 0; cut <= len; cut++) {
		memset(&s, 0, sizeof(s));
		p = k8s_watch_parser_new(0);
		ck_assert_int_eq(k8s_watch_parser_feed(p, data, cut, seen_cb,
				     &s, &err),
		    0);
		ck_assert_int_eq(k8s_watch_parser_feed(p, data + cut, len - cut,
				     seen_cb, &s, &err),
		    0);
		ck_assert_msg(strcmp(s.log, STREAM_LOG) == 0,
		    "cut at %zu: got \"%s\"", cut, s.log);
		ck_assert_uint_eq(k8s_watch_parser_pending(p), 0);
		k8s_watch_parser_free(p);
	}
	free(data);
}
END_TEST

START_TEST(test_watch_byte_at_a_time)
{
	struct k8s_watch_parser *p = k8s_watch_parser_new(0);
	struct k8s_error	 err;
	struct seen		 s;
	size_t			 len, i;
	char *data = check_slurp(WATCH_DIR "stream.json", &len);

	memset(&s, 0, sizeof(s));
	for (i = 0; i < len; i++)
		ck_assert_int_eq(k8s_watch_parser_feed(p, data + i, 1, seen_cb,
				     &s, &err),
		    0);
	ck_assert_str_eq(s.log, STREAM_LOG);
	k8s_watch_parser_free(p);
	free(data);
}
END_TEST

START_TEST(test_watch_no_newlines)
{
	struct k8s_watch_parser *p = k8s_watch_parser_new(0);
	struct k8s_error	 err;
	struct seen		 s;
	const char		*in =
	    "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
	    "{\"resourceVersion\":\"1\"}}}{\"type\":\"DELETED\",\"object\":"
	    "{\"metadata\":{\"resourceVersion\":\"2\"}}}";

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(k8s_watch_parser_feed(p, in, strlen(in), seen_cb, &s,
			     &err),
	    0);
	ck_assert_str_eq(s.log, "ADDED:1 DELETED:2 ");
	k8s_watch_parser_free(p);
}
END_TEST

static const char *const malformed[] = {
	"{\"type\":\"ADDED\",\"object\":{\"a\":}}\n", /* bad JSON */
	"garbage\n",				      /* not an object */
	"{\"type\":\"ADDED\"}\n",		      /* no object */
	"{\"type\":\"WHAT\",\"object\":{}}\n",	      /* unknown type */
	"{\"type\":7,\"object\":{}}\n",		      /* type not string */
	"[1,2]\n",				      /* array */
};

START_TEST(test_watch_malformed)
{
	struct k8s_watch_parser *p = k8s_watch_parser_new(0);
	struct k8s_error	 err;
	struct seen		 s;
	const char		*good = "{\"type\":\"ADDED\",\"object\":"
					"{\"metadata\":{\"resourceVersion\":\"9\"}}}\n";

	memset(&s, 0, sizeof(s));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(k8s_watch_parser_feed(p, malformed[_i],
			     strlen(malformed[_i]), seen_cb, &s, &err),
	    -1);
	ck_assert_str_eq(err.reason, "BadWatchEvent");
	ck_assert_int_eq(s.n, 0);
	/* The parser is reusable after an error. */
	ck_assert_int_eq(k8s_watch_parser_feed(p, good, strlen(good), seen_cb,
			     &s, &err),
	    0);
	ck_assert_str_eq(s.log, "ADDED:9 ");
	k8s_watch_parser_free(p);
}
END_TEST

/* A file fed whole, or with its end cut off: the events and what is left. */
static const struct {
	const char *file; /* under WATCH_DIR */
	size_t	    cut;  /* bytes dropped from its end */
	const char *log;
	int	    pending; /* an unfinished event is kept */
} feeds[] = {
	/* An in-stream 410 is delivered as an ERROR event. */
	{ "gone.json", 0, "ADDED:101 ERROR:-:410 ", 0 },
	/* Drop the last 10 bytes: the DELETED event never completes. */
	{ "stream.json", 10, "ADDED:101 MODIFIED:102 BOOKMARK:150 ", 1 },
};

START_TEST(test_watch_feed)
{
	struct k8s_watch_parser *p = k8s_watch_parser_new(0);
	struct k8s_error	 err;
	struct seen		 s;
	char			 path[256], *data;
	size_t			 len;

	snprintf(path, sizeof(path), WATCH_DIR "%s", feeds[_i].file);
	data = check_slurp(path, &len);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(k8s_watch_parser_feed(p, data, len - feeds[_i].cut,
			     seen_cb, &s, &err),
	    0);
	ck_assert_str_eq(s.log, feeds[_i].log);
	if (feeds[_i].pending)
		ck_assert_uint_gt(k8s_watch_parser_pending(p), 0);
	else
		ck_assert_uint_eq(k8s_watch_parser_pending(p), 0);
	k8s_watch_parser_free(p);
	free(data);
}
END_TEST

START_TEST(test_watch_limit_and_stop)
{
	struct k8s_watch_parser *p = k8s_watch_parser_new(64);
	struct k8s_error	 err;
	struct seen		 s;
	size_t			 len;
	char *data = check_slurp(WATCH_DIR "stream.json", &len);

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(k8s_watch_parser_feed(p, data, len, seen_cb, &s, &err),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.text, "larger than 64"));
	k8s_watch_parser_free(p);

	p = k8s_watch_parser_new(0);
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	ck_assert_int_eq(k8s_watch_parser_feed(p, data, len, seen_cb, &s, &err),
	    -1);
	ck_assert_str_eq(err.reason, "Stopped");
	ck_assert_int_eq(s.n, 2);
	k8s_watch_parser_free(p);
	free(data);
}
END_TEST

struct listed {
	char names[256];
	char kinds[64];
	int  n;
};

static void
list_cb(json_t *item, const struct k8s_list_meta *meta, void *arg)
{
	struct listed *l = arg;
	size_t	       len = strlen(l->names);

	snprintf(l->names + len, sizeof(l->names) - len, "%s%s",
	    len > 0 ? "," : "", k8s_obj_name(item));
	len = strlen(l->kinds);
	snprintf(l->kinds + len, sizeof(l->kinds) - len, "%s%s",
	    len > 0 ? "," : "", meta->kind != NULL ? meta->kind : "-");
	l->n++;
	json_decref(item);
}

/* Decodes page into fresh l and m; returns what the decoder did. */
static int
list_run(const char *page, struct listed *l, struct k8s_list_meta *m)
{
	struct k8s_error err;

	memset(m, 0, sizeof(*m));
	memset(l, 0, sizeof(*l));
	return (k8s_list_decode(page, strlen(page), list_cb, l, m, &err));
}

START_TEST(test_list_decode)
{
	const char *page =
	    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"77\",\"continue\":\"abc\"},"
	    " \"items\" : [ {\"metadata\":{\"name\":\"a\",\"annotations\":"
	    "{\"x\":\"]},[{\\\"\\\\\"}}}, {\"metadata\":{\"name\":\"b\"}}"
	    ", 7 ]\n}";
	struct k8s_list_meta m;
	struct listed	     l;

	ck_assert_int_eq(list_run(page, &l, &m), 0);
	/* Brackets and quotes inside strings do not end an item. */
	ck_assert_str_eq(l.names, "a,b");
	/* The kind was known before the first item. */
	ck_assert_str_eq(l.kinds, "Pod,Pod");
	ck_assert_str_eq(m.kind, "Pod");
	ck_assert_str_eq(m.api_version, "v1");
	ck_assert_str_eq(m.rv, "77");
	ck_assert_str_eq(m.cont, "abc");
	k8s_list_meta_clear(&m);
}
END_TEST

/* Members in another order; the last page has no continue token. */
START_TEST(test_list_decode_order)
{
	const char *page = "{\"items\":[],\"metadata\":{\"resourceVersion\":"
			   "\"9\",\"continue\":\"\"},\"kind\":\"NodeList\"}";
	struct k8s_list_meta m;
	struct listed	     l;

	ck_assert_int_eq(list_run(page, &l, &m), 0);
	ck_assert_int_eq(l.n, 0);
	ck_assert_str_eq(m.rv, "9");
	ck_assert_ptr_null(m.cont);
	ck_assert_str_eq(m.kind, "Node");
	k8s_list_meta_clear(&m);
}
END_TEST

/* Cut anywhere, or broken, a page is an error, never a crash or a hang. */
START_TEST(test_list_decode_bad)
{
	const char *page =
	    "{\"kind\":\"PodList\",\"metadata\":{},"
	    "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":"
	    "{\"name\":\"b\"}}]}";
	const char	    *bad[] = { "", "[]", "{\"items\":[1,}", "{1:2}",
			 "{\"items\" [ ]}", "{\"items\":[{}]", "{\"a\":1 \"b\":2}" };
	struct k8s_list_meta m;
	struct k8s_error     err;
	struct listed	     l;
	size_t		     cut, i;

	memset(&m, 0, sizeof(m));
	for (cut = 0; cut < strlen(page); cut++) {
		memset(&l, 0, sizeof(l));
		ck_assert_msg(k8s_list_decode(page, cut, list_cb, &l, &m,
				  &err) == -1,
		    "accepted a page cut at %zu", cut);
		ck_assert_int_le(l.n, 2);
		ck_assert_ptr_null(m.kind);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&l, 0, sizeof(l));
		ck_assert_msg(k8s_list_decode(bad[i], strlen(bad[i]), list_cb,
				  &l, &m, &err) == -1,
		    "accepted %s", bad[i]);
		ck_assert_str_eq(err.reason, "BadResponse");
	}
}
END_TEST

/*
 * A page that is hard to split: brackets, braces, commas and escaped
 * quotes and backslashes inside strings, a string ending in a backslash,
 * nested arrays and empty objects in items, items before the metadata
 * and the kind, a key written with an escape, scalars among the items, and
 * blanks everywhere.
 */
static const char tricky[] =
    " {\"apiVersion\" :\"batch/v1\",\n"
    "\"items\"\t:\r\n[ {\"metadata\":{\"name\":\"a]\",\"annotations\":"
    "{\"x\":\"]},[{\\\"\\\\\",\"y\":\"\\\\\",\"items\":\"[\"}},"
    "\"spec\":{\"l\":[[1,[2,{}]],[],{\"a\":[]}],\"e\":{}}} ,"
    "7, \"s]}\" ,null,true,-1.5e3,[{\"metadata\":{\"name\":\"no\"}}],"
    "{\"metadata\":{\"name\":\"b\\\"}\"}}\n],"
    "\"metadata\":{\"resourceVersion\":\"77\",\"continue\":\"c,]\"},"
    "\"kind\":\"JobList\",\"extra\":[\"items\",{\"items\":[1]}],"
    "\"n\":12 , \"t\":false}\n";

/* What a parse gave: the names handed over, meta, and the outcome. */
struct list_out {
	struct listed	     l;
	struct k8s_list_meta m;
	int		     rc;
};

/* Feeds page in pieces of step bytes (0: cut once at split). */
static void
list_feed(const char *page, size_t len, size_t split, size_t step, size_t max,
    struct list_out *o)
{
	struct k8s_list_parser *p = k8s_list_parser_new(max);
	struct k8s_error	err;
	size_t			at = 0, n;

	memset(o, 0, sizeof(*o));
	o->rc = 0;
	while (at < len && o->rc == 0) {
		n = step != 0 ? step : (at < split ? split : len) - at;
		if (n > len - at)
			n = len - at;
		o->rc = k8s_list_parser_feed(p, page + at, n, list_cb, &o->l,
		    &err);
		at += n;
	}
	if (o->rc == 0)
		o->rc = k8s_list_parser_finish(p, &o->m, &err);
	if (o->rc == -1)
		ck_assert_str_eq(err.reason, "BadResponse");
	k8s_list_parser_free(p);
}

static void
list_out_check(const struct list_out *o, const char *how, size_t at)
{
	ck_assert_msg(o->rc == 0, "%s %zu: refused", how, at);
	ck_assert_msg(strcmp(o->l.names, "a],b\"}") == 0, "%s %zu: items %s",
	    how, at, o->l.names);
	/* The kind comes after the items: unknown while they are read. */
	ck_assert_str_eq(o->l.kinds, "-,-");
	ck_assert_str_eq(o->m.kind, "Job");
	ck_assert_str_eq(o->m.api_version, "batch/v1");
	ck_assert_str_eq(o->m.rv, "77");
	ck_assert_str_eq(o->m.cont, "c,]");
}

START_TEST(test_list_parser_splits)
{
	const size_t	len = strlen(tricky);
	struct list_out o;
	size_t		at;

	list_feed(tricky, len, len, 0, 0, &o);
	list_out_check(&o, "whole", len);
	k8s_list_meta_clear(&o.m);
	for (at = 0; at <= len; at++) {
		list_feed(tricky, len, at, 0, 0, &o);
		list_out_check(&o, "cut at", at);
		k8s_list_meta_clear(&o.m);
	}
	for (at = 1; at <= 7; at++) {
		list_feed(tricky, len, 0, at, 0, &o);
		list_out_check(&o, "pieces of", at);
		k8s_list_meta_clear(&o.m);
	}
}
END_TEST

/*
 * The parser holds one value at a time: a page far larger than its limit
 * goes through when each item fits, and an item that does not is refused.
 */
START_TEST(test_list_parser_one_item)
{
	struct buf	page;
	struct list_out o;
	char		item[160];
	int		i;

	buf_init(&page);
	buf_addstr(&page, "{\"kind\":\"PodList\",\"items\":[");
	for (i = 0; i < 200; i++) {
		snprintf(item, sizeof(item),
		    "%s{\"metadata\":{\"name\":\"p%d\"},\"pad\":\"%0100d\"}",
		    i > 0 ? "," : "", i, i);
		buf_addstr(&page, item);
	}
	buf_addstr(&page, "],\"metadata\":{\"resourceVersion\":\"5\"}}");
	ck_assert_uint_gt(page.len, 100 * 200);
	list_feed(page.data, page.len, page.len, 4096, 160, &o);
	ck_assert_int_eq(o.rc, 0);
	ck_assert_int_eq(o.l.n, 200);
	ck_assert_str_eq(o.m.rv, "5");
	k8s_list_meta_clear(&o.m);
	list_feed(page.data, page.len, page.len, 4096, 100, &o);
	ck_assert_int_eq(o.rc, -1);
	ck_assert_int_eq(o.l.n, 0);
	buf_cleanup(&page);
}
END_TEST

/* After a fault the parser refuses more, and finish says so. */
START_TEST(test_list_parser_after_error)
{
	struct k8s_list_parser *p = k8s_list_parser_new(0);
	struct k8s_list_meta	m;
	struct k8s_error	err;
	struct listed		l;

	memset(&l, 0, sizeof(l));
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(k8s_list_parser_feed(p, "{\"items\":[", 10, list_cb,
			     &l, &err),
	    0);
	ck_assert_int_eq(k8s_list_parser_feed(p, "{}, }", 5, list_cb, &l, &err),
	    -1);
	ck_assert_int_eq(l.n, 1);
	ck_assert_ptr_nonnull(strstr(err.text, "byte 14"));
	ck_assert_int_eq(k8s_list_parser_feed(p, "]}", 2, list_cb, &l, &err),
	    -1);
	ck_assert_int_eq(k8s_list_parser_finish(p, &m, &err), -1);
	ck_assert_ptr_null(m.kind);
	k8s_list_parser_free(p);
	/* Trailing bytes after the list are not a list. */
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(k8s_list_decode("{} {}", 5, list_cb, &l, &m, &err),
	    -1);
	ck_assert_int_eq(k8s_list_decode("{}\n", 3, list_cb, &l, &m, &err), 0);
	k8s_list_meta_clear(&m);
}
END_TEST

Suite *
watch_suite(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("parser");

	tcase_add_test(tc, test_watch_every_split);
	tcase_add_test(tc, test_watch_byte_at_a_time);
	tcase_add_test(tc, test_watch_no_newlines);
	tcase_add_loop_test(tc, test_watch_malformed, 0,
	    sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_loop_test(tc, test_watch_feed, 0,
	    sizeof(feeds) / sizeof(feeds[0]));
	tcase_add_test(tc, test_watch_limit_and_stop);
	tcase_add_test(tc, test_list_decode);
	tcase_add_test(tc, test_list_decode_order);
	tcase_add_test(tc, test_list_decode_bad);
	tcase_add_test(tc, test_list_parser_splits);
	tcase_add_test(tc, test_list_parser_one_item);
	tcase_add_test(tc, test_list_parser_after_error);
	suite_add_tcase(s, tc);
	return (s);
}
