/* Placing a job step: the rules are in steplayout.h.
 *
 * Work in two passes. First every component is placed on its own (struct comp: its
 * nodes, tasks per node and the node of each of its tasks), in ascending offset order so
 * that first_rank is a running sum. Then the message is built: the components, and the
 * merged node list, where walking the components in that same order and their tasks in
 * rank order appends each node's ranks already ascending.
 *
 * The message is built in protobuf-c's unpacked layout (every string, array and
 * sub-message malloc'd, counts never ahead of what is filled in), so that
 * tessera__step_layout__free_unpacked frees it, complete or half-built. */
#include "common/job/steplayout.h"

#include "common/job/jobenv.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/pbutil.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What placing a component needs besides its own request: the input (CPUs other steps
 * hold) and, for the parts of one allocation, the nodes earlier parts took. */
struct placing {
    const struct steplayout_input *in;
    struct hashmap *taken;   /* one_allocation: node name -> taken (NULL otherwise) */
    size_t ntaken;
};

/* One component, placed. */
struct comp {
    const Tessera__JobRecord *rec;
    const Tessera__StepComponentRequest *req;
    uint32_t offset;
    uint32_t cpt;            /* CPUs per task, >= 1 */
    uint32_t ntasks;
    uint32_t first_rank;
    struct hostlist *alloc;  /* the whole allocation, natural order */
    struct hostlist *nodes;  /* the step's nodes, natural order */
    uint32_t *count;         /* tasks per step node */
    uint32_t *node_of;       /* local rank -> index into nodes */
    uint32_t *used;          /* CPUs its tasks take on each step node */
    size_t *merged;          /* index into nodes -> index into the layout's nodes */
};

struct errout {
    char *buf;
    size_t len;
    const char *prefix;      /* "component 1: " for a het job, "" otherwise */
};

__attribute__((format(printf, 3, 4))) static int fail(const struct errout *e, int code,
                                                      const char *fmt, ...)
{
    if (!e->buf || e->len == 0)
        return code;
    int w = snprintf(e->buf, e->len, "%s", e->prefix);
    if (w < 0 || (size_t)w >= e->len)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->buf + w, e->len - (size_t)w, fmt, ap);
    va_end(ap);
    return code;
}

static void comp_fini(struct comp *c)
{
    hostlist_destroy(c->alloc);
    hostlist_destroy(c->nodes);
    free(c->count);
    free(c->node_of);
    free(c->used);
    free(c->merged);
}

/* ------------------------------------------------------------------------------------
 * Input checks
 * ------------------------------------------------------------------------------------ */

