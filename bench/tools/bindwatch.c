/*
 * bindwatch: measures when the pods of one namespace get bound, for make
 * bench.  An informer thread (libk8s) lists and watches the namespace's
 * pods; its callback owns all the bookkeeping and records, per pod (by uid),
 * the wall-clock time of the first event whose spec.nodeName is set, and,
 * for a pod first seen on the watch (not in a list), the time of that
 * ADDED event.  Latency runs from t0 (--t0, or --t0-file, read at the end:
 * the moment the scheduler reported ready, known only after it started),
 * from each pod's ADDED event (--from-added), or from its one-second
 * creationTimestamp.  A pod bound before t0 has latency 0.  A pod deleted
 * before it was bound (or never bound before the timeout) is slower than
 * any measured one: percentiles count it as infinitely late, and are null
 * when they fall on one.
 *
 * With --gang-label it checks gangs (pods sharing that label, min-member
 * from the annotation): at the end a gang with some but not all of its
 * min-member members bound is partial; every member must carry the
 * slurm-node annotation in the very event in which it is first seen bound
 * (the bridge binds with one Binding that carries it); and the spread of
 * a whole gang (its first bind to its last) is reported.
 *
 * With --group NAME=PREFIX (repeated) it also reports, under "groups",
 * the pods whose name starts with PREFIX on their own: how many were seen
 * and bound, their binds per second (over the same span as all pods') and
 * their latency percentiles, those never bound the latest.  A pod may be
 * in several groups.
 *
 * The main thread only waits (for N pods bound or deleted, the timeout or
 * SIGINT/SIGTERM), writes the --samples lines from an atomic counter and
 * the --synced-file once the first list is delivered; then it joins the
 * informer and prints one JSON line on stdout (and --binds, one line per
 * bound pod).  Exits 0 when all N pods were bound with no partial gang and
 * no gang member bound without its annotation, 1 otherwise or on a setup
 * error, 2 on a usage error.
 */
#include <sys/stat.h>

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "k8s.h"
#include "bench.h"
#include "kube.h"
#include "pct.h"

#define BW_ANN_SLURM_NODE "slinky.slurm.net/slurm-node"
#define BW_ANN_MIN_MEMBER "scheduler.slinky.slurm.net/min-member"
#define BW_TIMEOUT_S	  300
#define BW_TICK_MS	  50
#define BW_T0_POLL_MS	  10
#define BW_WARN_MAX	  5 /* violations logged one by one */
#define BW_GROUPS_MAX	  8

struct bw_pod {
	int64_t bind_ms;    /* epoch ms, first bound event; 0 */
	int64_t added_ms;   /* epoch ms, ADDED on the watch; 0 */
	int64_t created_ms; /* creationTimestamp; -1 when unknown */
	long	gang;	    /* index in bw.gangs, or -1 */
	int	deleted;    /* deleted before it was bound */
	char   *name;
};

struct bw_gang {
	char   *name;
	long	size;	 /* min-member; 0 when not given */
	size_t	members; /* seen so far */
	size_t	bound;
	int64_t first_ms, last_ms; /* binds of its members */
};

struct bw {
	/* read-only once the informer runs */
	size_t		     count;
	int64_t		     t0_ms;	 /* 0: see from_added */
	int		     from_added; /* latency from each pod's ADDED */
	const char	    *gang_label; /* NULL: no gang check */
	struct k8s_informer *inf;
	/* --group NAME=PREFIX: "NAME=PREFIX" and the offset of PREFIX */
	const char *groups[BW_GROUPS_MAX];
	size_t	    group_at[BW_GROUPS_MAX];
	size_t	    ngroups;

	/* the informer thread's until it is joined */
	json_t	       *pod_index; /* uid -> index in pods */
	struct bw_pod  *pods;
	size_t		npods, podcap;
	json_t	       *gang_index; /* name -> index in gangs */
	struct bw_gang *gangs;
	size_t		ngangs, gangcap;
	uint64_t	nsynced;       /* lists delivered */
	size_t		bound_at_list; /* bound when first seen in a list */
	size_t		listed_bound;  /* the same, over the whole run */
	size_t		unannotated;   /* gang members bound without it */
	int64_t		first_ms, last_ms;
	int64_t		first_added_ms;

