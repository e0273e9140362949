/* tessera-bench-backfill: how long one cycle of the real sched/backfill plugin takes on a
 * large cluster, placing through the real select/consumable plugin, both loaded with
 * plugin_load() from the build's plugin folder as the controller loads them.
 *
 *   tessera-bench-backfill [--nodes N] [--jobs J] [--cpus C] [--mem-mb M] [--params S]
 *                          [--seed S] [--time-limit SEC] [--plugin-dir D] [--tsv LABEL]
 *                          [--diagnose]
 *
 * The view is synthetic but shaped like a busy production cluster, and the same for the
 * same seed: nodes of C CPUs and M MB, a few down; most of them held by running jobs of
 * one CPU to many whole nodes whose expected ends spread over the next minutes to days;
 * and a queue of J pending units in priority order: mostly small jobs, some multi-node,
 * a few wide ones, some with memory requests, some in a small debug partition, a few
 * heterogeneous jobs of 2 or 3 components and a few without a time limit.
 *
 * It times create(), one SCHED_BACKFILL cycle, one SCHED_EVENT cycle behind that cycle's
 * reservations (as the controller runs them between backfill cycles) and a second
 * backfill cycle on the same view (the plan's memory reused; het jobs in docs/02-sched.md §5.2's
 * mode 2), and prints for each: wall time, units examined, started, reserved, with an expected
 * start, calls into the select plugin (counted by a shim around it) and the peak RSS.
 * Decisions are not applied between cycles: each sees the same running jobs and queue.
 * --diagnose also breaks the select calls down by kind of unit. A benchmark prints
 * figures; it checks nothing.
 *
 * Cycles run in one call without yielding (should_yield NULL). --time-limit installs a
 * should_yield that stays 0 until the limit has passed and then cuts a backfill cycle
 * short, so that a configuration that would run for hours reports its rate instead (an
 * event-driven cycle never yields, so it always runs to the end). --tsv prints one
 * tab-separated row per cycle, starting with LABEL, and the other lines after "# ", for
 * contrib/bench/backfill.sh.
 */
#include "common/sched/sched.h"
#include "common/sched/select.h"
#include "common/util/errors.h"
#include "common/util/plugin.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifndef BENCH_PLUGIN_DIR
#define BENCH_PLUGIN_DIR "build/lib"
#endif

#define NPARTS 2  /* 0: batch, every node; 1: debug, the first 5% of the nodes */
#define MAXCOMP 3 /* components of a het unit */
#define NOW ((int64_t)1700000000)

/* What a pending unit is, for --diagnose's breakdown. */
enum unit_kind { K_SMALL, K_DEBUG, K_MULTI, K_WIDE, K_HET, NKINDS };
static const char *const kind_names[NKINDS] = {"small", "debug", "multi-node", "wide", "het"};

/* ------------------------------------------------------------------------------------ */
/* a deterministic generator (splitmix64): the same seed gives the same view everywhere */

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]; the modulo bias is far below what a benchmark notices. */
static uint32_t rng_range(struct rng *r, uint32_t lo, uint32_t hi)
{
    return hi <= lo ? lo : lo + (uint32_t)(rng_next(r) % ((uint64_t)hi - lo + 1));
}

static int rng_pct(struct rng *r, uint32_t pct)
{
    return rng_range(r, 0, 99) < pct;
}

static uint32_t rng_pick(struct rng *r, const uint32_t *v, size_t n)
{
    return v[rng_range(r, 0, (uint32_t)n - 1)];
}

