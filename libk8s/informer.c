/*
 * The informer: one thread per watched collection.  It lists (paginated),
 * then watches from the list's resourceVersion with bookmarks, re-watches
 * when the server ends the stream, and relists on 410 Gone (HTTP status or
 * in-stream ERROR) and after any other error with jittered exponential
 * backoff.  Its store keeps, per object, only the key and resourceVersion:
 * enough for a relist to tell changed objects from unchanged ones and to
 * report those that vanished while it was disconnected as synthetic
 * deletes.  A list page is decoded one item at a time as it arrives
 * (list.c), so what a page costs is its largest object, never the page.
 * The thread owns the store, its client and its parsers; the only shared
 * fields are the stop flag and the counters, which are atomic, and the
 * eventfd that wakes its backoff sleep when it is asked to stop.
 */
#include <sys/eventfd.h>

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "internal.h"
#include "map.h"
#include "log.h"

#define INF_BACKOFF_MIN_MS 250
#define INF_BACKOFF_MAX_MS 30000
#define INF_LIST_LIMIT	   500
/* A page is decoded as it arrives: its deadline covers the decoding too. */
#define INF_LIST_TIMEOUT_MS 120000
#define INF_TIMEOUT_MS	    30000

struct k8s_informer {
	const struct k8s_config *conf;
	char			*path;
	char			*field_selector;
	char			*label_selector;
	char			*name;
	int			 timeout;
	k8s_informer_cb		 cb;
	void			*arg;

	pthread_t	     thread;
	int		     started;
	atomic_int	     stop;
	int		     wakefd; /* eventfd: written when stop is set */
	atomic_uint_fast64_t relists;
	atomic_uint_fast64_t restarts;
	atomic_int	     listing;	  /* a list is being delivered */
	atomic_size_t	     store_count; /* published by the thread */
	atomic_size_t	     store_bytes;

	/* owned by the thread */
	struct k8s_client	*client;
	struct k8s_watch_parser *parser;
	struct map		*store; /* key -> struct inf_seen, borrowed */
	size_t			 seen_bytes; /* of the inf_seen values */
	uint64_t		 gen;	     /* of the current listing */
	char			*kind;	     /* of the list's items, or NULL */
	char			*api_version;
	char			*rv;   /* last resourceVersion seen */
	int			 gone; /* a 410 arrived in-stream */
	/* Listed once, or said to be not served (informer_unserved). */
	int		 told;
	struct k8s_error werr; /* error raised inside the stream */
};

struct k8s_informer *
k8s_informer_new(const struct k8s_config *conf,
    const struct k8s_informer_opts *o, k8s_informer_cb cb, void *arg)
{
	struct k8s_informer *inf;

	inf = xcalloc(1, sizeof(*inf));
	inf->conf = conf;
	inf->path = xstrdup(o->path);
	if (o->field_selector != NULL)
		inf->field_selector = k8s_urlencode(o->field_selector);
	if (o->label_selector != NULL)
		inf->label_selector = k8s_urlencode(o->label_selector);
	inf->name = xstrdup(o->name != NULL ? o->name : "informer");
	inf->timeout = o->timeout_seconds > 0 ? o->timeout_seconds : 300;
	inf->cb = cb;
	inf->arg = arg;
	atomic_init(&inf->stop, 0);
	inf->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	atomic_init(&inf->relists, 0);
	atomic_init(&inf->restarts, 0);
	inf->store = map_new_borrowed(free);
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
	free(inf->kind);
	free(inf->api_version);
	map_free(inf->store);
	if (inf->wakefd != -1)
		close(inf->wakefd);
	free(inf);
}

uint64_t
k8s_informer_relists(const struct k8s_informer *inf)
{
	return (atomic_load(&((struct k8s_informer *)(uintptr_t)inf)->relists));
}

int
k8s_informer_listing(const struct k8s_informer *inf)
{
	return (atomic_load(&((struct k8s_informer *)(uintptr_t)inf)->listing));
}

void
k8s_informer_store(const struct k8s_informer *inf, size_t *count, size_t *bytes)
{
	struct k8s_informer *i = (struct k8s_informer *)(uintptr_t)inf;

	*count = atomic_load(&i->store_count);
	*bytes = atomic_load(&i->store_bytes);
}

