/* The plan: per-node step functions of CPU and memory use over time (see plan.h for the
 * structure and its costs). */
#include "common/sched/plan.h"

#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

/* One change point of a node: from t to the next point the holds use cpus and mem. Sums
 * are 64-bit and unclamped, so overcommitting holds add and subtract exactly. */
struct point {
    int64_t t;
    uint64_t cpus;
    uint64_t mem;
    uint32_t refs; /* hold starts and ends at t: the point goes with the last of them */
};

struct pnode {
    struct point *pt;
    uint32_t np, cap;
    uint32_t cpus; /* capacity */
    uint64_t mem;
    int shared; /* pt lies in a clone's single block: never realloc'd or freed alone */
};

/* One node's share of a hold group. */
struct entry {
    uint32_t node;
    uint32_t cpus;
    uint64_t mem;
};

/* A hold group; n == 0 marks a free slot. */
struct hold {
    int64_t start, end;
    size_t off; /* its first entry in plan.entries */
    uint32_t n;
    uint32_t gen; /* bumped on release, so an old id no longer matches */
    uint32_t next_free;
};

/* The treap of hold end times (with counts); index 0 is the empty tree. */
struct tnode {
    int64_t key;
    uint32_t count, prio;
    uint32_t l, r;
};

#define NO_SLOT UINT32_MAX

struct plan {
    struct pnode *nodes;
    size_t nnodes;
    void *block; /* a clone's points, shared by its nodes until they grow */

    struct hold *holds;
    uint32_t nholds, capholds, free_hold;

    struct entry *entries;
    size_t nentries, capentries, live_entries;

    struct tnode *tn;
    uint32_t ntn, captn, free_tn, root;
    uint32_t seed; /* treap priorities: deterministic, per plan */
};

/* ---- small helpers ---- */

