/*
 * libk8s: a small Kubernetes API client.
 *
 * - Config: kubeconfig (current or named context; certificates and CA as
 *   files or inline *-data; bearer token) or in-cluster service account.
 * - Client: one curl easy handle per client; a client belongs to one thread
 *   and is never shared.  Errors come back in a caller-owned struct
 *   k8s_error; the library never exits on runtime errors, and logs (log.h)
 *   only from an informer's thread, whose list and watch failures have no
 *   caller to go back to.
 * - Watch: a streaming parser for the JSON watch protocol, and an informer
 *   thread that lists, watches from the list's resourceVersion, follows
 *   bookmarks, relists on 410 Gone (HTTP or in-stream) and keeps a keyed
 *   store so that a relist produces synthetic deletes.
 *
 * Ownership: every _new has a _free (which accepts NULL).  json_t results
 * passed out through a json_t ** are new references owned by the caller.
 */
#ifndef K8S_H
#define K8S_H

#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct k8s_error {
	long status;	 /* HTTP status, or 0 when no response */
	char reason[64]; /* Status.reason, or a short local reason */
	char text[256];	 /* Status.message, or a local description */
};

/* kubeconfig.c */
struct k8s_config;

/*
 * Loads a kubeconfig file.  context may be NULL for the current context.
 * Returns a new config or NULL with err filled.
 */
struct k8s_config *k8s_config_load(const char *path, const char *context,
    struct k8s_error *err);
/* In-cluster config from the service-account mount; NULL if not in a pod. */
struct k8s_config *k8s_config_incluster(struct k8s_error *err);
/*
 * The usual lookup: path if given, else $KUBECONFIG, else in-cluster, else
 * ~/.kube/config.
 */
struct k8s_config *k8s_config_default(const char *path, struct k8s_error *err);
void		   k8s_config_free(struct k8s_config *);
/* Borrowed strings, valid while the config lives. */
const char *k8s_config_server(const struct k8s_config *);
const char *k8s_config_namespace(const struct k8s_config *);

/*
 * Checks a file that holds or protects credentials: -1 with err (naming
 * the file, its mode and the fix) when group or others may write it, or,
 * with secret, when everyone may read it.  A missing file passes.
 */
int k8s_file_check_perms(const char *path, const char *what, int secret,
    struct k8s_error *);

/* limiter.c: a token bucket, safe to share between threads. */
struct k8s_limiter;

/* qps <= 0: unlimited. */
struct k8s_limiter *k8s_limiter_new(double qps, int burst);
void		    k8s_limiter_free(struct k8s_limiter *);
void k8s_limiter_set(struct k8s_limiter *, double qps, int burst);
/* Takes a token, sleeping until one is due. */
void k8s_limiter_wait(struct k8s_limiter *);

/* client.c */
struct k8s_client;

/* The config must outlive the client; it is read-only and may be shared. */
struct k8s_client *k8s_client_new(const struct k8s_config *,
    struct k8s_error *err);
void		   k8s_client_free(struct k8s_client *);
/* Client-side rate limit (token bucket); 0 disables.  Default 50/100. */
void k8s_client_set_rate(struct k8s_client *, double qps, int burst);
/*
 * Shares l (borrowed; it must outlive the client) instead of the client's
 * own rate; NULL goes back to the own one.
 */
void k8s_client_set_limiter(struct k8s_client *, struct k8s_limiter *);
/* Whole-request timeout in milliseconds (default 30000). */
void k8s_client_set_timeout(struct k8s_client *, long ms);

/*
 * Performs one request.  path is absolute ("/api/v1/pods?limit=1").  body
 * may be NULL.  On success (2xx) returns 0 and, if out is not NULL, stores
 * the parsed response (or NULL for an empty body).  Otherwise returns -1
 * with err filled from the API's Status object or the transport error.
 */
int k8s_request(struct k8s_client *, const char *method, const char *path,
    const char *content_type, const json_t *body, json_t **out,
    struct k8s_error *err);
struct buf;
/* GET with the body left as bytes in out (reset first; the caller's). */
int k8s_get_raw(struct k8s_client *, const char *path, struct buf *out,
    struct k8s_error *err);

