/*
 * slurm-bridge: places Kubernetes pods through Slurm.  main parses flags,
 * initializes libcurl, jansson and libslurm in that order, starts one
 * informer thread per watched kind, the reconcile thread (which starts its
 * workers: queue.h has the thread map) and the HTTP endpoints, then waits
 * for SIGINT/SIGTERM with sigwait() and shuts everything down in order.
 *
 * Threads: main, informer (informer_cb, informer_owner_kind).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include "config.h"
#include "daemon.h"
#include "k8s.h"
#include "log.h"
#include "xmalloc.h"
#include "httpd.h"
#include "ownerrec.h"
#include "bridge.h"
#include "runas.h"

#define MUNGE_KEY_PATH "/etc/munge/munge.key"
/*
 * --client-name by default: the CN that slurm-bridge-admission
 * --issue-certs gives the extender's client certificate (Secret
 * slurm-bridge-extender-client), so that of all the certificates its CA
 * signs (the webhook's and the scheduler's serving ones too), only that
 * one may call the extender API.
 */
#define CLIENT_NAME_DEFAULT "slurm-bridge-extender-client"
/*
 * Connections at once, and from one address: kube-scheduler (its binds
 * run in parallel), Prometheus and the kubelet's probes, none of whom
 * needs more than half.
 */
#define MAX_CONNS_DEFAULT	     128
#define MAX_CONNS_PER_CLIENT_DEFAULT 64

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: slurm-bridge [options]\n"
	    "  --config PATH          configuration file (default " CONFIG_DEFAULT_PATH
	    "\n"
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
	    "  --listen ADDR:PORT     serve /healthz, /readyz, /metrics and the\n"
	    "                         extender API (default 127.0.0.1:8080, loopback\n"
	    "                         only; :8080 for every interface; \"\" turns\n"
	    "                         it off)                        [BRIDGE_LISTEN]\n"
	    "  --tls-cert FILE        serve --listen over HTTPS with this certificate\n"
	    "  --tls-key FILE         ... and key (both reloaded when they change)\n"
	    "  --client-ca FILE       the extender API (/filter, /prioritize, /bind)\n"
	    "                         answers only clients whose certificate this CA\n"
	    "                         signed (needs --tls-cert); health and metrics\n"
	    "                         stay open to probes and scrapers.  Without\n"
	    "                         it the extender API answers 403\n"
	    "  --client-name NAME[,NAME...]\n"
	    "                         ... and whose certificate names one of these\n"
	    "                         (CN or DNS name; \"*\": any) and is for\n"
	    "                         clientAuth (default " CLIENT_NAME_DEFAULT
	    ")\n"
	    "  --max-connections N    connections at once (default 128)\n"
	    "  --max-connections-per-client N\n"
	    "                         ... from one address (default 64)\n"
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
	enum msg_kind kind;
	const char   *path;
	const char   *name;
} watched[] = {
	{ MSG_POD, "/api/v1/pods", "watch/pods" },
	/* Pods a stock kube-scheduler placed through the extender API. */
	{ MSG_EXTPOD, "/api/v1/pods", "watch/extender-pods" },
	{ MSG_NODE, "/api/v1/nodes", "watch/nodes" },
	{ MSG_NAMESPACE, "/api/v1/namespaces", "watch/namespaces" },
	{ MSG_JOB, "/apis/batch/v1/jobs", "watch/jobs" },
	{ MSG_PODGROUP, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
	    "watch/podgroups" },
	{ MSG_JOBSET, "/apis/jobset.x-k8s.io/v1alpha2/jobsets",
	    "watch/jobsets" },
	{ MSG_LWS, "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets",
	    "watch/lws" },
	/* Dynamic Resource Allocation: what claims ask, and the devices. */
	{ MSG_CLAIM, "/apis/resource.k8s.io/v1/resourceclaims",
	    "watch/resourceclaims" },
	{ MSG_CLAIM_TEMPLATE, "/apis/resource.k8s.io/v1/resourceclaimtemplates",
	    "watch/resourceclaimtemplates" },
	{ MSG_SLICE, "/apis/resource.k8s.io/v1/resourceslices",
	    "watch/resourceslices" },
	{ MSG_DEVICECLASS, "/apis/resource.k8s.io/v1/deviceclasses",
	    "watch/deviceclasses" },
	/* Taints on devices a site selects (GA in 1.37; not served before). */
	{ MSG_TAINTRULE, "/apis/resource.k8s.io/v1/devicetaintrules",
	    "watch/devicetaintrules" },
	/* Last: watched only where served; the path is discovered. */
	{ MSG_SCHED_PODGROUP, "podgroups", "watch/sched-podgroups" },
	{ MSG_SCHED_WORKLOAD, "workloads", "watch/sched-workloads" },
	/* Under its own discovered version (alpha while PodGroups are beta). */
	{ MSG_SCHED_COMPOSITE, "compositepodgroups",
	    "watch/sched-compositepodgroups" },
};
/* The last ones, whose path is under a discovered scheduling.k8s.io. */
#define NDISCOVERED 3
#define NINFORMERS  ((int)(sizeof(watched) / sizeof(watched[0])))

