/*
 * The ResourceClaims of a pod, allocated from Slurm's choice before the pod
 * is bound, as kube-scheduler's DynamicResources plugin does it (KEP-4381:
 * "custom schedulers should ... ensure that claims are allocated and
 * reserved before setting pod.spec.nodeName"): our finalizer
 * (resource.kubernetes.io/delete-protection, so that kube-controller-
 * manager deallocates the claim once no pod uses it), then status.allocation
 * and status.reservedFor in one status write, then the Binding.  A DRA-
 * backed extended resource gets the claim kube-scheduler would make for it
 * (KEP-5004: owned by the pod, annotated
 * resource.kubernetes.io/extended-resource-claim) and the pod's
 * status.extendedResourceClaimStatus.
 *
 * A device with bindingConditions (KEP-5007) holds the Binding until its
 * driver sets them True, and past deviceBindingTimeoutSeconds, or on a
 * failure condition, the claims are released and the job given back
 * (bind.c).  A claim of the pod's PodGroup (KEP-5729) is allocated once
 * for the gang's job, reserved for the PodGroup, and released when the
 * job is over (claims_group_release).
 *
 * claims_plan runs on the reconcile thread, which owns the caches: it
 * decides every write.  claims_write runs on a writepool thread, just before
 * the Binding of the same request (writepool.c), and makes them in order;
 * the Binding is made only if all of them were.  The rest answers the
 * reconcile thread about shared claims: which claims a job about to run
 * will allocate, which pods share a job's claims, and the joins in flight
 * (bridge.h); group.c and poll.c apply the rules.
 *
 * Threads: reconcile, writepool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "xmalloc.h"
#include "bridge.h"

#define CLAIMS_API "/apis/resource.k8s.io/v1/namespaces"

/* Does the pod name a ResourceClaim?  Its record, without decoding it. */
static int
claims_pod_names(const struct pod_entry *e)
{
	return (podrec_cold(e->rec) != NULL &&
	    strstr(podrec_cold(e->rec), "\"resourceClaims\"") != NULL);
}

/* The ResourceSlices of Kubernetes node knode (a new array). */
static json_t *
claims_node_slices(struct reconcile *r, const char *knode)
{
	json_t	   *out = json_array();
	const char *nn;
	size_t	    it = 0;
	void	   *v;

	while (map_next(r->slices, &it, NULL, &v)) {
		nn = json_string_value(k8s_obj_get(v, "spec.nodeName"));
		if (nn != NULL && strcmp(nn, knode) == 0)
			json_array_append(out, v);
	}
	return (out);
}

/* Every DeviceClass by name (a new object of borrowed values). */
static json_t *
claims_classes(struct reconcile *r)
{
	json_t	   *out = json_object();
	const char *k;
	size_t	    it = 0;
	void	   *v;

	while (map_next(r->deviceclasses, &it, &k, &v))
		json_object_set(out, k, v);
	return (out);
}

/* Is the claim allocated and reserved for pod uid already? */
static int
claims_reserved(const json_t *claim, const char *uid)
{
	const json_t *ref;
	size_t	      i;

	if (k8s_obj_get(claim, "status.allocation") == NULL)
		return (0);
	json_array_foreach (k8s_obj_get(claim, "status.reservedFor"), i, ref)
		if (json_is_string(json_object_get(ref, "uid")) &&
		    strcmp(json_string_value(json_object_get(ref, "uid")),
			uid) == 0)
			return (1);
	return (0);
}

/* Is claim the extended-resource claim of the pod of this uid? */
static int
claims_owned_by(const json_t *claim, const char *uid)
{
	const char   *a = k8s_obj_annotation(claim, DRA_EXTENDED_ANNOTATION);
	const json_t *ref;
	size_t	      i;

	if (a == NULL || strcmp(a, "true") != 0 || uid == NULL)
		return (0);
	json_array_foreach (k8s_obj_get(claim, "metadata.ownerReferences"), i,
	    ref)
		if (json_is_string(json_object_get(ref, "uid")) &&
		    strcmp(json_string_value(json_object_get(ref, "uid")),
			uid) == 0)
			return (1);
	return (0);
}

/*
 * The special claim of the pod's DRA-backed extended resources, made by an
 * earlier try of this bind (a retry, a restart), or NULL.  Borrowed.
 */
static const json_t *
claims_extended_made(struct reconcile *r, const json_t *pod)
{
	const char *uid = k8s_obj_uid(pod), *ns = k8s_obj_namespace(pod);
	size_t	    it = 0;
	void	   *v;

	while (map_next(r->claims, &it, NULL, &v)) {
		if (k8s_obj_namespace(v) == NULL ||
		    strcmp(k8s_obj_namespace(v), ns) != 0)
			continue;
		if (claims_owned_by(v, uid))
			return (v);
	}
	return (NULL);
}

/*
 * The claim and the pod-status mappings for a pod's DRA-backed extended
 * resources (KEP-5004), or NULL when it asks for none: one request per
 * container and resource, "container-I-request-J", read as dra.c counts
 * them (dra_container_extended).
 */
