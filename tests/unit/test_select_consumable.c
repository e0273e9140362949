/* select/consumable: nodes shared by CPUs and memory, node counts, task layout, memory
 * options, features, -w, eligible lists, --exclusive, down nodes, weights, BUSY versus NEVER,
 * heterogeneous jobs placed jointly (docs/02-sched.md §5.1.4, backtracking), determinism,
 * and the .so loaded as a plugin. */
#include "common/sched/select.h"
#include "common/util/errors.h"
#include "common/util/plugin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* the static twin's table */
extern const struct select_ops tessera_plugin;

#define MAXN 64

/* A cluster, the nodes every request may use, and room for one placement per component. */
struct fixture {
    struct select_node nodes[MAXN];
    struct select_view view;
    uint32_t all[MAXN];
    struct select_node_alloc buf[4][MAXN];
    struct select_alloc out[4];
};

static struct fixture F;

static void cluster(size_t n, uint32_t cpus, uint64_t mem)
{
    static char names[MAXN][24];
    memset(&F, 0, sizeof(F));
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "n%zu", i);
        F.nodes[i] = (struct select_node){.name = names[i], .cpus = cpus, .mem_mb = mem,
                                          .features = "", .weight = 1, .available = 1};
        F.all[i] = (uint32_t)i;
    }
    F.view = (struct select_view){.nodes = F.nodes, .nnodes = n};
    for (size_t i = 0; i < 4; i++)
        F.out[i].nodes = F.buf[i];
}

/* One task of one CPU anywhere in the cluster. */
static struct select_request req(void)
{
    return (struct select_request){.eligible = F.all, .neligible = F.view.nnodes,
                                   .min_nodes = 1, .ntasks = 1, .cpus_per_task = 1};
}

static enum select_result place(const struct select_request *r)
{
    return tessera_plugin.place(&F.view, r, &F.out[0]);
}

/* "node/tasks/cpus/mem ..." of a placement, for readable comparisons. */
static const char *fmt(const struct select_alloc *o)
{
    static char s[1024];
    size_t len = 0;
    s[0] = '\0';
    for (size_t i = 0; i < o->nnodes; i++)
        len += (size_t)snprintf(s + len, sizeof(s) - len, "%s%u/%u/%u/%llu", i ? " " : "",
                                o->nodes[i].node, o->nodes[i].tasks, o->nodes[i].cpus,
                                (unsigned long long)o->nodes[i].mem_mb);
    return s;
}

/* Place r and expect it at want ("node/tasks/cpus/mem ..."). */
static void expect_at(const struct select_request *r, const char *want)
{
    assert_int_equal(place(r), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), want);
}

static void expect_result(const struct select_request *r, enum select_result want)
{
    assert_int_equal(place(r), want);
    assert_int_equal(F.out[0].nnodes, 0);
}

/* What the controller does once a placement is taken: the nodes now hold it. */
static void commit(const struct select_alloc *o, int exclusive)
{
    for (size_t i = 0; i < o->nnodes; i++) {
        struct select_node *n = &F.nodes[o->nodes[i].node];
        n->alloc_cpus += o->nodes[i].cpus;
        n->alloc_mem_mb += o->nodes[i].mem_mb;
        n->jobs++;
        n->exclusive |= exclusive;
    }
}

static void test_share_node(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.ntasks = 2;
    r.mem_per_node_mb = 500;
    expect_at(&r, "0/2/2/500");
    commit(&F.out[0], 0);
    expect_at(&r, "0/2/2/500"); /* two CPUs and 1500 MB left on n0 */
    commit(&F.out[0], 0);
    assert_int_equal(F.nodes[0].alloc_cpus, 4);
    assert_int_equal(F.nodes[0].alloc_mem_mb, 1000);
    expect_at(&r, "1/2/2/500"); /* n0 is out of CPUs */

    /* out of memory with CPUs left: the next node */
    cluster(4, 4, 2000);
    F.nodes[0].alloc_cpus = 1;
    F.nodes[0].alloc_mem_mb = 1800;
    F.nodes[0].jobs = 1;
    r = req();
    r.mem_per_node_mb = 500;
    expect_at(&r, "1/1/1/500");
    r.mem_per_node_mb = 200;
    expect_at(&r, "0/1/1/200");

    /* no memory asked: not tracked, jobs share by CPUs alone */
    cluster(1, 4, 2000);
    r = req();
    r.ntasks = 2;
    expect_at(&r, "0/2/2/0");
    commit(&F.out[0], 0);
    expect_at(&r, "0/2/2/0");
    commit(&F.out[0], 0);
    expect_result(&r, SELECT_BUSY);
}

