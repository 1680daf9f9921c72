/*
 * podgen: creates pods at a fixed rate, for the fixed-rate scenario of make
 * bench.  Pod i is due at t0 + i / rate on one schedule fixed up front, so
 * a slow request delays only the pods of its thread that are due while it
 * runs, and the generator never drifts: a late pod is sent at once and the
 * next ones keep their times.  A few threads (--threads) each own a libk8s
 * client with no client-side rate limit and take every T-th pod; with
 * --lifetime each thread also deletes its pods that many seconds after they
 * were due, so a long run fits in the cluster.  The main thread only starts
 * and joins them (and turns SIGINT/SIGTERM into a stop flag), then writes
 * the --out lines and one JSON line on stdout: how late the requests went
 * out and how long the creates took.  Exits 0 when every pod was created
 * (and deleted, with --lifetime), 1 otherwise or on a setup error, 2 on a
 * usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
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

#define PG_THREADS     8
#define PG_THREADS_MAX 64
#define PG_WARMUP_MS   500	  /* connect every client before t0 */
#define PG_SLICE_NS    100000000L /* stop-flag check */
#define PG_TOLERATION  "slinky.slurm.net/managed-node"

struct pg_pod {
	int64_t due_us;	 /* epoch us */
	int64_t sent_us; /* epoch us, the POST began; 0 */
	int64_t done_us; /* epoch us, the POST returned; 0 */
	long	status;	 /* HTTP status of the POST; 0 */
	int	created;
	int	deleted;
};

struct pg {
	/* read-only once the threads run */
	const struct k8s_config *conf;
	const char		*ns;
	const char		*prefix;
	const char		*scheduler;
	double			 rate;
	size_t			 count;
	int64_t			 life_us; /* 0: keep the pods */
	unsigned int		 nthreads;
	struct timespec		 mono0;	   /* t0, monotonic */
	int64_t			 real0_us; /* t0, epoch us */

	/* element i is written only by thread i % nthreads */
	struct pg_pod *pods;

	atomic_int    stop;
	atomic_uint   finished; /* threads done */
	atomic_size_t errors, delete_errors;
};

struct pg_thread {
	struct pg   *pg;
	unsigned int id;
	pthread_t    thread;
	char	     first_err[512]; /* its first error */
};

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: podgen [--kubeconfig F] --namespace NS --rate R --seconds S\n"
	    "              [--lifetime S] [--threads T] [--prefix P] [--scheduler NAME]\n"
	    "              [--out FILE]\n"
	    "  --namespace NS     where the pods go\n"
	    "  --rate R           pods per second (pod i due at t0 + i / R)\n"
	    "  --seconds S        for S seconds: R x S pods\n"
	    "  --lifetime S       delete each pod S seconds after it was due (default:\n"
	    "                     keep them)\n"
	    "  --threads T        senders, each with its own client (default %d)\n"
	    "  --prefix P         pod names P-0, P-1, ... (default f)\n"
	    "  --scheduler NAME   spec.schedulerName (default default-scheduler)\n"
	    "  --out FILE         per pod: \"name due_ms sent_ms returned_ms status\"\n"
	    "                     (epoch ms; returned_ms -1 when the create failed)\n"
	    "The pods are one-CPU, 64 MiB busybox pods that tolerate the bridge's\n"
	    "node taint, as make bench's singles.  Prints one JSON line on stdout.\n",
	    PG_THREADS);
}

/*
 * Sleeps until at (monotonic), in slices that watch the stop flag.
 * 0, or -1 when asked to stop.
 */
static int
pg_sleep_until(struct pg *pg, const struct timespec *at)
{
	struct timespec now, slice;

	for (;;) {
		if (atomic_load(&pg->stop))
			return (-1);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!bench_ts_before(&now, at))
			return (0);
		slice = bench_ts_add(&now, PG_SLICE_NS / 1000);
		if (bench_ts_before(at, &slice))
			slice = *at;
		bench_sleep_until(&slice);
	}
}

/* Offset of pod i from t0, in us. */
static int64_t
pg_offset_us(const struct pg *pg, size_t i)
{
	return ((int64_t)((double)i * 1e6 / pg->rate));
}