static json_t *
claims_extended_spec(const json_t *pod, json_t **mappings)
{
	static const char *const lists[] = { "spec.initContainers",
		"spec.containers" };
	const json_t		*c, *m;
	json_t			*reqs = json_array(), *v;
	const char		*key, *cname, *field = "";
	int64_t			 n;
	size_t			 l, i, j, ci = 0;

	*mappings = json_array();
	for (l = 0; l < 2; l++)
		json_array_foreach (k8s_obj_get(pod, lists[l]), i, c) {
			m = dra_container_extended(c, &field);
			cname = json_string_value(json_object_get(c, "name"));
			j = 0;
			json_object_foreach ((json_t *)(uintptr_t)m, key, v) {
				char rname[64];

				if (strncmp(key, DRA_CLASS_PREFIX,
					strlen(DRA_CLASS_PREFIX)) != 0 ||
				    !json_is_string(v) ||
				    k8s_quantity_value(json_string_value(v),
					&n) == -1 ||
				    n <= 0)
					continue;
				snprintf(rname, sizeof(rname),
				    "container-%zu-request-%zu", ci, j++);
				json_array_append_new(reqs,
				    json_pack("{s:s, s:{s:s, s:s, s:I}}",
					"name", rname, "exactly",
					"deviceClassName",
					key + strlen(DRA_CLASS_PREFIX),
					"allocationMode", "ExactCount", "count",
					(json_int_t)n));
				json_array_append_new(*mappings,
				    json_pack("{s:s?, s:s, s:s}",
					"containerName", cname, "resourceName",
					key, "requestName", rname));
			}
			ci++;
		}
	if (json_array_size(reqs) == 0) {
		json_decref(reqs);
		json_decref(*mappings);
		*mappings = NULL;
		return (NULL);
	}
	return (json_pack("{s:{s:o}}", "devices", "requests", reqs));
}

/* Notes that job jobid (id) holds claim's devices on snode. */
static void
claims_holder_note(struct reconcile *r, const json_t *claim, const char *id,
    const char *snode)
{
	char key[512];

	if (k8s_obj_uid(claim) == NULL)
		return;
	snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(claim),
	    k8s_obj_name(claim));
	json_object_set_new(r->claim_holders, key,
	    json_pack("{s:s, s:I, s:s}", "uid", k8s_obj_uid(claim), "job",
		(json_int_t)strtoul(id, NULL, 10), "node", snode));
}

int
claims_holder(struct reconcile *r, const json_t *claim, uint32_t *jobid,
    const char **snode)
{
	const json_t *memo;
	struct group *g;
	const char   *uid = k8s_obj_uid(claim), *ns = k8s_obj_namespace(claim);
	char	      key[512], id[16];

	snprintf(key, sizeof(key), "%s/%s", ns != NULL ? ns : "",
	    k8s_obj_name(claim) != NULL ? k8s_obj_name(claim) : "");
	memo = json_object_get(r->claim_holders, key);
	if (memo != NULL && uid != NULL &&
	    strcmp(json_string_value(json_object_get(memo, "uid")), uid) == 0) {
		*jobid = (uint32_t)json_integer_value(
		    json_object_get(memo, "job"));
		*snode = json_string_value(json_object_get(memo, "node"));
		return (0);
	}
	if (dra_claim_holder(claim, jobid, snode) == -1)
		return (-1);
	/* r->jobs as groups_by_job reads it (claims.c sits below groups.c). */
	snprintf(id, sizeof(id), "%u", *jobid);
	g = map_get(r->jobs, id);
	if (g != NULL &&
	    (ns == NULL || g->ns == NULL || strcmp(g->ns, ns) != 0))
		return (-1);
	if (g != NULL && k8s_obj_get(claim, "status.allocation") != NULL &&
	    uid != NULL)
		json_object_set_new(r->claim_holders, key,
		    json_pack("{s:s, s:I, s:s}", "uid", uid, "job",
			(json_int_t)*jobid, "node", *snode));
	return (0);
}

/*
 * Binding conditions (KEP-5007) of an allocated claim the pod uses: 0 when
 * its devices may be bound to; 1 with err (if the first) while one waits;
 * -3 with err when one failed or waited past the timeout.
 */
static int
claims_binding(struct reconcile *r, const json_t *claim, int *hold, char *err,
    size_t errlen)
{
	char why[400];

	switch (dra_claim_binding(claim, (int64_t)time(NULL),
	    r->conf->binding_timeout_s, why, sizeof(why))) {
	case DRA_BINDING_READY:
		return (0);
	case DRA_BINDING_WAIT:
		if (!*hold)
			snprintf(err, errlen, "%s", why);
		*hold = 1;
		return (0);
	default:
		snprintf(err, errlen, "%s", why);
		return (-3);
	}
}

/*
 * An allocation with devices that have bindingConditions: stamped, as
 * kube-scheduler does, so the timeout counts from it; the Binding waits.
 */
static void
claims_stamp(json_t *alloc, const char *cname, int *hold, char *err,
    size_t errlen)
{
	char ts[64];

	if (!dra_allocation_waits(alloc))
		return;
	wreq_condition_time(ts, sizeof(ts), 0);
	json_object_set_new(alloc, "allocationTimestamp", json_string(ts));
	if (!*hold)
		snprintf(err, errlen,
		    "ResourceClaim %.63s: its devices have binding conditions; "
		    "waiting for their driver",
		    cname);
	*hold = 1;
}

/*
 * One claim's write: allocation and reservation for ref (a consumer
 * reference, taken), our finalizer, and who holds its devices (the job
 * and Slurm node, for pods that share it).
 */
