/* common/plan: holds and releases (exactly undone), overlapping holds, unknown ends,
 * interval minimums and their ends, next release, earliest start (now, after one and two
 * releases, gaps too short, horizon, resolution, CPUs and memory apart, node subsets),
 * clamping of overcommitted nodes, clones and resets, bad arguments, and a randomized
 * comparison with a naive model. */
#include "common/sched/plan.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAXN 16
#define F PLAN_FOREVER

/* n nodes of cpus CPUs and mem MB each. */
static struct plan *make(size_t n, uint32_t cpus, uint64_t mem)
{
    struct plan_node nodes[MAXN];
    struct plan *p = NULL;
    for (size_t i = 0; i < n; i++)
        nodes[i] = (struct plan_node){cpus, mem};
    assert_int_equal(plan_create(nodes, n, &p), TS_OK);
    assert_non_null(p);
    assert_int_equal(plan_node_count(p), n);
    return p;
}

/* One hold on one node. */
static plan_hold_id hold1(struct plan *p, uint32_t node, uint32_t cpus, uint64_t mem,
                          int64_t start, int64_t end)
{
    plan_hold_id id = PLAN_HOLD_NONE;
    assert_int_equal(plan_hold(p, &node, &cpus, &mem, 1, start, end, &id), TS_OK);
    assert_true(id != PLAN_HOLD_NONE);
    return id;
}

/* Free CPUs and memory of one node over [a, b). */
static uint32_t fcpus(const struct plan *p, uint32_t node, int64_t a, int64_t b)
{
    uint32_t c;
    uint64_t m;
    plan_free_during(p, a, b, &node, 1, &c, &m);
    return c;
}

static uint64_t fmem(const struct plan *p, uint32_t node, int64_t a, int64_t b)
{
    uint32_t c;
    uint64_t m;
    plan_free_during(p, a, b, &node, 1, &c, &m);
    return m;
}

/* Everything observable on a grid of intervals, to compare two states of a plan. */
#define FP_T 24
#define FP_SIZE (MAXN * FP_T * 4 * 2 + FP_T)
struct fingerprint {
    uint64_t v[FP_SIZE];
};

static void fingerprint(const struct plan *p, struct fingerprint *fp)
{
    static const int64_t lens[4] = {1, 7, 50, F};
    size_t n = plan_node_count(p), at = 0;
    uint32_t c[MAXN];
    uint64_t m[MAXN];
    memset(fp, 0, sizeof(*fp));
    for (int64_t i = 0; i < FP_T; i++) {
        int64_t t = i * 5 - 10;
        for (int l = 0; l < 4; l++) {
            plan_free_during(p, t, lens[l] == F ? F : t + lens[l], NULL, n, c, m);
            for (size_t k = 0; k < n; k++) {
                fp->v[at++] = c[k];
                fp->v[at++] = m[k];
            }
        }
        fp->v[at++] = (uint64_t)plan_next_release(p, t);
    }
}

static void assert_same(const struct plan *p, const struct fingerprint *want)
{
    struct fingerprint now;
    fingerprint(p, &now);
    assert_memory_equal(now.v, want->v, sizeof(now.v));
}

/* A fit that asks for `cpus` CPUs and `mem` MB on at least `count` of the nodes, and
 * records when it was asked. */
struct need {
    uint32_t cpus;
    uint64_t mem;
    size_t count;
    size_t n; /* nodes it is given */
    int calls;
    int64_t asked[64];
};

static int need_fits(const struct need *nd, const uint32_t *c, const uint64_t *m)
{
    size_t ok = 0;
    for (size_t k = 0; k < nd->n; k++)
        ok += c[k] >= nd->cpus && m[k] >= nd->mem;
    return ok >= nd->count;
}

static int fit_need(void *arg, int64_t start, const uint32_t *c, const uint64_t *m)
{
    struct need *nd = arg;
    if (nd->calls < 64)
        nd->asked[nd->calls] = start;
    nd->calls++;
    return need_fits(nd, c, m);
}

/* The earliest start of a job of `need` for duration d from `from`, or -1 for none. */
static int64_t earliest(const struct plan *p, struct need *nd, int64_t from, int64_t d,
                        int64_t horizon, int64_t res, const uint32_t *nodes)
{
    int64_t t = -12345;
    int rc = plan_earliest(p, from, d, horizon, res, nodes, nd->n, fit_need, nd, &t);
    if (rc == TS_ENOENT) {
        assert_int_equal(t, -12345);
        return -1;
    }
    assert_int_equal(rc, TS_OK);
    return t;
}

