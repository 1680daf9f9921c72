/*
 * Owner records: the fields of a workload object that a rule reads, copied
 * into a new small object of the same shape.  A Job or JobSet as the API
 * sends it holds whole pod templates, kubectl's last-applied annotation and
 * more; a record holds a few hundred bytes, and any namespace may create
 * such objects.  Both daemons make the record on the informer's thread and
 * drop the object there.  Pure; any thread.
 *
 * What is kept, and who reads it:
 *   every kind  apiVersion, kind; metadata name, namespace (cache keys,
 *               workload_group_job's gang name), uid (workload_job's owner
 *               check, the PodGroup status writes' precondition),
 *               resourceVersion, generation (writes.c's observedGeneration);
 *               the annotations translate.c reads (translate_view over the
 *               workload layers; ownerrec_keys below); spec
 *               .activeDeadlineSeconds (translate_deadline); the
 *               topology annotations of ours (topology_request)
 *   Job         spec.parallelism, spec.completionMode (workload_group_job)
 *   JobSet      spec.replicatedJobs[]: name, replicas, template.spec
 *               .parallelism, dependsOn[].name and .status
 *               (workload_jobset_size, workload_jobset_stage)
 *   PodGroup    spec.minMember (workload_gang_size)
 *   scheduling.k8s.io PodGroup: spec.schedulingPolicy.gang.minCount and
 *               the presence of .basic (workload_podgroup_min), spec
 *               .workloadRef.workloadName and .podGroupTemplateRef.workload
 *               .workloadName (workload_ref_name), spec
 *               .schedulingConstraints.topology[0].key (topology_request),
 *               spec.disruptionMode.all, as {"all": {}}
 *               (workload_podgroup_disrupt_all),
 *               the last status condition
 *               of type PODGROUP_CONDITION: type, status, lastTransitionTime
 *               (writes_podgroup_send)
 *               spec.parentCompositePodGroupName (workload_group: the
 *               composite gang it is part of), spec.resourceClaims[]:
 *               name, resourceClaimName, resourceClaimTemplateName
 *               (dra_entry_podgroup)
 *   scheduling.k8s.io CompositePodGroup: spec.schedulingPolicy (gang
 *               .minGroupCount, basic), spec.workloadRef.workloadName and
 *               .templateName (workload_composite_size), spec
 *               .schedulingConstraints.topology[0].key, spec.disruptionMode
 *               .all, the last COMPOSITE_CONDITION condition, as a
 *               PodGroup's
 *   Workload    spec.podGroupTemplates[].name and compositePodGroupTemplates
 *               [].name (the webhook's validate_has_template); each
 *               composite template's podGroupTemplates[]: name and
 *               schedulingPolicy, and whether it nests composites
 *               (workload_composite_size)
 *   LeaderWorkerSet: nothing more (its pods carry their gang's size).
 * A member that is present stays present, whatever its value: the rules
 * tell absent from present (a JobSet's replicas default to 1).  A value a
 * rule reads as a number or string is copied as it is; an object or array
 * where a rule expects a scalar reads as 0 or NULL there, as null does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "ownerrec.h"

/* The annotations translate.c reads (after ANN_PREFIX), of any layer. */
static const char *const ownerrec_keys[] = { "partition", "account", "qos",
	"reservation", "constraints", "licenses", "wckey", "job-name", "gres",
	"switches", "mem-per-node", "cpu-per-task", "timelimit", "priority",
	"min-nodes", "max-nodes", "user-id", "group-id", "exclusive",
	"required-topology", "preferred-topology", "topology-slice-size",
	NULL };

/*
 * spec.schedulingConstraints as {"topology": [{"key": K}]}: the first
 * constraint's key (the API allows one), or NULL.
 */
static json_t *
ownerrec_topology(const json_t *sc)
{
	const json_t *k =
	    json_object_get(json_array_get(json_object_get(sc, "topology"), 0),
		"key");

	if (!json_is_string(k))
		return (NULL);
	return (json_pack("{s:[{s:O}]}", "topology", "key", k));
}

/* A copy of scalar v; null for an object or array; NULL for NULL. */
static json_t *
ownerrec_scalar(const json_t *v)
{
	if (v == NULL)
		return (NULL);
	if (json_is_object(v) || json_is_array(v))
		return (json_null());
	return (json_deep_copy(v));
}

