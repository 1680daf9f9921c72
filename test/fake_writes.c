/*
 * The bridge's writes to Kubernetes, for the group tests: the writepool
 * (writepool.c) holds each request until the test answers it, as an
 * MSG_WRITE message to the reconcile thread's own handler; the Event poster
 * (eventer.c) and libk8s's requests (the reconcile thread's own client
 * writes only node taints) only log.
 * Every write lands in one log the tests count.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"
#include "fakes.h"

static const char *const fw_names[FW_KINDS] = { "bind", "cond", "meta",
	"release", "unlabel", "delete", "force", "fail", "node", "other" };

static struct {
	json_t *writes; /* [{w, pod, msg, node, sync}] */
	json_t *events; /* [{event, pod, note}] */
	json_t *conds;	/* pod key -> last message asked */
} fw;

struct writepool {
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, wreq) waiting;
};

struct eventer {
	int unused;
};

static void
fw_init(void)
{
	if (fw.writes == NULL) {
		fw.writes = json_array();
		fw.events = json_array();
		fw.conds = json_object();
	}
}

void
fake_writes_reset(void)
{
	json_decref(fw.writes);
	json_decref(fw.events);
	json_decref(fw.conds);
	memset(&fw, 0, sizeof(fw));
	fw_init();
}

static void
fw_log(enum fake_write kind, const char *pkey, const char *msg,
    const char *node, int sync)
{
	fw_init();
	json_array_append_new(fw.writes,
	    json_pack("{s:s, s:s, s:s?, s:s?, "
		      "s:b}",
		"w", fw_names[kind], "pod", pkey, "msg", msg, "node", node,
		"sync", sync));
	if (kind == FW_COND)
		json_object_set_new(fw.conds, pkey, json_string(msg));
}

int
fake_writes_count(enum fake_write kind)
{
	json_t *v;
	size_t	i;
	int	n = 0;

	fw_init();
	json_array_foreach (fw.writes, i, v)
		if (strcmp(json_string_value(json_object_get(v, "w")),
			fw_names[kind]) == 0)
			n++;
	return (n);
}

int
fake_events_count(const char *reason)
{
	json_t *v;
	size_t	i;
	int	n = 0;

	fw_init();
	json_array_foreach (fw.events, i, v)
		if (strcmp(json_string_value(json_object_get(v, "event")),
			reason) == 0)
			n++;
	return (n);
}

json_t *
fake_writes_log(void)
{
	fw_init();
	return (fw.writes);
}

json_t *
fake_events_log(void)
{
	fw_init();
	return (fw.events);
}

const char *
fake_writes_cond(const char *pkey)
{
	fw_init();
	return (json_string_value(json_object_get(fw.conds, pkey)));
}

/* Does a metadata patch take the job id label off? */
static int
fw_unlabels(const json_t *body)
{
	json_t *labels = json_object_get(json_object_get(body, "metadata"),
	    "labels");

	return (labels != NULL &&
	    json_is_null(json_object_get(labels, LABEL_JOBID)));
}

/* --- writepool.c ------------------------------------------------------- */

struct writepool *
writepool_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    int nthreads, struct queue *done, char *err, size_t errlen)
{
	struct writepool *p = xcalloc(1, sizeof(*p));

	(void)kconf;
	(void)lim;
	(void)nthreads;
	(void)done;
	if (errlen > 0)
		err[0] = '\0'; /* never fails */
	TAILQ_INIT(&p->waiting);
	return (p);
}

void
writepool_free(struct writepool *p)
{
	struct wreq *w;

	if (p == NULL)
		return;
	while ((w = TAILQ_FIRST(&p->waiting)) != NULL) {
		TAILQ_REMOVE(&p->waiting, w, entry);
		wreq_free(w);
	}
	free(p);
}