static json_t *
claims_write_of(const json_t *claim, json_t *alloc, json_t *ref,
    const char *jobid, const char *snode)
{
	return (json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:{s:o, s:[o]}}", "ns",
	    k8s_obj_namespace(claim), "name", k8s_obj_name(claim), "uid",
	    k8s_obj_uid(claim), "holder", ANN_SLURM_JOBID, jobid,
	    ANN_SLURM_NODE, snode, "status", "allocation", alloc, "reservedFor",
	    ref));
}

/* The consumer reference of a pod (new). */
static json_t *
claims_pod_ref(const json_t *pod)
{
	return (json_pack("{s:s, s:s, s:s}", "resource", "pods", "name",
	    k8s_obj_name(pod), "uid", k8s_obj_uid(pod)));
}

/* What claims_group_plan adds to, for one member of a round. */
struct claims_round {
	json_t *done; /* the claims planned this round (claims_plan's round) */
	json_t *out;  /* the member's writes */
	int    *hold;
	char   *err;
	size_t	errlen;
};

/*
 * A claim of the pod's PodGroup pg (KEP-5729), for job jobid on the
 * Slurm node a->node: allocated once, from the devices the job asked for
 * the PodGroup (lk's group share of the node's GRES), by the first member
 * planned (round notes it); the Binding of every member waits until it is
 * reserved for the PodGroup.  0, 1 (hold) or -1/-2 with err.
 */
static int
claims_group_plan(struct reconcile *r, const json_t *claim, const json_t *pg,
    uint32_t jobid, const char *knode, const struct assignment *a,
    struct claims_round *cr)
{
	json_t	   *round = cr->done, *out = cr->out;
	int	   *hold = cr->hold;
	char	   *err = cr->err;
	size_t	    errlen = cr->errlen;
	const char *snode;
	json_t	   *slices, *classes, *alloc;
	char	    gname[128], id[16], key[512];
	long	    idx[DRA_MAX_COUNT];
	size_t	    used = 0;
	uint32_t    holder;
	int	    nidx;

	snprintf(key, sizeof(key), "%s/%s", k8s_obj_namespace(claim),
	    k8s_obj_name(claim));
	if (claims_reserved(claim, k8s_obj_uid(pg))) {
		if (claims_holder(r, claim, &holder, &snode) == -1 ||
		    holder != jobid || strcmp(snode, a->node) != 0) {
			snprintf(err, errlen,
			    "ResourceClaim %.63s is reserved for PodGroup "
			    "%.63s with devices that do not serve Slurm job %u "
			    "on %.63s",
			    k8s_obj_name(claim), k8s_obj_name(pg), jobid,
			    a->node);
			return (-2);
		}
		return (claims_binding(r, claim, hold, err, errlen));
	}
	if (k8s_obj_get(claim, "status.allocation") != NULL) {
		snprintf(err, errlen,
		    "ResourceClaim %.63s of PodGroup %.63s is allocated, not "
		    "for the PodGroup",
		    k8s_obj_name(claim), k8s_obj_name(pg));
		return (-1);
	}
	if (!*hold)
		snprintf(err, errlen,
		    "ResourceClaim %.63s of PodGroup %.63s is being allocated",
		    k8s_obj_name(claim), k8s_obj_name(pg));
	*hold = 1;
	if (json_object_get(round, key) != NULL)
		return (0); /* another member writes it */
	if (a->group_gres == NULL ||
	    (nidx = dra_gres_indices(a->group_gres, gname, sizeof(gname), idx,
		 DRA_MAX_COUNT)) < 0) {
		snprintf(err, errlen,
		    "Slurm's allocation names no GRES index for the claims of "
		    "PodGroup %.63s",
		    k8s_obj_name(pg));
		return (-1);
	}
	slices = claims_node_slices(r, knode);
	classes = claims_classes(r);
	alloc = dra_allocation(json_object_get(claim, "spec"), classes,
	    r->conf->dra, slices, knode, idx, (size_t)nidx, &used, err, errlen);
	json_decref(slices);
	json_decref(classes);
	if (alloc == NULL)
		return (-1);
	claims_stamp(alloc, k8s_obj_name(claim), hold, err, errlen);
	snprintf(id, sizeof(id), "%u", jobid);
	json_array_append_new(out,
	    claims_write_of(claim, alloc,
		json_pack("{s:s, s:s, s:s, s:s}", "apiGroup",
		    "scheduling.k8s.io", "resource", "podgroups", "name",
		    k8s_obj_name(pg), "uid", k8s_obj_uid(pg)),
		id, a->node));
	claims_holder_note(r, claim, id, a->node);
	json_object_set_new(round, key, json_true());
	return (0);
}

/*
 * A shared claim's write: the pod joins its reservedFor, on the node its
 * holder's devices are on.  NULL with err when the claim no longer serves
 * the job Slurm allocated for the pod.
 */
static json_t *
claims_join_of(const json_t *claim, const json_t *pod,
    const struct assignment *a, const struct dra_lookup *lk, char *err,
    size_t errlen)
{
	const char *snode;
	char	    why[256];
	uint32_t    jobid;

	if (dra_claim_holder(claim, &jobid, &snode) == -1 ||
	    (lk->busy != NULL &&
		lk->busy(lk->arg, claim, why, sizeof(why)) == 1)) {
		snprintf(err, errlen,
		    "ResourceClaim %.63s is no longer held by a live job of "
		    "this install",
		    k8s_obj_name(claim));
		return (NULL);
	}
	if (strcmp(snode, a->node) != 0) {
		snprintf(err, errlen,
		    "ResourceClaim %.63s is held on Slurm node %.63s, and "
		    "Slurm placed the pod on %.63s",
		    k8s_obj_name(claim), snode, a->node);
		return (NULL);
	}
	/* The allocation it joins: a copy, for the writepool thread. */
	return (json_pack("{s:s, s:s, s:s, s:I, s:o, s:o}", "ns",
	    k8s_obj_namespace(claim), "name", k8s_obj_name(claim), "uid",
	    k8s_obj_uid(claim), "join", (json_int_t)jobid, "allocation",
	    json_deep_copy(k8s_obj_get(claim, "status.allocation")), "ref",
	    claims_pod_ref(pod)));
}