static int cmp_offset(const void *a, const void *b)
{
    const struct comp *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Fill comps[] from the input, sorted by offset, and check what the rules rely on. */
static int comps_init(const struct steplayout_input *in, struct comp *comps,
                      const struct errout *e)
{
    size_t n = in->ncomponents;
    if (in->one_allocation && in->het_size)
        return fail(e, TS_EINVAL, "parts of one allocation in a het job");
    if (in->het_size == 0 && n != 1 && !in->one_allocation)
        return fail(e, TS_EINVAL, "a plain job has one component, not %zu", n);
    for (size_t i = 0; i < n; i++) {
        const struct steplayout_component *sc = &in->components[i];
        if (!sc->rec || !sc->req)
            return fail(e, TS_EINVAL, "component %zu has no record or request", i);
        comps[i].rec = sc->rec;
        comps[i].req = sc->req;
        comps[i].offset = in->one_allocation ? sc->req->het_group : sc->rec->het_job_offset;
        if (in->one_allocation ? sc->rec != in->components[0].rec || comps[i].offset >= n
                               : sc->req->het_group != comps[i].offset)
            return fail(e, TS_EINVAL, "request for het group %" PRIu32 " given component %" PRIu32,
                        sc->req->het_group, comps[i].offset);
        if (in->het_size ? comps[i].offset >= in->het_size
                         : comps[i].offset != 0 && !in->one_allocation)
            return fail(e, TS_EINVAL, "component offset %" PRIu32 " beyond the job's %" PRIu32,
                        comps[i].offset, in->het_size);
    }
    qsort(comps, n, sizeof(*comps), cmp_offset);
    for (size_t i = 1; i < n; i++)
        if (comps[i].offset == comps[i - 1].offset)
            return fail(e, TS_EINVAL, "component %" PRIu32 " given twice", comps[i].offset);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------
 * Candidates and node count
 * ------------------------------------------------------------------------------------ */

/* The allocation, sorted, into c->alloc; byname maps each node to its NodeAlloc. */
static int load_alloc(struct comp *c, struct hashmap *byname, const struct errout *e)
{
    if (!(c->alloc = hostlist_create()))
        return TS_ENOMEM;
    for (size_t i = 0; i < c->rec->n_allocs; i++) {
        const Tessera__NodeAlloc *a = c->rec->allocs[i];
        if (!a)
            continue;
        if (hashmap_get_str(byname, a->node ? a->node : ""))
            continue; /* listed twice: the first entry counts */
        int rc = hostlist_push(c->alloc, a->node ? a->node : "");
        if (rc == TS_EHOSTLIST)
            return fail(e, TS_EINVAL, "allocation node \"%s\" is not a host name",
                        a->node ? a->node : "");
        if (rc != TS_OK)
            return fail(e, rc, "%s", ts_strerror(rc));
        if (hashmap_put_str(byname, a->node, (void *)a) != TS_OK)
            return TS_ENOMEM;
    }
    hostlist_uniq(c->alloc);
    return TS_OK;
}

/* -w and -x are matched against the allocation, never expanded: "a[1-1000000]" costs its
 * text, not a million names (common/text/hostlist.h, matching). */
static int parse_option(const char *expr, const char *opt, struct hostpattern **out,
                        const struct errout *e)
{
    int rc = hostpattern_parse(expr, out);
    if (rc == TS_ENOMEM)
        return rc;
    if (rc != TS_OK)
        return fail(e, rc, "invalid %s list \"%.64s\": %s", opt, expr, ts_strerror(rc));
    return TS_OK;
}

/* A -w list names a node outside the allocation: name it when the list is short enough to
 * look (its first such name in natural order). */
static int outside_allocation(const char *expr, const struct hashmap *byname,
                              const struct errout *e)
{
    struct hostlist *hl = NULL;
    const char *name = NULL;
    struct hostpattern *p = NULL;
    if (hostpattern_parse(expr, &p) == TS_OK && hostpattern_size(p) <= 4096 &&
        hostlist_expand(expr, &hl) == TS_OK) {
        hostlist_uniq(hl);
        for (size_t i = 0; !name && i < hostlist_count(hl); i++)
            if (!hashmap_get_str(byname, hostlist_nth(hl, i)))
                name = hostlist_nth(hl, i);
    }
    int rc = name ? fail(e, TS_ENODE_CONFIG, "%s: node %s is not in the job's allocation",
                         ts_strerror(TS_ENODE_CONFIG), name)
                  : fail(e, TS_ENODE_CONFIG, "%s: --nodelist names nodes outside the job's "
                         "allocation", ts_strerror(TS_ENODE_CONFIG));
    hostpattern_destroy(p);
    hostlist_destroy(hl);
    return rc;
}

/* CPUs of allocation entry a that no other step holds. */
static uint32_t free_cpus(const struct comp *c, const struct placing *pl,
                          const Tessera__NodeAlloc *a)
{
    const struct steplayout_input *in = pl->in;
    uint32_t held = in->busy ? in->busy(in->arg, c->rec->job_id, a->node) : 0;
    return held < a->cpus ? a->cpus - held : 0;
}

/* Whether node i of the allocation can take a task of c now. */
static int has_room(const struct comp *c, const struct placing *pl,
                    const struct hashmap *byname, size_t i)
{
    const Tessera__NodeAlloc *a = hashmap_get_str(byname, hostlist_nth(c->alloc, i));
    return c->req->overcommit || free_cpus(c, pl, a) >= c->cpt;
}

/* The candidates in order of preference: the -w nodes, then the rest of the allocation
 * minus -x, nodes with room for a task before those other steps fill, minus the nodes
 * earlier parts of one allocation took. *nlisted gets the number of -w nodes. */
static int candidates(struct comp *c, const struct placing *pl, const struct hashmap *byname,
                      struct hostlist *pref, size_t *nlisted, const struct errout *e)
{
    struct hostpattern *excl = NULL, *want = NULL;
    int listing = c->req->nodelist && *c->req->nodelist;
    size_t n = hostlist_count(c->alloc);
    unsigned char *taken = calloc(n + 1, 1); /* -w or -x nodes */
    int rc = TS_ENOMEM;

    *nlisted = 0;
    if (!taken)
        goto out;
    if ((rc = parse_option(c->req->exclude, "--exclude", &excl, e)) != TS_OK ||
        (rc = parse_option(c->req->nodelist, "--nodelist", &want, e)) != TS_OK)
        goto out;
    for (size_t i = 0; i < n; i++) { /* the allocation is in natural order */
        const char *name = hostlist_nth(c->alloc, i);
        int excluded = hostpattern_contains(excl, name);
        int earlier = pl->taken && hashmap_get_str(pl->taken, name);
        taken[i] = (unsigned char)(excluded || earlier);
        if (!listing || !hostpattern_tally(want, name))
            continue;
        if (earlier) { /* Slurm's words: the earlier parts' nodes are excluded */
            rc = fail(e, TS_ESTEP_NODELIST, "Requested nodelist %s overlaps with excluded %s.",
                      c->req->nodelist, name);
            goto out;
        }
        if (excluded) {
            rc = fail(e, TS_ENODE_CONFIG, "%s: node %s is both requested and excluded",
                      ts_strerror(TS_ENODE_CONFIG), name);
            goto out;
        }
        if ((rc = hostlist_push(pref, name)) != TS_OK)
            goto out;
        taken[i] = 1;
        (*nlisted)++;
    }
    if (listing && !hostpattern_complete(want)) {
        rc = outside_allocation(c->req->nodelist, byname, e);
        goto out;
    }
    for (int full = 0; full < 2; full++)
        for (size_t i = 0; i < n; i++)
            if (!taken[i] && has_room(c, pl, byname, i) == !full &&
                (rc = hostlist_push(pref, hostlist_nth(c->alloc, i))) != TS_OK)
                goto out;
    rc = TS_OK;
out:
    hostpattern_destroy(excl);
    hostpattern_destroy(want);
    free(taken);
    return rc;
}

/* N from the request, ncand candidates of which nlisted were named with -w; packed, when
 * not 0, is the preferred count instead of the tasks'. */
static int node_count(const Tessera__StepComponentRequest *r, size_t ncand, size_t nlisted,
                      uint64_t packed, uint32_t *nnodes, const struct errout *e)
{
    uint64_t want, lo = 1, hi = UINT32_MAX;
    if (nlisted) { /* -w names the step's nodes */
        want = nlisted;
    } else if (packed) {
        want = packed;
    } else if (r->ntasks) {
        want = r->ntasks;
        if (r->ntasks_per_node) /* as many nodes as that many tasks a node takes */
            want = (want + r->ntasks_per_node - 1) / r->ntasks_per_node;
    } else {
        want = ncand;
    }
    if (r->min_nodes) {
        lo = r->min_nodes;
        hi = r->max_nodes ? r->max_nodes : r->min_nodes;
    } else if (r->max_nodes) {
        hi = r->max_nodes;
    }
    if (hi < lo)
        return fail(e, TS_EINVAL, "invalid node count -N %" PRIu64 "-%" PRIu64, lo, hi);
    if (ncand == 0)
        return fail(e, TS_ENODE_CONFIG, "%s: no node of the allocation is left",
                    ts_strerror(TS_ENODE_CONFIG));
    if (lo > ncand)
        return fail(e, TS_ENODE_CONFIG, "%s: %" PRIu64 " nodes requested, %zu available",
                    ts_strerror(TS_ENODE_CONFIG), lo, ncand);
    uint64_t n = want < lo ? lo : want > hi ? hi : want;
    if (n > ncand)
        n = ncand;
    if (r->ntasks && r->ntasks < n)
        n = r->ntasks;
    if (n < nlisted)
        return fail(e, TS_ENODE_CONFIG, "%s: --nodelist names %zu nodes, the step has %" PRIu64,
                    ts_strerror(TS_ENODE_CONFIG), nlisted, n);
    *nnodes = (uint32_t)n;
    return TS_OK;
}

/* ------------------------------------------------------------------------------------
 * Tasks
 * ------------------------------------------------------------------------------------ */

/* How many tasks of c allocation entry a takes: its free CPUs over -c, any number with
 * -O; at most --ntasks-per-node. */
static uint32_t node_capacity(const struct comp *c, const struct placing *pl,
                              const Tessera__NodeAlloc *a)
{
    uint32_t cap = c->req->overcommit ? STEPLAYOUT_MAX_TASKS_PER_NODE
                                      : free_cpus(c, pl, a) / c->cpt;
    if (c->req->ntasks_per_node && cap > c->req->ntasks_per_node)
        cap = c->req->ntasks_per_node;
    return cap;
}

/* A part of one allocation without -N: as few candidates as its tasks fit on (Slurm
 * packs them: "srun -n2 a : -n2 b" in 2 nodes of 4 CPUs puts each part on one node);
 * 0 when it does not apply or nothing fits. */
static uint64_t packed_count(const struct comp *c, const struct placing *pl,
                             const struct hashmap *byname, const struct hostlist *pref)
{
    const Tessera__StepComponentRequest *r = c->req;
    if (!pl->taken || r->min_nodes || r->max_nodes || !r->ntasks)
        return 0;
    uint64_t room = 0;
    for (size_t i = 0; i < hostlist_count(pref); i++) {
        room += node_capacity(c, pl, hashmap_get_str(byname, hostlist_nth(pref, i)));
        if (room >= r->ntasks)
            return i + 1;
    }
    return 0;
}

/* Each node's capacity, and the check that T tasks fit. */
static int capacities(const struct comp *c, const struct placing *pl,
                      const struct hashmap *byname, uint64_t ntasks, uint32_t *cap,
                      const struct errout *e)
{
    uint64_t total = 0;
    size_t n = hostlist_count(c->nodes);
    for (size_t i = 0; i < n; i++) {
        const char *name = hostlist_nth(c->nodes, i);
        const Tessera__NodeAlloc *a = hashmap_get_str(byname, name);
        cap[i] = node_capacity(c, pl, a);
        if (cap[i] == 0)
            return fail(e, TS_ETOO_MANY_CPUS, "%s: node %s has %" PRIu32 " CPUs for %" PRIu32
                        " per task", ts_strerror(TS_ETOO_MANY_CPUS), name, free_cpus(c, pl, a),
                        c->cpt);
        total += cap[i]; /* below 2^64: at most 2^32 nodes of 2^32 */
    }
    if (ntasks > total)
        return fail(e, TS_ETOO_MANY_CPUS,
                    "%s: %" PRIu64 " tasks, room for %" PRIu64 " on %zu nodes",
                    ts_strerror(TS_ETOO_MANY_CPUS), ntasks, total, n);
    return TS_OK;
}

/* Deal the tasks round by round, one per node that still has room; with cyclic, rank r
 * goes where the r-th task was dealt, with block the ranks are consecutive per node. */
static void distribute(struct comp *c, const uint32_t *cap, int cyclic)
{
    size_t n = hostlist_count(c->nodes);
    uint32_t placed = 0, before = 1;
    /* capacities() checked that the tasks fit; the progress test only keeps a mistake
     * there from looping forever */
    while (placed < c->ntasks && placed != before) {
        before = placed;
        for (size_t i = 0; i < n && placed < c->ntasks; i++)
            if (c->count[i] < cap[i]) {
                c->count[i]++;
                c->node_of[placed++] = (uint32_t)i;
            }
    }
    if (cyclic)
        return;
    placed = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < c->count[i]; k++)
            c->node_of[placed++] = (uint32_t)i;
}

/* The first nnodes candidates, in natural order. */
static int choose_nodes(struct comp *c, const struct hostlist *pref, uint32_t nnodes)
{
    if (!(c->nodes = hostlist_create()))
        return TS_ENOMEM;
    for (uint32_t i = 0; i < nnodes; i++)
        if (hostlist_push(c->nodes, hostlist_nth(pref, i)) != TS_OK)
            return TS_ENOMEM;
    hostlist_uniq(c->nodes);
    return TS_OK;
}

/* The CPUs each step node's tasks take: -c each, at most the node's with -O. */
static int count_cpus(struct comp *c, const struct hashmap *byname)
{
    size_t n = hostlist_count(c->nodes);
    if (!(c->used = calloc(n ? n : 1, sizeof(*c->used))))
        return TS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const Tessera__NodeAlloc *a = hashmap_get_str(byname, hostlist_nth(c->nodes, i));
        uint64_t want = (uint64_t)c->count[i] * c->cpt;
        c->used[i] = (uint32_t)(want > a->cpus ? a->cpus : want);
    }
    return TS_OK;
}

