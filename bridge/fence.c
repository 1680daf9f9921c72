/*
 * The fence of Slurm writes that act on work another leader may own by now:
 * with --leader-elect, a replica whose Lease renewal (leader.c, on main's
 * thread) is LEADER_FENCE_MS old or more holds such writes back.  The
 * Lease passes to another replica only its duration (15 s) after the last
 * renewal,
 * and the lease's own calls give up after LEADER_CALL_MS, so a leader that
 * stalls stops writing well before a successor can start.  Any thread.
 *
 * Threads: end, reconcile.
 */
#include <stdatomic.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "bridge.h"

int
fence_check(int leader_elect, const char *what)
{
	long long age;

	if (!leader_elect)
		return (0);
	age = clock_ms(CLOCK_MONOTONIC) - atomic_load(&bstats.lease_renewed_ms);
	if (age < LEADER_FENCE_MS)
		return (0);
	log_warnx("fence: Lease last renewed %lld ms ago, another replica "
		  "may lead by now: not %s",
	    age, what);
	atomic_fetch_add(&bstats.fenced, 1);
	return (1);
}
