/*
 * The one event queue, and the thread map of slurm-bridge: every thread,
 * what it owns, and the only locks there are.  State has one owner; other
 * threads hand it messages through this queue (many producers, one
 * consumer: the reconcile thread) or through a worker's own request list.
 *
 * thread            file            owns                       locks
 * ----------------- --------------- -------------------------- ------------
 * main              main.c          flags, config, the Lease   (none)
 *                   leader.c        (leader_wait; publishes its
 *                                   renewal time), signals
 * informer x 14     libk8s/         its watch and store (key   (none; pushes
 *                   informer.c      -> resourceVersion); makes  to the queue)
 *                   main.c          pod records (podrec.c)
 * reconcile         reconcile.c     the caches (pods, groups,  pops the queue
 *                   group.c         owners, nodes, claims and   (queue.mtx)
 *                   writer.c        devices), every decision,
 *                   claims.c        every libslurm call but
 *                   slurm.c         submits, node taints on
 *                                   its own client
 * submit            submitter.c     one allocation or pending  submitter.lock
 *                   slurm.c         job change at a time        (its request
 *                   runas.c         (sctl_submit,               list)
 *                                   sctl_update_pending; may
 *                                   take on the owner's ids)
 * writer x WRITERS  writepool.c     one pod write at a time    writepool.lock
 *                   claims.c        (a Binding with its         (request list)
 *                                   claims' writes first), its
 *                                   own client
 * events x 4        eventer.c       Event aggregation, its     lane.lock (its
 *                                   own client and recorder     Event list)
 * HTTP x 2          common/httpd.c  a request at a time;       httpd cred_lock
 *  (libmicrohttpd)  api.c           reads atomics (bstats),     (TLS reload),
 *                   extcall.c       queues extender calls       conn_lock (the
 *                                                               connections);
 *                                                               ext_call.lock
 *                                                               (the answer)
 * HTTP reaper       common/httpd.c  nothing: shuts down the    conn_lock
 *                                   connections past their
 *                                   read deadline
 * any               fence.c         nothing: reads the Lease's  (none; an
 *                                   last renewal (bstats)       atomic)
 * any               intern.c        shared strings (refcount)  intern_lock
 * any               libk8s/         the API rate token bucket  limiter.lock
 *                   limiter.c       shared by writers, events
 *                                   and the reconcile client
 *
 * Results come back as events: EV_WRITE (writer), EV_SUBMITTED (submit),
 * EV_EXTENDER (HTTP), and one per watched kind (informers).  No thread
 * holds a lock while it waits on another's.  A thread the daemon needs
 * that fails stops the daemon (fail.c).
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <sys/queue.h>

#include <stddef.h>

#include <jansson.h>

#include "k8s.h"

enum event_kind {
	EV_POD,
	EV_EXTPOD, /* pods of other schedulers, labelled with a job id */
	EV_NODE,
	EV_NAMESPACE,
	EV_JOB,		   /* batch/v1 Jobs: Indexed Job gangs */
	EV_PODGROUP,	   /* scheduling.x-k8s.io/v1alpha1 PodGroups */
	EV_JOBSET,	   /* jobset.x-k8s.io/v1alpha2 JobSets */
	EV_LWS,		   /* leaderworkerset.x-k8s.io/v1 LeaderWorkerSets */
	EV_SCHED_PODGROUP, /* scheduling.k8s.io PodGroups, where served */
	EV_SCHED_WORKLOAD, /* scheduling.k8s.io Workloads, where served */
	EV_CLAIM,	   /* resource.k8s.io/v1 ResourceClaims */
	EV_CLAIM_TEMPLATE, /* ... ResourceClaimTemplates */
	EV_SLICE,	   /* ... ResourceSlices (cluster-wide) */
	EV_DEVICECLASS,	   /* ... DeviceClasses (cluster-wide) */
	EV_EXTENDER,	   /* a scheduler-extender call (api.c) to answer */
	EV_WRITE,	   /* a pod write (writepool.c) came back */
	EV_SUBMITTED,	   /* an allocation request (submitter.c) came back */
	EV_KINDS
};

struct podrec;
struct ext_call;
struct wreq;
struct sreq;

struct event {
	enum event_kind	    kind;
	enum k8s_event_type type;
	json_t		   *obj;    /* owned; NULL for SYNCED and pods */
	struct podrec	   *pod;    /* EV_POD, EV_EXTPOD: owned */
	struct ext_call	   *call;   /* EV_EXTENDER, one reference */
	struct wreq	   *write;  /* EV_WRITE, owned */
	struct sreq	   *submit; /* EV_SUBMITTED, owned */
	TAILQ_ENTRY(event) entry;
};

struct queue;

struct queue *queue_new(void);
/* Frees queued events too. */
void queue_free(struct queue *);
/* Takes ev. */
void queue_push(struct queue *, struct event *);
/* Waits up to timeout_ms; returns an owned event or NULL. */
struct event *queue_pop(struct queue *, int timeout_ms);
/* Makes pop return NULL at once from now on. */
void   queue_close(struct queue *);
size_t queue_len(struct queue *);
void   event_free(struct event *);

#endif /* QUEUE_H */
