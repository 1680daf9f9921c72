/*
 * What a group keeps of its Slurm job (struct group_job, the group's job),
 * and its PodGroup's condition: the part that a pending pod alone never
 * uses (the job's own pod list, layout and end, a heterogeneous job's
 * shape, the allocations given back, the PodGroup's condition).  Until
 * something is written there, a group's job is one shared, read-only,
 * all-NULL record, so that 50,000 pending pods do not each carry 72 bytes
 * of NULLs.
 *
 * Threads: reconcile.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

/* Every group's job while it has none of its own. */
static const struct group_job groupjob_none;

static int
groupjob_own(const struct group *g)
{
	return (g->job != &groupjob_none);
}

void
groupjob_init(struct group *g)
{
	g->job = (struct group_job *)(uintptr_t)&groupjob_none;
}

struct group_job *
groupjob_get(struct group *g)
{
	if (!groupjob_own(g))
		g->job = xcalloc(1, sizeof(*g->job));
	return (g->job);
}

void
groupjob_forget(struct group *g)
{
	struct group_job *m = g->job;

	if (!groupjob_own(g))
		return;
	strv_clear(&m->job_pods);
	json_decref(m->layout);
	json_decref(m->het);
	free(m->end_msg);
	free(m->disruption);
	m->layout = m->het = NULL;
	m->end_msg = m->disruption = NULL;
	m->grace_end = 0;
	if (m->pg_cond == NULL && m->topo_refits == 0) {
		free(m);
		groupjob_init(g);
	}
}

void
groupjob_free(struct group *g)
{
	groupjob_forget(g);
	if (groupjob_own(g)) {
		free(g->job->pg_cond);
		free(g->job);
	}
	groupjob_init(g);
}

size_t
groupjob_bytes(const struct group *g)
{
	return (groupjob_own(g) ?
		malloc_usable_size(g->job) + strv_bytes(&g->job->job_pods) :
		0);
}
