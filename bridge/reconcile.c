/*
 * The reconcile thread: the single owner of the pod, node and namespace
 * caches and the only caller of slurm.c.  It pops informer events from the
 * queue, submits one allocation-only placeholder job per pod, polls Slurm
 * incrementally (slurm_load_jobs with update_time), binds pods when their job
 * is allocated, and cancels jobs whose pods are gone.  On start it adopts
 * existing bridge jobs (by the jobid label and the admin_comment pod list)
 * before submitting anything, so a restart neither duplicates nor orphans a
 * job.
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

enum pod_state {
	PS_WAITING,	/* not submitted: namespace, gates, error, retry */
	PS_PENDING,	/* job submitted, not allocated */
	PS_ALLOCATED,	/* job allocated, pod not yet bound */
	PS_BOUND,
	PS_ENDED	/* terminal or deleting; job cancelled */
};

struct pod_entry {
	char		*key;		/* ns/name */
	char		*ns;
	char		*name;
	json_t		*obj;
	uint32_t	 jobid;
	enum pod_state	 state;
	char		*nodes;		/* Slurm hostlist of the allocation */
	int		 labelled;	/* jobid label written */
	int		 cancelled;
	char		*invalid_rv;	/* resourceVersion that failed checks */
	long		 retry_ms;
	int64_t		 next_try;	/* monotonic ms */
	char		 cond[256];	/* last PodScheduled message written */
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

	struct map		*pods;		/* key -> pod_entry */
	struct map		*jobs;		/* jobid -> pod key (string) */
	struct map		*nodes;		/* k8s node name -> json */
	struct map		*namespaces;	/* name -> json */
	struct translate_conf	 tconf;
	int			 pods_synced;
	int			 nodes_synced;
	int			 ns_synced;
	int			 recovered;
	time_t			 slurm_since;
	int64_t			 next_poll;
};

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
	json_decref(e->obj);
	free(e->nodes);
	free(e->invalid_rv);
	free(e);
}

static void
json_free_cb(void *p)
{
	json_decref(p);
}

static void
jobs_put(struct reconcile *r, uint32_t jobid, const char *key)
{
	char	id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	map_put(r->jobs, id, xstrdup(key));
}

static const char *
jobs_get(struct reconcile *r, uint32_t jobid)
{
	char	id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	return (map_get(r->jobs, id));
}

static void
jobs_del(struct reconcile *r, uint32_t jobid)
{
	char	id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	map_del(r->jobs, id);
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

/* Writes PodScheduled=False with msg, once per distinct message. */
static void
pod_condition(struct reconcile *r, struct pod_entry *e, const char *reason,
    const char *msg, int warn)
{
	struct k8s_error	 err;
	json_t			*patch;
	char			 path[512], ts[32];
	time_t			 t = time(NULL);
	struct tm		 tm;

	if (strcmp(e->cond, msg) == 0)
		return;
	if (warn)
		pod_event(r, e, "Warning", "FailedScheduling", "Scheduling",
		    msg);
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	patch = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "PodScheduled", "status", "False",
	    "reason", reason, "message", msg, "lastTransitionTime", ts);
	if (k8s_patch(r->client, pod_path(e, "/status", path, sizeof(path)),
	    K8S_PATCH_STRATEGIC, patch, NULL, &err) == -1)
		log_warnx("pod %s: condition: %ld %s: %s", e->key, err.status,
		    err.reason, err.text);
	else
		snprintf(e->cond, sizeof(e->cond), "%s", msg);
	json_decref(patch);
}

static void
pod_cancel(struct pod_entry *e, const char *why)
{
	char	err[256];

	if (e->jobid == 0 || e->cancelled)
		return;
	if (sctl_cancel(e->jobid, err, sizeof(err)) == -1) {
		log_warnx("pod %s: cancel slurm job %u: %s", e->key, e->jobid,
		    err);
		return;
	}
	e->cancelled = 1;
	log_info("pod %s: cancelled slurm job %u (%s)", e->key, e->jobid, why);
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

/* Writes the jobid label (and node annotation once allocated). */
static int
pod_label(struct reconcile *r, struct pod_entry *e, const char *slurm_node)
{
	struct k8s_error	 err;
	json_t			*patch;
	char			 path[512], id[16];
	int			 rc;

	snprintf(id, sizeof(id), "%u", e->jobid);
	patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", LABEL_JOBID,
	    id);
	if (slurm_node != NULL)
		json_object_set_new(json_object_get(patch, "metadata"),
		    "annotations", json_pack("{s:s}", ANN_SLURM_NODE,
		    slurm_node));
	rc = k8s_patch(r->client, pod_path(e, "", path, sizeof(path)),
	    K8S_PATCH_MERGE, patch, NULL, &err);
	json_decref(patch);
	if (rc == -1) {
		log_warnx("pod %s: label slurm job %u: %ld %s: %s", e->key,
		    e->jobid, err.status, err.reason, err.text);
		if (err.status == 404)
			pod_cancel(e, "pod is gone");
		return (-1);
	}
	e->labelled = 1;
	return (0);
}

