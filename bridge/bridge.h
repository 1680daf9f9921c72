/*
 * slurm-bridge internals, in reading order: the data model first (struct
 * pod_entry, struct group, struct reconcile), then what the threads hand
 * each other, then one section per file in the order of the data's way:
 * watch, decide, Slurm, write, HTTP, process.  docs/contributors/layout.md
 * lists the files in the same order (make lint checks that they agree).
 * Which thread runs what, owns what and locks what is the thread map in
 * queue.h.
 */
#ifndef BRIDGE_H
#define BRIDGE_H

#include <sys/queue.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "buf.h"
#include "k8s.h"
#include "map.h"
#include "strv.h"
#include "metrics.h"

#include "placement.h"
#include "queue.h"
#include "policy.h"
#include "workload.h"

/* The structures defined below, and those that stay private. */
struct bridge_conf;
struct bridge_stats;
struct claims_asker;
struct ender;
struct endpoints;
struct endpoints_source;
struct ereq;
struct eventer;
struct ext_call;
struct group;
struct group_job;
struct lanes;
struct leader;
struct pod_entry;
struct podrec;
struct poller;
struct reconcile;
struct sjob;
struct sload;
struct sreq;
struct submitter;
struct worker;
struct wreq;
struct writepool;

/* --------------------------------------------------------------------- */
/*
 * The data model: the reconcile thread's entry for each pod, the group
 * (a gang, or a pod alone) that becomes one Slurm job, and the reconcile
 * thread's state, which owns them all.  No other thread touches these
 * structures.
 */

enum pod_state {
	PS_UNBOUND,
	PS_BOUND,
	PS_ENDED /* terminal, or deleting past its grace period */
};

struct pod_entry {
	/*
	 * The pod as last seen, owned: its key (ns/name), which the pods
	 * map borrows, its ns and its name are the entry's.
	 */
	struct podrec *rec;
	/*
	 * The key of the group it is a member of (the group's own string:
	 * a pod is a member of its group until it leaves or goes, and a
	 * group with members is never freed), or NULL.
	 */
	const char *group;
	double	    seen_at;	/* when first seen, epoch seconds */
	const char *bound_node; /* the node we bind it to (interned) */
	const char *slurm_node; /* its node annotation (interned) */
	/*
	 * The last PodScheduled message asked, as map_hash (0: none).  The
	 * message itself (cond_text) only while it waits for the write
	 * before it (cond_queued), and always for a pod of another
	 * scheduler, whose scheduler's extender calls answer with it.
	 */
	uint64_t cond;
	char	*cond_text;
	uint32_t label_jobid; /* jobid label on the pod */
	uint8_t	 state;	      /* enum pod_state */
	uint8_t	 busy;	      /* enum wreq_kind: a write in flight */
	uint8_t	 cond_busy;   /* a condition write in flight */
	uint8_t	 cond_queued; /* cond_text waits for it */
	uint8_t	 del_sent;    /* a deletion asked (cleared if failed) */
	uint8_t	 finalizer;   /* carries our finalizer */
	uint8_t	 foreign;     /* another schedulerName (extender) */
	/*
	 * The gang whose job was full when it came, so it is placed alone
	 * (group_beyond; interned), or NULL.
	 */
	const char *beyond;
};

enum group_state {
	G_WAITING,    /* not submitted */
	G_SUBMITTING, /* on a submit thread */
	G_PENDING,    /* job submitted, not allocated */
	G_ALLOCATED,  /* allocated, members not all bound */
	G_BOUND,
	G_ENDED /* job gone; members being cleaned up */
};

/*
 * What a group keeps of its Slurm job (struct group's job), and its
 * PodGroup's condition: the part a pending pod alone does not use, kept
 * apart so that 50,000 of them do not carry it.
 */
struct group_job {
	/*
	 * Pod keys in the job, placement order, when they are not the
	 * members (job_pods_members): read them through groups_job_list.
	 */
	struct strv job_pods;
	json_t	   *layout; /* [{node, cpus, gres[, comp]}] once allocated */
	/* A heterogeneous job's {"comps", "shapes"} (translate_admin_het) */
	json_t *het;
	char   *end_msg; /* Slurm ended the job: why (Events) */
	/*
	 * Slurm took the allocation back (end_yield): the DisruptionTarget
	 * message its members are deleted with, and when Slurm's grace ends
	 * (wall clock).
	 */
	char  *disruption;
	time_t grace_end;
	/*
	 * A Kubernetes PodGroup's PodGroupInitiallyScheduled condition: the
	 * one wanted ("True|..." or "False|...").  Whether a write is on its
	 * way, was sent, and whether True was wanted are the group's pg_
	 * flags.
	 */
	char *pg_cond;
	/*
	 * Allocations given back in a row because they split the gang's
	 * topology domain: each waits twice as long before the next submit
	 * (bind.c), so a label that disagrees with Slurm's topology does
	 * not churn jobs.  0 once the gang is bound.
	 */
	uint32_t topo_refits;
};

/*
 * A group: a gang, or a single pod.  Laid out by size, its flags last as
 * bits: 50,000 pending pods keep 50,000 of them.
 */
struct group {
	const char *ns;	     /* interned */
	struct strv members; /* pod keys */
	/* A pod alone's key, in key: its members borrow it (strv_borrow). */
	char *member0;
	/*
	 * What a pending pod alone never has (an allocation, an end, a
	 * PodGroup's condition): the shared empty one, read-only, until
	 * groupjob_get makes its own.  Read it directly; write through
	 * groupjob_get.
	 */
	struct group_job *job;
	const char	 *pending_reason; /* Slurm's, interned, or NULL */
	struct sreq	 *inflight; /* while G_SUBMITTING (the submitter's) */
	/*
	 * What a pending job's owner may change of it, as last asked: a
	 * hash of form_spec's fields (0: not known, an adopted job).
	 * recheck: its request may have changed since (a member's
	 * annotations, an owner object or the namespace); updating: a
	 * change is on a submit thread.
	 */
	uint64_t	   spec;
	int64_t		   next_try;   /* monotonic ms */
	uint32_t	   submit_seq; /* which request an answer is for */
	uint32_t	   retry_ms;
	uint32_t	   jobid;
	char		   jobid_key[11]; /* its key in r->jobs, if indexed */
	uint32_t	   cpus_per_task;
	uint32_t	   gpus_per_task;
	int		   min_member; /* 0: from the object sized_by names */
	enum workload_kind sized_by;
	enum group_state   state;
	unsigned	   gang : 1;
	/* a member that finds its job full goes alone (group_id.grows) */
	unsigned grows : 1;
	unsigned job_pods_set : 1; /* job_pods is known */
	/* ... and is the members, as they are (job_pods stays empty) */
	unsigned job_pods_members : 1;
	unsigned exclusive : 1;
	unsigned cancelled : 1;	 /* we asked Slurm to end the job */
	unsigned cancel_due : 1; /* asking failed: ask again */
	unsigned ending : 1;	 /* ... and the end thread has not answered */
	unsigned foreign : 1;	 /* has had a member of another scheduler */
	unsigned ext_asked : 1; /* ... and the extender was asked to place it */
	/*
	 * jobid came from a member's label or annotation at start, which
	 * anyone who can write the pod could have set: a hint, until the
	 * job's admin_comment names this install and the member's UID.
	 */
	unsigned hinted : 1;
	unsigned invalid : 1; /* translation failed; wait for a change */
	/* Failed by us (node lost): cancel, never complete */
	unsigned failed : 1;
	/*
	 * Its job was in the load being read (recovery's included) when
	 * present equals the reconcile's load_mark; missed: it was absent
	 * from the last load that brought jobs (poll_gone).
	 */
	unsigned present : 1;
	unsigned missed : 1;
	/* Slurm ends the job itself (preempted: never cancelled) */
	unsigned slurm_ends : 1;
	/* Its pods ended; its job holds a shared claim's devices for others */
	unsigned claims_held : 1;
	/* Its job allocated a claim (it may hold one for other jobs' pods) */
	unsigned allocated_claims : 1;
	unsigned recheck : 1;
	unsigned updating : 1;
	unsigned unfit : 1; /* no node fits its pods (exclude_group) */
	/*
	 * For job->pg_cond: writes on their way (pg_busy: to a PodGroup, or
	 * a CompositePodGroup and its children, at most 1 + 8), it was sent
	 * and not refused (pg_sent), True was wanted (pg_scheduled: it never
	 * goes back).
	 */
	unsigned pg_busy : 4;
	unsigned pg_sent : 1;
	unsigned pg_scheduled : 1;
	/* "gang:ns/g", "podgroup:ns/g" or "pod:ns/p": in the same block */
	char key[];
};

