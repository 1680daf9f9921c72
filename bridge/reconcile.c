/*
 * The reconcile thread's loop: the single owner of the caches (pods,
 * groups, nodes, namespaces, workload objects, claims and devices).  It
 * pops messages from the queue and hands each to its place: pods to
 * pods.c (which files them into groups; group.c runs each group's state
 * machine), pod writes and allocations that came back to bind.c and
 * group.c, extender calls to extender.c, other objects to their caches.
 * Between messages it asks for Slurm's changed jobs (poll.c), sweeps
 * (sweep.c) and keeps nodes in step (nodes.c).
 * It makes every libslurm call but submits and pending-job changes (the
 * submit thread's, submitter.c), loads of Slurm's jobs (the poll
 * thread's, poller.c) and the ends of jobs whose pods ended (the end
 * thread's, ender.c).  On start it adopts this install's jobs (each pairs
 * with the pods its admin_comment names by name and UID; a job id on a pod
 * is only where to look) before anything is submitted, so a restart neither
 * duplicates nor orphans a job, and never takes another install's.
 *
 * Threads: reconcile.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

static void
json_free_cb(void *p)
{
	json_decref(p);
}

static void
inner_map_free(void *p)
{
	map_free(p);
}

/*
 * Are the caches recovery needs listed?  Pods, nodes, namespaces and Jobs
 * always; PodGroups, JobSets, LeaderWorkerSets (which give gangs their
 * roots) and the DRA objects for up to OWNER_SYNC_WAIT_MS more.  One the
 * API server does not serve (its CRD not installed) counts as listed, and
 * empty, at its first 404 (informer_unserved); the wait is for lists that
 * fail otherwise (forbidden, or the server erring).
 */
static int
reconcile_synced(struct reconcile *r)
{
	if (!r->synced[MSG_POD] || !r->synced[MSG_EXTPOD] ||
	    !r->synced[MSG_NODE] || !r->synced[MSG_NAMESPACE] ||
	    !r->synced[MSG_JOB])
		return (0);
	if (r->core_synced_at == 0)
		r->core_synced_at = now_ms();
	return ((r->synced[MSG_PODGROUP] && r->synced[MSG_JOBSET] &&
		    r->synced[MSG_LWS] && r->synced[MSG_CLAIM] &&
		    r->synced[MSG_CLAIM_TEMPLATE] && r->synced[MSG_SLICE] &&
		    r->synced[MSG_DEVICECLASS] && r->synced[MSG_TAINTRULE] &&
		    ((r->synced[MSG_SCHED_PODGROUP] &&
			 r->synced[MSG_SCHED_WORKLOAD]) ||
			r->conf->podgroup_api[0] == '\0') &&
		    (r->synced[MSG_SCHED_COMPOSITE] ||
			r->conf->composite_api[0] == '\0')) ||
	    now_ms() >= r->core_synced_at + OWNER_SYNC_WAIT_MS);
}

/* Polls Slurm soon (poll_ms, or later under POLL_DUTY). */
static void
reconcile_poll_soon(struct reconcile *r)
{
	int64_t at = now_ms() + r->conf->poll_ms;

	if (at < poll_floor(r))
		at = poll_floor(r);
	if (r->next_poll > at)
		r->next_poll = at;
}

static struct map *
reconcile_map(struct reconcile *r, enum msg_kind kind)
{
	switch (kind) {
	case MSG_NODE:
		return (r->nodes);
	case MSG_NAMESPACE:
		return (r->namespaces);
	case MSG_JOB:
		return (r->k8s_jobs);
	case MSG_PODGROUP:
		return (r->podgroups);
	case MSG_JOBSET:
		return (r->jobsets);
	case MSG_LWS:
		return (r->lwss);
	case MSG_SCHED_PODGROUP:
		return (r->sched_podgroups);
	case MSG_SCHED_WORKLOAD:
		return (r->sched_workloads);
	case MSG_SCHED_COMPOSITE:
		return (r->sched_composites);
	case MSG_CLAIM:
		return (r->claims);
	case MSG_CLAIM_TEMPLATE:
		return (r->claim_tmpls);
	case MSG_SLICE:
		return (r->slices);
	case MSG_DEVICECLASS:
		return (r->deviceclasses);
	case MSG_TAINTRULE:
		return (r->taint_rules);
	default:
		return (NULL);
	}
}

