/*
 * How a group becomes one Slurm job, on the reconcile thread: its members
 * (placement order) and their workload layers are translated into one job
 * description (translate.c), handed to the submit threads (form_submit),
 * and the answer is taken in (form_submitted).  A pending job whose
 * request changed is changed in Slurm, or given up when the gang grew
 * (form_update_pending).  Which pods
 * form a group is pods.c's (workload_group); when a group is complete is
 * group.c's.
 *
 * Threads: reconcile.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

/*
 * Translates a group's members (placement order) into one job description,
 * with the workload layers (workload_layers) and the namespace for defaults
 * and bounds (bounds.c).
 */
static int
form_translate(struct reconcile *r, struct group *g, struct pod_entry **members,
    size_t n, struct jobspec *js, char *err, size_t errlen)
{
	struct translate_src   src;
	struct workload_lookup lk;
	struct dra_lookup      dl;
	struct claims_asker    ask;
	json_t		     **pods, *layers[WORKLOAD_LAYERS];
	size_t		       i;
	int		       rc;

	/* The compact records, as the JSON the rules read. */
	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	pods = xreallocarray(NULL, n, sizeof(*pods));
	for (i = 0; i < n; i++)
		pods[i] = podrec_json(members[i]->rec);
	lookups_workload_init(r, &lk);
	src.gang = 0; /* translate_group says so for its members */
	src.pod = pods[0];
	src.ns = map_get(r->namespaces, g->ns);
	bind_claims_lookup(r, g, &ask, &dl);
	src.dra = &dl;
	src.layers = layers;
	src.nlayers = workload_layers(pods[0], &lk, layers);
	if (g->gang)
		rc = translate_group(pods, n, workload_key_name(g->key), &src,
		    &r->tconf, js, err, errlen);
	else
		rc = translate_pod(&src, &r->tconf, js, err, errlen);
	for (i = 0; i < n; i++)
		json_decref(pods[i]);
	free(pods);
	workload_layers_free(layers, src.nlayers);
	return (rc);
}

/* Do the gang's components exclude nodes of their own? */
static int
form_split(const struct jobspec *js)
{
	size_t k;

	for (k = 0; k < js->ncomps; k++)
		if (js->comps[k].exc_nodes != NULL)
			return (1);
	return (0);
}

/*
 * What the owner of a pending job may change of it (sctl_update_pending),
 * as a hash to compare (map_hash of the fields, never 0): 8 bytes a
 * pending job rather than a string of them.
 */
static uint64_t
form_spec(const struct jobspec *js)
{
	uint64_t h;
	char	*s, *t;
	size_t	 k;

	xasprintf(&s,
	    "%s\x1f%u\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
	    js->name != NULL ? js->name : "", js->time_limit,
	    js->account != NULL ? js->account : "",
	    js->qos != NULL ? js->qos : "",
	    js->partition != NULL ? js->partition : "",
	    js->reservation != NULL ? js->reservation : "",
	    js->constraints != NULL ? js->constraints : "",
	    js->licenses != NULL ? js->licenses : "",
	    js->wckey != NULL ? js->wckey : "",
	    js->exc_nodes != NULL ? js->exc_nodes : "");
	/* Each component's own nodes (translate_split_nodes). */
	for (k = 0; k < js->ncomps; k++) {
		xasprintf(&t, "%s\x1e%s", s,
		    js->comps[k].exc_nodes != NULL ? js->comps[k].exc_nodes :
						     "");
		free(s);
		s = t;
	}
	h = map_hash(s);
	free(s);
	return (h != 0 ? h : 1);
}

/*
 * A pending job whose request may have changed (group->recheck): when what
 * its owner may change differs from what was asked, the change goes to
 * Slurm through a submit thread (form_updated has the answer).  A
 * request that no longer translates leaves the job as it is, and says why
 * on the members.
 */
