/*
 * What the scheduler keeps of a pod: the reconcile thread's entry for each
 * pod it schedules (podentry_*, at the end), and a compact record, built from the
 * decoded object on the informer's thread and then read-only.  The fields
 * the reconcile thread tests on every event are plain C fields; what only
 * translation, the gang rules and the placement rule read (the labels and
 * annotations we honour, the controller owner, the containers' resources,
 * restart policies and host ports, the deadline, the node selector,
 * affinity, tolerations, spread, overhead, pod-level resources and the
 * claim volumes) stays as one small compact JSON text, decoded again when
 * it is needed (podrec_json: at submission, and once more just before
 * the Binding).  Everything else of the pod (images, env, volumes other
 * than claims, probes, statuses, other labels and annotations) is
 * dropped at once.
 *
 * Threads: reconcile, informer, HTTP (podrec_stats).
 */
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"

/* Bytes and records alive, for /debug/memory. */
static atomic_llong podrec_live_bytes;
static atomic_llong podrec_live_count;

/* The label and annotation keys the scheduler reads (prefixes). */
static const char *const keep_labels[] = { "scheduling.x-k8s.io/",
	"jobset.sigs.k8s.io/", "leaderworkerset.sigs.k8s.io/",
	"batch.kubernetes.io/job-completion-", "scheduler.slinky.slurm.net/",
	"slinky.slurm.net/", "slurmjob.slinky.slurm.net/",
	"kueue.x-k8s.io/pod-group-", NULL };
static const char *const keep_annotations[] = { ANN_PREFIX,
	"scheduler.slinky.slurm.net/", "slinky.slurm.net/",
	"leaderworkerset.sigs.k8s.io/", "batch.kubernetes.io/job-completion-",
	"kueue.x-k8s.io/podset-", "kueue.x-k8s.io/pod-group-",
	"alpha.jobset.sigs.k8s.io/", NULL };

static int
podrec_kept(const char *key, const char *const *prefixes)
{
	size_t i;

	for (i = 0; prefixes[i] != NULL; i++)
		if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0)
			return (1);
	return (0);
}

/* A copy of the string members of obj whose keys are kept, or NULL. */
static json_t *
podrec_filter(const json_t *obj, const char *const *prefixes)
{
	json_t	   *out = NULL, *v;
	const char *k;

	json_object_foreach ((json_t *)(uintptr_t)obj, k, v) {
		if (!json_is_string(v) || !podrec_kept(k, prefixes))
			continue;
		if (out == NULL)
			out = json_object();
		json_object_set(out, k, v);
	}
	return (out);
}

/* The ports of a container that take a host port, or NULL. */
static json_t *
podrec_host_ports(const json_t *ports)
{
	json_t *out = NULL, *p;
	size_t	i;

	json_array_foreach (ports, i, p) {
		if (json_integer_value(json_object_get(p, "hostPort")) <= 0)
			continue;
		if (out == NULL)
			out = json_array();
		json_array_append_new(out,
		    json_pack("{s:O, s:O?, s:O?}", "hostPort",
			json_object_get(p, "hostPort"), "protocol",
			json_object_get(p, "protocol"), "hostIP",
			json_object_get(p, "hostIP")));
	}
	return (out);
}

/*
 * Of each container: its name (for messages), resources, restartPolicy
 * (a sidecar's, which sizes the pod) and host ports (the placement
 * rule's), nothing else.
 */
static json_t *
podrec_resources(const json_t *containers)
{
	json_t *out, *c, *res;
	size_t	i;

	if (!json_is_array(containers) || json_array_size(containers) == 0)
		return (NULL);
	out = json_array();
	json_array_foreach (containers, i, c) {
		res = json_object_get(c, "resources");
		json_array_append_new(out,
		    json_pack("{s:O?, s:O?, s:O?, s:o?}", "name",
			json_object_get(c, "name"), "resources", res,
			"restartPolicy", json_object_get(c, "restartPolicy"),
			"ports",
			podrec_host_ports(json_object_get(c, "ports"))));
	}
	return (out);
}

/*
 * The tolerations the placement rule reads: all but the managed-node
 * taint's (the tolerates bits keep it) and the not-ready and unreachable
 * ones every pod gets (no pod is placed on such a node), or NULL.
 */
