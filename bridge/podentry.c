/*
 * The reconcile thread's pod entries: what the bridge knows about each pod
 * it schedules (owned by the pods map), its age and whether it is over.
 * Pure but for the clocks.
 *
 * Threads: reconcile.
 */
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "xmalloc.h"
#include "bridge.h"

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
