/*
 * The HTTP(S) server of both daemons: libmicrohttpd with GnuTLS, the only
 * file that includes <microhttpd.h>.  A pool of libmicrohttpd threads
 * collects each request body (up to max_body; beyond that the bytes are
 * read and dropped and the handler is told) and calls the handler.
 *
 * With TLS, the certificate and key are handed to GnuTLS from a callback
 * that reloads them when either file changes (checked at most once a
 * second), so a rotated certificate is served without a restart.  A pair
 * that does not load, or whose key does not match the certificate, keeps
 * the previous one in service.  Old pairs are kept until the server stops:
 * a handshake in flight may still use one.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "clock.h"
#include "buf.h"
#include "log.h"
#include "xmalloc.h"
#include "httpd.h"

#define HTTPD_MAX_CHAIN 8

/* One loaded certificate chain and key; kept until the server stops. */
struct cred {
	gnutls_pcert_st	 pcert[HTTPD_MAX_CHAIN];
	unsigned int	 npcert;
	gnutls_privkey_t key;
	struct cred	*prev;
};

/* Identity of a file's contents, to notice a rewrite or a rename. */
struct file_id {
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec mtime;
};

struct httpd {
	struct MHD_Daemon *mhd;
	struct httpd_opts  opts;
	pthread_mutex_t	   cred_lock;
	struct cred	  *cred; /* current; older ones chained */
	struct file_id	   cert_id, key_id;
	time_t		   checked;   /* last look at the files */
	char		  *client_ca; /* PEM, or NULL */
	atomic_ullong	   reloads, reload_errors;
};

/* GnuTLS's certificate callback takes no argument: one TLS server. */
static struct httpd *httpd_current;

int
httpd_parse_listen(const char *flag, const char *s, struct sockaddr_in *sin,
    char *err, size_t errlen)
{
	const char *colon;
	char	    host[64], *end;
	long	    port;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if ((colon = strrchr(s, ':')) == NULL ||
	    (size_t)(colon - s) >= sizeof(host))
		goto bad;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 1 ||
	    port > 65535)
		goto bad;
	sin->sin_port = htons((uint16_t)port);
	if (host[0] == '\0')
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		goto bad;
	return (0);
bad:
	snprintf(err, errlen,
	    "%s: \"%s\" is not ADDR:PORT (e.g. "
	    "127.0.0.1:9443 or :9443)",
	    flag, s);
	return (-1);
}

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

static void
cred_free(struct cred *c)
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

