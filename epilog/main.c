/*
 * slurm-bridge-epilog: the node epilog a site adds to Slurm (Epilog= in
 * slurm.conf) so that a node goes to the next job only once the node
 * itself shows that the containers of the ended bridge job's pods are
 * gone.  slurmd runs it as root on every node of an allocation when the
 * allocation is released, and keeps the node COMPLETING, its CPUs, memory
 * and GPUs unallocated, until it returns.
 *
 * What it trusts, and why (docs/admins/handoff.md):
 * - Which pods are the job's: SPANK_SLURM_BRIDGE_PODS, the pods' UIDs the
 *   scheduler put in the job's spank environment when it submitted it.
 *   Nobody can change it afterwards, the job's owner included (the
 *   comment, which the owner can rewrite, is not read).  A job without it
 *   is not the bridge's: it returns at once, having read nothing else.
 *   --owners narrows it further to the jobs of the listed uids (slurmd's
 *   SLURM_JOB_UID), where no tenant owns a bridge job.
 * - Whether they stopped: the pods' cgroups on this node (cgroup.c), not
 *   the API server.  A force-deleted pod is gone from the API while its
 *   containers run out their grace period; its cgroup holds them until the
 *   last process exits, through a kubelet, containerd or API server down.
 *   So it needs no credential and asks nothing over the network.
 *
 * Past --max-wait it kills what still runs in those cgroups and watches
 * --kill-wait seconds more (with --kill-wait 0 it never kills); if a
 * process outlives the kill, or comes back (a kubelet restarts a killed
 * container), it drains the node with a reason that names the pods
 * (scontrol, by absolute path) and notes them in --state-dir, so nobody
 * gets it until they are gone: --resume, as slurmd's HealthCheckProgram,
 * resumes it then (epilog_resume).
 *
 * Where the nodes have no kubelet cgroups (the kwok tier of the test
 * stack), --api hands over to slurm-bridge-epilog-api (api.c), which asks
 * the API server and cannot see a force-deleted pod's containers.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "slurmnode.h"
#include "clock.h"
#include "log.h"
#include "policy.h"

#define EPILOG_DRAIN	   "slurm-bridge-epilog:"
#define EPILOG_MAX_WAIT_S  300
#define EPILOG_KILL_WAIT_S 15
#define EPILOG_INTERVAL_MS 200
#define EPILOG_SCONTROL	   "/usr/bin/scontrol"
#define EPILOG_STATE_DIR   "/run/slurm-bridge-epilog"

struct epilog {
	const char	  *jobid;
	const char	  *snode; /* Slurm's name */
	char		 **uids; /* into the environment's copy */
	size_t		   nuids;
	struct cgroup_tree tree;
	const char	  *mount;
	const char	  *scontrol;
	const char	  *state_dir;
	int		   max_wait_s;
	int		   kill_wait_s;
	int		   interval_ms;
};

static void
epilog_usage(void)
{
	fprintf(stderr,
	    "usage: slurm-bridge-epilog [--cgroup-root PATH] [--max-wait S] "
	    "[--kill-wait S]\n"
	    "         [--interval MS] [--owners UID,...] [--scontrol PATH] "
	    "[--api [ARG...]]\n"
	    "       slurm-bridge-epilog --resume [--cgroup-root PATH] "
	    "[--state-dir DIR] [--scontrol PATH]\n"
	    "  Slurm's node epilog for slurm-bridge: returns once the "
	    "containers of the\n"
	    "  ended bridge job's pods are gone from this node (their kubelet "
	    "cgroups\n"
	    "  under --cgroup-root, default /sys/fs/cgroup).  Past --max-wait "
	    "(%d s) it\n"
	    "  kills them, and drains the node if they outlive --kill-wait "
	    "(%d s).\n"
	    "  Reads SLURM_JOB_ID, SLURMD_NODENAME, SLURM_JOB_UID and "
	    "SPANK_" NODE_ENV_PODS "\n"
	    "  from slurmd.  --resume (slurmd's HealthCheckProgram) resumes "
	    "a node it\n"
	    "  drained once those pods are gone.  man "
	    "slurm-bridge-epilog(8).\n",
	    EPILOG_MAX_WAIT_S, EPILOG_KILL_WAIT_S);
}

