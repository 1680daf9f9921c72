/*
 * Prometheus text exposition for both daemons: counters and histograms
 * updated with atomics from any thread, written out on scrape.  Names carry
 * the slurm_bridge_ prefix; the caller supplies them.
 */
#ifndef METRICS_H
#define METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "xmalloc.h"

/* Latency buckets, seconds: 0.5 ms to 10 s. */
#define METRICS_NBUCKETS 12

struct metrics_hist {
	atomic_ullong bucket[METRICS_NBUCKETS + 1]; /* last: +Inf */
	atomic_ullong sum_us;
	atomic_ullong count;
};

/* Records one observation of seconds. */
void metrics_hist_observe(struct metrics_hist *, double seconds);
/* # HELP and # TYPE lines for a metric family. */
void metrics_family(struct buf *, const char *name, const char *type,
    const char *help);
/* One sample line: name{labels} value (labels may be NULL or ""). */
void metrics_sample(struct buf *, const char *name, const char *labels,
    double value);
/* The _bucket, _sum and _count lines of a histogram (family written). */
void metrics_hist_write(struct buf *, const char *name, const char *labels,
    const struct metrics_hist *);
/* A family of one unlabelled sample. */
void metrics_one(struct buf *, const char *name, const char *type,
    const char *help, double value);
/* A counter family with one sample per label value: label="names[i]". */
void metrics_counters(struct buf *, const char *name, const char *help,
    const char *label, const char *const *names, atomic_ullong *values, int n);
/* Seconds on the monotonic clock. */
double metrics_now(void);
/* The calling thread's CPU time, seconds. */
double metrics_thread_cpu(void);

#endif /* METRICS_H */