struct reconcile {
	const struct bridge_conf *conf;
	const struct k8s_config	 *kconf;
	struct queue		 *queue;
	struct k8s_client	 *client;
	struct k8s_limiter *limiter; /* the client's, writepool's, eventer's */
	struct writepool   *writepool;
	struct submitter   *submitter;
	struct poller	   *poller;
	struct ender	   *ender;
	int		    polling;	/* a load asked of it, not back yet */
	time_t		    poll_since; /* what that load was asked from */
	int64_t		    poll_asked; /* when (monotonic ms) */
	/* Job ids this thread forgot: id -> when (groups_forgot) */
	json_t	*forgotten;
	uint32_t submit_seq; /* the last request's */
	int	 submits;    /* requests not answered yet */
	json_t	*deferred;   /* job ids a poll saw early */
	/* poll_recover's load: ids of jobs not this install's, or NULL */
	json_t	       *others;
	struct eventer *eventer;
	pthread_t	thread;
	int		started;
	atomic_int	stop;

	struct map *pods;		 /* ns/name -> pod_entry */
	struct map *groups;		 /* group key -> group */
	struct map *ns_groups;		 /* ns -> map of its groups */
	struct map *dirty_ns;		 /* namespaces changed: re-evaluate */
	struct map *deleting;		 /* pod keys with a deletionTimestamp */
	long	    nstate[G_ENDED + 1]; /* groups per state */
	struct map *jobs;		 /* jobid -> group (both borrowed) */
	struct map *nodes;		 /* node name -> its record */
	/* LABEL_SLURM_NODENAME's value -> the name of a node that carries it */
	struct map *node_index;
	/* LABEL_SLURM_NODENAME's value -> how many nodes carry it */
	json_t	   *node_label_count;
	struct map *namespaces; /* name -> json */
	struct map *k8s_jobs;	/* ns/name -> batch/v1 Job */
	struct map *podgroups;	/* ns/name -> PodGroup CR */
	/* ns/name -> scheduling.k8s.io PodGroup (Kubernetes' own gangs) */
	struct map *sched_podgroups;
	struct map *sched_workloads;  /* ns/name -> Workload */
	struct map *sched_composites; /* ns/name -> CompositePodGroup */
	/* Bridged nodes not Ready: name -> {"since": epoch s, "unknown": b} */
	json_t *notready;
	/*
	 * exclude.c: the answers shared by pods of the same constraints
	 * (constraints -> [excluded, nodes that fit, message, nodes]); fit_dirty:
	 * a node changed, pending jobs and unfit groups are due a look.
	 */
	json_t *fit_cache;
	int	fit_dirty;
	/* Nodes whose drain or resume the fence held back: name -> true */
	json_t	   *fenced_nodes;
	struct map *jobsets; /* ns/name -> JobSet */
	struct map *lwss;    /* ns/name -> LeaderWorkerSet */
	/* Dynamic Resource Allocation (lookups.c looks claims up) */
	struct map *claims;	   /* ns/name -> ResourceClaim */
	struct map *claim_tmpls;   /* ns/name -> ResourceClaimTemplate */
	struct map *slices;	   /* name -> ResourceSlice */
	struct map *deviceclasses; /* name -> DeviceClass */
	struct map *taint_rules;   /* name -> DeviceTaintRule */
	/* Claims a job about to run will allocate: ns/name -> group key */
	json_t *claim_allocators;
	/*
	 * The holders of the claims this bridge allocated (claims.c):
	 * ns/name -> {"uid", "job", "node"}.  Trusted over the claim's
	 * annotations, which the claim's namespace can rewrite.
	 */
	json_t *claim_holders;
	/* Joins of shared claims in flight: holder job id -> count */
	json_t		     *joins_inflight;
	json_t		     *slurm_nodes; /* sctl_node_names, at recovery */
	int		      recovering;  /* slurm_nodes is current */
	struct translate_conf tconf;
	int		      synced[MSG_KINDS];
	int64_t		      core_synced_at; /* monotonic ms */
	int		      recovered;
	time_t		      slurm_since;
	int64_t		      next_poll;
	int64_t		      next_sweep;
	int64_t		      next_change; /* sweep of dirty_ns */
	int64_t		      next_gauges;
	int64_t		      poll_cost_ms; /* the last Slurm poll's time */
	int64_t		      last_poll;    /* when it ended */
	int64_t		      next_probe;   /* of jobs started (poll_probe) */
	uint32_t	      jobs_started; /* the last probe's count */
	uint8_t		      started_set;
	uint8_t		      probing;	   /* a probe asked, not back yet */
	uint8_t		      starts_seen; /* since the last load asked */
	int64_t		      last_full;   /* the last load of every job */
	int64_t		      next_trim;   /* malloc_trim, monotonic ms */
	json_t		     *writes;	   /* group keys with pod writes due */
	json_t		     *releases;	   /* pod keys whose finalizer may go */
	json_t		     *orphans;	   /* job ids a poll found no pod for */
	json_t *orphans_asked; /* their cancels on the end thread, by id */
	int	sweep_due;     /* an owner object changed */
	/* poll_gone: the load being read, and its live groups seen */
	uint8_t load_mark;
	long	load_live;
};

/* --------------------------------------------------------------------- */
/*
 * What the threads hand each other: the configuration, the informers'
 * pod records, Slurm's jobs, the workers' requests, extender calls, and
 * the counters every thread updates.
 */

struct bridge_conf {
	const char   *kubeconfig;
	const char   *scheduler_name;
	const char   *partition;
	const char   *listen;	/* --listen ADDR:PORT, or NULL */
	const char   *tls_cert; /* --tls-cert/--tls-key, or NULL */
	const char   *tls_key;
	const char   *client_ca;	    /* --client-ca: extender clients */
	const char   *client_names;	    /* --client-name, comma-separated */
	unsigned int  max_conns;	    /* --max-connections */
	unsigned int  max_conns_per_client; /* ...-per-client */
	int	      leader_elect;
	const char   *default_account; /* or NULL */
	const char   *mcs_label;       /* config mcsLabel, or NULL */
	int	      exclusive;       /* default placement */
	int	      api_qps;	       /* the reconcile thread's API rate */
	int	      api_burst;
	char *const  *managed_namespaces; /* NULL-ended, besides the label */
	const json_t *managed_namespace_selector; /* or NULL */
	int	      verbose;
	int	      poll_ms;	    /* Slurm poll interval with pending jobs */
	int	      idle_poll_ms; /* ... with none */
	int	      jobid_label;  /* label + finalizer before binding */
	/*
	 * Where the cluster serves Kubernetes' own PodGroups, found at start
	 * (k8s_discover): "/apis/scheduling.k8s.io/<version>", or "".
	 */
	char podgroup_api[96];
	/* ... and CompositePodGroups (v1alpha3 in 1.37), or "" */
	char composite_api[96];
	/*
	 * The install's name (main_install): in every job's comment and
	 * admin_comment; the jobs of other names are not this install's.
	 */
	char			  install[128];
	const struct bounds	 *bounds; /* the config's */
	const struct dra_classes *dra;	  /* the config's deviceClasses */
	const char *taint_effect;      /* managedTaintEffect (the config's) */
	const struct config *topology; /* the config's topology table */
	int    end_grace_max_s;	       /* maxEndGraceSeconds (the config's) */
	int    binding_timeout_s;      /* deviceBindingTimeoutSeconds */
	double unhealthy_nodes_threshold; /* unhealthyNodesThreshold */
};

/*
 * What the scheduler keeps of a pod, built from the decoded
 * object (on the informer's thread) and read-only after.  One allocation.
 */
enum pod_phase {
	PHASE_PENDING,
	PHASE_RUNNING,
	PHASE_SUCCEEDED,
	PHASE_FAILED,
	PHASE_UNKNOWN
};

struct podrec {
	const char *key;	/* ns/name: buf */
	const char *ns;		/* interned, as are the next three */
	const char *node;	/* spec.nodeName, NULL if unbound */
	const char *sched;	/* spec.schedulerName, or NULL */
	const char *slurm_node; /* annotation ANN_SLURM_NODE, or NULL */
	int64_t	    created;	/* creationTimestamp, epoch s, or 0 */
	int64_t	    delete_at;	/* deletionTimestamp, or 0 */
	/* Where in buf: read them through podrec_uid, _rv and _cold. */
	uint32_t uid_at, rv_at, cold_at;
	uint32_t label_jobid; /* the job-id label, or 0 */
	uint32_t ann_jobid;   /* the job-id annotation, or 0 */
	int32_t	 index;	      /* job-completion-index label, or -1 */
	int32_t	 grace_s;     /* terminationGracePeriodSeconds, or -1 */
	/*
	 * How long it stays on a NotReady (Ready False) or unreachable
	 * (Unknown) node: its NoExecute tolerations of
	 * node.kubernetes.io/not-ready and .../unreachable, as Kubernetes'
	 * taint manager reads them: seconds, -1 forever, 0 not tolerated.
	 */
	int32_t tol_notready;
	int32_t tol_unreachable;
	int16_t exit_code;   /* its containers' ending: see podrec_exit */
	uint8_t exit_signal; /* the signal that ended that one, or 0 */
	uint8_t phase;	     /* enum pod_phase */
	uint8_t grace_zero;  /* deleted with grace period 0 */
	uint8_t finalizer;   /* carries ours */
	uint8_t
	    tolerates; /* the managed-node taint: 1 NoSchedule, 2 NoExecute */
	uint8_t gated; /* has scheduling gates */
	char	buf[]; /* the strings */
};

