/*
 * The only libslurm user.  Submits allocation-only placeholder jobs (the way
 * salloc holds an allocation with no command: no process runs on any node),
 * cancels them, and polls job state incrementally with slurm_load_jobs'
 * update_time.  Runs on the reconcile thread, but for sctl_submit and
 * sctl_update_pending, on the submit threads (submitter.c), sctl_load and
 * sctl_jobs_started, on the poll thread (poller.c), the ends of jobs whose
 * pods ended and orphans' cancels (sctl_complete, sctl_cancel,
 * sctl_cancel_jobs), on the end thread (ender.c), and
 * sctl_init and sctl_fini, on main's.  The function prefix is sctl_
 * because libslurm owns the slurm_ namespace.
 *
 * The daemon must be built against the libslurm of the site's slurmctld: a
 * client speaks only to controllers within about two releases of its own.
 * Every difference between the releases it builds against (22.05 to 26.05)
 * is dealt with in the block below, keyed on SLURM_VERSION_NUMBER, and
 * nowhere else.
 *
 * Threads: reconcile, submit, end, poll.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"
#include "runas.h"
#include "yamldoc.h"

/* --- Release differences ------------------------------------------------ */
#define SCTL_SINCE(a, b, c) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, c))

/* 23.11: list_t names the list type (List before). */
#if SCTL_SINCE(23, 11, 0)
typedef list_t *SCTL_LIST;
#else
typedef List	   SCTL_LIST;
#endif

/* 23.11: hostlist_t names the struct, no longer a pointer to it. */
#if SCTL_SINCE(23, 11, 0)
typedef hostlist_t *sctl_hostlist_t;
#else
typedef hostlist_t sctl_hostlist_t;
#endif

/*
 * 24.11: segment_size (topology/block: each segment of that many nodes in
 * one block).  Before, the bridge's check before the Binding alone holds
 * a gang in one domain.
 */
static void
sctl_desc_segment(job_desc_msg_t *d, uint16_t segment_size)
{
#if SCTL_SINCE(24, 11, 0)
	if (segment_size > 0)
		d->segment_size = segment_size;
#else
	(void)d;
	(void)segment_size;
#endif
}

/*
 * 24.11: a job's topology segments (topology/block) can be its alone
 * (--exclusive=topo, JOB_SHARED_TOPO).  Before, the bridge holds the gang
 * in one domain that other jobs may share.
 */
static void
sctl_desc_topo_exclusive(job_desc_msg_t *d, int on)
{
#if SCTL_SINCE(24, 11, 0)
	if (on)
		d->shared = JOB_SHARED_TOPO;
#else
	(void)d;
	(void)on;
#endif
}

/*
 * Slurm's topology.  Up to 24.11 slurm_load_topo's records print one line
 * per switch or block (22.05 prints all; 24.11 takes a node list to print
 * for).  From 25.05 a client of libslurm cannot unpack them where
 * topology.yaml is used (unpacking loads the topology plugins, which need
 * plugins only libslurmfull can load: measured on 26.05), so the bridge
 * reads slurmctld's topology.yaml as slurm_load_topo_config gives it.
 */
#if SCTL_SINCE(25, 5, 0)
#define SCTL_TOPO_YAML 1
#else
static void
sctl_print_topo(FILE *f, topo_info_response_msg_t *msg)
{
#if SCTL_SINCE(23, 2, 0)
	slurm_print_topo_info_msg(f, msg, NULL, 1);
#else
	slurm_print_topo_info_msg(f, msg, 1);
#endif
}
#endif

/*
 * Exported by libslurm but not declared in slurm.h.  24.05 renamed the
 * reason string (job_reason_string -> job_state_reason_string).
 */
extern char *slurm_job_state_string(uint32_t);
extern void  slurm_xfree(void **);
extern void  slurm_free_stats_response_msg(stats_info_response_msg_t *);
#if SCTL_SINCE(24, 5, 0)
extern char *slurm_job_state_reason_string(enum job_state_reason);
#define sctl_reason_string slurm_job_state_reason_string
#else
extern char *slurm_job_reason_string(enum job_state_reason);
#define sctl_reason_string slurm_job_reason_string
#endif
/*
 * slurm_load_ctl_conf's answer: 24.11 frees it with slurm_free_ctl_conf,
 * 26.05 (whose slurm.h declares only this) with slurm_free_conf.
 */
