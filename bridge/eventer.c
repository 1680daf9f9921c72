/*
 * Events off the reconcile thread: writer_event hands each Event to this
 * thread, which owns its own client and recorder (de-duplication included)
 * and posts them in order.  The reconcile thread never waits for an Event,
 * so its binds and patches are not queued behind them.  The queue is
 * bounded; when the API server cannot keep up, Events are dropped, counted
 * and logged, never the scheduling work.
 */
#include <sys/queue.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

#define EVENTER_MAX	4096	/* queued Events before dropping */

struct ev_item {
	json_t			*obj;	/* the object's identity, a copy */
	char			*type, *reason, *action, *note;
	TAILQ_ENTRY(ev_item)	 entry;
};

struct eventer {
	const struct k8s_config	*kconf;
	struct k8s_limiter	*lim;		/* shared with the writers */
	char			*controller, *instance;
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	TAILQ_HEAD(, ev_item)	 items;
	size_t			 n;
	int			 stop;
	unsigned long		 dropped;
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

static void *
eventer_main(void *arg)
{
	struct eventer		*ev = arg;
	struct k8s_client	*c;
	struct k8s_recorder	*rec;
	struct k8s_error	 err;
	struct ev_item		*it;

	log_setname("events");
	if ((c = k8s_client_new(ev->kconf, &err)) == NULL) {
		log_warnx("events: client: %s", err.text);
		return (NULL);
	}
	/* The scheduler's one API rate, not a client's private 50 qps. */
	k8s_client_set_limiter(c, ev->lim);
	rec = k8s_recorder_new(c, ev->controller, ev->instance);
	for (;;) {
		pthread_mutex_lock(&ev->lock);
		while (TAILQ_EMPTY(&ev->items) && !ev->stop)
			pthread_cond_wait(&ev->cond, &ev->lock);
		if (ev->stop) {
			/* What is left is dropped: Events are best effort. */
			pthread_mutex_unlock(&ev->lock);
			break;
		}
		it = TAILQ_FIRST(&ev->items);
		TAILQ_REMOVE(&ev->items, it, entry);
		ev->n--;
		pthread_mutex_unlock(&ev->lock);
		if (k8s_event_record(rec, it->obj, it->type, it->reason,
		    it->action, &err, "%s", it->note) == -1)
			log_warnx("%s/%s: event %s: %ld %s: %s",
			    k8s_obj_namespace(it->obj), k8s_obj_name(it->obj),
			    it->reason, err.status, err.reason, err.text);
		ev_item_free(it);
	}
	k8s_recorder_free(rec);
	k8s_client_free(c);
	return (NULL);
}

struct eventer *
eventer_new(const struct k8s_config *kconf, struct k8s_limiter *lim,
    const char *controller, const char *instance)
{
	struct eventer	*ev = xcalloc(1, sizeof(*ev));

	ev->kconf = kconf;
	ev->lim = lim;
	ev->controller = xstrdup(controller);
	ev->instance = xstrdup(instance);
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	TAILQ_INIT(&ev->items);
	if (pthread_create(&ev->thread, NULL, eventer_main, ev) != 0)
		fatalx("eventer: pthread_create");
	return (ev);
}

void
eventer_post(struct eventer *ev, const json_t *obj, const char *type,
    const char *reason, const char *action, const char *note)
{
	struct ev_item	*it;
	json_t		*md = json_object_get(obj, "metadata"), *id;

	/* Only what an Event names: kind, apiVersion and the metadata ids. */
	id = json_pack("{s:O?, s:O?, s:{s:O?, s:O?, s:O?, s:O?}}",
	    "kind", json_object_get(obj, "kind"),
	    "apiVersion", json_object_get(obj, "apiVersion"),
	    "metadata", "name", json_object_get(md, "name"),
	    "namespace", json_object_get(md, "namespace"),
	    "uid", json_object_get(md, "uid"),
	    "resourceVersion", json_object_get(md, "resourceVersion"));
	if (id == NULL)
		return;
	it = xcalloc(1, sizeof(*it));
	it->obj = id;
	it->type = xstrdup(type);
	it->reason = xstrdup(reason);
	it->action = xstrdup(action);
	it->note = xstrdup(note);
	pthread_mutex_lock(&ev->lock);
	if (ev->n >= EVENTER_MAX) {
		if (ev->dropped++ % 1000 == 0)
			log_warnx("events: %zu queued; dropping (%lu so far)",
			    ev->n, ev->dropped);
		pthread_mutex_unlock(&ev->lock);
		ev_item_free(it);
		return;
	}
	TAILQ_INSERT_TAIL(&ev->items, it, entry);
	ev->n++;
	pthread_cond_signal(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

void
eventer_free(struct eventer *ev)
{
	struct ev_item	*it;

	if (ev == NULL)
		return;
	pthread_mutex_lock(&ev->lock);
	ev->stop = 1;
	pthread_cond_signal(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
	pthread_join(ev->thread, NULL);
	while ((it = TAILQ_FIRST(&ev->items)) != NULL) {
		TAILQ_REMOVE(&ev->items, it, entry);
		ev_item_free(it);
	}
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	free(ev->controller);
	free(ev->instance);
	free(ev);
}