/*
 * A claim reserved for the pod by an earlier try of this bind (a retry, a
 * restart).  Allocated by the pod's own job: its devices are the next of
 * the pod's GRES indices (*used advances past them).  Shared with another
 * job's pod: that job must still hold it, on the pod's node, and the
 * Binding names it again (a join record with nothing to write).  0; -2
 * with err when the claim no longer serves this job.
 */
static int
claims_reserved_again(const json_t *claim, uint32_t jobid,
    const struct assignment *a, const struct dra_lookup *lk, size_t *used,
    json_t *out, char *err, size_t errlen)
{
	const char *snode;
	char	    why[256];
	uint32_t    holder;

	if (dra_claim_holder(claim, &holder, &snode) == -1)
		return (0);
	if (strcmp(snode, a->node) != 0 ||
	    (holder != jobid && lk->busy != NULL &&
		lk->busy(lk->arg, claim, why, sizeof(why)) == 1)) {
		snprintf(err, errlen,
		    "ResourceClaim %.63s is reserved for the pod with the "
		    "devices of Slurm job %u on %.63s, which do not serve this "
		    "job on %.63s",
		    k8s_obj_name(claim), holder, snode, a->node);
		return (-2);
	}
	if (holder == jobid)
		*used += json_array_size(
		    k8s_obj_get(claim, "status.allocation.devices.results"));
	else
		json_array_append_new(out,
		    json_pack("{s:I, s:b}", "join", (json_int_t)holder, "noop",
			1));
	return (0);
}

/* One member's claims being planned: what claims_plan's steps share. */
struct claims_plan {
	struct reconcile	*r;
	const struct pod_entry	*e;
	json_t			*pod;
	uint32_t		 jobid;
	char			 id[16]; /* the job id, as text */
	const char		*knode;
	const struct assignment *a;
	const struct dra_lookup *lk;
	json_t			*round;
	json_t			*out;	  /* the member's writes */
	json_t			*slices;  /* the node's */
	json_t			*classes; /* the DeviceClasses */
	json_t			*pg; /* the pod's PodGroup, for its claims */
	long			 idx[DRA_MAX_COUNT]; /* the GRES indices */
	int			 nidx; /* ... how many, or -1: none named */
	size_t			 used; /* indices the claims took so far */
	int			 hold; /* binding conditions: no Binding yet */
	char			*err;
	size_t			 errlen;
};

/* Slurm named no GRES index for the pod: -2, the job given up, or -1. */
static int
claims_no_indices(struct claims_plan *p)
{
	/* A job made to join a shared claim that has since been released. */
	if (p->a->gres == NULL) {
		snprintf(p->err, p->errlen,
		    "its job holds no device, and a claim it was to share "
		    "is free now");
		return (-2);
	}
	snprintf(p->err, p->errlen,
	    "Slurm's allocation names no GRES index for this pod (%.64s), so "
	    "its claims cannot be given the devices Slurm chose",
	    p->a->gres);
	return (-1);
}

/*
 * Entry i of the pod's spec.resourceClaims: its PodGroup's claim, one
 * reserved for the pod already (a retry or a restart), a shared one whose
 * devices another job holds (the pod joins it), or one given the devices
 * Slurm chose.  0, or claims_plan's error codes.
 */
static int
claims_plan_entry(struct claims_plan *p, size_t i, const json_t *entry)
{
	struct reconcile *r = p->r;
	const json_t	 *claim;
	const char	 *cname;
	json_t		 *alloc, *w;
	char		  key[512];
	int		  rc;

	if ((cname = dra_entry_claim(p->pod, entry)) == NULL) {
		snprintf(p->err, p->errlen,
		    "spec.resourceClaims[%zu]: its ResourceClaim is not made "
		    "yet",
		    i);
		return (-1);
	}
	snprintf(key, sizeof(key), "%s/%s", p->e->rec->ns, cname);
	if ((claim = map_get(r->claims, key)) == NULL) {
		snprintf(p->err, p->errlen,
		    "spec.resourceClaims[%zu]: ResourceClaim %.63s is gone", i,
		    cname);
		return (-1);
	}
	if (i == 0)
		p->pg = dra_pod_podgroup(p->pod, p->lk);
	if (dra_entry_podgroup(p->pg, entry)) {
		struct claims_round cr = { p->round, p->out, &p->hold, p->err,
			p->errlen };

		rc = claims_group_plan(r, claim, p->pg, p->jobid, p->knode,
		    p->a, &cr);
		return (rc < 0 ? rc : 0);
	}
	if (claims_reserved(claim, podrec_uid(p->e->rec))) {
		if ((rc = claims_reserved_again(claim, p->jobid, p->a, p->lk,
			 &p->used, p->out, p->err, p->errlen)) < 0 ||
		    (rc = claims_binding(r, claim, &p->hold, p->err,
			 p->errlen)) < 0)
			return (rc);
		return (0);
	}
	if (k8s_obj_get(claim, "status.allocation") != NULL) {
		if ((w = claims_join_of(claim, p->pod, p->a, p->lk, p->err,
			 p->errlen)) == NULL)
			return (-2);
		json_array_append_new(p->out, w);
		/* Its holder gives it back if its devices fail. */
		if (claims_binding(r, claim, &p->hold, p->err, p->errlen) < 0)
			p->hold = 1;
		return (0);
	}
	if (p->nidx < 0)
		return (claims_no_indices(p));
	if ((alloc = dra_allocation(json_object_get(claim, "spec"), p->classes,
		 r->conf->dra, p->slices, p->knode, p->idx, (size_t)p->nidx,
		 &p->used, p->err, p->errlen)) == NULL)
		return (-1);
	claims_stamp(alloc, cname, &p->hold, p->err, p->errlen);
	json_array_append_new(p->out,
	    claims_write_of(claim, alloc, claims_pod_ref(p->pod), p->id,
		p->a->node));
	claims_holder_note(r, claim, p->id, p->a->node);
	return (0);
}