#define PICK(r, ...)                                                                     \
    rng_pick((r), (const uint32_t[]){__VA_ARGS__},                                       \
             sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

/* ------------------------------------------------------------------------------------ */
/* the view */

struct world {
    uint32_t cpus;
    uint64_t mem_mb;
    /* pristine: as the running jobs hold the nodes; nodes: the plugin's scratch copy */
    struct select_node *pristine, *nodes;
    size_t nnodes;
    char *names;
    uint32_t *part_nodes[NPARTS];
    size_t part_len[NPARTS];
    /* running components; hold i's nodes start at held[held_off[i]] */
    struct sched_hold *holds;
    size_t *held_off;
    size_t nholds, cap_holds;
    struct select_node_alloc *held;
    size_t nheld, cap_held;
    /* the queue: components of every unit back to back */
    struct sched_unit *units;
    struct sched_decision *decisions;
    size_t nunits;
    struct select_request *reqs;
    uint32_t *parts;
    int64_t *limits;
    struct select_alloc *allocs;
    unsigned char *kinds; /* enum unit_kind of each component's unit */
    size_t ncomps;
    /* Placement room, one buffer per component position, shared by every unit: the
     * plugin fills a unit's placements and reads them back before it moves on, and this
     * benchmark only counts decisions. (The controller gives every component its own,
     * which is more than a large queue fits in: see controller_gb.) */
    struct select_node_alloc *slots[MAXCOMP];
    size_t nhet, nunlimited;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "tessera-bench-backfill: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n, size_t size)
{
    p = realloc(p, (n ? n : 1) * size);
    if (!p) {
        fprintf(stderr, "tessera-bench-backfill: out of memory\n");
        exit(1);
    }
    return p;
}

/* Nodes n0..n{N-1}; about 1% down (they count for SELECT_NEVER but take no work). */
static void make_nodes(struct world *w, struct rng *r)
{
    size_t n = w->nnodes;
    w->pristine = xcalloc(n, sizeof(*w->pristine));
    w->nodes = xcalloc(n, sizeof(*w->nodes));
    w->names = xcalloc(n, 12);
    for (size_t i = 0; i < n; i++) {
        char *name = w->names + 12 * i;
        snprintf(name, 12, "n%u", (unsigned)i % 100000000u); /* no wider than 12 */
        w->pristine[i] = (struct select_node){.name = name, .cpus = w->cpus,
                                              .mem_mb = w->mem_mb, .features = "",
                                              .weight = 1, .available = !rng_pct(r, 1)};
    }
    size_t debug = n / 20 ? n / 20 : 1;
    for (int p = 0; p < NPARTS; p++) {
        w->part_len[p] = p == 0 ? n : debug;
        w->part_nodes[p] = xcalloc(w->part_len[p], sizeof(uint32_t));
        for (size_t i = 0; i < w->part_len[p]; i++)
            w->part_nodes[p][i] = (uint32_t)i;
    }
}

/* How long a running job has left: its limit less the time it has run already (uniform),
 * and now and then no limit at all. */
static int64_t running_end(struct rng *r)
{
    if (rng_pct(r, 1) && rng_pct(r, 50))
        return SCHED_NO_END;
    uint32_t limit = PICK(r, 3600, 4 * 3600, 12 * 3600, 86400, 86400, 2 * 86400, 3 * 86400);
    return NOW + rng_range(r, 60, limit);
}

static void hold_begin(struct world *w, int64_t end)
{
    if (w->nholds == w->cap_holds) {
        w->cap_holds = w->cap_holds ? 2 * w->cap_holds : 1024;
        w->holds = xrealloc(w->holds, w->cap_holds, sizeof(*w->holds));
        w->held_off = xrealloc(w->held_off, w->cap_holds, sizeof(*w->held_off));
    }
    w->holds[w->nholds] = (struct sched_hold){.end = end};
    w->held_off[w->nholds++] = w->nheld;
}

/* The running component begun last also holds cpus and mem of node i. */
static void hold_node(struct world *w, uint32_t i, uint32_t cpus, uint64_t mem, int excl)
{
    if (w->nheld == w->cap_held) {
        w->cap_held = w->cap_held ? 2 * w->cap_held : 4096;
        w->held = xrealloc(w->held, w->cap_held, sizeof(*w->held));
    }
    w->held[w->nheld++] = (struct select_node_alloc){.node = i, .cpus = cpus, .mem_mb = mem,
                                                     .tasks = cpus};
    w->holds[w->nholds - 1].nnodes++;
    struct select_node *n = &w->pristine[i];
    n->alloc_cpus += cpus;
    n->alloc_mem_mb += mem;
    n->jobs++;
    n->exclusive |= excl;
}

/* A running job on k whole nodes from node i on (down ones skipped), --exclusive now and
 * then; returns how far it reached. */
static size_t running_wide(struct world *w, struct rng *r, size_t i)
{
    uint32_t k = PICK(r, 2, 2, 4, 4, 8, 16, 32, 64);
    int excl = rng_pct(r, 40);
    uint64_t mem = excl ? w->mem_mb : rng_pct(r, 30) ? 0 : w->mem_mb * rng_range(r, 50, 100) / 100;
    hold_begin(w, running_end(r));
    for (; i < w->nnodes && k; i++)
        if (w->pristine[i].available && !w->pristine[i].jobs) {
            hold_node(w, (uint32_t)i, w->cpus, mem, excl);
            k--;
        }
    return i;
}

/* Small running jobs on node i until it is full (most nodes) or nearly so. */
static void running_packed(struct world *w, struct rng *r, uint32_t i)
{
    uint32_t target = rng_pct(r, 80) ? w->cpus : w->cpus - rng_range(r, 1, w->cpus / 2);
    struct select_node *n = &w->pristine[i];
    while (n->alloc_cpus < target) {
        uint32_t cpus = PICK(r, 1, 1, 1, 1, 2, 2, 4, 4, 8, 16, 32);
        if (cpus > target - n->alloc_cpus)
            cpus = target - n->alloc_cpus;
        uint64_t mem = (uint64_t)cpus * PICK(r, 0, 1000, 2000, 3000, 4000);
        if (mem > n->mem_mb - n->alloc_mem_mb)
            mem = n->mem_mb - n->alloc_mem_mb;
        hold_begin(w, running_end(r));
        hold_node(w, i, cpus, mem, 0);
    }
}

/* About half of the nodes in multi-node jobs, the rest packed with small ones. */
static void make_running(struct world *w, struct rng *r)
{
    for (size_t i = 0; i < w->nnodes;) {
        if (!w->pristine[i].available || w->pristine[i].jobs)
            i++;
        else if (rng_pct(r, 6))
            i = running_wide(w, r, i);
        else
            running_packed(w, r, (uint32_t)i++);
    }
    for (size_t h = 0; h < w->nholds; h++)
        w->holds[h].nodes = &w->held[w->held_off[h]];
}

/* A time limit as users give them: minutes to a day, and now and then none (such a
 * unit is never backfilled). */
static int64_t pending_limit(struct world *w, struct rng *r, int debug)
{
    if (!debug && rng_pct(r, 1) && rng_pct(r, 50)) {
        w->nunlimited++;
        return 0;
    }
    if (debug)
        return PICK(r, 300, 600, 1800, 3600);
    return PICK(r, 600, 1800, 3600, 3600, 7200, 14400, 28800, 43200, 86400, 86400);
}

/* --mem-per-cpu for some, --mem for fewer, nothing (untracked) for the rest. */
static void add_memory(struct rng *r, struct select_request *q)
{
    uint32_t x = rng_range(r, 0, 99);
    if (x < 40)
        q->mem_per_cpu_mb = PICK(r, 1000, 2000, 3000, 4000);
    else if (x < 60)
        q->mem_per_node_mb = PICK(r, 4000, 16000, 32000, 64000, 120000);
}

static struct select_request base_request(const struct world *w, int part)
{
    return (struct select_request){.eligible = w->part_nodes[part],
                                   .neligible = w->part_len[part], .min_nodes = 1,
                                   .ntasks = 1, .cpus_per_task = 1};
}

/* 1 to C CPUs, on one node (-N1) or wherever they fit. */
static struct select_request small_request(const struct world *w, struct rng *r, int part)
{
    struct select_request q = base_request(w, part);
    q.ntasks = rng_pct(r, 20) ? rng_range(r, 1, w->cpus) : PICK(r, 1, 1, 1, 2, 4, 8, 16, 32);
    if (q.ntasks > w->cpus)
        q.ntasks = w->cpus;
    if (rng_pct(r, 10) && q.ntasks * 4 <= w->cpus)
        q.cpus_per_task = 4;
    q.max_nodes = rng_pct(r, 50);
    add_memory(r, &q);
    return q;
}

/* -N k of whole nodes (-N sets the maximum too), or -n 64..512 anywhere. */
static struct select_request multi_request(const struct world *w, struct rng *r, uint32_t k)
{
    struct select_request q = base_request(w, 0);
    if (rng_pct(r, 30)) {
        q.ntasks = rng_range(r, 64, 512);
    } else {
        q.min_nodes = q.max_nodes = k;
        q.ntasks_per_node = w->cpus;
        q.ntasks = k * w->cpus;
    }
    add_memory(r, &q);
    return q;
}

/* A wide job: 5% to 20% of the cluster in whole nodes, --exclusive half the time. */
static struct select_request wide_request(const struct world *w, struct rng *r)
{
    uint32_t n = (uint32_t)w->nnodes;
    uint32_t k = rng_range(r, n / 20 > 2 ? n / 20 : 2, n / 5 > 2 ? n / 5 : 2);
    struct select_request q = multi_request(w, r, k);
    q.min_nodes = q.max_nodes = k;
    q.ntasks_per_node = w->cpus;
    q.ntasks = k * w->cpus;
    q.exclusive = rng_pct(r, 50);
    return q;
}

/* A het job: a small leader with memory, a block of whole nodes, sometimes a third part
 * of loose tasks. */
static size_t het_requests(const struct world *w, struct rng *r, struct select_request *q)
{
    q[0] = base_request(w, 0);
    q[0].cpus_per_task = 4;
    q[0].max_nodes = 1;
    q[0].mem_per_node_mb = 16000;
    q[1] = multi_request(w, r, rng_range(r, 2, 8));
    if (!rng_pct(r, 50))
        return 2;
    q[2] = base_request(w, 0);
    q[2].ntasks = rng_range(r, 16, 64);
    q[2].mem_per_cpu_mb = 2000;
    return 3;
}

/* Pending unit u (priority falling with u) and its components. */
static void make_unit(struct world *w, struct rng *r, size_t u)
{
    struct select_request q[MAXCOMP];
    size_t n = 1;
    int part = 0;
    enum unit_kind kind = K_SMALL;
    uint32_t x = rng_range(r, 0, 999);
    if (x < 30)
        n = het_requests(w, r, q), w->nhet++, kind = K_HET;
    else if (x < 130)
        part = 1, q[0] = small_request(w, r, 1), kind = K_DEBUG;
    else if (x < 140)
        q[0] = wide_request(w, r), kind = K_WIDE;
    else if (x < 360)
        q[0] = multi_request(w, r, PICK(r, 2, 2, 4, 4, 8, 16)), kind = K_MULTI;
    else
        q[0] = small_request(w, r, 0);
    int64_t limit = pending_limit(w, r, part == 1);
    size_t k = w->ncomps;
    for (size_t c = 0; c < n; c++) {
        w->reqs[k + c] = q[c];
        w->parts[k + c] = (uint32_t)part;
        w->limits[k + c] = limit;
        w->allocs[k + c].nodes = w->slots[c];
        w->kinds[k + c] = (unsigned char)kind;
    }
    w->units[u] = (struct sched_unit){.id = (uint32_t)(1000 + u),
                                      .priority = (uint32_t)(UINT32_MAX - u),
                                      .ncomponents = n, .reqs = &w->reqs[k],
                                      .partitions = &w->parts[k], .time_limits = &w->limits[k]};
    w->ncomps += n;
}

static void make_queue(struct world *w, struct rng *r, size_t nunits)
{
    w->nunits = nunits;
    w->units = xcalloc(nunits, sizeof(*w->units));
    w->decisions = xcalloc(nunits, sizeof(*w->decisions));
    w->reqs = xcalloc(nunits * MAXCOMP, sizeof(*w->reqs));
    w->parts = xcalloc(nunits * MAXCOMP, sizeof(*w->parts));
    w->limits = xcalloc(nunits * MAXCOMP, sizeof(*w->limits));
    w->allocs = xcalloc(nunits * MAXCOMP, sizeof(*w->allocs));
    w->kinds = xcalloc(nunits * MAXCOMP, sizeof(*w->kinds));
    /* every request's eligible nodes are at most all of them, min_nodes no more */
    for (int c = 0; c < MAXCOMP; c++)
        w->slots[c] = xcalloc(w->nnodes + 1, sizeof(*w->slots[c]));
    for (size_t u = 0; u < nunits; u++)
        make_unit(w, r, u);
}

static void world_free(struct world *w)
{
    free(w->pristine);
    free(w->nodes);
    free(w->names);
    for (int p = 0; p < NPARTS; p++)
        free(w->part_nodes[p]);
    free(w->holds);
    free(w->held_off);
    free(w->held);
    free(w->units);
    free(w->decisions);
    free(w->reqs);
    free(w->parts);
    free(w->limits);
    free(w->allocs);
    free(w->kinds);
    for (int c = 0; c < MAXCOMP; c++)
        free(w->slots[c]);
}

/* What ctld/sched_view.c allocates for this queue: each partition's node list once (the
 * benchmark's components take whole partitions), and per component room for the nodes
 * its placement can use (the select plugin chooses in the scheduler's scratch). */
static double controller_gb(const struct world *w)
{
    double bytes = (double)NPARTS * (double)(w->nnodes + 1) * sizeof(uint32_t);
    for (size_t k = 0; k < w->ncomps; k++)
        bytes += (double)(select_alloc_room(&w->reqs[k]) + 1) * sizeof(struct select_node_alloc);
    return bytes / 1e9;
}

/* The view in two lines, each after prefix (tab-separated output marks them as notes). */
static void describe(const struct world *w, uint64_t seed, const char *prefix)
{
    uint64_t cpus = 0, busy = 0, mem = 0, used = 0;
    size_t down = 0;
    for (size_t i = 0; i < w->nnodes; i++) {
        const struct select_node *n = &w->pristine[i];
        down += !n->available;
        cpus += n->cpus;
        busy += n->alloc_cpus;
        mem += n->mem_mb;
        used += n->alloc_mem_mb;
    }
    printf("%sview: %zu nodes of %u CPUs and %llu MB (%zu down), %d partitions; %zu running "
           "components holding %.1f%% of the CPUs and %.1f%% of the memory; %zu pending units "
           "(%zu components, %zu het, %zu without a time limit); seed %llu\n",
           prefix, w->nnodes, w->cpus, (unsigned long long)w->mem_mb, down, NPARTS, w->nholds,
           100.0 * (double)busy / (double)cpus, 100.0 * (double)used / (double)mem, w->nunits,
           w->ncomps, w->nhet, w->nunlimited, (unsigned long long)seed);
    printf("%sa controller snapshot of this queue allocates %.3f GB for node lists and "
           "placement room; this benchmark shares the room\n",
           prefix, controller_gb(w));
}

/* ------------------------------------------------------------------------------------ */
/* cycles */

struct opts {
    size_t nodes, jobs;
    uint32_t cpus;
    uint64_t mem_mb;
    const char *params;
    uint64_t seed;
    double time_limit; /* seconds per cycle; 0: none */
    const char *plugin_dir;
    const char *tsv;   /* label of tab-separated rows, NULL: a readable table */
    int diagnose;      /* break the select calls down after each cycle */
};

struct bench {
    const struct opts *o;
    struct world w;
    struct plugin *select_pl, *sched_pl;
    const struct select_ops *select;
    const struct sched_ops *sched;
    void *state;
};

/* What a cycle decided and what it cost. */
struct figures {
    double ms;
    size_t examined; /* SIZE_MAX: not known from outside */
    size_t started, reserved, expected, never;
    uint64_t placements; /* select calls: the plugin's unit of work */
    long peak_rss_kb;
    size_t cut_after; /* units decided when --time-limit cut it; 0: not cut */
};

static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The select plugin as the scheduler sees it: the real one, with its calls counted. The
 * select interface passes no argument to hang a counter on, hence the file's statics. */
static const struct select_ops *real_select;
static uint64_t placement_calls;

/* --diagnose: the select calls by kind of unit and answer, their time, and how many BUSY
 * answers a necessary condition as cheap as a sum would have given without a placement:
 * fewer tasks fit the usable nodes' free CPUs, or fewer such nodes than min_nodes. */
struct diag_row {
    uint64_t calls, ok, busy, never, bound_busy;
    double ms;
};

static struct diag {
    const struct world *w;
    struct diag_row rows[NKINDS];
} *diag;

/* Whether that condition alone says BUSY; it ignores --mem-per-cpu and features, so it
 * errs only towards "try the placement". */
static int bound_rules_out(const struct select_view *v, const struct select_request *q)
{
    uint64_t tasks = 0;
    uint32_t nodes = 0;
    for (size_t k = 0; k < q->neligible; k++) {
        const struct select_node *n = &v->nodes[q->eligible[k]];
        if (!n->available || n->exclusive || (q->exclusive && n->jobs))
            continue;
        uint32_t t = (n->cpus - (n->alloc_cpus < n->cpus ? n->alloc_cpus : n->cpus)) /
                     q->cpus_per_task;
        if (q->ntasks_per_node && t > q->ntasks_per_node)
            t = q->ntasks_per_node;
        uint64_t mem = n->alloc_mem_mb < n->mem_mb ? n->mem_mb - n->alloc_mem_mb : 0;
        if (!t || (q->mem_per_node_mb && mem < q->mem_per_node_mb))
            continue;
        tasks += t;
        nodes++;
    }
    return tasks < q->ntasks || nodes < q->min_nodes;
}

static void diag_count(const struct select_view *v, const struct select_request *q,
                       enum select_result r, double ms)
{
    struct diag_row *row = &diag->rows[diag->w->kinds[q - diag->w->reqs]];
    row->calls++;
    row->ms += ms;
    row->ok += r == SELECT_OK;
    row->never += r == SELECT_NEVER;
    if (r == SELECT_BUSY) {
        row->busy++;
        row->bound_busy += bound_rules_out(v, q);
    }
}

static enum select_result counted_place(const struct select_view *view,
                                        const struct select_request *req,
                                        struct select_alloc *out)
{
    placement_calls++;
    if (!diag)
        return real_select->place(view, req, out);
    double t0 = mono_ms();
    enum select_result r = real_select->place(view, req, out);
    diag_count(view, req, r, mono_ms() - t0);
    return r;
}

static enum select_result counted_place_het(const struct select_view *view,
                                            const struct select_request *reqs, size_t n,
                                            struct select_alloc *outs)
{
    placement_calls++;
    if (!diag)
        return real_select->place_het(view, reqs, n, outs);
    double t0 = mono_ms();
    enum select_result r = real_select->place_het(view, reqs, n, outs);
    struct diag_row *row = &diag->rows[K_HET];
    row->calls++;
    row->ms += mono_ms() - t0;
    row->ok += r == SELECT_OK;
    row->busy += r == SELECT_BUSY;
    row->never += r == SELECT_NEVER;
    return r;
}

static struct select_ops counting_select;

static long peak_rss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;
}

/* The --time-limit watch: asked between units, it counts them and says "stop" only once
 * the limit has passed. */
struct watch {
    double deadline_ms;
    size_t calls;
};

static int watch_over(void *arg)
{
    struct watch *wt = arg;
    wt->calls++;
    return mono_ms() >= wt->deadline_ms;
}

/* The last value of key in SchedulerParameters, or NULL. */
static const char *param_value(const char *params, const char *key, char *buf, size_t len)
{
    const char *found = NULL;
    size_t klen = strlen(key);
    for (const char *p = params; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > klen && !strncmp(p, key, klen) && p[klen] == '=' && n - klen - 1 < len) {
            memcpy(buf, p + klen + 1, n - klen - 1);
            buf[n - klen - 1] = '\0';
            found = buf;
        }
        p = end ? end + 1 : NULL;
    }
    return found;
}

