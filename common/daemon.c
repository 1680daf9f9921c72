/*
 * The start and stop both daemons share (daemon.h).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "config.h"
#include "daemon.h"
#include "httpd.h"
#include "k8s.h"
#include "log.h"

int
daemon_flag(int ch, int *verbose, int *checkonly, void (*usage)(FILE *))
{
	switch (ch) {
	case 'n':
		*checkonly = 1;
		return (-1);
	case 'v':
		(*verbose)++;
		return (-1);
	case 'h':
		usage(stdout);
		return (0);
	default:
		usage(stderr);
		return (2);
	}
}

int
daemon_limit_flag(int ch, const char *arg, const char *prog, unsigned int *max,
    unsigned int *per_client)
{
	char err[256];

	if (httpd_parse_limit(ch == 'M' ? "--max-connections" :
					  "--max-connections-per-client",
		arg, DAEMON_MAX_CONNS, ch == 'M' ? max : per_client, err,
		sizeof(err)) == -1) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return (2);
	}
	return (0);
}

int
daemon_operands(int argc, void (*usage)(FILE *))
{
	if (optind == argc)
		return (-1);
	usage(stderr);
	return (2);
}

struct config *
daemon_config(int verbose, const char *path)
{
	struct config *c;
	char	       err[512];

	log_init(verbose);
	c = config_new();
	if (config_load_default(c, path, err, sizeof(err)) == -1)
		fatalx("%s", err);
	return (c);
}

struct k8s_config *
daemon_connect(const char *kubeconfig, const char *why)
{
	struct k8s_config *kconf;
	struct k8s_error   err;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init failed");
	json_object_seed(0);
	if ((kconf = k8s_config_default(kubeconfig, &err)) == NULL)
		fatalx("kubeconfig: %s%s", err.text, why);
	return (kconf);
}

void
daemon_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
daemon_wait(const sigset_t *set)
{
	int sig = 0;

	while (sig != SIGINT && sig != SIGTERM)
		if (sigwait(set, &sig) != 0)
			sig = 0;
	return (sig);
}

void
daemon_fini(struct config *c, struct k8s_config *kconf)
{
	k8s_config_free(kconf);
	config_free(c);
	curl_global_cleanup();
}

void
daemon_sched_api(const struct k8s_config *kconf, const char *resource,
    char *api, size_t len)
{
	struct k8s_error   err;
	struct k8s_client *c = k8s_client_new(kconf, &err);
	char		   ver[32];
	int		   rc = -1, tries;

	api[0] = '\0';
	for (tries = 0; c != NULL && tries < 30; tries++) {
		if ((rc = k8s_discover(c, "scheduling.k8s.io", resource, ver,
			 sizeof(ver), &err)) != -1)
			break;
		log_warnx("API discovery of scheduling.k8s.io: %s", err.text);
		sleep(2);
	}
	k8s_client_free(c);
	if (rc == -1)
		fatalx("cannot discover the API server's scheduling.k8s.io "
		       "versions: %s",
		    err.text);
	if (rc == 0) {
		log_info("Kubernetes %s (scheduling.k8s.io): not served "
			 "by this cluster",
		    resource);
		return;
	}
	snprintf(api, len, "/apis/scheduling.k8s.io/%s", ver);
	log_info("Kubernetes %s: served at %s", resource, api);
}

void
daemon_podgroup_api(const struct k8s_config *kconf, char *api, size_t len)
{
	daemon_sched_api(kconf, "podgroups", api, len);
}

/* The API server's minor version (GET /version: 35 for 1.35), or 0. */
static int
daemon_server_minor(const struct k8s_config *kconf)
{
	struct k8s_error   err;
	struct k8s_client *c = k8s_client_new(kconf, &err);
	json_t		  *v = NULL;
	const char	  *minor;
	int		   n = 0;

	if (c != NULL && k8s_get(c, "/version", &v, &err) == 0 &&
	    (minor = json_string_value(json_object_get(v, "minor"))) != NULL)
		n = (int)strtol(minor, NULL, 10); /* "35", or "35+" */
	else
		log_warnx("the API server's version is unknown: %s", err.text);
	json_decref(v);
	k8s_client_free(c);
	return (n);
}

void
daemon_dra_release(const struct k8s_config *kconf, struct dra_classes *dra)
{
	int minor = daemon_server_minor(kconf);

	dra->extended_off = minor > 0 && minor < 36;
	if (dra->extended_off)
		log_info(
		    "Kubernetes 1.%d: extended resources backed by Dynamic "
		    "Resource Allocation are refused (DRAExtendedResource "
		    "is off by default before 1.36)",
		    minor);
}

void
daemon_install_name(const struct k8s_config *kconf, const struct config *config,
    const char *scheduler_name, char *out, size_t len)
{
	struct k8s_error   err;
	struct k8s_client *c;
	json_t		  *list = NULL;
	const char	  *uid = NULL;
	int		   tries;

	if (config->install_name != NULL) {
		snprintf(out, len, "%s", config->install_name);
		return;
	}
	if ((c = k8s_client_new(kconf, &err)) == NULL)
		fatalx("the install's name: %s", err.text);
	for (tries = 0; tries < 30; tries++) {
		if (k8s_get(c,
			"/api/v1/namespaces?fieldSelector=metadata.name%3D"
			"kube-system",
			&list, &err) == 0)
			break;
		log_warnx("reading namespace kube-system's UID: %s", err.text);
		sleep(2);
	}
	k8s_client_free(c);
	uid = k8s_obj_uid(json_array_get(json_object_get(list, "items"), 0));
	if (uid == NULL)
		fatalx("cannot name this install: the kube-system namespace's "
		       "UID is unknown (%s); set installName in the config",
		    list == NULL ? err.text : "no such namespace");
	/* 48 bits of the UID: short in squeue, and no clash in practice. */
	snprintf(out, len, "%s@%.13s", scheduler_name, uid);
	json_decref(list);
}
