/*
 * A group's more (struct group_more): the part of a group that a pending
 * pod alone never uses (its job's own pod list, layout and end,
 * a heterogeneous job's shape, a PodGroup's condition).  Until something
 * is written there, a group's more is one shared, read-only, all-NULL
 * record, so that 50,000 pending pods do not each carry 72 bytes of NULLs.
 * Reconcile thread.
 *
 * Threads: reconcile.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "xmalloc.h"
#include "bridge.h"

/* Every group's more while it has none of its own. */
static const struct group_more groupmore_none;

static int
groupmore_own(const struct group *g)
{
	return (g->more != &groupmore_none);
}

void
groupmore_init(struct group *g)
{
	g->more = (struct group_more *)(uintptr_t)&groupmore_none;
}

struct group_more *
groupmore_get(struct group *g)
{
	if (!groupmore_own(g))
		g->more = xcalloc(1, sizeof(*g->more));
	return (g->more);
}

void
groupmore_forget_job(struct group *g)
{
	struct group_more *m = g->more;

	if (!groupmore_own(g))
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
		groupmore_init(g);
	}
}

void
groupmore_free(struct group *g)
{
	groupmore_forget_job(g);
	if (groupmore_own(g)) {
		free(g->more->pg_cond);
		free(g->more);
	}
	groupmore_init(g);
}

size_t
groupmore_bytes(const struct group *g)
{
	return (groupmore_own(g) ?
		malloc_usable_size(g->more) + strv_bytes(&g->more->job_pods) :
		0);
}