static int place_tasks(struct comp *c, const struct placing *pl, const struct hashmap *byname,
                       const struct errout *e)
{
    const Tessera__StepComponentRequest *r = c->req;
    size_t n = hostlist_count(c->nodes);
    uint64_t ntasks = r->ntasks            ? r->ntasks
                      : r->ntasks_per_node ? (uint64_t)r->ntasks_per_node * n
                                           : n;
    uint32_t *cap = calloc(n, sizeof(*cap));
    int rc = TS_ENOMEM;

    if (r->distribution != TESSERA__STEP_DISTRIBUTION__STEP_DIST_BLOCK &&
        r->distribution != TESSERA__STEP_DISTRIBUTION__STEP_DIST_CYCLIC) {
        rc = fail(e, TS_EINVAL, "unknown task distribution %d", (int)r->distribution);
        goto out;
    }
    if (ntasks > UINT32_MAX) { /* --ntasks-per-node times many nodes */
        rc = fail(e, TS_EINVAL, "more than %" PRIu32 " tasks", UINT32_MAX);
        goto out;
    }
    if (!cap || (rc = capacities(c, pl, byname, ntasks, cap, e)) != TS_OK)
        goto out;
    rc = TS_ENOMEM;
    c->ntasks = (uint32_t)ntasks;
    if (!(c->count = calloc(n, sizeof(*c->count))) ||
        !(c->node_of = calloc(c->ntasks, sizeof(*c->node_of))))
        goto out;
    distribute(c, cap, r->distribution == TESSERA__STEP_DISTRIBUTION__STEP_DIST_CYCLIC);
    rc = count_cpus(c, byname);
out:
    free(cap);
    return rc;
}

