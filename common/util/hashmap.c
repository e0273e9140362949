#include "common/util/hashmap.h"

#include "common/util/errors.h"

#include <stdlib.h>

/* A slot is empty (key NULL, not deleted), deleted (a tombstone: probing continues past
 * it) or full. Keys of up to 16 bytes live in the slot itself, longer ones are malloc'd. */
struct slot {
    uint64_t hash;
    void *value;
    size_t klen;
    union {
        uint8_t inline_key[16];
        uint8_t *heap_key;
    } k;
    uint8_t used;    /* full */
    uint8_t deleted; /* tombstone */
};

struct hashmap {
    struct slot *slots;
    size_t cap;   /* a power of two */
    size_t count; /* full slots */
    size_t dead;  /* tombstones */
};

static uint64_t fnv1a(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static const uint8_t *slot_key(const struct slot *s)
{
    return s->klen <= sizeof(s->k.inline_key) ? s->k.inline_key : s->k.heap_key;
}

static void slot_free_key(struct slot *s)
{
    if (s->klen > sizeof(s->k.inline_key))
        free(s->k.heap_key);
}

struct hashmap *hashmap_create(void)
{
    struct hashmap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cap = 16;
    m->slots = calloc(m->cap, sizeof(*m->slots));
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void hashmap_destroy(struct hashmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used)
            slot_free_key(&m->slots[i]);
    free(m->slots);
    free(m);
}

/* The slot holding key, or NULL. */
static struct slot *find(const struct hashmap *m, const void *key, size_t klen, uint64_t h)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct slot *s = &m->slots[i];
        if (!s->used && !s->deleted)
            return NULL;
        if (s->used && s->hash == h && s->klen == klen && memcmp(slot_key(s), key, klen) == 0)
            return s;
    }
}

/* Move every full slot into a table of new_cap slots (dropping tombstones). */
static int rehash(struct hashmap *m, size_t new_cap)
{
    struct slot *fresh = calloc(new_cap, sizeof(*fresh));
    if (!fresh)
        return TS_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        struct slot *s = &m->slots[i];
        if (!s->used)
            continue;
        size_t j = s->hash & (new_cap - 1);
        while (fresh[j].used)
            j = (j + 1) & (new_cap - 1);
        fresh[j] = *s;
    }
    free(m->slots);
    m->slots = fresh;
    m->cap = new_cap;
    m->dead = 0;
    return TS_OK;
}

int hashmap_put(struct hashmap *m, const void *key, size_t klen, void *value)
{
    uint64_t h = fnv1a(key, klen);
    struct slot *s = find(m, key, klen, h);
    if (s) {
        s->value = value;
        return TS_OK;
    }
    /* keep the table at most 70% full, tombstones included, so probes stay short */
    if ((m->count + m->dead + 1) * 10 > m->cap * 7) {
        size_t cap = (m->count + 1) * 10 > m->cap * 5 ? m->cap * 2 : m->cap;
        if (rehash(m, cap) != TS_OK)
            return TS_ENOMEM;
    }
    size_t i = h & (m->cap - 1);
    while (m->slots[i].used)
        i = (i + 1) & (m->cap - 1);
    s = &m->slots[i];
    if (klen > sizeof(s->k.inline_key)) {
        uint8_t *copy = malloc(klen);
        if (!copy)
            return TS_ENOMEM;
        memcpy(copy, key, klen);
        s->k.heap_key = copy;
    } else {
        memcpy(s->k.inline_key, key, klen);
    }
    if (s->deleted)
        m->dead--;
    s->hash = h;
    s->klen = klen;
    s->value = value;
    s->used = 1;
    s->deleted = 0;
    m->count++;
    return TS_OK;
}

void *hashmap_get(const struct hashmap *m, const void *key, size_t klen)
{
    struct slot *s = find(m, key, klen, fnv1a(key, klen));
    return s ? s->value : NULL;
}

int hashmap_del(struct hashmap *m, const void *key, size_t klen)
{
    struct slot *s = find(m, key, klen, fnv1a(key, klen));
    if (!s)
        return TS_ENOENT;
    slot_free_key(s);
    s->used = 0;
    s->deleted = 1;
    s->value = NULL;
    m->count--;
    m->dead++;
    return TS_OK;
}

size_t hashmap_count(const struct hashmap *m)
{
    return m->count;
}

int hashmap_next(const struct hashmap *m, size_t *cursor, const void **key, size_t *klen,
                 void **value)
{
    for (; *cursor < m->cap; (*cursor)++) {
        const struct slot *s = &m->slots[*cursor];
        if (!s->used)
            continue;
        if (key)
            *key = slot_key(s);
        if (klen)
            *klen = s->klen;
        if (value)
            *value = s->value;
        (*cursor)++;
        return 1;
    }
    return 0;
}
