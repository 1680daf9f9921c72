/* Deadlines for timed waits. */
#include <time.h>

#include "clock.h"

void
deadline_after_ms(struct timespec *ts, clockid_t clock, long ms)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}
