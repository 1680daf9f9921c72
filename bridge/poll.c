/*
 * What Slurm's job list tells the reconcile thread: each poll's changed
 * jobs (started, pending reason, ended, or taken back: preempted,
 * suspended, requeued, which end_yield makes the pods yield to), the
 * recovery that adopts jobs a restarted bridge finds, jobs Slurm no
 * longer knows, and orphans to cancel.  Only this install's jobs count: another install's, or a native
 * job that looks like a bridge job, is ignored (translate_admin_owner).
 * Every call here is the reconcile thread's.
 *
 * Threads: reconcile.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

/* Does the job's admin_comment name pod key as it is now (its UID)? */
static int
poll_names(struct reconcile *r, const struct sjob *j, const char *key)
{
	struct pod_entry *e = map_get(r->pods, key);

	return (e != NULL && e->rec != NULL &&
	    translate_admin_names(j->admin_comment, key, podrec_uid(e->rec)));
}

/*
 * A job made before installs were named, adopted at start: it becomes
 * this install's, once, with its pods' UIDs, so that no other install
 * takes it later.  Kept as it was if Slurm refuses (adopted all the
 * same: its pods are this install's).
 */
static void
poll_claim(struct reconcile *r, const struct sjob *j, const json_t *pods)
{
	struct pod_entry *e;
	json_t		 *uids = json_array(), *v;
	char		 *ac, err[256];
	size_t		  i;

	json_array_foreach (pods, i, v) {
		e = map_get(r->pods, json_string_value(v));
		json_array_append_new(uids,
		    json_string(
			e != NULL && e->rec != NULL ? podrec_uid(e->rec) : ""));
	}
	if ((ac = translate_admin_claim(j->admin_comment, r->conf->install,
		 uids)) == NULL)
		return;
	if (leader_fenced(r->conf->leader_elect, "claiming a job"))
		; /* claimed at the next start */
	else if (sctl_set_admin_comment(j->id, ac, err, sizeof(err)) == -1)
		log_warnx("slurm job %u: %s", j->id, err);
	else
		log_info("slurm job %u: made before installs were named; now "
			 "install %s's",
		    j->id, r->conf->install);
	free(ac);
}

/*
 * Finds the group an unknown job of this install (or a legacy one, made
 * before installs were named) was submitted for: a member the job's
 * admin_comment names, by name and UID, in a group still waiting or
 * linked at start only by a member's job id (which may be wrong: the
 * admin_comment is the proof).  A job that ended while the bridge was
 * down is adopted only by the group whose members named it.
 */
static struct group *
poll_adopt(struct reconcile *r, const struct sjob *j, enum admin_owner owner)
{
	json_t		 *pods, *v;
	struct pod_entry *e;
	struct group	 *g = NULL;
	size_t		  i;

	if ((pods = translate_admin_pods(j->admin_comment)) == NULL)
		return (NULL);
	json_array_foreach (pods, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e != NULL && e->group != NULL &&
		    (g = map_get(r->groups, e->group)) != NULL &&
		    (g->hinted ? g->jobid == j->id || j->phase != SJOB_ENDED :
				 g->jobid == 0 && g->state == G_WAITING &&
				j->phase != SJOB_ENDED) &&
		    poll_names(r, j, e->rec->key))
			break;
		g = NULL;
	}
	if (g != NULL) {
		g->jobid = j->id;
		g->hinted = 0;
		if (g->state == G_WAITING)
			groups_set_state(r, g, G_PENDING);
		groups_job_pods(g, pods, j->admin_comment);
		groups_index_put(r, g);
		log_info("group %s: adopted slurm job %u", g->key, j->id);
		if (owner == ADMIN_LEGACY)
			poll_claim(r, j, pods);
	}
	json_decref(pods);
	return (g);
}

/*
 * At a restart, a job of this install no live pod of its own wants that
 * holds a shared claim's devices for pods of other jobs: adopted into a
 * group of its first pod's name, which lives while they do; or NULL.
 */
