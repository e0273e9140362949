/* sched/backfill: the default scheduler. A plan of CPU and memory use per node over time
 * (common/sched/plan.h) lets lower-priority jobs start in the gaps, never delaying the
 * reservations of the jobs ahead of them (docs/02-sched.md §4), and heterogeneous jobs are planned
 * with the two alternating modes of docs/02-sched.md §5.2. docs/backfill.md describes the rules.
 *
 * Two kinds of cycle share one state:
 * - A backfill cycle (SCHED_BACKFILL) rebuilds the plan: the running jobs until their
 *   expected ends, then the pending units in priority order. A unit that fits now starts
 *   (and holds its resources until its time limit); one that does not gets its earliest
 *   start within bf_window as its expected start and, while fewer than bf_reserve_depth
 *   units hold one, a reservation there. Units without a time limit are never
 *   backfilled: they start only when nothing ahead of them in their partitions waits.
 *   The reservations are published at the end of the cycle; a long cycle yields between
 *   units (sched_view.should_yield) and resumes where it stopped.
 * - An event-driven cycle (SCHED_EVENT) starts what fits now, in priority order. A unit
 *   behind one that waits in its partitions (docs/02-sched.md §3.2: "never jump the queue") starts
 *   only when the waiting units ahead of it all hold a reservation of the last backfill
 *   cycle and it delays none: it is checked against a plan of the running jobs and the
 *   reservations of the units ahead of it.
 *
 * Heterogeneous units (docs/02-sched.md §5.2 (a)-(f)): the first backfill cycle is mode 1 and every
 * backfill cycle flips the mode. Mode 1 plans the components one after the other in
 * offset order, each no earlier than the latest start recorded so far for the job,
 * records each start (now included) and holds each component's reservation from its own
 * start. Mode 2 plans every component at the floor, the latest recorded start, raising
 * the floor and planning again while a component cannot start by it; a job without
 * records is planned as in mode 1. Records are cleared after mode 2. A het unit starts
 * only when every component can start now; in mode 1 (and in event cycles) a joint
 * placement of all components at once (select's place_het) is tried first, so
 * overlapping partitions cannot starve it.
 *
 * A greedy unit (a policy file's strict_fifo: false) that cannot start waits without a
 * reservation and blocks nobody: the units after it start wherever they fit now.
 *
 * Standing activation verdicts (docs/05-filters.md §3, kept by the controller between two runs of a
 * unit's filter): a unit that blocks the queue does not start and neither does any unit
 * after it; a unit that keeps its resources holds them in the plan from now and the
 * others go on around it; a held unit waits and holds nothing; a failed one is failed.
 * When its filter may be asked again (sched_unit.retry) the unit is decided as usual,
 * except a failed one; a blocking one still blocks the units after it.
 */
#include "common/sched/plan.h"
#include "common/sched/sched.h"
#include "common/util/arith.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum bf_mode { BF_PARTIAL, BF_WHOLE, BF_OFF };

struct bf_params {
    enum bf_mode mode;
    uint32_t max_job_test; /* units examined per backfill cycle in partial mode */
    int64_t window;        /* seconds planned ahead */
    int64_t resolution;    /* seconds: start times are tried on this grid */
    uint32_t reserve_depth;
    uint32_t queue_depth;  /* units an event-driven cycle looks at (default_queue_depth) */
};

/* A reservation: what one component of a unit holds from start to end. */
struct resv_part {
    int64_t start, end;
    size_t n;
    uint32_t *nodes, *cpus;
    uint64_t *mem;
};

struct resv {
    uint32_t unit;
    size_t nparts;
    struct resv_part *parts;
};

struct resv_list {
    struct resv *v;
    size_t n, cap;
    struct hashmap *by_unit; /* unit id -> index + 1 */
};

/* Mode 1's recorded starts of one het unit's components. */
struct het_rec {
    size_t n;
    int64_t starts[];
};

/* The unit being decided and what placing its components needs. */
struct fit_ctx {
    struct bf_state *st;
    const struct sched_view *view;
    const struct select_request *req;
    struct select_alloc *out;
};

/* A plan with the partitions' blocking of one kind of cycle: a backfill cycle that
 * yields keeps its own while event-driven cycles and estimates run in between. */
struct pass {
    struct plan *plan;
    struct plan_node *caps;    /* the nodes the plan was made for */
    size_t ncaps;
    unsigned char *blocked;    /* per partition: BLOCK_* */
    size_t nblocked;
    int queue_blocked;         /* an activation verdict blocks every later unit */
};

struct bf_state {
    struct bf_params p;
    int next_mode2;            /* the next backfill cycle runs mode 2 */
    struct hashmap *records;   /* het leader id -> struct het_rec */
    struct pass bf, ev;
    struct pass *cur;          /* the pass of the call in progress */
    struct resv_list published; /* the last complete backfill cycle's reservations */
    struct resv_list building;
    struct hashmap *planned;   /* units the last complete backfill cycle examined */
    struct hashmap *planning;  /* units the cycle in progress examined */
    /* a backfill cycle in progress */
    int in_cycle, mode2;
    size_t cursor, examined;
    uint32_t reserved;
    /* scratch, within one call */
    struct select_node *syn;   /* the view's nodes with what the plan leaves free */
    struct select_node_alloc *scratch; /* the select plugin's, one entry per node */
    uint32_t *f_cpus;
    uint64_t *f_mem;
    size_t nsyn;
    uint32_t *h_nodes, *h_cpus;
    uint64_t *h_mem;
    size_t h_cap;
};