/* Keeps a thread's first error for the report. */
static void
pg_error(struct pg_thread *t, const char *what, size_t i,
    const struct k8s_error *err)
{
	if (t->first_err[0] == '\0')
		snprintf(t->first_err, sizeof(t->first_err),
		    "%s %.64s-%zu: %ld %.63s: %.255s", what, t->pg->prefix, i,
		    err->status, err->reason, err->text);
}

/* The pod object of pod i: a new reference. */
static json_t *
pg_pod_new(const struct pg *pg, size_t i)
{
	char name[256];

	snprintf(name, sizeof(name), "%s-%zu", pg->prefix, i);
	return (json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, "
			  "s:{s:s, s:i, s:[{s:s, s:s}], "
			  "s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
	    "namespace", pg->ns, "labels", "app", "podgen", "spec",
	    "schedulerName", pg->scheduler, "terminationGracePeriodSeconds", 0,
	    "tolerations", "key", PG_TOLERATION, "operator", "Exists",
	    "containers", "name", "main", "image", "busybox", "resources",
	    "requests", "cpu", "1", "memory", "64Mi"));
}

static void
pg_create(struct pg_thread *t, struct k8s_client *c, const char *path, size_t i)
{
	struct pg	*pg = t->pg;
	struct pg_pod	*p = &pg->pods[i];
	struct k8s_error err;
	json_t		*body = pg_pod_new(pg, i);

	p->sent_us = bench_now_us();
	if (k8s_create(c, path, body, NULL, &err) == 0) {
		p->done_us = bench_now_us();
		p->status = 201;
		p->created = 1;
	} else {
		p->status = err.status;
		atomic_fetch_add(&pg->errors, 1);
		pg_error(t, "create", i, &err);
	}
	json_decref(body);
}

static void
pg_delete(struct pg_thread *t, struct k8s_client *c, const char *path, size_t i)
{
	struct pg	*pg = t->pg;
	struct pg_pod	*p = &pg->pods[i];
	struct k8s_error err;
	char		*url;

	if (!p->created)
		return;
	xasprintf(&url, "%s/%s-%zu", path, pg->prefix, i);
	/* Gone already is what we wanted. */
	if (k8s_delete(c, url, NULL, &err) == 0 || err.status == 404)
		p->deleted = 1;
	else {
		atomic_fetch_add(&pg->delete_errors, 1);
		pg_error(t, "delete", i, &err);
	}
	free(url);
}

/*
 * Sender thread: its pods i = id, id + T, ...  Creates and deletes are two
 * sorted timelines; it serves whichever is due first.
 */
static void *
pg_main(void *arg)
{
	struct pg_thread  *t = arg;
	struct pg	  *pg = t->pg;
	struct k8s_client *c;
	struct k8s_error   err;
	struct timespec	   at_c, at_d;
	char		  *path;
	json_t		  *out = NULL;
	size_t		   ci = t->id, di = t->id;
	int		   more_c, more_d;

	xasprintf(&path, "/api/v1/namespaces/%s/pods", pg->ns);
	if ((c = k8s_client_new(pg->conf, &err)) == NULL) {
		pg_error(t, "client", 0, &err);
		atomic_fetch_add(&pg->errors, 1);
		goto done;
	}
	k8s_client_set_rate(c, 0, 0);
	/* One request opens the connection (TLS) before t0. */
	if (k8s_get(c, "/version", &out, &err) == -1)
		log_warnx("thread %u: warm-up: %s", t->id, err.text);
	json_decref(out);
	for (;;) {
		more_c = ci < pg->count;
		/* Only a pod whose create was tried can be deleted. */
		more_d = pg->life_us > 0 && di < ci;
		if (more_c)
			at_c = bench_ts_add(&pg->mono0, pg_offset_us(pg, ci));
		if (more_d)
			at_d = bench_ts_add(&pg->mono0,
			    pg_offset_us(pg, di) + pg->life_us);
		if (more_c && (!more_d || !bench_ts_before(&at_d, &at_c))) {
			if (pg_sleep_until(pg, &at_c) == -1)
				break;
			pg_create(t, c, path, ci);
			ci += pg->nthreads;
		} else if (more_d) {
			if (pg_sleep_until(pg, &at_d) == -1)
				break;
			pg_delete(t, c, path, di);
			di += pg->nthreads;
		} else
			break;
	}
done:
	k8s_client_free(c);
	free(path);
	atomic_fetch_add(&pg->finished, 1);
	return (NULL);
}