#if SCTL_SINCE(25, 5, 0)
#define sctl_free_conf slurm_free_conf
#else
#define sctl_free_conf slurm_free_ctl_conf
#endif

/*
 * 24.05: slurm_kill_jobs() signals many jobs in one RPC (its response's
 * free is exported but not declared).
 */
#if SCTL_SINCE(24, 5, 0)
#define SCTL_HAVE_KILL_JOBS 1
extern void slurm_free_kill_jobs_response_msg(kill_jobs_resp_msg_t *);

/* The index of job id in ids, or n. */
static size_t
sctl_id_index(const uint32_t *ids, size_t n, uint32_t id)
{
	size_t i;

	for (i = 0; i < n && ids[i] != id; i++)
		;
	return (i);
}
#endif

/* 25.11: the allocation (and submit) response's job id moved into its
 * step_id. */
#if SCTL_SINCE(25, 11, 0)
#define SCTL_ALLOC_JOBID(a) ((a)->step_id.job_id)
#else
#define SCTL_ALLOC_JOBID(a) ((a)->job_id)
#endif

/*
 * 26.05: slurm_load_job, slurm_kill_job and slurm_allocation_lookup name a
 * job by slurm_step_id_t.
 */
#if SCTL_SINCE(26, 5, 0)
static slurm_step_id_t
sctl_job_ref(uint32_t jobid)
{
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = jobid;
	return (id);
}
#else
#define sctl_job_ref(jobid) (jobid)
#endif

/*
 * Up to 22.05, slurm_update_job2 leaks slurmctld's answer to an update
 * that succeeds (fixed by 23.02); there a job is changed through
 * slurm_update_job, named by its id and component offset (its job_id
 * field is gone from later releases).  0, or -1 with *e.
 */
#if SCTL_SINCE(23, 2, 0)
static int
sctl_update_job(job_desc_msg_t *u, uint32_t jobid, int het, size_t comp, int *e)
{
	job_array_resp_msg_t *resp = NULL;
	char		      id[32];
	uint32_t	      i;
	int		      rc;

	/* A heterogeneous job: each component, "leader+offset". */
	if (het)
		snprintf(id, sizeof(id), "%u+%zu", jobid, comp);
	else
		snprintf(id, sizeof(id), "%u", jobid);
	u->job_id_str = id;
	rc = slurm_update_job2(u, &resp);
	*e = errno;
	/* The answer per job (an array's per task): the first error. */
	for (i = 0;
	     rc == SLURM_SUCCESS && resp != NULL && i < resp->job_array_count;
	     i++)
		if (resp->error_code[i] != SLURM_SUCCESS) {
			rc = SLURM_ERROR;
			*e = (int)resp->error_code[i];
		}
	slurm_free_job_array_resp(resp);
	u->job_id_str = NULL;
	return (rc == SLURM_SUCCESS ? 0 : -1);
}
#else
static int
sctl_update_job(job_desc_msg_t *u, uint32_t jobid, int het, size_t comp, int *e)
{
	u->job_id = jobid;
	u->het_job_offset = het ? (uint32_t)comp : NO_VAL;
	if (slurm_update_job(u) == SLURM_SUCCESS)
		return (0);
	*e = errno;
	return (-1);
}
#endif

/*
 * 23.11: slurmctld takes an allocation's owner from the caller's
 * credential, not from the request's user_id/group_id, so the request is
 * made under the owner's identity (runas_assume: this thread only).
 */
#define SCTL_OWNER_FROM_CREDENTIAL SCTL_SINCE(23, 11, 0)

/*
 * slurm_free_job_info_msg() leaks fields of each record: admin_comment up
 * to 23.02.4, resv_ports (24.05) and licenses_allocated (25.05) up to
 * 25.11.3.  They are freed here, and set to NULL, before it runs: that is
 * right whether the library a site runs frees them or not, so it does not
 * hang on the patch level of the headers.
 */
static void
sctl_free_jobs(job_info_msg_t *msg)
{
	uint32_t i;

	for (i = 0; msg != NULL && i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];

		slurm_xfree((void **)&j->admin_comment);
#if SCTL_SINCE(24, 5, 0)
		slurm_xfree((void **)&j->resv_ports);
#endif
#if SCTL_SINCE(25, 5, 0)
		slurm_xfree((void **)&j->licenses_allocated);
#endif
	}
	slurm_free_job_info_msg(msg);
}
/* --- End of release differences ------------------------------------------ */

