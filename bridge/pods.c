/*
 * The pods the reconcile thread takes in: a watch's pod (or the
 * extender's) becomes an entry (podrec.c) and joins its group
 * (group_join: its gang, or itself alone), and
 * the group is evaluated; a pod that leaves a group, ends or is deleted is
 * gone from it (end_member_gone).  A change to the object that decides a
 * gang (a JobSet with dependsOn, a Kubernetes PodGroup found basic) groups
 * its pods again while nothing was asked of Slurm for them.
 *
 * Threads: reconcile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"

/*
 * Groups again the members of the group key, as long as nothing was asked
 * of Slurm for them yet: the object that decides their gang changed.
 */
static void
pods_regroup(struct reconcile *r, const char *key)
{
	struct strv	  keys = { NULL, 0, 0 };
	struct group	 *g;
	struct pod_entry *e;
	size_t		  i;

	if ((g = map_get(r->groups, key)) == NULL || g->state != G_WAITING ||
	    g->jobid != 0)
		return;
	for (i = 0; i < g->members.n; i++)
		strv_add(&keys, g->members.v[i]);
	for (i = 0; i < keys.n; i++)
		if ((e = map_get(r->pods, keys.v[i])) != NULL &&
		    (g = group_join(r, e)) != NULL)
			group_evaluate(r, g);
	strv_clear(&keys);
}

/*
 * An owner object seen (again) that decides its pods' gang: pods grouped
 * before a JobSet was known, as one gang of the whole JobSet, go to their
 * stage's gang when it has dependsOn; pods of a Kubernetes PodGroup whose
 * policy turns out basic each go alone; those of a PodGroup that turns out
 * to have a parent CompositePodGroup go to the composite's gang, and back
 * to their PodGroup's when the composite's policy is basic.
 */
void
pods_regroup_owner(struct reconcile *r, enum msg_kind kind, const json_t *obj)
{
	const char *stage;
	char	    key[512], err[256];
	int	    n;

	if (kind == MSG_JOBSET &&
	    workload_jobset_stage(obj, NULL, &stage, &n, err, sizeof(err)) !=
		1) {
		snprintf(key, sizeof(key), "gang:%s/%s", k8s_obj_namespace(obj),
		    k8s_obj_name(obj));
		pods_regroup(r, key);
	} else if (kind == MSG_SCHED_PODGROUP &&
	    (workload_podgroup_min(obj) == 0 ||
		k8s_obj_str(obj, "spec.parentCompositePodGroupName") != NULL)) {
		snprintf(key, sizeof(key), "podgroup:%s/%s",
		    k8s_obj_namespace(obj), k8s_obj_name(obj));
		pods_regroup(r, key);
	} else if (kind == MSG_SCHED_COMPOSITE &&
	    k8s_obj_get(obj, "spec.schedulingPolicy.basic") != NULL) {
		snprintf(key, sizeof(key), "composite:%s/%s",
		    k8s_obj_namespace(obj), k8s_obj_name(obj));
		pods_regroup(r, key);
	}
}

/*
 * The entry's record is rec from now on; the pods map borrows its key, so
 * the map takes rec's before the old record goes.
 */
static void
pods_take_rec(struct reconcile *r, struct pod_entry *e, struct podrec *rec)
{
	struct podrec *old = e->rec;

	e->rec = rec;
	map_put(r->pods, rec->key, e);
	podrec_free(old);
}

/* Takes rec: the pod's newest state. */
void
pods_update(struct reconcile *r, struct podrec *rec)
{
	struct pod_entry *e;
	struct group	 *g;
	int		  same_uid, was_bound, changed;
	uint32_t	  id;

	if ((e = map_get(r->pods, rec->key)) == NULL) {
		e = xcalloc(1, sizeof(*e));
		e->seen_at = podentry_epoch();
	}
	/*
	 * A pod we bound stays bound for its UID: an older event (say, of
	 * our own metadata patch) can still arrive without the nodeName.
	 */
	same_uid = e->rec != NULL && *podrec_uid(rec) != '\0' &&
	    strcmp(podrec_uid(e->rec), podrec_uid(rec)) == 0;
	was_bound = e->state == PS_BOUND && same_uid;
	if (!same_uid && e->rec != NULL) {
		/* Recreated under its name: nothing of the old pod holds. */
		e->busy = 0;
		e->cond_busy = 0;
		e->del_sent = 0;
		e->cond = 0;
		e->cond_queued = 0;
		free(e->cond_text);
		e->cond_text = NULL;
		intern_put(e->bound_node);
		e->bound_node = NULL;
		intern_put(e->beyond);
		e->beyond = NULL;
	}
	/*
	 * The watch shows the deletion asked: from here on only the force
	 * delete (grace 0) is left to ask, and it may be.
	 */
	if (e->rec != NULL && e->rec->delete_at == 0 && rec->delete_at != 0)
		e->del_sent = 0;
	/* What translation reads of it (annotations, ...) changed. */
	changed = same_uid &&
	    (podrec_cold(e->rec) == NULL || podrec_cold(rec) == NULL ?
		    podrec_cold(e->rec) != podrec_cold(rec) :
		    strcmp(podrec_cold(e->rec), podrec_cold(rec)) != 0);
	pods_take_rec(r, e, rec);
	/* Recreated under its name, a pod may no longer be deleting. */
	if (rec->delete_at != 0)
		map_put(r->deleting, e->rec->key, NULL);
	else
		map_del(r->deleting, e->rec->key);
	e->finalizer = rec->finalizer;
	e->foreign = rec->sched == NULL ||
	    strcmp(rec->sched, r->conf->scheduler_name) != 0;
	e->label_jobid = rec->label_jobid;
	intern_put(e->slurm_node);
	e->slurm_node = intern_get(rec->slurm_node);

	if ((g = group_join(r, e)) == NULL)
		return;
	if (changed)
		g->recheck = 1;
	/*
	 * At start, the job id a bound pod carries (the annotation its
	 * Binding set, or the label) is where to look for its job, until the
	 * job's admin_comment confirms it (poll.c); later, either can be
	 * older than what we know.
	 */
	id = e->label_jobid;
	if (id == 0 && rec->node != NULL)
		id = rec->ann_jobid;
	if (!r->recovered && g->jobid == 0 && id != 0 &&
	    g->state == G_WAITING && !podentry_over(e)) {
		g->jobid = id;
		g->hinted = 1; /* not indexed: poll_adopt checks the job */
		groups_set_state(r, g, G_PENDING);
	}

	if (rec->node != NULL || was_bound)
		e->state = PS_BOUND;
	else
		e->state = PS_UNBOUND;
	if (podentry_over(e)) {
		e->state = PS_ENDED;
		end_member_gone(r, g);
		return;
	}
	group_evaluate(r, g);
}

/* Forgets a pod the API server no longer has (as its DELETED event). */
void
pods_gone(struct reconcile *r, const char *key)
{
	struct pod_entry *e;
	struct group	 *g;

	if ((e = map_take(r->pods, key)) != NULL) {
		map_del(r->deleting, e->rec->key);
		if (e->group != NULL &&
		    (g = map_get(r->groups, e->group)) != NULL) {
			groups_member_remove(g, e->rec->key);
			end_member_gone(r, g);
		}
		podentry_free(e);
	}
}

void
pods_deleted(struct reconcile *r, struct podrec *rec)
{
	pods_gone(r, rec->key);
	podrec_free(rec);
}