/*
 * The claim the pod's extended resources (spec) become, and its write
 * (taking maps).  Made once, named after the pod's uid; a claim an
 * earlier try wrote is only checked again.  claims_plan's return.
 */
static int
claims_plan_extended(struct claims_plan *p, json_t *spec, json_t *maps)
{
	const struct pod_entry *e = p->e;
	const json_t	       *made;
	json_t		       *alloc, *w;
	char			key[512];
	int			rc;

	if (p->nidx < 0) {
		json_decref(maps);
		return (claims_no_indices(p));
	}
	if ((alloc = dra_allocation(spec, p->classes, p->r->conf->dra,
		 p->slices, p->knode, p->idx, (size_t)p->nidx, &p->used, p->err,
		 p->errlen)) == NULL) {
		json_decref(maps);
		return (-1);
	}
	made = claims_extended_made(p->r, p->pod);
	if (made != NULL && claims_reserved(made, podrec_uid(e->rec))) {
		json_decref(alloc);
		json_decref(maps);
		/* Written by an earlier try. */
		if ((rc = claims_binding(p->r, made, &p->hold, p->err,
			 p->errlen)) == 0)
			rc = p->hold;
		return (rc);
	}
	claims_stamp(alloc, "for its extended resources", &p->hold, p->err,
	    p->errlen);
	if (made != NULL)
		w = claims_write_of(made, alloc, claims_pod_ref(p->pod), p->id,
		    p->a->node);
	else {
		w = claims_write_of(p->pod, alloc, claims_pod_ref(p->pod),
		    p->id, p->a->node);
		json_object_del(w, "name");
		json_object_del(w, "uid");
		json_object_set_new(w, "ns", json_string(e->rec->ns));
		/*
		 * Named after the pod's uid, not generated: a retry after a
		 * failed write finds the claim it made (409) rather than
		 * making a second one.
		 */
		snprintf(key, sizeof(key), "%.200s-extended-resources-%.8s",
		    k8s_obj_name(p->pod), podrec_uid(e->rec));
		json_object_set_new(w, "create",
		    json_pack("{s:{s:s, s:s, s:{s:s}, s:[{s:s, s:s, "
			      "s:s, s:s, s:b, s:b}]}, s:O}",
			"metadata", "name", key, "namespace", e->rec->ns,
			"annotations", DRA_EXTENDED_ANNOTATION, "true",
			"ownerReferences", "apiVersion", "v1", "kind", "Pod",
			"name", k8s_obj_name(p->pod), "uid", podrec_uid(e->rec),
			"controller", 1, "blockOwnerDeletion", 1, "spec",
			spec));
	}
	json_object_set_new(w, "mappings", maps);
	json_array_append_new(p->out, w);
	return (p->hold);
}

int
claims_plan(struct reconcile *r, const struct pod_entry *e, uint32_t jobid,
    const char *knode, const struct assignment *a, const struct dra_lookup *lk,
    json_t *round, json_t **out, char *err, size_t errlen)
{
	struct claims_plan p = { .r = r,
		.e = e,
		.jobid = jobid,
		.knode = knode,
		.a = a,
		.lk = lk,
		.round = round,
		.nidx = -1,
		.errlen = errlen };
	json_t		  *spec, *maps = NULL;
	const json_t	  *entry;
	char		   gname[128];
	size_t		   i;
	int		   rc = 0;

	*out = NULL;
	p.err = err;
	/* Most pods ask for no device: no decoding for them. */
	if (!claims_pod_names(e) &&
	    (podrec_cold(e->rec) == NULL ||
		strstr(podrec_cold(e->rec), DRA_CLASS_PREFIX) == NULL))
		return (0);
	p.pod = podrec_json(e->rec);
	spec = claims_extended_spec(p.pod, &maps);
	if (json_array_size(k8s_obj_get(p.pod, "spec.resourceClaims")) == 0 &&
	    spec == NULL) {
		json_decref(p.pod);
		return (0);
	}
	snprintf(p.id, sizeof(p.id), "%u", jobid);
	if (a->gres != NULL)
		p.nidx = dra_gres_indices(a->gres, gname, sizeof(gname), p.idx,
		    DRA_MAX_COUNT);
	p.slices = claims_node_slices(r, knode);
	p.classes = claims_classes(r);
	p.out = json_array();
	json_array_foreach (k8s_obj_get(p.pod, "spec.resourceClaims"), i, entry)
		if ((rc = claims_plan_entry(&p, i, entry)) < 0)
			break;
	if (rc >= 0 && spec != NULL) {
		rc = claims_plan_extended(&p, spec, maps);
		maps = NULL;
	} else if (rc >= 0)
		rc = p.hold;
	if (rc < 0)
		json_decref(p.out);
	else
		*out = p.out;
	json_decref(spec);
	json_decref(maps);
	json_decref(p.slices);
	json_decref(p.classes);
	json_decref(p.pg);
	json_decref(p.pod);
	return (rc);
}

