/*
 * slurm-bridge: places Kubernetes pods through Slurm.  main parses flags,
 * initializes libcurl, jansson and libslurm in that order, starts one
 * informer thread per watched kind and the reconcile thread, then waits for
 * SIGINT/SIGTERM with sigwait() and shuts everything down in order.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "log.h"
#include "xmalloc.h"
#include "k8s.h"
#include "config.h"
#include <malloc.h>

#include "bridge.h"

#define MUNGE_KEY_PATH	"/etc/munge/munge.key"

static void
usage(FILE *fp)
{
	fprintf(fp,
"usage: slurm-bridge [options]\n"
"  --config PATH          configuration file (default " CONFIG_DEFAULT_PATH "\n"
"                         if it exists)                 [BRIDGE_CONFIG]\n"
"  --kubeconfig PATH      kubeconfig (default: $KUBECONFIG, in-cluster,\n"
"                         ~/.kube/config)             [BRIDGE_KUBECONFIG]\n"
"  --scheduler-name NAME  pods to schedule (default: config schedulerName,\n"
"                         " BRIDGE_SCHEDULER_NAME ")\n"
"  --partition NAME       default Slurm partition (default: config\n"
"                         partition, " BRIDGE_PARTITION ")\n"
"  --poll-ms N            Slurm poll interval with pending jobs (default:\n"
"                         config slurmPollInterval, 100)\n"
"Flags win over the config file.\n"
"  --listen ADDR:PORT     serve /healthz, /readyz, /metrics (default\n"
"                         :8080; \"\" turns it off)         [BRIDGE_LISTEN]\n"
"  --tls-cert FILE        serve --listen over HTTPS with this certificate\n"
"  --tls-key FILE         ... and key (both reloaded when they change)\n"
"  --client-ca FILE       the extender API (/filter, /prioritize, /bind)\n"
"                         answers only clients whose certificate this CA\n"
"                         signed (needs --tls-cert); health and metrics\n"
"                         stay open to probes and scrapers\n"
"  --leader-elect         act only while holding the Lease slurm-bridge in\n"
"                         $POD_NAMESPACE (default: the kubeconfig's or the\n"
"                         service account's namespace)\n"
"  --jobid-label          also label each pod with its Slurm job id and add\n"
"                         the cleanup finalizer, before binding it: one\n"
"                         more API write per pod (default: config\n"
"                         jobIdLabel, false; the Binding carries the job\n"
"                         id as an annotation)\n"
"  -n                     check the configuration and exit\n"
"  -v                     more logging (repeatable)\n"
"  -h, --help             this text\n");
}

/* What the bridge watches: one informer thread each. */
static const struct {
	enum event_kind	 kind;
	const char	*path;
	const char	*name;
} watched[] = {
	{ EV_POD,	"/api/v1/pods",				"watch/pods" },
	/* Pods a stock kube-scheduler placed through the extender API. */
	{ EV_EXTPOD,	"/api/v1/pods",			"watch/extender-pods" },
	{ EV_NODE,	"/api/v1/nodes",			"watch/nodes" },
	{ EV_NAMESPACE,	"/api/v1/namespaces",			"watch/namespaces" },
	{ EV_JOB,	"/apis/batch/v1/jobs",			"watch/jobs" },
	{ EV_PODGROUP,	"/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
							"watch/podgroups" },
	{ EV_JOBSET,	"/apis/jobset.x-k8s.io/v1alpha2/jobsets",
							"watch/jobsets" },
	{ EV_LWS,	"/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
							"watch/lws" },
};
#define NINFORMERS	((int)(sizeof(watched) / sizeof(watched[0])))

struct informer_ctx {
	struct queue	*queue;
	enum event_kind	 kind;
};

/*
 * Runs on an informer thread: moves the object into the queue; a pod as
 * its compact record (podrec.c), its decoded tree dropped here.
 */
static void
informer_cb(enum k8s_event_type type, json_t *obj, void *arg)
{
	struct informer_ctx	*ctx = arg;
	struct event		*ev;

	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		fatalx("%s: calloc", __func__);
	ev->kind = ctx->kind;
	ev->type = type;
	ev->obj = obj;
	if (obj != NULL && (ctx->kind == EV_POD || ctx->kind == EV_EXTPOD)) {
		ev->pod = podrec_new(obj);
		json_decref(obj);
		ev->obj = NULL;
		if (ev->pod == NULL) {
			log_warnx("pod event without name or namespace: "
			    "ignored");
			free(ev);
			return;
		}
	}
	queue_push(ctx->queue, ev);
}

