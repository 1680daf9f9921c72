/*
 * Topology requests (topology.c): a gang asking for its pods to share one
 * topology domain (the nodes under one value of a node label), in every
 * form users write it, read the same by both daemons; what Slurm is asked
 * for it, by the site's topology table (config topology[]); and the check
 * of an allocation before its Binding.  Pure; any thread.
 *
 * Where a request comes from, the first found winning:
 *   slurmjob.slinky.slurm.net/required-topology, preferred-topology and
 *       topology-slice-size (ours; pod, then its workload layers), and
 *       exclusive-topology: required, and at a block level the domain is
 *       the job's alone;
 *   kueue.x-k8s.io/podset-required-topology, podset-preferred-topology,
 *       podset-slice-required-topology with podset-slice-size;
 *   leaderworkerset.sigs.k8s.io/exclusive-topology (the group), and
 *       subgroup-exclusive-topology with subgroup-size (each subgroup);
 *   alpha.jobset.sigs.k8s.io/exclusive-topology (each child Job: its
 *       replicated job's parallelism, from the JobSet);
 *   a Kubernetes PodGroup's spec.schedulingConstraints.topology[0].key.
 */
#ifndef TOPOLOGY_H
#define TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config.h"
#include "policy.h"

struct topology_req {
	const char *key; /* the node label, borrowed; NULL: no request */
	/* what states it, for messages: "annotation KEY" or the field */
	const char *from;
	int	    required;
	uint32_t    slice;     /* pods per domain; 0: the whole gang */
	int	    exclusive; /* no other job in the domain (block levels) */
};

/*
 * The request of a pod (layers as workload_layers gives them, least
 * specific first; borrowed).  0, req->key NULL when there is none; -1
 * with err naming the annotation and the accepted form.
 */
int topology_request(const json_t *pod, json_t *const *layers, size_t nlayers,
    struct topology_req *req, char *err, size_t errlen);

/*
 * Sets what Slurm is asked for a request of a gang of js->ntasks pods
 * (js->topo_*; and switches, segment or node count by the level's kind).
 * A switches annotation the user wrote is kept.  -1 with err: a key that
 * is no level of the table, a slice that does not divide the gang or
 * that the level cannot hold.
 */
int topology_apply(const struct topology_req *, const struct config *,
    struct jobspec *js, char *err, size_t errlen);

/*
 * Before a Binding: do the nodes (nodes[i] the Node object of the i-th
 * member, placement order) keep the whole gang, or each slice of it,
 * under one value of key?  1; 0 with why naming the nodes and values.
 */
int topology_holds(const char *key, uint32_t slice, const json_t *const *nodes,
    size_t n, char *why, size_t len);

/*
 * JobSet's exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology)
 * and LeaderWorkerSet's per subgroup (subgroup-exclusive-topology), as
 * their controllers do it, hold a gang back: JobSet creates the rest of a
 * child Job only once its first pod is bound, and both webhooks add
 * required pod (anti-)affinity terms on their group's hash label.  The
 * admission webhook states the same request in slurm-bridge's own form
 * (exclusive-topology, topology-slice-size) and drops theirs.
 */
struct topology_exclusive {
	const char *ann;   /* the annotation, static */
	const char *label; /* the hash label their terms select on, static */
	const char *key;   /* the node label, borrowed from the pod */
	uint32_t    slice; /* the child Job's or subgroup's pods; 0: unknown */
};

/* 1 with x filled when the pod carries one; 0; -1 with err. */
int topology_exclusive(const json_t *pod, json_t *const *layers, size_t nlayers,
    struct topology_exclusive *x, char *err, size_t errlen);
/* Is a pod affinity term one of the terms their webhooks add for x? */
int topology_exclusive_term(const json_t *term,
    const struct topology_exclusive	 *x);

/*
 * Do node labels agree with Slurm's domains of a level?  domains is
 * {Slurm node: leaf switch or block} (sctl_topology); nodes[i] the i-th
 * bridged Node object, snames[i] its Slurm node.  Each label value must
 * be exactly one Slurm domain: the number of values and domains that are
 * not, the first few described in msg ("" when 0).
 */
size_t topology_agrees(const char *key, const char *what, const json_t *domains,
    const json_t *const *nodes, const char *const *snames, size_t n, char *msg,
    size_t len);

#endif /* TOPOLOGY_H */