/* A claim (or its status) path: CLAIMS_API/NS/resourceclaims/NAME[SUB]. */
static void
claims_path(char *path, size_t len, const char *ns, const char *name,
    const char *sub)
{
	snprintf(path, len, CLAIMS_API "/%s/resourceclaims/%s%s", ns, name,
	    sub);
}

/*
 * The claim a DRA-backed extended resource becomes, made with our
 * finalizer and the holder's annotations (or found, made by an earlier
 * try, if the pod owns it); its name and uid go into cw.
 */
static int
claims_write_create(struct k8s_client *c, const struct wreq *w, json_t *cw,
    json_t *create, struct k8s_error *err)
{
	json_t *made = NULL;
	char	path[700];

	json_object_set_new(json_object_get(create, "metadata"), "finalizers",
	    json_pack("[s]", DRA_FINALIZER));
	json_object_update(k8s_obj_get(create, "metadata.annotations"),
	    json_object_get(cw, "holder"));
	snprintf(path, sizeof(path), CLAIMS_API "/%s/resourceclaims", w->ns);
	if (k8s_create(c, path, create, &made, err) == -1) {
		if (err->status != 409)
			return (-1);
		/* Made by an earlier try: ours if the pod owns it. */
		claims_path(path, sizeof(path), w->ns,
		    k8s_obj_str(create, "metadata.name"), "");
		if (k8s_get(c, path, &made, err) == -1)
			return (-1);
		if (!claims_owned_by(made, w->uid)) {
			json_decref(made);
			snprintf(err->text, sizeof(err->text),
			    "ResourceClaim %s exists and is not the pod's",
			    k8s_obj_str(create, "metadata.name"));
			return (-1);
		}
	}
	log_info("pod %s: made ResourceClaim %s for its extended resources",
	    w->pkey, k8s_obj_name(made));
	json_object_set_new(cw, "name", json_string(k8s_obj_name(made)));
	json_object_set_new(cw, "uid", json_string(k8s_obj_uid(made)));
	json_decref(made);
	return (0);
}

/*
 * Allocation and reservation in one status write.  A shared claim's
 * reservedFor gains the pod (a strategic merge would replace the list),
 * if the allocation is still the one the pod was placed for.
 */
static int
claims_write_status(struct k8s_client *c, json_t *cw, const char *ns,
    const char *name, const char *uid, struct k8s_error *err)
{
	json_t *patch;
	char	path[700];
	int	rc;

	claims_path(path, sizeof(path), ns, name, "/status");
	if (json_object_get(cw, "join") != NULL) {
		patch = json_pack("[{s:s, s:s, s:O}, {s:s, s:s, s:O}]", "op",
		    "test", "path", "/status/allocation", "value",
		    json_object_get(cw, "allocation"), "op", "add", "path",
		    "/status/reservedFor/-", "value",
		    json_object_get(cw, "ref"));
		rc = k8s_patch(c, path, K8S_PATCH_JSON, patch, NULL, err);
	} else {
		patch = json_pack("{s:{s:s}, s:O}", "metadata", "uid", uid,
		    "status", json_object_get(cw, "status"));
		rc = k8s_patch(c, path, K8S_PATCH_STRATEGIC, patch, NULL, err);
	}
	json_decref(patch);
	return (rc);
}

/*
 * The pod's status names the claim of its extended resources: the kubelet
 * finds it there.  An API server without the feature drops the field: no
 * Binding then.
 */
static int
claims_write_mappings(struct k8s_client *c, const struct wreq *w,
    const char *name, const json_t *mappings, struct k8s_error *err)
{
	json_t *patch, *pod = NULL;
	char	path[700];
	int	rc;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status",
	    w->ns, w->name);
	patch = json_pack("{s:{s:s}, s:{s:{s:s, s:O}}}", "metadata", "uid",
	    w->uid, "status", "extendedResourceClaimStatus",
	    "resourceClaimName", name, "requestMappings", mappings);
	rc = k8s_patch(c, path, K8S_PATCH_STRATEGIC, patch, &pod, err);
	json_decref(patch);
	if (rc == 0 &&
	    json_object_get(k8s_obj_get(pod, "status"),
		"extendedResourceClaimStatus") == NULL) {
		memset(err, 0, sizeof(*err));
		snprintf(err->text, sizeof(err->text),
		    "the API server dropped the pod's "
		    "status.extendedResourceClaimStatus: this cluster does "
		    "not back extended resources with Dynamic Resource "
		    "Allocation (DRAExtendedResource is off)");
		rc = -1;
	}
	json_decref(pod);
	return (rc);
}

/*
 * The writes of one claim, in kube-scheduler's order: the claim made (a
 * DRA-backed extended resource's) or our finalizer and the holder's
 * annotations put on it, then its status, then the pod's mappings.
 */
