/*
 * slurm-bridge-admission internals.  Threads: main parses flags and waits
 * for signals; one informer per kind keeps the owner store (owners.c,
 * owners.lock), and one the managed nodes (guard.c, guard.lock);
 * libmicrohttpd's SERVER_THREADS (common/httpd.c) handle reviews, reading
 * the stores and the config, which nothing changes after start but the
 * TLS pair (httpd cred_lock).
 */
#ifndef ADMISSION_H
#define ADMISSION_H

#include <netinet/in.h>
#include <time.h>

#include <jansson.h>

#include "k8s.h"
#include "config.h"
#include "workload.h"

struct admission_conf {
	const char  *listen;		   /* "ADDR:PORT" */
	unsigned int max_conns;		   /* --max-connections */
	unsigned int max_conns_per_client; /* --max-connections-per-client */
	const char  *webhook_config;	 /* --webhook-configuration, or NULL */
	const char *namespace;		 /* --namespace (--issue-certs) */
	int		   issue_certs;	 /* --issue-certs */
	int		   uninstall;	 /* --uninstall */
	int		   cert_days;	 /* --days */
	const char	  *tls_cert;	 /* PEM file */
	const char	  *tls_key;	 /* PEM file */
	const char	  *config_path;	 /* --config, or NULL */
	const char	  *kubeconfig;	 /* --kubeconfig, or NULL */
	const char	 **bridge_users; /* --bridge-user, NULL-ended */
	const char	 **allow_schedulers; /* --allow-scheduler, NULL-ended */
	const char	 **extender_schedulers; /* --extender-scheduler */
	const char	 **adopt_schedulers;	/* --adopt-scheduler */
	int		   verbose;
	struct sockaddr_in addr; /* parsed listen */
};

/* owners.c: the watch-based store of namespaces and workload owners. */
enum owner_kind {
	OWN_NAMESPACE,
	OWN_JOB,      /* batch/v1 */
	OWN_JOBSET,   /* jobset.x-k8s.io/v1alpha2 */
	OWN_LWS,      /* leaderworkerset.x-k8s.io/v1 */
	OWN_PODGROUP, /* scheduling.x-k8s.io/v1alpha1 */
	/* scheduling.k8s.io, where served (the version is discovered) */
	OWN_SCHED_PODGROUP,
	OWN_WORKLOAD,
	OWN_COMPOSITE, /* its own version: v1alpha3 in 1.37 */
	OWN_KINDS
};

struct owners;

struct owners_stats {
	unsigned long hits, misses, waits, relists;
	size_t	      objects[OWN_KINDS];
};

/*
 * A store that watches every kind through kconf (which must outlive it);
 * with kconf NULL it watches nothing and is filled with owners_put (tests).
 */
/*
 * podgroup_api: daemon_podgroup_api's, "" when the cluster has no
 * Kubernetes PodGroups (their kinds are then not watched); composite_api
 * the same for CompositePodGroups.
 */
struct owners *owners_new(const struct k8s_config *kconf,
    const char *podgroup_api, const char *composite_api);
int	       owners_start(struct owners *);
/* Stops the informers and frees the store. */
void owners_free(struct owners *);
/* Stores what an informer would of obj (borrowed). */
void owners_put(struct owners *, enum owner_kind, const json_t *obj);
/*
 * The stored object (a new reference: an owner's record, ownerrec.c, or a
 * namespace's metadata) or NULL.  ns is ignored for namespaces.  When it
 * is missing, waits up to wait_ms for the watch to bring it.  Any thread.
 */
json_t *owners_get(struct owners *, enum owner_kind, const char *ns,
    const char *name, int wait_ms);
/* Has the kind's first list completed (always true without a watch)? */
int  owners_synced(struct owners *, enum owner_kind);
void owners_stats(struct owners *, struct owners_stats *);
/*
 * A workload lookup (workload.h) over the store: waits up to wait_ms for
 * an object not yet seen, podgroup_wait_ms for a PodGroup (a pod-group
 * label may name no CR).  lk.arg points at the struct itself.
 */
