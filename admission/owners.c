/*
 * The webhook's watch-based store of namespaces and workload owners (Jobs,
 * JobSets, LeaderWorkerSets, PodGroups of both APIs, CompositePodGroups,
 * Workloads), so a
 * request never waits on the API server.  One informer thread per kind
 * writes; request threads read.  An owner is kept as its record
 * (common/ownerrec.c: the fields the rules read), a namespace as its
 * metadata; neither is changed once stored (an update replaces it), so a
 * reader holds its own reference (jansson's reference counts are atomic)
 * and needs the lock only for the lookup.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"
#include "ownerrec.h"
#include "admission.h"

static const struct {
	const char	  *path;
	const char	  *name;
	enum workload_kind kind; /* its record's (WORKLOAD_KINDS: none) */
} owner_kinds[OWN_KINDS] = {
	[OWN_NAMESPACE] = { "/api/v1/namespaces", "watch/namespaces",
	    WORKLOAD_KINDS },
	[OWN_JOB] = { "/apis/batch/v1/jobs", "watch/jobs", WORKLOAD_JOB },
	[OWN_JOBSET] = { "/apis/jobset.x-k8s.io/v1alpha2/jobsets",
	    "watch/jobsets", WORKLOAD_JOBSET },
	[OWN_LWS] = { "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
	    "watch/lws", WORKLOAD_LWS },
	[OWN_PODGROUP] = { "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
	    "watch/podgroups", WORKLOAD_PODGROUP },
	/* Under the discovered scheduling.k8s.io version. */
	[OWN_SCHED_PODGROUP] = { "podgroups", "watch/sched-podgroups",
	    WORKLOAD_SCHED_PODGROUP },
	[OWN_WORKLOAD] = { "workloads", "watch/workloads",
	    WORKLOAD_SCHED_WORKLOAD },
	/* Under the discovered version of its own. */
	[OWN_COMPOSITE] = { "compositepodgroups", "watch/compositepodgroups",
	    WORKLOAD_SCHED_COMPOSITE },
};

struct owner_ctx {
	struct owners  *owners;
	enum owner_kind kind;
};

struct owners {
	pthread_mutex_t	     lock;
	pthread_cond_t	     changed;
	json_t		    *store[OWN_KINDS]; /* "ns/name" -> obj */
	int		     synced[OWN_KINDS];
	struct k8s_informer *inf[OWN_KINDS];
	struct owner_ctx     ctx[OWN_KINDS];
	atomic_ulong	     hits, misses, waits;
	int		     waiters; /* requests waiting now */
};

/*
 * At most this many requests wait for an owner at once, so pods naming
 * owners that never appear cannot hold the whole server pool.
 */
#define OWNERS_MAX_WAITERS 2

/*
 * What the store keeps of obj, a new object: an owner's record, or a
 * namespace's metadata (its annotations set its defaults and bounds).
 */
