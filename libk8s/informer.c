/*
 * The informer: one thread per watched collection.  It lists (paginated),
 * then watches from the list's resourceVersion with bookmarks, re-watches
 * when the server ends the stream, and relists on 410 Gone (HTTP status or
 * in-stream ERROR) and after any other error with jittered exponential
 * backoff.  It keeps a keyed store (ns/name -> object) so that a relist can
 * report objects that vanished while it was disconnected as synthetic
 * deletes.  The thread owns the store, its client and its parser; the only
 * shared fields are the stop flag and the counters, which are atomic.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "k8s_private.h"
#include "log.h"

#define INF_BACKOFF_MIN_MS	250
#define INF_BACKOFF_MAX_MS	30000
#define INF_LIST_LIMIT		500

struct k8s_informer {
	const struct k8s_config	*conf;
	char			*path;
	char			*field_selector;
	char			*label_selector;
	char			*name;
	int			 timeout;
	k8s_informer_cb		 cb;
	void			(*transform)(json_t *);
	void			*arg;

	pthread_t		 thread;
	int			 started;
	atomic_int		 stop;
	atomic_uint_fast64_t	 relists;
	atomic_uint_fast64_t	 restarts;

	/* owned by the thread */
	struct k8s_client	*client;
	struct k8s_watch_parser	*parser;
	json_t			*store;		/* key -> object */
	char			*rv;		/* last resourceVersion seen */
	int			 gone;		/* a 410 arrived in-stream */
	struct k8s_error	 werr;		/* error raised inside the stream */
};

struct k8s_informer *
k8s_informer_new(const struct k8s_config *conf,
    const struct k8s_informer_opts *o, k8s_informer_cb cb, void *arg)
{
	struct k8s_informer	*inf;

	inf = xcalloc(1, sizeof(*inf));
	inf->conf = conf;
	inf->path = xstrdup(o->path);
	if (o->field_selector != NULL)
		inf->field_selector = k8s_urlencode(o->field_selector);
	if (o->label_selector != NULL)
		inf->label_selector = k8s_urlencode(o->label_selector);
	inf->name = xstrdup(o->name != NULL ? o->name : "informer");
	inf->timeout = o->timeout_seconds > 0 ? o->timeout_seconds : 300;
	inf->transform = o->transform;
	inf->cb = cb;
	inf->arg = arg;
	atomic_init(&inf->stop, 0);
	atomic_init(&inf->relists, 0);
	atomic_init(&inf->restarts, 0);
	inf->store = json_object();
	return (inf);
}

void
k8s_informer_free(struct k8s_informer *inf)
{
	if (inf == NULL)
		return;
	if (inf->started)
		k8s_informer_stop(inf);
	free(inf->path);
	free(inf->field_selector);
	free(inf->label_selector);
	free(inf->name);
	free(inf->rv);
	json_decref(inf->store);
	free(inf);
}

uint64_t
k8s_informer_relists(const struct k8s_informer *inf)
{
	return (atomic_load(&((struct k8s_informer *)(uintptr_t)inf)->relists));
}

uint64_t
k8s_informer_restarts(const struct k8s_informer *inf)
{
	return (atomic_load(
	    &((struct k8s_informer *)(uintptr_t)inf)->restarts));
}

static int
informer_stopping(void *arg)
{
	struct k8s_informer	*inf = arg;

	return (atomic_load(&inf->stop));
}

/* Sleeps up to ms, waking early when asked to stop. */
static void
informer_sleep(struct k8s_informer *inf, long ms)
{
	struct timespec	ts;

	while (ms > 0 && !atomic_load(&inf->stop)) {
		ts.tv_sec = 0;
		ts.tv_nsec = (ms > 50 ? 50 : ms) * 1000000L;
		nanosleep(&ts, NULL);
		ms -= 50;
	}
}

/*
 * Drops metadata.managedFields: the API server's record of which client
 * wrote which field, often the largest part of an object, and read by
 * nobody here.  With thousands of pods it is most of the memory.
 */
static void
informer_trim(struct k8s_informer *inf, json_t *obj)
{
	json_object_del(json_object_get(obj, "metadata"), "managedFields");
	if (inf->transform != NULL)
		inf->transform(obj);
}

/* Builds "<path>?<params>&fieldSelector=..&labelSelector=..". */
static char *
informer_url(struct k8s_informer *inf, const char *params)
{
	struct buf	b;

	buf_init(&b);
	buf_printf(&b, "%s?%s", inf->path, params);
	if (inf->field_selector != NULL)
		buf_printf(&b, "&fieldSelector=%s", inf->field_selector);
	if (inf->label_selector != NULL)
		buf_printf(&b, "&labelSelector=%s", inf->label_selector);
	return (buf_release(&b));
}

static void
informer_set_rv(struct k8s_informer *inf, const char *rv)
{
	if (rv == NULL || *rv == '\0')
		return;
	free(inf->rv);
	inf->rv = xstrdup(rv);
}