/* Copies src's member key, a scalar, into dst when src has it. */
static void
ownerrec_copy(json_t *dst, const json_t *src, const char *key)
{
	json_t *v = ownerrec_scalar(json_object_get(src, key));

	if (v != NULL)
		json_object_set_new(dst, key, v);
}

/* Sets dst's member key to v (taken) unless v is NULL. */
static void
ownerrec_set(json_t *dst, const char *key, json_t *v)
{
	if (v != NULL)
		json_object_set_new(dst, key, v);
}

/*
 * An annotation value as kept: itself up to OWNERREC_MAX_VALUE bytes.  A
 * longer one is refused by every rule and stays so: digits lose leading
 * zeros (down to 32, which the messages quote) and are cut, keeping the
 * number's value or its overflow; anything else is cut at a character,
 * keeping a non-digit where it had one, and its length above 200.
 */
static json_t *
ownerrec_value(const char *v)
{
	size_t len = strlen(v), zeros = 0, digits, cut;
	char   buf[OWNERREC_MAX_VALUE + 1];

	if (len <= OWNERREC_MAX_VALUE)
		return (json_string(v));
	digits = strspn(v, "0123456789");
	if (digits == len) {
		while (zeros < len && v[zeros] == '0')
			zeros++;
		if (zeros > 32) {
			cut = zeros - 32 < len - OWNERREC_MAX_VALUE ?
			    zeros - 32 :
			    len - OWNERREC_MAX_VALUE;
			v += cut;
			len -= cut;
		}
		return (json_stringn(v,
		    len < OWNERREC_MAX_VALUE ? len : OWNERREC_MAX_VALUE));
	}
	cut = OWNERREC_MAX_VALUE;
	while (cut > 0 && ((unsigned char)v[cut] & 0xc0) == 0x80)
		cut--;
	if (digits < cut)
		return (json_stringn(v, cut));
	/* Digits up to the cut: the value ends on a non-digit all the same. */
	if (digits > OWNERREC_MAX_VALUE - 1)
		digits = OWNERREC_MAX_VALUE - 1;
	memcpy(buf, v, digits);
	buf[digits] = 'x';
	return (json_stringn(buf, digits + 1));
}

/* The annotations a rule reads, or NULL when there are none. */
static json_t *
ownerrec_annotations(const json_t *ann)
{
	json_t	   *out = NULL;
	const char *v;
	char	    key[128];
	size_t	    i;

	for (i = 0; ownerrec_keys[i] != NULL; i++) {
		snprintf(key, sizeof(key), ANN_PREFIX "%s", ownerrec_keys[i]);
		if ((v = json_string_value(json_object_get(ann, key))) == NULL)
			continue;
		if (out == NULL)
			out = json_object();
		json_object_set_new(out, key, ownerrec_value(v));
	}
	return (out);
}

static json_t *
ownerrec_meta(const json_t *md)
{
	static const char *const keep[] = { "name", "namespace", "uid",
		"resourceVersion", "generation" };
	json_t			*out = json_object();
	size_t			 i;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		ownerrec_copy(out, md, keep[i]);
	ownerrec_set(out, "annotations",
	    ownerrec_annotations(json_object_get(md, "annotations")));
	return (out);
}

/* An object as an object with only the members named, or NULL. */
static json_t *
ownerrec_keep(const json_t *o, const char *const *keys)
{
	json_t *out;
	size_t	k;

	if (o == NULL)
		return (NULL);
	out = json_object();
	for (k = 0; keys[k] != NULL; k++)
		ownerrec_copy(out, o, keys[k]);
	return (out);
}

/*
 * A list of objects as a list of objects with only the members named (an
 * element that is no object becomes {}), or NULL when list is no array.
 */
static json_t *
ownerrec_list(const json_t *list, const char *const *keys)
{
	const json_t *e;
	json_t	     *out;
	size_t	      i;

	if (!json_is_array(list))
		return (NULL);
	out = json_array();
	json_array_foreach (list, i, e)
		json_array_append_new(out, ownerrec_keep(e, keys));
	return (out);
}