static struct need want(uint32_t cpus, uint64_t mem, size_t count, size_t n)
{
    return (struct need){.cpus = cpus, .mem = mem, .count = count, .n = n};
}

/* ---- holds ---- */

static void test_empty(void **state)
{
    (void)state;
    struct plan *p = make(3, 8, 1000);
    assert_int_equal(fcpus(p, 2, 0, 100), 8);
    assert_int_equal(fmem(p, 2, -50, F), 1000);
    assert_int_equal(plan_next_release(p, 0), F);
    plan_destroy(p);
    plan_destroy(NULL);
}

static void test_hold_and_release(void **state)
{
    (void)state;
    struct plan *p = make(4, 8, 1000);
    struct fingerprint before, mid;
    hold1(p, 0, 2, 100, 0, 40);
    hold1(p, 3, 8, 1000, 10, F);
    fingerprint(p, &before);

    plan_hold_id a = hold1(p, 1, 3, 300, 5, 25);
    assert_int_equal(fcpus(p, 1, 5, 6), 5);
    assert_int_equal(fmem(p, 1, 24, 25), 700);
    assert_int_equal(fcpus(p, 1, 25, 26), 8);
    assert_int_equal(fcpus(p, 1, 4, 5), 8);
    /* ... and another that shares its end and its node, then goes first */
    plan_hold_id b = hold1(p, 1, 1, 1, 20, 25);
    fingerprint(p, &mid);
    plan_hold_id c = hold1(p, 0, 1, 1, 25, 30); /* starts where a ends */
    assert_int_equal(plan_release(p, c), TS_OK);
    assert_same(p, &mid);
    assert_int_equal(plan_release(p, b), TS_OK);
    assert_int_equal(plan_release(p, a), TS_OK);
    assert_same(p, &before);

    /* ids are single use */
    assert_int_equal(plan_release(p, a), TS_ENOENT);
    assert_int_equal(plan_release(p, PLAN_HOLD_NONE), TS_ENOENT);
    assert_int_equal(plan_release(p, a + 1000), TS_ENOENT);
    /* a reused slot does not answer to the old id */
    plan_hold_id d = hold1(p, 2, 1, 1, 0, 5);
    assert_true(d != a && d != b && d != c);
    assert_int_equal(plan_release(p, a), TS_ENOENT);
    assert_int_equal(plan_release(p, b), TS_ENOENT);
    assert_int_equal(fcpus(p, 2, 0, 5), 7);
    assert_int_equal(plan_release(p, d), TS_OK);
    assert_same(p, &before);
    plan_destroy(p);
}

static void test_group(void **state)
{
    (void)state;
    struct plan *p = make(4, 8, 1000);
    struct fingerprint before;
    fingerprint(p, &before);
    const uint32_t nodes[3] = {0, 2, 2};
    const uint32_t cpus[3] = {4, 1, 2};
    const uint64_t mem[3] = {10, 20, 30};
    plan_hold_id id = PLAN_HOLD_NONE;
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 3, 100, 200, &id), TS_OK);
    uint32_t c[4];
    uint64_t m[4];
    plan_free_during(p, 150, 151, NULL, 4, c, m);
    assert_int_equal(c[0], 4);
    assert_int_equal(m[0], 990);
    assert_int_equal(c[1], 8);
    assert_int_equal(c[2], 5); /* a node twice: the amounts add up */
    assert_int_equal(m[2], 950);
    assert_int_equal(c[3], 8);
    assert_int_equal(plan_next_release(p, 0), 200);
    assert_int_equal(plan_release(p, id), TS_OK);
    assert_same(p, &before);
    plan_destroy(p);
}

static void test_bad_holds(void **state)
{
    (void)state;
    struct plan *p = make(2, 8, 1000);
    struct fingerprint before;
    fingerprint(p, &before);
    uint32_t nodes[2] = {0, 2}, cpus[2] = {1, 1};
    uint64_t mem[2] = {1, 1};
    plan_hold_id id = 77;
    /* node 2 does not exist: nothing is held, not even on node 0 */
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 2, 0, 10, &id), TS_EINVAL);
    assert_int_equal(id, PLAN_HOLD_NONE);
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 1, 10, 10, &id), TS_EINVAL);
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 1, 11, 10, &id), TS_EINVAL);
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 0, 0, 10, &id), TS_EINVAL);
    assert_int_equal(plan_hold(p, nodes, cpus, mem, 1, 0, 10, NULL), TS_EINVAL);
    assert_same(p, &before);
    plan_destroy(p);
}