static json_t *
podrec_tolerations(const json_t *tols)
{
	json_t	   *out = NULL, *t;
	const char *k;
	size_t	    i;

	json_array_foreach (tols, i, t) {
		k = json_string_value(json_object_get(t, "key"));
		if (k != NULL &&
		    (strcmp(k, MANAGED_TAINT_KEY) == 0 ||
			strcmp(k, "node.kubernetes.io/not-ready") == 0 ||
			strcmp(k, "node.kubernetes.io/unreachable") == 0))
			continue;
		if (out == NULL)
			out = json_array();
		json_array_append(out, t);
	}
	return (out);
}

/* The volumes that name a claim (their names and claims), or NULL. */
static json_t *
podrec_claim_volumes(const json_t *vols)
{
	json_t *out = NULL, *v, *c;
	size_t	i;

	json_array_foreach (vols, i, v) {
		if ((c = json_object_get(v, "persistentVolumeClaim")) == NULL &&
		    json_object_get(v, "ephemeral") == NULL)
			continue;
		if (out == NULL)
			out = json_array();
		json_array_append_new(out,
		    c != NULL ? json_pack("{s:O?, s:O}", "name",
				    json_object_get(v, "name"),
				    "persistentVolumeClaim", c) :
				json_pack("{s:O?, s:{}}", "name",
				    json_object_get(v, "name"), "ephemeral"));
	}
	return (out);
}

/* What the placement rule (fit.c) reads of the spec, into spec. */
static void
podrec_constraints(const json_t *pod, json_t *spec)
{
	static const char *const keep[] = { "nodeSelector", "affinity",
		"topologySpreadConstraints", "overhead", "resources",
		"hostNetwork", NULL };
	const json_t		*s = json_object_get(pod, "spec");
	json_t			*v;
	size_t			 i;

	for (i = 0; keep[i] != NULL; i++)
		if ((v = json_object_get(s, keep[i])) != NULL)
			json_object_set(spec, keep[i], v);
	if ((v = podrec_tolerations(json_object_get(s, "tolerations"))) != NULL)
		json_object_set_new(spec, "tolerations", v);
	if ((v = podrec_claim_volumes(json_object_get(s, "volumes"))) != NULL)
		json_object_set_new(spec, "volumes", v);
}

/* The controller owner reference: kind, name, uid, apiVersion. */
static json_t *
podrec_owner(const json_t *refs)
{
	json_t *ref;
	size_t	i;

	json_array_foreach (refs, i, ref)
		if (json_is_true(json_object_get(ref, "controller")))
			return (json_pack("[{s:O?, s:O?, s:O?, s:O?, s:b}]",
			    "apiVersion", json_object_get(ref, "apiVersion"),
			    "kind", json_object_get(ref, "kind"), "name",
			    json_object_get(ref, "name"), "uid",
			    json_object_get(ref, "uid"), "controller", 1));
	return (NULL);
}

/* The compact JSON of what only translation and grouping read, or NULL. */
static char *
podrec_make_cold(const json_t *pod)
{
	json_t *md = json_object(), *spec = json_object(), *top, *v;
	char   *s = NULL;

	if ((v = podrec_filter(k8s_obj_get(pod, "metadata.labels"),
		 keep_labels)) != NULL)
		json_object_set_new(md, "labels", v);
	if ((v = podrec_filter(k8s_obj_get(pod, "metadata.annotations"),
		 keep_annotations)) != NULL)
		json_object_set_new(md, "annotations", v);
	if ((v = podrec_owner(k8s_obj_get(pod, "metadata.ownerReferences"))) !=
	    NULL)
		json_object_set_new(md, "ownerReferences", v);
	if ((v = podrec_resources(k8s_obj_get(pod, "spec.containers"))) != NULL)
		json_object_set_new(spec, "containers", v);
	if ((v = podrec_resources(k8s_obj_get(pod, "spec.initContainers"))) !=
	    NULL)
		json_object_set_new(spec, "initContainers", v);
	if ((v = k8s_obj_get(pod, "spec.activeDeadlineSeconds")) != NULL)
		json_object_set(spec, "activeDeadlineSeconds", v);
	podrec_constraints(pod, spec);
	/* Dynamic Resource Allocation: the claims the pod names. */
	if ((v = k8s_obj_get(pod, "spec.resourceClaims")) != NULL)
		json_object_set(spec, "resourceClaims", v);
	/* Kubernetes' own gang (GenericWorkload): the PodGroup it names. */
	if ((v = k8s_obj_get(pod, "spec.schedulingGroup")) != NULL)
		json_object_set(spec, "schedulingGroup", v);
	top = json_object();
	/* The claims kube-controller-manager made from its templates. */
	if ((v = k8s_obj_get(pod, "status.resourceClaimStatuses")) != NULL)
		json_object_set_new(top, "status",
		    json_pack("{s:O}", "resourceClaimStatuses", v));
	if (json_object_size(md) > 0)
		json_object_set(top, "metadata", md);
	if (json_object_size(spec) > 0)
		json_object_set(top, "spec", spec);
	if (json_object_size(top) > 0)
		s = json_dumps(top, JSON_COMPACT);
	json_decref(top);
	json_decref(md);
	json_decref(spec);
	return (s);
}

