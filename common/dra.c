/*
 * Dynamic Resource Allocation as Slurm GRES: which device requests a GRES
 * can express, and the allocation that follows Slurm's choice (dra.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "xmalloc.h"
#include "dra.h"
#include "policy.h"

/* Requests in a claim, and entries in a pod's resourceClaims, at most. */
#define DRA_MAX_ENTRIES 32

static void
dra_class_add(struct dra_classes *c, const char *name, const char *driver,
    const char *gres, const char *pattern, json_t *attributes)
{
	struct dra_class *k;

	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	k = &c->v[c->n++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(name);
	k->driver = xstrdup(driver);
	k->gres = xstrdup(gres);
	k->index_attr = xstrdup("index");
	k->name_pattern = pattern != NULL ? xstrdup(pattern) : NULL;
	k->attributes = attributes;
}

void
dra_classes_defaults(struct dra_classes *c)
{
	c->v = NULL;
	c->n = 0;
	c->extended_off = 0;
	/*
	 * NVIDIA's driver: whole GPUs are type gpu (MIG devices are mig),
	 * named gpu-MINOR; it publishes no index attribute from v25.8.
	 */
	dra_class_add(c, "gpu.nvidia.com", "gpu.nvidia.com", "gpu",
	    "gpu-{index}", json_pack("{s:s}", "type", "gpu"));
	/* The DRA example driver (sigs.k8s.io/dra-example-driver). */
	dra_class_add(c, "gpu.example.com", "gpu.example.com", "gpu", NULL,
	    NULL);
}

void
dra_classes_cleanup(struct dra_classes *c)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].name);
		free(c->v[i].driver);
		free(c->v[i].gres);
		free(c->v[i].index_attr);
		free(c->v[i].name_pattern);
		for (j = 0; c->v[i].names != NULL && c->v[i].names[j] != NULL;
		     j++)
			free(c->v[i].names[j]);
		free(c->v[i].names);
		json_decref(c->v[i].attributes);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

const struct dra_class *
dra_class_find(const struct dra_classes *c, const char *name)
{
	size_t i;

	for (i = 0; c != NULL && name != NULL && i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0)
			return (&c->v[i]);
	return (NULL);
}

/*
 * The refusal of a class no site mapped: what (the field) names it, and
 * the message lists the classes that are mapped.  Returns -1.
 */
static int
dra_unmapped(const struct dra_classes *c, const char *what, const char *cls,
    char *err, size_t errlen)
{
	char   mapped[256];
	size_t i, o = 0;

	mapped[0] = '\0';
	for (i = 0; c != NULL && i < c->n && o < sizeof(mapped); i++)
		o += (size_t)snprintf(mapped + o, sizeof(mapped) - o, "%s%s",
		    i > 0 ? ", " : "", c->v[i].name);
	snprintf(err, errlen,
	    "%s: DeviceClass %.63s is not mapped to a Slurm GRES (mapped: "
	    "%s); a site admin maps it in the config's deviceClasses",
	    what, cls != NULL ? cls : "(none)", o > 0 ? mapped : "none");
	return (-1);
}

/* Are a and b both absent, or equal? */
static int
dra_same(const json_t *a, const json_t *b)
{
	return ((a == NULL && b == NULL) || json_equal(a, b));
}

int
dra_entry_podgroup(const json_t *pg, const json_t *entry)
{
	const json_t *c;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pg, "spec.resourceClaims"), i, c)
		if (json_object_get(c, "name") != NULL &&
		    dra_same(json_object_get(c, "name"),
			json_object_get(entry, "name")) &&
		    dra_same(json_object_get(c, "resourceClaimName"),
			json_object_get(entry, "resourceClaimName")) &&
		    dra_same(json_object_get(c, "resourceClaimTemplateName"),
			json_object_get(entry, "resourceClaimTemplateName")))
			return (1);
	return (0);
}

json_t *
dra_pod_podgroup(const json_t *pod, const struct dra_lookup *lk)
{
	const char *name = k8s_obj_str(pod,
	    "spec.schedulingGroup.podGroupName");

	if (lk == NULL || name == NULL)
		return (NULL);
	return (lk->fn(lk->arg, DRA_PODGROUP, k8s_obj_namespace(pod), name));
}

int
dra_gang_shared(json_t *const *pods, size_t n, const struct dra_lookup *lk,
    char *err, size_t errlen)
{
	const json_t *e, *f;
	const char   *name, *other;
	json_t	     *pg;
	size_t	      i, j, a, b;

	for (i = 0; i < n; i++) {
		pg = dra_pod_podgroup(pods[i], lk);
		json_array_foreach (k8s_obj_get(pods[i], "spec.resourceClaims"),
		    a, e) {
			/* Its PodGroup's: shared by design (KEP-5729). */
			name = dra_entry_podgroup(pg, e) ?
			    NULL :
			    json_string_value(
				json_object_get(e, "resourceClaimName"));
			for (j = i + 1; name != NULL && j < n; j++)
				json_array_foreach (k8s_obj_get(pods[j],
							"spec.resourceClaims"),
				    b, f) {
					other = json_string_value(
					    json_object_get(f,
						"resourceClaimName"));
					if (other == NULL ||
					    strcmp(name, other) != 0)
						continue;
					snprintf(err, errlen,
					    "ResourceClaim %.63s is named by "
					    "pods %.63s and %.63s of the gang: "
					    "the pods of one gang cannot share "
					    "a claim (Slurm may place them "
					    "apart); give each pod a claim of "
					    "its own, e.g. from a "
					    "ResourceClaimTemplate",
					    name, k8s_obj_name(pods[i]),
					    k8s_obj_name(pods[j]));
					json_decref(pg);
					return (-1);
				}
		}
		json_decref(pg);
	}
	return (0);
}

const char *
dra_entry_claim(const json_t *pod, const json_t *entry)
{
	const char   *name, *claim;
	const json_t *st;
	size_t	      i;

	if ((claim = json_string_value(
		 json_object_get(entry, "resourceClaimName"))) != NULL)
		return (claim);
	name = json_string_value(json_object_get(entry, "name"));
	json_array_foreach (k8s_obj_get(pod, "status.resourceClaimStatuses"), i,
	    st) {
		if (name != NULL &&
		    json_string_value(json_object_get(st, "name")) != NULL &&
		    strcmp(json_string_value(json_object_get(st, "name")),
			name) == 0)
			return (json_string_value(
			    json_object_get(st, "resourceClaimName")));
	}
	return (NULL);
}

/* Adds count devices of GRES gres to the pod's total; -1 on a mix. */
static int
dra_add(const char **gname, int64_t *total, const char *gres, int64_t count)
{
	if (*gname != NULL && strcmp(*gname, gres) != 0)
		return (-1);
	*gname = gres;
	*total += count;
	return (0);
}

