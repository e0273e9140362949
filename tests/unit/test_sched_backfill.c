/* sched/backfill's decisions on hand-made views, with the real select/consumable plugin:
 * EASY and conservative reservations, jobs without limits, the look-ahead, event-driven
 * cycles behind reservations, yields, estimates, and docs/02-sched.md §5.3's two-mode fixture cycle
 * by cycle. */
#include "common/sched/sched.h"
#include "common/sched/select.h"
#include "common/util/errors.h"
#include "common/util/plugin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const struct sched_ops tessera_plugin; /* the static twin of sched/backfill */

static struct plugin *select_plugin;
static const struct select_ops *sel;

#define MAXN 16
#define MAXU 8
#define MAXC 3

struct world {
    struct select_node nodes[MAXN];
    size_t nnodes;
    uint32_t all[MAXN];
    struct sched_hold holds[MAXN];
    struct select_node_alloc held[MAXN][MAXN];
    size_t nholds;
    /* the queue */
    struct select_request reqs[MAXU][MAXC];
    uint32_t parts[MAXU][MAXC];
    int64_t limits[MAXU][MAXC];
    struct sched_unit units[MAXU];
    struct sched_decision decisions[MAXU];
    struct select_alloc allocs[MAXU][MAXC];
    struct select_node_alloc slots[MAXU][MAXC][MAXN];
    size_t nunits;
    void *st;
};

static const char *const names[MAXN] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7",
                                        "n8", "n9", "n10", "n11", "n12", "n13", "n14", "n15"};

static void world_init(struct world *w, size_t nnodes, uint32_t cpus, const char *params)
{
    memset(w, 0, sizeof(*w));
    w->nnodes = nnodes;
    for (size_t i = 0; i < nnodes; i++) {
        w->nodes[i] = (struct select_node){.name = names[i], .cpus = cpus, .mem_mb = 1000,
                                           .features = "", .available = 1};
        w->all[i] = (uint32_t)i;
    }
    char err[128] = "";
    assert_int_equal(tessera_plugin.create(params, &w->st, err, sizeof(err)), TS_OK);
}

static void world_fini(struct world *w)
{
    tessera_plugin.destroy(w->st);
}

/* A running job holding cpus on each of nodes[0..n) until end. */
static void running(struct world *w, const uint32_t *nodes, size_t n, uint32_t cpus, int64_t end)
{
    struct sched_hold *h = &w->holds[w->nholds];
    for (size_t i = 0; i < n; i++) {
        w->held[w->nholds][i] = (struct select_node_alloc){.node = nodes[i], .cpus = cpus,
                                                           .tasks = cpus};
        w->nodes[nodes[i]].alloc_cpus += cpus;
        w->nodes[nodes[i]].jobs++;
    }
    *h = (struct sched_hold){.end = end, .nodes = w->held[w->nholds], .nnodes = n};
    w->nholds++;
}

static void clear_running(struct world *w)
{
    w->nholds = 0;
    for (size_t i = 0; i < w->nnodes; i++)
        w->nodes[i].alloc_cpus = w->nodes[i].jobs = 0;
}

static struct select_request cpus_on(struct world *w, const uint32_t *eligible, size_t n,
                                     uint32_t ntasks)
{
    (void)w;
    return (struct select_request){.eligible = eligible, .neligible = n, .min_nodes = 1,
                                   .ntasks = ntasks, .cpus_per_task = 1};
}

/* A unit of ncomp components (limits in seconds, <= 0 none), all in partition 0. */
static size_t unit(struct world *w, uint32_t id, size_t ncomp, const struct select_request *r,
                   const int64_t *limits)
{
    size_t u = w->nunits++;
    for (size_t c = 0; c < ncomp; c++) {
        w->reqs[u][c] = r[c];
        w->limits[u][c] = limits[c];
        w->allocs[u][c].nodes = w->slots[u][c];
    }
    w->units[u] = (struct sched_unit){.id = id, .priority = (uint32_t)(1000 - u),
                                      .ncomponents = ncomp, .reqs = w->reqs[u],
                                      .partitions = w->parts[u], .time_limits = w->limits[u]};
    return u;
}

static size_t plain(struct world *w, uint32_t id, uint32_t ntasks, int64_t limit)
{
    struct select_request r = cpus_on(w, w->all, w->nnodes, ntasks);
    return unit(w, id, 1, &r, &limit);
}

