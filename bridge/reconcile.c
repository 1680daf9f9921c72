/*
 * The reconcile thread: the single owner of the caches (pods, groups, nodes,
 * namespaces, Jobs, PodGroups) and the only caller of slurm.c.  It pops
 * informer events from the queue and drives one state machine per group (a
 * gang, or a pod alone):
 *
 *   WAITING -> PENDING(job) -> ALLOCATED(layout) -> BOUND -> ENDED
 *
 * A group is submitted as one allocation-only placeholder job once all its
 * members are present.  When Slurm allocates it, the job id, node and GRES
 * are written on every member before any member is bound, then all are
 * bound.  Slurm is polled incrementally (slurm_load_jobs with update_time).
 * On start, existing bridge jobs are adopted (by the jobid label and the
 * admin_comment pod list) before anything is submitted, so a restart neither
 * duplicates nor orphans a job.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

/* Transient failures (slurmctld unreachable) retry quickly... */
#define RETRY_MIN_MS	2000
#define RETRY_MAX_MS	300000
/*
 * ...refusals that only a change on the Slurm side can fix slowly: every
 * refused allocation leaves a FAILED row in sacct.
 */
#define REFUSED_MIN_MS	60000
#define REFUSED_MAX_MS	1800000
/* How long past its grace period a deleted pod may wait for its node. */
#define FORCE_DELETE_SLACK_S	5

enum pod_state {
	PS_UNBOUND,
	PS_BOUND,
	PS_ENDED	/* terminal, or deleting past its grace period */
};

struct pod_entry {
	char		*key;		/* ns/name */
	char		*ns;
	char		*name;
	json_t		*obj;
	char		*group;		/* group key, NULL if invalid */
	enum pod_state	 state;
	uint32_t	 label_jobid;	/* jobid label on the pod */
	int		 finalizer;	/* carries our finalizer */
	time_t		 delete_at;	/* deletionTimestamp, 0 if none */
	char		 cond[256];	/* last PodScheduled message written */
};

enum group_state {
	G_WAITING,	/* not submitted */
	G_PENDING,	/* job submitted, not allocated */
	G_ALLOCATED,	/* allocated, members not all bound */
	G_BOUND,
	G_ENDED		/* job gone; members being cleaned up */
};

struct group {
	char		*key;		/* "gang:ns/g" or "pod:ns/p" */
	char		*ns;
	char		*name;
	int		 gang;
	int		 min_member;	/* 0: from the PodGroup CR */
	json_t		*members;	/* pod keys */
	enum group_state state;
	uint32_t	 jobid;
	json_t		*job_pods;	/* pod keys in the job, placement order */
	json_t		*layout;	/* [{node, cpus, gres}] once allocated */
	uint32_t	 cpus_per_task;
	uint32_t	 gpus_per_task;
	int		 exclusive;
	int		 cancelled;	/* we asked Slurm to end the job */
	int		 invalid;	/* translation failed; wait for a change */
	int		 seen;		/* its job was in the last full load */
	long		 retry_ms;
	int64_t		 next_try;	/* monotonic ms */
};

struct reconcile {
	const struct bridge_conf *conf;
	const struct k8s_config	*kconf;
	struct queue		*queue;
	struct k8s_client	*client;
	struct k8s_recorder	*recorder;
	pthread_t		 thread;
	int			 started;
	atomic_int		 stop;

	struct map		*pods;		/* ns/name -> pod_entry */
	struct map		*groups;	/* group key -> group */
	struct map		*jobs;		/* jobid -> group key */
	struct map		*nodes;		/* node name -> json */
	struct map		*namespaces;	/* name -> json */
	struct map		*k8s_jobs;	/* ns/name -> batch/v1 Job */
	struct map		*podgroups;	/* ns/name -> PodGroup */
	struct map		*jobsets;	/* ns/name -> JobSet */
	struct map		*lwss;		/* ns/name -> LeaderWorkerSet */
	struct translate_conf	 tconf;
	int			 synced[EV_KINDS];
	int			 recovered;
	time_t			 slurm_since;
	int64_t			 next_poll;
	int64_t			 next_sweep;
};

static void	group_evaluate(struct reconcile *, struct group *);
static const json_t *pod_owner_job(struct reconcile *, const json_t *);

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
pod_entry_free(void *p)
{
	struct pod_entry	*e = p;

	if (e == NULL)
		return;
	free(e->key);
	free(e->ns);
	free(e->name);
	free(e->group);
	json_decref(e->obj);
	free(e);
}

static void
group_free(void *p)
{
	struct group	*g = p;

	if (g == NULL)
		return;
	free(g->key);
	free(g->ns);
	free(g->name);
	json_decref(g->members);
	json_decref(g->job_pods);
	json_decref(g->layout);
	free(g);
}

static void
json_free_cb(void *p)
{
	json_decref(p);
}

static const char *
jobid_str(uint32_t jobid, char *buf, size_t len)
{
	snprintf(buf, len, "%u", jobid);
	return (buf);
}

static void
jobs_put(struct reconcile *r, uint32_t jobid, const char *gkey)
{
	char	id[16];

	map_put(r->jobs, jobid_str(jobid, id, sizeof(id)), xstrdup(gkey));
}

static struct group *
jobs_group(struct reconcile *r, uint32_t jobid)
{
	char		 id[16];
	const char	*gkey = map_get(r->jobs, jobid_str(jobid, id,
			    sizeof(id)));

	return (gkey != NULL ? map_get(r->groups, gkey) : NULL);
}

static void
jobs_del(struct reconcile *r, uint32_t jobid)
{
	char	id[16];

	map_del(r->jobs, jobid_str(jobid, id, sizeof(id)));
}

static const char *
pod_path(struct pod_entry *e, const char *sub, char *buf, size_t len)
{
	snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s%s", e->ns, e->name,
	    sub);
	return (buf);
}

/* Records an Event about the pod; failures are logged, never fatal. */
static void
pod_event(struct reconcile *r, struct pod_entry *e, const char *type,
    const char *reason, const char *action, const char *msg)
{
	struct k8s_error	err;

	if (k8s_event_record(r->recorder, e->obj, type, reason, action, &err,
	    "%s", msg) == -1)
		log_warnx("pod %s: event %s: %ld %s: %s", e->key, reason,
		    err.status, err.reason, err.text);
}