static int
claims_write_one(struct k8s_client *c, const struct wreq *w, json_t *cw,
    struct k8s_error *err)
{
	const char *ns = json_string_value(json_object_get(cw, "ns"));
	json_t	   *patch, *create, *holder;
	const char *name, *uid;
	char	    path[700];
	int	    rc;

	if (json_is_true(json_object_get(cw, "noop")))
		return (0); /* reserved already: only the Binding names it */
	if ((patch = json_object_get(cw, "release")) != NULL) {
		claims_path(path, sizeof(path), ns,
		    json_string_value(json_object_get(cw, "name")), "/status");
		return (k8s_patch(c, path, K8S_PATCH_JSON, patch, NULL, err));
	}
	holder = json_object_get(cw, "holder");
	if ((create = json_object_get(cw, "create")) != NULL) {
		if (claims_write_create(c, w, cw, create, err) == -1)
			return (-1);
		ns = w->ns;
	}
	name = json_string_value(json_object_get(cw, "name"));
	uid = json_string_value(json_object_get(cw, "uid"));
	if (ns == NULL || name == NULL || uid == NULL) {
		snprintf(err->text, sizeof(err->text),
		    "a claim without a name");
		return (-1);
	}
	if (create == NULL && holder != NULL) {
		claims_path(path, sizeof(path), ns, name, "");
		patch = json_pack("{s:{s:s, s:[s], s:O}}", "metadata", "uid",
		    uid, "finalizers", DRA_FINALIZER, "annotations", holder);
		rc = k8s_patch(c, path, K8S_PATCH_STRATEGIC, patch, NULL, err);
		json_decref(patch);
		if (rc == -1)
			return (-1);
	}
	if ((rc = claims_write_status(c, cw, ns, name, uid, err)) == -1 ||
	    json_object_get(cw, "mappings") == NULL)
		return (rc);
	return (claims_write_mappings(c, w, name,
	    json_object_get(cw, "mappings"), err));
}

int
claims_write(struct k8s_client *c, struct wreq *w)
{
	json_t *cw;
	size_t	i;

	json_array_foreach (w->claims, i, cw) {
		if (claims_write_one(c, w, cw, &w->err) == -1) {
			log_warnx("pod %s: ResourceClaim %s: %ld %s: %s; not "
				  "bound",
			    w->pkey,
			    json_string_value(json_object_get(cw, "name")) !=
				    NULL ?
				json_string_value(json_object_get(cw, "name")) :
				"(new)",
			    w->err.status, w->err.reason, w->err.text);
			return (-1);
		}
	}
	return (0);
}

void
claims_allocating(struct reconcile *r, const struct group *g,
    struct pod_entry *const *pods, size_t n)
{
	const json_t *entry, *claim;
	const char   *cname;
	json_t	     *pod;
	char	      key[512];
	size_t	      i, j;

	for (i = 0; i < n; i++) {
		if (!claims_pod_names(pods[i]))
			continue;
		pod = podrec_json(pods[i]->rec);
		json_array_foreach (k8s_obj_get(pod, "spec.resourceClaims"), j,
		    entry) {
			if ((cname = dra_entry_claim(pod, entry)) == NULL)
				continue;
			snprintf(key, sizeof(key), "%s/%s", pods[i]->rec->ns,
			    cname);
			claim = map_get(r->claims, key);
			if (claim != NULL &&
			    k8s_obj_get(claim, "status.allocation") == NULL)
				json_object_set_new(r->claim_allocators, key,
				    json_string(g->key));
		}
		json_decref(pod);
	}
}

void
claims_forget(struct reconcile *r, const struct group *g)
{
	const char *key, *owner;
	json_t	   *v, *tmp;

	json_object_foreach_safe (r->claim_allocators, tmp, key, v) {
		owner = json_string_value(v);
		if (owner != NULL && strcmp(owner, g->key) == 0)
			json_object_del(r->claim_allocators, key);
	}
}

size_t
claims_joiners(struct reconcile *r, uint32_t jobid, const char *gkey,
    void (*fn)(void *arg, struct pod_entry *, const json_t *claim), void *arg)
{
	struct pod_entry *e;
	const json_t	 *ref;
	const char	 *snode, *name, *uid;
	uint32_t	  holder;
	char		  key[512];
	size_t		  it = 0, i, n = 0;
	void		 *v;

	if (jobid == 0)
		return (0);
	while (map_next(r->claims, &it, NULL, &v)) {
		if (k8s_obj_get(v, "status.allocation") == NULL ||
		    claims_holder(r, v, &holder, &snode) == -1 ||
		    holder != jobid)
			continue;
		json_array_foreach (k8s_obj_get(v, "status.reservedFor"), i,
		    ref) {
			name = json_string_value(json_object_get(ref, "name"));
			uid = json_string_value(json_object_get(ref, "uid"));
			if (name == NULL || uid == NULL)
				continue;
			snprintf(key, sizeof(key), "%s/%s",
			    k8s_obj_namespace(v), name);
			e = map_get(r->pods, key);
			if (e == NULL || strcmp(podrec_uid(e->rec), uid) != 0 ||
			    e->state == PS_ENDED ||
			    (e->group != NULL && gkey != NULL &&
				strcmp(e->group, gkey) == 0))
				continue;
			n++;
			if (fn != NULL)
				fn(arg, e, v);
		}
	}
	return (n);
}

int
claims_named(struct reconcile *r, const struct group *g)
{
	const struct pod_entry *e;
	size_t			i;

	for (i = 0; i < g->members.n; i++) {
		e = map_get(r->pods, g->members.v[i]);
		if (e != NULL && claims_pod_names(e))
			return (1);
	}
	return (0);
}

