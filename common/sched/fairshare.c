/* Fair share: the resource-group tree, usage with decay, and the fair-share order.
 *
 * Nodes live in one array; a parent's index is always below its children's (the file
 * defines parents first, and names added later hang under "unknown", index 1), so totals
 * and normalised shares are recomputed by one pass in index order or its reverse. */
#include "common/sched/fairshare.h"

#include "common/conf/conf.h"
#include "common/sched/policy.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Usage is kept in [0, FS_MAX]; what decays below FS_TINY CPU-seconds is forgotten, so
 * no denormal ever appears. */
#define FS_MAX 1e300
#define FS_TINY 1e-6

struct fs_node {
    char *name;
    uint32_t id, shares;
    int parent, depth;
    double own;   /* charged to this node itself */
    double total; /* own + the children's totals */
    double norm;
};

struct fairshare {
    struct fs_node *nodes;
    size_t n, cap;
    struct hashmap *by_name; /* name -> index + 1 */
    int *order;              /* tree order (preorder, siblings by index) */
    size_t norder;
};

static double clamp_usage(double x)
{
    if (!isfinite(x) || x > FS_MAX)
        return isnan(x) ? 0 : FS_MAX;
    return x < FS_TINY ? 0 : x;
}

static void recompute_totals(struct fairshare *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        fs->nodes[i].total = fs->nodes[i].own;
    for (size_t i = fs->n; i-- > 1;) {
        struct fs_node *p = &fs->nodes[fs->nodes[i].parent];
        p->total = clamp_usage(p->total + fs->nodes[i].total);
    }
}

/* Normalised shares and the tree order, after the tree changed. */
static int recompute_shape(struct fairshare *fs)
{
    double *sum = calloc(fs->n, sizeof(*sum));
    int *order = malloc(fs->n * sizeof(*order));
    int *first = malloc(fs->n * sizeof(*first)), *sibling = malloc(fs->n * sizeof(*sibling));
    int err = sum && order && first && sibling ? TS_OK : TS_ENOMEM;
    if (!err) {
        for (size_t i = 1; i < fs->n; i++)
            sum[fs->nodes[i].parent] += fs->nodes[i].shares;
        fs->nodes[0].norm = 1.0;
        for (size_t i = 1; i < fs->n; i++) {
            struct fs_node *nd = &fs->nodes[i];
            double s = sum[nd->parent];
            nd->norm = s > 0 ? fs->nodes[nd->parent].norm * nd->shares / s : 0;
            if (nd->norm < DBL_MIN)
                nd->norm = 0; /* a share too small to matter is none (never a denormal) */
        }
        /* preorder with children in index order: first-child / next-sibling links, then a
         * walk that climbs back up where a subtree ends */
        for (size_t i = 0; i < fs->n; i++)
            first[i] = sibling[i] = -1;
        for (size_t i = fs->n; i-- > 1;) {
            int p = fs->nodes[i].parent;
            sibling[i] = first[p];
            first[p] = (int)i;
        }
        size_t k = 0;
        for (int v = 0; v >= 0;) {
            order[k++] = v;
            if (first[v] >= 0) {
                v = first[v];
                continue;
            }
            while (v >= 0 && sibling[v] < 0)
                v = fs->nodes[v].parent;
            v = v >= 0 ? sibling[v] : -1;
        }
        free(fs->order);
        fs->order = order;
        fs->norder = k;
        order = NULL;
    }
    free(sum);
    free(order);
    free(first);
    free(sibling);
    return err;
}

static int add_node(struct fairshare *fs, const char *name, uint32_t id, int parent,
                    uint32_t shares)
{
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 16;
        struct fs_node *nodes = realloc(fs->nodes, cap * sizeof(*nodes));
        if (!nodes)
            return -1;
        fs->nodes = nodes;
        fs->cap = cap;
    }
    struct fs_node *nd = &fs->nodes[fs->n];
    memset(nd, 0, sizeof(*nd));
    nd->name = strdup(name);
    nd->id = id;
    nd->shares = shares;
    nd->parent = parent;
    nd->depth = parent < 0 ? 0 : fs->nodes[parent].depth + 1;
    if (!nd->name || hashmap_put_str(fs->by_name, name, (void *)(uintptr_t)(fs->n + 1))) {
        free(nd->name);
        return -1;
    }
    return (int)fs->n++;
}

