/*
 * The placement rule both daemons link: may a pod run on a node, as
 * kube-scheduler's Filter plugins decide it (Kubernetes 1.37,
 * pkg/scheduler/framework/plugins).  One node at a time, with the pods
 * already on it or already placed there; the reason a node is refused is
 * kube-scheduler's own text, so a FailedScheduling message reads as
 * kube-scheduler's does.  What the rule cannot decide for one node
 * (affinity to other pods, spread, volumes) is fit_pod_waits's.  Pure: no
 * I/O, no threads; nothing is kept.
 *
 * Slurm decides CPU, memory and the GPUs it has as GRES: the rule does not
 * count them.  Every other resource a pod asks for limits it to the nodes
 * whose allocatable has enough (fit_resource_node_limited).
 */
#ifndef FIT_H
#define FIT_H

#include <stddef.h>

#include <jansson.h>

/* Why a node is refused: one per plugin, in kube-scheduler's order. */
enum fit_reason {
	FIT_OK = 0,
	FIT_NODE_NAME,	   /* NodeName: spec.nodeName names another node */
	FIT_UNSCHEDULABLE, /* NodeUnschedulable: cordoned */
	FIT_NOT_READY,	   /* its Ready condition is not True */
	FIT_AFFINITY,	   /* NodeAffinity: nodeSelector, required affinity */
	FIT_TAINT,	   /* TaintToleration: NoSchedule or NoExecute */
	FIT_PORTS,	   /* NodePorts: a host port in use */
	FIT_RESOURCE,	   /* NodeResourcesFit: a node-limited resource */
	/* DynamicResources: the node's slices lack a claim's devices (the
	 * bridge's exclude.c decides it: the rule has no slices) */
	FIT_DEVICES,
	FIT_REASONS
};

/*
 * May pod run on node, beside the pods in others (already on the node or
 * placed there; may be NULL when n is 0)?  FIT_OK, or the first reason
 * it may not, with kube-scheduler's text in why (e.g. "node(s) had
 * untolerated taint {dedicated: team-a}").  The managed-node taint
 * (policy.h) is not this rule's: translation checks it.
 */
enum fit_reason fit_node(const json_t *pod, const json_t *node,
    json_t *const *others, size_t n, char *why, size_t len);

/*
 * The pod (a new copy) limited to the nodes named (a JSON array of
 * strings): matchFields metadata.name In names, ANDed into each of its
 * required node affinity terms, or its one term.  A preset spec.nodeName
 * (the webhook) and kube-scheduler's survivors (the extender) both become
 * this.
 */
json_t *fit_restrict(const json_t *pod, const json_t *names);

/* NodeAffinity alone: nodeSelector and the required node affinity. */
int fit_affinity(const json_t *pod, const json_t *node);

/*
 * Is this resource name one the node's allocatable must hold (not CPU,
 * memory, pods, a GPU name Slurm counts as GRES, or a DRA class)?
 */
int fit_resource_node_limited(const char *name);

/*
 * What the pod asks that the rule cannot decide node by node: required
 * pod affinity or anti-affinity, topology spread with DoNotSchedule, and
 * volumes of PersistentVolumeClaims.  0, or 1 with a message naming the
 * field and why the pod waits.
 */
int fit_pod_waits(const json_t *pod, char *msg, size_t len);

/* Counts of nodes by reason, for the FailedScheduling message. */
struct fit_tally {
	size_t	nodes; /* all the nodes asked about */
	size_t	fit;   /* those that fit */
	json_t *why;   /* reason text -> count */
};

void fit_tally_init(struct fit_tally *);
void fit_tally_cleanup(struct fit_tally *);
void fit_tally_add(struct fit_tally *, enum fit_reason, const char *why);
/*
 * kube-scheduler's summary: "0/64 nodes are available: 4 node(s) had
 * untolerated taint {dedicated: team-a}, 60 node(s) didn't match Pod's
 * node affinity/selector." (counts and reasons sorted as its strings).
 */
void fit_tally_message(const struct fit_tally *, char *buf, size_t len);

#endif /* FIT_H */
