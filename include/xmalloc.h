/*
 * Allocation wrappers that never return NULL: out of memory kills the process
 * (fatalx), and Kubernetes restarts the pod.  Also the one growable byte
 * buffer used for curl callbacks, request bodies and patches.
 */
#ifndef XMALLOC_H
#define XMALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

struct buf {
	char	*data;		/* always NUL-terminated when non-NULL */
	size_t	 len;
	size_t	 cap;
};

void	 buf_init(struct buf *);
void	 buf_cleanup(struct buf *);
void	 buf_reset(struct buf *);
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_addstr(struct buf *, const char *);
void	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Drops the first n bytes, keeping the rest. */
void	 buf_consume(struct buf *, size_t);
/* Returns the data (caller frees) and leaves the buffer empty. */
char	*buf_release(struct buf *);

/* A deadline ms milliseconds from now on clock (for timed waits). */
void	 deadline_after_ms(struct timespec *ts, clockid_t clock, long ms);

#endif /* XMALLOC_H */
