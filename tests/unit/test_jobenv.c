/* Unit tests for common/jobenv: the batch script's environment.
 *
 * The expected values are what Slurm 22.05 put in the environment of the same jobs on the
 * reference cluster (ClusterName=ref, nodes n[1-4] of 4 CPUs), e.g. job 267 below is
 * "sbatch -N2 -n3 -c1 --wrap='env | sort'", except where a comment says Tessera differs on
 * purpose. The het job reuses docs/03-env.md §3.4's salloc example in batch form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/job/jobenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXNODES 4

/* One component: its description, its record and its allocation. */
struct fx {
    Tessera__JobDesc desc;
    Tessera__JobRecord rec;
    Tessera__NodeAlloc alloc[MAXNODES];
    Tessera__NodeAlloc *allocp[MAXNODES];
};

static void fx_init(struct fx *f, uint32_t job_id, const char *name)
{
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    f->desc = d;
    f->rec = r;
    f->rec.job_id = job_id;
    f->rec.het_size = 1;
    f->rec.desc = &f->desc;
    f->rec.allocs = f->allocp;
    f->desc.name = (char *)name;
    f->desc.partition = (char *)"debug";
    f->desc.has_user_id = f->desc.has_group_id = 1;
    f->desc.user_id = 1000;
    f->desc.group_id = 100;
    f->desc.submit_dir = (char *)"/home/alice/run";
    f->desc.submit_host = (char *)"login1";
}

static void fx_node(struct fx *f, const char *node, uint32_t cpus, uint32_t tasks)
{
    Tessera__NodeAlloc a = TESSERA__NODE_ALLOC__INIT;
    size_t i = f->rec.n_allocs++;
    assert_true(i < MAXNODES);
    a.node = (char *)node;
    a.cpus = cpus;
    a.mem_mb = 100;
    a.tasks = tasks;
    f->alloc[i] = a;
    f->allocp[i] = &f->alloc[i];
}

static void fx_het(struct fx *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        f[i].rec.het_job_id = f[0].rec.job_id;
        f[i].rec.het_job_offset = (uint32_t)i;
        f[i].rec.het_size = (uint32_t)n;
    }
}

static const struct jobenv_context ref_ctx = {"ref", "n2", "alice"};

static char **build(struct fx *f, size_t n, const struct jobenv_context *ctx)
{
    const Tessera__JobRecord *recs[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++)
        recs[i] = &f[i].rec;
    char **env = jobenv_batch(recs, n, ctx);
    assert_non_null(env);
    return env;
}

/* The value of name, or NULL; fails the test when the name appears twice. */
static const char *get(char **env, const char *name)
{
    size_t len = strlen(name);
    const char *found = NULL;
    for (char **p = env; *p; p++)
        if (strncmp(*p, name, len) == 0 && (*p)[len] == '=') {
            if (found)
                fail_msg("%s appears twice", name);
            found = *p + len + 1;
        }
    return found;
}

static void expect(char **env, const char *name, const char *value)
{
    const char *v = get(env, name);
    if (!v)
        fail_msg("%s is missing (expected \"%s\")", name, value);
    if (strcmp(v, value) != 0)
        fail_msg("%s=%s, expected \"%s\"", name, v, value);
}

static void absent(char **env, const char *name)
{
    const char *v = get(env, name);
    if (v)
        fail_msg("%s=%s should not be set", name, v);
}