/* Node counts and tasks per node as Slurm 22.05 gives them on 4 nodes of 4 CPUs (the
 * reference cluster: sbatch ... --wrap='srun -l printenv SLURMD_NODENAME'). */
struct layout_case {
    uint32_t min_nodes, max_nodes, ntasks, cpt;
    int exclusive;
    const char *want;
};

static void test_layout(void **state)
{
    static const struct layout_case cases[] = {
        {2, 2, 3, 1, 0, "0/2/2/0 1/1/1/0"},
        {2, 2, 4, 1, 0, "0/3/3/0 1/1/1/0"},
        {2, 2, 5, 1, 0, "0/4/4/0 1/1/1/0"},
        {3, 3, 4, 1, 0, "0/2/2/0 1/1/1/0 2/1/1/0"},
        {3, 3, 6, 1, 0, "0/4/4/0 1/1/1/0 2/1/1/0"},
        {1, 3, 6, 1, 0, "0/3/3/0 1/2/2/0 2/1/1/0"},
        {2, 3, 7, 1, 0, "0/3/3/0 1/3/3/0 2/1/1/0"},
        {2, 3, 4, 1, 0, "0/2/2/0 1/1/1/0 2/1/1/0"},
        {1, 3, 3, 1, 0, "0/1/1/0 1/1/1/0 2/1/1/0"},
        {1, 3, 2, 1, 0, "0/1/1/0 1/1/1/0"},
        {1, 0, 5, 1, 0, "0/4/4/0 1/1/1/0"},
        {1, 0, 16, 1, 0, "0/4/4/0 1/4/4/0 2/4/4/0 3/4/4/0"},
        {2, 2, 4, 2, 0, "0/2/4/0 1/2/4/0"},
        {1, 2, 3, 2, 0, "0/2/4/0 1/1/2/0"},
        {2, 2, 4, 1, 1, "0/2/4/2000 1/2/4/2000"},
        {2, 2, 5, 1, 1, "0/3/4/2000 1/2/4/2000"},
    };
    cluster(4, 4, 2000);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct select_request r = req();
        r.min_nodes = cases[i].min_nodes;
        r.max_nodes = cases[i].max_nodes;
        r.ntasks = cases[i].ntasks;
        r.cpus_per_task = cases[i].cpt;
        r.exclusive = cases[i].exclusive;
        expect_at(&r, cases[i].want);
    }
    struct select_request r = req();
    r.ntasks = 17;
    expect_result(&r, SELECT_NEVER);
    r.ntasks = 4;
    r.min_nodes = 5;
    expect_result(&r, SELECT_NEVER); /* more nodes than the partition has */
}

