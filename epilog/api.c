/*
 * slurm-bridge-epilog-api: the node epilog's fallback where the nodes have
 * no kubelet cgroups (the kwok tier of the test stack): slurm-bridge-epilog
 * --api runs it, for a bridge job only (SPANK_SLURM_BRIDGE_PODS set).  It
 * asks the API server for the pods on the Kubernetes node behind this
 * Slurm node, and returns once none of the job's (by UID), nor of those
 * sharing its devices (device-jobs), still runs (gone, or Succeeded or
 * Failed).  What it cannot see: a pod gone from the
 * API (a force delete) whose containers still run; the cgroup evidence of
 * slurm-bridge-epilog (main.c) sees them.  After --max-wait seconds it
 * drains the node with a reason that says why, and returns 0.
 *
 * Environment (slurmd's): SLURM_JOB_ID, SLURMD_NODENAME and
 * SPANK_SLURM_BRIDGE_PODS.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "k8s.h"
#include "log.h"
#include "xmalloc.h"
#include "policy.h"
#include "slurmnode.h"

#define EPILOG_KUBECONFIG  "/etc/slurm-bridge/epilog.kubeconfig"
#define EPILOG_DRAIN	   "slurm-bridge-epilog:"
#define EPILOG_MAX_WAIT_S  300
#define EPILOG_INTERVAL_MS 500

struct epilog {
	struct k8s_client *client;
	const char	  *jobid;
	const char	  *snode;      /* Slurm's name */
	char		   knode[256]; /* Kubernetes' */
	int		   max_wait_s;
	int		   interval_ms;
	const char	  *scontrol;
	const char	  *uids; /* the job's pods', comma-separated */
};

static void
epilog_usage(void)
{
	fprintf(stderr,
	    "usage: slurm-bridge-epilog-api [--kubeconfig PATH] [--max-wait S] "
	    "[--interval MS] [--scontrol PATH]\n"
	    "  slurm-bridge-epilog --api: returns once the pods "
	    "of the ended\n"
	    "  bridge job on this node have stopped; drains the node after "
	    "--max-wait\n"
	    "  seconds (default %d).  Reads SLURM_JOB_ID, "
	    "SPANK_" NODE_ENV_PODS " and\n"
	    "  SLURMD_NODENAME from slurmd; --kubeconfig defaults to %s.\n",
	    EPILOG_MAX_WAIT_S, EPILOG_KUBECONFIG);
}

/*
 * The Kubernetes node behind this Slurm node: the one labelled with its
 * name, else the node of the same name.  0, or -1 (API unreachable, or
 * two nodes labelled with its name: which one is meant is the admin's to
 * say, as for the scheduler).
 */
static int
epilog_knode(struct epilog *ep, char *err, size_t errlen)
{
	struct k8s_error kerr;
	json_t		*list;
	char		*sel, path[512];
	const char	*name;

	sel = k8s_urlencode(ep->snode);
	snprintf(path, sizeof(path), "/api/v1/nodes?labelSelector=%s%%3D%s",
	    LABEL_SLURM_NODENAME, sel);
	free(sel);
	if (k8s_get(ep->client, path, &list, &kerr) == -1) {
		snprintf(err, errlen, "list nodes: %ld %.32s: %.200s",
		    kerr.status, kerr.reason, kerr.text);
		return (-1);
	}
	if (json_array_size(json_object_get(list, "items")) > 1) {
		snprintf(err, errlen,
		    "nodes %.64s and %.64s are both labelled %s=%.64s",
		    k8s_obj_name(json_array_get(json_object_get(list, "items"),
			0)),
		    k8s_obj_name(json_array_get(json_object_get(list, "items"),
			1)),
		    LABEL_SLURM_NODENAME, ep->snode);
		json_decref(list);
		return (-1);
	}
	name = k8s_obj_name(json_array_get(json_object_get(list, "items"), 0));
	snprintf(ep->knode, sizeof(ep->knode), "%s",
	    name != NULL ? name : ep->snode);
	json_decref(list);
	return (0);
}

/*
 * The job's pods on the node that still run (not Succeeded or Failed),
 * their names in names; -1 when the API server cannot tell.
 */
static int
epilog_running(struct epilog *ep, char *names, size_t len, char *err,
    size_t errlen)
{
	struct k8s_error kerr;
	json_t		*list, *pod;
	const char	*uid, *phase;
	char		*node, path[600];
	size_t		 i, off = 0;
	int		 n = 0;

	node = k8s_urlencode(ep->knode);
	snprintf(path, sizeof(path),
	    "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", node);
	free(node);
	if (k8s_get(ep->client, path, &list, &kerr) == -1) {
		snprintf(err, errlen, "list pods on %.64s: %ld %.32s: %.200s",
		    ep->knode, kerr.status, kerr.reason, kerr.text);
		return (-1);
	}
	names[0] = '\0';
	json_array_foreach (json_object_get(list, "items"), i, pod) {
		uid = k8s_obj_uid(pod);
		phase = k8s_obj_str(pod, "status.phase");
		/*
		 * The job's own pods, and those of other jobs that share a
		 * ResourceClaim whose devices this job holds (device-jobs:
		 * a key only the scheduler writes; the webhook refuses it
		 * from anyone else).
		 */
		if (((uid == NULL || !slurmnode_listed(ep->uids, uid)) &&
			!slurmnode_listed(k8s_obj_annotation(pod,
					   ANN_SLURM_DEVICE_JOBS),
			    ep->jobid)) ||
		    (phase != NULL &&
			(strcmp(phase, "Succeeded") == 0 ||
			    strcmp(phase, "Failed") == 0)))
			continue;
		n++;
		if (off < len)
			off += (size_t)snprintf(names + off, len - off,
			    "%s%s/%s", off > 0 ? " " : "",
			    k8s_obj_namespace(pod), k8s_obj_name(pod));
	}
	json_decref(list);
	return (n);
}

