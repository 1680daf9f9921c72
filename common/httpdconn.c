/*
 * The HTTP server's connection limits.  So that no client can starve the
 * others, every connection is tracked (struct conn, under conn_lock) from
 * libmicrohttpd's connection callbacks: its address counts against
 * max_conns_per_client, and it has a deadline by which its next request
 * must be wholly in.  A reaper thread shuts down the socket of a
 * connection past its deadline, and libmicrohttpd then closes it: an idle
 * timeout alone would let a client that sends a byte every few seconds
 * hold its connection forever.
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

#include "clock.h"
#include "buf.h"
#include "log.h"
#include "xmalloc.h"
#include "httpd.h"
#include "httpdint.h"

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
enum MHD_Result
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
void
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
void
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
void *
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