static int
file_id_get(const char *path, struct file_id *id)
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
static struct cred *
cred_load(const char *certfile, const char *keyfile, char *err, size_t errlen)
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
	cred_free(c);
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
	if (file_id_get(s->opts.tls_cert, &cid) == -1 ||
	    file_id_get(s->opts.tls_key, &kid) == -1)
		return;
	if (file_id_same(&cid, &s->cert_id) && file_id_same(&kid, &s->key_id))
		return;
	if ((c = cred_load(s->opts.tls_cert, s->opts.tls_key, err,
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
static int
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

void
httpd_reply(struct httpd_response *r, unsigned int status,
    const char *content_type, const char *text)
{
	free(r->body);
	r->status = status;
	r->content_type = content_type;
	r->body = xstrdup(text);
}

void
httpd_health(const struct httpd_request *req, struct httpd_response *resp,
    const struct httpd_health *h)
{
	const char *why;

	if (strcmp(req->url, "/healthz") != 0 &&
	    strcmp(req->url, "/readyz") != 0 &&
	    strcmp(req->url, "/metrics") != 0)
		httpd_reply(resp, 404, "text/plain", "not found\n");
	else if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0)
		httpd_reply(resp, 405, "text/plain", "use GET\n");
	else if (strcmp(req->url, "/healthz") == 0)
		httpd_reply(resp, 200, "text/plain", "ok\n");
	else if (strcmp(req->url, "/readyz") == 0) {
		if ((why = h->unready(h->arg)) != NULL)
			httpd_reply(resp, 503, "text/plain", why);
		else
			httpd_reply(resp, 200, "text/plain", "ok\n");
	} else {
		free(resp->body);
		resp->status = 200;
		resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		resp->body = h->metrics(h->arg);
	}
}

/*
 * Did the client present a certificate chain that verifies against the
 * client CA?  Fills the subject CN when it did.
 */
static int
httpd_client_verified(struct MHD_Connection *conn, char *cn, size_t cnlen)
{
	const union MHD_ConnectionInfo *ci;
	const gnutls_datum_t	       *peers;
	gnutls_session_t		tls;
	gnutls_x509_crt_t		crt;
	unsigned int			status = 0, n = 0;
	size_t				len = cnlen;

	cn[0] = '\0';
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (ci == NULL || (tls = ci->tls_session) == NULL)
		return (0);
	if ((peers = gnutls_certificate_get_peers(tls, &n)) == NULL || n == 0)
		return (0);
	if (gnutls_certificate_verify_peers2(tls, &status) < 0 || status != 0)
		return (0);
	if (gnutls_x509_crt_init(&crt) == 0) {
		if (gnutls_x509_crt_import(crt, &peers[0],
			GNUTLS_X509_FMT_DER) == 0 &&
		    gnutls_x509_crt_get_dn_by_oid(crt,
			GNUTLS_OID_X520_COMMON_NAME, 0, 0, cn, &len) < 0)
			cn[0] = '\0';
		gnutls_x509_crt_deinit(crt);
	}
	return (1);
}

/*
 * Per-request state: the body collected so far, and when the headers were
 * in.  A body must arrive within HTTPD_BODY_S: the idle timeout alone lets
 * a client trickle a byte every few seconds and hold a thread forever.
 */
#define HTTPD_BODY_S 10
/*
 * A keep-alive connection, once it has served a request, stays open idle
 * longer than the API server's webhook client keeps one (90 s): a server
 * that closes first races the client's next request on it, which then
 * fails with a broken pipe (Go does not retry a POST), and a user's pod
 * create fails.  Seen at 100 pod creates a second with a 10 s timeout.
 * A connection that has not completed a request yet gets HTTPD_FIRST_S of
 * silence, so slow clients cannot hold the threads.
 */
#define HTTPD_IDLE_S  120
#define HTTPD_FIRST_S 10

struct request {
	struct buf body;
	int	   too_big;
	time_t	   started;
};

static void
httpd_done_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct request *req = *con_cls;

	(void)cls;
	/*
	 * A client that completed a request may keep its connection idle
	 * for HTTPD_IDLE_S; until then (a slow or silent client) the
	 * daemon's HTTPD_FIRST_S applies.
	 */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		(void)MHD_set_connection_option(conn,
		    MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int)HTTPD_IDLE_S);
	if (req == NULL)
		return;
	buf_cleanup(&req->body);
	free(req);
	*con_cls = NULL;
}

static time_t
monotonic_s(void)
{
	return ((time_t)(clock_ms(CLOCK_MONOTONIC) / 1000));
}

