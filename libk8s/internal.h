/*
 * Internals shared between libk8s files.  Never included from outside
 * libk8s.
 */
#ifndef LIBK8S_INTERNAL_H
#define LIBK8S_INTERNAL_H

#include <sys/types.h>

#include <stdatomic.h>

#include "k8s.h"
#include "xmalloc.h"

struct k8s_config {
	char  *server; /* https://host:port, no trailing slash */
	char  *ns;     /* context namespace, "default" if unset */
	char  *ca_file;
	char  *ca_pem; /* decoded certificate-authority-data */
	size_t ca_len;
	char  *cert_file;
	char  *key_file;
	char  *cert_pem;
	size_t cert_len;
	char  *key_pem;
	size_t key_len;
	char  *token;	   /* static bearer token */
	char  *token_file; /* re-read when it changes (rotation) */
	int    insecure;   /* insecure-skip-tls-verify */
};

/* client.c */
void error_set(struct k8s_error *, long status, const char *reason,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void error_from_status_obj(struct k8s_error *, long status, const json_t *st,
    const char *fallback);
/*
 * Streams a GET: write_cb receives the body as it arrives; abort_cb is
 * polled at least once a second and stops the transfer when it returns
 * nonzero; the client's timeout (0: none) bounds the whole transfer.
 * Returns 0 on a 2xx response that ended normally, -1 otherwise.
 */
typedef size_t (*client_write_fn)(char *, size_t, size_t, void *);
int client_stream(struct k8s_client *, const char *path, client_write_fn,
    void *arg, int (*abort_cb)(void *), void *abort_arg, struct k8s_error *);

#endif /* LIBK8S_INTERNAL_H */
