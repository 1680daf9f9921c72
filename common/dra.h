/*
 * Dynamic Resource Allocation (resource.k8s.io/v1) as Slurm GRES
 * (dra.c): the one rule both daemons apply to a pod's device requests, and
 * the allocation the scheduler writes once Slurm has chosen the devices.
 *
 * A site maps each DeviceClass it serves to a Slurm GRES (the config's
 * deviceClasses; the NVIDIA and example drivers' classes are built in).  A
 * pod's requests of a mapped class (from its ResourceClaims, or a
 * deviceclass.resource.kubernetes.io/CLASS extended resource) become GRES
 * per task; of a firstAvailable list, the first subrequest a GRES can give
 * and some node serves.  What a GRES cannot express (CEL selectors,
 * allocationMode All, admin access, capacity, constraints, classes not
 * mapped) is refused with a message naming the claim, the request and
 * what is supported.  Which nodes' slices publish a class's devices,
 * untainted against a request's tolerations, is dra_node_devices'.  When
 * Slurm allocates the job, a claim's devices are the
 * node's ResourceSlice devices of the class's driver that are the GRES
 * indices Slurm gave the pod (by the class's deviceNames, deviceName or
 * indexAttribute), with the binding conditions a device lists, which
 * dra_claim_binding reads back.  A claim another job of this install holds
 * is shared: the pod joins it on that job's node.  A claim of the pod's
 * PodGroup is counted apart (dra_pod_gres' group), once for the gang.
 * Pure: no I/O.
 */
#ifndef DRA_H
#define DRA_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DRA_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"
/* kube-scheduler's finalizer: kube-controller-manager deallocates then. */
#define DRA_FINALIZER "resource.kubernetes.io/delete-protection"
/* The special claim of a DRA-backed extended resource (KEP-5004). */
#define DRA_EXTENDED_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define DRA_MAX_COUNT		64

/* One DeviceClass mapped to a Slurm GRES (owned strings). */
struct dra_class {
	char *name;   /* the DeviceClass, e.g. gpu.nvidia.com */
	char *driver; /* its ResourceSlices' spec.driver */
	char *gres;   /* GRES name[:type], e.g. gpu or gpu:1g.10gb */
	/*
	 * Which device is Slurm's GRES index N, the first given of: names
	 * (the Nth entry is its name: a site's table, for MIG layouts),
	 * name_pattern (its name, "{index}" standing for N: "gpu-{index}"),
	 * index_attr (the int attribute whose value is N).
	 */
	char   *index_attr;
	char   *name_pattern;
	char  **names;	    /* NULL-terminated, or NULL */
	json_t *attributes; /* {"type": "gpu"}: what a device must also have */
};

struct dra_classes {
	struct dra_class *v;
	size_t		  n;
	/*
	 * The cluster does not back extended resources with DRA (before
	 * Kubernetes 1.36 the DRAExtendedResource feature is alpha and off):
	 * deviceclass.resource.kubernetes.io/ names are refused.
	 */
	int extended_off;
};

/*
 * The built-in mapping, both as GRES gpu: gpu.nvidia.com (whole GPUs,
 * attribute type gpu, named gpu-N after /dev/nvidiaN) and gpu.example.com
 * (attribute index).
 */
void dra_classes_defaults(struct dra_classes *);
void dra_classes_cleanup(struct dra_classes *);
/* The mapping of a DeviceClass, or NULL. */
const struct dra_class *dra_class_find(const struct dra_classes *,
    const char *name);

enum dra_kind {
	DRA_CLAIM,    /* a ResourceClaim */
	DRA_TEMPLATE, /* a ResourceClaimTemplate */
	DRA_PODGROUP  /* a scheduling.k8s.io PodGroup */
};

/* Finds a claim or template: a new reference, or NULL while unknown. */
typedef json_t *(
    *dra_lookup_fn)(void *arg, enum dra_kind, const char *ns, const char *name);
/*
 * What the scheduler's own state says of a claim: 1 with why when a pod
 * must wait for it (another pod's job is about to allocate it, or the job
 * holding it is ending), else 0.
 */
