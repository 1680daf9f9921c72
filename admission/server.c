/*
 * The HTTPS server (libmicrohttpd with GnuTLS): the only file that includes
 * <microhttpd.h>.  Requests are served by a small pool of libmicrohttpd
 * threads; the handler is reentrant and makes no API or Slurm call (owners
 * come from the watch-based store).  It collects a request body up to
 * REVIEW_MAX_BODY and hands AdmissionReviews to review.c (POST /mutate and
 * /validate); /healthz says the process is up, /readyz that the namespace
 * and Job caches are synced, /metrics is Prometheus text.
 *
 * The certificate and key are handed to GnuTLS from a callback that
 * reloads them when either file changes (checked at most once a second), so
 * a rotated certificate is served without a restart.  A pair that does not
 * load or does not match keeps the previous one in service.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "log.h"
#include "xmalloc.h"
#include "metrics.h"
#include "admission.h"

#define SERVER_MAX_PEM		(1024 * 1024)
#define SERVER_MAX_CHAIN	8
#define SERVER_THREADS		4

/* One loaded certificate chain and key; kept until the server stops. */
struct cred {
	gnutls_pcert_st		 pcert[SERVER_MAX_CHAIN];
	unsigned int		 npcert;
	gnutls_privkey_t	 key;
	struct cred		*prev;
};

/* Identity of a file's contents, to notice a rewrite or a rename. */
struct file_id {
	dev_t	dev;
	ino_t	ino;
	off_t	size;
	struct timespec mtime;
};

enum { PATH_MUTATE, PATH_VALIDATE, PATH_OTHER, NPATHS };

struct server {
	struct MHD_Daemon	*mhd;
	const struct admission_conf *conf;
	const struct review_conf *review;
	pthread_mutex_t		 cred_lock;
	struct cred		*cred;		/* current; older ones chained */
	struct file_id		 cert_id, key_id;
	time_t			 checked;	/* last look at the files */
	atomic_ullong		 reloads, reload_errors;
	/* Requests by path and outcome, and their latency. */
	atomic_ullong		 allowed[NPATHS], denied[NPATHS],
				 patched[NPATHS], bad[NPATHS];
	struct metrics_hist	 latency[NPATHS];
};

/* GnuTLS's certificate callback takes no argument: one server a process. */
static struct server	*server_current;

