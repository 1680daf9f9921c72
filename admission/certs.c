/*
 * slurm-bridge-admission --issue-certs: the in-cluster TLS, made where it
 * runs (a Job the chart runs before install and upgrade), with GnuTLS:
 *
 *   slurm-bridge-ca               the CA (ca.crt, ca.key)
 *   slurm-bridge-admission-tls    the webhook's serving certificate
 *   slurm-bridge-tls              the scheduler's (metrics, extender)
 *   slurm-bridge-extender-client  a kube-scheduler's extender client
 *
 * Each leaf Secret holds tls.crt, tls.key and ca.crt.  A certificate is
 * kept while it is from the current CA and valid for CERTS_RENEW_DAYS
 * more; otherwise it is issued anew.  The CA is kept likewise, and a new
 * CA reissues every leaf.  Run twice, the second run changes nothing.
 *
 * The pure part (certs_issue_pem, certs_usable) takes and returns PEM;
 * certs_run talks to the API server.  Strings returned are the caller's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "log.h"
#include "xmalloc.h"
#include "admission.h"

#define CERTS_RENEW_DAYS 30
#define CERTS_BACKDATE_S 300 /* clocks of other nodes may be behind */

/* PEM of a certificate or key, NUL-terminated, the caller's. */
static char *
certs_datum_str(gnutls_datum_t *d)
{
	char *s = xmalloc(d->size + 1);

	memcpy(s, d->data, d->size);
	s[d->size] = '\0';
	gnutls_free(d->data);
	d->data = NULL;
	return (s);
}

static int
certs_import(const char *crt_pem, const char *key_pem, gnutls_x509_crt_t *crt,
    gnutls_x509_privkey_t *key)
{
	gnutls_datum_t d;

	*crt = NULL;
	if (key != NULL)
		*key = NULL;
	if (gnutls_x509_crt_init(crt) < 0)
		return (-1);
	d.data = (unsigned char *)(uintptr_t)crt_pem;
	d.size = (unsigned)strlen(crt_pem);
	if (gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM) < 0)
		goto fail;
	if (key == NULL)
		return (0);
	if (gnutls_x509_privkey_init(key) < 0)
		goto fail;
	d.data = (unsigned char *)(uintptr_t)key_pem;
	d.size = (unsigned)strlen(key_pem);
	if (gnutls_x509_privkey_import(*key, &d, GNUTLS_X509_FMT_PEM) < 0)
		goto fail;
	return (0);
fail:
	gnutls_x509_crt_deinit(*crt);
	*crt = NULL;
	if (key != NULL && *key != NULL) {
		gnutls_x509_privkey_deinit(*key);
		*key = NULL;
	}
	return (-1);
}

/* now + r->days, but never beyond the issuing CA's own expiry. */
static time_t
certs_expiry(const struct certs_req *r, gnutls_x509_crt_t ca, time_t now)
{
	time_t t = now + (time_t)r->days * 86400, ca_end;

	if (ca != NULL &&
	    (ca_end = gnutls_x509_crt_get_expiration_time(ca)) != (time_t)-1 &&
	    ca_end < t)
		t = ca_end;
	return (t);
}

int
certs_pair_ok(const char *crt_pem, const char *key_pem)
{
	gnutls_x509_crt_t     crt;
	gnutls_x509_privkey_t key;
	unsigned char	      a[64], b[64];
	size_t		      alen = sizeof(a), blen = sizeof(b);
	int		      ok;

	if (crt_pem == NULL || key_pem == NULL ||
	    certs_import(crt_pem, key_pem, &crt, &key) == -1)
		return (0);
	ok = gnutls_x509_crt_get_key_id(crt, 0, a, &alen) >= 0 &&
	    gnutls_x509_privkey_get_key_id(key, 0, b, &blen) >= 0 &&
	    alen == blen && memcmp(a, b, alen) == 0;
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return (ok);
}