typedef int (
    *dra_busy_fn)(void *arg, const json_t *claim, char *why, size_t whylen);

struct dra_class;
/*
 * Does some node publish count devices of class k, untainted against
 * tolerations (a request's)?  Which firstAvailable subrequest a request
 * takes (dra_request_pick) rests on it.
 */
typedef int (*dra_serves_fn)(void *arg, const struct dra_class *k,
    long long count, const json_t *tolerations);

struct dra_lookup {
	dra_lookup_fn fn;
	dra_busy_fn   busy;   /* NULL: never busy */
	dra_serves_fn serves; /* NULL: every class is served */
	void	     *arg;
};

/*
 * The request req asks for ex: its exactly, or of its firstAvailable the
 * first subrequest (*sub its name, else NULL) that a GRES can give and
 * lk->serves (where lk and it are not NULL).  0; -1 with err naming the
 * field when none can be given; 1 with err while none is served.
 */
int dra_request_pick(const json_t *req, const struct dra_classes *,
    const struct dra_lookup *lk, const char *where, const json_t **ex,
    const char **sub, char *err, size_t errlen);

/* How a pod uses one of its claims (dra.c). */
enum dra_use {
	DRA_USE_ALLOCATE, /* free: the pod's job allocates it */
	DRA_USE_RESERVED, /* allocated and reserved for the pod already */
	DRA_USE_JOIN,	  /* shared: held by another job; the pod joins */
	DRA_USE_WAIT
};

/*
 * The Slurm job holding a claim's devices and the Slurm node they are on,
 * from the annotations the scheduler writes when it allocates the claim
 * (ANN_SLURM_JOBID, ANN_SLURM_NODE; *node borrowed).  0, or -1 if absent.
 */
int dra_claim_holder(const json_t *claim, uint32_t *jobid, const char **node);

/*
 * Is a pod's resourceClaims entry a claim of its PodGroup pg (KEP-5729,
 * DRAWorkloadResourceClaims: the same name, and the same resourceClaimName
 * or resourceClaimTemplateName, as one of pg's spec.resourceClaims)?  Such
 * a claim is allocated once for the PodGroup and reserved for it.
 */
int dra_entry_podgroup(const json_t *pg, const json_t *entry);
/* The pod's PodGroup (spec.schedulingGroup.podGroupName) from lk, or NULL. */
json_t *dra_pod_podgroup(const json_t *pod, const struct dra_lookup *lk);

/*
 * The GRES per task that a pod's device requests become, merged into one
 * "name[:type]:count" in *gres (new string; NULL when it asks for none).
 * Its PodGroup's claims (dra_entry_podgroup) are not the pod's: they are
 * counted in *group ("name[:type]:count" of the same GRES, or NULL), which
 * the gang's job asks once.
 * A claim allocated and reserved for other pods by a job of this install
 * is shared: its devices are that job's, not counted, and *node is the
 * Slurm node the pod must run on (new string; NULL when it joins none).
 * 0; -1 with err naming the field and what is supported; 1 with err while
 * a claim or template it names is unknown, or the claim cannot be used
 * yet.  lk NULL (the webhook, which does not watch claims): claims are
 * left to the scheduler, and only the extended resources count.
 */
int dra_pod_gres(const json_t *pod, const struct dra_classes *,
    const struct dra_lookup *lk, char **gres, char **group, char **node,
    char *err, size_t errlen);

/*
 * Where a container's DRA-backed extended resources
 * (deviceclass.resource.kubernetes.io/CLASS) are read, the one rule for
 * counting them and for the claim made for them: its limits when they
 * name any, else its requests (borrowed; *field says which), or NULL.
 */
const json_t *dra_container_extended(const json_t *container,
    const char					 **field);