/* Why later units of a partition wait: nothing waits ahead of them; units wait ahead
 * that the last backfill cycle planned (a later unit may start if it delays none of
 * their reservations); a unit waits ahead that no plan knows (nothing may pass it). */
enum { BLOCK_NONE = 0, BLOCK_PLANNED = 1, BLOCK_HARD = 2 };

/* ------------------------------------------------------------------------------------ */
/* parameters */

static int param_num(const char *v, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

static int parse_item(struct bf_params *p, const char *key, const char *val, char *errbuf,
                      size_t errlen)
{
    int64_t x = 0;
    int bad = 0;
    if (!strcmp(key, "bf_mode")) {
        if (!strcmp(val, "partial"))
            p->mode = BF_PARTIAL;
        else if (!strcmp(val, "whole"))
            p->mode = BF_WHOLE;
        else if (!strcmp(val, "off"))
            p->mode = BF_OFF;
        else
            bad = 1;
    } else if (!strcmp(key, "bf_max_job_test")) {
        bad = param_num(val, 1, UINT32_MAX, &x) || !(p->max_job_test = (uint32_t)x);
    } else if (!strcmp(key, "bf_window")) {
        /* minutes; the simulator may plan further ahead than a daemon's configuration */
        bad = param_num(val, 1, INT64_MAX / 120, &x);
        p->window = x * 60;
    } else if (!strcmp(key, "bf_resolution")) {
        bad = param_num(val, 1, 86400, &x);
        p->resolution = x;
    } else if (!strcmp(key, "default_queue_depth")) {
        bad = param_num(val, 1, UINT32_MAX, &x);
        p->queue_depth = (uint32_t)x;
    } else if (!strcmp(key, "bf_reserve_depth")) {
        bad = param_num(val, 0, UINT32_MAX, &x);
        p->reserve_depth = (uint32_t)x;
    }
    if (bad && errbuf)
        snprintf(errbuf, errlen, "SchedulerParameters: bad value '%s' for %s", val, key);
    return bad ? TS_EINVAL : TS_OK;
}

static int parse_params(struct bf_params *p, const char *params, char *errbuf, size_t errlen)
{
    *p = (struct bf_params){.mode = BF_PARTIAL, .max_job_test = 1000, .window = 1440 * 60,
                            .resolution = 60, .reserve_depth = 1,
                            .queue_depth = 100};
    if (!params || !*params)
        return TS_OK;
    char *copy = strdup(params), *save = NULL;
    if (!copy)
        return TS_ENOMEM;
    int err = TS_OK;
    for (char *item = strtok_r(copy, ",", &save); item && !err;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            continue; /* flags belong to others */
        *eq = '\0';
        err = parse_item(p, item, eq + 1, errbuf, errlen);
    }
    free(copy);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* reservations */

static void resv_free(struct resv *r)
{
    for (size_t i = 0; i < r->nparts; i++) {
        free(r->parts[i].nodes);
        free(r->parts[i].cpus);
        free(r->parts[i].mem);
    }
    free(r->parts);
}

static void resv_list_clear(struct resv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        hashmap_del_u32(l->by_unit, l->v[i].unit);
        resv_free(&l->v[i]);
    }
    l->n = 0;
}

static void resv_list_fini(struct resv_list *l)
{
    resv_list_clear(l);
    free(l->v);
    hashmap_destroy(l->by_unit);
}

static const struct resv *resv_find(const struct resv_list *l, uint32_t unit)
{
    uintptr_t i = (uintptr_t)hashmap_get_u32(l->by_unit, unit);
    return i ? &l->v[i - 1] : NULL;
}

/* A copy of component placements allocs[0..n) held from starts[i] for durations[i]. */
static int resv_add(struct resv_list *l, uint32_t unit, const struct select_alloc *allocs,
                    size_t n, const int64_t *starts, const int64_t *ends)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct resv *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return TS_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    struct resv *r = &l->v[l->n];
    *r = (struct resv){.unit = unit, .nparts = n, .parts = calloc(n, sizeof(*r->parts))};
    int ok = r->parts != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        struct resv_part *p = &r->parts[i];
        size_t k = allocs[i].nnodes;
        *p = (struct resv_part){.start = starts[i], .end = ends[i], .n = k,
                                .nodes = malloc((k + 1) * sizeof(uint32_t)),
                                .cpus = malloc((k + 1) * sizeof(uint32_t)),
                                .mem = malloc((k + 1) * sizeof(uint64_t))};
        ok = p->nodes && p->cpus && p->mem;
        for (size_t j = 0; ok && j < k; j++) {
            p->nodes[j] = allocs[i].nodes[j].node;
            p->cpus[j] = allocs[i].nodes[j].cpus;
            p->mem[j] = allocs[i].nodes[j].mem_mb;
        }
    }
    if (!ok || hashmap_put_u32(l->by_unit, unit, (void *)(uintptr_t)(l->n + 1)) != TS_OK) {
        resv_free(r);
        return TS_ENOMEM;
    }
    l->n++;
    return TS_OK;
}