static enum MHD_Result
server_reply(struct MHD_Connection *conn, unsigned int status,
    const char *ctype, const char *body)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 rc;

	resp = MHD_create_response_from_buffer(strlen(body),
	    (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return (MHD_NO);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return (rc);
}

static void
cred_free(struct cred *c)
{
	unsigned int	i;

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

static int
file_id_get(const char *path, struct file_id *id)
{
	struct stat	st;

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
	gnutls_pubkey_t	 pub = NULL;
	gnutls_datum_t	 a = { NULL, 0 }, b = { NULL, 0 };
	int		 ok = 0;

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
static struct cred *
cred_load(const char *certfile, const char *keyfile, char *err,
    size_t errlen)
{
	struct cred	*c = xcalloc(1, sizeof(*c));
	char		*cert = NULL, *key = NULL;
	gnutls_datum_t	 d;
	int		 rc;

	if ((cert = conf_read_file(certfile, SERVER_MAX_PEM)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the certificate",
		    certfile);
		goto fail;
	}
	if ((key = conf_read_file(keyfile, SERVER_MAX_PEM)) == NULL) {
		snprintf(err, errlen, "%s: cannot read the key", keyfile);
		goto fail;
	}
	d.data = (unsigned char *)cert;
	d.size = (unsigned int)strlen(cert);
	c->npcert = SERVER_MAX_CHAIN;
	if ((rc = gnutls_pcert_list_import_x509_raw(c->pcert, &c->npcert, &d,
	    GNUTLS_X509_FMT_PEM, 0)) < 0 || c->npcert == 0) {
		c->npcert = 0;
		snprintf(err, errlen, "%s: not a PEM certificate chain: %s",
		    certfile, gnutls_strerror(rc));
		goto fail;
	}
	d.data = (unsigned char *)key;
	d.size = (unsigned int)strlen(key);
	if (gnutls_privkey_init(&c->key) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(c->key, &d,
	    GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(err, errlen, "%s: not a PEM private key", keyfile);
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
	cred_free(c);
	return (NULL);
}

/* Reloads the pair if either file changed; keeps the old one on error. */
static void
server_cred_refresh(struct server *s)
{
	struct file_id	 cid, kid;
	struct cred	*c;
	char		 err[256];
	time_t		 now = time(NULL);

	if (now == s->checked)
		return;
	s->checked = now;
	if (file_id_get(s->conf->tls_cert, &cid) == -1 ||
	    file_id_get(s->conf->tls_key, &kid) == -1)
		return;
	if (file_id_same(&cid, &s->cert_id) && file_id_same(&kid, &s->key_id))
		return;
	if ((c = cred_load(s->conf->tls_cert, s->conf->tls_key, err,
	    sizeof(err))) == NULL) {
		atomic_fetch_add(&s->reload_errors, 1);
		log_warnx("tls: keeping the previous certificate: %s", err);
	} else {
		c->prev = s->cred;
		s->cred = c;
		atomic_fetch_add(&s->reloads, 1);
		log_info("tls: reloaded %s and %s", s->conf->tls_cert,
		    s->conf->tls_key);
	}
	/* Either way, do not retry until the files change again. */
	s->cert_id = cid;
	s->key_id = kid;
}

/* GnuTLS asks for our certificate at each handshake. */
static int
server_cert_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
    int nreqs, const gnutls_pk_algorithm_t *algos, int nalgos,
    gnutls_pcert_st **pcert, unsigned int *npcert, gnutls_privkey_t *key)
{
	struct server	*s = server_current;

	(void)session;
	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	if (s == NULL)
		return (-1);
	pthread_mutex_lock(&s->cred_lock);
	server_cred_refresh(s);
	*pcert = s->cred->pcert;
	*npcert = s->cred->npcert;
	*key = s->cred->key;
	pthread_mutex_unlock(&s->cred_lock);
	return (0);
}

/* Per-request state: the body collected so far. */
struct request {
	struct buf	body;
	int		too_big;
	double		start;
};

static void
server_done_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct request	*req = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (req == NULL)
		return;
	buf_cleanup(&req->body);
	free(req);
	*con_cls = NULL;
}

static void
server_count(struct server *s, int path, atomic_ullong *outcome,
    const struct request *req)
{
	atomic_fetch_add(outcome, 1);
	metrics_hist_observe(&s->latency[path], metrics_now() - req->start);
}

/* Answers an AdmissionReview POST to /mutate or /validate. */
static enum MHD_Result
server_review(struct server *s, struct MHD_Connection *conn,
    struct request *req, enum review_mode mode)
{
	enum MHD_Result	 rc;
	json_t		*out = NULL, *resp;
	char		 err[512], *body;
	const char	*ctype;
	int		 status, path = mode == REVIEW_MUTATE ? PATH_MUTATE :
			    PATH_VALIDATE;

	ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	if (ctype == NULL || strncmp(ctype, "application/json", 16) != 0) {
		server_count(s, path, &s->bad[path], req);
		return (server_reply(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
		    "text/plain", "Content-Type must be application/json\n"));
	}
	if (req->too_big) {
		server_count(s, path, &s->bad[path], req);
		snprintf(err, sizeof(err), "request body larger than %d "
		    "bytes\n", REVIEW_MAX_BODY);
		return (server_reply(conn, MHD_HTTP_BAD_REQUEST, "text/plain",
		    err));
	}
	status = review_handle(req->body.data != NULL ? req->body.data : "",
	    req->body.len, mode, s->review, &out, err, sizeof(err) - 1);
	if (status != 200) {
		server_count(s, path, &s->bad[path], req);
		log_warnx("review: refused a malformed request: %s", err);
		strcat(err, "\n");
		return (server_reply(conn, MHD_HTTP_BAD_REQUEST, "text/plain",
		    err));
	}
	resp = json_object_get(out, "response");
	if (!json_is_true(json_object_get(resp, "allowed"))) {
		log_info("review: %s denied: %s", mode == REVIEW_MUTATE ?
		    "mutate" : "validate", k8s_obj_str(resp, "status.message"));
		server_count(s, path, &s->denied[path], req);
	} else if (json_object_get(resp, "patch") != NULL)
		server_count(s, path, &s->patched[path], req);
	else
		server_count(s, path, &s->allowed[path], req);
	body = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	rc = server_reply(conn, MHD_HTTP_OK, "application/json", body);
	free(body);
	return (rc);
}

/* Prometheus text for /metrics. */
static char *
server_metrics(struct server *s)
{
	static const char *const paths[NPATHS] = { "/mutate", "/validate",
	    "other" };
	struct owners_stats	 st;
	struct buf		 b;
	char			 l[128];
	int			 i, k;

	buf_init(&b);
	metrics_family(&b, "slurm_bridge_admission_requests_total", "counter",
	    "AdmissionReview requests by path and outcome.");
	for (i = 0; i < PATH_OTHER; i++) {
		snprintf(l, sizeof(l), "path=\"%s\",outcome=\"allowed\"",
		    paths[i]);
		metrics_sample(&b, "slurm_bridge_admission_requests_total", l,
		    (double)atomic_load(&s->allowed[i]));
		snprintf(l, sizeof(l), "path=\"%s\",outcome=\"patched\"",
		    paths[i]);
		metrics_sample(&b, "slurm_bridge_admission_requests_total", l,
		    (double)atomic_load(&s->patched[i]));
		snprintf(l, sizeof(l), "path=\"%s\",outcome=\"denied\"",
		    paths[i]);
		metrics_sample(&b, "slurm_bridge_admission_requests_total", l,
		    (double)atomic_load(&s->denied[i]));
		snprintf(l, sizeof(l), "path=\"%s\",outcome=\"bad_request\"",
		    paths[i]);
		metrics_sample(&b, "slurm_bridge_admission_requests_total", l,
		    (double)atomic_load(&s->bad[i]));
	}
	metrics_family(&b, "slurm_bridge_admission_request_duration_seconds",
	    "histogram", "Time to answer an AdmissionReview, body received "
	    "to response queued.");
	for (i = 0; i < PATH_OTHER; i++) {
		snprintf(l, sizeof(l), "path=\"%s\"", paths[i]);
		metrics_hist_write(&b,
		    "slurm_bridge_admission_request_duration_seconds", l,
		    &s->latency[i]);
	}
	owners_stats(s->review->owners, &st);
	metrics_family(&b, "slurm_bridge_admission_cache_objects", "gauge",
	    "Objects in the webhook's watch-based store, by kind.");
	for (k = 0; k < OWN_KINDS; k++) {
		snprintf(l, sizeof(l), "kind=\"%s\"", owners_kind_name(k));
		metrics_sample(&b, "slurm_bridge_admission_cache_objects", l,
		    (double)st.objects[k]);
	}
	metrics_family(&b, "slurm_bridge_admission_cache_lookups_total",
	    "counter", "Owner and namespace lookups by result (a wait is a "
	    "lookup that waited for the watch).");
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"hit\"", (double)st.hits);
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"miss\"", (double)st.misses);
	metrics_sample(&b, "slurm_bridge_admission_cache_lookups_total",
	    "result=\"waited\"", (double)st.waits);
	metrics_family(&b, "slurm_bridge_admission_watch_relists_total",
	    "counter", "Full relists of the webhook's watches.");
	metrics_sample(&b, "slurm_bridge_admission_watch_relists_total", NULL,
	    (double)st.relists);
	metrics_family(&b, "slurm_bridge_admission_tls_reloads_total",
	    "counter", "Certificate reloads by result.");
	metrics_sample(&b, "slurm_bridge_admission_tls_reloads_total",
	    "result=\"ok\"", (double)atomic_load(&s->reloads));
	metrics_sample(&b, "slurm_bridge_admission_tls_reloads_total",
	    "result=\"error\"", (double)atomic_load(&s->reload_errors));
	return (buf_release(&b));
}

static enum MHD_Result
server_get(struct server *s, struct MHD_Connection *conn, const char *url,
    const char *method)
{
	enum MHD_Result	 rc;
	char		*text;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return (server_reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "text/plain", "use GET\n"));
	if (strcmp(url, "/healthz") == 0)
		return (server_reply(conn, MHD_HTTP_OK, "text/plain", "ok\n"));
	if (strcmp(url, "/readyz") == 0) {
		/* Namespaces (allowed accounts) and Jobs (gangs) at least. */
		if (!owners_synced(s->review->owners, OWN_NAMESPACE) ||
		    !owners_synced(s->review->owners, OWN_JOB))
			return (server_reply(conn,
			    MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
			    "caches are not synced yet\n"));
		return (server_reply(conn, MHD_HTTP_OK, "text/plain", "ok\n"));
	}
	text = server_metrics(s);
	rc = server_reply(conn, MHD_HTTP_OK,
	    "text/plain; version=0.0.4; charset=utf-8", text);
	free(text);
	return (rc);
}