static void test_node_range(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.min_nodes = 1;
    r.max_nodes = 3;
    r.ntasks = 2;
    expect_at(&r, "0/1/1/0 1/1/1/0"); /* as many nodes as the range and tasks allow */
    r.max_nodes = 0;
    expect_at(&r, "0/2/2/0"); /* no maximum: as few as hold the tasks */
    r.max_nodes = 3;
    r.ntasks = 6;
    expect_at(&r, "0/3/3/0 1/2/2/0 2/1/1/0");
    F.nodes[2].available = F.nodes[3].available = 0;
    expect_at(&r, "0/4/4/0 1/2/2/0"); /* fewer when no more are usable now */
    F.nodes[2].available = F.nodes[3].available = 1;

    /* the preferred nodes are too small for -N1: a larger one is taken instead */
    F.nodes[0].alloc_cpus = F.nodes[1].alloc_cpus = 2;
    F.nodes[0].jobs = F.nodes[1].jobs = 1;
    r.min_nodes = r.max_nodes = 1;
    r.ntasks = 4;
    expect_at(&r, "2/4/4/0");
    r.max_nodes = 2;
    r.ntasks = 6;
    expect_at(&r, "2/4/4/0 3/2/2/0");
    r.ntasks = 8;
    expect_at(&r, "2/4/4/0 3/4/4/0");
    F.nodes[2].alloc_cpus = 1;
    F.nodes[2].jobs = 1;
    expect_result(&r, SELECT_BUSY); /* fits two empty nodes, not now */
    r.ntasks = 9;
    expect_result(&r, SELECT_NEVER); /* two nodes of 4 CPUs never hold 9 tasks */
    r.min_nodes = r.max_nodes = 1;
    r.ntasks = 5;
    expect_result(&r, SELECT_NEVER);
    r.min_nodes = 3;
    r.max_nodes = 2;
    expect_result(&r, SELECT_NEVER);
}

static void test_cpus_per_task(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.ntasks = 2;
    r.cpus_per_task = 3;
    expect_at(&r, "0/1/3/0 1/1/3/0");
    r.ntasks = 3;
    r.cpus_per_task = 2;
    expect_at(&r, "0/2/4/0 1/1/2/0");
    r.ntasks = 1;
    r.cpus_per_task = 5;
    expect_result(&r, SELECT_NEVER); /* larger than any node */
    r.cpus_per_task = 4;
    F.nodes[0].alloc_cpus = F.nodes[1].alloc_cpus = F.nodes[2].alloc_cpus = 1;
    expect_at(&r, "3/1/4/0");
    F.nodes[3].alloc_cpus = 1;
    expect_result(&r, SELECT_BUSY);
}

static void test_ntasks_per_node(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.ntasks = 4;
    r.ntasks_per_node = 2;
    expect_at(&r, "0/2/2/0 1/2/2/0");
    r.ntasks = 3;
    expect_at(&r, "0/2/2/0 1/1/1/0");
    r.ntasks = 5;
    r.ntasks_per_node = 1;
    expect_result(&r, SELECT_NEVER);
    r.ntasks = 4;
    r.ntasks_per_node = 2;
    r.max_nodes = 1;
    expect_result(&r, SELECT_NEVER);
}

static void test_memory(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.ntasks = 3;
    r.mem_per_cpu_mb = 300;
    expect_at(&r, "0/3/3/900");
    r.ntasks = 2;
    r.cpus_per_task = 2;
    expect_at(&r, "0/2/4/1200");
    r.cpus_per_task = 1;
    r.ntasks = 4;
    r.mem_per_cpu_mb = 600; /* three tasks' worth of memory per node */
    expect_at(&r, "0/3/3/1800 1/1/1/600");
    r.mem_per_cpu_mb = 2001;
    expect_result(&r, SELECT_NEVER);
    r.mem_per_cpu_mb = 0;
    r.mem_per_node_mb = 2001;
    expect_result(&r, SELECT_NEVER);
    r.mem_per_node_mb = 2000;
    expect_at(&r, "0/4/4/2000");

    /* --mem=0: the whole memory, which must all be free */
    r = req();
    r.mem_whole_node = 1;
    expect_at(&r, "0/1/1/2000");
    F.nodes[0].alloc_cpus = 1;
    F.nodes[0].jobs = 1; /* a job without a memory request: no memory held */
    expect_at(&r, "0/1/1/2000");
    F.nodes[0].alloc_mem_mb = 100;
    expect_at(&r, "1/1/1/2000");
    for (size_t i = 1; i < 4; i++)
        F.nodes[i].alloc_mem_mb = 1;
    expect_result(&r, SELECT_BUSY);
}