/*
 * Checks what one request (or firstAvailable subrequest) asks, ex (its
 * exactly, or the subrequest itself; field: how messages name it), as a
 * GRES can give it: *k its class's mapping, *count its devices.  0, or
 * -1 with err.
 */
static int
dra_exactly_check(const json_t *ex, const char *field,
    const struct dra_classes *classes, const struct dra_class **k,
    json_int_t *count, char *err, size_t errlen)
{
	const char   *cname, *mode;
	const json_t *v;

	cname = json_string_value(json_object_get(ex, "deviceClassName"));
	if ((*k = dra_class_find(classes, cname)) == NULL)
		return (dra_unmapped(classes, field, cname, err, errlen));
	mode = json_string_value(json_object_get(ex, "allocationMode"));
	if (mode != NULL && strcmp(mode, "ExactCount") != 0) {
		snprintf(err, errlen,
		    "%s: allocationMode %.16s is not supported: Slurm "
		    "allocates a count of GRES; use allocationMode ExactCount "
		    "with a count",
		    field, mode);
		return (-1);
	}
	if (json_array_size(json_object_get(ex, "selectors")) > 0) {
		snprintf(err, errlen,
		    "%s: selectors are not supported: Slurm chooses devices "
		    "by GRES name and type, not by attributes; ask for a "
		    "DeviceClass mapped to the GRES type you need",
		    field);
		return (-1);
	}
	if (json_is_true(json_object_get(ex, "adminAccess"))) {
		snprintf(err, errlen,
		    "%s: adminAccess is not supported: it would reach "
		    "devices Slurm gave other jobs",
		    field);
		return (-1);
	}
	if (json_object_get(ex, "capacity") != NULL) {
		snprintf(err, errlen,
		    "%s: capacity (sharing a device) is not supported: a "
		    "Slurm GRES is given whole",
		    field);
		return (-1);
	}
	v = json_object_get(ex, "count");
	*count = v == NULL ? 1 : json_integer_value(v);
	if ((v != NULL && !json_is_integer(v)) || *count < 1 ||
	    *count > DRA_MAX_COUNT) {
		snprintf(err, errlen,
		    "%s: count must be a whole number from 1 to %d", field,
		    DRA_MAX_COUNT);
		return (-1);
	}
	return (0);
}

int
dra_request_pick(const json_t *req, const struct dra_classes *classes,
    const struct dra_lookup *lk, const char *where, const json_t **ex,
    const char **sub, char *err, size_t errlen)
{
	const struct dra_class *k = NULL;
	const json_t	       *alts, *alt;
	const char	       *rname, *sname;
	char			field[320], first[512] = "";
	json_int_t		count = 0;
	size_t			i;
	int			unserved = 0;

	rname = json_string_value(json_object_get(req, "name"));
	if (rname == NULL)
		rname = "";
	*sub = NULL;
	if ((alts = json_object_get(req, "firstAvailable")) == NULL) {
		if ((*ex = json_object_get(req, "exactly")) == NULL) {
			snprintf(err, errlen,
			    "%s: request \"%.63s\" has neither exactly: "
			    "{deviceClassName, count} nor firstAvailable",
			    where, rname);
			return (-1);
		}
		snprintf(field, sizeof(field), "%s: request \"%.63s\"", where,
		    rname);
		return (dra_exactly_check(*ex, field, classes, &k, &count, err,
		    errlen));
	}
	/*
	 * The first subrequest a GRES can give and some node publishes
	 * (lk->serves): what Slurm is asked.  Later ones only if the
	 * earlier cannot be asked or served.
	 */
	json_array_foreach (alts, i, alt) {
		sname = json_string_value(json_object_get(alt, "name"));
		snprintf(field, sizeof(field),
		    "%s: request \"%.63s\" firstAvailable[%zu] (\"%.63s\")",
		    where, rname, i, sname != NULL ? sname : "");
		if (sname == NULL ||
		    dra_exactly_check(alt, field, classes, &k, &count, err,
			errlen) == -1) {
			if (first[0] == '\0')
				snprintf(first, sizeof(first), "%s",
				    sname == NULL ? "a subrequest has no name" :
						    err);
			continue;
		}
		if (lk != NULL && lk->serves != NULL &&
		    !lk->serves(lk->arg, k, count,
			json_object_get(alt, "tolerations"))) {
			unserved = 1;
			continue;
		}
		*ex = alt;
		*sub = sname;
		return (0);
	}
	if (unserved) {
		snprintf(err, errlen,
		    "%s: request \"%.63s\": no node publishes the devices of "
		    "any of its firstAvailable subrequests that Slurm can be "
		    "asked for; waiting for one",
		    where, rname);
		return (1);
	}
	snprintf(err, errlen, "%s",
	    first[0] != '\0' ? first : "firstAvailable has no subrequest");
	return (-1);
}

/*
 * Checks one claim spec (where: how messages name it) and adds its
 * devices to the pod's total.  0, -1 with err, or 1 with err while no
 * node serves any of a request's firstAvailable subrequests.
 */
static int
dra_spec_count(const json_t *spec, const char *where,
    const struct dra_classes *classes, const struct dra_lookup *lk,
    const char **gname, int64_t *total, char *err, size_t errlen)
{
	const json_t	       *reqs, *req, *ex, *v;
	const struct dra_class *k;
	const char	       *rname, *sub;
	json_int_t		count;
	size_t			i;
	int			rc;

	v = k8s_obj_get(spec, "devices.constraints");
	if (json_array_size(v) > 0) {
		snprintf(err, errlen,
		    "%s: spec.devices.constraints is not supported: Slurm "
		    "chooses a node's devices by GRES name and type, and "
		    "cannot match attributes across them; remove the "
		    "constraints",
		    where);
		return (-1);
	}
	reqs = k8s_obj_get(spec, "devices.requests");
	if (json_array_size(reqs) > DRA_MAX_ENTRIES) {
		snprintf(err, errlen,
		    "%s: spec.devices.requests: at most %d requests", where,
		    DRA_MAX_ENTRIES);
		return (-1);
	}
	json_array_foreach (reqs, i, req) {
		rname = json_string_value(json_object_get(req, "name"));
		if (rname == NULL)
			rname = "";
		if ((rc = dra_request_pick(req, classes, lk, where, &ex, &sub,
			 err, errlen)) != 0)
			return (rc);
		k = dra_class_find(classes,
		    json_string_value(json_object_get(ex, "deviceClassName")));
		v = json_object_get(ex, "count");
		count = v == NULL ? 1 : json_integer_value(v);
		if (dra_add(gname, total, k->gres, count) == -1) {
			snprintf(err, errlen,
			    "%s: request \"%.63s\"%s%s: DeviceClass %.63s is "
			    "GRES %s, and the pod asks for GRES %s too: one "
			    "pod's devices must be of one GRES name and type",
			    where, rname, sub != NULL ? "/" : "",
			    sub != NULL ? sub : "", k->name, k->gres, *gname);
			return (-1);
		}
	}
	return (0);
}

