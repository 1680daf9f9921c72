/*
 * AdmissionReview v1 handling for pods, pure: request body in, response
 * AdmissionReview (or a 400 reason) out.  The mutation is an idempotent
 * JSON Patch: a second pass over its own output adds nothing.  Runs on
 * libmicrohttpd's thread, inside the request; it makes no API or Slurm
 * call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "k8s.h"
#include "xmalloc.h"
#include "policy.h"
#include "admission.h"

/*
 * The pod as the policy reads it: on CREATE the object may lack its
 * namespace and (with generateName) its name, so both come from the
 * request.  A new reference sharing the object's other members.
 */
static json_t *
review_pod_view(const json_t *req, const json_t *obj)
{
	json_t	   *pod, *md;
	const char *ns, *name, *gen;
	char	   *tmp;

	pod = json_copy((json_t *)(uintptr_t)obj);
	md = json_object_get(obj, "metadata");
	md = md != NULL ? json_copy(md) : json_object();
	ns = json_string_value(json_object_get(req, "namespace"));
	if (json_object_get(md, "namespace") == NULL && ns != NULL)
		json_object_set_new(md, "namespace", json_string(ns));
	name = json_string_value(json_object_get(md, "name"));
	if (name == NULL || *name == '\0') {
		name = json_string_value(json_object_get(req, "name"));
		gen = json_string_value(json_object_get(md, "generateName"));
		if (name != NULL && *name != '\0')
			json_object_set_new(md, "name", json_string(name));
		else {
			/* Named by the API server after admission. */
			xasprintf(&tmp, "%s*", gen != NULL ? gen : "");
			json_object_set_new(md, "name", json_string(tmp));
			free(tmp);
		}
	}
	json_object_set_new(pod, "metadata", md);
	return (pod);
}

/* The response AdmissionReview for uid. */
static json_t *
review_response(const char *uid, const struct review_result *r)
{
	json_t *resp;
	char   *dump, *enc;

	resp = json_pack("{s:s, s:b}", "uid", uid, "allowed",
	    r->denied == NULL);
	if (r->denied != NULL)
		json_object_set_new(resp, "status",
		    json_pack("{s:s, s:s, "
			      "s:s, s:i}",
			"status", "Failure", "reason", "Forbidden", "message",
			r->denied, "code", 403));
	else if (r->patch != NULL && json_array_size(r->patch) > 0) {
		dump = json_dumps(r->patch, JSON_COMPACT);
		enc = k8s_base64_encode(dump, strlen(dump));
		json_object_set_new(resp, "patchType",
		    json_string("JSONPatch"));
		json_object_set_new(resp, "patch", json_string(enc));
		free(dump);
		free(enc);
	}
	if (r->warnings != NULL)
		json_object_set(resp, "warnings", r->warnings);
	return (
	    json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1",
		"kind", "AdmissionReview", "response", resp));
}

int
review_handle(const char *body, size_t len, enum review_mode mode,
    const struct review_conf *conf, json_t **out, char *err, size_t errlen)
{
	struct review_result r;
	json_t		    *rev, *req, *obj, *pod;
	json_error_t	     jerr;
	const char	    *uid, *kind, *op, *av, *group;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	if (len > REVIEW_MAX_BODY) {
		snprintf(err, errlen, "request body larger than %d bytes",
		    REVIEW_MAX_BODY);
		return (400);
	}
	if ((rev = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		snprintf(err, errlen, "body is not JSON: %s (at byte %d)",
		    jerr.text, jerr.position);
		return (400);
	}
	kind = json_string_value(json_object_get(rev, "kind"));
	av = json_string_value(json_object_get(rev, "apiVersion"));
	req = json_object_get(rev, "request");
	uid = json_string_value(json_object_get(req, "uid"));
	if (kind == NULL || strcmp(kind, "AdmissionReview") != 0 ||
	    av == NULL || strcmp(av, "admission.k8s.io/v1") != 0) {
		snprintf(err, errlen,
		    "expected kind AdmissionReview, "
		    "apiVersion admission.k8s.io/v1");
		goto bad;
	}
	if (!json_is_object(req) || uid == NULL || *uid == '\0') {
		snprintf(err, errlen, "request.uid is missing");
		goto bad;
	}
	obj = json_object_get(req, "object");
	op = json_string_value(json_object_get(req, "operation"));
	if (op == NULL ||
	    (strcmp(op, "CREATE") != 0 && strcmp(op, "UPDATE") != 0 &&
		strcmp(op, "DELETE") != 0 && strcmp(op, "CONNECT") != 0)) {
		snprintf(err, errlen,
		    "request.operation must be CREATE, "
		    "UPDATE, DELETE or CONNECT");
		goto bad;
	}
	if (strcmp(op, "DELETE") == 0 || strcmp(op, "CONNECT") == 0) {
		/* They carry no pod to change or check: nothing to do. */
		*out = review_response(uid, &r);
		json_decref(rev);
		return (200);
	}
	if (!json_is_object(obj)) {
		snprintf(err, errlen,
		    "request.object must be the pod (an "
		    "object) for %s",
		    op);
		goto bad;
	}
	kind = k8s_obj_str(req, "kind.kind");
	group = k8s_obj_str(req, "kind.group");
	if (kind != NULL && group != NULL &&
	    (strcmp(kind, "PodGroup") == 0 || strcmp(kind, "Workload") == 0) &&
	    strcmp(group, "scheduling.k8s.io") == 0) {
		/* Kubernetes' own gangs: checked, never changed. */
		if (mode == REVIEW_VALIDATE && strcmp(kind, "PodGroup") == 0)
			validate_podgroup(obj, op, conf, &r);
		if (mode == REVIEW_VALIDATE && r.denied == NULL)
			validate_inherited(obj,
			    json_object_get(req, "oldObject"), kind, conf, &r);
	} else if (kind == NULL || strcmp(kind, "Pod") != 0) {
		snprintf(err, errlen,
		    "request.kind must be Pod, or a scheduling.k8s.io "
		    "PodGroup or Workload");
		goto bad;
	} else {
		pod = review_pod_view(req, obj);
		if (mode == REVIEW_MUTATE)
			mutate_pod(pod, op, conf, &r);
		else if (mode == REVIEW_GUARD)
			guard_pod(req, pod, conf, &r);
		else
			validate_pod(req, pod, conf, &r);
		json_decref(pod);
	}
	*out = review_response(uid, &r);
	json_decref(r.patch);
	json_decref(r.warnings);
	free(r.denied);
	json_decref(rev);
	return (200);
bad:
	json_decref(rev);
	return (400);
}
