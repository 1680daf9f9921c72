/*
 * The string-keyed hash map (map.h): open addressing, linear probing, FNV-1a.
 * The scheduler's caches and the informers' stores are maps.
 *
 * A slot is a key and a value (16 bytes).  A byte per slot beside the table,
 * its tag, says whether the slot is empty, deleted, or full, and then keeps
 * the top of the key's hash: a probe reads only tags, which lie together,
 * and compares strings only where a tag matches.  So the table fills to
 * 7/8 before it doubles, and a map of 50,000 entries has 65,536 slots of
 * 17 bytes, where slots of 24 bytes (the hash kept whole) filled to 3/4
 * took 131,072: 22 bytes an entry against 63.  A pending pod has an entry
 * in five maps.
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

#define MAP_EMPTY   0 /* tags: never used */
#define MAP_DELETED 1 /* held an entry since taken */

/* What a full slot keeps of its key's hash: a tag of 2 or more. */
static uint8_t
map_tag(uint64_t h)
{
	uint8_t t = (uint8_t)(h >> 56);

	return (t > MAP_DELETED ? t : (uint8_t)(t + 2));
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

	for (i = h & mask; m->tags[i] != MAP_EMPTY; i = (i + 1) & mask)
		if (m->tags[i] == tag && strcmp(m->slots[i].key, key) == 0)
			return (&m->slots[i]);
	return (NULL);
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
		for (j = h & mask; m->tags[j] != MAP_EMPTY; j = (j + 1) & mask)
			;
		m->slots[j] = old[i];
		m->tags[j] = map_tag(h);
	}
	free(old);
}

/*
 * The table's size once it is full (tombstones included) to 7/8: twice
 * as many slots when its entries fill 13/16, as many when they fill less
 * (the rebuild clears the tombstones: entries that come and go do not
 * grow it), and fewer when they fill a quarter or less, down to a half.
 */
static size_t
map_fit(const struct map *m)
{
	size_t cap = m->cap;

	if ((m->count + 1) * 16 >= cap * 13)
		return (cap * 2);
	while (cap > 64 && (m->count + 1) * 4 <= cap)
		cap /= 2;
	return (cap);
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
	if ((m->used + 1) * 8 >= m->cap * 7)
		map_resize(m, map_fit(m));
	mask = m->cap - 1;
	for (i = h & mask; m->tags[i] > MAP_DELETED; i = (i + 1) & mask)
		;
	if (m->tags[i] == MAP_EMPTY)
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
	m->tags[s - m->slots] = MAP_DELETED;
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
