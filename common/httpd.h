/*
 * The HTTP(S) server both daemons use (libmicrohttpd, GnuTLS): the only
 * file that includes <microhttpd.h>.  A small pool of threads collects each
 * request's body (up to max_body) and calls the handler, which must be
 * reentrant and must not block for long.  With a certificate and key it
 * serves TLS only, and reloads the pair when either file changes.
 */
#ifndef HTTPD_H
#define HTTPD_H

#include <netinet/in.h>

#include <stddef.h>

struct httpd_request {
	const char *method;
	const char *url;	  /* path, without the query */
	const char *content_type; /* or NULL */
	const char *body;	  /* NUL-terminated; "" if none */
	size_t	    len;
	int	    too_big; /* the body was over max_body */
	/*
	 * With a client CA: the client presented a certificate chain that
	 * verifies against it (else 0); client_cn is its subject CN.
	 */
	int  client_verified;
	char client_cn[128];
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
	const char   *client_ca;
	size_t	      max_body;
	unsigned int  threads;
	httpd_handler handler;
	void	     *arg;
};

struct httpd_stats {
	unsigned long long tls_reloads;
	unsigned long long tls_reload_errors;
};

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