int
sctl_init(void)
{
	slurm_init(NULL);
	return (0);
}

void
sctl_fini(void)
{
	slurm_fini();
}

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
 * The allocation as [{node, cpus, gres}], one entry per node in hostlist
 * order, from Slurm's answer to an allocation or to a lookup of one: its
 * node list and its CPUs per node (run-length groups).  gres[i] is the
 * i-th node's GRES detail ("gpu:2(IDX:0-1)") when known.
 */
static json_t *
sctl_layout(const resource_allocation_response_msg_t *a, char *const *gres,
    uint32_t ngres)
{
	sctl_hostlist_t hl;
	json_t	       *arr, *ent;
	char	       *h;
	uint32_t	i = 0, grp = 0, rep = 0;
	int		cpus;

	if (a->node_list == NULL || *a->node_list == '\0' ||
	    (hl = slurm_hostlist_create(a->node_list)) == NULL)
		return (NULL);
	arr = json_array();
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		cpus = 0;
		if (grp < a->num_cpu_groups) {
			cpus = a->cpus_per_node[grp];
			if (++rep >= a->cpu_count_reps[grp]) {
				grp++;
				rep = 0;
			}
		}
		ent = json_pack("{s:s, s:i}", "node", h, "cpus", cpus);
		if (i < ngres && gres[i] != NULL)
			json_object_set_new(ent, "gres", json_string(gres[i]));
		json_array_append_new(arr, ent);
		free(h);
		i++;
	}
	slurm_hostlist_destroy(hl);
	return (arr);
}

/*
 * The layout of a job allocated at once, from the allocation response.
 * Only a job with GRES costs a second RPC: its per-node GRES detail (which
 * devices) is in the job record alone.
 */
static json_t *
sctl_alloc_layout(const resource_allocation_response_msg_t *a, int has_gres)
{
	job_info_msg_t *msg = NULL;
	json_t	       *layout;
	double		t0;
	uint32_t	i;
	int		rc;

	if (a->node_list == NULL || *a->node_list == '\0')
		return (NULL); /* pending */
	if (!has_gres)
		return (sctl_layout(a, NULL, 0));
	t0 = metrics_now();
	rc = slurm_load_job(&msg, sctl_job_ref(SCTL_ALLOC_JOBID(a)),
	    SHOW_DETAIL);
	stats_rpc(RPC_LOAD_JOBS, t0, rc == SLURM_SUCCESS);
	/* Without the detail, the next poll brings the layout. */
	if (rc != SLURM_SUCCESS || msg->record_count == 0) {
		sctl_free_jobs(msg);
		return (NULL);
	}
	/* A heterogeneous job's load brings every component: this one's. */
	for (i = 0; i + 1 < msg->record_count; i++)
		if (msg->job_array[i].job_id == SCTL_ALLOC_JOBID(a))
			break;
	layout = sctl_layout(a, msg->job_array[i].gres_detail_str,
	    msg->job_array[i].gres_detail_cnt);
	sctl_free_jobs(msg);
	return (layout);
}

/*
 * Sets what only an administrator may set: admin_comment (NULL: left as
 * it is) and the priority (NO_VAL: left as it is).
 */
static int
sctl_admin_fields_set(uint32_t jobid, char *admin_comment, uint32_t priority,
    char *err, size_t errlen)
{
	job_desc_msg_t u;
	char	       id[16];
	double	       t0;
	int	       rc, e;

	slurm_init_job_desc_msg(&u);
	snprintf(id, sizeof(id), "%u", jobid);
	u.job_id_str = id;
	u.admin_comment = admin_comment;
	u.priority = priority;
	t0 = metrics_now();
	rc = slurm_update_job(&u);
	e = errno;
	stats_rpc(RPC_UPDATE_JOB, t0, rc == SLURM_SUCCESS);
	if (rc == SLURM_SUCCESS)
		return (0);
	snprintf(err, errlen, "set admin_comment and priority of job %u: %s",
	    jobid, slurm_strerror(e));
	return (-1);
}