	/* shared with main */
	atomic_size_t nbound;
	atomic_size_t ndeleted; /* deleted before they were bound */
	atomic_int    synced;
	atomic_int    done;
};

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: bindwatch [--kubeconfig F] --namespace NS --count N\n"
	    "                 [--t0 EPOCH_MS | --t0-file FILE | --from-added]\n"
	    "                 [--timeout S] [--gang-label KEY] [--samples FILE]\n"
	    "                 [--binds FILE] [--synced-file FILE]\n"
	    "                 [--group NAME=PREFIX]...\n"
	    "  --kubeconfig F     kubeconfig (default: $KUBECONFIG, in-cluster,\n"
	    "                     ~/.kube/config)\n"
	    "  --namespace NS     the pods to watch\n"
	    "  --count N          stop once N pods are bound (or deleted unbound)\n"
	    "  --t0 EPOCH_MS      latency from this moment (when the pods were released)\n"
	    "  --t0-file FILE     the same, read from FILE at the end (waiting for it up\n"
	    "                     to the timeout): for a t0 known only later\n"
	    "  --from-added       latency per pod from its ADDED event on the watch;\n"
	    "                     pods first seen in a list are not measured\n"
	    "                     (without any of the three: from each pod's\n"
	    "                     creationTimestamp, which has one-second resolution)\n"
	    "  --timeout S        give up after S seconds (default %d)\n"
	    "  --gang-label KEY   check gangs (pods sharing label KEY): none partly\n"
	    "                     bound at the end, each member annotated when bound;\n"
	    "                     e.g. scheduling.x-k8s.io/pod-group\n"
	    "  --samples FILE     append \"epoch_ms bound_count\" every second\n"
	    "  --binds FILE       write \"bind_ms start_ms name\" per bound pod, in bind\n"
	    "                     order (start_ms: its ADDED event, or -1)\n"
	    "  --synced-file F    create F once the first list is delivered (the\n"
	    "                     watch runs: pods created from then on are ADDED)\n"
	    "  --group NAME=PREFIX  report the pods whose name starts with PREFIX\n"
	    "                     apart too, under groups.NAME (up to %d)\n"
	    "Prints one JSON line on stdout.\n",
	    BW_TIMEOUT_S, BW_GROUPS_MAX);
}

/* RFC 3339 "2026-01-02T03:04:05Z" in epoch ms, or -1. */
static int64_t
bw_parse_time(const char *s)
{
	struct tm tm;
	time_t	  t;

	if (s == NULL)
		return (-1);
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
		&tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return (-1);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if ((t = timegm(&tm)) == (time_t)-1)
		return (-1);
	return ((int64_t)t * 1000);
}

/*
 * Waits (until deadline, epoch ms) for path to hold an epoch-ms t0 and
 * returns it; 0 when it never did.
 */
static int64_t
bw_t0_read(const char *path, int64_t deadline)
{
	struct timespec tick = { 0, BW_T0_POLL_MS * 1000000L };
	FILE	       *fp;
	char		line[64];
	long long	v;

	for (;;) {
		if ((fp = fopen(path, "r")) != NULL) {
			if (fgets(line, sizeof(line), fp) != NULL) {
				line[strcspn(line, "\r\n")] = '\0';
				if (bench_parse_int(line, 1, INT64_MAX, &v) ==
				    0) {
					fclose(fp);
					return (v);
				}
			}
			fclose(fp);
		}
		if (bench_now_ms() >= deadline)
			return (0);
		nanosleep(&tick, NULL);
	}
}