/* A job of Slurm's job list, as sctl_load gives it. */
enum sjob_phase {
	SJOB_PENDING,
	SJOB_RUNNING,
	SJOB_ENDED
};

struct sjob {
	uint32_t	id;
	enum sjob_phase phase;
	const char     *state;	/* "PENDING", "CANCELLED", ... */
	const char     *reason; /* pending/end reason, "None" if none */
	const char     *nodes;	/* hostlist expression or NULL */
	const char     *admin_comment;
	const char     *comment;
	const char     *name;
	/* What its owner may change while it waits (bounds_check_job). */
	const char *partition;
	const char *account;
	const char *qos;
	time_t	    submit_time;
	time_t	    start_time;
	/*
	 * Slurm chose to preempt it (0: not): from then on, end_time is
	 * when its GraceTime ends and Slurm kills or requeues it.
	 */
	time_t	    preempt_time;
	time_t	    end_time;
	int	    suspended; /* SUSPENDED (phase SJOB_RUNNING) */
	const void *record;    /* Slurm's record: sctl_job_layout */
};

typedef void (*sjob_cb)(const struct sjob *, void *arg);

/*
 * An allocation request: made on a submit thread (submitter.c), taken a
 * namespace at a time in turn (queue.c), each namespace's in the order
 * asked; each comes back as an MSG_SUBMITTED message.
 */
struct sreq {
	char	   *gkey; /* the group it is for */
	const char *ns;	  /* its namespace, interned (a reference of its own) */
	uint32_t    seq;  /* the group's submit_seq when asked */
	/* Not 0: change this pending job to js (sctl_update_pending). */
	uint32_t update_jobid;
	/* Set by the reconcile thread: do not make it (any thread). */
	atomic_int     withdrawn;
	struct jobspec js;   /* owned (translate_jobspec_cleanup) */
	json_t	      *pods; /* pod keys, placement order */
	/* The result. */
	int	 rc; /* 0, or -1 with err */
	uint32_t jobid;
	json_t	*layout; /* allocated at once, or NULL */
	int	 permanent;
	char	 err[512];
};

/*
 * The end of a job whose pods ended or went, or that no pod wants: made
 * on the end thread (ender.c), in the order asked; each comes back as an
 * MSG_ENDED message (end_done).  A bulk one frees no node (a pending job's
 * cancel, or an orphan's): those are made in batches, once no other end
 * waits or END_FAIR went in a row.
 */
struct ereq {
	char	   *gkey; /* the group it is for; NULL: an orphan */
	uint32_t    jobid;
	int	    bulk;     /* a cancel that frees no node */
	int	    complete; /* sctl_complete with code and sig, else cancel */
	int	    code, sig;
	const char *why;	  /* a string literal: why it is cancelled */
	int	    leader_elect; /* leader_fenced before it is made */
	/* The result. */
	int  rc; /* 0, or -1 with err */
	char err[256];
	TAILQ_ENTRY(ereq) entry;
};

/*
 * Pod writes made for the reconcile thread by a few threads,
 * within one shared rate limit.  A request goes in with writepool_submit
 * and comes back as an MSG_WRITE message with its result.
 */
enum wreq_kind {
	WREQ_METADATA = 1, /* strategic merge patch of the pod */
	WREQ_STATUS,	   /* ... of its status (PodScheduled) */
	WREQ_BIND,	   /* pods/binding, with annotations */
	WREQ_RELEASE,	   /* a WREQ_METADATA that drops our finalizer */
	WREQ_DELETE,	   /* delete the pod; body: DeleteOptions or NULL */
	WREQ_FAIL,	   /* merge patch of its status: phase Failed */
	WREQ_EXTBIND,	   /* the extender's Binding of a pod not ours */
	WREQ_PODGROUP,	   /* a Kubernetes PodGroup's status (path) */
	WREQ_PREEMPT,	   /* DisruptionTarget on its status, then delete */
	WREQ_CLAIMS	   /* its claims' writes only: no Binding (yet) */
};

/* Every pointer is owned (wreq_free); the pod's names are in buf. */
struct wreq {
	enum wreq_kind kind;
	/* The pod: in the request's own block (buf). */
	const char *pkey; /* ns/name */
	const char *ns;
	const char *name;
	const char *uid;  /* "" if unknown */
	char	   *gkey; /* the pod's group, or NULL */
	char	   *node; /* WREQ_BIND: the Kubernetes node */
	/*
	 * The patch; WREQ_BIND: annotations.  WREQ_STATUS: NULL until the
	 * writer makes it (wreq_status_body), so thousands of condition
	 * writes waiting for the API server hold their message only.
	 */
	json_t		*body;
	uint32_t	 jobid;	     /* metadata and binds: the job's */
	char		*slurm_node; /* WREQ_BIND: for the Event */
	char		*gres;
	char		*msg;	 /* status, delete, fail: the message */
	int64_t		 at;	 /* WREQ_STATUS: when asked, epoch seconds */
	struct ext_call *call;	 /* WREQ_EXTBIND: its call, a reference */
	char		*path;	 /* WREQ_PODGROUP: the status subresource */
	int64_t		 grace;	 /* WREQ_PREEMPT: gracePeriodSeconds */
	json_t		*claims; /* WREQ_BIND, _CLAIMS: claims.c's writes */
	int		 rc;	 /* result: 0, or -1 with err */
	struct k8s_error err;
	TAILQ_ENTRY(wreq) entry;
	char buf[];
};

/*
 * A scheduler-extender call, made on an HTTP thread and answered
 * by the reconcile thread.  Two references: the caller's and the message's;
 * the last release frees it, so a caller that gave up waiting is safe.
 */
enum ext_op {
	EXT_FILTER, /* pod: submit or look up its job; which node? */
	EXT_BIND    /* bind ns/name (uid) to node */
};

struct ext_call {
	enum ext_op op;
	json_t	   *pod;     /* EXT_FILTER: the pod, owned */
	char	    ns[256]; /* EXT_BIND */
	char	    name[256];
	char	    uid[128];
	char	    node[256];
	/* The answer. */
	pthread_mutex_t lock;
	pthread_cond_t	cond;
	int		done;
	int		managed;       /* a bridged pod (else: not ours) */
	int		resolvable;    /* waiting can help (else invalid) */
	char		node_out[256]; /* EXT_FILTER: its node, or "" */
	char		msg[512];      /* why not (filter), or the error */
	atomic_int	refs;
};

struct endpoints_source {
	struct queue		   *queue;     /* extender calls go here */
	struct k8s_informer *const *informers; /* for watch counters */
	const char *const	   *names;
	int			    ninformers;
};

/*
 * ... and of the claims and templates the device rules read (dra.h), for
 * the group ask names (its busy is NULL: group.c sets its own).
 */
struct claims_asker {
	struct reconcile *r;
	const char	 *gkey;
};

/* The scheduler's metrics, atomics updated from any thread. */
enum stats_rpc {
	RPC_ALLOCATE,	   /* slurm_allocate_resources */
	RPC_LOAD_JOBS,	   /* slurm_load_jobs */
	RPC_KILL_JOB,	   /* slurm_kill_job */
	RPC_KILL_JOBS,	   /* slurm_kill_jobs (24.05) */
	RPC_COMPLETE_JOB,  /* slurm_complete_job */
	RPC_ALLOC_LOOKUP,  /* slurm_allocation_lookup */
	RPC_UPDATE_JOB,	   /* slurm_update_job */
	RPC_LOAD_NODES,	   /* slurm_load_node(_single) */
	RPC_UPDATE_NODE,   /* slurm_update_node */
	RPC_STATS,	   /* slurm_get_statistics */
	RPC_LOAD_TOPOLOGY, /* slurm_load_topo(_config) */
	RPC_KINDS
};

/* How Slurm ended a bridge job (the label of jobs_ended_total). */
enum stats_end {
	END_COMPLETED,
	END_CANCELLED,
	END_TIMEOUT,
	END_NODE_FAIL,
	END_PREEMPTED,
	END_FAILED,
	END_OTHER,
	END_KINDS
};

/* How Slurm took a running job's allocation back (end_yield). */
enum stats_yield {
	YIELD_PREEMPTED, /* preempt_time set: GraceTime, then Slurm ends it */
	YIELD_SUSPENDED, /* SUSPENDED: its resources are another job's */
	YIELD_REQUEUED,	 /* PENDING again */
	YIELD_KINDS
};