/* The whole array, entry by entry: order and content. */
static void expect_all(char **env, const char *const *want)
{
    size_t i = 0;
    for (; want[i]; i++) {
        if (!env[i])
            fail_msg("entry %zu missing, expected \"%s\"", i, want[i]);
        if (strcmp(env[i], want[i]) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", i, env[i], want[i]);
    }
    if (env[i])
        fail_msg("unexpected extra entry %zu \"%s\"", i, env[i]);
}

static void no_duplicates(char **env)
{
    for (size_t i = 0; env[i]; i++) {
        size_t li = strcspn(env[i], "=");
        for (size_t j = i + 1; env[j]; j++)
            if (strcspn(env[j], "=") == li && strncmp(env[i], env[j], li) == 0)
                fail_msg("duplicate name: \"%s\" and \"%s\"", env[i], env[j]);
    }
}

/* ---- a plain job -------------------------------------------------------------------- */

/* sbatch -N2 -n3 -c1: job 267 got n2 (2 CPUs) and n3 (1 CPU). The allocation is given
 * in the reverse order to show the list is sorted with the counts following it. */
static void test_plain_two_nodes(void **state)
{
    struct fx f;
    static char *environment[] = {(char *)"HOME=/home/alice", (char *)"PATH=/usr/bin:/bin",
                                  (char *)"LANG=C.UTF-8"};
    fx_init(&f, 267, "wrap");
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 3;
    f.desc.has_cpus_per_task = 1;
    f.desc.cpus_per_task = 1;
    f.rec.cpus_per_task = 1;
    f.rec.batch_host = (char *)"n2";
    f.desc.environment = environment;
    f.desc.n_environment = 3;
    fx_node(&f, "n3", 1, 1);
    fx_node(&f, "n2", 2, 2);

    char **env = build(&f, 1, &ref_ctx);
    static const char *const want[] = {
        "HOME=/home/alice",
        "PATH=/usr/bin:/bin",
        "LANG=C.UTF-8",
        "SLURM_CLUSTER_NAME=ref",
        "SLURM_JOB_ID=267",
        "SLURM_JOBID=267",
        "SLURM_JOB_NAME=wrap",
        "SLURM_JOB_NUM_NODES=2",
        "SLURM_NNODES=2",
        "SLURM_JOB_NODELIST=n[2-3]",
        "SLURM_NODELIST=n[2-3]",
        "SLURM_JOB_PARTITION=debug",
        "SLURM_JOB_CPUS_PER_NODE=2,1",
        "SLURM_CPUS_PER_TASK=1",
        "SLURM_NTASKS=3",
        "SLURM_NPROCS=3",
        "SLURM_TASKS_PER_NODE=2,1",
        "SLURM_JOB_UID=1000",
        "SLURM_JOB_GID=100",
        "SLURM_JOB_USER=alice",
        "SLURM_SUBMIT_DIR=/home/alice/run",
        "SLURM_SUBMIT_HOST=login1",
        "SLURMD_NODENAME=n2",
        "SLURM_CPUS_ON_NODE=2",
        "SLURM_NODEID=0",
        "SLURM_PROCID=0",
        "SLURM_LOCALID=0",
        "SLURM_GTIDS=0",
        "SLURM_TOPOLOGY_ADDR=n2",
        "SLURM_TOPOLOGY_ADDR_PATTERN=node",
        "ENVIRONMENT=BATCH",
        "HOSTNAME=n2",
        NULL,
    };
    expect_all(env, want);
    jobenv_free(env);
}

/* Optional variables appear exactly when their option was given. */
static void test_optional_variables(void **state)
{
    struct fx f;
    fx_init(&f, 276, "myname");
    fx_node(&f, "n2", 1, 1);
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 1;
    char **env = build(&f, 1, &ref_ctx);
    static const char *const unset[] = {
        "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS",        "SLURM_CPUS_PER_TASK", "SLURM_NTASKS_PER_NODE",
        "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU",   "SLURM_EXPORT_ENV",    "SLURM_OPEN_MODE",
        "SLURM_HET_SIZE",     "SLURM_PACK_SIZE",     "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME",
        "SLURM_JOB_ID_HET_GROUP_0", "SLURM_JOB_NODES_HET_GROUP_0", "SLURM_JOB_NODES"};
    for (size_t i = 0; i < sizeof(unset) / sizeof(unset[0]); i++)
        absent(env, unset[i]);
    jobenv_free(env);

    /* -A acct -q high --mem=100 --open-mode=append -t 5, started at 1795361665 */
    f.desc.account = (char *)"acct";
    f.desc.qos = (char *)"high";
    f.desc.has_mem_per_node_mb = 1;
    f.desc.mem_per_node_mb = 100;
    f.desc.open_mode = (char *)"append";
    f.rec.start_time = 1795361665;
    f.rec.end_time = 1795361665 + 300;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_ACCOUNT", "acct");
    expect(env, "SLURM_JOB_QOS", "high");
    expect(env, "SLURM_MEM_PER_NODE", "100");
    absent(env, "SLURM_MEM_PER_CPU");
    expect(env, "SLURM_OPEN_MODE", "a");
    expect(env, "SLURM_JOB_START_TIME", "1795361665");
    expect(env, "SLURM_JOB_END_TIME", "1795361965");
    expect(env, "SLURM_JOB_NAME", "myname");
    jobenv_free(env);

    /* -n2 --mem-per-cpu=100 --open-mode=truncate */
    f.desc.has_mem_per_node_mb = 0;
    f.desc.has_mem_per_cpu_mb = 1;
    f.desc.mem_per_cpu_mb = 100;
    f.desc.open_mode = (char *)"truncate";
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_MEM_PER_CPU", "100");
    absent(env, "SLURM_MEM_PER_NODE");
    expect(env, "SLURM_OPEN_MODE", "t");
    jobenv_free(env);
}

/* Task counts and layouts of the reference jobs. */
static void test_layouts(void **state)
{
    struct fx f;
    char **env;

    /* 274: -n2 -c2 on one node of 4 CPUs */
    fx_init(&f, 274, "wrap");
    fx_node(&f, "n2", 4, 2);
    f.desc.has_ntasks = f.desc.has_cpus_per_task = 1;
    f.desc.ntasks = 2;
    f.desc.cpus_per_task = f.rec.cpus_per_task = 2;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "4");
    expect(env, "SLURM_CPUS_PER_TASK", "2");
    expect(env, "SLURM_TASKS_PER_NODE", "2");
    expect(env, "SLURM_NTASKS", "2");
    expect(env, "SLURM_CPUS_ON_NODE", "4");
    jobenv_free(env);

    /* 275: -N2 --ntasks-per-node=2, no -n: Slurm still sets SLURM_NTASKS=4 */
    fx_init(&f, 275, "wrap");
    fx_node(&f, "n3", 2, 2);
    fx_node(&f, "n4", 2, 2);
    f.desc.has_ntasks_per_node = 1;
    f.desc.ntasks_per_node = 2;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "2(x2)");
    expect(env, "SLURM_NTASKS", "4");
    expect(env, "SLURM_NPROCS", "4");
    expect(env, "SLURM_NTASKS_PER_NODE", "2");
    expect(env, "SLURM_TASKS_PER_NODE", "2(x2)");
    absent(env, "SLURM_CPUS_PER_TASK");
    jobenv_free(env);

    /* 283: -N2 and nothing else: no SLURM_NTASKS; tasks per node as many as fit */
    fx_init(&f, 283, "wrap");
    fx_node(&f, "n3", 1, 1);
    fx_node(&f, "n4", 1, 1);
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "1(x2)");
    expect(env, "SLURM_TASKS_PER_NODE", "1(x2)");
    absent(env, "SLURM_NTASKS");
    absent(env, "SLURM_NPROCS");
    /* the script's node is not in the allocation: no CPU count for it */
    absent(env, "SLURM_CPUS_ON_NODE");
    jobenv_free(env);

    /* 305: -N2 -n5 --exclusive on 4+4 CPUs: Slurm deals the tasks round by round, one per
     * node with room: 3,2, whatever placement the allocation records (4,1 here) */
    fx_init(&f, 305, "wrap");
    fx_node(&f, "n1", 4, 4);
    fx_node(&f, "n2", 4, 1);
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 5;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "4(x2)");
    expect(env, "SLURM_TASKS_PER_NODE", "3,2");
    jobenv_free(env);

    /* 306: -N2 -n3 -c2 on 4+2 CPUs: room for 2 and 1 tasks */
    fx_init(&f, 306, "wrap");
    fx_node(&f, "n1", 4, 2);
    fx_node(&f, "n2", 2, 1);
    f.desc.has_ntasks = f.desc.has_cpus_per_task = 1;
    f.desc.ntasks = 3;
    f.desc.cpus_per_task = f.rec.cpus_per_task = 2;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "4,2");
    expect(env, "SLURM_TASKS_PER_NODE", "2,1");
    jobenv_free(env);

    /* 284: -N2 -n8 */
    fx_init(&f, 284, "wrap");
    fx_node(&f, "n1", 4, 4);
    fx_node(&f, "n2", 4, 4);
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 8;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_TASKS_PER_NODE", "4(x2)");
    jobenv_free(env);

    /* more tasks than CPUs (overcommit): the rest goes round-robin from the first node */
    fx_init(&f, 400, "wrap");
    fx_node(&f, "n1", 1, 3);
    fx_node(&f, "n2", 2, 2);
    fx_node(&f, "n3", 1, 2);
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 9;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "1,2,1");
    expect(env, "SLURM_TASKS_PER_NODE", "3,4,2");
    jobenv_free(env);

    /* 304: -N1 --exclusive, no -n: as many tasks as CPUs, no SLURM_NTASKS */
    fx_init(&f, 304, "wrap");
    fx_node(&f, "n1", 4, 1);
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_TASKS_PER_NODE", "4");
    absent(env, "SLURM_NTASKS");
    jobenv_free(env);

    /* the same with -c2: 4 CPUs hold 2 tasks */
    fx_init(&f, 304, "wrap");
    fx_node(&f, "n1", 4, 1);
    f.desc.has_cpus_per_task = 1;
    f.desc.cpus_per_task = 2;
    env = build(&f, 1, &ref_ctx);
    expect(env, "SLURM_TASKS_PER_NODE", "2");
    absent(env, "SLURM_NTASKS");
    jobenv_free(env);
}