static void test_overlap(void **state)
{
    (void)state;
    struct plan *p = make(1, 16, 1000);
    hold1(p, 0, 4, 100, 0, 30);
    hold1(p, 0, 5, 200, 10, 20);
    hold1(p, 0, 2, 300, 15, 40);
    assert_int_equal(fcpus(p, 0, 0, 10), 12);
    assert_int_equal(fcpus(p, 0, 10, 15), 7);
    assert_int_equal(fcpus(p, 0, 15, 20), 5);
    assert_int_equal(fmem(p, 0, 15, 20), 400);
    assert_int_equal(fcpus(p, 0, 20, 30), 10);
    assert_int_equal(fcpus(p, 0, 30, 40), 14);
    assert_int_equal(fcpus(p, 0, 40, 41), 16);
    assert_int_equal(fcpus(p, 0, 0, 100), 5);
    plan_destroy(p);
}

static void test_unknown_end(void **state)
{
    (void)state;
    struct plan *p = make(2, 8, 1000);
    plan_hold_id id = hold1(p, 0, 3, 500, 10, F);
    hold1(p, 1, 1, 1, 0, 50);
    assert_int_equal(fcpus(p, 0, 0, 10), 8);
    assert_int_equal(fcpus(p, 0, 10, 11), 5);
    assert_int_equal(fcpus(p, 0, INT64_MAX - 2, F), 5);
    assert_int_equal(fmem(p, 0, 0, F), 500);
    /* no end, so never released */
    assert_int_equal(plan_next_release(p, 0), 50);
    assert_int_equal(plan_next_release(p, 50), F);
    struct need nd = want(8, 0, 1, 1);
    const uint32_t node0 = 0;
    assert_int_equal(earliest(p, &nd, 0, 10, 1000000, 1, &node0), 0);
    assert_int_equal(earliest(p, &nd, 0, 11, 1000000, 1, &node0), -1);
    assert_int_equal(plan_release(p, id), TS_OK);
    assert_int_equal(fcpus(p, 0, 0, F), 8);
    plan_destroy(p);
}

static void test_interval_ends(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    hold1(p, 0, 2, 10, 10, 20);
    hold1(p, 0, 3, 20, 20, 30);
    hold1(p, 0, 1, 40, 25, 35);
    /* [a, b): a hold ending at a or starting at b does not count */
    assert_int_equal(fcpus(p, 0, 0, 10), 8);
    assert_int_equal(fcpus(p, 0, 0, 11), 6);
    assert_int_equal(fcpus(p, 0, 9, 10), 8);
    assert_int_equal(fcpus(p, 0, 10, 20), 6);
    assert_int_equal(fcpus(p, 0, 19, 20), 6);
    assert_int_equal(fcpus(p, 0, 20, 25), 5);
    assert_int_equal(fcpus(p, 0, 35, 50), 8);
    assert_int_equal(fcpus(p, 0, 30, 35), 7);
    /* across several change points: the least free of each resource, apart */
    assert_int_equal(fcpus(p, 0, 5, 33), 4);   /* [25, 30): 3 + 1 */
    assert_int_equal(fmem(p, 0, 5, 33), 940);  /* [25, 30): 20 + 40 */
    assert_int_equal(fmem(p, 0, 12, 24), 980);
    assert_int_equal(fmem(p, 0, 31, 100), 960);
    /* an empty interval is the instant at its start */
    assert_int_equal(fcpus(p, 0, 10, 10), 6);
    assert_int_equal(fcpus(p, 0, 10, 5), 6);
    /* a node out of range has nothing */
    uint32_t bad = 1, c = 9;
    uint64_t m = 9;
    plan_free_during(p, 0, 10, &bad, 1, &c, &m);
    assert_int_equal(c, 0);
    assert_int_equal(m, 0);
    plan_destroy(p);
}