struct informer_ctx {
	struct queue *queue;
	enum msg_kind kind;
};

/* The workload kind of an owner object's event kind; WORKLOAD_KINDS: none. */
static enum workload_kind
informer_owner_kind(enum msg_kind kind)
{
	switch (kind) {
	case MSG_JOB:
		return (WORKLOAD_JOB);
	case MSG_PODGROUP:
		return (WORKLOAD_PODGROUP);
	case MSG_JOBSET:
		return (WORKLOAD_JOBSET);
	case MSG_LWS:
		return (WORKLOAD_LWS);
	case MSG_SCHED_PODGROUP:
		return (WORKLOAD_SCHED_PODGROUP);
	case MSG_SCHED_WORKLOAD:
		return (WORKLOAD_SCHED_WORKLOAD);
	case MSG_SCHED_COMPOSITE:
		return (WORKLOAD_SCHED_COMPOSITE);
	default:
		return (WORKLOAD_KINDS);
	}
}

/*
 * Runs on an informer thread: moves the object into the queue; a pod as
 * its compact record (podrec.c), an owner object or a node as its record
 * (ownerrec.c, noderec.c), their decoded trees dropped here.
 */
static void
informer_cb(enum k8s_watch_type type, json_t *obj, void *arg)
{
	struct informer_ctx *ctx = arg;
	struct msg	    *msg;
	enum workload_kind   wk;

	msg = calloc(1, sizeof(*msg));
	if (msg == NULL)
		fatalx("%s: calloc", __func__);
	msg->kind = ctx->kind;
	msg->type = type;
	msg->obj = obj;
	if (obj != NULL &&
	    (wk = informer_owner_kind(ctx->kind)) != WORKLOAD_KINDS) {
		msg->obj = ownerrec_dup(wk, obj);
		json_decref(obj);
	}
	if (obj != NULL && ctx->kind == MSG_NODE) {
		msg->obj = noderec_dup(obj);
		json_decref(obj);
	}
	if (obj != NULL && (ctx->kind == MSG_POD || ctx->kind == MSG_EXTPOD)) {
		msg->pod = podrec_new(obj);
		json_decref(obj);
		msg->obj = NULL;
		if (msg->pod == NULL) {
			log_warnx("pod event without name or namespace: "
				  "ignored");
			free(msg);
			return;
		}
	}
	queue_push(ctx->queue, msg);
}

/* The daemon's parts, made by main and taken down by main_stop. */
struct daemon_parts {
	struct bridge_conf   conf;
	struct config	    *config;
	struct k8s_config   *kconf;
	struct queue	    *queue;
	struct k8s_informer *inf[NINFORMERS];
	struct informer_ctx  ctx[NINFORMERS];
	const char	    *names[NINFORMERS];
	int		     ninf; /* informers made: the last only if served */
	struct endpoints    *api;
	struct leader	    *le;
	struct reconcile    *rec;
	sigset_t	     set;
};

/* --poll-ms: 0, or -1 with the message on stderr. */
static int
main_poll_ms(const char *arg, int *out)
{
	char *end;
	long  n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (*end != '\0' || errno != 0 || n < 10 || n > 60000) {
		fprintf(stderr,
		    "slurm-bridge: --poll-ms: \"%s\" is not a "
		    "number of milliseconds from 10 to 60000\n",
		    arg);
		return (-1);
	}
	*out = (int)n;
	return (0);
}