/* Publishes the store's size for k8s_informer_store. */
static void
informer_store_publish(struct k8s_informer *inf)
{
	atomic_store(&inf->store_count, map_count(inf->store));
	atomic_store(&inf->store_bytes,
	    map_bytes(inf->store) + inf->seen_bytes);
}

uint64_t
k8s_informer_restarts(const struct k8s_informer *inf)
{
	return (
	    atomic_load(&((struct k8s_informer *)(uintptr_t)inf)->restarts));
}

static int
informer_stopping(void *arg)
{
	struct k8s_informer *inf = arg;

	return (atomic_load(&inf->stop));
}

/*
 * Sleeps up to ms, waking early when asked to stop: one wait, not a wakeup
 * every few milliseconds (an informer whose resource does not exist, a CRD
 * not installed, sleeps here for good).
 */
static void
informer_sleep(struct k8s_informer *inf, long ms)
{
	struct pollfd	pfd = { .fd = inf->wakefd, .events = POLLIN };
	struct timespec ts;
	int64_t		end = clock_ms(CLOCK_MONOTONIC) + ms, left;

	while (!atomic_load(&inf->stop) &&
	    (left = end - clock_ms(CLOCK_MONOTONIC)) > 0) {
		if (inf->wakefd != -1) {
			(void)poll(&pfd, 1, (int)left);
			continue;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (left > 50 ? 50 : left) * 1000000L;
		nanosleep(&ts, NULL);
	}
}

/* Sets the stop flag and wakes the thread's backoff sleep. */
static void
informer_set_stop(struct k8s_informer *inf)
{
	atomic_store(&inf->stop, 1);
	if (inf->wakefd != -1)
		(void)eventfd_write(inf->wakefd, 1);
}

/*
 * Drops metadata.managedFields: the API server's record of which client
 * wrote which field, often the largest part of an object, and read by
 * nobody here.  With thousands of pods it is most of the memory.
 */
static void
informer_trim(json_t *obj)
{
	json_object_del(json_object_get(obj, "metadata"), "managedFields");
}

/* Builds "<path>?<params>&fieldSelector=..&labelSelector=..". */
static char *
informer_url(struct k8s_informer *inf, const char *params)
{
	struct buf b;

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

/*
 * What the store keeps of an object: one block with its key (which the
 * store borrows) and its resourceVersion, key[rv].
 */
struct inf_seen {
	uint64_t gen; /* the listing that last saw it */
	uint32_t rv;  /* where its resourceVersion starts in key */
	char	 key[];
};

static const char *
informer_seen_rv(const struct inf_seen *s)
{
	return (s->key + s->rv);
}

/* Records key at rv in the store; returns whether it was there before. */
static int
informer_store_put(struct k8s_informer *inf, const char *key, const char *rv,
    int *changed)
{
	struct inf_seen *old = map_get(inf->store, key), *s;
	size_t		 k, n;

	if (rv == NULL)
		rv = "";
	*changed = old == NULL || strcmp(informer_seen_rv(old), rv) != 0;
	if (old != NULL && !*changed) {
		old->gen = inf->gen;
		return (1);
	}
	k = strlen(key) + 1;
	n = strlen(rv) + 1;
	s = xmalloc(offsetof(struct inf_seen, key) + k + n);
	s->gen = inf->gen;
	s->rv = (uint32_t)k;
	memcpy(s->key, key, k);
	memcpy(s->key + k, rv, n);
	if (old != NULL)
		inf->seen_bytes -= malloc_usable_size(old);
	inf->seen_bytes += malloc_usable_size(s);
	/* Frees old, whose key the store held until now. */
	map_put(inf->store, s->key, s);
	informer_store_publish(inf);
	return (old != NULL);
}

/*
 * List items carry no kind or apiVersion; watch events do.  Fill them in
 * from the list ("PodList" -> "Pod") so consumers see one shape.
 */
static void
informer_typemeta(struct k8s_informer *inf, json_t *item)
{
	if (inf->kind != NULL && json_object_get(item, "kind") == NULL)
		json_object_set_new(item, "kind", json_string(inf->kind));
	if (inf->api_version != NULL &&
	    json_object_get(item, "apiVersion") == NULL)
		json_object_set_new(item, "apiVersion",
		    json_string(inf->api_version));
}

/* One listed object: stored, and delivered if new or changed. */
static void
informer_listed(struct k8s_informer *inf, json_t *item)
{
	char key[512];
	int  changed, had;

	informer_typemeta(inf, item);
	informer_trim(item);
	k8s_obj_key(item, key, sizeof(key));
	had = informer_store_put(inf, key,
	    k8s_obj_str(item, "metadata.resourceVersion"), &changed);
	if (changed)
		inf->cb(had ? K8S_WATCH_MODIFIED : K8S_WATCH_ADDED, item,
		    inf->arg);
	else
		json_decref(item);
}

/*
 * Delivers a synthetic delete for every stored object the listing that
 * just completed did not see.
 */
static void
informer_vanished(struct k8s_informer *inf)
{
	struct map	*gone = map_new(NULL);
	struct inf_seen *s;
	const char	*key, *slash;
	json_t		*obj;
	size_t		 it = 0;
	void		*v;

	while (map_next(inf->store, &it, &key, &v))
		if (((struct inf_seen *)v)->gen != inf->gen)
			map_put(gone, key, NULL);
	it = 0;
	while (map_next(gone, &it, &key, NULL)) {
		s = map_take(inf->store, key);
		slash = strchr(key, '/');
		obj = json_pack("{s:{s:s%, s:s}}", "metadata", "namespace",
		    slash != NULL ? key : "",
		    slash != NULL ? (size_t)(slash - key) : 0, "name",
		    slash != NULL ? slash + 1 : key);
		json_object_set_new(json_object_get(obj, "metadata"),
		    "resourceVersion", json_string(informer_seen_rv(s)));
		if (slash == NULL)
			json_object_del(json_object_get(obj, "metadata"),
			    "namespace");
		informer_typemeta(inf, obj);
		inf->cb(K8S_WATCH_DELETED, obj, inf->arg);
		inf->seen_bytes -= malloc_usable_size(s);
		free(s);
	}
	map_free(gone);
	informer_store_publish(inf);
}

/* A list page's item: filled in from the list's kind, stored, delivered. */
static void
informer_item_cb(json_t *item, const struct k8s_list_meta *meta, void *arg)
{
	struct k8s_informer *inf = arg;

	if (meta->kind != NULL &&
	    (inf->kind == NULL || strcmp(inf->kind, meta->kind) != 0)) {
		free(inf->kind);
		inf->kind = xstrdup(meta->kind);
	}
	if (meta->api_version != NULL &&
	    (inf->api_version == NULL ||
		strcmp(inf->api_version, meta->api_version) != 0)) {
		free(inf->api_version);
		inf->api_version = xstrdup(meta->api_version);
	}
	informer_listed(inf, item);
}

struct list_write {
	struct k8s_informer    *inf;
	struct k8s_list_parser *parser;
	struct k8s_error	err; /* the parser's */
	int			failed;
};

/* A list page's bytes as curl receives them, into the page's parser. */
static size_t
informer_list_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct list_write *lw = arg;

	if (k8s_list_parser_feed(lw->parser, p, size * n, informer_item_cb,
		lw->inf, &lw->err) == -1) {
		lw->failed = 1;
		return (0); /* makes curl end the transfer */
	}
	return (size * n);
}

/* Streams one page from url through its parser into meta. */
static int
informer_list_page(struct k8s_informer *inf, const char *url,
    struct k8s_list_meta *meta, struct k8s_error *err)
{
	struct list_write lw;
	int		  rc;

	memset(&lw, 0, sizeof(lw));
	lw.inf = inf;
	lw.parser = k8s_list_parser_new(0);
	k8s_client_set_timeout(inf->client, INF_LIST_TIMEOUT_MS);
	rc = client_stream(inf->client, url, informer_list_write_cb, &lw,
	    informer_stopping, inf, err);
	k8s_client_set_timeout(inf->client, INF_TIMEOUT_MS);
	if (lw.failed) {
		*err = lw.err;
		rc = -1;
	}
	if (rc == 0)
		rc = k8s_list_parser_finish(lw.parser, meta, err);
	k8s_list_parser_free(lw.parser);
	return (rc);
}

/*
 * Lists the collection page by page, delivering adds and updates against
 * the store as they are decoded, then synthetic deletes for what vanished.
 */
static int
informer_list(struct k8s_informer *inf, struct k8s_error *err)
{
	struct k8s_list_meta meta;
	char		    *url, *cont = NULL, *rv = NULL, params[1024];
	int		     ret = -1;

	memset(&meta, 0, sizeof(meta));
	inf->gen++;
	atomic_store(&inf->listing, 1);
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
		free(cont);
		cont = NULL;
		free(rv);
		rv = NULL;
		if (informer_list_page(inf, url, &meta, err) == -1) {
			free(url);
			goto done;
		}
		free(url);
		rv = meta.rv;
		cont = meta.cont;
		meta.rv = meta.cont = NULL;
		if (cont == NULL)
			break;
		if (atomic_load(&inf->stop)) {
			error_set(err, 0, "Stopped", "stopped by caller");
			goto done;
		}
	}
	informer_set_rv(inf, rv);
	atomic_fetch_add(&inf->relists, 1);
	informer_vanished(inf);
	atomic_store(&inf->listing, 0);
	inf->told = 1;
	inf->cb(K8S_WATCH_SYNCED, NULL, inf->arg);
	ret = 0;
done:
	free(cont);
	free(rv);
	k8s_list_meta_clear(&meta);
	atomic_store(&inf->listing, 0);
	return (ret);
}

