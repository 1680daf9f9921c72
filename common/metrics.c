/*
 * Prometheus text format (version 0.0.4) writer and lock-free histograms.
 * Observations come from any thread; a scrape reads the atomics one by one,
 * so a histogram seen mid-update may be off by the observation in flight.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "buf.h"
#include "metrics.h"

static const double metrics_bounds[METRICS_NBUCKETS] = { 0.0005, 0.001, 0.002,
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5, 10 };

void
metrics_hist_observe(struct metrics_hist *h, double seconds)
{
	int i;

	for (i = 0; i < METRICS_NBUCKETS; i++)
		if (seconds <= metrics_bounds[i])
			break;
	atomic_fetch_add(&h->bucket[i], 1);
	atomic_fetch_add(&h->sum_us,
	    (unsigned long long)(seconds > 0 ? seconds * 1e6 : 0));
	atomic_fetch_add(&h->count, 1);
}

void
metrics_family(struct buf *b, const char *name, const char *type,
    const char *help)
{
	buf_addstr(b, "# HELP ");
	buf_addstr(b, name);
	buf_addstr(b, " ");
	buf_addstr(b, help);
	buf_addstr(b, "\n# TYPE ");
	buf_addstr(b, name);
	buf_addstr(b, " ");
	buf_addstr(b, type);
	buf_addstr(b, "\n");
}

void
metrics_sample(struct buf *b, const char *name, const char *labels,
    double value)
{
	char num[64];

	buf_addstr(b, name);
	if (labels != NULL && *labels != '\0') {
		buf_addstr(b, "{");
		buf_addstr(b, labels);
		buf_addstr(b, "}");
	}
	snprintf(num, sizeof(num), " %.10g\n", value);
	buf_addstr(b, num);
}

void
metrics_hist_write(struct buf *b, const char *name, const char *labels,
    const struct metrics_hist *h)
{
	char		   n[256], l[256];
	const char	  *sep = labels != NULL && *labels != '\0' ? "," : "";
	unsigned long long cum = 0;
	int		   i;

	if (labels == NULL)
		labels = "";
	snprintf(n, sizeof(n), "%s_bucket", name);
	for (i = 0; i <= METRICS_NBUCKETS; i++) {
		cum += atomic_load(&h->bucket[i]);
		if (i < METRICS_NBUCKETS)
			snprintf(l, sizeof(l), "%s%sle=\"%g\"", labels, sep,
			    metrics_bounds[i]);
		else
			snprintf(l, sizeof(l), "%s%sle=\"+Inf\"", labels, sep);
		metrics_sample(b, n, l, (double)cum);
	}
	snprintf(n, sizeof(n), "%s_sum", name);
	metrics_sample(b, n, labels, (double)atomic_load(&h->sum_us) / 1e6);
	snprintf(n, sizeof(n), "%s_count", name);
	metrics_sample(b, n, labels, (double)cum);
}

void
metrics_one(struct buf *b, const char *name, const char *type, const char *help,
    double value)
{
	metrics_family(b, name, type, help);
	metrics_sample(b, name, NULL, value);
}

void
metrics_counters(struct buf *b, const char *name, const char *help,
    const char *label, const char *const *names, atomic_ullong *values, int n)
{
	char l[128];
	int  i;

	metrics_family(b, name, "counter", help);
	for (i = 0; i < n; i++) {
		snprintf(l, sizeof(l), "%s=\"%s\"", label, names[i]);
		metrics_sample(b, name, l, (double)atomic_load(&values[i]));
	}
}

double
metrics_thread_cpu(void)
{
	return (clock_seconds(CLOCK_THREAD_CPUTIME_ID));
}

double
metrics_now(void)
{
	return (clock_seconds(CLOCK_MONOTONIC));
}