/* A part of one allocation asks for its -N, one node with -n or -w, else every node of
 * the allocation (as srun's SLURM_NNODES default would); what earlier parts took is
 * gone. Slurm 22.05's words. */
static int room_left(const struct comp *c, const struct placing *pl, const struct errout *e)
{
    const Tessera__StepComponentRequest *r = c->req;
    size_t size = hostlist_count(c->alloc);
    uint64_t asked = r->min_nodes                                  ? r->min_nodes
                     : r->ntasks || (r->nodelist && *r->nodelist) ? 1
                                                                   : size;
    if (!pl->taken || asked + pl->ntaken <= size)
        return TS_OK;
    return fail(e, TS_ESTEP_COMPONENTS, "Allocation failure of %" PRIu64 " nodes: job size of "
                "%zu, already allocated %zu nodes to previous components.", asked, size,
                pl->ntaken);
}

static int place(struct comp *c, const struct placing *pl, const struct errout *e)
{
    struct hashmap *byname = hashmap_create();
    struct hostlist *pref = hostlist_create();
    size_t nlisted = 0;
    uint32_t nnodes = 0;
    int rc = TS_ENOMEM;

    c->cpt = c->req->cpus_per_task ? c->req->cpus_per_task : 1;
    if (!byname || !pref)
        goto out;
    if ((rc = load_alloc(c, byname, e)) != TS_OK || (rc = room_left(c, pl, e)) != TS_OK ||
        (rc = candidates(c, pl, byname, pref, &nlisted, e)) != TS_OK ||
        (rc = node_count(c->req, hostlist_count(pref), nlisted,
                         packed_count(c, pl, byname, pref), &nnodes, e)) != TS_OK ||
        (rc = choose_nodes(c, pref, nnodes)) != TS_OK)
        goto out;
    rc = place_tasks(c, pl, byname, e);
out:
    hostlist_destroy(pref);
    hashmap_destroy(byname);
    return rc;
}