int
sctl_set_admin_comment(uint32_t jobid, const char *admin_comment, char *err,
    size_t errlen)
{
	char *ac = xstrdup(admin_comment);
	int   rc;

	rc = sctl_admin_fields_set(jobid, ac, NO_VAL, err, errlen);
	free(ac);
	return (rc);
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

/* Already gone is what a cancel wants. */
static int
sctl_cancel_done(int e)
{
	return (e == SLURM_SUCCESS || e == ESLURM_ALREADY_DONE ||
	    e == ESLURM_INVALID_JOB_ID);
}

int
sctl_cancel(uint32_t jobid, char *err, size_t errlen)
{
	double t0 = metrics_now();
	int    rc, e;

	rc = slurm_kill_job(sctl_job_ref(jobid), SIGKILL, 0);
	e = rc == SLURM_SUCCESS ? SLURM_SUCCESS : errno;
	stats_rpc(RPC_KILL_JOB, t0, sctl_cancel_done(e));
	if (rc == SLURM_SUCCESS)
		atomic_fetch_add(&bstats.jobs_cancelled, 1);
	if (sctl_cancel_done(e))
		return (0);
	snprintf(err, errlen, "slurm_kill_job %u: %s", jobid,
	    slurm_strerror(e));
	return (-1);
}

/* slurm_complete_job: 26.05 names the job by a pointer to its step id. */
static int
sctl_complete_rpc(uint32_t jobid, uint32_t status)
{
	/* clang-format indents an #else branch as a continuation. */
	/* clang-format off */
#if SCTL_SINCE(26, 5, 0)
	slurm_step_id_t id = sctl_job_ref(jobid);

	return (slurm_complete_job(&id, status));
#else
	return (slurm_complete_job(jobid, status));
#endif
	/* clang-format on */
}

int
sctl_complete(uint32_t jobid, int exit_code, int signal, char *err,
    size_t errlen)
{
	double t0 = metrics_now();
	/* A wait status, as salloc reports its command's: sacct splits it. */
	uint32_t status = signal > 0 ? (uint32_t)(signal & 0x7f) :
				       (uint32_t)(exit_code & 0xff) << 8;
	int	 rc, e;

	rc = sctl_complete_rpc(jobid, status);
	e = rc == SLURM_SUCCESS ? SLURM_SUCCESS : errno;
	stats_rpc(RPC_COMPLETE_JOB, t0, sctl_cancel_done(e));
	if (sctl_cancel_done(e))
		return (0);
	snprintf(err, errlen, "slurm_complete_job %u: %s", jobid,
	    slurm_strerror(e));
	return (-1);
}

size_t
sctl_cancel_batch(void)
{
#ifdef SCTL_HAVE_KILL_JOBS
	return (END_BATCH);
#else
	return (1);
#endif
}

int
sctl_cancel_jobs(const uint32_t *ids, size_t n, uint8_t *ended, char *err,
    size_t errlen)
{
#ifdef SCTL_HAVE_KILL_JOBS
	kill_jobs_msg_t	      msg;
	kill_jobs_resp_msg_t *resp = NULL;
	char		    **strs;
	double		      t0;
	size_t		      i, k;
	int		      rc, e, failed = 0;

	memset(ended, 0, n);
	if (n == 0)
		return (0);
	strs = xcalloc(n + 1, sizeof(*strs));
	for (i = 0; i < n; i++)
		xasprintf(&strs[i], "%u", ids[i]);
	memset(&msg, 0, sizeof(msg));
	msg.jobs_array = strs;
	msg.jobs_cnt = (uint32_t)n;
	msg.signal = SIGKILL;
	msg.state = JOB_END; /* any state */
	/* An entry for every job, not only for those that failed. */
	msg.flags = KILL_JOBS_VERBOSE;
	t0 = metrics_now();
	rc = slurm_kill_jobs(&msg, &resp);
	e = errno;
	stats_rpc(RPC_KILL_JOBS, t0, rc == SLURM_SUCCESS);
	for (i = 0; i < n; i++)
		free(strs[i]);
	free(strs);
	if (rc != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_kill_jobs (%zu jobs): %s", n,
		    slurm_strerror(rc == SLURM_ERROR || rc == 1 ? e : rc));
		slurm_free_kill_jobs_response_msg(resp);
		return (-1);
	}
	/* Each job has an entry (verbose): one with an error did not end. */
	memset(ended, 1, n);
	for (i = 0; resp != NULL && i < resp->jobs_cnt; i++) {
		kill_jobs_resp_job_t *jr = &resp->job_responses[i];

		if (jr->error_code == SLURM_SUCCESS)
			atomic_fetch_add(&bstats.jobs_cancelled, 1);
		if (sctl_cancel_done((int)jr->error_code))
			continue;
		/* A federation error names no real job id: the asked one. */
		k = sctl_id_index(ids, n,
		    jr->real_job_id != NO_VAL || jr->id == NULL ?
			jr->real_job_id :
			jr->id->step_id.job_id);
		if (k < n)
			ended[k] = 0;
		if (failed++ == 0)
			snprintf(err, errlen, "slurm_kill_jobs: job %u: %s",
			    jr->real_job_id,
			    jr->error_msg != NULL ?
				jr->error_msg :
				slurm_strerror((int)jr->error_code));
	}
	slurm_free_kill_jobs_response_msg(resp);
	return (failed > 0 ? -1 : 0);
	/* clang-format off */
#else
	size_t	i;
	int	failed = 0;
	char	one[256];

	for (i = 0; i < n; i++) {
		ended[i] = sctl_cancel(ids[i], one, sizeof(one)) == 0;
		if (!ended[i] && failed++ == 0)
			snprintf(err, errlen, "%s", one);
	}
	return (failed > 0 ? -1 : 0);
#endif
	/* clang-format on */
}

