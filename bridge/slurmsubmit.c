/*
 * The submit threads' libslurm calls: an allocation-only placeholder job
 * made for a group (sctl_submit: the way salloc holds an allocation with
 * no command; a heterogeneous gang as a batch job that holds it), made as
 * the job's owner where the config says so, and a pending job changed
 * (sctl_update_pending).
 *
 * Threads: submit.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"
#include "runas.h"
#include "slurmrel.h"

/* The strings are borrowed from js: libslurm only reads them here. */
static void
sctl_desc_fill(job_desc_msg_t *d, const struct jobspec *js)
{
	slurm_init_job_desc_msg(d);
	d->name = js->name;
	d->comment = js->comment;
	d->admin_comment = js->admin_comment;
	if (js->node_env != NULL) {
		d->spank_job_env = js->node_env;
		d->spank_job_env_size = 1;
	}
	d->partition = js->partition;
	d->account = js->account;
	d->qos = js->qos;
	d->reservation = js->reservation;
	d->features = js->constraints;
	d->tres_per_task = js->tres_per_task;
	d->tres_per_node = js->tres_per_node;
	d->num_tasks = js->ntasks;
	d->cpus_per_task = (uint16_t)js->cpus_per_task;
	d->min_cpus = js->ntasks * js->cpus_per_task;
	d->min_nodes = 1;
	if (js->exclusive) {
		/* One pod per node, and the node is not shared. */
		d->min_nodes = d->max_nodes = js->ntasks;
		d->ntasks_per_node = 1;
		d->shared = JOB_SHARED_NONE;
	} else if (js->ntasks == 1)
		d->max_nodes = 1;
	if (js->mem_per_node_mb > 0)
		d->pn_min_memory = js->mem_per_node_mb;
	else if (js->mem_per_cpu_mb > 0)
		d->pn_min_memory = js->mem_per_cpu_mb | MEM_PER_CPU;
	if (js->min_nodes > 0)
		d->min_nodes = js->min_nodes;
	if (js->max_nodes > 0)
		d->max_nodes = js->max_nodes;
	if (js->req_switch > 0) {
		d->req_switch = js->req_switch;
		d->wait4switch = js->wait4switch;
	}
	sctl_desc_segment(d, js->segment_size);
	sctl_desc_topo_exclusive(d, js->topo_exclusive);
	d->licenses = js->licenses;
	d->wckey = js->wckey;
	d->mcs_label = js->mcs_label;
	d->req_nodes = js->req_nodes;
	d->exc_nodes = js->exc_nodes;
	if (js->time_limit > 0)
		d->time_limit = js->time_limit;
	if (js->priority > 0)
		d->priority = js->priority;
	d->user_id = geteuid();
	d->group_id = getegid();
	d->work_dir = (char *)(uintptr_t) "/";
	/*
	 * Never requeued: a requeued placeholder would be PENDING again
	 * while its pods still run.  Preemption in REQUEUE mode then kills
	 * it instead (slurmctld falls back to SIGKILL when a requeue fails).
	 */
	d->requeue = 0;
}

/* Errors that resubmitting the same request cannot fix. */
static int
sctl_error_permanent(int e)
{
	switch (e) {
	case ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE:
	case ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE:
	case ESLURM_INVALID_ACCOUNT:
	case ESLURM_INVALID_PARTITION_NAME:
	case ESLURM_PARTITION_NOT_AVAIL:
	case ESLURM_INVALID_QOS:
	case ESLURM_INVALID_GRES:
	case ESLURM_INVALID_TRES:
	case ESLURM_INVALID_TIME_LIMIT:
	case ESLURM_INVALID_NODE_COUNT:
	case ESLURM_INVALID_CPU_COUNT:
	case ESLURM_TOO_MANY_REQUESTED_CPUS:
	case ESLURM_INVALID_TASK_MEMORY:
	case ESLURM_INVALID_FEATURE:
	case ESLURM_INVALID_LICENSES:
	case ESLURM_INVALID_WCKEY:
	case ESLURM_RESERVATION_INVALID:
	case ESLURM_ACCESS_DENIED:
	case ESLURM_USER_ID_MISSING:
		return (1);
	default:
		return (0);
	}
}

