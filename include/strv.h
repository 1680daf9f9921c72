/*
 * A growable array of owned strings, in order: cheaper than a JSON array
 * of strings by a few hundred bytes (what a single pod's group holds).
 */
#ifndef STRV_H
#define STRV_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * Read v[0] .. v[n - 1]; change it only through the functions below.  cap
 * 0 with v set is one string kept in the array's own block, cap
 * UINT32_MAX one borrowed string (strv.c).
 */
struct strv {
	char   **v;
	uint32_t n;
	uint32_t cap;
};

/* Appends a copy of s. */
void strv_add(struct strv *, const char *s);
/* Replaces entry i with a copy of s. */
void strv_set(struct strv *, size_t i, const char *s);
/* Removes entry i, keeping the order of the rest. */
void strv_remove(struct strv *, size_t i);
/* The index of s, or -1. */
long strv_find(const struct strv *, const char *s);
/*
 * Holds the one string *slot, without a copy: the caller keeps slot and
 * its string alive and unchanged while sv holds it (until a change, which
 * copies, or strv_clear).
 */
void strv_borrow(struct strv *, char **slot);
/* Frees every entry and the array; the strv is empty after. */
void strv_clear(struct strv *);
/* Replaces the contents with the strings of a JSON array (others skipped). */
void strv_from_json(struct strv *, const json_t *array);
/* Bytes held by the array and its strings. */
size_t strv_bytes(const struct strv *);

#endif /* STRV_H */
