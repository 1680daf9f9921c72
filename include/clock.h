#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <time.h>

/* A deadline ms milliseconds from now on clock (for timed waits). */
void clock_deadline_ms(struct timespec *ts, clockid_t clock, long ms);

/* clock's time in seconds, e.g. CLOCK_MONOTONIC or CLOCK_THREAD_CPUTIME_ID. */
double clock_seconds(clockid_t clock);
/* ... in whole milliseconds. */
int64_t clock_ms(clockid_t clock);

#endif /* CLOCK_H */