/* A JobSet's replicated jobs: what sizes and stages them. */
static json_t *
ownerrec_rjobs(const json_t *rjs)
{
	static const char *const rj_keys[] = { "name", "replicas", NULL };
	static const char *const dep_keys[] = { "name", "status", NULL };
	const json_t		*rj, *tmpl, *tspec;
	json_t			*out, *o, *t;
	size_t			 i;

	if ((out = ownerrec_list(rjs, rj_keys)) == NULL)
		return (NULL);
	json_array_foreach (rjs, i, rj) {
		o = json_array_get(out, i);
		ownerrec_set(o, "dependsOn",
		    ownerrec_list(json_object_get(rj, "dependsOn"), dep_keys));
		/* template.spec.parallelism, each level only where present. */
		if ((tmpl = json_object_get(rj, "template")) == NULL)
			continue;
		t = json_object();
		if ((tspec = json_object_get(tmpl, "spec")) != NULL) {
			json_object_set_new(t, "spec", json_object());
			ownerrec_copy(json_object_get(t, "spec"), tspec,
			    "parallelism");
		}
		json_object_set_new(o, "template", t);
	}
	return (out);
}

/*
 * A Kubernetes PodGroup's or CompositePodGroup's schedulingPolicy:
 * gang.minCount (or .minGroupCount), basic.
 */
static json_t *
ownerrec_policy(const json_t *policy)
{
	const json_t *gang = json_object_get(policy, "gang");
	const json_t *basic = json_object_get(policy, "basic");
	json_t	     *out = json_object(), *g;

	if (json_is_object(gang)) {
		g = json_object();
		ownerrec_copy(g, gang, "minCount");
		ownerrec_copy(g, gang, "minGroupCount");
		json_object_set_new(out, "gang", g);
	} else if (gang != NULL)
		json_object_set_new(out, "gang", json_null());
	if (basic != NULL)
		json_object_set_new(out, "basic",
		    json_is_object(basic) ? json_object() : json_null());
	return (out);
}

/*
 * A Workload's compositePodGroupTemplates: each one's name, its child
 * podGroupTemplates' names and policies (what sizes a composite gang,
 * workload_composite_size), and whether it nests composites.
 */
static json_t *
ownerrec_composites(const json_t *list)
{
	static const char *const keys[] = { "name", NULL };
	const json_t		*e, *src, *t, *pol;
	json_t			*out, *o, *pgs;
	size_t			 i, j;

	if ((out = ownerrec_list(list, keys)) == NULL)
		return (NULL);
	json_array_foreach (list, i, e) {
		o = json_array_get(out, i);
		src = json_object_get(e, "podGroupTemplates");
		pgs = ownerrec_list(src, keys);
		json_array_foreach (src, j, t)
			if ((pol = json_object_get(t, "schedulingPolicy")) !=
			    NULL)
				json_object_set_new(json_array_get(pgs, j),
				    "schedulingPolicy", ownerrec_policy(pol));
		ownerrec_set(o, "podGroupTemplates", pgs);
		if (json_object_get(e, "compositePodGroupTemplates") != NULL)
			json_object_set_new(o, "compositePodGroupTemplates",
			    json_array());
	}
	return (out);
}

/* A reference's workloadName, under the path of keys (NULL-ended). */
static json_t *
ownerrec_ref(const json_t *ref, const char *const *path)
{
	json_t *out, *o;

	if (ref == NULL)
		return (NULL);
	if (*path == NULL) {
		out = json_object();
		ownerrec_copy(out, ref, "workloadName");
		return (out);
	}
	if ((o = ownerrec_ref(json_object_get(ref, *path), path + 1)) == NULL)
		return (json_object());
	out = json_object();
	json_object_set_new(out, *path, o);
	return (out);
}

