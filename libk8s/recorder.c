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

#define EVENT_NOTE_MAX	1024 /* the API's limit on note */
#define EVENT_CACHE_MAX 4096 /* remembered distinct events */

struct k8s_recorder {
	struct k8s_client *client;
	char		  *controller;
	char		  *instance;
	json_t		  *seen; /* dedup key -> {ns, name, count} */
};

struct k8s_recorder *
k8s_recorder_new(struct k8s_client *c, const char *controller,
    const char *instance)
{
	struct k8s_recorder *r;

	r = xcalloc(1, sizeof(*r));
	r->client = c;
	r->controller = xstrdup(controller);
	r->instance = xstrdup(instance);
	r->seen = json_object();
	return (r);
}

void
k8s_recorder_free(struct k8s_recorder *r)
{
	if (r == NULL)
		return;
	free(r->controller);
	free(r->instance);
	json_decref(r->seen);
	free(r);
}

/*
 * Creates a new Event object, observed at tv; stores its name in the cache
 * entry.
 */
static int
recorder_create(struct k8s_recorder *r, const json_t *obj, const char *ns,
    const char *type, const char *reason, const char *action, const char *note,
    const struct timeval *tv, json_t *entry, struct k8s_error *err)
{
	json_t	   *ev, *regarding;
	const char *oname = k8s_obj_name(obj), *v;
	char	    name[300], now[64], *path;
	int	    rc;

	k8s_microtime(now, sizeof(now), tv);
	snprintf(name, sizeof(name), "%.200s.%llx",
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
	if (rc == 0) {
		json_object_set_new(entry, "name", json_string(name));
		json_object_set_new(entry, "count", json_integer(1));
	}
	return (rc);
}

int
k8s_recorder_post(struct k8s_recorder *r, const json_t *obj, const char *type,
    const char *reason, const char *action, struct k8s_error *err,
    const char *fmt, ...)
{
	struct timeval tv;
	va_list	       ap;
	json_t	      *entry, *patch;
	char	       note[EVENT_NOTE_MAX + 1], now[64], *key, *path;
	const char    *ns, *uid, *name;
	json_int_t     count;
	int	       rc;

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

	entry = json_object_get(r->seen, key);
	if (entry != NULL) {
		name = json_string_value(json_object_get(entry, "name"));
		count = json_integer_value(json_object_get(entry, "count")) + 1;
		patch = json_pack("{s:{s:I, s:s}}", "series", "count",
		    (json_int_t)count, "lastObservedTime", now);
		xasprintf(&path,
		    "/apis/events.k8s.io/v1/namespaces/%s/"
		    "events/%s",
		    ns, name);
		rc = k8s_patch(r->client, path, K8S_PATCH_MERGE, patch, NULL,
		    err);
		free(path);
		json_decref(patch);
		if (rc == 0) {
			json_object_set_new(entry, "count",
			    json_integer(count));
			free(key);
			return (0);
		}
		if (err == NULL || err->status != 404) {
			free(key);
			return (-1);
		}
		/* The Event expired (its TTL is an hour): start again. */
		json_object_del(r->seen, key);
	}
	if (json_object_size(r->seen) >= EVENT_CACHE_MAX)
		json_object_clear(r->seen);
	entry = json_object();
	rc = recorder_create(r, obj, ns, type, reason, action, note, &tv, entry,
	    err);
	if (rc == 0)
		json_object_set_new(r->seen, key, entry);
	else
		json_decref(entry);
	free(key);
	return (rc);
}