/* Delivers an event: the callback gets its own reference to obj. */
static void
informer_deliver(struct k8s_informer *inf, enum k8s_event_type t,
    json_t *obj, const json_t *old)
{
	json_incref(obj);
	inf->cb(t, obj, old, inf->arg);
}

/*
 * List items carry no kind or apiVersion; watch events do.  Fill them in
 * from the list ("PodList" -> "Pod") so consumers see one shape.
 */
static void
informer_typemeta(const json_t *list, json_t *item)
{
	const char	*kind = json_string_value(json_object_get(list, "kind"));
	const char	*av = json_string_value(json_object_get(list,
			    "apiVersion"));
	size_t		 n;

	if (kind != NULL && json_object_get(item, "kind") == NULL &&
	    (n = strlen(kind)) > 4 && strcmp(kind + n - 4, "List") == 0)
		json_object_set_new(item, "kind", json_stringn(kind, n - 4));
	if (av != NULL && json_object_get(item, "apiVersion") == NULL)
		json_object_set_new(item, "apiVersion", json_string(av));
}

/*
 * Lists the collection page by page into a fresh store, delivering adds and
 * updates against the old store and synthetic deletes for what vanished.
 */
static int
informer_list(struct k8s_informer *inf, struct k8s_error *err)
{
	json_t		*fresh, *resp = NULL, *items, *item, *old;
	char		*url, *cont = NULL, params[1024], key[512];
	const char	*rv, *c, *k;
	const char	*orv, *nrv;
	size_t		 i;
	void		*tmp;

	fresh = json_object();
	for (;;) {
		if (cont != NULL) {
			char *enc = k8s_urlencode(cont);
			snprintf(params, sizeof(params), "limit=%d&continue=%s",
			    INF_LIST_LIMIT, enc);
			free(enc);
		} else
			snprintf(params, sizeof(params), "limit=%d",
			    INF_LIST_LIMIT);
		url = informer_url(inf, params);
		if (k8s_get(inf->client, url, &resp, err) == -1) {
			free(url);
			goto fail;
		}
		free(url);
		items = json_object_get(resp, "items");
		json_array_foreach(items, i, item) {
			informer_typemeta(resp, item);
			informer_trim(inf, item);
			k8s_obj_key(item, key, sizeof(key));
			json_object_set(fresh, key, item);
		}
		rv = k8s_obj_str(resp, "metadata.resourceVersion");
		c = k8s_obj_str(resp, "metadata.continue");
		free(cont);
		cont = c != NULL && *c != '\0' ? xstrdup(c) : NULL;
		if (cont == NULL) {
			informer_set_rv(inf, rv);
			break;
		}
		json_decref(resp);
		resp = NULL;
		if (atomic_load(&inf->stop)) {
			k8s_error_set(err, 0, "Stopped", "stopped by caller");
			goto fail;
		}
	}
	json_decref(resp);
	atomic_fetch_add(&inf->relists, 1);

	json_object_foreach(fresh, k, item) {
		old = json_object_get(inf->store, k);
		if (old == NULL)
			informer_deliver(inf, K8S_EVENT_ADDED, item, NULL);
		else {
			orv = k8s_obj_str(old, "metadata.resourceVersion");
			nrv = k8s_obj_str(item, "metadata.resourceVersion");
			if (orv == NULL || nrv == NULL || strcmp(orv, nrv) != 0)
				informer_deliver(inf, K8S_EVENT_MODIFIED,
				    item, old);
		}
	}
	json_object_foreach_safe(inf->store, tmp, k, old) {
		if (json_object_get(fresh, k) == NULL)
			informer_deliver(inf, K8S_EVENT_DELETED, old, NULL);
	}
	json_decref(inf->store);
	inf->store = fresh;
	inf->cb(K8S_EVENT_SYNCED, NULL, NULL, inf->arg);
	return (0);
 fail:
	free(cont);
	json_decref(resp);
	json_decref(fresh);
	return (-1);
}

/* Applies one watch event to the store and delivers it. */
static int
informer_event_cb(enum k8s_event_type t, json_t *obj, void *arg)
{
	struct k8s_informer	*inf = arg;
	json_t			*old;
	char			 key[512];
	json_int_t		 code;

	switch (t) {
	case K8S_EVENT_BOOKMARK:
		informer_set_rv(inf, k8s_obj_str(obj,
		    "metadata.resourceVersion"));
		break;
	case K8S_EVENT_ERROR:
		/* The object of an ERROR event is a metav1.Status. */
		code = json_integer_value(json_object_get(obj, "code"));
		k8s_error_from_status_obj(&inf->werr, (long)code, obj,
		    "watch error");
		if (code == 410)
			inf->gone = 1;
		json_decref(obj);
		return (-1);
	case K8S_EVENT_ADDED:
	case K8S_EVENT_MODIFIED:
		k8s_obj_key(obj, key, sizeof(key));
		informer_set_rv(inf, k8s_obj_str(obj,
		    "metadata.resourceVersion"));
		informer_trim(inf, obj);
		old = json_object_get(inf->store, key);
		json_incref(old);
		json_object_set(inf->store, key, obj);
		inf->cb(old == NULL ? K8S_EVENT_ADDED : K8S_EVENT_MODIFIED,
		    obj, old, inf->arg);
		json_decref(old);
		return (0);
	case K8S_EVENT_DELETED:
		k8s_obj_key(obj, key, sizeof(key));
		informer_set_rv(inf, k8s_obj_str(obj,
		    "metadata.resourceVersion"));
		json_object_del(inf->store, key);
		inf->cb(K8S_EVENT_DELETED, obj, NULL, inf->arg);
		return (0);
	default:
		break;
	}
	json_decref(obj);
	return (0);
}