void
form_update_pending(struct reconcile *r, struct group *g)
{
	struct pod_entry *pods[WORKLOAD_MAX_GANG];
	struct jobspec	  js;
	struct sreq	 *s;
	char		  err[512], msg[600];
	uint64_t	  spec;
	size_t		  n;
	int		  min;

	if (g->updating || g->jobid == 0)
		return;
	g->recheck = 0;
	/*
	 * The gang grew (a PodGroup's minCount raised): the pending job,
	 * made for fewer pods, would start it short.  It is given up, and
	 * the gang placed anew once its pods are there.  A smaller gang
	 * keeps the job: it holds every pod present.
	 */
	if (g->gang && !g->cancelled && (min = form_min(r, g)) > 0 &&
	    (uint32_t)min > groups_job_list(g)->n) {
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: gang %s now needs %d pods and its pending "
		    "Slurm job %u was made for %u: the job is given up, and "
		    "the gang placed anew once %d pods are present",
		    workload_key_name(g->key), min, g->jobid,
		    (unsigned)groups_job_list(g)->n, min);
		log_info("group %s: %s", g->key, msg + 14);
		groups_condition(r, g, msg, 0);
		end_cancel(r, g, "the gang grew while pending");
		return;
	}
	n = groups_live(r, g, pods, WORKLOAD_MAX_GANG, 1);
	if (n == 0 || n > WORKLOAD_MAX_GANG)
		return;
	if (form_translate(r, g, pods, n, &js, err, sizeof(err)) != 0 ||
	    exclude_group(r, g, pods, n, &js, err, sizeof(err)) != 0) {
		translate_jobspec_cleanup(&js);
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: Slurm job %u keeps its request: %s",
		    g->jobid, err);
		groups_condition(r, g, msg, 1);
		return;
	}
	spec = form_spec(&js);
	/*
	 * Unchanged; or a job adopted at a restart, whose request is not
	 * known: what the pods ask now is the baseline, so an admin's own
	 * scontrol update of it is not undone.  But for the nodes its pods
	 * may not use: a hard constraint, sent whenever there are some.
	 */
	if ((g->spec == 0 && js.exc_nodes == NULL && !form_split(&js)) ||
	    spec == g->spec) {
		g->spec = spec;
		translate_jobspec_cleanup(&js);
		return;
	}
	if (leader_fenced(r->conf->leader_elect, "changing a pending job")) {
		g->recheck = 1; /* asked again at the next evaluation */
		translate_jobspec_cleanup(&js);
		return;
	}
	g->spec = spec;
	g->updating = 1;
	s = sreq_new(g->key, g->ns, g->submit_seq);
	s->update_jobid = g->jobid;
	s->js = js;
	submitter_push(r->submitter, s);
}

/*
 * A submit thread's answer to form_update_pending.  A refused change
 * leaves the job as it was: the members say why, and the next change of
 * the request tries again.
 */
static void
form_updated(struct reconcile *r, struct sreq *s)
{
	struct group *g = map_get(r->groups, s->gkey);
	char	      msg[512];

	if (g == NULL)
		return;
	g->updating = 0;
	if (g->jobid != s->update_jobid)
		return; /* an answer about a job the group gave up */
	if (s->rc == 0) {
		log_info("group %s: pending slurm job %u changed to what its "
			 "pods and workload now ask",
		    g->key, g->jobid);
		return;
	}
	/*
	 * g->spec keeps what was asked: the same request is not asked again
	 * (our own condition write would bring it back at once), a new one is.
	 */
	log_warnx("group %s: %s", g->key, s->err);
	snprintf(msg, sizeof(msg),
	    "slurm-bridge: Slurm refused to change pending job %u: %.400s",
	    g->jobid, s->err);
	groups_condition(r, g, msg, 1);
}

/*
 * Translates the group's members into one job and hands it to the submit
 * thread; the answer comes back through form_submitted.
 */
void
form_submit(struct reconcile *r, struct group *g, struct pod_entry **pods,
    size_t n)
{
	struct sreq   *s;
	struct jobspec js;
	char	       err[512], msg[600];
	size_t	       i;
	int	       rc;

	rc = form_translate(r, g, pods, n, &js, err, sizeof(err));
	/* Slurm decides among the nodes the placement rule leaves. */
	if (rc == 0 && exclude_group(r, g, pods, n, &js, err, sizeof(err))) {
		translate_jobspec_cleanup(&js);
		snprintf(msg, sizeof(msg), "%s", err);
		groups_condition(r, g, msg, 1);
		return;
	}
	if (rc == 1) {
		/*
		 * Waiting for an object (a claim to be made or freed): its
		 * event brings the group back, with no backoff or warning.
		 */
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		groups_condition(r, g, msg, 0);
		return;
	}
	if (rc == -1) {
		log_warnx("group %s: not submitted: %s", g->key, err);
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", err);
		groups_condition(r, g, msg, 1);
		/*
		 * Retried on any member change, and slowly anyway: the fix may
		 * be in the namespace, the PodGroup or the owning workload.
		 */
		g->invalid = 1;
		groups_retry_later(g, 1);
		return;
	}
	g->spec = form_spec(&js);
	g->recheck = 0;
	/* Until it runs, the claims it will allocate are its own. */
	claims_allocating(r, g, pods, n);
	s = sreq_new(g->key, g->ns, ++r->submit_seq);
	s->js = js;
	for (i = 0; i < n; i++)
		json_array_append_new(s->pods, json_string(pods[i]->rec->key));
	groups_set_state(r, g, G_SUBMITTING);
	g->submit_seq = s->seq;
	r->submits++;
	g->inflight = s;
	submitter_push(r->submitter, s);
}

