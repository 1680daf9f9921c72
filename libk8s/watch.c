/*
 * The streaming parser for the JSON watch protocol: a sequence of
 * {"type": ..., "object": {...}} documents, normally one per line but
 * accepted with any whitespace (or none) between them and split across any
 * chunk boundary.  It scans bytes once, tracking string and escape state, so
 * feeding is linear in the input.  Pure: it runs on the informer's thread and
 * in the unit tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "internal.h"

#define WATCH_MAX_DEFAULT (64u * 1024 * 1024)

struct k8s_watch_parser {
	struct buf b; /* bytes of the current event */
	size_t	   max;
	int	   depth;
	int	   in_str;
	int	   esc;
};

const char *
k8s_watch_type_name(enum k8s_watch_type t)
{
	switch (t) {
	case K8S_WATCH_ADDED:
		return ("ADDED");
	case K8S_WATCH_MODIFIED:
		return ("MODIFIED");
	case K8S_WATCH_DELETED:
		return ("DELETED");
	case K8S_WATCH_BOOKMARK:
		return ("BOOKMARK");
	case K8S_WATCH_ERROR:
		return ("ERROR");
	case K8S_WATCH_SYNCED:
		return ("SYNCED");
	}
	return ("UNKNOWN");
}

struct k8s_watch_parser *
k8s_watch_parser_new(size_t max)
{
	struct k8s_watch_parser *p;

	p = xcalloc(1, sizeof(*p));
	buf_init(&p->b);
	p->max = max != 0 ? max : WATCH_MAX_DEFAULT;
	return (p);
}

void
k8s_watch_parser_free(struct k8s_watch_parser *p)
{
	if (p == NULL)
		return;
	buf_cleanup(&p->b);
	free(p);
}

size_t
k8s_watch_parser_pending(const struct k8s_watch_parser *p)
{
	return (p->b.len);
}

/* Decodes one complete event document and hands it to the callback. */
static int
watch_emit(const char *doc, size_t len, k8s_watch_cb cb, void *arg,
    struct k8s_error *err)
{
	json_t		   *ev, *obj;
	json_error_t	    jerr;
	const char	   *type;
	enum k8s_watch_type t;

	if ((ev = json_loadb(doc, len, 0, &jerr)) == NULL) {
		error_set(err, 0, "BadWatchEvent",
		    "malformed watch event at byte %d: %s", jerr.position,
		    jerr.text);
		return (-1);
	}
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	if (type == NULL || !json_is_object(obj)) {
		error_set(err, 0, "BadWatchEvent",
		    "watch event without type or object");
		json_decref(ev);
		return (-1);
	}
	if (strcmp(type, "ADDED") == 0)
		t = K8S_WATCH_ADDED;
	else if (strcmp(type, "MODIFIED") == 0)
		t = K8S_WATCH_MODIFIED;
	else if (strcmp(type, "DELETED") == 0)
		t = K8S_WATCH_DELETED;
	else if (strcmp(type, "BOOKMARK") == 0)
		t = K8S_WATCH_BOOKMARK;
	else if (strcmp(type, "ERROR") == 0)
		t = K8S_WATCH_ERROR;
	else {
		error_set(err, 0, "BadWatchEvent",
		    "unknown watch event type \"%.32s\"", type);
		json_decref(ev);
		return (-1);
	}
	json_incref(obj);
	json_decref(ev);
	if (err != NULL)
		err->reason[0] = '\0';
	if (cb(t, obj, arg) == -1) {
		/* Keep what the callback reported (an in-stream ERROR). */
		if (err != NULL && err->reason[0] == '\0')
			error_set(err, 0, "Stopped", "stopped by callback");
		return (-1);
	}
	return (0);
}

int
k8s_watch_parser_feed(struct k8s_watch_parser *p, const char *data, size_t len,
    k8s_watch_cb cb, void *arg, struct k8s_error *err)
{
	size_t i, start = 0;
	char   ch;
	int    rc;

	for (i = 0; i < len; i++) {
		ch = data[i];
		if (p->depth == 0) {
			/* Between documents only whitespace may appear. */
			if (ch == ' ' || ch == '\n' || ch == '\r' ||
			    ch == '\t') {
				start = i + 1;
				continue;
			}
			if (ch != '{') {
				error_set(err, 0, "BadWatchEvent",
				    "unexpected byte 0x%02x between watch "
				    "events",
				    (unsigned char)ch);
				goto fail;
			}
		}
		if (p->b.len + (i - start) >= p->max) {
			error_set(err, 0, "BadWatchEvent",
			    "watch event larger than %zu bytes", p->max);
			goto fail;
		}
		if (p->in_str) {
			if (p->esc)
				p->esc = 0;
			else if (ch == '\\')
				p->esc = 1;
			else if (ch == '"')
				p->in_str = 0;
			continue;
		}
		if (ch == '"')
			p->in_str = 1;
		else if (ch == '{' || ch == '[')
			p->depth++;
		else if ((ch == '}' || ch == ']') && --p->depth == 0) {
			buf_add(&p->b, data + start, i + 1 - start);
			start = i + 1;
			rc = watch_emit(p->b.data, p->b.len, cb, arg, err);
			buf_reset(&p->b);
			if (rc == -1)
				goto fail;
		}
	}
	if (p->depth > 0 && start < len)
		buf_add(&p->b, data + start, len - start);
	return (0);
fail:
	buf_reset(&p->b);
	p->depth = p->in_str = p->esc = 0;
	return (-1);
}