/* Holds a reservation's parts in the plan (a part that no longer fits the node table is
 * skipped: the nodes changed since). */
static void resv_hold(struct plan *plan, const struct resv *r)
{
    size_t nn = plan_node_count(plan);
    for (size_t i = 0; i < r->nparts; i++) {
        const struct resv_part *p = &r->parts[i];
        int fits = p->n > 0 && p->start < p->end;
        for (size_t j = 0; fits && j < p->n; j++)
            fits = p->nodes[j] < nn;
        plan_hold_id id;
        if (fits)
            plan_hold(plan, p->nodes, p->cpus, p->mem, p->n, p->start, p->end, &id);
    }
}

/* ------------------------------------------------------------------------------------ */
/* the plan of a cycle */

static int grow_scratch(struct bf_state *st, size_t n)
{
    if (n <= st->h_cap)
        return TS_OK;
    size_t cap = n + n / 2 + 16;
    uint32_t *a = realloc(st->h_nodes, cap * sizeof(*a)), *b = NULL;
    uint64_t *m = NULL;
    if (a)
        st->h_nodes = a;
    if (a && (b = realloc(st->h_cpus, cap * sizeof(*b))))
        st->h_cpus = b;
    if (b && (m = realloc(st->h_mem, cap * sizeof(*m))))
        st->h_mem = m;
    if (!m)
        return TS_ENOMEM;
    st->h_cap = cap;
    return TS_OK;
}

static int grow_nodes(struct bf_state *st, size_t n)
{
    if (n <= st->nsyn && st->syn)
        return TS_OK;
    free(st->syn);
    free(st->f_cpus);
    free(st->f_mem);
    free(st->scratch);
    st->syn = calloc(n + 1, sizeof(*st->syn));
    st->f_cpus = calloc(n + 1, sizeof(*st->f_cpus));
    st->f_mem = calloc(n + 1, sizeof(*st->f_mem));
    st->scratch = calloc(n + 1, sizeof(*st->scratch));
    int ok = st->syn && st->f_cpus && st->f_mem && st->scratch;
    st->nsyn = ok ? n : 0;
    return ok ? TS_OK : TS_ENOMEM;
}

/* Pass ps, made current, with an empty plan for the view's nodes (reused when the nodes
 * are the same as last time) and no partition blocked. */
static int pass_begin(struct bf_state *st, struct pass *ps, const struct sched_view *v)
{
    st->cur = ps;
    if (grow_nodes(st, v->nnodes))
        return TS_ENOMEM;
    if (ps->nblocked < v->npartitions + 1) {
        unsigned char *b = realloc(ps->blocked, v->npartitions + 1);
        if (!b)
            return TS_ENOMEM;
        ps->blocked = b;
        ps->nblocked = v->npartitions + 1;
    }
    memset(ps->blocked, 0, ps->nblocked);
    ps->queue_blocked = 0;
    int same = ps->plan && ps->ncaps == v->nnodes;
    for (size_t i = 0; same && i < v->nnodes; i++)
        same = ps->caps[i].cpus == v->nodes[i].cpus && ps->caps[i].mem_mb == v->nodes[i].mem_mb;
    if (same) {
        plan_reset(ps->plan);
        return TS_OK;
    }
    plan_destroy(ps->plan);
    ps->plan = NULL;
    free(ps->caps);
    ps->ncaps = 0;
    if (!(ps->caps = calloc(v->nnodes + 1, sizeof(*ps->caps))))
        return TS_ENOMEM;
    for (size_t i = 0; i < v->nnodes; i++)
        ps->caps[i] = (struct plan_node){.cpus = v->nodes[i].cpus, .mem_mb = v->nodes[i].mem_mb};
    int err = plan_create(ps->caps, v->nnodes, &ps->plan);
    if (!err)
        ps->ncaps = v->nnodes;
    return err;
}

static void pass_fini(struct pass *ps)
{
    plan_destroy(ps->plan);
    free(ps->caps);
    free(ps->blocked);
}

/* Holds one placement on [start, end). */
static int hold_alloc(struct bf_state *st, const struct select_alloc *a, int64_t start,
                      int64_t end, plan_hold_id *id)
{
    *id = PLAN_HOLD_NONE;
    if (!a->nnodes)
        return TS_OK;
    if (grow_scratch(st, a->nnodes))
        return TS_ENOMEM;
    for (size_t k = 0; k < a->nnodes; k++) {
        st->h_nodes[k] = a->nodes[k].node;
        st->h_cpus[k] = a->nodes[k].cpus;
        st->h_mem[k] = a->nodes[k].mem_mb;
    }
    return plan_hold(st->cur->plan, st->h_nodes, st->h_cpus, st->h_mem, a->nnodes, start, end, id);
}

/* The running jobs until their expected ends. */
static int hold_running(struct bf_state *st, const struct sched_view *v)
{
    for (size_t i = 0; i < v->nholds; i++) {
        const struct sched_hold *h = &v->holds[i];
        struct select_alloc a = {.nodes = (struct select_node_alloc *)h->nodes,
                                 .nnodes = h->nnodes};
        int64_t end = h->end == SCHED_NO_END ? PLAN_FOREVER : h->end;
        plan_hold_id id;
        int err = hold_alloc(st, &a, v->now, end > v->now ? end : v->now + 1, &id);
        if (err && err != TS_EINVAL)
            return err;
    }
    return TS_OK;
}

