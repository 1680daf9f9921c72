/*
 * libFuzzer target: the list parser (libk8s/list.c).  The first byte picks
 * where the rest is cut into two feeds.  Fed in two pieces, a page must
 * give what it gives fed whole: the same items, in order, the same
 * metadata and the same outcome; and never crash, leak, or hand over an
 * item that is not a JSON object.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_cb(json_t *item, const struct k8s_list_meta *meta, void *arg)
{
	(void)meta;
	if (!json_is_object(item))
		abort();
	json_array_append_new(arg, item);
}

/* The page in up to two feeds: the outcome, items in out, meta in m. */
static int
fuzz_parse(const char *data, size_t size, size_t cut, json_t *out,
    struct k8s_list_meta *m)
{
	struct k8s_list_parser *p = k8s_list_parser_new(1 << 20);
	struct k8s_error	err;
	int			rc;

	memset(m, 0, sizeof(*m));
	rc = k8s_list_parser_feed(p, data, cut, fuzz_cb, out, &err);
	if (rc == 0)
		rc = k8s_list_parser_feed(p, data + cut, size - cut, fuzz_cb,
		    out, &err);
	if (rc == 0)
		rc = k8s_list_parser_finish(p, m, &err);
	k8s_list_parser_free(p);
	return (rc);
}

static int
fuzz_same(const char *a, const char *b)
{
	return ((a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_list_meta m1, m2;
	json_t		    *whole, *split;
	size_t		     cut;
	int		     rc1, rc2;

	if (size == 0)
		return (0);
	cut = data[0] % size;
	data++;
	size--;
	if (cut > size)
		cut = size;
	whole = json_array();
	split = json_array();
	rc1 = fuzz_parse((const char *)data, size, size, whole, &m1);
	rc2 = fuzz_parse((const char *)data, size, cut, split, &m2);
	if (rc1 != rc2 || !json_equal(whole, split) ||
	    !fuzz_same(m1.kind, m2.kind) || !fuzz_same(m1.rv, m2.rv) ||
	    !fuzz_same(m1.cont, m2.cont) ||
	    !fuzz_same(m1.api_version, m2.api_version))
		abort();
	k8s_list_meta_clear(&m1);
	k8s_list_meta_clear(&m2);
	json_decref(whole);
	json_decref(split);
	return (0);
}
