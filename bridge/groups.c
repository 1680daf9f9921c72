/*
 * The reconcile thread's groups (a gang, or a pod alone): made and freed
 * here, with their members, the job id -> group index, the namespace
 * index, the state counts and the few helpers every stage of a group's
 * life uses (its live members in placement order, a condition on all of
 * them, the backoff).  What a group does at each stage is in form.c
 * (forming and submission), bind.c (placement and binding) and end.c
 * (ending); group.c decides which stage comes next.
 *
 * Threads: reconcile.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"

/* Transient failures (slurmctld unreachable) retry quickly... */
#define RETRY_MIN_MS 2000
#define RETRY_MAX_MS 300000
/*
 * ...refusals that only a change on the Slurm side can fix slowly: every
 * refused allocation leaves a FAILED row in sacct.
 */
#define REFUSED_MIN_MS 60000
#define REFUSED_MAX_MS 1800000

/*
 * The group no longer wants the allocation it asked for: if the submit
 * thread has not made it yet, it will not (deleted pods do not queue up
 * jobs that are made only to be cancelled).
 */
void
groups_withdraw(struct group *g)
{
	if (g->inflight != NULL)
		atomic_store(&g->inflight->withdrawn, 1);
	g->inflight = NULL;
}

void
groups_withdraw_all(struct reconcile *r)
{
	size_t it = 0;
	void  *v;

	while (map_next(r->groups, &it, NULL, &v))
		groups_withdraw(v);
}

void
groups_entry_free(void *p)
{
	struct group *g = p;

	if (g == NULL)
		return;
	groups_withdraw(g);
	intern_put(g->ns);
	intern_put(g->pending_reason);
	strv_clear(&g->members);
	groupjob_free(g);
	free(g);
}

static const char *
jobid_str(uint32_t jobid, char *buf, size_t len)
{
	snprintf(buf, len, "%u", jobid);
	return (buf);
}

/*
 * The job index borrows both sides from the group: its key is the group's
 * jobid_key, its value the group.  Only a group that is not hinted owns an
 * entry, for its own jobid; end_reset and groups_gc take it out before
 * the id changes or the group goes.
 */
void
groups_index_put(struct reconcile *r, struct group *g)
{
	jobid_str(g->jobid, g->jobid_key, sizeof(g->jobid_key));
	map_put(r->jobs, g->jobid_key, g);
	/* A new job: missed by no load yet, absent from the next unless seen. */
	g->missed = 0;
	g->present = r->load_mark;
}

struct group *
groups_by_job(struct reconcile *r, uint32_t jobid)
{
	char id[16];

	return (map_get(r->jobs, jobid_str(jobid, id, sizeof(id))));
}

/* A group linked by a wrong job id (hinted) never owned the entry. */
void
groups_index_del(struct reconcile *r, const struct group *g)
{
	char id[16];

	if (map_get(r->jobs, jobid_str(g->jobid, id, sizeof(id))) == g) {
		map_take(r->jobs, id);
		groups_forgot(r, g->jobid);
	}
}

/*
 * This thread forgot job jobid (its group ended it, or let it go): a load
 * asked for before now may still show it running (poll_loaded).
 */
void
groups_forgot(struct reconcile *r, uint32_t jobid)
{
	char id[16];

	json_object_set_new(r->forgotten, jobid_str(jobid, id, sizeof(id)),
	    json_integer(now_ms()));
}

/*
 * The namespace index: ns -> its groups, so a change to a namespace or to
 * an owner object in it re-evaluates only those.
 */
static void
groups_ns_index(struct reconcile *r, struct group *g, int add)
{
	struct map *m = map_get(r->ns_groups, g->ns);

	if (add) {
		if (m == NULL) {
			m = map_new_borrowed(NULL);
			map_put(r->ns_groups, g->ns, m);
		}
		map_put(m, g->key, g);
	} else if (m != NULL) {
		map_take(m, g->key);
		if (map_count(m) == 0)
			map_del(r->ns_groups, g->ns);
	}
}

struct group *
groups_get(struct reconcile *r, const struct group_id *gid, const char *ns)
{
	struct group *g;
	size_t	      n;

	if ((g = map_get(r->groups, gid->key)) != NULL)
		return (g);
	n = strlen(gid->key) + 1;
	g = xcalloc(1, sizeof(*g) + n);
	groupjob_init(g);
	memcpy(g->key, gid->key, n);
	g->ns = intern_get(ns);
	g->gang = gid->gang != 0;
	g->grows = gid->grows != 0;
	g->min_member = gid->min_member;
	g->sized_by = gid->sized_by;
	map_put(r->groups, g->key, g);
	r->nstate[G_WAITING]++;
	groups_ns_index(r, g, 1);
	return (g);
}

void
groups_member_add(struct group *g, const char *pkey)
{
	char *own = strchr(g->key, ':');

	if (strv_find(&g->members, pkey) != -1)
		return;
	groups_job_list_own(g);
	/* A pod alone ("pod:ns/name"): its key is in the group's. */
	if (g->members.n == 0 && own != NULL && strcmp(own + 1, pkey) == 0) {
		g->member0 = own + 1;
		strv_borrow(&g->members, &g->member0);
	} else
		strv_add(&g->members, pkey);
}

