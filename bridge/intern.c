/*
 * Interned strings: one shared, reference-counted copy of each string that
 * repeats across thousands of pods (namespaces, node names, scheduler
 * names).  Any thread: one mutex guards the table.
 *
 * Threads: reconcile (intern_get, intern_put), HTTP (intern_stats), informer
 * (intern_get).
 */
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "bridge.h"

struct istr {
	size_t refs;
	char   s[];
};

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct map     *intern_map; /* s -> istr, keys borrowed */
static size_t	       intern_bytes;

const char *
intern_get(const char *s)
{
	struct istr *is;
	size_t	     n;

	if (s == NULL)
		return (NULL);
	pthread_mutex_lock(&intern_lock);
	if (intern_map == NULL)
		intern_map = map_new_borrowed(NULL);
	if ((is = map_get(intern_map, s)) == NULL) {
		n = strlen(s) + 1;
		is = xmalloc(sizeof(*is) + n);
		is->refs = 0;
		memcpy(is->s, s, n);
		map_put(intern_map, is->s, is);
		intern_bytes += malloc_usable_size(is);
	}
	is->refs++;
	pthread_mutex_unlock(&intern_lock);
	return (is->s);
}

void
intern_put(const char *s)
{
	struct istr *is;

	if (s == NULL)
		return;
	is = (struct istr *)(uintptr_t)(s - offsetof(struct istr, s));
	pthread_mutex_lock(&intern_lock);
	if (--is->refs == 0) {
		map_take(intern_map, is->s);
		intern_bytes -= malloc_usable_size(is);
		free(is);
	}
	pthread_mutex_unlock(&intern_lock);
}

void
intern_stats(size_t *count, size_t *bytes)
{
	pthread_mutex_lock(&intern_lock);
	*count = intern_map != NULL ? map_count(intern_map) : 0;
	*bytes = intern_bytes +
	    (intern_map != NULL ? map_bytes(intern_map) : 0);
	pthread_mutex_unlock(&intern_lock);
}