/* The gang named name, created on first sight. */
static struct bw_gang *
bw_gang_get(struct bw *w, const char *name, long *idx)
{
	struct bw_gang *g;
	json_t	       *v;

	if ((v = json_object_get(w->gang_index, name)) != NULL) {
		*idx = (long)json_integer_value(v);
		return (&w->gangs[*idx]);
	}
	if (w->ngangs == w->gangcap) {
		w->gangcap = w->gangcap == 0 ? 16 : w->gangcap * 2;
		w->gangs = xreallocarray(w->gangs, w->gangcap,
		    sizeof(*w->gangs));
	}
	*idx = (long)w->ngangs;
	g = &w->gangs[w->ngangs++];
	memset(g, 0, sizeof(*g));
	g->name = xstrdup(name);
	json_object_set_new(w->gang_index, name, json_integer(*idx));
	return (g);
}

/* The pod's record or NULL; *key is its uid (or name). */
static struct bw_pod *
bw_pod_find(struct bw *w, const json_t *obj, const char **key)
{
	json_t *v;

	/* A pod recreated under the same name is another pod. */
	if ((*key = k8s_obj_uid(obj)) == NULL &&
	    (*key = k8s_obj_name(obj)) == NULL)
		return (NULL);
	if ((v = json_object_get(w->pod_index, *key)) != NULL)
		return (&w->pods[json_integer_value(v)]);
	return (NULL);
}

/*
 * The pod's record, created on first sight (at now_ms; from the watch
 * unless listing); NULL without uid or name.
 */
static struct bw_pod *
bw_pod_get(struct bw *w, const json_t *obj, int64_t now_ms, int listing)
{
	struct bw_pod *p;
	const char    *key, *name;

	if ((p = bw_pod_find(w, obj, &key)) != NULL || key == NULL)
		return (p);
	if (w->npods == w->podcap) {
		w->podcap = w->podcap == 0 ? 256 : w->podcap * 2;
		w->pods = xreallocarray(w->pods, w->podcap, sizeof(*w->pods));
	}
	p = &w->pods[w->npods];
	memset(p, 0, sizeof(*p));
	p->gang = -1;
	p->created_ms = bw_parse_time(
	    k8s_obj_str(obj, "metadata.creationTimestamp"));
	name = k8s_obj_name(obj);
	p->name = xstrdup(name != NULL ? name : key);
	/*
	 * The watch delivers a new pod's ADDED as soon as the API server
	 * stored it; a list only tells that it existed by then.
	 */
	if (!listing) {
		p->added_ms = now_ms;
		if (w->first_added_ms == 0)
			w->first_added_ms = now_ms;
	}
	json_object_set_new(w->pod_index, key,
	    json_integer((json_int_t)w->npods));
	w->npods++;
	return (p);
}

/* Puts a pod in its gang the first time it is seen with the label. */
static void
bw_gang_join(struct bw *w, struct bw_pod *p, const json_t *obj)
{
	struct bw_gang *g;
	const char     *name, *min;
	long long	n;

	if (w->gang_label == NULL || p->gang >= 0 ||
	    (name = k8s_obj_label(obj, w->gang_label)) == NULL || *name == '\0')
		return;
	g = bw_gang_get(w, name, &p->gang);
	g->members++;
	if (g->size == 0 &&
	    (min = k8s_obj_annotation(obj, BW_ANN_MIN_MEMBER)) != NULL) {
		if (bench_parse_int(min, 1, 1000000, &n) == 0)
			g->size = (long)n;
		else
			log_warnx(
			    "gang %s: annotation " BW_ANN_MIN_MEMBER
			    " \"%.32s\" is not a size; counting the members "
			    "seen instead",
			    name, min);
	}
}

/* The members a gang needs: min-member, else all of those seen. */
static size_t
bw_gang_want(const struct bw_gang *g)
{
	return (g->size > 0 ? (size_t)g->size : g->members);
}

/* Done once the first list is in and N pods are bound or gone. */
static void
bw_done_check(struct bw *w)
{
	if (w->nsynced > 0 &&
	    atomic_load(&w->nbound) + atomic_load(&w->ndeleted) >= w->count)
		atomic_store(&w->done, 1);
}

/*
 * One ADDED or MODIFIED pod, at now_ms.  listing: it comes from a list, in
 * no particular order, not from the watch.
 */
