/*
 * Helpers shared by the unit tests (check_util.h): reading a test data
 * file whole, writing a temporary file.  They fail the running test
 * instead of returning errors.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "xmalloc.h"
#include "check_util.h"

char *
check_slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *data;
	long  n;

	ck_assert_msg(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	data = xmalloc((size_t)n + 1);
	ck_assert_int_eq(fread(data, 1, (size_t)n, fp), (size_t)n);
	data[n] = '\0';
	fclose(fp);
	*len = (size_t)n;
	return (data);
}

void
check_tmpfile(char *template, const void *data, size_t len, mode_t mode)
{
	FILE *fp;
	int   fd;

	ck_assert_int_ge(fd = mkstemp(template), 0);
	ck_assert_ptr_nonnull(fp = fdopen(fd, "w"));
	ck_assert_uint_eq(fwrite(data, 1, len, fp), len);
	ck_assert_int_eq(fchmod(fileno(fp), mode), 0);
	ck_assert_int_eq(fclose(fp), 0);
}