/* The select plugin's view of the nodes with what the plan leaves free on the eligible
 * ones throughout the run: a partly used node has "jobs" on it, so an --exclusive request
 * passes it by. */
static void synthesize(struct bf_state *st, const struct sched_view *v,
                       const struct select_request *req, const uint32_t *fc, const uint64_t *fm)
{
    for (size_t k = 0; k < req->neligible; k++) {
        uint32_t i = req->eligible[k];
        struct select_node *s = &st->syn[i];
        const struct select_node *n = &v->nodes[i];
        *s = *n;
        s->alloc_cpus = n->cpus - (fc[k] < n->cpus ? fc[k] : n->cpus);
        s->alloc_mem_mb = n->mem_mb - (fm[k] < n->mem_mb ? fm[k] : n->mem_mb);
        s->jobs = s->alloc_cpus || s->alloc_mem_mb;
        s->exclusive = 0;
    }
}

/* The most tasks node n could take of req with fc CPUs and fm MB free: a bound the select
 * plugin never beats (it counts the same way, and also checks features and -w). */
static uint64_t task_bound(const struct select_request *req, const struct select_node *n,
                           uint32_t fc, uint64_t fm)
{
    uint32_t cpt = req->cpus_per_task ? req->cpus_per_task : 1;
    uint32_t cpus = fc < n->cpus ? fc : n->cpus;
    uint64_t mem = fm < n->mem_mb ? fm : n->mem_mb;
    if (!n->available || (req->exclusive && (cpus < n->cpus || mem < n->mem_mb)) ||
        (req->mem_whole_node && mem < n->mem_mb) ||
        (req->mem_per_node_mb && mem < req->mem_per_node_mb))
        return 0;
    uint64_t t = cpus / cpt;
    if (req->ntasks_per_node && t > req->ntasks_per_node)
        t = req->ntasks_per_node;
    /* saturated, never 0: a wrapped product would divide by zero */
    uint64_t per_task = arith_mul_sat(req->mem_per_cpu_mb, cpt);
    if (req->mem_per_cpu_mb && mem / per_task < t)
        t = mem / per_task;
    return t;
}

/* Whether the free resources could hold req at all. Most candidate times of a busy
 * cluster fail this, and it costs one pass over the nodes where placing costs a sort. */
static int could_fit(const struct sched_view *v, const struct select_request *req,
                     const uint32_t *fc, const uint64_t *fm)
{
    uint64_t tasks = 0;
    uint32_t nodes = 0;
    for (size_t k = 0; k < req->neligible; k++) {
        uint64_t t = task_bound(req, &v->nodes[req->eligible[k]], fc[k], fm[k]);
        tasks += t;
        nodes += t > 0;
    }
    return tasks >= req->ntasks && nodes >= req->min_nodes;
}

static int fit(void *arg, int64_t start, const uint32_t *fc, const uint64_t *fm)
{
    (void)start;
    struct fit_ctx *f = arg;
    if (!could_fit(f->view, f->req, fc, fm))
        return 0;
    synthesize(f->st, f->view, f->req, fc, fm);
    const struct select_view sv = {.nodes = f->st->syn, .nnodes = f->st->nsyn,
                                   .scratch = f->st->scratch};
    return f->view->select->try_place(&sv, f->req, f->out) == SELECT_OK;
}

/* Whether req could not run even on empty nodes (the nodes changed since it was
 * accepted): asked only of a request the window has no room for, as the select plugin's
 * full answer costs a second placement. */
static int never_fits(struct bf_state *st, const struct sched_view *v,
                      const struct select_request *req, struct select_alloc *out)
{
    const struct select_view sv = {.nodes = v->nodes, .nnodes = v->nnodes,
                                   .scratch = st->scratch};
    return v->select->place(&sv, req, out) == SELECT_NEVER;
}

/* The duration a component is planned for: its limit, or (none) the whole window. */
static int64_t duration_of(const struct bf_state *st, int64_t limit)
{
    return limit > 0 ? limit : st->p.window > 0 ? st->p.window : 1;
}

static int64_t end_of(int64_t start, int64_t limit)
{
    return limit > 0 ? start + limit : PLAN_FOREVER;
}

/* The earliest start of one component at or after from within the window, placed into
 * out. TS_OK, TS_ENOENT (not within the window), TS_EINVAL (never). */
static int earliest(struct bf_state *st, const struct sched_view *v,
                    const struct select_request *req, int64_t limit, int64_t from,
                    struct select_alloc *out, int64_t *start)
{
    if (!req->neligible)
        return TS_EINVAL;
    int64_t horizon = v->now + st->p.window - from;
    if (horizon < 0)
        return TS_ENOENT;
    struct fit_ctx f = {.st = st, .view = v, .req = req, .out = out};
    int err = plan_earliest(st->cur->plan, from, duration_of(st, limit), horizon, st->p.resolution,
                            req->eligible, req->neligible, fit, &f, start);
    return err == TS_ENOENT && never_fits(st, v, req, out) ? TS_EINVAL : err;
}

