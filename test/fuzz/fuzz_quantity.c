/*
 * libFuzzer target: quantity parsing.  Besides not crashing, whole units
 * and thousandths must agree: ceil(ceil(1000 x) / 1000) == ceil(x).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	s[64];
	int64_t v, m;
	int	rv, rm;

	if (size >= sizeof(s))
		return (0);
	memcpy(s, data, size);
	s[size] = '\0';
	rv = k8s_quantity_value(s, &v);
	rm = k8s_quantity_milli(s, &m);
	if (rv == 0 && v < 0)
		abort();
	if (rm == 0 && m < 0)
		abort();
	/* Milli can overflow where whole units do not; not the reverse. */
	if (rm == 0 && rv != 0)
		abort();
	if (rv == 0 && rm == 0 && v != (m + 999) / 1000)
		abort();
	return (0);
}
