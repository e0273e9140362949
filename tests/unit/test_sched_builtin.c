/* sched/builtin's decisions on hand-made views, with the real select/consumable plugin:
 * priority order, never jumping the queue within a partition, partitions independent,
 * het units all or nothing, units that can never run blocking nobody. */
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

extern const struct sched_ops tessera_plugin; /* the static twin of sched/builtin */

static struct plugin *select_plugin;
static const struct select_ops *sel;

#define NODES 4
static struct select_node nodes[NODES];
static const uint32_t all_nodes[NODES] = {0, 1, 2, 3};
static const uint32_t first_two[2] = {0, 1};
static const uint32_t last_two[2] = {2, 3};

static void reset_nodes(void)
{
    static const char *const names[NODES] = {"n1", "n2", "n3", "n4"};
    for (int i = 0; i < NODES; i++)
        nodes[i] = (struct select_node){.name = names[i], .cpus = 4, .mem_mb = 1000,
                                        .features = "", .available = 1};
}

static struct select_request req(const uint32_t *eligible, size_t n, uint32_t nodes_min,
                                 uint32_t ntasks, int exclusive)
{
    return (struct select_request){.eligible = eligible, .neligible = n, .min_nodes = nodes_min,
                                   .ntasks = ntasks, .cpus_per_task = 1, .exclusive = exclusive};
}

/* Storage for up to 8 units of up to 2 components. */
struct fixture {
    struct select_request reqs[8][2];
    uint32_t parts[8][2];
    struct sched_unit units[8];
    struct sched_decision decisions[8];
    struct select_alloc allocs[8][2];
    struct select_node_alloc slots[8][2][NODES];
    size_t n;
};

static void add_unit(struct fixture *f, uint32_t prio, size_t ncomp, const struct select_request *r,
                     const uint32_t *part)
{
    size_t u = f->n++;
    for (size_t i = 0; i < ncomp; i++) {
        f->reqs[u][i] = r[i];
        f->parts[u][i] = part[i];
        f->allocs[u][i].nodes = f->slots[u][i];
    }
    f->units[u] = (struct sched_unit){.id = (uint32_t)(100 + u), .priority = prio,
                                      .ncomponents = ncomp, .reqs = f->reqs[u],
                                      .partitions = f->parts[u]};
    f->decisions[u].allocs = f->allocs[u];
}

static size_t run(struct fixture *f, size_t npartitions)
{
    struct sched_view view = {.now = 1000, .nodes = nodes, .nnodes = NODES,
                              .npartitions = npartitions, .units = f->units, .nunits = f->n,
                              .select = sel};
    void *st = NULL;
    assert_int_equal(tessera_plugin.create(NULL, &st, NULL, 0), TS_OK);
    assert_int_equal(tessera_plugin.schedule(st, &view, f->decisions), SCHED_DONE);
    tessera_plugin.destroy(st);
    size_t started = 0;
    for (size_t i = 0; i < f->n; i++)
        started += f->decisions[i].verdict == SCHED_START;
    return started;
}

static void test_queue_order_in_a_partition(void **state)
{
    reset_nodes();
    struct fixture f = {0};
    uint32_t p0[1] = {0};
    struct select_request small = req(all_nodes, NODES, 1, 2, 0);
    struct select_request wide = req(all_nodes, NODES, 4, 4, 1);
    nodes[3].alloc_cpus = 4; /* another job holds n4: the wide job cannot start */
    nodes[3].jobs = 1;
    add_unit(&f, 30, 1, &small, p0);
    add_unit(&f, 20, 1, &wide, p0);
    add_unit(&f, 10, 1, &small, p0); /* would fit, but must not jump the wide job */
    assert_int_equal(run(&f, 1), 1);
    assert_int_equal(f.decisions[0].verdict, SCHED_START);
    assert_int_equal(f.decisions[1].verdict, SCHED_RESOURCES);
    assert_int_equal(f.decisions[2].verdict, SCHED_PRIORITY);
    /* what the first took is seen by the rest */
    assert_int_equal(f.allocs[0][0].nnodes, 1);
    assert_int_equal(nodes[f.allocs[0][0].nodes[0].node].alloc_cpus, 2);
}

/* A greedy unit (strict_fifo: false) that waits lets the later small one start. */
static void test_greedy_unit(void **state)
{
    reset_nodes();
    struct fixture f = {0};
    uint32_t p0[1] = {0};
    struct select_request small = req(all_nodes, NODES, 1, 2, 0);
    struct select_request wide = req(all_nodes, NODES, 4, 4, 1);
    nodes[3].alloc_cpus = 4;
    nodes[3].jobs = 1;
    add_unit(&f, 20, 1, &wide, p0);
    f.units[0].greedy = 1;
    add_unit(&f, 10, 1, &small, p0);
    assert_int_equal(run(&f, 1), 1);
    assert_int_equal(f.decisions[0].verdict, SCHED_RESOURCES);
    assert_int_equal(f.decisions[1].verdict, SCHED_START);
}

static void test_partitions_are_independent(void **state)
{
    reset_nodes();
    struct fixture f = {0};
    uint32_t pa[1] = {0}, pb[1] = {1};
    struct select_request both_a = req(first_two, 2, 2, 8, 0);
    struct select_request big_a = req(first_two, 2, 2, 8, 0);
    struct select_request one_b = req(last_two, 2, 1, 1, 0);
    add_unit(&f, 30, 1, &both_a, pa);
    add_unit(&f, 20, 1, &big_a, pa); /* partition a is full now: it waits */
    add_unit(&f, 10, 1, &one_b, pb); /* partition b goes on */
    assert_int_equal(run(&f, 2), 2);
    assert_int_equal(f.decisions[0].verdict, SCHED_START);
    assert_int_equal(f.decisions[1].verdict, SCHED_RESOURCES);
    assert_int_equal(f.decisions[2].verdict, SCHED_START);
}