void fairshare_destroy(struct fairshare *fs)
{
    if (!fs)
        return;
    for (size_t i = 0; i < fs->n; i++)
        free(fs->nodes[i].name);
    free(fs->nodes);
    free(fs->order);
    hashmap_destroy(fs->by_name);
    free(fs);
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One line of the file: 0, or -1 with the reason in why. */
static int parse_line(struct fairshare *fs, char *buf, const char **why)
{
    char name[128], idw[32], parent[128], sharesw[32], extra[2];
    int n = sscanf(buf, "%127s %31s %127s %31s %1s", name, idw, parent, sharesw, extra);
    if (n <= 0)
        return 0;
    uint32_t id, shares;
    if (n != 4 || parse_u32(idw, &id) || parse_u32(sharesw, &shares)) {
        *why = "a line is \"name id parent shares\" (id and shares whole numbers)";
        return -1;
    }
    if (!strcmp(name, "root") || !strcmp(name, "unknown")) {
        *why = "\"root\" and \"unknown\" are added by the scheduler";
        return -1;
    }
    if (fairshare_find(fs, name) >= 0) {
        *why = "a name is given twice";
        return -1;
    }
    for (size_t i = 2; i < fs->n; i++)
        if (fs->nodes[i].id == id) {
            *why = "an id is given twice";
            return -1;
        }
    int p = fairshare_find(fs, parent);
    if (p < 0) {
        *why = "the parent is not defined on a line above";
        return -1;
    }
    if (add_node(fs, name, id, p, shares) < 0) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

int fairshare_parse(const char *text, const char *file, uint32_t unknown_shares,
                    struct fairshare **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    errbuf[0] = '\0';
    struct fairshare *fs = calloc(1, sizeof(*fs));
    if (!fs || !(fs->by_name = hashmap_create()) || add_node(fs, "root", 0, -1, 1) < 0 ||
        add_node(fs, "unknown", 0, FAIRSHARE_ROOT, unknown_shares) < 0) {
        fairshare_destroy(fs);
        return TS_ENOMEM;
    }
    int line = 0;
    for (const char *s = text ? text : ""; *s;) {
        size_t len = strcspn(s, "\n");
        char buf[512];
        const char *why = NULL;
        line++;
        if (len >= sizeof(buf)) {
            why = "line too long";
        } else {
            memcpy(buf, s, len);
            buf[len] = '\0';
            char *hash = strchr(buf, '#');
            if (hash)
                *hash = '\0';
            parse_line(fs, buf, &why);
        }
        if (why) {
            snprintf(errbuf, errlen, "%s:%d: %s", file, line, why);
            fairshare_destroy(fs);
            return TS_ECONF;
        }
        s += len + (s[len] == '\n');
    }
    if (recompute_shape(fs)) {
        fairshare_destroy(fs);
        return TS_ENOMEM;
    }
    *out = fs;
    return TS_OK;
}

int fairshare_load(const char *path, uint32_t unknown_shares, struct fairshare **out,
                   char *errbuf, size_t errlen)
{
    char *text;
    *out = NULL;
    int err = conf_read_text(path, (size_t)4 << 20, &text, errbuf, errlen);
    if (err)
        return err;
    err = fairshare_parse(text, path, unknown_shares, out, errbuf, errlen);
    free(text);
    return err;
}

int fairshare_find(const struct fairshare *fs, const char *name)
{
    void *v = hashmap_get_str(fs->by_name, name);
    return v ? (int)((uintptr_t)v - 1) : -1;
}

int fairshare_find_id(const struct fairshare *fs, uint32_t id)
{
    for (size_t i = 2; i < fs->n; i++) /* root and unknown have none */
        if (fs->nodes[i].id == id && id)
            return (int)i;
    return -1;
}

int fairshare_entity(struct fairshare *fs, const char *name)
{
    /* the tree's own root is no entity: a user called root counts as unknown (as does an
     * entity called unknown, which finds that group) */
    if (!name || !*name || !strcmp(name, "root"))
        return FAIRSHARE_UNKNOWN;
    int i = fairshare_find(fs, name);
    if (i >= 0)
        return i;
    i = add_node(fs, name, 0, FAIRSHARE_UNKNOWN, 1);
    /* out of memory for the new shape: the node stays (its name is mapped) with no share
     * and out of the listing until the next change succeeds */
    if (i >= 0)
        recompute_shape(fs);
    return i;
}

void fairshare_charge(struct fairshare *fs, int node, double cpu_seconds)
{
    if (node < 0 || (size_t)node >= fs->n || !isfinite(cpu_seconds) || cpu_seconds <= 0)
        return;
    struct fs_node *nd = &fs->nodes[node];
    nd->own = clamp_usage(nd->own + cpu_seconds);
    for (int a = node; a >= 0; a = fs->nodes[a].parent)
        fs->nodes[a].total = clamp_usage(fs->nodes[a].total + cpu_seconds);
}

void fairshare_decay(struct fairshare *fs, double dt, double half_life)
{
    if (!(dt > 0) || !(half_life > 0) || !isfinite(dt))
        return;
    double x = dt / half_life;
    double f = x > 1000 ? 0 : exp2(-x);
    for (size_t i = 0; i < fs->n; i++)
        fs->nodes[i].own = clamp_usage(fs->nodes[i].own * f);
    recompute_totals(fs);
}

double fairshare_own_usage(const struct fairshare *fs, int node)
{
    return node >= 0 && (size_t)node < fs->n ? fs->nodes[node].own : 0;
}

void fairshare_set_own_usage(struct fairshare *fs, int node, double usage)
{
    if (node < 0 || (size_t)node >= fs->n)
        return;
    fs->nodes[node].own = usage > 0 ? clamp_usage(usage) : 0;
    recompute_totals(fs);
}

size_t fairshare_count(const struct fairshare *fs)
{
    return fs->norder;
}

double fairshare_norm_shares(const struct fairshare *fs, int node)
{
    return node >= 0 && (size_t)node < fs->n ? fs->nodes[node].norm : 0;
}

static double factor_of(double eu, double norm)
{
    if (!(norm > 0))
        return 0;
    double x = eu / norm;
    return !isfinite(x) || x > 1000 ? 0 : exp2(-x);
}

int fairshare_info(const struct fairshare *fs, size_t pos, struct fairshare_info *out)
{
    if (pos >= fs->norder)
        return TS_ENOENT;
    const struct fs_node *nd = &fs->nodes[fs->order[pos]];
    double root = fs->nodes[0].total;
    double eu = root > 0 ? nd->total / root : 0;
    *out = (struct fairshare_info){
        .name = nd->name, .id = nd->id, .parent = nd->parent, .depth = nd->depth,
        .shares = nd->shares, .norm_shares = nd->norm, .usage = nd->total, .own_usage = nd->own,
        .effective_usage = eu, .factor = factor_of(eu, nd->norm),
    };
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the fair-share order */

struct pick {
    double key;   /* usage over share: the lower, the further below its share */
    size_t pos;   /* the position of the entity's next unit */
    int entity;
};

static int pick_less(const struct pick *a, const struct pick *b)
{
    return a->key < b->key || (a->key == b->key && a->pos < b->pos);
}

static void heap_push(struct pick *h, size_t *n, struct pick p)
{
    size_t i = (*n)++;
    while (i && pick_less(&p, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = p;
}

static struct pick heap_pop(struct pick *h, size_t *n)
{
    struct pick top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && pick_less(&h[c + 1], &h[c]))
            c++;
        if (!pick_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

static double key_of(const struct fairshare *fs, const double *usage, int e)
{
    double norm = fs->nodes[e].norm;
    if (!(norm > 0))
        return DBL_MAX;
    double k = usage[e] / norm;
    return isfinite(k) ? k : DBL_MAX;
}

int fairshare_order(const struct fairshare *fs, struct policy_unit *units, size_t n)
{
    if (n < 2)
        return TS_OK;
    size_t nn = fs->n;
    double *usage = malloc(nn * sizeof(*usage));
    size_t *head = malloc(nn * sizeof(*head)), *tail = malloc(nn * sizeof(*tail));
    size_t *next = malloc(n * sizeof(*next));
    struct pick *heap = malloc(nn * sizeof(*heap));
    struct policy_unit *out = malloc(n * sizeof(*out));
    int err = usage && head && tail && next && heap && out ? TS_OK : TS_ENOMEM;
    if (!err) {
        for (size_t i = 0; i < nn; i++) {
            usage[i] = fs->nodes[i].total;
            head[i] = tail[i] = SIZE_MAX;
        }
        for (size_t i = 0; i < n; i++) {
            int e = units[i].fs_entity;
            if (e < 0 || (size_t)e >= nn)
                e = units[i].fs_entity = FAIRSHARE_UNKNOWN;
            next[i] = SIZE_MAX;
            if (head[e] == SIZE_MAX)
                head[e] = i;
            else
                next[tail[e]] = i;
            tail[e] = i;
        }
        size_t nh = 0, k = 0;
        for (size_t e = 0; e < nn; e++)
            if (head[e] != SIZE_MAX)
                heap_push(heap, &nh, (struct pick){key_of(fs, usage, (int)e), head[e], (int)e});
        while (nh) {
            struct pick p = heap_pop(heap, &nh);
            double now = key_of(fs, usage, p.entity);
            if (now > p.key) { /* an entity below it was charged meanwhile */
                p.key = now;
                heap_push(heap, &nh, p);
                continue;
            }
            const struct policy_unit *u = &units[p.pos];
            out[k++] = *u;
            double charge = u->cput > 0 ? (double)u->cput : 0;
            for (int a = p.entity; a >= 0; a = fs->nodes[a].parent)
                usage[a] = clamp_usage(usage[a] + charge);
            head[p.entity] = next[p.pos];
            if (head[p.entity] != SIZE_MAX)
                heap_push(heap, &nh,
                          (struct pick){key_of(fs, usage, p.entity), head[p.entity], p.entity});
        }
        memcpy(units, out, n * sizeof(*out));
    }
    free(usage);
    free(head);
    free(tail);
    free(next);
    free(heap);
    free(out);
    return err;
}