/* Units a backfill cycle examines: the plugin does not say, but its rule is simple
 * (partial mode: the first bf_max_job_test, default 1000; otherwise every unit). */
static size_t backfill_examined(const char *params, size_t nunits)
{
    char mode[16], max[32];
    const char *m = param_value(params, "bf_mode", mode, sizeof(mode));
    if (m && strcmp(m, "partial"))
        return nunits;
    const char *x = param_value(params, "bf_max_job_test", max, sizeof(max));
    size_t limit = x ? strtoull(x, NULL, 10) : 1000;
    return limit < nunits ? limit : nunits;
}

/* Fresh decisions and the nodes as the running jobs hold them (the plugin scribbles on
 * its copy). */
static void reset_cycle(struct world *w)
{
    memcpy(w->nodes, w->pristine, w->nnodes * sizeof(*w->nodes));
    for (size_t u = 0; u < w->nunits; u++)
        w->decisions[u] = (struct sched_decision){
            .allocs = &w->allocs[w->units[u].reqs - w->reqs]};
    for (size_t k = 0; k < w->ncomps; k++)
        w->allocs[k].nnodes = 0;
}

static void count_decisions(const struct world *w, struct figures *f)
{
    for (size_t u = 0; u < w->nunits; u++) {
        const struct sched_decision *d = &w->decisions[u];
        f->started += d->verdict == SCHED_START;
        f->never += d->verdict == SCHED_NEVER;
        f->reserved += d->reserved != 0;
        f->expected += d->verdict != SCHED_START && d->expected_start != 0;
    }
}