int
certs_issue_pem(const struct certs_req *r, const char *ca_crt,
    const char *ca_key, char **crt_pem, char **key_pem)
{
	gnutls_x509_crt_t     crt = NULL, ca = NULL;
	gnutls_x509_privkey_t key = NULL, cakey = NULL;
	gnutls_datum_t	      d = { NULL, 0 };
	unsigned char	      serial[16], kid[64];
	size_t		      kidlen = sizeof(kid);
	time_t		      now = r->now != 0 ? r->now : time(NULL);
	char		      dn[256];
	const char	     *e;
	int		      rc = -1, i;

	*crt_pem = *key_pem = NULL;
	if (ca_crt != NULL && certs_import(ca_crt, ca_key, &ca, &cakey) == -1)
		return (-1);
	if (gnutls_x509_privkey_init(&key) < 0 ||
	    gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
		GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
	    gnutls_x509_crt_init(&crt) < 0)
		goto out;
	if (gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)) < 0)
		goto out;
	serial[0] &= 0x7f; /* a positive integer */
	snprintf(dn, sizeof(dn), "CN=%s", r->cn);
	if (gnutls_x509_crt_set_version(crt, 3) < 0 ||
	    gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_dn(crt, dn, &e) < 0 ||
	    gnutls_x509_crt_set_key(crt, key) < 0 ||
	    gnutls_x509_crt_set_activation_time(crt, now - CERTS_BACKDATE_S) <
		0 ||
	    gnutls_x509_crt_set_expiration_time(crt, certs_expiry(r, ca, now)) <
		0 ||
	    gnutls_x509_crt_set_basic_constraints(crt, r->is_ca, -1) < 0 ||
	    gnutls_x509_crt_get_key_id(crt, 0, kid, &kidlen) < 0 ||
	    gnutls_x509_crt_set_subject_key_id(crt, kid, kidlen) < 0)
		goto out;
	if (r->is_ca) {
		if (gnutls_x509_crt_set_key_usage(crt,
			GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
			    GNUTLS_KEY_DIGITAL_SIGNATURE) < 0)
			goto out;
	} else if (gnutls_x509_crt_set_key_usage(crt,
		       GNUTLS_KEY_DIGITAL_SIGNATURE) < 0 || /* EC: RFC 5480 */
	    gnutls_x509_crt_set_key_purpose_oid(crt,
		r->client ? GNUTLS_KP_TLS_WWW_CLIENT : GNUTLS_KP_TLS_WWW_SERVER,
		0) < 0)
		goto out;
	for (i = 0; r->dns[i] != NULL; i++)
		if (gnutls_x509_crt_set_subject_alt_name(crt,
			GNUTLS_SAN_DNSNAME, r->dns[i],
			(unsigned)strlen(r->dns[i]), GNUTLS_FSAN_APPEND) < 0)
			goto out;
	if (ca != NULL) {
		kidlen = sizeof(kid);
		if (gnutls_x509_crt_get_subject_key_id(ca, kid, &kidlen,
			NULL) >= 0 &&
		    gnutls_x509_crt_set_authority_key_id(crt, kid, kidlen) < 0)
			goto out;
	}
	if (gnutls_x509_crt_sign2(crt, ca != NULL ? ca : crt,
		cakey != NULL ? cakey : key, GNUTLS_DIG_SHA256, 0) < 0)
		goto out;
	if (gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d) < 0)
		goto out;
	*crt_pem = certs_datum_str(&d);
	if (gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL,
		GNUTLS_PKCS_PLAIN, &d) < 0) {
		free(*crt_pem);
		*crt_pem = NULL;
		goto out;
	}
	*key_pem = certs_datum_str(&d);
	rc = 0;
out:
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_privkey_deinit(cakey);
	return (rc);
}

int
certs_usable(const char *crt_pem, const char *ca_pem, time_t now, char *why,
    size_t whylen)
{
	gnutls_x509_crt_t crt = NULL, ca = NULL;
	unsigned	  status = 0;
	int		  rc = 0;

	if (certs_import(crt_pem, NULL, &crt, NULL) == -1) {
		snprintf(why, whylen, "not a PEM certificate");
		return (0);
	}
	if (ca_pem != NULL && certs_import(ca_pem, NULL, &ca, NULL) == -1) {
		snprintf(why, whylen, "the CA is not a PEM certificate");
		goto out;
	}
	if (gnutls_x509_crt_get_expiration_time(crt) <
	    now + (time_t)CERTS_RENEW_DAYS * 86400) {
		snprintf(why, whylen, "expires within %d days",
		    CERTS_RENEW_DAYS);
		goto out;
	}
	/* The signature only: validity is judged at now, above. */
	if (ca != NULL &&
	    (gnutls_x509_crt_verify(crt, &ca, 1,
		 GNUTLS_VERIFY_DISABLE_TIME_CHECKS |
		     GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS,
		 &status) < 0 ||
		status != 0)) {
		snprintf(why, whylen, "not signed by the current CA");
		goto out;
	}
	rc = 1;
out:
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_crt_deinit(ca);
	return (rc);
}

