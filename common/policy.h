/*
 * The pure policy both daemons share: the contract's names (every key,
 * who sets it and what it means: docs/users/annotations.md), the
 * translation of a pod into a Slurm job description and the grouping of
 * pods into gangs.  No I/O and no threads: the scheduler runs it on its
 * reconcile thread, the webhook inside a request, so what the webhook
 * admits the scheduler can submit.  translate.c implements it; the
 * workload rules are in workload.h.  Both binaries link them.
 */
#ifndef POLICY_H
#define POLICY_H

#include <stdint.h>

#include <jansson.h>

#include "k8s.h"
#include "bounds.h"
#include "dra.h"

struct config;

#define BRIDGE_SCHEDULER_NAME "slurm-bridge"
#define BRIDGE_PARTITION      "slurm-bridge"
#define BRIDGE_NS_LABEL	      "slurm-bridge"
#define BRIDGE_NS_LABEL_VALUE "enabled"
/*
 * Every bridge job's comment starts with this marker, and ends with
 * " (install NAME)"; whose job it is, its admin_comment says.
 */
#define BRIDGE_COMMENT_MARKER "slurm-bridge:"
/*
 * The job's pods' UIDs, comma-separated, in its spank environment
 * (jobspec.node_env); slurmd gives it to the node epilog as
 * "SPANK_" NODE_ENV_PODS.  Only the job's submitter sets it, at submit.
 */
#define NODE_ENV_PODS "SLURM_BRIDGE_PODS"

#define ANN_PREFIX     "slurmjob.slinky.slurm.net/"
#define LABEL_JOBID    "scheduler.slinky.slurm.net/slurm-jobid"
#define ANN_SLURM_NODE "slinky.slurm.net/slurm-node"
/* The job id as an annotation (the Binding cannot carry labels). */
#define ANN_SLURM_JOBID	     LABEL_JOBID
#define LABEL_SLURM_NODENAME "slinky.slurm.net/slurm-nodename"
#define ANN_SLURM_GRES	     "scheduler.slinky.slurm.net/slurm-gres"
/*
 * On a pod that shares ResourceClaims: the Slurm jobs holding their
 * devices ("12,40"); the epilog waits for it as for their own pods.
 */
#define ANN_SLURM_DEVICE_JOBS "scheduler.slinky.slurm.net/device-jobs"
/*
 * On a pod of a scheduler-plugins PodGroup that came after its gang's job
 * was full, so was placed alone (its own Slurm job): the gang's name.  The
 * scheduler writes it with the job id; it keeps the pod alone from then on.
 */
#define ANN_BEYOND_GANG "scheduler.slinky.slurm.net/beyond-gang"
#define LABEL_POD_GROUP "scheduling.x-k8s.io/pod-group"
/* Kubernetes' PodGroup condition, as kube-scheduler writes it. */
#define PODGROUP_CONDITION "PodGroupInitiallyScheduled"
/* ... and a CompositePodGroup's (scheduling.k8s.io/v1alpha3). */
#define COMPOSITE_CONDITION "CompositePodGroupInitiallyScheduled"
#define ANN_MIN_MEMBER	    "scheduler.slinky.slurm.net/min-member"
/* A gang's topology request in our own form (common/topology.c). */
#define ANN_REQUIRED_TOPOLOGY	  ANN_PREFIX "required-topology"
#define ANN_EXCLUSIVE_TOPOLOGY	  ANN_PREFIX "exclusive-topology"
#define ANN_TOPOLOGY_SLICE	  ANN_PREFIX "topology-slice-size"
#define JOBSET_LABEL_NAME	  "jobset.sigs.k8s.io/jobset-name"
#define JOBSET_LABEL_RJ		  "jobset.sigs.k8s.io/replicatedjob-name"
#define JOBSET_LABEL_GLOBAL_INDEX "jobset.sigs.k8s.io/job-global-index"
#define LWS_LABEL_NAME		  "leaderworkerset.sigs.k8s.io/name"
#define LWS_LABEL_GROUP_INDEX	  "leaderworkerset.sigs.k8s.io/group-index"
#define LWS_LABEL_WORKER_INDEX	  "leaderworkerset.sigs.k8s.io/worker-index"
#define LWS_ANN_SIZE		  "leaderworkerset.sigs.k8s.io/size"
/* Kueue's pod integration: a group of plain pods admitted as one. */
#define KUEUE_LABEL_GROUP     "kueue.x-k8s.io/pod-group-name"
#define KUEUE_ANN_GROUP_TOTAL "kueue.x-k8s.io/pod-group-total-count"
#define FINALIZER	      "scheduler.slinky.slurm.net/finalizer"
#define MANAGED_TAINT_KEY     "slinky.slurm.net/managed-node"
#define MANAGED_TAINT_VALUE   "slurm-bridge"
/*
 * The taint's effect is the config's managedTaintEffect: NoSchedule by
 * default (the guard webhook keeps other schedulers' pods off Slurm's
 * nodes), NoExecute only when an admin asks, since it evicts every pod
 * there that does not tolerate it.  The webhook's toleration names no
 * effect, so it tolerates either.
 */