int
dra_claim_holder(const json_t *claim, uint32_t *jobid, const char **node)
{
	const char   *id = k8s_obj_annotation(claim, ANN_SLURM_JOBID);
	char	     *end;
	unsigned long v;

	*node = k8s_obj_annotation(claim, ANN_SLURM_NODE);
	if (id == NULL || *node == NULL || **node == '\0' || *id < '1' ||
	    *id > '9')
		return (-1);
	errno = 0;
	v = strtoul(id, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX)
		return (-1);
	*jobid = (uint32_t)v;
	return (0);
}

/*
 * How the pod may use this claim (where: how messages name it).  A free
 * claim is the pod's to allocate (DRA_USE_ALLOCATE), one reserved for it
 * already is its own (a retry or a restart); one allocated and reserved
 * for other pods by a Slurm job of this install is shared: the pod joins
 * it (DRA_USE_JOIN, *node the Slurm node that job holds its devices on).
 * The pod waits (DRA_USE_WAIT, err says why) while the claim is being
 * deleted or released, was allocated by another scheduler, or the
 * scheduler says so (lk->busy: another pod's job is about to allocate it,
 * or the job holding it is ending).
 */
static enum dra_use
dra_claim_use(const json_t *claim, const char *where, const char *pod_uid,
    const struct dra_lookup *lk, const char **node, char *err, size_t errlen)
{
	const json_t *ref;
	const char   *uid, *other = NULL, *ext;
	char	      why[200];
	uint32_t      jobid;
	size_t	      i;
	int	      mine = 0;

	if (k8s_obj_get(claim, "metadata.deletionTimestamp") != NULL) {
		snprintf(err, errlen,
		    "%s: the claim is being deleted; waiting for it to go",
		    where);
		return (DRA_USE_WAIT);
	}
	json_array_foreach (k8s_obj_get(claim, "status.reservedFor"), i, ref) {
		uid = json_string_value(json_object_get(ref, "uid"));
		if (uid != NULL && pod_uid != NULL && strcmp(uid, pod_uid) == 0)
			mine = 1;
		else if (other == NULL)
			other = json_string_value(json_object_get(ref, "name"));
	}
	if (lk->busy != NULL &&
	    lk->busy(lk->arg, claim, why, sizeof(why)) == 1) {
		if (mine && k8s_obj_get(claim, "status.allocation") != NULL)
			snprintf(err, errlen,
			    "%s: reserved for this pod with the devices of a "
			    "Slurm job that is over (%s); kube-controller-"
			    "manager releases it only once the pod is gone: "
			    "delete the pod (its controller makes a new one)",
			    where, why);
		else
			snprintf(err, errlen, "%s: %s", where, why);
		return (DRA_USE_WAIT);
	}
	if (k8s_obj_get(claim, "status.allocation") == NULL)
		return (DRA_USE_ALLOCATE);
	if (mine)
		return (DRA_USE_RESERVED);
	if (other == NULL) {
		snprintf(err, errlen,
		    "%s: its pods are gone and kube-controller-manager is "
		    "releasing its devices; waiting for that",
		    where);
		return (DRA_USE_WAIT);
	}
	ext = k8s_obj_annotation(claim, DRA_EXTENDED_ANNOTATION);
	if (ext != NULL && strcmp(ext, "true") == 0) {
		snprintf(err, errlen,
		    "%s: made for the extended resources of pod %.63s, it "
		    "cannot be shared; this pod waits until it is gone",
		    where, other);
		return (DRA_USE_WAIT);
	}
	if (dra_claim_holder(claim, &jobid, node) == -1) {
		snprintf(err, errlen,
		    "%s: allocated for pod %.63s by another scheduler, on a "
		    "node Slurm does not hold for it; this pod waits until "
		    "the claim is free",
		    where, other);
		return (DRA_USE_WAIT);
	}
	return (DRA_USE_JOIN);
}

/*
 * The ResourceClaim a resourceClaims entry uses, through lk (new), or NULL
 * with err while kube-controller-manager has not made it (of PodGroup pg,
 * if not NULL) or it does not exist yet.
 */
static json_t *
dra_entry_lookup(const json_t *pod, const json_t *e, const char *where,
    const json_t *pg, const struct dra_lookup *lk, char *err, size_t errlen)
{
	const char *cname = dra_entry_claim(pod, e);
	json_t	   *claim;

	if (cname == NULL) {
		snprintf(err, errlen,
		    "%s: waiting for kube-controller-manager to make %s%.63s",
		    where,
		    pg != NULL ? "the ResourceClaim of PodGroup " :
				 "its ResourceClaim",
		    pg != NULL ? k8s_obj_name(pg) : "");
		return (NULL);
	}
	if ((claim = lk->fn(lk->arg, DRA_CLAIM, k8s_obj_namespace(pod),
		 cname)) == NULL)
		snprintf(err, errlen,
		    "%s: waiting for ResourceClaim %.63s to exist", where,
		    cname);
	return (claim);
}

/*
 * One resourceClaims entry: its template is checked first (so a request
 * no GRES can express is refused before any claim exists), then the claim
 * the pod uses; a shared claim it joins sets *join (a new string).  0, -1
 * or 1 (waiting) with err.
 */
