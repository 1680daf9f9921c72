/*
 * The message queue: informers, the submit, poll and end threads, the
 * writepool and HTTP threads push, the reconcile thread pops.  And what
 * the messages carry back: the requests the reconcile thread hands the
 * workers (sreq_*, ereq_*, wreq_*) and the extender calls HTTP threads
 * make (extcall_*), made and freed here, so the queue frees what it holds
 * without knowing the threads; and the lanes the submit and end threads'
 * requests wait in, a namespace at a time in turn (lanes_*).
 *
 * Threads: reconcile, HTTP, end, submit, writepool (queue_push,
 * wreq_condition_time, wreq_status_body), informer (queue_push), poll
 * (queue_push).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/time.h>
#include <stdio.h>

#include "map.h"
#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"

struct queue {
	pthread_mutex_t mtx;
	pthread_cond_t	cond;
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, msg) msgs;
	size_t len;
	int    closed;
};

struct queue *
queue_new(void)
{
	struct queue	  *q;
	pthread_condattr_t ca;

	q = xcalloc(1, sizeof(*q));
	pthread_mutex_init(&q->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	TAILQ_INIT(&q->msgs);
	return (q);
}

void
queue_msg_free(struct msg *msg)
{
	if (msg == NULL)
		return;
	json_decref(msg->obj);
	podrec_free(msg->pod);
	if (msg->call != NULL)
		extcall_release(msg->call);
	wreq_free(msg->write);
	sreq_free(msg->submit);
	sctl_load_free(msg->load);
	ereq_free(msg->end);
	free(msg);
}

void
queue_free(struct queue *q)
{
	struct msg *msg;

	if (q == NULL)
		return;
	while ((msg = TAILQ_FIRST(&q->msgs)) != NULL) {
		TAILQ_REMOVE(&q->msgs, msg, entry);
		queue_msg_free(msg);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mtx);
	free(q);
}

void
queue_push(struct queue *q, struct msg *msg)
{
	pthread_mutex_lock(&q->mtx);
	TAILQ_INSERT_TAIL(&q->msgs, msg, entry);
	q->len++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

struct msg *
queue_pop(struct queue *q, int timeout_ms)
{
	struct msg     *msg;
	struct timespec ts;

	clock_deadline_ms(&ts, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&q->mtx);
	while (!q->closed && TAILQ_EMPTY(&q->msgs)) {
		if (pthread_cond_timedwait(&q->cond, &q->mtx, &ts) == ETIMEDOUT)
			break;
	}
	if (q->closed || (msg = TAILQ_FIRST(&q->msgs)) == NULL) {
		pthread_mutex_unlock(&q->mtx);
		return (NULL);
	}
	TAILQ_REMOVE(&q->msgs, msg, entry);
	q->len--;
	pthread_mutex_unlock(&q->mtx);
	return (msg);
}

void
queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->mtx);
	q->closed = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mtx);
}

size_t
queue_len(struct queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mtx);
	n = q->len;
	pthread_mutex_unlock(&q->mtx);
	return (n);
}

/*
 * Requests waiting, one first-in-first-out lane per namespace, taken a
 * lane at a time in turn: so a tenant with thousands of requests waiting
 * delays another tenant's first request by one request per namespace
 * that has some waiting, not by its thousands.  Within a namespace the
 * order is the order of arrival.  A lane is made when its first request
 * comes and freed when its last is taken, so namespaces that come and go
 * leave nothing behind.  Not locked: its owner's lock guards it (the
 * submit threads' requests, submitter.c; the end thread's bulk cancels,
 * ender.c).
 */
struct lane {
	void	   **v; /* a ring of cap items, n of them from head */
	size_t	     head, n, cap;
	struct lane *next; /* the next lane's turn */
	char	     ns[]; /* the map's key, borrowed */
};

struct lanes {
	struct map  *byns; /* ns -> lane, keys borrowed from the lanes */
	struct lane *first, *last; /* lanes with items, in turn order */
	size_t	     count;	   /* items in all lanes */
};

struct lanes *
lanes_new(void)
{
	struct lanes *ls = xcalloc(1, sizeof(*ls));

	ls->byns = map_new_borrowed(NULL);
	return (ls);
}