struct owners_lookup {
	struct workload_lookup lk;
	struct owners	      *owners;
	int		       wait_ms;
	int		       podgroup_wait_ms;
};
void owners_lookup_init(struct owners_lookup *, struct owners *, int wait_ms,
    int podgroup_wait_ms);
const char *owners_kind_name(enum owner_kind);

/* review.c: AdmissionReview handling for pods (pure but for the store). */
#define REVIEW_MAX_BODY (3 * 1024 * 1024)

enum review_mode {
	REVIEW_MUTATE,
	REVIEW_VALIDATE,
	REVIEW_GUARD /* guard.c */
};

struct guard;

struct review_conf {
	const struct config *config;	   /* names, tables, defaults */
	struct owners	    *owners;	   /* namespaces and owners */
	struct guard	    *guard;	   /* managed nodes, or NULL */
	const char *const   *bridge_users; /* may write bridge keys */
	/* Other schedulers whose pods are ours (--adopt-scheduler), or NULL. */
	const char *const *adopt_schedulers;
	int		   owner_wait_ms; /* for an owner not yet seen */
};

/* What one review decided; filled by mutate.c and validate.c. */
struct review_result {
	json_t *patch;	  /* JSON Patch array, owned */
	json_t *warnings; /* array of strings, owned */
	char   *denied;	  /* the refusal message, or NULL */
};

/*
 * Handles one request body.  Returns 200 with *out set to the response
 * AdmissionReview (a new reference), or 400 with the reason in err.
 */
int review_handle(const char *body, size_t len, enum review_mode,
    const struct review_conf *, json_t **out, char *err, size_t errlen);

/* mutate.c: the JSON Patch for a pod (idempotent). */
/* RFC 6901 escaping of one path token; a new string. */
char *mutate_pointer_escape(const char *token);
void  mutate_pod(const json_t *pod, const char *operation,
     const struct review_conf *, struct review_result *);

