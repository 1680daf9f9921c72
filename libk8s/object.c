/*
 * Borrowed accessors for Kubernetes objects held as jansson trees, and URL
 * encoding for selectors.  Pure; any thread.
 */
#include <sys/time.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "k8s_private.h"

json_t *
k8s_obj_get(const json_t *obj, const char *path)
{
	const char	*dot;
	char		 key[256];
	size_t		 n;

	while (obj != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot != NULL ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return (NULL);
		memcpy(key, path, n);
		key[n] = '\0';
		obj = json_object_get(obj, key);
		path += n;
		if (*path == '.')
			path++;
	}
	return ((json_t *)(uintptr_t)obj);
}

const char *
k8s_obj_str(const json_t *obj, const char *path)
{
	return (json_string_value(k8s_obj_get(obj, path)));
}

const char *
k8s_obj_name(const json_t *obj)
{
	return (k8s_obj_str(obj, "metadata.name"));
}

const char *
k8s_obj_namespace(const json_t *obj)
{
	return (k8s_obj_str(obj, "metadata.namespace"));
}

const char *
k8s_obj_uid(const json_t *obj)
{
	return (k8s_obj_str(obj, "metadata.uid"));
}

/* Label and annotation keys contain dots, so they are looked up directly. */
const char *
k8s_obj_label(const json_t *obj, const char *key)
{
	return (json_string_value(json_object_get(k8s_obj_get(obj,
	    "metadata.labels"), key)));
}

const char *
k8s_obj_annotation(const json_t *obj, const char *key)
{
	return (json_string_value(json_object_get(k8s_obj_get(obj,
	    "metadata.annotations"), key)));
}

int
k8s_obj_has_finalizer(const json_t *obj, const char *finalizer)
{
	const json_t	*v;
	const char	*f;
	size_t		 i;

	json_array_foreach(k8s_obj_get(obj, "metadata.finalizers"), i, v) {
		f = json_string_value(v);
		if (f != NULL && strcmp(f, finalizer) == 0)
			return (1);
	}
	return (0);
}

char *
k8s_obj_key(const json_t *obj, char *key, size_t keylen)
{
	const char	*ns = k8s_obj_namespace(obj);
	const char	*name = k8s_obj_name(obj);

	if (name == NULL)
		name = "";
	if (ns != NULL && *ns != '\0')
		snprintf(key, keylen, "%s/%s", ns, name);
	else
		snprintf(key, keylen, "%s", name);
	return (key);
}

char *
k8s_urlencode(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	struct buf		 b;
	unsigned char		 ch;

	buf_init(&b);
	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~", ch) != NULL) {
			buf_add(&b, s, 1);
		} else {
			char	 enc[3] = { '%', hex[ch >> 4], hex[ch & 15] };
			buf_add(&b, enc, 3);
		}
	}
	return (buf_release(&b));
}

char *
k8s_microtime(char *buf, size_t len, const struct timeval *when)
{
	struct timeval	tv;
	struct tm	tm;

	if (when != NULL)
		tv = *when;
	else
		gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)tv.tv_usec);
	return (buf);
}

int
k8s_pod_tolerates(const json_t *pod, const char *key, const char *value,
    const char *effect)
{
	const json_t	*t;
	const char	*tk, *op, *tv, *te;
	size_t		 i;

	json_array_foreach(k8s_obj_get(pod, "spec.tolerations"), i, t) {
		tk = json_string_value(json_object_get(t, "key"));
		op = json_string_value(json_object_get(t, "operator"));
		tv = json_string_value(json_object_get(t, "value"));
		te = json_string_value(json_object_get(t, "effect"));
		/* An empty effect tolerates every effect. */
		if (te != NULL && *te != '\0' && strcmp(te, effect) != 0)
			continue;
		if (op != NULL && strcmp(op, "Exists") == 0) {
			/* An empty key with Exists tolerates every taint. */
			if (tk == NULL || *tk == '\0' || strcmp(tk, key) == 0)
				return (1);
			continue;
		}
		/* Equal is the default operator. */
		if (tk != NULL && strcmp(tk, key) == 0 && tv != NULL &&
		    strcmp(tv, value) == 0)
			return (1);
	}
	return (0);
}

char *
k8s_base64_encode(const void *data, size_t len)
{
	static const char	 tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char	*in = data;
	struct buf		 out;
	unsigned int		 v;
	size_t			 i;
	char			 q[4];

	buf_init(&out);
	for (i = 0; i < len; i += 3) {
		v = (unsigned int)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned int)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		q[0] = tab[(v >> 18) & 63];
		q[1] = tab[(v >> 12) & 63];
		q[2] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		q[3] = i + 2 < len ? tab[v & 63] : '=';
		buf_add(&out, q, 4);
	}
	return (buf_release(&out));
}

/* One matchExpressions entry: 1, 0, or -1 when malformed. */
static int
selector_expr(const json_t *x, const json_t *labels)
{
	const char	*key = json_string_value(json_object_get(x, "key"));
	const char	*op = json_string_value(json_object_get(x, "operator"));
	const json_t	*values = json_object_get(x, "values"), *v;
	const char	*have;
	size_t		 i;
	int		 in = 0;

	if (key == NULL || op == NULL)
		return (-1);
	have = json_string_value(json_object_get(labels, key));
	if (strcmp(op, "Exists") == 0)
		return (have != NULL);
	if (strcmp(op, "DoesNotExist") == 0)
		return (have == NULL);
	if (!json_is_array(values) || json_array_size(values) == 0)
		return (-1);
	json_array_foreach(values, i, v)
		if (have != NULL && json_is_string(v) &&
		    strcmp(json_string_value(v), have) == 0)
			in = 1;
	if (strcmp(op, "In") == 0)
		return (in);
	if (strcmp(op, "NotIn") == 0)
		return (!in);
	return (-1);
}

int
k8s_selector_matches(const json_t *selector, const json_t *labels)
{
	const json_t	*v, *x;
	const char	*key, *have;
	size_t		 i;
	int		 rc, match = 1;

	if (!json_is_object(selector))
		return (-1);
	/*
	 * Every entry is checked even after a mismatch, so that a malformed
	 * selector is -1 whatever the labels (config.c validates with none).
	 */
	json_object_foreach((json_t *)(uintptr_t)json_object_get(selector,
	    "matchLabels"), key, v) {
		have = json_string_value(json_object_get(labels, key));
		if (!json_is_string(v))
			return (-1);
		if (have == NULL || strcmp(have, json_string_value(v)) != 0)
			match = 0;
	}
	json_array_foreach(json_object_get(selector, "matchExpressions"), i,
	    x) {
		if ((rc = selector_expr(x, labels)) == -1)
			return (-1);
		if (rc == 0)
			match = 0;
	}
	return (match);
}