void
groups_member_remove(struct group *g, const char *pkey)
{
	long i;

	if ((i = strv_find(&g->members, pkey)) != -1) {
		groups_job_list_own(g);
		strv_remove(&g->members, (size_t)i);
	}
}

/* Frees a group with no members and no live job (nor one ending). */
void
groups_gc(struct reconcile *r, struct group *g)
{
	if (g->members.n > 0 || (g->jobid != 0 && (!g->cancelled || g->ending)))
		return;
	writes_group_release(r, g);
	if (g->jobid != 0)
		groups_index_del(r, g);
	claims_forget(r, g);
	r->nstate[g->state]--;
	groups_ns_index(r, g, 0);
	map_del(r->groups, g->key);
}

void
groups_set_state(struct reconcile *r, struct group *g, enum group_state s)
{
	r->nstate[g->state]--;
	r->nstate[s]++;
	g->state = s;
}

static int
groups_member_cmp(const void *a, const void *b)
{
	const struct pod_entry *pa = *(const struct pod_entry *const *)a;
	const struct pod_entry *pb = *(const struct pod_entry *const *)b;

	return (workload_member_order(pa->rec->index, podrec_name(pa->rec),
	    pb->rec->index, podrec_name(pb->rec)));
}

/* Live members in placement order (borrowed); returns the count. */
size_t
groups_live(struct reconcile *r, struct group *g, struct pod_entry **out,
    size_t max, int unbound_only)
{
	struct pod_entry *e;
	size_t		  i, n = 0;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e == NULL || e->state == PS_ENDED ||
		    (unbound_only && e->state != PS_UNBOUND))
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	/* An array of pointers: sizeof a pointer is meant. */
	if (n > 1 && n <= max)
		/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
		qsort(out, n, sizeof(*out), groups_member_cmp);
	return (n);
}

/* Adds key to one of the sets the next flush works through. */
void
groups_want(json_t *set, const char *key)
{
	json_object_set_new(set, key, json_true());
}

/*
 * Does the group write the job id label and our finalizer on its members
 * before binding them?  Only where they buy something: when asked for
 * (--jobid-label), and for pods of another scheduler placed through the
 * extender, which the bridge watches by that label.  Otherwise the Binding
 * carries the job id, node and GRES as annotations, and a restarted bridge
 * finds the job by its admin_comment.
 */
int
groups_labelled(struct reconcile *r, struct group *g)
{
	return (r->conf->jobid_label || g->foreign);
}

/* Writes a message on every unbound, live member of the group. */
void
groups_condition(struct reconcile *r, struct group *g, const char *msg,
    int warn)
{
	struct pod_entry *e;
	size_t		  i;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e != NULL && e->state == PS_UNBOUND)
			writes_condition(r, e, msg, warn);
	}
	writes_podgroup(r, g, 0, msg);
}

void
groups_retry_later(struct group *g, int refused)
{
	uint32_t min = refused ? REFUSED_MIN_MS : RETRY_MIN_MS;
	uint32_t max = refused ? REFUSED_MAX_MS : RETRY_MAX_MS;

	g->retry_ms = g->retry_ms < min ? min : g->retry_ms * 2;
	if (g->retry_ms > max)
		g->retry_ms = max;
	g->next_try = now_ms() + g->retry_ms;
}

const struct strv *
groups_job_list(const struct group *g)
{
	return (g->job_pods_members ? &g->members : &g->job->job_pods);
}

void
groups_job_list_own(struct group *g)
{
	struct strv *jp;
	uint32_t     i;

	if (!g->job_pods_members)
		return;
	g->job_pods_members = 0;
	jp = &groupjob_get(g)->job_pods;
	for (i = 0; i < g->members.n; i++)
		strv_add(jp, g->members.v[i]);
}

/* Are pods (a JSON array of keys) the members, in their order? */
static int
groups_are_members(const struct group *g, const json_t *pods)
{
	size_t i;

	if (json_array_size(pods) != g->members.n)
		return (0);
	for (i = 0; i < g->members.n; i++)
		if (json_string_value(json_array_get(pods, i)) == NULL ||
		    strcmp(json_string_value(json_array_get(pods, i)),
			g->members.v[i]) != 0)
			return (0);
	return (1);
}

/*
 * A job made for one pod, or for members in their order, shares their
 * list: 50,000 pending pods do not keep their keys twice.
 */
void
groups_job_pods(struct group *g, const json_t *pods, const char *admin_comment)
{
	json_t *het = translate_admin_het(admin_comment, json_array_size(pods));

	if (g->job->job_pods.v != NULL)
		strv_clear(&g->job->job_pods);
	g->job_pods_members = groups_are_members(g, pods);
	if (!g->job_pods_members)
		strv_from_json(&groupjob_get(g)->job_pods, pods);
	g->job_pods_set = 1;
	if (het != NULL || g->job->het != NULL) {
		json_decref(g->job->het);
		groupjob_get(g)->het = het;
	}
}
