/*
 * Events (events.k8s.io/v1) with de-duplication, as client-go's recorder
 * does it: the first occurrence of (object, type, reason, note) creates an
 * Event; repeats patch its series (count, lastObservedTime) instead of
 * creating new objects.  A recorder belongs to one thread.
 */
#include <sys/time.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "map.h"

#define EVENT_NOTE_MAX	1024 /* the API's limit on note */
#define EVENT_CACHE_MAX 4096 /* remembered distinct events */
#define EVENT_NAME_MAX	300  /* an Event's name, made here */

/*
 * A remembered Event, under its dedup key's hash (hex, in the same block;
 * the cache borrows it).  The key itself, some 200 bytes, is not kept: a
 * second, different hash of it must match too.  As JSON each entry took
 * some 650 bytes, and a scheduler with thousands of pending pods keeps
 * thousands.
 */
struct rec_seen {
	uint64_t   check; /* recorder_check of the dedup key */
	json_int_t count;
	char	   hash[17]; /* map_hash of the dedup key, hex */
	char	   name[];   /* the Event's */
};

struct k8s_recorder {
	struct k8s_client *client;
	char		  *controller;
	char		  *instance;
	struct map	  *seen; /* hash -> struct rec_seen */
};

/* FNV-1 (multiply, then xor): a second hash, unlike map_hash's FNV-1a. */
static uint64_t
recorder_check(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h *= 1099511628211ULL;
		h ^= (unsigned char)*s;
	}
	return (h);
}

struct k8s_recorder *
k8s_recorder_new(struct k8s_client *c, const char *controller,
    const char *instance)
{
	struct k8s_recorder *r;

	r = xcalloc(1, sizeof(*r));
	r->client = c;
	r->controller = xstrdup(controller);
	r->instance = xstrdup(instance);
	r->seen = map_new_borrowed(free);
	return (r);
}

void
k8s_recorder_free(struct k8s_recorder *r)
{
	if (r == NULL)
		return;
	free(r->controller);
	free(r->instance);
	map_free(r->seen);
	free(r);
}

/* Remembers the Event name under the dedup key's hashes (hash, check). */
static void
recorder_remember(struct k8s_recorder *r, const char *hash, uint64_t check,
    const char *name)
{
	struct rec_seen *seen;
	size_t		 n = strlen(name) + 1;

	if (map_count(r->seen) >= EVENT_CACHE_MAX) {
		map_free(r->seen);
		r->seen = map_new_borrowed(free);
	}
	seen = xmalloc(sizeof(*seen) + n);
	seen->check = check;
	seen->count = 1;
	memcpy(seen->hash, hash, sizeof(seen->hash));
	memcpy(seen->name, name, n);
	map_put(r->seen, seen->hash, seen);
}

/*
 * Creates a new Event object, observed at tv; its name goes to name
 * (EVENT_NAME_MAX bytes).
 */
static int
recorder_create(struct k8s_recorder *r, const json_t *obj, const char *ns,
    const char *type, const char *reason, const char *action, const char *note,
    const struct timeval *tv, char *name, struct k8s_error *err)
{
	json_t	   *ev, *regarding;
	const char *oname = k8s_obj_name(obj), *v;
	char	    now[64], *path;
	int	    rc;

	k8s_microtime(now, sizeof(now), tv);
	snprintf(name, EVENT_NAME_MAX, "%.200s.%llx",
	    oname != NULL ? oname : "object",
	    (unsigned long long)tv->tv_sec * 1000000000ULL +
		(unsigned long long)tv->tv_usec * 1000ULL);
	regarding = json_object();
	if ((v = json_string_value(json_object_get(obj, "kind"))) != NULL)
		json_object_set_new(regarding, "kind", json_string(v));
	if ((v = json_string_value(json_object_get(obj, "apiVersion"))) != NULL)
		json_object_set_new(regarding, "apiVersion", json_string(v));
	if (oname != NULL)
		json_object_set_new(regarding, "name", json_string(oname));
	if ((v = k8s_obj_namespace(obj)) != NULL)
		json_object_set_new(regarding, "namespace", json_string(v));
	if ((v = k8s_obj_uid(obj)) != NULL)
		json_object_set_new(regarding, "uid", json_string(v));
	if ((v = k8s_obj_str(obj, "metadata.resourceVersion")) != NULL)
		json_object_set_new(regarding, "resourceVersion",
		    json_string(v));
	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, "
		       "s:s, s:s, s:o}",
	    "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata",
	    "name", name, "namespace", ns, "eventTime", now,
	    "reportingController", r->controller, "reportingInstance",
	    r->instance, "action", action, "reason", reason, "type", type,
	    "note", note, "regarding", regarding);
	xasprintf(&path, "/apis/events.k8s.io/v1/namespaces/%s/events", ns);
	rc = k8s_create(r->client, path, ev, NULL, err);
	free(path);
	json_decref(ev);
	return (rc);
}

int
k8s_recorder_post(struct k8s_recorder *r, const json_t *obj, const char *type,
    const char *reason, const char *action, struct k8s_error *err,
    const char *fmt, ...)
{
	struct timeval	 tv;
	va_list		 ap;
	struct rec_seen *seen;
	json_t		*patch;
	char		 note[EVENT_NOTE_MAX + 1], now[64], *key, *path;
	char		 hash[17], name[EVENT_NAME_MAX];
	const char	*ns, *uid;
	uint64_t	 check;
	int		 rc;

	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	gettimeofday(&tv, NULL);
	k8s_microtime(now, sizeof(now), &tv);
	ns = k8s_obj_namespace(obj);
	if (ns == NULL || *ns == '\0')
		ns = "default";
	uid = k8s_obj_uid(obj);
	xasprintf(&key, "%s/%s/%s|%s|%s|%s", ns,
	    k8s_obj_name(obj) != NULL ? k8s_obj_name(obj) : "",
	    uid != NULL ? uid : "", type, reason, note);

	snprintf(hash, sizeof(hash), "%016llx",
	    (unsigned long long)map_hash(key));
	check = recorder_check(key);
	free(key);
	seen = map_get(r->seen, hash);
	if (seen != NULL && seen->check == check) {
		patch = json_pack("{s:{s:I, s:s}}", "series", "count",
		    seen->count + 1, "lastObservedTime", now);
		xasprintf(&path,
		    "/apis/events.k8s.io/v1/namespaces/%s/"
		    "events/%s",
		    ns, seen->name);
		rc = k8s_patch(r->client, path, K8S_PATCH_MERGE, patch, NULL,
		    err);
		free(path);
		json_decref(patch);
		if (rc == 0) {
			seen->count++;
			return (0);
		}
		if (err == NULL || err->status != 404)
			return (-1);
		/* The Event expired (its TTL is an hour): start again. */
	}
	rc = recorder_create(r, obj, ns, type, reason, action, note, &tv, name,
	    err);
	if (rc == 0)
		recorder_remember(r, hash, check, name);
	return (rc);
}