static enum MHD_Result
server_handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	struct server	*s = cls;
	struct request	*req = *con_cls;
	int		 review;

	(void)version;
	review = strcmp(url, "/mutate") == 0 || strcmp(url, "/validate") == 0;
	if (req == NULL) {
		/* First call: headers only.  Collect the body from here on. */
		req = xcalloc(1, sizeof(*req));
		buf_init(&req->body);
		req->start = metrics_now();
		*con_cls = req;
		return (MHD_YES);
	}
	if (*upload_size != 0) {
		if (!review || req->too_big ||
		    req->body.len + *upload_size > REVIEW_MAX_BODY) {
			/* Keep reading, but no more bytes are kept. */
			req->too_big = review;
			buf_cleanup(&req->body);
		} else
			buf_add(&req->body, upload_data, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	if (review) {
		if (strcmp(method, "POST") != 0)
			return (server_reply(conn,
			    MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			    "use POST\n"));
		return (server_review(s, conn, req, url[1] == 'm' ?
		    REVIEW_MUTATE : REVIEW_VALIDATE));
	}
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0 ||
	    strcmp(url, "/metrics") == 0)
		return (server_get(s, conn, url, method));
	return (server_reply(conn, MHD_HTTP_NOT_FOUND, "text/plain",
	    "not found\n"));
}

