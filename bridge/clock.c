/*
 * The reconcile thread's clock: monotonic milliseconds for its timers
 * (polls, sweeps, retry backoff).  In a file of its own so that the unit
 * tests link a clock they move by hand (test/fake_clock.c).
 */
#include <stdint.h>
#include <time.h>

#include "bridge.h"

int64_t
reconcile_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}
