/* Helpers shared by the unit tests: test data and temporary files. */
#ifndef CHECK_UTIL_H
#define CHECK_UTIL_H

#include <sys/types.h>

#include <stddef.h>

/*
 * The bytes of path, NUL-terminated, their number in *len; the caller
 * frees them.  Fails the test when path cannot be read.
 */
char *check_slurp(const char *path, size_t *len);
/*
 * Writes len bytes of data to a new file named after template (mkstemp's
 * "...XXXXXX", filled in place), with mode; the caller unlinks it.  Fails
 * the test when it cannot.
 */
void check_tmpfile(char *template, const void *data, size_t len, mode_t mode);

#endif /* CHECK_UTIL_H */
