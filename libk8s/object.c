/*
 * Borrowed accessors for Kubernetes objects held as jansson trees: paths,
 * names, labels, annotations, finalizers and the "ns/name" key.  Pure; any
 * thread.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

json_t *
k8s_obj_get(const json_t *obj, const char *path)
{
	const char *dot;
	char	    key[256];
	size_t	    n;

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
	return (json_string_value(
	    json_object_get(k8s_obj_get(obj, "metadata.labels"), key)));
}

const char *
k8s_obj_annotation(const json_t *obj, const char *key)
{
	return (json_string_value(
	    json_object_get(k8s_obj_get(obj, "metadata.annotations"), key)));
}

int
k8s_obj_has_finalizer(const json_t *obj, const char *finalizer)
{
	const json_t *v;
	const char   *f;
	size_t	      i;

	json_array_foreach (k8s_obj_get(obj, "metadata.finalizers"), i, v) {
		f = json_string_value(v);
		if (f != NULL && strcmp(f, finalizer) == 0)
			return (1);
	}
	return (0);
}

char *
k8s_obj_key(const json_t *obj, char *key, size_t keylen)
{
	const char *ns = k8s_obj_namespace(obj);
	const char *name = k8s_obj_name(obj);

	if (name == NULL)
		name = "";
	if (ns != NULL && *ns != '\0')
		snprintf(key, keylen, "%s/%s", ns, name);
	else
		snprintf(key, keylen, "%s", name);
	return (key);
}