/*
 * What a pod's devices ask of a node, for choosing candidates before
 * Slurm does: {DeviceClass: {"count": devices, "where": the first request
 * of it, as messages name it, "tolerations": that request's device
 * tolerations, if any}}, of the mapped classes its claims (through
 * lk; NULL: none) and its app containers' DRA-backed extended resources
 * name.  A new object, empty when it asks for none; what cannot be read
 * is left out (dra_pod_gres refuses it).
 */
json_t *dra_pod_needs(const json_t *pod, const struct dra_classes *,
    const struct dra_lookup	   *lk);
/*
 * How many devices of class k (its driver, with the attributes it asks)
 * node's ResourceSlices publish, of each pool's newest generation, that
 * carry no NoSchedule or NoExecute taint, of their own or from one of
 * rules (DeviceTaintRules; NULL: none), that the request's tolerations
 * (exactly.tolerations; NULL: none) do not tolerate.  *taint (if not
 * NULL): the first such taint of one of them (borrowed), or NULL.
 */
int dra_node_devices(const json_t *slices, const struct dra_class *k,
    const char *node, const json_t *rules, const json_t *tolerations,
    const json_t **taint);
/*
 * The first NoSchedule/NoExecute taint on device dev (of driver and pool)
 * that tolerations do not tolerate: its own, or a rule's that selects it
 * (spec.deviceSelector's driver, pool, device; unset: any).  Or NULL.
 */
const json_t *dra_device_untolerated(const json_t *dev, const char *driver,
    const char *pool, const json_t *rules, const json_t *tolerations);

/*
 * Do two of a gang's pods name the same ResourceClaim, not their PodGroup's
 * (through lk; NULL: none)?  -1 with err then: one claim shared by pods
 * Slurm may place apart cannot be one job's GRES.
 */
int dra_gang_shared(json_t *const *pods, size_t n, const struct dra_lookup *lk,
    char *err, size_t errlen);

/*
 * The ResourceClaim a pod's resourceClaims entry uses: resourceClaimName,
 * or for a template the name kube-controller-manager recorded in the
 * pod's status.resourceClaimStatuses (NULL while it has not).  Borrowed.
 */
const char *dra_entry_claim(const json_t *pod, const json_t *entry);

/*
 * Parses a task's GRES share ("gpu:2(IDX:0-1)", "gpu:a100:1(IDX:3)") into
 * its name[:type] (name, namelen) and indices; the count of indices, or -1.
 */
int dra_gres_indices(const char *share, char *name, size_t namelen, long *idx,
    size_t max);

/*
 * A claim's status.allocation for a pod placed on Kubernetes node node:
 * each request's count devices are the node's devices (slices: the
 * ResourceSlices of that node) of the class's driver whose index
 * attribute is the next of idx[*used..] (*used advances).  The class's
 * configs (FromClass) and the claim's (FromClaim) follow, as
 * kube-scheduler's allocator writes them.  NULL with err when a device is
 * not published.
 */
json_t *dra_allocation(const json_t *claim_spec, const json_t *class_objs,
    const struct dra_classes *, const json_t *slices, const char *node,
    const long *idx, size_t nidx, size_t *used, char *err, size_t errlen);

/*
 * Does an allocation (dra_allocation's) give a device with
 * bindingConditions (KEP-5007: usable once its driver says so)?
 */
int dra_allocation_waits(const json_t *alloc);

enum dra_binding {
	DRA_BINDING_READY,  /* no device waits: the Binding may be made */
	DRA_BINDING_WAIT,   /* a device's bindingConditions are not all True */
	DRA_BINDING_FAILED, /* one of its bindingFailureConditions is True */
	DRA_BINDING_TIMEOUT /* still waiting timeout_s after the allocation */
};
/*
 * May a pod be bound with claim's devices, as kube-scheduler's PreBind
 * decides: by the conditions of status.devices against each allocated
 * device's bindingConditions and bindingFailureConditions, and against
 * status.allocation.allocationTimestamp (now: epoch seconds).  Anything but
 * READY says in why which device and condition.
 */
enum dra_binding dra_claim_binding(const json_t *claim, int64_t now,
    int timeout_s, char *why, size_t len);

#endif /* DRA_H */