struct bridge_stats {
	atomic_ullong	    pods_bound;
	struct metrics_hist sched_latency; /* pod creation -> bind */
	struct metrics_hist decision;	   /* one pod event, handled */
	struct metrics_hist decision_cpu;  /* ... the thread's CPU time */
	struct metrics_hist sweep;	   /* one pass over all groups */
	struct metrics_hist rpc[RPC_KINDS];
	atomic_ullong	    rpc_errors[RPC_KINDS];
	atomic_ullong	    jobs_submitted;
	atomic_ullong	    jobs_cancelled;
	atomic_ullong	    jobs_ended[END_KINDS];
	atomic_ullong	    disruptions[YIELD_KINDS];
	/* Jobs Slurm ended while a pod of theirs still ran (the handoff). */
	atomic_ullong handoffs;
	/*
	 * Allocations given back because the node no longer fit a pod just
	 * before its Binding (bind.c, exclude_recheck).
	 */
	atomic_ullong refits;
	/* Slurm polls a probe of jobs started brought forward (poll_probed). */
	atomic_ullong polls_hastened;
	/*
	 * 1 while so many nodes are NotReady at once that pods are not
	 * failed for it (nodes.c, nodes_disrupted).
	 */
	atomic_llong node_disruption;
	atomic_llong pending_pods; /* gauges, set by reconcile */
	atomic_llong pending_gangs;
	/* The reconcile thread's stores, published with the gauges. */
	atomic_llong mem_pods;	     /* pod entries */
	atomic_llong mem_pods_bytes; /* without the records */
	atomic_llong mem_groups;
	atomic_llong mem_groups_bytes;
	atomic_llong mem_jobs; /* the job id index */
	atomic_llong mem_jobs_bytes;
	atomic_llong mem_objects;    /* nodes, namespaces, owners */
	atomic_llong trims;	     /* malloc_trim calls (stats_trim) */
	atomic_llong trim_us;	     /* ... and the time in them */
	atomic_llong writes_waiting; /* pod writes not started */
	atomic_llong events_queued;  /* Events not posted yet */
	atomic_int   leader;	     /* 1 while this replica leads */
	atomic_llong lease_ok_at;    /* a follower's last Lease answer, s */
	/* When the leader's last good renewal began (monotonic ms). */
	atomic_llong  lease_renewed_ms;
	atomic_ullong fenced;	   /* Slurm writes held back (leader_fenced) */
	atomic_int    recovered;   /* caches synced, jobs adopted */
	atomic_llong  slurm_ok_at; /* last good Slurm poll, s */
};

/*
 * A worker's policy (worker.c): its threads' name, what to take next from
 * the owner's list (under the worker's lock; NULL: nothing waits), and
 * what to do with it (unlocked, on thread i).  init, when set, runs first
 * on each thread (-1: the thread ends at once), and fini last.
 */
struct worker_policy {
	const char *name;
	void *(*take)(void *owner);
	void (*run)(void *owner, int i, void *job);
	int (*init)(void *owner, int i);
	void (*fini)(void *owner, int i);
};

/* ===================================================================== */
/* Watch: what the informers keep, and the queue they hand it to. */

/* podrec.c */
/* NULL if the pod has no namespace or name. */
struct podrec *podrec_new(const json_t *pod);
void	       podrec_free(struct podrec *);
/* Its name (in its key), UID ("" if none) and resourceVersion. */
const char *podrec_name(const struct podrec *);
const char *podrec_uid(const struct podrec *);
const char *podrec_rv(const struct podrec *);
/*
 * Compact JSON of what only translation, grouping and the placement rule
 * read: kept labels and annotations, the controller owner reference, the
 * containers' resources, restart policies and host ports,
 * activeDeadlineSeconds, and the constraints fit.c reads.  Or NULL.
 */
const char *podrec_cold(const struct podrec *);
/* The pod as translation and the gang rules read it (new reference). */
json_t *podrec_json(const struct podrec *);
/* What an Event names: kind, apiVersion, name, namespace, uid, rv. */
json_t *podrec_ref(const struct podrec *);
/* Records alive and their bytes (any thread). */
void podrec_stats(long long *count, long long *bytes);
/* Pod entries (reconcile thread). */
/* Frees an entry (the pods map's free function). */
void podentry_free(void *);
/*
 * Seconds since the pod was created: from when the bridge first saw it if
 * that was within two seconds of its creationTimestamp (which has
 * one-second resolution), else from the creationTimestamp.
 */
double podentry_age(const struct pod_entry *);
/* Terminal, or deleted and past its grace period. */
int podentry_over(const struct pod_entry *);
/* Wall-clock seconds since the epoch. */
double podentry_epoch(void);

/*
 * noderec.c: a Node's record, the fields the scheduler reads (listed in
 * noderec.c), as a new object of the same shape; the caller owns it.
 */
json_t *noderec_dup(const json_t *node);
/* A node's (or its record's) first condition of type Ready, or NULL. */
const json_t *noderec_ready_cond(const json_t *node);
/* Is it cordoned (spec.unschedulable)? */
int noderec_cordoned(const json_t *node);

/*
 * queue.c: the lanes, items waiting, a first-in-first-out lane per
 * namespace, taken a lane at a time in turn.  The caller owns the items
 * and locks the lanes.
 */
struct lanes *lanes_new(void);
/* Calls free_cb (unless NULL) on each item still waiting. */
void lanes_free(struct lanes *, void (*free_cb)(void *));
/* Queues item (borrowed until taken) in namespace ns's lane (NULL: ""). */
void lanes_push(struct lanes *, const char *ns, void *item);
/* The next lane's oldest item, now the caller's; NULL when none waits. */
void *lanes_take(struct lanes *);
/* The first item (in turn order) match(item, arg) is true of, taken out. */
void  *lanes_remove(struct lanes *,
     int (*match)(const void *item, const void *arg), const void *arg);
size_t lanes_count(const struct lanes *);      /* items waiting */
size_t lanes_namespaces(const struct lanes *); /* lanes with items */

/* An allocation request for group gkey of ns, with an empty pod list. */
struct sreq *sreq_new(const char *gkey, const char *ns, uint32_t seq);
void	     sreq_free(struct sreq *);

/* The end of group gkey's job jobid. */
struct ereq *ereq_new(const char *gkey, uint32_t jobid);
void	     ereq_free(struct ereq *);

/* A pod write request about e (its identity is copied) for group gkey. */
struct wreq *wreq_new(enum wreq_kind, const struct pod_entry *e,
    const char *gkey);
/* ... about the pod ns/name (uid may be ""), which the bridge may not know. */
struct wreq *wreq_new_named(enum wreq_kind, const char *ns, const char *name,
    const char *uid);
void	     wreq_free(struct wreq *);
/* WREQ_STATUS: the PodScheduled=False patch of msg at at (new reference). */
json_t *wreq_status_body(const struct wreq *);
/* A condition's lastTransitionTime, to the second: at (epoch s), or now (0). */
void wreq_condition_time(char *ts, size_t len, int64_t at);

/* A scheduler-extender call (see struct ext_call). */
struct ext_call *extcall_new(enum ext_op);
/* One more reference (returns c); extcall_release drops one. */
struct ext_call *extcall_hold(struct ext_call *);
void		 extcall_release(struct ext_call *);
/* The reconcile thread's answer: wakes the caller. */
void extcall_done(struct ext_call *);
/* Waits up to ms for the answer; 0 when done, -1 on timeout. */
int extcall_wait(struct ext_call *, int ms);

/* ===================================================================== */
/* Decide: the reconcile thread, from a pod to its job and nodes. */

/* reconcile.c */
struct reconcile *reconcile_new(const struct bridge_conf *,
    const struct k8s_config *, struct queue *);
void		  reconcile_free(struct reconcile *);
int		  reconcile_start(struct reconcile *);
/* Sets the stop flag, closes nothing; join with reconcile_join. */
void reconcile_stop(struct reconcile *);
void reconcile_join(struct reconcile *);
/*
 * How long past its grace period a deleted pod on a node gone from the API
 * server waits before it is force-deleted (writes_force_delete).
 */
#define FORCE_DELETE_SLACK_S 5
/*
 * Bulk cancels (ender.c) made at once in one RPC, where Slurm has one
 * (sctl_cancel_batch); and how many ends that free nodes may go in a row
 * while bulk cancels wait.
 */
#define END_BATCH 64
#define END_FAIR  16
/*
 * Allocation requests in flight at once (submitter.c): slurmctld makes
 * each under its job write lock, one at a time, but a request's round
 * trip around that (munge, the network, libslurm's packing) overlaps
 * another's.
 */
#define SUBMIT_THREADS 2
/*
 * Pod writes: WRITEPOOL_THREADS requests in flight at once (within the API
 * rate).  etcd commits the writes that wait together in one batch, with
 * one fsync of its log: with 16 in flight it made about one fsync per 1.5
 * writes while the bridge bound 2,000 pods (kube-scheduler, which binds
 * each pod from its own goroutine: one per 4), and the API server and
 * etcd spent more per pod.  With 64, etcd made 40 % fewer fsyncs there;
 * each writer that has written keeps its client and TLS connection, about
 * 250 KiB of RSS.
 */
#define WRITEPOOL_THREADS 64
/* How long recovery waits for the PodGroup, JobSet and LWS lists. */
#define OWNER_SYNC_WAIT_MS 2000
/* Owner-object changes re-evaluate the groups at most this often. */
#define SWEEP_COALESCE_MS 50
/* How often the reconcile thread returns free memory to the system. */
#define TRIM_INTERVAL_MS 30000
/* A Slurm poll waits at least this many times its last one's cost... */
#define POLL_DUTY 5
/*
 * ... or this many, once a probe saw a job start: the load comes at once
 * (loads back to back only while jobs keep starting).
 */