/* A heterogeneous job's component other than its leader? */
static int
sctl_het_component(const slurm_job_info_t *j)
{
	return (j->het_job_id != 0 && j->het_job_id != NO_VAL &&
	    j->het_job_id != j->job_id);
}

/* A load of Slurm's jobs, made by sctl_load and read by sctl_load_each. */
struct sload {
	job_info_msg_t *msg; /* NULL: no change, or an error */
	int		rc;  /* 0 loaded, 1 no change, -1 error */
	double		rpc_s;
	char		err[256];
};

struct sload *
sctl_load(time_t since)
{
	struct sload *l = xcalloc(1, sizeof(*l));
	double	      t0;
	int	      rc, e;

	t0 = metrics_now();
	/* No SHOW_DETAIL: per-node GRES is read for the jobs that need it. */
	rc = slurm_load_jobs(since, &l->msg, SHOW_ALL);
	e = errno;
	l->rpc_s = metrics_now() - t0;
	if (rc != SLURM_SUCCESS && e == SLURM_NO_CHANGE_IN_DATA) {
		stats_rpc(RPC_LOAD_JOBS, t0, 1);
		atomic_store(&bstats.slurm_ok_at, (long long)time(NULL));
		l->msg = NULL;
		l->rc = 1;
		return (l);
	}
	stats_rpc(RPC_LOAD_JOBS, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		l->msg = NULL;
		l->rc = -1;
		snprintf(l->err, sizeof(l->err), "slurm_load_jobs: %s",
		    slurm_strerror(e));
		/* Said by the thread that saw it, when it saw it. */
		log_warnx("slurm: %s", l->err);
		return (l);
	}
	atomic_store(&bstats.slurm_ok_at, (long long)time(NULL));
	return (l);
}

int
sctl_load_each(const struct sload *l, time_t *since, sjob_cb cb, void *arg,
    double *rpc_s, char *err, size_t errlen)
{
	slurm_job_info_t *j;
	struct sjob	  sj;
	uint32_t	  i, base;

	if (rpc_s != NULL)
		*rpc_s = l->rpc_s;
	if (l->rc != 0) {
		if (l->rc == -1)
			snprintf(err, errlen, "%s", l->err);
		return (l->rc);
	}
	*since = l->msg->last_update;
	for (i = 0; i < l->msg->record_count; i++) {
		j = &l->msg->job_array[i];
		if (j->comment == NULL ||
		    strncmp(j->comment, BRIDGE_COMMENT_MARKER,
			strlen(BRIDGE_COMMENT_MARKER)) != 0)
			continue;
		/* A heterogeneous job is its leader (components move as one). */
		if (sctl_het_component(j))
			continue;
		memset(&sj, 0, sizeof(sj));
		sj.id = j->job_id;
		base = j->job_state & JOB_STATE_BASE;
		if (base == JOB_PENDING)
			sj.phase = SJOB_PENDING;
		else if (base == JOB_RUNNING || base == JOB_SUSPENDED)
			sj.phase = SJOB_RUNNING;
		else
			sj.phase = SJOB_ENDED;
		/*
		 * An ended job may still be COMPLETING (its nodes cleaning
		 * up): the base state says how it ended (NODE_FAIL, ...).
		 */
		sj.state = slurm_job_state_string(
		    sj.phase == SJOB_ENDED ? base : j->job_state);
		sj.reason = sctl_reason_string(j->state_reason);
		sj.nodes = j->nodes;
		sj.admin_comment = j->admin_comment;
		sj.comment = j->comment;
		sj.name = j->name;
		sj.partition = j->partition;
		sj.account = j->account;
		sj.qos = j->qos;
		sj.submit_time = j->submit_time;
		sj.start_time = j->start_time;
		sj.preempt_time = j->preempt_time;
		sj.end_time = j->end_time;
		sj.suspended = base == JOB_SUSPENDED;
		sj.record = j;
		cb(&sj, arg);
	}
	return (0);
}

