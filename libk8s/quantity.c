/*
 * Kubernetes resource quantities: a decimal number with an optional binary
 * (Ki..Ei), decimal (n, u, m, k, M..E) or exponent (e3) suffix.  The value
 * is computed exactly in 128-bit arithmetic and rounded up, the way the API
 * server rounds requests.  Pure; any thread.
 */
#include <ctype.h>
#include <string.h>

#include "internal.h"

/* Keeps mantissa * 2^60 within 128 bits. */
#define Q_MAX_DIGITS 18

/* 10^n for n <= 38, or 0 if it does not fit. */
static __int128
pow10_128(int n)
{
	__int128 v = 1;

	if (n < 0 || n > 38)
		return (0);
	while (n-- > 0)
		v *= 10;
	return (v);
}

/* Parses s and returns ceil(value * 10^scale) in *out. */
/* The suffixes: a power of two (Ki..Ei) or of ten (n..E). */
static const struct {
	const char *suffix;
	int	    e2, e10;
} quantity_suffixes[] = {
	{ "", 0, 0 },
	{ "Ki", 10, 0 },
	{ "Mi", 20, 0 },
	{ "Gi", 30, 0 },
	{ "Ti", 40, 0 },
	{ "Pi", 50, 0 },
	{ "Ei", 60, 0 },
	{ "n", 0, -9 },
	{ "u", 0, -6 },
	{ "m", 0, -3 },
	{ "k", 0, 3 },
	{ "M", 0, 6 },
	{ "G", 0, 9 },
	{ "T", 0, 12 },
	{ "P", 0, 15 },
	{ "E", 0, 18 },
};

/*
 * The digits of a decimal number: the mantissa without leading zeros and
 * the count of digits after the dot.  Returns the end, or NULL.
 */
static const char *
quantity_digits(const char *p, __int128 *mant, int *frac)
{
	int digits = 0, seen_dot = 0;

	*mant = 0;
	*frac = 0;
	if (!isdigit((unsigned char)*p) &&
	    !(*p == '.' && isdigit((unsigned char)p[1])))
		return (NULL);
	for (; isdigit((unsigned char)*p) || (*p == '.' && !seen_dot); p++) {
		if (*p == '.') {
			seen_dot = 1;
			continue;
		}
		if (seen_dot)
			(*frac)++;
		if (*mant == 0 && *p == '0')
			continue;
		if (++digits > Q_MAX_DIGITS)
			return (NULL);
		*mant = *mant * 10 + (*p - '0');
	}
	return (p);
}

/* The suffix or decimal exponent at p: 0, or -1 if it is neither. */
static int
quantity_suffix(const char *p, int *e2, int *e10)
{
	size_t i;
	int    esign = 1, ev = 0;

	for (i = 0;
	     i < sizeof(quantity_suffixes) / sizeof(quantity_suffixes[0]); i++)
		if (strcmp(p, quantity_suffixes[i].suffix) == 0) {
			*e2 = quantity_suffixes[i].e2;
			*e10 = quantity_suffixes[i].e10;
			return (0);
		}
	if (*p != 'e' && *p != 'E')
		return (-1);
	p++;
	if (*p == '+' || *p == '-')
		esign = *p++ == '-' ? -1 : 1;
	if (!isdigit((unsigned char)*p))
		return (-1);
	for (; isdigit((unsigned char)*p); p++) {
		ev = ev * 10 + (*p - '0');
		if (ev > 100)
			return (-1);
	}
	if (*p != '\0')
		return (-1);
	*e2 = 0;
	*e10 = esign * ev;
	return (0);
}

/* mant * 2^e2 * 10^e10, rounded up, into *out; -1 past INT64_MAX. */
static int
quantity_scale(__int128 mant, int e2, int e10, int64_t *out)
{
	__int128 num = mant, den, lim = (__int128)INT64_MAX;

	if (e10 >= 0) {
		if ((den = pow10_128(e10)) == 0 || num > lim / den)
			return (-1);
		num *= den;
		den = 1;
	} else if ((den = pow10_128(-e10)) == 0) {
		/* Far below one unit: rounds up to the smallest value. */
		*out = 1;
		return (0);
	}
	while (e2-- > 0) {
		num *= 2;
		if (num / den > lim)
			return (-1);
	}
	num = (num + den - 1) / den;
	if (num > lim)
		return (-1);
	*out = (int64_t)num;
	return (0);
}

static int
quantity_parse(const char *s, int scale, int64_t *out)
{
	__int128    mant;
	int	    frac, e2, e10, neg = 0;
	const char *p = s;

	if (s == NULL || *s == '\0')
		return (-1);
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if ((p = quantity_digits(p, &mant, &frac)) == NULL ||
	    quantity_suffix(p, &e2, &e10) == -1)
		return (-1);
	if (mant == 0) {
		*out = 0;
		return (0);
	}
	if (neg)
		return (-1); /* resources are never negative */
	return (quantity_scale(mant, e2, e10 + scale - frac, out));
}

int
k8s_quantity_value(const char *s, int64_t *out)
{
	return (quantity_parse(s, 0, out));
}

int
k8s_quantity_milli(const char *s, int64_t *out)
{
	return (quantity_parse(s, 3, out));
}