static void test_features(void **state)
{
    cluster(4, 4, 2000);
    F.nodes[0].features = "a";
    F.nodes[1].features = "a,b";
    F.nodes[2].features = "b";
    F.nodes[3].features = "c";
    struct select_request r = req();
    r.constraint = "a&b";
    expect_at(&r, "1/1/1/0");
    r.constraint = "a|b";
    r.ntasks = r.min_nodes = 3;
    expect_at(&r, "0/1/1/0 1/1/1/0 2/1/1/0");
    r.ntasks = r.min_nodes = 4;
    expect_result(&r, SELECT_NEVER); /* three nodes have a or b */
    r.ntasks = r.min_nodes = 1;
    r.constraint = "d";
    expect_result(&r, SELECT_NEVER);
    r.constraint = "a&b";
    r.min_nodes = r.ntasks = 2;
    expect_result(&r, SELECT_NEVER);
    r.constraint = "";
    expect_at(&r, "0/1/1/0 1/1/1/0");
}

static void test_required(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    uint32_t w[2] = {2, 0};
    r.required = w;
    r.nrequired = 1;
    expect_at(&r, "2/1/1/0"); /* not n0, though it is preferred */
    r.ntasks = 5; /* the required node is chosen first and filled first */
    expect_at(&r, "0/1/1/0 2/4/4/0");
    r.nrequired = 2; /* not in ascending order */
    r.ntasks = 2;
    expect_at(&r, "0/1/1/0 2/1/1/0");
    r.ntasks = 1;
    expect_result(&r, SELECT_NEVER); /* two nodes cannot run one task */
    r.ntasks = 4;
    r.max_nodes = 1;
    expect_result(&r, SELECT_NEVER);

    r = req();
    r.required = w;
    r.nrequired = 1;
    F.nodes[2].alloc_cpus = 4;
    F.nodes[2].jobs = 1;
    expect_result(&r, SELECT_BUSY); /* full now */
    F.nodes[2].alloc_cpus = 0;
    F.nodes[2].jobs = 0;
    F.nodes[2].available = 0;
    expect_result(&r, SELECT_BUSY); /* drained: may come back */
    F.nodes[2].available = 1;
    F.nodes[2].features = "x";
    r.constraint = "y";
    F.nodes[0].features = "y";
    expect_result(&r, SELECT_NEVER);
    r.constraint = NULL;
    uint32_t part[2] = {0, 1};
    r.eligible = part;
    r.neligible = 2;
    expect_result(&r, SELECT_NEVER); /* -w outside the eligible nodes */
}

static void test_eligible(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    uint32_t part[2] = {1, 3};
    r.eligible = part;
    r.neligible = 2;
    r.ntasks = 5;
    expect_at(&r, "1/4/4/0 3/1/1/0");
    r.ntasks = 9;
    expect_result(&r, SELECT_NEVER); /* the cluster has room, the partition does not */
    r.ntasks = 1;
    r.neligible = 0;
    expect_result(&r, SELECT_NEVER);
    uint32_t bad[1] = {7}; /* not a node of the view */
    r.eligible = bad;
    r.neligible = 1;
    expect_result(&r, SELECT_NEVER);
}

static void test_exclusive(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.exclusive = 1;
    expect_at(&r, "0/1/4/2000");
    r.ntasks = 2;
    r.mem_per_cpu_mb = 100; /* still all of the node */
    expect_at(&r, "0/2/4/2000");
    commit(&F.out[0], 1);
    expect_at(&r, "1/2/4/2000");

    /* a small job avoids a node held exclusively even if it looks free */
    cluster(4, 4, 2000);
    F.nodes[0].exclusive = 1;
    F.nodes[0].jobs = 1;
    r = req();
    expect_at(&r, "1/1/1/0");
    /* an exclusive job wants empty nodes */
    F.nodes[1].alloc_cpus = 1;
    F.nodes[1].jobs = 1;
    F.nodes[2].alloc_mem_mb = 10;
    F.nodes[2].jobs = 1;
    r.exclusive = 1;
    expect_at(&r, "3/1/4/2000");
    F.nodes[3].jobs = 1;
    expect_result(&r, SELECT_BUSY);
    r.min_nodes = r.ntasks = 5;
    expect_result(&r, SELECT_NEVER);
}

