/*
 * slurm-bridge-admission: the HTTPS webhook server for pods.  main parses
 * flags and the config file, starts the watch-based owner store (one
 * informer thread per kind), the guard's node watch (one more) and the
 * server (libmicrohttpd's threads), and waits for SIGINT/SIGTERM with
 * sigwait().
 */
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "daemon.h"
#include "log.h"
#include "xmalloc.h"
#include "httpd.h"
#include "admission.h"

/* The in-cluster scheduler's identity (manifests/); --bridge-user adds. */
#define DEFAULT_BRIDGE_USER "system:serviceaccount:slurm-bridge:slurm-bridge"
#define MAX_BRIDGE_USERS    16
/* How long a request waits for an owner its watch has not brought yet. */
#define OWNER_WAIT_MS 200
/*
 * --webhook-configuration: the CA file is checked this often, and the
 * configurations themselves every CABUNDLE_FORCE checks.
 */
#define CABUNDLE_CHECK_S 10
#define CABUNDLE_FORCE	 30
#define CERT_DAYS	 365
/*
 * Connections at once, and from one address: the API servers are the
 * clients, few and bursty (the Job controller creates up to 500 pods at
 * once), so one address may hold half.
 */
#define MAX_CONNS_DEFAULT	     256
#define MAX_CONNS_PER_CLIENT_DEFAULT 128

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: slurm-bridge-admission [options]\n"
	    "  --config FILE       configuration (default " CONFIG_DEFAULT_PATH
	    "\n"
	    "                      if it exists)                   [ADMISSION_CONFIG]\n"
	    "  --kubeconfig FILE   API server access for the owner and namespace\n"
	    "                      watches (default: $KUBECONFIG, then in-cluster)\n"
	    "  --listen ADDR:PORT  HTTPS address (default 127.0.0.1:9443, loopback\n"
	    "                      only; :9443 for every interface)  [ADMISSION_LISTEN]\n"
	    "  --max-connections N connections at once (default 256)\n"
	    "  --max-connections-per-client N\n"
	    "                      ... from one address (default 128)\n"
	    "  --tls-cert FILE     serving certificate (PEM); reloaded when it\n"
	    "                      changes                         [ADMISSION_TLS_CERT]\n"
	    "  --tls-key FILE      serving key (PEM)               [ADMISSION_TLS_KEY]\n"
	    "  --webhook-configuration NAME\n"
	    "                      keep caBundle of the Mutating- and\n"
	    "                      ValidatingWebhookConfiguration NAME equal to\n"
	    "                      ca.crt beside --tls-cert\n"
	    "  --issue-certs       make or renew the TLS Secrets of the in-cluster\n"
	    "                      install (CA, webhook, scheduler, extender\n"
	    "                      client) in --namespace, then exit\n"
	    "  --uninstall         remove what --issue-certs and the scheduler\n"
	    "                      made in --namespace (Secrets, the Lease), exit\n"
	    "  --namespace NS      (--issue-certs, --uninstall) default:\n"
	    "                      $POD_NAMESPACE\n"
	    "  --days N            (--issue-certs) validity of a certificate\n"
	    "                      (default 365; renewed 30 days before)\n"
	    "  --bridge-user NAME  a user that may write bridge-owned labels and\n"
	    "                      annotations (repeatable; default\n"
	    "                      " DEFAULT_BRIDGE_USER ")\n"
	    "  --allow-scheduler NAME\n"
	    "                      (/guard) pods of this scheduler may tolerate\n"
	    "                      the managed-node taint, as the config's\n"
	    "                      schedulerName's may: another install's\n"
	    "                      (repeatable)\n"
	    "  --extender-scheduler NAME\n"
	    "                      (/guard) a scheduler that calls slurm-bridge as\n"
	    "                      its extender: its pods may tolerate the taint\n"
	    "                      in namespaces the bridge manages (repeatable)\n"
	    "  --adopt-scheduler NAME\n"
	    "                      (/mutate) in namespaces the bridge manages, a\n"
	    "                      pod of this scheduler is placed by slurm-bridge,\n"
	    "                      as one of default-scheduler is (KubeRay's gang\n"
	    "                      integration names scheduler-plugins-scheduler;\n"
	    "                      repeatable)\n"
	    "  -n                  check the configuration and exit\n"
	    "  -v                  more logging (repeatable)\n"
	    "  -h, --help          this text\n"
	    "Serves POST /mutate, /validate and /guard (AdmissionReview v1 for\n"
	    "pods), GET /healthz, /readyz and /metrics.\n");
}

