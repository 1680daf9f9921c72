/*
 * bindwatch: measures when the pods of one namespace get bound, for make
 * bench.  An informer thread (libk8s) lists and watches the namespace's
 * pods; its callback owns all the bookkeeping and records, per pod (by uid),
 * the wall-clock time of the first event whose spec.nodeName is set.  With
 * --gang-label it also checks the all-or-nothing invariant on the event
 * stream: the bridge annotates every member of a gang with the Slurm node
 * before it binds any, and the watch delivers events in resourceVersion
 * order, so when a gang's first member is seen bound every member seen so
 * far must carry the annotation and all min-member members must have been
 * seen.  A list (the first one, or a relist after 410 Gone) delivers the
 * current objects in no particular order: a gang first seen bound there is
 * checked on the whole list once it is delivered.  The main thread only
 * waits (for N binds, the timeout or SIGINT/SIGTERM) and writes the
 * --samples lines from an atomic counter; then it joins the informer and
 * prints one JSON line on stdout.  Exits 0 when all N pods were bound with
 * no partial gang, 1 otherwise or on a setup error, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "log.h"
#include "xmalloc.h"
#include "k8s.h"
#include "pct.h"

#define BW_ANN_SLURM_NODE	"slinky.slurm.net/slurm-node"
#define BW_ANN_MIN_MEMBER	"scheduler.slinky.slurm.net/min-member"
#define BW_TIMEOUT_S		300
#define BW_TICK_MS		50

struct bw_pod {
	int64_t		 bind_ms;	/* epoch ms, first bound event; 0 */
	int64_t		 created_ms;	/* creationTimestamp; -1 when unknown */
	long		 gang;		/* index in bw.gangs, or -1 */
	int		 annotated;	/* carries the slurm-node annotation */
};

struct bw_gang {
	char		*name;
	long		 size;		/* min-member; 0 when not given */
	size_t		 members;	/* seen so far */
	size_t		 annotated;	/* of those, carrying the annotation */
	size_t		 bound;
	int		 checked;	/* its first bind was checked */
	int		 deferred;	/* first bind in a list: check later */
	int		 partial;
};

struct bw {
	/* read-only once the informer runs */
	size_t		 count;
	int64_t		 t0_ms;		/* 0: latency from creationTimestamp */
	const char	*gang_label;	/* NULL: no gang check */
	struct k8s_informer *inf;

	/* the informer thread's until it is joined */
	json_t		*pod_index;	/* uid -> index in pods */
	struct bw_pod	*pods;
	size_t		 npods, podcap;
	json_t		*gang_index;	/* name -> index in gangs */
	struct bw_gang	*gangs;
	size_t		 ngangs, gangcap;
	uint64_t	 nsynced;	/* lists delivered */
	size_t		 bound_at_list;	/* bound when first seen in a list */
	int64_t		 first_ms, last_ms;

	/* shared with main */
	atomic_size_t	 nbound;
	atomic_int	 done;
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: bindwatch [--kubeconfig F] --namespace NS --count N [--t0 EPOCH_MS]\n"
"                 [--timeout S] [--gang-label KEY] [--samples FILE]\n"
"  --kubeconfig F     kubeconfig (default: $KUBECONFIG, in-cluster,\n"
"                     ~/.kube/config)\n"
"  --namespace NS     the pods to watch\n"
"  --count N          stop once N pods are bound\n"
"  --t0 EPOCH_MS      latency from this moment (when the pods were released);\n"
"                     without it, from each pod's creationTimestamp, which\n"
"                     has one-second resolution\n"
"  --timeout S        give up after S seconds (default %d)\n"
"  --gang-label KEY   check gangs (pods sharing label KEY) are bound all or\n"
"                     nothing, e.g. scheduling.x-k8s.io/pod-group\n"
"  --samples FILE     append \"epoch_ms bound_count\" every second\n"
"Prints one JSON line on stdout.\n", BW_TIMEOUT_S);
}