/* Whether every component can start now together: one joint placement on what the plan
 * leaves free over the longest of their runs. */
static int het_fits_now(struct bf_state *st, const struct sched_view *v,
                        const struct sched_unit *u, struct select_alloc *allocs, int *never)
{
    int64_t longest = 1;
    for (size_t c = 0; c < u->ncomponents; c++)
        if (duration_of(st, u->time_limits[c]) > longest)
            longest = duration_of(st, u->time_limits[c]);
    for (size_t c = 0; c < u->ncomponents; c++) {
        const struct select_request *req = &u->reqs[c];
        plan_free_during(st->cur->plan, v->now, v->now + longest, req->eligible, req->neligible,
                         st->f_cpus, st->f_mem);
        synthesize(st, v, req, st->f_cpus, st->f_mem);
    }
    const struct select_view sv = {.nodes = st->syn, .nnodes = st->nsyn,
                                   .scratch = st->scratch};
    enum select_result r = v->select->place_het(&sv, u->reqs, u->ncomponents, allocs);
    *never = r == SELECT_NEVER;
    return r == SELECT_OK;
}

/* ------------------------------------------------------------------------------------ */
/* deciding one unit */

/* The outcome of planning a unit: starts now, waits until start (0: not within the
 * window), or never runs. */
struct outcome {
    enum { OUT_START, OUT_WAIT, OUT_NEVER } kind;
    int64_t start;
};

static int blocked_by(const struct bf_state *st, const struct sched_unit *u)
{
    int worst = BLOCK_NONE;
    for (size_t c = 0; c < u->ncomponents; c++)
        if (st->cur->blocked[u->partitions[c]] > worst)
            worst = st->cur->blocked[u->partitions[c]];
    return worst;
}

static int has_limits(const struct sched_unit *u)
{
    for (size_t c = 0; c < u->ncomponents; c++)
        if (u->time_limits[c] <= 0)
            return 0;
    return 1;
}

/* Holds the unit's components from starts[c] (their placements in allocs), as ids[c]. */
static int hold_unit(struct bf_state *st, const struct sched_unit *u,
                     const struct select_alloc *allocs, const int64_t *starts, plan_hold_id *ids)
{
    for (size_t c = 0; c < u->ncomponents; c++) {
        int err = hold_alloc(st, &allocs[c], starts[c], end_of(starts[c], u->time_limits[c]),
                             &ids[c]);
        if (err)
            return err;
    }
    return TS_OK;
}

static void release_unit(struct bf_state *st, size_t n, plan_hold_id *ids)
{
    for (size_t c = 0; c < n; c++)
        if (ids[c] != PLAN_HOLD_NONE) {
            plan_release(st->cur->plan, ids[c]);
            ids[c] = PLAN_HOLD_NONE;
        }
}

/* Mode 1: the components one after the other, each no earlier than the latest start so
 * far, held from their own starts; starts[] are what mode 1 records. */
static int plan_sequential(struct bf_state *st, const struct sched_view *v,
                           const struct sched_unit *u, struct select_alloc *allocs,
                           int64_t *starts, plan_hold_id *ids, struct outcome *out)
{
    int64_t latest = v->now;
    for (size_t c = 0; c < u->ncomponents; c++) {
        int err = earliest(st, v, &u->reqs[c], u->time_limits[c], latest, &allocs[c], &starts[c]);
        if (!err)
            err = hold_alloc(st, &allocs[c], starts[c], end_of(starts[c], u->time_limits[c]),
                             &ids[c]);
        if (err) {
            release_unit(st, c, ids);
            *out = (struct outcome){err == TS_EINVAL ? OUT_NEVER : OUT_WAIT, 0};
            return err == TS_EINVAL || err == TS_ENOENT ? TS_OK : err;
        }
        if (starts[c] > latest)
            latest = starts[c];
    }
    *out = (struct outcome){latest == v->now ? OUT_START : OUT_WAIT, latest};
    return TS_OK;
}

/* Mode 2: every component at the floor; a component that cannot start by it raises the
 * floor and the unit is planned again. */
static int plan_at_floor(struct bf_state *st, const struct sched_view *v,
                         const struct sched_unit *u, int64_t floor, struct select_alloc *allocs,
                         int64_t *starts, plan_hold_id *ids, struct outcome *out)
{
    for (size_t c = 0; c < u->ncomponents;) {
        int64_t t;
        int err = earliest(st, v, &u->reqs[c], u->time_limits[c], floor, &allocs[c], &t);
        if (err) {
            release_unit(st, c, ids);
            *out = (struct outcome){err == TS_EINVAL ? OUT_NEVER : OUT_WAIT, 0};
            return err == TS_EINVAL || err == TS_ENOENT ? TS_OK : err;
        }
        if (t > floor) {
            release_unit(st, c, ids);
            floor = t;
            c = 0;
            continue;
        }
        starts[c] = floor;
        if ((err = hold_alloc(st, &allocs[c], floor, end_of(floor, u->time_limits[c]), &ids[c])))
            return err;
        c++;
    }
    *out = (struct outcome){floor == v->now ? OUT_START : OUT_WAIT, floor};
    return TS_OK;
}