static void
bw_pod_update(struct bw *w, const json_t *obj, int64_t now_ms, int listing)
{
	struct bw_pod  *p;
	struct bw_gang *g;
	const char     *node, *ann;

	if (!json_is_object(obj) ||
	    (p = bw_pod_get(w, obj, now_ms, listing)) == NULL)
		return;
	bw_gang_join(w, p, obj);
	node = k8s_obj_str(obj, "spec.nodeName");
	if (node == NULL || *node == '\0' || p->bind_ms != 0)
		return;
	p->bind_ms = now_ms;
	if (w->first_ms == 0 || now_ms < w->first_ms)
		w->first_ms = now_ms;
	if (now_ms > w->last_ms)
		w->last_ms = now_ms;
	if (listing) {
		w->bound_at_list++;
		w->listed_bound++;
	}
	if (p->gang >= 0) {
		g = &w->gangs[p->gang];
		g->bound++;
		if (g->first_ms == 0 || now_ms < g->first_ms)
			g->first_ms = now_ms;
		if (now_ms > g->last_ms)
			g->last_ms = now_ms;
		/* The Binding that bound it carried the annotation. */
		ann = k8s_obj_annotation(obj, BW_ANN_SLURM_NODE);
		if (ann == NULL || *ann == '\0') {
			if (w->unannotated++ < BW_WARN_MAX)
				log_warnx("gang %s: pod %s first seen bound "
					  "(on %s) without " BW_ANN_SLURM_NODE,
				    g->name, p->name, node);
		}
	}
	atomic_fetch_add(&w->nbound, 1);
	bw_done_check(w);
}

/* A pod deleted before it was bound will never be: count it as done. */
static void
bw_pod_deleted(struct bw *w, const json_t *obj)
{
	struct bw_pod *p;
	const char    *key;

	if (!json_is_object(obj) || (p = bw_pod_find(w, obj, &key)) == NULL ||
	    p->bind_ms != 0 || p->deleted)
		return;
	p->deleted = 1;
	atomic_fetch_add(&w->ndeleted, 1);
	bw_done_check(w);
}

/* Informer callback (informer thread): takes obj. */
static void
bw_event_cb(enum k8s_watch_type type, json_t *obj, void *arg)
{
	struct bw *w = arg;
	int64_t	   now_ms = bench_now_ms();

	switch (type) {
	case K8S_WATCH_ADDED:
	case K8S_WATCH_MODIFIED:
		/* A list's items come before its SYNCED. */
		bw_pod_update(w, obj, now_ms, k8s_informer_listing(w->inf));
		break;
	case K8S_WATCH_DELETED:
		bw_pod_deleted(w, obj);
		break;
	case K8S_WATCH_SYNCED:
		/* Those binds happened while we were not watching. */
		if (w->bound_at_list > 0)
			log_warnx("%zu pods were bound when %s listed them: "
				  "their bind time is when it did",
			    w->bound_at_list,
			    w->nsynced == 0 ? "bindwatch first" : "a relist");
		w->bound_at_list = 0;
		w->nsynced++;
		/* synced before done: main writes --synced-file first. */
		atomic_store(&w->synced, 1);
		bw_done_check(w);
		break;
	default:
		break;
	}
	json_decref(obj);
}

/* Gangs left with some but not all of their members bound. */
static size_t
bw_partial_gangs(struct bw *w)
{
	struct bw_gang *g;
	size_t		i, partial = 0;

	for (i = 0; i < w->ngangs; i++) {
		g = &w->gangs[i];
		if (g->bound == 0 || g->bound >= bw_gang_want(g))
			continue;
		if (partial++ < BW_WARN_MAX)
			log_warnx("gang %s: partial: %zu of %zu members bound "
				  "at the end (%zu seen)",
			    g->name, g->bound, bw_gang_want(g), g->members);
	}
	return (partial);
}

/*
 * {p50, p90, p99, max} of n sorted values among total pods, the other
 * total - n being later than any (null where a percentile falls on one).
 */