static void test_down_nodes(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    F.nodes[0].available = 0;
    F.nodes[1].available = 0;
    expect_at(&r, "2/1/1/0");
    r.ntasks = 8;
    expect_at(&r, "2/4/4/0 3/4/4/0");
    r.ntasks = 16;
    expect_result(&r, SELECT_BUSY); /* fits once the drained nodes are back */
    r.ntasks = 17;
    expect_result(&r, SELECT_NEVER);
    for (size_t i = 0; i < 4; i++)
        F.nodes[i].available = 0;
    r.ntasks = 1;
    expect_result(&r, SELECT_BUSY);
}

static void test_weights(void **state)
{
    cluster(4, 4, 2000);
    F.nodes[0].weight = 10;
    F.nodes[1].weight = 5;
    F.nodes[2].weight = 5;
    F.nodes[3].weight = 1;
    struct select_request r = req();
    expect_at(&r, "3/1/1/0");
    r.ntasks = r.min_nodes = 2;
    expect_at(&r, "1/1/1/0 3/1/1/0");
    r.ntasks = 5; /* the preferred node is filled first */
    expect_at(&r, "1/1/1/0 3/4/4/0");
    r.min_nodes = 1;
    r.ntasks = 13;
    expect_at(&r, "0/1/1/0 1/4/4/0 2/4/4/0 3/4/4/0");
}

static void test_invalid(void **state)
{
    cluster(4, 4, 2000);
    struct select_request r = req();
    r.ntasks = 0;
    expect_result(&r, SELECT_NEVER);
    r.ntasks = 1;
    r.cpus_per_task = 0;
    expect_result(&r, SELECT_NEVER);
    r.cpus_per_task = 1;
    r.min_nodes = 2; /* more nodes than tasks */
    expect_result(&r, SELECT_NEVER);
}

/* ---- heterogeneous jobs ---- */

static enum select_result place_het(const struct select_request *reqs, size_t n)
{
    return tessera_plugin.place_het(&F.view, reqs, n, F.out);
}

static void test_het_share_node(void **state)
{
    cluster(1, 4, 2000);
    struct select_request r[2] = {req(), req()};
    r[0].ntasks = 2;
    r[0].mem_per_node_mb = 800;
    r[1].ntasks = 2;
    r[1].mem_per_node_mb = 1200;
    assert_int_equal(place_het(r, 2), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "0/2/2/800");
    assert_string_equal(fmt(&F.out[1]), "0/2/2/1200");
    /* each fits alone, not both: all or nothing */
    r[1].mem_per_node_mb = 1300;
    assert_int_equal(place_het(r, 2), SELECT_BUSY);
    assert_int_equal(F.out[0].nnodes, 0);
    assert_int_equal(F.out[1].nnodes, 0);
    r[1].mem_per_node_mb = 0;
    r[1].ntasks = 3;
    assert_int_equal(place_het(r, 2), SELECT_BUSY);
    /* an exclusive component shares with nobody, not even its siblings */
    cluster(2, 4, 2000);
    r[0] = req();
    r[1] = req();
    r[0].exclusive = 1;
    assert_int_equal(place_het(r, 2), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "0/1/4/2000");
    assert_string_equal(fmt(&F.out[1]), "1/1/1/0");
}

static void test_het_all_or_nothing(void **state)
{
    cluster(2, 4, 2000);
    F.nodes[1].alloc_cpus = 4;
    F.nodes[1].jobs = 1;
    struct select_request r[2] = {req(), req()};
    r[1].min_nodes = r[1].ntasks = 2;
    assert_int_equal(place_het(r, 2), SELECT_BUSY);
    assert_int_equal(F.out[0].nnodes, 0); /* the first component fits, but is not placed */
    assert_int_equal(F.out[1].nnodes, 0);
    r[1].min_nodes = r[1].ntasks = 3;
    assert_int_equal(place_het(r, 2), SELECT_NEVER);
    assert_int_equal(place_het(r, 0), SELECT_OK);
}

/* docs/02-sched.md §5.1.4: partition p1 of 10 one-CPU nodes, p2 on 5 of them; one component
 * wants 5 nodes of p1, the other 5 of p2. Greedy in submission order would give p1's component
 * the nodes p2 needs. */