/* Applies one watch event to the store and delivers it. */
static int
informer_watch_cb(enum k8s_watch_type t, json_t *obj, void *arg)
{
	struct k8s_informer *inf = arg;
	struct inf_seen	    *seen;
	char		     key[512];
	json_int_t	     code;
	int		     changed, had;

	switch (t) {
	case K8S_WATCH_BOOKMARK:
		informer_set_rv(inf,
		    k8s_obj_str(obj, "metadata.resourceVersion"));
		break;
	case K8S_WATCH_ERROR:
		/* The object of an ERROR event is a metav1.Status. */
		code = json_integer_value(json_object_get(obj, "code"));
		error_from_status_obj(&inf->werr, (long)code, obj,
		    "watch error");
		if (code == 410)
			inf->gone = 1;
		json_decref(obj);
		return (-1);
	case K8S_WATCH_ADDED:
	case K8S_WATCH_MODIFIED:
		k8s_obj_key(obj, key, sizeof(key));
		informer_set_rv(inf,
		    k8s_obj_str(obj, "metadata.resourceVersion"));
		informer_trim(obj);
		had = informer_store_put(inf, key,
		    k8s_obj_str(obj, "metadata.resourceVersion"), &changed);
		inf->cb(had ? K8S_WATCH_MODIFIED : K8S_WATCH_ADDED, obj,
		    inf->arg);
		return (0);
	case K8S_WATCH_DELETED:
		k8s_obj_key(obj, key, sizeof(key));
		informer_set_rv(inf,
		    k8s_obj_str(obj, "metadata.resourceVersion"));
		if ((seen = map_take(inf->store, key)) != NULL) {
			inf->seen_bytes -= malloc_usable_size(seen);
			free(seen);
			informer_store_publish(inf);
		}
		inf->cb(K8S_WATCH_DELETED, obj, inf->arg);
		return (0);
	default:
		break;
	}
	json_decref(obj);
	return (0);
}