#define POLL_DUTY_CHANGED 0
/* ... but a poll is never put off by more than POLL_DUTY times this. */
#define POLL_COST_MAX_MS 1000
/* A job load of this many jobs is trimmed after (stats_trim). */
#define POLL_TRIM_JOBS 1000
/*
 * With jobs pending, a load of every job this often: it brings the
 * backfill's new plans (expected starts).  Slurm's bf_interval default.
 */
#define PLAN_REFRESH_MS 30000
/* Pending counts and store sizes for /metrics: a walk of every cache. */
#define GAUGES_INTERVAL_MS 5000
/*
 * reconcile.c: one queued event (taken), a step of the reconcile thread's
 * loop, which the unit tests (test/check_group.c) also call one at a time,
 * single-threaded, with poll_slurm, poll_recover and sweep_groups.
 */
void reconcile_msg(struct reconcile *, struct msg *msg);
/*
 * The reconcile thread's last step: stops its workers (submit thread,
 * writepool, eventer) and frees its client; the caches stay for
 * reconcile_free.
 */
void reconcile_workers_stop(struct reconcile *);

/*
 * pods.c: the pods the reconcile thread takes in (see the file's header).
 * pods_update and pods_deleted take rec.
 */
void pods_update(struct reconcile *, struct podrec *rec);
void pods_deleted(struct reconcile *, struct podrec *rec);
/* Forgets a pod the API server no longer has (as its DELETED event). */
void pods_gone(struct reconcile *, const char *key);
/* An owner object that decides its pods' gang was seen (again). */
void pods_regroup_owner(struct reconcile *, enum msg_kind, const json_t *obj);

/*
 * lookups.c: the lookups the workload and device rules call, over the
 * reconcile thread's caches of workload objects, claims and namespaces.
 */
void lookups_workload_init(struct reconcile *, struct workload_lookup *);
void lookups_claims_init(struct claims_asker *ask, struct dra_lookup *);
/* The values of one of the caches as a new array (borrowed values). */
json_t *lookups_values(struct map *m);
/* Is the namespace enabled (its label, or the config's lists)? */
int lookups_namespace_enabled(struct reconcile *, const char *ns);
/* The ResourceSlices by their spec.nodeName (a new object of arrays). */
json_t *lookups_slices_by_node(struct reconcile *);
/* The cached workload object, a new reference, or NULL. */
json_t *lookups_workload(struct reconcile *, enum workload_kind, const char *ns,
    const char *name);

/*
 * groups.c: the groups (in r->groups; their members are keys of r->pods,
 * whose entries the groups borrow).
 */
/* Frees a group (the groups map's free function). */
void groups_entry_free(void *);
/* Finds or makes the group for gid; it lives in r->groups. */
struct group *groups_get(struct reconcile *, const struct group_id *gid,
    const char *ns);
/* Frees a group with no members and no live job. */
void groups_gc(struct reconcile *, struct group *);
void groups_member_add(struct group *, const char *pkey);
void groups_member_remove(struct group *, const char *pkey);
/* The job id -> group index: g's jobid leads to g from now. */
void	      groups_index_put(struct reconcile *, struct group *g);
struct group *groups_by_job(struct reconcile *, uint32_t jobid);
void	      groups_index_del(struct reconcile *, const struct group *);
/*
 * A job this thread ended or let go of, with no group to know it by: a
 * load asked for before now shows it as it was (poll_job_cb skips it).
 */
void groups_forgot(struct reconcile *, uint32_t jobid);
/* Every state change goes through here (it keeps nstate). */
void groups_set_state(struct reconcile *, struct group *, enum group_state);
/* Live members in placement order into out[max]; returns their count. */
size_t groups_live(struct reconcile *, struct group *, struct pod_entry **out,
    size_t max, int unbound_only);
/* Writes msg on every unbound member's PodScheduled condition. */
void groups_condition(struct reconcile *, struct group *, const char *msg,
    int warn);
/* Adds key to one of the sets the next flush works through. */
void groups_want(json_t *set, const char *key);
/* Does the group label its members before binding them? */
int groups_labelled(struct reconcile *, struct group *);
/* Backs off: quickly for a transient failure, slowly for a refusal. */
void groups_retry_later(struct group *, int refused);
/* The pods the group's job was made for, in placement order (borrowed). */
const struct strv *groups_job_list(const struct group *);
/* Makes job->job_pods a list of its own, to change apart from members. */
void groups_job_list_own(struct group *);
/*
 * The pods the group's job was made for (placement order), and, for a
 * heterogeneous job, its components, from the job's admin_comment.
 */
void groups_job_pods(struct group *, const json_t *pods,
    const char *admin_comment);
/* The group no longer wants the allocation it asked for. */
void groups_withdraw(struct group *);
/*
 * Withdraws every allocation request not answered yet, and forgets them:
 * before the submit threads stop and free those they have not started.
 */
void groups_withdraw_all(struct reconcile *);

/*
 * groupjob.c: what a group keeps of its job, and its PodGroup's
 * condition.  A new group's is the shared empty one (groupjob_init);
 * groupjob_get makes its own, to write.
 */
void		  groupjob_init(struct group *);
struct group_job *groupjob_get(struct group *);
/* Drops its last job's pod list, layout, het shape, end and disruption. */
void groupjob_forget(struct group *);
/* Frees its own; the group has the shared empty one after. */
void groupjob_free(struct group *);
/* Bytes of its own (0 while it has none). */
size_t groupjob_bytes(const struct group *);

/* group.c: the group state machine (see the file's header). */
/* Decides and does what the group needs next (submit, bind, end). */
void group_evaluate(struct reconcile *, struct group *);
/*
 * Puts the pod in its group (workload_group; alone once placed beyond its
 * gang), leaving the one it was in: the group, or NULL when the pod's
 * settings are bad (its condition says why).
 */
struct group *group_join(struct reconcile *, struct pod_entry *);
/* Re-evaluates the groups of one namespace. */
void group_evaluate_ns(struct reconcile *, const char *ns);
/* Has the periodic sweep nothing to do for the group? */
int group_quiet(struct reconcile *, struct group *, int64_t now);
/*
 * An allocation request came back (s stays the caller's); 1 when its job
 * now waits on Slurm, which the caller then polls soon.
 */
int group_submitted(struct reconcile *, struct sreq *s);

/* form.c: a group becomes one Slurm job (see the file's header). */
/* Translates the members and hands the job to the submit threads. */
void form_submit(struct reconcile *, struct group *, struct pod_entry **pods,
    size_t n);
/* A pending job whose request may have changed: changed in Slurm too. */
void form_update_pending(struct reconcile *, struct group *);
/* form_submitted's answers besides 0. */
#define FORM_POLL  1 /* the job waits on Slurm: poll soon */
#define FORM_AGAIN 2 /* made for pods that changed: decide afresh */
/* The submit thread's answer (s stays the caller's). */
int form_submitted(struct reconcile *, struct sreq *s);
/* The gang's size (workload_gang_size); 0 while unknown. */
int form_min(struct reconcile *, struct group *);
/* Says on the members what the gang's size waits for. */
void form_unsized(struct reconcile *, struct group *);
/* Per-task sizes of an adopted job, from its members. */
void form_adopt_sizes(struct reconcile *, struct group *);

/* bind.c: an allocated group's pods placed and bound (see its header). */
/* Slurm allocated the group's job: layout is copied (the caller logs it). */
void bind_allocated(struct reconcile *, struct group *, const json_t *layout);
/*
 * Hands the pod writes groups asked for (bindings; job id labels where
 * wanted; finalizer releases) to the writepool.
 */
void bind_flush_writes(struct reconcile *);
/*
 * A pod write came back (w stays the caller's); 1 when the API server no
 * longer has the pod, which the caller then forgets.
 */
int bind_write_done(struct reconcile *, struct wreq *w);
/* The claim lookup for group g's pods (ask: its storage). */
void bind_claims_lookup(struct reconcile *, const struct group *g,
    struct claims_asker *ask, struct dra_lookup *dl);

/* end.c: how a group's job ends (see the file's header). */
/* Cancels the group's job (once; retried by the sweep when it fails). */
void end_cancel(struct reconcile *, struct group *, const char *why);
/* Deletes the live members of a job Slurm ended (retried by the sweep). */
void end_members(struct reconcile *, struct group *);
/*
 * Slurm takes g's allocation back while its pods run: preempted (GraceTime
 * running until grace_end, then Slurm ends the job itself, never
 * cancelled), suspended or requeued (grace_end 0: the resources are another
 * job's already; the job is cancelled once its pods are gone).  The members
 * yield as Kubernetes' own preemption has them do: DisruptionTarget, a
 * Preempted Event, then a graceful delete.  Once.
 */
void end_yield(struct reconcile *, struct group *, enum stats_yield,
    time_t grace_end);
/* Forgets the group's job (index, layout, pods) so it can be resubmitted. */
void end_reset(struct reconcile *, struct group *);
/*
 * A member ended or left (may free g).  Once no member runs, the job's
 * completion or cancel goes to the end thread (ender.c).
 */