/* Are the request's pods all still unbound members of g? */
static int
form_request_current(struct reconcile *r, struct group *g, const struct sreq *s)
{
	struct pod_entry *e;
	json_t		 *v;
	size_t		  i;

	json_array_foreach (s->pods, i, v) {
		e = map_get(r->pods, json_string_value(v));
		if (e == NULL || e->state != PS_UNBOUND || e->group == NULL ||
		    strcmp(e->group, g->key) != 0)
			return (0);
	}
	return (1);
}

/* The gang's size (workload_gang_size); 0 while unknown. */
int
form_min(struct reconcile *r, struct group *g)
{
	struct workload_lookup lk;

	lookups_workload_init(r, &lk);
	return (workload_gang_size(g->ns, workload_key_name(g->key),
	    g->min_member, g->sized_by, &lk));
}

/*
 * A poll that saw this job before its answer (deferred, poll_group) loads
 * everything again, as does the last answer while any was deferred.
 */
static void
form_undefer(struct reconcile *r, const struct sreq *s)
{
	char id[16];

	if (s->rc == 0 && json_object_size(r->deferred) > 0) {
		snprintf(id, sizeof(id), "%u", s->jobid);
		if (json_object_get(r->deferred, id) != NULL) {
			json_object_del(r->deferred, id);
			r->slurm_since = 0;
		}
	}
	if (r->submits == 0 && json_object_size(r->deferred) > 0) {
		json_object_clear(r->deferred);
		r->slurm_since = 0;
	}
}

/*
 * An answer for pods that changed meanwhile (or for a group gone): the
 * job made goes; a group that is still there decides afresh.
 */
static int
form_stale(struct reconcile *r, struct group *g, struct sreq *s)
{
	char err[256];

	if (s->rc == 0 && sctl_cancel(s->jobid, err, sizeof(err)) == -1) {
		log_warnx("slurm job %u: made for pods that changed meanwhile; "
			  "cancel: %s; retried after the next poll",
		    s->jobid, err);
		json_array_append_new(r->orphans, json_integer(s->jobid));
	} else if (s->rc == 0)
		log_info("slurm job %u: cancelled: made for pods that changed "
			 "meanwhile",
		    s->jobid);
	if (s->rc == 0)
		groups_forgot(r, s->jobid);
	/* Withdrawn (not made): the group decides again at once. */
	if (g != NULL && s->rc == -1 && !atomic_load(&s->withdrawn))
		groups_retry_later(g, s->permanent);
	return (g != NULL ? FORM_AGAIN : 0);
}

/* Slurm refused the job: the group backs off, its pods say why. */
static void
form_refused(struct reconcile *r, struct group *g, const struct sreq *s)
{
	char msg[640];

	groups_retry_later(g, s->permanent);
	log_warnx("group %s: submit: %s; retrying in %lds", g->key, s->err,
	    (long)(g->retry_ms / 1000));
	if (s->permanent == SUBMIT_REFUSED_HERE)
		snprintf(msg, sizeof(msg), "slurm-bridge: %s", s->err);
	else if (g->sized_by == WORKLOAD_SCHED_PODGROUP)
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: Slurm refused the job for the %d pods of "
		    "PodGroup %.63s (spec.schedulingPolicy.gang.minCount): "
		    "%.400s",
		    form_min(r, g), workload_key_name(g->key), s->err);
	else
		snprintf(msg, sizeof(msg),
		    "slurm-bridge: Slurm refused the job: %.500s", s->err);
	groups_condition(r, g, msg, 1);
}

/*
 * The job is made: the group holds it, and is bound at once when Slurm
 * allocated it with the answer, else pending (each pod gets an Event).
 */
static int
form_made(struct reconcile *r, struct group *g, struct sreq *s)
{
	struct pod_entry *e;
	char		  msg[128];
	size_t		  i, n = json_array_size(s->pods);

	g->jobid = s->jobid;
	g->cancelled = 0;
	g->failed = 0;
	g->retry_ms = 0;
	g->cpus_per_task = s->js.cpus_per_task;
	g->gpus_per_task = s->js.gpus_per_task;
	g->exclusive = s->js.exclusive != 0;
	groups_job_pods(g, s->pods, s->js.admin_comment);
	groups_index_put(r, g);
	groups_set_state(r, g, G_PENDING);
	log_info("group %s: submitted slurm job %u for %zu pod%s%s", g->key,
	    g->jobid, n, n == 1 ? "" : "s",
	    s->layout != NULL ? ", allocated" : "");
	if (s->layout != NULL) {
		/* The Scheduled Event names the job: one Event per pod. */
		bind_allocated(r, g, s->layout);
		return (0);
	}
	snprintf(msg, sizeof(msg),
	    "submitted Slurm job %u%s; it waits for its allocation", g->jobid,
	    g->gang ? " for the gang" : "");
	for (i = 0; i < n; i++) {
		e = map_get(r->pods, groups_job_list(g)->v[i]);
		if (e != NULL)
			writes_event(r, e, "Normal", "SlurmJobSubmitted",
			    "Submit", msg);
	}
	groups_want(r->writes, g->key);
	/* It waits on Slurm: poll soon, not at the idle interval. */
	return (FORM_POLL);
}

