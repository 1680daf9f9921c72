/*
 * The list decoder: walks a list response ({"kind":"PodList",
 * "apiVersion":..,"metadata":{..},"items":[..]}) one item at a time, so
 * the largest tree alive is one object's, never the page's.  Each value is
 * decoded by jansson where it starts (JSON_DISABLE_EOF_CHECK tells how far
 * it went); only the punctuation between them is read here.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LIST_FLAGS (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK)

void
k8s_list_meta_clear(struct k8s_list_meta *m)
{
	free(m->kind);
	free(m->api_version);
	free(m->rv);
	free(m->cont);
	memset(m, 0, sizeof(*m));
}

/* Skips blanks; returns the next byte, or 0 at the end. */
static int
list_peek(const char *p, size_t len, size_t *off)
{
	while (*off < len &&
	    (p[*off] == ' ' || p[*off] == '\n' || p[*off] == '\r' ||
		p[*off] == '\t'))
		(*off)++;
	return (*off < len ? (unsigned char)p[*off] : 0);
}

/* Decodes the one JSON value at *off and moves past it. */
static json_t *
list_value(const char *p, size_t len, size_t *off, struct k8s_error *err)
{
	json_error_t jerr;
	json_t	    *v;

	if (list_peek(p, len, off) == 0) {
		error_set(err, 200, "BadResponse",
		    "list: ends at byte %zu "
		    "inside the object",
		    *off);
		return (NULL);
	}
	if ((v = json_loadb(p + *off, len - *off, LIST_FLAGS, &jerr)) == NULL) {
		error_set(err, 200, "BadResponse",
		    "list: invalid JSON "
		    "at byte %zu: %s",
		    *off + (size_t)jerr.position, jerr.text);
		return (NULL);
	}
	*off += (size_t)jerr.position;
	return (v);
}

/* Expects byte c next; -1 with err if it is not there. */
static int
list_expect(const char *p, size_t len, size_t *off, int c,
    struct k8s_error *err)
{
	if (list_peek(p, len, off) != c) {
		error_set(err, 200, "BadResponse",
		    "list: expected '%c' "
		    "at byte %zu",
		    c, *off);
		return (-1);
	}
	(*off)++;
	return (0);
}

/* The items array: each object to cb as soon as it is decoded. */
static int
list_items(const char *p, size_t len, size_t *off, k8s_list_item_cb cb,
    void *arg, const struct k8s_list_meta *meta, struct k8s_error *err)
{
	json_t *v;

	if (list_expect(p, len, off, '[', err) == -1)
		return (-1);
	if (list_peek(p, len, off) == ']') {
		(*off)++;
		return (0);
	}
	for (;;) {
		if ((v = list_value(p, len, off, err)) == NULL)
			return (-1);
		if (json_is_object(v))
			cb(v, meta, arg);
		else
			json_decref(v);
		if (list_peek(p, len, off) == ']') {
			(*off)++;
			return (0);
		}
		if (list_expect(p, len, off, ',', err) == -1)
			return (-1);
	}
}

/* A member other than items: the type and list metadata are kept. */
static void
list_member(const char *key, const json_t *v, struct k8s_list_meta *m)
{
	const char *s;
	size_t	    n;

	if (strcmp(key, "kind") == 0 && (s = json_string_value(v)) != NULL &&
	    (n = strlen(s)) > 4 && strcmp(s + n - 4, "List") == 0) {
		free(m->kind);
		m->kind = xstrndup(s, n - 4);
	} else if (strcmp(key, "apiVersion") == 0 && json_is_string(v)) {
		free(m->api_version);
		m->api_version = xstrdup(json_string_value(v));
	} else if (strcmp(key, "metadata") == 0) {
		s = k8s_obj_str(v, "resourceVersion");
		free(m->rv);
		m->rv = s != NULL ? xstrdup(s) : NULL;
		s = k8s_obj_str(v, "continue");
		free(m->cont);
		m->cont = s != NULL && *s != '\0' ? xstrdup(s) : NULL;
	}
}

int
k8s_list_decode(const char *p, size_t len, k8s_list_item_cb cb, void *arg,
    struct k8s_list_meta *meta, struct k8s_error *err)
{
	size_t	off = 0;
	json_t *k = NULL, *v;

	k8s_list_meta_clear(meta);
	if (list_expect(p, len, &off, '{', err) == -1)
		goto fail;
	if (list_peek(p, len, &off) == '}')
		return (0);
	for (;;) {
		if ((k = list_value(p, len, &off, err)) == NULL)
			goto fail;
		if (!json_is_string(k)) {
			error_set(err, 200, "BadResponse",
			    "list: a key is "
			    "not a string at byte %zu",
			    off);
			goto fail;
		}
		if (list_expect(p, len, &off, ':', err) == -1)
			goto fail;
		if (strcmp(json_string_value(k), "items") == 0 &&
		    list_peek(p, len, &off) == '[') {
			if (list_items(p, len, &off, cb, arg, meta, err) == -1)
				goto fail;
		} else {
			if ((v = list_value(p, len, &off, err)) == NULL)
				goto fail;
			list_member(json_string_value(k), v, meta);
			json_decref(v);
		}
		json_decref(k);
		k = NULL;
		if (list_peek(p, len, &off) == '}')
			return (0);
		if (list_expect(p, len, &off, ',', err) == -1)
			goto fail;
	}
fail:
	json_decref(k);
	k8s_list_meta_clear(meta);
	return (-1);
}