/* request.c: the verbs over k8s_request, and the Binding subresource. */
enum k8s_patch {
	K8S_PATCH_MERGE,     /* application/merge-patch+json */
	K8S_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
	K8S_PATCH_JSON	     /* application/json-patch+json */
};

int k8s_get(struct k8s_client *, const char *path, json_t **out,
    struct k8s_error *err);
int k8s_create(struct k8s_client *, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err);
/* PUT: replaces the object (optimistic concurrency via its resourceVersion). */
int k8s_update(struct k8s_client *, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err);
int k8s_patch(struct k8s_client *, const char *path, enum k8s_patch,
    const json_t *patch, json_t **out, struct k8s_error *err);
int k8s_delete(struct k8s_client *, const char *path, const json_t *opts,
    struct k8s_error *err);

/*
 * Binds a pod, with its UID as precondition; annotations (an object, or
 * NULL) land on the pod in the same write.
 */
int k8s_pod_bind(struct k8s_client *, const char *ns, const char *name,
    const char *uid, const char *node, const json_t *annotations,
    struct k8s_error *err);

/*
 * discovery.c: the version of API group that serves resource (a plural,
 * e.g. "podgroups"): the group's preferred version when it does, else the
 * first other that does.  1 with version filled, 0 when no version serves
 * it (or the group is not served), -1 with err.
 */
int k8s_discover(struct k8s_client *, const char *group, const char *resource,
    char *version, size_t len, struct k8s_error *err);

/* object.c: borrowed accessors; NULL or 0 when absent. */
const char *k8s_obj_str(const json_t *obj, const char *dotted_path);
json_t	   *k8s_obj_get(const json_t *obj, const char *dotted_path);
const char *k8s_obj_name(const json_t *);
const char *k8s_obj_namespace(const json_t *);
const char *k8s_obj_uid(const json_t *);
const char *k8s_obj_label(const json_t *, const char *key);
const char *k8s_obj_annotation(const json_t *, const char *key);
/* Does metadata.finalizers hold finalizer? */
int k8s_obj_has_finalizer(const json_t *, const char *finalizer);
/* Writes "ns/name" (or "name" for cluster-scoped objects); returns key. */
char *k8s_obj_key(const json_t *, char *key, size_t keylen);

/* match.c: pods against scheduling rules (pure). */
/*
 * Does a LabelSelector ({matchLabels, matchExpressions} with In, NotIn,
 * Exists, DoesNotExist) match labels (an object, may be NULL)?  1 or 0; -1
 * when the selector is malformed.  An empty selector matches everything.
 */
int k8s_selector_matches(const json_t *selector, const json_t *labels);
/*
 * A label value as validation.IsValidLabelValue has it: at most 63
 * characters of [-_.A-Za-z0-9], alphanumeric at both ends, or empty.  (A
 * label key's name part is the same, but not empty.)
 */
int k8s_label_value_ok(const char *s);
/*
 * Does the pod tolerate the taint key=value:effect?  Kubernetes' rules:
 * Exists with an empty key tolerates everything, an empty effect every
 * effect, Equal (the default) needs the value.
 */
int k8s_pod_tolerates(const json_t *pod, const char *key, const char *value,
    const char *effect);

/* encode.c: the encodings the API uses; strings returned are the caller's. */
/* metav1.MicroTime of when (NULL: now), e.g. 2026-01-02T03:04:05.000006Z. */
char *k8s_microtime(char *buf, size_t len, const struct timeval *when);
/* A metav1.Time or MicroTime (its seconds) as epoch seconds; 0 if not one. */
int64_t k8s_time_parse(const char *s);
/* Standard base64 of len bytes, as a new string. */
char *k8s_base64_encode(const void *data, size_t len);
/*
 * Decodes base64 (whitespace ignored) into *out, a new NUL-terminated
 * buffer of *outlen bytes.  0, or -1 on a character outside the alphabet.
 */
int k8s_base64_decode(const char *in, char **out, size_t *outlen);
/* Percent-encodes s for a query string into a new string. */
char *k8s_urlencode(const char *s);

