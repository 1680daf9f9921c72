/*
 * What every bench tool does alike: whole numbers and decimals from its
 * flags, the wall clock in ms or us, monotonic deadlines, and SIGINT and
 * SIGTERM blocked for sigtimedwait() or sigpending().  No third-party
 * library: slurm-baseline links it beside libslurm alone.
 */
#ifndef BENCH_H
#define BENCH_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

/* A whole number in [min, max] into *out; 0, or -1 when s is not one. */
int bench_parse_int(const char *s, long long min, long long max,
    long long *out);
/* A number in [min, max] into *out; 0, or -1 when s is not one. */
int bench_parse_double(const char *s, double min, double max, double *out);

/* The wall clock (CLOCK_REALTIME) in epoch ms, or in epoch us. */
int64_t bench_now_ms(void);
int64_t bench_now_us(void);

/* The time us (>= 0) after base. */
struct timespec bench_ts_add(const struct timespec *base, int64_t us);
/* Is a earlier than b? */
int bench_ts_before(const struct timespec *a, const struct timespec *b);
/* Sleeps until at on CLOCK_MONOTONIC, through signals. */
void bench_sleep_until(const struct timespec *at);

/*
 * Blocks SIGINT and SIGTERM in the calling thread (threads started later
 * inherit it) and fills sigs with them: main takes them with
 * sigtimedwait(), or looks with sigpending().
 */
void bench_signals(sigset_t *sigs);

#endif /* BENCH_H */