static enum MHD_Result
httpd_handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	struct httpd	     *s = cls;
	struct request	     *req = *con_cls;
	struct httpd_request  hr;
	struct httpd_response out;
	struct MHD_Response  *resp;
	enum MHD_Result	      rc;

	(void)version;
	if (req == NULL) {
		/* First call: headers only.  Collect the body from here on. */
		req = xcalloc(1, sizeof(*req));
		buf_init(&req->body);
		req->started = monotonic_s();
		*con_cls = req;
		return (MHD_YES);
	}
	if (*upload_size != 0 && monotonic_s() - req->started > HTTPD_BODY_S) {
		log_warnx("http: %s %s: body still arriving after %ds: closed",
		    method, url, HTTPD_BODY_S);
		return (MHD_NO);
	}
	if (*upload_size != 0) {
		if (req->too_big ||
		    req->body.len + *upload_size > s->opts.max_body) {
			/* Keep reading, but no more bytes are kept. */
			req->too_big = 1;
			buf_cleanup(&req->body);
		} else
			buf_add(&req->body, upload_data, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	memset(&hr, 0, sizeof(hr));
	hr.method = method;
	hr.url = url;
	hr.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	hr.body = req->body.data != NULL ? req->body.data : "";
	hr.len = req->body.len;
	hr.too_big = req->too_big;
	if (s->client_ca != NULL)
		hr.client_verified = httpd_client_verified(conn, hr.client_cn,
		    sizeof(hr.client_cn));
	memset(&out, 0, sizeof(out));
	s->opts.handler(s->opts.arg, &hr, &out);
	if (out.body == NULL)
		httpd_reply(&out, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
		    "no answer\n");
	resp = MHD_create_response_from_buffer(strlen(out.body), out.body,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(out.body);
		return (MHD_NO);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    out.content_type != NULL ? out.content_type : "text/plain");
	rc = MHD_queue_response(conn, out.status, resp);
	MHD_destroy_response(resp);
	return (rc);
}

static void
httpd_log_cb(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_warnx("http: %s", line);
}

struct httpd *
httpd_start(const struct httpd_opts *opts, char *err, size_t errlen)
{
	struct httpd	     *s;
	struct MHD_OptionItem trust[2] = { { MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL } };
	int		      tls = opts->tls_cert != NULL;

	if (tls && httpd_current != NULL) {
		snprintf(err, errlen, "one TLS server per process");
		return (NULL);
	}
	s = xcalloc(1, sizeof(*s));
	s->opts = *opts;
	pthread_mutex_init(&s->cred_lock, NULL);
	if (tls) {
		if ((s->cred = cred_load(opts->tls_cert, opts->tls_key, err,
			 errlen)) == NULL)
			goto fail;
		file_id_get(opts->tls_cert, &s->cert_id);
		file_id_get(opts->tls_key, &s->key_id);
		s->checked = time(NULL);
		httpd_current = s;
	}
	if (opts->client_ca != NULL &&
	    (!tls ||
		(s->client_ca = httpd_read_file(opts->client_ca,
		     HTTPD_MAX_PEM)) == NULL)) {
		snprintf(err, errlen,
		    tls ? "%s: cannot read the client CA" :
			  "a client CA (%s) needs a certificate and key",
		    opts->client_ca);
		goto fail;
	}
	/* A trust list makes the server ask for client certificates. */
	if (s->client_ca != NULL) {
		trust[0].option = MHD_OPTION_HTTPS_MEM_TRUST;
		trust[0].ptr_value = s->client_ca;
	}
	/* The certificate callback comes last: plain HTTP ends the list. */
	s->mhd = MHD_start_daemon((tls ? MHD_USE_TLS : 0) |
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, httpd_handle, s, MHD_OPTION_EXTERNAL_LOGGER,
	    httpd_log_cb, NULL, MHD_OPTION_SOCK_ADDR,
	    (const struct sockaddr *)&s->opts.addr, MHD_OPTION_THREAD_POOL_SIZE,
	    opts->threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)HTTPD_FIRST_S, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)256, MHD_OPTION_NOTIFY_COMPLETED, httpd_done_cb, NULL,
	    MHD_OPTION_ARRAY, trust,
	    tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END,
	    httpd_cert_cb, MHD_OPTION_END);
	if (s->mhd == NULL) {
		snprintf(err, errlen,
		    "cannot serve HTTP%s on %s (address in "
		    "use?)",
		    tls ? "S" : "", opts->listen);
		goto fail;
	}
	return (s);
fail:
	httpd_stop(s);
	return (NULL);
}

int
httpd_check_tls(const char *certfile, const char *keyfile, char *err,
    size_t errlen)
{
	struct cred *c;

	if ((c = cred_load(certfile, keyfile, err, errlen)) == NULL)
		return (-1);
	cred_free(c);
	return (0);
}

void
httpd_stop(struct httpd *s)
{
	if (s == NULL)
		return;
	if (s->mhd != NULL)
		MHD_stop_daemon(s->mhd);
	if (httpd_current == s)
		httpd_current = NULL;
	cred_free(s->cred);
	free(s->client_ca);
	pthread_mutex_destroy(&s->cred_lock);
	free(s);
}

void
httpd_stats(struct httpd *s, struct httpd_stats *st)
{
	st->tls_reloads = atomic_load(&s->reloads);
	st->tls_reload_errors = atomic_load(&s->reload_errors);
}
