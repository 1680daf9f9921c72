/*
 * The ends of jobs: completed (sctl_complete, with the exit code sacct
 * shows) or cancelled (sctl_cancel), one at a time, and many pending jobs
 * or orphans cancelled in one RPC where Slurm has one (sctl_cancel_jobs,
 * sctl_cancel_batch at a time).  The end thread's calls, and a cancel the
 * reconcile or a submit thread makes now and then.
 *
 * Threads: end, reconcile (sctl_cancel, sctl_cancel_batch, sctl_cancel_done),
 * submit (sctl_cancel, sctl_cancel_done).
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