/* Binds an allocated pod; retried from the timer when it fails. */
static void
pod_bind(struct reconcile *r, struct pod_entry *e)
{
	struct k8s_error	 err;
	json_t			*hosts;
	const char		*snode, *knode;
	char			 msg[256];

	if ((hosts = sctl_hostlist_expand(e->nodes)) == NULL ||
	    (snode = json_string_value(json_array_get(hosts, 0))) == NULL) {
		log_warnx("pod %s: slurm job %u: bad node list \"%s\"",
		    e->key, e->jobid, e->nodes);
		json_decref(hosts);
		return;
	}
	if ((knode = node_k8s_name(r, snode)) == NULL) {
		snprintf(msg, sizeof(msg), "slurm job %u was allocated Slurm "
		    "node %s, which has no Kubernetes node (same name, or a "
		    "node labelled " LABEL_SLURM_NODENAME "=%s)", e->jobid,
		    snode, snode);
		log_warnx("pod %s: %s", e->key, msg);
		pod_condition(r, e, "Unschedulable", msg, 1);
		json_decref(hosts);
		return;
	}
	/* The jobid must be on the pod before it is bound (restart safety). */
	if (pod_label(r, e, snode) == -1)
		goto done;
	if (k8s_pod_bind(r->client, e->ns, e->name, k8s_obj_uid(e->obj),
	    knode, &err) == -1) {
		log_warnx("pod %s: bind to %s: %ld %s: %s", e->key, knode,
		    err.status, err.reason, err.text);
		if (err.status == 404)
			pod_cancel(e, "pod is gone");
		goto done;
	}
	e->state = PS_BOUND;
	log_info("pod %s: bound to node %s (slurm job %u)", e->key, knode,
	    e->jobid);
	snprintf(msg, sizeof(msg), "bound to %s: Slurm allocated node %s to "
	    "job %u", knode, snode, e->jobid);
	pod_event(r, e, "Normal", "Scheduled", "Binding", msg);
 done:
	json_decref(hosts);
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
pod_retry_later(struct pod_entry *e, int refused)
{
	long	min = refused ? REFUSED_MIN_MS : RETRY_MIN_MS;
	long	max = refused ? REFUSED_MAX_MS : RETRY_MAX_MS;

	e->retry_ms = e->retry_ms < min ? min : e->retry_ms * 2;
	if (e->retry_ms > max)
		e->retry_ms = max;
	e->next_try = now_ms() + e->retry_ms;
}

static void
pod_submit(struct reconcile *r, struct pod_entry *e)
{
	struct jobspec	 js;
	char		 err[256], msg[320], *nodes = NULL;
	const char	*rv = k8s_obj_str(e->obj, "metadata.resourceVersion");
	uint32_t	 jobid;
	int		 refused;

	if (translate_pod(e->obj, &r->tconf, &js, err, sizeof(err)) == -1) {
		log_warnx("pod %s: not submitted: %s", e->key, err);
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		pod_condition(r, e, "Unschedulable", msg, 1);
		free(e->invalid_rv);
		e->invalid_rv = xstrdup(rv != NULL ? rv : "");
		return;
	}
	if (sctl_submit(&js, &jobid, &nodes, &refused, err, sizeof(err)) ==
	    -1) {
		pod_retry_later(e, refused);
		log_warnx("pod %s: submit: %s; retrying in %lds", e->key, err,
		    e->retry_ms / 1000);
		snprintf(msg, sizeof(msg), "slurm-bridge: Slurm refused the "
		    "job: %s", err);
		pod_condition(r, e, "Unschedulable", msg, 1);
		jobspec_cleanup(&js);
		return;
	}
	jobspec_cleanup(&js);
	e->jobid = jobid;
	e->retry_ms = 0;
	jobs_put(r, jobid, e->key);
	log_info("pod %s: submitted slurm job %u%s%s", e->key, jobid,
	    nodes != NULL ? ", allocated " : "", nodes != NULL ? nodes : "");
	snprintf(msg, sizeof(msg), "submitted Slurm job %u", jobid);
	pod_event(r, e, "Normal", "SlurmJobSubmitted", "Submit", msg);
	if (nodes != NULL) {
		e->state = PS_ALLOCATED;
		e->nodes = nodes;
		pod_bind(r, e);
		return;
	}
	e->state = PS_PENDING;
	pod_label(r, e, NULL);
}

/* Decides what an unbound, live pod needs next. */
static void
pod_evaluate(struct reconcile *r, struct pod_entry *e)
{
	const char	*rv;
	char		 msg[256];

	if (!r->recovered)
		return;
	switch (e->state) {
	case PS_ALLOCATED:
		pod_bind(r, e);
		return;
	case PS_WAITING:
		break;
	default:
		return;
	}
	if (json_array_size(k8s_obj_get(e->obj, "spec.schedulingGates")) > 0)
		return;
	if (!ns_enabled(r, e->ns)) {
		snprintf(msg, sizeof(msg), "namespace %s is not enabled for "
		    "slurm-bridge; enable it with: kubectl label namespace %s "
		    BRIDGE_NS_LABEL "=" BRIDGE_NS_LABEL_VALUE, e->ns, e->ns);
		pod_condition(r, e, "Unschedulable", msg, 1);
		return;
	}
	rv = k8s_obj_str(e->obj, "metadata.resourceVersion");
	if (e->invalid_rv != NULL && rv != NULL &&
	    strcmp(e->invalid_rv, rv) == 0)
		return;
	if (e->next_try > now_ms())
		return;
	pod_submit(r, e);
}

static int
pod_is_over(const json_t *pod)
{
	const char	*phase = k8s_obj_str(pod, "status.phase");

	return (k8s_obj_get(pod, "metadata.deletionTimestamp") != NULL ||
	    (phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
	    strcmp(phase, "Failed") == 0)));
}