static int64_t
bw_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* RFC 3339 "2026-01-02T03:04:05Z" in epoch ms, or -1. */
static int64_t
bw_parse_time(const char *s)
{
	struct tm	tm;
	time_t		t;

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

/* A whole number in [min, max]; 0, or -1 when s is not one. */
static int
bw_parse_int(const char *s, long long min, long long max, long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

/* The gang named name, created on first sight. */
static struct bw_gang *
bw_gang_get(struct bw *w, const char *name, long *idx)
{
	struct bw_gang	*g;
	json_t		*v;

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

/* The pod's record, created on first sight; NULL without uid or name. */
static struct bw_pod *
bw_pod_get(struct bw *w, const json_t *obj)
{
	struct bw_pod	*p;
	const char	*key;
	json_t		*v;

	/* A pod recreated under the same name is another pod. */
	if ((key = k8s_obj_uid(obj)) == NULL &&
	    (key = k8s_obj_name(obj)) == NULL)
		return (NULL);
	if ((v = json_object_get(w->pod_index, key)) != NULL)
		return (&w->pods[json_integer_value(v)]);
	if (w->npods == w->podcap) {
		w->podcap = w->podcap == 0 ? 256 : w->podcap * 2;
		w->pods = xreallocarray(w->pods, w->podcap, sizeof(*w->pods));
	}
	p = &w->pods[w->npods];
	memset(p, 0, sizeof(*p));
	p->gang = -1;
	p->created_ms = bw_parse_time(k8s_obj_str(obj,
	    "metadata.creationTimestamp"));
	json_object_set_new(w->pod_index, key,
	    json_integer((json_int_t)w->npods));
	w->npods++;
	return (p);
}

/* Puts a pod in its gang the first time it is seen with the label. */
static void
bw_gang_join(struct bw *w, struct bw_pod *p, const json_t *obj)
{
	struct bw_gang	*g;
	const char	*name, *min;
	long long	 n;

	if (w->gang_label == NULL || p->gang >= 0 ||
	    (name = k8s_obj_label(obj, w->gang_label)) == NULL ||
	    *name == '\0')
		return;
	g = bw_gang_get(w, name, &p->gang);
	g->members++;
	if (g->size == 0 && (min = k8s_obj_annotation(obj,
	    BW_ANN_MIN_MEMBER)) != NULL) {
		if (bw_parse_int(min, 1, 1000000, &n) == 0)
			g->size = (long)n;
		else
			log_warnx("gang %s: annotation " BW_ANN_MIN_MEMBER
			    " \"%.32s\" is not a size; not checking it", name,
			    min);
	}
}

/*
 * A gang's first member was just seen bound (obj; NULL after a list): every
 * member seen so far must carry the slurm-node annotation, and all its
 * members must have been seen.
 */
static void
bw_gang_check(struct bw_gang *g, const json_t *obj)
{
	const char	*name = obj != NULL ? k8s_obj_name(obj) : NULL;

	g->checked = 1;
	if (g->annotated == g->members &&
	    (g->size == 0 || g->members >= (size_t)g->size))
		return;
	g->partial = 1;
	log_warnx("gang %s: partial: %s%s bound with %zu members seen "
	    "(min-member %ld), %zu of them annotated " BW_ANN_SLURM_NODE,
	    g->name, obj != NULL ? "pod " : "a member (listed)",
	    obj != NULL ? (name != NULL ? name : "?") : "", g->members,
	    g->size, g->annotated);
}

/*
 * One ADDED or MODIFIED pod, at now_ms.  listing: it comes from a list, in
 * no particular order, not from the watch.
 */
static void
bw_pod_update(struct bw *w, const json_t *obj, int64_t now_ms, int listing)
{
	struct bw_pod	*p;
	struct bw_gang	*g = NULL;
	const char	*node, *ann;
	int		 annotated;

	if (!json_is_object(obj) || (p = bw_pod_get(w, obj)) == NULL)
		return;
	bw_gang_join(w, p, obj);
	if (p->gang >= 0)
		g = &w->gangs[p->gang];
	ann = k8s_obj_annotation(obj, BW_ANN_SLURM_NODE);
	annotated = ann != NULL && *ann != '\0';
	if (annotated != p->annotated) {
		p->annotated = annotated;
		if (g != NULL) {
			if (annotated)
				g->annotated++;
			else
				g->annotated--;
		}
	}
	node = k8s_obj_str(obj, "spec.nodeName");
	if (node == NULL || *node == '\0' || p->bind_ms != 0)
		return;
	p->bind_ms = now_ms;
	if (w->first_ms == 0 || now_ms < w->first_ms)
		w->first_ms = now_ms;
	if (now_ms > w->last_ms)
		w->last_ms = now_ms;
	if (listing)
		w->bound_at_list++;
	if (g != NULL) {
		g->bound++;
		if (listing && !g->checked)
			g->deferred = 1;
		else if (!g->checked)
			bw_gang_check(g, obj);
	}
	if (atomic_fetch_add(&w->nbound, 1) + 1 >= w->count)
		atomic_store(&w->done, 1);
}

/* Informer callback (informer thread): takes obj. */
static void
bw_event_cb(enum k8s_event_type type, json_t *obj, const json_t *old,
    void *arg)
{
	struct bw	*w = arg;
	int64_t		 now_ms = bw_now_ms();
	size_t		 i;

	(void)old;
	switch (type) {
	case K8S_EVENT_ADDED:
	case K8S_EVENT_MODIFIED:
		/*
		 * The informer counts a list before it delivers its items
		 * and sends SYNCED after them.
		 */
		bw_pod_update(w, obj, now_ms,
		    k8s_informer_relists(w->inf) > w->nsynced);
		break;
	case K8S_EVENT_SYNCED:
		for (i = 0; i < w->ngangs; i++)
			if (w->gangs[i].deferred && !w->gangs[i].checked)
				bw_gang_check(&w->gangs[i], NULL);
		/* Those binds happened while we were not watching. */
		if (w->bound_at_list > 0)
			log_warnx("%zu pods were bound when %s listed them: "
			    "their bind time is when it did", w->bound_at_list,
			    w->nsynced == 0 ? "bindwatch first" : "a relist");
		w->bound_at_list = 0;
		w->nsynced++;
		break;
	default:
		/* A deleted pod stays counted as it was. */
		break;
	}
	json_decref(obj);
}

/* Gangs left with some but not all members bound count as partial. */
static size_t
bw_partial_gangs(struct bw *w)
{
	struct bw_gang	*g;
	size_t		 i, want, partial = 0;

	for (i = 0; i < w->ngangs; i++) {
		g = &w->gangs[i];
		want = g->size > 0 && (size_t)g->size > g->members ?
		    (size_t)g->size : g->members;
		if (!g->partial && g->bound > 0 && g->bound < want) {
			g->partial = 1;
			log_warnx("gang %s: partial: %zu of %zu members bound "
			    "at exit", g->name, g->bound, want);
		}
		if (g->partial)
			partial++;
	}
	return (partial);
}

/* The result line; call after the informer is joined. */
static json_t *
bw_report(struct bw *w)
{
	json_t		*out, *lat;
	double		*v;
	int64_t		 span;
	size_t		 i, n = 0, bound = 0, partial;

	v = xcalloc(w->npods > 0 ? w->npods : 1, sizeof(*v));
	for (i = 0; i < w->npods; i++) {
		if (w->pods[i].bind_ms == 0)
			continue;
		bound++;
		if (w->t0_ms > 0)
			v[n++] = (double)(w->pods[i].bind_ms - w->t0_ms);
		else if (w->pods[i].created_ms >= 0)
			v[n++] = (double)(w->pods[i].bind_ms -
			    w->pods[i].created_ms);
	}
	partial = bw_partial_gangs(w);
	out = json_object();
	json_object_set_new(out, "pods", json_integer((json_int_t)w->count));
	json_object_set_new(out, "bound", json_integer((json_int_t)bound));
	json_object_set_new(out, "first_bind_ms", bound > 0 ?
	    json_integer(w->first_ms) : json_null());
	json_object_set_new(out, "last_bind_ms", bound > 0 ?
	    json_integer(w->last_ms) : json_null());
	span = w->last_ms - (w->t0_ms > 0 ? w->t0_ms : w->first_ms);
	json_object_set_new(out, "binds_per_s", bound > 0 && span > 0 ?
	    json_real((double)(int64_t)((double)bound * 1e5 / (double)span) /
	    100.0) : json_null());
	lat = json_object();
	if (n > 0) {
		pct_sort(v, n);
		json_object_set_new(lat, "p50",
		    json_integer((json_int_t)pct_rank(v, n, 50)));
		json_object_set_new(lat, "p90",
		    json_integer((json_int_t)pct_rank(v, n, 90)));
		json_object_set_new(lat, "p99",
		    json_integer((json_int_t)pct_rank(v, n, 99)));
		json_object_set_new(lat, "max", json_integer((json_int_t)v[n - 1]));
	} else {
		json_object_set_new(lat, "p50", json_null());
		json_object_set_new(lat, "p90", json_null());
		json_object_set_new(lat, "p99", json_null());
		json_object_set_new(lat, "max", json_null());
	}
	json_object_set_new(out, "latency_ms", lat);
	json_object_set_new(out, "partial_gangs",
	    json_integer((json_int_t)partial));
	json_object_set_new(out, "gangs", json_integer((json_int_t)w->ngangs));
	free(v);
	return (out);
}

static void
bw_sample(FILE *fp, size_t bound)
{
	if (fp == NULL)
		return;
	fprintf(fp, "%" PRId64 " %zu\n", bw_now_ms(), bound);
	fflush(fp);
}

static void
bw_cleanup(struct bw *w)
{
	size_t	i;

	for (i = 0; i < w->ngangs; i++)
		free(w->gangs[i].name);
	free(w->gangs);
	free(w->pods);
	json_decref(w->pod_index);
	json_decref(w->gang_index);
}

int
main(int argc, char *argv[])
{
	static const struct option	 longopts[] = {
		{ "kubeconfig",	required_argument,	NULL,	'k' },
		{ "namespace",	required_argument,	NULL,	'n' },
		{ "count",	required_argument,	NULL,	'c' },
		{ "t0",		required_argument,	NULL,	'0' },
		{ "timeout",	required_argument,	NULL,	't' },
		{ "gang-label",	required_argument,	NULL,	'g' },
		{ "samples",	required_argument,	NULL,	's' },
		{ "help",	no_argument,		NULL,	'h' },
		{ NULL,		0,			NULL,	0 }
	};
	struct k8s_informer_opts	 opts;
	struct k8s_informer		*inf = NULL;
	struct k8s_config		*conf = NULL;
	struct k8s_error		 err;
	struct timespec			 tick;
	struct bw			 w;
	sigset_t			 sigs;
	json_t				*out = NULL;
	FILE				*samples = NULL;
	const char			*kubeconfig = NULL, *ns = NULL;
	const char			*samples_path = NULL;
	char				*path = NULL;
	long long			 v, timeout = BW_TIMEOUT_S;
	int64_t				 deadline, next_sample, now;
	int				 ch, rc = 1, interrupted = 0;

	memset(&w, 0, sizeof(w));
	atomic_init(&w.nbound, 0);
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
			if (bw_parse_int(optarg, 1, 10000000, &v) == -1) {
				log_warnx("--count: \"%s\" is not 1-10000000",
				    optarg);
				return (2);
			}
			w.count = (size_t)v;
			break;
		case '0':
			if (bw_parse_int(optarg, 1, INT64_MAX, &v) == -1) {
				log_warnx("--t0: \"%s\" is not epoch ms",
				    optarg);
				return (2);
			}
			w.t0_ms = v;
			break;
		case 't':
			if (bw_parse_int(optarg, 1, 86400, &timeout) == -1) {
				log_warnx("--timeout: \"%s\" is not 1-86400 "
				    "seconds", optarg);
				return (2);
			}
			break;
		case 'g':
			w.gang_label = *optarg != '\0' ? optarg : NULL;
			break;
		case 's':
			samples_path = optarg;
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
	if (w.t0_ms == 0)
		log_info("no --t0: latency is from each pod's "
		    "creationTimestamp, which has one-second resolution");

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init failed");
	json_object_seed(0);
	w.pod_index = json_object();
	w.gang_index = json_object();
	if (samples_path != NULL && (samples = fopen(samples_path, "a")) ==
	    NULL) {
		log_warn("%s", samples_path);
		goto fail;
	}
	if ((conf = k8s_config_default(kubeconfig, &err)) == NULL) {
		log_warnx("kubeconfig: %s: %s", err.reason, err.text);
		goto fail;
	}
	xasprintf(&path, "/api/v1/namespaces/%s/pods", ns);
	memset(&opts, 0, sizeof(opts));
	opts.path = path;
	opts.name = "watch/pods";
	/* The informer inherits the mask: signals go to sigtimedwait. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	inf = k8s_informer_new(conf, &opts, bw_event_cb, &w);
	w.inf = inf;
	if (k8s_informer_start(inf) == -1) {
		log_warnx("informer %s: cannot start", path);
		goto fail;
	}

	now = bw_now_ms();
	deadline = now + timeout * 1000;
	next_sample = now;
	tick.tv_sec = 0;
	tick.tv_nsec = BW_TICK_MS * 1000000L;
	while (!atomic_load(&w.done)) {
		now = bw_now_ms();
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

	out = bw_report(&w);
	if (json_dumpf(out, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(12)) == -1)
		goto fail;
	putchar('\n');
	fflush(stdout);
	if (!interrupted && atomic_load(&w.done) &&
	    json_integer_value(json_object_get(out, "partial_gangs")) == 0)
		rc = 0;
 fail:
	json_decref(out);
	k8s_informer_free(inf);
	k8s_config_free(conf);
	free(path);
	if (samples != NULL)
		fclose(samples);
	bw_cleanup(&w);
	curl_global_cleanup();
	return (rc);
}
