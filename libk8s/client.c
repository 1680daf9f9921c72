/*
 * The HTTP side of libk8s: one curl easy handle per client, TLS from the
 * config (CA, client certificate, bearer token), a token-bucket rate limit,
 * and the translation of failures into struct k8s_error.  A client belongs to
 * the thread that created it.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "buf.h"
#include "internal.h"

struct k8s_client {
	const struct k8s_config *conf;
	CURL			*curl;
	char			 errbuf[CURL_ERROR_SIZE];
	int			 openssl; /* libcurl's TLS is OpenSSL's */
	long			 timeout_ms;
	struct k8s_limiter	*own; /* the client's own rate */
	struct k8s_limiter	*lim; /* own, or a shared one */
	/* bearer token, re-read from token_file when it changes */
	char	       *token;
	struct timespec token_mtime;
};

void
error_set(struct k8s_error *err, long status, const char *reason,
    const char *fmt, ...)
{
	va_list ap;
	size_t	n;

	if (err == NULL)
		return;
	err->status = status;
	snprintf(err->reason, sizeof(err->reason), "%s", reason);
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	/* A plain-text body ("404 page not found\n") ends in a newline. */
	n = strlen(err->text);
	while (n > 0 && isspace((unsigned char)err->text[n - 1]))
		err->text[--n] = '\0';
}

/* Fills err from a metav1.Status object (st may be NULL). */
void
error_from_status_obj(struct k8s_error *err, long status, const json_t *st,
    const char *fallback)
{
	const char *reason, *msg;

	reason = json_string_value(json_object_get(st, "reason"));
	msg = json_string_value(json_object_get(st, "message"));
	error_set(err, status, reason != NULL ? reason : "HTTPError", "%s",
	    msg != NULL ? msg : fallback);
}

/* Fills err from a response body that should be a metav1.Status. */
static void
error_from_status(struct k8s_error *err, long status, const char *body,
    size_t len)
{
	json_t *st;

	st = body != NULL && len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
	error_from_status_obj(err, status, st,
	    body != NULL && len > 0 ? body : "no response body");
	json_decref(st);
}

static size_t
client_write_cb(char *p, size_t size, size_t n, void *arg)
{
	buf_add(arg, p, size * n);
	return (size * n);
}

/* Re-reads the bearer token file when its mtime changed (rotation). */
static void
client_token_refresh(struct k8s_client *c)
{
	struct stat st;
	FILE	   *fp;
	char	    tok[8192];
	size_t	    n;

	if (c->conf->token_file == NULL || stat(c->conf->token_file, &st) == -1)
		return;
	if (c->token != NULL && st.st_mtim.tv_sec == c->token_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == c->token_mtime.tv_nsec)
		return;
	if ((fp = fopen(c->conf->token_file, "r")) == NULL)
		return;
	n = fread(tok, 1, sizeof(tok) - 1, fp);
	fclose(fp);
	tok[n] = '\0';
	tok[strcspn(tok, "\r\n")] = '\0';
	if (c->token != NULL)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	c->token = xstrdup(tok);
	explicit_bzero(tok, sizeof(tok));
	c->token_mtime = st.st_mtim;
}

struct k8s_client *
k8s_client_new(const struct k8s_config *conf, struct k8s_error *err)
{
	struct k8s_client *c;
	const char	  *ssl;

	c = xcalloc(1, sizeof(*c));
	c->conf = conf;
	c->timeout_ms = 30000;
	if ((c->curl = curl_easy_init()) == NULL) {
		error_set(err, 0, "ClientError", "curl_easy_init failed");
		free(c);
		return (NULL);
	}
	c->own = c->lim = k8s_limiter_new(50, 100);
	ssl = curl_version_info(CURLVERSION_NOW)->ssl_version;
	c->openssl = ssl != NULL && strncmp(ssl, "OpenSSL", 7) == 0;
	if (conf->token != NULL)
		c->token = xstrdup(conf->token);
	return (c);
}

void
k8s_client_free(struct k8s_client *c)
{
	if (c == NULL)
		return;
	curl_easy_cleanup(c->curl);
	k8s_limiter_free(c->own);
	if (c->token != NULL)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c);
}

