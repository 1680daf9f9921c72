/*
 * The fakes the group tests (check_group.c) link in place of the bridge's
 * outside world: Slurm behind the slurm*.c seam (fake_slurm.c), the
 * writepool, the Event poster and libk8s's requests (fake_writes.c), the
 * submit thread (fake_submit.c), the poll thread (fake_poller.c), the end
 * thread (fake_ender.c) and the reconcile thread's clock
 * (fake_clock.c).  They keep their state in file globals: the sctl_ and
 * k8s_ calls they stand for take no context, and a test runs one bridge.
 */
#ifndef FAKES_H
#define FAKES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct reconcile;
struct writepool;
struct submitter;
struct wreq;

/* fake_clock.c: now_ms moves only when a test moves it. */
void fake_clock_advance(int64_t ms);

/* fake_slurm.c */
enum fake_submit {
	FAKE_SUBMIT_PEND,     /* the job is made and waits (default) */
	FAKE_SUBMIT_ALLOCATE, /* ... and is allocated at once */
	FAKE_SUBMIT_FAIL,     /* slurmctld unreachable: retried soon */
	FAKE_SUBMIT_REFUSE    /* invalid account: permanent */
};

struct fake_slurm_counts {
	int submits;	    /* sctl_submit calls */
	int cancels;	    /* jobs asked to end, by either call */
	int cancel_batches; /* sctl_cancel_jobs calls */
	int polls;	    /* sctl_load calls */
	int layouts;	    /* sctl_job_layout calls */
	int completes;	    /* sctl_complete calls */
	int admin_updates;  /* sctl_set_admin_comment calls that worked */
};

/* Forgets every job and node, the counts and the modes. */
void fake_slurm_reset(void);
/* A Slurm node with cpus CPUs and gpus GPUs. */
void fake_slurm_node(const char *name, int cpus, int gpus);
void fake_slurm_submit_mode(enum fake_submit);
/* slurmctld unreachable (every call fails) or back. */
void fake_slurm_down(int down);
/* Cancels of jobid fail (0: none), as Slurm refuses a user's. */
void fake_slurm_refuse_cancel(uint32_t jobid);
/* A job's admin_comment now (NULL: none, or no such job). */
const char *fake_slurm_admin_comment(uint32_t jobid);
/* A pending bridge job made before the test (a restart finds it). */
uint32_t fake_slurm_job_add(const char *admin_comment, uint32_t ntasks,
    uint32_t cpus_per_task);
/*
 * Allocates a pending job on nodes ("n1,n2"; NULL: all, in order), as many
 * tasks on each as its CPUs hold; -1 if they do not hold them all.
 */
int fake_slurm_start(uint32_t id, const char *nodes);
/* Starts a heterogeneous job of two components on nodes0 and nodes1. */
int fake_slurm_start_comps(uint32_t id, const char *nodes0, const char *nodes1);
/* A job's components (0: an ordinary job). */
size_t fake_slurm_job_comps(uint32_t id);
/* A pending job's new reason. */
/* start_in_s: its planned start that many seconds ahead, or 0: none. */
void fake_slurm_pend(uint32_t id, const char *reason, int start_in_s);
/* What scontrol update does to a pending job (NULL: left as it is). */
void fake_slurm_update(uint32_t id, const char *partition, const char *account,
    const char *qos);
/* Ends a job with a Slurm state ("NODE_FAIL", "TIMEOUT", ...). */
void fake_slurm_end(uint32_t id, const char *state, const char *reason);
/* A running job is preempted: GraceTime grace_s from now. */
void fake_slurm_preempt(uint32_t id, int grace_s);
/* A running job is suspended (scontrol suspend, PreemptMode=SUSPEND). */
void fake_slurm_suspend(uint32_t id);
/* A running job is requeued: PENDING again. */
void fake_slurm_requeue(uint32_t id);
/* Slurm forgets an ended job (MinJobAge). */
void fake_slurm_purge(uint32_t id);
/* Someone sets a job's comment (scontrol update JobId=id Comment=...). */
void fake_slurm_comment(uint32_t id, const char *comment);
/* The newest job's id, 0 if none. */
uint32_t fake_slurm_last_job(void);
/* "PENDING", "RUNNING", "CANCELLED", ... or NULL if unknown. */
const char *fake_slurm_job_state(uint32_t id);
/* Its comment as Slurm keeps it, or NULL: no such job. */
const char		       *fake_slurm_job_comment(uint32_t id);
const struct fake_slurm_counts *fake_slurm_counts(void);
/* The exit code and signal of the last sctl_complete. */
void fake_slurm_last_exit(int *exit_code, int *signal);