/* quantity.c: Kubernetes resource quantities ("500m", "2Gi", "1e3"). */
/* Value rounded up to a whole unit.  0, or -1 on syntax or overflow. */
int k8s_quantity_value(const char *s, int64_t *out);
/* Value in thousandths, rounded up.  0, or -1 on syntax or overflow. */
int k8s_quantity_milli(const char *s, int64_t *out);

/* watch.c: the streaming watch parser (pure; used by the informer). */
enum k8s_watch_type {
	K8S_WATCH_ADDED,
	K8S_WATCH_MODIFIED,
	K8S_WATCH_DELETED,
	K8S_WATCH_BOOKMARK,
	K8S_WATCH_ERROR,
	K8S_WATCH_SYNCED /* informer only: list done, store complete */
};

const char *k8s_watch_type_name(enum k8s_watch_type);

struct k8s_watch_parser;

/*
 * Called once per complete watch event.  obj is a new reference that the
 * callback takes.  Return 0 to go on, -1 to stop feeding.
 */
typedef int (*k8s_watch_cb)(enum k8s_watch_type, json_t *obj, void *arg);

/* max is the largest single event accepted, in bytes (0: 64 MiB). */
struct k8s_watch_parser *k8s_watch_parser_new(size_t max);
void			 k8s_watch_parser_free(struct k8s_watch_parser *);
/*
 * Feeds bytes of the stream; objects may be split across calls and several
 * may arrive in one.  Returns 0, or -1 on malformed input or when the
 * callback asked to stop; err says which.
 */
int k8s_watch_parser_feed(struct k8s_watch_parser *, const char *data,
    size_t len, k8s_watch_cb cb, void *arg, struct k8s_error *err);
/* Bytes of an incomplete event still buffered (a truncated final object). */
size_t k8s_watch_parser_pending(const struct k8s_watch_parser *);

/*
 * list.c: a list response, decoded one item at a time as its bytes
 * arrive: the parser holds one value (an item, or a member other than
 * items) at a time, never the page.
 */
struct k8s_list_meta {
	char *kind; /* of the items ("Pod" from "PodList"), or NULL */
	char *api_version;
	char *rv;   /* the list's resourceVersion, or NULL */
	char *cont; /* the continue token, NULL on the last page */
};

/* Takes item; meta holds what the page said before the item. */
typedef void (*k8s_list_item_cb)(json_t *item, const struct k8s_list_meta *meta,
    void *arg);

struct k8s_list_parser;

/* One page's parser; max is the largest value accepted (0: 64 MiB). */
struct k8s_list_parser *k8s_list_parser_new(size_t max);
void			k8s_list_parser_free(struct k8s_list_parser *);
/*
 * Feeds the next bytes of the body, cut anywhere: each object of "items"
 * goes to cb once its last byte is in.  0, or -1 with err on a body that
 * is not a JSON object (the parser then refuses more); items handed over
 * before the fault stay handed over.
 */
int k8s_list_parser_feed(struct k8s_list_parser *, const char *data, size_t len,
    k8s_list_item_cb cb, void *arg, struct k8s_error *err);
/*
 * The body ended: fills meta (cleared first; the caller clears it after)
 * with what the page said, or -1 with err when the body was cut short.
 */
int k8s_list_parser_finish(struct k8s_list_parser *, struct k8s_list_meta *meta,
    struct k8s_error *err);
/*
 * The whole body data[0..len) at once, through a parser: 0 with meta
 * filled, or -1 with err (and meta cleared).
 */
int  k8s_list_decode(const char *data, size_t len, k8s_list_item_cb cb,
     void *arg, struct k8s_list_meta *meta, struct k8s_error *err);
void k8s_list_meta_clear(struct k8s_list_meta *);

/* informer.c */
struct k8s_informer;

/*
 * Informer callback, run on the informer's thread.  obj is a new reference
 * that the callback takes (NULL for K8S_WATCH_SYNCED).  The informer keeps
 * no copy of the objects (only keys and resourceVersions): a consumer that
 * needs the previous version keeps it.  A relist delivers objects that
 * changed (or are new) since the store last saw them, synthetic deletes
 * ({kind, apiVersion, metadata: {namespace, name, resourceVersion}}) for
 * those gone, then K8S_WATCH_SYNCED.  A first list answered 404 (the
 * resource is not served) gives K8S_WATCH_SYNCED too, over an empty store;
 * listing goes on, and a later list delivers as above.
 */