static void s3_case(const uint32_t *p2, int exclusive, int p2_first)
{
    cluster(10, 1, 1000);
    struct select_request p1r = req(), p2r = req();
    p1r.min_nodes = p1r.ntasks = 5;
    p2r = p1r;
    p2r.eligible = p2;
    p2r.neligible = 5;
    p1r.exclusive = p2r.exclusive = exclusive;
    struct select_request r[2] = {p2_first ? p2r : p1r, p2_first ? p1r : p2r};
    assert_int_equal(place_het(r, 2), SELECT_OK);
    const struct select_alloc *o1 = &F.out[p2_first ? 1 : 0], *o2 = &F.out[p2_first ? 0 : 1];
    assert_int_equal(o1->nnodes, 5);
    assert_int_equal(o2->nnodes, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(o2->nodes[i].node, p2[i]);
        for (size_t j = 0; j < 5; j++)
            assert_int_not_equal(o1->nodes[i].node, p2[j]);
        assert_int_equal(o1->nodes[i].cpus, 1);
    }
}

static void test_het_s3_overlapping_partitions(void **state)
{
    static const uint32_t low[5] = {0, 1, 2, 3, 4}, odd[5] = {1, 3, 5, 7, 9};
    for (int excl = 0; excl < 2; excl++)
        for (int first = 0; first < 2; first++) {
            s3_case(low, excl, first);
            s3_case(odd, excl, first);
        }
    /* one node of p2 busy: no joint placement now, and no partial one */
    cluster(10, 1, 1000);
    F.nodes[4].alloc_cpus = 1;
    F.nodes[4].jobs = 1;
    struct select_request r[2] = {req(), req()};
    r[0].min_nodes = r[0].ntasks = 5;
    r[1] = r[0];
    r[1].eligible = low;
    r[1].neligible = 5;
    assert_int_equal(place_het(r, 2), SELECT_BUSY);
    assert_int_equal(F.out[0].nnodes + F.out[1].nnodes, 0);
}

static void test_het_backtracking(void **state)
{
    /* Equally constrained (4 usable nodes each): the 3-task component goes first and takes
     * n0 n1 n2, leaving the other only n3. The search must give it n2 n4 n0 instead. */
    cluster(5, 1, 1000);
    static const uint32_t e0[4] = {0, 1, 2, 3}, e1[4] = {0, 1, 2, 4};
    struct select_request r[2] = {req(), req()};
    r[0].eligible = e0;
    r[0].neligible = 4;
    r[0].min_nodes = r[0].ntasks = 2;
    r[1].eligible = e1;
    r[1].neligible = 4;
    r[1].min_nodes = r[1].ntasks = 3;
    assert_int_equal(place_het(r, 2), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "1/1/1/0 3/1/1/0");
    assert_string_equal(fmt(&F.out[1]), "0/1/1/0 2/1/1/0 4/1/1/0");

    /* Fewer usable nodes is not always more constrained: the 1-task component (2 usable
     * nodes) goes first and takes n0, the only node with 4 CPUs free, which the -N1 -n4
     * component needs. */
    cluster(3, 4, 2000);
    F.nodes[1].alloc_cpus = F.nodes[2].alloc_cpus = 2;
    F.nodes[1].jobs = F.nodes[2].jobs = 1;
    static const uint32_t two[2] = {0, 1};
    r[0] = req();
    r[0].eligible = two;
    r[0].neligible = 2;
    r[1] = req();
    r[1].min_nodes = r[1].max_nodes = 1;
    r[1].ntasks = 4;
    assert_int_equal(place_het(r, 2), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "1/1/1/0");
    assert_string_equal(fmt(&F.out[1]), "0/4/4/0");

    /* Three components, search order x, y, z: z wants n0 n1 n5 n6, x took n0 and then
     * n1; y (in between) is not the cause, so the search goes back two levels, twice,
     * until x settles on n8. */
    cluster(9, 1, 1000);
    static const uint32_t ex[3] = {0, 1, 8}, ey[3] = {2, 3, 4}, ez[4] = {0, 1, 5, 6};
    struct select_request r3[3] = {req(), req(), req()};
    r3[0].eligible = ex;
    r3[0].neligible = 3;
    r3[1].eligible = ey;
    r3[1].neligible = 3;
    r3[2].eligible = ez;
    r3[2].neligible = 4;
    r3[2].min_nodes = r3[2].ntasks = 4;
    assert_int_equal(tessera_plugin.place_het(&F.view, r3, 3, F.out), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "8/1/1/0");
    assert_string_equal(fmt(&F.out[1]), "2/1/1/0");
    assert_string_equal(fmt(&F.out[2]), "0/1/1/0 1/1/1/0 5/1/1/0 6/1/1/0");
    /* without n8 there is no joint placement: BUSY, nothing placed */
    r3[0].neligible = 2;
    assert_int_equal(tessera_plugin.place_het(&F.view, r3, 3, F.out), SELECT_BUSY);
    assert_int_equal(F.out[0].nnodes + F.out[1].nnodes + F.out[2].nnodes, 0);
}

