/* The array of owned strings (strv.h). */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "strv.h"

void
strv_add(struct strv *sv, const char *s)
{
	if (sv->n == sv->cap) {
		sv->cap = sv->cap == 0 ? 1 : sv->cap * 2;
		sv->v = xreallocarray(sv->v, sv->cap, sizeof(*sv->v));
	}
	sv->v[sv->n++] = xstrdup(s);
}

void
strv_set(struct strv *sv, size_t i, const char *s)
{
	char *c = xstrdup(s);

	free(sv->v[i]);
	sv->v[i] = c;
}

void
strv_remove(struct strv *sv, size_t i)
{
	free(sv->v[i]);
	memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i - 1) * sizeof(*sv->v));
	sv->n--;
}

long
strv_find(const struct strv *sv, const char *s)
{
	uint32_t i;

	for (i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return ((long)i);
	return (-1);
}

void
strv_clear(struct strv *sv)
{
	uint32_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void
strv_from_json(struct strv *sv, const json_t *array)
{
	json_t *v;
	size_t	i;

	strv_clear(sv);
	json_array_foreach (array, i, v)
		if (json_is_string(v))
			strv_add(sv, json_string_value(v));
}

size_t
strv_bytes(const struct strv *sv)
{
	size_t	 n;
	uint32_t i;

	if (sv->v == NULL)
		return (0);
	n = malloc_usable_size(sv->v);
	for (i = 0; i < sv->n; i++)
		n += malloc_usable_size(sv->v[i]);
	return (n);
}