/*
 * A request made as the job's owner.  Up to 23.02 slurmctld honours the
 * request's user_id/group_id from root or SlurmUser; from 23.11 it takes
 * the owner from the caller's credential, so this thread takes on the
 * owner's identity for the call (runas_assume).  The owner may set neither
 * admin_comment nor the priority (slurmctld drops a user's priority): the
 * scheduler sets them once the job exists, and cancels the job if it
 * cannot (a job without its pod list could not be adopted after a
 * restart).  sctl_owner_begin before the call, sctl_owner_end after it,
 * sctl_owner_finish once the job exists.
 */
struct sctl_owner {
	int		 as_owner;
	struct runas_ids saved;
	char		*admin;
	uint32_t	 prio;
};

/* d[0..n): the request's job descriptions (the components). */
static int
sctl_owner_begin(job_desc_msg_t *d, size_t n, struct sctl_owner *o,
    int *permanent, char *err, size_t errlen)
{
	size_t i;
	int    e;

	memset(o, 0, sizeof(*o));
	o->as_owner = SCTL_OWNER_FROM_CREDENTIAL &&
	    (d->user_id != geteuid() || d->group_id != getegid());
	if (!o->as_owner)
		return (0);
	if (runas_assume(d->user_id, d->group_id, &o->saved) == -1) {
		e = errno;
		*permanent = 1;
		snprintf(err, errlen,
		    "annotation " ANN_PREFIX "user-id: Slurm "
		    "%d.%02d makes the caller a job's owner, and the scheduler "
		    "cannot act as uid %u gid %u (%s): run it as root, or with "
		    "CAP_SETUID and CAP_SETGID",
		    SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		    SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER), d->user_id,
		    d->group_id, strerror(e));
		return (-1);
	}
	o->admin = d->admin_comment;
	o->prio = d->priority;
	for (i = 0; i < n; i++) {
		d[i].admin_comment = NULL;
		d[i].priority = NO_VAL;
	}
	return (0);
}

static void
sctl_owner_end(job_desc_msg_t *d, size_t n, const struct sctl_owner *o)
{
	size_t i;

	if (!o->as_owner)
		return;
	runas_revert(&o->saved);
	for (i = 0; i < n; i++) {
		d[i].admin_comment = o->admin;
		d[i].priority = o->prio;
	}
}

/* The job exists: what only an administrator may set; -1 cancels it. */
static int
sctl_owner_finish(const struct sctl_owner *o, uint32_t jobid, char *err,
    size_t errlen)
{
	char cerr[128];

	if (!o->as_owner || (o->admin == NULL && o->prio == NO_VAL) ||
	    sctl_admin_fields_set(jobid, o->admin, o->prio, err, errlen) == 0)
		return (0);
	/* One message for the caller to log: both failures. */
	if (sctl_cancel(jobid, cerr, sizeof(cerr)) == -1) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, "; and %s", cerr);
	}
	return (-1);
}

/* slurm_allocate_resources as the job's owner (sctl_owner_begin). */
static int
sctl_allocate(job_desc_msg_t *d, resource_allocation_response_msg_t **resp,
    int *permanent, char *err, size_t errlen)
{
	struct sctl_owner o;
	double		  t0;
	int		  rc, e;

	if (sctl_owner_begin(d, 1, &o, permanent, err, errlen) == -1)
		return (-1);
	t0 = metrics_now();
	rc = slurm_allocate_resources(d, resp);
	e = errno;
	sctl_owner_end(d, 1, &o);
	stats_rpc(RPC_ALLOCATE, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		*permanent = sctl_error_permanent(e);
		snprintf(err, errlen, "slurm_allocate_resources: %s",
		    slurm_strerror(e));
		return (-1);
	}
	return (sctl_owner_finish(&o, SCTL_ALLOC_JOBID(*resp), err, errlen));
}

/*
 * What the batch job of a heterogeneous gang runs on its first node: libslurm
 * allocates heterogeneous jobs only blocking (the caller waits, and
 * slurmctld must reach it), or as batch jobs; the bridge submits a batch
 * job that holds the allocation until the bridge completes or cancels it.
 */
