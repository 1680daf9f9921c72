/*
 * The start, the end and the result line of the bench tools on libk8s
 * (kube.h).  Main thread only.
 */
#include <stdio.h>

#include <curl/curl.h>
#include <jansson.h>

#include "log.h"
#include "k8s.h"
#include "kube.h"

struct k8s_config *
kube_connect(const char *kubeconfig)
{
	struct k8s_config *conf;
	struct k8s_error   err;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		fatalx("curl_global_init failed");
	json_object_seed(0);
	if ((conf = k8s_config_default(kubeconfig, &err)) == NULL)
		log_warnx("kubeconfig: %s: %s", err.reason, err.text);
	return (conf);
}

void
kube_fini(struct k8s_config *conf)
{
	k8s_config_free(conf);
	curl_global_cleanup();
}

int
kube_print(const json_t *obj)
{
	if (json_dumpf(obj, stdout,
		JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)) ==
	    -1)
		return (-1);
	putchar('\n');
	fflush(stdout);
	return (0);
}