static struct group *
poll_adopt_holder(struct reconcile *r, uint32_t jobid,
    const char *admin_comment)
{
	struct group_id gid;
	struct group   *g = NULL;
	json_t	       *pods;
	const char     *first, *slash;
	char		ns[256];

	if (claims_joiners(r, jobid, NULL, NULL, NULL) == 0 ||
	    (pods = translate_admin_pods(admin_comment)) == NULL)
		return (NULL);
	first = json_string_value(json_array_get(pods, 0));
	if (first == NULL || (slash = strchr(first, '/')) == NULL)
		goto out;
	memset(&gid, 0, sizeof(gid));
	snprintf(gid.key, sizeof(gid.key), "pod:%s", first);
	snprintf(gid.name, sizeof(gid.name), "%s", slash + 1);
	gid.min_member = 1;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - first), first);
	g = groups_get(r, &gid, ns);
	if (g->jobid != 0 && g->jobid != jobid) {
		g = NULL; /* its name serves another job now */
		goto out;
	}
	g->jobid = jobid;
	g->hinted = 0;
	groups_set_state(r, g, G_BOUND);
	groups_job_pods(g, pods, admin_comment);
	groups_index_put(r, g);
	g->claims_held = 1;
	log_info("group %s: adopted slurm job %u: its pods ended, and it holds "
		 "the devices of shared ResourceClaims for pods of other jobs",
	    g->key, jobid);
out:
	json_decref(pods);
	return (g);
}

/*
 * A pending job's message: Slurm's reason and, once its backfill has
 * planned one, the expected start (to the minute, so a plan that moves by
 * seconds writes nothing).  Every poll's load carries it: no RPC more.
 * Reasons that say the partition as configured can never hold the job
 * say so, naming what sized the gang.  1 for those (a warning), else 0.
 */
static int
poll_pending_msg(const struct group *g, const struct sjob *j, char *msg,
    size_t len)
{
	static const char *const never[] = { "PartitionConfig",
		"PartitionNodeLimit", "BadConstraints", NULL };
	struct tm		 tm;
	char			 when[64] = "";
	size_t			 i;

	for (i = 0; never[i] != NULL; i++)
		if (strcmp(j->reason, never[i]) == 0)
			break;
	if (never[i] != NULL) {
		snprintf(msg, len,
		    "Slurm job %u can never start in its partition as it is "
		    "configured (Reason=%s): %s",
		    j->id, j->reason,
		    g->sized_by == WORKLOAD_SCHED_PODGROUP ?
			"lower the PodGroup's spec.schedulingPolicy.gang."
			"minCount or its pods' requests, or grow the "
			"partition" :
			"lower the pods' requests (or the gang's size), or "
			"grow the partition");
		return (1);
	}
	if (j->start_time > time(NULL) && gmtime_r(&j->start_time, &tm) != NULL)
		strftime(when, sizeof(when), "; expected start %Y-%m-%dT%H:%MZ",
		    &tm);
	snprintf(msg, len, "waiting for Slurm job %u (Reason=%s%s)", j->id,
	    j->reason, when);
	return (0);
}

/* A group whose job Slurm holds for it: submitted, not yet ended. */
static int
poll_holds(const struct group *g)
{
	return (g->state >= G_PENDING && g->state <= G_BOUND);
}

/* How many groups poll_holds is true of. */
static long
poll_live(const struct reconcile *r)
{
	return (
	    r->nstate[G_PENDING] + r->nstate[G_ALLOCATED] + r->nstate[G_BOUND]);
}

/*
 * The group a job of the load belongs to, or NULL when there is nothing
 * more to do with it.  A job this install made (by its submit answer, or
 * adopted) is known; any other is judged by its admin_comment: another
 * install's, or a native Slurm user's, is none of this install's
 * business.  Adoption is for a restart: later, every job is ours by
 * answer.  A job no live pod wants is an orphan, cancelled with the
 * others after the poll.
 */
