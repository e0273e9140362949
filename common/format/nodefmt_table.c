/* sinfo's table: nodes grouped into lines, the lines put in Slurm's order, the columns
 * laid out.
 *
 * Grouping follows Slurm 22.05's sinfo: each partition's nodes are taken in the order of
 * the node list, and a node joins the first line that has its partition (as far as the
 * format shows partition data) and the same shown node data (state, features, reason,
 * ...); else it starts a new line. Sizes (CPUs, memory, weight, S:C:T) only split lines
 * with -e; otherwise the line shows their range. A partition shown in the format gets an
 * empty line up front, which its first node fills, so that a partition whose nodes are
 * all filtered away still shows as "0 n/a".
 */
#include "common/format/nodefmt.h"

#include "common/format/nodefmt_int.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GROW_MIN_WIDTH 9 /* Slurm's MIN_PART_FIELD_SIZE and MIN_NODE_FIELD_SIZE */
#define CELL_MAX 8192    /* room for a cell; more when a host list is longer */

struct table {
    const struct nodefmt *fmt;
    const struct nodefmt_sinfo_opts *opts;
    Tessera__NodeInfo *const *nodes;
    size_t nnodes;
    struct nf_row **rows;
    size_t nrows, cap;
    struct hashmap *index;  /* node name -> index + 1 */
    struct hashmap *placed; /* (row, node) pairs already counted */
    int oom;
};

/* ---- rows ------------------------------------------------------------------------------- */

static void row_free(struct nf_row *r)
{
    if (!r)
        return;
    hostlist_destroy(r->nodes);
    hostlist_destroy(r->addrs);
    hostlist_destroy(r->hosts);
    free(r->nodes_text);
    free(r);
}

