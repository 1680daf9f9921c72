/*
 * Loads of Slurm's jobs: made on the poll thread (sctl_load: the jobs
 * changed since the last load, by slurm_load_jobs' update_time; and
 * sctl_jobs_started, a probe of slurmctld's count of jobs started), read
 * on the reconcile thread (sctl_load_each) and freed on the poll thread
 * again (sctl_load_free).
 *
 * Threads: reconcile, poll (sctl_jobs_started, sctl_load, sctl_load_free).
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