static struct group *
poll_group(struct reconcile *r, const struct sjob *j)
{
	struct group	*g;
	enum admin_owner owner;
	json_t		*v;
	char		 key[32];

	snprintf(key, sizeof(key), "%u", j->id);
	if ((g = groups_by_job(r, j->id)) == NULL) {
		/* A load asked for before this thread let the job go. */
		v = json_object_get(r->forgotten, key);
		if (v != NULL && json_integer_value(v) >= r->poll_asked)
			return (NULL);
		/*
		 * After recovery, an ended job no group knows is nothing to
		 * do, whoever's it is: slurmctld keeps ended jobs MinJobAge
		 * (300 s by default), so under churn a poll brings thousands,
		 * and their admin_comments are not parsed each time.
		 */
		if (r->recovered && r->others == NULL && j->phase == SJOB_ENDED)
			return (NULL);
		owner = translate_admin_owner(j->admin_comment, j->comment,
		    r->conf->install);
		if (owner != ADMIN_OTHER && !r->recovered)
			g = poll_adopt(r, j, owner);
		/* Not this install's: a legacy job none of its pods claims. */
		if (g == NULL &&
		    (owner == ADMIN_OTHER || owner == ADMIN_LEGACY)) {
			if (r->others != NULL)
				json_object_set_new(r->others, key,
				    json_true());
			return (NULL);
		}
		if (g == NULL && j->phase == SJOB_ENDED)
			return (NULL);
	}
	/* Its pods ended, but pods of other jobs use its devices. */
	if (g == NULL && j->phase != SJOB_ENDED && !r->recovered)
		g = poll_adopt_holder(r, j->id, j->admin_comment);
	if (g == NULL && r->submits > 0) {
		/*
		 * Maybe a job whose submit answer is on its way (one made for
		 * a user may not even list its pods yet): not an orphan
		 * before all answers are in.  Its answer, or the last one,
		 * makes the next poll load everything again.
		 */
		json_object_set_new(r->deferred, key, json_true());
		return (NULL);
	}
	/* A preempted job ends by Slurm's hand, PREEMPTED. */
	if (g == NULL && j->phase != SJOB_ENDED && j->preempt_time == 0 &&
	    json_object_get(r->orphans_asked, key) == NULL) {
		log_info("slurm job %u: no pod wants it (%s): cancelling",
		    j->id, j->name != NULL ? j->name : "?");
		json_array_append_new(r->orphans, json_integer(j->id));
	}
	return (g);
}

/*
 * Slurm took the allocation back while the pods hold it (requeued,
 * suspended, preempted): the pods yield.  1 when there is nothing more
 * to do with the job.
 */
static int
poll_taken_back(struct reconcile *r, struct group *g, const struct sjob *j)
{
	if (g->state != G_ALLOCATED && g->state != G_BOUND)
		return (0);
	if (j->phase == SJOB_PENDING) {
		end_yield(r, g, YIELD_REQUEUED, 0);
		return (1);
	}
	if (j->suspended) {
		end_yield(r, g, YIELD_SUSPENDED, 0);
		return (1);
	}
	if (j->phase == SJOB_RUNNING && j->preempt_time != 0) {
		end_yield(r, g, YIELD_PREEMPTED, j->end_time);
		return (1);
	}
	if (j->phase == SJOB_ENDED && strcmp(j->state, "PREEMPTED") == 0)
		end_yield(r, g, YIELD_PREEMPTED, 0);
	return (0);
}

/*
 * A pending job its group gave up (end_member_gone) but did not cancel:
 * that failed, or a restart came first.  It goes now.  1 when its cancel
 * is on the end thread: news of the job is moot then, but a start holds
 * nodes, so its cancel goes to the front.
 */
static int
poll_given_up(struct reconcile *r, struct group *g, const struct sjob *j)
{
	if (g->state != G_PENDING || j->phase == SJOB_ENDED)
		return (0);
	if (!g->cancelled && g->job_pods_set &&
	    groups_live(r, g, NULL, 0, 0) < groups_job_list(g)->n)
		end_member_gone(r, g);
	if (!g->cancelled)
		return (0);
	if (g->ending && j->phase == SJOB_RUNNING)
		ender_promote(r->ender, j->id);
	return (1);
}

/*
 * A job waiting in Slurm.  Its owner (a tenant, where user-id makes it
 * one) may change it with scontrol update: out of the namespace's bounds,
 * it goes, and its pods are submitted again as they ask.  Else the pods
 * say what it waits for.
 */