static void test_determinism(void **state)
{
    cluster(12, 4, 2000);
    for (size_t i = 0; i < 12; i++) {
        F.nodes[i].weight = (uint32_t)(i % 3);
        F.nodes[i].alloc_cpus = (uint32_t)(i % 4);
        F.nodes[i].jobs = i % 4 != 0;
    }
    struct select_request r[3] = {req(), req(), req()};
    r[0].ntasks = 9;
    r[1].ntasks = 5;
    r[1].min_nodes = 3;
    r[2].ntasks = 4;
    r[2].cpus_per_task = 2;
    char het[3][1024], one[1024];
    assert_int_equal(tessera_plugin.place_het(&F.view, r, 3, F.out), SELECT_OK);
    for (size_t i = 0; i < 3; i++)
        snprintf(het[i], sizeof(het[i]), "%s", fmt(&F.out[i]));
    assert_int_equal(place(&r[0]), SELECT_OK);
    snprintf(one, sizeof(one), "%s", fmt(&F.out[0]));
    for (int round = 0; round < 5; round++) {
        assert_int_equal(place(&r[0]), SELECT_OK);
        assert_string_equal(fmt(&F.out[0]), one);
        assert_int_equal(tessera_plugin.place_het(&F.view, r, 3, F.out), SELECT_OK);
        for (size_t i = 0; i < 3; i++)
            assert_string_equal(fmt(&F.out[i]), het[i]);
    }
}

/* A wide cluster and many conflicting components stay quick (the search is bounded). */
static void test_het_large(void **state)
{
    enum { N = 4096 };
    static struct select_node nodes[N];
    static uint32_t all[N], half[N / 2];
    static struct select_node_alloc buf[3][N];
    for (uint32_t i = 0; i < N; i++) {
        nodes[i] = (struct select_node){.name = "x", .cpus = 1, .mem_mb = 10, .weight = 1,
                                        .available = 1};
        all[i] = i;
        if (i < N / 2)
            half[i] = i;
    }
    struct select_view view = {.nodes = nodes, .nnodes = N};
    struct select_request r[3] = {req(), req(), req()};
    for (size_t i = 0; i < 3; i++) {
        r[i].eligible = all;
        r[i].neligible = N;
    }
    r[0].min_nodes = r[0].ntasks = N / 4;
    r[1].min_nodes = r[1].ntasks = N / 4;
    r[2].eligible = half;
    r[2].neligible = N / 2;
    r[2].min_nodes = r[2].ntasks = N / 2;
    struct select_alloc out[3] = {{buf[0], 0}, {buf[1], 0}, {buf[2], 0}};
    assert_int_equal(tessera_plugin.place_het(&view, r, 3, out), SELECT_OK);
    assert_int_equal(out[2].nodes[0].node, 0);
    assert_int_equal(out[0].nodes[0].node, N / 2);
    r[2].min_nodes = r[2].ntasks = N / 2 + 1;
    assert_int_equal(tessera_plugin.place_het(&view, r, 3, out), SELECT_NEVER);
    nodes[0].available = 0;
    r[2].min_nodes = r[2].ntasks = N / 2;
    assert_int_equal(tessera_plugin.place_het(&view, r, 3, out), SELECT_BUSY);
}