static uint32_t
podrec_jobid(const char *s)
{
	char	     *end;
	unsigned long id;

	if (s == NULL)
		return (0);
	id = strtoul(s, &end, 10);
	return (*end == '\0' && id > 0 && id < UINT32_MAX ? (uint32_t)id : 0);
}

static enum pod_phase
podrec_phase(const char *s)
{
	if (s == NULL || strcmp(s, "Pending") == 0)
		return (PHASE_PENDING);
	if (strcmp(s, "Running") == 0)
		return (PHASE_RUNNING);
	if (strcmp(s, "Succeeded") == 0)
		return (PHASE_SUCCEEDED);
	if (strcmp(s, "Failed") == 0)
		return (PHASE_FAILED);
	return (PHASE_UNKNOWN);
}

/*
 * How the pod's containers ended, as Slurm records a job's: the exit code
 * of the first container that ended with one other than 0 (and the signal
 * that ended it, if the runtime says), else 0 once any has ended, else -1.
 * The app containers come first (a sidecar killed at the end must not
 * hide their code); then init containers, as a pod whose init container
 * failed never ran.
 */
static void
podrec_exit(const json_t *pod, struct podrec *r)
{
	static const char *const lists[] = { "status.containerStatuses",
		"status.initContainerStatuses" };
	const json_t		*cs, *t;
	json_int_t		 code, sig;
	size_t			 i, l;

	r->exit_code = -1;
	r->exit_signal = 0;
	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		json_array_foreach (k8s_obj_get(pod, lists[l]), i, cs) {
			t = k8s_obj_get(cs, "state.terminated");
			if (!json_is_object(t))
				continue;
			code = json_integer_value(
			    json_object_get(t, "exitCode"));
			sig = json_integer_value(json_object_get(t, "signal"));
			if (code < 0 || code > 255)
				code = 255;
			if (r->exit_code <= 0)
				r->exit_code = (int16_t)code;
			if (code != 0) {
				r->exit_signal = sig > 0 && sig < 128 ?
				    (uint8_t)sig :
				    0;
				return;
			}
		}
}

/* Copies s to *p, moving *p past it: where it went in r's buf. */
static uint32_t
podrec_copy(const struct podrec *r, char **p, const char *s)
{
	char  *d = *p;
	size_t n = strlen(s) + 1;

	memcpy(d, s, n);
	*p += n;
	return ((uint32_t)(d - r->buf));
}

/*
 * How long the pod tolerates a NoExecute taint key, as Kubernetes' taint
 * manager reads it (pkg/controller/tainteviction, getMinTolerationTime):
 * no matching toleration 0, the least tolerationSeconds of those that
 * match (0 or less: 0), none of them with seconds -1 (forever).
 */
static int32_t
podrec_toleration_s(const json_t *pod, const char *key)
{
	const json_t *t, *secs;
	const char   *k, *op, *effect, *value;
	json_int_t    s, min = -1;
	size_t	      i;
	int	      matched = 0;

	json_array_foreach (k8s_obj_get(pod, "spec.tolerations"), i, t) {
		k = json_string_value(json_object_get(t, "key"));
		op = json_string_value(json_object_get(t, "operator"));
		effect = json_string_value(json_object_get(t, "effect"));
		if (effect != NULL && *effect != '\0' &&
		    strcmp(effect, "NoExecute") != 0)
			continue;
		value = json_string_value(json_object_get(t, "value"));
		/* An empty key with Exists tolerates every taint. */
		if ((k == NULL || *k == '\0') ?
			(op == NULL || strcmp(op, "Exists") != 0) :
			strcmp(k, key) != 0)
			continue;
		/* Equal (the default) matches these taints' empty value only. */
		if ((op == NULL || strcmp(op, "Equal") == 0) && value != NULL &&
		    *value != '\0')
			continue;
		matched = 1;
		if (!json_is_integer(
			secs = json_object_get(t, "tolerationSeconds")))
			continue;
		if ((s = json_integer_value(secs)) <= 0)
			return (0);
		if (min == -1 || s < min)
			min = s;
	}
	if (!matched)
		return (0);
	return (min > INT32_MAX ? INT32_MAX : (int32_t)min);
}