static int
dra_entry(const json_t *pod, const json_t *e, const char *where,
    const struct dra_classes *classes, const struct dra_lookup *lk,
    const char **gname, int64_t *total, char **join, char *err, size_t errlen)
{
	const char  *ns = k8s_obj_namespace(pod), *tmpl, *cname;
	const char  *node = NULL, *jname = NULL;
	json_t	    *obj = NULL, *claim = NULL;
	int64_t	     jcount = 0;
	enum dra_use use;
	int	     rc = 1;

	tmpl = json_string_value(
	    json_object_get(e, "resourceClaimTemplateName"));
	if (json_object_get(e, "resourceClaimName") == NULL && tmpl != NULL) {
		if ((obj = lk->fn(lk->arg, DRA_TEMPLATE, ns, tmpl)) == NULL) {
			snprintf(err, errlen, "%s: waiting for it to exist",
			    where);
			goto out;
		}
		if ((rc = dra_spec_count(k8s_obj_get(obj, "spec.spec"), where,
			 classes, lk, gname, total, err, errlen)) != 0)
			goto out;
		rc = 1;
	}
	if ((claim = dra_entry_lookup(pod, e, where, NULL, lk, err, errlen)) ==
	    NULL)
		goto out;
	cname = k8s_obj_name(claim);
	/* A named claim's own spec is refused first, whatever its state. */
	if (obj == NULL &&
	    dra_spec_count(json_object_get(claim, "spec"), where, classes, NULL,
		&jname, &jcount, err, errlen) == -1) {
		rc = -1;
		goto out;
	}
	use = dra_claim_use(claim, where, k8s_obj_uid(pod), lk, &node, err,
	    errlen);
	if (use == DRA_USE_WAIT)
		goto out;
	if (obj != NULL && use == DRA_USE_JOIN) {
		snprintf(err, errlen,
		    "%s: ResourceClaim %.63s is reserved for another pod; "
		    "waiting for it to be released",
		    where, cname);
		goto out;
	}
	/* Counted once checked; a shared claim's devices are its holder's. */
	if (obj == NULL && use != DRA_USE_JOIN &&
	    (rc = dra_spec_count(json_object_get(claim, "spec"), where, classes,
		 lk, gname, total, err, errlen)) != 0)
		goto out;
	if (use == DRA_USE_JOIN) {
		if (*join != NULL && strcmp(*join, node) != 0) {
			snprintf(err, errlen,
			    "%s: its devices are on Slurm node %.63s, and "
			    "another claim's on %.63s: one pod cannot run on "
			    "both; waiting until one is free",
			    where, node, *join);
			goto out;
		}
		free(*join);
		*join = xstrdup(node);
	}
	rc = 0;
out:
	json_decref(obj);
	json_decref(claim);
	return (rc);
}

/*
 * One resourceClaims entry that is its PodGroup pg's claim: its devices,
 * counted into *gtotal while the claim is free (the gang's job allocates
 * it once); 1 with err while it is being made, deleted or released.
 */
static int
dra_group_entry(const json_t *pod, const json_t *pg, const json_t *e,
    const char *where, const struct dra_classes *classes,
    const struct dra_lookup *lk, const char **gname, int64_t *gtotal, char *err,
    size_t errlen)
{
	const char *ns = k8s_obj_namespace(pod), *cname, *tmpl;
	json_t	   *obj = NULL, *claim = NULL;
	int64_t	    count = 0;
	char	    why[200];
	int	    rc = 1;

	tmpl = json_string_value(
	    json_object_get(e, "resourceClaimTemplateName"));
	if (tmpl != NULL &&
	    (obj = lk->fn(lk->arg, DRA_TEMPLATE, ns, tmpl)) == NULL) {
		snprintf(err, errlen, "%s: waiting for it to exist", where);
		goto out;
	}
	if ((claim = dra_entry_lookup(pod, e, where, pg, lk, err, errlen)) ==
	    NULL)
		goto out;
	cname = k8s_obj_name(claim);
	if ((rc = dra_spec_count(obj != NULL ? k8s_obj_get(obj, "spec.spec") :
					       json_object_get(claim, "spec"),
		 where, classes, lk, gname, &count, err, errlen)) != 0)
		goto out;
	rc = 1;
	if (k8s_obj_get(claim, "metadata.deletionTimestamp") != NULL) {
		snprintf(err, errlen,
		    "%s: the claim is being deleted; waiting for it to go",
		    where);
		goto out;
	}
	if (k8s_obj_get(claim, "status.allocation") != NULL) {
		if (lk->busy != NULL &&
		    lk->busy(lk->arg, claim, why, sizeof(why)) == 1)
			snprintf(err, errlen, "%s: %s", where, why);
		else
			snprintf(err, errlen,
			    "%s: ResourceClaim %.63s of PodGroup %.63s is "
			    "allocated already, not by a job of this gang; "
			    "waiting for it to be released",
			    where, cname, k8s_obj_name(pg));
		goto out;
	}
	*gtotal += count;
	rc = 0;
out:
	json_decref(obj);
	json_decref(claim);
	return (rc);
}

/*
 * The pod's claims, its PodGroup's counted apart (*gtotal); 0, -1 or 1
 * (waiting for a claim) with err.
 */
static int
dra_claims(const json_t *pod, const struct dra_classes *classes,
    const struct dra_lookup *lk, const char **gname, int64_t *total,
    int64_t *gtotal, char **join, char *err, size_t errlen)
{
	const json_t *claims = k8s_obj_get(pod, "spec.resourceClaims"), *e;
	const char   *ename, *claim, *tmpl;
	json_t	     *pg = NULL;
	char	      where[256];
	size_t	      i;
	int	      rc = 0;

	if (json_array_size(claims) > DRA_MAX_ENTRIES) {
		snprintf(err, errlen, "spec.resourceClaims: at most %d claims",
		    DRA_MAX_ENTRIES);
		return (-1);
	}
	json_array_foreach (claims, i, e) {
		ename = json_string_value(json_object_get(e, "name"));
		claim = json_string_value(
		    json_object_get(e, "resourceClaimName"));
		tmpl = json_string_value(
		    json_object_get(e, "resourceClaimTemplateName"));
		snprintf(where, sizeof(where),
		    "spec.resourceClaims[%zu] (\"%.63s\", %s %.63s)", i,
		    ename != NULL ? ename : "",
		    claim != NULL ? "ResourceClaim" :
				    "from ResourceClaimTemplate",
		    claim != NULL ? claim : (tmpl != NULL ? tmpl : "?"));
		if (lk == NULL)
			continue;
		if (i == 0)
			pg = dra_pod_podgroup(pod, lk);
		if (dra_entry_podgroup(pg, e))
			rc = dra_group_entry(pod, pg, e, where, classes, lk,
			    gname, gtotal, err, errlen);
		else
			rc = dra_entry(pod, e, where, classes, lk, gname, total,
			    join, err, errlen);
		if (rc != 0)
			break;
	}
	json_decref(pg);
	return (rc);
}

const json_t *
dra_container_extended(const json_t *c, const char **field)
{
	static const char *const kinds[] = { "resources.limits",
		"resources.requests" };
	const json_t		*m;
	const char		*key;
	json_t			*v;
	size_t			 j;

	for (j = 0; j < 2; j++) {
		m = k8s_obj_get(c, kinds[j]);
		json_object_foreach ((json_t *)(uintptr_t)m, key, v)
			if (strncmp(key, DRA_CLASS_PREFIX,
				strlen(DRA_CLASS_PREFIX)) == 0) {
				*field = kinds[j];
				return (m);
			}
	}
	return (NULL);
}

/*
 * A container list's devices of DRA-backed extended resources
 * (dra_container_extended): summed (app containers) or the largest (init
 * containers).
 */
