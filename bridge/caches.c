/*
 * The reconcile thread's caches of workload objects (PodGroups,
 * LeaderWorkerSets, JobSets, Jobs; ns/name keyed maps in struct reconcile)
 * as the lookup the workload rules (common/workload.c) call.
 */
#include <stdio.h>

#include "bridge.h"

/* workload_lookup_fn over the owner caches; a new reference, or NULL. */
static json_t *
caches_lookup(void *arg, enum workload_kind kind, const char *ns,
    const char *name)
{
	struct reconcile *r = arg;
	struct map *m[WORKLOAD_KINDS] = { r->podgroups, r->lwss, r->jobsets,
		r->k8s_jobs };
	char	    key[512];

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	return (json_incref(map_get(m[kind], key)));
}

void
caches_lookup_init(struct reconcile *r, struct workload_lookup *lk)
{
	lk->fn = caches_lookup;
	lk->arg = r;
}
