/*
 * The fakes the group tests (check_group.c) link in place of the bridge's
 * outside world: Slurm behind the slurm*.c seam (fake_slurm.c), the
 * writepool, the Event poster and libk8s's requests (fake_writes.c) and
 * the reconcile thread's clock (fake_clock.c); and what drives the submit,
 * poll and end threads by hand (drive.c).  They keep their state in file
 * globals: the sctl_ and k8s_ calls they stand for take no context, and a
 * test runs one bridge.
 */
#ifndef FAKES_H
#define FAKES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct reconcile;
struct writepool;
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
	int updates;	    /* sctl_update_pending calls */
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
/* Its account, or NULL: none, or no such job. */
const char *fake_slurm_job_account(uint32_t id);
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

/*
 * drive.c: the daemon's submit, poll and end threads (submitter.c,
 * poller.c, ender.c) on workers of no thread, run by hand; each worker's
 * answers wait in a queue of its own until delivered, each as the message
 * the reconcile thread reads.  drive_start gives r its three workers;
 * drive_stop stops them (reconcile_workers_stop) and frees their queues.
 */
void drive_reset(void); /* drive_submit_asked counts from 0 */
void drive_start(struct reconcile *r);
void drive_stop(struct reconcile *r);
/* Requests handed to the submit thread since drive_reset. */
int drive_submit_asked(void);
/* Requests not made yet. */
size_t drive_submit_waiting(struct reconcile *r);
/* The thread's work: every request waiting, made (sctl_submit, ...). */
void drive_submit_make(struct reconcile *r);
/* The answers made, each as an MSG_SUBMITTED message. */
size_t drive_submit_deliver(struct reconcile *r);
/*
 * The load asked for, made now (after a spent load is freed, before a
 * probe): its jobs, or -1: none asked, or one is on its way.
 */
int drive_poll_make(struct reconcile *r);
/* The load made, as an MSG_POLLED message (0, or -1: none). */
int drive_poll_deliver(struct reconcile *r);
/*
 * The probe asked for, made and delivered as MSG_PROBED (a load asked
 * before it is made first, and waits); -1: none asked.
 */
int drive_probe_deliver(struct reconcile *r);
/* The ends made, and their answers delivered as MSG_ENDED messages. */
size_t drive_end_deliver(struct reconcile *r);
/* Holds the answers back (1), or lets drive_end_deliver hand them (0). */
void drive_end_hold(int hold);
/* While held, lazy (1) makes nothing: the thread has not come to them. */
void drive_end_lazy(int lazy);
/* Ends asked and not delivered; bulk (may be NULL): bulk cancels unmade. */
size_t drive_end_waiting(struct reconcile *r, size_t *bulk);

#endif /* FAKES_H */