uint32_t
sctl_load_count(const struct sload *l)
{
	return (l->msg != NULL ? l->msg->record_count : 0);
}

int
sctl_load_has(const struct sload *l, uint32_t id)
{
	uint32_t i;

	if (l->msg == NULL)
		return (0);
	for (i = 0; i < l->msg->record_count; i++)
		if (l->msg->job_array[i].job_id == id)
			return (1);
	return (0);
}

void
sctl_load_free(struct sload *l)
{
	if (l == NULL)
		return;
	sctl_free_jobs(l->msg);
	free(l);
}

/*
 * A heterogeneous job's allocation: every component's layout, each entry
 * with its component ("comp": the component's offset from the leader).
 */
static json_t *
sctl_het_layout(uint32_t jobid)
{
	resource_allocation_response_msg_t *a;
	SCTL_LIST			    list = NULL;
	json_t				   *layout, *part, *ent;
	double				    t0;
	size_t				    i;
	int				    rc, ok = 1;

	t0 = metrics_now();
	rc = slurm_het_job_lookup(sctl_job_ref(jobid), &list);
	stats_rpc(RPC_ALLOC_LOOKUP, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS || list == NULL)
		return (NULL);
	layout = json_array();
	while ((a = slurm_list_pop(list)) != NULL) {
		/* Components' job ids follow the leader's. */
		if (ok && (part = sctl_alloc_layout(a, 1)) != NULL) {
			json_array_foreach (part, i, ent)
				json_object_set_new(ent, "comp",
				    json_integer(SCTL_ALLOC_JOBID(a) - jobid));
			json_array_extend(layout, part);
			json_decref(part);
		} else
			ok = 0;
		slurm_free_resource_allocation_response_msg(a);
	}
	slurm_list_destroy(list);
	if (!ok) {
		json_decref(layout);
		return (NULL);
	}
	return (layout);
}

json_t *
sctl_job_layout(const struct sjob *sj)
{
	const slurm_job_info_t		   *j = sj->record;
	resource_allocation_response_msg_t *a = NULL;
	json_t				   *layout = NULL;
	double				    t0;
	int				    rc;

	if (sj->phase != SJOB_RUNNING || j == NULL)
		return (NULL);
	if (j->het_job_id == j->job_id)
		return (sctl_het_layout(j->job_id));
	t0 = metrics_now();
	rc = slurm_allocation_lookup(sctl_job_ref(sj->id), &a);
	stats_rpc(RPC_ALLOC_LOOKUP, t0, rc == SLURM_SUCCESS);
	/* Polls load no detail: a GRES job's devices cost a job load. */
	if (rc == SLURM_SUCCESS && a != NULL)
		layout = sctl_alloc_layout(a,
		    j->tres_per_task != NULL || j->tres_per_node != NULL);
	slurm_free_resource_allocation_response_msg(a);
	return (layout);
}

/* One node's record, timed: 0, or the error. */
static int
sctl_load_node_one(const char *node, node_info_msg_t **msg)
{
	double t0 = metrics_now();
	int    rc, e;

	rc = slurm_load_node_single(msg, (char *)(uintptr_t)node, SHOW_ALL);
	e = rc == SLURM_SUCCESS ? 0 : errno;
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	return (e);
}

/* 0, or the error. */
static int
sctl_update_node(update_node_msg_t *u)
{
	double t0 = metrics_now();
	int    rc, e;

	rc = slurm_update_node(u);
	e = rc == SLURM_SUCCESS ? 0 : errno;
	stats_rpc(RPC_UPDATE_NODE, t0, rc == SLURM_SUCCESS);
	return (e);
}

