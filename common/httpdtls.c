/*
 * The HTTP server's TLS: the certificate and key are handed to GnuTLS from
 * a callback that reloads them when either file changes (checked at most
 * once a second), so a rotated certificate is served without a restart.
 * A pair that does not load, or whose key does not match the
 * certificate, keeps the previous one in service.  Old pairs are kept
 * until the server stops: a handshake in flight may still use one.  And
 * the client certificates --client-ca and --client-name admit.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "buf.h"
#include "log.h"
#include "xmalloc.h"
#include "httpd.h"
#include "httpdint.h"

struct httpd *httpd_current;

char *
httpd_read_file(const char *path, size_t max)
{
	FILE	   *fp;
	struct stat st;
	char	   *data;
	size_t	    n;

	if ((fp = fopen(path, "r")) == NULL)
		return (NULL);
	if (fstat(fileno(fp), &st) == -1 || st.st_size < 0 ||
	    (size_t)st.st_size > max) {
		fclose(fp);
		errno = EFBIG;
		return (NULL);
	}
	data = xmalloc((size_t)st.st_size + 1);
	n = fread(data, 1, (size_t)st.st_size, fp);
	fclose(fp);
	data[n] = '\0';
	return (data);
}

void
httpd_cred_free(struct cred *c)
{
	unsigned int i;

	while (c != NULL) {
		struct cred *prev = c->prev;

		for (i = 0; i < c->npcert; i++)
			gnutls_pcert_deinit(&c->pcert[i]);
		if (c->key != NULL)
			gnutls_privkey_deinit(c->key);
		free(c);
		c = prev;
	}
}

int
httpd_file_id(const char *path, struct file_id *id)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return (-1);
	memset(id, 0, sizeof(*id));
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	return (0);
}

static int
file_id_same(const struct file_id *a, const struct file_id *b)
{
	return (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtime.tv_sec == b->mtime.tv_sec &&
	    a->mtime.tv_nsec == b->mtime.tv_nsec);
}

/* Does the key belong to the certificate?  Compares the public keys. */
static int
cred_matches(struct cred *c)
{
	gnutls_pubkey_t pub = NULL;
	gnutls_datum_t	a = { NULL, 0 }, b = { NULL, 0 };
	int		ok = 0;

	if (gnutls_pubkey_init(&pub) < 0)
		return (0);
	if (gnutls_pubkey_import_privkey(pub, c->key, 0, 0) == 0 &&
	    gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &a) == 0 &&
	    gnutls_pubkey_export2(c->pcert[0].pubkey, GNUTLS_X509_FMT_DER,
		&b) == 0)
		ok = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
	gnutls_free(a.data);
	gnutls_free(b.data);
	gnutls_pubkey_deinit(pub);
	return (ok);
}

