/*
 * Events off the reconcile thread: writes_event hands each Event to one of
 * a few lanes, each a thread that owns its own client and recorder
 * (de-duplication included) and posts its Events in order.  The reconcile thread never waits for an Event,
 * so its binds and patches are not queued behind them.  The queue is
 * bounded; when the API server cannot keep up, Events are dropped, counted
 * and logged, never the scheduling work.
 *
 * Threads: eventer, reconcile.
 */
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

#define EVENTER_MAX 4096 /* queued Events per lane before dropping */
/*
 * Lanes, each a thread with its own client and recorder: one Event is one
 * round trip, and a single lane posted about 70 a second under load, far
 * behind the binds.  An object's Events all take the same lane, so they
 * stay in order and its recorder de-duplicates them.
 */
#define EVENTER_LANES 4

struct ev_item {
	json_t *obj; /* the object's identity, a copy */
	char   *type, *reason, *action, *note;
	TAILQ_ENTRY(ev_item) entry;
};

struct eventer;

struct ev_lane {
	struct eventer *ev;
	struct worker  *worker; /* one thread; its lock guards what follows */
	/* cppcheck-suppress unusedStructMember ; TAILQ_* use its fields */
	TAILQ_HEAD(, ev_item) items;
	size_t		     n;
	unsigned long	     dropped;
	struct k8s_client   *client; /* the thread's own */
	struct k8s_recorder *rec;
};

struct eventer {
	const struct k8s_config *kconf;
	struct k8s_limiter	*lim; /* shared with the writepool */
	char			*controller, *instance;
	struct ev_lane		 lanes[EVENTER_LANES];
};

static void
ev_item_free(struct ev_item *it)
{
	json_decref(it->obj);
	free(it->type);
	free(it->reason);
	free(it->action);
	free(it->note);
	free(it);
}

/* The lane's thread makes its own client and recorder, or stops all. */
static int
eventer_init(void *owner, int i)
{
	struct ev_lane	*l = owner;
	struct eventer	*ev = l->ev;
	struct k8s_error err;

	(void)i;
	if ((l->client = k8s_client_new(ev->kconf, &err)) == NULL) {
		fail_thread("events", "client: %s", err.text);
		return (-1);
	}
	/* The scheduler's one API rate, not a client's private 50 qps. */
	k8s_client_set_limiter(l->client, ev->lim);
	l->rec = k8s_recorder_new(l->client, ev->controller, ev->instance);
	return (0);
}

static void
eventer_fini(void *owner, int i)
{
	struct ev_lane *l = owner;

	(void)i;
	k8s_recorder_free(l->rec);
	k8s_client_free(l->client);
}

static void *
eventer_take(void *owner)
{
	struct ev_lane *l = owner;
	struct ev_item *it;

	if ((it = TAILQ_FIRST(&l->items)) == NULL)
		return (NULL);
	TAILQ_REMOVE(&l->items, it, entry);
	l->n--;
	atomic_fetch_sub(&bstats.events_queued, 1);
	return (it);
}

static void
eventer_run(void *owner, int i, void *job)
{
	struct ev_lane	*l = owner;
	struct ev_item	*it = job;
	struct k8s_error err;

	(void)i;
	if (k8s_recorder_post(l->rec, it->obj, it->type, it->reason, it->action,
		&err, "%s", it->note) == -1)
		log_warnx("%s/%s: event %s: %ld %s: %s",
		    k8s_obj_namespace(it->obj), k8s_obj_name(it->obj),
		    it->reason, err.status, err.reason, err.text);
	ev_item_free(it);
}

static const struct worker_policy eventer_policy = {
	.name = "eventer",
	.take = eventer_take,
	.run = eventer_run,
	.init = eventer_init,
	.fini = eventer_fini,
};

struct eventer *
eventer_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    const char *controller, const char *instance)
{
	struct eventer *ev = xcalloc(1, sizeof(*ev));
	struct ev_lane *l;
	int		i;

	ev->kconf = kconf;
	ev->lim = lim;
	ev->controller = xstrdup(controller);
	ev->instance = xstrdup(instance);
	for (i = 0; i < EVENTER_LANES; i++) {
		l = &ev->lanes[i];
		l->ev = ev;
		TAILQ_INIT(&l->items);
		if ((l->worker = worker_new(&eventer_policy, l, 1)) == NULL)
			fatalx("eventer: pthread_create");
	}
	return (ev);
}

/* The lane of an object: by its name, so all its Events share one. */
static struct ev_lane *
eventer_lane(struct eventer *ev, const json_t *id)
{
	const char *s = k8s_obj_name(id);
	unsigned    h = 5381;

	while (s != NULL && *s != '\0')
		h = h * 33 + (unsigned char)*s++;
	return (&ev->lanes[h % EVENTER_LANES]);
}

void
eventer_post(struct eventer *ev, json_t *id, const char *type,
    const char *reason, const char *action, const char *note)
{
	struct ev_item *it;
	struct ev_lane *l;

	if (id == NULL)
		return;
	it = xcalloc(1, sizeof(*it));
	it->obj = id;
	it->type = xstrdup(type);
	it->reason = xstrdup(reason);
	it->action = xstrdup(action);
	it->note = xstrdup(note);
	l = eventer_lane(ev, id);
	worker_lock(l->worker);
	if (l->n >= EVENTER_MAX) {
		if (l->dropped++ % 1000 == 0)
			log_warnx("events: %zu queued; dropping (%lu so far)",
			    l->n, l->dropped);
		worker_unlock(l->worker);
		ev_item_free(it);
		return;
	}
	TAILQ_INSERT_TAIL(&l->items, it, entry);
	l->n++;
	atomic_fetch_add(&bstats.events_queued, 1);
	worker_wake(l->worker);
	worker_unlock(l->worker);
}

void
eventer_free(struct eventer *ev)
{
	struct ev_item *it;
	struct ev_lane *l;
	int		i;

	if (ev == NULL)
		return;
	/* What is left is dropped: Events are best effort. */
	for (i = 0; i < EVENTER_LANES; i++) {
		l = &ev->lanes[i];
		worker_free(l->worker);
		while ((it = TAILQ_FIRST(&l->items)) != NULL) {
			TAILQ_REMOVE(&l->items, it, entry);
			ev_item_free(it);
		}
	}
	free(ev->controller);
	free(ev->instance);
	free(ev);
}
