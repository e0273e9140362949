/* select/consumable: CPUs and memory of a node are consumable, so several jobs share a node
 * as long as both remain (Slurm's select/cons_tres with CR_Core_Memory, at CPU granularity).
 *
 * Rules (see common/sched/select.h for the contract):
 *
 * - A node is usable for a request when it is available, not held by an --exclusive job, in
 *   req->eligible, matches req->constraint, and, for an --exclusive request, is empty (no job,
 *   no CPU and no memory held).
 * - Its capacity in tasks is floor(free CPUs / cpus_per_task), at most ntasks_per_node, and
 *   limited by memory: --mem-per-cpu needs cpus_per_task * mem_per_cpu MB per task, --mem
 *   needs mem_per_node MB free once per node, --mem=0 needs all of the node's memory free.
 * - Node choice: every required (-w) node first, then the others by (weight, index). Nodes
 *   are taken until they hold ntasks tasks and number at least min_nodes; with a maximum
 *   (-N min-max) as many more as the range allows, up to one per task, while usable nodes
 *   remain, as sbatch(1) documents and the reference cluster shows. If the preferred nodes
 *   would need more than max_nodes, the others are taken by capacity instead (largest
 *   first, then weight and index), which finds a placement within max_nodes whenever one
 *   exists.
 * - Task layout, as Slurm 22.05's cons_tres (_cpus_to_use, then _compute_c_b_task_dist):
 *   walking the chosen nodes in order, each may take what it can of the tasks still
 *   unplaced less one per node min_nodes still needs, at least one (--exclusive: no such
 *   limit); then the tasks are dealt round-robin over the nodes in index order, each up to
 *   its limit. Observed on the reference cluster (4 nodes of 4 CPUs): -N2 -n3 2+1, -N2 -n4
 *   3+1, -N2 -n5 4+1, -N3 -n4 2+1+1, -N3 -n6 4+1+1, -N1-3 -n6 3+2+1, -N2-3 -n7 3+3+1,
 *   -N1-3 -n2 1+1, -n5 4+1, -N2 -n4 -c2 2+2, -N1-2 -n3 -c2 2+1, --ntasks-per-node=2 -n4
 *   2+2, --exclusive -N2 -n4 2+2, --exclusive -N2 -n5 3+2. Slurm counts the "one per
 *   further node" in CPUs rather than tasks; with cpus_per_task > 1 the two may differ at
 *   the margin, and Tessera counts tasks.
 * - Allocation on a node: tasks * cpus_per_task CPUs; memory tasks * cpus_per_task *
 *   mem_per_cpu, or mem_per_node, or the whole node for --mem=0. An --exclusive request takes
 *   every CPU and all the memory of its nodes. A request without any memory option gets
 *   0 MB: its memory is not tracked. (Slurm 22.05 without DefMemPerCPU/DefMemPerNode gives
 *   such a job the node's whole memory, so two jobs without --mem never share a node there;
 *   Tessera leaves that default to the controller, which applies DefMem* before asking.)
 * - SELECT_NEVER when the request cannot be placed even if every eligible node were empty
 *   and up: down and drained nodes count as empty because they may come back, but only
 *   eligible ones (the partition, -w and -x decide what may ever be used). SELECT_BUSY
 *   when it would fit such a cluster but not the nodes as they are.
 *
 * Heterogeneous jobs are placed jointly (place_het): most constrained component first,
 * greedy, and a bounded backtracking search when a later component does not fit (see
 * het_search). The plugin keeps no state and reads no clock; ties are broken by node index
 * so the same view and requests always give the same placement.
 */
#include "common/sched/features.h"
#include "common/sched/select.h"
#include "common/util/arith.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Placement attempts a het job may spend before it is declared BUSY for this cycle: enough
 * for the conflicts of a few overlapping partitions, small enough to stay fast. */
#define HET_BUDGET 128u

/* search results besides "component i did not fit" */
#define HET_DONE ((size_t)-1)
#define HET_GIVEUP ((size_t)-2)