/* Drains this node with reason (scontrol, as an admin would). */
static int
epilog_drain(const struct epilog *ep, const char *reason)
{
	return (slurmnode_drain(ep->scontrol, ep->snode, reason));
}

static int
epilog_run(struct epilog *ep)
{
	struct timespec ts;
	char		names[512], err[512] = "", reason[700];
	int64_t		start = clock_ms(CLOCK_MONOTONIC), waited;
	int		n = -1, told = 0;

	for (;;) {
		if (ep->knode[0] != '\0' ||
		    epilog_knode(ep, err, sizeof(err)) == 0)
			n = epilog_running(ep, names, sizeof(names), err,
			    sizeof(err));
		if (n == 0) {
			if (told)
				log_info("job %s: its pods on %s stopped after "
					 "%lld ms; the node is free",
				    ep->jobid, ep->knode,
				    (long long)(clock_ms(CLOCK_MONOTONIC) -
					start));
			return (0);
		}
		waited = clock_ms(CLOCK_MONOTONIC) - start;
		if (n > 0 && !told) {
			log_info("job %s: waiting for its pods on %s to stop: "
				 "%s",
			    ep->jobid, ep->knode, names);
			told = 1;
		}
		if (waited >= (int64_t)ep->max_wait_s * 1000)
			break;
		ts.tv_sec = ep->interval_ms / 1000;
		ts.tv_nsec = (long)(ep->interval_ms % 1000) * 1000000;
		nanosleep(&ts, NULL);
	}
	if (n > 0)
		snprintf(reason, sizeof(reason),
		    EPILOG_DRAIN " pods of job %s still running after "
				 "%ds: %.300s",
		    ep->jobid, ep->max_wait_s, names);
	else
		snprintf(reason, sizeof(reason),
		    EPILOG_DRAIN " cannot tell whether the pods of job "
				 "%s stopped: %.300s",
		    ep->jobid, err);
	log_warnx("node %s: draining: %s", ep->snode, reason);
	if (epilog_drain(ep, reason) == -1) {
		/* Slurm drains a node whose epilog fails: it still waits. */
		log_warnx("node %s: scontrol drain failed", ep->snode);
		return (1);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "max-wait", required_argument, NULL, 'm' },
		{ "interval", required_argument, NULL, 'i' },
		{ "scontrol", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct epilog	   ep;
	struct k8s_config *kconf;
	struct k8s_error   kerr;
	const char	  *kubeconfig = EPILOG_KUBECONFIG, *het;
	char		  *end;
	long		   n;
	int		   c, rc;

	memset(&ep, 0, sizeof(ep));
	ep.max_wait_s = EPILOG_MAX_WAIT_S;
	ep.interval_ms = EPILOG_INTERVAL_MS;
	ep.scontrol = "/usr/bin/scontrol";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			kubeconfig = optarg;
			break;
		case 'm':
		case 'i':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    n < 1 || n > 86400) {
				fprintf(stderr,
				    "slurm-bridge-epilog: --%s: \"%s\" is "
				    "not a whole number from 1 to 86400\n",
				    c == 'm' ? "max-wait" : "interval", optarg);
				return (2);
			}
			if (c == 'm')
				ep.max_wait_s = (int)n;
			else
				ep.interval_ms = (int)n;
			break;
		case 's':
			ep.scontrol = optarg;
			break;
		case 'h':
			epilog_usage();
			return (0);
		default:
			epilog_usage();
			return (2);
		}
	}
	log_init(0);
	log_setname("epilog");
	ep.jobid = getenv("SLURM_JOB_ID");
	/* A heterogeneous job's pods name its leader in device-jobs. */
	if ((het = getenv("SLURM_HET_JOB_ID")) != NULL && *het != '\0' &&
	    strcmp(het, "0") != 0)
		ep.jobid = het;
	ep.snode = getenv("SLURMD_NODENAME");
	if ((ep.uids = getenv("SPANK_" NODE_ENV_PODS)) == NULL)
		return (0);
	if (ep.jobid == NULL || ep.snode == NULL) {
		log_warnx("SLURM_JOB_ID or SLURMD_NODENAME is not set: not "
			  "run by slurmd?");
		return (1);
	}
	if ((kconf = k8s_config_load(kubeconfig, NULL, &kerr)) == NULL ||
	    (ep.client = k8s_client_new(kconf, &kerr)) == NULL) {
		/* Without the API server nobody can tell: hold the node. */
		snprintf(ep.knode, sizeof(ep.knode), "%s", "");
		log_warnx("%s: %s", kubeconfig, kerr.text);
		ep.max_wait_s = 0;
		k8s_config_free(kconf);
		return (epilog_drain(&ep,
			    EPILOG_DRAIN " no API server "
					 "(see --kubeconfig)") == 0 ?
			0 :
			1);
	}
	k8s_client_set_timeout(ep.client, 5000);
	rc = epilog_run(&ep);
	k8s_client_free(ep.client);
	k8s_config_free(kconf);
	return (rc);
}
