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
#define Q_MAX_DIGITS	18

/* 10^n for n <= 38, or 0 if it does not fit. */
static __int128
pow10_128(int n)
{
	__int128	v = 1;

	if (n < 0 || n > 38)
		return (0);
	while (n-- > 0)
		v *= 10;
	return (v);
}

/* Parses s and returns ceil(value * 10^scale) in *out. */
static int
quantity_parse(const char *s, int scale, int64_t *out)
{
	__int128	 mant = 0, num, den, lim = (__int128)INT64_MAX;
	int		 digits = 0, frac = 0, e10 = 0, e2 = 0, neg = 0;
	int		 seen_dot = 0, esign = 1, ev = 0;
	const char	*p = s;

	if (s == NULL || *s == '\0')
		return (-1);
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!isdigit((unsigned char)*p) && !(*p == '.' &&
	    isdigit((unsigned char)p[1])))
		return (-1);
	for (; isdigit((unsigned char)*p) || (*p == '.' && !seen_dot); p++) {
		if (*p == '.') {
			seen_dot = 1;
			continue;
		}
		if (mant == 0 && *p == '0') {
			if (seen_dot)
				frac++;
			continue;
		}
		if (++digits > Q_MAX_DIGITS)
			return (-1);
		mant = mant * 10 + (*p - '0');
		if (seen_dot)
			frac++;
	}
	if (*p == '\0')
		;
	else if (strcmp(p, "Ki") == 0)
		e2 = 10;
	else if (strcmp(p, "Mi") == 0)
		e2 = 20;
	else if (strcmp(p, "Gi") == 0)
		e2 = 30;
	else if (strcmp(p, "Ti") == 0)
		e2 = 40;
	else if (strcmp(p, "Pi") == 0)
		e2 = 50;
	else if (strcmp(p, "Ei") == 0)
		e2 = 60;
	else if (strcmp(p, "n") == 0)
		e10 = -9;
	else if (strcmp(p, "u") == 0)
		e10 = -6;
	else if (strcmp(p, "m") == 0)
		e10 = -3;
	else if (strcmp(p, "k") == 0)
		e10 = 3;
	else if (strcmp(p, "M") == 0)
		e10 = 6;
	else if (strcmp(p, "G") == 0)
		e10 = 9;
	else if (strcmp(p, "T") == 0)
		e10 = 12;
	else if (strcmp(p, "P") == 0)
		e10 = 15;
	else if (strcmp(p, "E") == 0)
		e10 = 18;
	else if (*p == 'e' || *p == 'E') {
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
		e10 = esign * ev;
	} else
		return (-1);

	if (mant == 0) {
		*out = 0;
		return (0);
	}
	if (neg)
		return (-1);	/* resources are never negative */
	e10 += scale - frac;
	/* value = mant * 2^e2 * 10^e10 */
	num = mant;
	den = 1;
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