/* --days: 1 to 3650, else -1. */
static int
main_days(const char *s)
{
	char *end;
	long  v = strtol(s, &end, 10);

	return (
	    *s != '\0' && *end == '\0' && v >= 1 && v <= 3650 ? (int)v : -1);
}

/* --issue-certs and --uninstall: the exit status. */
static int
main_once(const struct admission_conf *conf)
{
	const char *what = conf->issue_certs ? "--issue-certs" : "--uninstall";
	struct k8s_config *kconf;
	struct config	  *config = NULL;
	struct certs_opts  o;
	int		   rc;

	if (conf->namespace == NULL)
		fatalx("%s needs --namespace (or $POD_NAMESPACE): the "
		       "namespace of the install",
		    what);
	kconf = daemon_connect(conf->kubeconfig, " (for the Secrets)");
	o.ns = conf->namespace;
	o.days = conf->cert_days;
	if (!conf->issue_certs)
		config = daemon_config(conf->verbose, conf->config_path);
	rc = conf->issue_certs ? certs_run(kconf, &o) :
				 uninstall_run(kconf, conf->namespace, config);
	daemon_fini(config, kconf);
	return (rc == 0 ? 0 : 1);
}

/*
 * Waits for SIGINT/SIGTERM; meanwhile, with cb, keeps caBundle in step
 * with the CA file.
 */