/*
 * Parses the environment and flags into conf: -1 to go on, or the exit
 * status for -h and usage errors.
 */
static int
main_flags(int argc, char *argv[], struct bridge_conf *conf,
    const char **config_path, int *checkonly)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'C' },
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "scheduler-name", required_argument, NULL, 's' },
		{ "partition", required_argument, NULL, 'p' },
		{ "poll-ms", required_argument, NULL, 'P' },
		{ "listen", required_argument, NULL, 'l' },
		{ "tls-cert", required_argument, NULL, 'c' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "client-ca", required_argument, NULL, 'A' },
		{ "client-name", required_argument, NULL, 'N' },
		{ "max-connections", required_argument, NULL, 'M' },
		{ "max-connections-per-client", required_argument, NULL, 'm' },
		{ "leader-elect", no_argument, NULL, 'L' },
		{ "jobid-label", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc;

	memset(conf, 0, sizeof(*conf));
	conf->kubeconfig = config_env("BRIDGE_KUBECONFIG", NULL);
	*config_path = config_env("BRIDGE_CONFIG", NULL);
	conf->scheduler_name = config_env("BRIDGE_SCHEDULER_NAME", NULL);
	conf->partition = config_env("BRIDGE_PARTITION", NULL);
	conf->idle_poll_ms = 1000;
	conf->listen = config_env("BRIDGE_LISTEN", "127.0.0.1:8080");
	conf->max_conns = MAX_CONNS_DEFAULT;
	conf->max_conns_per_client = MAX_CONNS_PER_CLIENT_DEFAULT;
	while ((ch = getopt_long(argc, argv, "hnv", longopts, NULL)) != -1) {
		switch (ch) {
		case 'C':
			*config_path = optarg;
			break;
		case 'l':
			conf->listen = optarg;
			break;
		case 'c':
			conf->tls_cert = optarg;
			break;
		case 'K':
			conf->tls_key = optarg;
			break;
		case 'A':
			conf->client_ca = optarg;
			break;
		case 'N':
			conf->client_names = optarg;
			break;
		case 'M':
		case 'm':
			if (daemon_limit_flag(ch, optarg, "slurm-bridge",
				&conf->max_conns,
				&conf->max_conns_per_client) != 0)
				return (2);
			break;
		case 'L':
			conf->leader_elect = 1;
			break;
		case 'J':
			conf->jobid_label = 1;
			break;
		case 'k':
			conf->kubeconfig = optarg;
			break;
		case 's':
			conf->scheduler_name = optarg;
			break;
		case 'p':
			conf->partition = optarg;
			break;
		case 'P':
			if (main_poll_ms(optarg, &conf->poll_ms) == -1)
				return (2);
			break;
		default:
			if ((rc = daemon_flag(ch, &conf->verbose, checkonly,
				 usage)) != -1)
				return (rc);
			break;
		}
	}
	if ((rc = daemon_operands(argc, usage)) != -1)
		return (rc);
	return (-1);
}

/* What the flags left unset comes from the config file; fatal if unfit. */
static void
main_settle(struct bridge_conf *conf, const struct config *config)
{
	char err[256];

	if (conf->scheduler_name == NULL)
		conf->scheduler_name = config->scheduler_name;
	if (conf->partition == NULL)
		conf->partition = config->partition;
	if (conf->poll_ms == 0)
		conf->poll_ms = config->poll_ms;
	conf->exclusive = config->exclusive;
	conf->jobid_label = conf->jobid_label || config->jobid_label;
	conf->api_qps = config->api_qps;
	conf->api_burst = config->api_burst;
	conf->end_grace_max_s = config->end_grace_max_s;
	conf->binding_timeout_s = config->binding_timeout_s;
	conf->unhealthy_nodes_threshold = config->unhealthy_nodes_pct / 100.0;
	if (conf->listen != NULL && *conf->listen == '\0')
		conf->listen = NULL;
	if ((conf->tls_cert == NULL) != (conf->tls_key == NULL))
		fatalx("--tls-cert and --tls-key go together");
	if (conf->client_ca != NULL && conf->tls_cert == NULL)
		fatalx("--client-ca needs --tls-cert and --tls-key: client "
		       "certificates come with TLS");
	if (conf->client_names != NULL && conf->client_ca == NULL)
		fatalx("--client-name needs --client-ca: it names whose "
		       "certificates from that CA the extender API accepts");
	if (conf->client_ca != NULL && conf->client_names == NULL)
		conf->client_names = CLIENT_NAME_DEFAULT;
	if (conf->client_names != NULL &&
	    httpd_check_names("--client-name", conf->client_names, err,
		sizeof(err)) == -1)
		fatalx("%s", err);
	if (conf->max_conns_per_client > conf->max_conns)
		fatalx("--max-connections-per-client (%u) is more than "
		       "--max-connections (%u)",
		    conf->max_conns_per_client, conf->max_conns);
	conf->default_account = config->default_account;
	conf->mcs_label = config->mcs_label;
	conf->bounds = &config->bounds;
	conf->dra = &config->dra;
	conf->taint_effect = config->taint_effect;
	conf->topology = config;
	conf->managed_namespaces = config->managed_namespaces;
	conf->managed_namespace_selector = config->managed_namespace_selector;
}

