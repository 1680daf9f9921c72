/*
 * Pod writes for the reconcile thread, made by a fixed set of threads with
 * their own clients, all drawing on one shared rate limit.  The reconcile
 * thread hands a request over and goes on at once; the thread that made it
 * gives it back, with its result, as an MSG_WRITE message on the queue.  So
 * every result is applied on the reconcile thread, which owns the cache,
 * and no write waits for another one: there are no batches.
 *
 * Threads: writepool, reconcile (writepool_free, writepool_new,
 * writepool_submit).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct writepool {
	struct worker *worker; /* nthreads; its lock guards waiting */
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, wreq) waiting;
	int		    nthreads;
	struct k8s_client **clients; /* one per thread */
	struct queue	   *done;
};

/*
 * The condition first, then the delete (kube-scheduler's order: a
 * controller that sees the pod go sees why).  A pod whose status cannot
 * be written is deleted all the same: Slurm's decision holds.
 */
static void
writepool_preempt(struct k8s_client *c, struct wreq *w)
{
	struct k8s_error err;
	json_t		*opts;
	char		 path[600];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status",
	    w->ns, w->name);
	if (w->uid[0] != '\0')
		json_object_set_new(w->body, "metadata",
		    json_pack("{s:s}", "uid", w->uid));
	if (k8s_patch(c, path, K8S_PATCH_STRATEGIC, w->body, NULL, &err) ==
		-1 &&
	    err.status != 404)
		log_warnx("pod %s/%s: DisruptionTarget: %ld %s: %s", w->ns,
		    w->name, err.status, err.reason, err.text);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", w->ns,
	    w->name);
	opts = json_pack("{s:s, s:s, s:I}", "apiVersion", "v1", "kind",
	    "DeleteOptions", "gracePeriodSeconds", (json_int_t)w->grace);
	if (w->uid[0] != '\0')
		json_object_set_new(opts, "preconditions",
		    json_pack("{s:s}", "uid", w->uid));
	w->rc = k8s_delete(c, path, opts, &w->err);
	json_decref(opts);
}

static void
writepool_do(struct k8s_client *c, struct wreq *w)
{
	char path[600];

	switch (w->kind) {
	case WREQ_BIND:
	case WREQ_EXTBIND:
		/* Its claims allocated and reserved first, or no Binding. */
		if (w->claims != NULL && (w->rc = claims_write(c, w)) == -1)
			return;
		w->rc = k8s_pod_bind(c, w->ns, w->name,
		    w->uid[0] != '\0' ? w->uid : NULL, w->node, w->body,
		    &w->err);
		return;
	case WREQ_CLAIMS:
		w->rc = claims_write(c, w);
		return;
	case WREQ_DELETE:
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s",
		    w->ns, w->name);
		w->rc = k8s_delete(c, path, w->body, &w->err);
		return;
	case WREQ_PREEMPT:
		writepool_preempt(c, w);
		return;
	case WREQ_PODGROUP:
		w->rc = k8s_patch(c, w->path, K8S_PATCH_STRATEGIC, w->body,
		    NULL, &w->err);
		return;
	case WREQ_STATUS:
	case WREQ_FAIL:
		if (w->kind == WREQ_STATUS && w->body == NULL)
			w->body = wreq_status_body(w);
		snprintf(path, sizeof(path),
		    "/api/v1/namespaces/%s/pods/%s/"
		    "status",
		    w->ns, w->name);
		break;
	default:
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s",
		    w->ns, w->name);
		break;
	}
	/* The UID makes the API server refuse to patch a recreated pod. */
	if (w->uid[0] != '\0' && json_is_object(w->body) &&
	    json_object_get(w->body, "metadata") == NULL)
		json_object_set_new(w->body, "metadata",
		    json_pack("{s:s}", "uid", w->uid));
	else if (w->uid[0] != '\0')
		json_object_set_new(json_object_get(w->body, "metadata"), "uid",
		    json_string(w->uid));
	w->rc = k8s_patch(c, path, K8S_PATCH_STRATEGIC, w->body, NULL, &w->err);
}

static void *
writepool_take(void *owner)
{
	struct writepool *p = owner;
	struct wreq	 *w;

	if ((w = TAILQ_FIRST(&p->waiting)) == NULL)
		return (NULL);
	TAILQ_REMOVE(&p->waiting, w, entry);
	atomic_fetch_sub(&bstats.writes_waiting, 1);
	return (w);
}

/* Makes the write on thread i's own client, and answers MSG_WRITE. */
static void
writepool_run(void *owner, int i, void *job)
{
	struct writepool *p = owner;
	struct wreq	 *w = job;
	struct msg	 *msg;

	writepool_do(p->clients[i], w);
	msg = xcalloc(1, sizeof(*msg));
	msg->kind = MSG_WRITE;
	msg->write = w;
	queue_push(p->done, msg);
}

static const struct worker_policy writepool_policy = {
	.name = "writepool",
	.take = writepool_take,
	.run = writepool_run,
};

struct writepool *
writepool_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    int nthreads, struct queue *done, char *err, size_t errlen)
{
	struct writepool *p;
	struct k8s_error  kerr;

	p = xcalloc(1, sizeof(*p));
	TAILQ_INIT(&p->waiting);
	p->done = done;
	/* An array of pointers: sizeof a pointer is meant. */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
	p->clients = xcalloc((size_t)nthreads, sizeof(*p->clients));
	for (; p->nthreads < nthreads; p->nthreads++) {
		if ((p->clients[p->nthreads] = k8s_client_new(kconf, &kerr)) ==
		    NULL) {
			snprintf(err, errlen, "writer client: %s", kerr.text);
			goto fail;
		}
		k8s_client_set_limiter(p->clients[p->nthreads], lim);
	}
	if ((p->worker = worker_new(&writepool_policy, p, nthreads)) == NULL) {
		snprintf(err, errlen, "writepool thread: cannot start");
		goto fail;
	}
	return (p);
fail:
	writepool_free(p);
	return (NULL);
}

void
writepool_free(struct writepool *p)
{
	struct wreq *w;
	int	     i;

	if (p == NULL)
		return;
	worker_free(p->worker);
	for (i = 0; i < p->nthreads; i++)
		k8s_client_free(p->clients[i]);
	while ((w = TAILQ_FIRST(&p->waiting)) != NULL) {
		TAILQ_REMOVE(&p->waiting, w, entry);
		atomic_fetch_sub(&bstats.writes_waiting, 1);
		wreq_free(w);
	}
	free(p->clients);
	free(p);
}

void
writepool_submit(struct writepool *p, struct wreq *w)
{
	worker_lock(p->worker);
	/* An extender call waits for it (kube-scheduler): it goes first. */
	if (w->kind == WREQ_EXTBIND)
		TAILQ_INSERT_HEAD(&p->waiting, w, entry);
	else
		TAILQ_INSERT_TAIL(&p->waiting, w, entry);
	atomic_fetch_add(&bstats.writes_waiting, 1);
	worker_wake(p->worker);
	worker_unlock(p->worker);
}