/* The last condition of type cond: type, status, transition time. */
static json_t *
ownerrec_pg_status(const json_t *status, const char *cond)
{
	static const char *const keys[] = { "type", "status",
		"lastTransitionTime", NULL };
	const json_t		*c, *last = NULL;
	const char		*type;
	json_t			*out, *o;
	size_t			 i, k;

	json_array_foreach (json_object_get(status, "conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (type != NULL && strcmp(type, cond) == 0)
			last = c;
	}
	if (last == NULL)
		return (NULL);
	o = json_object();
	for (k = 0; keys[k] != NULL; k++)
		ownerrec_copy(o, last, keys[k]);
	out = json_object();
	json_object_set_new(out, "conditions", json_pack("[o]", o));
	return (out);
}

/*
 * What a PodGroup and a CompositePodGroup share, into out and its spec
 * sp: the policy, the topology, disruptionMode all, the parent, and the
 * last condition of type cond.
 */
static void
ownerrec_group(json_t *out, json_t *sp, const json_t *obj, const char *cond)
{
	const json_t *spec = json_object_get(obj, "spec");

	if (json_object_get(spec, "schedulingPolicy") != NULL)
		json_object_set_new(sp, "schedulingPolicy",
		    ownerrec_policy(json_object_get(spec, "schedulingPolicy")));
	ownerrec_set(sp, "schedulingConstraints",
	    ownerrec_topology(json_object_get(spec, "schedulingConstraints")));
	if (json_object_get(json_object_get(spec, "disruptionMode"), "all") !=
	    NULL)
		json_object_set_new(sp, "disruptionMode",
		    json_pack("{s:{}}", "all"));
	ownerrec_copy(sp, spec, "parentCompositePodGroupName");
	ownerrec_set(out, "status",
	    ownerrec_pg_status(json_object_get(obj, "status"), cond));
}

json_t *
ownerrec_dup(enum workload_kind kind, const json_t *obj)
{
	static const char *const none[] = { NULL };
	static const char *const wl[] = { "workload", NULL };
	static const char *const name[] = { "name", NULL };
	static const char *const wref[] = { "workloadName", "templateName",
		NULL };
	static const char *const claim[] = { "name", "resourceClaimName",
		"resourceClaimTemplateName", NULL };
	const json_t		*spec = json_object_get(obj, "spec");
	json_t			*out, *sp;

	if (obj == NULL)
		return (NULL);
	out = json_object();
	ownerrec_copy(out, obj, "apiVersion");
	ownerrec_copy(out, obj, "kind");
	json_object_set_new(out, "metadata",
	    ownerrec_meta(json_object_get(obj, "metadata")));
	sp = json_object();
	ownerrec_copy(sp, spec, "activeDeadlineSeconds");
	switch (kind) {
	case WORKLOAD_JOB:
		ownerrec_copy(sp, spec, "parallelism");
		ownerrec_copy(sp, spec, "completionMode");
		break;
	case WORKLOAD_JOBSET:
		ownerrec_set(sp, "replicatedJobs",
		    ownerrec_rjobs(json_object_get(spec, "replicatedJobs")));
		break;
	case WORKLOAD_PODGROUP:
		ownerrec_copy(sp, spec, "minMember");
		break;
	case WORKLOAD_SCHED_PODGROUP:
		ownerrec_group(out, sp, obj, PODGROUP_CONDITION);
		ownerrec_set(sp, "resourceClaims",
		    ownerrec_list(json_object_get(spec, "resourceClaims"),
			claim));
		ownerrec_set(sp, "workloadRef",
		    ownerrec_ref(json_object_get(spec, "workloadRef"), none));
		ownerrec_set(sp, "podGroupTemplateRef",
		    ownerrec_ref(json_object_get(spec, "podGroupTemplateRef"),
			wl));
		break;
	case WORKLOAD_SCHED_COMPOSITE:
		ownerrec_group(out, sp, obj, COMPOSITE_CONDITION);
		ownerrec_set(sp, "workloadRef",
		    ownerrec_keep(json_object_get(spec, "workloadRef"), wref));
		break;
	case WORKLOAD_SCHED_WORKLOAD:
		ownerrec_set(sp, "podGroupTemplates",
		    ownerrec_list(json_object_get(spec, "podGroupTemplates"),
			name));
		ownerrec_set(sp, "compositePodGroupTemplates",
		    ownerrec_composites(
			json_object_get(spec, "compositePodGroupTemplates")));
		break;
	case WORKLOAD_LWS:
	case WORKLOAD_KINDS:
		break;
	}
	if (json_object_size(sp) > 0)
		json_object_set_new(out, "spec", sp);
	else
		json_decref(sp);
	return (out);
}