/* ------------------------------------------------------------------------------------
 * The message
 * ------------------------------------------------------------------------------------ */

static int set_str(char **slot, const char *value)
{
    return pbutil_set_string(slot, value) == 0 ? TS_OK : TS_ENOMEM;
}

/* Take a malloc'd string (NULL: out of memory) into a message's string field. */
static int take_str(char **slot, char *value)
{
    if (!value)
        return TS_ENOMEM;
    *slot = value;
    return TS_OK;
}

static char *counts_text(const uint32_t *counts, size_t n)
{
    size_t len = 20 * n + 32; /* an item is at most 17 characters a node */
    char *s = malloc(len);
    if (s)
        jobenv_compress_counts(counts, n, s, len);
    return s;
}

static const char *partition_of(const Tessera__JobRecord *rec)
{
    return rec->desc && rec->desc->partition ? rec->desc->partition : "";
}

static int fill_component(Tessera__StepLayoutComponent *m, const struct comp *c)
{
    m->offset = c->offset;
    m->job_id = c->rec->job_id;
    m->first_rank = c->first_rank;
    m->ntasks = c->ntasks;
    m->nnodes = (uint32_t)hostlist_count(c->nodes);
    m->cpus_per_task = c->cpt;
    m->job_nnodes = (uint32_t)hostlist_count(c->alloc);
    if (!(m->node_cpus = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*m->node_cpus))))
        return TS_ENOMEM;
    memcpy(m->node_cpus, c->used, m->nnodes * sizeof(*m->node_cpus));
    m->n_node_cpus = m->nnodes;
    if (take_str(&m->nodelist, hostlist_compress(c->nodes)) != TS_OK ||
        take_str(&m->tasks_per_node, counts_text(c->count, m->nnodes)) != TS_OK ||
        take_str(&m->job_nodelist, hostlist_compress(c->alloc)) != TS_OK)
        return TS_ENOMEM;
    return set_str(&m->partition, partition_of(c->rec));
}

