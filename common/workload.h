/*
 * Workloads (workload.c): the one place that decides which Kubernetes
 * object a pod belongs to, and which gang.  The scheduler and the webhook
 * both call these with their own lookup, so a pod that both judge gets the
 * same root and the same gang.
 *
 * The gang, everywhere: the PodGroup of Kubernetes' own gang API that its
 * spec.schedulingGroup names (a gang when its policy is gang; all the
 * PodGroups of its parent CompositePodGroup, when that one is a gang), else the
 * PodGroup its pod-group label names, else the Kueue pod group its
 * pod-group-name label names, else the LeaderWorkerSet group, else
 * the JobSet, else its controlling Job (an Indexed Job with parallelism > 1
 * is a gang), else the pod alone.  The workload root (whose annotations the
 * pods inherit) follows the same order, with Kubernetes' PodGroup last: a
 * Job that asked for a gang is the object its user wrote.
 *
 * The annotations a pod inherits (workload_layers), most specific winning:
 * the pod itself, then, for a pod of a Kubernetes PodGroup, that PodGroup,
 * the Workload its workloadRef names, and the pod's controlling Job; for
 * any other pod, its workload root; then the namespace's defaults.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define WORKLOAD_MAX_GANG 4096

enum workload_kind {
	WORKLOAD_PODGROUP,	 /* scheduling.x-k8s.io/v1alpha1 PodGroup */
	WORKLOAD_LWS,		 /* leaderworkerset.x-k8s.io/v1 */
	WORKLOAD_JOBSET,	 /* jobset.x-k8s.io/v1alpha2 */
	WORKLOAD_JOB,		 /* batch/v1 */
	WORKLOAD_SCHED_PODGROUP, /* scheduling.k8s.io PodGroup (GenericWorkload) */
	WORKLOAD_SCHED_WORKLOAD, /* scheduling.k8s.io Workload (GenericWorkload) */
	/* scheduling.k8s.io/v1alpha3 CompositePodGroup (CompositePodGroup) */
	WORKLOAD_SCHED_COMPOSITE,
	WORKLOAD_KINDS
};

/*
 * Finds a workload object by namespace and name: a new reference, or NULL
 * when the caller does not know it.  arg is the caller's.
 */
typedef json_t *(*workload_lookup_fn)(void *arg, enum workload_kind,
    const char *ns, const char *name);

struct workload_lookup {
	workload_lookup_fn fn;
	void		  *arg;
};

struct group_id {
	char key[384];	/* "gang:ns/group" or "pod:ns/name" */
	char name[256]; /* group or pod name */
	int  gang;
	int  min_member; /* 0: from the object named by sized_by */
	/* What sizes the gang: WORKLOAD_SCHED_PODGROUP, else by name. */
	enum workload_kind sized_by;
	/*
	 * Members beyond its size may each be placed alone once its job is
	 * full (a scheduler-plugins PodGroup: Coscheduling lets them run).
	 */
	int grows;
};
/* The group's name in a key of group_id's (after the namespace: in key). */
const char *workload_key_name(const char *key);
/* ... and its namespace, in buf ("" for a key of no namespace). */
const char *workload_key_ns(const char *key, char *buf, size_t len);

/*
 * The pod's workload root, as a new reference, or NULL: the first of the
 * objects the pod names (labels, then its controller ownerReference) that
 * the lookup knows.  A Job is the pod's only when its uid matches the
 * ownerReference's: a Job of the same name made since is not the owner.
 */
json_t *workload_root(const json_t *pod, const struct workload_lookup *);
/* The pod's controlling Job (uid checked), a new reference, or NULL. */
json_t *workload_job(const json_t *pod, const struct workload_lookup *);

#define WORKLOAD_LAYERS 4
/*
 * The objects whose annotations the pod inherits, least specific first, as
 * new references in out (the count returned; release with
 * workload_layers_free).  A pod of a Kubernetes PodGroup: its controlling
 * Job, the Workload the PodGroup's workloadRef names, its parent
 * CompositePodGroup, then the PodGroup, each where known.  Any other pod: its workload root, if any.
 */
size_t workload_layers(const json_t *pod, const struct workload_lookup *,
    json_t			    *out[WORKLOAD_LAYERS]);
