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

#include "k8s.h"
#include "xmalloc.h"
#include "admission.h"

#define TOL_KEY		"slinky.slurm.net/managed-node"
#define TOL_VALUE	"slurm-bridge"
#define TOL_EFFECT	"NoExecute"
#define ANN_GRES	"slurmjob.slinky.slurm.net/gres"

/* JSON Pointer escaping of one path token (RFC 6901): ~ -> ~0, / -> ~1. */
char *
review_pointer_escape(const char *token)
{
	struct buf	b;

	buf_init(&b);
	for (; *token != '\0'; token++) {
		if (*token == '~')
			buf_addstr(&b, "~0");
		else if (*token == '/')
			buf_addstr(&b, "~1");
		else
			buf_add(&b, token, 1);
	}
	return (buf_release(&b));
}

static void
patch_op(json_t *patch, const char *op, const char *path, json_t *value)
{
	json_t	*o = json_pack("{s:s, s:s}", "op", op, "path", path);

	if (value != NULL)
		json_object_set_new(o, "value", value);
	json_array_append_new(patch, o);
}

/* Adds key=value under /metadata/<map>, creating the map if needed. */
static void
patch_meta(json_t *patch, const json_t *pod, const char *map,
    const char *key, const char *value)
{
	char	*esc, *path;

	if (json_object_get(k8s_obj_get(pod, "metadata"), map) == NULL) {
		xasprintf(&path, "/metadata/%s", map);
		patch_op(patch, "add", path, json_pack("{s:s}", key, value));
		free(path);
		return;
	}
	esc = review_pointer_escape(key);
	xasprintf(&path, "/metadata/%s/%s", map, esc);
	patch_op(patch, "add", path, json_string(value));
	free(esc);
	free(path);
}

/* GPUs the pod asks for: the sum of its containers' GPU limits. */
static int64_t
review_gpus(const json_t *pod)
{
	static const char *const res[] = { "nvidia.com/gpu", "amd.com/gpu" };
	const json_t	*c;
	const char	*v;
	int64_t		 n, total = 0;
	size_t		 i, r;

	json_array_foreach(k8s_obj_get(pod, "spec.containers"), i, c) {
		for (r = 0; r < sizeof(res) / sizeof(res[0]); r++) {
			v = json_string_value(json_object_get(k8s_obj_get(c,
			    "resources.limits"), res[r]));
			if (v != NULL && k8s_quantity_value(v, &n) == 0 &&
			    n > 0 && total <= INT32_MAX)
				total += n;
		}
	}
	return (total);
}

json_t *
review_mutate(const json_t *pod, const char *operation,
    const struct review_conf *conf)
{
	json_t		*patch = json_array(), *tol;
	const char	*sched, *node;
	char		 gres[64];
	int64_t		 gpus;

	sched = k8s_obj_str(pod, "spec.schedulerName");
	if (sched == NULL)
		patch_op(patch, "add", "/spec/schedulerName",
		    json_string(conf->scheduler_name));
	else if (strcmp(sched, "default-scheduler") == 0)
		patch_op(patch, "replace", "/spec/schedulerName",
		    json_string(conf->scheduler_name));
	/* A preset node would bypass Slurm. */
	node = k8s_obj_str(pod, "spec.nodeName");
	if (strcmp(operation, "CREATE") == 0 && node != NULL && *node != '\0')
		patch_op(patch, "remove", "/spec/nodeName", NULL);
	if (!k8s_pod_tolerates(pod, TOL_KEY, TOL_VALUE, TOL_EFFECT)) {
		tol = json_pack("{s:s, s:s, s:s}", "key", TOL_KEY, "operator",
		    "Exists", "effect", TOL_EFFECT);
		if (k8s_obj_get(pod, "spec.tolerations") == NULL)
			patch_op(patch, "add", "/spec/tolerations",
			    json_pack("[o]", tol));
		else
			patch_op(patch, "add", "/spec/tolerations/-", tol);
	}
	/* GPU limits become the gres annotation, unless the user wrote one. */
	if (k8s_obj_annotation(pod, ANN_GRES) == NULL &&
	    (gpus = review_gpus(pod)) > 0) {
		snprintf(gres, sizeof(gres), "gpu:%lld", (long long)gpus);
		patch_meta(patch, pod, "annotations", ANN_GRES, gres);
	}
	return (patch);
}

/* A response AdmissionReview for uid. */
static json_t *
review_response(const char *uid, int allowed, const char *msg)
{
	json_t	*resp;

	resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", allowed);
	if (msg != NULL)
		json_object_set_new(resp, "status", json_pack("{s:s, s:i}",
		    "message", msg, "code", 403));
	return (json_pack("{s:s, s:s, s:o}", "apiVersion",
	    "admission.k8s.io/v1", "kind", "AdmissionReview", "response",
	    resp));
}

int
review_handle(const char *body, size_t len, enum review_mode mode,
    const struct review_conf *conf, json_t **out, char *err, size_t errlen)
{
	json_t		*rev, *req, *pod, *patch, *resp;
	json_error_t	 jerr;
	const char	*uid, *kind, *op, *av;
	char		*dump, *enc;

	*out = NULL;
	if (len > REVIEW_MAX_BODY) {
		snprintf(err, errlen, "request body larger than %d bytes",
		    REVIEW_MAX_BODY);
		return (400);
	}
	if ((rev = json_loadb(body, len, 0, &jerr)) == NULL) {
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
		snprintf(err, errlen, "expected kind AdmissionReview, "
		    "apiVersion admission.k8s.io/v1");
		goto bad;
	}
	if (!json_is_object(req) || uid == NULL || *uid == '\0') {
		snprintf(err, errlen, "request.uid is missing");
		goto bad;
	}
	pod = json_object_get(req, "object");
	op = json_string_value(json_object_get(req, "operation"));
	if (!json_is_object(pod) || op == NULL) {
		/* DELETE and CONNECT carry no object: nothing to do. */
		*out = review_response(uid, 1, NULL);
		json_decref(rev);
		return (200);
	}
	kind = k8s_obj_str(req, "kind.kind");
	if (kind == NULL || strcmp(kind, "Pod") != 0) {
		snprintf(err, errlen, "request.kind must be Pod");
		goto bad;
	}
	if (mode == REVIEW_MUTATE) {
		patch = review_mutate(pod, op, conf);
		resp = review_response(uid, 1, NULL);
		if (json_array_size(patch) > 0) {
			dump = json_dumps(patch, JSON_COMPACT);
			enc = k8s_base64_encode(dump, strlen(dump));
			json_object_set_new(json_object_get(resp, "response"),
			    "patchType", json_string("JSONPatch"));
			json_object_set_new(json_object_get(resp, "response"),
			    "patch", json_string(enc));
			free(dump);
			free(enc);
		}
		json_decref(patch);
		*out = resp;
	} else
		*out = review_response(uid, 1, NULL);
	json_decref(rev);
	return (200);
 bad:
	json_decref(rev);
	return (400);
}