void
k8s_client_set_rate(struct k8s_client *c, double qps, int burst)
{
	k8s_limiter_set(c->own, qps, burst);
	c->lim = c->own;
}

void
k8s_client_set_limiter(struct k8s_client *c, struct k8s_limiter *l)
{
	c->lim = l != NULL ? l : c->own;
}

void
k8s_client_set_timeout(struct k8s_client *c, long ms)
{
	c->timeout_ms = ms;
}

/*
 * libcurl asks OpenSSL to free a connection's read and write buffers each
 * time they empty (SSL_MODE_RELEASE_BUFFERS), so every read of a watch
 * allocated and freed 16 KiB again: a profile of the bridge binding 2,000
 * pods put 6.5 % of its CPU in malloc_consolidate under its watches' TLS
 * reads.  Streams (an informer's lists and watch, on one connection that
 * reads all day) keep their buffers, OpenSSL's two record buffers a
 * connection; one-shot requests, made by many clients that mostly wait,
 * still free theirs.  libcurl calls this with its SSL_CTX before it makes
 * the connection's SSL.  ctx is an SSL_CTX only when libcurl's TLS is
 * OpenSSL, so only then is it installed.
 */
static CURLcode
client_sslctx(CURL *curl, void *ctx, void *arg)
{
	(void)curl;
	(void)arg;
	SSL_CTX_clear_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	return (CURLE_OK);
}

/* Resets the handle and applies URL, TLS and auth for one request. */
static struct curl_slist *
client_setup(struct k8s_client *c, const char *path, const char *ctype)
{
	const struct k8s_config *conf = c->conf;
	struct curl_slist	*hdr = NULL;
	struct curl_blob	 blob;
	char			*url, *auth;

	curl_easy_reset(c->curl);
	xasprintf(&url, "%s%s", conf->server, path);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c->curl, CURLOPT_ACCEPT_ENCODING, "");
	c->errbuf[0] = '\0';
	if (conf->ca_pem != NULL) {
		blob.data = conf->ca_pem;
		blob.len = conf->ca_len;
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(c->curl, CURLOPT_CAINFO_BLOB, &blob);
	} else if (conf->ca_file != NULL)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, conf->ca_file);
	if (conf->insecure) {
		curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (conf->cert_pem != NULL) {
		blob.data = conf->cert_pem;
		blob.len = conf->cert_len;
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(c->curl, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(c->curl, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (conf->cert_file != NULL)
		curl_easy_setopt(c->curl, CURLOPT_SSLCERT, conf->cert_file);
	if (conf->key_pem != NULL) {
		blob.data = conf->key_pem;
		blob.len = conf->key_len;
		blob.flags = CURL_BLOB_COPY;
		curl_easy_setopt(c->curl, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(c->curl, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (conf->key_file != NULL)
		curl_easy_setopt(c->curl, CURLOPT_SSLKEY, conf->key_file);
	client_token_refresh(c);
	if (c->token != NULL) {
		xasprintf(&auth, "Authorization: Bearer %s", c->token);
		hdr = curl_slist_append(hdr, auth);
		explicit_bzero(auth, strlen(auth));
		free(auth);
	}
	hdr = curl_slist_append(hdr, "Accept: application/json");
	if (ctype != NULL) {
		xasprintf(&auth, "Content-Type: %s", ctype);
		hdr = curl_slist_append(hdr, auth);
		free(auth);
	}
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "slurm-bridge/libk8s");
	return (hdr);
}

/*
 * One request; a 2xx answer's body is left in resp (which the caller has
 * initialised and cleans up).
 */
static int
client_perform(struct k8s_client *c, const char *method, const char *path,
    const char *ctype, const json_t *body, struct buf *resp,
    struct k8s_error *err)
{
	struct curl_slist *hdr;
	char		  *req = NULL;
	CURLcode	   rc;
	long		   status = 0;
	int		   ret = -1;

	k8s_limiter_wait(c->lim);
	if (body != NULL && ctype == NULL)
		ctype = "application/json";
	hdr = client_setup(c, path, ctype);
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, client_write_cb);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, resp);
	if (body != NULL) {
		req = json_dumps(body, JSON_COMPACT);
		if (req == NULL) {
			error_set(err, 0, "ClientError",
			    "cannot encode request body");
			goto done;
		}
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, req);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE,
		    (long)strlen(req));
	} else if (strcmp(method, "GET") == 0)
		curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
	if ((rc = curl_easy_perform(c->curl)) != CURLE_OK) {
		error_set(err, 0, "TransportError", "%s %s: %s", method, path,
		    c->errbuf[0] != '\0' ? c->errbuf : curl_easy_strerror(rc));
		goto done;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		error_from_status(err, status, resp->data, resp->len);
		goto done;
	}
	ret = 0;
done:
	curl_slist_free_all(hdr);
	free(req);
	return (ret);
}

int
k8s_request(struct k8s_client *c, const char *method, const char *path,
    const char *content_type, const json_t *body, json_t **out,
    struct k8s_error *err)
{
	struct buf   resp;
	json_error_t jerr;
	int	     ret = -1;

	if (out != NULL)
		*out = NULL;
	buf_init(&resp);
	if (client_perform(c, method, path, content_type, body, &resp, err) ==
	    -1)
		goto done;
	if (out != NULL && resp.len > 0) {
		if ((*out = json_loadb(resp.data, resp.len, 0, &jerr)) ==
		    NULL) {
			error_set(err, 200, "BadResponse",
			    "%s %s: invalid JSON: %s", method, path, jerr.text);
			goto done;
		}
	}
	ret = 0;
done:
	buf_cleanup(&resp);
	return (ret);
}

int
k8s_get_raw(struct k8s_client *c, const char *path, struct buf *out,
    struct k8s_error *err)
{
	buf_reset(out);
	return (client_perform(c, "GET", path, NULL, NULL, out, err));
}

struct stream_ctx {
	int (*abort_cb)(void *);
	void	       *abort_arg;
	struct buf	errbody; /* body of a non-2xx answer */
	client_write_fn write_cb;
	void	       *write_arg;
	CURL	       *curl;
};

static int
stream_progress_cb(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult,
    curl_off_t uln)
{
	struct stream_ctx *s = arg;

	(void)dlt;
	(void)dln;
	(void)ult;
	(void)uln;
	return (s->abort_cb != NULL && s->abort_cb(s->abort_arg) ? 1 : 0);
}

static size_t
stream_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct stream_ctx *s = arg;
	long		   status = 0;

	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		/* Keep a bounded error body for the Status object. */
		if (s->errbody.len < 65536)
			buf_add(&s->errbody, p, size * n);
		return (size * n);
	}
	return (s->write_cb(p, size, n, s->write_arg));
}

