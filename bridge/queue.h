/*
 * The one message queue, and the thread map of slurm-bridge: every thread,
 * what it owns, and the only locks there are.  State has one owner; other
 * threads hand it messages through this queue (many producers, one
 * consumer: the reconcile thread) or through a worker's own request list.
 * A count is the macro that sets it; make lint (lint-index) checks this map
 * against the code.
 *
 * thread              file            owns                      locks
 * ------------------- --------------- ------------------------- -----------
 * main                main.c          flags, config, the Lease  (none)
 *                     leader.c        (leader_wait; publishes
 *                                     its renewal time),
 *                                     signals
 * informer            libk8s/         its watch and store (key  (none;
 *  x NINFORMERS       informer.c      -> resourceVersion); makes pushes to
 *                     main.c          pod, owner and node       the queue)
 *                                     records (podrec.c,
 *                                     ownerrec.c, noderec.c)
 * reconcile           reconcile.c     the caches (pods, groups, pops the
 *                     pods.c          owners, nodes, claims     queue
 *                     group.c         and devices), every       (queue.mtx)
 *                     groups.c        decision, every libslurm
 *                     form.c bind.c   call but submits,
 *                     end.c           pending-job changes, job
 *                     writes.c        loads, the ends of jobs
 *                                     whose pods ended and
 *                                     orphans' cancels, node
 *                                     taints on its own client
 *                     extender.c
 *                     claims.c poll.c
 *                     nodes.c sweep.c
 *                     slurm.c
 * submit              submitter.c     one allocation or pending worker.lock
 *  x SUBMIT_THREADS   worker.c        job change at a time      (the request
 *                     slurmsubmit.c   (sctl_submit,             list);
 *                     runas.c         sctl_update_pending; may  owner_lock
 *                                     take on the owner's ids)  (SlurmUser's
 *                                                               uid)
 * poll                poller.c        one load of Slurm's jobs  worker.lock
 *                     worker.c        (sctl_load) or probe of   (its
 *                     slurmload.c     jobs started              requests)
 *                                     (sctl_jobs_started) at a
 *                                     time, when the reconcile
 *                                     thread asks; frees each
 *                                     load once read, and
 *                                     trims after large ones
 * end                 ender.c         one end of a job whose    worker.lock
 *                     worker.c        pods ended at a time, in  (its
 *                     slurmend.c      order (sctl_complete,     request
 *                                     sctl_cancel); when none   list and
 *                                     waits, or END_FAIR went   lanes)
 *                                     in a row, up to
 *                                     END_BATCH bulk cancels
 *                                     (pending jobs, orphans)
 *                                     at once
 *                                     (sctl_cancel_jobs)
 * writepool           writepool.c     one pod write at a time   worker.lock
 *  x WRITEPOOL_THREADS claims.c       (a Binding with its       (request
 *                     worker.c        claims' writes first, or  list)
 *                                     the claims' alone: held
 *                                     for binding conditions,
 *                                     or released), its own
 *                                     client
 * eventer             eventer.c       Kubernetes Events: their  worker.lock
 *  x EVENTER_LANES    worker.c        aggregation, its own      (each lane's
 *                                     client and recorder       Event list)
 * HTTP                common/httpd.c  a request at a time;      httpd
 *  x ENDPOINTS_THREADS endpoints.c    reads atomics (bstats),   cred_lock
 *  (libmicrohttpd)    queue.c         queues extender calls     (TLS
 *                                                               reload),
 *                                                               conn_lock;
 *                                                               ext_call.
 *                                                               lock
 * HTTP reaper         common/         nothing: shuts down the   conn_lock
 *                     httpdconn.c     connections past their
 *                                     read deadline
 * any                 leader.c        nothing: reads the        (none; an
 *                                     Lease's last renewal      atomic)
 *                                     (bstats)
 * any                 intern.c        shared strings (refcount) intern_lock
 * any                 libk8s/         the API rate token        limiter.
 *                     limiter.c       bucket shared by the      lock
 *                                     writepool, the eventer
 *                                     and the reconcile client
 *
 * Results come back as messages: MSG_WRITE (writepool), MSG_SUBMITTED
 * (submit), MSG_POLLED and MSG_PROBED (poll), MSG_ENDED (end),
 * MSG_EXTENDER (HTTP), and one per watched kind (informers).  No thread
 * holds a lock while it waits on another's.
 * A thread the daemon needs that fails stops the daemon (fail_thread).
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <sys/queue.h>

#include <stddef.h>

#include <jansson.h>

#include "k8s.h"

enum msg_kind {
	MSG_POD,
	MSG_EXTPOD, /* pods of other schedulers, labelled with a job id */
	MSG_NODE,
	MSG_NAMESPACE,
	MSG_JOB,	    /* batch/v1 Jobs: Indexed Job gangs */
	MSG_PODGROUP,	    /* scheduling.x-k8s.io/v1alpha1 PodGroups */
	MSG_JOBSET,	    /* jobset.x-k8s.io/v1alpha2 JobSets */
	MSG_LWS,	    /* leaderworkerset.x-k8s.io/v1 LeaderWorkerSets */
	MSG_SCHED_PODGROUP, /* scheduling.k8s.io PodGroups, where served */
	MSG_SCHED_WORKLOAD, /* scheduling.k8s.io Workloads, where served */
	MSG_SCHED_COMPOSITE, /* scheduling.k8s.io CompositePodGroups, where served */
	MSG_CLAIM,	     /* resource.k8s.io/v1 ResourceClaims */
	MSG_CLAIM_TEMPLATE, /* ... ResourceClaimTemplates */
	MSG_SLICE,	    /* ... ResourceSlices (cluster-wide) */
	MSG_DEVICECLASS,    /* ... DeviceClasses (cluster-wide) */
	MSG_TAINTRULE,	    /* ... DeviceTaintRules (cluster-wide; 1.37 on) */
	MSG_EXTENDER,  /* a scheduler-extender call (endpoints.c) to answer */
	MSG_WRITE,     /* a pod write (writepool.c) came back */
	MSG_SUBMITTED, /* an allocation request (submitter.c) came back */
	MSG_POLLED,    /* a load of Slurm's jobs (poller.c) came back */
	MSG_PROBED,    /* a probe of jobs Slurm started (poller.c) came back */
	MSG_ENDED,     /* the end of a job (ender.c) came back */
	MSG_KINDS
};