void
writepool_submit(struct writepool *p, struct wreq *w)
{
	enum fake_write kind;

	switch (w->kind) {
	case WREQ_BIND:
		kind = FW_BIND;
		break;
	case WREQ_STATUS:
		kind = FW_COND;
		break;
	case WREQ_METADATA:
		kind = fw_unlabels(w->body) ? FW_UNLABEL : FW_META;
		break;
	case WREQ_RELEASE:
		kind = FW_RELEASE;
		break;
	case WREQ_DELETE:
		/* The force delete: grace 0 with the UID as precondition. */
		kind = json_object_get(w->body, "gracePeriodSeconds") != NULL &&
			json_integer_value(json_object_get(w->body,
			    "gracePeriodSeconds")) == 0 ?
		    FW_FORCE :
		    FW_DELETE;
		break;
	case WREQ_PREEMPT:
		/* A delete, after DisruptionTarget (the message says so). */
		kind = FW_DELETE;
		break;
	case WREQ_FAIL:
		kind = FW_FAIL;
		break;
	default:
		kind = FW_OTHER;
		break;
	}
	fw_log(kind, w->pkey, w->msg, w->node, 0);
	/* The UID a delete is for (its precondition), if it names one. */
	if (w->kind == WREQ_DELETE &&
	    k8s_obj_get(w->body, "preconditions.uid") != NULL)
		json_object_set(json_array_get(fw.writes,
				    json_array_size(fw.writes) - 1),
		    "uid", k8s_obj_get(w->body, "preconditions.uid"));
	/* The grace period a delete asked for, if it named one. */
	if ((kind == FW_DELETE &&
		json_object_get(w->body, "gracePeriodSeconds") != NULL) ||
	    w->kind == WREQ_PREEMPT)
		json_object_set_new(json_array_get(fw.writes,
					json_array_size(fw.writes) - 1),
		    "grace",
		    json_integer(w->kind == WREQ_PREEMPT ?
			    w->grace :
			    json_integer_value(json_object_get(w->body,
				"gracePeriodSeconds"))));
	TAILQ_INSERT_TAIL(&p->waiting, w, entry);
}

size_t
fake_writes_waiting(struct writepool *p)
{
	struct wreq *w;
	size_t	     n = 0;

	TAILQ_FOREACH (w, &p->waiting, entry)
		n++;
	return (n);
}

size_t
fake_writes_answer(struct writepool *p, struct reconcile *r, long status,
    void (*landed)(const struct wreq *, void *), void *arg)
{
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, wreq) now;
	struct msg  *msg;
	struct wreq *w;
	size_t	     n = 0;

	/* Those waiting now: the answers' own writes wait for the next. */
	TAILQ_INIT(&now);
	TAILQ_CONCAT(&now, &p->waiting, entry);
	while ((w = TAILQ_FIRST(&now)) != NULL) {
		TAILQ_REMOVE(&now, w, entry);
		if (status == 0) {
			w->rc = 0;
			if (landed != NULL)
				landed(w, arg);
		} else {
			w->rc = -1;
			w->err.status = status;
			snprintf(w->err.reason, sizeof(w->err.reason), "%s",
			    status == 404 ? "NotFound" : "InternalError");
			snprintf(w->err.text, sizeof(w->err.text), "fake %ld",
			    status);
		}
		msg = xcalloc(1, sizeof(*msg));
		msg->kind = MSG_WRITE;
		msg->write = w;
		reconcile_msg(r, msg);
		n++;
	}
	return (n);
}

/* --- eventer.c --------------------------------------------------------- */

struct eventer *
eventer_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    const char *controller, const char *instance)
{
	(void)kconf;
	(void)lim;
	(void)controller;
	(void)instance;
	return (xcalloc(1, sizeof(struct eventer)));
}

void
eventer_free(struct eventer *msg)
{
	free(msg);
}