static json_t *
bw_pcts(const double *v, size_t n, size_t total, int with_p90)
{
	static const unsigned int ps[] = { 50, 90, 99, 100 };
	static const char *const  keys[] = { "p50", "p90", "p99", "max" };
	json_t			 *o = json_object();
	size_t			  i, rank;

	if (total < n)
		total = n;
	for (i = 0; i < 4; i++) {
		if (ps[i] == 90 && !with_p90)
			continue;
		/* Over all total pods: past n, one never bound. */
		rank = pct_nearest(total, ps[i]);
		json_object_set_new(o, keys[i],
		    rank <= n ? json_integer((json_int_t)v[rank - 1]) :
				json_null());
	}
	return (o);
}

/* Spread of the whole gangs, first bind to last, in ms. */
static json_t *
bw_gang_spread(const struct bw *w)
{
	json_t *o;
	double *v;
	size_t	i, n = 0;

	v = xcalloc(w->ngangs > 0 ? w->ngangs : 1, sizeof(*v));
	for (i = 0; i < w->ngangs; i++)
		if (w->gangs[i].bound > 0 &&
		    w->gangs[i].bound >= bw_gang_want(&w->gangs[i]))
			v[n++] = (double)(w->gangs[i].last_ms -
			    w->gangs[i].first_ms);
	pct_sort(v, n);
	o = bw_pcts(v, n, n, 0);
	free(v);
	return (o);
}

static int
bw_bind_cmp(const void *a, const void *b)
{
	const struct bw_pod *x = *(const struct bw_pod *const *)a;
	const struct bw_pod *y = *(const struct bw_pod *const *)b;

	return (x->bind_ms < y->bind_ms ? -1 : x->bind_ms > y->bind_ms);
}

/* --binds: one line per bound pod, in bind order.  0, or -1. */
static int
bw_binds_write(const struct bw *w, const char *path)
{
	const struct bw_pod **v;
	FILE		     *fp;
	size_t		      i, n = 0;
	int		      rc = 0;

	if ((fp = fopen(path, "w")) == NULL) {
		log_warn("%s", path);
		return (-1);
	}
	v = xcalloc(w->npods > 0 ? w->npods : 1, sizeof(*v));
	for (i = 0; i < w->npods; i++)
		if (w->pods[i].bind_ms != 0)
			v[n++] = &w->pods[i];
	qsort(v, n, sizeof(*v), bw_bind_cmp);
	for (i = 0; i < n; i++)
		fprintf(fp, "%" PRId64 " %" PRId64 " %s\n", v[i]->bind_ms,
		    v[i]->added_ms > 0 ? v[i]->added_ms : -1, v[i]->name);
	if (fclose(fp) == EOF) {
		log_warn("%s", path);
		rc = -1;
	}
	free(v);
	return (rc);
}

/*
 * A bound pod's latency in ms into *lat (0 when bound before t0, then
 * counted in *early): 0, or -1 when it cannot be measured.
 */
static int
bw_latency(const struct bw *w, const struct bw_pod *p, double *lat,
    size_t *early)
{
	if (w->t0_ms > 0)
		*lat = (double)(p->bind_ms - w->t0_ms);
	else if (w->from_added && p->added_ms > 0)
		*lat = (double)(p->bind_ms - p->added_ms);
	else if (!w->from_added && p->created_ms >= 0)
		*lat = (double)(p->bind_ms - p->created_ms);
	else
		return (-1);
	/* Bound before the scheduler said it was ready. */
	if (*lat < 0) {
		*lat = 0;
		if (early != NULL)
			(*early)++;
	}
	return (0);
}

/* bound binds over span ms, per second to 1/100, or null. */
static json_t *
bw_rate(size_t bound, int64_t span)
{
	return (bound > 0 && span > 0 ?
		json_real(
		    (double)(int64_t)((double)bound * 1e5 / (double)span) /
		    100.0) :
		json_null());
}

/*
 * One --group: the pods whose name starts with prefix, their binds per
 * second from start, and their latencies (those seen and never bound the
 * latest; bound ones that cannot be measured left out, as for all pods).
 */