static void test_next_release(void **state)
{
    (void)state;
    struct plan *p = make(3, 8, 1000);
    plan_hold_id a = hold1(p, 0, 1, 1, 0, 30);
    hold1(p, 1, 1, 1, 0, 10);
    plan_hold_id c = hold1(p, 2, 1, 1, 5, 30);
    hold1(p, 2, 1, 1, 50, 60);
    assert_int_equal(plan_next_release(p, -100), 10);
    assert_int_equal(plan_next_release(p, 9), 10);
    assert_int_equal(plan_next_release(p, 10), 30); /* strictly after */
    assert_int_equal(plan_next_release(p, 30), 60);
    assert_int_equal(plan_next_release(p, 60), F);
    /* two holds end at 30: 30 stays until both are gone */
    assert_int_equal(plan_release(p, a), TS_OK);
    assert_int_equal(plan_next_release(p, 10), 30);
    assert_int_equal(plan_release(p, c), TS_OK);
    assert_int_equal(plan_next_release(p, 10), 60);
    plan_destroy(p);
}

/* ---- earliest start ---- */

static void test_earliest_now(void **state)
{
    (void)state;
    struct plan *p = make(2, 8, 1000);
    hold1(p, 0, 4, 500, 0, 100);
    struct need nd = want(4, 500, 2, 2);
    assert_int_equal(earliest(p, &nd, 0, 1000, 3600, 1, NULL), 0);
    assert_int_equal(nd.calls, 1);
    assert_int_equal(nd.asked[0], 0);
    plan_destroy(p);
}

static void test_earliest_after_one(void **state)
{
    (void)state;
    struct plan *p = make(2, 8, 1000);
    hold1(p, 0, 6, 500, 0, 100);
    hold1(p, 1, 6, 500, 0, 70);
    /* two nodes of 4 CPUs: not before node 0 frees at 100 */
    struct need nd = want(4, 0, 2, 2);
    assert_int_equal(earliest(p, &nd, 0, 50, 3600, 1, NULL), 100);
    assert_int_equal(nd.calls, 3); /* 0, 70, 100 */
    assert_int_equal(nd.asked[1], 70);
    /* one node will do at 70 */
    nd = want(4, 0, 1, 2);
    assert_int_equal(earliest(p, &nd, 0, 50, 3600, 1, NULL), 70);
    /* starting the search later, at a time already free */
    nd = want(4, 0, 2, 2);
    assert_int_equal(earliest(p, &nd, 100, 50, 3600, 1, NULL), 100);
    assert_int_equal(earliest(p, &nd, 130, 50, 3600, 1, NULL), 130);
    plan_destroy(p);
}

static void test_earliest_needs_whole_window(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    /* busy [0, 100), a gap of 20 s, busy [120, 200), a gap of 30 s, busy [230, 300), free */
    hold1(p, 0, 8, 0, 0, 100);
    hold1(p, 0, 8, 0, 120, 200);
    hold1(p, 0, 8, 0, 230, 300);
    struct need nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 20, 1000, 1, NULL), 100);
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 21, 1000, 1, NULL), 200); /* the 20 s gap is short */
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 31, 1000, 1, NULL), 300); /* so is the 30 s one */
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 110, 10, 1000, 1, NULL), 110); /* inside the gap */
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 111, 10, 1000, 1, NULL), 200);
    plan_destroy(p);
}

static void test_earliest_two_releases(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    hold1(p, 0, 4, 0, 0, 50);
    hold1(p, 0, 3, 0, 0, 80);
    hold1(p, 0, 2, 0, 60, 70); /* at 60 a newcomer takes part of what 50 gave back */
    struct need nd = want(6, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 1000, 1, NULL), 80);
    nd = want(5, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 1000, 1, NULL), 50);
    nd = want(5, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 11, 1000, 1, NULL), 70);
    plan_destroy(p);
}

static void test_earliest_horizon(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    hold1(p, 0, 8, 0, 0, 100);
    struct need nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 99, 1, NULL), -1);
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 100, 1, NULL), 100); /* the limit is tried */
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 0, 1, NULL), -1);
    assert_int_equal(nd.calls, 1);
    /* the run may go past the horizon: only its start must be within */
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 100000, 100, 1, NULL), 100);
    plan_destroy(p);
}