void end_member_gone(struct reconcile *, struct group *);
/*
 * Makes es on the end thread (ender.c): one end, or n bulk cancels; each
 * gets its rc, and err if it failed.
 */
void end_make(struct ereq **es, size_t n);
/* The end thread made e, a group's (MSG_ENDED; may free the group). */
void end_done(struct reconcile *, const struct ereq *e);
/* Fails every live member and ends the job (node lost; may free g). */
void end_fail(struct reconcile *, struct group *, const char *reason,
    const char *msg);

/* exclude.c: the nodes a group may not use (reconcile thread). */
/*
 * Sets js->exc_nodes to the Slurm nodes the placement rule (fit.c)
 * excludes for the members (placement order).  0; or 1 with msg when the
 * pod waits: no node fits (kube-scheduler's FailedScheduling text; the
 * group is marked unfit, and a node change evaluates it again), the rule
 * cannot hold what it asks (fit_pod_waits), or a gang's members differ.
 */
int exclude_group(struct reconcile *, struct group *, struct pod_entry **pods,
    size_t n, struct jobspec *js, char *msg, size_t len);
/*
 * Does the pod still fit node, just before its Binding?  The node's
 * record as it is now and, for a pod with host ports or node-limited
 * resources, the pods on the node as the API server lists them.  1, or 0
 * with kube-scheduler's reason in why.
 */
int exclude_recheck(struct reconcile *, const struct podrec *, const char *node,
    char *why, size_t len);
/*
 * A node changed in what the rule reads: answers are made again, and the
 * sweep soon looks at pending jobs and unfit groups (r->fit_dirty).
 */
void exclude_nodes_changed(struct reconcile *);

/*
 * claims.c: a pod's ResourceClaims allocated from Slurm's choice before
 * its Binding.  claims_plan (reconcile thread): the writes that must come
 * first for pod e of job jobid on Kubernetes node knode, given its Slurm
 * node and GRES share a ("gpu:2(IDX:0-1)"): *out a new array, or NULL
 * when it asks for no device; 0 when the Binding may follow them; 1 with
 * err while a device's bindingConditions (KEP-5007) are not all True: the
 * writes are made, the Binding waits; -1 with err when a claim or device
 * is missing (not bound yet); -2 with err when a shared claim no longer
 * serves the job (its holder ended, or it is elsewhere): give the job up;
 * -3 with err when a device reports a bindingFailureCondition or waited
 * past deviceBindingTimeoutSeconds: give its claims (claims_release) and
 * the job back.  A claim of the pod's PodGroup (KEP-5729) is allocated
 * once, from a->group_gres, and reserved for the PodGroup; round (an
 * object, one per round of the gang's members) notes it was planned, and
 * every member holds until it is reserved.  claims_write (writepool
 * thread): makes w->claims in order; 0, or -1 with w->err.
 *
 * A claim is shared when pods of several jobs name it: the first job
 * allocates it and holds its devices (claims_holder: what the bridge
 * noted when it allocated it; the claim's ANN_SLURM_JOBID and
 * ANN_SLURM_NODE annotations, which its namespace can rewrite, only for
 * a job of that namespace); later pods run on that
 * node and join its reservedFor; lk->busy (group.c's) says when a pod
 * must wait.  The holder's job lives until the last of them ends, and
 * when Slurm ends it they yield with it (group.c), and a restart adopts it
 * again from the claim (poll.c).
 */
int claims_plan(struct reconcile *, const struct pod_entry *e, uint32_t jobid,
    const char *knode, const struct assignment *a, const struct dra_lookup *lk,
    json_t *round, json_t **out, char *err, size_t errlen);
/*
 * The writes that deallocate the claims job jobid allocated for pod e and
 * reserved for it alone (a new array), or NULL when there are none; its
 * PodGroup's are claims_group_release's.
 */
json_t *claims_release(struct reconcile *, const struct pod_entry *e,
    uint32_t jobid);
/*
 * g's job is over and none of its pods runs (end_reset, groups_gc): the
 * claims of a PodGroup it allocated (reserved for the PodGroup, which
 * outlives the job) are to be released, for Slurm has freed their
 * devices.  Their writes, [{ns, podgroup, write}] (new), or NULL;
 * writes_group_release makes them.
 */
json_t *claims_group_release(struct reconcile *, const struct group *g);
/* g's job, just asked for, will allocate its pods' free claims. */
void claims_allocating(struct reconcile *, const struct group *g,
    struct pod_entry *const *pods, size_t n);
/* g is gone: it allocates nothing. */
void claims_forget(struct reconcile *, const struct group *g);
/*
 * Joins on their way (a Binding's claim writes, delta +1 when sent, -1
 * when back), and how many are on their way to job jobid's claims: a
 * holder lives on for them as for the pods it already serves.
 */
void claims_joins_inflight(struct reconcile *, const json_t *claims, int delta);
size_t claims_joins_pending(struct reconcile *, uint32_t jobid);
/* Do a Binding's claim writes allocate a claim (its job then holds it)? */
int claims_allocate(const json_t *claims);
/* Does a pod of g name a ResourceClaim (the kind pods of jobs share)? */
int claims_named(struct reconcile *, const struct group *g);
/*
 * The live pods, not of group gkey (NULL: any), that share a claim whose
 * devices job jobid holds: their count, fn(arg, pod, claim) called for
 * each if fn is not NULL.
 */
size_t claims_joiners(struct reconcile *, uint32_t jobid, const char *gkey,
    void (*fn)(void *arg, struct pod_entry *, const json_t *claim), void *arg);
/*
 * Which job holds an allocated claim's devices, and on which Slurm node:
 * what this bridge wrote when it allocated the claim, else the claim's
 * annotations if they name a job of the claim's own namespace (or one
 * not known yet: a restart adopts it).  0, or -1: no holder this bridge
 * can vouch for (another scheduler's claim, or annotations that name
 * another namespace's job).
 */
int claims_holder(struct reconcile *, const json_t *claim, uint32_t *jobid,
    const char **snode);
int claims_write(struct k8s_client *, struct wreq *w);

/* poll.c: what Slurm's job list says (reconcile thread). */
/* Asks the poll thread for a load (poll_loaded reads it), unless one is out. */
void poll_ask(struct reconcile *);
/*
 * Reads a load (taken): changed jobs; the orphans it found go to the end
 * thread.
 */
void poll_loaded(struct reconcile *, struct sload *);
/* The earliest the next load of Slurm's jobs may be asked for. */
int64_t poll_floor(struct reconcile *);
/* When slurmctld is to be probed next; INT64_MAX: not now. */
int64_t poll_probe_next(struct reconcile *);
void	poll_probe(struct reconcile *);
/* A probe came back: sctl_jobs_started's rc and count. */
void poll_probed(struct reconcile *, int rc, uint32_t started);
/* The end thread's answer to an orphan's cancel (MSG_ENDED, gkey NULL). */
void poll_orphan_done(struct reconcile *, const struct ereq *e);
/* One poll on this thread, load and all (the unit tests). */
void poll_slurm(struct reconcile *);
/* The first full load after the caches sync: adopts before submitting. */
void poll_recover(struct reconcile *);

/* nodes.c: bridged nodes (reconcile thread). */
/*
 * The pods on node name that have not ended, as the API server lists
 * them now (a new array), or NULL, logged with why.
 */
json_t *nodes_pods(struct reconcile *, const char *name, const char *why);
/* A node was added (old NULL) or changed: taint, drain, resume, fail. */
void nodes_changed(struct reconcile *, const json_t *old, const json_t *node);
/*
 * Keeps r->node_index in step with the node name going from old to node
 * (either NULL: added, deleted); called before r->nodes changes.
 */
void nodes_index(struct reconcile *, const char *name, const json_t *old,
    const json_t *node);
/*
 * The Kubernetes node behind a Slurm node: the one node labelled
 * LABEL_SLURM_NODENAME with its name (the index's string, until the nodes
 * change), else the node of its name that carries no such label
 * (slurm_node itself); NULL if none, or if two nodes or more carry the
 * label (nodes_claimed: which one is meant is the admin's to say).
 */
const char *nodes_k8s_name(struct reconcile *, const char *slurm_node);
/* How many Kubernetes nodes are labelled with slurm_node's name. */
int nodes_claimed(struct reconcile *, const char *slurm_node);
/* Every cached node, as at recovery. */
void nodes_sync_all(struct reconcile *);
/* At recovery: the topology table's labels against Slurm's topology, logged. */
void nodes_check_topology(struct reconcile *);
/*
 * Fails the gangs of pods whose NotReady or unreachable node has outlasted
 * their tolerations of it (Kubernetes' taint manager's rule; 300 s by
 * default, the DefaultTolerationSeconds admission plugin's), and asks again
 * for the drains and resumes the fence held back; from the sweep.
 */
void nodes_sweep(struct reconcile *);

/* sweep.c: re-evaluation (reconcile thread). */
/* Deleted pods past grace, then every group not quiet (all: every one). */
void sweep_groups(struct reconcile *, int all);
/* The groups of the namespaces whose objects changed. */
void sweep_changed(struct reconcile *);