static json_t *
bw_group_report(const struct bw *w, const char *prefix, int64_t start)
{
	const struct bw_pod *p;
	json_t		    *o;
	double		    *v, lat;
	int64_t		     last = 0;
	size_t		     i, n = 0, seen = 0, bound = 0, deleted = 0;
	size_t		     len = strlen(prefix);

	v = xcalloc(w->npods > 0 ? w->npods : 1, sizeof(*v));
	for (i = 0; i < w->npods; i++) {
		p = &w->pods[i];
		if (strncmp(p->name, prefix, len) != 0)
			continue;
		seen++;
		if (p->deleted)
			deleted++;
		if (p->bind_ms == 0)
			continue;
		bound++;
		if (p->bind_ms > last)
			last = p->bind_ms;
		if (bw_latency(w, p, &lat, NULL) == 0)
			v[n++] = lat;
	}
	pct_sort(v, n);
	o = json_object();
	json_object_set_new(o, "prefix", json_string(prefix));
	json_object_set_new(o, "pods", json_integer((json_int_t)seen));
	json_object_set_new(o, "bound", json_integer((json_int_t)bound));
	json_object_set_new(o, "deleted_unbound",
	    json_integer((json_int_t)deleted));
	json_object_set_new(o, "last_bind_ms",
	    bound > 0 ? json_integer(last) : json_null());
	json_object_set_new(o, "binds_per_s", bw_rate(bound, last - start));
	json_object_set_new(o, "latency_ms",
	    bw_pcts(v, n, n + (seen - bound), 1));
	free(v);
	return (o);
}

/* The result line; call after the informer is joined. */
static json_t *
bw_report(struct bw *w)
{
	const struct bw_pod *p;
	json_t		    *out, *groups;
	double		    *v, lat;
	int64_t		     start, span;
	size_t		     i, n = 0, bound = 0, early = 0, unmeasured = 0;
	size_t		     late;
	char		    *name;

	v = xcalloc(w->npods > 0 ? w->npods : 1, sizeof(*v));
	for (i = 0; i < w->npods; i++) {
		p = &w->pods[i];
		if (p->bind_ms == 0)
			continue;
		bound++;
		if (bw_latency(w, p, &lat, &early) == -1) {
			unmeasured++;
			continue;
		}
		v[n++] = lat;
	}
	/* Never bound (deleted first, or not by the end): the slowest. */
	late = w->count > bound ? w->count - bound : 0;
	out = json_object();
	json_object_set_new(out, "pods", json_integer((json_int_t)w->count));
	json_object_set_new(out, "bound", json_integer((json_int_t)bound));
	json_object_set_new(out, "deleted_unbound",
	    json_integer((json_int_t)atomic_load(&w->ndeleted)));
	json_object_set_new(out, "t0_ms",
	    w->t0_ms > 0 ? json_integer(w->t0_ms) : json_null());
	json_object_set_new(out, "latency_from",
	    json_string(w->t0_ms > 0 ? "t0" :
		    w->from_added    ? "added" :
				       "creationTimestamp"));
	json_object_set_new(out, "first_bind_ms",
	    bound > 0 ? json_integer(w->first_ms) : json_null());
	json_object_set_new(out, "last_bind_ms",
	    bound > 0 ? json_integer(w->last_ms) : json_null());
	json_object_set_new(out, "bound_before_t0",
	    json_integer((json_int_t)early));
	json_object_set_new(out, "bound_when_listed",
	    json_integer((json_int_t)w->listed_bound));
	json_object_set_new(out, "unmeasured",
	    json_integer((json_int_t)unmeasured));
	/* Binds per second from the release (or first arrival) on. */
	start = w->t0_ms > 0			   ? w->t0_ms :
	    w->from_added && w->first_added_ms > 0 ? w->first_added_ms :
						     w->first_ms;
	span = w->last_ms - start;
	json_object_set_new(out, "binds_per_s", bw_rate(bound, span));
	pct_sort(v, n);
	json_object_set_new(out, "latency_ms", bw_pcts(v, n, n + late, 1));
	if (w->ngroups > 0) {
		groups = json_object();
		for (i = 0; i < w->ngroups; i++) {
			/* "NAME=PREFIX": the name ends at the '='. */
			name = xstrndup(w->groups[i], w->group_at[i] - 1);
			json_object_set_new(groups, name,
			    bw_group_report(w, w->groups[i] + w->group_at[i],
				start));
			free(name);
		}
		json_object_set_new(out, "groups", groups);
	}
	if (w->gang_label != NULL) {
		json_object_set_new(out, "gangs",
		    json_integer((json_int_t)w->ngangs));
		json_object_set_new(out, "partial_gangs",
		    json_integer((json_int_t)bw_partial_gangs(w)));
		json_object_set_new(out, "gang_spread_ms", bw_gang_spread(w));
		json_object_set_new(out, "unannotated_binds",
		    json_integer((json_int_t)w->unannotated));
	}
	free(v);
	return (out);
}

