/* Unit tests for a pending unit's order keys from its job records
 * (common/sched/unitkeys.c): one component, a het unit summed, saturation, memory per CPU
 * and per node, the partition's tier, the wait from a clock that starts at 0, and the
 * fair-share shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/conf/conf.h"
#include "common/sched/fairshare.h"
#include "common/sched/unitkeys.h"
#include "common/util/errors.h"

#include <string.h>

struct rec {
    Tessera__JobRecord r;
    Tessera__JobDesc d;
};

static const Tessera__JobRecord *make(struct rec *x, uint32_t id, uint32_t cpus,
                                      int64_t limit, uint32_t priority)
{
    tessera__job_desc__init(&x->d);
    tessera__job_record__init(&x->r);
    x->r.desc = &x->d;
    x->r.job_id = id;
    x->r.min_cpus = cpus;
    x->r.min_nodes = 1;
    x->r.time_limit = limit;
    x->r.priority = priority;
    return &x->r;
}

static void test_one_component(void **state)
{
    (void)state;
    struct rec x;
    const Tessera__JobRecord *r = make(&x, 7, 4, 100, 50);
    x.r.eligible_time = 1000;
    struct policy_unit u;
    unitkeys_fill(&r, 1, NULL, 1600, &u);
    assert_int_equal(u.id, 7);
    assert_int_equal(u.priority, 50);
    assert_int_equal(u.tier, 0);
    assert_string_equal(u.partition, "");
    assert_int_equal(u.cput, 400);
    assert_int_equal(u.walltime, 100);
    assert_int_equal(u.mem_mb, 0);
    assert_int_equal(u.waited, 600);
    assert_int_equal(u.fs_entity, -1);
    assert_null(u.owner);
    /* not yet at its eligible time: no wait */
    unitkeys_fill(&r, 1, NULL, 900, &u);
    assert_int_equal(u.waited, 0);
    /* a clock that starts at 0 (the simulator's) */
    x.r.eligible_time = 0;
    unitkeys_fill(&r, 1, NULL, 30, &u);
    assert_int_equal(u.waited, 30);
}

static void test_het_unit(void **state)
{
    (void)state;
    struct rec x, y;
    const Tessera__JobRecord *unit[2] = {make(&x, 7, 2, 100, 10), make(&y, 8, 3, 300, 90)};
    x.d.has_mem_per_cpu_mb = 1;
    x.d.mem_per_cpu_mb = 100;          /* x 2 CPUs */
    y.d.has_mem_per_node_mb = 1;
    y.d.mem_per_node_mb = 1000;
    y.r.min_nodes = 2;                 /* x 2 nodes */
    struct policy_unit u;
    unitkeys_fill(unit, 2, NULL, 0, &u);
    assert_int_equal(u.id, 7);
    assert_int_equal(u.priority, 90);  /* the highest of the components' */
    assert_int_equal(u.cput, 2 * 100 + 3 * 300);
    assert_int_equal(u.walltime, 300); /* the longest */
    assert_int_equal(u.mem_mb, 200 + 2000);
}

static void test_unlimited_and_saturated(void **state)
{
    (void)state;
    struct rec x, y;
    const Tessera__JobRecord *r = make(&x, 1, 4, -1, 0);
    struct policy_unit u;
    unitkeys_fill(&r, 1, NULL, 0, &u);
    assert_true(u.cput == INT64_MAX);
    assert_true(u.walltime == INT64_MAX);
    /* a product past INT64_MAX and a sum past it stay there */
    const Tessera__JobRecord *unit[2] = {make(&x, 1, 4, INT64_MAX / 2, 0),
                                         make(&y, 2, 1, INT64_MAX - 1, 0)};
    unitkeys_fill(unit, 2, NULL, 0, &u);
    assert_true(u.cput == INT64_MAX);
    /* no CPUs asked is one */
    r = make(&x, 1, 0, 60, 0);
    unitkeys_fill(&r, 1, NULL, 0, &u);
    assert_int_equal(u.cput, 60);
}

static void test_partition_tier(void **state)
{
    (void)state;
    struct conf *c = NULL;
    char err[256];
    if (conf_parse_string("PartitionName=hi PriorityTier=5\nPartitionName=lo\n", "t.conf", 0,
                          &c, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    struct rec x;
    const Tessera__JobRecord *r = make(&x, 1, 1, 60, 0);
    x.d.partition = (char *)"hi";
    struct policy_unit u;
    unitkeys_fill(&r, 1, c, 0, &u);
    assert_int_equal(u.tier, 5);
    assert_string_equal(u.partition, "hi");
    x.d.partition = (char *)"gone";
    unitkeys_fill(&r, 1, c, 0, &u);
    assert_int_equal(u.tier, 0);
    assert_string_equal(u.partition, "gone");
    conf_free(c);
}

static void test_shares(void **state)
{
    (void)state;
    struct fairshare *fs;
    char err[256];
    if (fairshare_parse("a 10 root 30\nb 11 root 10\n", "rg", 0, &fs, err, sizeof(err)) !=
        TS_OK)
        fail_msg("%s", err);
    struct policy_unit u[2] = {{.fs_entity = fairshare_find(fs, "a")},
                               {.fs_entity = fairshare_find(fs, "b")}};
    unitkeys_set_shares(fs, u, 2);
    assert_true(u[0].fs_norm > 0.749 && u[0].fs_norm < 0.751);
    assert_true(u[1].fs_norm > 0.249 && u[1].fs_norm < 0.251);
    fairshare_destroy(fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_component),
        cmocka_unit_test(test_het_unit),
        cmocka_unit_test(test_unlimited_and_saturated),
        cmocka_unit_test(test_partition_tier),
        cmocka_unit_test(test_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