static json_t *
owners_slim(enum owner_kind kind, const json_t *obj)
{
	static const char *const meta[] = { "name", "namespace", "uid",
		"labels", "annotations", "resourceVersion" };
	const json_t		*md = json_object_get(obj, "metadata"), *v;
	json_t			*m;
	size_t			 i;

	if (owner_kinds[kind].kind != WORKLOAD_KINDS)
		return (ownerrec_dup(owner_kinds[kind].kind, obj));
	m = json_object();
	for (i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		if ((v = json_object_get(md, meta[i])) != NULL)
			json_object_set(m, meta[i], (json_t *)(uintptr_t)v);
	return (json_pack("{s:o, s:{}}", "metadata", m, "spec"));
}

static void
owners_key(char *key, size_t len, enum owner_kind kind, const char *ns,
    const char *name)
{
	if (kind == OWN_NAMESPACE)
		snprintf(key, len, "%s", name);
	else
		snprintf(key, len, "%s/%s", ns != NULL ? ns : "", name);
}

/* Runs on an informer thread. */
static void
owners_cb(enum k8s_watch_type type, json_t *obj, void *arg)
{
	struct owner_ctx *ctx = arg;
	struct owners	 *o = ctx->owners;
	const char	 *name;
	char		  key[512];
	json_t		 *slim = NULL;

	if (type == K8S_WATCH_SYNCED) {
		pthread_mutex_lock(&o->lock);
		o->synced[ctx->kind] = 1;
		pthread_cond_broadcast(&o->changed);
		pthread_mutex_unlock(&o->lock);
		log_info("synced, %zu objects",
		    json_object_size(o->store[ctx->kind]));
		return;
	}
	if ((name = k8s_obj_name(obj)) == NULL) {
		json_decref(obj);
		return;
	}
	owners_key(key, sizeof(key), ctx->kind, k8s_obj_namespace(obj), name);
	if (type != K8S_WATCH_DELETED)
		slim = owners_slim(ctx->kind, obj);
	json_decref(obj);
	pthread_mutex_lock(&o->lock);
	if (slim != NULL)
		json_object_set_new(o->store[ctx->kind], key, slim);
	else
		json_object_del(o->store[ctx->kind], key);
	pthread_cond_broadcast(&o->changed);
	pthread_mutex_unlock(&o->lock);
}

struct owners *
owners_new(const struct k8s_config *kconf, const char *podgroup_api,
    const char *composite_api)
{
	const char		*api;
	struct owners		*o = xcalloc(1, sizeof(*o));
	struct k8s_informer_opts opts;
	pthread_condattr_t	 attr;
	char			 path[256];
	int			 k;

	pthread_mutex_init(&o->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&o->changed, &attr);
	pthread_condattr_destroy(&attr);
	for (k = 0; k < OWN_KINDS; k++) {
		o->store[k] = json_object();
		if (kconf == NULL)
			continue;
		memset(&opts, 0, sizeof(opts));
		opts.path = owner_kinds[k].path;
		if (opts.path[0] != '/') {
			api = k == OWN_COMPOSITE ? composite_api : podgroup_api;
			if (api == NULL || api[0] == '\0')
				continue;
			snprintf(path, sizeof(path), "%s/%s", api, opts.path);
			opts.path = path;
		}
		opts.name = owner_kinds[k].name;
		o->ctx[k].owners = o;
		o->ctx[k].kind = (enum owner_kind)k;
		o->inf[k] = k8s_informer_new(kconf, &opts, owners_cb,
		    &o->ctx[k]);
	}
	return (o);
}

int
owners_start(struct owners *o)
{
	int k;

	for (k = 0; k < OWN_KINDS; k++)
		if (o->inf[k] != NULL && k8s_informer_start(o->inf[k]) == -1)
			return (-1);
	return (0);
}

void
owners_free(struct owners *o)
{
	int k;

	if (o == NULL)
		return;
	for (k = 0; k < OWN_KINDS; k++)
		if (o->inf[k] != NULL)
			k8s_informer_cancel(o->inf[k]);
	for (k = 0; k < OWN_KINDS; k++)
		if (o->inf[k] != NULL)
			k8s_informer_stop(o->inf[k]);
	for (k = 0; k < OWN_KINDS; k++) {
		k8s_informer_free(o->inf[k]);
		json_decref(o->store[k]);
	}
	pthread_cond_destroy(&o->changed);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

void
owners_put(struct owners *o, enum owner_kind kind, const json_t *obj)
{
	owners_cb(K8S_WATCH_ADDED, json_deep_copy(obj),
	    &(struct owner_ctx){ o, kind });
}

json_t *
owners_get(struct owners *o, enum owner_kind kind, const char *ns,
    const char *name, int wait_ms)
{
	struct timespec deadline;
	char		key[512];
	json_t	       *obj;
	int		waited = 0;

	if (name == NULL)
		return (NULL);
	owners_key(key, sizeof(key), kind, ns, name);
	clock_deadline_ms(&deadline, CLOCK_MONOTONIC, wait_ms);
	pthread_mutex_lock(&o->lock);
	/*
	 * An owner made a moment ago may not have reached our watch yet:
	 * wait for it, but only as long as the caller allows.
	 */
	if ((obj = json_object_get(o->store[kind], key)) == NULL &&
	    o->inf[kind] != NULL && wait_ms > 0 &&
	    o->waiters < OWNERS_MAX_WAITERS) {
		waited = 1;
		o->waiters++;
		while ((obj = json_object_get(o->store[kind], key)) == NULL)
			if (pthread_cond_timedwait(&o->changed, &o->lock,
				&deadline) == ETIMEDOUT)
				break;
		o->waiters--;
	}
	json_incref(obj);
	pthread_mutex_unlock(&o->lock);
	if (obj != NULL)
		atomic_fetch_add(&o->hits, 1);
	else
		atomic_fetch_add(&o->misses, 1);
	if (waited) {
		atomic_fetch_add(&o->waits, 1);
		if (obj == NULL)
			log_info("%s %s: not in the store after %d ms; the "
				 "scheduler will derive it itself",
			    owners_kind_name(kind), key, wait_ms);
	}
	return (obj);
}

int
owners_synced(struct owners *o, enum owner_kind kind)
{
	int synced;

	pthread_mutex_lock(&o->lock);
	synced = o->inf[kind] == NULL || o->synced[kind];
	pthread_mutex_unlock(&o->lock);
	return (synced);
}

void
owners_stats(struct owners *o, struct owners_stats *st)
{
	int k;

	memset(st, 0, sizeof(*st));
	st->hits = atomic_load(&o->hits);
	st->misses = atomic_load(&o->misses);
	st->waits = atomic_load(&o->waits);
	pthread_mutex_lock(&o->lock);
	for (k = 0; k < OWN_KINDS; k++)
		st->objects[k] = json_object_size(o->store[k]);
	pthread_mutex_unlock(&o->lock);
	for (k = 0; k < OWN_KINDS; k++)
		if (o->inf[k] != NULL)
			st->relists += k8s_informer_relists(o->inf[k]);
}

const char *
owners_kind_name(enum owner_kind kind)
{
	return (owner_kinds[kind].name + strlen("watch/"));
}

/* workload_lookup_fn over the store (struct owners_lookup). */
static json_t *
owners_lookup(void *arg, enum workload_kind kind, const char *ns,
    const char *name)
{
	static const enum owner_kind own[WORKLOAD_KINDS] = {
		[WORKLOAD_PODGROUP] = OWN_PODGROUP,
		[WORKLOAD_LWS] = OWN_LWS,
		[WORKLOAD_JOBSET] = OWN_JOBSET,
		[WORKLOAD_JOB] = OWN_JOB,
		[WORKLOAD_SCHED_PODGROUP] = OWN_SCHED_PODGROUP,
		[WORKLOAD_SCHED_WORKLOAD] = OWN_WORKLOAD,
		[WORKLOAD_SCHED_COMPOSITE] = OWN_COMPOSITE,
	};
	const struct owners_lookup *ol = arg;

	/* A pod-group label may name no CR: wait for one only if asked. */
	return (owners_get(ol->owners, own[kind], ns, name,
	    kind == WORKLOAD_PODGROUP ? ol->podgroup_wait_ms : ol->wait_ms));
}

void
owners_lookup_init(struct owners_lookup *ol, struct owners *o, int wait_ms,
    int podgroup_wait_ms)
{
	ol->owners = o;
	ol->wait_ms = wait_ms;
	ol->podgroup_wait_ms = podgroup_wait_ms;
	ol->lk.fn = owners_lookup;
	ol->lk.arg = ol;
}