static char  sctl_het_script[] = "#!/bin/sh\n"
				 "# slurm-bridge: placeholder of a Kubernetes "
				 "gang; the pods run under Kubernetes\n"
				 "# Preempted, the job lasts its GraceTime: "
				 "the pods yield, not this script.\n"
				 "trap '' TERM\n"
				 "exec sleep 2147483647\n";
static char  sctl_het_env0[] = "SLURM_BRIDGE_PLACEHOLDER=1";
static char *sctl_het_env[] = { sctl_het_env0, NULL };

/* Component k of js as d: its tasks and per-task sizes. */
static void
sctl_comp_fill(job_desc_msg_t *d, const struct jobspec *js, size_t k)
{
	const struct jobcomp *c = &js->comps[k];

	sctl_desc_fill(d, js);
	d->num_tasks = c->ntasks;
	d->cpus_per_task = (uint16_t)c->cpus_per_task;
	d->min_cpus = c->ntasks * c->cpus_per_task;
	d->tres_per_task = c->tres_per_task;
	d->pn_min_memory = c->mem_per_cpu_mb > 0 ?
	    (c->mem_per_cpu_mb | MEM_PER_CPU) :
	    NO_VAL64;
	d->min_nodes = 1;
	d->max_nodes = c->ntasks == 1 ? 1 : NO_VAL;
	if (c->exc_nodes != NULL)
		d->exc_nodes = c->exc_nodes;
	d->environment = sctl_het_env;
	d->env_size = 1;
	d->std_out = (char *)(uintptr_t) "/dev/null";
	d->std_err = (char *)(uintptr_t) "/dev/null";
	if (k == 0)
		d->script = sctl_het_script;
}

/*
 * A gang of several shapes as one heterogeneous job, a component per
 * shape: allocated all or nothing, each component exactly.  Only the
 * backfill scheduler starts heterogeneous jobs (within its interval).
 */
static int
sctl_submit_het(const struct jobspec *js, uint32_t uid, uint32_t gid,
    uint32_t *jobid, int *permanent, char *err, size_t errlen)
{
	job_desc_msg_t	       d[JOBSPEC_MAX_COMPS];
	submit_response_msg_t *resp = NULL;
	struct sctl_owner      o;
	SCTL_LIST	       list;
	double		       t0;
	size_t		       k;
	int		       rc, e;

	list = slurm_list_create(NULL);
	for (k = 0; k < js->ncomps; k++) {
		sctl_comp_fill(&d[k], js, k);
		d[k].user_id = uid;
		d[k].group_id = gid;
		slurm_list_append(list, &d[k]);
	}
	if (sctl_owner_begin(d, js->ncomps, &o, permanent, err, errlen) == -1) {
		slurm_list_destroy(list);
		return (-1);
	}
	t0 = metrics_now();
	rc = slurm_submit_batch_het_job(list, &resp);
	e = errno;
	sctl_owner_end(d, js->ncomps, &o);
	slurm_list_destroy(list);
	stats_rpc(RPC_ALLOCATE, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		*permanent = sctl_error_permanent(e);
		snprintf(err, errlen, "slurm_submit_batch_het_job: %s",
		    slurm_strerror(e));
		return (-1);
	}
	*jobid = SCTL_ALLOC_JOBID(resp);
	slurm_free_submit_response_response_msg(resp);
	return (sctl_owner_finish(&o, *jobid, err, errlen));
}

/*
 * The owner user-id and group-id name, resolved on this host, within the
 * namespace's bounds (bounds.c): never root or SlurmUser, whose uid
 * slurmctld's config gives (read once, by the first submit thread that
 * needs it; the others wait on owner_lock meanwhile).
 */
static int
sctl_owner_resolve(const struct jobspec *js, uint32_t *uid, uint32_t *gid,
    char *err, size_t errlen)
{
	static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;
	static uint32_t	       slurm_uid;
	static int	       known;
	slurm_conf_t	      *cf = NULL;
	uint32_t	       su;
	int		       k;

	if (runas_resolve(js, uid, gid, err, errlen) == -1)
		return (-1);
	if (!js->has_user_id && !js->has_group_id)
		return (0);
	pthread_mutex_lock(&owner_lock);
	if (!known && slurm_load_ctl_conf((time_t)0, &cf) == SLURM_SUCCESS) {
		slurm_uid = cf->slurm_user_id;
		known = 1;
		sctl_free_conf(cf);
	}
	k = known;
	su = slurm_uid;
	pthread_mutex_unlock(&owner_lock);
	return (bounds_check_ids(js, *uid, *gid, k ? su : 0, err, errlen));
}