/* Splits the comma list of UIDs into ep->uids (in place): 0 or -1. */
static int
epilog_split(struct epilog *ep, char *list)
{
	char  *p, *save = NULL;
	size_t n = 1;

	for (p = list; *p != '\0'; p++)
		n += *p == ',';
	if ((ep->uids = calloc(n, sizeof(*ep->uids))) == NULL)
		return (-1);
	for (p = strtok_r(list, ",", &save); p != NULL && ep->nuids < n;
	    p = strtok_r(NULL, ",", &save))
		ep->uids[ep->nuids++] = p;
	return (0);
}

/*
 * The job's pods whose cgroups still hold a process, their cgroups in
 * paths (room for every pod) and UIDs in names; the number, or -1 when
 * there was no memory to say (the epilog fails: Slurm holds the node).
 */
static ssize_t
epilog_running(const struct epilog *ep, char **paths, char *names,
    size_t len)
{
	char   path[512];
	size_t i, n = 0, off = 0;

	names[0] = '\0';
	for (i = 0; i < ep->nuids; i++) {
		if (!cgroup_pod(&ep->tree, ep->uids[i], path, sizeof(path)) ||
		    !cgroup_populated(&ep->tree, path))
			continue;
		if ((paths[n] = strdup(path)) == NULL) {
			while (n > 0)
				free(paths[--n]);
			return (-1);
		}
		n++;
		if (off < len)
			off += (size_t)snprintf(names + off, len - off,
			    "%s%s", off > 0 ? " " : "", ep->uids[i]);
	}
	return (n);
}

static void
epilog_paths_free(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(paths[i]);
}

/* Waits up to ms for one of the cgroups to change (or polls). */
static void
epilog_wait(const struct epilog *ep, char **paths, size_t n, int64_t ms)
{
	struct pollfd pfd;
	int	      fd;

	if (ms > 1000)
		ms = 1000;
	if ((fd = cgroup_watch(&ep->tree, paths, n)) == -1) {
		if (ms > ep->interval_ms)
			ms = ep->interval_ms;
		poll(NULL, 0, (int)ms);
		return;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	poll(&pfd, 1, (int)ms);
	close(fd);
}

/*
 * Drains this node with reason (scontrol, as an admin would), first
 * noting the pods' UIDs in STATE_DIR/NODE for --resume: a file on the
 * node, root's, which no tenant writes.
 */
static int
epilog_drain(const struct epilog *ep, const char *uids, const char *reason)
{
	char  path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ep->state_dir, ep->snode);
	if ((mkdir(ep->state_dir, 0700) == 0 || errno == EEXIST) &&
	    (f = fopen(path, "w")) != NULL) {
		fprintf(f, "%s\n", uids);
		fclose(f);
	} else
		log_warn("%s: the node will need an admin's resume", path);
	return (slurmnode_drain(ep->scontrol, ep->snode, reason));
}

/*
 * --resume, as slurmd's HealthCheckProgram: if the epilog drained this
 * node (STATE_DIR/NODE lists the pods) and their cgroups hold no process
 * now, resumes it, if its reason is still the epilog's.  A node the
 * epilog never drained costs one failed open.
 */
static int
epilog_resume(struct epilog *ep)
{
	char  path[512], line[4096], node[300], *p, *save = NULL;
	char  cg[512];
	FILE *f;
	int   fd[2], rc, drained = 0, saved;

	snprintf(path, sizeof(path), "%s/%s", ep->state_dir, ep->snode);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (cgroup_open(&ep->tree, ep->mount) == 0)
		for (p = strtok_r(line, " ,", &save); p != NULL;
		    p = strtok_r(NULL, " ,", &save))
			if (cgroup_pod(&ep->tree, p, cg, sizeof(cg)) &&
			    cgroup_populated(&ep->tree, cg)) {
				log_info("node %s stays drained: pod %s still "
					 "runs there",
				    ep->snode, p);
				return (0);
			}
	/* Its reason still the epilog's?  Not if an admin changed it. */
	if (pipe(fd) == -1)
		return (1);
	saved = dup(STDOUT_FILENO);
	dup2(fd[1], STDOUT_FILENO);
	close(fd[1]);
	rc = slurmnode_scontrol(ep->scontrol, "-o", "show", "node", ep->snode, (char *)NULL);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	if ((f = fdopen(fd[0], "r")) == NULL) {
		close(fd[0]);
		return (1);
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "Reason=" EPILOG_DRAIN) != NULL &&
		    strstr(line, "DRAIN") != NULL)
			drained = 1;
	fclose(f);
	if (rc == -1)
		return (1);
	snprintf(node, sizeof(node), "NodeName=%s", ep->snode);
	if (drained) {
		if (slurmnode_scontrol(ep->scontrol, "update", node, "State=RESUME",
			(char *)NULL) == -1) {
			log_warnx("node %s: %s failed to resume it", ep->snode,
			    ep->scontrol);
			return (1);
		}
		log_info("node %s: resumed: the pods the epilog drained it for "
			 "are gone from it",
		    ep->snode);
	}
	unlink(path);
	return (0);
}

