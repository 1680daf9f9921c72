/*
 * The only libslurm user.  Submits allocation-only placeholder jobs (the way
 * salloc holds an allocation with no command: no process runs on any node),
 * cancels them, and polls job state incrementally with slurm_load_jobs'
 * update_time.  Runs on the reconcile thread only.  The function prefix is
 * sctl_ because libslurm owns the slurm_ namespace.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "xmalloc.h"
#include "bridge.h"
#include "owner.h"

/* Exported by libslurm but not declared in slurm.h (22.05). */
extern char	*slurm_job_state_string(uint32_t);
extern char	*slurm_job_reason_string(enum job_state_reason);
extern void	 slurm_xfree(void **);

/*
 * libslurm 22.05's slurm_free_job_info_msg() does not free admin_comment:
 * every job record loaded leaks it (seen with valgrind, 169 bytes for a
 * 150-character admin_comment).  Free it ourselves on those versions.
 */
static void
sctl_free_jobs(job_info_msg_t *msg)
{
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 2, 0)
	uint32_t	i;

	for (i = 0; msg != NULL && i < msg->record_count; i++)
		slurm_xfree((void **)&msg->job_array[i].admin_comment);
#endif
	slurm_free_job_info_msg(msg);
}

static const char *
sctl_strerror(void)
{
	return (slurm_strerror(slurm_get_errno()));
}

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
	d->partition = js->partition;
	d->account = js->account;
	d->qos = js->qos;
	d->reservation = js->reservation;
	d->features = js->constraints;
	d->tres_per_task = js->tres_per_task;
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
	d->licenses = js->licenses;
	d->wckey = js->wckey;
	d->mcs_label = js->mcs_label;
	if (js->time_limit > 0)
		d->time_limit = js->time_limit;
	if (js->priority > 0)
		d->priority = js->priority;
	d->user_id = getuid();
	d->group_id = getgid();
	d->work_dir = (char *)(uintptr_t)"/";
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
		return (1);
	default:
		return (0);
	}
}

/*
 * The allocation as [{node, cpus, gres}], one entry per node in hostlist
 * order; gres is the node's GRES detail ("gpu:2(IDX:0-1)") when known.
 */
static json_t *
sctl_layout(slurm_job_info_t *j)
{
	hostlist_t	 hl;
	json_t		*arr, *ent;
	char		*h;
	uint32_t	 i = 0;
	int		 cpus;

	if (j->nodes == NULL || (hl = slurm_hostlist_create(j->nodes)) == NULL)
		return (NULL);
	arr = json_array();
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		cpus = j->job_resrcs != NULL ?
		    slurm_job_cpus_allocated_on_node(j->job_resrcs, h) : 0;
		ent = json_pack("{s:s, s:i}", "node", h, "cpus",
		    cpus > 0 ? cpus : 0);
		if (i < j->gres_detail_cnt && j->gres_detail_str[i] != NULL)
			json_object_set_new(ent, "gres",
			    json_string(j->gres_detail_str[i]));
		json_array_append_new(arr, ent);
		free(h);
		i++;
	}
	slurm_hostlist_destroy(hl);
	return (arr);
}

/* Loads one job's layout (after a synchronous allocation). */
static json_t *
sctl_job_layout(uint32_t jobid)
{
	job_info_msg_t	*msg = NULL;
	json_t		*layout = NULL;
	double		 t0 = metrics_now();
	int		 rc;

	rc = slurm_load_job(&msg, jobid, SHOW_DETAIL);
	stats_rpc(RPC_LOAD_JOBS, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS)
		return (NULL);
	if (msg->record_count > 0)
		layout = sctl_layout(&msg->job_array[0]);
	sctl_free_jobs(msg);
	return (layout);
}

int
sctl_submit(const struct jobspec *js, uint32_t *jobid, json_t **layout,
    int *permanent, char *err, size_t errlen)
{
	job_desc_msg_t				 d;
	resource_allocation_response_msg_t	*resp = NULL;
	double					 t0;
	int					 rc;

	*jobid = 0;
	*layout = NULL;
	*permanent = 0;
	sctl_desc_fill(&d, js);
	if (owner_resolve(js, &d.user_id, &d.group_id, err, errlen) == -1) {
		*permanent = 1;
		return (-1);
	}
	t0 = metrics_now();
	rc = slurm_allocate_resources(&d, &resp);
	stats_rpc(RPC_ALLOCATE, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		*permanent = sctl_error_permanent(slurm_get_errno());
		snprintf(err, errlen, "slurm_allocate_resources: %s",
		    sctl_strerror());
		slurm_free_resource_allocation_response_msg(resp);
		return (-1);
	}
	*jobid = resp->job_id;
	atomic_fetch_add(&bstats.jobs_submitted, 1);
	/*
	 * Allocated at once: fetch the per-node layout now rather than wait
	 * for the next poll.  If that fails the poll will bring it.
	 */
	if (resp->node_list != NULL && *resp->node_list != '\0')
		*layout = sctl_job_layout(resp->job_id);
	slurm_free_resource_allocation_response_msg(resp);
	return (0);
}