static void run_cycle(struct bench *b, enum sched_kind kind, struct figures *f)
{
    struct world *w = &b->w;
    reset_cycle(w);
    struct sched_view v = {.kind = kind, .now = NOW, .nodes = w->nodes, .nnodes = w->nnodes,
                           .npartitions = NPARTS, .holds = w->holds, .nholds = w->nholds,
                           .units = w->units, .nunits = w->nunits, .select = b->select};
    struct watch wt = {.deadline_ms = mono_ms() + b->o->time_limit * 1e3};
    if (b->o->time_limit > 0) {
        v.should_yield = watch_over;
        v.yield_arg = &wt;
    }
    *f = (struct figures){0};
    placement_calls = 0;
    double t0 = mono_ms();
    enum sched_status st = b->sched->schedule(b->state, &v, w->decisions);
    f->ms = mono_ms() - t0;
    f->placements = placement_calls;
    f->peak_rss_kb = peak_rss_kb();
    if (st == SCHED_MORE)
        f->cut_after = wt.calls; /* asked before each unit after the first */
    count_decisions(w, f);
    f->examined = kind == SCHED_EVENT ? SIZE_MAX : backfill_examined(b->o->params, w->nunits);
    if (f->cut_after && f->examined != SIZE_MAX && f->examined > f->cut_after)
        f->examined = f->cut_after;
}