/* l's turn comes after every other lane's. */
static void
lanes_append(struct lanes *ls, struct lane *l)
{
	if (ls->last != NULL)
		ls->last->next = l;
	else
		ls->first = l;
	ls->last = l;
}

void
lanes_free(struct lanes *ls, void (*free_cb)(void *))
{
	void *item;

	if (ls == NULL)
		return;
	/* Taking the last item of a lane frees the lane. */
	while ((item = lanes_take(ls)) != NULL)
		if (free_cb != NULL)
			free_cb(item);
	map_free(ls->byns);
	free(ls);
}

void
lanes_push(struct lanes *ls, const char *ns, void *item)
{
	struct lane *l;
	size_t	     i, len;
	void	   **v;

	if (ns == NULL)
		ns = "";
	if ((l = map_get(ls->byns, ns)) == NULL) {
		len = strlen(ns);
		l = xcalloc(1, sizeof(*l) + len + 1);
		memcpy(l->ns, ns, len + 1);
		map_put(ls->byns, l->ns, l);
		lanes_append(ls, l);
	}
	if (l->n == l->cap) {
		/* Unroll the ring into a larger one. */
		v = xcalloc(l->cap == 0 ? 4 : l->cap * 2, sizeof(*v));
		for (i = 0; i < l->n; i++)
			v[i] = l->v[(l->head + i) % l->cap];
		free(l->v);
		l->v = v;
		l->head = 0;
		l->cap = l->cap == 0 ? 4 : l->cap * 2;
	}
	l->v[(l->head + l->n) % l->cap] = item;
	l->n++;
	ls->count++;
}

/* An empty lane, out of the turns already, goes. */
static void
lanes_drop(struct lanes *ls, struct lane *l)
{
	map_del(ls->byns, l->ns);
	free(l->v);
	free(l);
}

void *
lanes_take(struct lanes *ls)
{
	struct lane *l;
	void	    *item;

	if ((l = ls->first) == NULL)
		return (NULL);
	item = l->v[l->head];
	l->head = (l->head + 1) % l->cap;
	l->n--;
	ls->count--;
	ls->first = l->next;
	l->next = NULL;
	if (ls->first == NULL)
		ls->last = NULL;
	if (l->n == 0)
		lanes_drop(ls, l);
	else
		lanes_append(ls, l); /* its next item waits its turn */
	return (item);
}

size_t
lanes_count(const struct lanes *ls)
{
	return (ls->count);
}

size_t
lanes_namespaces(const struct lanes *ls)
{
	return (map_count(ls->byns));
}

void *
lanes_remove(struct lanes *ls, int (*match)(const void *item, const void *arg),
    const void		  *arg)
{
	struct lane *l, *prev = NULL;
	size_t	     i, j;
	void	    *item;

	for (l = ls->first; l != NULL; prev = l, l = l->next)
		for (i = 0; i < l->n; i++) {
			item = l->v[(l->head + i) % l->cap];
			if (!match(item, arg))
				continue;
			/* The lane keeps its order and its turn. */
			for (j = i; j + 1 < l->n; j++)
				l->v[(l->head + j) % l->cap] =
				    l->v[(l->head + j + 1) % l->cap];
			l->n--;
			ls->count--;
			if (l->n == 0) {
				if (prev != NULL)
					prev->next = l->next;
				else
					ls->first = l->next;
				if (ls->last == l)
					ls->last = prev;
				lanes_drop(ls, l);
			}
			return (item);
		}
	return (NULL);
}

/*
 * An allocation request, which the reconcile thread hands to the submit
 * thread (submitter.c) and which comes back to it with its result as an
 * MSG_SUBMITTED message.
 */
struct sreq *
sreq_new(const char *gkey, const char *ns, uint32_t seq)
{
	struct sreq *s = xcalloc(1, sizeof(*s));

	s->gkey = xstrdup(gkey);
	s->ns = intern_get(ns);
	s->seq = seq;
	s->pods = json_array();
	return (s);
}

void
sreq_free(struct sreq *s)
{
	if (s == NULL)
		return;
	free(s->gkey);
	intern_put(s->ns);
	translate_jobspec_cleanup(&s->js);
	json_decref(s->pods);
	json_decref(s->layout);
	free(s);
}

