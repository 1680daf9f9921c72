/*
 * --leader-elect: a coordination.k8s.io/v1 Lease (libk8s/lease.c), driven
 * from main's thread between signals.  A replica campaigns until it holds
 * the lease and only then starts acting; a leader that cannot renew within
 * the renew deadline, or sees another holder, exits at once, because the
 * next leader may already be acting.  On SIGTERM the leader releases the
 * lease so a follower takes over without waiting for it to expire.
 *
 * In a pod ($POD_NAME), the leader labels its pod LEADER_LABEL=true once
 * elected and recovered, and takes the label off before it releases the
 * Lease; a replica
 * takes it off at start too, in case its process was killed as leader.  A
 * Service selecting the label reaches the leader alone, while every
 * replica reports ready (a follower is ready to take over).
 *
 * The fence (leader_fenced, at the end): a Slurm write that acts on work
 * another leader may own by now waits while the last renewal is too old.
 *
 * Threads: main, end (leader_fenced), reconcile (leader_fenced).
 */
#include <sys/random.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>

#include "clock.h"
#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

struct leader {
	struct k8s_client *client;
	struct k8s_lease  *lease;
	char		   identity[300];
	char		   where[300]; /* ns/name, for messages */
	char		  *pod_path;   /* own pod's path, or NULL */
	int		   labelled;
};

/* Sets (on) or removes this replica's leader label; logged, not fatal. */
static void
leader_label(struct leader *l, int on)
{
	struct k8s_error err;
	json_t		*patch;

	if (l->pod_path == NULL)
		return;
	patch = json_pack("{s:{s:{s:o}}}", "metadata", "labels", LEADER_LABEL,
	    on ? json_string("true") : json_null());
	if (k8s_patch(l->client, l->pod_path, K8S_PATCH_MERGE, patch, NULL,
		&err) == -1)
		log_warnx("leader: label %s on %s: %ld %s: %s", LEADER_LABEL,
		    l->pod_path, err.status, err.reason, err.text);
	else
		l->labelled = on;
	json_decref(patch);
}

struct leader *
leader_new(const struct k8s_config *kconf, const char *ns, const char *name,
    const char *pod, char *err, size_t errlen)
{
	struct leader	     *l = xcalloc(1, sizeof(*l));
	struct k8s_lease_opts o;
	struct k8s_error      kerr;
	char		      host[256];
	unsigned	      nonce;

	if ((l->client = k8s_client_new(kconf, &kerr)) == NULL) {
		snprintf(err, errlen, "leader election: %s", kerr.text);
		free(l);
		return (NULL);
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "slurm-bridge");
	host[sizeof(host) - 1] = '\0';
	/*
	 * Unique per process, as client-go's hostname_UUID: in a container
	 * the PID is always 1, so a restarted process of the same pod would
	 * otherwise take its dead predecessor's identity and with it the
	 * Lease at once, as if it had never been away.
	 */
	if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		nonce = (unsigned)getpid() ^ (unsigned)time(NULL);
	snprintf(l->identity, sizeof(l->identity), "%s_%08x", host, nonce);
	snprintf(l->where, sizeof(l->where), "%s/%s", ns, name);
	memset(&o, 0, sizeof(o));
	o.ns = ns;
	o.name = name;
	o.identity = l->identity;
	l->lease = k8s_lease_new(l->client, &o);
	/* Two calls a step, both well inside the 10 s renew deadline. */
	k8s_client_set_timeout(l->client, LEADER_CALL_MS);
	if (pod != NULL && *pod != '\0') {
		xasprintf(&l->pod_path, "/api/v1/namespaces/%s/pods/%s", ns,
		    pod);
		leader_label(l, 0);
	}
	return (l);
}

void
leader_free(struct leader *l)
{
	if (l == NULL)
		return;
	k8s_lease_free(l->lease);
	k8s_client_free(l->client);
	free(l->pod_path);
	free(l);
}

