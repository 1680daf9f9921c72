/*
 * The HTTP(S) server of both daemons: libmicrohttpd with GnuTLS, the only
 * file that includes <microhttpd.h>.  A pool of libmicrohttpd threads
 * collects each request body (up to max_body; beyond that the bytes are
 * read and dropped, and the answer is 413) and calls the handler.
 *
 * With TLS, the certificate and key are handed to GnuTLS from a callback
 * that reloads them when either file changes (checked at most once a
 * second), so a rotated certificate is served without a restart.  A pair
 * that does not load, or whose key does not match the certificate, keeps
 * the previous one in service.  Old pairs are kept until the server stops:
 * a handshake in flight may still use one.
 *
 * So that no client can starve the others, every connection is tracked
 * (struct conn, under conn_lock) from libmicrohttpd's connection callbacks:
 * its address counts against max_conns_per_client, and it has a deadline
 * by which its next request must be wholly in.  A reaper thread shuts down
 * the socket of a connection past its deadline, and libmicrohttpd then
 * closes it: an idle timeout alone would let a client that sends a byte
 * every few seconds hold its connection forever.
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

static const char *const refused_names[NREFUSED] = { "per_client",
	"server_full", "deadline", "too_large", "busy" };

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

static long long
httpd_now_ms(void)
{
	return ((long long)clock_ms(CLOCK_MONOTONIC));
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

int
httpd_parse_limit(const char *flag, const char *s, unsigned int max,
    unsigned int *out, char *err, size_t errlen)
{
	char *end;
	long  n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || n < 1 ||
	    (unsigned long)n > max) {
		snprintf(err, errlen, "%s: \"%s\" is not a number from 1 to %u",
		    flag, s, max);
		return (-1);
	}
	*out = (unsigned int)n;
	return (0);
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
static int
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

/* --- Connections: per-address counts and deadlines --------------------- */

/* The address of sa as a key; -1 for a family without one. */
static int
httpd_peer_key(const struct sockaddr *sa, unsigned char key[16],
    sa_family_t *family)
{
	memset(key, 0, 16);
	*family = sa != NULL ? sa->sa_family : 0;
	if (*family == AF_INET)
		memcpy(key,
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		    4);
	else if (*family == AF_INET6)
		memcpy(key,
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		    16);
	else
		return (-1);
	return (0);
}

/* The slot of an address, or (create) a free one; NULL if none.  Locked. */
static struct peer *
httpd_peer_find(struct httpd *s, const unsigned char key[16],
    sa_family_t family, int create)
{
	struct peer *free_slot = NULL;
	unsigned int i;

	for (i = 0; i < s->opts.max_conns; i++) {
		if (s->peers[i].family == family &&
		    memcmp(s->peers[i].addr, key, 16) == 0)
			return (&s->peers[i]);
		if (free_slot == NULL && s->peers[i].family == 0)
			free_slot = &s->peers[i];
	}
	if (!create || free_slot == NULL)
		return (NULL);
	memcpy(free_slot->addr, key, 16);
	free_slot->family = family;
	free_slot->count = 0;
	return (free_slot);
}

/*
 * Counts a connection refused over the per-client limit; logs at most one
 * line every HTTPD_LOG_EVERY_MS, with how many went unlogged.
 */
static void
httpd_refused(struct httpd *s, const char *addr)
{
	unsigned long long quiet = 0;
	long long	   now = httpd_now_ms();
	int		   say = 0;

	atomic_fetch_add(&s->refused[REFUSED_PER_CLIENT], 1);
	pthread_mutex_lock(&s->conn_lock);
	if (now - s->refused_logged >= HTTPD_LOG_EVERY_MS) {
		say = 1;
		quiet = s->refused_quiet;
		s->refused_quiet = 0;
		s->refused_logged = now;
	} else
		s->refused_quiet++;
	pthread_mutex_unlock(&s->conn_lock);
	if (say && quiet > 0)
		log_warnx("http: %s: over %u connections from one address: "
			  "refused (and %llu more since the last report)",
		    addr, s->opts.max_conns_per_client, quiet);
	else if (say)
		log_warnx("http: %s: over %u connections from one address: "
			  "refused",
		    addr, s->opts.max_conns_per_client);
}

static void
httpd_addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a = NULL;

	if (sa != NULL && sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa != NULL && sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (a == NULL || inet_ntop(sa->sa_family, a, out, len) == NULL)
		snprintf(out, len, "?");
}

/*
 * libmicrohttpd asks before it takes a connection: not when its address
 * holds max_conns_per_client already.  (httpd_conn_cb counts exactly.)
 */
static enum MHD_Result
httpd_accept_cb(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct httpd *s = cls;
	struct peer  *p;
	unsigned char key[16];
	sa_family_t   family;
	char	      a[INET6_ADDRSTRLEN];
	int	      full;

	(void)addrlen;
	if (httpd_peer_key(addr, key, &family) == -1)
		return (MHD_YES);
	pthread_mutex_lock(&s->conn_lock);
	p = httpd_peer_find(s, key, family, 0);
	full = p != NULL && p->count >= s->opts.max_conns_per_client;
	pthread_mutex_unlock(&s->conn_lock);
	if (!full)
		return (MHD_YES);
	httpd_addr_str(addr, a, sizeof(a));
	httpd_refused(s, a);
	return (MHD_NO);
}