static int
dra_extended(const json_t *containers, const char *what, int sum,
    const struct dra_classes *classes, const char **gname, int64_t *total,
    char *err, size_t errlen)
{
	const struct dra_class *k;
	const json_t	       *c, *m;
	const char	       *key, *cls, *kind = "";
	json_t		       *v;
	int64_t			n, most = 0, cnt;
	size_t			i;
	char			field[400];

	json_array_foreach (containers, i, c) {
		cnt = 0;
		m = dra_container_extended(c, &kind);
		json_object_foreach ((json_t *)(uintptr_t)m, key, v) {
			if (strncmp(key, DRA_CLASS_PREFIX,
				strlen(DRA_CLASS_PREFIX)) != 0)
				continue;
			cls = key + strlen(DRA_CLASS_PREFIX);
			snprintf(field, sizeof(field), "%s[%zu].%s: %.120s",
			    what, i, kind, key);
			if (classes != NULL && classes->extended_off) {
				snprintf(err, errlen,
				    "%s: this cluster does not back extended "
				    "resources with Dynamic Resource "
				    "Allocation (the DRAExtendedResource "
				    "feature is off; alpha before Kubernetes "
				    "1.36), so the pod would get no device; "
				    "ask with spec.resourceClaims instead",
				    field);
				return (-1);
			}
			if ((k = dra_class_find(classes, cls)) == NULL)
				return (dra_unmapped(classes, field, cls, err,
				    errlen));
			if (!json_is_string(v) ||
			    k8s_quantity_value(json_string_value(v), &n) ==
				-1 ||
			    n < 0 || n > DRA_MAX_COUNT) {
				snprintf(err, errlen,
				    "%s: must be a whole number from 0 to %d",
				    field, DRA_MAX_COUNT);
				return (-1);
			}
			if (n > 0 && dra_add(gname, &cnt, k->gres, n) == -1) {
				snprintf(err, errlen,
				    "%s is GRES %s, and the pod asks for GRES "
				    "%s too: one pod's devices must be of one "
				    "GRES name and type",
				    field, k->gres, *gname);
				return (-1);
			}
		}
		if (sum)
			most += cnt;
		else if (cnt > most)
			most = cnt;
	}
	*total = sum ? *total + most : (most > *total ? most : *total);
	return (0);
}

int
dra_pod_gres(const json_t *pod, const struct dra_classes *classes,
    const struct dra_lookup *lk, char **gres, char **group, char **node,
    char *err, size_t errlen)
{
	const char *gname = NULL;
	int64_t	    claims = 0, app = 0, init = 0, total, pgroup = 0;
	int	    rc;

	*gres = NULL;
	*group = NULL;
	*node = NULL;
	if ((rc = dra_claims(pod, classes, lk, &gname, &claims, &pgroup, node,
		 err, errlen)) != 0 ||
	    (rc = dra_extended(k8s_obj_get(pod, "spec.containers"),
		 "spec.containers", 1, classes, &gname, &app, err, errlen)) !=
		0 ||
	    (rc = dra_extended(k8s_obj_get(pod, "spec.initContainers"),
		 "spec.initContainers", 0, classes, &gname, &init, err,
		 errlen)) != 0) {
		free(*node);
		*node = NULL;
		return (rc);
	}
	/* Init containers run before the others: the larger of the two. */
	total = claims + (app > init ? app : init);
	if (total + pgroup > DRA_MAX_COUNT) {
		snprintf(err, errlen,
		    "the pod asks for %lld devices through Dynamic Resource "
		    "Allocation: at most %d",
		    (long long)total + (long long)pgroup, DRA_MAX_COUNT);
		free(*node);
		*node = NULL;
		return (-1);
	}
	if (total > 0)
		xasprintf(gres, "%s:%lld", gname, (long long)total);
	if (pgroup > 0)
		xasprintf(group, "%s:%lld", gname, (long long)pgroup);
	return (0);
}

int
dra_gres_indices(const char *share, char *name, size_t namelen, long *idx,
    size_t max)
{
	const char *p, *open;
	char	   *end;
	long	    a, b;
	size_t	    n = 0;

	if (share == NULL || (open = strstr(share, "(IDX:")) == NULL)
		return (-1);
	/* "gpu:a100:2(IDX:..." -> "gpu:a100" */
	for (p = open; p > share && p[-1] != ':'; p--)
		;
	if (p == share || (size_t)(p - 1 - share) >= namelen)
		return (-1);
	memcpy(name, share, (size_t)(p - 1 - share));
	name[p - 1 - share] = '\0';
	for (p = open + 5; *p != ')';) {
		errno = 0;
		a = strtol(p, &end, 10);
		if (end == p || errno != 0 || a < 0)
			return (-1);
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || errno != 0 || b < a)
				return (-1);
			p = end;
		}
		for (; a <= b; a++) {
			if (n == max)
				return (-1);
			idx[n++] = a;
		}
		if (*p == ',')
			p++;
		else if (*p != ')')
			return (-1);
	}
	return ((int)n);
}

/* Does the device carry every attribute the class wants (strings)? */
/* How class k names the device of index idx, for messages. */
static void
dra_index_how(const struct dra_class *k, long idx, char *buf, size_t len)
{
	const char *at;
	size_t	    n;

	if (k->names != NULL) {
		for (n = 0; k->names[n] != NULL && (long)n < idx; n++)
			;
		if (k->names[n] == NULL)
			snprintf(buf, len,
			    "name is in deviceNames (it lists %zu, none for "
			    "index %ld)",
			    n, idx);
		else
			snprintf(buf, len, "name is %.100s (deviceNames)",
			    k->names[n]);
	} else if (k->name_pattern != NULL &&
	    (at = strstr(k->name_pattern, "{index}")) != NULL)
		snprintf(buf, len, "name is %.*s%ld%.50s",
		    (int)(at - k->name_pattern), k->name_pattern, idx, at + 7);
	else
		snprintf(buf, len, "attribute %.63s is %ld", k->index_attr,
		    idx);
}

/* Is dev the device of class k that is Slurm's GRES index idx? */
static int
dra_device_is(const json_t *dev, const struct dra_class *k, long idx)
{
	const char   *name = json_string_value(json_object_get(dev, "name"));
	const char   *at;
	const json_t *a;
	char	      want[300];
	size_t	      n;

	if (k->names != NULL) {
		for (n = 0; k->names[n] != NULL && (long)n < idx; n++)
			;
		return ((long)n == idx && k->names[n] != NULL && name != NULL &&
		    strcmp(k->names[n], name) == 0);
	}
	if (k->name_pattern != NULL &&
	    (at = strstr(k->name_pattern, "{index}")) != NULL) {
		snprintf(want, sizeof(want), "%.*s%ld%s",
		    (int)(at - k->name_pattern), k->name_pattern, idx, at + 7);
		return (name != NULL && strcmp(want, name) == 0);
	}
	a = json_object_get(json_object_get(json_object_get(dev, "attributes"),
				k->index_attr),
	    "int");
	return (json_is_integer(a) && json_integer_value(a) == idx);
}