static int add_components(Tessera__StepLayout *l, const struct comp *comps, size_t n)
{
    if (!(l->components = calloc(n, sizeof(*l->components))))
        return TS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        Tessera__StepLayoutComponent *m = malloc(sizeof(*m));
        if (!m)
            return TS_ENOMEM;
        tessera__step_layout_component__init(m);
        l->components[l->n_components++] = m;
        if (fill_component(m, &comps[i]) != TS_OK)
            return TS_ENOMEM;
    }
    return TS_OK;
}

/* Union of the components' step nodes (step != 0) or allocations, natural order. */
static struct hostlist *union_of(const struct comp *comps, size_t n, int step)
{
    struct hostlist *all = hostlist_create();
    for (size_t i = 0; all && i < n; i++) {
        const struct hostlist *h = step ? comps[i].nodes : comps[i].alloc;
        for (size_t j = 0; j < hostlist_count(h); j++)
            if (hostlist_push(all, hostlist_nth(h, j)) != TS_OK) {
                hostlist_destroy(all);
                return NULL;
            }
    }
    if (all)
        hostlist_uniq(all);
    return all;
}

/* comps[i].merged[j]: where component i's j-th node is in the merged list. */
static int map_merged(struct comp *comps, size_t n, const struct hostlist *all)
{
    struct hashmap *idx = hashmap_create();
    int rc = TS_ENOMEM;
    if (!idx)
        return rc;
    for (size_t m = 0; m < hostlist_count(all); m++)
        if (hashmap_put_str(idx, hostlist_nth(all, m), (void *)(uintptr_t)(m + 1)) != TS_OK)
            goto out;
    for (size_t i = 0; i < n; i++) {
        size_t nn = hostlist_count(comps[i].nodes);
        if (!(comps[i].merged = calloc(nn ? nn : 1, sizeof(size_t))))
            goto out;
        for (size_t j = 0; j < nn; j++) {
            const char *name = hostlist_nth(comps[i].nodes, j);
            comps[i].merged[j] = (uintptr_t)hashmap_get_str(idx, name) - 1;
        }
    }
    rc = TS_OK;
out:
    hashmap_destroy(idx);
    return rc;
}

/* The node entries with their names, rank arrays sized, and CPUs. */
static int make_nodes(Tessera__StepLayout *l, const struct comp *comps, size_t n,
                      const struct hostlist *all)
{
    size_t nn = hostlist_count(all);
    size_t *nranks = calloc(nn ? nn : 1, sizeof(*nranks));
    uint64_t *cpus = calloc(nn ? nn : 1, sizeof(*cpus));
    int rc = TS_ENOMEM;

    if (!nranks || !cpus || !(l->nodes = calloc(nn ? nn : 1, sizeof(*l->nodes))))
        goto out;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < hostlist_count(comps[i].nodes); j++) {
            nranks[comps[i].merged[j]] += comps[i].count[j];
            cpus[comps[i].merged[j]] += comps[i].used[j];
        }
    for (size_t m = 0; m < nn; m++) {
        Tessera__StepLayoutNode *node = malloc(sizeof(*node));
        if (!node)
            goto out;
        tessera__step_layout_node__init(node);
        l->nodes[l->n_nodes++] = node;
        node->cpus = cpus[m] > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus[m];
        if (set_str(&node->name, hostlist_nth(all, m)) != TS_OK ||
            !(node->ranks = calloc(nranks[m] ? nranks[m] : 1, sizeof(*node->ranks))) ||
            !(node->rank_components = calloc(nranks[m] ? nranks[m] : 1, sizeof(uint32_t))))
            goto out;
    }
    rc = TS_OK;
out:
    free(nranks);
    free(cpus);
    return rc;
}