struct watch_write {
	struct k8s_informer *inf;
	int		     failed;
};

static size_t
informer_write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct watch_write *w = arg;

	if (k8s_watch_parser_feed(w->inf->parser, p, size * n,
		informer_watch_cb, w->inf, &w->inf->werr) == -1) {
		w->failed = 1;
		return (0); /* makes curl end the transfer */
	}
	return (size * n);
}

/* Watches from inf->rv until the stream ends.  0: re-watch; -1: relist. */
static int
informer_watch(struct k8s_informer *inf, struct k8s_error *err)
{
	struct watch_write w = { inf, 0 };
	char		   params[512], *url, *enc;
	int		   rc;

	enc = k8s_urlencode(inf->rv != NULL ? inf->rv : "0");
	snprintf(params, sizeof(params),
	    "watch=1&allowWatchBookmarks=true"
	    "&resourceVersion=%s&timeoutSeconds=%d",
	    enc, inf->timeout);
	free(enc);
	url = informer_url(inf, params);
	inf->gone = 0;
	memset(&inf->werr, 0, sizeof(inf->werr));
	k8s_watch_parser_free(inf->parser);
	inf->parser = k8s_watch_parser_new(0);
	/* A watch lasts up to timeoutSeconds; never cut it short. */
	k8s_client_set_timeout(inf->client, 0);
	rc = client_stream(inf->client, url, informer_write_cb, &w,
	    informer_stopping, inf, err);
	k8s_client_set_timeout(inf->client, INF_TIMEOUT_MS);
	free(url);
	atomic_fetch_add(&inf->restarts, 1);
	if (w.failed) {
		*err = inf->werr;
		return (-1);
	}
	if (rc == -1)
		return (-1);
	if (k8s_watch_parser_pending(inf->parser) > 0) {
		error_set(err, 0, "BadWatchEvent",
		    "watch stream ended inside an event (%zu bytes)",
		    k8s_watch_parser_pending(inf->parser));
		return (-1);
	}
	return (0);
}