struct podrec;
struct ext_call;
struct wreq;
struct sreq;
struct sload;
struct ereq;

struct msg {
	enum msg_kind	    kind;
	enum k8s_watch_type type;
	json_t		   *obj;      /* owned; NULL for SYNCED and pods */
	struct podrec	   *pod;      /* MSG_POD, MSG_EXTPOD: owned */
	struct ext_call	   *call;     /* MSG_EXTENDER, one reference */
	struct wreq	   *write;    /* MSG_WRITE, owned */
	struct sreq	   *submit;   /* MSG_SUBMITTED, owned */
	struct sload	   *load;     /* MSG_POLLED, owned */
	struct ereq	   *end;      /* MSG_ENDED, owned */
	uint32_t	    started;  /* MSG_PROBED: sctl_jobs_started's */
	int		    probe_rc; /* ... and its answer */
	TAILQ_ENTRY(msg) entry;
};

struct queue;

struct queue *queue_new(void);
/* Frees queued messages too. */
void queue_free(struct queue *);
/* Takes msg. */
void queue_push(struct queue *, struct msg *);
/* Waits up to timeout_ms; returns an owned message or NULL. */
struct msg *queue_pop(struct queue *, int timeout_ms);
/* Makes pop return NULL at once from now on. */
void   queue_close(struct queue *);
size_t queue_len(struct queue *);
void   queue_msg_free(struct msg *);

#endif /* QUEUE_H */