/* {p50, p99, max} of n values in us, as ms with 0.1 ms resolution. */
static json_t *
pg_pcts(double *v, size_t n)
{
	if (n == 0)
		return (json_pack("{s:n, s:n, s:n}", "p50", "p99", "max"));
	pct_sort(v, n);
	return (json_pack("{s:f, s:f, s:f}", "p50",
	    (double)(int64_t)(pct_rank(v, n, 50) / 100) / 10, "p99",
	    (double)(int64_t)(pct_rank(v, n, 99) / 100) / 10, "max",
	    (double)(int64_t)(v[n - 1] / 100) / 10));
}

/* The summary line, and the --out lines. */
static json_t *
pg_report(struct pg *pg, const struct pg_thread *th, unsigned int nth,
    const char *out_path)
{
	struct pg_pod *p;
	const char    *first_err = NULL;
	FILE	      *fp = NULL;
	json_t	      *o;
	double	      *late, *post;
	int64_t	       first = 0, last = 0;
	size_t	       i, nsent = 0, ncreated = 0, ndeleted = 0;

	if (out_path != NULL && (fp = fopen(out_path, "w")) == NULL)
		log_warn("%s", out_path);
	late = xcalloc(pg->count, sizeof(*late));
	post = xcalloc(pg->count, sizeof(*post));
	for (i = 0; i < pg->count; i++) {
		p = &pg->pods[i];
		if (p->sent_us == 0)
			continue;
		late[nsent++] = (double)(p->sent_us - p->due_us);
		if (first == 0 || p->sent_us < first)
			first = p->sent_us;
		if (p->sent_us > last)
			last = p->sent_us;
		if (p->created)
			post[ncreated++] = (double)(p->done_us - p->sent_us);
		if (p->deleted)
			ndeleted++;
		if (fp != NULL)
			fprintf(fp,
			    "%s-%zu %" PRId64 " %" PRId64 " %" PRId64 " %ld\n",
			    pg->prefix, i, p->due_us / 1000, p->sent_us / 1000,
			    p->created ? p->done_us / 1000 : -1, p->status);
	}
	if (fp != NULL && fclose(fp) == EOF)
		log_warn("%s", out_path);
	for (i = 0; i < nth && first_err == NULL; i++)
		if (th[i].first_err[0] != '\0')
			first_err = th[i].first_err;
	o = json_object();
	json_object_set_new(o, "pods", json_integer((json_int_t)pg->count));
	json_object_set_new(o, "created", json_integer((json_int_t)ncreated));
	json_object_set_new(o, "errors",
	    json_integer((json_int_t)atomic_load(&pg->errors)));
	json_object_set_new(o, "first_error",
	    first_err != NULL ? json_string(first_err) : json_null());
	json_object_set_new(o, "deleted", json_integer((json_int_t)ndeleted));
	json_object_set_new(o, "delete_errors",
	    json_integer((json_int_t)atomic_load(&pg->delete_errors)));
	json_object_set_new(o, "rate", json_real(pg->rate));
	json_object_set_new(o, "threads", json_integer(pg->nthreads));
	json_object_set_new(o, "lifetime_s",
	    json_real((double)pg->life_us / 1e6));
	json_object_set_new(o, "t0_ms", json_integer(pg->real0_us / 1000));
	/* What the API server got: sends over the first to the last. */
	json_object_set_new(o, "sent_per_s",
	    nsent > 1 && last > first ?
		json_real((double)(int64_t)((double)(nsent - 1) * 1e8 /
			      (double)(last - first)) /
		    100.0) :
		json_null());
	json_object_set_new(o, "send_late_ms", pg_pcts(late, nsent));
	json_object_set_new(o, "post_ms", pg_pcts(post, ncreated));
	free(late);
	free(post);
	return (o);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "lifetime", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 'T' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "scheduler", required_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct pg_thread  *th = NULL;
	struct k8s_config *conf = NULL;
	struct timespec	   tick = { 0, 100000000L };
	struct pg	   pg;
	sigset_t	   sigs;
	json_t		  *out = NULL;
	const char	  *kubeconfig = NULL, *out_path = NULL;
	double		   seconds = 0, life = 0;
	long long	   n;
	size_t		   i;
	unsigned int	   started = 0;
	int		   ch, rc = 1;

	memset(&pg, 0, sizeof(pg));
	pg.prefix = "f";
	pg.scheduler = "default-scheduler";
	pg.nthreads = PG_THREADS;
	atomic_init(&pg.stop, 0);
	atomic_init(&pg.finished, 0);
	atomic_init(&pg.errors, 0);
	atomic_init(&pg.delete_errors, 0);
	log_init(0);
	log_setname("podgen");
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			kubeconfig = optarg;
			break;
		case 'n':
			pg.ns = optarg;
			break;
		case 'r':
			if (bench_parse_double(optarg, 0.001, 100000,
				&pg.rate) == -1) {
				log_warnx("--rate: \"%s\" is not 0.001-100000 "
					  "pods/s",
				    optarg);
				return (2);
			}
			break;
		case 's':
			if (bench_parse_double(optarg, 0.001, 86400,
				&seconds) == -1) {
				log_warnx("--seconds: \"%s\" is not "
					  "0.001-86400",
				    optarg);
				return (2);
			}
			break;
		case 'l':
			if (bench_parse_double(optarg, 0, 86400, &life) == -1) {
				log_warnx("--lifetime: \"%s\" is not 0-86400 "
					  "seconds",
				    optarg);
				return (2);
			}
			break;
		case 'T':
			if (bench_parse_int(optarg, 1, PG_THREADS_MAX, &n) ==
			    -1) {
				log_warnx("--threads: \"%s\" is not 1-%d",
				    optarg, PG_THREADS_MAX);
				return (2);
			}
			pg.nthreads = (unsigned int)n;
			break;
		case 'p':
			pg.prefix = optarg;
			break;
		case 'S':
			pg.scheduler = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc || pg.ns == NULL || *pg.ns == '\0' || pg.rate == 0 ||
	    seconds == 0) {
		usage(stderr);
		return (2);
	}
	pg.count = (size_t)(pg.rate * seconds + 0.5);
	if (pg.count == 0 || pg.count > 10000000) {
		log_warnx("--rate x --seconds: %zu pods is not 1-10000000",
		    pg.count);
		return (2);
	}
	pg.life_us = (int64_t)(life * 1e6);

	if ((conf = kube_connect(kubeconfig)) == NULL)
		goto fail;
	pg.conf = conf;
	pg.pods = xcalloc(pg.count, sizeof(*pg.pods));
	/* One t0 on both clocks: sleeps are monotonic, stamps epoch. */
	clock_gettime(CLOCK_MONOTONIC, &pg.mono0);
	pg.real0_us = bench_now_us() + PG_WARMUP_MS * 1000;
	pg.mono0 = bench_ts_add(&pg.mono0, PG_WARMUP_MS * 1000);
	for (i = 0; i < pg.count; i++)
		pg.pods[i].due_us = pg.real0_us + pg_offset_us(&pg, i);

	/* The threads inherit the mask: signals go to sigtimedwait. */
	bench_signals(&sigs);
	th = xcalloc(pg.nthreads, sizeof(*th));
	for (started = 0; started < pg.nthreads; started++) {
		th[started].pg = &pg;
		th[started].id = started;
		if ((errno = pthread_create(&th[started].thread, NULL, pg_main,
			 &th[started])) != 0) {
			log_warn("pthread_create");
			atomic_store(&pg.stop, 1);
			break;
		}
	}
	while (atomic_load(&pg.finished) < started) {
		if (sigtimedwait(&sigs, NULL, &tick) > 0) {
			log_warnx("interrupted: stopping");
			atomic_store(&pg.stop, 1);
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(th[i].thread, NULL);

	out = pg_report(&pg, th, started, out_path);
	if (kube_print(out) == -1)
		goto fail;
	if (started == pg.nthreads && !atomic_load(&pg.stop) &&
	    atomic_load(&pg.errors) == 0 && atomic_load(&pg.delete_errors) == 0)
		rc = 0;
fail:
	json_decref(out);
	free(th);
	free(pg.pods);
	kube_fini(conf);
	return (rc);
}