/* Does dev have the attributes class k asks of its devices? */
static int
dra_device_attrs(const json_t *dev, const struct dra_class *k)
{
	const json_t *attrs = json_object_get(dev, "attributes");
	const char   *key, *want, *have;
	json_t	     *v;

	json_object_foreach (k->attributes, key, v) {
		want = json_string_value(v);
		have = json_string_value(
		    json_object_get(json_object_get(attrs, key), "string"));
		if (want == NULL || have == NULL || strcmp(want, have) != 0)
			return (0);
	}
	return (1);
}

static int
dra_device_matches(const json_t *dev, const struct dra_class *k, long idx)
{
	return (dra_device_is(dev, k, idx) && dra_device_attrs(dev, k));
}

/*
 * The device of class k on node with GRES index idx: its pool's name and
 * the device (borrowed from slices), from the pool's newest generation; -1
 * if none.
 */
static int
dra_device_find(const json_t *slices, const struct dra_class *k,
    const char *node, long idx, const char **pool, const json_t **device)
{
	const json_t *s, *d;
	const char   *drv, *nn;
	json_int_t    gen, best = -1;
	size_t	      i, j;

	json_array_foreach (slices, i, s) {
		drv = json_string_value(k8s_obj_get(s, "spec.driver"));
		nn = json_string_value(k8s_obj_get(s, "spec.nodeName"));
		if (drv == NULL || nn == NULL || strcmp(drv, k->driver) != 0 ||
		    strcmp(nn, node) != 0)
			continue;
		gen = json_integer_value(
		    k8s_obj_get(s, "spec.pool.generation"));
		json_array_foreach (k8s_obj_get(s, "spec.devices"), j, d) {
			if (!dra_device_matches(d, k, idx) || gen <= best)
				continue;
			best = gen;
			*pool = json_string_value(
			    k8s_obj_get(s, "spec.pool.name"));
			*device = d;
		}
	}
	return (best >= 0 && *pool != NULL && *device != NULL &&
		    json_string_value(json_object_get(*device, "name")) !=
			NULL ?
		0 :
		-1);
}

/* The configs of the class objects a claim's requests use (FromClass). */
static void
dra_class_configs(json_t *configs, const json_t *class_obj, const char *req)
{
	const json_t *c;
	size_t	      i;

	json_array_foreach (k8s_obj_get(class_obj, "spec.config"), i, c) {
		if (json_object_get(c, "opaque") == NULL)
			continue;
		json_array_append_new(configs,
		    json_pack("{s:s, s:[s], s:O}", "source", "FromClass",
			"requests", req, "opaque",
			json_object_get(c, "opaque")));
	}
}

/* dra_serves_fn over one node's slices (struct dra_node_ctx). */
struct dra_node_ctx {
	const json_t *slices;
	const char   *node;
};

static int
dra_node_serves(void *arg, const struct dra_class *k, long long count,
    const json_t *tolerations)
{
	const struct dra_node_ctx *c = arg;

	return (dra_node_devices(c->slices, k, c->node, NULL, tolerations,
		    NULL) >= count);
}

json_t *
dra_allocation(const json_t *claim_spec, const json_t *class_objs,
    const struct dra_classes *classes, const json_t *slices, const char *node,
    const long *idx, size_t nidx, size_t *used, char *err, size_t errlen)
{
	const struct dra_class *k;
	const json_t	       *req, *ex, *c;
	const char	       *rname, *cname, *pool = NULL, *sub;
	const json_t	       *dev = NULL, *bc, *bfc;
	json_t		       *results = json_array(), *configs = json_array();
	json_int_t		count, n;
	size_t			i;
	char			how[256], full[160];
	struct dra_node_ctx	ctx = { slices, node };
	struct dra_lookup	here = { NULL, NULL, dra_node_serves, &ctx };

	json_array_foreach (k8s_obj_get(claim_spec, "devices.requests"), i,
	    req) {
		rname = json_string_value(json_object_get(req, "name"));
		/* A firstAvailable's: the first this node serves. */
		if (rname == NULL ||
		    dra_request_pick(req, classes, &here, "", &ex, &sub, err,
			errlen) != 0 ||
		    (k = dra_class_find(classes,
			 cname = json_string_value(json_object_get(ex,
			     "deviceClassName")))) == NULL) {
			snprintf(err, errlen,
			    "request %zu: no name, or no subrequest this "
			    "node serves of a DeviceClass mapped to a GRES",
			    i);
			goto fail;
		}
		if (sub != NULL) {
			snprintf(full, sizeof(full), "%s/%s", rname, sub);
			rname = full;
		}
		count = json_object_get(ex, "count") != NULL ?
		    json_integer_value(json_object_get(ex, "count")) :
		    1;
		for (n = 0; n < count; n++) {
			if (*used >= nidx) {
				snprintf(err, errlen,
				    "request \"%.63s\": Slurm gave the pod "
				    "%zu GRES indices, fewer than its claims "
				    "ask for",
				    rname, nidx);
				goto fail;
			}
			if (dra_device_find(slices, k, node, idx[*used], &pool,
				&dev) == -1) {
				dra_index_how(k, idx[*used], how, sizeof(how));
				snprintf(err, errlen,
				    "request \"%.63s\": node %.63s publishes "
				    "no device of driver %.63s whose %s (for "
				    "Slurm's GRES index %ld) in its "
				    "ResourceSlices",
				    rname, node, k->driver, how, idx[*used]);
				goto fail;
			}
			(*used)++;
			/* A device usable once its driver says so (KEP-5007). */
			bc = json_object_get(dev, "bindingConditions");
			bfc = json_object_get(dev, "bindingFailureConditions");
			json_array_append_new(results,
			    json_pack("{s:s, s:s, s:s, s:O, s:O*, s:O*}",
				"request", rname, "driver", k->driver, "pool",
				pool, "device", json_object_get(dev, "name"),
				"bindingConditions",
				json_array_size(bc) > 0 ? bc : NULL,
				"bindingFailureConditions",
				json_array_size(bc) > 0 &&
					json_array_size(bfc) > 0 ?
				    bfc :
				    NULL));
		}
		dra_class_configs(configs, json_object_get(class_objs, cname),
		    rname);
	}
	json_array_foreach (k8s_obj_get(claim_spec, "devices.config"), i, c) {
		if (json_object_get(c, "opaque") == NULL)
			continue;
		json_array_append_new(configs,
		    json_pack("{s:s, s:O*, s:O}", "source", "FromClaim",
			"requests", json_object_get(c, "requests"), "opaque",
			json_object_get(c, "opaque")));
	}
	return (json_pack("{s:{s:o, s:o}, s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}",
	    "devices", "results", results, "config", configs, "nodeSelector",
	    "nodeSelectorTerms", "matchFields", "key", "metadata.name",
	    "operator", "In", "values", node));
fail:
	json_decref(results);
	json_decref(configs);
	return (NULL);
}

