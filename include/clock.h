#ifndef CLOCK_H
#define CLOCK_H

#include <time.h>

/* A deadline ms milliseconds from now on clock (for timed waits). */
void	 deadline_after_ms(struct timespec *ts, clockid_t clock, long ms);

#endif /* CLOCK_H */