/*
 * Writes PodScheduled=False with msg, once per distinct message; warn also
 * records a FailedScheduling Event.
 */
static void
pod_condition(struct reconcile *r, struct pod_entry *e, const char *msg,
    int warn)
{
	struct k8s_error	 err;
	json_t			*patch;
	char			 path[512], ts[64];

	if (strcmp(e->cond, msg) == 0)
		return;
	if (warn)
		pod_event(r, e, "Warning", "FailedScheduling", "Scheduling",
		    msg);
	k8s_microtime(ts, sizeof(ts), NULL);
	/* Conditions take RFC 3339 seconds. */
	snprintf(ts + 19, sizeof(ts) - 19, "Z");
	patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "PodScheduled", "status", "False",
	    "reason", "Unschedulable", "message", msg, "lastTransitionTime",
	    ts);
	if (k8s_patch(r->client, pod_path(e, "/status", path, sizeof(path)),
	    K8S_PATCH_STRATEGIC, patch, NULL, &err) == -1)
		log_warnx("pod %s: condition: %ld %s: %s", e->key, err.status,
		    err.reason, err.text);
	else
		snprintf(e->cond, sizeof(e->cond), "%s", msg);
	json_decref(patch);
}

/* Writes a message on every unbound, live member of the group. */
static void
group_condition(struct reconcile *r, struct group *g, const char *msg,
    int warn)
{
	json_t			*v;
	struct pod_entry	*e;
	size_t			 i;

	json_array_foreach(g->members, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e != NULL && e->state == PS_UNBOUND)
			pod_condition(r, e, msg, warn);
	}
}

/*
 * Writes bridge metadata on a pod in one strategic merge patch: the jobid
 * label (or removes it with jobid 0), our finalizer (finalizers merge as a
 * set, so nobody else's are touched and no resourceVersion is needed), and
 * the node and GRES annotations when known.  Returns 0, or -1 (err filled).
 */
static int
pod_metadata(struct reconcile *r, struct pod_entry *e, uint32_t jobid,
    const char *node, const char *gres, struct k8s_error *err)
{
	json_t		*patch, *md;
	char		 path[512], id[16];
	int		 rc;

	md = json_object();
	json_object_set_new(md, "labels", json_pack("{s:o}", LABEL_JOBID,
	    jobid != 0 ? json_string(jobid_str(jobid, id, sizeof(id))) :
	    json_null()));
	if (node != NULL)
		json_object_set_new(md, "annotations", json_pack("{s:s, s:o}",
		    ANN_SLURM_NODE, node, ANN_SLURM_GRES, gres != NULL ?
		    json_string(gres) : json_null()));
	if (jobid != 0 && !e->finalizer)
		json_object_set_new(md, "finalizers", json_pack("[s]",
		    FINALIZER));
	patch = json_pack("{s:o}", "metadata", md);
	rc = k8s_patch(r->client, pod_path(e, "", path, sizeof(path)),
	    K8S_PATCH_STRATEGIC, patch, NULL, err);
	json_decref(patch);
	if (rc == 0) {
		e->label_jobid = jobid;
		if (jobid != 0)
			e->finalizer = 1;
	}
	return (rc);
}

/* Removes our finalizer (the job is gone), keeping everyone else's. */
static void
pod_release(struct reconcile *r, struct pod_entry *e)
{
	struct k8s_error	 err;
	json_t			*patch;
	char			 path[512];
	int			 rc;

	if (!e->finalizer)
		return;
	patch = json_pack("{s:{s:[s]}}", "metadata",
	    "$deleteFromPrimitiveList/finalizers", FINALIZER);
	rc = k8s_patch(r->client, pod_path(e, "", path, sizeof(path)),
	    K8S_PATCH_STRATEGIC, patch, NULL, &err);
	json_decref(patch);
	if (rc == 0 || err.status == 404) {
		e->finalizer = 0;
		log_debug("pod %s: finalizer removed", e->key);
	} else
		log_warnx("pod %s: remove finalizer: %ld %s: %s", e->key,
		    err.status, err.reason, err.text);
}

/*
 * A deleted pod whose grace period is over and whose node never confirmed
 * the deletion (no kubelet, or a dead node) would stay Terminating: with
 * the job gone, finish the deletion (grace 0, UID precondition).
 */
static void
pod_force_delete(struct reconcile *r, struct pod_entry *e)
{
	struct k8s_error	 err;
	json_t			*opts;
	char			 path[512];

	if (e->delete_at == 0 || e->state == PS_UNBOUND ||
	    time(NULL) < e->delete_at + FORCE_DELETE_SLACK_S)
		return;
	opts = json_pack("{s:s, s:s, s:i, s:{s:s}}", "apiVersion", "v1",
	    "kind", "DeleteOptions", "gracePeriodSeconds", 0,
	    "preconditions", "uid", k8s_obj_uid(e->obj));
	if (k8s_delete(r->client, pod_path(e, "", path, sizeof(path)), opts,
	    &err) == 0)
		log_info("pod %s: deleted: grace period over and its node "
		    "never confirmed", e->key);
	else if (err.status != 404 && err.status != 409)
		log_warnx("pod %s: force delete: %ld %s: %s", e->key,
		    err.status, err.reason, err.text);
	json_decref(opts);
}

static void
group_cancel(struct reconcile *r, struct group *g, const char *why)
{
	char	err[256];

	(void)r;
	if (g->jobid == 0 || g->cancelled)
		return;
	if (sctl_cancel(g->jobid, err, sizeof(err)) == -1) {
		log_warnx("group %s: cancel slurm job %u: %s", g->key,
		    g->jobid, err);
		return;
	}
	g->cancelled = 1;
	log_info("group %s: cancelled slurm job %u (%s)", g->key, g->jobid,
	    why);
}

/* Maps a Slurm node to its Kubernetes node: label first, then same name. */
static const char *
node_k8s_name(struct reconcile *r, const char *slurm_node)
{
	size_t		 it = 0;
	const char	*name, *label;
	void		*v;

	while (map_next(r->nodes, &it, &name, &v)) {
		label = k8s_obj_label(v, LABEL_SLURM_NODENAME);
		if (label != NULL && strcmp(label, slurm_node) == 0)
			return (name);
	}
	if ((v = map_get(r->nodes, slurm_node)) != NULL &&
	    k8s_obj_label(v, LABEL_SLURM_NODENAME) == NULL)
		return (slurm_node);
	return (NULL);
}

