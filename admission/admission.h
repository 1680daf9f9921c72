/*
 * slurm-bridge-admission internals.  main parses flags and waits for
 * signals; server.c (the only libmicrohttpd user) serves HTTPS from
 * libmicrohttpd's internal polling thread.
 */
#ifndef ADMISSION_H
#define ADMISSION_H

#include <netinet/in.h>

#include <jansson.h>

struct admission_conf {
	const char		*listen;	/* "ADDR:PORT" */
	const char		*tls_cert;	/* PEM file */
	const char		*tls_key;	/* PEM file */
	const char		*scheduler_name;
	int			 verbose;
	struct sockaddr_in	 addr;		/* parsed listen */
};

/* conf.c */
/* Parses "ADDR:PORT" (IPv4) into sin; -1 with a message in err. */
int	conf_parse_listen(const char *, struct sockaddr_in *sin, char *err,
	    size_t errlen);
/* Reads a whole file into a new NUL-terminated string; NULL on error. */
char	*conf_read_file(const char *path, size_t max);

/* review.c: AdmissionReview handling for pods (pure). */
#define REVIEW_MAX_BODY	(3 * 1024 * 1024)

enum review_mode {
	REVIEW_MUTATE,
	REVIEW_VALIDATE
};

struct review_conf {
	const char	*scheduler_name;	/* "slurm-bridge" */
};

/*
 * Handles one request body.  Returns 200 with *out set to the response
 * AdmissionReview (a new reference), or 400 with the reason in err.
 */
int	 review_handle(const char *body, size_t len, enum review_mode,
	    const struct review_conf *, json_t **out, char *err,
	    size_t errlen);
/* The JSON Patch that mutates pod (a new reference; [] if none). */
json_t	*review_mutate(const json_t *pod, const char *operation,
	    const struct review_conf *);
/* RFC 6901 escaping of one path token; a new string. */
char	*review_pointer_escape(const char *token);

/* server.c */
struct server;

/* Starts serving; the conf must outlive the server.  NULL on error. */
struct server	*server_start(const struct admission_conf *, char *err,
		    size_t errlen);
void		 server_stop(struct server *);

#endif /* ADMISSION_H */