static int
main_wait(const sigset_t *set, struct cabundle *cb)
{
	struct timespec ts = { CABUNDLE_CHECK_S, 0 };
	int		sig, n = 0;

	if (cb == NULL)
		return (daemon_wait(set));
	for (;;) {
		sig = sigtimedwait(set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			return (sig);
		cabundle_sync(cb, ++n % CABUNDLE_FORCE == 0);
	}
}

/* Adds a repeatable flag's value to the NULL-ended list (max long). */
static void
main_list_add(const char **list, size_t max, const char *flag,
    const char *value)
{
	size_t n;

	for (n = 0; list[n] != NULL; n++)
		;
	if (n == max)
		fatalx("%s: at most %zu", flag, max);
	list[n] = value;
}

/* The configuration before the flags: defaults, and the environment's. */
static void
main_defaults(struct admission_conf *conf, const char **users,
    const char **lists[3])
{
	int i;

	memset(conf, 0, sizeof(*conf));
	conf->listen = config_env("ADMISSION_LISTEN", "127.0.0.1:9443");
	conf->max_conns = MAX_CONNS_DEFAULT;
	conf->max_conns_per_client = MAX_CONNS_PER_CLIENT_DEFAULT;
	conf->tls_cert = config_env("ADMISSION_TLS_CERT", NULL);
	conf->tls_key = config_env("ADMISSION_TLS_KEY", NULL);
	conf->config_path = config_env("ADMISSION_CONFIG", NULL);
	conf->namespace = config_env("POD_NAMESPACE", NULL);
	conf->cert_days = CERT_DAYS;
	memset(users, 0, (MAX_BRIDGE_USERS + 1) * sizeof(*users));
	for (i = 0; i < 3; i++)
		memset(lists[i], 0,
		    (GUARD_MAX_SCHEDULERS + 1) * sizeof(*lists[i]));
}

/*
 * One flag (getopt_long's ch, with optarg) into conf, users (*nusers of
 * them) and lists: -1 to go on, or the exit status.
 */
static int
main_flag(int ch, struct admission_conf *conf, const char **users, int *nusers,
    const char **lists[3], int *checkonly)
{
	switch (ch) {
	case 'l':
		conf->listen = optarg;
		break;
	case 'M':
	case 'm':
		if (daemon_limit_flag(ch, optarg, "slurm-bridge-admission",
			&conf->max_conns, &conf->max_conns_per_client) != 0)
			return (2);
		break;
	case 'c':
		conf->tls_cert = optarg;
		break;
	case 'k':
		conf->tls_key = optarg;
		break;
	case 'C':
		conf->config_path = optarg;
		break;
	case 'K':
		conf->kubeconfig = optarg;
		break;
	case 'W':
		conf->webhook_config = optarg;
		break;
	case 'I':
		conf->issue_certs = 1;
		break;
	case 'U':
		conf->uninstall = 1;
		break;
	case 'N':
		conf->namespace = optarg;
		break;
	case 'D':
		if ((conf->cert_days = main_days(optarg)) == -1) {
			fprintf(stderr,
			    "--days: %s is not a number of days from 1 to "
			    "3650\n",
			    optarg);
			return (2);
		}
		break;
	case 'u':
		if (*nusers == MAX_BRIDGE_USERS)
			fatalx("--bridge-user: at most %d", MAX_BRIDGE_USERS);
		users[(*nusers)++] = optarg;
		break;
	case 'S':
		main_list_add(lists[0], GUARD_MAX_SCHEDULERS,
		    "--allow-scheduler", optarg);
		break;
	case 'E':
		main_list_add(lists[1], GUARD_MAX_SCHEDULERS,
		    "--extender-scheduler", optarg);
		break;
	case 'A':
		main_list_add(lists[2], GUARD_MAX_SCHEDULERS,
		    "--adopt-scheduler", optarg);
		break;
	default:
		return (daemon_flag(ch, &conf->verbose, checkonly, usage));
	}
	return (-1);
}

/*
 * Parses the flags into conf (users holds the --bridge-user names;
 * lists[0], [1] and [2] those of --allow-scheduler, --extender-scheduler
 * and --adopt-scheduler): -1 to go on, or the exit status for -h and
 * usage errors.
 */
static int
main_flags(int argc, char *argv[], struct admission_conf *conf,
    const char **users, const char **lists[3], int *checkonly)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "max-connections", required_argument, NULL, 'M' },
		{ "max-connections-per-client", required_argument, NULL, 'm' },
		{ "tls-cert", required_argument, NULL, 'c' },
		{ "tls-key", required_argument, NULL, 'k' },
		{ "config", required_argument, NULL, 'C' },
		{ "kubeconfig", required_argument, NULL, 'K' },
		{ "bridge-user", required_argument, NULL, 'u' },
		{ "allow-scheduler", required_argument, NULL, 'S' },
		{ "extender-scheduler", required_argument, NULL, 'E' },
		{ "adopt-scheduler", required_argument, NULL, 'A' },
		{ "webhook-configuration", required_argument, NULL, 'W' },
		{ "issue-certs", no_argument, NULL, 'I' },
		{ "uninstall", no_argument, NULL, 'U' },
		{ "namespace", required_argument, NULL, 'N' },
		{ "days", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc, nusers = 0;

	main_defaults(conf, users, lists);
	while ((ch = getopt_long(argc, argv, "hnv", longopts, NULL)) != -1)
		if ((rc = main_flag(ch, conf, users, &nusers, lists,
			 checkonly)) != -1)
			return (rc);
	if ((rc = daemon_operands(argc, usage)) != -1)
		return (rc);
	if (nusers == 0)
		users[nusers++] = DEFAULT_BRIDGE_USER;
	conf->bridge_users = users;
	conf->allow_schedulers = lists[0];
	conf->extender_schedulers = lists[1];
	conf->adopt_schedulers = lists[2];
	return (-1);
}