/* Loads the PEM pair; NULL with err on failure. */
struct cred *
httpd_cred_load(const char *certfile, const char *keyfile, char *err,
    size_t errlen)
{
	struct cred   *c = xcalloc(1, sizeof(*c));
	char	      *cert = NULL, *key = NULL;
	gnutls_datum_t d;
	int	       rc;

	if ((cert = httpd_read_file(certfile, HTTPD_MAX_PEM)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the certificate",
		    certfile);
		goto fail;
	}
	if ((key = httpd_read_file(keyfile, HTTPD_MAX_PEM)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the key", keyfile);
		goto fail;
	}
	d.data = (unsigned char *)cert;
	d.size = (unsigned int)strlen(cert);
	c->npcert = HTTPD_MAX_CHAIN;
	if ((rc = gnutls_pcert_list_import_x509_raw(c->pcert, &c->npcert, &d,
		 GNUTLS_X509_FMT_PEM, 0)) < 0 ||
	    c->npcert == 0) {
		c->npcert = 0;
		snprintf(err, errlen, "%s: not a PEM certificate chain: %s",
		    certfile, gnutls_strerror(rc));
		goto fail;
	}
	d.data = (unsigned char *)key;
	d.size = (unsigned int)strlen(key);
	if ((rc = gnutls_privkey_init(&c->key)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(c->key, &d,
		 GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, errlen, "%s: not a PEM private key: %s", keyfile,
		    gnutls_strerror(rc));
		goto fail;
	}
	if (!cred_matches(c)) {
		snprintf(err, errlen, "%s does not belong to %s", keyfile,
		    certfile);
		goto fail;
	}
	explicit_bzero(key, strlen(key));
	free(key);
	free(cert);
	return (c);
fail:
	if (key != NULL)
		explicit_bzero(key, strlen(key));
	free(key);
	free(cert);
	httpd_cred_free(c);
	return (NULL);
}

/* Reloads the pair if either file changed; keeps the old one on error. */
static void
httpd_cred_refresh(struct httpd *s)
{
	struct file_id cid, kid;
	struct cred   *c;
	char	       err[256];
	time_t	       now = time(NULL);

	if (now == s->checked)
		return;
	s->checked = now;
	if (httpd_file_id(s->opts.tls_cert, &cid) == -1 ||
	    httpd_file_id(s->opts.tls_key, &kid) == -1)
		return;
	if (file_id_same(&cid, &s->cert_id) && file_id_same(&kid, &s->key_id))
		return;
	if ((c = httpd_cred_load(s->opts.tls_cert, s->opts.tls_key, err,
		 sizeof(err))) == NULL) {
		atomic_fetch_add(&s->reload_errors, 1);
		log_warnx("tls: keeping the previous certificate: %s", err);
	} else {
		c->prev = s->cred;
		s->cred = c;
		atomic_fetch_add(&s->reloads, 1);
		log_info("tls: reloaded %s and %s", s->opts.tls_cert,
		    s->opts.tls_key);
	}
	/* Either way, do not retry until the files change again. */
	s->cert_id = cid;
	s->key_id = kid;
}

/* GnuTLS asks for our certificate at each handshake. */
int
httpd_cert_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
    int nreqs, const gnutls_pk_algorithm_t *algos, int nalgos,
    gnutls_pcert_st **pcert, unsigned int *npcert, gnutls_privkey_t *key)
{
	struct httpd *s = httpd_current;

	(void)session;
	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	if (s == NULL)
		return (-1);
	pthread_mutex_lock(&s->cred_lock);
	httpd_cred_refresh(s);
	*pcert = s->cred->pcert;
	*npcert = s->cred->npcert;
	*key = s->cred->key;
	pthread_mutex_unlock(&s->cred_lock);
	return (0);
}

/* Does names (comma-separated) hold name, ignoring case? */
static int
httpd_names_has(const char *names, const char *name)
{
	const char *p = names, *end;
	size_t	    n = strlen(name);

	if (n == 0)
		return (0);
	while (*p != '\0') {
		end = strchrnul(p, ',');
		if ((size_t)(end - p) == n && strncasecmp(p, name, n) == 0)
			return (1);
		p = *end == ',' ? end + 1 : end;
	}
	return (0);
}

int
httpd_check_names(const char *flag, const char *names, char *err, size_t errlen)
{
	const char *p = names, *end;

	if (strcmp(names, "*") == 0)
		return (0);
	for (;;) {
		end = strchrnul(p, ',');
		if (end == p || memchr(p, '*', end - p) != NULL ||
		    strcspn(p, " \t\r\n") < (size_t)(end - p))
			break;
		if (*end == '\0')
			return (0);
		p = end + 1;
	}
	snprintf(err, errlen,
	    "%s: \"%s\" is not a list of names separated by commas "
	    "(e.g. slurm-bridge-extender-client,kube-scheduler), or \"*\" "
	    "for any",
	    flag, names);
	return (-1);
}

/*
 * Is the leaf certificate for client authentication, and does it carry one
 * of names?  1, or 0 with why.  Fills cn.
 */
static int
httpd_crt_client_ok(gnutls_x509_crt_t crt, const char *names, char *cn,
    size_t cnlen, char *why, size_t whylen)
{
	char	     oid[128], san[256];
	size_t	     len;
	unsigned int i;
	int	     rc, has_eku = 0, client = 0;

	len = cnlen;
	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0,
		0, cn, &len) < 0)
		cn[0] = '\0';
	for (i = 0; i < HTTPD_MAX_EXT; i++) {
		len = sizeof(oid);
		rc = gnutls_x509_crt_get_key_purpose_oid(crt, i, oid, &len,
		    NULL);
		if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		/* One that does not parse counts as a purpose, not ours. */
		has_eku = 1;
		if (rc >= 0 && strcmp(oid, GNUTLS_KP_TLS_WWW_CLIENT) == 0)
			client = 1;
		else if (rc < 0 && rc != GNUTLS_E_SHORT_MEMORY_BUFFER)
			break;
	}
	/* No extendedKeyUsage: any purpose (RFC 5280, 4.2.1.12). */
	if (has_eku && !client) {
		snprintf(why, whylen,
		    "the client certificate (CN=%s) is not for client "
		    "authentication: its extendedKeyUsage lacks clientAuth",
		    cn);
		return (0);
	}
	if (names == NULL || strcmp(names, "*") == 0 ||
	    httpd_names_has(names, cn))
		return (1);
	for (i = 0; i < HTTPD_MAX_EXT; i++) {
		len = sizeof(san);
		rc = gnutls_x509_crt_get_subject_alt_name(crt, i, san, &len,
		    NULL);
		if (rc == GNUTLS_SAN_DNSNAME && httpd_names_has(names, san))
			return (1);
		if (rc < 0 && rc != GNUTLS_E_SHORT_MEMORY_BUFFER)
			break;
	}
	snprintf(why, whylen,
	    "neither the client certificate's CN (%s) nor a DNS name of it "
	    "is among %s",
	    cn, names);
	return (0);
}