/* ---- het jobs ----------------------------------------------------------------------- */

/* docs/03-env.md §3.4's example (salloc -N1 : -N2) as a batch job with -n1 : -n2 -c2 --mem-per-cpu.
 * Component 1's nodes come unsorted. */
static void test_het_two_components(void **state)
{
    struct fx f[2];
    fx_init(&f[0], 11741, "first");
    fx_init(&f[1], 11742, "second");
    fx_het(f, 2);
    f[0].rec.batch_host = (char *)"nid00001";
    fx_node(&f[0], "nid00001", 1, 1);
    fx_node(&f[1], "nid00012", 2, 1);
    fx_node(&f[1], "nid00011", 2, 1);
    f[0].desc.has_ntasks = f[1].desc.has_ntasks = 1;
    f[0].desc.ntasks = 1;
    f[1].desc.ntasks = 2;
    f[1].desc.has_cpus_per_task = 1;
    f[1].desc.cpus_per_task = f[1].rec.cpus_per_task = 2;
    f[1].desc.has_mem_per_cpu_mb = 1;
    f[1].desc.mem_per_cpu_mb = 50;
    f[1].desc.account = (char *)"other";
    /* what component 1's description may hold must not matter for job-wide variables */
    f[1].desc.submit_dir = (char *)"/elsewhere";

    static const struct jobenv_context ctx = {"ref", NULL, "alice"};
    char **env = build(f, 2, &ctx);
    static const char *const want[] = {
        "SLURM_CLUSTER_NAME=ref",
        "SLURM_JOB_ID=11741",
        "SLURM_JOBID=11741",
        "SLURM_JOB_NAME=first",
        "SLURM_JOB_NUM_NODES=1",
        "SLURM_NNODES=1",
        "SLURM_JOB_NODELIST=nid00001",
        "SLURM_NODELIST=nid00001",
        "SLURM_JOB_PARTITION=debug",
        "SLURM_JOB_CPUS_PER_NODE=1",
        "SLURM_NTASKS=1",
        "SLURM_NPROCS=1",
        "SLURM_TASKS_PER_NODE=1",
        "SLURM_HET_SIZE=2",
        "SLURM_PACK_SIZE=2",
        "SLURM_JOB_UID=1000",
        "SLURM_JOB_GID=100",
        "SLURM_JOB_USER=alice",
        "SLURM_SUBMIT_DIR=/home/alice/run",
        "SLURM_SUBMIT_HOST=login1",
        "SLURMD_NODENAME=nid00001",
        "SLURM_CPUS_ON_NODE=1",
        "SLURM_NODEID=0",
        "SLURM_PROCID=0",
        "SLURM_LOCALID=0",
        "SLURM_GTIDS=0",
        "SLURM_TOPOLOGY_ADDR=nid00001",
        "SLURM_TOPOLOGY_ADDR_PATTERN=node",
        "ENVIRONMENT=BATCH",
        "HOSTNAME=nid00001",
        "SLURM_JOB_ID_HET_GROUP_0=11741",
        "SLURM_JOBID_HET_GROUP_0=11741",
        "SLURM_JOB_NAME_HET_GROUP_0=first",
        "SLURM_JOB_NUM_NODES_HET_GROUP_0=1",
        "SLURM_JOB_NODES_HET_GROUP_0=1",
        "SLURM_NNODES_HET_GROUP_0=1",
        "SLURM_JOB_NODELIST_HET_GROUP_0=nid00001",
        "SLURM_NODELIST_HET_GROUP_0=nid00001",
        "SLURM_JOB_PARTITION_HET_GROUP_0=debug",
        "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_0=1",
        "SLURM_NTASKS_HET_GROUP_0=1",
        "SLURM_NPROCS_HET_GROUP_0=1",
        "SLURM_TASKS_PER_NODE_HET_GROUP_0=1",
        "SLURM_JOB_ID_HET_GROUP_1=11742",
        "SLURM_JOBID_HET_GROUP_1=11742",
        "SLURM_JOB_NAME_HET_GROUP_1=second",
        "SLURM_JOB_NUM_NODES_HET_GROUP_1=2",
        "SLURM_JOB_NODES_HET_GROUP_1=2",
        "SLURM_NNODES_HET_GROUP_1=2",
        "SLURM_JOB_NODELIST_HET_GROUP_1=nid[00011-00012]",
        "SLURM_NODELIST_HET_GROUP_1=nid[00011-00012]",
        "SLURM_JOB_PARTITION_HET_GROUP_1=debug",
        "SLURM_JOB_ACCOUNT_HET_GROUP_1=other",
        "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1=2(x2)",
        "SLURM_CPUS_PER_TASK_HET_GROUP_1=2",
        "SLURM_NTASKS_HET_GROUP_1=2",
        "SLURM_NPROCS_HET_GROUP_1=2",
        "SLURM_TASKS_PER_NODE_HET_GROUP_1=1(x2)",
        "SLURM_MEM_PER_CPU_HET_GROUP_1=50",
        "SLURM_JOB_ID_PACK_GROUP_0=11741",
        "SLURM_JOBID_PACK_GROUP_0=11741",
        "SLURM_JOB_NAME_PACK_GROUP_0=first",
        "SLURM_JOB_NUM_NODES_PACK_GROUP_0=1",
        "SLURM_NNODES_PACK_GROUP_0=1",
        "SLURM_JOB_NODELIST_PACK_GROUP_0=nid00001",
        "SLURM_NODELIST_PACK_GROUP_0=nid00001",
        "SLURM_JOB_PARTITION_PACK_GROUP_0=debug",
        "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0=1",
        "SLURM_NTASKS_PACK_GROUP_0=1",
        "SLURM_NPROCS_PACK_GROUP_0=1",
        "SLURM_TASKS_PER_NODE_PACK_GROUP_0=1",
        "SLURM_JOB_ID_PACK_GROUP_1=11742",
        "SLURM_JOBID_PACK_GROUP_1=11742",
        "SLURM_JOB_NAME_PACK_GROUP_1=second",
        "SLURM_JOB_NUM_NODES_PACK_GROUP_1=2",
        "SLURM_NNODES_PACK_GROUP_1=2",
        "SLURM_JOB_NODELIST_PACK_GROUP_1=nid[00011-00012]",
        "SLURM_NODELIST_PACK_GROUP_1=nid[00011-00012]",
        "SLURM_JOB_PARTITION_PACK_GROUP_1=debug",
        "SLURM_JOB_ACCOUNT_PACK_GROUP_1=other",
        "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_1=2(x2)",
        "SLURM_CPUS_PER_TASK_PACK_GROUP_1=2",
        "SLURM_NTASKS_PACK_GROUP_1=2",
        "SLURM_NPROCS_PACK_GROUP_1=2",
        "SLURM_TASKS_PER_NODE_PACK_GROUP_1=1(x2)",
        "SLURM_MEM_PER_CPU_PACK_GROUP_1=50",
        NULL,
    };
    expect_all(env, want);
    no_duplicates(env);
    jobenv_free(env);
}