void
eventer_post(struct eventer *msg, json_t *id, const char *type,
    const char *reason, const char *action, const char *note)
{
	char key[512];

	(void)msg;
	(void)type;
	(void)action;
	fw_init();
	snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(id),
	    k8s_obj_name(id));
	json_array_append_new(fw.events,
	    json_pack("{s:s, s:s, s:s?}", "event", reason, "pod", key, "note",
		note));
	json_decref(id);
}

/* --- libk8s's requests, as the reconcile thread's own client makes them -- */

/* "ns/name" of a pod path "/api/v1/namespaces/NS/pods/NAME[/sub]". */
static const char *
fw_pod_key(const char *path, char *buf, size_t len)
{
	const char *ns, *p;
	char	   *sub;

	if (strncmp(path, "/api/v1/namespaces/", 19) != 0) {
		snprintf(buf, len, "%s", path);
		return (buf);
	}
	ns = path + 19;
	if ((p = strstr(ns, "/pods/")) == NULL) {
		snprintf(buf, len, "%s", path);
		return (buf);
	}
	snprintf(buf, len, "%.*s/%s", (int)(p - ns), ns, p + 6);
	/* Without a subresource ("/status"). */
	if ((sub = strchr(buf + (p - ns) + 1, '/')) != NULL)
		*sub = '\0';
	return (buf);
}

int
k8s_get(struct k8s_client *c, const char *path, json_t **out,
    struct k8s_error *err)
{
	(void)c;
	(void)path;
	*out = NULL;
	memset(err, 0, sizeof(*err));
	err->status = 404;
	return (-1);
}

int
k8s_create(struct k8s_client *c, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err)
{
	(void)c;
	(void)body;
	if (out != NULL)
		*out = NULL;
	fw_log(FW_OTHER, path, "create", NULL, 1);
	memset(err, 0, sizeof(*err));
	return (0);
}

int
k8s_update(struct k8s_client *c, const char *path, const json_t *body,
    json_t **out, struct k8s_error *err)
{
	(void)c;
	(void)body;
	if (out != NULL)
		*out = NULL;
	fw_log(FW_OTHER, path, "update", NULL, 1);
	memset(err, 0, sizeof(*err));
	return (0);
}

int
k8s_patch(struct k8s_client *c, const char *path, enum k8s_patch type,
    const json_t *patch, json_t **out, struct k8s_error *err)
{
	const char *phase = k8s_obj_str(patch, "status.phase");
	char	    key[512];

	(void)c;
	(void)type;
	if (out != NULL)
		*out = NULL;
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (strncmp(path, "/api/v1/nodes/", 14) == 0)
		fw_log(FW_NODE, path + 14, NULL, NULL, 1);
	else if (phase != NULL && strcmp(phase, "Failed") == 0)
		fw_log(FW_FAIL, fw_pod_key(path, key, sizeof(key)),
		    k8s_obj_str(patch, "status.message"), NULL, 1);
	else
		fw_log(fw_unlabels(patch) ? FW_UNLABEL : FW_META,
		    fw_pod_key(path, key, sizeof(key)), NULL, NULL, 1);
	return (0);
}

int
k8s_delete(struct k8s_client *c, const char *path, const json_t *opts,
    struct k8s_error *err)
{
	char key[512];

	(void)c;
	memset(err, 0, sizeof(*err));
	fw_log(opts != NULL &&
		    json_integer_value(
			json_object_get(opts, "gracePeriodSeconds")) == 0 &&
		    json_object_get(opts, "gracePeriodSeconds") != NULL ?
		FW_FORCE :
		FW_DELETE,
	    fw_pod_key(path, key, sizeof(key)), NULL, NULL, 1);
	return (0);
}

int
k8s_pod_bind(struct k8s_client *c, const char *ns, const char *name,
    const char *uid, const char *node, const json_t *annotations,
    struct k8s_error *err)
{
	char key[512];

	(void)c;
	(void)uid;
	(void)annotations;
	memset(err, 0, sizeof(*err));
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	fw_log(FW_BIND, key, NULL, node, 1);
	return (0);
}