static int64_t sat_add(int64_t a, int64_t b)
{
    return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

static uint32_t free_of32(uint32_t cap, uint64_t used)
{
    return used < cap ? (uint32_t)(cap - used) : 0;
}

static uint64_t free_of64(uint64_t cap, uint64_t used)
{
    return used < cap ? cap - used : 0;
}

/* Grows *arr (of elements of size sz) to hold at least need; TS_OK or TS_ENOMEM. */
static int grow(void **arr, size_t sz, size_t *cap, size_t need)
{
    if (need <= *cap)
        return TS_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *fresh = realloc(*arr, c * sz);
    if (!fresh)
        return TS_ENOMEM;
    *arr = fresh;
    *cap = c;
    return TS_OK;
}

static int grow32(void **arr, size_t sz, uint32_t *cap, size_t need)
{
    size_t c = *cap;
    if (need > UINT32_MAX - 1)
        return TS_ENOMEM;
    int rc = grow(arr, sz, &c, need);
    *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    return rc;
}

/* ---- the treap of end times ---- */

static uint32_t next_prio(struct plan *p)
{
    uint32_t x = p->seed; /* xorshift32 */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return p->seed = x;
}

/* Makes sure a node can be taken without allocating (plan_hold reserves before it
 * changes anything). */
static int tn_reserve(struct plan *p)
{
    if (p->free_tn)
        return TS_OK;
    return grow32((void **)&p->tn, sizeof(*p->tn), &p->captn, (size_t)p->ntn + 1);
}

static uint32_t tn_new(struct plan *p, int64_t key)
{
    uint32_t x = p->free_tn;
    if (x)
        p->free_tn = p->tn[x].l;
    else
        x = p->ntn++;
    p->tn[x] = (struct tnode){.key = key, .count = 1, .prio = next_prio(p)};
    return x;
}

static uint32_t rot_right(struct plan *p, uint32_t x)
{
    uint32_t y = p->tn[x].l;
    p->tn[x].l = p->tn[y].r;
    p->tn[y].r = x;
    return y;
}

static uint32_t rot_left(struct plan *p, uint32_t x)
{
    uint32_t y = p->tn[x].r;
    p->tn[x].r = p->tn[y].l;
    p->tn[y].l = x;
    return y;
}

static uint32_t tn_insert(struct plan *p, uint32_t x, int64_t key)
{
    if (!x)
        return tn_new(p, key);
    if (key == p->tn[x].key) {
        p->tn[x].count++;
    } else if (key < p->tn[x].key) {
        uint32_t l = tn_insert(p, p->tn[x].l, key);
        p->tn[x].l = l;
        if (p->tn[l].prio > p->tn[x].prio)
            return rot_right(p, x);
    } else {
        uint32_t r = tn_insert(p, p->tn[x].r, key);
        p->tn[x].r = r;
        if (p->tn[r].prio > p->tn[x].prio)
            return rot_left(p, x);
    }
    return x;
}

static uint32_t tn_merge(struct plan *p, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    if (p->tn[a].prio > p->tn[b].prio) {
        p->tn[a].r = tn_merge(p, p->tn[a].r, b);
        return a;
    }
    p->tn[b].l = tn_merge(p, a, p->tn[b].l);
    return b;
}

static uint32_t tn_remove(struct plan *p, uint32_t x, int64_t key)
{
    if (!x)
        return 0;
    struct tnode *n = &p->tn[x];
    if (key < n->key) {
        uint32_t l = tn_remove(p, n->l, key);
        p->tn[x].l = l;
    } else if (key > n->key) {
        uint32_t r = tn_remove(p, n->r, key);
        p->tn[x].r = r;
    } else if (--n->count == 0) {
        uint32_t y = tn_merge(p, n->l, n->r);
        p->tn[x].l = p->free_tn;
        p->free_tn = x;
        return y;
    }
    return x;
}

/* ---- one node's step function ---- */

/* Index of the first point at or after time. */
static uint32_t first_at(const struct pnode *nd, int64_t time)
{
    uint32_t lo = 0, hi = nd->np;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (nd->pt[mid].t < time)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many points lie at or before time: the index of the segment holding time, where
 * segment 0 is before the first point and segment g > 0 starts at point g - 1. */
static uint32_t segment_of(const struct point *pt, uint32_t np, int64_t time)
{
    uint32_t lo = 0, hi = np;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pt[mid].t <= time)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Room for `extra` more points. A node still in a clone's block moves to its own array. */
static int node_reserve(struct pnode *nd, uint32_t extra)
{
    size_t need = (size_t)nd->np + extra;
    if (!nd->shared)
        return grow32((void **)&nd->pt, sizeof(*nd->pt), &nd->cap, need);
    size_t cap = need < 8 ? 8 : need * 2;
    struct point *own = malloc(cap * sizeof(*own));
    if (!own)
        return TS_ENOMEM;
    if (nd->np)
        memcpy(own, nd->pt, nd->np * sizeof(*own));
    nd->pt = own;
    nd->cap = (uint32_t)cap;
    nd->shared = 0;
    return TS_OK;
}

/* The point at time, inserted with the use just before it when missing (room reserved);
 * either way one more hold starts or ends there. */
static uint32_t point_ref(struct pnode *nd, int64_t time)
{
    uint32_t i = first_at(nd, time);
    if (i < nd->np && nd->pt[i].t == time) {
        nd->pt[i].refs++;
        return i;
    }
    memmove(&nd->pt[i + 1], &nd->pt[i], (nd->np - i) * sizeof(*nd->pt));
    nd->pt[i] = (struct point){.t = time, .refs = 1};
    if (i) {
        nd->pt[i].cpus = nd->pt[i - 1].cpus;
        nd->pt[i].mem = nd->pt[i - 1].mem;
    }
    nd->np++;
    return i;
}

/* One hold starts or ends less at point i; the last takes the point with it. The use
 * there then equals the use before it (nothing changes at that time any more). */
static void point_unref(struct pnode *nd, uint32_t i)
{
    if (--nd->pt[i].refs)
        return;
    memmove(&nd->pt[i], &nd->pt[i + 1], (nd->np - i - 1) * sizeof(*nd->pt));
    nd->np--;
}

static void node_add(struct pnode *nd, const struct entry *e, int64_t start, int64_t end)
{
    /* the end first: its point copies the use before it, which must not include e yet */
    if (end != PLAN_FOREVER)
        point_ref(nd, end);
    uint32_t i = point_ref(nd, start);
    uint32_t j = end == PLAN_FOREVER ? nd->np : first_at(nd, end);
    for (uint32_t k = i; k < j; k++) {
        nd->pt[k].cpus += e->cpus;
        nd->pt[k].mem += e->mem;
    }
}

static void node_sub(struct pnode *nd, const struct entry *e, int64_t start, int64_t end)
{
    uint32_t i = first_at(nd, start);
    uint32_t j = end == PLAN_FOREVER ? nd->np : first_at(nd, end);
    for (uint32_t k = i; k < j; k++) {
        nd->pt[k].cpus -= e->cpus;
        nd->pt[k].mem -= e->mem;
    }
    if (end != PLAN_FOREVER)
        point_unref(nd, j); /* the later one first, so i stays put */
    point_unref(nd, i);
}

/* The most used of [start, end) on nd, as free amounts. */
static void node_min_free(const struct pnode *nd, int64_t start, int64_t end, uint32_t *fc,
                          uint64_t *fm)
{
    uint32_t i = segment_of(nd->pt, nd->np, start);
    uint64_t uc = i ? nd->pt[i - 1].cpus : 0, um = i ? nd->pt[i - 1].mem : 0;
    for (; i < nd->np && nd->pt[i].t < end; i++) {
        if (nd->pt[i].cpus > uc)
            uc = nd->pt[i].cpus;
        if (nd->pt[i].mem > um)
            um = nd->pt[i].mem;
    }
    *fc = free_of32(nd->cpus, uc);
    *fm = free_of64(nd->mem, um);
}

/* ---- life cycle ---- */

int plan_create(const struct plan_node *nodes, size_t n, struct plan **out)
{
    *out = NULL;
    if (n > UINT32_MAX)
        return TS_EINVAL;
    struct plan *p = calloc(1, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    p->nnodes = n;
    p->nodes = calloc(n ? n : 1, sizeof(*p->nodes));
    if (!p->nodes)
        goto error;
    for (size_t i = 0; i < n; i++) {
        p->nodes[i].cpus = nodes[i].cpus;
        p->nodes[i].mem = nodes[i].mem_mb;
    }
    p->free_hold = NO_SLOT;
    p->ntn = 1; /* 0 is the empty tree */
    p->seed = 2463534242u;
    if (tn_reserve(p) != TS_OK)
        goto error;
    *out = p;
    return TS_OK;
error:
    plan_destroy(p);
    return TS_ENOMEM;
}

void plan_destroy(struct plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->nodes && i < p->nnodes; i++)
        if (!p->nodes[i].shared)
            free(p->nodes[i].pt);
    free(p->nodes);
    free(p->block);
    free(p->holds);
    free(p->entries);
    free(p->tn);
    free(p);
}

/* malloc'd copy of n elements of size sz (NULL with *ok cleared on failure; n == 0: NULL). */
static void *dup_array(const void *src, size_t n, size_t sz, int *ok)
{
    if (!n)
        return NULL;
    void *d = malloc(n * sz);
    if (!d)
        *ok = 0;
    else
        memcpy(d, src, n * sz);
    return d;
}

/* All the clone's points in one block, each node pointing into it. */
static int clone_points(const struct plan *p, struct plan *c)
{
    size_t total = 0;
    for (size_t i = 0; i < p->nnodes; i++)
        total += p->nodes[i].np;
    if (total && !(c->block = malloc(total * sizeof(struct point))))
        return TS_ENOMEM;
    struct point *at = c->block;
    for (size_t i = 0; i < p->nnodes; i++) {
        const struct pnode *src = &p->nodes[i];
        c->nodes[i] = (struct pnode){.pt = src->np ? at : NULL, .np = src->np, .cap = src->np,
                                     .cpus = src->cpus, .mem = src->mem, .shared = 1};
        if (src->np)
            memcpy(at, src->pt, src->np * sizeof(*at));
        at += src->np;
    }
    return TS_OK;
}

int plan_clone(const struct plan *p, struct plan **out)
{
    *out = NULL;
    struct plan *c = calloc(1, sizeof(*c));
    if (!c)
        return TS_ENOMEM;
    *c = *p;
    c->nodes = NULL;
    c->block = NULL;
    c->holds = NULL;
    c->entries = NULL;
    c->tn = NULL;
    int ok = 1;
    c->nodes = calloc(p->nnodes ? p->nnodes : 1, sizeof(*c->nodes));
    if (!c->nodes) {
        c->nnodes = 0;
        goto error;
    }
    if (clone_points(p, c) != TS_OK)
        goto error;
    c->holds = dup_array(p->holds, p->nholds, sizeof(*p->holds), &ok);
    c->capholds = p->nholds;
    c->entries = dup_array(p->entries, p->nentries, sizeof(*p->entries), &ok);
    c->capentries = p->nentries;
    c->tn = dup_array(p->tn, p->ntn, sizeof(*p->tn), &ok);
    c->captn = p->ntn;
    if (!ok)
        goto error;
    *out = c;
    return TS_OK;
error:
    plan_destroy(c);
    return TS_ENOMEM;
}

void plan_reset(struct plan *p)
{
    for (size_t i = 0; i < p->nnodes; i++)
        p->nodes[i].np = 0;
    /* every slot free; generations move on so that earlier ids are refused */
    p->free_hold = NO_SLOT;
    for (uint32_t s = p->nholds; s-- > 0;) {
        struct hold *h = &p->holds[s];
        if (h->n && ++h->gen == 0)
            h->gen = 1;
        h->n = 0;
        h->next_free = p->free_hold;
        p->free_hold = s;
    }
    p->nentries = p->live_entries = 0;
    p->ntn = 1;
    p->free_tn = 0;
    p->root = 0;
}

size_t plan_node_count(const struct plan *p)
{
    return p->nnodes;
}

/* ---- holds ---- */

static plan_hold_id make_id(uint32_t slot, uint32_t gen)
{
    return (uint64_t)gen << 32 | slot;
}

/* A free slot (room reserved, not yet taken): its index in *slot. */
static int slot_reserve(struct plan *p, uint32_t *slot)
{
    if (p->free_hold != NO_SLOT) {
        *slot = p->free_hold;
        return TS_OK;
    }
    if (p->nholds >= NO_SLOT - 1)
        return TS_ENOMEM;
    int rc = grow32((void **)&p->holds, sizeof(*p->holds), &p->capholds, (size_t)p->nholds + 1);
    if (rc != TS_OK)
        return rc;
    *slot = p->nholds;
    p->holds[*slot] = (struct hold){.gen = 1, .next_free = NO_SLOT};
    return TS_OK;
}

/* Drops the entries of released holds once they are most of the array, so a plan that
 * lives across many cycles does not grow without bound. */
static void entries_compact(struct plan *p)
{
    if (p->nentries < 1024 || p->live_entries * 2 > p->nentries)
        return;
    struct entry *fresh = malloc((p->live_entries ? p->live_entries : 1) * sizeof(*fresh));
    if (!fresh)
        return; /* not needed for correctness: try again later */
    size_t at = 0;
    for (uint32_t s = 0; s < p->nholds; s++) {
        struct hold *h = &p->holds[s];
        if (!h->n)
            continue;
        memcpy(&fresh[at], &p->entries[h->off], h->n * sizeof(*fresh));
        h->off = at;
        at += h->n;
    }
    free(p->entries);
    p->entries = fresh;
    p->capentries = at ? at : 1;
    p->nentries = at;
}

static int hold_valid(const struct plan *p, const uint32_t *nodes, const uint32_t *cpus,
                      const uint64_t *mem, size_t n, int64_t start, int64_t end)
{
    if (!nodes || !cpus || !mem || !n || n > UINT32_MAX || start >= end)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i] >= p->nnodes)
            return 0;
    return 1;
}