/* A worker's answer: an extender call, a write, a submit, an end, a poll. */
static void
reconcile_answer(struct reconcile *r, struct msg *msg)
{
	struct group *g;

	switch (msg->kind) {
	case MSG_EXTENDER:
		extender_answer(r, msg->call);
		break;
	case MSG_WRITE:
		if (!writes_done(r, msg->write) &&
		    bind_write_done(r, msg->write))
			pods_gone(r, msg->write->pkey);
		break;
	case MSG_SUBMITTED:
		if (group_submitted(r, msg->submit))
			reconcile_poll_soon(r);
		break;
	case MSG_ENDED:
		/* An orphan's cancel has no group (poll.c asked it). */
		if (msg->end->gkey == NULL) {
			poll_orphan_done(r, msg->end);
			break;
		}
		end_done(r, msg->end);
		/* A pod that joined the group meanwhile waited for this. */
		if ((g = map_get(r->groups, msg->end->gkey)) != NULL)
			group_evaluate(r, g);
		break;
	case MSG_PROBED:
		poll_probed(r, msg->probe_rc, msg->started);
		break;
	case MSG_POLLED:
		poll_loaded(r, msg->load);
		msg->load = NULL;
		if (r->next_poll < poll_floor(r))
			r->next_poll = poll_floor(r);
		break;
	default:
		break;
	}
}

/* A pod's watch event, timed as one decision. */
static void
reconcile_pod(struct reconcile *r, struct msg *msg)
{
	double t0 = metrics_now(), c0 = metrics_thread_cpu();

	if (msg->type == K8S_WATCH_DELETED)
		pods_deleted(r, msg->pod);
	else
		pods_update(r, msg->pod);
	metrics_hist_observe(&bstats.decision, metrics_now() - t0);
	metrics_hist_observe(&bstats.decision_cpu, metrics_thread_cpu() - c0);
	msg->pod = NULL;
}

/*
 * Any other object's watch event: the cache of its kind takes it (a node
 * also its index and what the placement rule answered), and the groups of
 * its namespace are evaluated again soon.
 */
static void
reconcile_object(struct reconcile *r, struct msg *msg)
{
	struct map *m = reconcile_map(r, msg->kind);
	char	    key[512], ns[512];

	k8s_obj_key(msg->obj, key, sizeof(key));
	snprintf(ns, sizeof(ns), "%s",
	    msg->kind == MSG_NAMESPACE ? key :
		k8s_obj_namespace(msg->obj) != NULL ?
					 k8s_obj_namespace(msg->obj) :
					 "");
	if (msg->kind == MSG_NODE && msg->type != K8S_WATCH_DELETED &&
	    r->recovered)
		nodes_changed(r, map_get(m, key), msg->obj);
	/*
	 * The placement rule reads the records, and which devices a node's
	 * slices publish, untainted: a change redoes its answers.
	 */
	if ((msg->kind == MSG_NODE || msg->kind == MSG_SLICE ||
		msg->kind == MSG_TAINTRULE) &&
	    (msg->type == K8S_WATCH_DELETED ||
		!json_equal(map_get(m, key), msg->obj)))
		exclude_nodes_changed(r);
	if (msg->kind == MSG_NODE)
		nodes_index(r, key, map_get(m, key),
		    msg->type == K8S_WATCH_DELETED ? NULL : msg->obj);
	if (msg->type == K8S_WATCH_DELETED) {
		map_del(m, key);
		if (msg->kind == MSG_NODE)
			json_object_del(r->notready, key);
		if (msg->kind == MSG_CLAIM)
			json_object_del(r->claim_holders, key);
	} else {
		map_put(m, key, msg->obj);
		/* The lookup the regrouping makes reads it from the cache. */
		pods_regroup_owner(r, msg->kind, msg->obj);
		msg->obj = NULL;
	}
	/*
	 * Nodes change every heartbeat: their changes wait for the periodic
	 * sweep.  A namespace or an owner object (Job, PodGroup, ...) can
	 * change only the groups of its namespace; they come in bursts, so
	 * the namespaces are gathered and their groups re-evaluated once soon.
	 */
	if (msg->kind != MSG_NODE && r->recovered) {
		map_put(r->dirty_ns, ns, NULL);
		if (!r->sweep_due) {
			r->sweep_due = 1;
			r->next_change = now_ms() + SWEEP_COALESCE_MS;
		}
	}
}