static void print_header(const struct opts *o)
{
    if (o->tsv)
        return;
    printf("%-12s %11s %9s %8s %9s %9s %6s %11s %9s\n", "cycle", "wall ms", "examined",
           "started", "reserved", "expected", "never", "placements", "peak RSS");
}

static void print_row(const struct opts *o, const char *name, const struct figures *f)
{
    char examined[32] = "-", note[96] = "";
    if (f->examined != SIZE_MAX)
        snprintf(examined, sizeof(examined), "%zu", f->examined);
    if (f->cut_after)
        snprintf(note, sizeof(note), "cut at the time limit after %zu units (%.1f units/s)",
                 f->cut_after, (double)f->cut_after / (f->ms / 1e3));
    if (o->tsv) {
        printf("%s\t%s\t%.1f\t%s\t%zu\t%zu\t%zu\t%zu\t%llu\t%ld\t%s\n", o->tsv, name,
               f->ms, examined, f->started, f->reserved, f->expected, f->never,
               (unsigned long long)f->placements, f->peak_rss_kb / 1024, note);
        return;
    }
    printf("%-12s %11.1f %9s %8zu %9zu %9zu %6zu %11llu %6ld MB %s\n", name, f->ms, examined,
           f->started, f->reserved, f->expected, f->never, (unsigned long long)f->placements,
           f->peak_rss_kb / 1024, note);
}