int plan_hold(struct plan *p, const uint32_t *nodes, const uint32_t *cpus,
              const uint64_t *mem_mb, size_t n, int64_t start, int64_t end, plan_hold_id *id)
{
    if (id)
        *id = PLAN_HOLD_NONE;
    if (!p || !id || !hold_valid(p, nodes, cpus, mem_mb, n, start, end))
        return TS_EINVAL;
    uint32_t slot;
    /* everything that may fail comes first, so that a failure leaves the plan as it was */
    if (slot_reserve(p, &slot) != TS_OK ||
        grow((void **)&p->entries, sizeof(*p->entries), &p->capentries, p->nentries + n) != TS_OK ||
        (end != PLAN_FOREVER && tn_reserve(p) != TS_OK))
        return TS_ENOMEM;
    struct entry *e = &p->entries[p->nentries];
    for (size_t i = 0; i < n; i++) {
        e[i] = (struct entry){.node = nodes[i], .cpus = cpus[i], .mem = mem_mb[i]};
        if (node_reserve(&p->nodes[nodes[i]], 2) != TS_OK) {
            while (i-- > 0)
                node_sub(&p->nodes[e[i].node], &e[i], start, end);
            return TS_ENOMEM;
        }
        node_add(&p->nodes[nodes[i]], &e[i], start, end);
    }
    struct hold *h = &p->holds[slot];
    if (slot == p->nholds)
        p->nholds++;
    else
        p->free_hold = h->next_free;
    h->start = start;
    h->end = end;
    h->off = p->nentries;
    h->n = (uint32_t)n;
    p->nentries += n;
    p->live_entries += n;
    if (end != PLAN_FOREVER)
        p->root = tn_insert(p, p->root, end);
    *id = make_id(slot, h->gen);
    return TS_OK;
}