struct podrec *
podrec_new(const json_t *pod)
{
	struct podrec *r;
	const char    *ns = k8s_obj_namespace(pod), *name = k8s_obj_name(pod);
	const char    *uid = k8s_obj_uid(pod), *node;
	const char    *rv = k8s_obj_str(pod, "metadata.resourceVersion");
	const json_t  *v;
	char	      *cold, *p;
	size_t	       n;

	if (ns == NULL || name == NULL || *ns == '\0' || *name == '\0')
		return (NULL);
	if (uid == NULL)
		uid = "";
	if (rv == NULL)
		rv = "";
	cold = podrec_make_cold(pod);
	n = strlen(ns) + strlen(name) + 2 + strlen(uid) + 1 + strlen(rv) + 1 +
	    (cold != NULL ? strlen(cold) + 1 : 0);
	r = xcalloc(1, sizeof(*r) + n);
	p = r->buf;
	r->key = p;
	p += snprintf(p, n, "%s/%s", ns, name) + 1;
	r->uid_at = podrec_copy(r, &p, uid);
	r->rv_at = podrec_copy(r, &p, rv);
	r->cold_at = cold != NULL ? podrec_copy(r, &p, cold) : 0;
	free(cold);
	r->ns = intern_get(ns);
	node = k8s_obj_str(pod, "spec.nodeName");
	r->node = node != NULL && *node != '\0' ? intern_get(node) : NULL;
	r->sched = intern_get(k8s_obj_str(pod, "spec.schedulerName"));
	r->slurm_node = intern_get(k8s_obj_annotation(pod, ANN_SLURM_NODE));
	r->created = k8s_time_parse(
	    k8s_obj_str(pod, "metadata.creationTimestamp"));
	r->delete_at = k8s_time_parse(
	    k8s_obj_str(pod, "metadata.deletionTimestamp"));
	/* No grace period given counts as none, as it always has. */
	r->grace_zero = json_integer_value(k8s_obj_get(pod,
			    "metadata.deletionGracePeriodSeconds")) == 0;
	/* The API server defaults it to 30; -1: not given. */
	v = k8s_obj_get(pod, "spec.terminationGracePeriodSeconds");
	r->grace_s = json_is_integer(v) && json_integer_value(v) >= 0 &&
		json_integer_value(v) <= INT32_MAX ?
	    (int32_t)json_integer_value(v) :
	    -1;
	r->tol_notready = podrec_toleration_s(pod,
	    "node.kubernetes.io/not-ready");
	r->tol_unreachable = podrec_toleration_s(pod,
	    "node.kubernetes.io/unreachable");
	r->label_jobid = podrec_jobid(k8s_obj_label(pod, LABEL_JOBID));
	r->ann_jobid = podrec_jobid(k8s_obj_annotation(pod, ANN_SLURM_JOBID));
	r->index = workload_member_index(pod);
	r->phase = (uint8_t)podrec_phase(k8s_obj_str(pod, "status.phase"));
	podrec_exit(pod, r);
	r->finalizer = k8s_obj_has_finalizer(pod, FINALIZER);
	r->tolerates = (uint8_t)(translate_tolerates(pod, "NoSchedule") |
	    translate_tolerates(pod, "NoExecute") << 1);
	r->gated = json_array_size(k8s_obj_get(pod, "spec.schedulingGates")) >
	    0;
	atomic_fetch_add(&podrec_live_bytes, (long long)malloc_usable_size(r));
	atomic_fetch_add(&podrec_live_count, 1);
	return (r);
}

void
podrec_free(struct podrec *r)
{
	if (r == NULL)
		return;
	atomic_fetch_sub(&podrec_live_bytes, (long long)malloc_usable_size(r));
	atomic_fetch_sub(&podrec_live_count, 1);
	intern_put(r->ns);
	intern_put(r->node);
	intern_put(r->sched);
	intern_put(r->slurm_node);
	free(r);
}