static struct sched_view view_of(struct world *w, enum sched_kind kind, int64_t now)
{
    return (struct sched_view){.kind = kind, .now = now, .nodes = w->nodes,
                               .nnodes = w->nnodes, .npartitions = 2, .holds = w->holds,
                               .nholds = w->nholds, .units = w->units, .nunits = w->nunits,
                               .select = sel};
}

static void cycle(struct world *w, enum sched_kind kind, int64_t now)
{
    for (size_t u = 0; u < w->nunits; u++) {
        w->decisions[u] = (struct sched_decision){.allocs = w->allocs[u]};
        for (size_t c = 0; c < w->units[u].ncomponents; c++)
            w->allocs[u][c].nnodes = 0;
    }
    struct sched_view v = view_of(w, kind, now);
    assert_int_equal(tessera_plugin.schedule(w->st, &v, w->decisions), SCHED_DONE);
}

/* When a probe job of ntasks CPUs on nodes for limit seconds would start. */
static int64_t probe(struct world *w, int64_t now, const uint32_t *nodes, size_t n,
                     uint32_t ntasks, int64_t limit)
{
    struct select_request r = cpus_on(w, nodes, n, ntasks);
    uint32_t part = 0;
    struct sched_unit u = {.id = 9999, .ncomponents = 1, .reqs = &r, .partitions = &part,
                           .time_limits = &limit};
    struct select_node_alloc slots[MAXN];
    struct select_alloc a = {.nodes = slots};
    struct sched_view v = view_of(w, SCHED_BACKFILL, now);
    int64_t t = -1;
    int err = tessera_plugin.estimate(w->st, &v, &u, &t, &a);
    return err == TS_OK ? t : -err;
}

#define V(u) (w.decisions[u].verdict)
#define T(u) (w.decisions[u].expected_start)

/* ------------------------------------------------------------------------------------ */

/* 10 single-CPU nodes; A holds 8 until 100. B (10 CPUs) can start at 100 only. C (4) fits
 * after B; D (8) fits after B, and also after C if C holds a reservation; E (2 for 90 s)
 * fits the gap before B. */
static void queue_bcde(struct world *w)
{
    static const uint32_t eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    running(w, eight, 8, 1, 100);
    plain(w, 1, 10, 100); /* B */
    plain(w, 2, 4, 100);  /* C */
    plain(w, 3, 8, 150);  /* D */
    plain(w, 4, 2, 90);   /* E */
}

static void test_easy(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 100);
    assert_true(w.decisions[0].reserved);
    assert_int_equal(V(1), SCHED_PRIORITY);
    assert_int_equal(T(1), 200);
    assert_false(w.decisions[1].reserved); /* depth 1: only the head reserves */
    assert_int_equal(T(2), 200);           /* D is not behind C's (absent) reservation */
    assert_int_equal(probe(&w, 0, w.all, 10, 2, 90), 0);
    assert_int_equal(V(3), SCHED_START);   /* E finishes before B needs its CPUs */
    assert_int_equal(w.allocs[3][0].nnodes, 2);
    world_fini(&w);
}

/* strict_fifo: false makes units greedy: a waiting unit reserves nothing, so the later C
 * (4 CPUs for 100 s) starts on the free CPUs although that delays B; in event cycles too,
 * and a unit without a limit is not held back by a greedy one. A greedy unit still
 * waits behind a strict one's reservation. */
static void test_greedy(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    static const uint32_t six[6] = {0, 1, 2, 3, 4, 5};
    running(&w, six, 6, 1, 100);
    plain(&w, 1, 10, 100); /* B: waits for A */
    plain(&w, 2, 4, 0);    /* C: 4 CPUs, no limit */
    w.units[0].greedy = 1;
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 100);
    assert_false(w.decisions[0].reserved);
    assert_int_equal(V(1), SCHED_START);
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(1), SCHED_START);
    /* not greedy: C waits behind B */
    w.units[0].greedy = 0;
    cycle(&w, SCHED_BACKFILL, 0);
    assert_true(w.decisions[0].reserved);
    assert_int_equal(V(1), SCHED_PRIORITY);
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(1), SCHED_PRIORITY);
    /* a greedy C behind the strict B: still held back */
    w.units[1].greedy = 1;
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(1), SCHED_PRIORITY);
    world_fini(&w);
    /* bf_mode=off: the same choice without a plan */
    world_init(&w, 10, 1, "bf_mode=off");
    running(&w, six, 6, 1, 100);
    plain(&w, 1, 10, 100);
    plain(&w, 2, 4, 0);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(1), SCHED_PRIORITY);
    w.units[0].greedy = 1;
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(1), SCHED_START);
    world_fini(&w);
}