int plan_release(struct plan *p, plan_hold_id id)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (!p || slot >= p->nholds || !p->holds[slot].n || p->holds[slot].gen != gen)
        return TS_ENOENT;
    struct hold *h = &p->holds[slot];
    for (uint32_t i = 0; i < h->n; i++) {
        const struct entry *e = &p->entries[h->off + i];
        node_sub(&p->nodes[e->node], e, h->start, h->end);
    }
    if (h->end != PLAN_FOREVER)
        p->root = tn_remove(p, p->root, h->end);
    p->live_entries -= h->n;
    h->n = 0;
    if (++h->gen == 0)
        h->gen = 1;
    h->next_free = p->free_hold;
    p->free_hold = slot;
    entries_compact(p);
    return TS_OK;
}

/* ---- queries ---- */

void plan_free_during(const struct plan *p, int64_t start, int64_t end, const uint32_t *nodes,
                      size_t n, uint32_t *free_cpus, uint64_t *free_mem)
{
    if (end <= start)
        end = sat_add(start, 1);
    for (size_t k = 0; k < n; k++) {
        size_t node = nodes ? nodes[k] : k;
        if (node >= p->nnodes) {
            free_cpus[k] = 0;
            free_mem[k] = 0;
            continue;
        }
        node_min_free(&p->nodes[node], start, end, &free_cpus[k], &free_mem[k]);
    }
}