/* --diagnose's lines after a cycle: the select calls by kind of unit. */
static void print_diag(const struct bench *b, size_t examined)
{
    const struct world *w = &b->w;
    size_t units[NKINDS] = {0};
    for (size_t u = 0; u < w->nunits && u < examined; u++)
        units[w->kinds[w->units[u].reqs - w->reqs]]++;
    const char *p = b->o->tsv ? "# " : "";
    printf("%s  %-11s %8s %10s %9s %9s %7s %14s %10s\n", p, "unit kind", "units", "calls",
           "OK", "BUSY", "NEVER", "BUSY by a sum", "select ms");
    for (int k = 0; k < NKINDS; k++) {
        const struct diag_row *r = &diag->rows[k];
        printf("%s  %-11s %8zu %10llu %9llu %9llu %7llu %14llu %10.1f\n", p, kind_names[k],
               units[k], (unsigned long long)r->calls, (unsigned long long)r->ok,
               (unsigned long long)r->busy, (unsigned long long)r->never,
               (unsigned long long)r->bound_busy, r->ms);
    }
}

static void print_skipped(const struct opts *o, const char *name)
{
    if (o->tsv)
        printf("%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\tskipped: a cycle before hit the time limit\n",
               o->tsv, name);
    else
        printf("%-12s skipped: a cycle before hit the time limit\n", name);
}