static void test_conservative(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1,bf_reserve_depth=100");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(T(0), 100);
    assert_int_equal(T(1), 200);
    assert_true(w.decisions[1].reserved);
    assert_int_equal(T(2), 300); /* behind C's reservation too */
    assert_true(w.decisions[2].reserved);
    assert_int_equal(V(3), SCHED_START);
    world_fini(&w);
}

static void test_gap_too_short(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    static const uint32_t eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    running(&w, eight, 8, 1, 100);
    plain(&w, 1, 10, 100);
    plain(&w, 2, 2, 101); /* one second too long for the gap */
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(1), SCHED_PRIORITY);
    assert_int_equal(T(1), 200);
    world_fini(&w);
}

/* A job without a time limit is never backfilled, even where it would delay nobody. */
static void test_no_limit_not_backfilled(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    static const uint32_t first4[4] = {0, 1, 2, 3}, first6[6] = {0, 1, 2, 3, 4, 5};
    static const uint32_t last4[4] = {6, 7, 8, 9};
    running(&w, first4, 4, 1, 100);
    struct select_request six = cpus_on(&w, first6, 6, 6);
    int64_t lim = 100;
    unit(&w, 1, 1, &six, &lim);
    struct select_request two = cpus_on(&w, last4, 4, 2);
    int64_t none = 0, fifty = 50;
    unit(&w, 2, 1, &two, &none);
    unit(&w, 3, 1, &two, &fifty);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(V(1), SCHED_PRIORITY);
    assert_int_equal(V(2), SCHED_START);
    /* at its turn it starts */
    clear_running(&w);
    cycle(&w, SCHED_BACKFILL, 1);
    assert_int_equal(V(0), SCHED_START);
    assert_int_equal(V(1), SCHED_START);
    world_fini(&w);
}

static void test_lookahead(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1,bf_max_job_test=2");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(T(1), 200);
    assert_int_equal(T(2), 0); /* beyond the look-ahead: not examined */
    assert_int_equal(V(3), SCHED_PRIORITY);
    world_fini(&w);
    /* beyond the look-ahead, a unit at its turn (nothing waits ahead in its partitions)
     * still starts; one behind a waiting unit does not */
    world_init(&w, 10, 1, "bf_resolution=1,bf_max_job_test=1");
    static const uint32_t six[6] = {0, 1, 2, 3, 4, 5};
    running(&w, six, 6, 1, 100);
    plain(&w, 1, 8, 100);  /* partition 0: waits for 100 */
    plain(&w, 2, 2, 100);  /* partition 1, beyond: at its turn */
    w.parts[1][0] = 1;
    plain(&w, 3, 2, 100);  /* partition 0, beyond: behind unit 1 */
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 100);
    assert_int_equal(V(1), SCHED_START);
    assert_int_equal(V(2), SCHED_PRIORITY);
    world_fini(&w);
    world_init(&w, 10, 1, "bf_resolution=1,bf_mode=whole,bf_max_job_test=2");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(3), SCHED_START);
    world_fini(&w);
    /* off: the head blocks, nothing is planned */
    world_init(&w, 10, 1, "bf_mode=off");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 0);
    assert_int_equal(V(3), SCHED_PRIORITY);
    world_fini(&w);
}

/* The window bounds the plan; the resolution rounds start times up. */
static void test_window_and_resolution(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_window=1,bf_resolution=1");
    static const uint32_t all10[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    running(&w, all10, 10, 1, 100);
    plain(&w, 1, 1, 10);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 0); /* 100 s is beyond a one-minute window */
    world_fini(&w);
    world_init(&w, 10, 1, "bf_resolution=60");
    running(&w, all10, 10, 1, 100);
    plain(&w, 1, 1, 10);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(T(0), 120);
    world_fini(&w);
}

/* Event-driven cycles start a lower-priority unit only behind reservations it cannot
 * delay. */
