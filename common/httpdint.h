/*
 * What the HTTP server's files share, and nothing else includes: the
 * server (struct httpd) and its connections, credentials and limits.
 * httpd.c starts and stops the server and routes each request,
 * httpdtls.c holds TLS (the certificate reloaded as it changes, client
 * certificates checked), httpdconn.c the connection limits (per-client
 * counts, deadlines and their reaper).  Only they include <microhttpd.h>.
 */
#ifndef HTTPDINT_H
#define HTTPDINT_H

#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "clock.h"
#include "httpd.h"

#define HTTPD_MAX_CHAIN 8
/* At most this many purposes and alternative names are read from a cert. */
#define HTTPD_MAX_EXT 64

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

/* Connections from one address (a free slot has family 0). */
struct peer {
	unsigned char addr[16];
	sa_family_t   family;
	unsigned int  count;
};

/* What the server refused, by reason (the metric's label values). */
enum refused {
	REFUSED_PER_CLIENT,
	REFUSED_SERVER_FULL,
	REFUSED_DEADLINE,
	REFUSED_TOO_LARGE,
	REFUSED_BUSY,
	NREFUSED
};

/* One connection, from its start to its close (the socket context). */
struct conn {
	struct conn *prev, *next;
	struct peer *peer;
	int	     fd;
	/* Monotonic ms by which the next request must be in; 0: none. */
	long long deadline;
	int	  cut; /* the reaper shut it down */
	char	  addr[INET6_ADDRSTRLEN];
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
	/* conn_lock: conns, peers and the refusal log's state. */
	pthread_mutex_t	   conn_lock;
	struct conn	  *conns;
	struct peer	  *peers;	   /* max_conns slots */
	long long	   refused_logged; /* monotonic ms */
	unsigned long long refused_quiet;  /* since then */
	pthread_t	   reaper;
	int		   reaper_started;
	atomic_int	   stopping;
	atomic_llong	   full_logged; /* monotonic ms */
	atomic_ullong	   refused[NREFUSED];
	atomic_ullong	   held; /* bytes of large bodies, max_inflight */
};

/* GnuTLS's certificate callback takes no argument: one TLS server. */
extern struct httpd *httpd_current;

/*
 * A keep-alive connection, once it has served a request, stays open idle
 * longer than the API server's webhook client keeps one (90 s): a server
 * that closes first races the client's next request on it, which then
 * fails with a broken pipe (Go does not retry a POST), and a user's pod
 * create fails.  Seen at 100 pod creates a second with a 10 s timeout.
 * A connection that has not completed a request yet gets HTTPD_READ_S
 * (httpd.h) for it, whether silent or trickling, so slow clients cannot
 * hold the threads; a kept-alive one gets HTTPD_IDLE_S + HTTPD_READ_S for
 * its next request, and HTTPD_READ_S once its request line is in.
 */
#define HTTPD_IDLE_S 120
/* How often the reaper looks for connections past their deadline. */
#define HTTPD_REAP_MS 250
/* Refused connections are logged at most this often (with a count). */
#define HTTPD_LOG_EVERY_MS 10000

static inline long long
httpd_now_ms(void)
{
	return ((long long)clock_ms(CLOCK_MONOTONIC));
}

/* httpdtls.c, httpdconn.c: what httpd.c calls of them. */
struct cred *httpd_cred_load(const char *certfile, const char *keyfile,
    char *err, size_t errlen);
void	     httpd_cred_free(struct cred *c);
int	     httpd_file_id(const char *path, struct file_id *id);
int  httpd_cert_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
     int nreqs, const gnutls_pk_algorithm_t *algos, int nalgos,
     gnutls_pcert_st **pcert, unsigned int *npcert, gnutls_privkey_t *key);
int  httpd_client_verified(struct httpd *s, struct MHD_Connection *conn,
     char *cn, size_t cnlen, char *why, size_t whylen);
void httpd_conn_deadline(struct httpd *s, struct MHD_Connection *mc,
    long long at, int earlier);
enum MHD_Result httpd_accept_cb(void *cls, const struct sockaddr *addr,
    socklen_t addrlen);
void  httpd_conn_cb(void *cls, struct MHD_Connection *mc, void **socket_context,
     enum MHD_ConnectionNotificationCode code);
void *httpd_reaper_main(void *arg);

#endif /* HTTPDINT_H */
