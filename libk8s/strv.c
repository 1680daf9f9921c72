/*
 * The array of owned strings (strv.h), in three forms:
 * - plain: cap slots, each string its own block;
 * - one string in the array's own block, after the pointer (cap 0, v
 *   set): one allocation, not two, 32 bytes less;
 * - one borrowed string (cap STRV_BORROWED): v is the owner's pointer to
 *   it, and nothing is allocated (a pod alone's members: the pod's key is
 *   in its group's).
 * A change makes the array its own: the one-string form when it still
 * holds one string, else plain.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"
#include "strv.h"

#define STRV_BORROWED UINT32_MAX

static int
strv_single(const struct strv *sv)
{
	return (sv->v != NULL && sv->cap == 0);
}

static int
strv_borrowed(const struct strv *sv)
{
	return (sv->cap == STRV_BORROWED);
}

/* One string, not in a plain array: in its own block, or borrowed. */
static int
strv_one(const struct strv *sv)
{
	return (strv_single(sv) || strv_borrowed(sv));
}

/* Replaces sv's contents (empty, borrowed, or a single) with a single s. */
static void
strv_make_single(struct strv *sv, const char *s)
{
	size_t n = strlen(s) + 1;
	char **v = xmalloc(sizeof(*v) + n);

	v[0] = (char *)(v + 1);
	memcpy(v[0], s, n);
	strv_clear(sv);
	sv->v = v;
	sv->n = 1;
	sv->cap = 0;
}

void
strv_add(struct strv *sv, const char *s)
{
	char **v;

	if (sv->v == NULL) {
		strv_make_single(sv, s);
		return;
	}
	if (strv_one(sv)) {
		v = xreallocarray(NULL, 2, sizeof(*v));
		v[0] = xstrdup(sv->v[0]);
		strv_clear(sv);
		sv->v = v;
		sv->n = 1;
		sv->cap = 2;
	} else if (sv->n == sv->cap) {
		sv->cap *= 2;
		sv->v = xreallocarray(sv->v, sv->cap, sizeof(*sv->v));
	}
	sv->v[sv->n++] = xstrdup(s);
}

void
strv_set(struct strv *sv, size_t i, const char *s)
{
	char *c;

	if (strv_one(sv)) {
		strv_make_single(sv, s);
		return;
	}
	c = xstrdup(s);
	free(sv->v[i]);
	sv->v[i] = c;
}

void
strv_remove(struct strv *sv, size_t i)
{
	if (strv_one(sv)) {
		strv_clear(sv);
		return;
	}
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

	if (strv_borrowed(sv)) {
		sv->v = NULL;
		sv->n = sv->cap = 0;
		return;
	}
	if (!strv_single(sv))
		for (i = 0; i < sv->n; i++)
			free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

void
strv_borrow(struct strv *sv, char **slot)
{
	strv_clear(sv);
	sv->v = slot;
	sv->n = 1;
	sv->cap = STRV_BORROWED;
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

	if (sv->v == NULL || strv_borrowed(sv))
		return (0);
	n = malloc_usable_size(sv->v);
	if (strv_single(sv))
		return (n);
	for (i = 0; i < sv->n; i++)
		n += malloc_usable_size(sv->v[i]);
	return (n);
}