static void test_event_respects_reservations(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    queue_bcde(&w);
    /* before any backfill cycle, nothing jumps the waiting head */
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(V(3), SCHED_PRIORITY);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(3), SCHED_START);
    /* E started; next event: a new short job F (2 CPUs, 90 s) would delay B at 100 now */
    w.nunits = 3;
    static const uint32_t e2[2] = {8, 9};
    running(&w, e2, 2, 1, 90);
    plain(&w, 5, 2, 90);
    cycle(&w, SCHED_EVENT, 5);
    assert_int_equal(V(3), SCHED_PRIORITY);
    /* once E is gone, F fits before B's reservation */
    w.nholds = 1;
    w.nodes[8].alloc_cpus = w.nodes[9].alloc_cpus = 0;
    w.nodes[8].jobs = w.nodes[9].jobs = 0;
    cycle(&w, SCHED_EVENT, 6);
    assert_int_equal(V(3), SCHED_START);
    /* but not one that runs past it */
    w.limits[3][0] = 95;
    cycle(&w, SCHED_EVENT, 6);
    assert_int_equal(V(3), SCHED_PRIORITY);
    world_fini(&w);
}

/* Event-driven cycles look at default_queue_depth units unless asked for all. */
static void test_event_queue_depth(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "default_queue_depth=2");
    plain(&w, 1, 2, 10);
    plain(&w, 2, 2, 10);
    plain(&w, 3, 2, 10);
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(0), SCHED_START);
    assert_int_equal(V(1), SCHED_START);
    assert_int_equal(V(2), SCHED_UNDECIDED);
    struct sched_view v = view_of(&w, SCHED_EVENT, 0);
    v.full_queue = 1;
    for (size_t u = 0; u < w.nunits; u++)
        w.decisions[u] = (struct sched_decision){.allocs = w.allocs[u]};
    assert_int_equal(tessera_plugin.schedule(w.st, &v, w.decisions), SCHED_DONE);
    assert_int_equal(V(2), SCHED_START);
    world_fini(&w);
}

static int yields_left;
static int yield_after_one(void *arg)
{
    (void)arg;
    return yields_left-- > 0;
}

/* A yielded cycle goes on where it stopped, and gives the same decisions. */
static void test_yield_resumes(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    queue_bcde(&w);
    struct sched_view v = view_of(&w, SCHED_BACKFILL, 0);
    v.should_yield = yield_after_one;
    for (size_t u = 0; u < w.nunits; u++)
        w.decisions[u] = (struct sched_decision){.allocs = w.allocs[u]};
    yields_left = 2;
    int calls = 1;
    while (tessera_plugin.schedule(w.st, &v, w.decisions) == SCHED_MORE) {
        calls++;
        v.resume = 1;
        /* an event-driven cycle in between has a plan of its own */
        struct sched_decision ev[MAXU];
        struct select_alloc ea[MAXU][MAXC];
        struct select_node_alloc es[MAXU][MAXC][MAXN];
        for (size_t u = 0; u < w.nunits; u++) {
            ev[u] = (struct sched_decision){.allocs = ea[u]};
            for (size_t c = 0; c < MAXC; c++)
                ea[u][c].nodes = es[u][c];
        }
        struct sched_view e = view_of(&w, SCHED_EVENT, 0);
        assert_int_equal(tessera_plugin.schedule(w.st, &e, ev), SCHED_DONE);
        assert_int_equal(ev[0].verdict, SCHED_RESOURCES);
    }
    assert_int_equal(calls, 3);
    /* a cycle abandoned after a yield is forgotten: the next call starts afresh */
    yields_left = 1;
    v.resume = 0;
    for (size_t u = 0; u < w.nunits; u++)
        w.decisions[u] = (struct sched_decision){.allocs = w.allocs[u]};
    assert_int_equal(tessera_plugin.schedule(w.st, &v, w.decisions), SCHED_MORE);
    v.should_yield = NULL;
    assert_int_equal(tessera_plugin.schedule(w.st, &v, w.decisions), SCHED_DONE);
    assert_int_equal(T(0), 100);
    assert_int_equal(T(0), 100);
    assert_int_equal(T(1), 200);
    assert_int_equal(T(2), 200);
    assert_int_equal(V(3), SCHED_START);
    world_fini(&w);
}

