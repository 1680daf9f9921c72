/* Quantity parsing: valid forms, rounding, and refusals. */
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "k8s.h"
#include "check_suites.h"

static const struct {
	const char *in;
	int	    rc;
	int64_t	    value; /* rounded up to whole units */
	int64_t	    milli;
} qcases[] = {
	{ "1", 0, 1, 1000 }, { "500m", 0, 1, 500 }, { "1500m", 0, 2, 1500 },
	{ "0", 0, 0, 0 }, { "0.5", 0, 1, 500 }, { ".5", 0, 1, 500 },
	{ "2Gi", 0, 2147483648LL, 2147483648000LL },
	{ "1.5Gi", 0, 1610612736LL, 1610612736000LL },
	{ "128Mi", 0, 134217728LL, 134217728000LL },
	{ "1Ki", 0, 1024, 1024000 }, { "1k", 0, 1000, 1000000 },
	{ "1M", 0, 1000000, 1000000000LL }, { "1e3", 0, 1000, 1000000 },
	{ "1E3", 0, 1000, 1000000 }, { "2e-3", 0, 1, 2 }, { "1u", 0, 1, 1 },
	{ "100n", 0, 1, 1 },
	{ "8Ei", 0, 0, 0 }, /* rc overridden below: overflow */
	{ "+3", 0, 3, 3000 }, { "", -1, 0, 0 }, { "abc", -1, 0, 0 },
	{ "1Gb", -1, 0, 0 }, { "1.2.3", -1, 0, 0 }, { "-1", -1, 0, 0 },
	{ "1e", -1, 0, 0 }, { "1e1000", -1, 0, 0 }, { "Gi", -1, 0, 0 },
	{ "1 Gi", -1, 0, 0 }, { "99999999999999999999", -1, 0, 0 },
	{ "999999999999999999", 0, 999999999999999999LL,
	    0 },			     /* milli overflows */
	{ "9223372036854775807", -1, 0, 0 }, /* too many digits */
};

START_TEST(test_quantity_table)
{
	int64_t	    v = -7, m = -7;
	const char *in = qcases[_i].in;
	int	    rc;

	rc = k8s_quantity_value(in, &v);
	if (strcmp(in, "8Ei") == 0) {
		ck_assert_int_eq(rc, -1); /* 2^63 does not fit */
		return;
	}
	ck_assert_msg(rc == qcases[_i].rc, "value(\"%s\") rc %d", in, rc);
	if (rc == 0)
		ck_assert_msg(v == qcases[_i].value, "value(\"%s\") = %lld", in,
		    (long long)v);
	rc = k8s_quantity_milli(in, &m);
	if (strcmp(in, "999999999999999999") == 0) {
		ck_assert_int_eq(rc, -1);
		return;
	}
	ck_assert_msg(rc == qcases[_i].rc, "milli(\"%s\") rc %d", in, rc);
	if (rc == 0)
		ck_assert_msg(m == qcases[_i].milli, "milli(\"%s\") = %lld", in,
		    (long long)m);
}
END_TEST

Suite *
quantity_suite(void)
{
	Suite *s = suite_create("quantity");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_quantity_table, 0,
	    sizeof(qcases) / sizeof(qcases[0]));
	suite_add_tcase(s, tc);
	return (s);
}