static int
ns_enabled(struct reconcile *r, const char *ns)
{
	json_t		*obj = map_get(r->namespaces, ns);
	const char	*v;

	if (obj == NULL)
		return (0);
	v = k8s_obj_label(obj, BRIDGE_NS_LABEL);
	return (v != NULL && strcmp(v, BRIDGE_NS_LABEL_VALUE) == 0);
}

static void
group_retry_later(struct group *g, int refused)
{
	long	min = refused ? REFUSED_MIN_MS : RETRY_MIN_MS;
	long	max = refused ? REFUSED_MAX_MS : RETRY_MAX_MS;

	g->retry_ms = g->retry_ms < min ? min : g->retry_ms * 2;
	if (g->retry_ms > max)
		g->retry_ms = max;
	g->next_try = now_ms() + g->retry_ms;
}

/* Live members in placement order (borrowed objects); returns the count. */
static size_t
group_live(struct reconcile *r, struct group *g, json_t **out, size_t max,
    int unbound_only)
{
	json_t			*v;
	struct pod_entry	*e;
	size_t			 i, n = 0;

	json_array_foreach(g->members, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state == PS_ENDED ||
		    (unbound_only && e->state != PS_UNBOUND))
			continue;
		if (n < max)
			out[n] = e->obj;
		n++;
	}
	if (n > 1 && n <= max)
		sched_sort_members(out, n);
	return (n);
}

/*
 * Binds an allocated group: writes job id, node and GRES on every member
 * still unbound, and only then binds them.  Anything that fails is retried
 * from the timer; the assignment is a pure function of the job's pod list
 * and layout, so a restarted bridge picks the same nodes.
 */
static void
group_bind(struct reconcile *r, struct group *g)
{
	struct k8s_error	 err;
	struct assignment	*a;
	struct pod_entry	*e;
	const char		*knode;
	char			 msg[256], errs[256];
	size_t			 i, n = json_array_size(g->job_pods);
	int			 pending = 0;

	a = xcalloc(n ? n : 1, sizeof(*a));
	if (sched_assign(g->layout, n, (int)g->cpus_per_task,
	    g->exclusive ? 1 : 0, (int)g->gpus_per_task, a, errs,
	    sizeof(errs)) == -1) {
		log_warnx("group %s: slurm job %u: %s", g->key, g->jobid,
		    errs);
		free(a);
		return;
	}
	/* Phase 1: metadata on every member before any binding. */
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, json_string_value(json_array_get(
		    g->job_pods, i)));
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		if ((knode = node_k8s_name(r, a[i].node)) == NULL) {
			snprintf(msg, sizeof(msg), "Slurm job %u was "
			    "allocated node %s, which has no Kubernetes node "
			    "(same name, or a node labelled "
			    LABEL_SLURM_NODENAME "=%s)", g->jobid, a[i].node,
			    a[i].node);
			log_warnx("pod %s: %s", e->key, msg);
			pod_condition(r, e, msg, 1);
			goto done;
		}
		if (pod_metadata(r, e, g->jobid, a[i].node, a[i].gres, &err)
		    == -1) {
			log_warnx("pod %s: label for slurm job %u: %ld %s: %s",
			    e->key, g->jobid, err.status, err.reason,
			    err.text);
			goto done;
		}
	}
	/* Phase 2: bind. */
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, json_string_value(json_array_get(
		    g->job_pods, i)));
		if (e == NULL || e->state != PS_UNBOUND)
			continue;
		knode = node_k8s_name(r, a[i].node);
		if (k8s_pod_bind(r->client, e->ns, e->name, k8s_obj_uid(e->obj),
		    knode, &err) == -1) {
			log_warnx("pod %s: bind to %s: %ld %s: %s", e->key,
			    knode, err.status, err.reason, err.text);
			pending++;
			continue;
		}
		e->state = PS_BOUND;
		log_info("pod %s: bound to node %s (slurm job %u)", e->key,
		    knode, g->jobid);
		snprintf(msg, sizeof(msg), "bound to %s: Slurm allocated node "
		    "%s to job %u%s%s", knode, a[i].node, g->jobid,
		    a[i].gres != NULL ? ", GRES " : "",
		    a[i].gres != NULL ? a[i].gres : "");
		pod_event(r, e, "Normal", "Scheduled", "Binding", msg);
	}
	if (pending == 0)
		g->state = G_BOUND;
 done:
	for (i = 0; i < n; i++)
		free(a[i].gres);
	free(a);
}

static void
group_allocated(struct reconcile *r, struct group *g, const json_t *layout)
{
	json_decref(g->layout);
	g->layout = json_deep_copy(layout);
	g->state = G_ALLOCATED;
	log_info("group %s: slurm job %u allocated", g->key, g->jobid);
	group_bind(r, g);
}

/*
 * Translates a group's members (placement order) into one job description,
 * with the workload root (PodGroup, else the owning Job) and the namespace
 * for defaults and the account allow-list.
 */
static int
group_translate(struct reconcile *r, struct group *g, json_t **pods,
    size_t n, struct jobspec *js, char *err, size_t errlen)
{
	struct translate_src	 src;
	char			 key[512];

	snprintf(key, sizeof(key), "%s/%s", g->ns, g->name);
	src.pod = pods[0];
	src.ns = map_get(r->namespaces, g->ns);
	src.root = g->gang ? map_get(r->podgroups, key) : NULL;
	if (src.root == NULL && g->gang)
		src.root = map_get(r->jobsets, key);
	if (src.root == NULL && g->gang && k8s_obj_label(pods[0],
	    LWS_LABEL_NAME) != NULL) {
		snprintf(key, sizeof(key), "%s/%s", g->ns, k8s_obj_label(pods[0],
		    LWS_LABEL_NAME));
		src.root = map_get(r->lwss, key);
	}
	if (src.root == NULL)
		src.root = pod_owner_job(r, pods[0]);
	if (g->gang)
		return (translate_group(pods, n, g->name, src.root, src.ns,
		    &r->tconf, js, err, errlen));
	return (translate_pod(&src, &r->tconf, js, err, errlen));
}