struct watch_write {
	struct k8s_informer	*inf;
	int			 failed;
};

static size_t
informer_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct watch_write	*w = arg;

	if (k8s_watch_parser_feed(w->inf->parser, p, size * n,
	    informer_event_cb, w->inf, &w->inf->werr) == -1) {
		w->failed = 1;
		return (0);	/* makes curl end the transfer */
	}
	return (size * n);
}

/* Watches from inf->rv until the stream ends.  0: re-watch; -1: relist. */
static int
informer_watch(struct k8s_informer *inf, struct k8s_error *err)
{
	struct watch_write	 w = { inf, 0 };
	char			 params[512], *url, *enc;
	int			 rc;

	enc = k8s_urlencode(inf->rv != NULL ? inf->rv : "0");
	snprintf(params, sizeof(params), "watch=1&allowWatchBookmarks=true"
	    "&resourceVersion=%s&timeoutSeconds=%d", enc, inf->timeout);
	free(enc);
	url = informer_url(inf, params);
	inf->gone = 0;
	memset(&inf->werr, 0, sizeof(inf->werr));
	k8s_watch_parser_free(inf->parser);
	inf->parser = k8s_watch_parser_new(0);
	/* A watch lasts up to timeoutSeconds; never cut it short. */
	k8s_client_set_timeout(inf->client, 0);
	rc = k8s_stream(inf->client, url, informer_write_cb, &w,
	    informer_stopping, inf, err);
	k8s_client_set_timeout(inf->client, 30000);
	free(url);
	atomic_fetch_add(&inf->restarts, 1);
	if (w.failed) {
		*err = inf->werr;
		return (-1);
	}
	if (rc == -1)
		return (-1);
	if (k8s_watch_parser_pending(inf->parser) > 0) {
		k8s_error_set(err, 0, "BadWatchEvent",
		    "watch stream ended inside an event (%zu bytes)",
		    k8s_watch_parser_pending(inf->parser));
		return (-1);
	}
	return (0);
}

static void *
informer_main(void *arg)
{
	struct k8s_informer	*inf = arg;
	struct k8s_error	 err;
	long			 backoff = 0, ms;
	int			 need_list = 1;

	log_setname(inf->name);
	while (!atomic_load(&inf->stop)) {
		if (need_list) {
			if (informer_list(inf, &err) == -1) {
				if (atomic_load(&inf->stop))
					break;
				log_warnx("%s: list failed: %ld %s: %s",
				    inf->path, err.status, err.reason,
				    err.text);
				goto backoff;
			}
			need_list = 0;
			backoff = 0;
		}
		if (informer_watch(inf, &err) == 0)
			continue;	/* server ended the watch: re-watch */
		if (atomic_load(&inf->stop))
			break;
		need_list = 1;
		if (inf->gone || err.status == 410) {
			log_info("%s: resourceVersion %s is gone, relisting",
			    inf->path, inf->rv != NULL ? inf->rv : "-");
			continue;
		}
		log_warnx("%s: watch failed: %ld %s: %s", inf->path,
		    err.status, err.reason, err.text);
 backoff:
		backoff = backoff == 0 ? INF_BACKOFF_MIN_MS : backoff * 2;
		if (backoff > INF_BACKOFF_MAX_MS)
			backoff = INF_BACKOFF_MAX_MS;
		/* Jitter spreads the relists of many informers. */
		ms = backoff / 2 + random() % (backoff / 2 + 1);
		informer_sleep(inf, ms);
	}
	return (NULL);
}

int
k8s_informer_start(struct k8s_informer *inf)
{
	struct k8s_error	err;

	if ((inf->client = k8s_client_new(inf->conf, &err)) == NULL)
		return (-1);
	/* Watches are long-lived and lists are rare: no client throttling. */
	k8s_client_set_rate(inf->client, 0, 1);
	if ((errno = pthread_create(&inf->thread, NULL, informer_main, inf))
	    != 0) {
		k8s_client_free(inf->client);
		inf->client = NULL;
		return (-1);
	}
	inf->started = 1;
	return (0);
}

void
k8s_informer_cancel(struct k8s_informer *inf)
{
	atomic_store(&inf->stop, 1);
}

void
k8s_informer_stop(struct k8s_informer *inf)
{
	if (!inf->started)
		return;
	atomic_store(&inf->stop, 1);
	pthread_join(inf->thread, NULL);
	inf->started = 0;
	k8s_client_free(inf->client);
	inf->client = NULL;
	k8s_watch_parser_free(inf->parser);
	inf->parser = NULL;
}