static void test_earliest_resolution(void **state)
{
    (void)state;
    struct plan *p = make(1, 64, 1000);
    /* one CPU comes back every second from 1 to 60 */
    for (int i = 1; i <= 60; i++)
        hold1(p, 0, 1, 0, 0, i);
    hold1(p, 0, 4, 0, 0, 1000);
    struct need nd = want(64 - 4 - 60 + 37, 0, 1, 1); /* enough after 37 s */
    assert_int_equal(earliest(p, &nd, 0, 10, 3600, 1, NULL), 37);
    assert_int_equal(nd.calls, 38);
    nd = want(64 - 4 - 60 + 37, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 3600, 15, NULL), 45);
    assert_int_equal(nd.calls, 4); /* 0, 15, 30, 45 */
    assert_int_equal(nd.asked[1], 15);
    assert_int_equal(nd.asked[2], 30);
    /* multiples count from `from` */
    nd = want(64 - 4 - 60 + 37, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 3, 10, 3600, 15, NULL), 48);
    /* a resolution beyond the horizon leaves `from` only */
    nd = want(64 - 4 - 60 + 37, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 100, 3600, NULL), -1);
    assert_int_equal(nd.calls, 1);
    plan_destroy(p);
}

/* A gap that closes before the next multiple of the resolution is missed: the price. */
static void test_resolution_misses_short_gap(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    hold1(p, 0, 8, 0, 0, 5);
    hold1(p, 0, 8, 0, 25, 60);
    struct need nd = want(8, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 20, 1000, 1, NULL), 5);
    nd = want(8, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 20, 1000, 10, NULL), 60);
    plan_destroy(p);
}

static void test_cpus_and_memory_apart(void **state)
{
    (void)state;
    struct plan *p = make(2, 8, 1000);
    hold1(p, 0, 1, 1000, 0, 100); /* CPUs free, no memory until 100 */
    hold1(p, 1, 8, 0, 0, 50);     /* memory free, no CPUs until 50 */
    uint32_t c[2];
    uint64_t m[2];
    plan_free_during(p, 0, 10, NULL, 2, c, m);
    assert_int_equal(c[0], 7);
    assert_int_equal(m[0], 0);
    assert_int_equal(c[1], 0);
    assert_int_equal(m[1], 1000);
    struct need nd = want(1, 100, 1, 2);
    assert_int_equal(earliest(p, &nd, 0, 10, 1000, 1, NULL), 50); /* node 1 at 50 */
    const uint32_t node0 = 0;
    nd = want(1, 100, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 1000, 1, &node0), 100);
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, 10, 1000, 1, &node0), 0);
    plan_destroy(p);
}

static void test_node_subsets(void **state)
{
    (void)state;
    struct plan *p = make(5, 4, 1000);
    hold1(p, 0, 4, 0, 0, 10);
    hold1(p, 1, 4, 0, 0, 20);
    hold1(p, 2, 4, 0, 0, 30);
    hold1(p, 3, 4, 0, 0, 40);
    hold1(p, 4, 4, 0, 0, 50);
    const uint32_t sub[3] = {1, 3, 4};
    uint32_t c[3];
    uint64_t m[3];
    hold1(p, 3, 1, 0, 40, 45);
    plan_free_during(p, 40, 41, sub, 3, c, m);
    assert_int_equal(c[0], 4);
    assert_int_equal(c[1], 3);
    assert_int_equal(c[2], 0);
    /* the releases of other nodes are not even tried */
    struct need nd = want(4, 0, 2, 3);
    assert_int_equal(earliest(p, &nd, 0, 5, 1000, 1, sub), 45);
    /* 0, 20, 40 (node 3 got freer, though not free enough), 45: not 10 or 30 (other
     * nodes) */
    assert_int_equal(nd.calls, 4);
    assert_int_equal(nd.asked[1], 20);
    assert_int_equal(nd.asked[2], 40);
    assert_int_equal(nd.asked[3], 45);
    nd = want(4, 0, 4, 5);
    assert_int_equal(earliest(p, &nd, 0, 5, 1000, 1, NULL), 45); /* node 3 keeps one CPU until 45 */
    /* out of range in the set */
    const uint32_t bad[2] = {1, 5};
    int64_t t;
    nd = want(1, 0, 1, 2);
    assert_int_equal(plan_earliest(p, 0, 5, 10, 1, bad, 2, fit_need, &nd, &t), TS_EINVAL);
    assert_int_equal(plan_earliest(p, 0, 5, 10, 1, NULL, 6, fit_need, &nd, &t), TS_EINVAL);
    assert_int_equal(nd.calls, 0);
    plan_destroy(p);
}

