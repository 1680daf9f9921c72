/*
 * Allocation wrappers and the growable byte buffer.  Out of memory is fatal:
 * a daemon that cannot allocate is restarted by Kubernetes, which is simpler
 * and safer than threading ENOMEM through every caller.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		fatalx("xmalloc: out of memory (%zu bytes)", size);
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		fatalx("xcalloc: out of memory (%zu x %zu bytes)", n, size);
	return (p);
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		fatalx("xreallocarray: %zu x %zu overflows", n, size);
	if ((p = realloc(old, n * size == 0 ? 1 : n * size)) == NULL)
		fatalx("xreallocarray: out of memory (%zu x %zu bytes)", n,
		    size);
	return (p);
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		fatalx("xstrdup: out of memory");
	return (p);
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		fatalx("xstrndup: out of memory");
	return (p);
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatalx("xasprintf: out of memory");
	return (n);
}