static void
group_submit(struct reconcile *r, struct group *g, json_t **pods, size_t n)
{
	struct jobspec	 js;
	struct k8s_error kerr;
	struct pod_entry *e;
	json_t		*layout = NULL;
	char		 err[256], msg[320], key[512];
	uint32_t	 jobid;
	size_t		 i;
	int		 refused, rc;

	rc = group_translate(r, g, pods, n, &js, err, sizeof(err));
	if (rc == -1) {
		log_warnx("group %s: not submitted: %s", g->key, err);
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		group_condition(r, g, msg, 1);
		g->invalid = 1;
		return;
	}
	if (sctl_submit(&js, &jobid, &layout, &refused, err, sizeof(err)) ==
	    -1) {
		group_retry_later(g, refused);
		log_warnx("group %s: submit: %s; retrying in %lds", g->key,
		    err, g->retry_ms / 1000);
		snprintf(msg, sizeof(msg), "slurm-bridge: Slurm refused the "
		    "job: %s", err);
		group_condition(r, g, msg, 1);
		jobspec_cleanup(&js);
		return;
	}
	g->jobid = jobid;
	g->cancelled = 0;
	g->retry_ms = 0;
	g->cpus_per_task = js.cpus_per_task;
	g->gpus_per_task = js.gpus_per_task;
	g->exclusive = js.exclusive;
	jobspec_cleanup(&js);
	json_decref(g->job_pods);
	g->job_pods = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(g->job_pods, json_string(k8s_obj_key(
		    pods[i], key, sizeof(key))));
	jobs_put(r, jobid, g->key);
	g->state = G_PENDING;
	log_info("group %s: submitted slurm job %u for %zu pod%s%s", g->key,
	    jobid, n, n == 1 ? "" : "s", layout != NULL ? ", allocated" : "");
	snprintf(msg, sizeof(msg), "submitted Slurm job %u%s", jobid,
	    g->gang ? " for the gang" : "");
	/* The job id goes on every member before anything else happens. */
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, json_string_value(json_array_get(
		    g->job_pods, i)));
		if (e == NULL)
			continue;
		pod_event(r, e, "Normal", "SlurmJobSubmitted", "Submit", msg);
		if (layout == NULL && pod_metadata(r, e, jobid, NULL, NULL,
		    &kerr) == -1)
			log_warnx("pod %s: label for slurm job %u: %ld %s: %s",
			    e->key, jobid, kerr.status, kerr.reason,
			    kerr.text);
	}
	if (layout != NULL) {
		group_allocated(r, g, layout);
		json_decref(layout);
	}
}

static int
group_min(struct reconcile *r, struct group *g)
{
	json_t	*pg;
	char	 key[512];

	if (g->min_member > 0)
		return (g->min_member);
	snprintf(key, sizeof(key), "%s/%s", g->ns, g->name);
	if ((pg = map_get(r->podgroups, key)) != NULL)
		return ((int)json_integer_value(k8s_obj_get(pg,
		    "spec.minMember")));
	if ((pg = map_get(r->jobsets, key)) != NULL)
		return (sched_jobset_size(pg) > 0 ? sched_jobset_size(pg) : 0);
	return (0);
}

/* Decides what a group needs next. */
static void
group_evaluate(struct reconcile *r, struct group *g)
{
	json_t		*pods[SCHED_MAX_GANG];
	char		 msg[256];
	size_t		 n, i;
	int		 min;

	if (!r->recovered)
		return;
	if (g->state == G_ALLOCATED) {
		group_bind(r, g);
		return;
	}
	if (g->state != G_WAITING || g->invalid || g->next_try > now_ms())
		return;
	n = group_live(r, g, pods, SCHED_MAX_GANG, 1);
	if (n == 0)
		return;
	if (n > SCHED_MAX_GANG) {
		snprintf(msg, sizeof(msg), "gang %s has %zu pods; at most %d "
		    "are supported", g->name, n, SCHED_MAX_GANG);
		group_condition(r, g, msg, 1);
		return;
	}
	for (i = 0; i < n; i++)
		if (json_array_size(k8s_obj_get(pods[i],
		    "spec.schedulingGates")) > 0)
			return;
	if (!ns_enabled(r, g->ns)) {
		snprintf(msg, sizeof(msg), "namespace %s is not enabled for "
		    "slurm-bridge; enable it with: kubectl label namespace %s "
		    BRIDGE_NS_LABEL "=" BRIDGE_NS_LABEL_VALUE, g->ns, g->ns);
		group_condition(r, g, msg, 1);
		return;
	}
	if ((min = group_min(r, g)) == 0) {
		snprintf(msg, sizeof(msg), "waiting for PodGroup or JobSet "
		    "%s/%s, or the " ANN_MIN_MEMBER " annotation, to give the "
		    "gang's size", g->ns, g->name);
		group_condition(r, g, msg, 0);
		return;
	}
	if ((int)n < min) {
		snprintf(msg, sizeof(msg), "waiting for gang %s: %zu of %d "
		    "pods present", g->name, n, min);
		group_condition(r, g, msg, 0);
		return;
	}
	group_submit(r, g, pods, n);
}

static void
group_add(struct group *g, const char *pkey)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(g->members, i, v)
		if (strcmp(json_string_value(v), pkey) == 0)
			return;
	json_array_append_new(g->members, json_string(pkey));
}

static void
group_remove(struct group *g, const char *pkey)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(g->members, i, v) {
		if (strcmp(json_string_value(v), pkey) == 0) {
			json_array_remove(g->members, i);
			return;
		}
	}
}

/* Frees a group with no members and no live job. */
static void
group_gc(struct reconcile *r, struct group *g)
{
	if (json_array_size(g->members) > 0 ||
	    (g->jobid != 0 && !g->cancelled))
		return;
	if (g->jobid != 0)
		jobs_del(r, g->jobid);
	map_del(r->groups, g->key);
}

/*
 * A member ended or left.  A pending gang that lost a member gives its job
 * up (the gang is resubmitted once complete again); an allocated group's
 * job is cancelled once no member runs any more; finalizers are released
 * once the job is gone.
 */