/* --- The Secrets ---------------------------------------------------- */

/* data[key] of a Secret, decoded, or NULL. */
static char *
certs_secret_get(const json_t *secret, const char *key)
{
	const char *b64;
	char	   *out = NULL;
	size_t	    len;

	b64 = json_string_value(
	    json_object_get(json_object_get(secret, "data"), key));
	if (b64 == NULL || k8s_base64_decode(b64, &out, &len) == -1)
		return (NULL);
	return (out);
}

/* GETs Secret name: 1 found (*out), 0 absent, -1 error. */
static int
certs_secret_read(struct k8s_client *c, const char *ns, const char *name,
    json_t **out)
{
	struct k8s_error err;
	char		 path[512];

	*out = NULL;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s", ns,
	    name);
	if (k8s_get(c, path, out, &err) == 0)
		return (1);
	if (err.status == 404)
		return (0);
	log_warnx("certs: get Secret %s/%s: %ld %s: %s", ns, name, err.status,
	    err.reason, err.text);
	return (-1);
}

/*
 * Creates Secret name with keys[i] = vals[i], or replaces its data if it
 * exists (whatever made it: an earlier run, or scripts/deploy/webhook-cert.sh).
 */
static int
certs_secret_write(struct k8s_client *c, const char *ns, const char *name,
    const char *type, const char **keys, char **vals, int n)
{
	struct k8s_error err;
	json_t		*data = json_object(), *secret, *patch;
	char		 path[512];
	int		 i, rc;

	for (i = 0; i < n; i++) {
		char *b = k8s_base64_encode(vals[i], strlen(vals[i]));

		json_object_set_new(data, keys[i], json_string(b));
		free(b);
	}
	secret = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:s,s:O}",
	    "apiVersion", "v1", "kind", "Secret", "metadata", "name", name,
	    "namespace", ns, "labels", "app.kubernetes.io/part-of",
	    "slurm-bridge", "app.kubernetes.io/managed-by",
	    "slurm-bridge-admission", "type", type, "data", data);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets", ns);
	rc = k8s_create(c, path, secret, NULL, &err);
	if (rc == -1 && err.status == 409) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/secrets/%s",
		    ns, name);
		patch = json_pack("{s:O}", "data", data);
		rc = k8s_patch(c, path, K8S_PATCH_MERGE, patch, NULL, &err);
		json_decref(patch);
	}
	if (rc == -1)
		log_warnx("certs: write Secret %s/%s: %ld %s: %s", ns, name,
		    err.status, err.reason, err.text);
	json_decref(secret);
	json_decref(data);
	return (rc);
}

/* Keeps or makes the CA; its PEMs in *crt and *key; 1 if new. */
static int
certs_ca(struct k8s_client *c, const struct certs_opts *o, char **crt,
    char **key)
{
	static const char *keys[] = { "ca.crt", "ca.key" };
	struct certs_req   r;
	json_t		  *s = NULL;
	const char	  *dns[] = { NULL };
	char		   why[128], *vals[2];
	int		   found;

	*crt = *key = NULL;
	if ((found = certs_secret_read(c, o->ns, CERTS_SECRET_CA, &s)) == -1)
		return (-1);
	if (found) {
		*crt = certs_secret_get(s, "ca.crt");
		*key = certs_secret_get(s, "ca.key");
		json_decref(s);
		if (!certs_pair_ok(*crt, *key))
			snprintf(why, sizeof(why),
			    "ca.key missing or not ca.crt's key");
		else if (certs_usable(*crt, NULL, time(NULL), why,
			     sizeof(why))) {
			log_info("certs: %s: kept", CERTS_SECRET_CA);
			return (0);
		}
		log_info("certs: %s: renewed (%s)", CERTS_SECRET_CA, why);
		free(*crt);
		free(*key);
	}
	memset(&r, 0, sizeof(r));
	r.cn = "slurm-bridge-ca";
	r.dns = dns;
	r.is_ca = 1;
	/* Outlives the leaves it signs now; later ones are capped at its end. */
	r.days = o->days * 2 + CERTS_RENEW_DAYS;
	if (certs_issue_pem(&r, NULL, NULL, crt, key) == -1)
		return (-1);
	vals[0] = *crt;
	vals[1] = *key;
	if (certs_secret_write(c, o->ns, CERTS_SECRET_CA, "Opaque", keys, vals,
		2) == -1)
		return (-1);
	log_info("certs: %s: issued, valid %d days", CERTS_SECRET_CA, r.days);
	return (1);
}