static void test_estimate(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    queue_bcde(&w);
    cycle(&w, SCHED_BACKFILL, 0);
    /* behind B's reservation [100, 200) */
    assert_int_equal(probe(&w, 0, w.all, 10, 2, 90), 0);
    assert_int_equal(probe(&w, 0, w.all, 10, 3, 50), 200);
    assert_int_equal(probe(&w, 0, w.all, 10, 11, 50), -TS_EINVAL);
    world_fini(&w);
}

/* ------------------------------------------------------------------------------------ */
/* docs/02-sched.md §5.3's fixture: nodes a, b, c of 4 CPUs; R1 on b until T+2h, R2 on c until T+1h;
 * H (top) has three 4-CPU components for 1 h pinned to a, b and c; F needs 4 CPUs on a
 * for 90 min. */

#define HOUR 3600
#define T0 1000000

static const uint32_t node_a[1] = {0}, node_b[1] = {1}, node_c[1] = {2};

static void fixture(struct world *w, int with_f, int64_t r_end_b, int64_t r_end_c)
{
    world_init(w, 3, 4, "bf_resolution=1");
    running(w, node_b, 1, 4, r_end_b);
    running(w, node_c, 1, 4, r_end_c);
    struct select_request h[3] = {cpus_on(w, node_a, 1, 4), cpus_on(w, node_b, 1, 4),
                                  cpus_on(w, node_c, 1, 4)};
    int64_t hl[3] = {HOUR, HOUR, HOUR};
    unit(w, 10, 3, h, hl);
    if (with_f) {
        struct select_request f = cpus_on(w, node_a, 1, 4);
        int64_t fl = 90 * 60;
        unit(w, 20, 1, &f, &fl);
    }
}

static void test_two_modes(void **state)
{
    struct world w;
    fixture(&w, 1, T0 + 2 * HOUR, T0 + HOUR);
    /* cycle 1, mode 1: c0 = T, c1 = c2 = T+2h; a reserved [T, T+1h), b and c from T+2h */
    cycle(&w, SCHED_BACKFILL, T0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), T0 + 2 * HOUR);
    assert_int_equal(V(1), SCHED_PRIORITY); /* F waits */
    assert_int_equal(T(1), T0 + HOUR);
    /* c is reserved from T+2h, not T+1h: an hour on c fits from T+1h */
    assert_int_equal(probe(&w, T0, node_c, 1, 4, HOUR), T0 + HOUR);
    assert_int_equal(probe(&w, T0, node_a, 1, 4, 30 * 60), T0 + HOUR);

    /* cycle 2, mode 2: all three at T+2h; F starts now on a */
    cycle(&w, SCHED_BACKFILL, T0 + 1);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), T0 + 2 * HOUR);
    assert_int_equal(V(1), SCHED_START);
    assert_int_equal(probe(&w, T0 + 1, node_c, 1, 4, HOUR), T0 + HOUR);

    /* cycle 3, mode 1 again (records cleared): c0 = F's end, c1 = c2 = T+2h */
    int64_t f_end = T0 + 1 + 90 * 60;
    running(&w, node_a, 1, 4, f_end);
    w.nunits = 1;
    cycle(&w, SCHED_BACKFILL, T0 + 2);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), T0 + 2 * HOUR);
    /* a is reserved from F's end for an hour: 30 minutes on a fit only after that */
    assert_int_equal(probe(&w, T0 + 2, node_a, 1, 4, 30 * 60), f_end + HOUR);
    world_fini(&w);
}

/* The variant: no F, and R1 and R2 end at T+45m. The next mode-2 cycle does not start H
 * (its floor is T+2h), the mode-1 cycle after it starts all three together. */
static void test_two_modes_variant(void **state)
{
    struct world w;
    fixture(&w, 0, T0 + 2 * HOUR, T0 + HOUR);
    cycle(&w, SCHED_BACKFILL, T0);
    assert_int_equal(T(0), T0 + 2 * HOUR);
    clear_running(&w); /* R1 and R2 end at T+45m */
    cycle(&w, SCHED_BACKFILL, T0 + 45 * 60);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), T0 + 2 * HOUR);
    cycle(&w, SCHED_BACKFILL, T0 + 45 * 60 + 1);
    assert_int_equal(V(0), SCHED_START);
    for (size_t c = 0; c < 3; c++) {
        assert_int_equal(w.allocs[0][c].nnodes, 1);
        assert_int_equal(w.allocs[0][c].nodes[0].node, c);
    }
    world_fini(&w);

    /* with event-driven starts, H starts on the job-end event */
    fixture(&w, 0, T0 + 2 * HOUR, T0 + HOUR);
    cycle(&w, SCHED_BACKFILL, T0);
    clear_running(&w);
    cycle(&w, SCHED_EVENT, T0 + 45 * 60);
    assert_int_equal(V(0), SCHED_START);
    world_fini(&w);
}

