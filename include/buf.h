/*
 * The one growable byte buffer (libk8s/buf.c).  data is owned by the buffer
 * and is NUL-terminated when non-NULL; buf_release hands it to the caller.
 */
#ifndef BUF_H
#define BUF_H

#include <stddef.h>

struct buf {
	char  *data; /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
};

void buf_init(struct buf *);
void buf_cleanup(struct buf *);
void buf_reset(struct buf *);
void buf_add(struct buf *, const void *, size_t);
void buf_addstr(struct buf *, const char *);
void buf_printf(struct buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
/* Returns the data (caller frees) and leaves the buffer empty. */
char *buf_release(struct buf *);

#endif /* BUF_H */