/* malloc for a long-lived daemon whose cache comes and goes in bulk. */
static void
main_malloc_tune(void)
{
	/*
	 * An arena per thread (the daemon has some forty): Slurm's job loads,
	 * made on the poll thread and freed soon after, then never share
	 * pages with the records that live on (pod records on the pods
	 * informer's thread, entries and groups on the reconcile thread),
	 * and a trim after a load gives all its pages back.
	 */
	mallopt(M_ARENA_MAX, 64);
	/*
	 * Large blocks (list pages, Slurm's job loads, HTTP buffers) get
	 * their own mappings and go back to the system when freed.  A fixed
	 * threshold: glibc would otherwise raise it after the first large
	 * free, and later pages would stay in the heap at its high mark.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

/* Makes the informers (started once leading) and the API server. */
static void
main_informers(struct daemon_parts *d)
{
	struct k8s_informer_opts o;
	struct endpoints_source	 src;
	char			*sel, *othersel, cerr[512];
	char			 paths[NDISCOVERED][160];
	int			 i, first;

	xasprintf(&sel, "spec.schedulerName=%s", d->conf.scheduler_name);
	xasprintf(&othersel, "spec.schedulerName!=%s", d->conf.scheduler_name);
	daemon_podgroup_api(d->kconf, d->conf.podgroup_api,
	    sizeof(d->conf.podgroup_api));
	daemon_install_name(d->kconf, d->config, d->conf.scheduler_name,
	    d->conf.install, sizeof(d->conf.install));
	if (d->conf.podgroup_api[0] != '\0')
		daemon_sched_api(d->kconf, "compositepodgroups",
		    d->conf.composite_api, sizeof(d->conf.composite_api));
	first = NINFORMERS - NDISCOVERED;
	d->ninf = d->conf.podgroup_api[0] == '\0' ? first :
	    d->conf.composite_api[0] == '\0'	  ? NINFORMERS - 1 :
						    NINFORMERS;
	for (i = 0; i < d->ninf; i++) {
		memset(&o, 0, sizeof(o));
		o.path = watched[i].path;
		if (i >= first) {
			snprintf(paths[i - first], sizeof(paths[0]), "%s/%s",
			    watched[i].kind == MSG_SCHED_COMPOSITE ?
				d->conf.composite_api :
				d->conf.podgroup_api,
			    watched[i].path);
			o.path = paths[i - first];
		}
		o.name = watched[i].name;
		if (watched[i].kind == MSG_POD)
			o.field_selector = sel;
		else if (watched[i].kind == MSG_EXTPOD) {
			o.field_selector = othersel;
			o.label_selector = LABEL_JOBID;
		}
		d->ctx[i].queue = d->queue;
		d->ctx[i].kind = watched[i].kind;
		d->inf[i] = k8s_informer_new(d->kconf, &o, informer_cb,
		    &d->ctx[i]);
		d->names[i] = watched[i].name + strlen("watch/");
	}
	free(sel);
	free(othersel);
	src.queue = d->queue;
	src.informers = d->inf;
	src.names = d->names;
	src.ninformers = d->ninf;
	if (d->conf.listen != NULL &&
	    (d->api = endpoints_start(&d->conf, &src, cerr, sizeof(cerr))) ==
		NULL)
		fatalx("%s", cerr);
}

/*
 * Followers serve health and metrics, and wait; the leader (or the only
 * replica) starts the reconcile thread and the watches.  Returns the
 * signal that ends the daemon.
 */
static int
main_lead(struct daemon_parts *d)
{
	const struct bridge_conf *conf = &d->conf;
	const char		 *ns;
	char			  cerr[512];
	int			  sig = 0, i;

	if (conf->leader_elect) {
		/* $POD_NAMESPACE, else the service account's, else default. */
		ns = k8s_config_namespace(d->kconf);
		if ((d->le = leader_new(d->kconf,
			 config_env("POD_NAMESPACE",
			     ns != NULL ? ns : "default"),
			 "slurm-bridge", config_env("POD_NAME", NULL), cerr,
			 sizeof(cerr))) == NULL)
			fatalx("%s", cerr);
		sig = leader_acquire(d->le, &d->set);
	}
	if (sig == 0) {
		atomic_store(&bstats.leader, 1);
		if ((d->rec = reconcile_new(conf, d->kconf, d->queue)) ==
			NULL ||
		    reconcile_start(d->rec) == -1)
			fatalx("cannot start the reconcile thread");
		for (i = 0; i < d->ninf; i++)
			if (k8s_informer_start(d->inf[i]) == -1)
				fatal("%s: start", watched[i].name);
		log_info("slurm-bridge: scheduling pods with schedulerName %s "
			 "via partition %s on %s, as install %s",
		    conf->scheduler_name, conf->partition,
		    k8s_config_server(d->kconf), conf->install);
	}
	if (d->le == NULL)
		return (daemon_wait(&d->set));
	/* A leader that loses its Lease stops (leader_wait says so). */
	while (sig != SIGINT && sig != SIGTERM)
		sig = leader_wait(d->le, &d->set);
	return (sig);
}

/* Stops everything in order: watches, reconcile, then the Lease. */
static void
main_stop(struct daemon_parts *d)
{
	int i;

	for (i = 0; i < d->ninf; i++)
		k8s_informer_cancel(d->inf[i]);
	for (i = 0; i < d->ninf; i++)
		k8s_informer_stop(d->inf[i]);
	if (d->rec != NULL) {
		reconcile_stop(d->rec);
		queue_close(d->queue);
		reconcile_join(d->rec);
	}
	/* Only once nothing acts any more may a follower take over. */
	if (d->le != NULL)
		leader_release(d->le);
	leader_free(d->le);
	endpoints_stop(d->api);
	for (i = 0; i < d->ninf; i++)
		k8s_informer_free(d->inf[i]);
	reconcile_free(d->rec);
	queue_free(d->queue);
	sctl_fini();
	daemon_fini(d->config, d->kconf);
}

int
main(int argc, char *argv[])
{
	static struct daemon_parts d;
	const char		  *config_path;
	struct k8s_error	   err;
	int			   sig, checkonly = 0;

	if ((sig = main_flags(argc, argv, &d.conf, &config_path, &checkonly)) !=
	    -1)
		return (sig);
	d.config = daemon_config(d.conf.verbose, config_path);
	main_settle(&d.conf, d.config);
	main_malloc_tune();
	d.kconf = daemon_connect(d.conf.kubeconfig, "");
	/*
	 * libslurm authenticates through munged, which reads the key; a key
	 * others can read lets them act as any Slurm user, so refuse to run.
	 */
	if (k8s_file_check_perms(config_env("MUNGE_KEY", MUNGE_KEY_PATH),
		"munge key", 1, &err) == -1)
		fatalx("%s", err.text);
	if (checkonly) {
		printf("configuration OK\n");
		daemon_fini(d.config, d.kconf);
		return (0);
	}
	if (runas_drop_groups() == -1)
		fatal("setgroups");
	sctl_init();
	/* Before any thread reads it. */
	daemon_dra_release(d.kconf, &d.config->dra);
	/* Threads inherit the mask: only main receives the signals. */
	daemon_signals(&d.set);
	/* Informers are made now so the API can count them; started later. */
	d.queue = queue_new();
	main_informers(&d);
	sig = main_lead(&d);
	log_info("slurm-bridge: signal %d, stopping", sig);
	main_stop(&d);
	return (fail_happened() ? 1 : 0);
}