static void
poll_pending(struct reconcile *r, struct group *g, const struct sjob *j)
{
	struct pod_entry *e;
	char		  msg[320], why[700];
	size_t		  i;
	int		  warn;

	if (!g->cancelled &&
	    bounds_check_job(r->conf->bounds, map_get(r->namespaces, g->ns),
		g->ns, j->partition, j->account, j->qos, msg,
		sizeof(msg)) == -1) {
		snprintf(why, sizeof(why),
		    "slurm-bridge: Slurm job %u was changed outside "
		    "the namespace's bounds: %s; it is cancelled and "
		    "the pods submitted again",
		    j->id, msg);
		log_warnx("group %s: %s", g->key, why + 14);
		groups_condition(r, g, why, 1);
		for (i = 0; i < g->members.n; i++)
			if ((e = map_get(r->pods, g->members.v[i])) != NULL)
				writes_event(r, e, "Warning",
				    "SlurmJobOutOfBounds", "Cancel", why);
		end_cancel(r, g, "changed outside its bounds");
		return;
	}
	if (g->pending_reason == NULL ||
	    strcmp(g->pending_reason, j->reason) != 0) {
		intern_put(g->pending_reason);
		g->pending_reason = intern_get(j->reason);
	}
	warn = poll_pending_msg(g, j, msg, sizeof(msg));
	if (g->state == G_PENDING)
		groups_condition(r, g, msg, warn);
}

/* A job Slurm started: a pending group's pods are bound to its nodes. */
static void
poll_running(struct reconcile *r, struct group *g, const struct sjob *j)
{
	json_t *layout;

	if (g->state != G_PENDING)
		return;
	if ((layout = sctl_job_layout(j)) == NULL) {
		/* Reload everything at the next poll. */
		log_warnx("group %s: slurm job %u runs, but its allocation "
			  "could not be read",
		    g->key, j->id);
		r->slurm_since = 0;
		return;
	}
	form_adopt_sizes(r, g);
	log_info("group %s: slurm job %u allocated", g->key, g->jobid);
	bind_allocated(r, g, layout);
	json_decref(layout);
}

/*
 * A job that ended.  The job is the pods' lease on the nodes: they end
 * too, unless we ended the job ourselves (its pods were gone already).
 */
static void
poll_ended(struct reconcile *r, struct group *g, const struct sjob *j)
{
	if (g->state != G_ENDED) {
		stats_job_ended(j->state);
		/* Its nodes wait in the epilog for these pods to stop. */
		if ((!g->cancelled || g->slurm_ends) &&
		    groups_live(r, g, NULL, 0, 0) >
			groups_live(r, g, NULL, 0, 1))
			atomic_fetch_add(&bstats.handoffs, 1);
	}
	log_info("group %s: slurm job %u ended: %s (reason %s)", g->key, j->id,
	    j->state, j->reason);
	if (!g->cancelled && g->job->end_msg == NULL) {
		xasprintf(&groupjob_get(g)->end_msg,
		    "Slurm job %u ended: %s "
		    "(Reason=%s); deleting the pod",
		    j->id, j->state, j->reason);
		end_members(r, g);
	}
	g->cancelled = 1;
	groups_set_state(r, g, G_ENDED);
	end_member_gone(r, g);
}

/*
 * One job of a load (sctl_load's callback): its group, then what its
 * state means for the group's pods.
 */
static void
poll_job_cb(const struct sjob *j, void *arg)
{
	struct reconcile *r = arg;
	struct group	 *g;

	if ((g = poll_group(r, j)) == NULL)
		return;
	g->present = r->load_mark;
	g->missed = 0;
	if (poll_holds(g))
		r->load_live++;
	if (!g->job_pods_set) {
		/* Adopted through the job id: the job lists its pods. */
		json_t *pods = translate_admin_pods(j->admin_comment);

		groups_job_pods(g, pods, j->admin_comment);
		json_decref(pods);
	}
	if (poll_taken_back(r, g, j) || poll_given_up(r, g, j))
		return;
	switch (j->phase) {
	case SJOB_PENDING:
		poll_pending(r, g, j);
		break;
	case SJOB_RUNNING:
		poll_running(r, g, j);
		break;
	case SJOB_ENDED:
		poll_ended(r, g, j);
		break;
	}
}

/*
 * Hands the orphans a poll found to the end thread, to be cancelled in
 * bulk (END_BATCH to an RPC where Slurm has one); one asked already is
 * not asked again while its answer is on its way.
 */