#define MANAGED_TAINT_EFFECT_DEFAULT "NoSchedule"
/* maxEndGraceSeconds' default: half Slurm's default UnkillableStepTimeout. */
#define END_GRACE_MAX_DEFAULT_S 30
/* deviceBindingTimeoutSeconds' default: kube-scheduler's bindingTimeout. */
#define BINDING_TIMEOUT_DEFAULT_S 600
/* On a node the scheduler tainted: the install that did (for removal). */
#define ANN_TAINTED_BY "slinky.slurm.net/managed-node-install"
/* Drains the bridge makes carry this reason prefix; it undoes only those. */
#define DRAIN_REASON_PREFIX "slurm-bridge:"

/* translate.c: pod -> Slurm job description (pure). */
/* Components of a heterogeneous gang; more shapes size it by the largest. */
#define JOBSPEC_MAX_COMPS 8

struct jobspec {
	char *name;
	char *comment;
	char *admin_comment;
	char *partition;
	char *account;
	char *qos;
	char *reservation;
	char *constraints;
	char *tres_per_task; /* "gres:gpu:2" or NULL */
	/*
	 * A gang that shares its PodGroup's claims (KEP-5729): their GRES
	 * ("gpu:2", asked once for the job) and the job's GRES on its one
	 * node ("gres:gpu:6": each task's and the PodGroup's), which then
	 * replaces tres_per_task; else NULL.
	 */
	char *group_gres;
	char *tres_per_node;
	char *licenses;
	char *wckey;
	char *mcs_label; /* config mcsLabel, or NULL */
	char *req_nodes; /* the Slurm node a shared claim holds it to */
	/*
	 * The Slurm nodes its pods may not use (the placement rule, fit.c:
	 * the scheduler sets it after translation), or NULL
	 */
	char *exc_nodes;
	/*
	 * What the node epilog reads (epilog/main.c), or NULL: node_env[0]
	 * is NODE_ENV_PODS "=uid,uid,..." (its pods' UIDs), node_env[1] NULL:
	 * the job's spank environment, which slurmd hands its epilog with
	 * SPANK_ in front.  Set at submit and never changed: no user, the
	 * job's owner included, can rewrite it (owned).
	 */
	char   **node_env;
	uint32_t ntasks;
	uint32_t cpus_per_task;
	uint32_t gpus_per_task;	  /* for splitting GRES detail */
	uint64_t mem_per_cpu_mb;  /* 0: Slurm default */
	uint64_t mem_per_node_mb; /* mem-per-node; wins if set */
	uint32_t min_nodes;	  /* 0: unset */
	uint32_t max_nodes;
	uint32_t req_switch;  /* switches: max leaf switches */
	uint32_t wait4switch; /* ... and max wait, seconds */
	/*
	 * A gang's topology request (topology.c): the node label whose one
	 * value holds the gang, or each slice of topo_slice pods (owned;
	 * NULL: none), that level's kind, and Slurm's segment size in nodes
	 * (topology/block; 0: none).
	 */
	char	*topo_key;
	int	 topo_kind; /* enum config_topo_kind */
	int	 topo_required;
	uint32_t topo_slice;
	uint16_t segment_size;
	/* the domain (block) is the job's alone: --exclusive=topo */
	int	 topo_exclusive;
	uint32_t user_id;    /* when user_name is NULL */
	uint32_t group_id;   /* when group_name is NULL */
	char	*user_name;  /* user-id given as a name */
	char	*group_name; /* group-id given as a name */
	int	 has_user_id;
	int	 has_group_id;
	uint32_t time_limit; /* minutes; 0: partition default */
	uint32_t priority;   /* 0: Slurm decides */
	/* bounds_check: what bounds_check_ids needs of the owner */
	uint32_t min_uid;
	int	 owner_listed; /* a namespace's allowed-users named it */
	int	 exclusive;
	/*
	 * A gang whose members differ: one Slurm heterogeneous job of
	 * ncomps components, one per distinct pod shape and Kubernetes
	 * PodGroup (the children of a CompositePodGroup; ncomps 0: one
	 * ordinary job of ntasks identical tasks).  comp_of[i] is the
	 * component of the i-th pod, in placement order (owned).
	 */
	size_t ncomps;
	struct jobcomp {
		uint32_t ntasks;
		uint32_t cpus_per_task;
		uint32_t gpus_per_task;
		uint64_t mem_per_cpu_mb;
		char	*tres_per_task; /* owned */
		/*
		 * The nodes its pods may not use, when a gang's members
		 * differ in them (translate_split_nodes; owned), else NULL:
		 * the job's exc_nodes.
		 */
		char *exc_nodes;
		/* its pods' PodGroup while grouping (borrowed), then NULL */
		const char *podgroup;
	} comps[JOBSPEC_MAX_COMPS];
	uint8_t *comp_of;
};

