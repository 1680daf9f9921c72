/*
 * The HTTPS server (libmicrohttpd with GnuTLS): the only file that includes
 * <microhttpd.h>.  Requests are served on libmicrohttpd's internal polling
 * thread; the handler is reentrant and makes no API or Slurm calls.  For now
 * it answers /healthz; the AdmissionReview endpoints come with the webhook
 * issue.
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

static enum MHD_Result
server_handle(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (*upload_size != 0) {
		/* Bodies are not used by any endpoint yet: drop them. */
		*upload_size = 0;
		return (MHD_YES);
	}
	if (strcmp(url, "/healthz") == 0) {
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