/* now.c: monotonic ms, the reconcile thread's timers (tests fake it). */
int64_t now_ms(void);

/* ===================================================================== */
/* Slurm: the submit, poll and end threads, and the one libslurm user. */

/*
 * submitter.c: nthreads submit threads (SUBMIT_THREADS; 0: none, and
 * submitter_step makes each request); results go to done, which outlives
 * them.  NULL on failure.
 */
struct submitter *submitter_new(struct queue *done, int nthreads);
/* Joins the threads; requests not started yet are dropped. */
void submitter_free(struct submitter *);
/* Takes s. */
void submitter_push(struct submitter *, struct sreq *s);
/* Requests not taken by a thread yet. */
size_t submitter_waiting(struct submitter *);
/* Makes the next request on the caller's thread (worker_step). */
int submitter_step(struct submitter *);

/*
 * poller.c: the poll thread, which loads Slurm's jobs when asked and gives
 * each load back as an MSG_POLLED message on done.  poller_ask asks for a
 * load of what changed since since (0: every job); the reconcile thread
 * asks again only once the last load came back.  nthreads: 1 (more count
 * as 1: the thread keeps one job), or 0: none, and poller_step does the
 * thread's next piece of work.
 */
struct poller *poller_new(struct queue *done, int nthreads);
/*
 * Stops the thread; a load it made is on the queue, which frees it, and a
 * spent one is freed here.
 */
void poller_free(struct poller *);
void poller_ask(struct poller *, time_t since);
/*
 * Takes l, a load the reconcile thread has read: the poll thread frees it
 * and, if trim, trims the heap (stats_trim), before its next load.
 */
void poller_spent(struct poller *, struct sload *l, int trim);
/*
 * Asks for a probe of slurmctld's count of started jobs
 * (sctl_jobs_started), answered as an MSG_PROBED message (poll_probed);
 * a load asked too is made first.
 */
void poller_probe(struct poller *);
/* Does the next piece of work on the caller's thread (worker_step). */
int poller_step(struct poller *);

/*
 * ender.c: the end thread, which makes requests with make (end_make): one
 * that frees nodes alone, or up to batch (1..END_BATCH) bulk ones at once;
 * results go to done, which outlives it.  nthreads: 1 (more count as 1:
 * the thread keeps one job), or 0: none, and ender_step makes the next
 * requests.  NULL on failure.
 */
struct ender *ender_new(struct queue *done,
    void (*make)(struct ereq **, size_t), size_t batch, int nthreads);
/* Joins the thread; requests not started yet are dropped. */
void ender_free(struct ender *);
/* Takes e. */
void ender_push(struct ender *, struct ereq *e);
/* A bulk cancel of jobid not made yet goes to the front: its job started. */
void ender_promote(struct ender *, uint32_t jobid);
/* Requests not taken yet, and how many of them are bulk cancels. */
size_t ender_waiting(struct ender *, size_t *bulk);
/* Makes the next requests on the caller's thread (worker_step). */
int ender_step(struct ender *);

/*
 * slurm.c: the reconcile thread's libslurm calls (and main's sctl_init and
 * sctl_fini).  With slurmsubmit.c, slurmend.c and slurmload.c, the other
 * threads' calls, the only libslurm users.
 */
/* Rewrites a job's admin_comment (an administrator's right). */
int sctl_set_admin_comment(uint32_t jobid, const char *admin_comment, char *err,
    size_t errlen);
int sctl_init(void);
void sctl_fini(void);
/*
 * The allocation of a running job seen by sctl_load_each, as a new array
 * [{node, cpus, gres}], or NULL.  Costs an RPC: call it from the callback,
 * only for a job whose layout is wanted.
 */
json_t *sctl_job_layout(const struct sjob *);
/*
 * Drains a Slurm node with reason (for a cordoned Kubernetes node), unless
 * it is drained already: an existing drain keeps its owner and reason.
 */
int sctl_node_drain(const char *node, const char *reason, char *err,
    size_t errlen);
/*
 * Resumes a Slurm node only if it is drained with a reason starting with
 * prefix (a drain the bridge made); *resumed says whether it did.
 */
int sctl_node_resume_ours(const char *node, const char *prefix, int *resumed,
    char *err, size_t errlen);
/*
 * The Slurm nodes, in one RPC, as a new object {name: true}, or {name:
 * "reason"} for a drained node; NULL with err.
 */
json_t *sctl_node_names(char *err, size_t errlen);
/*
 * Slurm's leaf switches (blocks 0) or blocks (1) of topology name (NULL:
 * the default; 25.05 on): {Slurm node: its switch or block}, new; NULL
 * with err.
 */
json_t *sctl_topology(int blocks, const char *name, char *err, size_t errlen);
/* slurmsubmit.c: the submit threads' calls. */
/*
 * Submits an allocation-only placeholder (on a submit thread: sctl_submit
 * may take on the job owner's identity for the call, on its own thread
 * only).  Returns 0 with *jobid and, when
 * Slurm allocated at once, *layout (a new reference, [{node, cpus, gres}])
 * set; -1 with err filled and *permanent set when resubmitting the same
 * request cannot succeed (invalid account, impossible configuration, ...):
 * SUBMIT_REFUSED_HERE when the bridge refused it before asking Slurm (the
 * owner user-id names is unknown, or out of bounds, on this host).
 */
#define SUBMIT_REFUSED_HERE 2
int sctl_submit(const struct jobspec *, uint32_t *jobid, json_t **layout,
    int *permanent, char *err, size_t errlen);
/*
 * Changes what a pending job's request says that its owner may change:
 * name, time limit, account, QOS, partition, reservation, constraints,
 * licenses and wckey (each component of a heterogeneous job), asked as the
 * job's owner where Slurm takes the owner from the caller (23.11+), so
 * Slurm checks it as it would the owner's own `scontrol update`.  On the
 * submit thread.  0, or -1 with err.
 */
int sctl_update_pending(const struct jobspec *, uint32_t jobid, char *err,
    size_t errlen);
/*
 * slurmend.c: the ends of jobs, the end thread's (and a cancel the
 * reconcile or a submit thread makes).
 */
int sctl_cancel(uint32_t jobid, char *err, size_t errlen);
/*
 * Ends an allocation as its pods ended, so sacct tells it: exit code 0
 * makes it COMPLETED 0:0; another code, or a signal, FAILED code:signal.
 * 0 (also when it had ended already), or -1 with err.
 */
int sctl_complete(uint32_t jobid, int exit_code, int signal, char *err,
    size_t errlen);
/*
 * Cancels n jobs, in one RPC where the release has one (24.05); jobs that
 * ended already count as cancelled.  ended[i] (n of them, the caller's)
 * tells whether ids[i] is over.  -1 with the first failure in err.
 */
int sctl_cancel_jobs(const uint32_t *ids, size_t n, uint8_t *ended, char *err,
    size_t errlen);
/*
 * How many jobs sctl_cancel_jobs should be given at once: END_BATCH where
 * it is one RPC, else 1 (each is an RPC of its own, so more would only
 * hold the end thread from other ends).
 */
size_t sctl_cancel_batch(void);
/*
 * slurmload.c: loads of Slurm's jobs, made on the poll thread and read on
 * the reconcile thread.
 */
/*
 * A load of Slurm's jobs: sctl_load makes it (one RPC; any thread: the
 * poll thread, or the reconcile thread at recovery) when anything changed
 * since since (0: load everything); sctl_load_each then calls cb for every
 * job whose comment starts with BRIDGE_COMMENT_MARKER (any install's, or a
 * look-alike: cb judges), sets *since to the load's time, and returns 1 if
 * nothing changed, 0 after the callbacks, -1 on error (err filled).
 * sctl_load logs a failed load on the calling thread, when it fails.
 * rpc_s (may be NULL) gets the load's own time.  The caller frees the load
 * with sctl_load_free once it is read; the records cb sees live until then.
 */
struct sload *sctl_load(time_t since);
int  sctl_load_each(const struct sload *, time_t *since, sjob_cb cb, void *arg,
     double *rpc_s, char *err, size_t errlen);
void sctl_load_free(struct sload *);
/* The jobs in a load (0: no change, or an error). */
uint32_t sctl_load_count(const struct sload *);
/* 1 if the load holds job id, whatever its comment (a scan: seldom). */
int sctl_load_has(const struct sload *, uint32_t id);
/*
 * How many jobs slurmctld started since its statistics were last reset
 * (sdiag's "Jobs started"; at midnight, or sdiag -r): when it moves
 * between two probes, a job started.  One RPC that takes none of
 * slurmctld's job locks.  0 with *started set, -1 on error (logged).  Any
 * thread: the poll thread calls it.
 */
int sctl_jobs_started(uint32_t *started);
/* ===================================================================== */
/* Write: pod writes and Events, made by the writepool and the eventer. */

/*
 * writes.c: every write about a pod (see the file's header).  Each goes to
 * the writepool and comes back through writes_done, or bind_write_done
 * for the ones the gang waits on.
 */
void writes_event(struct reconcile *, struct pod_entry *, const char *type,
    const char *reason, const char *action, const char *msg);
