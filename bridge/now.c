/*
 * The reconcile thread's clock: monotonic milliseconds for its timers
 * (polls, sweeps, retry backoff).  In a file of its own so that the unit
 * tests link a clock they move by hand (test/fake_clock.c).
 *
 * Threads: reconcile.
 */
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "bridge.h"

int64_t
now_ms(void)
{
	return (clock_ms(CLOCK_MONOTONIC));
}