/* Components in offset order, their tasks in rank order: each node's ranks ascend. */
static void fill_ranks(Tessera__StepLayout *l, const struct comp *comps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (uint32_t r = 0; r < comps[i].ntasks; r++) {
            Tessera__StepLayoutNode *node = l->nodes[comps[i].merged[comps[i].node_of[r]]];
            node->ranks[node->n_ranks++] = comps[i].first_rank + r;
            node->rank_components[node->n_rank_components++] = (uint32_t)i;
        }
}

static int node_addresses(Tessera__StepLayout *l, const struct steplayout_input *in,
                          const struct errout *e)
{
    for (size_t m = 0; in->node_addr && m < l->n_nodes; m++) {
        const char *addr = NULL;
        uint16_t port = 0;
        int rc = in->node_addr(in->arg, l->nodes[m]->name, &addr, &port);
        if (rc != TS_OK)
            return fail(e, rc, "no address for node %s: %s", l->nodes[m]->name, ts_strerror(rc));
        if (set_str(&l->nodes[m]->addr, addr) != TS_OK)
            return TS_ENOMEM;
        l->nodes[m]->port = port;
    }
    return TS_OK;
}

static int add_nodes(Tessera__StepLayout *l, struct comp *comps, size_t n,
                     const struct steplayout_input *in, const struct errout *e)
{
    struct hostlist *step = union_of(comps, n, 1);
    struct hostlist *job = union_of(comps, n, 0);
    int rc = TS_ENOMEM;

    if (!step || !job || map_merged(comps, n, step) != TS_OK ||
        make_nodes(l, comps, n, step) != TS_OK ||
        take_str(&l->nodelist, hostlist_compress(step)) != TS_OK ||
        take_str(&l->job_nodelist, hostlist_compress(job)) != TS_OK)
        goto out;
    l->job_nnodes = (uint32_t)hostlist_count(job);
    fill_ranks(l, comps, n);
    rc = node_addresses(l, in, e);
out:
    hostlist_destroy(step);
    hostlist_destroy(job);
    return rc;
}

static int make_layout(const struct steplayout_input *in, struct comp *comps, size_t n,
                       Tessera__StepLayout *l, const struct errout *e)
{
    l->job_id = in->job_id;
    l->step_id = in->step_id;
    l->uid = in->uid;
    l->gid = in->gid;
    l->het_size = in->het_size;
    l->issued = in->issued;
    l->issued_ms = in->issued_ms;
    l->expires = in->expires;
    for (size_t i = 0; i < n; i++)
        l->ntasks += comps[i].ntasks;
    if (set_str(&l->user_name, in->user_name) != TS_OK ||
        set_str(&l->cluster, in->cluster) != TS_OK || add_components(l, comps, n) != TS_OK)
        return TS_ENOMEM;
    l->step_job_id = steplayout_step_job_id(l);
    return add_nodes(l, comps, n, in, e);
}

/* ------------------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------------------ */

/* Place every component, in offset order, numbering the ranks on. */
/* A part of one allocation placed: later parts keep off its nodes. */
static int take_nodes(struct placing *pl, const struct comp *c)
{
    for (size_t j = 0; pl->taken && j < hostlist_count(c->nodes); j++) {
        if (hashmap_put_str(pl->taken, hostlist_nth(c->nodes, j), (void *)1) != TS_OK)
            return TS_ENOMEM;
        pl->ntaken++;
    }
    return TS_OK;
}

static int place_all(const struct steplayout_input *in, struct comp *comps, size_t n,
                     char *errbuf, size_t errlen)
{
    struct placing pl = {.in = in};
    if (in->one_allocation && !(pl.taken = hashmap_create()))
        return TS_ENOMEM;
    uint64_t next = 0;
    int rc = TS_OK;
    for (size_t i = 0; rc == TS_OK && i < n; i++) {
        char prefix[40] = "";
        if (in->het_size)
            snprintf(prefix, sizeof(prefix), "component %" PRIu32 ": ", comps[i].offset);
        struct errout e = {errbuf, errlen, prefix};
        rc = place(&comps[i], &pl, &e);
        if (rc == TS_OK)
            rc = take_nodes(&pl, &comps[i]);
        if (rc == TS_ENOMEM)
            rc = fail(&e, rc, "%s", ts_strerror(rc));
        if (rc != TS_OK)
            break;
        comps[i].first_rank = (uint32_t)next;
        next += comps[i].ntasks;
        if (next > UINT32_MAX)
            rc = fail(&e, TS_EINVAL, "more than %" PRIu32 " tasks", UINT32_MAX);
    }
    hashmap_destroy(pl.taken);
    return rc;
}

