/* Unit tests for common/steplayout: placing a step over a job's components.
 *
 * The het examples are docs/04-steps.md's: "salloc -N1 : -N2" (one CPU per node) is job 538 on
 * nid00001 and 539 on nid[00011-00012]; srun --het-group=0,1 runs 3 tasks there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/job/steplayout.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXNODES 8
#define BLOCK TESSERA__STEP_DISTRIBUTION__STEP_DIST_BLOCK
#define CYCLIC TESSERA__STEP_DISTRIBUTION__STEP_DIST_CYCLIC

/* One component: its record, its allocation and srun's request for it. */
struct fx {
    Tessera__JobDesc desc;
    Tessera__JobRecord rec;
    Tessera__NodeAlloc alloc[MAXNODES];
    Tessera__NodeAlloc *allocp[MAXNODES];
    Tessera__StepComponentRequest req;
};

static void fx_init(struct fx *f, uint32_t job_id, uint32_t offset, const char *partition)
{
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    Tessera__StepComponentRequest q = TESSERA__STEP_COMPONENT_REQUEST__INIT;
    f->desc = d;
    f->rec = r;
    f->req = q;
    f->desc.partition = (char *)partition;
    f->rec.job_id = job_id;
    f->rec.het_job_offset = offset;
    f->rec.desc = &f->desc;
    f->rec.allocs = f->allocp;
    f->req.het_group = offset;
}

static void fx_node(struct fx *f, const char *node, uint32_t cpus)
{
    Tessera__NodeAlloc a = TESSERA__NODE_ALLOC__INIT;
    size_t i = f->rec.n_allocs++;
    assert_true(i < MAXNODES);
    a.node = (char *)node;
    a.cpus = cpus;
    a.mem_mb = 100;
    f->alloc[i] = a;
    f->allocp[i] = &f->alloc[i];
}

/* A node daemon listens on "addr-<name>", port 6800 + the name's length. */
static int fake_addr(void *arg, const char *node, const char **addr, uint16_t *port)
{
    static char buf[64];
    int *calls = arg;
    if (calls)
        (*calls)++;
    snprintf(buf, sizeof(buf), "addr-%s", node);
    *addr = buf;
    *port = (uint16_t)(6800 + strlen(node));
    return TS_OK;
}

static int no_addr_for_n3(void *arg, const char *node, const char **addr, uint16_t *port)
{
    if (strcmp(node, "n3") == 0)
        return TS_ENOENT;
    *addr = "10.0.0.1";
    *port = 1;
    return TS_OK;
}

/* The input every test builds from: alice's step 3 of job job_id. */
static struct steplayout_input input_of(uint32_t job_id, const struct steplayout_component *comps,
                                        size_t n, uint32_t het_size)
{
    return (struct steplayout_input){
        .job_id = job_id,
        .step_id = 3,
        .uid = 1000,
        .gid = 100,
        .user_name = "alice",
        .cluster = "ref",
        .het_size = het_size,
        .components = comps,
        .ncomponents = n,
        .node_addr = fake_addr,
        .issued = 1700000000,
        .expires = 1700000300,
    };
}

/* Build with the components in the order given by order[] (NULL: array order). */
static int try_build(struct fx *f, const size_t *order, size_t n, uint32_t het_size,
                     Tessera__StepLayout **out, char *err, size_t errlen)
{
    struct steplayout_component comps[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        comps[i].rec = &f[order ? order[i] : i].rec;
        comps[i].req = &f[order ? order[i] : i].req;
    }
    struct steplayout_input in = input_of(f[0].rec.job_id, comps, n, het_size);
    return steplayout_build(&in, out, err, errlen);
}

static Tessera__StepLayout *build(struct fx *f, const size_t *order, size_t n,
                                  uint32_t het_size)
{
    Tessera__StepLayout *l = (Tessera__StepLayout *)1;
    char err[256] = "unset";
    int rc = try_build(f, order, n, het_size, &l, err, sizeof(err));
    if (rc != TS_OK)
        fail_msg("steplayout_build: %d (%s)", rc, err);
    assert_non_null(l);
    return l;
}

/* The build fails with code and a reason containing word; nothing comes out. */
static void expect_error(struct fx *f, size_t n, uint32_t het_size, int code, const char *word)
{
    Tessera__StepLayout *l = (Tessera__StepLayout *)1;
    char err[256] = "";
    int rc = try_build(f, NULL, n, het_size, &l, err, sizeof(err));
    if (rc != code)
        fail_msg("expected error %d, got %d (%s)", code, rc, err);
    assert_null(l);
    if (!strstr(err, word))
        fail_msg("reason \"%s\" does not mention \"%s\"", err, word);
    assert_null(strchr(err, '\n'));
}