void
claims_joins_inflight(struct reconcile *r, const json_t *claims, int delta)
{
	const json_t *cw;
	char	      id[24];
	json_int_t    n;
	size_t	      i;

	json_array_foreach (claims, i, cw) {
		if (!json_is_integer(json_object_get(cw, "join")) ||
		    json_is_true(json_object_get(cw, "noop")))
			continue;
		snprintf(id, sizeof(id), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(json_object_get(cw, "join")));
		n = json_integer_value(json_object_get(r->joins_inflight, id)) +
		    delta;
		if (n > 0)
			json_object_set_new(r->joins_inflight, id,
			    json_integer(n));
		else
			json_object_del(r->joins_inflight, id);
	}
}

size_t
claims_joins_pending(struct reconcile *r, uint32_t jobid)
{
	char id[16];

	snprintf(id, sizeof(id), "%u", jobid);
	return (
	    (size_t)json_integer_value(json_object_get(r->joins_inflight, id)));
}

int
claims_allocate(const json_t *claims)
{
	const json_t *cw;
	size_t	      i;

	json_array_foreach (claims, i, cw)
		if (json_object_get(cw, "holder") != NULL)
			return (1);
	return (0);
}

/*
 * The release of one claim job jobid allocated for pod and reserved for it
 * alone, as kube-scheduler deallocates one whose devices failed to bind:
 * its status emptied, if it is still the claim and the reservation the
 * cache showed.  NULL when it is not such a claim.
 */
static json_t *
claims_release_of(struct reconcile *r, const json_t *claim, const char *uid,
    uint32_t jobid)
{
	const json_t *rf = k8s_obj_get(claim, "status.reservedFor");
	const char   *snode;
	uint32_t      holder;

	if (json_array_size(rf) != 1 || !claims_reserved(claim, uid) ||
	    claims_holder(r, claim, &holder, &snode) == -1 || holder != jobid)
		return (NULL);
	return (json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, "
			  "s:O}, {s:s, s:s, s:{}}]}",
	    "ns", k8s_obj_namespace(claim), "name", k8s_obj_name(claim), "uid",
	    k8s_obj_uid(claim), "release", "op", "test", "path",
	    "/metadata/uid", "value", k8s_obj_uid(claim), "op", "test", "path",
	    "/status/reservedFor", "value", rf, "op", "replace", "path",
	    "/status", "value"));
}

json_t *
claims_release(struct reconcile *r, const struct pod_entry *e, uint32_t jobid)
{
	const json_t	   *entry, *claim;
	const char	   *cname, *uid = podrec_uid(e->rec);
	json_t		   *pod, *out = json_array(), *w, *pg;
	char		    key[512];
	size_t		    i;
	struct claims_asker ask = { r, NULL };
	struct dra_lookup   lk;

	lookups_claims_init(&ask, &lk);
	pod = podrec_json(e->rec);
	pg = dra_pod_podgroup(pod, &lk);
	json_array_foreach (k8s_obj_get(pod, "spec.resourceClaims"), i, entry) {
		if ((cname = dra_entry_claim(pod, entry)) == NULL)
			continue;
		snprintf(key, sizeof(key), "%s/%s", e->rec->ns, cname);
		/* A PodGroup's: claims_group_release, once the job ends. */
		if ((claim = map_get(r->claims, key)) != NULL &&
		    !dra_entry_podgroup(pg, entry) &&
		    (w = claims_release_of(r, claim, uid, jobid)) != NULL)
			json_array_append_new(out, w);
	}
	json_decref(pg);
	if ((claim = claims_extended_made(r, pod)) != NULL &&
	    (w = claims_release_of(r, claim, uid, jobid)) != NULL)
		json_array_append_new(out, w);
	json_decref(pod);
	if (json_array_size(out) == 0) {
		json_decref(out);
		return (NULL);
	}
	return (out);
}

json_t *
claims_group_release(struct reconcile *r, const struct group *g)
{
	const json_t *rf, *ref;
	const char   *snode, *pgname;
	json_t	     *rel, *out = NULL;
	uint32_t      holder;
	size_t	      it = 0;
	void	     *v;

	/* Only a gang's job allocates them (one adopted after a restart too). */
	if (g->jobid == 0 || !g->gang)
		return (NULL);
	while (map_next(r->claims, &it, NULL, &v)) {
		rf = k8s_obj_get(v, "status.reservedFor");
		ref = json_array_get(rf, 0);
		pgname = k8s_obj_str(ref, "name");
		if (json_array_size(rf) != 1 || pgname == NULL ||
		    k8s_obj_str(ref, "resource") == NULL ||
		    strcmp(k8s_obj_str(ref, "resource"), "podgroups") != 0 ||
		    claims_holder(r, v, &holder, &snode) == -1 ||
		    holder != g->jobid ||
		    (rel = claims_release_of(r, v, k8s_obj_str(ref, "uid"),
			 g->jobid)) == NULL)
			continue;
		log_info("group %s: slurm job %u is over: releasing "
			 "ResourceClaim %s of PodGroup %s",
		    g->key, g->jobid, k8s_obj_name(v), pgname);
		if (out == NULL)
			out = json_array();
		json_array_append_new(out,
		    json_pack("{s:s, s:s, s:o}", "ns", k8s_obj_namespace(v),
			"podgroup", pgname, "write", rel));
	}
	return (out);
}