int steplayout_build(const struct steplayout_input *in, Tessera__StepLayout **out,
                     char *errbuf, size_t errlen)
{
    struct errout e = {errbuf, errlen, ""};
    struct comp *comps = NULL;
    Tessera__StepLayout *l = NULL;
    size_t n = in ? in->ncomponents : 0;
    int rc;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!out)
        return fail(&e, TS_EINVAL, "no place for the layout");
    *out = NULL;
    if (!in || !in->components || n == 0)
        return fail(&e, TS_EINVAL, "a step needs at least one component");
    rc = TS_ENOMEM;
    if (!(comps = calloc(n, sizeof(*comps))) || !(l = malloc(sizeof(*l))))
        goto error;
    tessera__step_layout__init(l);
    if ((rc = comps_init(in, comps, &e)) != TS_OK ||
        (rc = place_all(in, comps, n, errbuf, errlen)) != TS_OK ||
        (rc = make_layout(in, comps, n, l, &e)) != TS_OK)
        goto error;
    for (size_t i = 0; i < n; i++)
        comp_fini(&comps[i]);
    free(comps);
    *out = l;
    return TS_OK;

error:
    if (rc == TS_ENOMEM)
        fail(&e, rc, "%s", ts_strerror(rc));
    for (size_t i = 0; comps && i < n; i++)
        comp_fini(&comps[i]);
    free(comps);
    steplayout_free(l);
    return rc;
}

void steplayout_free(Tessera__StepLayout *l)
{
    if (l)
        tessera__step_layout__free_unpacked(l, NULL);
}

/* ------------------------------------------------------------------------------------
 * PMI_process_mapping
 * ------------------------------------------------------------------------------------ */

/* Every node holds one consecutive block of ranks, the blocks in node order. */
static int is_block(const Tessera__StepLayout *l)
{
    uint32_t next = 0;
    for (size_t m = 0; m < l->n_nodes; m++)
        for (size_t k = 0; k < l->nodes[m]->n_ranks; k++)
            if (l->nodes[m]->ranks[k] != next++)
                return 0;
    return next == l->ntasks;
}

/* Rank r is on node r mod N. */
static int is_cyclic(const Tessera__StepLayout *l)
{
    size_t total = 0;
    for (size_t m = 0; m < l->n_nodes; m++) {
        for (size_t k = 0; k < l->nodes[m]->n_ranks; k++)
            if (l->nodes[m]->ranks[k] != m + k * l->n_nodes)
                return 0;
        total += l->nodes[m]->n_ranks;
    }
    return total == l->ntasks;
}

/* Append to buf at *pos; 0 when it does not fit. */
__attribute__((format(printf, 4, 5))) static int append(char *buf, size_t len, size_t *pos,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *pos)
        return 0;
    *pos += (size_t)w;
    return 1;
}

static int mapping_block(const Tessera__StepLayout *l, char *buf, size_t len)
{
    size_t pos = 0;
    if (!append(buf, len, &pos, "(vector"))
        return 0;
    for (size_t m = 0; m < l->n_nodes;) {
        size_t run = 1, per = l->nodes[m]->n_ranks;
        while (m + run < l->n_nodes && l->nodes[m + run]->n_ranks == per)
            run++;
        if (!append(buf, len, &pos, ",(%zu,%zu,%zu)", m, run, per))
            return 0;
        m += run;
    }
    return append(buf, len, &pos, ")");
}

int steplayout_process_mapping(const Tessera__StepLayout *l, char *buf, size_t len)
{
    if (!l || !buf || len == 0)
        return TS_EINVAL;
    buf[0] = '\0';
    if (l->n_nodes == 0)
        return TS_OK;
    int ok = 1;
    if (is_block(l))
        ok = mapping_block(l, buf, len);
    else if (is_cyclic(l)) {
        int w = snprintf(buf, len, "(vector,(0,%zu,1))", l->n_nodes);
        ok = w >= 0 && (size_t)w < len;
    }
    if (!ok) {
        buf[0] = '\0';
        return TS_ETOOBIG;
    }
    return TS_OK;
}

uint32_t steplayout_step_job_id(const Tessera__StepLayout *l)
{
    if (l->step_job_id)
        return l->step_job_id;
    return l->n_components ? l->components[0]->job_id : l->job_id;
}