/* create(), a backfill cycle, an event-driven one and a second backfill cycle; a cycle
 * cut short ends the run, since the ones after it would be no faster. */
static int run_all(struct bench *b)
{
    char err[256] = "";
    double t0 = mono_ms();
    int rc = b->sched->create(b->o->params, &b->state, err, sizeof(err));
    if (rc != TS_OK) {
        fprintf(stderr, "tessera-bench-backfill: create: %s\n", *err ? err : ts_strerror(rc));
        return 1;
    }
    printf("%screate: %.3f ms\n", b->o->tsv ? "# " : "", mono_ms() - t0);
    print_header(b->o);
    static const struct {
        const char *name;
        enum sched_kind kind;
    } cycles[] = {{"backfill 1", SCHED_BACKFILL}, {"event", SCHED_EVENT},
                  {"backfill 2", SCHED_BACKFILL}};
    int cut = 0;
    for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++) {
        struct figures f;
        if (cut) {
            print_skipped(b->o, cycles[i].name);
            continue;
        }
        if (diag)
            memset(diag->rows, 0, sizeof(diag->rows));
        run_cycle(b, cycles[i].kind, &f);
        print_row(b->o, cycles[i].name, &f);
        if (diag)
            print_diag(b, f.examined);
        fflush(stdout);
        cut = f.cut_after != 0;
    }
    b->sched->destroy(b->state);
    return 0;
}