static void
group_member_gone(struct reconcile *r, struct group *g)
{
	json_t			*live[SCHED_MAX_GANG], *v;
	struct pod_entry	*e;
	struct k8s_error	 err;
	size_t			 n, i;

	n = group_live(r, g, live, SCHED_MAX_GANG, 0);
	if (g->jobid != 0 && !g->cancelled) {
		if (g->state == G_PENDING && n < json_array_size(g->job_pods)) {
			group_cancel(r, g, "the gang lost a member while "
			    "pending");
			/* Clear the stale job id so a restart cannot adopt it. */
			json_array_foreach(g->members, i, v) {
				e = map_get(r->pods, json_string_value(v));
				if (e != NULL && e->state == PS_UNBOUND &&
				    e->label_jobid == g->jobid)
					(void)pod_metadata(r, e, 0, NULL, NULL,
					    &err);
			}
			jobs_del(r, g->jobid);
			g->jobid = 0;
			g->state = G_WAITING;
		} else if (n == 0)
			group_cancel(r, g, "no member runs any more");
	}
	if (g->jobid == 0 || g->cancelled) {
		json_array_foreach(g->members, i, v) {
			e = map_get(r->pods, json_string_value(v));
			if (e == NULL || e->state != PS_ENDED)
				continue;
			pod_release(r, e);
			pod_force_delete(r, e);
		}
	}
	group_gc(r, g);
}

static time_t
parse_time(const char *s)
{
	struct tm	tm;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return (0);
	return (timegm(&tm));
}

/* Terminal, or deleted and past its grace period. */
static int
pod_over(struct pod_entry *e)
{
	const char	*phase = k8s_obj_str(e->obj, "status.phase");

	if (phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
	    strcmp(phase, "Failed") == 0))
		return (1);
	/*
	 * Deleted: over once the node confirmed (grace shortened to 0), the
	 * grace period ran out, or at once if it never ran anywhere.
	 */
	if (e->delete_at != 0 && (e->state == PS_UNBOUND ||
	    time(NULL) >= e->delete_at || json_integer_value(k8s_obj_get(
	    e->obj, "metadata.deletionGracePeriodSeconds")) == 0))
		return (1);
	return (0);
}

static struct group *
group_get(struct reconcile *r, const struct group_id *gid, const char *ns)
{
	struct group	*g;

	if ((g = map_get(r->groups, gid->key)) != NULL)
		return (g);
	g = xcalloc(1, sizeof(*g));
	g->key = xstrdup(gid->key);
	g->ns = xstrdup(ns);
	g->name = xstrdup(gid->name);
	g->gang = gid->gang;
	g->min_member = gid->min_member;
	g->members = json_array();
	map_put(r->groups, g->key, g);
	return (g);
}

/* The controlling batch/v1 Job of a pod, from the Job cache. */
static const json_t *
pod_owner_job(struct reconcile *r, const json_t *pod)
{
	json_t		*ref;
	const char	*kind, *name;
	char		 key[512];
	size_t		 i;

	json_array_foreach(k8s_obj_get(pod, "metadata.ownerReferences"), i,
	    ref) {
		kind = json_string_value(json_object_get(ref, "kind"));
		name = json_string_value(json_object_get(ref, "name"));
		if (kind == NULL || name == NULL || strcmp(kind, "Job") != 0 ||
		    !json_is_true(json_object_get(ref, "controller")))
			continue;
		snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(pod),
		    name);
		return (map_get(r->k8s_jobs, key));
	}
	return (NULL);
}

static void
pod_update(struct reconcile *r, json_t *obj)
{
	struct pod_entry	*e;
	struct group		*g, *old;
	struct group_id		 gid;
	const char		*label, *node, *js;
	char			 key[512], err[256], msg[320], jskey[512], *end;
	unsigned long		 id;

	k8s_obj_key(obj, key, sizeof(key));
	if ((e = map_get(r->pods, key)) == NULL) {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		e->ns = xstrdup(k8s_obj_namespace(obj));
		e->name = xstrdup(k8s_obj_name(obj));
		map_put(r->pods, key, e);
	}
	json_decref(e->obj);
	e->obj = obj;
	e->delete_at = parse_time(k8s_obj_str(obj,
	    "metadata.deletionTimestamp"));
	e->finalizer = 0;
	{
		json_t	*v;
		size_t	 i;
		json_array_foreach(k8s_obj_get(obj, "metadata.finalizers"), i,
		    v)
			if (strcmp(json_string_value(v) ? json_string_value(v)
			    : "", FINALIZER) == 0)
				e->finalizer = 1;
	}
	label = k8s_obj_label(obj, LABEL_JOBID);
	e->label_jobid = 0;
	if (label != NULL) {
		id = strtoul(label, &end, 10);
		if (*end == '\0' && id > 0 && id < UINT32_MAX)
			e->label_jobid = (uint32_t)id;
	}

	js = k8s_obj_label(obj, JOBSET_LABEL_NAME);
	if (js != NULL)
		snprintf(jskey, sizeof(jskey), "%s/%s", e->ns, js);
	if (sched_pod_group(obj, pod_owner_job(r, obj), js != NULL ?
	    map_get(r->jobsets, jskey) : NULL, &gid, err, sizeof(err)) == -1) {
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		pod_condition(r, e, msg, 1);
		return;
	}
	if (e->group != NULL && strcmp(e->group, gid.key) != 0 &&
	    (old = map_get(r->groups, e->group)) != NULL) {
		group_remove(old, e->key);
		group_member_gone(r, old);
	}
	free(e->group);
	e->group = xstrdup(gid.key);
	g = group_get(r, &gid, e->ns);
	group_add(g, e->key);
	g->invalid = 0;
	/* The jobid label is how a restarted bridge finds the job. */
	if (g->jobid == 0 && e->label_jobid != 0 && g->state == G_WAITING) {
		g->jobid = e->label_jobid;
		g->state = G_PENDING;
		jobs_put(r, g->jobid, g->key);
	}

	node = k8s_obj_str(obj, "spec.nodeName");
	if (node != NULL && *node != '\0')
		e->state = PS_BOUND;
	else
		e->state = PS_UNBOUND;
	if (pod_over(e)) {
		e->state = PS_ENDED;
		group_member_gone(r, g);
		return;
	}
	group_evaluate(r, g);
}