int
sctl_node_drain(const char *node, const char *reason, char *err, size_t errlen)
{
	node_info_msg_t	 *msg = NULL;
	update_node_msg_t u;
	int		  drained, e;

	if ((e = sctl_load_node_one(node, &msg)) != 0) {
		snprintf(err, errlen, "load node %s: %s", node,
		    slurm_strerror(e));
		return (-1);
	}
	drained = msg->record_count > 0 &&
	    (msg->node_array[0].node_state & NODE_STATE_DRAIN);
	slurm_free_node_info_msg(msg);
	/* Already drained by someone: keep their reason (and their drain). */
	if (drained)
		return (0);
	slurm_init_update_node_msg(&u);
	u.node_names = (char *)(uintptr_t)node;
	u.node_state = NODE_STATE_DRAIN;
	u.reason = (char *)(uintptr_t)reason;
	if ((e = sctl_update_node(&u)) == 0)
		return (0);
	snprintf(err, errlen, "drain %s: %s", node, slurm_strerror(e));
	return (-1);
}

int
sctl_node_resume_ours(const char *node, const char *prefix, int *resumed,
    char *err, size_t errlen)
{
	node_info_msg_t	 *msg = NULL;
	update_node_msg_t u;
	const char	 *reason;
	int		  ours, e;

	*resumed = 0;
	if ((e = sctl_load_node_one(node, &msg)) != 0) {
		snprintf(err, errlen, "load node %s: %s", node,
		    slurm_strerror(e));
		return (-1);
	}
	reason = msg->record_count > 0 ? msg->node_array[0].reason : NULL;
	ours = msg->record_count > 0 &&
	    (msg->node_array[0].node_state & NODE_STATE_DRAIN) &&
	    reason != NULL && strncmp(reason, prefix, strlen(prefix)) == 0;
	slurm_free_node_info_msg(msg);
	/* A drain someone else made is theirs to undo. */
	if (!ours)
		return (0);
	slurm_init_update_node_msg(&u);
	u.node_names = (char *)(uintptr_t)node;
	u.node_state = NODE_RESUME;
	if ((e = sctl_update_node(&u)) != 0) {
		snprintf(err, errlen, "resume %s: %s", node, slurm_strerror(e));
		return (-1);
	}
	*resumed = 1;
	return (0);
}

json_t *
sctl_node_names(char *err, size_t errlen)
{
	node_info_msg_t *msg = NULL;
	node_info_t	*n;
	json_t		*names;
	uint32_t	 i;
	double		 t0;
	int		 rc, e;

	t0 = metrics_now();
	rc = slurm_load_node(0, &msg, SHOW_ALL);
	e = errno;
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_node: %s", slurm_strerror(e));
		return (NULL);
	}
	names = json_object();
	for (i = 0; i < msg->record_count; i++) {
		n = &msg->node_array[i];
		if (n->name == NULL)
			continue;
		json_object_set_new(names, n->name,
		    (n->node_state & NODE_STATE_DRAIN) ?
			json_string(n->reason != NULL ? n->reason : "") :
			json_true());
	}
	slurm_free_node_info_msg(msg);
	return (names);
}

/* Adds each node of hostlist nodes to map as {node: dom}. */
static void
sctl_topo_add(json_t *map, const char *nodes, const char *dom)
{
	sctl_hostlist_t hl;
	char	       *h;

	if (nodes == NULL || dom == NULL || *nodes == '\0' ||
	    (hl = slurm_hostlist_create(nodes)) == NULL)
		return;
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		json_object_set_new(map, h, json_string(dom));
		free(h);
	}
	slurm_hostlist_destroy(hl);
}

#ifdef SCTL_TOPO_YAML
/*
 * topology.yaml's text (slurm_load_topo_config): the topology called name,
 * else the cluster default, else the first; its blocks, or its switches
 * that hold nodes (the leaves).
 */