static void
poll_cancel_orphans(struct reconcile *r)
{
	struct ereq *e;
	json_t	    *v;
	size_t	     i;
	char	     id[16];

	json_array_foreach (r->orphans, i, v) {
		snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		if (json_object_get(r->orphans_asked, id) != NULL)
			continue;
		json_object_set_new(r->orphans_asked, id, json_true());
		e = ereq_new(NULL, (uint32_t)json_integer_value(v));
		e->bulk = 1;
		e->why = "no pod wants it";
		e->leader_elect = r->conf->leader_elect;
		ender_push(r->ender, e);
	}
	json_array_clear(r->orphans);
}

void
poll_orphan_done(struct reconcile *r, const struct ereq *e)
{
	char id[16];

	snprintf(id, sizeof(id), "%u", e->jobid);
	json_object_del(r->orphans_asked, id);
	if (e->rc == 0) {
		log_debug("slurm job %u: cancelled (%s)", e->jobid, e->why);
		return;
	}
	log_warnx("slurm: cancel orphan job %u: %s", e->jobid, e->err);
	/* A poll reports only changed jobs: reload all to retry. */
	r->slurm_since = 0;
}

/*
 * What the next load asks for: what changed since the last one, or, with
 * jobs pending, every PLAN_REFRESH_MS every job: the backfill's plans (a
 * pending job's expected start) change no job's update time, so a load of
 * changes never sees them.
 */
static time_t
poll_since(struct reconcile *r)
{
	int64_t now = now_ms();

	if (r->nstate[G_PENDING] > 0 && now >= r->last_full + PLAN_REFRESH_MS)
		r->slurm_since = 0;
	if (r->slurm_since == 0)
		r->last_full = now;
	r->poll_since = r->slurm_since;
	r->poll_asked = now;
	return (r->slurm_since);
}

/* The jobs let go of before the load just read was asked for: it saw that. */
static void
poll_forget(struct reconcile *r)
{
	const char *k;
	json_t	   *v;
	void	   *tmp;

	json_object_foreach_safe (r->forgotten, tmp, k, v)
		if (json_integer_value(v) < r->poll_asked)
			json_object_del(r->forgotten, k);
}

void
poll_ask(struct reconcile *r)
{
	if (r->polling)
		return;
	r->polling = 1;
	/* This load sees the starts a probe saw. */
	r->starts_seen = 0;
	poller_ask(r->poller, poll_since(r));
}

/*
 * slurmctld answers a load with every job it holds once anything changed:
 * with tens of thousands pending, a load costs hundreds of milliseconds,
 * of slurmctld's time under its job read lock and of this daemon's.  So
 * loads are spaced by POLL_DUTY times the last one's cost.  A job that
 * starts meanwhile would wait that long to be seen.  Between such spaced
 * loads, with jobs pending, the poll thread probes slurmctld every
 * poll_ms for how many jobs it started (sctl_jobs_started: sdiag's
 * counter, a millisecond, under none of its job locks), and a start
 * brings the next load forward to POLL_DUTY_CHANGED times the cost
 * (poll_probed): at once, so that a start waits for at most the load out
 * when it happened and one more.  The nodes would not tell: a node whose
 * jobs ended and whose CPUs went to the jobs that waited looks the same
 * before and after.
 */
int64_t
poll_floor(struct reconcile *r)
{
	return (r->last_poll +
	    (r->starts_seen ? POLL_DUTY_CHANGED : POLL_DUTY) * r->poll_cost_ms);
}

int64_t
poll_probe_next(struct reconcile *r)
{
	if (!r->recovered || r->nstate[G_PENDING] == 0 || r->polling ||
	    r->probing || r->starts_seen ||
	    POLL_DUTY * r->poll_cost_ms <= r->conf->poll_ms)
		return (INT64_MAX);
	return (r->next_probe);
}

void
poll_probe(struct reconcile *r)
{
	r->probing = 1;
	poller_probe(r->poller);
}

void
poll_probed(struct reconcile *r, int rc, uint32_t started)
{
	r->probing = 0;
	r->next_probe = now_ms() + r->conf->poll_ms;
	if (rc != 0)
		return; /* logged */
	if (r->started_set && started != r->jobs_started && !r->polling) {
		r->starts_seen = 1;
		if (r->next_poll > poll_floor(r)) {
			r->next_poll = poll_floor(r);
			atomic_fetch_add(&bstats.polls_hastened, 1);
		}
	}
	r->jobs_started = started;
	r->started_set = 1;
}