static void
pod_deleted(struct reconcile *r, json_t *obj)
{
	struct pod_entry	*e;
	struct group		*g;
	char			 key[512];

	k8s_obj_key(obj, key, sizeof(key));
	if ((e = map_take(r->pods, key)) != NULL) {
		if (e->group != NULL &&
		    (g = map_get(r->groups, e->group)) != NULL) {
			group_remove(g, key);
			group_member_gone(r, g);
		}
		pod_entry_free(e);
	}
	json_decref(obj);
}

/* Re-evaluates every group, and ends members past their grace period. */
static void
groups_sweep(struct reconcile *r)
{
	size_t		 it = 0;
	void		*v;
	json_t		*keys = json_array(), *k;
	size_t		 i;

	/*
	 * Collect first (evaluating may free groups): deleted pods whose grace
	 * period ran out, and ended ones still waiting for their node.
	 */
	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		if (e->delete_at == 0)
			continue;
		if ((e->state != PS_ENDED && pod_over(e)) ||
		    (e->state == PS_ENDED && time(NULL) >= e->delete_at +
		    FORCE_DELETE_SLACK_S))
			json_array_append_new(keys, json_string(e->key));
	}
	json_array_foreach(keys, i, k) {
		struct pod_entry *e = map_get(r->pods, json_string_value(k));
		struct group *g = e != NULL && e->group != NULL ?
		    map_get(r->groups, e->group) : NULL;
		if (e == NULL)
			continue;
		e->state = PS_ENDED;
		if (g != NULL)
			group_member_gone(r, g);
	}
	json_array_clear(keys);
	it = 0;
	while (map_next(r->groups, &it, NULL, &v))
		json_array_append_new(keys, json_string(((struct group *)v)->
		    key));
	json_array_foreach(keys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g != NULL)
			group_evaluate(r, g);
	}
	json_decref(keys);
}

/* Finds the waiting group an unknown job was submitted for, if any. */
static struct group *
job_adopt(struct reconcile *r, const struct sjob *j)
{
	json_t			*pods, *v;
	struct pod_entry	*e;
	struct group		*g = NULL;
	size_t			 i;

	if ((pods = translate_admin_pods(j->admin_comment)) == NULL)
		return (NULL);
	json_array_foreach(pods, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e != NULL && e->group != NULL &&
		    (g = map_get(r->groups, e->group)) != NULL &&
		    g->jobid == 0 && g->state == G_WAITING)
			break;
		g = NULL;
	}
	if (g != NULL) {
		g->jobid = j->id;
		g->state = G_PENDING;
		json_decref(g->job_pods);
		g->job_pods = json_incref(pods);
		jobs_put(r, j->id, g->key);
		log_info("group %s: adopted slurm job %u", g->key, j->id);
	}
	json_decref(pods);
	return (g);
}

/* Fills the per-task sizes of an adopted job from its members. */
static void
group_adopt_sizes(struct reconcile *r, struct group *g)
{
	json_t		*pods[SCHED_MAX_GANG];
	struct jobspec	 js;
	char		 err[256];
	size_t		 n;
	int		 rc;

	if (g->cpus_per_task != 0)
		return;
	n = group_live(r, g, pods, SCHED_MAX_GANG, 0);
	if (n == 0 || n > SCHED_MAX_GANG)
		return;
	rc = group_translate(r, g, pods, n, &js, err, sizeof(err));
	if (rc == -1)
		return;
	g->cpus_per_task = js.cpus_per_task;
	g->gpus_per_task = js.gpus_per_task;
	g->exclusive = js.exclusive;
	jobspec_cleanup(&js);
}

static void
job_update_cb(const struct sjob *j, void *arg)
{
	struct reconcile	*r = arg;
	struct group		*g;
	struct pod_entry	*e;
	struct k8s_error	 kerr;
	json_t			*v;
	char			 msg[256], err[256], path[512];
	size_t			 i;

	if ((g = jobs_group(r, j->id)) == NULL && j->phase != SJOB_ENDED)
		g = job_adopt(r, j);
	if (g == NULL) {
		if (j->phase != SJOB_ENDED) {
			/* No live pod wants this job: an orphan. */
			if (sctl_cancel(j->id, err, sizeof(err)) == -1)
				log_warnx("slurm job %u: cancel orphan: %s",
				    j->id, err);
			else
				log_info("slurm job %u: cancelled, no pod "
				    "(%s)", j->id, j->name != NULL ? j->name :
				    "?");
		}
		return;
	}
	g->seen = 1;
	if (g->job_pods == NULL) {
		/* Adopted through the jobid label: the job lists its pods. */
		g->job_pods = translate_admin_pods(j->admin_comment);
		if (g->job_pods == NULL)
			g->job_pods = json_array();
	}
	switch (j->phase) {
	case SJOB_PENDING:
		snprintf(msg, sizeof(msg), "waiting for Slurm job %u "
		    "(Reason=%s)", j->id, j->reason);
		if (g->state == G_PENDING)
			group_condition(r, g, msg, 0);
		break;
	case SJOB_RUNNING:
		if (g->state == G_PENDING && j->layout != NULL) {
			group_adopt_sizes(r, g);
			group_allocated(r, g, j->layout);
		}
		break;
	case SJOB_ENDED:
		log_info("group %s: slurm job %u ended: %s (reason %s)",
		    g->key, j->id, j->state, j->reason);
		/* The job is the pods' lease on the nodes: end them too. */
		json_array_foreach(g->members, i, v) {
			e = map_get(r->pods, json_string_value(v));
			if (e == NULL || e->state == PS_ENDED ||
			    e->delete_at != 0 || g->cancelled)
				continue;
			snprintf(msg, sizeof(msg), "Slurm job %u ended: %s "
			    "(Reason=%s); deleting the pod", j->id, j->state,
			    j->reason);
			pod_event(r, e, "Warning", "SlurmJobEnded", "Delete",
			    msg);
			if (k8s_delete(r->client, pod_path(e, "", path,
			    sizeof(path)), NULL, &kerr) == -1 &&
			    kerr.status != 404)
				log_warnx("pod %s: delete after job end: "
				    "%ld %s: %s", e->key, kerr.status,
				    kerr.reason, kerr.text);
			else
				log_info("pod %s: deleted: slurm job %u %s",
				    e->key, j->id, j->state);
		}
		g->cancelled = 1;
		g->state = G_ENDED;
		group_member_gone(r, g);
		break;
	}
}