static int load_plugins(struct bench *b)
{
    char err[256] = "";
    int rc = plugin_load(b->o->plugin_dir, "select/consumable", SELECT_PLUGIN_TYPE,
                         PLUGIN_ABI_VERSION, NULL, &b->select_pl, err, sizeof(err));
    if (rc == TS_OK)
        rc = plugin_load(b->o->plugin_dir, "sched/backfill", SCHED_PLUGIN_TYPE,
                         PLUGIN_ABI_VERSION, NULL, &b->sched_pl, err, sizeof(err));
    if (rc != TS_OK) {
        fprintf(stderr, "tessera-bench-backfill: %s\n", *err ? err : ts_strerror(rc));
        return 1;
    }
    real_select = plugin_ops(b->select_pl);
    counting_select = *real_select;
    counting_select.place = counted_place;
    counting_select.place_het = counted_place_het;
    b->select = &counting_select;
    b->sched = plugin_ops(b->sched_pl);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the command */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tessera-bench-backfill [--nodes N] [--jobs J] [--cpus C] [--mem-mb M]\n"
            "                              [--params SCHEDULER_PARAMETERS] [--seed S]\n"
            "                              [--time-limit SECONDS] [--plugin-dir DIR]\n"
            "                              [--tsv LABEL] [--diagnose]\n");
}

static int parse_size(const char *s, size_t min, size_t *out)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end || x < min)
        return -1;
    *out = (size_t)x;
    return 0;
}

static int parse_one(struct opts *o, int ch, const char *arg)
{
    size_t x = 0;
    switch (ch) {
    case 'n': return parse_size(arg, 1, &o->nodes);
    case 'j': return parse_size(arg, 1, &o->jobs);
    case 'c': return parse_size(arg, 1, &x) || x > 4096 ? -1 : (o->cpus = (uint32_t)x, 0);
    case 'm': return parse_size(arg, 1, &x) ? -1 : (o->mem_mb = x, 0);
    case 's': return parse_size(arg, 0, &x) ? -1 : (o->seed = x, 0);
    case 't': return parse_size(arg, 0, &x) ? -1 : (o->time_limit = (double)x, 0);
    case 'p': o->params = arg; return 0;
    case 'd': o->plugin_dir = arg; return 0;
    case 'T': o->tsv = arg; return 0;
    case 'D': o->diagnose = 1; return 0;
    default: return -1;
    }
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, NULL, 'n'},  {"jobs", required_argument, NULL, 'j'},
        {"cpus", required_argument, NULL, 'c'},   {"mem-mb", required_argument, NULL, 'm'},
        {"params", required_argument, NULL, 'p'}, {"seed", required_argument, NULL, 's'},
        {"time-limit", required_argument, NULL, 't'},
        {"plugin-dir", required_argument, NULL, 'd'},
        {"tsv", required_argument, NULL, 'T'},    {"diagnose", no_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *env = getenv("TESSERA_PLUGIN_DIR");
    *o = (struct opts){.nodes = 1000, .jobs = 10000, .cpus = 32, .mem_mb = 131072,
                       .params = "", .seed = 1,
                       .plugin_dir = env && *env ? env : BENCH_PLUGIN_DIR};
    int ch;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (ch == 'h') {
            usage(stdout);
            exit(0);
        }
        if (parse_one(o, ch, optarg)) {
            usage(stderr);
            return -1;
        }
    }
    return optind == argc ? 0 : (usage(stderr), -1);
}

static void build_view(struct bench *b)
{
    struct world *w = &b->w;
    struct rng r = {.s = b->o->seed};
    double t0 = mono_ms();
    w->nnodes = b->o->nodes;
    w->cpus = b->o->cpus;
    w->mem_mb = b->o->mem_mb;
    make_nodes(w, &r);
    make_running(w, &r);
    make_queue(w, &r, b->o->jobs);
    const char *prefix = b->o->tsv ? "# " : "";
    describe(w, b->o->seed, prefix);
    printf("%sview built in %.0f ms; RSS %ld MB before the plugin runs; plugins from %s; "
           "SchedulerParameters \"%s\"\n",
           prefix, mono_ms() - t0, peak_rss_kb() / 1024, b->o->plugin_dir, b->o->params);
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse_opts(argc, argv, &o))
        return 2;
    struct bench b = {.o = &o};
    if (load_plugins(&b))
        return 1;
    build_view(&b);
    static struct diag d;
    if (o.diagnose) {
        d.w = &b.w;
        diag = &d;
    }
    int rc = run_all(&b);
    world_free(&b.w);
    plugin_unload(b.sched_pl);
    plugin_unload(b.select_pl);
    return rc;
}