static void test_earliest_bad_arguments(void **state)
{
    (void)state;
    struct plan *p = make(1, 4, 1000);
    struct need nd = want(1, 0, 1, 1);
    int64_t t;
    assert_int_equal(plan_earliest(p, 0, 0, 10, 1, NULL, 1, fit_need, &nd, &t), TS_EINVAL);
    assert_int_equal(plan_earliest(p, 0, -5, 10, 1, NULL, 1, fit_need, &nd, &t), TS_EINVAL);
    assert_int_equal(plan_earliest(p, 0, 5, -1, 1, NULL, 1, fit_need, &nd, &t), TS_EINVAL);
    assert_int_equal(plan_earliest(p, 0, 5, 10, 1, NULL, 1, NULL, &nd, &t), TS_EINVAL);
    assert_int_equal(plan_earliest(p, 0, 5, 10, 1, NULL, 1, fit_need, &nd, NULL), TS_EINVAL);
    assert_int_equal(nd.calls, 0);
    /* a run without end: fine when nothing is held, never when something always is */
    assert_int_equal(plan_earliest(p, 0, F, 10, 1, NULL, 1, fit_need, &nd, &t), TS_OK);
    assert_int_equal(t, 0);
    hold1(p, 0, 4, 0, 1000, 2000);
    nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 0, F, 5000, 1, NULL), 2000);
    plan_destroy(p);
}

static void test_clamping(void **state)
{
    (void)state;
    struct plan *p = make(1, 8, 1000);
    struct fingerprint before;
    hold1(p, 0, 6, 800, 0, 100);
    fingerprint(p, &before);
    plan_hold_id over = hold1(p, 0, 6, 800, 50, 150); /* 12 CPUs, 1600 MB on [50, 100) */
    assert_int_equal(fcpus(p, 0, 50, 100), 0);
    assert_int_equal(fmem(p, 0, 50, 100), 0);
    assert_int_equal(fcpus(p, 0, 0, 150), 0);
    assert_int_equal(fcpus(p, 0, 100, 150), 2);
    assert_int_equal(fmem(p, 0, 100, 150), 200);
    /* an overcommitted node fits nothing until enough goes */
    struct need nd = want(1, 0, 1, 1);
    assert_int_equal(earliest(p, &nd, 50, 10, 1000, 1, NULL), 100);
    /* a hold of more than the whole node */
    plan_hold_id huge = hold1(p, 0, UINT32_MAX, UINT64_MAX / 4, 0, 10);
    assert_int_equal(fcpus(p, 0, 0, 1), 0);
    assert_int_equal(fmem(p, 0, 0, 1), 0);
    assert_int_equal(plan_release(p, huge), TS_OK);
    assert_int_equal(plan_release(p, over), TS_OK);
    assert_same(p, &before);
    assert_int_equal(fcpus(p, 0, 50, 100), 2);
    plan_destroy(p);
}

static void test_clone_and_reset(void **state)
{
    (void)state;
    struct plan *p = make(3, 8, 1000), *c = NULL;
    struct fingerprint fp, fc;
    plan_hold_id a = hold1(p, 0, 2, 100, 0, 50);
    plan_hold_id b = hold1(p, 1, 3, 100, 10, F);
    fingerprint(p, &fp);
    assert_int_equal(plan_clone(p, &c), TS_OK);
    assert_same(c, &fp);
    /* the copy changes alone: holds, growth out of its shared block, releases */
    for (int i = 0; i < 20; i++)
        hold1(c, 2, 1, 1, i, i + 30);
    plan_hold_id x = hold1(c, 0, 5, 5, 0, 10);
    assert_same(p, &fp);
    assert_int_equal(fcpus(c, 0, 0, 1), 1);
    /* ids from before the copy work in both */
    assert_int_equal(plan_release(c, a), TS_OK);
    assert_int_equal(fcpus(c, 0, 20, 21), 8);
    assert_int_equal(fcpus(p, 0, 20, 21), 6);
    assert_int_equal(plan_release(p, x), TS_ENOENT); /* the copy's own id */
    /* the original changes alone */
    fingerprint(c, &fc);
    assert_int_equal(plan_release(p, b), TS_OK);
    hold1(p, 2, 8, 8, 0, 5);
    assert_same(c, &fc);
    assert_int_equal(plan_release(c, b), TS_OK);

    /* reset: empty, old ids refused, usable again */
    plan_reset(c);
    assert_int_equal(fcpus(c, 2, 0, F), 8);
    assert_int_equal(plan_next_release(c, 0), F);
    assert_int_equal(plan_release(c, x), TS_ENOENT);
    plan_hold_id y = hold1(c, 1, 1, 1, 0, 5);
    assert_int_equal(fcpus(c, 1, 0, 5), 7);
    assert_int_equal(plan_next_release(c, 0), 5);
    assert_int_equal(plan_release(c, y), TS_OK);
    plan_destroy(c);
    plan_destroy(p);
}

