/* Percentiles for the benchmark tools: sort, then nearest rank. */
#ifndef PCT_H
#define PCT_H

#include <stddef.h>

/* Sorts v ascending. */
void pct_sort(double *v, size_t n);
/* The nearest rank (from 1) of percentile p (in percent) among n values. */
size_t pct_nearest(size_t n, unsigned int p);
/* Nearest-rank percentile (p in percent) of n sorted values (n > 0). */
double pct_rank(const double *v, size_t n, unsigned int p);

#endif /* PCT_H */