/* 286: -n1 -c2 : ... Slurm 22.05 sets SLURM_CPUS_PER_TASK_HET_GROUP_0 but forgets the
 * unsuffixed SLURM_CPUS_PER_TASK; Tessera sets it (unsuffixed = component 0). A third
 * component, and the script's node from the caller over the record's batch host. */
static void test_het_three_components(void **state)
{
    struct fx f[3];
    fx_init(&f[0], 286, "wrap");
    fx_init(&f[1], 287, "wrap");
    fx_init(&f[2], 288, "wrap");
    fx_het(f, 3);
    f[0].rec.batch_host = (char *)"n9";
    fx_node(&f[0], "n1", 2, 1);
    fx_node(&f[1], "n2", 1, 1);
    fx_node(&f[2], "n3", 3, 3);
    fx_node(&f[2], "n4", 1, 1);
    f[0].desc.has_cpus_per_task = 1;
    f[0].desc.cpus_per_task = f[0].rec.cpus_per_task = 2;
    f[0].desc.has_ntasks = 1;
    f[0].desc.ntasks = 1;
    f[0].desc.export_env = (char *)"NONE";
    /* 307: --ntasks-per-node on a later component */
    f[1].desc.has_ntasks_per_node = 1;
    f[1].desc.ntasks_per_node = 1;

    static const struct jobenv_context ctx = {"ref", "n1", "alice"};
    char **env = build(f, 3, &ctx);
    no_duplicates(env);
    expect(env, "SLURM_JOB_ID", "286");
    expect(env, "SLURM_CPUS_PER_TASK", "2");
    expect(env, "SLURM_CPUS_PER_TASK_HET_GROUP_0", "2");
    absent(env, "SLURM_CPUS_PER_TASK_HET_GROUP_1");
    expect(env, "SLURM_HET_SIZE", "3");
    expect(env, "SLURM_JOB_ID_HET_GROUP_2", "288");
    expect(env, "SLURM_JOB_NODELIST_HET_GROUP_2", "n[3-4]");
    expect(env, "SLURM_JOB_NODES_HET_GROUP_2", "2");
    expect(env, "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_2", "3,1");
    expect(env, "SLURM_TASKS_PER_NODE_HET_GROUP_2", "3,1");
    absent(env, "SLURM_NTASKS_HET_GROUP_2");
    expect(env, "SLURM_NTASKS_PER_NODE_HET_GROUP_1", "1");
    expect(env, "SLURM_NTASKS_HET_GROUP_1", "1");
    absent(env, "SLURM_NTASKS_PER_NODE");
    absent(env, "SLURM_NTASKS_PER_NODE_HET_GROUP_0");
    absent(env, "SLURM_JOB_NODES_PACK_GROUP_2"); /* docs/03-env.md §1.4 */
    absent(env, "SLURM_JOB_ID_HET_GROUP_3");
    /* job-wide: once, unsuffixed */
    expect(env, "SLURM_EXPORT_ENV", "NONE");
    absent(env, "SLURM_EXPORT_ENV_HET_GROUP_0");
    absent(env, "SLURM_HET_SIZE_HET_GROUP_0");
    absent(env, "SLURM_CLUSTER_NAME_HET_GROUP_1");
    expect(env, "SLURMD_NODENAME", "n1");
    expect(env, "SLURM_CPUS_ON_NODE", "2");
    jobenv_free(env);
}