static void
pod_update(struct reconcile *r, json_t *obj)
{
	struct pod_entry	*e;
	const char		*label, *node;
	char			 key[512], *end;
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

	/* The jobid label is how a restarted bridge finds the pod's job. */
	label = k8s_obj_label(obj, LABEL_JOBID);
	if (e->jobid == 0 && label != NULL) {
		id = strtoul(label, &end, 10);
		if (*end == '\0' && id > 0 && id < UINT32_MAX) {
			e->jobid = (uint32_t)id;
			e->labelled = 1;
			e->state = PS_PENDING;
			jobs_put(r, e->jobid, e->key);
		}
	}
	node = k8s_obj_str(obj, "spec.nodeName");
	if (pod_is_over(obj)) {
		if (e->state != PS_ENDED)
			pod_cancel(e, "pod is terminating or finished");
		e->state = PS_ENDED;
	} else if (node != NULL && *node != '\0')
		e->state = PS_BOUND;
	else
		pod_evaluate(r, e);
}

static void
pod_deleted(struct reconcile *r, json_t *obj)
{
	struct pod_entry	*e;
	char			 key[512];

	k8s_obj_key(obj, key, sizeof(key));
	if ((e = map_get(r->pods, key)) != NULL) {
		pod_cancel(e, "pod deleted");
		if (e->jobid != 0)
			jobs_del(r, e->jobid);
		map_del(r->pods, key);
	}
	json_decref(obj);
}

/* Re-evaluates every unbound pod (namespace or node changes, timer). */
static void
pods_evaluate_all(struct reconcile *r)
{
	size_t			 it = 0;
	void			*v;

	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		if (e->state == PS_WAITING || e->state == PS_ALLOCATED)
			pod_evaluate(r, e);
	}
}

/* Finds the live pod an unknown job was submitted for, if any. */
static struct pod_entry *
job_adopt(struct reconcile *r, const struct sjob *j)
{
	json_t			*pods;
	struct pod_entry	*e = NULL;
	const char		*key;
	size_t			 i;
	json_t			*v;

	if ((pods = translate_admin_pods(j->admin_comment)) == NULL)
		return (NULL);
	json_array_foreach(pods, i, v) {
		if ((key = json_string_value(v)) == NULL)
			continue;
		e = map_get(r->pods, key);
		if (e != NULL && e->jobid == 0 && e->state != PS_ENDED)
			break;
		e = NULL;
	}
	json_decref(pods);
	if (e == NULL)
		return (NULL);
	e->jobid = j->id;
	e->state = PS_PENDING;
	jobs_put(r, j->id, e->key);
	log_info("pod %s: adopted slurm job %u", e->key, j->id);
	return (e);
}