/* Sort keys of candidate entries (kept in select_node_alloc.mem_mb while choosing). */
#define KEY_NOT_REQUIRED (1ull << 40)
#define KEY_AVOIDED (1ull << 33)

/* What other components of the same het job already hold, per node. */
struct overlay {
    uint32_t *cpus;
    uint64_t *mem;
    uint32_t *jobs;
    uint32_t *excl;
};

/* One placement attempt of one request. */
struct attempt {
    const struct select_view *view;
    const struct select_request *req;
    const struct overlay *ov; /* NULL: nothing besides the view */
    const uint8_t *avoid;     /* NULL, or per node 1: use only after every other node */
    int empty;                /* as if every node were empty and up (the NEVER question) */
};

static uint32_t min_nodes_of(const struct select_request *r)
{
    return r->min_nodes ? r->min_nodes : 1;
}

/* Requests that no cluster can satisfy, whatever its nodes. */
static int request_impossible(const struct select_request *r)
{
    if (!r->ntasks || !r->cpus_per_task)
        return 1;
    if (r->max_nodes && r->max_nodes < min_nodes_of(r))
        return 1;
    /* every chosen node runs at least one task */
    return min_nodes_of(r) > r->ntasks || r->nrequired > r->ntasks;
}

/* Free CPUs and memory of node idx for a, or 0 when it may not take this request now. */
static int node_free(const struct attempt *a, uint32_t idx, uint32_t *cpus, uint64_t *mem)
{
    const struct select_node *n = &a->view->nodes[idx];
    *cpus = n->cpus;
    *mem = n->mem_mb;
    if (a->empty)
        return 1;
    uint32_t used_cpus = n->alloc_cpus, jobs = n->jobs;
    uint64_t used_mem = n->alloc_mem_mb;
    int held = n->exclusive;
    if (a->ov) {
        used_cpus += a->ov->cpus[idx];
        used_mem += a->ov->mem[idx];
        jobs += a->ov->jobs[idx];
        held |= a->ov->excl[idx] != 0;
    }
    if (!n->available || held)
        return 0;
    /* --exclusive shares the node with nobody, so it must be empty */
    if (a->req->exclusive && (jobs || used_cpus || used_mem))
        return 0;
    *cpus = used_cpus < n->cpus ? n->cpus - used_cpus : 0;
    *mem = used_mem < n->mem_mb ? n->mem_mb - used_mem : 0;
    return 1;
}

/* How many tasks of the request node idx can take (0: unusable). */
static uint32_t node_capacity(const struct attempt *a, uint32_t idx)
{
    const struct select_request *r = a->req;
    const struct select_node *n = &a->view->nodes[idx];
    uint32_t cpus;
    uint64_t mem;
    if (!node_free(a, idx, &cpus, &mem) || !features_match(r->constraint, n->features))
        return 0;
    uint32_t tasks = cpus / r->cpus_per_task;
    if (r->ntasks_per_node && tasks > r->ntasks_per_node)
        tasks = r->ntasks_per_node;
    if (r->mem_whole_node && mem < n->mem_mb)
        return 0;
    if (r->mem_per_node_mb && mem < r->mem_per_node_mb)
        return 0;
    if (r->mem_per_cpu_mb) {
        uint64_t fit = mem / arith_mul_sat(r->cpus_per_task, r->mem_per_cpu_mb);
        if (fit < tasks)
            tasks = (uint32_t)fit;
    }
    return tasks;
}