/*
 * The submit thread's answer.  A job made for pods that changed meanwhile
 * (one was deleted, or left the gang) is cancelled, and the group decides
 * afresh (FORM_AGAIN).  FORM_POLL when the job now waits on Slurm (poll
 * soon), else 0.
 */
int
form_submitted(struct reconcile *r, struct sreq *s)
{
	struct group *g = map_get(r->groups, s->gkey);

	if (s->update_jobid != 0) {
		form_updated(r, s);
		return (0);
	}
	r->submits--;
	form_undefer(r, s);
	if (g != NULL && (g->state != G_SUBMITTING || g->submit_seq != s->seq))
		g = NULL;
	if (g != NULL) {
		g->inflight = NULL;
		groups_set_state(r, g, G_WAITING);
	}
	if (g == NULL || !form_request_current(r, g, s))
		return (form_stale(r, g, s));
	if (s->rc == -1) {
		form_refused(r, g, s);
		return (0);
	}
	return (form_made(r, g, s));
}

/* Says on the members what the gang's size waits for. */
void
form_unsized(struct reconcile *r, struct group *g)
{
	struct workload_lookup lk;
	json_t		      *pg;
	char		       msg[512], why[400];
	int		       warn = 0;

	if (g->sized_by == WORKLOAD_SCHED_COMPOSITE) {
		lookups_workload_init(r, &lk);
		if ((pg = lookups_workload(r, WORKLOAD_SCHED_COMPOSITE, g->ns,
			 workload_key_name(g->key))) == NULL)
			snprintf(msg, sizeof(msg),
			    "waiting for CompositePodGroup %s/%s (its "
			    "PodGroups' spec.parentCompositePodGroupName) to "
			    "exist",
			    g->ns, workload_key_name(g->key));
		else {
			why[0] = '\0';
			workload_composite_size(pg, &lk, why, sizeof(why));
			snprintf(msg, sizeof(msg), "%s", why);
			warn = strncmp(why, "waiting", 7) != 0;
			json_decref(pg);
		}
	} else if (g->sized_by != WORKLOAD_SCHED_PODGROUP)
		snprintf(msg, sizeof(msg),
		    "waiting for PodGroup or JobSet "
		    "%s/%s, or the " ANN_MIN_MEMBER " annotation, to give the "
		    "gang's size",
		    g->ns, workload_key_name(g->key));
	else if ((pg = lookups_workload(r, WORKLOAD_SCHED_PODGROUP, g->ns,
		      workload_key_name(g->key))) == NULL)
		snprintf(msg, sizeof(msg),
		    "waiting for PodGroup %s/%s (spec.schedulingGroup."
		    "podGroupName) to exist",
		    g->ns, workload_key_name(g->key));
	else {
		snprintf(msg, sizeof(msg),
		    "PodGroup %s/%s: spec.schedulingPolicy.gang.minCount must "
		    "be a whole number from 1 to %d",
		    g->ns, workload_key_name(g->key), WORKLOAD_MAX_GANG);
		warn = 1;
		json_decref(pg);
	}
	groups_condition(r, g, msg, warn);
}

/* Fills the per-task sizes of an adopted job from its members. */
void
form_adopt_sizes(struct reconcile *r, struct group *g)
{
	struct pod_entry *pods[WORKLOAD_MAX_GANG];
	struct jobspec	  js;
	char		  err[256];
	size_t		  n;
	int		  rc;

	if (g->cpus_per_task != 0)
		return;
	n = groups_live(r, g, pods, WORKLOAD_MAX_GANG, 0);
	if (n == 0 || n > WORKLOAD_MAX_GANG)
		return;
	rc = form_translate(r, g, pods, n, &js, err, sizeof(err));
	if (rc != 0)
		return;
	g->cpus_per_task = js.cpus_per_task;
	g->gpus_per_task = js.gpus_per_task;
	g->exclusive = js.exclusive != 0;
	translate_jobspec_cleanup(&js);
}