static int
node_managed(const json_t *node)
{
	const json_t	*t;
	const char	*key;
	size_t		 i;

	json_array_foreach(k8s_obj_get(node, "spec.taints"), i, t) {
		key = json_string_value(json_object_get(t, "key"));
		if (key != NULL && strcmp(key, MANAGED_TAINT_KEY) == 0)
			return (1);
	}
	return (0);
}

static int
node_ready(const json_t *node)
{
	const json_t	*c;
	const char	*type, *st;
	size_t		 i;

	json_array_foreach(k8s_obj_get(node, "status.conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		st = json_string_value(json_object_get(c, "status"));
		if (type != NULL && strcmp(type, "Ready") == 0)
			return (st != NULL && strcmp(st, "True") == 0);
	}
	return (0);
}

static int
node_cordoned(const json_t *node)
{
	return (json_is_true(k8s_obj_get(node, "spec.unschedulable")));
}

/*
 * Fails every live member of a group whose node was lost, and ends its
 * job: a gang is all or nothing.
 */
static void
group_fail(struct reconcile *r, struct group *g, const char *reason,
    const char *msg)
{
	struct k8s_error	 err;
	struct pod_entry	*e;
	json_t			*v, *patch, *keys;
	char			 path[512];
	size_t			 i;

	group_cancel(r, g, msg);
	keys = json_deep_copy(g->members);
	json_array_foreach(keys, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state == PS_ENDED)
			continue;
		patch = json_pack("{s:{s:s, s:s, s:s}}", "status", "phase",
		    "Failed", "reason", reason, "message", msg);
		if (k8s_patch(r->client, pod_path(e, "/status", path,
		    sizeof(path)), K8S_PATCH_MERGE, patch, NULL, &err) == -1)
			log_warnx("pod %s: fail: %ld %s: %s", e->key,
			    err.status, err.reason, err.text);
		else
			log_info("pod %s: failed: %s", e->key, msg);
		json_decref(patch);
		pod_event(r, e, "Warning", reason, "Fail", msg);
		e->state = PS_ENDED;
	}
	json_decref(keys);
	group_member_gone(r, g);
}

/* A bridged node became NotReady: fail its pods and end their jobs. */
static void
node_lost(struct reconcile *r, const char *knode)
{
	json_t		*gkeys = json_array(), *k;
	size_t		 it = 0, i;
	void		*v;
	const char	*node;
	char		 msg[256];

	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		node = k8s_obj_str(e->obj, "spec.nodeName");
		if (e->state == PS_BOUND && e->group != NULL && node != NULL &&
		    strcmp(node, knode) == 0)
			json_array_append_new(gkeys, json_string(e->group));
	}
	snprintf(msg, sizeof(msg), "node %s is NotReady: the pod is failed "
	    "and its Slurm job ended", knode);
	json_array_foreach(gkeys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g != NULL)
			group_fail(r, g, "NodeNotReady", msg);
	}
	json_decref(gkeys);
}

/*
 * Keeps a bridged node's Slurm side in step: cordon drains the Slurm node
 * (reason "slurm-bridge: ..."), uncordon resumes only such a drain, and a
 * node turning NotReady fails its pods.  old is NULL when the node is first
 * seen (or at recovery).
 */
