/*
 * What the reconcile thread writes about pods: Events, the PodScheduled
 * condition (on the writer pool), bridge metadata (job id label, node and
 * GRES annotations, the finalizer), finalizer release and the final
 * deletion of a pod whose node never confirmed.
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

const char *
writer_path(struct pod_entry *e, const char *sub, char *buf, size_t len)
{
	snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s%s", e->ns, e->name,
	    sub);
	return (buf);
}

/* Records an Event about the pod, from the events thread. */
void
writer_event(struct reconcile *r, struct pod_entry *e, const char *type,
    const char *reason, const char *action, const char *msg)
{
	eventer_post(r->eventer, podrec_ref(e->rec), type, reason, action,
	    msg);
}

/* Hands the pod's wanted PodScheduled=False message to the writer pool. */
static void
writer_condition_send(struct reconcile *r, struct pod_entry *e)
{
	struct wreq	*w;
	char		 ts[64];

	k8s_microtime(ts, sizeof(ts), NULL);
	/* Conditions take RFC 3339 seconds. */
	snprintf(ts + 19, sizeof(ts) - 19, "Z");
	w = wreq_new(WREQ_STATUS, e, NULL);
	w->msg = xstrdup(e->cond);
	w->body = json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "PodScheduled", "status", "False",
	    "reason", "Unschedulable", "message", e->cond,
	    "lastTransitionTime", ts);
	e->cond_busy = 1;
	writepool_submit(r->writers, w);
}

/*
 * Writes PodScheduled=False with msg, once per distinct message, and never
 * once the pod is being bound: the Binding sets PodScheduled=True, and a
 * late False must not undo it.  One write per pod is in flight at a time;
 * messages that come meanwhile coalesce into the latest.  warn also records
 * a FailedScheduling Event.
 */
void
writer_condition(struct reconcile *r, struct pod_entry *e, const char *msg,
    int warn)
{
	if ((e->cond != NULL && strcmp(e->cond, msg) == 0) ||
	    e->state != PS_UNBOUND || e->busy == WREQ_BIND)
		return;
	if (warn)
		writer_event(r, e, "Warning", "FailedScheduling", "Scheduling",
		    msg);
	free(e->cond);
	e->cond = xstrdup(msg);
	if (!e->cond_busy)
		writer_condition_send(r, e);
}

void
writer_condition_done(struct reconcile *r, struct pod_entry *e,
    const struct wreq *w)
{
	e->cond_busy = 0;
	if (w->rc == -1) {
		if (w->err.status != 404)
			log_warnx("pod %s: condition: %ld %s: %s", e->key,
			    w->err.status, w->err.reason, w->err.text);
		/* Asked again, it is written again. */
		if (e->cond != NULL && strcmp(e->cond, w->msg) == 0) {
			free(e->cond);
			e->cond = NULL;
			return;
		}
	}
	/* A newer message came while this one was on its way. */
	if (e->cond != NULL && strcmp(e->cond, w->msg) != 0 &&
	    e->state == PS_UNBOUND && e->busy != WREQ_BIND)
		writer_condition_send(r, e);
}

/*
 * Bridge metadata for a pod as one strategic merge patch (new reference):
 * the jobid label (removed with jobid 0), our finalizer (finalizers merge
 * as a set, so nobody else's are touched and no resourceVersion is
 * needed), and the node and GRES annotations when node is set.
 */
json_t *
writer_metadata_patch(const struct pod_entry *e, uint32_t jobid,
    const char *node, const char *gres)
{
	json_t	*md;
	char	 id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	md = json_object();
	json_object_set_new(md, "labels", json_pack("{s:o}", LABEL_JOBID,
	    jobid != 0 ? json_string(id) : json_null()));
	if (node != NULL)
		json_object_set_new(md, "annotations", json_pack("{s:s, s:o}",
		    ANN_SLURM_NODE, node, ANN_SLURM_GRES, gres != NULL ?
		    json_string(gres) : json_null()));
	if (jobid != 0 && !e->finalizer)
		json_object_set_new(md, "finalizers", json_pack("[s]",
		    FINALIZER));
	return (json_pack("{s:o}", "metadata", md));
}

/* Writes writer_metadata_patch() now; 0, or -1 with err filled. */
int
writer_metadata(struct reconcile *r, struct pod_entry *e, uint32_t jobid,
    const char *node, const char *gres, struct k8s_error *err)
{
	json_t		*patch;
	char		 path[512];
	int		 rc;

	patch = writer_metadata_patch(e, jobid, node, gres);
	rc = k8s_patch(r->client, writer_path(e, "", path, sizeof(path)),
	    K8S_PATCH_STRATEGIC, patch, NULL, err);
	json_decref(patch);
	if (rc == 0)
		writer_metadata_done(e, jobid, node);
	return (rc);
}

/*
 * A metadata patch for jobid (and node, if set) landed: what the pod now
 * carries, in the cached copy too until its watch event brings it.
 */
void
writer_metadata_done(struct pod_entry *e, uint32_t jobid, const char *node)
{
	e->label_jobid = jobid;
	if (jobid != 0)
		e->finalizer = 1;
	if (node == NULL)
		return;
	intern_put(e->slurm_node);
	e->slurm_node = intern_get(node);
}

/* The patch that removes our finalizer, keeping everyone else's. */
json_t *
writer_release_patch(void)
{
	return (json_pack("{s:{s:[s]}}", "metadata",
	    "$deleteFromPrimitiveList/finalizers", FINALIZER));
}

/*
 * A deleted pod whose grace period is over and whose node never confirmed
 * the deletion (no kubelet, or a dead node) would stay Terminating: with
 * the job gone, finish the deletion (grace 0, UID precondition).
 */
void
writer_force_delete(struct reconcile *r, struct pod_entry *e)
{
	struct k8s_error	 err;
	json_t			*opts;
	char			 path[512];
	const char		*node = e->rec->node;

	/*
	 * A pod never bound to a node has nobody to confirm: the API server
	 * removes it as soon as its finalizers are gone.
	 */
	if (e->rec->delete_at == 0 || e->state == PS_UNBOUND || node == NULL ||
	    time(NULL) < e->rec->delete_at + FORCE_DELETE_SLACK_S)
		return;
	opts = json_pack("{s:s, s:s, s:i, s:{s:s}}", "apiVersion", "v1",
	    "kind", "DeleteOptions", "gracePeriodSeconds", 0,
	    "preconditions", "uid", e->rec->uid);
	if (k8s_delete(r->client, writer_path(e, "", path, sizeof(path)), opts,
	    &err) == 0)
		log_info("pod %s: deleted: grace period over and its node "
		    "never confirmed", e->key);
	else if (err.status != 404 && err.status != 409)
		log_warnx("pod %s: force delete: %ld %s: %s", e->key,
		    err.status, err.reason, err.text);
	json_decref(opts);
}