/* Keeps or issues one leaf Secret. */
static int
certs_leaf(struct k8s_client *c, const struct certs_opts *o, const char *name,
    const char *cn, int client, const char *ca_crt, const char *ca_key,
    int new_ca)
{
	static const char *keys[] = { "tls.crt", "tls.key", "ca.crt" };
	struct certs_req   r;
	json_t		  *s = NULL;
	char		   dns0[320], dns1[320], dns2[320], why[128] = "";
	const char	  *dns[5] = { NULL };
	char		  *crt = NULL, *key = NULL, *have_ca = NULL, *vals[3];
	int		   found, rc = -1;

	if ((found = certs_secret_read(c, o->ns, name, &s)) == -1)
		return (-1);
	if (found && !new_ca) {
		crt = certs_secret_get(s, "tls.crt");
		key = certs_secret_get(s, "tls.key");
		have_ca = certs_secret_get(s, "ca.crt");
		if (certs_pair_ok(crt, key) && have_ca != NULL &&
		    strcmp(have_ca, ca_crt) == 0 &&
		    certs_usable(crt, ca_crt, time(NULL), why, sizeof(why))) {
			log_info("certs: %s: kept", name);
			rc = 0;
			goto out;
		}
		if (!certs_pair_ok(crt, key) || have_ca == NULL)
			snprintf(why, sizeof(why),
			    "tls.crt, tls.key or ca.crt missing, or the key "
			    "not the certificate's");
		else if (strcmp(have_ca, ca_crt) != 0)
			snprintf(why, sizeof(why), "from another CA");
		free(crt);
		free(key);
		crt = key = NULL;
	}
	memset(&r, 0, sizeof(r));
	r.cn = cn;
	r.client = client;
	r.days = o->days;
	if (!client) {
		/* The names the API server and clients use for a Service. */
		snprintf(dns0, sizeof(dns0), "%s.%s.svc", cn, o->ns);
		snprintf(dns1, sizeof(dns1), "%s.%s.svc.cluster.local", cn,
		    o->ns);
		snprintf(dns2, sizeof(dns2), "%s.%s", cn, o->ns);
		dns[0] = dns0;
		dns[1] = dns1;
		dns[2] = dns2;
		dns[3] = cn;
	}
	r.dns = dns;
	if (certs_issue_pem(&r, ca_crt, ca_key, &crt, &key) == -1) {
		log_warnx("certs: %s: cannot issue a certificate", name);
		goto out;
	}
	vals[0] = crt;
	vals[1] = key;
	vals[2] = (char *)(uintptr_t)ca_crt;
	if (certs_secret_write(c, o->ns, name, "kubernetes.io/tls", keys, vals,
		3) == -1)
		goto out;
	log_info("certs: %s: issued for %s, valid %d days (%s)", name,
	    client ? cn : dns0, o->days,
	    !found     ? "new" :
		new_ca ? "new CA" :
			 why);
	rc = 0;
out:
	json_decref(s);
	free(crt);
	free(key);
	free(have_ca);
	return (rc);
}

int
certs_run(const struct k8s_config *kconf, const struct certs_opts *o)
{
	struct k8s_client *c;
	struct k8s_error   kerr;
	char		  *ca_crt = NULL, *ca_key = NULL;
	int		   new_ca, rc = -1;

	if ((c = k8s_client_new(kconf, &kerr)) == NULL) {
		log_warnx("certs: %s", kerr.text);
		return (-1);
	}
	if ((new_ca = certs_ca(c, o, &ca_crt, &ca_key)) == -1)
		goto out;
	if (certs_leaf(c, o, CERTS_SECRET_ADMISSION, CERTS_SVC_ADMISSION, 0,
		ca_crt, ca_key, new_ca) == -1 ||
	    certs_leaf(c, o, CERTS_SECRET_BRIDGE, CERTS_SVC_BRIDGE, 0, ca_crt,
		ca_key, new_ca) == -1 ||
	    certs_leaf(c, o, CERTS_SECRET_CLIENT, CERTS_CLIENT_CN, 1, ca_crt,
		ca_key, new_ca) == -1)
		goto out;
	rc = 0;
out:
	free(ca_crt);
	free(ca_key);
	k8s_client_free(c);
	return (rc);
}
