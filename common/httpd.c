/*
 * The HTTP(S) server of both daemons: libmicrohttpd with GnuTLS, started
 * and stopped here, and each request routed: a pool of libmicrohttpd
 * threads collects each request body (up to max_body; beyond that the
 * bytes are read and dropped, and the answer is 413) and calls the
 * handler, or answers the health endpoints itself.  Its TLS is
 * httpdtls.c's, its connection limits httpdconn.c's; httpdint.h is what
 * the three share, and only they include <microhttpd.h>.
 *
 * Bodies over HTTPD_SMALL_BODY share one budget, max_inflight bytes held
 * at once over all connections: a request that would go over it is
 * answered 503 (on its headers when its Content-Length says so, else once
 * its body is in, its bytes dropped as they come).  So many large bodies
 * at once cannot take the daemon's memory, and requests of ordinary size
 * (at most max_conns of them, each under HTTPD_SMALL_BODY) are still
 * answered while large ones are refused.
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

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "clock.h"
#include "buf.h"
#include "log.h"
#include "metrics.h"
#include "xmalloc.h"
#include "httpd.h"
#include "httpdint.h"

static const char *const refused_names[NREFUSED] = { "per_client",
	"server_full", "deadline", "too_large", "busy" };

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
 * Per-request state: the body collected so far, and what the headers
 * said.  Made when the request line is in (httpd_uri_cb).
 */
struct request {
	struct buf body;
	int	   headers; /* the headers were seen */
	int	   too_big;
	int	   busy; /* over max_inflight: 503, nothing kept */
	size_t	   held; /* bytes of s->held this request holds */
	int	   client_verified;
	char	   client_cn[128];
	char	   client_why[256];
};

/*
 * Makes req hold n bytes of the large-body budget in all (it may hold
 * some already); -1, holding nothing more, when that would go over it.
 */
static int
httpd_hold(struct httpd *s, struct request *req, size_t n)
{
	unsigned long long more, was;

	if (n <= req->held)
		return (0);
	more = n - req->held;
	was = atomic_fetch_add(&s->held, more);
	if (was + more > s->opts.max_inflight) {
		atomic_fetch_sub(&s->held, more);
		return (-1);
	}
	req->held = n;
	return (0);
}

static void
httpd_release(struct httpd *s, struct request *req)
{
	atomic_fetch_sub(&s->held, req->held);
	req->held = 0;
}

static void
httpd_busy(struct httpd *s, struct httpd_response *out)
{
	char msg[160];

	atomic_fetch_add(&s->refused[REFUSED_BUSY], 1);
	snprintf(msg, sizeof(msg),
	    "server busy: large request bodies held at once would pass %zu "
	    "bytes; retry\n",
	    s->opts.max_inflight);
	httpd_reply(out, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", msg);
}

/*
 * The request line is in: a kept-alive connection now has HTTPD_READ_S
 * for the rest of this request, if that is sooner than its deadline.
 */
static void *
httpd_uri_cb(void *cls, const char *uri, struct MHD_Connection *mc)
{
	struct httpd   *s = cls;
	struct request *req = xcalloc(1, sizeof(*req));

	(void)uri;
	buf_init(&req->body);
	httpd_conn_deadline(s, mc, httpd_now_ms() + HTTPD_READ_S * 1000LL, 1);
	return (req);
}

static void
httpd_done_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct httpd   *s = cls;
	struct request *req = *con_cls;

	/*
	 * A client that completed a request may keep its connection idle
	 * for HTTPD_IDLE_S, and then has HTTPD_READ_S for its next request;
	 * until then (a slow or silent client) the daemon's HTTPD_READ_S
	 * applies.
	 */
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) {
		(void)MHD_set_connection_option(conn,
		    MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int)HTTPD_IDLE_S);
		httpd_conn_deadline(s, conn,
		    httpd_now_ms() + (HTTPD_IDLE_S + HTTPD_READ_S) * 1000LL, 0);
	}
	if (req == NULL)
		return;
	httpd_release(s, req);
	buf_cleanup(&req->body);
	free(req);
	*con_cls = NULL;
}

/* Queues out (its body taken) as the answer. */
static enum MHD_Result
httpd_queue(struct MHD_Connection *conn, struct httpd_response *out)
{
	struct MHD_Response *resp;
	enum MHD_Result	     rc;

	if (out->body == NULL)
		httpd_reply(out, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
		    "no answer\n");
	resp = MHD_create_response_from_buffer(strlen(out->body), out->body,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		free(out->body);
		return (MHD_NO);
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    out->content_type != NULL ? out->content_type : "text/plain");
	rc = MHD_queue_response(conn, out->status, resp);
	MHD_destroy_response(resp);
	return (rc);
}