/* ---- --export ----------------------------------------------------------------------- */

static char *submit_env[] = {
    (char *)"HOME=/home/alice", (char *)"FOO=foo",           (char *)"SLURM_MINE=1",
    (char *)"BAR=bar",          (char *)"SLURM_PRIO_PROCESS=0", (char *)"PATH=/bin",
    (char *)"TESSERA_CONF=/etc/t.conf",
};

static char **export_case(const char *export_env)
{
    struct fx f;
    fx_init(&f, 279, "wrap");
    fx_node(&f, "n2", 1, 1);
    f.desc.environment = submit_env;
    f.desc.n_environment = sizeof(submit_env) / sizeof(submit_env[0]);
    f.desc.export_env = (char *)export_env;
    return build(&f, 1, &ref_ctx);
}

/* The submitter's part of the environment: the entries before SLURM_CLUSTER_NAME. */
static void expect_exported(char **env, const char *const *want)
{
    size_t i = 0;
    for (; want[i]; i++) {
        if (!env[i] || strcmp(env[i], want[i]) != 0)
            fail_msg("entry %zu is \"%s\", expected \"%s\"", i, env[i] ? env[i] : "(end)",
                     want[i]);
    }
    if (!env[i] || strncmp(env[i], "SLURM_CLUSTER_NAME=", 19) != 0)
        fail_msg("entry %zu is \"%s\", expected the computed variables", i,
                 env[i] ? env[i] : "(end)");
}

static void test_export_all(void **state)
{
    static const char *const all[] = {"HOME=/home/alice", "FOO=foo", "SLURM_MINE=1",
                                      "BAR=bar", "SLURM_PRIO_PROCESS=0", "PATH=/bin",
                                      "TESSERA_CONF=/etc/t.conf", NULL};
    const char *forms[] = {NULL, "", "ALL", "all"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char **env = export_case(forms[i]);
        expect_exported(env, all);
        /* 303: not even for an explicit --export=ALL */
        absent(env, "SLURM_EXPORT_ENV");
        jobenv_free(env);
    }
}

/* NONE: only the submitter's SLURM_* variables and TESSERA_CONF (the commands in the job
 * reach the same cluster); and unlike Slurm 22.05 (which then lost SLURM_JOB_ID,
 * SLURM_NTASKS, ...) every computed variable is there. */
static void test_export_none(void **state)
{
    static const char *const slurm_only[] = {"SLURM_MINE=1", "SLURM_PRIO_PROCESS=0",
                                             "TESSERA_CONF=/etc/t.conf", NULL};
    const char *forms[] = {"NONE", "none", "NIL"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char **env = export_case(forms[i]);
        expect_exported(env, slurm_only);
        expect(env, "SLURM_EXPORT_ENV", forms[i]);
        expect(env, "SLURM_JOB_ID", "279");
        expect(env, "SLURM_JOB_NODELIST", "n2");
        absent(env, "HOME");
        absent(env, "PATH");
        jobenv_free(env);
    }
}

/* Which --export forms start from the login environment (Slurm: NONE and lists without
 * ALL; 23.02's NIL not); SLURM_GET_USER_ENV says so in the script. */