int64_t plan_next_release(const struct plan *p, int64_t after)
{
    int64_t best = PLAN_FOREVER;
    for (uint32_t x = p->root; x;) {
        if (p->tn[x].key > after) {
            best = p->tn[x].key;
            x = p->tn[x].l;
        } else {
            x = p->tn[x].r;
        }
    }
    return best;
}

/* ---- earliest start: a sliding window per node ----
 *
 * As t moves forward, node k's window [t, t + duration) covers segments l..r of its step
 * function (segment g > 0 starts at point g - 1; segment 0 is before the first point). The
 * most used segment of each resource is kept with a monotonic deque (segment indexes with
 * strictly decreasing use), so each segment enters and leaves once per search. A heap
 * orders the nodes by their next event: t reaching the next point (the oldest segment
 * leaves) or t + duration passing it (a new segment enters). */

struct win {
    const struct point *pt;
    uint32_t np;
    uint32_t l, r;    /* first and last segment in the window */
    uint32_t *qc, *qm; /* deques of segments (this node's slices of the scratch), */
    uint32_t hc, tc, hm, tm; /* each filled from 0: one slot per segment from l on */
    uint32_t cap_cpus;
    uint64_t cap_mem;
};

struct hent {
    int64_t key;
    uint32_t k;
};

struct search {
    struct win *w;
    size_t n;
    int64_t duration;
    uint32_t *free_cpus;
    uint64_t *free_mem;
    struct hent *heap;
    size_t nheap;
    uint32_t *scratch;
    int gained;   /* some node got freer since fit was last asked */
    int released; /* the node just advanced released something */
};