static void
httpd_too_large(struct httpd *s, struct httpd_response *out)
{
	char msg[96];

	atomic_fetch_add(&s->refused[REFUSED_TOO_LARGE], 1);
	snprintf(msg, sizeof(msg), "request body larger than %zu bytes\n",
	    s->opts.max_body);
	httpd_reply(out, MHD_HTTP_CONTENT_TOO_LARGE, "text/plain", msg);
}

/* Is the connection's client on this host? */
static int
httpd_loopback(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr_in       *s4;
	const struct sockaddr_in6      *s6;
	const unsigned char	       *a;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || ci->client_addr == NULL)
		return (0);
	if (ci->client_addr->sa_family == AF_INET) {
		s4 = (const struct sockaddr_in *)(const void *)ci->client_addr;
		return ((ntohl(s4->sin_addr.s_addr) >> 24) == 127);
	}
	if (ci->client_addr->sa_family != AF_INET6)
		return (0);
	s6 = (const struct sockaddr_in6 *)(const void *)ci->client_addr;
	a = s6->sin6_addr.s6_addr;
	return (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	    (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) && a[12] == 127));
}

static void
httpd_request_fill(struct httpd_request *hr, const struct request *req,
    struct MHD_Connection *conn, const char *method, const char *url)
{
	memset(hr, 0, sizeof(*hr));
	hr->loopback = httpd_loopback(conn);
	hr->method = method;
	hr->url = url;
	hr->content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	hr->body = req->body.data != NULL ? req->body.data : "";
	hr->len = req->body.len;
	hr->client_verified = req->client_verified;
	snprintf(hr->client_cn, sizeof(hr->client_cn), "%s", req->client_cn);
	snprintf(hr->client_why, sizeof(hr->client_why), "%s", req->client_why);
}

/*
 * The headers are in, the body not read yet: refuse a Content-Length over
 * max_body, and what the check callback refuses, before any of it is.
 * An answer queued now makes libmicrohttpd skip the body and close.
 */
static enum MHD_Result
httpd_headers(struct httpd *s, struct MHD_Connection *conn, struct request *req,
    const char *method, const char *url)
{
	struct httpd_request  hr;
	struct httpd_response out;
	const char	     *cl;
	unsigned long long    n;
	char		     *end;

	req->headers = 1;
	memset(&out, 0, sizeof(out));
	cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl != NULL) {
		errno = 0;
		n = strtoull(cl, &end, 10);
		if (end != cl && (errno == ERANGE || n > s->opts.max_body)) {
			httpd_too_large(s, &out);
			httpd_conn_deadline(s, conn, 0, 0);
			return (httpd_queue(conn, &out));
		}
		if (end != cl && n > HTTPD_SMALL_BODY &&
		    httpd_hold(s, req, (size_t)n) == -1) {
			httpd_busy(s, &out);
			httpd_conn_deadline(s, conn, 0, 0);
			return (httpd_queue(conn, &out));
		}
	}
	if (s->client_ca != NULL)
		req->client_verified = httpd_client_verified(s, conn,
		    req->client_cn, sizeof(req->client_cn), req->client_why,
		    sizeof(req->client_why));
	if (s->opts.check == NULL)
		return (MHD_YES);
	httpd_request_fill(&hr, req, conn, method, url);
	s->opts.check(s->opts.arg, &hr, &out);
	if (out.body == NULL)
		return (MHD_YES);
	httpd_conn_deadline(s, conn, 0, 0);
	return (httpd_queue(conn, &out));
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

	(void)version;
	if (req == NULL)
		return (MHD_NO); /* httpd_uri_cb makes it */
	if (!req->headers)
		return (httpd_headers(s, conn, req, method, url));
	if (*upload_size != 0) {
		if (req->too_big ||
		    req->body.len + *upload_size > s->opts.max_body) {
			/*
			 * A chunked body: keep reading (until the deadline),
			 * but no more bytes are kept.
			 */
			req->too_big = 1;
			buf_cleanup(&req->body);
		} else if (req->busy ||
		    (req->body.len + *upload_size > HTTPD_SMALL_BODY &&
			httpd_hold(s, req, req->body.len + *upload_size) ==
			    -1)) {
			/* The same, over the large-body budget. */
			req->busy = 1;
			buf_cleanup(&req->body);
			httpd_release(s, req);
		} else
			buf_add(&req->body, upload_data, *upload_size);
		*upload_size = 0;
		return (MHD_YES);
	}
	/* The whole request is in: no deadline while it is answered. */
	httpd_conn_deadline(s, conn, 0, 0);
	memset(&out, 0, sizeof(out));
	if (req->too_big)
		httpd_too_large(s, &out);
	else if (req->busy)
		httpd_busy(s, &out);
	else {
		httpd_request_fill(&hr, req, conn, method, url);
		s->opts.handler(s->opts.arg, &hr, &out);
	}
	return (httpd_queue(conn, &out));
}