/* Components may share a node: the plan tracks CPUs within it. */
static void test_het_shares_nodes(void **state)
{
    struct world w;
    world_init(&w, 1, 4, "bf_resolution=1");
    running(&w, node_a, 1, 2, 50);
    struct select_request two[2] = {cpus_on(&w, node_a, 1, 2), cpus_on(&w, node_a, 1, 2)};
    int64_t lim[2] = {50, 50};
    unit(&w, 1, 2, two, lim);
    /* mode 1: component 0 now, component 1 when the other job's half is done at 50 */
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESOURCES);
    assert_int_equal(T(0), 50);
    clear_running(&w);
    cycle(&w, SCHED_BACKFILL, 1); /* mode 2: floor 50 from the records, not now */
    assert_int_equal(T(0), 50);
    cycle(&w, SCHED_BACKFILL, 2);
    assert_int_equal(V(0), SCHED_START);
    assert_int_equal(w.allocs[0][0].nodes[0].cpus + w.allocs[0][1].nodes[0].cpus, 4);
    world_fini(&w);
}

/* docs/02-sched.md §5.1.4: p1 of 10 nodes, p2 on 5 of them; 5 nodes in each. */
static void test_het_overlapping_partitions(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    static const uint32_t p2[5] = {5, 6, 7, 8, 9};
    struct select_request r[2] = {cpus_on(&w, w.all, 10, 5), cpus_on(&w, p2, 5, 5)};
    r[0].min_nodes = r[1].min_nodes = 5;
    int64_t lim[2] = {100, 100};
    unit(&w, 1, 2, r, lim);
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_START);
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(0), SCHED_START);
    world_fini(&w);
}

/* A standing "block the queue" verdict: nothing after it starts, in any partition, until
 * its filter may be asked again. */
static void test_activation_block(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    plain(&w, 1, 4, 100);
    plain(&w, 2, 2, 100);
    w.parts[1][0] = 1;
    w.units[0].activation = SCHED_ACT_BLOCK;
    for (int kind = SCHED_EVENT; kind <= SCHED_BACKFILL; kind++) {
        cycle(&w, (enum sched_kind)kind, 0);
        assert_int_equal(V(0), SCHED_BLOCK);
        assert_int_equal(V(1), SCHED_PRIORITY);
    }
    /* asked again it is decided as usual; until its filter lets it pass (the controller
     * then drops the verdict) the units after it still wait */
    w.units[0].retry = 1;
    for (int kind = SCHED_EVENT; kind <= SCHED_BACKFILL; kind++) {
        cycle(&w, (enum sched_kind)kind, 0);
        assert_int_equal(V(0), SCHED_START);
        assert_int_equal(V(1), SCHED_PRIORITY);
    }
    w.units[0].activation = SCHED_ACT_NONE;
    w.units[0].retry = 0;
    cycle(&w, SCHED_BACKFILL, 1);
    assert_int_equal(V(0), SCHED_START);
    assert_int_equal(V(1), SCHED_START);
    world_fini(&w);
}

/* A standing "keep the resources" verdict: they stay held, the others go on around. */
static void test_activation_reserve(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    struct select_node_alloc kept_nodes[4];
    for (uint32_t i = 0; i < 4; i++)
        kept_nodes[i] = (struct select_node_alloc){.node = i, .cpus = 1, .tasks = 1};
    struct select_alloc kept = {.nodes = kept_nodes, .nnodes = 4};
    plain(&w, 1, 4, 100);
    plain(&w, 2, 8, 50); /* needs some of the kept CPUs */
    plain(&w, 3, 6, 50); /* fits beside them */
    w.units[0].activation = SCHED_ACT_RESERVE;
    w.units[0].kept = &kept;
    cycle(&w, SCHED_BACKFILL, 0);
    assert_int_equal(V(0), SCHED_RESERVE);
    assert_int_equal(V(1), SCHED_PRIORITY);
    assert_int_equal(T(1), 100); /* once the kept CPUs are free again */
    assert_int_equal(V(2), SCHED_START);
    for (size_t k = 0; k < w.allocs[2][0].nnodes; k++)
        assert_true(w.allocs[2][0].nodes[k].node >= 4);
    cycle(&w, SCHED_EVENT, 0);
    assert_int_equal(V(0), SCHED_RESERVE);
    assert_int_equal(V(2), SCHED_START);
    world_fini(&w);
}

