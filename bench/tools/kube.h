/*
 * kube.c: what the bench tools on libk8s (bindwatch, podgen) do the same
 * way at start and at the end, as common/daemon.c does for the daemons:
 * libcurl and jansson, the kubeconfig, and the one JSON line of the
 * result.  Main thread only.
 */
#ifndef KUBE_H
#define KUBE_H

#include <jansson.h>

struct k8s_config;

/*
 * libcurl (fatal when it cannot start) and jansson, then the kubeconfig
 * (path, or the default search): a new config, or NULL (logged).
 */
struct k8s_config *kube_connect(const char *kubeconfig);
/* Frees what kube_connect made (conf may be NULL). */
void kube_fini(struct k8s_config *conf);
/* Prints obj as one compact JSON line on stdout; 0, or -1. */
int kube_print(const json_t *obj);

#endif /* KUBE_H */
