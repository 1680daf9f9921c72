/*
 * The HTTPS server (libmicrohttpd with GnuTLS): the only file that includes
 * <microhttpd.h>.  Requests are served on libmicrohttpd's internal polling
 * thread; the handler is reentrant and makes no API or Slurm calls.  It
 * collects a request body up to REVIEW_MAX_BODY and hands AdmissionReviews
 * to review.c (POST /mutate); /healthz and /readyz answer ok.
 */
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "log.h"
#include "xmalloc.h"
#include "admission.h"

#define SERVER_MAX_PEM	(1024 * 1024)

struct server {
	struct MHD_Daemon	*mhd;
	struct review_conf	 review;
	char			*cert;	/* PEM; must outlive the daemon */
	char			*key;
};

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

/* Per-request state: the body collected so far. */
struct request {
	struct buf	body;
	int		too_big;
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

/* Answers an AdmissionReview POST to /mutate or /validate. */
static enum MHD_Result
server_review(struct server *s, struct MHD_Connection *conn,
    struct request *req, enum review_mode mode)
{
	enum MHD_Result	 rc;
	json_t		*out = NULL;
	char		 err[512], *body;
	const char	*ctype;
	int		 status;

	ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	if (ctype == NULL || strncmp(ctype, "application/json", 16) != 0)
		return (server_reply(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
		    "text/plain", "Content-Type must be application/json\n"));
	if (req->too_big) {
		snprintf(err, sizeof(err), "request body larger than %d "
		    "bytes\n", REVIEW_MAX_BODY);
		return (server_reply(conn, MHD_HTTP_BAD_REQUEST, "text/plain",
		    err));
	}
	status = review_handle(req->body.data != NULL ? req->body.data : "",
	    req->body.len, mode, &s->review, &out, err, sizeof(err) - 1);
	if (status != 200) {
		log_warnx("review: refused a malformed request: %s", err);
		strcat(err, "\n");
		return (server_reply(conn, MHD_HTTP_BAD_REQUEST, "text/plain",
		    err));
	}
	body = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	rc = server_reply(conn, MHD_HTTP_OK, "application/json", body);
	free(body);
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
	/* Validation (/validate) is not served yet: only the mutation. */
	review = strcmp(url, "/mutate") == 0;
	if (req == NULL) {
		/* First call: headers only.  Collect the body from here on. */
		req = xcalloc(1, sizeof(*req));
		buf_init(&req->body);
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
		return (server_review(s, conn, req, REVIEW_MUTATE));
	}
	if (strcmp(url, "/healthz") == 0 || strcmp(url, "/readyz") == 0) {
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return (server_reply(conn,
			    MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			    "use GET\n"));
		return (server_reply(conn, MHD_HTTP_OK, "text/plain", "ok\n"));
	}
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
server_start(const struct admission_conf *conf, char *err, size_t errlen)
{
	struct server	*s;

	s = xcalloc(1, sizeof(*s));
	s->review.scheduler_name = conf->scheduler_name;
	if ((s->cert = conf_read_file(conf->tls_cert, SERVER_MAX_PEM))
	    == NULL) {
		snprintf(err, errlen, "--tls-cert %s: cannot read",
		    conf->tls_cert);
		goto fail;
	}
	if ((s->key = conf_read_file(conf->tls_key, SERVER_MAX_PEM)) == NULL) {
		snprintf(err, errlen, "--tls-key %s: cannot read",
		    conf->tls_key);
		goto fail;
	}
	s->mhd = MHD_start_daemon(MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_ERROR_LOG, 0, NULL, NULL, server_handle, s,
	    MHD_OPTION_EXTERNAL_LOGGER, server_log_cb, NULL,
	    MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&conf->addr,
	    MHD_OPTION_HTTPS_MEM_CERT, s->cert,
	    MHD_OPTION_HTTPS_MEM_KEY, s->key,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)256,
	    MHD_OPTION_NOTIFY_COMPLETED, server_done_cb, NULL,
	    MHD_OPTION_END);
	if (s->mhd == NULL) {
		snprintf(err, errlen, "cannot serve HTTPS on %s (address in "
		    "use, or a bad certificate or key)", conf->listen);
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
	if (s->key != NULL)
		explicit_bzero(s->key, strlen(s->key));
	free(s->key);
	free(s->cert);
	free(s);
}