struct translate_conf {
	const char	    *partition;	      /* default partition */
	const char	    *default_account; /* when none is named, or NULL */
	const char	    *mcs_label; /* Slurm MCS label for every job */
	int		     exclusive; /* default placement */
	const struct bounds *bounds;	/* the config's; NULL: built-in */
	/*
	 * The install's name (the scheduler's; NULL in the webhook): in each
	 * job's comment and admin_comment, with the pods' UIDs.
	 */
	const char *install;
	/* DeviceClasses mapped to GRES (the config's deviceClasses) */
	const struct dra_classes *dra;
	/* the managed-node taint's effect; NULL: the default */
	const char *taint_effect;
	/* the topology table and preferredTopologyWaitMinutes; NULL: none */
	const struct config *topology;
};

/* Where a pod's settings come from (borrowed; ns may be NULL). */
struct translate_src {
	const json_t *pod;
	/* workload_layers: Job, Workload, PodGroup, ...; least specific first */
	json_t *const *layers;
	size_t	       nlayers;
	const json_t  *ns; /* its Namespace: defaults and bounds */
	/* the pod's ResourceClaims and templates; NULL: not looked up */
	const struct dra_lookup *dra;
	/*
	 * A member of a gang (translate_group): its PodGroup's claims are
	 * the gang's.  Alone, a pod naming one is refused: the pods of a
	 * basic PodGroup are placed one by one, each its own job.
	 */
	int gang;
};

void translate_jobspec_cleanup(struct jobspec *);
/*
 * Fills js for one pod.  Annotations come from the namespace (defaults for
 * account, partition, qos), the workload layers, then the pod, later ones
 * winning.  On invalid input returns -1 with a message naming the field
 * and the accepted form in err; 1 with err while the pod waits for an
 * object it needs (a ResourceClaim to be made, or to be free).
 */
int translate_pod(const struct translate_src *, const struct translate_conf *,
    struct jobspec *js, char *err, size_t errlen);
/*
 * The pod's request (limits 0) or limit of resource res, as
 * kube-scheduler sizes a pod (component-helpers resource.PodRequests):
 * pod-level spec.resources for CPU, memory and hugepages when set; else
 * the app containers with the sidecars (restartable init containers), or
 * an init container with the sidecars before it, whichever is larger;
 * plus spec.overhead.  milli: CPU in thousandths.  0, or -1 with err
 * naming the container and the form.
 */
