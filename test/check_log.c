/*
 * The log (libk8s/log.c): one line per message, whatever the message
 * holds.  A value a tenant wrote (an annotation with a newline) must not
 * start a second, forged line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "log.h"
#include "check_suites.h"

/* What log_warnx(fmt, arg) writes to standard error. */
static void
logged(const char *arg, char *out, size_t len)
{
	FILE  *f = tmpfile();
	int    saved = dup(STDERR_FILENO);
	size_t n;

	ck_assert_ptr_nonnull(f);
	dup2(fileno(f), STDERR_FILENO);
	log_warnx("annotation value \"%s\"", arg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
}

START_TEST(test_log_one_line)
{
	char out[4096];

	logged("x\n2026-12-06T00:00:00.000Z info reconcile: forged", out,
	    sizeof(out));
	ck_assert_ptr_nonnull(strstr(out,
	    "annotation value \"x\\n2026-12-06T00:00:00.000Z info reconcile: "
	    "forged\""));
	ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);
	logged("bell\a cr\r tab\t del\x7f", out, sizeof(out));
	ck_assert_ptr_nonnull(
	    strstr(out, "\"bell\\x07 cr\\r tab\\t del\\x7f\"\n"));
	/* UTF-8 passes as it is. */
	logged("caf\xc3\xa9", out, sizeof(out));
	ck_assert_ptr_nonnull(strstr(out, "\"caf\xc3\xa9\"\n"));
}
END_TEST

Suite *
log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("escape");

	tcase_add_test(tc, test_log_one_line);
	suite_add_tcase(s, tc);
	return (s);
}