static void
httpd_log_cb(void *cls, const char *fmt, va_list ap)
{
	struct httpd *s = cls;
	char	      line[512];
	long long     now, last;

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	/* One a connection over max_conns: counted, logged now and then. */
	if (s != NULL &&
	    strncmp(line, "Server reached connection limit", 31) == 0) {
		atomic_fetch_add(&s->refused[REFUSED_SERVER_FULL], 1);
		now = httpd_now_ms();
		last = atomic_load(&s->full_logged);
		if (now - last < HTTPD_LOG_EVERY_MS ||
		    !atomic_compare_exchange_strong(&s->full_logged, &last,
			now))
			return;
		log_warnx("http: %u connections at once: refusing more "
			  "(%llu refused in all)",
		    s->opts.max_conns,
		    atomic_load(&s->refused[REFUSED_SERVER_FULL]));
		return;
	}
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
	if (s->opts.max_conns == 0)
		s->opts.max_conns = 256;
	if (s->opts.max_conns_per_client == 0 ||
	    s->opts.max_conns_per_client > s->opts.max_conns)
		s->opts.max_conns_per_client = s->opts.max_conns;
	if (s->opts.max_inflight == 0)
		s->opts.max_inflight = 8 * s->opts.max_body;
	s->peers = xcalloc(s->opts.max_conns, sizeof(*s->peers));
	s->refused_logged = -HTTPD_LOG_EVERY_MS;
	atomic_store(&s->full_logged, -HTTPD_LOG_EVERY_MS);
	pthread_mutex_init(&s->cred_lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	if (opts->client_names != NULL &&
	    httpd_check_names("client names", opts->client_names, err,
		errlen) == -1)
		goto fail;
	if (tls) {
		if ((s->cred = httpd_cred_load(opts->tls_cert, opts->tls_key,
			 err, errlen)) == NULL)
			goto fail;
		httpd_file_id(opts->tls_cert, &s->cert_id);
		httpd_file_id(opts->tls_key, &s->key_id);
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
	    0, httpd_accept_cb, s, httpd_handle, s, MHD_OPTION_EXTERNAL_LOGGER,
	    httpd_log_cb, s, MHD_OPTION_SOCK_ADDR,
	    (const struct sockaddr *)&s->opts.addr, MHD_OPTION_THREAD_POOL_SIZE,
	    opts->threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned int)HTTPD_READ_S, MHD_OPTION_CONNECTION_LIMIT,
	    s->opts.max_conns, MHD_OPTION_NOTIFY_CONNECTION, httpd_conn_cb, s,
	    MHD_OPTION_URI_LOG_CALLBACK, httpd_uri_cb, s,
	    MHD_OPTION_NOTIFY_COMPLETED, httpd_done_cb, s, MHD_OPTION_ARRAY,
	    trust, tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END,
	    httpd_cert_cb, MHD_OPTION_END);
	if (s->mhd == NULL) {
		snprintf(err, errlen,
		    "cannot serve HTTP%s on %s (address in "
		    "use?)",
		    tls ? "S" : "", opts->listen);
		goto fail;
	}
	if (pthread_create(&s->reaper, NULL, httpd_reaper_main, s) != 0) {
		snprintf(err, errlen, "cannot start the HTTP reaper thread");
		goto fail;
	}
	s->reaper_started = 1;
	return (s);
fail:
	httpd_stop(s);
	return (NULL);
}

void
httpd_stop(struct httpd *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stopping, 1);
	if (s->reaper_started)
		pthread_join(s->reaper, NULL);
	/* Closes every connection: the close callbacks empty conns. */
	if (s->mhd != NULL)
		MHD_stop_daemon(s->mhd);
	if (httpd_current == s)
		httpd_current = NULL;
	httpd_cred_free(s->cred);
	free(s->client_ca);
	free(s->peers);
	pthread_mutex_destroy(&s->conn_lock);
	pthread_mutex_destroy(&s->cred_lock);
	free(s);
}

void
httpd_stats(struct httpd *s, struct httpd_stats *st)
{
	st->tls_reloads = atomic_load(&s->reloads);
	st->tls_reload_errors = atomic_load(&s->reload_errors);
	st->refused_per_client = atomic_load(&s->refused[REFUSED_PER_CLIENT]);
	st->refused_server_full = atomic_load(&s->refused[REFUSED_SERVER_FULL]);
	st->cut_deadline = atomic_load(&s->refused[REFUSED_DEADLINE]);
	st->too_large = atomic_load(&s->refused[REFUSED_TOO_LARGE]);
	st->busy = atomic_load(&s->refused[REFUSED_BUSY]);
}

void
httpd_metrics(struct httpd *s, struct buf *b, const char *prefix)
{
	char name[128];

	snprintf(name, sizeof(name), "%s_http_refused_total", prefix);
	metrics_counters(b, name,
	    "Connections and requests the HTTP server refused: over the "
	    "per-client or the total connection limit, not wholly in within "
	    "the read deadline, a body over the cap, a large body over the "
	    "budget of large bodies held at once.",
	    "reason", refused_names, s->refused, NREFUSED);
}