/* Node m is name and holds exactly ranks[] (-1 terminated). */
static void expect_node(const Tessera__StepLayout *l, size_t m, const char *name,
                        const int *ranks)
{
    assert_true(m < l->n_nodes);
    const Tessera__StepLayoutNode *node = l->nodes[m];
    assert_string_equal(node->name, name);
    size_t k = 0;
    for (; ranks[k] >= 0; k++) {
        if (k >= node->n_ranks)
            fail_msg("%s: rank %d missing", name, ranks[k]);
        if (node->ranks[k] != (uint32_t)ranks[k])
            fail_msg("%s: rank %zu is %u, expected %d", name, k, node->ranks[k], ranks[k]);
    }
    if (k != node->n_ranks)
        fail_msg("%s: %zu ranks, expected %zu", name, node->n_ranks, k);
    assert_int_equal(node->n_rank_components, node->n_ranks);
}

/* Every rank exactly once, each under the component whose range holds it. */
static void check_consistent(const Tessera__StepLayout *l)
{
    uint32_t seen[64] = {0};
    size_t total = 0;
    assert_true(l->ntasks <= 64);
    for (size_t m = 0; m < l->n_nodes; m++) {
        const Tessera__StepLayoutNode *node = l->nodes[m];
        for (size_t k = 0; k < node->n_ranks; k++) {
            uint32_t r = node->ranks[k];
            assert_true(r < l->ntasks);
            assert_int_equal(seen[r]++, 0);
            if (k)
                assert_true(node->ranks[k - 1] < r);
            uint32_t c = node->rank_components[k];
            assert_true(c < l->n_components);
            assert_true(r >= l->components[c]->first_rank);
            assert_true(r < l->components[c]->first_rank + l->components[c]->ntasks);
            total++;
        }
    }
    assert_int_equal(total, l->ntasks);
}