/*
 * A first list answered 404: the API server serves no such resource (a
 * CRD not installed, an API group off).  Its store, empty, is all there
 * is, so the consumer hears K8S_WATCH_SYNCED at once rather than waiting
 * for a list that never comes; the informer goes on listing, and should
 * the resource be served later, its objects come as ADDED and
 * K8S_WATCH_SYNCED again.  Told once.
 */
static void
informer_unserved(struct k8s_informer *inf, const struct k8s_error *err)
{
	if (inf->told || err->status != 404)
		return;
	inf->told = 1;
	log_info("%s: not served here (404): taken as empty until it is",
	    inf->path);
	inf->cb(K8S_WATCH_SYNCED, NULL, inf->arg);
}

static void *
informer_main(void *arg)
{
	struct k8s_informer *inf = arg;
	struct k8s_error     err;
	long		     backoff = 0, ms;
	int		     need_list = 1;

	log_setname(inf->name);
	while (!atomic_load(&inf->stop)) {
		if (need_list) {
			if (informer_list(inf, &err) == -1) {
				if (atomic_load(&inf->stop))
					break;
				log_warnx("%s: list failed: %ld %s: %s",
				    inf->path, err.status, err.reason,
				    err.text);
				informer_unserved(inf, &err);
				goto backoff;
			}
			need_list = 0;
			backoff = 0;
		}
		if (informer_watch(inf, &err) == 0)
			continue; /* server ended the watch: re-watch */
		if (atomic_load(&inf->stop))
			break;
		need_list = 1;
		if (inf->gone || err.status == 410) {
			log_info("%s: resourceVersion %s is gone, relisting",
			    inf->path, inf->rv != NULL ? inf->rv : "-");
			continue;
		}
		log_warnx("%s: watch failed: %ld %s: %s", inf->path, err.status,
		    err.reason, err.text);
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
	struct k8s_error err;

	if ((inf->client = k8s_client_new(inf->conf, &err)) == NULL)
		return (-1);
	/* Watches are long-lived and lists are rare: no client throttling. */
	k8s_client_set_rate(inf->client, 0, 1);
	if ((errno = pthread_create(&inf->thread, NULL, informer_main, inf)) !=
	    0) {
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
	informer_set_stop(inf);
}

void
k8s_informer_stop(struct k8s_informer *inf)
{
	if (!inf->started)
		return;
	informer_set_stop(inf);
	pthread_join(inf->thread, NULL);
	inf->started = 0;
	k8s_client_free(inf->client);
	inf->client = NULL;
	k8s_watch_parser_free(inf->parser);
	inf->parser = NULL;
}