/*
 * A connection starts or closes (libmicrohttpd's thread for it).  At the
 * start it is counted against its address (over the limit: shut down at
 * once) and given HTTPD_READ_S for its first request.  libmicrohttpd calls
 * the close before it closes the socket, so the reaper never touches a
 * descriptor that was reused.
 */
static void
httpd_conn_cb(void *cls, struct MHD_Connection *mc, void **socket_context,
    enum MHD_ConnectionNotificationCode code)
{
	struct httpd		       *s = cls;
	struct conn		       *c = *socket_context;
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr	       *sa = NULL;
	unsigned char			key[16];
	sa_family_t			family;
	int				over = 0;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c == NULL)
			return;
		pthread_mutex_lock(&s->conn_lock);
		if (c->prev != NULL)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next != NULL)
			c->next->prev = c->prev;
		if (c->peer != NULL && --c->peer->count == 0)
			c->peer->family = 0;
		pthread_mutex_unlock(&s->conn_lock);
		free(c);
		*socket_context = NULL;
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->fd = -1;
	if ((ci = MHD_get_connection_info(mc,
		 MHD_CONNECTION_INFO_CONNECTION_FD)) != NULL)
		c->fd = ci->connect_fd;
	if ((ci = MHD_get_connection_info(mc,
		 MHD_CONNECTION_INFO_CLIENT_ADDRESS)) != NULL)
		sa = ci->client_addr;
	httpd_addr_str(sa, c->addr, sizeof(c->addr));
	c->deadline = httpd_now_ms() + HTTPD_READ_S * 1000LL;
	pthread_mutex_lock(&s->conn_lock);
	if (httpd_peer_key(sa, key, &family) == 0 &&
	    (c->peer = httpd_peer_find(s, key, family, 1)) != NULL &&
	    c->peer->count++ >= s->opts.max_conns_per_client)
		over = 1;
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;
	if (over) {
		c->cut = 1;
		if (c->fd != -1)
			shutdown(c->fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&s->conn_lock);
	*socket_context = c;
	if (over)
		httpd_refused(s, c->addr);
}

/* The tracked connection of an MHD connection, or NULL. */
static struct conn *
httpd_conn_get(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return (ci != NULL ? ci->socket_context : NULL);
}

/*
 * Sets a connection's deadline: 0 (none: its request is in and being
 * answered), or at in monotonic ms; with earlier, only if that is sooner.
 */
static void
httpd_conn_deadline(struct httpd *s, struct MHD_Connection *mc, long long at,
    int earlier)
{
	struct conn *c = httpd_conn_get(mc);

	if (c == NULL)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (!earlier || c->deadline == 0 || at < c->deadline)
		c->deadline = at;
	pthread_mutex_unlock(&s->conn_lock);
}

/* Shuts down the connections past their deadline, every HTTPD_REAP_MS. */
static void *
httpd_reaper_main(void *arg)
{
	struct httpd   *s = arg;
	struct conn    *c;
	struct timespec ts = { 0, HTTPD_REAP_MS * 1000000L };
	char		first[INET6_ADDRSTRLEN];
	long long	now;
	int		n;

	log_setname("http");
	while (!atomic_load(&s->stopping)) {
		nanosleep(&ts, NULL);
		now = httpd_now_ms();
		n = 0;
		pthread_mutex_lock(&s->conn_lock);
		for (c = s->conns; c != NULL; c = c->next) {
			if (c->cut || c->deadline == 0 || now < c->deadline ||
			    c->fd == -1)
				continue;
			/* libmicrohttpd sees the end and closes it. */
			shutdown(c->fd, SHUT_RDWR);
			c->cut = 1;
			if (n++ == 0)
				snprintf(first, sizeof(first), "%s", c->addr);
		}
		pthread_mutex_unlock(&s->conn_lock);
		if (n == 0)
			continue;
		atomic_fetch_add(&s->refused[REFUSED_DEADLINE],
		    (unsigned long long)n);
		if (n == 1)
			log_warnx("%s: no whole request within %d s: "
				  "connection closed",
			    first, HTTPD_READ_S);
		else
			log_warnx("%s and %d more: no whole request within "
				  "%d s: connections closed",
			    first, n - 1, HTTPD_READ_S);
	}
	return (NULL);
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
	atomic_store(&s->stopping, 1);
	if (s->reaper_started)
		pthread_join(s->reaper, NULL);
	/* Closes every connection: the close callbacks empty conns. */
	if (s->mhd != NULL)
		MHD_stop_daemon(s->mhd);
	if (httpd_current == s)
		httpd_current = NULL;
	cred_free(s->cred);
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