/*
 * Adds count devices of the mapped class cls (where: how a message names
 * the request) to needs, {class: {"count": N, "where": W}}.
 */
static void
dra_need(json_t *needs, const struct dra_classes *classes, const char *cls,
    json_int_t count, const char *where, const json_t *tolerations)
{
	json_t *n;

	if (cls == NULL || dra_class_find(classes, cls) == NULL || count < 1)
		return;
	if ((n = json_object_get(needs, cls)) == NULL)
		json_object_set_new(needs, cls,
		    json_pack("{s:I, s:s, s:O?}", "count", count, "where",
			where, "tolerations", tolerations));
	else
		json_object_set_new(n, "count",
		    json_integer(
			json_integer_value(json_object_get(n, "count")) +
			count));
}

/* The requests of one claim spec (where: its entry) into needs. */
static void
dra_spec_needs(json_t *needs, const struct dra_classes *classes,
    const struct dra_lookup *lk, const json_t *spec, const char *where)
{
	const json_t *req, *ex, *v;
	const char   *rname, *sub;
	char	      w[400], err[512];
	size_t	      i;

	json_array_foreach (k8s_obj_get(spec, "devices.requests"), i, req) {
		rname = json_string_value(json_object_get(req, "name"));
		if (dra_request_pick(req, classes, lk, where, &ex, &sub, err,
			sizeof(err)) != 0)
			continue;
		v = json_object_get(ex, "count");
		snprintf(w, sizeof(w), "%s request \"%.63s%s%.63s\"", where,
		    rname != NULL ? rname : "", sub != NULL ? "/" : "",
		    sub != NULL ? sub : "");
		dra_need(needs, classes,
		    json_string_value(json_object_get(ex, "deviceClassName")),
		    v == NULL ? 1 : json_integer_value(v), w,
		    json_object_get(ex, "tolerations"));
	}
}

json_t *
dra_pod_needs(const json_t *pod, const struct dra_classes *classes,
    const struct dra_lookup *lk)
{
	const json_t *e, *c, *m;
	const char   *ns = k8s_obj_namespace(pod), *name, *key, *kind = "";
	json_t	     *needs = json_object(), *obj, *v;
	char	      where[300];
	int64_t	      n;
	size_t	      i;

	json_array_foreach (k8s_obj_get(pod, "spec.resourceClaims"), i, e) {
		if (lk == NULL)
			break;
		snprintf(where, sizeof(where),
		    "spec.resourceClaims[%zu] (%.63s)", i,
		    json_string_value(json_object_get(e, "name")) != NULL ?
			json_string_value(json_object_get(e, "name")) :
			"");
		/* A template's spec is the claim's; a claim's own else. */
		name = json_string_value(
		    json_object_get(e, "resourceClaimTemplateName"));
		if (json_object_get(e, "resourceClaimName") == NULL &&
		    name != NULL &&
		    (obj = lk->fn(lk->arg, DRA_TEMPLATE, ns, name)) != NULL) {
			dra_spec_needs(needs, classes, lk,
			    k8s_obj_get(obj, "spec.spec"), where);
			json_decref(obj);
			continue;
		}
		if ((name = dra_entry_claim(pod, e)) != NULL &&
		    (obj = lk->fn(lk->arg, DRA_CLAIM, ns, name)) != NULL) {
			dra_spec_needs(needs, classes, lk,
			    json_object_get(obj, "spec"), where);
			json_decref(obj);
		}
	}
	/* The app containers' DRA-backed extended resources, summed. */
	json_array_foreach (k8s_obj_get(pod, "spec.containers"), i, c) {
		m = dra_container_extended(c, &kind);
		json_object_foreach ((json_t *)(uintptr_t)m, key, v) {
			if (strncmp(key, DRA_CLASS_PREFIX,
				strlen(DRA_CLASS_PREFIX)) != 0 ||
			    !json_is_string(v) ||
			    k8s_quantity_value(json_string_value(v), &n) == -1)
				continue;
			snprintf(where, sizeof(where),
			    "spec.containers[%zu].%s: %.120s", i, kind, key);
			dra_need(needs, classes, key + strlen(DRA_CLASS_PREFIX),
			    (json_int_t)n, where, NULL);
		}
	}
	return (needs);
}

/* Does one of tolerations (a request's) tolerate the device taint? */
static int
dra_tolerated(const json_t *tolerations, const json_t *taint)
{
	const json_t *t;
	const char   *key = k8s_obj_str(taint, "key"), *eff, *op, *tk;
	size_t	      i;

	json_array_foreach (tolerations, i, t) {
		tk = k8s_obj_str(t, "key");
		op = k8s_obj_str(t, "operator");
		eff = k8s_obj_str(t, "effect");
		if (eff != NULL && *eff != '\0' &&
		    (k8s_obj_str(taint, "effect") == NULL ||
			strcmp(eff, k8s_obj_str(taint, "effect")) != 0))
			continue;
		if (op != NULL && strcmp(op, "Exists") == 0) {
			if (tk == NULL || *tk == '\0' ||
			    (key != NULL && strcmp(tk, key) == 0))
				return (1);
			continue;
		}
		if (tk != NULL && key != NULL && strcmp(tk, key) == 0 &&
		    strcmp(k8s_obj_str(t, "value") != NULL ?
			    k8s_obj_str(t, "value") :
			    "",
			k8s_obj_str(taint, "value") != NULL ?
			    k8s_obj_str(taint, "value") :
			    "") == 0)
			return (1);
	}
	return (0);
}

/* A NoSchedule or NoExecute taint that tolerations do not tolerate? */
static int
dra_taint_holds(const json_t *taint, const json_t *tolerations)
{
	const char *eff = k8s_obj_str(taint, "effect");

	return (eff != NULL &&
	    (strcmp(eff, "NoSchedule") == 0 || strcmp(eff, "NoExecute") == 0) &&
	    !dra_tolerated(tolerations, taint));
}