static void
bw_sample(FILE *fp, size_t bound)
{
	if (fp == NULL)
		return;
	fprintf(fp, "%" PRId64 " %zu\n", bench_now_ms(), bound);
	fflush(fp);
}

/* --synced-file: created empty once the first list is delivered. */
static void
bw_synced_write(const char *path)
{
	FILE *fp;

	if ((fp = fopen(path, "w")) == NULL || fclose(fp) == EOF)
		log_warn("%s", path);
}

static void
bw_cleanup(struct bw *w)
{
	size_t i;

	for (i = 0; i < w->ngangs; i++)
		free(w->gangs[i].name);
	for (i = 0; i < w->npods; i++)
		free(w->pods[i].name);
	free(w->gangs);
	free(w->pods);
	json_decref(w->pod_index);
	json_decref(w->gang_index);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		{ "t0", required_argument, NULL, '0' },
		{ "t0-file", required_argument, NULL, 'f' },
		{ "from-added", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "gang-label", required_argument, NULL, 'g' },
		{ "samples", required_argument, NULL, 's' },
		{ "binds", required_argument, NULL, 'b' },
		{ "synced-file", required_argument, NULL, 'y' },
		{ "group", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct k8s_informer_opts opts;
	struct k8s_informer	*inf = NULL;
	struct k8s_config	*conf = NULL;
	struct timespec		 tick;
	struct bw		 w;
	sigset_t		 sigs;
	json_t			*out = NULL;
	FILE			*samples = NULL;
	const char		*kubeconfig = NULL, *ns = NULL;
	const char		*samples_path = NULL, *t0_path = NULL;
	const char		*binds_path = NULL, *synced_path = NULL;
	char			*path = NULL, *eq;
	long long		 v, timeout = BW_TIMEOUT_S;
	int64_t			 deadline, next_sample, now;
	int			 ch, rc = 1, interrupted = 0, synced = 0;
	int			 bases = 0;

	memset(&w, 0, sizeof(w));
	atomic_init(&w.nbound, 0);
	atomic_init(&w.ndeleted, 0);
	atomic_init(&w.synced, 0);
	atomic_init(&w.done, 0);
	log_init(0);
	log_setname("bindwatch");
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			kubeconfig = optarg;
			break;
		case 'n':
			ns = optarg;
			break;
		case 'c':
			if (bench_parse_int(optarg, 1, 10000000, &v) == -1) {
				log_warnx("--count: \"%s\" is not 1-10000000",
				    optarg);
				return (2);
			}
			w.count = (size_t)v;
			break;
		case '0':
			if (bench_parse_int(optarg, 1, INT64_MAX, &v) == -1) {
				log_warnx("--t0: \"%s\" is not epoch ms",
				    optarg);
				return (2);
			}
			w.t0_ms = v;
			bases++;
			break;
		case 'f':
			t0_path = optarg;
			bases++;
			break;
		case 'a':
			w.from_added = 1;
			bases++;
			break;
		case 't':
			if (bench_parse_int(optarg, 1, 86400, &timeout) == -1) {
				log_warnx("--timeout: \"%s\" is not 1-86400 "
					  "seconds",
				    optarg);
				return (2);
			}
			break;
		case 'g':
			w.gang_label = *optarg != '\0' ? optarg : NULL;
			break;
		case 's':
			samples_path = optarg;
			break;
		case 'b':
			binds_path = optarg;
			break;
		case 'y':
			synced_path = optarg;
			break;
		case 'G':
			eq = strchr(optarg, '=');
			if (eq == NULL || eq == optarg || eq[1] == '\0' ||
			    w.ngroups == BW_GROUPS_MAX) {
				log_warnx("--group: \"%s\" is not NAME=PREFIX "
					  "(at most %d of them)",
				    optarg, BW_GROUPS_MAX);
				return (2);
			}
			w.group_at[w.ngroups] = (size_t)(eq - optarg) + 1;
			w.groups[w.ngroups++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc || ns == NULL || *ns == '\0' || w.count == 0) {
		usage(stderr);
		return (2);
	}
	if (bases > 1) {
		log_warnx(
		    "--t0, --t0-file and --from-added exclude each other");
		return (2);
	}
	if (bases == 0)
		log_info("no --t0: latency is from each pod's "
			 "creationTimestamp, which has one-second resolution");

	if (samples_path != NULL &&
	    (samples = fopen(samples_path, "a")) == NULL) {
		log_warn("%s", samples_path);
		goto fail;
	}
	if ((conf = kube_connect(kubeconfig)) == NULL)
		goto fail;
	w.pod_index = json_object();
	w.gang_index = json_object();
	xasprintf(&path, "/api/v1/namespaces/%s/pods", ns);
	memset(&opts, 0, sizeof(opts));
	opts.path = path;
	opts.name = "watch/pods";
	/* The informer inherits the mask: signals go to sigtimedwait. */
	bench_signals(&sigs);
	inf = k8s_informer_new(conf, &opts, bw_event_cb, &w);
	w.inf = inf;
	if (k8s_informer_start(inf) == -1) {
		log_warnx("informer %s: cannot start", path);
		goto fail;
	}

	now = bench_now_ms();
	deadline = now + timeout * 1000;
	next_sample = now;
	tick.tv_sec = 0;
	tick.tv_nsec = BW_TICK_MS * 1000000L;
	for (;;) {
		/*
		 * done implies synced, and is read after it: a first list
		 * that shows every pod bound already still tells the caller
		 * the watch ran.
		 */
		if (synced_path != NULL && !synced && atomic_load(&w.synced)) {
			bw_synced_write(synced_path);
			synced = 1;
		}
		if (atomic_load(&w.done)) {
			if (synced_path != NULL && !synced)
				bw_synced_write(synced_path);
			break;
		}
		now = bench_now_ms();
		if (samples != NULL && now >= next_sample) {
			bw_sample(samples, atomic_load(&w.nbound));
			next_sample += 1000;
		}
		if (now >= deadline) {
			log_warnx("timeout: %zu of %zu pods bound after %lld s",
			    atomic_load(&w.nbound), w.count, timeout);
			break;
		}
		if (sigtimedwait(&sigs, NULL, &tick) > 0) {
			log_warnx("interrupted: %zu of %zu pods bound",
			    atomic_load(&w.nbound), w.count);
			interrupted = 1;
			break;
		}
	}
	k8s_informer_stop(inf);
	bw_sample(samples, atomic_load(&w.nbound));
	/* The scheduler may have bound everything before it said ready. */
	if (t0_path != NULL && !interrupted &&
	    (w.t0_ms = bw_t0_read(t0_path, deadline)) == 0)
		log_warnx("%s: no t0 by the timeout: latency from each "
			  "pod's creationTimestamp",
		    t0_path);

	out = bw_report(&w);
	if (binds_path != NULL)
		bw_binds_write(&w, binds_path);
	if (kube_print(out) == -1)
		goto fail;
	if (!interrupted && atomic_load(&w.nbound) >= w.count &&
	    json_integer_value(json_object_get(out, "partial_gangs")) == 0 &&
	    json_integer_value(json_object_get(out, "unannotated_binds")) == 0)
		rc = 0;
fail:
	json_decref(out);
	k8s_informer_free(inf);
	free(path);
	if (samples != NULL)
		fclose(samples);
	bw_cleanup(&w);
	kube_fini(conf);
	return (rc);
}