int
httpd_cert_client_ok(const char *pem, const char *names, char *cn, size_t cnlen,
    char *why, size_t whylen)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t	  d = { (unsigned char *)(uintptr_t)pem,
		   (unsigned int)strlen(pem) };
	int		  ok = 0;

	cn[0] = '\0';
	if (gnutls_x509_crt_init(&crt) < 0) {
		snprintf(why, whylen, "out of memory");
		return (0);
	}
	if (gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) < 0)
		snprintf(why, whylen, "not a PEM certificate");
	else
		ok = httpd_crt_client_ok(crt, names, cn, cnlen, why, whylen);
	gnutls_x509_crt_deinit(crt);
	return (ok);
}

/*
 * Did the client present a certificate chain that verifies against the
 * client CA, for client authentication, with one of the names asked for?
 * Fills the subject CN, and why when it did not.
 */
int
httpd_client_verified(struct httpd *s, struct MHD_Connection *conn, char *cn,
    size_t cnlen, char *why, size_t whylen)
{
	const union MHD_ConnectionInfo *ci;
	const gnutls_datum_t	       *peers;
	gnutls_session_t		tls;
	gnutls_x509_crt_t		crt;
	gnutls_datum_t			txt = { NULL, 0 };
	unsigned int			status = 0, n = 0;
	int				ok = 0;

	cn[0] = '\0';
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci == NULL || (tls = ci->tls_session) == NULL ||
	    (peers = gnutls_certificate_get_peers(tls, &n)) == NULL || n == 0) {
		snprintf(why, whylen, "no client certificate");
		return (0);
	}
	if (gnutls_certificate_verify_peers2(tls, &status) < 0 || status != 0) {
		if (gnutls_certificate_verification_status_print(status,
			GNUTLS_CRT_X509, &txt, 0) < 0)
			txt.data = NULL;
		snprintf(why, whylen,
		    "the client certificate does not verify against the "
		    "client CA: %s",
		    txt.data != NULL ? (char *)txt.data : "unknown error");
		gnutls_free(txt.data);
		return (0);
	}
	if (gnutls_x509_crt_init(&crt) < 0) {
		snprintf(why, whylen, "out of memory");
		return (0);
	}
	if (gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) < 0)
		snprintf(why, whylen, "the client certificate does not parse");
	else
		ok = httpd_crt_client_ok(crt, s->opts.client_names, cn, cnlen,
		    why, whylen);
	gnutls_x509_crt_deinit(crt);
	return (ok);
}

int
httpd_check_tls(const char *certfile, const char *keyfile, char *err,
    size_t errlen)
{
	struct cred *c;

	if ((c = httpd_cred_load(certfile, keyfile, err, errlen)) == NULL)
		return (-1);
	httpd_cred_free(c);
	return (0);
}
