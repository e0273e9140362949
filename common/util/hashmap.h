/* A hash map from byte-string keys (copied) to pointers: open addressing, linear
 * probing, FNV-1a. Used for node names, job ids and the like, where the controller must
 * not scan. */
#ifndef TESSERA_COMMON_HASHMAP_H
#define TESSERA_COMMON_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hashmap;

struct hashmap *hashmap_create(void);
/* Frees the keys; values belong to the caller. NULL is ignored. */
void hashmap_destroy(struct hashmap *map);

/* Insert or replace. TS_OK or TS_ENOMEM (the map is unchanged then). */
int hashmap_put(struct hashmap *map, const void *key, size_t klen, void *value);
/* The value, or NULL when absent (so do not store NULL values). */
void *hashmap_get(const struct hashmap *map, const void *key, size_t klen);
/* TS_OK or TS_ENOENT. */
int hashmap_del(struct hashmap *map, const void *key, size_t klen);
size_t hashmap_count(const struct hashmap *map);

/* Visit every entry: start with *cursor = 0; returns 0 at the end. The map must not
 * change during the walk. Order is unspecified. */
int hashmap_next(const struct hashmap *map, size_t *cursor, const void **key, size_t *klen,
                 void **value);

/* Shorthands for NUL-terminated string keys and 32-bit integer keys. */
static inline int hashmap_put_str(struct hashmap *m, const char *k, void *v)
{
    return hashmap_put(m, k, strlen(k), v);
}
static inline void *hashmap_get_str(const struct hashmap *m, const char *k)
{
    return hashmap_get(m, k, strlen(k));
}
static inline int hashmap_del_str(struct hashmap *m, const char *k)
{
    return hashmap_del(m, k, strlen(k));
}
static inline int hashmap_put_u32(struct hashmap *m, uint32_t k, void *v)
{
    return hashmap_put(m, &k, sizeof(k), v);
}
static inline void *hashmap_get_u32(const struct hashmap *m, uint32_t k)
{
    return hashmap_get(m, &k, sizeof(k));
}
static inline int hashmap_del_u32(struct hashmap *m, uint32_t k)
{
    return hashmap_del(m, &k, sizeof(k));
}

#endif