static void
job_update_cb(const struct sjob *j, void *arg)
{
	struct reconcile	*r = arg;
	struct pod_entry	*e = NULL;
	const char		*key;
	char			 msg[256], err[256];

	if ((key = jobs_get(r, j->id)) != NULL)
		e = map_get(r->pods, key);
	if (e == NULL && j->phase != SJOB_ENDED)
		e = job_adopt(r, j);
	if (e == NULL || e->jobid != j->id) {
		if (j->phase != SJOB_ENDED) {
			/* No live pod wants this job: an orphan. */
			if (sctl_cancel(j->id, err, sizeof(err)) == -1)
				log_warnx("slurm job %u: cancel orphan: %s",
				    j->id, err);
			else
				log_info("slurm job %u: cancelled, no pod "
				    "(%s)", j->id, j->name != NULL ? j->name :
				    "?");
		} else if (key != NULL)
			jobs_del(r, j->id);
		return;
	}
	switch (j->phase) {
	case SJOB_PENDING:
		snprintf(msg, sizeof(msg), "waiting for Slurm allocation "
		    "(job %u, Reason=%s)", j->id, j->reason);
		if (e->state == PS_PENDING || e->state == PS_WAITING) {
			e->state = PS_PENDING;
			pod_condition(r, e, "Unschedulable", msg, 0);
		}
		if (!e->labelled)
			pod_label(r, e, NULL);
		break;
	case SJOB_RUNNING:
		if (e->state == PS_PENDING || e->state == PS_WAITING) {
			free(e->nodes);
			e->nodes = j->nodes != NULL ? xstrdup(j->nodes) : NULL;
			e->state = PS_ALLOCATED;
			log_info("pod %s: slurm job %u allocated %s", e->key,
			    j->id, e->nodes != NULL ? e->nodes : "?");
			pod_bind(r, e);
		}
		break;
	case SJOB_ENDED:
		log_info("pod %s: slurm job %u ended: %s (reason %s)", e->key,
		    j->id, j->state, j->reason);
		if (e->state != PS_ENDED && !pod_is_over(e->obj)) {
			snprintf(msg, sizeof(msg), "Slurm job %u ended: %s "
			    "(Reason=%s); deleting the pod", j->id, j->state,
			    j->reason);
			pod_event(r, e, "Warning", "SlurmJobEnded", "Delete",
			    msg);
		}
		e->cancelled = 1;
		if (e->state != PS_ENDED && !pod_is_over(e->obj)) {
			struct k8s_error	kerr;
			char			path[512];

			/* The job is the pod's lease on the node: end it. */
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
		e->state = PS_ENDED;
		jobs_del(r, j->id);
		break;
	}
}

static void
reconcile_poll(struct reconcile *r)
{
	char	err[256];
	int	rc;

	rc = sctl_poll(&r->slurm_since, job_update_cb, r, err, sizeof(err));
	if (rc == -1)
		log_warnx("slurm: %s", err);
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
	r->recovered = 1;
	log_info("recovered: %zu pods, %zu slurm jobs tracked",
	    map_count(r->pods), map_count(r->jobs));
	pods_evaluate_all(r);
}

static void
reconcile_event(struct reconcile *r, struct event *ev)
{
	char	key[512];

	switch (ev->kind) {
	case EV_POD:
		if (ev->type == K8S_EVENT_SYNCED)
			r->pods_synced = 1;
		else if (ev->type == K8S_EVENT_DELETED)
			pod_deleted(r, ev->obj);
		else
			pod_update(r, ev->obj);
		ev->obj = NULL;
		break;
	case EV_NODE:
	case EV_NAMESPACE:
		if (ev->type == K8S_EVENT_SYNCED) {
			if (ev->kind == EV_NODE)
				r->nodes_synced = 1;
			else
				r->ns_synced = 1;
			break;
		}
		k8s_obj_key(ev->obj, key, sizeof(key));
		if (ev->type == K8S_EVENT_DELETED)
			map_del(ev->kind == EV_NODE ? r->nodes :
			    r->namespaces, key);
		else {
			map_put(ev->kind == EV_NODE ? r->nodes :
			    r->namespaces, key, ev->obj);
			ev->obj = NULL;
		}
		pods_evaluate_all(r);
		break;
	}
	event_free(ev);
}

static int
reconcile_has_pending(struct reconcile *r)
{
	size_t	 it = 0;
	void	*v;

	while (map_next(r->pods, &it, NULL, &v)) {
		enum pod_state s = ((struct pod_entry *)v)->state;
		if (s == PS_PENDING || s == PS_ALLOCATED || s == PS_WAITING)
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
		if (!r->recovered) {
			if (r->pods_synced && r->nodes_synced && r->ns_synced)
				reconcile_recover(r);
		} else {
			reconcile_poll(r);
			pods_evaluate_all(r);
		}
		r->next_poll = now_ms() + (reconcile_has_pending(r) ?
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
	r->jobs = map_new(free);
	r->nodes = map_new(json_free_cb);
	r->namespaces = map_new(json_free_cb);
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
	map_free(r->jobs);
	map_free(r->nodes);
	map_free(r->namespaces);
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