static void test_het_all_or_nothing(void **state)
{
    reset_nodes();
    nodes[1].alloc_cpus = nodes[2].alloc_cpus = nodes[3].alloc_cpus = 4;
    nodes[1].jobs = nodes[2].jobs = nodes[3].jobs = 1;
    struct fixture f = {0};
    uint32_t parts[2] = {0, 0};
    struct select_request het[2] = {req(all_nodes, NODES, 1, 1, 0), req(all_nodes, NODES, 2, 2, 0)};
    add_unit(&f, 10, 2, het, parts);
    assert_int_equal(run(&f, 1), 0);
    assert_int_equal(f.decisions[0].verdict, SCHED_RESOURCES);
    assert_int_equal(nodes[0].alloc_cpus, 0); /* component 0 did not take n1 */

    /* with n2 free, both start together, and may share n1 */
    reset_nodes();
    nodes[2].alloc_cpus = nodes[3].alloc_cpus = 4;
    nodes[2].jobs = nodes[3].jobs = 1;
    struct fixture g = {0};
    add_unit(&g, 10, 2, het, parts);
    assert_int_equal(run(&g, 1), 1);
    assert_int_equal(g.decisions[0].verdict, SCHED_START);
    assert_int_equal(g.allocs[0][0].nnodes, 1);
    assert_int_equal(g.allocs[0][1].nnodes, 2);
    assert_int_equal(nodes[0].alloc_cpus + nodes[1].alloc_cpus, 3);
}

static void test_never_blocks_nobody(void **state)
{
    reset_nodes();
    struct fixture f = {0};
    uint32_t p0[1] = {0};
    struct select_request huge = req(all_nodes, NODES, 1, 100, 0); /* 16 CPUs in all */
    struct select_request small = req(all_nodes, NODES, 1, 1, 0);
    add_unit(&f, 20, 1, &huge, p0);
    add_unit(&f, 10, 1, &small, p0);
    assert_int_equal(run(&f, 1), 1);
    assert_int_equal(f.decisions[0].verdict, SCHED_NEVER);
    assert_int_equal(f.decisions[1].verdict, SCHED_START);
}

static void test_down_nodes(void **state)
{
    reset_nodes();
    for (int i = 0; i < NODES; i++)
        nodes[i].available = 0;
    struct fixture f = {0};
    uint32_t p0[1] = {0};
    struct select_request one = req(all_nodes, NODES, 1, 1, 0);
    add_unit(&f, 10, 1, &one, p0);
    add_unit(&f, 5, 1, &one, p0);
    assert_int_equal(run(&f, 1), 0);
    /* the nodes may come back: waiting for resources, not "never" */
    assert_int_equal(f.decisions[0].verdict, SCHED_RESOURCES);
    assert_int_equal(f.decisions[1].verdict, SCHED_PRIORITY);
}

/* Standing activation verdicts: fail, hold (nothing held), reserve (its kept resources
 * taken), block (nothing after it starts, also while it is asked again). */
static void test_activation_verdicts(void **state)
{
    reset_nodes();
    struct fixture f = {0};
    uint32_t p0[1] = {0};
    struct select_request one = req(all_nodes, NODES, 1, 4, 0);
    struct select_node_alloc kept_n1 = {.node = 0, .cpus = 4, .tasks = 4};
    struct select_alloc kept = {.nodes = &kept_n1, .nnodes = 1};
    add_unit(&f, 50, 1, &one, p0);
    add_unit(&f, 40, 1, &one, p0);
    add_unit(&f, 30, 1, &one, p0);
    add_unit(&f, 20, 1, &one, p0);
    f.units[0].activation = SCHED_ACT_FAIL;
    f.units[1].activation = SCHED_ACT_HOLD;
    f.units[2].activation = SCHED_ACT_RESERVE;
    f.units[2].kept = &kept;
    assert_int_equal(run(&f, 1), 1);
    assert_int_equal(f.decisions[0].verdict, SCHED_FAIL);
    assert_int_equal(f.decisions[1].verdict, SCHED_HOLD);
    assert_int_equal(f.decisions[2].verdict, SCHED_RESERVE);
    assert_int_equal(f.decisions[3].verdict, SCHED_START);
    assert_int_not_equal(f.allocs[3][0].nodes[0].node, 0); /* n1 is kept */

    reset_nodes();
    struct fixture g = {0};
    add_unit(&g, 50, 1, &one, p0);
    add_unit(&g, 40, 1, &one, p0);
    g.units[0].activation = SCHED_ACT_BLOCK;
    assert_int_equal(run(&g, 1), 0);
    assert_int_equal(g.decisions[0].verdict, SCHED_BLOCK);
    assert_int_equal(g.decisions[1].verdict, SCHED_PRIORITY);
    reset_nodes();
    g.units[0].retry = 1; /* asked again: decided as usual, still blocking */
    assert_int_equal(run(&g, 1), 1);
    assert_int_equal(g.decisions[0].verdict, SCHED_START);
    assert_int_equal(g.decisions[1].verdict, SCHED_PRIORITY);
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
        cmocka_unit_test(test_queue_order_in_a_partition),
        cmocka_unit_test(test_greedy_unit),
        cmocka_unit_test(test_partitions_are_independent),
        cmocka_unit_test(test_het_all_or_nothing),
        cmocka_unit_test(test_never_blocks_nobody),
        cmocka_unit_test(test_down_nodes),
        cmocka_unit_test(test_activation_verdicts),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
