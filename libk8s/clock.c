/* Clocks: deadlines for timed waits, and the time in seconds or ms. */
#include <stdint.h>
#include <time.h>

#include "clock.h"

void
clock_deadline_ms(struct timespec *ts, clockid_t clock, long ms)
{
	clock_gettime(clock, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

double
clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

int64_t
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}