/* An Event about the Node of that name (in namespace default). */
void writes_node_event(struct reconcile *, const char *node, const char *type,
    const char *reason, const char *action, const char *msg);
/*
 * PodScheduled=False with msg, once per distinct message, never once the
 * pod is being bound; warn also records a FailedScheduling Event.
 */
void writes_condition(struct reconcile *, struct pod_entry *, const char *msg,
    int warn);
/* A condition write came back. */
void writes_condition_done(struct reconcile *, struct pod_entry *,
    const struct wreq *);
/* The job id label and our finalizer (and, with a, the node and GRES). */
void writes_label(struct reconcile *, struct pod_entry *, const char *gkey,
    uint32_t jobid, const struct assignment *a);
/* Takes the job id label off again. */
void writes_unlabel(struct reconcile *, struct pod_entry *);
/* Records that a label for jobid (and node, if set) landed. */
void writes_metadata_done(struct pod_entry *, uint32_t jobid, const char *node);
/*
 * Binds the pod to knode with the job id, Slurm node and GRES, after the
 * claim writes of claims_plan (taken; NULL: none).
 */
void writes_bind(struct reconcile *, struct pod_entry *, const char *gkey,
    uint32_t jobid, const char *knode, const struct assignment *a,
    json_t *claims);
/* Makes the claim writes of claims.c (taken) for the pod, no Binding. */
void writes_claims(struct reconcile *, struct pod_entry *, const char *gkey,
    uint32_t jobid, json_t *claims);
/*
 * Releases the claims of a PodGroup g's job allocated
 * (claims_group_release).
 */
void writes_group_release(struct reconcile *, const struct group *g);
/* Drops our finalizer from an ended pod (nothing else in flight). */
void writes_release(struct reconcile *, struct pod_entry *);
/* Deletes the pod because its job ended (msg: Slurm's why), with an Event. */
void writes_delete(struct reconcile *, struct pod_entry *, const char *msg);
/*
 * Slurm took the pod's allocation back: as kube-scheduler does to a victim
 * of its preemption (pkg/scheduler/framework/preemption), DisruptionTarget
 * (PreemptionByScheduler, msg) on its status, a Preempted Event, then a
 * delete whose grace is what is left until grace_end, never more than the
 * pod's own and at least 1 s; the status write and the delete go in that
 * order on one writepool thread.
 */
void writes_preempt(struct reconcile *, struct pod_entry *, const char *msg,
    time_t grace_end);
/* DisruptionTarget (PreemptionByScheduler) on g's Kubernetes PodGroup. */
void writes_podgroup_disrupted(struct reconcile *, struct group *g,
    const char *msg);
/* Fails the pod (status phase Failed, reason, msg), with an Event. */
void writes_fail(struct reconcile *, struct pod_entry *, const char *reason,
    const char *msg);
/* Ends the deletion of a pod whose node never confirmed it. */
void writes_force_delete(struct reconcile *, struct pod_entry *);
/* Binds a pod that is not ours for the extender; answers c when done. */
void writes_extender_bind(struct reconcile *, struct ext_call *c);
/*
 * The PodGroupInitiallyScheduled condition of g's Kubernetes PodGroup, as
 * kube-scheduler writes it: True (reason Scheduled) once scheduled, which
 * it then stays, else False (reason Unschedulable) with msg.  Once per
 * distinct condition, one write in flight; nothing for other groups.
 */
void writes_podgroup(struct reconcile *, struct group *g, int scheduled,
    const char *msg);
/*
 * A write came back: 1 if it was one only writes.c follows (deletes,
 * fails, extender binds), else 0 and the caller hands it to
 * bind_write_done.
 */
int writes_done(struct reconcile *, struct wreq *w);

/*
 * writepool.c: pod writes on nthreads threads with their own clients;
 * results go to done.  kconf, lim and done outlive it.
 */
struct writepool *writepool_new(const struct k8s_config *, struct k8s_limiter *,
    int nthreads, struct queue *done, char *err, size_t errlen);
/* Joins the threads; requests not started yet are dropped. */
void writepool_free(struct writepool *);
/* Takes w; its result comes back as an MSG_WRITE message. */
void writepool_submit(struct writepool *, struct wreq *w);

/*
 * eventer.c: Events posted from a few threads of their own (an object's in
 * order), best effort.
 */
/*
 * A thread with its own client drawing on lim (shared); kconf and lim must
 * outlive it.
 */
struct eventer *eventer_new(const struct k8s_config *, struct k8s_limiter *lim,
    const char *controller, const char *instance);
/* Stops the thread; Events still queued are dropped. */
void eventer_free(struct eventer *);
/*
 * Queues an Event about the object id names (taken): kind, apiVersion and
 * metadata name, namespace, uid, resourceVersion (podrec_ref's shape).
 */
void eventer_post(struct eventer *, json_t *id, const char *type,
    const char *reason, const char *action, const char *note);

/* ===================================================================== */
/* HTTP: the endpoints, and the extender calls they queue. */

/* endpoints.c: the scheduler's HTTP endpoints on --listen. */
/*
 * Serves /healthz, /readyz, /metrics and the scheduler-extender API
 * (/filter, /prioritize, /bind); the source must outlive it.
 */
struct endpoints *endpoints_start(const struct bridge_conf *,
    const struct endpoints_source *, char *err, size_t errlen);
void		  endpoints_stop(struct endpoints *);

/* extender.c: answers a scheduler-extender call (one reference of c). */
void extender_answer(struct reconcile *, struct ext_call *c);

/* memstats.c: the memory map, as JSON (new string) and as metrics. */
char *memstats_json(const struct endpoints_source *);
void  memstats_metrics(const struct endpoints_source *, struct buf *);

/* ===================================================================== */
/* Process: the Lease, the metrics, shared strings, a failed thread. */

/* leader.c: --leader-elect, on main's thread. */
#define LEADER_LABEL "slurm-bridge.io/leader"
/*
 * ns/name is the Lease.  pod, if not NULL, is this replica's own pod in ns
 * ($POD_NAME): the leader labels it LEADER_LABEL=true, which a Service
 * selects to reach the leader alone.
 */
struct leader *leader_new(const struct k8s_config *, const char *ns,
    const char *name, const char *pod, char *err, size_t errlen);
void	       leader_free(struct leader *);
/* Campaigns until elected (0) or until SIGINT/SIGTERM in set (the signal). */
int leader_acquire(struct leader *, const sigset_t *set);
/*
 * Waits one retry period for a signal in set (returns it), then renews
 * (returns 0).  Exits the process when the lease is lost.
 */
int leader_wait(struct leader *, const sigset_t *set);
/* Gives the lease up if held, so a follower takes over at once. */
void leader_release(struct leader *);
/* The lease's API calls time out after this: two a step, within 10 s. */
#define LEADER_CALL_MS 4000
/*
 * The fence, before a Slurm write that acts on work another leader may
 * own now (cancels, completions, the orphan sweep, drains): 1, logged
 * with what, when this replica leads by a Lease it last renewed
 * LEADER_FENCE_MS or more ago (another may hold it 15 s after that
 * renewal), else 0.
 */
#define LEADER_FENCE_MS 8000
int leader_fenced(int leader_elect, const char *what);

/* stats.c */
/* The one instance; main writes the Prometheus text from it. */
extern struct bridge_stats bstats;
/* Records one libslurm call that started at t0 (metrics_now()). */
void stats_rpc(enum stats_rpc, double t0, int ok);
/* Records a job Slurm ended, by its state string ("TIMEOUT", ...). */
void stats_job_ended(const char *state);
/* Appends the scheduler's metrics (not the watch counters) to b. */
void stats_write(struct buf *b);
/* malloc_trim(0), counted and timed in bstats (any thread). */
void stats_trim(void);

/* intern.c: one shared, counted copy of strings that repeat; any thread. */
const char *intern_get(const char *); /* NULL gives NULL */
void	    intern_put(const char *); /* one reference less */
void	    intern_stats(size_t *count, size_t *bytes);

/*
 * worker.c: the skeleton of the worker threads: nthreads threads that take
 * owner's work by policy; NULL when a thread cannot start.  The owner
 * puts work on its list under worker_lock, and wakes a thread.  With
 * nthreads 0 nothing runs until worker_step.
 */
struct worker *worker_new(const struct worker_policy *, void *owner,
    int nthreads);
/* Stops and joins the threads; the owner frees what is left after. */
void worker_free(struct worker *);
void worker_lock(struct worker *);
void worker_unlock(struct worker *);
/* Wakes a thread for work just put on the list (under the lock). */
void worker_wake(struct worker *);
/*
 * Runs the next job on the caller's thread, as thread 0: 1, or 0 when none
 * waits.  Only a worker of no threads whose policy has no init (the group
 * tests' submit, poll and end threads); -1 for any other.
 */
int worker_step(struct worker *);
/*
 * A thread the daemon needs failed: logs why and stops the daemon
 * (SIGTERM to itself); main then exits 1.  Any thread.
 */
void fail_thread(const char *who, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int fail_happened(void);

#endif /* BRIDGE_H */