/* A unit the nodes can never hold (they changed since it was accepted) is told so, in
 * both kinds of cycle, and blocks nobody. */
/* Standing "hold" and "fail" verdicts: a held unit waits and holds nothing until its
 * filter may be asked again; a failed one is failed, retry or not. */
static void test_activation_hold_and_fail(void **state)
{
    struct world w;
    world_init(&w, 10, 1, "bf_resolution=1");
    plain(&w, 1, 8, 100);
    plain(&w, 2, 8, 100);
    plain(&w, 3, 2, 100);
    w.units[0].activation = SCHED_ACT_HOLD;
    w.units[1].activation = SCHED_ACT_FAIL;
    w.units[1].retry = 1;
    for (int kind = SCHED_EVENT; kind <= SCHED_BACKFILL; kind++) {
        cycle(&w, (enum sched_kind)kind, 0);
        assert_int_equal(V(0), SCHED_HOLD);
        assert_int_equal(V(1), SCHED_FAIL);
        assert_int_equal(V(2), SCHED_START); /* nothing held, nothing blocked */
    }
    w.units[0].retry = 1;
    cycle(&w, SCHED_BACKFILL, 1);
    assert_int_equal(V(0), SCHED_START);
    assert_int_equal(V(1), SCHED_FAIL);
    world_fini(&w);
}

static void test_never(void **state)
{
    struct world w;
    world_init(&w, 4, 1, "bf_resolution=1");
    static const uint32_t all4[4] = {0, 1, 2, 3};
    running(&w, all4, 2, 1, 100);
    plain(&w, 1, 5, 10);
    plain(&w, 2, 2, 10);
    for (int kind = SCHED_EVENT; kind <= SCHED_BACKFILL; kind++) {
        cycle(&w, (enum sched_kind)kind, 0);
        assert_int_equal(V(0), SCHED_NEVER);
        assert_int_equal(V(1), SCHED_START);
    }
    world_fini(&w);
}

static void test_bad_params(void **state)
{
    void *st = NULL;
    char err[128] = "";
    assert_int_equal(tessera_plugin.create("bf_mode=sideways", &st, err, sizeof(err)), TS_EINVAL);
    assert_non_null(strstr(err, "bf_mode"));
    assert_int_equal(tessera_plugin.create("bf_window=0", &st, err, sizeof(err)), TS_EINVAL);
    assert_int_equal(tessera_plugin.create("whole_hetjob,bf_interval=5", &st, err, sizeof(err)),
                     TS_OK);
    tessera_plugin.destroy(st);
}

static int group_setup(void **state)
{
    const char *dir = getenv("TESSERA_PLUGIN_DIR");
    char err[256];
    if (!dir || plugin_load(dir, "select/consumable", SELECT_PLUGIN_TYPE, PLUGIN_ABI_VERSION,
                            NULL, &select_plugin, err, sizeof(err)) != TS_OK)
        return -1;
    sel = plugin_ops(select_plugin);
    return 0;
}

static int group_teardown(void **state)
{
    plugin_unload(select_plugin);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_easy),
        cmocka_unit_test(test_greedy),
        cmocka_unit_test(test_conservative),
        cmocka_unit_test(test_gap_too_short),
        cmocka_unit_test(test_no_limit_not_backfilled),
        cmocka_unit_test(test_lookahead),
        cmocka_unit_test(test_window_and_resolution),
        cmocka_unit_test(test_event_respects_reservations),
        cmocka_unit_test(test_event_queue_depth),
        cmocka_unit_test(test_yield_resumes),
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_two_modes),
        cmocka_unit_test(test_two_modes_variant),
        cmocka_unit_test(test_het_shares_nodes),
        cmocka_unit_test(test_het_overlapping_partitions),
        cmocka_unit_test(test_activation_block),
        cmocka_unit_test(test_activation_reserve),
        cmocka_unit_test(test_activation_hold_and_fail),
        cmocka_unit_test(test_never),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