int translate_pod_request(const json_t *pod, const char *res, int milli,
    int limits, int64_t *out, char *err, size_t errlen);
/* Does the pod tolerate the managed-node taint of this effect? */
int translate_tolerates(const json_t *pod, const char *effect);
/* Does the node carry the managed-node taint (any value and effect)? */
int translate_node_managed(const json_t *node);
/*
 * The node's taints without the managed-node one, then that one with
 * effect when effect is not NULL: the whole list the scheduler writes
 * back to taint a node (effect) or uninstall to untaint it (NULL).  New.
 */
json_t *translate_node_taints(const json_t *node, const char *effect);
/* The effect of the node's managed-node taint, or NULL (borrowed). */
const char *translate_node_taint_effect(const json_t *node);
/*
 * Fills js for a gang: one task per pod, annotations from the first member
 * (they share a template).  Members of one shape (CPUs, memory, GPUs per
 * task): one job of identical tasks.  Members of 2 to JOBSPEC_MAX_COMPS
 * shapes, or PodGroups (a CompositePodGroup's children): one component per
 * shape and PodGroup (js->comps, js->comp_of), so Slurm
 * allocates each exactly; more shapes: identical tasks of the largest
 * request.  pods are in placement order; from gives the layers and the
 * namespace (its pod is not read).  admin_comment lists the pods and their
 * components ({"pods":[...], "comps":[...]}).
 */
/* Returns as translate_pod. */
int translate_group(json_t *const *pods, size_t n, const char *group,
    const struct translate_src *from, const struct translate_conf *,
    struct jobspec *js, char *err, size_t errlen);
/*
 * A gang whose members may use different nodes (exc[i]: the nodes pod i
 * may not use, "" for none; as many as its pods, in placement order):
 * one component per component of js (or per gang, when js is of
 * identical tasks) and set of nodes, each excluding its own, with the
 * admin_comment's components to match.  0, or -1 with err when that
 * cannot be (whole nodes, memory per node, PodGroup claims, more than
 * JOBSPEC_MAX_COMPS components).
 */
int translate_split_nodes(struct jobspec *js, const char *const *exc, size_t n,
    char *err, size_t errlen);
/*
 * Checks the annotations of an object whose pods inherit them (a Workload,
 * a PodGroup) as a pod's would be: 0, or -1 with the same message a pod
 * with them would get.  ns may be NULL.
 */
int translate_owner_check(const json_t *obj, const json_t *ns,
    const struct translate_conf *, char *err, size_t errlen);
/* The GPU count of a gres string ("gpu:a100:2,nic:1" -> 2; 0 if none). */
uint32_t translate_gres_gpus(const char *gres);
/* Parses admin_comment {"pods":[...]} into a new array of "ns/name". */
json_t *translate_admin_pods(const char *admin_comment);

/* Whose job a bridge job is (translate_admin_owner). */
enum admin_owner {
	ADMIN_MINE,   /* names this install */
	ADMIN_LEGACY, /* lists its pods, names no install: made before */
	ADMIN_OTHER   /* another install's, or no bridge admin_comment */
};
/*
 * By its admin_comment (which only Slurm administrators can set), or,
 * for a job with none yet (made for a user, its admin fields not yet
 * set), by the install its comment names.
 */
enum admin_owner translate_admin_owner(const char *admin_comment,
    const char *comment, const char *install);
/*
 * Does admin_comment list the pod key ("ns/name") with that UID?  A
 * legacy admin_comment lists no UIDs: the name alone then.
 */
int translate_admin_names(const char *admin_comment, const char *key,
    const char *uid);
/*
 * A legacy admin_comment claimed by install: uids (taken) are its pods'
 * UIDs in order.  New string (free), or NULL when it is not well formed.
 */
char *translate_admin_claim(const char *admin_comment, const char *install,
    json_t *uids);
/*
 * A heterogeneous gang's components from its admin_comment, checked
 * against its npods pods: a new {"comps":[component of each pod],
 * "shapes":[[cpus, gpus] per task of each component]}, or NULL (an
 * ordinary job, or not well formed).
 */
json_t *translate_admin_het(const char *admin_comment, size_t npods);

#endif /* POLICY_H */