int
main(int argc, char *argv[])
{
	struct admission_conf conf;
	struct review_conf    rconf;
	struct config	     *config;
	struct k8s_config    *kconf;
	struct owners	     *owners;
	struct guard	     *guard;
	struct server	     *srv;
	struct cabundle	     *cb = NULL;
	const char	     *users[MAX_BRIDGE_USERS + 1];
	const char	     *allow[GUARD_MAX_SCHEDULERS + 1];
	const char	     *extender[GUARD_MAX_SCHEDULERS + 1];
	const char	     *adopt[GUARD_MAX_SCHEDULERS + 1];
	const char	    **lists[3] = { allow, extender, adopt };
	char		      err[512], podgroup_api[96], composite_api[96];
	sigset_t	      set;
	int		      sig, checkonly = 0;

	if ((sig = main_flags(argc, argv, &conf, users, lists, &checkonly)) !=
	    -1)
		return (sig);
	log_init(conf.verbose);
	if (conf.issue_certs || conf.uninstall) {
		if (checkonly)
			fatalx("-n checks a serving configuration; it does not "
			       "go with --issue-certs or --uninstall");
		return (main_once(&conf));
	}
	if (httpd_parse_listen("--listen", conf.listen, &conf.addr, err,
		sizeof(err)) == -1)
		fatalx("%s", err);
	if (conf.tls_cert == NULL || conf.tls_key == NULL)
		fatalx("--tls-cert and --tls-key are required: the API server "
		       "calls webhooks over HTTPS only");
	if (conf.max_conns_per_client > conf.max_conns)
		fatalx("--max-connections-per-client (%u) is more than "
		       "--max-connections (%u)",
		    conf.max_conns_per_client, conf.max_conns);
	config = daemon_config(conf.verbose, conf.config_path);
	kconf = daemon_connect(conf.kubeconfig,
	    " (the webhook watches "
	    "namespaces and workloads)");
	daemon_signals(&set);
	if (checkonly) {
		/* Without binding the port: the real webhook may hold it. */
		if (httpd_check_tls(conf.tls_cert, conf.tls_key, err,
			sizeof(err)) == -1)
			fatalx("%s", err);
		daemon_fini(config, kconf);
		printf("configuration OK\n");
		return (0);
	}
	daemon_podgroup_api(kconf, podgroup_api, sizeof(podgroup_api));
	composite_api[0] = '\0';
	if (podgroup_api[0] != '\0')
		daemon_sched_api(kconf, "compositepodgroups", composite_api,
		    sizeof(composite_api));
	daemon_dra_release(kconf, &config->dra);
	owners = owners_new(kconf, podgroup_api, composite_api);
	guard = guard_new(kconf, conf.allow_schedulers,
	    conf.extender_schedulers);
	memset(&rconf, 0, sizeof(rconf));
	rconf.config = config;
	rconf.owners = owners;
	rconf.guard = guard;
	rconf.bridge_users = conf.bridge_users;
	rconf.adopt_schedulers = conf.adopt_schedulers;
	rconf.owner_wait_ms = OWNER_WAIT_MS;
	if ((srv = server_start(&conf, &rconf, err, sizeof(err))) == NULL)
		fatalx("%s", err);
	if (owners_start(owners) == -1)
		fatalx("cannot start the owner watches");
	if (guard_start(guard) == -1)
		fatalx("cannot start the node watch");
	log_info("slurm-bridge-admission: serving https on %s", conf.listen);
	if (conf.webhook_config != NULL) {
		/* ca.crt beside the serving certificate (the Secret's keys). */
		char *dir = xstrdup(conf.tls_cert), *ca;

		xasprintf(&ca, "%s/ca.crt", dirname(dir));
		if ((cb = cabundle_new(kconf, conf.webhook_config, ca)) == NULL)
			fatalx("--webhook-configuration: no API client");
		cabundle_sync(cb, 1);
		free(ca);
		free(dir);
	}
	sig = main_wait(&set, cb);
	log_info("slurm-bridge-admission: signal %d, stopping", sig);
	cabundle_free(cb);
	server_stop(srv);
	owners_free(owners);
	guard_free(guard);
	daemon_fini(config, kconf);
	return (0);
}
