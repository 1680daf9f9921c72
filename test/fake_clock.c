/*
 * The reconcile thread's clock (now.c) for the group tests: it stands
 * still until a test moves it, so retry backoffs and sweeps happen when a
 * row says.
 */
#include <stdint.h>

#include "bridge.h"
#include "fakes.h"

/* Far from 0: a group's next_try of 0 means "at once". */
static int64_t fake_now_ms = 1000000;

int64_t
now_ms(void)
{
	return (fake_now_ms);
}

void
fake_clock_advance(int64_t ms)
{
	fake_now_ms += ms;
}