/*
 * The end of a job whose pods ended, which the reconcile thread hands to
 * the end thread (ender.c) and which comes back to it with its result as
 * an MSG_ENDED message.
 */
struct ereq *
ereq_new(const char *gkey, uint32_t jobid)
{
	struct ereq *e = xcalloc(1, sizeof(*e));

	e->gkey = gkey != NULL ? xstrdup(gkey) : NULL;
	e->jobid = jobid;
	return (e);
}

void
ereq_free(struct ereq *e)
{
	if (e == NULL)
		return;
	free(e->gkey);
	free(e);
}

/*
 * A pod write request, which the reconcile thread hands to the writepool
 * (writepool.c) and which comes back to it with its result as an
 * MSG_WRITE message.
 */
struct wreq *
wreq_new_named(enum wreq_kind kind, const char *ns, const char *name,
    const char *uid)
{
	size_t	     nl, kl, ul;
	struct wreq *w;
	char	    *p;

	if (uid == NULL)
		uid = "";
	nl = strlen(ns) + 1;
	kl = nl + strlen(name) + 1;
	ul = strlen(uid) + 1;
	w = xcalloc(1, sizeof(*w) + nl + kl + ul);
	w->kind = kind;
	p = w->buf;
	memcpy(p, ns, nl);
	w->ns = p;
	p += nl;
	snprintf(p, kl, "%s/%s", ns, name);
	w->pkey = p;
	w->name = p + nl;
	p += kl;
	memcpy(p, uid, ul);
	w->uid = p;
	return (w);
}

struct wreq *
wreq_new(enum wreq_kind kind, const struct pod_entry *e, const char *gkey)
{
	struct wreq *w = wreq_new_named(kind, e->rec->ns, podrec_name(e->rec),
	    podrec_uid(e->rec));

	w->gkey = gkey != NULL ? xstrdup(gkey) : NULL;
	return (w);
}

void
wreq_free(struct wreq *w)
{
	if (w == NULL)
		return;
	free(w->gkey);
	free(w->node);
	free(w->slurm_node);
	free(w->gres);
	free(w->msg);
	free(w->path);
	if (w->call != NULL)
		extcall_release(w->call);
	json_decref(w->body);
	json_decref(w->claims);
	free(w);
}

void
wreq_condition_time(char *ts, size_t len, int64_t at)
{
	struct timeval tv = { (time_t)at, 0 };

	k8s_microtime(ts, len, at != 0 ? &tv : NULL);
	snprintf(ts + 19, len - 19, "Z");
}

json_t *
wreq_status_body(const struct wreq *w)
{
	char ts[64];

	wreq_condition_time(ts, sizeof(ts), w->at);
	return (json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status",
	    "conditions", "type", "PodScheduled", "status", "False", "reason",
	    "Unschedulable", "message", w->msg != NULL ? w->msg : "",
	    "lastTransitionTime", ts));
}

/*
 * Scheduler-extender calls: made on an HTTP thread (endpoints.c), queued
 * as a message, answered by the reconcile thread (extender.c), awaited by
 * the caller with a timeout.  Each call has two references, the caller's
 * and the message's
 * (and a third while a write for it is in flight), so a caller that gave
 * up waiting leaves nothing dangling.
 */
struct ext_call *
extcall_new(enum ext_op op)
{
	struct ext_call *c = xcalloc(1, sizeof(*c));

	c->op = op;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	atomic_init(&c->refs, 2);
	return (c);
}

struct ext_call *
extcall_hold(struct ext_call *c)
{
	atomic_fetch_add(&c->refs, 1);
	return (c);
}

void
extcall_release(struct ext_call *c)
{
	if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	json_decref(c->pod);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void
extcall_done(struct ext_call *c)
{
	pthread_mutex_lock(&c->lock);
	c->done = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

int
extcall_wait(struct ext_call *c, int ms)
{
	struct timespec ts;
	int		rc = 0;

	clock_deadline_ms(&ts, CLOCK_REALTIME, ms);
	pthread_mutex_lock(&c->lock);
	while (!c->done && rc == 0)
		rc = pthread_cond_timedwait(&c->cond, &c->lock, &ts);
	rc = c->done ? 0 : -1;
	pthread_mutex_unlock(&c->lock);
	return (rc);
}