int
client_stream(struct k8s_client *c, const char *path, client_write_fn cb,
    void *arg, int (*abort_cb)(void *), void *abort_arg, struct k8s_error *err)
{
	struct curl_slist *hdr;
	struct stream_ctx  s;
	CURLcode	   rc;
	long		   status = 0;
	int		   ret = -1;

	memset(&s, 0, sizeof(s));
	s.abort_cb = abort_cb;
	s.abort_arg = abort_arg;
	s.write_cb = cb;
	s.write_arg = arg;
	s.curl = c->curl;
	buf_init(&s.errbody);
	k8s_limiter_wait(c->lim);
	hdr = client_setup(c, path, NULL);
	if (c->openssl)
		curl_easy_setopt(c->curl, CURLOPT_SSL_CTX_FUNCTION,
		    client_sslctx);
	curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, stream_write_cb);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, stream_progress_cb);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, &s);
	/* A silent connection is dead: the server sends bookmarks. */
	curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_TIME, 600L);
	rc = curl_easy_perform(c->curl);
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 0 && (status < 200 || status > 299)) {
		error_from_status(err, status, s.errbody.data, s.errbody.len);
		goto done;
	}
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		error_set(err, status, "Stopped", "stopped by caller");
		goto done;
	}
	if (rc != CURLE_OK) {
		error_set(err, status, "TransportError", "GET %s: %s", path,
		    c->errbuf[0] != '\0' ? c->errbuf : curl_easy_strerror(rc));
		goto done;
	}
	ret = 0;
done:
	curl_slist_free_all(hdr);
	buf_cleanup(&s.errbody);
	return (ret);
}
