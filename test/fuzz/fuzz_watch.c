/*
 * libFuzzer target: the watch-stream parser.  The first byte picks where the
 * rest is split into two feeds, so chunk boundaries are fuzzed too.  The
 * parser must never crash, leak, or hand out an event that is not a JSON
 * object.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
fuzz_cb(enum k8s_watch_type t, json_t *obj, void *arg)
{
	(void)t;
	(void)arg;
	if (!json_is_object(obj))
		abort();
	json_decref(obj);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_watch_parser *p;
	struct k8s_error	 err;
	size_t			 cut;

	if (size == 0)
		return (0);
	cut = data[0] % size;
	data++;
	size--;
	if (cut > size)
		cut = size;
	p = k8s_watch_parser_new(1 << 20);
	if (k8s_watch_parser_feed(p, (const char *)data, cut, fuzz_cb, NULL,
		&err) == 0)
		(void)k8s_watch_parser_feed(p, (const char *)data + cut,
		    size - cut, fuzz_cb, NULL, &err);
	k8s_watch_parser_free(p);
	return (0);
}
