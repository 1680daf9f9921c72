/*
 * slurm-bridge-admission internals.  main parses flags and waits for
 * signals; server.c (the only libmicrohttpd user) serves HTTPS from
 * libmicrohttpd's internal polling thread.
 */
#ifndef ADMISSION_H
#define ADMISSION_H

#include <netinet/in.h>

struct admission_conf {
	const char		*listen;	/* "ADDR:PORT" */
	const char		*tls_cert;	/* PEM file */
	const char		*tls_key;	/* PEM file */
	int			 verbose;
	struct sockaddr_in	 addr;		/* parsed listen */
};

/* conf.c */
/* Parses "ADDR:PORT" (IPv4) into sin; -1 with a message in err. */
int	conf_parse_listen(const char *, struct sockaddr_in *sin, char *err,
	    size_t errlen);
/* Reads a whole file into a new NUL-terminated string; NULL on error. */
char	*conf_read_file(const char *path, size_t max);

/* server.c */
struct server;

/* Starts serving; the conf must outlive the server.  NULL on error. */
struct server	*server_start(const struct admission_conf *, char *err,
		    size_t errlen);
void		 server_stop(struct server *);

#endif /* ADMISSION_H */
