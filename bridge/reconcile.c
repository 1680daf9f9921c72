/*
 * The reconcile thread: the single owner of the caches (pods, groups, nodes,
 * namespaces, Jobs, PodGroups, JobSets, LeaderWorkerSets) and the only
 * caller of slurm.c.  It pops informer events from the queue, files pods
 * into groups (group.c runs each group's state machine; writer.c does the
 * writes), keeps nodes in step (cordon -> drain, NotReady -> fail), and
 * polls Slurm incrementally (slurm_load_jobs with update_time) to follow
 * job state.  On start it adopts this install's jobs (each pairs with the
 * pods its admin_comment names by name and UID; a job id on a pod is only
 * where to look) before anything is submitted, so a restart neither
 * duplicates nor orphans a job, and never takes another install's.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
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
 * always; PodGroups, JobSets and LeaderWorkerSets (which give gangs their
 * roots) for up to OWNER_SYNC_WAIT_MS more, since a cluster without their
 * CRDs never lists them.
 */
static int
reconcile_synced(struct reconcile *r)
{
	if (!r->synced[EV_POD] || !r->synced[EV_EXTPOD] ||
	    !r->synced[EV_NODE] || !r->synced[EV_NAMESPACE] ||
	    !r->synced[EV_JOB])
		return (0);
	if (r->core_synced_at == 0)
		r->core_synced_at = reconcile_now_ms();
	return ((r->synced[EV_PODGROUP] && r->synced[EV_JOBSET] &&
		    r->synced[EV_LWS] && r->synced[EV_CLAIM] &&
		    r->synced[EV_CLAIM_TEMPLATE] && r->synced[EV_SLICE] &&
		    r->synced[EV_DEVICECLASS] &&
		    ((r->synced[EV_SCHED_PODGROUP] &&
			 r->synced[EV_SCHED_WORKLOAD]) ||
			r->conf->podgroup_api[0] == '\0')) ||
	    reconcile_now_ms() >= r->core_synced_at + OWNER_SYNC_WAIT_MS);
}

/* The earliest time the next poll may run (POLL_DUTY). */
static int64_t
reconcile_poll_floor(struct reconcile *r)
{
	return (r->last_poll + POLL_DUTY * r->poll_cost_ms);
}

/* Polls Slurm soon (poll_ms, or later under POLL_DUTY). */
static void
reconcile_poll_soon(struct reconcile *r)
{
	int64_t at = reconcile_now_ms() + r->conf->poll_ms;

	if (at < reconcile_poll_floor(r))
		at = reconcile_poll_floor(r);
	if (r->next_poll > at)
		r->next_poll = at;
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
	case EV_SCHED_PODGROUP:
		return (r->sched_podgroups);
	case EV_SCHED_WORKLOAD:
		return (r->sched_workloads);
	case EV_CLAIM:
		return (r->claims);
	case EV_CLAIM_TEMPLATE:
		return (r->claim_tmpls);
	case EV_SLICE:
		return (r->slices);
	case EV_DEVICECLASS:
		return (r->deviceclasses);
	default:
		return (NULL);
	}
}

void
reconcile_event(struct reconcile *r, struct event *ev)
{
	struct map *m;
	char	    key[512], ns[512];
	double	    t0, c0;

	if (ev->kind == EV_EXTENDER) {
		extender_answer(r, ev->call);
		event_free(ev);
		return;
	}
	if (ev->kind == EV_WRITE) {
		if (!writer_done(r, ev->write) && bind_write_done(r, ev->write))
			pods_gone(r, ev->write->pkey);
		event_free(ev);
		return;
	}
	if (ev->kind == EV_SUBMITTED) {
		if (group_submitted(r, ev->submit))
			reconcile_poll_soon(r);
		event_free(ev);
		return;
	}
	if (ev->type == K8S_EVENT_SYNCED) {
		r->synced[ev->kind] = 1;
		/* Everything listed: recover now, not at the next tick. */
		if (!r->recovered && reconcile_synced(r))
			r->next_poll = 0;
		else if (!r->recovered && r->core_synced_at != 0)
			r->next_poll = r->core_synced_at + OWNER_SYNC_WAIT_MS;
		event_free(ev);
		return;
	}
	if (ev->kind == EV_POD || ev->kind == EV_EXTPOD) {
		t0 = metrics_now();
		c0 = metrics_thread_cpu();
		if (ev->type == K8S_EVENT_DELETED)
			pods_deleted(r, ev->pod);
		else
			pods_update(r, ev->pod);
		metrics_hist_observe(&bstats.decision, metrics_now() - t0);
		metrics_hist_observe(&bstats.decision_cpu,
		    metrics_thread_cpu() - c0);
		ev->pod = NULL;
		event_free(ev);
		return;
	}
	m = reconcile_map(r, ev->kind);
	k8s_obj_key(ev->obj, key, sizeof(key));
	snprintf(ns, sizeof(ns), "%s",
	    ev->kind == EV_NAMESPACE ? key :
		k8s_obj_namespace(ev->obj) != NULL ?
				       k8s_obj_namespace(ev->obj) :
				       "");
	if (ev->kind == EV_NODE && ev->type != K8S_EVENT_DELETED &&
	    r->recovered)
		nodes_changed(r, map_get(m, key), ev->obj);
	if (ev->type == K8S_EVENT_DELETED) {
		map_del(m, key);
		if (ev->kind == EV_NODE)
			json_object_del(r->notready, key);
	} else {
		map_put(m, key, ev->obj);
		/* The lookup the regrouping makes reads it from the cache. */
		pods_regroup_owner(r, ev->kind, ev->obj);
		ev->obj = NULL;
	}
	/*
	 * Nodes change every heartbeat: their changes wait for the periodic
	 * sweep.  A namespace or an owner object (Job, PodGroup, ...) can
	 * change only the groups of its namespace; they come in bursts, so
	 * the namespaces are gathered and their groups re-evaluated once soon.
	 */
	if (ev->kind != EV_NODE && r->recovered) {
		map_put(r->dirty_ns, ns, NULL);
		if (!r->sweep_due) {
			r->sweep_due = 1;
			r->next_change = reconcile_now_ms() + SWEEP_COALESCE_MS;
		}
	}
	event_free(ev);
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
	malloc_trim(0);
	r->next_trim = now + TRIM_INTERVAL_MS;
}