static void test_loaded_plugin(void **state)
{
    const char *dir = getenv("TESSERA_PLUGIN_DIR");
    if (!dir)
        skip(); /* run outside ctest */
    struct plugin *pl = NULL;
    char err[512] = "";
    assert_int_equal(plugin_load(dir, "select/consumable", SELECT_PLUGIN_TYPE,
                                 PLUGIN_ABI_VERSION, NULL, &pl, err, sizeof(err)),
                     TS_OK);
    const struct select_ops *ops = plugin_ops(pl);
    assert_string_equal(ops->header.type, "select");
    assert_string_equal(ops->header.name, "select/consumable");
    assert_int_equal(ops->header.abi_version, PLUGIN_ABI_VERSION);
    assert_string_equal(plugin_name(pl), "select/consumable");
    cluster(2, 4, 2000);
    struct select_request r = req();
    r.ntasks = 5;
    assert_int_equal(ops->place(&F.view, &r, &F.out[0]), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), "0/4/4/0 1/1/1/0");
    struct select_request two[2] = {req(), req()};
    assert_int_equal(ops->place_het(&F.view, two, 2, F.out), SELECT_OK);
    plugin_unload(pl);
}

/* try_place: the same placement as place when there is one, and BUSY both for "not now"
 * and "never". */
static void test_try_place(void **state)
{
    (void)state;
    cluster(2, 4, 1000);
    struct select_request r = req();
    r.ntasks = 6;
    assert_int_equal(tessera_plugin.try_place(&F.view, &r, &F.out[0]), SELECT_OK);
    char first[1024];
    snprintf(first, sizeof(first), "%s", fmt(&F.out[0]));
    assert_int_equal(place(&r), SELECT_OK);
    assert_string_equal(fmt(&F.out[0]), first);
    F.nodes[0].alloc_cpus = 4;
    F.nodes[0].jobs = 1;
    assert_int_equal(tessera_plugin.try_place(&F.view, &r, &F.out[0]), SELECT_BUSY);
    assert_int_equal(place(&r), SELECT_BUSY);
    r.ntasks = 9;
    assert_int_equal(tessera_plugin.try_place(&F.view, &r, &F.out[0]), SELECT_BUSY);
    assert_int_equal(place(&r), SELECT_NEVER);
}

/* With scratch in the view, a placement needs room only for the nodes it can use: the
 * same placement lands in storage of select_alloc_room entries. */
static void test_scratch(void **state)
{
    (void)state;
    cluster(16, 4, 1000);
    struct select_request r = req();
    r.ntasks = 6;
    r.min_nodes = 2;
    assert_int_equal(place(&r), SELECT_OK);
    char want[1024];
    snprintf(want, sizeof(want), "%s", fmt(&F.out[0]));
    assert_int_equal(select_alloc_room(&r), 6);
    struct select_node_alloc scratch[16], room[7];
    for (size_t i = 0; i < 7; i++)
        room[i] = (struct select_node_alloc){.node = 99999};
    struct select_alloc small = {.nodes = room};
    struct select_view v = F.view;
    v.scratch = scratch;
    assert_int_equal(tessera_plugin.place(&v, &r, &small), SELECT_OK);
    assert_string_equal(fmt(&small), want);
    assert_int_equal(room[6].node, 99999); /* nothing written past the room */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_node),
        cmocka_unit_test(test_try_place),
        cmocka_unit_test(test_scratch),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_node_range),
        cmocka_unit_test(test_cpus_per_task),
        cmocka_unit_test(test_ntasks_per_node),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_features),
        cmocka_unit_test(test_required),
        cmocka_unit_test(test_eligible),
        cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_down_nodes),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_het_share_node),
        cmocka_unit_test(test_het_all_or_nothing),
        cmocka_unit_test(test_het_s3_overlapping_partitions),
        cmocka_unit_test(test_het_backtracking),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_het_large),
        cmocka_unit_test(test_loaded_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
