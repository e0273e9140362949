/* Revoked jobs (noded/revoked.h): a map from job id to its latest revocation, and the
 * revocations in the order they were made, so the oldest are forgotten first without a
 * scan. A job revoked again gets a new entry; its older one is dropped when it comes up. */
#include "noded/revoked.h"

#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdlib.h>
#include <string.h>

struct revocation {
    uint32_t job_id;
    int64_t at;
};

struct revoked {
    int64_t keep;
    struct hashmap *latest;     /* job id -> its newest struct revocation */
    struct revocation **order;  /* oldest first, from order[head] to order[n - 1] */
    size_t head, n, cap;
};

struct revoked *revoked_create(int64_t keep_ms)
{
    struct revoked *r = calloc(1, sizeof(*r));
    if (!r || !(r->latest = hashmap_create())) {
        free(r);
        return NULL;
    }
    r->keep = keep_ms;
    return r;
}

void revoked_free(struct revoked *r)
{
    if (!r)
        return;
    for (size_t i = r->head; i < r->n; i++)
        free(r->order[i]);
    free(r->order);
    hashmap_destroy(r->latest);
    free(r);
}

static void forget_old(struct revoked *r, int64_t now)
{
    while (r->head < r->n && r->order[r->head]->at + r->keep < now) {
        struct revocation *v = r->order[r->head++];
        if (hashmap_get_u32(r->latest, v->job_id) == v)
            hashmap_del_u32(r->latest, v->job_id);
        free(v);
    }
    if (r->head > 0 && r->head * 2 >= r->n) { /* close the gap at the front */
        memmove(r->order, r->order + r->head, (r->n - r->head) * sizeof(*r->order));
        r->n -= r->head;
        r->head = 0;
    }
}

int revoked_add(struct revoked *r, uint32_t job_id, int64_t now)
{
    forget_old(r, now);
    struct revocation *old = hashmap_get_u32(r->latest, job_id);
    if (old && old->at == now)
        return TS_OK; /* revoked this very moment already */
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct revocation **v = realloc(r->order, cap * sizeof(*v));
        if (!v)
            return TS_ENOMEM;
        r->order = v;
        r->cap = cap;
    }
    struct revocation *e = malloc(sizeof(*e));
    if (!e)
        return TS_ENOMEM;
    *e = (struct revocation){.job_id = job_id, .at = now};
    if (hashmap_put_u32(r->latest, job_id, e) != TS_OK) {
        free(e);
        return TS_ENOMEM;
    }
    r->order[r->n++] = e;
    return TS_OK;
}

int revoked_check(const struct revoked *r, uint32_t job_id, int64_t issued_ms)
{
    const struct revocation *v = hashmap_get_u32(r->latest, job_id);
    return v && issued_ms <= v->at ? TS_ECRED_REVOKED : TS_OK;
}

size_t revoked_count(const struct revoked *r)
{
    return r ? hashmap_count(r->latest) : 0;
}