/* One message of the queue, by its kind; frees it. */
void
reconcile_msg(struct reconcile *r, struct msg *msg)
{
	switch (msg->kind) {
	case MSG_EXTENDER:
	case MSG_WRITE:
	case MSG_SUBMITTED:
	case MSG_ENDED:
	case MSG_PROBED:
	case MSG_POLLED:
		reconcile_answer(r, msg);
		break;
	default:
		if (msg->type == K8S_WATCH_SYNCED) {
			r->synced[msg->kind] = 1;
			/* Everything listed: recover now, not at the next tick. */
			if (!r->recovered && reconcile_synced(r))
				r->next_poll = 0;
			else if (!r->recovered && r->core_synced_at != 0)
				r->next_poll = r->core_synced_at +
				    OWNER_SYNC_WAIT_MS;
		} else if (msg->kind == MSG_POD || msg->kind == MSG_EXTPOD)
			reconcile_pod(r, msg);
		else
			reconcile_object(r, msg);
		break;
	}
	queue_msg_free(msg);
}

/*
 * Does a job wait on Slurm?  Then Slurm is polled every poll_ms, else every
 * idle_poll_ms.  An allocated group waits on the API server, not on Slurm:
 * polling for it would only add RPCs.
 */
static int
reconcile_busy(struct reconcile *r)
{
	return (r->nstate[G_PENDING] > 0);
}

/*
 * Gives freed memory back to the system now and then: after a backlog
 * drains, the heap would otherwise stay at its high-water mark.
 */
static void
reconcile_trim(struct reconcile *r, int64_t now)
{
	if (now < r->next_trim)
		return;
	stats_trim();
	r->next_trim = now + TRIM_INTERVAL_MS;
}

void
reconcile_workers_stop(struct reconcile *r)
{
	/* The submit thread frees the requests it has not started. */
	groups_withdraw_all(r);
	submitter_free(r->submitter);
	r->submitter = NULL;
	poller_free(r->poller);
	r->poller = NULL;
	ender_free(r->ender);
	r->ender = NULL;
	writepool_free(r->writepool);
	r->writepool = NULL;
	eventer_free(r->eventer);
	r->eventer = NULL;
	k8s_client_free(r->client);
	r->client = NULL;
	k8s_limiter_free(r->limiter);
	r->limiter = NULL;
}

/* Bytes of a string the caches own (0 for NULL). */
static size_t
str_bytes(const char *s)
{
	return (s != NULL ? malloc_usable_size((void *)(uintptr_t)s) : 0);
}

/*
 * Pending pods and gangs, and the sizes of the stores, for /metrics: a
 * walk of the caches, every GAUGES_INTERVAL_MS.
 */