/*
 * Waits for the job's pods' cgroups to empty.  Past --max-wait it kills
 * what is left, then watches --kill-wait seconds more: a kubelet that
 * still runs the pod restarts a killed container (restartPolicy), so the
 * node is free only if the cgroups stay empty that long; a container that
 * outlives the kill, or comes back, drains the node.
 */
static int
epilog_run(struct epilog *ep)
{
	char  **paths, names[600] = "", reason[900];
	int64_t start = clock_ms(CLOCK_MONOTONIC), now, deadline;
	ssize_t got;
	size_t	n, i;
	int	told = 0, killed = 0, emptied = 0;

	if ((paths = calloc(ep->nuids + 1, sizeof(*paths))) == NULL)
		return (1);
	deadline = start + (int64_t)ep->max_wait_s * 1000;
	for (;;) {
		if ((got = epilog_running(ep, paths, names, sizeof(names))) ==
		    -1) {
			log_warnx("job %s: out of memory", ep->jobid);
			free(paths);
			return (1);
		}
		n = (size_t)got;
		now = clock_ms(CLOCK_MONOTONIC);
		if (n == 0 && (!killed || now >= deadline)) {
			if (told)
				log_info("job %s: its pods' containers on %s "
					 "are gone after %lld ms%s; the node "
					 "is free",
				    ep->jobid, ep->snode,
				    (long long)(now - start),
				    killed ? " (killed)" : "");
			free(paths);
			return (0);
		}
		if (n == 0) {
			/* Killed: empty, but it must stay so. */
			emptied = 1;
			epilog_wait(ep, paths, 0, deadline - now);
			continue;
		}
		if (!told) {
			log_info("job %s: waiting for the containers of its "
				 "pods on %s to stop: %s",
			    ep->jobid, ep->snode, names);
			told = 1;
		}
		if (emptied || (now >= deadline && killed) ||
		    (now >= deadline && ep->kill_wait_s == 0))
			break;
		if (now >= deadline) {
			log_warnx("job %s: pods %s still run on %s after "
				  "%d s: killing their processes",
			    ep->jobid, names, ep->snode, ep->max_wait_s);
			for (i = 0; i < n; i++)
				if (cgroup_kill(&ep->tree, paths[i]) == -1)
					log_warn("kill %s", paths[i]);
			killed = 1;
			deadline = now + (int64_t)ep->kill_wait_s * 1000;
		}
		epilog_wait(ep, paths, n, deadline - now);
		epilog_paths_free(paths, n);
	}
	epilog_paths_free(paths, n);
	free(paths);
	snprintf(reason, sizeof(reason),
	    EPILOG_DRAIN " job %s: pods %.600s %s", ep->jobid, names,
	    emptied ? "came back after a kill (their kubelet restarts them)" :
	    killed  ? "still run after a kill" :
		      "still run");
	log_warnx("node %s: draining: %s", ep->snode, reason);
	if (epilog_drain(ep, names, reason) == -1) {
		/* Slurm drains a node whose epilog fails: it still waits. */
		log_warnx("node %s: %s failed to drain it", ep->snode,
		    ep->scontrol);
		return (1);
	}
	return (0);
}

/* A whole number from lo to hi into *out, or -1 with the error told. */
static int
epilog_number(const char *opt, const char *arg, long lo, long hi, int *out)
{
	char *end;
	long  n;

	errno = 0;
	n = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || errno != 0 || n < lo || n > hi) {
		fprintf(stderr,
		    "slurm-bridge-epilog: --%s: \"%s\" is not a whole number "
		    "from %ld to %ld\n",
		    opt, arg, lo, hi);
		return (-1);
	}
	*out = (int)n;
	return (0);
}

/* slurm-bridge-epilog-api beside this program, with the other options. */
static int
epilog_api(char **argv)
{
	char  self[PATH_MAX], *slash;
	char  path[PATH_MAX + 32];
	int   n;

	if ((n = (int)readlink("/proc/self/exe", self, sizeof(self) - 1)) <=
	    0) {
		log_warn("/proc/self/exe");
		return (1);
	}
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/slurm-bridge-epilog-api", self);
	argv[0] = path;
	execv(path, argv);
	log_warn("%s", path);
	return (1);
}

