/*
 * The reconcile thread's sweeps: ends deleted pods past their grace
 * period, and re-evaluates the groups that are not quiet (every second),
 * or those of namespaces whose objects changed.
 *
 * Threads: reconcile.
 */
#include <time.h>

#include "bridge.h"

/*
 * Ends deleted members past their grace period (the pods with a
 * deletionTimestamp only), and re-evaluates every group that is not quiet.
 */
void
sweep_groups(struct reconcile *r, int all)
{
	double	    t0 = metrics_now();
	int64_t	    now = now_ms();
	size_t	    it = 0;
	const char *k;
	void	   *v;
	struct strv keys = { NULL, 0, 0 };
	uint32_t    i;

	/*
	 * Collect first (evaluating may free groups): deleted pods whose grace
	 * period ran out, and ended ones still waiting for their node.
	 */
	while (map_next(r->deleting, &it, &k, NULL)) {
		struct pod_entry *e = map_get(r->pods, k);
		if (e == NULL || e->rec->delete_at == 0)
			continue;
		if ((e->state != PS_ENDED && podentry_over(e)) ||
		    (e->state == PS_ENDED &&
			time(NULL) >= e->rec->delete_at + FORCE_DELETE_SLACK_S))
			strv_add(&keys, e->rec->key);
	}
	for (i = 0; i < keys.n; i++) {
		struct pod_entry *e = map_get(r->pods, keys.v[i]);
		struct group	 *g = e != NULL && e->group != NULL ?
			map_get(r->groups, e->group) :
			NULL;
		if (e == NULL)
			continue;
		e->state = PS_ENDED;
		if (g != NULL)
			end_member_gone(r, g);
	}
	strv_clear(&keys);
	it = 0;
	while (map_next(r->groups, &it, NULL, &v))
		if (all || !group_quiet(r, v, now))
			strv_add(&keys, ((struct group *)v)->key);
	for (i = 0; i < keys.n; i++) {
		struct group *g = map_get(r->groups, keys.v[i]);
		if (g == NULL)
			continue;
		/*
		 * A job whose members have all ended but whose cancel failed
		 * (slurmctld unreachable) is cancelled again here.
		 */
		if (g->jobid != 0 && !g->cancelled &&
		    groups_live(r, g, NULL, 0, 0) == 0) {
			end_member_gone(r, g);
			continue; /* may have freed g */
		}
		group_evaluate(r, g);
		/* Thousands of submits: bind each while the rest wait. */
		bind_flush_writes(r);
	}
	strv_clear(&keys);
	metrics_hist_observe(&bstats.sweep, metrics_now() - t0);
}

/*
 * After a node changed in what the placement rule reads (exclude.c):
 * pending jobs take their new excluded nodes, and groups no node fitted
 * are looked at again.
 */
static void
sweep_refit(struct reconcile *r)
{
	struct strv   keys = { NULL, 0, 0 };
	struct group *g;
	const char   *k;
	size_t	      it = 0;
	uint32_t      i;

	if (!r->fit_dirty)
		return;
	r->fit_dirty = 0;
	/* Collect first: evaluating may free groups. */
	while (map_next(r->groups, &it, &k, (void **)&g))
		if (g->state == G_PENDING ||
		    (g->state == G_WAITING && g->unfit))
			strv_add(&keys, k);
	for (i = 0; i < keys.n; i++)
		if ((g = map_get(r->groups, keys.v[i])) != NULL) {
			if (g->state == G_PENDING)
				g->recheck = 1;
			group_evaluate(r, g);
		}
	strv_clear(&keys);
}

/* Re-evaluates the groups of the namespaces whose objects changed. */
void
sweep_changed(struct reconcile *r)
{
	struct map *dirty = r->dirty_ns;
	const char *ns;
	size_t	    it = 0;

	r->dirty_ns = map_new(NULL);
	r->sweep_due = 0;
	sweep_refit(r);
	while (map_next(dirty, &it, &ns, NULL)) {
		group_evaluate_ns(r, ns);
		bind_flush_writes(r);
	}
	map_free(dirty);
}