/*
 * A group whose member's job id (label or annotation) named a job that
 * is not this install's, or another group's: the id was wrong (forged,
 * or the pod's own was purged).  Another scheduler's pods are left as
 * they are; this scheduler's go back to waiting, or, bound without a job
 * of theirs, are deleted.  1 if so, 0 if the job is simply gone.
 */
static int
poll_misnamed(struct reconcile *r, struct group *g)
{
	char id[16];

	snprintf(id, sizeof(id), "%u", g->jobid);
	if (groups_by_job(r, g->jobid) == NULL &&
	    (r->others == NULL || json_object_get(r->others, id) == NULL) &&
	    !g->foreign)
		return (0);
	log_warnx("group %s: slurm job %u, named by a member's job-id label or "
		  "annotation, was not made for it; ignoring the label",
	    g->key, g->jobid);
	if (g->foreign ||
	    groups_live(r, g, NULL, 0, 0) == groups_live(r, g, NULL, 0, 1)) {
		end_reset(r, g);
		return (1);
	}
	free(g->job->end_msg);
	xasprintf(&groupjob_get(g)->end_msg,
	    "its job-id label or annotation names Slurm job %u, which was "
	    "not made for it; deleting the pod",
	    g->jobid);
	end_members(r, g);
	g->jobid = 0;
	g->hinted = 0;
	g->cancelled = 1;
	groups_set_state(r, g, G_ENDED);
	end_member_gone(r, g);
	return (1);
}

/*
 * Groups (keys) whose job Slurm no longer knows: it ended and was purged
 * (MinJobAge) before a load saw it end.  Bound members lost their
 * allocation and are deleted; a pending job's members, none bound, are
 * submitted again.
 */
static void
poll_gone_each(struct reconcile *r, json_t *keys)
{
	struct sjob j;
	json_t	   *k;
	size_t	    i;

	json_array_foreach (keys, i, k) {
		struct group *g = map_get(r->groups, json_string_value(k));
		if (g == NULL)
			continue;
		if (g->hinted && poll_misnamed(r, g))
			continue;
		log_info("group %s: slurm job %u is gone from Slurm", g->key,
		    g->jobid);
		if (g->hinted) {
			/* Its own pods' word, and no job says otherwise. */
			g->hinted = 0;
			groups_index_put(r, g);
		}
		if (g->state == G_PENDING &&
		    groups_live(r, g, NULL, 0, 0) ==
			groups_live(r, g, NULL, 0, 1)) {
			/* Nothing was bound: submit again (after recovery). */
			end_reset(r, g);
			group_evaluate(r, g);
			continue;
		}
		memset(&j, 0, sizeof(j));
		j.id = g->jobid;
		j.phase = SJOB_ENDED;
		j.state = "PURGED";
		j.reason = "the job is no longer known to Slurm";
		poll_job_cb(&j, r);
	}
}

/*
 * At recovery: groups whose job, labelled or adopted, was not in the
 * first full load (it ended and was purged while the bridge was down).
 */
static void
poll_vanished(struct reconcile *r)
{
	json_t *keys = json_array();
	size_t	it = 0;
	void   *v;

	while (map_next(r->groups, &it, NULL, &v)) {
		struct group *g = v;
		if (g->jobid != 0 && g->present != r->load_mark)
			json_array_append_new(keys, json_string(g->key));
	}
	poll_gone_each(r, keys);
	json_decref(keys);
}

/*
 * While running: a load that brings jobs brings every job slurmctld holds
 * (slurm_load_jobs answers "no change" or all of them), and slurmctld
 * forgets an ended job MinJobAge after its end.  A live group whose job is
 * absent from two such loads in a row lost it before any load saw it end:
 * loads failed for longer than MinJobAge, or MinJobAge is shorter than
 * the time between loads.  Two, because a job made after a load was
 * packed is known here (its submit answer) before that load is read.  The
 * next load after a first miss loads everything, so that the second comes
 * at once.  A job still there under another comment is not gone.  Walks
 * the job index only when a live group was not seen (load_live).
 */
