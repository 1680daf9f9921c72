/*
 * A string-keyed hash map with open addressing and linear probing.  Not
 * thread-safe: it belongs to the thread that made it.  The map owns its
 * values (freed with its callback, if any) and, unless made with
 * map_new_borrowed, a copy of each key.
 */
#ifndef MAP_H
#define MAP_H

#include <stddef.h>
#include <stdint.h>

struct map;

typedef void (*map_free_cb)(void *);

struct map *map_new(map_free_cb);
/*
 * A map that keeps the caller's key pointers instead of copies: each key
 * must stay valid, unchanged, while its entry is in the map (typically
 * the key is a field of the value).
 */
struct map *map_new_borrowed(map_free_cb);
/* Frees the values with the map's free callback. */
void  map_free(struct map *);
void *map_get(const struct map *, const char *key);
/* Replaces (and frees) any old value; copies the key unless borrowed. */
void map_put(struct map *, const char *key, void *value);
/* Removes and frees. */
void map_del(struct map *, const char *key);
/* Removes without freeing; returns the value. */
void  *map_take(struct map *, const char *key);
size_t map_count(const struct map *);
/* Bytes the map itself holds: its slot table and its key copies. */
size_t map_bytes(const struct map *);
/* The maps' hash of a string (FNV-1a), for comparing strings by hash. */
uint64_t map_hash(const char *);
/* Iteration: *iter starts at 0; returns 0 when done. */
int map_next(const struct map *, size_t *iter, const char **key, void **value);

#endif /* MAP_H */