static void test_login_wanted(void **state)
{
    static const struct {
        const char *export_env;
        int want;
    } cases[] = {{NULL, 0},        {"", 0},          {"ALL", 0},       {"all", 0},
                 {"NIL", 0},       {"NONE", 1},      {"none", 1},      {"FOO", 1},
                 {"FOO,BAR=1", 1}, {"FOO,ALL", 0},   {"ALL,FOO=1", 0}, {"'A=1,ALL'", 1},
                 {"ALLX", 1},      {"FOO,\"ALL\"", 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
        d.export_env = (char *)cases[i].export_env;
        if (jobenv_login_wanted(&d) != cases[i].want)
            fail_msg("--export=%s: %d", cases[i].export_env, !cases[i].want);
    }
    Tessera__JobDesc gue = TESSERA__JOB_DESC__INIT;
    gue.has_get_user_env = gue.get_user_env = 1; /* sbatch --get-user-env, --export=ALL */
    assert_true(jobenv_login_wanted(&gue));
    char **env = export_case("NONE");
    expect(env, "SLURM_GET_USER_ENV", "1");
    jobenv_free(env);
    env = export_case("ALL,FOO=bar");
    absent(env, "SLURM_GET_USER_ENV");
    jobenv_free(env);
}

static void test_export_lists(void **state)
{
    char **env;

    /* 280: ALL,FOO=bar: everything, FOO replaced in place */
    static const char *const all_foo[] = {"HOME=/home/alice", "FOO=bar", "SLURM_MINE=1",
                                          "BAR=bar", "SLURM_PRIO_PROCESS=0", "PATH=/bin",
                                          "TESSERA_CONF=/etc/t.conf", NULL};
    env = export_case("ALL,FOO=bar");
    expect_exported(env, all_foo);
    expect(env, "SLURM_EXPORT_ENV", "ALL,FOO=bar");
    jobenv_free(env);

    /* 281: FOO,BAZ=x: the named ones in the order named, then the SLURM_* ones; a name the
     * submitter did not have (NOPE) is skipped */
    static const char *const list[] = {"FOO=foo", "BAZ=x", "SLURM_MINE=1",
                                       "SLURM_PRIO_PROCESS=0", "TESSERA_CONF=/etc/t.conf", NULL};
    env = export_case("FOO,NOPE,BAZ=x");
    expect_exported(env, list);
    jobenv_free(env);

    /* an assignment before ALL is overridden by the submitter's value, after ALL it wins
     * (Slurm merges the items in order) */
    static const char *const before[] = {"FOO=foo", "HOME=/home/alice", "SLURM_MINE=1",
                                         "BAR=bar", "SLURM_PRIO_PROCESS=0", "PATH=/bin",
                                         "TESSERA_CONF=/etc/t.conf", NULL};
    env = export_case("FOO=early,ALL");
    expect_exported(env, before);
    jobenv_free(env);

    /* quotes: a quoted item keeps its commas; empty items are ignored */
    static const char *const quoted[] = {"A=x,y", "B=\"1,2\"", "PATH=/bin", "SLURM_MINE=1",
                                         "SLURM_PRIO_PROCESS=0", "TESSERA_CONF=/etc/t.conf",
                                         NULL};
    env = export_case("'A=x,y',,B=\"1,2\",PATH");
    expect_exported(env, quoted);
    jobenv_free(env);
}

/* ---- inherited SLURM_* variables ---------------------------------------------------- */

/* 282: a job submitted from inside another job. Slurm 22.05 overwrote SLURM_JOB_ID and
 * SLURM_NTASKS but kept the outer SLURM_HET_SIZE=5, SLURM_JOB_ACCOUNT=outer,
 * SLURM_MEM_PER_NODE=5, SLURM_NTASKS_PER_NODE=3; Tessera drops every variable it owns. */
static void test_inherited_slurm_variables(void **state)
{
    static char *outer[] = {
        (char *)"SLURM_JOB_ID=999",
        (char *)"USER=alice",
        (char *)"SLURM_JOBID=999",
        (char *)"SLURM_NTASKS=77",
        (char *)"SLURM_CPUS_PER_TASK=9",
        (char *)"SLURM_HET_SIZE=5",
        (char *)"SLURM_PACK_SIZE=5",
        (char *)"SLURM_JOB_ACCOUNT=outer",
        (char *)"SLURM_MEM_PER_NODE=5",
        (char *)"SLURM_NTASKS_PER_NODE=3",
        (char *)"SLURM_JOB_ID_HET_GROUP_1=1000",
        (char *)"SLURM_JOB_NODES_HET_GROUP_0=4",
        (char *)"SLURM_NTASKS_PACK_GROUP_12=4",
        (char *)"SLURM_EXPORT_ENV=ALL",
        (char *)"SLURM_STEP_ID=3",
        (char *)"SLURM_STEPID=3",
        (char *)"SLURM_TASK_PID=4242",
        (char *)"SLURM_ARRAY_TASK_ID=2",
        (char *)"SLURM_PROCID=5",
        (char *)"HOSTNAME=login1",
        (char *)"ENVIRONMENT=INTERACTIVE",
        (char *)"SLURM_PRIO_PROCESS=0",
        (char *)"SLURM_JOB_NODES=4",         /* not a name Tessera sets unsuffixed */
        (char *)"SLURM_JOB_ID_HET_GROUP_=1", /* not a suffix */
        (char *)"SLURM_CONF=/etc/slurm/slurm.conf",
    };
    const char *forms[] = {NULL, "NONE"};
    for (size_t k = 0; k < 2; k++) {
        struct fx f;
        fx_init(&f, 282, "wrap");
        fx_node(&f, "n2", 1, 1);
        f.desc.has_ntasks = 1;
        f.desc.ntasks = 1;
        f.desc.environment = outer;
        f.desc.n_environment = sizeof(outer) / sizeof(outer[0]);
        f.desc.export_env = (char *)forms[k];
        char **env = build(&f, 1, &ref_ctx);
        no_duplicates(env);
        expect(env, "SLURM_JOB_ID", "282");
        expect(env, "SLURM_JOBID", "282");
        expect(env, "SLURM_NTASKS", "1");
        expect(env, "SLURM_PROCID", "0");
        expect(env, "HOSTNAME", "n2");
        expect(env, "ENVIRONMENT", "BATCH");
        static const char *const gone[] = {
            "SLURM_CPUS_PER_TASK",         "SLURM_HET_SIZE",          "SLURM_PACK_SIZE",
            "SLURM_JOB_ACCOUNT",           "SLURM_MEM_PER_NODE",      "SLURM_NTASKS_PER_NODE",
            "SLURM_JOB_ID_HET_GROUP_1",    "SLURM_JOB_NODES_HET_GROUP_0",
            "SLURM_NTASKS_PACK_GROUP_12",  "SLURM_STEP_ID",           "SLURM_STEPID",
            "SLURM_TASK_PID",              "SLURM_ARRAY_TASK_ID"};
        for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
            absent(env, gone[i]);
        if (forms[k])
            expect(env, "SLURM_EXPORT_ENV", "NONE");
        else
            absent(env, "SLURM_EXPORT_ENV");
        /* the submitter's own SLURM_* variables stay */
        expect(env, "SLURM_PRIO_PROCESS", "0");
        expect(env, "SLURM_JOB_NODES", "4");
        expect(env, "SLURM_JOB_ID_HET_GROUP_", "1");
        expect(env, "SLURM_CONF", "/etc/slurm/slurm.conf");
        if (forms[k])
            absent(env, "USER");
        else
            expect(env, "USER", "alice");
        jobenv_free(env);
    }
}

/* Repeated names in the submitter's environment give one entry (the last value, at the
 * first place); entries without '=' or without a name are dropped. */
static void test_submitter_duplicates(void **state)
{
    static char *dup[] = {(char *)"A=1", (char *)"B=2", (char *)"A=3", (char *)"garbage",
                          (char *)"=x",  (char *)"C=",  (char *)"D=a=b"};
    struct fx f;
    fx_init(&f, 5, "wrap");
    fx_node(&f, "n2", 1, 1);
    f.desc.environment = dup;
    f.desc.n_environment = sizeof(dup) / sizeof(dup[0]);
    char **env = build(&f, 1, &ref_ctx);
    static const char *const want[] = {"A=3", "B=2", "C=", "D=a=b", NULL};
    expect_exported(env, want);
    no_duplicates(env);
    jobenv_free(env);

    /* a listed name repeated in the environment: the last value too */
    f.desc.export_env = (char *)"A";
    env = build(&f, 1, &ref_ctx);
    static const char *const want_a[] = {"A=3", NULL};
    expect_exported(env, want_a);
    jobenv_free(env);
}

/* ---- the script's node and missing context ------------------------------------------ */

static void test_batch_node(void **state)
{
    struct fx f;
    fx_init(&f, 9, "wrap");
    fx_node(&f, "n4", 3, 1);
    fx_node(&f, "n10", 1, 1);
    fx_node(&f, "n3", 2, 1);

    /* no node named anywhere: the first of the sorted list */
    static const struct jobenv_context bare = {NULL, NULL, NULL};
    char **env = build(&f, 1, &bare);
    expect(env, "SLURMD_NODENAME", "n3");
    expect(env, "SLURM_CPUS_ON_NODE", "2");
    expect(env, "SLURM_JOB_NODELIST", "n[3-4,10]");
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "2,3,1");
    absent(env, "SLURM_CLUSTER_NAME");
    absent(env, "SLURM_JOB_USER");
    jobenv_free(env);

    /* the record's batch host */
    f.rec.batch_host = (char *)"n4";
    env = build(&f, 1, &bare);
    expect(env, "SLURMD_NODENAME", "n4");
    expect(env, "HOSTNAME", "n4");
    expect(env, "SLURM_TOPOLOGY_ADDR", "n4");
    expect(env, "SLURM_CPUS_ON_NODE", "3");
    jobenv_free(env);

    /* a NULL context is the bare one */
    const Tessera__JobRecord *rec = &f.rec;
    env = jobenv_batch(&rec, 1, NULL);
    assert_non_null(env);
    expect(env, "SLURMD_NODENAME", "n4");
    jobenv_free(env);

    /* no components: nothing to describe */
    assert_null(jobenv_batch(&rec, 0, &ref_ctx));
    jobenv_free(NULL);
}