/* validate.c: refuses bad annotations and writes to bridge-owned keys. */
/* Sets r's refusal (the first one stands) from a printf format. */
void validate_deny(struct review_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void validate_pod(const json_t *request, const json_t *pod,
    const struct review_conf *, struct review_result *);
/*
 * Refuses a Kubernetes PodGroup (scheduling.k8s.io) whose workloadRef
 * names a Workload, or a template of it, that does not exist, or whose gang
 * minCount is above what one Slurm job may gather.
 */
void validate_podgroup(const json_t *pg, const char *op,
    const struct review_conf *, struct review_result *);
/*
 * Refuses a Kubernetes PodGroup or Workload (kind) whose annotations its
 * pods inherit and could not be submitted with, with the message a pod
 * carrying them would get.  An UPDATE (old is the object before) is
 * checked only when it changes the annotations: a controller's other
 * writes (status, finalizers) always pass.
 */
void validate_inherited(const json_t *obj, const json_t *old, const char *kind,
    const struct review_conf *, struct review_result *);

/*
 * guard.c: keeps pods Slurm does not place off Slurm's nodes (POST
 * /guard).  A pod may tolerate the managed-node taint if its schedulerName
 * is the config's or an allowed one, or, in a namespace the bridge manages,
 * a scheduler's that calls slurm-bridge as its extender.  A pod created
 * with spec.nodeName on a managed node is refused whatever its scheduler.
 */
#define GUARD_MAX_SCHEDULERS 16 /* of each list */

/*
 * A guard that watches the nodes through kconf (which must outlive it);
 * with kconf NULL it watches nothing and learns nodes from guard_node_put
 * (tests).  allowed and extender are NULL-ended lists of schedulerNames, or
 * NULL; they are borrowed and must outlive the guard.
 */
struct guard *guard_new(const struct k8s_config *kconf,
    const char *const *allowed, const char *const *extender);
int	      guard_start(struct guard *);
/* Stops the informer and frees the guard. */
void guard_free(struct guard *);
/* Records a node as the informer would (tests). */
void guard_node_put(struct guard *, const json_t *node);
/*
 * The index of the pod's first toleration that tolerates the managed-node
 * taint of taint_effect (the config's), whatever the taint's value (an
 * empty key tolerates every taint), or -1.  Pure.
 */
int guard_toleration(const json_t *pod, const char *taint_effect);
/* Refuses a pod that would run on Slurm's nodes without Slurm. */
void guard_pod(const json_t *request, const json_t *pod,
    const struct review_conf *, struct review_result *);

/* server.c */
struct server;

/*
 * Starts serving; conf and review must outlive the server.  One server per
 * process (GnuTLS's certificate callback has no argument).  NULL on error.
 */
struct server *server_start(const struct admission_conf *,
    const struct review_conf *, char *err, size_t errlen);
void	       server_stop(struct server *);

/*
 * certs.c: --issue-certs, the in-cluster TLS in Secrets (see there).  The
 * names are fixed: the chart and the Deployments mount them.
 */
#define CERTS_SECRET_CA	       "slurm-bridge-ca"
#define CERTS_SECRET_ADMISSION "slurm-bridge-admission-tls"
#define CERTS_SECRET_BRIDGE    "slurm-bridge-tls"
#define CERTS_SECRET_CLIENT    "slurm-bridge-extender-client"
#define CERTS_SVC_ADMISSION    "slurm-bridge-admission"
#define CERTS_SVC_BRIDGE       "slurm-bridge"
#define CERTS_CLIENT_CN	       "slurm-bridge-extender-client"

struct certs_req {
	const char  *cn;
	const char **dns; /* subject alternative names, NULL-ended */
	int	     is_ca;
	int	     client; /* clientAuth, else serverAuth */
	int	     days;
	time_t	     now; /* 0: the clock */
};

struct certs_opts {
	const char *ns;
	int	    days; /* a leaf's validity */
};

/*
 * A new ECDSA P-256 key and certificate for r, signed by the CA given (PEM,
 * ca_crt and ca_key both) or, with both NULL, by itself; never valid past
 * the CA.  0, or -1 with nothing stored.
 */
int certs_issue_pem(const struct certs_req *r, const char *ca_crt,
    const char *ca_key, char **crt_pem, char **key_pem);
/*
 * 1 if crt_pem may be kept at now: valid for the renewal margin and, with
 * ca_pem, signed by that CA; else 0 with the reason in why.
 */
int certs_usable(const char *crt_pem, const char *ca_pem, time_t now, char *why,
    size_t whylen);
/* 1 if key_pem is the private key of crt_pem (either may be NULL: 0). */
int certs_pair_ok(const char *crt_pem, const char *key_pem);
/* Keeps or issues every Secret in o->ns; 0 or -1 (logged). */
int certs_run(const struct k8s_config *kconf, const struct certs_opts *o);

/*
 * cabundle.c: --webhook-configuration NAME.  Keeps caBundle of every
 * webhook of the Mutating- and ValidatingWebhookConfiguration NAME equal
 * to the CA file (ca.crt beside the serving certificate), so the API
 * server trusts the certificate this webhook serves.  Main's thread.
 */
struct cabundle;

struct cabundle *cabundle_new(const struct k8s_config *kconf, const char *name,
    const char *ca_file);
void		 cabundle_free(struct cabundle *);
/*
 * Patches where a caBundle differs, when the CA file changed since the
 * last good sync or when force is set (a configuration replaced by an
 * upgrade).  0, or -1 (logged; the next call retries).
 */
int cabundle_sync(struct cabundle *, int force);

/*
 * uninstall.c: --uninstall, after the chart's objects are gone: the Secrets
 * of --issue-certs, the scheduler's Lease (bridge/main.c names it), and the
 * managed-node taint on the nodes the install named by config tainted.
 */
#define UNINSTALL_LEASE "slurm-bridge"
int uninstall_run(const struct k8s_config *kconf, const char *ns,
    const struct config *config);

#endif /* ADMISSION_H */
