/*
 * --webhook-configuration NAME: caBundle of the webhook configurations
 * NAME follows the CA this webhook serves with (ca.crt of its TLS Secret,
 * mounted beside tls.crt).  So an install needs nothing to copy the CA
 * into the configurations, and a new CA (--issue-certs after the CA's
 * renewal) reaches the API server when the kubelet updates the files.
 *
 * One JSON patch per configuration, adding caBundle to each webhook whose
 * value differs, with the configuration's resourceVersion as a test, so a
 * concurrent change (the other replica, an upgrade) makes it retry rather
 * than patch the wrong webhook.  Main's thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "httpd.h"
#include "admission.h"

struct cabundle {
	struct k8s_client *client;
	char		  *name;
	char		  *ca_file;
	char *synced; /* the CA file's content at the last good sync */
};

static const char *const cabundle_kinds[] = {
	"mutatingwebhookconfigurations",
	"validatingwebhookconfigurations",
};

struct cabundle *
cabundle_new(const struct k8s_config *kconf, const char *name,
    const char *ca_file)
{
	struct cabundle *cb = xcalloc(1, sizeof(*cb));
	struct k8s_error err;

	if ((cb->client = k8s_client_new(kconf, &err)) == NULL) {
		log_warnx("caBundle: %s", err.text);
		free(cb);
		return (NULL);
	}
	cb->name = xstrdup(name);
	cb->ca_file = xstrdup(ca_file);
	return (cb);
}

void
cabundle_free(struct cabundle *cb)
{
	if (cb == NULL)
		return;
	k8s_client_free(cb->client);
	free(cb->name);
	free(cb->ca_file);
	free(cb->synced);
	free(cb);
}

/* Makes configuration kind/name carry b64 in every webhook: 0 or -1. */
static int
cabundle_patch(struct cabundle *cb, const char *kind, const char *b64)
{
	struct k8s_error err;
	json_t		*obj = NULL, *ops = json_array(), *hook;
	const char	*have, *rv;
	char		 path[512], p[128];
	size_t		 i;
	int		 rc = -1;

	snprintf(path, sizeof(path),
	    "/apis/admissionregistration.k8s.io/v1/%s/%s", kind, cb->name);
	if (k8s_get(cb->client, path, &obj, &err) == -1) {
		log_warnx("caBundle: get %s/%s: %ld %s: %s", kind, cb->name,
		    err.status, err.reason, err.text);
		/* Not there (yet): nothing to keep; looked at again when forced. */
		if (err.status == 404)
			rc = 0;
		goto out;
	}
	rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
	    "resourceVersion"));
	json_array_append_new(ops,
	    json_pack("{s:s,s:s,s:s}", "op", "test", "path",
		"/metadata/resourceVersion", "value", rv != NULL ? rv : ""));
	json_array_foreach (json_object_get(obj, "webhooks"), i, hook) {
		have = json_string_value(
		    json_object_get(json_object_get(hook, "clientConfig"),
			"caBundle"));
		if (have != NULL && strcmp(have, b64) == 0)
			continue;
		snprintf(p, sizeof(p), "/webhooks/%zu/clientConfig/caBundle",
		    i);
		json_array_append_new(ops,
		    json_pack("{s:s,s:s,s:s}", "op", "add", "path", p, "value",
			b64));
	}
	if (json_array_size(ops) == 1) {
		rc = 0;
		goto out;
	}
	if (k8s_patch(cb->client, path, K8S_PATCH_JSON, ops, NULL, &err) ==
	    -1) {
		log_warnx("caBundle: patch %s/%s: %ld %s: %s", kind, cb->name,
		    err.status, err.reason, err.text);
		goto out;
	}
	log_info("caBundle: %s/%s: %zu webhooks now trust %s", kind, cb->name,
	    json_array_size(ops) - 1, cb->ca_file);
	rc = 0;
out:
	json_decref(obj);
	json_decref(ops);
	return (rc);
}

int
cabundle_sync(struct cabundle *cb, int force)
{
	char  *ca, *b64;
	size_t i;
	int    rc = 0;

	if ((ca = httpd_read_file(cb->ca_file, HTTPD_MAX_PEM)) == NULL) {
		log_warnx("caBundle: cannot read %s", cb->ca_file);
		return (-1);
	}
	/* An empty or broken file would make the API server trust nothing. */
	if (strstr(ca, "-----BEGIN CERTIFICATE-----") == NULL) {
		log_warnx(
		    "caBundle: %s holds no PEM certificate; caBundle left "
		    "as it is",
		    cb->ca_file);
		free(ca);
		return (-1);
	}
	if (!force && cb->synced != NULL && strcmp(cb->synced, ca) == 0) {
		free(ca);
		return (0);
	}
	b64 = k8s_base64_encode(ca, strlen(ca));
	for (i = 0; i < sizeof(cabundle_kinds) / sizeof(cabundle_kinds[0]); i++)
		if (cabundle_patch(cb, cabundle_kinds[i], b64) == -1)
			rc = -1;
	free(b64);
	free(cb->synced);
	cb->synced = NULL;
	if (rc == 0)
		cb->synced = ca;
	else
		free(ca);
	return (rc);
}