/* A record without a description or allocation still gives a well-formed environment. */
static void test_sparse_record(void **state)
{
    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    r.job_id = 77;
    const Tessera__JobRecord *rec = &r;
    char **env = jobenv_batch(&rec, 1, &ref_ctx);
    assert_non_null(env);
    expect(env, "SLURM_JOB_ID", "77");
    expect(env, "SLURM_JOB_NUM_NODES", "0");
    expect(env, "SLURM_JOB_NODELIST", "");
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "");
    absent(env, "SLURM_JOB_NAME");
    absent(env, "SLURM_JOB_UID");
    absent(env, "SLURM_CPUS_ON_NODE");
    no_duplicates(env);
    jobenv_free(env);
}

/* ---- count compression -------------------------------------------------------------- */

/* ---- salloc's context ------------------------------------------------------------- */

static char **build_salloc(struct fx *f, size_t n, char **envp)
{
    const Tessera__JobRecord *recs[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++)
        recs[i] = &f[i].rec;
    struct jobenv_context ctx = {.cluster = "ref"};
    char **env = jobenv_salloc(recs, n, envp, &ctx);
    assert_non_null(env);
    return env;
}

/* Reference: "salloc -n2 --mem=100 env" (job 530) gave these, and nothing of a node or a
 * task. */
static void test_salloc_plain(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 530, "interactive");
    f.desc.has_ntasks = 1;
    f.desc.ntasks = 2;
    f.desc.has_mem_per_node_mb = 1;
    f.desc.mem_per_node_mb = 100;
    fx_node(&f, "n1", 2, 2);
    char *envp[] = {"HOME=/home/alice", "HOSTNAME=login1", "SLURMD_NODENAME=n9",
                    "SLURM_PROCID=4", "SLURM_STEP_ID=3", NULL};
    char **env = build_salloc(&f, 1, envp);
    expect(env, "HOME", "/home/alice");
    expect(env, "HOSTNAME", "login1"); /* the user's, unlike a batch script's */
    expect(env, "SLURM_CLUSTER_NAME", "ref");
    expect(env, "SLURM_JOB_ID", "530");
    expect(env, "SLURM_JOBID", "530");
    expect(env, "SLURM_JOB_NAME", "interactive");
    expect(env, "SLURM_JOB_NODELIST", "n1");
    expect(env, "SLURM_NODELIST", "n1");
    expect(env, "SLURM_JOB_NUM_NODES", "1");
    expect(env, "SLURM_NNODES", "1");
    expect(env, "SLURM_JOB_PARTITION", "debug");
    expect(env, "SLURM_JOB_CPUS_PER_NODE", "2");
    expect(env, "SLURM_MEM_PER_NODE", "100");
    expect(env, "SLURM_NTASKS", "2");
    expect(env, "SLURM_NPROCS", "2");
    expect(env, "SLURM_TASKS_PER_NODE", "2");
    expect(env, "SLURM_SUBMIT_DIR", "/home/alice/run");
    expect(env, "SLURM_SUBMIT_HOST", "login1");
    /* the outer job's node and task identities are gone, and none are made up */
    absent(env, "SLURMD_NODENAME");
    absent(env, "SLURM_PROCID");
    absent(env, "SLURM_STEP_ID");
    absent(env, "SLURM_NODEID");
    absent(env, "SLURM_LOCALID");
    absent(env, "SLURM_JOB_USER");
    absent(env, "SLURM_HET_SIZE");
    absent(env, "ENVIRONMENT");
    no_duplicates(env);
    jobenv_free(env);
}