/*
 * The flags into ep, *owners, *api and *resume (the options after --api
 * are the API epilog's).  -1 to go on, else the exit status.
 */
static int
epilog_flags(int argc, char **argv, struct epilog *ep, const char **owners,
    int *api, int *resume)
{
	static const struct option opts[] = {
		{ "cgroup-root", required_argument, NULL, 'c' },
		{ "max-wait", required_argument, NULL, 'm' },
		{ "kill-wait", required_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "owners", required_argument, NULL, 'o' },
		{ "scontrol", required_argument, NULL, 's' },
		{ "api", no_argument, NULL, 'a' },
		{ "resume", no_argument, NULL, 'r' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ep->mount = optarg;
			break;
		case 'm':
			if (epilog_number("max-wait", optarg, 1, 86400,
				&ep->max_wait_s) == -1)
				return (2);
			break;
		case 'w':
			if (epilog_number("kill-wait", optarg, 0, 3600,
				&ep->kill_wait_s) == -1)
				return (2);
			break;
		case 'i':
			if (epilog_number("interval", optarg, 10, 10000,
				&ep->interval_ms) == -1)
				return (2);
			break;
		case 'o':
			*owners = optarg;
			break;
		case 's':
			if (optarg[0] != '/') {
				fprintf(stderr,
				    "slurm-bridge-epilog: --scontrol: \"%s\" "
				    "is not an absolute path (slurmd sets no "
				    "PATH)\n",
				    optarg);
				return (2);
			}
			ep->scontrol = optarg;
			break;
		case 'a':
			*api = 1;
			break;
		case 'r':
			*resume = 1;
			break;
		case 'd':
			ep->state_dir = optarg;
			break;
		case 'h':
			epilog_usage();
			return (0);
		default:
			epilog_usage();
			return (2);
		}
		if (*api)
			break;
	}
	return (-1);
}

int
main(int argc, char **argv)
{
	struct epilog ep;
	const char   *owners = NULL, *uid, *env;
	char	     *pods;
	int	      api = 0, resume = 0, rc;

	memset(&ep, 0, sizeof(ep));
	ep.max_wait_s = EPILOG_MAX_WAIT_S;
	ep.kill_wait_s = EPILOG_KILL_WAIT_S;
	ep.interval_ms = EPILOG_INTERVAL_MS;
	ep.mount = "/sys/fs/cgroup";
	ep.scontrol = EPILOG_SCONTROL;
	ep.state_dir = EPILOG_STATE_DIR;
	if ((rc = epilog_flags(argc, argv, &ep, &owners, &api, &resume)) != -1)
		return (rc);
	if (resume) {
		log_init(0);
		log_setname("epilog");
		if ((ep.snode = getenv("SLURMD_NODENAME")) == NULL) {
			log_warnx("--resume: SLURMD_NODENAME is not set: not "
				  "run by slurmd?");
			return (1);
		}
		return (epilog_resume(&ep));
	}
	/* Not a bridge job: nothing of Kubernetes holds this node. */
	if ((env = getenv("SPANK_" NODE_ENV_PODS)) == NULL)
		return (0);
	log_init(0);
	log_setname("epilog");
	ep.jobid = getenv("SLURM_JOB_ID");
	ep.snode = getenv("SLURMD_NODENAME");
	uid = getenv("SLURM_JOB_UID");
	if (ep.jobid == NULL || ep.snode == NULL) {
		log_warnx("SLURM_JOB_ID or SLURMD_NODENAME is not set: not "
			  "run by slurmd?");
		return (1);
	}
	if (owners != NULL && (uid == NULL || !slurmnode_listed(owners, uid))) {
		log_info("job %s: owned by uid %s, not one of --owners %s: "
			 "its " NODE_ENV_PODS " is not the scheduler's; not "
			 "waited for",
		    ep.jobid, uid != NULL ? uid : "(none)", owners);
		return (0);
	}
	if (api) {
		argv[optind - 1] = argv[0];
		return (epilog_api(argv + optind - 1));
	}
	if (cgroup_open(&ep.tree, ep.mount) == -1) {
		log_info("job %s: no kubelet cgroups under %s: no container of "
			 "a pod runs on %s",
		    ep.jobid, ep.mount, ep.snode);
		return (0);
	}
	if ((pods = strdup(env)) == NULL)
		return (1);
	rc = epilog_split(&ep, pods) == -1 ? 1 : epilog_run(&ep);
	free(ep.uids);
	free(pods);
	return (rc);
}