static void
reconcile_gauges(struct reconcile *r)
{
	size_t	  it = 0;
	void	 *v;
	long long pods = 0, gangs = 0, pbytes, gbytes, jbytes;

	pbytes = (long long)map_bytes(r->pods) +
	    (long long)map_bytes(r->deleting);
	while (map_next(r->pods, &it, NULL, &v)) {
		struct pod_entry *e = v;
		if (e->state == PS_UNBOUND && e->rec->delete_at == 0)
			pods++;
		pbytes += (long long)(malloc_usable_size(e) +
		    str_bytes(e->cond_text));
	}
	it = 0;
	gbytes = (long long)map_bytes(r->groups) +
	    (long long)map_bytes(r->ns_groups) +
	    (long long)map_bytes(r->dirty_ns);
	while (map_next(r->ns_groups, &it, NULL, &v))
		gbytes += (long long)map_bytes(v);
	it = 0;
	while (map_next(r->groups, &it, NULL, &v)) {
		struct group *g = v;
		if (g->gang &&
		    (g->state == G_WAITING || g->state == G_SUBMITTING ||
			g->state == G_PENDING))
			gangs++;
		gbytes += (long long)(malloc_usable_size(g) +
		    strv_bytes(&g->members) + groupjob_bytes(g) +
		    str_bytes(g->job->end_msg));
	}
	it = 0;
	jbytes = (long long)map_bytes(r->jobs);
	atomic_store(&bstats.pending_pods, pods);
	atomic_store(&bstats.pending_gangs, gangs);
	atomic_store(&bstats.mem_pods, (long long)map_count(r->pods));
	atomic_store(&bstats.mem_pods_bytes, pbytes);
	atomic_store(&bstats.mem_groups, (long long)map_count(r->groups));
	atomic_store(&bstats.mem_groups_bytes, gbytes);
	atomic_store(&bstats.mem_jobs, (long long)map_count(r->jobs));
	atomic_store(&bstats.mem_jobs_bytes, jbytes);
	atomic_store(&bstats.mem_objects,
	    (long long)(map_count(r->nodes) + map_count(r->namespaces) +
		map_count(r->k8s_jobs) + map_count(r->podgroups) +
		map_count(r->sched_podgroups) + map_count(r->sched_workloads) +
		map_count(r->sched_composites) + map_count(r->jobsets) +
		map_count(r->lwss) + map_count(r->claims) +
		map_count(r->claim_tmpls) + map_count(r->slices) +
		map_count(r->deviceclasses) + map_count(r->taint_rules)));
}

static void *
reconcile_main(void *arg)
{
	struct reconcile *r = arg;
	struct msg	 *msg;
	struct k8s_error  err;
	int64_t		  now, wait, wake;
	int		  polled;
	char		  host[256], ebuf[256];

	log_setname("reconcile");
	if ((r->client = k8s_client_new(r->kconf, &err)) == NULL) {
		fail_thread("reconcile", "client: %s", err.text);
		return (NULL);
	}
	r->limiter = k8s_limiter_new(r->conf->api_qps, r->conf->api_burst);
	k8s_client_set_limiter(r->client, r->limiter);
	if ((r->writepool = writepool_new(r->kconf, r->limiter,
		 WRITEPOOL_THREADS, r->queue, ebuf, sizeof(ebuf))) == NULL) {
		fail_thread("reconcile", "%s", ebuf);
		goto out;
	}
	if ((r->submitter = submitter_new(r->queue, SUBMIT_THREADS)) == NULL) {
		fail_thread("reconcile", "submit thread: cannot start");
		goto out;
	}
	if ((r->poller = poller_new(r->queue, 1)) == NULL) {
		fail_thread("reconcile", "poll thread: cannot start");
		goto out;
	}
	if ((r->ender = ender_new(r->queue, end_make, sctl_cancel_batch(),
		 1)) == NULL) {
		fail_thread("reconcile", "end thread: cannot start");
		goto out;
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "slurm-bridge");
	host[sizeof(host) - 1] = '\0';
	r->eventer = eventer_new(r->kconf, r->limiter, r->conf->scheduler_name,
	    host);
	while (!atomic_load(&r->stop)) {
		now = now_ms();
		/* What the last message asked for goes to the writepool now. */
		bind_flush_writes(r);
		wake = r->next_poll;
		if (r->sweep_due && r->next_change < wake)
			wake = r->next_change;
		if (r->recovered && r->next_sweep < wake)
			wake = r->next_sweep;
		if (poll_probe_next(r) < wake)
			wake = poll_probe_next(r);
		wait = wake > now ? wake - now : 0;
		/* A busy queue must not starve the Slurm poll. */
		if (wait > 0 &&
		    (msg = queue_pop(r->queue, (int)wait)) != NULL) {
			reconcile_msg(r, msg);
			continue;
		}
		if (atomic_load(&r->stop))
			break;
		now = now_ms();
		polled = 0;
		if (!r->recovered) {
			if (now >= r->next_poll && reconcile_synced(r))
				poll_recover(r);
			polled = now >= r->next_poll;
		} else {
			if (now >= r->next_poll) {
				poll_ask(r);
				polled = 1;
			} else if (now >= poll_probe_next(r)) {
				poll_probe(r);
			}
			if (r->sweep_due && now >= r->next_change)
				sweep_changed(r);
			if (now >= r->next_sweep) {
				sweep_groups(r, 0);
				nodes_sweep(r);
				reconcile_trim(r, now);
				r->next_sweep = now + r->conf->idle_poll_ms;
			}
			/* A walk of every pod and group: not every second. */
			if (now >= r->next_gauges) {
				reconcile_gauges(r);
				r->next_gauges = now + GAUGES_INTERVAL_MS;
			}
		}
		if (polled) {
			r->next_poll = now_ms() +
			    (reconcile_busy(r) ? r->conf->poll_ms :
						 r->conf->idle_poll_ms);
			if (r->next_poll < poll_floor(r))
				r->next_poll = poll_floor(r);
		}
	}
out:
	reconcile_workers_stop(r);
	return (NULL);
}