int
main(int argc, char *argv[])
{
	static const struct option	 longopts[] = {
		{ "config",		required_argument, NULL, 'C' },
		{ "kubeconfig",		required_argument, NULL, 'k' },
		{ "scheduler-name",	required_argument, NULL, 's' },
		{ "partition",		required_argument, NULL, 'p' },
		{ "poll-ms",		required_argument, NULL, 'P' },
		{ "listen",		required_argument, NULL, 'l' },
		{ "tls-cert",		required_argument, NULL, 'c' },
		{ "tls-key",		required_argument, NULL, 'K' },
		{ "client-ca",		required_argument, NULL, 'A' },
		{ "leader-elect",	no_argument,	   NULL, 'L' },
		{ "jobid-label",	no_argument,	   NULL, 'J' },
		{ "help",		no_argument,	   NULL, 'h' },
		{ NULL,			0,		   NULL, 0 }
	};
	struct bridge_conf	 conf;
	struct api_source	 src;
	struct api		*api = NULL;
	struct leader		*le = NULL;
	struct reconcile	*rec = NULL;
	const char		*names[NINFORMERS];
	struct config		*config;
	const char		*config_path;
	char			 cerr[512];
	struct k8s_config	*kconf;
	struct k8s_error	 err;
	struct queue		*queue;
	struct k8s_informer	*inf[NINFORMERS];
	struct informer_ctx	 ctx[NINFORMERS];
	struct k8s_informer_opts o;
	char			*sel, *othersel, *end;
	sigset_t		 set;
	int			 ch, sig, checkonly = 0, i;
	long			 n;

	memset(&conf, 0, sizeof(conf));
	conf.kubeconfig = config_env("BRIDGE_KUBECONFIG", NULL);
	config_path = config_env("BRIDGE_CONFIG", NULL);
	conf.scheduler_name = config_env("BRIDGE_SCHEDULER_NAME", NULL);
	conf.partition = config_env("BRIDGE_PARTITION", NULL);
	conf.idle_poll_ms = 1000;
	conf.listen = config_env("BRIDGE_LISTEN", ":8080");
	while ((ch = getopt_long(argc, argv, "hnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			config_path = optarg;
			break;
		case 'l':
			conf.listen = optarg;
			break;
		case 'c':
			conf.tls_cert = optarg;
			break;
		case 'K':
			conf.tls_key = optarg;
			break;
		case 'A':
			conf.client_ca = optarg;
			break;
		case 'L':
			conf.leader_elect = 1;
			break;
		case 'J':
			conf.jobid_label = 1;
			break;
		case 'k':
			conf.kubeconfig = optarg;
			break;
		case 's':
			conf.scheduler_name = optarg;
			break;
		case 'p':
			conf.partition = optarg;
			break;
		case 'P':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (*end != '\0' || errno != 0 || n < 10 || n > 60000) {
				fprintf(stderr, "slurm-bridge: --poll-ms: "
				    "\"%s\" is not a number of milliseconds "
				    "from 10 to 60000\n", optarg);
				return (2);
			}
			conf.poll_ms = (int)n;
			break;
		case 'n':
			checkonly = 1;
			break;
		case 'v':
			conf.verbose++;
			break;
		case 'h':
			usage(stdout);
			return (0);
		default:
			usage(stderr);
			return (2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		return (2);
	}
	log_init(conf.verbose);
	config = config_new();
	if (config_load_default(config, config_path, cerr, sizeof(cerr)) == -1)
		fatalx("%s", cerr);
	if (conf.scheduler_name == NULL)
		conf.scheduler_name = config->scheduler_name;
	if (conf.partition == NULL)
		conf.partition = config->partition;
	if (conf.poll_ms == 0)
		conf.poll_ms = config->poll_ms;
	conf.exclusive = config->exclusive;
	conf.jobid_label = conf.jobid_label || config->jobid_label;
	conf.api_qps = config->api_qps;
	conf.api_burst = config->api_burst;
	if (conf.listen != NULL && *conf.listen == '\0')
		conf.listen = NULL;
	if ((conf.tls_cert == NULL) != (conf.tls_key == NULL))
		fatalx("--tls-cert and --tls-key go together");
	if (conf.client_ca != NULL && conf.tls_cert == NULL)
		fatalx("--client-ca needs --tls-cert and --tls-key: client "
		    "certificates come with TLS");
	conf.default_account = config->default_account;
	conf.mcs_label = config->mcs_label;
	conf.managed_namespaces = config->managed_namespaces;
	conf.managed_namespace_selector = config->managed_namespace_selector;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init failed");
	json_object_seed(0);
	/*
	 * Two malloc arenas, not one per thread: the cache is built and torn
	 * down by one thread, and the informer, writer and HTTP threads only
	 * pass objects through.  Per-thread arenas each keep their own freed
	 * memory (tens of MB with thousands of pods).
	 */
	mallopt(M_ARENA_MAX, 2);
	/*
	 * Large blocks (list pages, Slurm's job loads, HTTP buffers) get
	 * their own mappings and go back to the system when freed.  A fixed
	 * threshold: glibc would otherwise raise it after the first large
	 * free, and later pages would stay in the heap at its high mark.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
	if ((kconf = k8s_config_default(conf.kubeconfig, &err)) == NULL)
		fatalx("kubeconfig: %s", err.text);
	/*
	 * libslurm authenticates through munged, which reads the key; a key
	 * others can read lets them act as any Slurm user, so refuse to run.
	 */
	if (k8s_file_check_perms(config_env("MUNGE_KEY", MUNGE_KEY_PATH),
	    "munge key", 1, &err) == -1)
		fatalx("%s", err.text);
	if (checkonly) {
		printf("configuration OK\n");
		config_free(config);
		k8s_config_free(kconf);
		curl_global_cleanup();
		return (0);
	}
	sctl_init();

	/* Threads inherit this mask; only main receives the signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Informers are made now so the API can count them; started later. */
	queue = queue_new();
	xasprintf(&sel, "spec.schedulerName=%s", conf.scheduler_name);
	xasprintf(&othersel, "spec.schedulerName!=%s", conf.scheduler_name);
	for (i = 0; i < NINFORMERS; i++) {
		memset(&o, 0, sizeof(o));
		o.path = watched[i].path;
		o.name = watched[i].name;
		if (watched[i].kind == EV_POD)
			o.field_selector = sel;
		else if (watched[i].kind == EV_EXTPOD) {
			o.field_selector = othersel;
			o.label_selector = LABEL_JOBID;
		}
		ctx[i].queue = queue;
		ctx[i].kind = watched[i].kind;
		inf[i] = k8s_informer_new(kconf, &o, informer_cb, &ctx[i]);
		names[i] = watched[i].name + strlen("watch/");
	}
	free(sel);
	free(othersel);
	src.queue = queue;
	src.informers = inf;
	src.names = names;
	src.ninformers = NINFORMERS;
	if (conf.listen != NULL &&
	    (api = api_start(&conf, &src, cerr, sizeof(cerr))) == NULL)
		fatalx("%s", cerr);

	/* Followers serve health and metrics, and wait. */
	sig = 0;
	if (conf.leader_elect) {
		/* $POD_NAMESPACE, else the service account's, else default. */
		if ((le = leader_new(kconf, config_env("POD_NAMESPACE",
		    k8s_config_namespace(kconf) != NULL ?
		    k8s_config_namespace(kconf) : "default"), "slurm-bridge",
		    cerr, sizeof(cerr))) == NULL)
			fatalx("%s", cerr);
		sig = leader_acquire(le, &set);
	}
	if (sig == 0) {
		atomic_store(&bstats.leader, 1);
		if ((rec = reconcile_new(&conf, kconf, queue)) == NULL ||
		    reconcile_start(rec) == -1)
			fatalx("cannot start the reconcile thread");
		for (i = 0; i < NINFORMERS; i++)
			if (k8s_informer_start(inf[i]) == -1)
				fatal("%s: start", watched[i].name);
		log_info("slurm-bridge: scheduling pods with schedulerName %s "
		    "via partition %s on %s", conf.scheduler_name,
		    conf.partition, k8s_config_server(kconf));
	}
	while (sig != SIGINT && sig != SIGTERM) {
		if (le != NULL)
			sig = leader_wait(le, &set);
		else if (sigwait(&set, &sig) != 0)
			sig = 0;
	}
	log_info("slurm-bridge: signal %d, stopping", sig);
	for (i = 0; i < NINFORMERS; i++)
		k8s_informer_cancel(inf[i]);
	for (i = 0; i < NINFORMERS; i++)
		k8s_informer_stop(inf[i]);
	if (rec != NULL) {
		reconcile_stop(rec);
		queue_close(queue);
		reconcile_join(rec);
	}
	/* Only once nothing acts any more may a follower take over. */
	if (le != NULL)
		leader_release(le);
	leader_free(le);
	api_stop(api);
	for (i = 0; i < NINFORMERS; i++)
		k8s_informer_free(inf[i]);
	reconcile_free(rec);
	queue_free(queue);
	sctl_fini();
	k8s_config_free(kconf);
	config_free(config);
	curl_global_cleanup();
	return (fail_happened() ? 1 : 0);
}