/* Does a DeviceTaintRule's deviceSelector (unset fields: any) pick it? */
static int
dra_rule_picks(const json_t *rule, const char *driver, const char *pool,
    const char *device)
{
	static const char *const keys[] = { "driver", "pool", "device" };
	const char		*have[] = { driver, pool, device }, *want;
	const json_t		*sel = k8s_obj_get(rule, "spec.deviceSelector");
	size_t			 i;

	for (i = 0; i < 3; i++) {
		want = k8s_obj_str(sel, keys[i]);
		if (want != NULL &&
		    (have[i] == NULL || strcmp(want, have[i]) != 0))
			return (0);
	}
	return (1);
}

const json_t *
dra_device_untolerated(const json_t *dev, const char *driver, const char *pool,
    const json_t *rules, const json_t *tolerations)
{
	const json_t *t, *rule;
	size_t	      i;

	json_array_foreach (json_object_get(dev, "taints"), i, t)
		if (dra_taint_holds(t, tolerations))
			return (t);
	json_array_foreach (rules, i, rule) {
		t = k8s_obj_get(rule, "spec.taint");
		if (dra_rule_picks(rule, driver, pool,
			k8s_obj_str(dev, "name")) &&
		    dra_taint_holds(t, tolerations))
			return (t);
	}
	return (NULL);
}

int
dra_node_devices(const json_t *slices, const struct dra_class *k,
    const char *node, const json_t *rules, const json_t *tolerations,
    const json_t **taint)
{
	const json_t *s, *d, *t;
	const char   *drv, *nn, *pool;
	json_t	     *newest = json_object();
	json_int_t    gen;
	size_t	      i, j;
	int	      n = 0;

	if (taint != NULL)
		*taint = NULL;
	/* Each pool's newest generation: the older ones are going. */
	json_array_foreach (slices, i, s) {
		pool = json_string_value(k8s_obj_get(s, "spec.pool.name"));
		gen = json_integer_value(
		    k8s_obj_get(s, "spec.pool.generation"));
		if (pool != NULL &&
		    gen >= json_integer_value(json_object_get(newest, pool)))
			json_object_set_new(newest, pool, json_integer(gen));
	}
	json_array_foreach (slices, i, s) {
		drv = json_string_value(k8s_obj_get(s, "spec.driver"));
		nn = json_string_value(k8s_obj_get(s, "spec.nodeName"));
		pool = json_string_value(k8s_obj_get(s, "spec.pool.name"));
		if (drv == NULL || nn == NULL || pool == NULL ||
		    strcmp(drv, k->driver) != 0 || strcmp(nn, node) != 0 ||
		    json_integer_value(k8s_obj_get(s, "spec.pool.generation")) <
			json_integer_value(json_object_get(newest, pool)))
			continue;
		json_array_foreach (k8s_obj_get(s, "spec.devices"), j, d) {
			if (!dra_device_attrs(d, k))
				continue;
			if ((t = dra_device_untolerated(d, drv, pool, rules,
				 tolerations)) != NULL) {
				if (taint != NULL && *taint == NULL)
					*taint = t;
				continue;
			}
			n++;
		}
	}
	json_decref(newest);
	return (n);
}

int
dra_allocation_waits(const json_t *alloc)
{
	const json_t *res;
	size_t	      i;

	json_array_foreach (k8s_obj_get(alloc, "devices.results"), i, res)
		if (json_array_size(json_object_get(res, "bindingConditions")) >
		    0)
			return (1);
	return (0);
}

/* A status.devices entry's condition of type when True, else NULL. */
static const json_t *
dra_condition_true(const json_t *dstatus, const char *type)
{
	const json_t *c;
	const char   *t, *st;
	size_t	      i;

	json_array_foreach (json_object_get(dstatus, "conditions"), i, c) {
		t = json_string_value(json_object_get(c, "type"));
		st = json_string_value(json_object_get(c, "status"));
		if (t != NULL && st != NULL && strcmp(t, type) == 0 &&
		    strcmp(st, "True") == 0)
			return (c);
	}
	return (NULL);
}

/* The status.devices entry of an allocation result, or NULL. */
static const json_t *
dra_device_status(const json_t *claim, const json_t *res)
{
	const json_t *d;
	size_t	      i;
	const char   *keys[] = { "driver", "pool", "device" };
	size_t	      k;

	json_array_foreach (k8s_obj_get(claim, "status.devices"), i, d) {
		for (k = 0; k < 3; k++)
			if (!json_equal(json_object_get(d, keys[k]),
				json_object_get(res, keys[k])))
				break;
		if (k == 3)
			return (d);
	}
	return (NULL);
}

enum dra_binding
dra_claim_binding(const json_t *claim, int64_t now, int timeout_s, char *why,
    size_t len)
{
	const json_t *res, *ds, *c, *v;
	const char   *dev, *type;
	int64_t	      at;
	size_t	      i, j;
	int	      waiting = 0;

	json_array_foreach (k8s_obj_get(claim,
				"status.allocation.devices.results"),
	    i, res) {
		if (json_array_size(
			json_object_get(res, "bindingConditions")) == 0)
			continue;
		dev = json_string_value(json_object_get(res, "device"));
		ds = dra_device_status(claim, res);
		json_array_foreach (json_object_get(res,
					"bindingFailureConditions"),
		    j, v) {
			type = json_string_value(v);
			if (type == NULL ||
			    (c = dra_condition_true(ds, type)) == NULL)
				continue;
			snprintf(why, len,
			    "ResourceClaim %.63s: device %.63s reports %.63s "
			    "(%.63s: %.120s)",
			    k8s_obj_name(claim), dev != NULL ? dev : "", type,
			    k8s_obj_str(c, "reason") != NULL ?
				k8s_obj_str(c, "reason") :
				"",
			    k8s_obj_str(c, "message") != NULL ?
				k8s_obj_str(c, "message") :
				"");
			return (DRA_BINDING_FAILED);
		}
		json_array_foreach (json_object_get(res, "bindingConditions"),
		    j, v) {
			type = json_string_value(v);
			if (type == NULL ||
			    dra_condition_true(ds, type) != NULL || waiting)
				continue;
			snprintf(why, len,
			    "ResourceClaim %.63s: device %.63s: condition "
			    "%.63s is not True yet",
			    k8s_obj_name(claim), dev != NULL ? dev : "", type);
			waiting = 1;
		}
	}
	if (!waiting)
		return (DRA_BINDING_READY);
	at = k8s_time_parse(
	    k8s_obj_str(claim, "status.allocation.allocationTimestamp"));
	if (at > 0 && timeout_s > 0 && now - at >= timeout_s) {
		snprintf(why + strlen(why), len - strlen(why),
		    " %d s after its allocation", timeout_s);
		return (DRA_BINDING_TIMEOUT);
	}
	return (DRA_BINDING_WAIT);
}
