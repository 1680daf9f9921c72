/*
 * The HTTP(S) server both daemons use (libmicrohttpd, GnuTLS: httpd.c,
 * httpdtls.c and httpdconn.c, the only files that include <microhttpd.h>).
 * A small pool of threads collects each
 * request's body (up to max_body) and calls the handler, which must be
 * reentrant and must not block for long.  With a certificate and key it
 * serves TLS only, and reloads the pair when either file changes.
 *
 * What one client can hold is bounded: max_conns connections in all and
 * max_conns_per_client from one address; a request (TLS handshake, headers
 * and body) must be in within HTTPD_READ_S of its connection's start, or
 * of the previous request's end on a kept-alive one; a body over max_body
 * is refused with 413 (at once when Content-Length says so) and never
 * kept; bodies over HTTPD_SMALL_BODY share a budget of max_inflight
 * bytes held at once (503 beyond it); and the check callback can refuse
 * a request from its headers, before its body is read.
 */
#ifndef HTTPD_H
#define HTTPD_H

#include <netinet/in.h>

#include <stddef.h>

#include "buf.h"

struct httpd_request {
	const char *method;
	const char *url;	  /* path, without the query */
	const char *content_type; /* or NULL */
	const char *body;	  /* NUL-terminated; "" if none */
	size_t	    len;
	/*
	 * With a client CA: the client presented a certificate chain that
	 * verifies against it, for client authentication, naming one of
	 * client_names (else 0).  client_cn is its subject CN; client_why
	 * says why it is not verified.
	 */
	int  client_verified;
	char client_cn[128];
	char client_why[256];
	/* The client's address is loopback (127.0.0.0/8, ::1, v4-mapped). */
	int loopback;
};

struct httpd_response {
	unsigned int status;
	const char  *content_type; /* static string */
	char	    *body;	   /* malloc'd, taken by the server */
};

typedef void (*httpd_handler)(void *arg, const struct httpd_request *,
    struct httpd_response *);

struct httpd_opts {
	struct sockaddr_in addr;
	const char	  *listen;   /* for messages */
	const char	  *tls_cert; /* PEM; NULL: plain HTTP */
	const char	  *tls_key;
	/*
	 * PEM CA bundle: clients are asked for a certificate, and requests
	 * say whether theirs verified (the handler decides what needs one).
	 * Read at start.  NULL: no client certificates.
	 */
	const char *client_ca;
	/*
	 * With client_ca: the names a client certificate must carry (its
	 * subject CN or a DNS subject alternative name), comma-separated;
	 * NULL or "*": any name the CA signed.
	 */
	const char *client_names;
	size_t	    max_body; /* larger bodies: 413, never kept */
	/*
	 * Bytes of bodies over HTTPD_SMALL_BODY held at once, over all
	 * connections; a request that would pass it: 503, nothing kept.
	 * 0: 8 * max_body.
	 */
	size_t	      max_inflight;
	unsigned int  threads;
	unsigned int  max_conns;	    /* connections at once */
	unsigned int  max_conns_per_client; /* ... from one address */
	httpd_handler handler;
	/*
	 * Called with the headers alone (body "", len 0), before the body is
	 * read: a response it sets is sent at once and the body is never
	 * read (a client the endpoint does not accept).  NULL: none.
	 */
	httpd_handler check;
	void	     *arg;
};

struct httpd_stats {
	unsigned long long tls_reloads;
	unsigned long long tls_reload_errors;
	/* Refused: connections over max_conns_per_client, or max_conns. */
	unsigned long long refused_per_client;
	unsigned long long refused_server_full;
	/* Connections closed: no whole request within HTTPD_READ_S. */
	unsigned long long cut_deadline;
	/* Requests answered 413: a body over max_body. */
	unsigned long long too_large;
	/* Requests answered 503: over max_inflight. */
	unsigned long long busy;
};

/* How long a request may take to arrive: TLS handshake, headers, body. */
#define HTTPD_READ_S 10
/* Bodies up to this size do not count against max_inflight. */
#define HTTPD_SMALL_BODY (64 * 1024)

struct httpd;

/*
 * Parses "ADDR:PORT" (IPv4; ":PORT" for any address) into sin; -1 with a
 * message in err naming flag.
 */
int httpd_parse_listen(const char *flag, const char *s, struct sockaddr_in *sin,
    char *err, size_t errlen);
/* Starts serving; opts is copied.  One TLS server per process. */
struct httpd *httpd_start(const struct httpd_opts *, char *err, size_t errlen);
void	      httpd_stop(struct httpd *);
/* Loads the PEM pair as httpd_start would; -1 with err if it cannot. */
/* The largest PEM file (certificate, key, CA bundle) the daemons read. */
#define HTTPD_MAX_PEM (1024 * 1024)
/*
 * Reads a whole file of at most max bytes into a new NUL-terminated string
 * (the caller's); NULL on error (errno EFBIG when it is larger).
 */
char *httpd_read_file(const char *path, size_t max);
int   httpd_check_tls(const char *cert, const char *key, char *err,
      size_t errlen);
void  httpd_stats(struct httpd *, struct httpd_stats *);
/*
 * Writes PREFIX_http_refused_total{reason}, from httpd_stats, to b:
 * per_client, server_full, deadline, too_large, busy.
 */
void httpd_metrics(struct httpd *, struct buf *b, const char *prefix);
/*
 * Parses a connection limit flag: a whole number from 1 to max; -1 with a
 * message in err naming flag.
 */
int httpd_parse_limit(const char *flag, const char *s, unsigned int max,
    unsigned int *out, char *err, size_t errlen);
/*
 * Checks a --client-name list: names separated by commas, none empty or
 * with spaces, or "*" alone; -1 with a message in err naming flag.
 */
int httpd_check_names(const char *flag, const char *names, char *err,
    size_t errlen);
/*
 * Is the PEM certificate fit for a client (its chain aside): no
 * extendedKeyUsage, or one that includes clientAuth, and, unless names is
 * NULL or "*", its CN or a DNS subject alternative name among names
 * (case-insensitive)?  1, or 0 with why.  Fills cn with its subject CN.
 */
int httpd_cert_client_ok(const char *pem, const char *names, char *cn,
    size_t cnlen, char *why, size_t whylen);
/* What a daemon says about itself on GET /readyz and /metrics. */
struct httpd_health {
	/* NULL when ready, else why not (a static string). */
	const char *(*unready)(void *arg);
	/* Prometheus text, a new string. */
	char *(*metrics)(void *arg);
	void *arg;
};

/*
 * Answers GET /healthz ("ok": the process is up), /readyz and /metrics,
 * and 404 for any other path; 405 for other methods.
 */
void httpd_health(const struct httpd_request *, struct httpd_response *,
    const struct httpd_health *);
/* Sets a response: status, content type and a copy of text. */
void httpd_reply(struct httpd_response *, unsigned int status,
    const char *content_type, const char *text);

#endif /* HTTPD_H */
