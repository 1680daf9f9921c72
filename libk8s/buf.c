/*
 * The growable byte buffer used for curl callbacks, request bodies and
 * patches.  The buffer owns its data until buf_release hands it over.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
buf_cleanup(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static void
buf_grow(struct buf *b, size_t more)
{
	size_t need;

	if (more > SIZE_MAX - b->len - 1)
		fatalx("buf_grow: size overflow");
	need = b->len + more + 1;
	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 256;
	while (b->cap < need)
		b->cap = b->cap > SIZE_MAX / 2 ? need : b->cap * 2;
	b->data = xreallocarray(b->data, 1, b->cap);
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n != 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char   *s;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n == -1)
		fatalx("buf_printf: out of memory");
	buf_add(b, s, (size_t)n);
	free(s);
}

char *
buf_release(struct buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = xstrdup("");
	buf_init(b);
	return (p);
}