json_t *
podrec_json(const struct podrec *r)
{
	static const char *const phases[] = { "Pending", "Running", "Succeeded",
		"Failed", "Unknown" };
	json_t			*pod = NULL, *md, *spec, *tols;

	if (podrec_cold(r) != NULL)
		pod = json_loads(podrec_cold(r), 0, NULL);
	if (pod == NULL)
		pod = json_object();
	json_object_set_new(pod, "apiVersion", json_string("v1"));
	json_object_set_new(pod, "kind", json_string("Pod"));
	if ((md = json_object_get(pod, "metadata")) == NULL) {
		md = json_object();
		json_object_set_new(pod, "metadata", md);
	}
	json_object_set_new(md, "name", json_string(podrec_name(r)));
	json_object_set_new(md, "namespace", json_string(r->ns));
	json_object_set_new(md, "uid", json_string(podrec_uid(r)));
	json_object_set_new(md, "resourceVersion", json_string(podrec_rv(r)));
	if ((spec = json_object_get(pod, "spec")) == NULL) {
		spec = json_object();
		json_object_set_new(pod, "spec", spec);
	}
	if (r->node != NULL)
		json_object_set_new(spec, "nodeName", json_string(r->node));
	if (r->sched != NULL)
		json_object_set_new(spec, "schedulerName",
		    json_string(r->sched));
	if (r->tolerates) {
		/* The cold part's tolerations, and the managed taint's. */
		if (!json_is_array(
			tols = json_object_get(spec, "tolerations"))) {
			tols = json_array();
			json_object_set_new(spec, "tolerations", tols);
		}
		if (r->tolerates & 1)
			json_array_append_new(tols,
			    json_pack("{s:s, s:s, s:s}", "key",
				MANAGED_TAINT_KEY, "operator", "Exists",
				"effect", "NoSchedule"));
		if (r->tolerates & 2)
			json_array_append_new(tols,
			    json_pack("{s:s, s:s, s:s}", "key",
				MANAGED_TAINT_KEY, "operator", "Exists",
				"effect", "NoExecute"));
	}
	if (r->gated)
		json_object_set_new(spec, "schedulingGates",
		    json_pack("[{s:s}]", "name", "gated"));
	if (!json_is_object(json_object_get(pod, "status")))
		json_object_set_new(pod, "status", json_object());
	json_object_set_new(json_object_get(pod, "status"), "phase",
	    json_string(phases[r->phase]));
	return (pod);
}

json_t *
podrec_ref(const struct podrec *r)
{
	return (
	    json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "apiVersion", "v1",
		"kind", "Pod", "metadata", "name", podrec_name(r), "namespace",
		r->ns, "uid", podrec_uid(r), "resourceVersion", podrec_rv(r)));
}

void
podrec_stats(long long *count, long long *bytes)
{
	*count = atomic_load(&podrec_live_count);
	*bytes = atomic_load(&podrec_live_bytes);
}

const char *
podrec_name(const struct podrec *r)
{
	return (r->key + strlen(r->ns) + 1);
}

const char *
podrec_uid(const struct podrec *r)
{
	return (r->buf + r->uid_at);
}

const char *
podrec_rv(const struct podrec *r)
{
	return (r->buf + r->rv_at);
}

const char *
podrec_cold(const struct podrec *r)
{
	return (r->cold_at != 0 ? r->buf + r->cold_at : NULL);
}

/*
 * The reconcile thread's pod entries: what the bridge knows about each pod
 * it schedules (owned by the pods map), its age and whether it is over.
 * Pure but for the clocks.
 */
void
podentry_free(void *p)
{
	struct pod_entry *e = p;

	if (e == NULL)
		return;
	podrec_free(e->rec);
	intern_put(e->bound_node);
	intern_put(e->beyond);
	intern_put(e->slurm_node);
	free(e->cond_text);
	free(e);
}

double
podentry_epoch(void)
{
	return (clock_seconds(CLOCK_REALTIME));
}

double
podentry_age(const struct pod_entry *e)
{
	double created = (double)e->rec->created;
	double now = podentry_epoch();

	if (created == 0 || e->seen_at - created < 2.0)
		return (now - e->seen_at);
	return (now - created);
}

/* Terminal, or deleted and past its grace period. */
int
podentry_over(const struct pod_entry *e)
{
	if (e->rec->phase == PHASE_SUCCEEDED || e->rec->phase == PHASE_FAILED)
		return (1);
	/*
	 * Deleted: over once the node confirmed (grace shortened to 0), the
	 * grace period ran out, or at once if it never ran anywhere.
	 */
	if (e->rec->delete_at != 0 &&
	    (e->state == PS_UNBOUND || time(NULL) >= e->rec->delete_at ||
		e->rec->grace_zero))
		return (1);
	return (0);
}
