/* Percentiles for the benchmark tools (pct.h). */
#include <stdlib.h>

#include "pct.h"

static int
pct_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

void
pct_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), pct_cmp);
}

size_t
pct_nearest(size_t n, unsigned int p)
{
	size_t rank = (p * n + 99) / 100;

	return (rank < 1 ? 1 : rank);
}

double
pct_rank(const double *v, size_t n, unsigned int p)
{
	size_t rank = pct_nearest(n, p);

	if (rank > n)
		rank = n;
	return (v[rank - 1]);
}
