/*
 * What the bridge's libslurm files (slurm.c, slurmsubmit.c, slurmload.c,
 * slurmend.c) share, and nothing else includes: every difference between
 * the Slurm releases the daemon builds against (22.05 to 26.05), keyed on
 * SLURM_VERSION_NUMBER and dealt with here and nowhere else, and the few
 * functions one of them makes for another.  The function prefix is sctl_
 * because libslurm owns the slurm_ namespace.
 */
#ifndef SLURMREL_H
#define SLURMREL_H

#include <errno.h>
#include <stdio.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include <jansson.h>

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
static inline void
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
static inline void
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
static inline void
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
static inline size_t
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
static inline slurm_step_id_t
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
static inline int
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
static inline int
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
static inline void
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

/* An allocation's layout, as the bridge reads it (new; slurm.c's). */
json_t *sctl_alloc_layout(const resource_allocation_response_msg_t *a,
    int								    has_gres);
/* Sets a job's admin_comment and priority (slurm.c; an admin's right). */
int sctl_admin_fields_set(uint32_t jobid, char *admin_comment,
    uint32_t priority, char *err, size_t errlen);

#endif /* SLURMREL_H */