static void
node_changed(struct reconcile *r, const json_t *old, const json_t *node)
{
	const char	*name = k8s_obj_name(node);
	const char	*sname = k8s_obj_label(node, LABEL_SLURM_NODENAME);
	char		 err[256];
	int		 resumed;

	if (!node_managed(node) || name == NULL)
		return;
	if (sname == NULL)
		sname = name;
	if (node_cordoned(node) && (old == NULL || !node_cordoned(old))) {
		if (sctl_node_drain(sname, DRAIN_REASON_PREFIX " node cordoned "
		    "in Kubernetes", err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else
			log_info("node %s: cordoned: drained slurm node %s",
			    name, sname);
	} else if (!node_cordoned(node) && (old == NULL ||
	    node_cordoned(old))) {
		if (sctl_node_resume_ours(sname, DRAIN_REASON_PREFIX, &resumed,
		    err, sizeof(err)) == -1)
			log_warnx("node %s: %s", name, err);
		else if (resumed)
			log_info("node %s: uncordoned: resumed slurm node %s",
			    name, sname);
	}
	if (!node_ready(node) && (old == NULL || node_ready(old))) {
		log_info("node %s: NotReady", name);
		node_lost(r, name);
	}
}

static void
nodes_sync_all(struct reconcile *r)
{
	size_t	 it = 0;
	void	*v;

	while (map_next(r->nodes, &it, NULL, &v))
		node_changed(r, NULL, v);
}

static void
reconcile_poll(struct reconcile *r)
{
	char	err[256];

	if (sctl_poll(&r->slurm_since, job_update_cb, r, err, sizeof(err)) ==
	    -1)
		log_warnx("slurm: %s", err);
}

/*
 * Groups whose labelled job Slurm no longer knows (it ended and was purged
 * while the bridge was down): bound members lost their allocation and are
 * deleted; unbound ones are submitted again.
 */
static void
reconcile_vanished(struct reconcile *r)
{
	struct sjob	 j;
	json_t		*keys = json_array(), *k;
	size_t		 it = 0, i;
	void		*v;

	while (map_next(r->groups, &it, NULL, &v)) {
		struct group *g = v;
		if (g->jobid != 0 && !g->seen)
			json_array_append_new(keys, json_string(g->key));
	}
	json_array_foreach(keys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g == NULL)
			continue;
		log_info("group %s: slurm job %u is gone from Slurm", g->key,
		    g->jobid);
		if (g->state == G_PENDING && group_live(r, g, NULL, 0, 0) ==
		    group_live(r, g, NULL, 0, 1)) {
			/* Nothing was bound: submit again. */
			jobs_del(r, g->jobid);
			g->jobid = 0;
			g->state = G_WAITING;
			continue;
		}
		memset(&j, 0, sizeof(j));
		j.id = g->jobid;
		j.phase = SJOB_ENDED;
		j.state = "PURGED";
		j.reason = "the job is no longer known to Slurm";
		job_update_cb(&j, r);
	}
	json_decref(keys);
}

/* First full Slurm load after the caches sync: adopt before submitting. */
static void
reconcile_recover(struct reconcile *r)
{
	char	err[256];

	r->slurm_since = 0;
	if (sctl_poll(&r->slurm_since, job_update_cb, r, err, sizeof(err))
	    == -1) {
		log_warnx("slurm: recovery: %s; retrying", err);
		return;
	}
	reconcile_vanished(r);
	r->recovered = 1;
	nodes_sync_all(r);
	log_info("recovered: %zu pods in %zu groups, %zu slurm jobs tracked",
	    map_count(r->pods), map_count(r->groups), map_count(r->jobs));
	groups_sweep(r);
}

static struct map *
reconcile_map(struct reconcile *r, enum event_kind kind)
{
	switch (kind) {
	case EV_NODE:
		return (r->nodes);
	case EV_NAMESPACE:
		return (r->namespaces);
	case EV_JOB:
		return (r->k8s_jobs);
	case EV_PODGROUP:
		return (r->podgroups);
	case EV_JOBSET:
		return (r->jobsets);
	case EV_LWS:
		return (r->lwss);
	default:
		return (NULL);
	}
}

static void
reconcile_event(struct reconcile *r, struct event *ev)
{
	struct map	*m;
	char		 key[512];

	if (ev->type == K8S_EVENT_SYNCED) {
		r->synced[ev->kind] = 1;
		event_free(ev);
		return;
	}
	if (ev->kind == EV_POD) {
		if (ev->type == K8S_EVENT_DELETED)
			pod_deleted(r, ev->obj);
		else
			pod_update(r, ev->obj);
		ev->obj = NULL;
		event_free(ev);
		return;
	}
	m = reconcile_map(r, ev->kind);
	k8s_obj_key(ev->obj, key, sizeof(key));
	if (ev->kind == EV_NODE && ev->type != K8S_EVENT_DELETED &&
	    r->recovered)
		node_changed(r, map_get(m, key), ev->obj);
	if (ev->type == K8S_EVENT_DELETED)
		map_del(m, key);
	else {
		map_put(m, key, ev->obj);
		ev->obj = NULL;
	}
	/* Nodes change every heartbeat: their changes wait for the sweep. */
	if (ev->kind != EV_NODE && r->recovered)
		groups_sweep(r);
	event_free(ev);
}

static int
reconcile_busy(struct reconcile *r)
{
	size_t	 it = 0;
	void	*v;

	while (map_next(r->groups, &it, NULL, &v)) {
		enum group_state s = ((struct group *)v)->state;
		if (s == G_PENDING || s == G_ALLOCATED)
			return (1);
	}
	return (0);
}

static void *
reconcile_main(void *arg)
{
	struct reconcile	*r = arg;
	struct event		*ev;
	struct k8s_error	 err;
	int64_t			 now, wait;
	char			 host[256];

	log_setname("reconcile");
	if ((r->client = k8s_client_new(r->kconf, &err)) == NULL) {
		log_warnx("reconcile: client: %s", err.text);
		return (NULL);
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "slurm-bridge");
	host[sizeof(host) - 1] = '\0';
	r->recorder = k8s_recorder_new(r->client, r->conf->scheduler_name,
	    host);
	while (!atomic_load(&r->stop)) {
		now = now_ms();
		wait = r->next_poll > now ? r->next_poll - now : 0;
		if ((ev = queue_pop(r->queue, (int)wait)) != NULL) {
			reconcile_event(r, ev);
			continue;
		}
		if (atomic_load(&r->stop))
			break;
		now = now_ms();
		if (!r->recovered) {
			if (r->synced[EV_POD] && r->synced[EV_NODE] &&
			    r->synced[EV_NAMESPACE] && r->synced[EV_JOB])
				reconcile_recover(r);
		} else {
			reconcile_poll(r);
			if (now >= r->next_sweep) {
				groups_sweep(r);
				r->next_sweep = now + r->conf->idle_poll_ms;
			}
		}
		r->next_poll = now_ms() + (reconcile_busy(r) ?
		    r->conf->poll_ms : r->conf->idle_poll_ms);
	}
	k8s_recorder_free(r->recorder);
	r->recorder = NULL;
	k8s_client_free(r->client);
	r->client = NULL;
	return (NULL);
}

struct reconcile *
reconcile_new(const struct bridge_conf *conf, const struct k8s_config *kconf,
    struct queue *q)
{
	struct reconcile	*r;

	r = xcalloc(1, sizeof(*r));
	r->conf = conf;
	r->kconf = kconf;
	r->queue = q;
	r->pods = map_new(pod_entry_free);
	r->groups = map_new(group_free);
	r->jobs = map_new(free);
	r->nodes = map_new(json_free_cb);
	r->namespaces = map_new(json_free_cb);
	r->k8s_jobs = map_new(json_free_cb);
	r->podgroups = map_new(json_free_cb);
	r->jobsets = map_new(json_free_cb);
	r->lwss = map_new(json_free_cb);
	r->tconf.partition = conf->partition;
	r->tconf.exclusive = 0;
	atomic_init(&r->stop, 0);
	return (r);
}

void
reconcile_free(struct reconcile *r)
{
	if (r == NULL)
		return;
	map_free(r->pods);
	map_free(r->groups);
	map_free(r->jobs);
	map_free(r->nodes);
	map_free(r->namespaces);
	map_free(r->k8s_jobs);
	map_free(r->podgroups);
	map_free(r->jobsets);
	map_free(r->lwss);
	free(r);
}

int
reconcile_start(struct reconcile *r)
{
	if (pthread_create(&r->thread, NULL, reconcile_main, r) != 0)
		return (-1);
	r->started = 1;
	return (0);
}

void
reconcile_stop(struct reconcile *r)
{
	atomic_store(&r->stop, 1);
}

void
reconcile_join(struct reconcile *r)
{
	if (r->started)
		pthread_join(r->thread, NULL);
	r->started = 0;
}
