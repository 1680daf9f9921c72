/*
 * Verb helpers over k8s_request, and the Binding subresource.  Runs on the
 * calling thread with that thread's client.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

int
k8s_get(struct k8s_client *c, const char *path, json_t **out,
    struct k8s_error *err)
{
	return (k8s_request(c, "GET", path, NULL, NULL, out, err));
}

int
k8s_create(struct k8s_client *c, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err)
{
	return (
	    k8s_request(c, "POST", path, "application/json", body, out, err));
}

int
k8s_patch(struct k8s_client *c, const char *path, enum k8s_patch type,
    const json_t *patch, json_t **out, struct k8s_error *err)
{
	const char *ctype;

	switch (type) {
	case K8S_PATCH_STRATEGIC:
		ctype = "application/strategic-merge-patch+json";
		break;
	case K8S_PATCH_JSON:
		ctype = "application/json-patch+json";
		break;
	case K8S_PATCH_MERGE:
	default:
		ctype = "application/merge-patch+json";
		break;
	}
	return (k8s_request(c, "PATCH", path, ctype, patch, out, err));
}

int
k8s_delete(struct k8s_client *c, const char *path, const json_t *opts,
    struct k8s_error *err)
{
	return (k8s_request(c, "DELETE", path, NULL, opts, NULL, err));
}

int
k8s_pod_bind(struct k8s_client *c, const char *ns, const char *name,
    const char *uid, const char *node, const json_t *annotations,
    struct k8s_error *err)
{
	json_t *b, *meta;
	char   *path;
	int	rc;

	meta = json_pack("{s:s, s:s}", "name", name, "namespace", ns);
	/* The UID makes the API server refuse to bind a recreated pod. */
	if (uid != NULL)
		json_object_set_new(meta, "uid", json_string(uid));
	/* The API server copies a Binding's annotations onto the pod. */
	if (annotations != NULL && json_object_size(annotations) > 0)
		json_object_set(meta, "annotations",
		    (json_t *)(uintptr_t)annotations);
	b = json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
	    "kind", "Binding", "metadata", meta, "target", "apiVersion", "v1",
	    "kind", "Node", "name", node);
	xasprintf(&path, "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
	rc = k8s_create(c, path, b, NULL, err);
	free(path);
	json_decref(b);
	return (rc);
}

int
k8s_update(struct k8s_client *c, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err)
{
	return (
	    k8s_request(c, "PUT", path, "application/json", body, out, err));
}