void
reconcile_workers_stop(struct reconcile *r)
{
	/* The submit thread frees the requests it has not started. */
	groups_withdraw_all(r);
	submitter_free(r->submitter);
	r->submitter = NULL;
	writepool_free(r->writers);
	r->writers = NULL;
	eventer_free(r->eventer);
	r->eventer = NULL;
	k8s_client_free(r->client);
	r->client = NULL;
	k8s_limiter_free(r->limiter);
	r->limiter = NULL;
}

static void *
reconcile_main(void *arg)
{
	struct reconcile *r = arg;
	struct event	 *ev;
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
	if ((r->writers = writepool_new(r->kconf, r->limiter, WRITERS, r->queue,
		 ebuf, sizeof(ebuf))) == NULL) {
		fail_thread("reconcile", "%s", ebuf);
		goto out;
	}
	if ((r->submitter = submitter_new(r->queue)) == NULL) {
		fail_thread("reconcile", "submit thread: cannot start");
		goto out;
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "slurm-bridge");
	host[sizeof(host) - 1] = '\0';
	r->eventer = eventer_new(r->kconf, r->limiter, r->conf->scheduler_name,
	    host);
	while (!atomic_load(&r->stop)) {
		now = reconcile_now_ms();
		/* What the last event asked for goes to the writers now. */
		bind_flush_writes(r);
		wake = r->next_poll;
		if (r->sweep_due && r->next_change < wake)
			wake = r->next_change;
		if (r->recovered && r->next_sweep < wake)
			wake = r->next_sweep;
		wait = wake > now ? wake - now : 0;
		/* A busy queue must not starve the Slurm poll. */
		if (wait > 0 && (ev = queue_pop(r->queue, (int)wait)) != NULL) {
			reconcile_event(r, ev);
			continue;
		}
		if (atomic_load(&r->stop))
			break;
		now = reconcile_now_ms();
		polled = 0;
		if (!r->recovered) {
			if (now >= r->next_poll && reconcile_synced(r))
				poll_recover(r);
			polled = now >= r->next_poll;
		} else {
			if (now >= r->next_poll) {
				poll_slurm(r);
				polled = 1;
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
				stats_gauges(r);
				r->next_gauges = now + GAUGES_INTERVAL_MS;
			}
		}
		if (polled) {
			r->next_poll = reconcile_now_ms() +
			    (reconcile_busy(r) ? r->conf->poll_ms :
						 r->conf->idle_poll_ms);
			if (r->next_poll < reconcile_poll_floor(r))
				r->next_poll = reconcile_poll_floor(r);
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
	r->jobs = map_new(free);
	r->nodes = map_new(json_free_cb);
	r->namespaces = map_new(json_free_cb);
	r->k8s_jobs = map_new(json_free_cb);
	r->podgroups = map_new(json_free_cb);
	r->sched_podgroups = map_new(json_free_cb);
	r->sched_workloads = map_new(json_free_cb);
	r->notready = json_object();
	r->fenced_nodes = json_object();
	r->jobsets = map_new(json_free_cb);
	r->lwss = map_new(json_free_cb);
	r->claims = map_new(json_free_cb);
	r->claim_tmpls = map_new(json_free_cb);
	r->slices = map_new(json_free_cb);
	r->deviceclasses = map_new(json_free_cb);
	r->claim_allocators = json_object();
	r->joins_inflight = json_object();
	r->writes = json_object();
	r->releases = json_object();
	r->orphans = json_array();
	r->deferred = json_object();
	r->tconf.partition = conf->partition;
	r->tconf.exclusive = conf->exclusive;
	r->tconf.default_account = conf->default_account;
	r->tconf.mcs_label = conf->mcs_label;
	r->tconf.bounds = conf->bounds;
	r->tconf.install = conf->install;
	r->tconf.dra = conf->dra;
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
	map_free(r->namespaces);
	map_free(r->k8s_jobs);
	map_free(r->podgroups);
	map_free(r->sched_podgroups);
	map_free(r->sched_workloads);
	json_decref(r->notready);
	json_decref(r->fenced_nodes);
	map_free(r->jobsets);
	map_free(r->lwss);
	map_free(r->claims);
	map_free(r->claim_tmpls);
	map_free(r->slices);
	map_free(r->deviceclasses);
	json_decref(r->claim_allocators);
	json_decref(r->joins_inflight);
	json_decref(r->slurm_nodes);
	json_decref(r->writes);
	json_decref(r->releases);
	json_decref(r->orphans);
	json_decref(r->deferred);
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