static void
server_log_cb(void *cls, const char *fmt, va_list ap)
{
	char	line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warnx("https: %s", line);
}

struct server *
server_start(const struct admission_conf *conf,
    const struct review_conf *review, char *err, size_t errlen)
{
	struct server	*s;

	if (server_current != NULL) {
		snprintf(err, errlen, "one server per process");
		return (NULL);
	}
	s = xcalloc(1, sizeof(*s));
	s->conf = conf;
	s->review = review;
	pthread_mutex_init(&s->cred_lock, NULL);
	if ((s->cred = cred_load(conf->tls_cert, conf->tls_key, err, errlen))
	    == NULL)
		goto fail;
	file_id_get(conf->tls_cert, &s->cert_id);
	file_id_get(conf->tls_key, &s->key_id);
	s->checked = time(NULL);
	server_current = s;
	s->mhd = MHD_start_daemon(MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_ERROR_LOG, 0, NULL, NULL, server_handle, s,
	    MHD_OPTION_EXTERNAL_LOGGER, server_log_cb, NULL,
	    MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&conf->addr,
	    MHD_OPTION_HTTPS_CERT_CALLBACK, server_cert_cb,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)SERVER_THREADS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)256,
	    MHD_OPTION_NOTIFY_COMPLETED, server_done_cb, NULL,
	    MHD_OPTION_END);
	if (s->mhd == NULL) {
		snprintf(err, errlen, "cannot serve HTTPS on %s (address in "
		    "use?)", conf->listen);
		goto fail;
	}
	return (s);
 fail:
	server_stop(s);
	return (NULL);
}

void
server_stop(struct server *s)
{
	if (s == NULL)
		return;
	if (s->mhd != NULL)
		MHD_stop_daemon(s->mhd);
	if (server_current == s)
		server_current = NULL;
	cred_free(s->cred);
	pthread_mutex_destroy(&s->cred_lock);
	free(s);
}