int
sctl_submit(const struct jobspec *js, uint32_t *jobid, json_t **layout,
    int *permanent, char *err, size_t errlen)
{
	job_desc_msg_t			    d;
	resource_allocation_response_msg_t *resp = NULL;

	*jobid = 0;
	*layout = NULL;
	*permanent = 0;
	sctl_desc_fill(&d, js);
	if (sctl_owner_resolve(js, &d.user_id, &d.group_id, err, errlen) ==
	    -1) {
		*permanent = SUBMIT_REFUSED_HERE;
		return (-1);
	}
	if (js->ncomps > 1) {
		if (sctl_submit_het(js, d.user_id, d.group_id, jobid, permanent,
			err, errlen) == -1)
			return (-1);
		atomic_fetch_add(&bstats.jobs_submitted, 1);
		return (0);
	}
	if (sctl_allocate(&d, &resp, permanent, err, errlen) == -1) {
		slurm_free_resource_allocation_response_msg(resp);
		return (-1);
	}
	*jobid = SCTL_ALLOC_JOBID(resp);
	atomic_fetch_add(&bstats.jobs_submitted, 1);
	/* Allocated at once: the layout now rather than at the next poll. */
	*layout = sctl_alloc_layout(resp,
	    js->tres_per_task != NULL || js->tres_per_node != NULL);
	slurm_free_resource_allocation_response_msg(resp);
	return (0);
}

int
sctl_update_pending(const struct jobspec *js, uint32_t jobid, char *err,
    size_t errlen)
{
	job_desc_msg_t	  u;
	struct sctl_owner o;
	char		  empty[] = "";
	size_t		  k, n = js->ncomps > 1 ? js->ncomps : 1;
	uint32_t	  unset_uid, unset_gid;
	double		  t0;
	int		  rc = 0, e = 0, permanent;

	slurm_init_job_desc_msg(&u);
	unset_uid = u.user_id;
	unset_gid = u.group_id;
	/* The owner: the scheduler itself unless user-id names another. */
	u.user_id = geteuid();
	u.group_id = getegid();
	if (sctl_owner_resolve(js, &u.user_id, &u.group_id, err, errlen) ==
		-1 ||
	    sctl_owner_begin(&u, 1, &o, &permanent, err, errlen) == -1)
		return (-1);
	/*
	 * They chose whose identity to take on; the update itself names
	 * nobody (26.05 acts for the user_id a privileged caller names).
	 */
	u.user_id = unset_uid;
	u.group_id = unset_gid;
	u.name = js->name;
	u.partition = js->partition;
	u.account = js->account;
	u.qos = js->qos;
	/* "" clears what the request no longer names. */
	u.reservation = js->reservation != NULL ? js->reservation : empty;
	u.features = js->constraints != NULL ? js->constraints : empty;
	u.licenses = js->licenses != NULL ? js->licenses : empty;
	u.wckey = js->wckey;
	/* The nodes the placement rule excludes follow the cluster. */
	u.exc_nodes = js->exc_nodes != NULL ? js->exc_nodes : empty;
	if (js->time_limit > 0)
		u.time_limit = js->time_limit;
	t0 = metrics_now();
	for (k = 0; k < n && rc == 0; k++) {
		/* A component's own nodes, when the pods' differ. */
		if (js->ncomps > 1 && js->exc_nodes == NULL)
			u.exc_nodes = js->comps[k].exc_nodes != NULL ?
			    js->comps[k].exc_nodes :
			    empty;
		rc = sctl_update_job(&u, jobid, js->ncomps > 1, k, &e);
	}
	sctl_owner_end(&u, 1, &o);
	stats_rpc(RPC_UPDATE_JOB, t0, rc == 0);
	if (rc == 0)
		return (0);
	if (js->ncomps > 1)
		snprintf(err, errlen, "update pending job %u+%zu: %s", jobid,
		    k - 1, slurm_strerror(e));
	else
		snprintf(err, errlen, "update pending job %u: %s", jobid,
		    slurm_strerror(e));
	return (-1);
}