/* Waits up to s seconds for one of set's signals; 0 if none came. */
static int
leader_sleep(const sigset_t *set, int s)
{
	struct timespec ts = { s, 0 };
	int		sig;

	sig = sigtimedwait(set, NULL, &ts);
	return (sig > 0 ? sig : 0);
}

int
leader_acquire(struct leader *l, const sigset_t *set)
{
	struct k8s_error err;
	const char	*holder;
	long long	 t0;
	int		 rc, sig, told = 0;

	for (;;) {
		t0 = clock_ms(CLOCK_MONOTONIC);
		rc = k8s_lease_step(l->lease, &err);
		if (rc == 1) {
			atomic_store(&bstats.lease_renewed_ms, t0);
			log_info("leader: %s: elected as %s", l->where,
			    l->identity);
			return (0);
		}
		if (rc == 0)
			atomic_store(&bstats.lease_ok_at,
			    (long long)time(NULL));
		if (rc == -1)
			log_warnx("leader: %s: %ld %s: %s", l->where,
			    err.status, err.reason, err.text);
		else if (!told) {
			holder = k8s_lease_holder(l->lease);
			log_info("leader: %s: held by %s; waiting", l->where,
			    holder != NULL ? holder : "?");
			told = 1;
		}
		sig = leader_sleep(set, k8s_lease_retry_period(l->lease));
		if (sig == SIGINT || sig == SIGTERM)
			return (sig);
	}
}

int
leader_wait(struct leader *l, const sigset_t *set)
{
	struct k8s_error err;
	long long	 t0;
	int		 sig, rc;

	sig = leader_sleep(set, k8s_lease_retry_period(l->lease));
	if (sig != 0)
		return (sig);
	/*
	 * The label once this leader has recovered (so the Service never
	 * reaches it before it can answer), and again after a failed patch.
	 */
	if (!l->labelled && atomic_load(&bstats.recovered))
		leader_label(l, 1);
	t0 = clock_ms(CLOCK_MONOTONIC);
	rc = k8s_lease_step(l->lease, &err);
	if (rc == 1) {
		atomic_store(&bstats.lease_renewed_ms, t0);
		return (0);
	}
	if (rc == -1 && k8s_lease_held(l->lease)) {
		log_warnx("leader: %s: renew failed: %ld %s: %s; retrying",
		    l->where, err.status, err.reason, err.text);
		return (0);
	}
	/*
	 * Lost: another replica may be acting already.  Stop at once; the
	 * restarted process campaigns again as a follower.
	 */
	log_warnx("leader: %s: lost the lease (holder now %s); exiting",
	    l->where,
	    k8s_lease_holder(l->lease) != NULL ? k8s_lease_holder(l->lease) :
						 "none");
	atomic_store(&bstats.leader, 0);
	_exit(1);
}

void
leader_release(struct leader *l)
{
	struct k8s_error err;

	if (!k8s_lease_held(l->lease))
		return;
	/* Off first: the Service must never reach a replica that has quit. */
	if (l->labelled)
		leader_label(l, 0);
	if (k8s_lease_release(l->lease, &err) == -1)
		log_warnx("leader: %s: release: %s", l->where, err.text);
	else
		log_info("leader: %s: released", l->where);
}

/*
 * The fence of Slurm writes that act on work another leader may own by now:
 * with --leader-elect, a replica whose Lease renewal (above, on main's
 * thread) is LEADER_FENCE_MS old or more holds such writes back.  The
 * Lease passes to another replica only its duration (15 s) after the last
 * renewal,
 * and the lease's own calls give up after LEADER_CALL_MS, so a leader that
 * stalls stops writing well before a successor can start.  Any thread:
 * it reads an atomic.
 */
int
leader_fenced(int leader_elect, const char *what)
{
	long long age;

	if (!leader_elect)
		return (0);
	age = clock_ms(CLOCK_MONOTONIC) - atomic_load(&bstats.lease_renewed_ms);
	if (age < LEADER_FENCE_MS)
		return (0);
	log_warnx("fence: Lease last renewed %lld ms ago, another replica "
		  "may lead by now: not %s",
	    age, what);
	atomic_fetch_add(&bstats.fenced, 1);
	return (1);
}
