#include "common/util/envbuf.h"

#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int envbuf_init(struct envbuf *e)
{
    memset(e, 0, sizeof(*e));
    e->index = hashmap_create();
    return e->index ? TS_OK : TS_ENOMEM;
}

static int grow(struct envbuf *e)
{
    if (e->n + 2 <= e->cap)
        return TS_OK;
    size_t cap = e->cap ? e->cap * 2 : 64;
    char **v = realloc(e->v, cap * sizeof(*v));
    if (!v)
        return TS_ENOMEM;
    e->v = v;
    e->cap = cap;
    return TS_OK;
}

void envbuf_put(struct envbuf *e, const char *name, size_t nlen, const char *value)
{
    if (e->oom || !e->index)
        return;
    size_t vlen = strlen(value);
    char *s = malloc(nlen + vlen + 2);
    if (!s) {
        e->oom = 1;
        return;
    }
    memcpy(s, name, nlen);
    s[nlen] = '=';
    memcpy(s + nlen + 1, value, vlen + 1);
    uintptr_t slot = (uintptr_t)hashmap_get(e->index, name, nlen);
    if (slot) {
        free(e->v[slot - 1]);
        e->v[slot - 1] = s;
        return;
    }
    if (grow(e) != TS_OK ||
        hashmap_put(e->index, name, nlen, (void *)(uintptr_t)(e->n + 1)) != TS_OK) {
        free(s);
        e->oom = 1;
        return;
    }
    e->v[e->n++] = s;
    e->v[e->n] = NULL;
}

int envbuf_has(const struct envbuf *e, const char *name, size_t nlen)
{
    return e->index && hashmap_get(e->index, name, nlen) != NULL;
}

char **envbuf_take(struct envbuf *e)
{
    if (!e->oom && !e->v && !(e->v = calloc(1, sizeof(*e->v))))
        e->oom = 1;
    if (e->oom || !e->index) {
        envbuf_release(e);
        return NULL;
    }
    char **v = e->v;
    e->v = NULL;
    e->n = e->cap = 0;
    envbuf_release(e);
    return v;
}

void envbuf_release(struct envbuf *e)
{
    for (size_t i = 0; e->v && i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    hashmap_destroy(e->index);
    memset(e, 0, sizeof(*e));
}