/* docs/03-env.md §3.3: "salloc -N1 : -N2" -- only the leader's id and the size unsuffixed. */
static void test_salloc_het(void **state)
{
    (void)state;
    struct fx f[2];
    fx_init(&f[0], 11741, "interactive");
    fx_init(&f[1], 11742, "interactive");
    fx_het(f, 2);
    fx_node(&f[0], "nid00001", 1, 1);
    fx_node(&f[1], "nid00011", 1, 1);
    fx_node(&f[1], "nid00012", 1, 1);
    char *envp[] = {"SLURM_JOB_NODELIST=stale", "SLURM_NTASKS=9", NULL};
    char **env = build_salloc(f, 2, envp);
    expect(env, "SLURM_JOB_ID", "11741");
    expect(env, "SLURM_JOBID", "11741");
    expect(env, "SLURM_HET_SIZE", "2");
    expect(env, "SLURM_JOB_ID_HET_GROUP_0", "11741");
    expect(env, "SLURM_JOB_ID_HET_GROUP_1", "11742");
    expect(env, "SLURM_JOB_NODES_HET_GROUP_0", "1");
    expect(env, "SLURM_JOB_NODES_HET_GROUP_1", "2");
    expect(env, "SLURM_JOB_NUM_NODES_HET_GROUP_1", "2");
    expect(env, "SLURM_JOB_NODELIST_HET_GROUP_0", "nid00001");
    expect(env, "SLURM_JOB_NODELIST_HET_GROUP_1", "nid[00011-00012]");
    expect(env, "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1", "1(x2)");
    expect(env, "SLURM_JOBID_PACK_GROUP_1", "11742");
    expect(env, "SLURM_SUBMIT_DIR", "/home/alice/run");
    absent(env, "SLURM_JOB_NODELIST"); /* the submitter's stale one is dropped too */
    absent(env, "SLURM_JOB_NUM_NODES");
    absent(env, "SLURM_JOB_NAME");
    absent(env, "SLURM_NTASKS"); /* not every component gave -n */
    absent(env, "SLURM_JOB_PARTITION");
    no_duplicates(env);
    jobenv_free(env);

    /* every component gave -n: SLURM_NTASKS is the sum */
    f[0].desc.has_ntasks = f[1].desc.has_ntasks = 1;
    f[0].desc.ntasks = 1;
    f[1].desc.ntasks = 4;
    env = build_salloc(f, 2, NULL);
    expect(env, "SLURM_NTASKS", "5");
    expect(env, "SLURM_NTASKS_HET_GROUP_1", "4");
    absent(env, "SLURM_NPROCS");
    jobenv_free(env);
}

static void test_compress_counts(void **state)
{
    char buf[64];
    static const uint32_t a[] = {4, 4, 2};
    assert_string_equal(jobenv_compress_counts(a, 3, buf, sizeof(buf)), "4(x2),2");
    static const uint32_t b[] = {2, 1};
    assert_string_equal(jobenv_compress_counts(b, 2, buf, sizeof(buf)), "2,1");
    static const uint32_t c[] = {1, 1, 1};
    assert_string_equal(jobenv_compress_counts(c, 3, buf, sizeof(buf)), "1(x3)");
    static const uint32_t d[] = {3, 1, 1, 3, 3, 0};
    assert_string_equal(jobenv_compress_counts(d, 6, buf, sizeof(buf)), "3,1(x2),3(x2),0");
    assert_string_equal(jobenv_compress_counts(a, 1, buf, sizeof(buf)), "4");
    assert_string_equal(jobenv_compress_counts(NULL, 0, buf, sizeof(buf)), "");
    static const uint32_t big[] = {4294967295u, 4294967295u};
    assert_string_equal(jobenv_compress_counts(big, 2, buf, sizeof(buf)), "4294967295(x2)");

    /* too small: cut, still terminated, nothing written past len */
    memset(buf, 'Z', sizeof(buf));
    assert_string_equal(jobenv_compress_counts(a, 3, buf, 5), "4(x2");
    assert_int_equal(buf[5], 'Z');
    memset(buf, 'Z', sizeof(buf));
    jobenv_compress_counts(a, 3, buf, 0);
    assert_int_equal(buf[0], 'Z');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_two_nodes),
        cmocka_unit_test(test_optional_variables),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_het_two_components),
        cmocka_unit_test(test_het_three_components),
        cmocka_unit_test(test_export_all),
        cmocka_unit_test(test_export_none),
        cmocka_unit_test(test_export_lists),
        cmocka_unit_test(test_login_wanted),
        cmocka_unit_test(test_inherited_slurm_variables),
        cmocka_unit_test(test_submitter_duplicates),
        cmocka_unit_test(test_batch_node),
        cmocka_unit_test(test_sparse_record),
        cmocka_unit_test(test_salloc_plain),
        cmocka_unit_test(test_salloc_het),
        cmocka_unit_test(test_compress_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