typedef void (*k8s_informer_cb)(enum k8s_watch_type, json_t *obj, void *arg);

struct k8s_informer_opts {
	const char *path;	     /* collection, e.g. "/api/v1/pods" */
	const char *field_selector;  /* may be NULL */
	const char *label_selector;  /* may be NULL */
	const char *name;	     /* thread/log name, e.g. "watch/pods" */
	int	    timeout_seconds; /* per watch; 0: 300 */
};

/* The config must outlive the informer.  The opts strings are copied. */
struct k8s_informer *k8s_informer_new(const struct k8s_config *,
    const struct k8s_informer_opts *, k8s_informer_cb, void *arg);
int		     k8s_informer_start(struct k8s_informer *);
/*
 * Asks the thread to stop without waiting: cancel several informers, then
 * stop each, and they wind down together.  Any thread.
 */
void k8s_informer_cancel(struct k8s_informer *);
/* Asks the thread to stop and joins it; returns within about a second. */
void k8s_informer_stop(struct k8s_informer *);
void k8s_informer_free(struct k8s_informer *);
/* Counters, readable from any thread. */
uint64_t k8s_informer_relists(const struct k8s_informer *);
uint64_t k8s_informer_restarts(const struct k8s_informer *);
/*
 * Is a list being delivered (its items come before SYNCED)?  For the
 * callback, on the informer's thread: is this object from a list?
 */
int k8s_informer_listing(const struct k8s_informer *);
/* Objects in the store and the bytes it holds (any thread). */
void k8s_informer_store(const struct k8s_informer *, size_t *count,
    size_t *bytes);

/* recorder.c: events.k8s.io/v1 Events with de-duplication. */
struct k8s_recorder;

/*
 * A recorder belongs to one thread and uses that thread's client.  A
 * repeated (object, type, reason, note) increments the first Event's series
 * instead of creating a new object.  controller and instance name the
 * reporter (reportingController, reportingInstance).
 */
struct k8s_recorder *k8s_recorder_new(struct k8s_client *,
    const char *controller, const char *instance);
void		     k8s_recorder_free(struct k8s_recorder *);
/*
 * Records an Event about obj (a Kubernetes object; borrowed).  type is
 * "Normal" or "Warning".  Returns 0, or -1 with err filled.
 */
int k8s_recorder_post(struct k8s_recorder *, const json_t *obj,
    const char *type, const char *reason, const char *action,
    struct k8s_error *err, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* lease.c: leader election with coordination.k8s.io/v1 Leases. */
struct k8s_lease_opts {
	const char *ns;
	const char *name;
	const char *identity;	      /* this candidate, e.g. hostname_pid */
	int	    duration_s;	      /* leaseDurationSeconds; 0: 15 */
	int	    renew_deadline_s; /* 0: 10 */
	int	    retry_period_s;   /* 0: 2 */
};

struct k8s_lease;

/* The strings are copied.  The lease uses the caller's client. */
struct k8s_lease *k8s_lease_new(struct k8s_client *,
    const struct k8s_lease_opts *);
void		  k8s_lease_free(struct k8s_lease *);
/*
 * One election step: acquires the lease if it is free or expired, renews it
 * if held.  Returns 1 if this candidate holds the lease afterwards, 0 if
 * another does, -1 on an API error (err filled).  A holder whose renewals
 * failed for renew_deadline_s must consider itself no longer leader: the
 * step returns 0 then.  Call it every retry_period_s.
 */
int k8s_lease_step(struct k8s_lease *, struct k8s_error *err);
/* Gives the lease up at once (holderIdentity cleared) if held. */
int k8s_lease_release(struct k8s_lease *, struct k8s_error *err);
int k8s_lease_held(const struct k8s_lease *);
int k8s_lease_retry_period(const struct k8s_lease *);
/* Holder as last observed (borrowed; may be NULL). */
const char *k8s_lease_holder(const struct k8s_lease *);

#endif /* K8S_H */