static int record_starts(struct bf_state *st, uint32_t id, const int64_t *starts, size_t n)
{
    struct het_rec *r = malloc(sizeof(*r) + n * sizeof(r->starts[0]));
    if (!r)
        return TS_ENOMEM;
    r->n = n;
    memcpy(r->starts, starts, n * sizeof(*starts));
    free(hashmap_get_u32(st->records, id));
    if (hashmap_put_u32(st->records, id, r) != TS_OK) {
        hashmap_del_u32(st->records, id);
        free(r);
        return TS_ENOMEM;
    }
    return TS_OK;
}

static void clear_records(struct bf_state *st)
{
    size_t cursor = 0;
    const void *key;
    size_t klen;
    void *val;
    while (hashmap_next(st->records, &cursor, &key, &klen, &val))
        free(val);
    hashmap_destroy(st->records);
    st->records = hashmap_create();
}

/* A unit in a backfill cycle: planned, held from its start (kept as a reservation only
 * when reserve is set and it waits). */
static int plan_unit(struct bf_state *st, const struct sched_view *v, const struct sched_unit *u,
                     struct select_alloc *allocs, int record, struct outcome *out,
                     int64_t *starts, plan_hold_id *ids)
{
    size_t n = u->ncomponents;
    for (size_t c = 0; c < n; c++)
        ids[c] = PLAN_HOLD_NONE;
    if (n == 1)
        return plan_sequential(st, v, u, allocs, starts, ids, out);
    const struct het_rec *rec = hashmap_get_u32(st->records, u->id);
    if (st->mode2 && rec && rec->n == n) {
        int64_t floor = v->now;
        for (size_t c = 0; c < n; c++)
            if (rec->starts[c] > floor)
                floor = rec->starts[c];
        return plan_at_floor(st, v, u, floor, allocs, starts, ids, out);
    }
    int never = 0;
    if (het_fits_now(st, v, u, allocs, &never)) {
        for (size_t c = 0; c < n; c++)
            starts[c] = v->now;
        *out = (struct outcome){OUT_START, v->now};
        int err = hold_unit(st, u, allocs, starts, ids);
        return !err && record ? record_starts(st, u->id, starts, n) : err;
    }
    if (never) {
        *out = (struct outcome){OUT_NEVER, 0};
        return TS_OK;
    }
    int err = plan_sequential(st, v, u, allocs, starts, ids, out);
    if (!err && record && out->kind != OUT_NEVER && out->start)
        err = record_starts(st, u->id, starts, n);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* cycles */

static void block(struct bf_state *st, const struct sched_unit *u, int how)
{
    for (size_t c = 0; c < u->ncomponents; c++)
        if (st->cur->blocked[u->partitions[c]] < how)
            st->cur->blocked[u->partitions[c]] = (unsigned char)how;
}

static enum sched_verdict waiting_verdict(const struct bf_state *st, const struct sched_unit *u)
{
    return blocked_by(st, u) != BLOCK_NONE ? SCHED_PRIORITY : SCHED_RESOURCES;
}

/* Whether u starts now on what the plan leaves free, all components at once: START (its
 * placements in d->allocs, held in the plan), NEVER or RESOURCES. */
static void try_now(struct bf_state *st, const struct sched_view *v, const struct sched_unit *u,
                    struct sched_decision *d)
{
    int never = 0, fits = 0;
    if (u->ncomponents > 1) {
        fits = het_fits_now(st, v, u, d->allocs, &never);
    } else {
        const struct select_request *req = &u->reqs[0];
        struct fit_ctx f = {.st = st, .view = v, .req = req, .out = d->allocs};
        int64_t t;
        fits = req->neligible &&
               plan_earliest(st->cur->plan, v->now, duration_of(st, u->time_limits[0]), 0, 1,
                             req->eligible, req->neligible, fit, &f, &t) == TS_OK;
        never = !req->neligible || (!fits && never_fits(st, v, req, d->allocs));
    }
    if (fits) {
        int64_t starts[u->ncomponents];
        plan_hold_id ids[u->ncomponents];
        for (size_t c = 0; c < u->ncomponents; c++)
            starts[c] = v->now;
        hold_unit(st, u, d->allocs, starts, ids);
        d->verdict = SCHED_START;
        return;
    }
    d->verdict = never ? SCHED_NEVER : SCHED_RESOURCES;
}

/* A unit under a standing activation verdict, or after one that blocks the queue: 1
 * when that decides it (d->verdict set), 0 to decide as usual. */
static int standing_verdict(struct bf_state *st, const struct sched_view *v,
                            const struct sched_unit *u, struct sched_decision *d)
{
    if (st->cur->queue_blocked) {
        d->verdict = SCHED_PRIORITY;
        return 1;
    }
    if (u->activation == SCHED_ACT_FAIL) {
        d->verdict = SCHED_FAIL;
        return 1;
    }
    if (u->retry && u->activation == SCHED_ACT_BLOCK) {
        /* asked again, it is decided as usual, but nothing after it starts until its
         * filter lets it pass (docs/05-filters.md §3.9) */
        st->cur->queue_blocked = 1;
        return 0;
    }
    if (u->retry || u->activation == SCHED_ACT_NONE)
        return 0;
    if (u->activation == SCHED_ACT_HOLD) {
        d->verdict = SCHED_HOLD;
        return 1;
    }
    if (u->activation == SCHED_ACT_BLOCK) {
        st->cur->queue_blocked = 1;
        d->verdict = SCHED_BLOCK;
        return 1;
    }
    /* the kept resources are held from now for its run, like a running job's */
    for (size_t c = 0; u->kept && c < u->ncomponents; c++) {
        plan_hold_id id;
        hold_alloc(st, &u->kept[c], v->now, end_of(v->now, u->time_limits[c]), &id);
    }
    d->verdict = SCHED_RESERVE;
    block(st, u, BLOCK_PLANNED);
    return 1;
}

/* One unit of a backfill cycle. */
static int backfill_unit(struct bf_state *st, const struct sched_view *v,
                         const struct sched_unit *u, struct sched_decision *d)
{
    int64_t starts[u->ncomponents], ends[u->ncomponents];
    plan_hold_id ids[u->ncomponents];
    int blocked = blocked_by(st, u);
    struct outcome out;
    int err = plan_unit(st, v, u, d->allocs, !st->mode2, &out, starts, ids);
    if (err)
        return err;
    if (out.kind == OUT_NEVER) {
        d->verdict = SCHED_NEVER;
        return TS_OK;
    }
    if (out.kind == OUT_START) {
        if (blocked == BLOCK_NONE || has_limits(u)) {
            d->verdict = SCHED_START;
            return TS_OK;
        }
        /* a unit without a limit is never backfilled: it starts only at its turn, and
         * when that is cannot be planned */
        release_unit(st, u->ncomponents, ids);
        d->verdict = SCHED_PRIORITY;
        block(st, u, BLOCK_PLANNED);
        return TS_OK;
    }
    d->verdict = waiting_verdict(st, u);
    d->expected_start = out.start;
    if (u->greedy) { /* it waits without holding anything or anybody back */
        release_unit(st, u->ncomponents, ids);
        return TS_OK;
    }
    int reserve = out.start && st->reserved < st->p.reserve_depth;
    if (reserve) {
        for (size_t c = 0; c < u->ncomponents; c++)
            ends[c] = end_of(starts[c], u->time_limits[c]);
        err = resv_add(&st->building, u->id, d->allocs, u->ncomponents, starts, ends);
        st->reserved++;
        d->reserved = 1;
    } else {
        release_unit(st, u->ncomponents, ids);
    }
    block(st, u, BLOCK_PLANNED);
    return err;
}

/* bf_mode=off: nothing planned ahead; what fits now starts while nothing waits ahead. */
static void unit_without_backfill(struct bf_state *st, const struct sched_view *v,
                                  const struct sched_unit *u, struct sched_decision *d)
{
    if (blocked_by(st, u) != BLOCK_NONE) {
        d->verdict = SCHED_PRIORITY;
        return;
    }
    try_now(st, v, u, d);
    if (d->verdict == SCHED_RESOURCES && !u->greedy)
        block(st, u, BLOCK_HARD);
}

static int backfill_begin(struct bf_state *st, const struct sched_view *v)
{
    int err = pass_begin(st, &st->bf, v);
    if (!err)
        err = hold_running(st, v);
    if (err)
        return err;
    resv_list_clear(&st->building);
    struct hashmap *fresh = hashmap_create();
    if (!fresh)
        return TS_ENOMEM;
    hashmap_destroy(st->planning);
    st->planning = fresh;
    st->in_cycle = 1;
    st->mode2 = st->next_mode2;
    st->cursor = st->examined = 0;
    st->reserved = 0;
    return TS_OK;
}

static void backfill_end(struct bf_state *st)
{
    st->in_cycle = 0;
    if (st->p.mode == BF_OFF)
        return;
    if (st->mode2)
        clear_records(st);
    st->next_mode2 = !st->mode2;
    struct resv_list tmp = st->published;
    st->published = st->building;
    st->building = tmp;
    resv_list_clear(&st->building);
    struct hashmap *h = st->planned;
    st->planned = st->planning;
    st->planning = h;
}

static enum sched_status backfill_cycle(struct bf_state *st, struct sched_view *v,
                                        struct sched_decision *decisions)
{
    if ((!st->in_cycle || !v->resume) && backfill_begin(st, v) != TS_OK)
        return SCHED_DONE; /* out of memory: undecided, nothing starts */
    st->cur = &st->bf;
    size_t first = st->cursor;
    for (size_t i = st->cursor; i < v->nunits; i++) {
        if (i > first && v->should_yield && v->should_yield(v->yield_arg)) {
            st->cursor = i;
            return SCHED_MORE;
        }
        const struct sched_unit *u = &v->units[i];
        struct sched_decision *d = &decisions[i];
        if (standing_verdict(st, v, u, d)) {
            continue;
        } else if (st->p.mode == BF_OFF) {
            unit_without_backfill(st, v, u, d);
        } else if (st->p.mode == BF_PARTIAL && st->examined >= st->p.max_job_test) {
            /* beyond the look-ahead nothing is planned, but a unit at its turn starts */
            unit_without_backfill(st, v, u, d);
        } else {
            st->examined++;
            if (backfill_unit(st, v, u, d) != TS_OK ||
                hashmap_put_u32(st->planning, u->id, st) != TS_OK)
                d->verdict = waiting_verdict(st, u);
        }
    }
    backfill_end(st);
    return SCHED_DONE;
}

/* An event-driven cycle: the running jobs, then in priority order each unit against what
 * is held so far (what started, and the reservations of the units ahead of it). A unit
 * behind a waiting one starts only if that one holds a reservation it cannot delay. Only
 * the first default_queue_depth units are looked at, unless the view asks for the whole
 * queue: the rest stay undecided (as they were) until a timed or backfill cycle. */
static enum sched_status event_cycle(struct bf_state *st, struct sched_view *v,
                                     struct sched_decision *decisions)
{
    if (pass_begin(st, &st->ev, v) || hold_running(st, v))
        return SCHED_DONE;
    size_t depth = v->full_queue ? v->nunits : st->p.queue_depth;
    for (size_t i = 0; i < v->nunits && i < depth; i++) {
        const struct sched_unit *u = &v->units[i];
        struct sched_decision *d = &decisions[i];
        if (standing_verdict(st, v, u, d))
            continue;
        int blocked = blocked_by(st, u);
        if (blocked == BLOCK_HARD || (blocked == BLOCK_PLANNED && !has_limits(u))) {
            d->verdict = SCHED_PRIORITY;
        } else {
            try_now(st, v, u, d);
            if (d->verdict == SCHED_RESOURCES && blocked != BLOCK_NONE)
                d->verdict = SCHED_PRIORITY;
        }
        if (d->verdict == SCHED_START || d->verdict == SCHED_NEVER || u->greedy)
            continue;
        const struct resv *own = resv_find(&st->published, u->id);
        if (own)
            resv_hold(st->cur->plan, own);
        block(st, u, hashmap_get_u32(st->planned, u->id) ? BLOCK_PLANNED : BLOCK_HARD);
    }
    return SCHED_DONE;
}

/* ------------------------------------------------------------------------------------ */
/* the plugin */

static int create(const char *params, void **state, char *errbuf, size_t errlen)
{
    struct bf_state *st = calloc(1, sizeof(*st));
    if (!st)
        return TS_ENOMEM;
    int err = parse_params(&st->p, params, errbuf, errlen);
    if (err)
        goto error;
    st->records = hashmap_create();
    st->published.by_unit = hashmap_create();
    st->building.by_unit = hashmap_create();
    st->planned = hashmap_create();
    st->planning = hashmap_create();
    if (!st->records || !st->published.by_unit || !st->building.by_unit || !st->planned ||
        !st->planning) {
        err = TS_ENOMEM;
        goto error;
    }
    st->cur = &st->ev;
    *state = st;
    return TS_OK;
error:
    hashmap_destroy(st->planned);
    hashmap_destroy(st->planning);
    hashmap_destroy(st->records);
    hashmap_destroy(st->published.by_unit);
    hashmap_destroy(st->building.by_unit);
    free(st);
    return err;
}

static void destroy(void *state)
{
    struct bf_state *st = state;
    if (!st)
        return;
    clear_records(st);
    hashmap_destroy(st->records);
    hashmap_destroy(st->planned);
    hashmap_destroy(st->planning);
    resv_list_fini(&st->published);
    resv_list_fini(&st->building);
    pass_fini(&st->bf);
    pass_fini(&st->ev);
    free(st->syn);
    free(st->scratch);
    free(st->f_cpus);
    free(st->f_mem);
    free(st->h_nodes);
    free(st->h_cpus);
    free(st->h_mem);
    free(st);
}

static enum sched_status schedule(void *state, struct sched_view *view,
                                  struct sched_decision *decisions)
{
    struct bf_state *st = state;
    if (view->kind == SCHED_BACKFILL)
        return backfill_cycle(st, view, decisions);
    return event_cycle(st, view, decisions);
}

/* As the next backfill cycle would plan it in mode 1, behind every reservation held. */
static int estimate(void *state, struct sched_view *view, const struct sched_unit *u,
                    int64_t *start, struct select_alloc *allocs)
{
    struct bf_state *st = state;
    int err = pass_begin(st, &st->ev, view);
    if (!err)
        err = hold_running(st, view);
    for (size_t i = 0; !err && i < st->published.n; i++)
        resv_hold(st->cur->plan, &st->published.v[i]);
    if (err)
        return err;
    int64_t starts[u->ncomponents];
    plan_hold_id ids[u->ncomponents];
    struct outcome out;
    int saved = st->mode2;
    st->mode2 = 0;
    err = plan_unit(st, view, u, allocs, 0, &out, starts, ids);
    st->mode2 = saved;
    if (err)
        return err;
    if (out.kind == OUT_NEVER)
        return TS_EINVAL;
    if (out.kind == OUT_WAIT && !out.start)
        return TS_ENOENT;
    *start = out.kind == OUT_START ? view->now : out.start;
    return TS_OK;
}

const struct sched_ops tessera_plugin = {
    .header = {.type = SCHED_PLUGIN_TYPE, .name = "sched/backfill",
               .abi_version = PLUGIN_ABI_VERSION},
    .create = create,
    .destroy = destroy,
    .schedule = schedule,
    .estimate = estimate,
};
