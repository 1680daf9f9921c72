/*
 * The string-keyed hash map (map.h): open addressing, linear probing, FNV-1a.
 * The scheduler's caches and the informers' stores are maps.
 *
 * A slot is a key and a value (16 bytes); a byte per slot beside the table
 * keeps the top of the key's hash, so a probe compares strings only when
 * that byte matches.  The hash kept whole would cost 8 bytes more a
 * slot: 21 bytes an entry in a map of 50,000 (a table of 131,072 slots),
 * and a pending pod has an entry in five.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>

#include "xmalloc.h"
#include "map.h"

struct map_slot {
	char *key; /* NULL: empty; MAP_TOMB: deleted */
	void *value;
};

struct map {
	struct map_slot *slots;
	uint8_t		*tags; /* map_tag of each slot's key, after slots */
	size_t		 cap;  /* power of two */
	size_t		 count;
	size_t		 used;	    /* count + tombstones */
	size_t		 key_bytes; /* of the key copies */
	map_free_cb	 free_cb;
	int		 borrowed; /* keys are the caller's */
};

static char map_tomb;
#define MAP_TOMB (&map_tomb)

/* FNV-1a. */
uint64_t
map_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (h);
}

/* What a slot keeps of its key's hash. */
static uint8_t
map_tag(uint64_t h)
{
	return ((uint8_t)(h >> 56));
}

/* A table of cap empty slots and their tags, in one block. */
static void
map_table(struct map *m, size_t cap)
{
	m->slots = xcalloc(cap, sizeof(*m->slots) + 1);
	m->tags = (uint8_t *)(m->slots + cap);
	m->cap = cap;
}

struct map *
map_new(map_free_cb free_cb)
{
	struct map *m;

	m = xcalloc(1, sizeof(*m));
	map_table(m, 64);
	m->free_cb = free_cb;
	return (m);
}

struct map *
map_new_borrowed(map_free_cb free_cb)
{
	struct map *m = map_new(free_cb);

	m->borrowed = 1;
	return (m);
}

static char *
map_key_copy(struct map *m, const char *key)
{
	char *k;

	if (m->borrowed)
		return ((char *)(uintptr_t)key);
	k = xstrdup(key);
	m->key_bytes += malloc_usable_size(k);
	return (k);
}

static void
map_key_free(struct map *m, char *key)
{
	if (m->borrowed)
		return;
	m->key_bytes -= malloc_usable_size(key);
	free(key);
}

size_t
map_bytes(const struct map *m)
{
	return (sizeof(*m) + m->cap * (sizeof(*m->slots) + 1) + m->key_bytes);
}

void
map_free(struct map *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->cap; i++) {
		if (m->slots[i].key == NULL || m->slots[i].key == MAP_TOMB)
			continue;
		if (m->free_cb != NULL)
			m->free_cb(m->slots[i].value);
		map_key_free(m, m->slots[i].key);
	}
	free(m->slots);
	free(m);
}

/* Returns the slot holding key, or NULL. */
static struct map_slot *
map_find(const struct map *m, const char *key, uint64_t h)
{
	size_t	i, mask = m->cap - 1;
	uint8_t tag = map_tag(h);

	for (i = h & mask;; i = (i + 1) & mask) {
		struct map_slot *s = &m->slots[i];
		if (s->key == NULL)
			return (NULL);
		if (m->tags[i] == tag && s->key != MAP_TOMB &&
		    strcmp(s->key, key) == 0)
			return (s);
	}
}

static void
map_resize(struct map *m, size_t cap)
{
	struct map_slot *old = m->slots;
	size_t		 i, j, oldcap = m->cap, mask = cap - 1;
	uint64_t	 h;

	map_table(m, cap);
	m->used = m->count;
	for (i = 0; i < oldcap; i++) {
		if (old[i].key == NULL || old[i].key == MAP_TOMB)
			continue;
		h = map_hash(old[i].key);
		for (j = h & mask; m->slots[j].key != NULL; j = (j + 1) & mask)
			;
		m->slots[j] = old[i];
		m->tags[j] = map_tag(h);
	}
	free(old);
}

void *
map_get(const struct map *m, const char *key)
{
	struct map_slot *s = map_find(m, key, map_hash(key));

	return (s != NULL ? s->value : NULL);
}

void
map_put(struct map *m, const char *key, void *value)
{
	uint64_t	 h = map_hash(key);
	struct map_slot *s;
	size_t		 i, mask;

	if ((s = map_find(m, key, h)) != NULL) {
		if (m->free_cb != NULL && s->value != value)
			m->free_cb(s->value);
		s->value = value;
		/* A borrowed key may have gone with the old value. */
		if (m->borrowed)
			s->key = (char *)(uintptr_t)key;
		return;
	}
	if ((m->used + 1) * 4 >= m->cap * 3)
		map_resize(m, m->count * 2 >= m->cap / 2 ? m->cap * 2 : m->cap);
	mask = m->cap - 1;
	for (i = h & mask;
	     m->slots[i].key != NULL && m->slots[i].key != MAP_TOMB;
	     i = (i + 1) & mask)
		;
	if (m->slots[i].key == NULL)
		m->used++;
	m->slots[i].key = map_key_copy(m, key);
	m->slots[i].value = value;
	m->tags[i] = map_tag(h);
	m->count++;
}

void *
map_take(struct map *m, const char *key)
{
	struct map_slot *s = map_find(m, key, map_hash(key));
	void		*v;

	if (s == NULL)
		return (NULL);
	v = s->value;
	map_key_free(m, s->key);
	s->key = MAP_TOMB;
	s->value = NULL;
	m->count--;
	return (v);
}

void
map_del(struct map *m, const char *key)
{
	void *v = map_take(m, key);

	if (v != NULL && m->free_cb != NULL)
		m->free_cb(v);
}

size_t
map_count(const struct map *m)
{
	return (m->count);
}

int
map_next(const struct map *m, size_t *iter, const char **key, void **value)
{
	while (*iter < m->cap) {
		struct map_slot *s = &m->slots[(*iter)++];
		if (s->key == NULL || s->key == MAP_TOMB)
			continue;
		if (key != NULL)
			*key = s->key;
		if (value != NULL)
			*value = s->value;
		return (1);
	}
	return (0);
}