struct reconcile *
reconcile_new(const struct bridge_conf *conf, const struct k8s_config *kconf,
    struct queue *q)
{
	struct reconcile *r;

	r = xcalloc(1, sizeof(*r));
	r->conf = conf;
	r->kconf = kconf;
	r->queue = q;
	r->pods = map_new_borrowed(podentry_free);
	r->groups = map_new_borrowed(groups_entry_free);
	r->ns_groups = map_new(inner_map_free);
	r->dirty_ns = map_new(NULL);
	r->deleting = map_new(NULL);
	r->jobs = map_new_borrowed(NULL);
	r->nodes = map_new(json_free_cb);
	r->node_index = map_new(free);
	r->node_label_count = json_object();
	r->namespaces = map_new(json_free_cb);
	r->k8s_jobs = map_new(json_free_cb);
	r->podgroups = map_new(json_free_cb);
	r->sched_podgroups = map_new(json_free_cb);
	r->sched_workloads = map_new(json_free_cb);
	r->sched_composites = map_new(json_free_cb);
	r->notready = json_object();
	r->fit_cache = json_object();
	r->fenced_nodes = json_object();
	r->jobsets = map_new(json_free_cb);
	r->lwss = map_new(json_free_cb);
	r->claims = map_new(json_free_cb);
	r->claim_tmpls = map_new(json_free_cb);
	r->slices = map_new(json_free_cb);
	r->taint_rules = map_new(json_free_cb);
	r->deviceclasses = map_new(json_free_cb);
	r->claim_allocators = json_object();
	r->claim_holders = json_object();
	r->joins_inflight = json_object();
	r->writes = json_object();
	r->releases = json_object();
	r->orphans = json_array();
	r->orphans_asked = json_object();
	r->deferred = json_object();
	r->forgotten = json_object();
	r->tconf.partition = conf->partition;
	r->tconf.exclusive = conf->exclusive;
	r->tconf.default_account = conf->default_account;
	r->tconf.mcs_label = conf->mcs_label;
	r->tconf.bounds = conf->bounds;
	r->tconf.install = conf->install;
	r->tconf.dra = conf->dra;
	r->tconf.taint_effect = conf->taint_effect;
	r->tconf.topology = conf->topology;
	atomic_init(&r->stop, 0);
	return (r);
}

void
reconcile_free(struct reconcile *r)
{
	if (r == NULL)
		return;
	map_free(r->pods);
	map_free(r->deleting);
	map_free(r->ns_groups);
	map_free(r->dirty_ns);
	map_free(r->groups);
	map_free(r->jobs);
	map_free(r->nodes);
	map_free(r->node_index);
	json_decref(r->node_label_count);
	map_free(r->namespaces);
	map_free(r->k8s_jobs);
	map_free(r->podgroups);
	map_free(r->sched_podgroups);
	map_free(r->sched_workloads);
	map_free(r->sched_composites);
	json_decref(r->notready);
	json_decref(r->fit_cache);
	json_decref(r->fenced_nodes);
	map_free(r->jobsets);
	map_free(r->lwss);
	map_free(r->claims);
	map_free(r->claim_tmpls);
	map_free(r->slices);
	map_free(r->taint_rules);
	map_free(r->deviceclasses);
	json_decref(r->claim_allocators);
	json_decref(r->claim_holders);
	json_decref(r->joins_inflight);
	json_decref(r->slurm_nodes);
	json_decref(r->writes);
	json_decref(r->releases);
	json_decref(r->orphans);
	json_decref(r->orphans_asked);
	json_decref(r->deferred);
	json_decref(r->forgotten);
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