static void
poll_gone(struct reconcile *r, const struct sload *l)
{
	json_t *keys = json_array();
	size_t	it = 0;
	void   *v;

	while (map_next(r->jobs, &it, NULL, &v)) {
		struct group *g = v;

		if (!poll_holds(g) || g->present == r->load_mark)
			continue;
		/* Absent from the next load too, unless it is seen there. */
		g->present = r->load_mark;
		if (!g->missed) {
			g->missed = 1;
			r->slurm_since = 0;
			continue;
		}
		if (sctl_load_has(l, g->jobid)) {
			g->missed = 0;
			continue;
		}
		json_array_append_new(keys, json_string(g->key));
	}
	poll_gone_each(r, keys);
	json_decref(keys);
}

void
poll_loaded(struct reconcile *r, struct sload *l)
{
	char	 err[256];
	double	 rpc_s = 0;
	time_t	 ignored;
	uint32_t jobs = sctl_load_count(l);
	long	 live;
	int	 rc;

	r->polling = 0;
	live = poll_live(r);
	r->load_mark ^= 1;
	r->load_live = 0;
	/*
	 * A load made while this thread went on: what happened since it
	 * began is known here already, and a reload asked for meanwhile
	 * (slurm_since set to 0) stands.
	 */
	/* A failed load was logged when it was made (sctl_load). */
	rc = sctl_load_each(l,
	    r->slurm_since == r->poll_since ? &r->slurm_since : &ignored,
	    poll_job_cb, r, &rpc_s, err, sizeof(err));
	if (rc == 0 && r->load_live < live)
		poll_gone(r, l);
	/*
	 * Freed on the poll thread.  A large load leaves its records (some
	 * 1.7 kB a job, most of it in small blocks that malloc does not merge
	 * on free) in the heap: their pages go back after it, or a whole
	 * load's worth stays resident until the next trim.
	 */
	poller_spent(r->poller, l, rc == 0 && jobs >= POLL_TRIM_JOBS);
	/* The jobs it saw start are bound before the clean-up below. */
	bind_flush_writes(r);
	poll_forget(r);
	poll_cancel_orphans(r);
	/*
	 * slurmctld answers a poll with every job it holds once anything
	 * changed: with tens of thousands pending, one load takes long.
	 * Polls then space out (POLL_DUTY), so that loads run at most a
	 * fifth of the time.
	 */
	r->poll_cost_ms = (int64_t)(rpc_s * 1000.0);
	if (r->poll_cost_ms > POLL_COST_MAX_MS)
		r->poll_cost_ms = POLL_COST_MAX_MS;
	r->last_poll = now_ms();
}

void
poll_slurm(struct reconcile *r)
{
	poll_loaded(r, sctl_load(poll_since(r)));
}

/* First full Slurm load after the caches sync: adopt before submitting. */
void
poll_recover(struct reconcile *r)
{
	struct sload *l;
	char	      err[256];
	int	      rc;

	r->slurm_since = 0;
	r->poll_asked = now_ms();
	r->others = json_object();
	/* Groups made before it have present 0: seen ones get 1 (poll_vanished). */
	r->load_mark = 1;
	l = sctl_load(0);
	rc = sctl_load_each(l, &r->slurm_since, poll_job_cb, r, NULL, err,
	    sizeof(err));
	sctl_load_free(l);
	if (rc == -1) {
		log_warnx("slurm: recovery: %s; retrying", err);
		json_decref(r->others);
		r->others = NULL;
		return;
	}
	poll_cancel_orphans(r);
	poll_vanished(r);
	json_decref(r->others);
	r->others = NULL;
	r->recovered = 1;
	/* Nodes listed before recovery: pending jobs take their exclusions. */
	if (r->fit_dirty)
		exclude_nodes_changed(r);
	json_decref(r->slurm_nodes);
	if ((r->slurm_nodes = sctl_node_names(err, sizeof(err))) == NULL)
		log_warnx("slurm: %s; nodes are not tainted", err);
	nodes_sync_all(r);
	nodes_check_topology(r);
	atomic_store(&bstats.recovered, 1);
	log_info("recovered: %zu pods in %zu groups, %zu slurm jobs tracked",
	    map_count(r->pods), map_count(r->groups), map_count(r->jobs));
	sweep_groups(r, 1);
}