static uint64_t seg_cpus(const struct win *w, uint32_t g)
{
    return g ? w->pt[g - 1].cpus : 0;
}

static uint64_t seg_mem(const struct win *w, uint32_t g)
{
    return g ? w->pt[g - 1].mem : 0;
}

static void win_push(struct win *w, uint32_t g)
{
    while (w->tc > w->hc && seg_cpus(w, w->qc[w->tc - 1]) <= seg_cpus(w, g))
        w->tc--;
    w->qc[w->tc++] = g;
    while (w->tm > w->hm && seg_mem(w, w->qm[w->tm - 1]) <= seg_mem(w, g))
        w->tm--;
    w->qm[w->tm++] = g;
}

/* Moves node k's window to start at t and records what is free in it. */
static void win_advance(struct search *s, size_t k, int64_t t)
{
    struct win *w = &s->w[k];
    int64_t end = sat_add(t, s->duration);
    while (w->r < w->np && w->pt[w->r].t < end)
        win_push(w, ++w->r);
    while (w->l < w->np && w->pt[w->l].t <= t) {
        /* a point where use drops: the window's minimum may rise, so t is a candidate */
        if (w->pt[w->l].cpus < seg_cpus(w, w->l) || w->pt[w->l].mem < seg_mem(w, w->l))
            s->released = 1;
        w->l++;
    }
    while (w->qc[w->hc] < w->l)
        w->hc++;
    while (w->qm[w->hm] < w->l)
        w->hm++;
    uint32_t fc = free_of32(w->cap_cpus, seg_cpus(w, w->qc[w->hc]));
    uint64_t fm = free_of64(w->cap_mem, seg_mem(w, w->qm[w->hm]));
    if (fc > s->free_cpus[k] || fm > s->free_mem[k])
        s->gained = 1;
    s->free_cpus[k] = fc;
    s->free_mem[k] = fm;
}

/* When node k's window next changes, or PLAN_FOREVER. t + duration does not overflow when
 * a point is left beyond the window (every point is below PLAN_FOREVER). */
static int64_t win_next(const struct search *s, size_t k)
{
    const struct win *w = &s->w[k];
    int64_t next = w->l < w->np ? w->pt[w->l].t : PLAN_FOREVER;
    if (w->r < w->np) {
        int64_t enter = w->pt[w->r].t - s->duration + 1;
        if (enter < next)
            next = enter;
    }
    return next;
}

static void heap_push(struct search *s, int64_t key, uint32_t k)
{
    size_t i = s->nheap++;
    while (i) {
        size_t up = (i - 1) / 2;
        if (s->heap[up].key <= key)
            break;
        s->heap[i] = s->heap[up];
        i = up;
    }
    s->heap[i] = (struct hent){key, k};
}

static uint32_t heap_pop(struct search *s)
{
    uint32_t top = s->heap[0].k;
    struct hent last = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap)
            break;
        if (c + 1 < s->nheap && s->heap[c + 1].key < s->heap[c].key)
            c++;
        if (last.key <= s->heap[c].key)
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap)
        s->heap[i] = last;
    return top;
}

static void search_free(struct search *s)
{
    free(s->w);
    free(s->free_cpus);
    free(s->free_mem);
    free(s->heap);
    free(s->scratch);
}

/* Windows of every node at `from`. Each deque gets room for every segment from the one
 * holding `from` to the last. */