void   workload_layers_free(json_t *out[], size_t n);
/* The Workload a Kubernetes PodGroup's workloadRef names, or NULL. */
const char *workload_ref_name(const json_t *pg);
/*
 * Finds the group of a pod: the pod-group label (with min-member, or 0 for
 * a PodGroup CR), else a Kueue pod group (pod-group-total-count), else a
 * LeaderWorkerSet group (size annotation), else a
 * JobSet (its size from the JobSet, 0 while unknown), else an Indexed Job
 * owner, else the pod alone.  The gang annotation overrides.  lk may be
 * NULL: then JobSet sizes are unknown and Jobs are not looked up.  -1 with
 * err on bad input.
 */
int workload_group(const json_t *pod, const struct workload_lookup *lk,
    struct group_id *, char *err, size_t errlen);
/*
 * Fills gid as the pod alone ("pod:ns/name"), whatever its gang: what a
 * pod beyond its gang's size is, and one the scheduler marked so
 * (ANN_BEYOND_GANG, which workload_group reads).  0, or -1 with err.
 */
int workload_group_alone(const json_t *pod, struct group_id *gid, char *err,
    size_t errlen);
/*
 * A gang's size: min_member when the pods gave one; else, sized by a
 * Kubernetes PodGroup, its spec.schedulingPolicy.gang.minCount; else its
 * PodGroup CR's spec.minMember, else its JobSet's pods.  Sizes run from 1
 * to WORKLOAD_MAX_GANG; 0 while unknown (or out of range).
 */
int workload_gang_size(const char *ns, const char *name, int min_member,
    enum workload_kind sized_by, const struct workload_lookup *);
/*
 * A composite gang's size: the minCounts of the child PodGroup templates
 * of the Workload template its spec.workloadRef names, all of them (the
 * bridge places every child, whatever minGroupCount below that).  0 with
 * why while it cannot be known (no workloadRef, the Workload unknown, a
 * child that is no gang, nested composites, minGroupCount out of range).
 */
int workload_composite_size(const json_t *cpg, const struct workload_lookup *,
    char *why, size_t len);
/*
 * The gang minCount of a Kubernetes PodGroup: 1 to WORKLOAD_MAX_GANG, 0
 * when its policy is basic (no gang), -1 when it has neither or the count
 * is out of range.
 */
int workload_podgroup_min(const json_t *pg);
/*
 * A Kubernetes PodGroup's spec.disruptionMode is all (its members can only
 * be disrupted together), not single (the default)?
 */
int workload_podgroup_disrupt_all(const json_t *pg);
/* Pods in a JobSet: sum of replicas x parallelism; -1 if out of range. */
int workload_jobset_size(const json_t *jobset);
/*
 * The stage of a JobSet with dependsOn that replicated job rjname is in:
 * the replicated jobs with the same dependsOn, which its controller
 * creates together.  Sets *stage (borrowed from jobset: the stage's first
 * replicated job) and *pods (the stage's).  0; 1 when the JobSet has no
 * dependsOn (one stage: the whole JobSet); -1 with err naming the field on
 * a bad dependsOn or an rjname it does not have.
 */
int workload_jobset_stage(const json_t *jobset, const char *rjname,
    const char **stage, int *pods, char *err, size_t errlen);
/*
 * Placement order of gang members: by member index when both have one,
 * else by name (qsort-style result).  Index -1: none.
 */
int workload_member_order(int32_t index_a, const char *name_a, int32_t index_b,
    const char *name_b);
/* A decimal count from min to max (all of s), or -1. */
long workload_count(const char *s, long min, long max);
/*
 * A member's index for placement order: its Job completion index
 * (batch.kubernetes.io/job-completion-index); for a JobSet's pod, its
 * child Job's jobset.sigs.k8s.io/job-global-index first (times 65536), so
 * that the pods of one child Job are consecutive (a topology slice); for
 * a LeaderWorkerSet's, its leaderworkerset.sigs.k8s.io/worker-index (the
 * leader 0), so that worker 10 follows worker 9.  -1: none.
 */
int32_t workload_member_index(const json_t *pod);

#endif /* WORKLOAD_H */