static void expect_mapping(const Tessera__StepLayout *l, const char *want)
{
    char buf[256];
    assert_int_equal(steplayout_process_mapping(l, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, want);
}

/* salloc -N1 : -N2, one CPU per node */
static void spec_alloc(struct fx *f)
{
    fx_init(&f[0], 538, 0, "debug");
    fx_init(&f[1], 539, 1, "debug");
    fx_node(&f[0], "nid00001", 1);
    fx_node(&f[1], "nid00012", 1); /* out of order on purpose */
    fx_node(&f[1], "nid00011", 1);
}

/* ---- docs/04-steps.md ---------------------------------------------------------------- */

/* srun --het-group=0,1 without -n: one task per node, 3 in all, numbered across. */
static void test_spec_two_components(void **state)
{
    struct fx f[2];
    spec_alloc(f);
    f[1].desc.partition = (char *)"big";
    Tessera__StepLayout *l = build(f, NULL, 2, 2);

    assert_int_equal(l->job_id, 538);
    assert_int_equal(l->step_id, 3);
    assert_int_equal(l->step_job_id, 538); /* the first component's own id */
    assert_int_equal(l->uid, 1000);
    assert_int_equal(l->gid, 100);
    assert_string_equal(l->user_name, "alice");
    assert_string_equal(l->cluster, "ref");
    assert_int_equal(l->het_size, 2);
    assert_int_equal(l->ntasks, 3);
    assert_string_equal(l->nodelist, "nid[00001,00011-00012]");
    assert_string_equal(l->job_nodelist, "nid[00001,00011-00012]");
    assert_int_equal(l->job_nnodes, 3);
    assert_int_equal(l->issued, 1700000000);
    assert_int_equal(l->expires, 1700000300);

    assert_int_equal(l->n_components, 2);
    const Tessera__StepLayoutComponent *c0 = l->components[0], *c1 = l->components[1];
    assert_int_equal(c0->offset, 0);
    assert_int_equal(c0->job_id, 538);
    assert_int_equal(c0->first_rank, 0);
    assert_int_equal(c0->ntasks, 1);
    assert_int_equal(c0->nnodes, 1);
    assert_string_equal(c0->nodelist, "nid00001");
    assert_string_equal(c0->tasks_per_node, "1");
    assert_int_equal(c0->cpus_per_task, 1);
    assert_string_equal(c0->job_nodelist, "nid00001");
    assert_int_equal(c0->job_nnodes, 1);
    assert_string_equal(c0->partition, "debug");
    assert_int_equal(c1->offset, 1);
    assert_int_equal(c1->job_id, 539);
    assert_int_equal(c1->first_rank, 1);
    assert_int_equal(c1->ntasks, 2);
    assert_int_equal(c1->nnodes, 2);
    assert_string_equal(c1->nodelist, "nid[00011-00012]");
    assert_string_equal(c1->tasks_per_node, "1(x2)");
    assert_string_equal(c1->job_nodelist, "nid[00011-00012]");
    assert_int_equal(c1->job_nnodes, 2);
    assert_string_equal(c1->partition, "big");

    assert_int_equal(l->n_nodes, 3);
    expect_node(l, 0, "nid00001", (int[]){0, -1});
    expect_node(l, 1, "nid00011", (int[]){1, -1});
    expect_node(l, 2, "nid00012", (int[]){2, -1});
    assert_int_equal(l->nodes[0]->rank_components[0], 0);
    assert_int_equal(l->nodes[1]->rank_components[0], 1);
    assert_int_equal(l->nodes[2]->rank_components[0], 1);
    assert_int_equal(l->nodes[1]->cpus, 1);
    assert_string_equal(l->nodes[1]->addr, "addr-nid00011");
    assert_int_equal(l->nodes[1]->port, 6808);
    check_consistent(l);
    expect_mapping(l, "(vector,(0,3,1))");
    steplayout_free(l);
}

/* The request order does not matter: ranks follow ascending offsets. docs/04-steps.md §4.1:
 * "--het-group=0,2 A : --het-group=1 B" gives ranks A, B, A. */
static void test_rank_order_by_offset(void **state)
{
    struct fx f[3];
    fx_init(&f[0], 700, 0, "p");
    fx_init(&f[1], 701, 1, "p");
    fx_init(&f[2], 702, 2, "p");
    fx_node(&f[0], "a1", 4);
    fx_node(&f[1], "b1", 4);
    fx_node(&f[2], "c1", 4);
    f[0].req.ntasks = 2;
    f[1].req.ntasks = 3;
    f[2].req.ntasks = 1;
    static const size_t order[] = {0, 2, 1}; /* A's components, then B's */
    Tessera__StepLayout *l = build(f, order, 3, 3);

    assert_int_equal(l->ntasks, 6);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(l->components[i]->offset, i);
    assert_int_equal(l->components[0]->first_rank, 0);
    assert_int_equal(l->components[1]->first_rank, 2);
    assert_int_equal(l->components[2]->first_rank, 5);
    expect_node(l, 0, "a1", (int[]){0, 1, -1});
    expect_node(l, 1, "b1", (int[]){2, 3, 4, -1});
    expect_node(l, 2, "c1", (int[]){5, -1});
    check_consistent(l);

    /* reversed input: the same layout */
    static const size_t reverse[] = {2, 1, 0};
    Tessera__StepLayout *r = build(f, reverse, 3, 3);
    size_t la = tessera__step_layout__get_packed_size(l);
    size_t lb = tessera__step_layout__get_packed_size(r);
    assert_int_equal(la, lb);
    uint8_t *pa = malloc(la), *pb = malloc(lb);
    tessera__step_layout__pack(l, pa);
    tessera__step_layout__pack(r, pb);
    assert_memory_equal(pa, pb, la);
    free(pa);
    free(pb);
    steplayout_free(r);
    steplayout_free(l);
}

/* srun --het-group=1: component 1 alone numbers from 0; the job id stays the leader's, the
 * step is named by component 1's own id (its step ids are its own). */
static void test_one_later_component(void **state)
{
    struct fx f[2];
    spec_alloc(f);
    struct steplayout_component comp = {&f[1].rec, &f[1].req};
    struct steplayout_input in = {.job_id = 538, .het_size = 2, .components = &comp,
                                  .ncomponents = 1};
    Tessera__StepLayout *l = NULL;
    assert_int_equal(steplayout_build(&in, &l, NULL, 0), TS_OK);
    assert_int_equal(l->job_id, 538);
    assert_int_equal(l->step_job_id, 539);
    assert_int_equal(l->n_components, 1);
    assert_int_equal(l->components[0]->offset, 1);
    assert_int_equal(l->components[0]->job_id, 539);
    /* a layout from a controller that did not set it: taken from the components */
    l->step_job_id = 0;
    assert_int_equal(steplayout_step_job_id(l), 539);
    assert_int_equal(l->components[0]->first_rank, 0);
    assert_int_equal(l->ntasks, 2);
    assert_string_equal(l->nodelist, "nid[00011-00012]");
    assert_string_equal(l->job_nodelist, "nid[00011-00012]");
    expect_node(l, 0, "nid00011", (int[]){0, -1});
    expect_node(l, 1, "nid00012", (int[]){1, -1});
    assert_string_equal(l->nodes[0]->addr, ""); /* no node_addr callback */
    assert_int_equal(l->nodes[0]->port, 0);
    check_consistent(l);
    steplayout_free(l);
}

/* ---- distribution --------------------------------------------------------------------- */

/* docs/04-steps.md §4.2: 8 tasks over two components of two nodes each. */
static void eight_tasks(struct fx *f, Tessera__StepDistribution dist)
{
    fx_init(&f[0], 800, 0, "p");
    fx_init(&f[1], 801, 1, "p");
    fx_node(&f[0], "n1", 2);
    fx_node(&f[0], "n2", 2);
    fx_node(&f[1], "n3", 2);
    fx_node(&f[1], "n4", 2);
    for (size_t i = 0; i < 2; i++) {
        f[i].req.ntasks = 4;
        f[i].req.distribution = dist;
    }
}

static void test_block(void **state)
{
    struct fx f[2];
    eight_tasks(f, BLOCK);
    Tessera__StepLayout *l = build(f, NULL, 2, 2);
    expect_node(l, 0, "n1", (int[]){0, 1, -1});
    expect_node(l, 1, "n2", (int[]){2, 3, -1});
    expect_node(l, 2, "n3", (int[]){4, 5, -1});
    expect_node(l, 3, "n4", (int[]){6, 7, -1});
    assert_string_equal(l->components[1]->tasks_per_node, "2(x2)");
    check_consistent(l);
    expect_mapping(l, "(vector,(0,4,2))");
    steplayout_free(l);
}

/* docs/04-steps.md §4.2: tasks 0-3 round-robin over component 0's nodes, 4-7 over component 1's. */
static void test_cyclic(void **state)
{
    struct fx f[2];
    eight_tasks(f, CYCLIC);
    Tessera__StepLayout *l = build(f, NULL, 2, 2);
    expect_node(l, 0, "n1", (int[]){0, 2, -1});
    expect_node(l, 1, "n2", (int[]){1, 3, -1});
    expect_node(l, 2, "n3", (int[]){4, 6, -1});
    expect_node(l, 3, "n4", (int[]){5, 7, -1});
    check_consistent(l);
    expect_mapping(l, ""); /* neither blocks nor r mod 4 */
    steplayout_free(l);
}

/* Counts are dealt round by round, also when nodes differ: cyclic skips full nodes. */
static void test_uneven_nodes(void **state)
{
    struct fx f;
    fx_init(&f, 900, 0, "p");
    fx_node(&f, "n1", 1);
    fx_node(&f, "n2", 3);
    f.req.ntasks = 4;
    Tessera__StepLayout *l = build(&f, NULL, 1, 0);
    assert_string_equal(l->components[0]->tasks_per_node, "1,3");
    expect_node(l, 0, "n1", (int[]){0, -1});
    expect_node(l, 1, "n2", (int[]){1, 2, 3, -1});
    expect_mapping(l, "(vector,(0,1,1),(1,1,3))");
    steplayout_free(l);

    f.req.distribution = CYCLIC;
    l = build(&f, NULL, 1, 0);
    expect_node(l, 0, "n1", (int[]){0, -1});
    expect_node(l, 1, "n2", (int[]){1, 2, 3, -1});
    steplayout_free(l);

    f.alloc[0].cpus = 2;
    l = build(&f, NULL, 1, 0);
    expect_node(l, 0, "n1", (int[]){0, 2, -1});
    expect_node(l, 1, "n2", (int[]){1, 3, -1});
    expect_mapping(l, "(vector,(0,2,1))");
    steplayout_free(l);
}

/* ---- -n, -N, --ntasks-per-node, -c ----------------------------------------------------- */

struct count_case {
    uint32_t cpus;                 /* on each of the four nodes n[1-4] */
    size_t nalloc;                 /* nodes in the allocation */
    uint32_t ntasks, min_nodes, max_nodes, ntasks_per_node, cpus_per_task;
    const char *nodelist;          /* the step's nodes */
    const char *tasks_per_node;
};

static void test_counts(void **state)
{
    static const struct count_case cases[] = {
        /* salloc -N2 (one CPU each): srun -n1 uses one node, -n2 both, no -n: both */
        {1, 2, 1, 0, 0, 0, 0, "n1", "1"},
        {1, 2, 2, 0, 0, 0, 0, "n[1-2]", "1(x2)"},
        {1, 2, 0, 0, 0, 0, 0, "n[1-2]", "1(x2)"},
        /* salloc -N2 -n8 (four CPUs each): srun -n8 4 each; -n3 2,1; -n5 3,2 */
        {4, 2, 8, 0, 0, 0, 0, "n[1-2]", "4(x2)"},
        {4, 2, 3, 0, 0, 0, 0, "n[1-2]", "2,1"},
        {4, 2, 5, 0, 0, 0, 0, "n[1-2]", "3,2"},
        /* -n2 spreads over the allocation as Slurm's srun does */
        {4, 4, 2, 0, 0, 0, 0, "n[1-2]", "1(x2)"},
        /* -N */
        {4, 4, 4, 1, 0, 0, 0, "n1", "4"},
        {4, 4, 0, 3, 0, 0, 0, "n[1-3]", "1(x3)"},
        {4, 4, 1, 2, 0, 0, 0, "n1", "1"},          /* -n1 -N2: N becomes 1 */
        {4, 4, 0, 2, 3, 0, 0, "n[1-3]", "1(x3)"},  /* -N2-3: as many as allowed */
        {4, 4, 8, 1, 3, 0, 0, "n[1-3]", "3(x2),2"},  /* -N1-3 -n8: spread up to 3 */
        {4, 4, 0, 0, 2, 0, 0, "n[1-2]", "1(x2)"},  /* -N-2 */
        /* --ntasks-per-node */
        {4, 2, 0, 0, 0, 2, 0, "n[1-2]", "2(x2)"},
        {4, 4, 4, 0, 0, 2, 0, "n[1-2]", "2(x2)"},
        {4, 4, 3, 0, 0, 2, 0, "n[1-2]", "2,1"},
        {4, 4, 0, 3, 0, 3, 0, "n[1-3]", "3(x3)"},
        /* -c */
        {4, 2, 0, 0, 0, 0, 2, "n[1-2]", "1(x2)"},
        {4, 2, 4, 0, 0, 0, 2, "n[1-2]", "2(x2)"},
        {4, 4, 2, 1, 0, 0, 2, "n1", "2"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct count_case *k = &cases[i];
        static const char *const names[] = {"n1", "n2", "n3", "n4"};
        struct fx f;
        fx_init(&f, 1000, 0, "p");
        for (size_t j = 0; j < k->nalloc; j++)
            fx_node(&f, names[j], k->cpus);
        f.req.ntasks = k->ntasks;
        f.req.min_nodes = k->min_nodes;
        f.req.max_nodes = k->max_nodes;
        f.req.ntasks_per_node = k->ntasks_per_node;
        f.req.cpus_per_task = k->cpus_per_task;
        Tessera__StepLayout *l = build(&f, NULL, 1, 0);
        const Tessera__StepLayoutComponent *c = l->components[0];
        if (strcmp(c->nodelist, k->nodelist) != 0 ||
            strcmp(c->tasks_per_node, k->tasks_per_node) != 0)
            fail_msg("case %zu: %s %s, expected %s %s", i, c->nodelist, c->tasks_per_node,
                     k->nodelist, k->tasks_per_node);
        assert_int_equal(c->cpus_per_task, k->cpus_per_task ? k->cpus_per_task : 1);
        assert_int_equal(l->ntasks, c->ntasks);
        assert_string_equal(l->nodelist, c->nodelist);
        for (size_t m = 0; m < l->n_nodes; m++)
            assert_int_equal(l->nodes[m]->cpus, l->nodes[m]->n_ranks * c->cpus_per_task);
        check_consistent(l);
        steplayout_free(l);
    }
}

static void test_count_errors(void **state)
{
    struct fx f;
    fx_init(&f, 1100, 0, "p");
    fx_node(&f, "n1", 4);
    fx_node(&f, "n2", 4);

    f.req.ntasks = 9; /* 8 CPUs */
    expect_error(&f, 1, 0, TS_ETOO_MANY_CPUS, "More processors requested than permitted");
    f.req.ntasks = 5;
    f.req.cpus_per_task = 2;
    expect_error(&f, 1, 0, TS_ETOO_MANY_CPUS, "5 tasks");
    f.req.ntasks = 0;
    f.req.cpus_per_task = 8; /* no node has 8 CPUs */
    expect_error(&f, 1, 0, TS_ETOO_MANY_CPUS, "n1");
    f.req.cpus_per_task = 0;
    f.req.ntasks = 3;
    f.req.min_nodes = 1;
    f.req.ntasks_per_node = 2;
    expect_error(&f, 1, 0, TS_ETOO_MANY_CPUS, "room for 2");
    f.req.ntasks = 0;
    f.req.ntasks_per_node = 0;
    f.req.min_nodes = 3;
    expect_error(&f, 1, 0, TS_ENODE_CONFIG, "Requested node configuration is not available");
    f.req.min_nodes = 2;
    f.req.max_nodes = 1;
    expect_error(&f, 1, 0, TS_EINVAL, "-N 2-1");
    f.req.max_nodes = 0;
    f.req.min_nodes = 0;
    f.req.distribution = (Tessera__StepDistribution)7;
    expect_error(&f, 1, 0, TS_EINVAL, "distribution");
}

/* ---- -w and -x ------------------------------------------------------------------------- */

static void four_nodes(struct fx *f)
{
    fx_init(f, 1200, 0, "p");
    fx_node(f, "n4", 2);
    fx_node(f, "n3", 2);
    fx_node(f, "n2", 2);
    fx_node(f, "n1", 2);
}

static void expect_nodes(struct fx *f, const char *nodelist, const char *tasks_per_node)
{
    Tessera__StepLayout *l = build(f, NULL, 1, 0);
    assert_string_equal(l->nodelist, nodelist);
    assert_string_equal(l->components[0]->tasks_per_node, tasks_per_node);
    assert_string_equal(l->job_nodelist, "n[1-4]");
    assert_int_equal(l->job_nnodes, 4);
    assert_string_equal(l->components[0]->job_nodelist, "n[1-4]");
    check_consistent(l);
    steplayout_free(l);
}

static void test_nodelist_exclude(void **state)
{
    struct fx f;
    four_nodes(&f);
    f.req.nodelist = (char *)"n3";
    expect_nodes(&f, "n3", "1");
    f.req.nodelist = (char *)"n[4,2]";
    expect_nodes(&f, "n[2,4]", "1(x2)");
    f.req.ntasks = 4;
    expect_nodes(&f, "n[2,4]", "2(x2)"); /* the listed nodes hold the tasks */
    f.req.ntasks = 0;
    f.req.nodelist = (char *)"n4";
    f.req.min_nodes = 2; /* the listed node, then the first other one */
    expect_nodes(&f, "n[1,4]", "1(x2)");
    f.req.ntasks = 3;
    expect_nodes(&f, "n[1,4]", "2,1");
    f.req.min_nodes = 0; /* -w alone: its nodes only, even when they are too few */
    expect_error(&f, 1, 0, TS_ETOO_MANY_CPUS, "room for 2");
    f.req.ntasks = 0;
    f.req.nodelist = (char *)"";
    f.req.exclude = (char *)"n1";
    expect_nodes(&f, "n[2-4]", "1(x3)");
    f.req.exclude = (char *)"n[1-2],n9"; /* a node outside the allocation is no matter */
    f.req.ntasks = 1;
    expect_nodes(&f, "n3", "1");

    f.req.ntasks = 0;
    f.req.exclude = (char *)"n[1-4]";
    expect_error(&f, 1, 0, TS_ENODE_CONFIG, "no node");
    f.req.exclude = (char *)"n2";
    f.req.nodelist = (char *)"n2";
    expect_error(&f, 1, 0, TS_ENODE_CONFIG, "excluded");
    f.req.exclude = (char *)"";
    f.req.nodelist = (char *)"n[1,9]";
    expect_error(&f, 1, 0, TS_ENODE_CONFIG, "n9 is not in the job's allocation");
    f.req.nodelist = (char *)"n[1-2]";
    f.req.ntasks = 1; /* Slurm drops n2 from the list; Tessera refuses */
    expect_error(&f, 1, 0, TS_ENODE_CONFIG, "names 2 nodes");
    f.req.ntasks = 0;
    f.req.nodelist = (char *)"n[1-";
    expect_error(&f, 1, 0, TS_EHOSTLIST, "--nodelist");
    f.req.nodelist = (char *)"";
    f.req.exclude = (char *)"n[3-1]";
    expect_error(&f, 1, 0, TS_EHOSTLIST, "--exclude");
}

/* ---- shared nodes ---------------------------------------------------------------------- */

/* Component 0: -n2 -c2 on n1 (4 CPUs); component 1: -n2 on n1 and n2 (1 CPU each). n1
 * appears once, with the ranks of both. */
static void test_shared_node(void **state)
{
    struct fx f[2];
    fx_init(&f[0], 1300, 0, "p");
    fx_init(&f[1], 1301, 1, "p");
    fx_node(&f[0], "n1", 4);
    fx_node(&f[1], "n2", 1);
    fx_node(&f[1], "n1", 1);
    f[0].req.ntasks = 2;
    f[0].req.cpus_per_task = 2;
    f[1].req.ntasks = 2;
    int calls = 0;
    struct steplayout_component comps[2] = {{&f[1].rec, &f[1].req}, {&f[0].rec, &f[0].req}};
    struct steplayout_input in = {.job_id = 1300, .het_size = 2, .components = comps,
                                  .ncomponents = 2, .node_addr = fake_addr, .arg = &calls};
    Tessera__StepLayout *l = NULL;
    assert_int_equal(steplayout_build(&in, &l, NULL, 0), TS_OK);

    assert_int_equal(l->n_nodes, 2);
    assert_int_equal(calls, 2); /* once per node, not per component */
    assert_string_equal(l->nodelist, "n[1-2]");
    expect_node(l, 0, "n1", (int[]){0, 1, 2, -1});
    expect_node(l, 1, "n2", (int[]){3, -1});
    assert_int_equal(l->nodes[0]->rank_components[0], 0);
    assert_int_equal(l->nodes[0]->rank_components[1], 0);
    assert_int_equal(l->nodes[0]->rank_components[2], 1);
    assert_int_equal(l->nodes[1]->rank_components[0], 1);
    assert_int_equal(l->nodes[0]->cpus, 2 * 2 + 1);
    assert_int_equal(l->nodes[1]->cpus, 1);
    assert_string_equal(l->nodes[0]->addr, "addr-n1");
    assert_string_equal(l->components[1]->nodelist, "n[1-2]");
    assert_string_equal(l->job_nodelist, "n[1-2]");
    assert_int_equal(l->job_nnodes, 2);
    check_consistent(l);
    expect_mapping(l, "(vector,(0,1,3),(1,1,1))");
    steplayout_free(l);
}

/* ---- bad input ------------------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    struct fx f[2];
    spec_alloc(f);
    Tessera__StepLayout *l = (Tessera__StepLayout *)1;
    char err[128];

    assert_int_equal(steplayout_build(NULL, &l, err, sizeof(err)), TS_EINVAL);
    assert_null(l);
    assert_int_equal(try_build(f, NULL, 0, 2, &l, err, sizeof(err)), TS_EINVAL);
    f[1].rec.het_job_offset = 0; /* two components 0 */
    f[1].req.het_group = 0;
    expect_error(f, 2, 2, TS_EINVAL, "twice");
    f[1].rec.het_job_offset = 1;
    expect_error(f, 2, 2, TS_EINVAL, "het group 0"); /* the request is for another one */
    f[1].req.het_group = 1;
    expect_error(f, 2, 1, TS_EINVAL, "beyond");
    expect_error(f, 2, 0, TS_EINVAL, "plain job");
    f[1].alloc[0].node = (char *)"bad name";
    expect_error(f, 2, 2, TS_EINVAL, "bad name");
    f[1].alloc[0].node = (char *)"nid00012";

    /* errors inside a component name it; the errbuf is always cut to its size */
    f[1].req.min_nodes = 3;
    expect_error(f, 2, 2, TS_ENODE_CONFIG, "component 1: ");
    char tiny[8];
    assert_int_equal(try_build(f, NULL, 2, 2, &l, tiny, sizeof(tiny)), TS_ENODE_CONFIG);
    assert_string_equal(tiny, "compone");
    assert_int_equal(try_build(f, NULL, 2, 2, &l, NULL, 0), TS_ENODE_CONFIG);
    assert_null(l);
    steplayout_free(NULL);
}

/* node_addr's error is the build's, and the half-built layout is freed. */
static void test_node_addr_error(void **state)
{
    struct fx f;
    four_nodes(&f);
    struct steplayout_component comp = {&f.rec, &f.req};
    struct steplayout_input in = {.job_id = 1200, .components = &comp, .ncomponents = 1,
                                  .node_addr = no_addr_for_n3};
    Tessera__StepLayout *l = (Tessera__StepLayout *)1;
    char err[128];
    assert_int_equal(steplayout_build(&in, &l, err, sizeof(err)), TS_ENOENT);
    assert_null(l);
    assert_non_null(strstr(err, "n3"));
    f.req.exclude = (char *)"n3";
    assert_int_equal(steplayout_build(&in, &l, err, sizeof(err)), TS_OK);
    assert_string_equal(l->nodes[2]->addr, "10.0.0.1");
    steplayout_free(l);
}

/* ---- process mapping ------------------------------------------------------------------- */

static void test_process_mapping(void **state)
{
    struct fx f;
    fx_init(&f, 1400, 0, "p");
    fx_node(&f, "n1", 2);
    fx_node(&f, "n2", 2);
    fx_node(&f, "n3", 2);
    f.req.ntasks = 5;
    Tessera__StepLayout *l = build(&f, NULL, 1, 0);
    expect_mapping(l, "(vector,(0,2,2),(2,1,1))");

    char small[12];
    assert_int_equal(steplayout_process_mapping(l, small, sizeof(small)), TS_ETOOBIG);
    assert_string_equal(small, "");
    assert_int_equal(steplayout_process_mapping(NULL, small, sizeof(small)), TS_EINVAL);
    steplayout_free(l);

    f.req.distribution = CYCLIC; /* 0,3 / 1,4 / 2: r mod 3, MPICH repeats the vector */
    l = build(&f, NULL, 1, 0);
    expect_node(l, 0, "n1", (int[]){0, 3, -1});
    expect_mapping(l, "(vector,(0,3,1))");
    steplayout_free(l);

    f.req.ntasks = 2; /* one task a node: block and cyclic alike */
    l = build(&f, NULL, 1, 0);
    expect_mapping(l, "(vector,(0,2,1))");
    steplayout_free(l);

    f.req.ntasks = 0;
    f.req.min_nodes = 1;
    f.req.ntasks_per_node = 2;
    l = build(&f, NULL, 1, 0);
    expect_mapping(l, "(vector,(0,1,2))");
    steplayout_free(l);
}

/* ---- parts of one allocation, busy CPUs, -O ------------------------------------------ */

/* CPUs other steps hold: 3 on n1 of job 70, none elsewhere. */
static uint32_t three_on_n1(void *arg, uint32_t job_id, const char *node)
{
    (void)arg;
    return job_id == 70 && !strcmp(node, "n1") ? 3 : 0;
}

/* Parts of one plain job's allocation (n1, n2: 4 CPUs each), req[i] for part i. */
static int build_parts(const Tessera__StepComponentRequest *req, size_t n,
                       uint32_t (*busy)(void *, uint32_t, const char *), Tessera__StepLayout **l,
                       char *err, size_t errlen)
{
    static struct fx f;
    fx_init(&f, 70, 0, "debug");
    fx_node(&f, "n1", 4);
    fx_node(&f, "n2", 4);
    struct steplayout_component comps[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        comps[i].rec = &f.rec;
        comps[i].req = &req[i];
    }
    struct steplayout_input in = input_of(70, comps, n, 0);
    in.one_allocation = 1;
    in.busy = busy;
    *l = NULL;
    return steplayout_build(&in, l, err, errlen);
}

static Tessera__StepComponentRequest part(uint32_t index, uint32_t ntasks, uint32_t nodes)
{
    Tessera__StepComponentRequest q = TESSERA__STEP_COMPONENT_REQUEST__INIT;
    q.het_group = index;
    q.ntasks = ntasks;
    q.min_nodes = nodes;
    return q;
}

/* "srun -N1 -n4 a : -N1 -n1 b" in 2 nodes of 4 CPUs: ranks 0-3 on n1, 4 on n2, one world
 * (Slurm 22.05); "-n2 : -n2" packs each part on a node of its own. */
static void test_parts_of_one_allocation(void **state)
{
    Tessera__StepComponentRequest q[3] = {part(0, 4, 1), part(1, 1, 1)};
    Tessera__StepLayout *l;
    char err[256];
    assert_int_equal(build_parts(q, 2, NULL, &l, err, sizeof(err)), TS_OK);
    check_consistent(l);
    assert_int_equal(l->ntasks, 5);
    assert_int_equal(l->het_size, 0);
    assert_int_equal(l->n_components, 2);
    assert_int_equal(l->components[1]->offset, 1);
    assert_int_equal(l->components[1]->job_id, 70);
    expect_node(l, 0, "n1", (const int[]){0, 1, 2, 3, -1});
    expect_node(l, 1, "n2", (const int[]){4, -1});
    assert_int_equal(l->nodes[0]->cpus, 4);
    steplayout_free(l);

    q[0] = part(0, 2, 0);
    q[1] = part(1, 2, 0);
    assert_int_equal(build_parts(q, 2, NULL, &l, err, sizeof(err)), TS_OK);
    expect_node(l, 0, "n1", (const int[]){0, 1, -1});
    expect_node(l, 1, "n2", (const int[]){2, 3, -1});
    steplayout_free(l);

    /* a third part finds no node left; a part does not fit on its one node */
    q[0] = part(0, 1, 0);
    q[1] = part(1, 1, 0);
    q[2] = part(2, 1, 0);
    assert_int_equal(build_parts(q, 3, NULL, &l, err, sizeof(err)), TS_ESTEP_COMPONENTS);
    assert_string_equal(err, "Allocation failure of 1 nodes: job size of 2, already allocated "
                             "2 nodes to previous components.");
    q[0] = part(0, 5, 1);
    assert_int_equal(build_parts(q, 2, NULL, &l, err, sizeof(err)), TS_ETOO_MANY_CPUS);
    /* a part naming a node an earlier part took */
    q[0] = part(0, 1, 0);
    q[0].nodelist = "n1";
    q[1].nodelist = "n1";
    assert_int_equal(build_parts(q, 2, NULL, &l, err, sizeof(err)), TS_ESTEP_NODELIST);
    assert_string_equal(err, "Requested nodelist n1 overlaps with excluded n1.");
    assert_null(l);
}

/* With 3 of n1's 4 CPUs held by another step, "-n1 -c2" goes to n2 first, "-n4 -N1" no
 * longer fits; -O takes any number of tasks, at most the node's CPUs. */
static void test_busy_cpus_and_overcommit(void **state)
{
    Tessera__StepComponentRequest q = part(0, 1, 0);
    q.cpus_per_task = 2;
    Tessera__StepLayout *l;
    char err[256];
    assert_int_equal(build_parts(&q, 1, three_on_n1, &l, err, sizeof(err)), TS_OK);
    expect_node(l, 0, "n2", (const int[]){0, -1});
    assert_int_equal(l->components[0]->n_node_cpus, 1);
    assert_int_equal(l->components[0]->node_cpus[0], 2);
    steplayout_free(l);

    q = part(0, 4, 1);
    q.nodelist = "n1";
    assert_int_equal(build_parts(&q, 1, three_on_n1, &l, err, sizeof(err)), TS_ETOO_MANY_CPUS);
    assert_int_equal(build_parts(&q, 1, NULL, &l, err, sizeof(err)), TS_OK);
    steplayout_free(l);

    q = part(0, 9, 1);
    q.overcommit = 1;
    assert_int_equal(build_parts(&q, 1, three_on_n1, &l, err, sizeof(err)), TS_OK);
    assert_int_equal(l->ntasks, 9);
    assert_int_equal(l->n_nodes, 1);
    assert_int_equal(l->nodes[0]->cpus, 4);
    steplayout_free(l);
    q.ntasks = STEPLAYOUT_MAX_TASKS_PER_NODE + 1;
    assert_int_equal(build_parts(&q, 1, NULL, &l, err, sizeof(err)), TS_ETOO_MANY_CPUS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_two_components),
        cmocka_unit_test(test_rank_order_by_offset),
        cmocka_unit_test(test_one_later_component),
        cmocka_unit_test(test_block),
        cmocka_unit_test(test_cyclic),
        cmocka_unit_test(test_uneven_nodes),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_count_errors),
        cmocka_unit_test(test_nodelist_exclude),
        cmocka_unit_test(test_shared_node),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_node_addr_error),
        cmocka_unit_test(test_process_mapping),
        cmocka_unit_test(test_parts_of_one_allocation),
        cmocka_unit_test(test_busy_cpus_and_overcommit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