/* fake_writes.c: every pod write, Event and sync request, in one log. */
enum fake_write {
	FW_BIND,    /* WREQ_BIND */
	FW_COND,    /* WREQ_STATUS: the PodScheduled message */
	FW_META,    /* WREQ_METADATA, or a sync label patch */
	FW_RELEASE, /* WREQ_RELEASE */
	FW_UNLABEL, /* a label patch that takes the job id off */
	FW_DELETE,  /* DELETE of a pod */
	FW_FORCE,   /* DELETE with grace 0 */
	FW_FAIL,    /* status patch to phase Failed */
	FW_NODE,    /* a node patch (taint) */
	FW_OTHER,   /* any other wreq kind */
	FW_KINDS
};

void fake_writes_reset(void);
/* Writes of a kind asked so far (pool and sync). */
int fake_writes_count(enum fake_write);
/* Events posted with reason so far. */
int fake_events_count(const char *reason);
/* The log: [{w, pod, msg?, node?, sync}] and [{event, pod, note}]. */
json_t *fake_writes_log(void);
json_t *fake_events_log(void);
/* The last condition message asked for pod key, or NULL. */
const char *fake_writes_cond(const char *pkey);
/* Writes handed to the pool and not answered yet. */
size_t fake_writes_waiting(struct writepool *);
/*
 * Answers the writes waiting now (not those the answers ask for) as the
 * pool would, each as an MSG_WRITE message to r: rc 0, or -1 with status.
 * landed (may be NULL) sees each successful one first.  Returns how many.
 */
size_t fake_writes_answer(struct writepool *, struct reconcile *r, long status,
    void (*landed)(const struct wreq *, void *), void *arg);

/* fake_submit.c: the submit thread, run by hand. */
void fake_submit_reset(void);
/* Requests handed over so far. */
int    fake_submit_asked(void);
size_t fake_submit_waiting(struct submitter *);
/* The thread's work: sctl_submit for each request not withdrawn. */
void fake_submit_make(struct submitter *);
/* The answers made, each as an MSG_SUBMITTED message to r. */
size_t fake_submit_deliver(struct submitter *, struct reconcile *r);

/* fake_poller.c: the poll thread, run by hand. */
/* Loads asked for and not made yet. */
int fake_poller_asked(struct reconcile *);
/* The thread's work: the load asked for, made now: its jobs, or -1. */
int fake_poller_make(struct reconcile *);
/* The load made, as an MSG_POLLED message to r (0, or -1: none). */
int fake_poller_deliver(struct reconcile *);
/* Answers one (sctl_jobs_started now) as an MSG_PROBED message; -1: none. */
int fake_poller_probe_deliver(struct reconcile *);

/* fake_ender.c: the end thread; an end is made when asked, bulk ones lazily. */
/* The ends made, each as an MSG_ENDED message to r (none while held). */
size_t fake_ender_deliver(struct reconcile *r);
/* Holds the answers back (1) or lets deliver hand them over (0). */
void fake_ender_hold(int hold);
/* Lazy (1): a request is made only when delivered, not when asked. */
void fake_ender_lazy(int lazy);
/* Bulk cancels moved to the front (ender_promote) while lazy. */
int fake_ender_promoted(void);
/* Answers on their way. */
size_t fake_ender_waiting(struct reconcile *r);

#endif /* FAKES_H */