static json_t *
sctl_topology_load(int blocks, const char *name, char *err, size_t errlen)
{
	topo_config_response_msg_t *resp = NULL;
	struct yamldoc_error	    ye;
	struct yamldoc_node	   *y = NULL;
	json_t			   *doc = NULL, *t, *pick = NULL, *map = NULL;
	json_t			   *e;
	const char		   *tn, *def;
	FILE			   *f;
	size_t			    i;

	if (slurm_load_topo_config(&resp) != SLURM_SUCCESS || resp == NULL ||
	    resp->config == NULL) {
		snprintf(err, errlen, "slurm_load_topo_config: %s",
		    slurm_strerror(errno));
		goto out;
	}
	if ((f = fmemopen(resp->config, strlen(resp->config), "r")) == NULL) {
		snprintf(err, errlen, "fmemopen: %s", strerror(errno));
		goto out;
	}
	y = yamldoc_read(f, 16, 0, &ye);
	fclose(f);
	if (y == NULL || (doc = yamldoc_json(y)) == NULL ||
	    !json_is_array(doc)) {
		snprintf(err, errlen,
		    "slurmctld's topology configuration is no YAML list "
		    "(line %zu)",
		    y == NULL ? ye.line : 0);
		goto out;
	}
	json_array_foreach (doc, i, t) {
		tn = json_string_value(json_object_get(t, "topology"));
		def = json_string_value(json_object_get(t, "cluster_default"));
		if (name != NULL ? (tn != NULL && strcmp(tn, name) == 0) :
				   (def != NULL && strcmp(def, "true") == 0)) {
			pick = t;
			break;
		}
	}
	if (pick == NULL && name == NULL)
		pick = json_array_get(doc, 0);
	if (pick == NULL) {
		snprintf(err, errlen, "Slurm has no topology named %s", name);
		goto out;
	}
	map = json_object();
	json_array_foreach (k8s_obj_get(pick,
				blocks ? "block.blocks" : "tree.switches"),
	    i, e)
		sctl_topo_add(map,
		    json_string_value(json_object_get(e, "nodes")),
		    json_string_value(
			json_object_get(e, blocks ? "block" : "switch")));
out:
	json_decref(doc);
	yamldoc_free(y);
	slurm_free_topo_config_msg(resp);
	return (map);
}
#else
/* The value of key in a "Key=value Key=value" line: a new string or NULL. */
static char *
sctl_topo_field(const char *line, const char *key)
{
	size_t	    kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=')
			return (xstrndup(p + kl + 1, strcspn(p + kl + 1, " ")));
		p += kl;
	}
	return (NULL);
}

/* slurm_load_topo's records as printed: leaf switches are Level=0. */
static json_t *
sctl_topology_load(int blocks, const char *name, char *err, size_t errlen)
{
	topo_info_response_msg_t *msg = NULL;
	json_t			 *map = NULL;
	char			 *text = NULL, *line, *save = NULL;
	char			 *dom, *nodes, *lvl;
	size_t			  len = 0;
	FILE			 *f;

	(void)name;
	if (slurm_load_topo(&msg) != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_topo: %s",
		    slurm_strerror(errno));
		return (NULL);
	}
	if ((f = open_memstream(&text, &len)) == NULL) {
		snprintf(err, errlen, "open_memstream: %s", strerror(errno));
		goto out;
	}
	sctl_print_topo(f, msg);
	fclose(f);
	map = json_object();
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		dom = sctl_topo_field(line,
		    blocks ? "BlockName" : "SwitchName");
		nodes = sctl_topo_field(line, "Nodes");
		lvl = blocks ? NULL : sctl_topo_field(line, "Level");
		if (blocks || (lvl != NULL && strcmp(lvl, "0") == 0))
			sctl_topo_add(map, nodes, dom);
		free(dom);
		free(nodes);
		free(lvl);
	}
out:
	free(text);
	slurm_free_topo_info_msg(msg);
	return (map);
}
#endif

json_t *
sctl_topology(int blocks, const char *name, char *err, size_t errlen)
{
	json_t *map;
	double	t0 = metrics_now();

	map = sctl_topology_load(blocks, name, err, errlen);
	stats_rpc(RPC_LOAD_TOPOLOGY, t0, map != NULL);
	return (map);
}

int
sctl_jobs_started(uint32_t *started)
{
	stats_info_request_msg_t   req = { .command_id = STAT_COMMAND_GET };
	stats_info_response_msg_t *resp = NULL;
	double			   t0;
	int			   rc, e;

	t0 = metrics_now();
	rc = slurm_get_statistics(&resp, &req);
	e = errno;
	stats_rpc(RPC_STATS, t0, rc == SLURM_SUCCESS && resp != NULL);
	if (rc != SLURM_SUCCESS || resp == NULL) {
		log_warnx("slurm: slurm_get_statistics: %s", slurm_strerror(e));
		return (-1);
	}
	*started = resp->jobs_started;
	slurm_free_stats_response_msg(resp);
	return (0);
}