static int search_init(struct search *s, const struct plan *p, const uint32_t *nodes, size_t n,
                       int64_t from, int64_t duration)
{
    *s = (struct search){.n = n, .duration = duration};
    s->w = calloc(n ? n : 1, sizeof(*s->w));
    s->free_cpus = calloc(n ? n : 1, sizeof(*s->free_cpus));
    s->free_mem = calloc(n ? n : 1, sizeof(*s->free_mem));
    s->heap = malloc((n ? n : 1) * sizeof(*s->heap));
    if (!s->w || !s->free_cpus || !s->free_mem || !s->heap)
        return TS_ENOMEM;
    size_t total = 0;
    for (size_t k = 0; k < n; k++) {
        const struct pnode *nd = &p->nodes[nodes ? nodes[k] : k];
        struct win *w = &s->w[k];
        *w = (struct win){.pt = nd->pt, .np = nd->np, .cap_cpus = nd->cpus, .cap_mem = nd->mem};
        w->l = w->r = segment_of(nd->pt, nd->np, from);
        total += 2 * ((size_t)nd->np - w->l + 1);
    }
    if (!(s->scratch = malloc(total * sizeof(*s->scratch))))
        return TS_ENOMEM;
    uint32_t *at = s->scratch;
    for (size_t k = 0; k < n; k++) {
        struct win *w = &s->w[k];
        size_t room = (size_t)w->np - w->l + 1;
        w->qc = at;
        w->qm = at + room;
        at += 2 * room;
        win_push(w, w->l);
        win_advance(s, k, from);
    }
    return TS_OK;
}

/* t rounded up to from + a multiple of res, or PLAN_FOREVER when past limit. */
static int64_t round_up(int64_t from, int64_t t, int64_t res, int64_t limit)
{
    uint64_t span = (uint64_t)limit - (uint64_t)from, d = (uint64_t)t - (uint64_t)from;
    uint64_t r = (uint64_t)res;
    if (d > span)
        return PLAN_FOREVER;
    uint64_t off = d % r ? d + (r - d % r) : d;
    return off > span ? PLAN_FOREVER : (int64_t)((uint64_t)from + off);
}

static int earliest_valid(const struct plan *p, int64_t duration, int64_t horizon,
                          const uint32_t *nodes, size_t n, plan_fit_fn fit, int64_t *start)
{
    if (!p || !fit || !start || duration < 1 || horizon < 0)
        return 0;
    if (!nodes && n > p->nnodes)
        return 0;
    for (size_t k = 0; nodes && k < n; k++)
        if (nodes[k] >= p->nnodes)
            return 0;
    return 1;
}

/* Walks the events in time order; fit is asked at a candidate once every event up to it
 * has been applied. */
static int search_run(struct search *s, int64_t from, int64_t limit, int64_t res,
                      plan_fit_fn fit, void *arg, int64_t *start)
{
    int64_t cand = 0;
    int pending = 0;
    for (;;) {
        int64_t te = s->nheap ? s->heap[0].key : PLAN_FOREVER;
        if (pending && (te > cand || !s->nheap)) {
            pending = 0;
            if (s->gained) {
                s->gained = 0;
                if (fit(arg, cand, s->free_cpus, s->free_mem)) {
                    *start = cand;
                    return TS_OK;
                }
            }
        }
        if (!s->nheap || te > limit)
            return TS_ENOENT;
        uint32_t k = heap_pop(s);
        s->released = 0;
        win_advance(s, k, te);
        int64_t next = win_next(s, k);
        if (next != PLAN_FOREVER)
            heap_push(s, next, k);
        if (s->released && !pending) {
            cand = round_up(from, te, res, limit);
            if (cand == PLAN_FOREVER)
                return TS_ENOENT; /* every later candidate is later still */
            pending = 1;
        }
    }
}

int plan_earliest(const struct plan *p, int64_t from, int64_t duration, int64_t horizon,
                  int64_t resolution, const uint32_t *nodes, size_t n, plan_fit_fn fit,
                  void *arg, int64_t *start)
{
    if (!earliest_valid(p, duration, horizon, nodes, n, fit, start))
        return TS_EINVAL;
    struct search s;
    int rc = search_init(&s, p, nodes, n, from, duration);
    if (rc != TS_OK)
        goto done;
    if (fit(arg, from, s.free_cpus, s.free_mem)) {
        *start = from;
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        int64_t next = win_next(&s, k);
        if (next != PLAN_FOREVER)
            heap_push(&s, next, (uint32_t)k);
    }
    s.gained = 0;
    rc = search_run(&s, from, sat_add(from, horizon), resolution > 1 ? resolution : 1, fit,
                    arg, start);
done:
    search_free(&s);
    return rc;
}