/* ---- randomized comparison with a naive model ---- */

#define RN 10
#define RMAX 400 /* live holds at most */

struct rhold {
    plan_hold_id id;
    uint32_t nodes[3], cpus[3];
    uint64_t mem[3];
    size_t n;
    int64_t start, end;
};

struct model {
    struct plan_node caps[RN];
    struct rhold h[RMAX];
    size_t nh;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* Use of a node at instant t under the model. */
static void model_used(const struct model *m, uint32_t node, int64_t t, uint64_t *c,
                       uint64_t *mem)
{
    *c = *mem = 0;
    for (size_t i = 0; i < m->nh; i++) {
        const struct rhold *h = &m->h[i];
        if (h->start > t || h->end <= t)
            continue;
        for (size_t j = 0; j < h->n; j++)
            if (h->nodes[j] == node) {
                *c += h->cpus[j];
                *mem += h->mem[j];
            }
    }
}

/* The least free of [a, b): use only grows where a hold starts. */
static void model_free(const struct model *m, uint32_t node, int64_t a, int64_t b,
                       uint32_t *fc, uint64_t *fm)
{
    uint64_t uc, um, c, mm;
    model_used(m, node, a, &uc, &um);
    for (size_t i = 0; i < m->nh; i++) {
        if (m->h[i].start <= a || m->h[i].start >= b)
            continue;
        model_used(m, node, m->h[i].start, &c, &mm);
        uc = c > uc ? c : uc;
        um = mm > um ? mm : um;
    }
    *fc = uc < m->caps[node].cpus ? (uint32_t)(m->caps[node].cpus - uc) : 0;
    *fm = um < m->caps[node].mem_mb ? m->caps[node].mem_mb - um : 0;
}

static int64_t model_next_release(const struct model *m, int64_t after)
{
    int64_t best = F;
    for (size_t i = 0; i < m->nh; i++)
        if (m->h[i].end > after && m->h[i].end < best)
            best = m->h[i].end;
    return best;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* from, then every hold end after it rounded up to from + k * res, up to the horizon; the
 * first at which the need fits every... as plan_earliest promises. -1: none. */
static int64_t model_earliest(const struct model *m, const struct need *nd, int64_t from,
                              int64_t d, int64_t horizon, int64_t res, const uint32_t *nodes)
{
    static int64_t cand[RMAX + 1];
    size_t nc = 0;
    cand[nc++] = from;
    for (size_t i = 0; i < m->nh; i++) {
        int64_t e = m->h[i].end;
        if (e == F || e <= from)
            continue;
        int64_t off = ((e - from) + res - 1) / res * res;
        if (off <= horizon)
            cand[nc++] = from + off;
    }
    qsort(cand, nc, sizeof(*cand), cmp64);
    uint32_t c[RN];
    uint64_t mm[RN];
    for (size_t i = 0; i < nc; i++) {
        if (i && cand[i] == cand[i - 1])
            continue;
        int64_t end = d == F ? F : cand[i] + d;
        for (size_t k = 0; k < nd->n; k++)
            model_free(m, nodes ? nodes[k] : (uint32_t)k, cand[i], end, &c[k], &mm[k]);
        if (need_fits(nd, c, mm))
            return cand[i];
    }
    return -1;
}

static void random_hold(struct plan *p, struct model *m)
{
    struct rhold *h = &m->h[m->nh];
    h->n = 1 + rnd(3);
    for (size_t j = 0; j < h->n; j++) {
        h->nodes[j] = (uint32_t)rnd(RN);
        h->cpus[j] = (uint32_t)rnd(9);
        h->mem[j] = rnd(5) * 250;
    }
    /* coarse times, so that starts and ends often coincide */
    h->start = (int64_t)rnd(60) * 5 - 50;
    h->end = rnd(20) ? h->start + 1 + (int64_t)rnd(40) * (rnd(2) ? 5 : 1) : F;
    assert_int_equal(plan_hold(p, h->nodes, h->cpus, h->mem, h->n, h->start, h->end, &h->id),
                     TS_OK);
    m->nh++;
}

static void random_release(struct plan *p, struct model *m)
{
    size_t i = rnd(m->nh);
    assert_int_equal(plan_release(p, m->h[i].id), TS_OK);
    m->h[i] = m->h[--m->nh];
}

static void check_free(const struct plan *p, const struct model *m)
{
    int64_t a = (int64_t)rnd(400) - 80;
    int64_t b = rnd(10) ? a + 1 + (int64_t)rnd(120) : F;
    uint32_t nodes[RN], c[RN], wc;
    uint64_t mm[RN], wm;
    size_t n = 0;
    for (uint32_t k = 0; k < RN; k++)
        if (rnd(2))
            nodes[n++] = k;
    plan_free_during(p, a, b, nodes, n, c, mm);
    for (size_t k = 0; k < n; k++) {
        model_free(m, nodes[k], a, b, &wc, &wm);
        assert_int_equal(c[k], wc);
        assert_int_equal(mm[k], wm);
    }
    assert_int_equal(plan_next_release(p, a), model_next_release(m, a));
}

static void check_earliest(const struct plan *p, const struct model *m)
{
    uint32_t nodes[RN];
    size_t n = 0;
    int all = rnd(3) == 0;
    for (uint32_t k = 0; k < RN; k++)
        if (all || rnd(2))
            nodes[n++] = k;
    if (!n)
        nodes[n++] = (uint32_t)rnd(RN);
    struct need nd = want((uint32_t)rnd(12), rnd(5) * 300, 1 + rnd(n), n);
    int64_t from = (int64_t)rnd(300) - 60;
    int64_t d = rnd(15) ? 1 + (int64_t)rnd(80) : F;
    int64_t horizon = (int64_t)rnd(300);
    int64_t res = rnd(2) ? 1 : 1 + (int64_t)rnd(30);
    const uint32_t *set = all ? NULL : nodes;
    int64_t got = earliest(p, &nd, from, d, horizon, res, set);
    assert_int_equal(got, model_earliest(m, &nd, from, d, horizon, res, set));
}

static void test_random_against_model(void **state)
{
    (void)state;
    static struct model m;
    struct plan *p = NULL, *c = NULL;
    memset(&m, 0, sizeof(m));
    for (size_t k = 0; k < RN; k++)
        m.caps[k] = (struct plan_node){(uint32_t)(4 + rnd(20)), 500 + rnd(4) * 1000};
    assert_int_equal(plan_create(m.caps, RN, &p), TS_OK);
    size_t holds = 0, queries = 0;
    for (int round = 0; round < 6000; round++) {
        /* grow to a few hundred live holds, shrink, grow again */
        int grow_phase = (round / 1500) % 2 == 0;
        if (m.nh < RMAX && (m.nh == 0 || rnd(10) < (grow_phase ? 7u : 3u))) {
            random_hold(p, &m);
            holds++;
        } else if (m.nh) {
            random_release(p, &m);
        }
        if (round % 3 == 0) {
            check_free(p, &m);
            queries++;
        }
        if (round % 7 == 0) {
            check_earliest(p, &m);
            queries++;
        }
        /* now and then carry on in a copy, which must behave the same */
        if (round % 1000 == 999) {
            assert_int_equal(plan_clone(p, &c), TS_OK);
            plan_destroy(p);
            p = c;
        }
    }
    print_message("%zu holds, %zu queries\n", holds, queries);
    assert_true(holds >= 3000);
    /* releasing everything leaves an empty plan */
    while (m.nh)
        random_release(p, &m);
    for (uint32_t k = 0; k < RN; k++)
        assert_int_equal(fcpus(p, k, -1000, F), m.caps[k].cpus);
    assert_int_equal(plan_next_release(p, INT64_MIN), F);
    plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_hold_and_release),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_bad_holds),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_unknown_end),
        cmocka_unit_test(test_interval_ends),
        cmocka_unit_test(test_next_release),
        cmocka_unit_test(test_earliest_now),
        cmocka_unit_test(test_earliest_after_one),
        cmocka_unit_test(test_earliest_needs_whole_window),
        cmocka_unit_test(test_earliest_two_releases),
        cmocka_unit_test(test_earliest_horizon),
        cmocka_unit_test(test_earliest_resolution),
        cmocka_unit_test(test_resolution_misses_short_gap),
        cmocka_unit_test(test_cpus_and_memory_apart),
        cmocka_unit_test(test_node_subsets),
        cmocka_unit_test(test_earliest_bad_arguments),
        cmocka_unit_test(test_clamping),
        cmocka_unit_test(test_clone_and_reset),
        cmocka_unit_test(test_random_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
