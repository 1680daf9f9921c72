/*
 * daemon.c: what both daemons do the same way at start and at stop — the
 * config file, libcurl and jansson, the kubeconfig, the signals main waits
 * for.  Main thread only; errors are fatal (a daemon that cannot start
 * exits with a message naming what is wrong).
 */
#ifndef DAEMON_H
#define DAEMON_H

#include <signal.h>
#include <stdio.h>

struct dra_classes;

struct config;
struct k8s_config;

/*
 * The flags both daemons take alike, for getopt's ch: -n (check the
 * configuration only), -v (more logging), -h, and an unknown flag.
 * Returns -1 to go on, or the exit status (0 after -h, 2 on a usage
 * error, with usage written).
 */
int daemon_flag(int ch, int *verbose, int *checkonly, void (*usage)(FILE *));
/* The most connections --max-connections(-per-client) may allow. */
#define DAEMON_MAX_CONNS 4096
/*
 * --max-connections (getopt's 'M') and --max-connections-per-client ('m'):
 * 0 with the limit set, or 2 (the exit status) with the message on stderr
 * after prog.
 */
int daemon_limit_flag(int ch, const char *arg, const char *prog,
    unsigned int *max, unsigned int *per_client);
/* After getopt: -1 when no operands are left, else 2 (usage written). */
int daemon_operands(int argc, void (*usage)(FILE *));
/* Logging at verbose, then the config file (path, or the default one). */
struct config *daemon_config(int verbose, const char *path);
/*
 * libcurl and jansson, then the kubeconfig (path, or the default search);
 * why is appended to the error: what the daemon needs the API server for.
 */
struct k8s_config *daemon_connect(const char *kubeconfig, const char *why);
/*
 * Blocks SIGINT, SIGTERM and SIGHUP in every thread made after (main
 * takes them with sigwait on set) and ignores SIGPIPE.
 */
void daemon_signals(sigset_t *set);
/* Waits for SIGINT or SIGTERM; returns it. */
int daemon_wait(const sigset_t *set);
/* Frees what daemon_config and daemon_connect made (either may be NULL). */
void daemon_fini(struct config *, struct k8s_config *);
/*
 * Where the cluster serves Kubernetes' own gang API (scheduling.k8s.io
 * PodGroup and Workload, the GenericWorkload gate): api gets
 * "/apis/scheduling.k8s.io/<version>", or "" when not served.  The version
 * moves between releases and is off by default, so it is asked, not
 * assumed.  An API server still starting is asked again for a minute; then
 * the daemon exits.
 */
void daemon_podgroup_api(const struct k8s_config *, char *api, size_t len);
/*
 * The same for one resource of scheduling.k8s.io (the version that serves
 * it: "compositepodgroups" is v1alpha3 in 1.37, behind the
 * CompositePodGroup gate).
 */
void daemon_sched_api(const struct k8s_config *, const char *resource,
    char *api, size_t len);
/*
 * Sets dra->extended_off from the API server's release (GET /version,
 * once, at start): DRA-backed extended resources are off by default
 * before 1.36.  A release it cannot read leaves them on.
 */
void daemon_dra_release(const struct k8s_config *, struct dra_classes *dra);
/*
 * The install's name into out: the config's installName, else the
 * scheduler name and the cluster's id (the kube-system namespace's UID),
 * so that two installs on one Slurm, in one cluster or in two, never take
 * each other's jobs, and uninstall finds the nodes its install tainted.
 * The API server is asked for a minute; then the daemon exits.
 */
void daemon_install_name(const struct k8s_config *, const struct config *,
    const char *scheduler_name, char *out, size_t len);

#endif /* DAEMON_H */