/* Position of node in the ascending eligible list, or -1. */
static long eligible_pos(const struct select_request *r, uint32_t node)
{
    size_t lo = 0, hi = r->neligible;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->eligible[mid] == node)
            return (long)mid;
        if (r->eligible[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Fills s with the usable eligible nodes: .node, .tasks = capacity, .mem_mb = preference key
 * (required, not avoided, weight), .cpus = index (the tie-break). Returns how many, and the
 * number of distinct required nodes in *nreq; -1 when a required node is not usable. */
static long collect(const struct attempt *a, struct select_node_alloc *s, size_t *nreq)
{
    const struct select_request *r = a->req;
    for (size_t i = 0; i < r->neligible; i++)
        s[i] = (struct select_node_alloc){.node = r->eligible[i], .mem_mb = KEY_NOT_REQUIRED};
    for (size_t i = 0; i < r->nrequired; i++) {
        long pos = eligible_pos(r, r->required[i]);
        if (pos < 0)
            return -1; /* -w names a node outside the partition or in -x */
        s[pos].mem_mb = 0;
    }
    size_t k = 0;
    *nreq = 0;
    for (size_t i = 0; i < r->neligible; i++) {
        uint32_t node = s[i].node;
        int required = s[i].mem_mb == 0;
        uint32_t cap = node < a->view->nnodes ? node_capacity(a, node) : 0;
        if (!cap) {
            if (required)
                return -1;
            continue;
        }
        uint64_t key = required ? 0 : KEY_NOT_REQUIRED;
        if (!required && a->avoid && a->avoid[node])
            key |= KEY_AVOIDED;
        key |= a->view->nodes[node].weight;
        s[k++] = (struct select_node_alloc){.node = node, .cpus = node, .mem_mb = key,
                                            .tasks = cap};
        *nreq += required;
    }
    return (long)k;
}

static int by_key(const void *pa, const void *pb)
{
    const struct select_node_alloc *a = pa, *b = pb;
    if (a->mem_mb != b->mem_mb)
        return a->mem_mb < b->mem_mb ? -1 : 1;
    return (a->cpus > b->cpus) - (a->cpus < b->cpus);
}

static int by_node(const void *pa, const void *pb)
{
    const struct select_node_alloc *a = pa, *b = pb;
    return (a->node > b->node) - (a->node < b->node);
}

/* qsort, unless s is in order already: candidates are collected in index order, which is
 * also the preference order when node weights are equal and nothing is required, and this
 * runs for every placement a planner tries. */
static void sort_if_needed(struct select_node_alloc *s, size_t n,
                           int (*cmp)(const void *, const void *))
{
    for (size_t i = 1; i < n; i++)
        if (cmp(&s[i - 1], &s[i]) > 0) {
            qsort(s, n, sizeof(*s), cmp);
            return;
        }
}

/* How many nodes the request would like: min_nodes (and every required node) when no
 * maximum is given, otherwise as many as the range allows and the tasks can fill (sbatch(1):
 * "as many nodes as possible within the range ... without delaying the initiation of the
 * job"; on the reference cluster -N1-3 -n2 gets 2 nodes, -N1-3 -n6 gets 3). */
static size_t wanted_nodes(const struct select_request *r, size_t nreq)
{
    size_t need = min_nodes_of(r) > nreq ? min_nodes_of(r) : nreq;
    if (!r->max_nodes)
        return need;
    size_t most = r->max_nodes < r->ntasks ? r->max_nodes : r->ntasks;
    return most > need ? most : need;
}

/* How many entries from the front of s hold ntasks tasks on at least min_nodes (and all
 * required) nodes, taking more, up to the wanted count, while there are some; 0 when all
 * of them together do not hold the request. */
static size_t take_prefix(const struct select_node_alloc *s, size_t n,
                          const struct select_request *r, size_t nreq)
{
    size_t need = min_nodes_of(r) > nreq ? min_nodes_of(r) : nreq;
    size_t want = wanted_nodes(r, nreq);
    uint64_t cap = 0;
    size_t k = 0;
    while (k < n && (k < want || cap < r->ntasks))
        cap += s[k++].tasks;
    return k >= need && cap >= r->ntasks ? k : 0;
}

/* Orders the n candidates of s so that the chosen ones come first; returns how many are
 * chosen, 0 when the request does not fit them. */
static size_t choose(struct select_node_alloc *s, size_t n, const struct select_request *r,
                     size_t nreq)
{
    sort_if_needed(s, n, by_key);
    size_t k = take_prefix(s, n, r, nreq);
    if (!k || !r->max_nodes || k <= r->max_nodes)
        return k;
    /* Preferred nodes are too small to stay within max_nodes: take the largest instead
     * (required ones still first, ties in preference order). */
    for (size_t i = 0; i < n; i++) {
        s[i].mem_mb = (s[i].mem_mb & ~(KEY_NOT_REQUIRED - 1)) | (UINT32_MAX - s[i].tasks);
        s[i].cpus = (uint32_t)i;
    }
    qsort(s, n, sizeof(*s), by_key);
    k = take_prefix(s, n, r, nreq);
    return k <= r->max_nodes ? k : 0;
}

/* Slurm's _cpus_to_use, in tasks: in the order the nodes were chosen, each takes what it
 * can of the tasks still unplaced, less one for each further node min_nodes still needs,
 * and at least one. --exclusive keeps whole nodes. The k capacities in .tasks become these
 * limits; their sum stays >= ntasks. */
static void trim_capacities(const struct select_request *r, struct select_node_alloc *s,
                            size_t k)
{
    if (r->exclusive)
        return;
    int64_t rest = r->ntasks;
    for (size_t i = 0; i < k; i++) {
        int64_t still = (int64_t)min_nodes_of(r) - (int64_t)i; /* nodes min_nodes needs */
        int64_t room = rest - (still > 1 ? still - 1 : 0);
        if (s[i].tasks > room)
            s[i].tasks = room > 1 ? (uint32_t)room : 1;
        rest -= s[i].tasks;
    }
}

static uint64_t level_sum(const struct select_node_alloc *s, size_t k, uint32_t level)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += s[i].tasks < level ? s[i].tasks : level;
    return sum;
}

/* Slurm's _compute_c_b_task_dist: tasks dealt round-robin over the nodes in index order,
 * a node dropping out once it reaches its limit (.tasks, sum >= ntasks >= k). Computed as
 * a water level instead of round by round: every node gets min(limit, L) for the highest L
 * that does not overshoot, and the first nodes still below their limit one more. */
static void deal_tasks(struct select_node_alloc *s, size_t k, uint32_t ntasks)
{
    uint32_t lo = 1, hi = 1;
    for (size_t i = 0; i < k; i++)
        hi = s[i].tasks > hi ? s[i].tasks : hi;
    while (lo < hi) { /* highest level with level_sum <= ntasks; level_sum(1) = k */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (level_sum(s, k, mid) <= ntasks)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint64_t rest = ntasks - level_sum(s, k, lo);
    for (size_t i = 0; i < k; i++) {
        uint32_t t = s[i].tasks < lo ? s[i].tasks : lo;
        if (rest && s[i].tasks > lo)
            t++, rest--;
        s[i].tasks = t;
    }
}

/* Lays the tasks out on the k chosen nodes of s (capacities in .tasks, in the order they
 * were chosen) and fills in what each node gives, in node index order. */
static void lay_out(const struct attempt *a, struct select_node_alloc *s, size_t k)
{
    const struct select_request *r = a->req;
    trim_capacities(r, s, k);
    sort_if_needed(s, k, by_node);
    deal_tasks(s, k, r->ntasks);
    for (size_t i = 0; i < k; i++) {
        const struct select_node *n = &a->view->nodes[s[i].node];
        s[i].cpus = r->exclusive ? n->cpus : arith_mul_u32_sat(s[i].tasks, r->cpus_per_task);
        if (r->exclusive || r->mem_whole_node)
            s[i].mem_mb = n->mem_mb;
        else if (r->mem_per_node_mb)
            s[i].mem_mb = r->mem_per_node_mb;
        else
            s[i].mem_mb = arith_mul_sat(arith_mul_sat(s[i].tasks, r->cpus_per_task), r->mem_per_cpu_mb);
    }
}

/* One request on the nodes as a sees them; 0 and out filled, or -1 (out->nnodes = 0). */
static int place_one(const struct attempt *a, struct select_alloc *out)
{
    out->nnodes = 0;
    if (request_impossible(a->req))
        return -1;
    size_t nreq;
    /* the candidates live in the view's scratch, or else in out->nodes, which then has
     * room for every eligible node */
    struct select_node_alloc *cand = a->view->scratch ? a->view->scratch : out->nodes;
    long n = collect(a, cand, &nreq);
    if (n <= 0)
        return -1;
    size_t k = choose(cand, (size_t)n, a->req, nreq);
    if (!k || k > select_alloc_room(a->req))
        return -1;
    lay_out(a, cand, k);
    if (cand != out->nodes)
        memcpy(out->nodes, cand, k * sizeof(*cand));
    out->nnodes = k;
    return 0;
}

static enum select_result place(const struct select_view *view,
                                const struct select_request *req, struct select_alloc *out)
{
    struct attempt a = {.view = view, .req = req};
    if (place_one(&a, out) == 0)
        return SELECT_OK;
    a.empty = 1;
    enum select_result res = place_one(&a, out) == 0 ? SELECT_BUSY : SELECT_NEVER;
    out->nnodes = 0;
    return res;
}

static enum select_result try_place(const struct select_view *view,
                                    const struct select_request *req, struct select_alloc *out)
{
    struct attempt a = {.view = view, .req = req};
    return place_one(&a, out) == 0 ? SELECT_OK : SELECT_BUSY;
}

/* ---- heterogeneous jobs ---- */

struct het {
    const struct select_view *view;
    const struct select_request *reqs;
    struct select_alloc *outs;
    size_t n;
    size_t *order;   /* search order: order[level] is a component */
    struct overlay ov;
    uint8_t *avoid;  /* n rows of nnodes: what the component at each level takes last */
    unsigned budget; /* placement attempts left */
};

/* Adds (sign 1) or removes (sign -1) what component c holds to what the others see. */
static void overlay_apply(struct het *h, size_t c, int sign)
{
    const struct select_alloc *o = &h->outs[c];
    for (size_t i = 0; i < o->nnodes; i++) {
        uint32_t node = o->nodes[i].node;
        h->ov.cpus[node] += (uint32_t)sign * o->nodes[i].cpus;
        h->ov.mem[node] += (uint64_t)(int64_t)sign * o->nodes[i].mem_mb;
        h->ov.jobs[node] += (uint32_t)sign;
        if (h->reqs[c].exclusive)
            h->ov.excl[node] += (uint32_t)sign;
    }
}

/* After component `failed` did not fit behind the component c at `level` (whose share is
 * no longer in the overlay): marks as "take last" for c the nodes c held that `failed`
 * would take with c out of the way. 0 when that adds nothing: c is not what stands in the
 * way, so the search must go back further. */
static int avoid_more(struct het *h, size_t level, size_t c, size_t failed)
{
    struct attempt a = {.view = h->view, .req = &h->reqs[failed], .ov = &h->ov};
    struct select_alloc *want = &h->outs[failed]; /* not placed: its buffer is free */
    if (place_one(&a, want) != 0)
        return 0;
    uint8_t *avoid = h->avoid + level * h->view->nnodes;
    const struct select_alloc *held = &h->outs[c];
    int added = 0;
    /* both lists are in ascending node order */
    for (size_t i = 0, j = 0; i < held->nnodes && j < want->nnodes;) {
        uint32_t x = held->nodes[i].node, y = want->nodes[j].node;
        if (x == y && !avoid[x])
            avoid[x] = 1, added = 1;
        i += x <= y;
        j += y <= x;
    }
    want->nnodes = 0;
    return added;
}

/* Places the components from `level` of the search order on, each seeing what the earlier
 * ones hold. When a later one does not fit, the component at this level is placed again,
 * taking last the nodes the failed one wants, until that brings nothing new; then the
 * failure goes up a level. Every placement spends budget. Returns HET_DONE, HET_GIVEUP or
 * the component that did not fit. */
static size_t het_search(struct het *h, size_t level)
{
    if (level == h->n)
        return HET_DONE;
    size_t c = h->order[level];
    memset(h->avoid + level * h->view->nnodes, 0, h->view->nnodes);
    for (;;) {
        if (!h->budget)
            return HET_GIVEUP;
        h->budget--;
        struct attempt a = {.view = h->view, .req = &h->reqs[c], .ov = &h->ov,
                            .avoid = h->avoid + level * h->view->nnodes};
        if (place_one(&a, &h->outs[c]) != 0)
            return c;
        overlay_apply(h, c, 1);
        size_t failed = het_search(h, level + 1);
        if (failed == HET_DONE)
            return HET_DONE;
        overlay_apply(h, c, -1);
        if (failed == HET_GIVEUP || !avoid_more(h, level, c, failed))
            return failed;
    }
}

/* Usable eligible nodes of a request now: the fewer, the more constrained. */
static size_t usable_count(const struct select_view *view, const struct select_request *r)
{
    struct attempt a = {.view = view, .req = r};
    size_t count = 0;
    for (size_t i = 0; i < r->neligible; i++)
        count += r->eligible[i] < view->nnodes && node_capacity(&a, r->eligible[i]) > 0;
    return count;
}

/* Search order: fewest usable nodes first, then most tasks, then component order. */
static void het_order(const struct select_view *view, const struct select_request *reqs,
                      size_t n, size_t *order, size_t *usable)
{
    for (size_t i = 0; i < n; i++)
        usable[i] = usable_count(view, &reqs[i]);
    for (size_t i = 0; i < n; i++) { /* insertion sort: few components, stable */
        size_t c = i, j = i;
        for (; j > 0; j--) {
            size_t p = order[j - 1];
            int before = usable[c] < usable[p] ||
                         (usable[c] == usable[p] && reqs[c].ntasks > reqs[p].ntasks);
            if (!before)
                break;
            order[j] = p;
        }
        order[j] = c;
    }
}

/* Each component alone: NEVER if one never fits, BUSY if one does not fit now. A het job
 * whose components each fit an empty cluster but never together (two --exclusive ones on a
 * one-node partition) is BUSY, not NEVER: the joint search is bounded, so its failing
 * proves nothing, and refusing a job that could run would be worse than keeping it. */
static enum select_result het_alone(const struct select_view *view,
                                    const struct select_request *reqs, size_t n,
                                    struct select_alloc *outs)
{
    enum select_result worst = SELECT_OK;
    for (size_t i = 0; i < n; i++) {
        enum select_result r = place(view, &reqs[i], &outs[i]);
        outs[i].nnodes = 0;
        if (r > worst)
            worst = r;
    }
    return worst;
}

static void het_free(struct het *h)
{
    free(h->order);
    free(h->ov.cpus);
    free(h->ov.mem);
    free(h->ov.jobs);
    free(h->ov.excl);
    free(h->avoid);
}

static enum select_result place_het(const struct select_view *view,
                                    const struct select_request *reqs, size_t n,
                                    struct select_alloc *outs)
{
    enum select_result res = het_alone(view, reqs, n, outs);
    if (res != SELECT_OK || n == 0)
        return res;
    size_t nn = view->nnodes ? view->nnodes : 1;
    struct het h = {.view = view, .reqs = reqs, .outs = outs, .n = n, .budget = HET_BUDGET};
    size_t *usable = calloc(n, sizeof(*usable));
    h.order = calloc(n, sizeof(*h.order));
    h.ov = (struct overlay){calloc(nn, sizeof(uint32_t)), calloc(nn, sizeof(uint64_t)),
                            calloc(nn, sizeof(uint32_t)), calloc(nn, sizeof(uint32_t))};
    h.avoid = calloc(n, nn);
    /* Out of memory: nothing is placed and the scheduler tries again later. */
    res = SELECT_BUSY;
    if (usable && h.order && h.ov.cpus && h.ov.mem && h.ov.jobs && h.ov.excl && h.avoid) {
        het_order(view, reqs, n, h.order, usable);
        if (het_search(&h, 0) == HET_DONE)
            res = SELECT_OK;
    }
    if (res != SELECT_OK)
        for (size_t i = 0; i < n; i++)
            outs[i].nnodes = 0;
    free(usable);
    het_free(&h);
    return res;
}

const struct select_ops tessera_plugin = {
    .header = {.type = SELECT_PLUGIN_TYPE, .name = "select/consumable",
               .abi_version = PLUGIN_ABI_VERSION},
    .place = place,
    .try_place = try_place,
    .place_het = place_het,
};