int
sctl_cancel(uint32_t jobid, char *err, size_t errlen)
{
	double	t0 = metrics_now();
	int	rc;

	rc = slurm_kill_job(jobid, SIGKILL, 0);
	/* Already gone is what we wanted. */
	if (rc != SLURM_SUCCESS && (slurm_get_errno() == ESLURM_ALREADY_DONE ||
	    slurm_get_errno() == ESLURM_INVALID_JOB_ID)) {
		stats_rpc(RPC_KILL_JOB, t0, 1);
		return (0);
	}
	stats_rpc(RPC_KILL_JOB, t0, rc == SLURM_SUCCESS);
	if (rc == SLURM_SUCCESS) {
		atomic_fetch_add(&bstats.jobs_cancelled, 1);
		return (0);
	}
	snprintf(err, errlen, "slurm_kill_job %u: %s", jobid, sctl_strerror());
	return (-1);
}

int
sctl_poll(time_t *since, sjob_cb cb, void *arg, char *err, size_t errlen)
{
	job_info_msg_t	*msg = NULL;
	slurm_job_info_t *j;
	struct sjob	 sj;
	uint32_t	 i, base;
	double		 t0;
	int		 rc;

	t0 = metrics_now();
	rc = slurm_load_jobs(*since, &msg, SHOW_ALL | SHOW_DETAIL);
	if (rc != SLURM_SUCCESS && slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA) {
		stats_rpc(RPC_LOAD_JOBS, t0, 1);
		atomic_store(&bstats.slurm_ok_at, (long long)time(NULL));
		return (1);
	}
	stats_rpc(RPC_LOAD_JOBS, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_jobs: %s", sctl_strerror());
		return (-1);
	}
	atomic_store(&bstats.slurm_ok_at, (long long)time(NULL));
	*since = msg->last_update;
	for (i = 0; i < msg->record_count; i++) {
		j = &msg->job_array[i];
		if (j->comment == NULL || strncmp(j->comment,
		    BRIDGE_COMMENT_MARKER, strlen(BRIDGE_COMMENT_MARKER)) != 0)
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
		sj.state = slurm_job_state_string(sj.phase == SJOB_ENDED ?
		    base : j->job_state);
		sj.reason = slurm_job_reason_string(j->state_reason);
		sj.nodes = j->nodes;
		sj.admin_comment = j->admin_comment;
		sj.name = j->name;
		sj.submit_time = j->submit_time;
		sj.start_time = j->start_time;
		sj.layout = sj.phase == SJOB_RUNNING ? sctl_layout(j) : NULL;
		cb(&sj, arg);
		json_decref(sj.layout);
	}
	sctl_free_jobs(msg);
	return (0);
}

json_t *
sctl_hostlist_expand(const char *hostlist)
{
	hostlist_t	 hl;
	json_t		*arr;
	char		*h;

	if (hostlist == NULL || (hl = slurm_hostlist_create(hostlist)) == NULL)
		return (NULL);
	arr = json_array();
	while ((h = slurm_hostlist_shift(hl)) != NULL) {
		json_array_append_new(arr, json_string(h));
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return (arr);
}

/* One node's record, timed. */
static int
sctl_load_node_one(const char *node, node_info_msg_t **msg)
{
	double	t0 = metrics_now();
	int	rc;

	rc = slurm_load_node_single(msg, (char *)(uintptr_t)node, SHOW_ALL);
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	return (rc);
}

static int
sctl_update_node(update_node_msg_t *u)
{
	double	t0 = metrics_now();
	int	rc;

	rc = slurm_update_node(u);
	stats_rpc(RPC_UPDATE_NODE, t0, rc == SLURM_SUCCESS);
	return (rc);
}

int
sctl_node_drain(const char *node, const char *reason, char *err,
    size_t errlen)
{
	node_info_msg_t		*msg = NULL;
	update_node_msg_t	 u;
	int			 drained;

	if (sctl_load_node_one(node, &msg) != SLURM_SUCCESS) {
		snprintf(err, errlen, "load node %s: %s", node,
		    sctl_strerror());
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
	if (sctl_update_node(&u) == SLURM_SUCCESS)
		return (0);
	snprintf(err, errlen, "drain %s: %s", node, sctl_strerror());
	return (-1);
}

int
sctl_node_resume_ours(const char *node, const char *prefix, int *resumed,
    char *err, size_t errlen)
{
	node_info_msg_t		*msg = NULL;
	update_node_msg_t	 u;
	const char		*reason;
	int			 ours;

	*resumed = 0;
	if (sctl_load_node_one(node, &msg) != SLURM_SUCCESS) {
		snprintf(err, errlen, "load node %s: %s", node,
		    sctl_strerror());
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
	if (sctl_update_node(&u) != SLURM_SUCCESS) {
		snprintf(err, errlen, "resume %s: %s", node, sctl_strerror());
		return (-1);
	}
	*resumed = 1;
	return (0);
}

json_t *
sctl_node_names(char *err, size_t errlen)
{
	node_info_msg_t	*msg = NULL;
	json_t		*names;
	uint32_t	 i;
	double		 t0;
	int		 rc;

	t0 = metrics_now();
	rc = slurm_load_node(0, &msg, SHOW_ALL);
	stats_rpc(RPC_LOAD_NODES, t0, rc == SLURM_SUCCESS);
	if (rc != SLURM_SUCCESS) {
		snprintf(err, errlen, "slurm_load_node: %s", sctl_strerror());
		return (NULL);
	}
	names = json_object();
	for (i = 0; i < msg->record_count; i++)
		if (msg->node_array[i].name != NULL)
			json_object_set_new(names, msg->node_array[i].name,
			    json_true());
	slurm_free_node_info_msg(msg);
	return (names);
}