static struct nf_row *row_new(struct table *t, const Tessera__PartitionInfo *part,
                              size_t part_inx)
{
    struct nf_row *r = calloc(1, sizeof(*r));

    if (r && t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct nf_row **rows = realloc(t->rows, cap * sizeof(*rows));

        if (rows) {
            t->rows = rows;
            t->cap = cap;
        }
    }
    if (!r || t->nrows == t->cap || !(r->nodes = hostlist_create()) ||
        !(r->addrs = hostlist_create()) || !(r->hosts = hostlist_create())) {
        row_free(r);
        t->oom = 1;
        return NULL;
    }
    r->part = part;
    r->part_inx = part_inx;
    r->order = t->nrows;
    t->rows[t->nrows++] = r;
    return r;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* Partition data the format shows must be equal (any partition will do with -R). */
static int part_matches(const struct table *t, const struct nf_row *r,
                        const Tessera__PartitionInfo *p)
{
    const Tessera__PartitionInfo *q = r->part;
    unsigned m = t->fmt->match;

    if (t->opts->list_reasons || p == q)
        return 1;
    if (!p || !q)
        return 0;
    return !((m & NFM_PART) && strcmp(str(p->name), str(q->name))) &&
           !((m & NFM_AVAIL) && strcasecmp(str(p->state), str(q->state))) &&
           !((m & NFM_TIME) && p->max_time != q->max_time) &&
           !((m & NFM_DEFTIME) && p->default_time != q->default_time) &&
           !((m & NFM_SIZE) && (p->min_nodes != q->min_nodes || p->max_nodes != q->max_nodes)) &&
           !((m & NFM_PRIO_TIER) && p->priority_tier != q->priority_tier);
}

/* The uid a reason was set by, or none (Slurm's NO_VAL) when there is no reason. */
static uint32_t reason_uid(const Tessera__NodeInfo *n)
{
    return nf_is_set(n->reason) ? n->reason_uid : UINT32_MAX;
}

static int same_state(const struct nf_row *r, const Tessera__NodeInfo *n)
{
    char a[32], b[32];

    /* Slurm compares the names: a drained idle and a drained down node share a line. */
    return !strcmp(nf_state_long_upper(r->state, a, sizeof(a)),
                   nf_state_long_upper(nf_state_code(n->state), b, sizeof(b)));
}

static int text_matches(const struct nf_row *r, const Tessera__NodeInfo *n, unsigned m)
{
    const Tessera__NodeInfo *f = r->first;

    return !((m & NFM_HOSTNAMES) && hostlist_find(r->hosts, str(n->hostname)) < 0) &&
           !((m & NFM_ADDRS) && hostlist_find(r->addrs, str(n->addr)) < 0) &&
           !((m & NFM_FEATURES) && strcmp(str(n->features), str(f->features))) &&
           !((m & NFM_GRES) && strcmp(str(n->gres), str(f->gres))) &&
           !((m & NFM_REASON) && strcmp(str(n->reason), str(f->reason))) &&
           !((m & NFM_REASON_TIME) && n->reason_time != f->reason_time) &&
           !((m & NFM_REASON_USER) && reason_uid(n) != reason_uid(f)) &&
           !((m & NFM_STATE) && !same_state(r, n));
}

static int size_matches(const struct nf_row *r, const Tessera__NodeInfo *n, unsigned m)
{
    return !((m & NFM_CPUS) && n->cpus != r->min_cpus) &&
           !((m & NFM_SOCKETS) && n->sockets != r->min_sockets) &&
           !((m & NFM_CORES) && n->cores_per_socket != r->min_cores) &&
           !((m & NFM_THREADS) && n->threads_per_core != r->min_threads) &&
           !((m & NFM_MEMORY) && n->real_memory_mb != r->min_mem) &&
           !((m & NFM_WEIGHT) && n->weight != r->min_weight) &&
           !((m & NFM_VERSION) && strcmp(str(n->version), str(r->first->version)));
}

static int node_matches(const struct table *t, const struct nf_row *r,
                        const Tessera__NodeInfo *n)
{
    if (t->opts->node_oriented)
        return 0;
    return text_matches(r, n, t->fmt->match) &&
           (!t->opts->exact || size_matches(r, n, t->fmt->match));
}

static void widen32(uint32_t *lo, uint32_t *hi, uint32_t v)
{
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

/* The first node sets the range; later ones widen it. */
static void take_sizes(struct nf_row *r, const Tessera__NodeInfo *n)
{
    if (r->nodes_total == 0) {
        r->min_cpus = r->max_cpus = n->cpus;
        r->min_sockets = r->max_sockets = n->sockets;
        r->min_cores = r->max_cores = n->cores_per_socket;
        r->min_threads = r->max_threads = n->threads_per_core;
        r->min_weight = r->max_weight = n->weight;
        r->min_mem = r->max_mem = n->real_memory_mb;
        return;
    }
    widen32(&r->min_cpus, &r->max_cpus, n->cpus);
    widen32(&r->min_sockets, &r->max_sockets, n->sockets);
    widen32(&r->min_cores, &r->max_cores, n->cores_per_socket);
    widen32(&r->min_threads, &r->max_threads, n->threads_per_core);
    widen32(&r->min_weight, &r->max_weight, n->weight);
    if (n->real_memory_mb < r->min_mem)
        r->min_mem = n->real_memory_mb;
    if (n->real_memory_mb > r->max_mem)
        r->max_mem = n->real_memory_mb;
}

/* Slurm's counts: a node with jobs (allocated, mixed, completing) is allocated, a
 * drained or down one "other", the rest idle; CPUs likewise, allocated ones apart. */
static void take_counts(struct nf_row *r, const Tessera__NodeInfo *n)
{
    uint32_t code = nf_state_code(n->state), base = code & NF_BASE_MASK;
    uint32_t alloc = n->alloc_cpus < n->cpus ? n->alloc_cpus : n->cpus;
    int unusable = nf_is_drain(code) || base == NF_DOWN;

    if (base == NF_ALLOCATED || base == NF_MIXED || (code & NF_COMPLETING))
        r->nodes_alloc++;
    else if (unusable)
        r->nodes_other++;
    else
        r->nodes_idle++;
    r->nodes_total++;
    r->cpus_alloc += alloc;
    r->cpus_total += n->cpus;
    if (unusable)
        r->cpus_other += n->cpus - alloc;
    else
        r->cpus_idle += n->cpus - alloc;
}

static int push_unique(struct hostlist *hl, const char *name)
{
    if (!nf_is_set(name) || hostlist_find(hl, name) >= 0)
        return TS_OK;
    return hostlist_push(hl, name);
}

/* A node is counted once per line, even when two partitions bring it to the same one. */
static int first_time_in_row(struct table *t, const struct nf_row *r, size_t node)
{
    uint64_t key[2] = {(uint64_t)r->order, (uint64_t)node};

    if (hashmap_get(t->placed, key, sizeof(key)))
        return 0;
    if (hashmap_put(t->placed, key, sizeof(key), (void *)1) != TS_OK)
        t->oom = 1;
    return 1;
}

static void add_node(struct table *t, struct nf_row *r, size_t node)
{
    const Tessera__NodeInfo *n = t->nodes[node];

    if (!first_time_in_row(t, r, node))
        return;
    if (r->nodes_total == 0) {
        r->first = n;
        r->state = nf_state_code(n->state);
    }
    take_sizes(r, n);
    take_counts(r, n);
    /* A name a host list cannot hold (empty, with a comma) is left out of the list; only
     * running out of memory stops the table. */
    if (hostlist_push(r->nodes, str(n->name)) == TS_ENOMEM ||
        ((t->fmt->match & NFM_ADDRS) && push_unique(r->addrs, n->addr) == TS_ENOMEM) ||
        ((t->fmt->match & NFM_HOSTNAMES) && push_unique(r->hosts, n->hostname) == TS_ENOMEM))
        t->oom = 1;
}

static void insert_node(struct table *t, const Tessera__PartitionInfo *part, size_t part_inx,
                        size_t node)
{
    struct nf_row *r;

    /* -N: every node and partition has its own line; no need to look for one. */
    for (size_t i = 0; i < t->nrows && !t->opts->node_oriented; i++) {
        r = t->rows[i];
        if (!part_matches(t, r, part))
            continue;
        if (r->nodes_total && !node_matches(t, r, t->nodes[node]))
            continue;
        add_node(t, r, node);
        return;
    }
    if ((r = row_new(t, part, part_inx)))
        add_node(t, r, node);
}

/* ---- partitions' nodes --------------------------------------------------------------------- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

/* The indexes of the nodes a partition names, in node list order, each once. Names the
 * node list does not have (filtered away) are skipped. */
static size_t *partition_nodes(struct table *t, const Tessera__PartitionInfo *p, size_t *n)
{
    struct hostlist *hl = NULL;
    size_t *idx, k = 0;

    *n = 0;
    if (hostlist_expand(p->nodes, &hl) != TS_OK)
        return NULL; /* a list the controller wrote is valid; nothing to show otherwise */
    idx = malloc((hostlist_count(hl) + 1) * sizeof(*idx));
    for (size_t i = 0; idx && i < hostlist_count(hl); i++) {
        uintptr_t v = (uintptr_t)hashmap_get_str(t->index, hostlist_nth(hl, i));

        if (v)
            idx[k++] = v - 1;
    }
    hostlist_destroy(hl);
    if (!idx) {
        t->oom = 1;
        return NULL;
    }
    qsort(idx, k, sizeof(*idx), cmp_size);
    for (size_t i = 0; i < k; i++)
        if (*n == 0 || idx[*n - 1] != idx[i])
            idx[(*n)++] = idx[i];
    return idx;
}

static void build_rows(struct table *t, Tessera__PartitionInfo *const *parts, size_t nparts)
{
    for (size_t i = 0; i < t->nnodes && !t->oom; i++)
        if (hashmap_put_str(t->index, str(t->nodes[i]->name), (void *)(uintptr_t)(i + 1)))
            t->oom = 1;
    if (!t->opts->node_oriented && (t->fmt->match & NFM_PART))
        for (size_t j = 0; j < nparts && !t->oom; j++)
            row_new(t, parts[j], j);
    for (size_t j = 0; j < nparts && !t->oom; j++) {
        size_t n, *idx = partition_nodes(t, parts[j], &n);

        for (size_t k = 0; k < n && !t->oom; k++)
            insert_node(t, parts[j], j, idx[k]);
        free(idx);
    }
    for (size_t i = 0; i < t->nrows && !t->oom; i++) {
        hostlist_uniq(t->rows[i]->nodes);
        if (!(t->rows[i]->nodes_text = hostlist_compress(t->rows[i]->nodes)))
            t->oom = 1;
    }
}

/* ---- order --------------------------------------------------------------------------------- */

/* Slurm's node name order: at the first difference, numbers compare by value from
 * there on ("n9" < "n10"), anything else as text. */
static int cmp_names(const char *a, const char *b)
{
    size_t i = 0;

    while (a[i] && a[i] == b[i])
        i++;
    if (isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[i])) {
        unsigned long x = strtoul(a + i, NULL, 10), y = strtoul(b + i, NULL, 10);

        if (x != y)
            return x < y ? -1 : 1;
    }
    return strcmp(a, b);
}

static int cmp_order(const struct nf_row *x, const struct nf_row *y)
{
    return (x->order > y->order) - (x->order < y->order);
}

/* sinfo's "#P,-t": partition order, then the higher state number first. */
static int cmp_default(const void *a, const void *b)
{
    const struct nf_row *x = *(struct nf_row *const *)a, *y = *(struct nf_row *const *)b;

    if (x->part_inx != y->part_inx)
        return x->part_inx < y->part_inx ? -1 : 1;
    if (x->state != y->state)
        return x->state > y->state ? -1 : 1;
    return cmp_order(x, y);
}

/* sinfo -N's "N": by the first node name; a node in two partitions keeps their order. */
static int cmp_nodes(const void *a, const void *b)
{
    const struct nf_row *x = *(struct nf_row *const *)a, *y = *(struct nf_row *const *)b;
    int c = cmp_names(str(hostlist_nth(x->nodes, 0)), str(hostlist_nth(y->nodes, 0)));

    return c ? c : cmp_order(x, y);
}

/* ---- layout -------------------------------------------------------------------------------- */

/* A cell's text; buf holds it when the getter needs room. */
static const char *cell(const struct fmtlist_item *it, const struct nf_row *r, int width,
                        char *buf, size_t len)
{
    const struct nf_field *fd = it->field;

    return fd->get(r, width, buf, len);
}

/* "#" columns: at least their width (9 when none), as wide as their longest value. */
static int *column_widths(const struct table *t, char *buf, size_t len)
{
    const struct fmtlist *l = &t->fmt->list;
    int *w = calloc(l->n + 1, sizeof(*w));

    for (size_t i = 0; w && i < l->n; i++) {
        const struct fmtlist_item *it = &l->items[i];

        w[i] = it->width;
        if (!it->field || !it->grow)
            continue;
        if (w[i] == 0)
            w[i] = GROW_MIN_WIDTH;
        for (size_t k = 0; k < t->nrows; k++) {
            size_t n = strlen(cell(it, t->rows[k], 0, buf, len));

            if (n > (size_t)w[i])
                w[i] = n > INT32_MAX ? INT32_MAX : (int)n;
        }
    }
    return w;
}

/* A line of the table: the header (row NULL) or a row, columns as wide as w says. */
struct line {
    const struct nf_row *row;
    const int *w;
};

static void line_cell(void *arg, size_t i, const struct fmtlist_item *it,
                      struct fmtlist_cell *c, char *buf, size_t len)
{
    const struct line *ln = arg;
    const struct nf_field *fd = it->field;

    c->width = ln->w[i];
    if (ln->row) {
        c->text = cell(it, ln->row, ln->w[i], buf, len);
    } else {
        c->text = fd->header;
        c->cut = !fd->header_uncut;
    }
}

static void put_line(FILE *f, const struct table *t, const struct nf_row *r, const int *w,
                     char *buf, size_t len)
{
    struct line ln = {r, w};

    fmtlist_put_line(f, &t->fmt->list, line_cell, &ln, buf, len);
}

/* The longest cell any row can have: host lists grow with the cluster. */
static size_t cell_room(const struct table *t)
{
    size_t room = CELL_MAX;

    for (size_t i = 0; i < t->nrows; i++) {
        size_t n = strlen(t->rows[i]->nodes_text) * 2 + 64; /* hostnames, addresses too */

        if (n > room)
            room = n;
    }
    return room;
}

static char *render(const struct table *t)
{
    char *text = NULL, *buf;
    size_t size = 0, room = cell_room(t);
    int *w;
    FILE *f;

    buf = malloc(room);
    w = buf ? column_widths(t, buf, room) : NULL;
    f = w ? open_memstream(&text, &size) : NULL;
    if (f) {
        if (!t->opts->noheader)
            put_line(f, t, NULL, w, buf, room);
        for (size_t i = 0; i < t->nrows; i++)
            put_line(f, t, t->rows[i], w, buf, room);
        text = nf_memstream_done(f, &text);
    }
    free(w);
    free(buf);
    return text;
}

/* ---- entry points ---------------------------------------------------------------------------- */

char *nodefmt_sinfo_table(const struct nodefmt *fmt, Tessera__PartitionInfo *const *parts,
                          size_t nparts, Tessera__NodeInfo *const *nodes, size_t nnodes,
                          const struct nodefmt_sinfo_opts *opts)
{
    struct nodefmt_sinfo_opts none = {0};
    struct table t = {.fmt = fmt, .opts = opts ? opts : &none, .nodes = nodes, .nnodes = nnodes};
    char *text = NULL;

    if (!fmt)
        return NULL;
    t.index = hashmap_create();
    t.placed = hashmap_create();
    t.oom = !t.index || !t.placed;
    if (!t.oom)
        build_rows(&t, parts, nparts);
    if (!t.oom && t.nrows > 1)
        qsort(t.rows, t.nrows, sizeof(t.rows[0]),
              t.opts->node_oriented ? cmp_nodes : cmp_default);
    if (!t.oom)
        text = render(&t);
    for (size_t i = 0; i < t.nrows; i++)
        row_free(t.rows[i]);
    free(t.rows);
    hashmap_destroy(t.index);
    hashmap_destroy(t.placed);
    return text;
}

char *nodefmt_sinfo(const struct nodefmt *fmt, Tessera__PartitionInfo *const *parts,
                    size_t nparts, Tessera__NodeInfo *const *nodes, size_t nnodes,
                    int node_oriented, int noheader)
{
    struct nodefmt_sinfo_opts opts = {.node_oriented = node_oriented, .noheader = noheader};

    return nodefmt_sinfo_table(fmt, parts, nparts, nodes, nnodes, &opts);
}
