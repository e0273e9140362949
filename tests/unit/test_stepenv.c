/* Unit tests for common/stepenv: a step task's environment.
 *
 * The reference is what Slurm 22.05 gave rank 0 of "salloc -N1 : -N2 srun
 * --het-group=0,1 --label env" on the reference cluster (ClusterName=ref): job 538 is
 * component 0 on n1, 539 component 1 on n[2-3], one CPU each. Layouts are placed by
 * common/steplayout from job records built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/job/stepenv.h"
#include "common/job/steplayout.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXNODES 4

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
    f->alloc[i] = a;
    f->allocp[i] = &f->alloc[i];
}

/* The step over the given components (pointers, any order) of a job led by job_id. */
static Tessera__StepLayout *place(struct fx *const *f, size_t n, uint32_t job_id,
                                  uint32_t het_size, uint32_t step_id)
{
    struct steplayout_component comps[4];
    assert_true(n <= 4);
    for (size_t i = 0; i < n; i++) {
        comps[i].rec = &f[i]->rec;
        comps[i].req = &f[i]->req;
    }
    struct steplayout_input in = {
        .job_id = job_id,
        .step_id = step_id,
        .uid = 0,
        .gid = 0,
        .user_name = "root",
        .cluster = "ref",
        .het_size = het_size,
        .components = comps,
        .ncomponents = n,
    };
    Tessera__StepLayout *l = NULL;
    char err[256] = "";
    int rc = steplayout_build(&in, &l, err, sizeof(err));
    if (rc != TS_OK)
        fail_msg("steplayout_build: %d (%s)", rc, err);
    return l;
}

/* salloc -N1 : -N2 */
static void ref_alloc(struct fx *f)
{
    fx_init(&f[0], 538, 0, "debug");
    fx_init(&f[1], 539, 1, "debug");
    fx_node(&f[0], "n1", 1);
    fx_node(&f[1], "n2", 1);
    fx_node(&f[1], "n3", 1);
}

static char **task_env(const Tessera__StepLayout *l, size_t node, size_t local, int pmi_fd,
                       const char *srun_host, char *const *base)
{
    struct stepenv_task t = {node, local, pmi_fd, srun_host, 37199};
    char **env = stepenv_task(l, &t, base);
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

/* "NAME=value" entries, each checked with expect(). */
static void expect_entries(char **env, const char *const *want)
{
    for (size_t i = 0; want[i]; i++) {
        char name[128];
        const char *eq = strchr(want[i], '=');
        assert_non_null(eq);
        snprintf(name, sizeof(name), "%.*s", (int)(eq - want[i]), want[i]);
        expect(env, name, eq + 1);
    }
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

/* What salloc put in its command's environment (common/jobenv's salloc context). */
static char *salloc_env[] = {
    (char *)"HOME=/root",
    (char *)"SLURM_CLUSTER_NAME=ref",
    (char *)"SLURM_JOB_ID=538",
    (char *)"SLURM_JOBID=538",
    (char *)"SLURM_HET_SIZE=2",
    (char *)"SLURM_JOB_ID_HET_GROUP_0=538",
    (char *)"SLURM_JOB_NAME_HET_GROUP_0=interactive",
    (char *)"SLURM_JOB_NODELIST_HET_GROUP_0=n1",
    (char *)"SLURM_JOB_CPUS_PER_NODE_HET_GROUP_0=1",
    (char *)"SLURM_JOB_ID_HET_GROUP_1=539",
    (char *)"SLURM_JOB_NODELIST_HET_GROUP_1=n[2-3]",
    (char *)"SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1=1(x2)",
    (char *)"SLURM_JOB_ID_PACK_GROUP_1=539",
    (char *)"PATH=/usr/bin:/bin",
    NULL,
};

/* ---- the reference ---------------------------------------------------------------------- */

/* Rank 0, every variable and its place. */
static void test_reference_rank0(void **state)
{
    struct fx f[2];
    ref_alloc(f);
    struct fx *comps[] = {&f[0], &f[1]};
    Tessera__StepLayout *l = place(comps, 2, 538, 2, 0);
    char **env = task_env(l, 0, 0, -1, "127.0.0.1", salloc_env);

    static const char *const want[] = {
        /* salloc's, minus what the step sets */
        "HOME=/root",
        "SLURM_JOB_NAME_HET_GROUP_0=interactive",
        "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_0=1",
        "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1=1(x2)",
        "PATH=/usr/bin:/bin",
        /* the step's */
        "SLURM_CLUSTER_NAME=ref",
        "SLURM_JOB_ID=538",
        "SLURM_JOBID=538",
        "SLURM_HET_SIZE=2",
        "SLURM_PACK_SIZE=2",
        "SLURM_JOB_ID_HET_GROUP_0=538",
        "SLURM_JOB_NODELIST_HET_GROUP_0=n1",
        "SLURM_JOB_NUM_NODES_HET_GROUP_0=1",
        "SLURM_JOB_NODES_HET_GROUP_0=1",
        "SLURM_JOB_PARTITION_HET_GROUP_0=debug",
        "SLURM_JOB_ID_HET_GROUP_1=539",
        "SLURM_JOB_NODELIST_HET_GROUP_1=n[2-3]",
        "SLURM_JOB_NUM_NODES_HET_GROUP_1=2",
        "SLURM_JOB_NODES_HET_GROUP_1=2",
        "SLURM_JOB_PARTITION_HET_GROUP_1=debug",
        "SLURM_JOB_ID_PACK_GROUP_0=538",
        "SLURM_JOB_NODELIST_PACK_GROUP_0=n1",
        "SLURM_JOB_NUM_NODES_PACK_GROUP_0=1",
        "SLURM_JOB_PARTITION_PACK_GROUP_0=debug",
        "SLURM_JOB_ID_PACK_GROUP_1=539",
        "SLURM_JOB_NODELIST_PACK_GROUP_1=n[2-3]",
        "SLURM_JOB_NUM_NODES_PACK_GROUP_1=2",
        "SLURM_JOB_PARTITION_PACK_GROUP_1=debug",
        "SLURM_NTASKS=3",
        "SLURM_NPROCS=3",
        "SLURM_NNODES=3",
        "SLURM_STEP_NUM_NODES=3",
        "SLURM_JOB_NUM_NODES=3",
        "SLURM_JOB_NODELIST=n[1-3]",
        "SLURM_NODELIST=n[1-3]",
        "SLURM_STEP_NODELIST=n[1-3]",
        "SLURM_STEP_ID=0",
        "SLURM_STEPID=0",
        "SLURM_STEP_NUM_TASKS=3",
        "SLURM_STEP_TASKS_PER_NODE=1(x3)",
        "SLURM_TASKS_PER_NODE=1(x3)",
        "SLURM_JOB_PARTITION=debug",
        "SLURM_PROCID=0",
        "SLURM_LOCALID=0",
        "SLURM_NODEID=0",
        "SLURM_GTIDS=0",
        "SLURMD_NODENAME=n1",
        "SLURM_TOPOLOGY_ADDR=n1",
        "SLURM_TOPOLOGY_ADDR_PATTERN=node",
        "SLURM_CPUS_ON_NODE=1",
        "SLURM_JOB_UID=0",
        "SLURM_JOB_GID=0",
        "SLURM_JOB_USER=root",
        "SLURM_SRUN_COMM_HOST=127.0.0.1",
        "SLURM_SRUN_COMM_PORT=37199",
        "SLURM_LAUNCH_NODE_IPADDR=127.0.0.1",
        "SLURM_STEP_LAUNCHER_PORT=37199",
        NULL,
    };
    expect_all(env, want);

    /* Slurm's own lines, less SLURM_JOB_NAME and SLURM_JOB_CPUS_PER_NODE, which the
     * layout does not carry (they pass through from srun's environment) */
    static const char *const slurm[] = {
        "SLURM_HET_SIZE=2", "SLURM_PACK_SIZE=2", "SLURM_JOB_ID=538", "SLURM_JOBID=538",
        "SLURM_CLUSTER_NAME=ref", "SLURM_NTASKS=3", "SLURM_NPROCS=3", "SLURM_STEP_ID=0",
        "SLURM_STEPID=0", "SLURM_NNODES=3", "SLURM_JOB_NUM_NODES=3", "SLURM_NODELIST=n[1-3]",
        "SLURM_JOB_PARTITION=debug", "SLURM_TASKS_PER_NODE=1(x3)", "SLURM_JOB_UID=0",
        "SLURM_JOB_USER=root", "SLURM_JOB_NODELIST=n[1-3]", "SLURM_STEP_NODELIST=n[1-3]",
        "SLURM_STEP_NUM_NODES=3", "SLURM_STEP_NUM_TASKS=3", "SLURM_STEP_TASKS_PER_NODE=1(x3)",
        "SLURM_STEP_LAUNCHER_PORT=37199", "SLURM_SRUN_COMM_PORT=37199",
        "SLURM_SRUN_COMM_HOST=127.0.0.1", "SLURM_TOPOLOGY_ADDR=n1",
        "SLURM_TOPOLOGY_ADDR_PATTERN=node", "SLURM_CPUS_ON_NODE=1", "SLURM_NODEID=0",
        "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_LAUNCH_NODE_IPADDR=127.0.0.1",
        "SLURM_GTIDS=0", "SLURM_JOB_GID=0", "SLURMD_NODENAME=n1", NULL,
    };
    expect_entries(env, slurm);
    absent(env, "PMI_FD");
    absent(env, "SLURM_CPUS_PER_TASK");
    stepenv_free(env);
    steplayout_free(l);
}

/* The last rank, on component 1's second node: only the task's variables change. */
static void test_reference_rank2(void **state)
{
    struct fx f[2];
    ref_alloc(f);
    struct fx *comps[] = {&f[1], &f[0]};
    Tessera__StepLayout *l = place(comps, 2, 538, 2, 0);
    char **env = task_env(l, 2, 0, -1, "127.0.0.1", salloc_env);
    static const char *const want[] = {
        "SLURM_JOB_ID=538", "SLURM_NTASKS=3", "SLURM_JOB_NODELIST=n[1-3]",
        "SLURM_PROCID=2", "SLURM_LOCALID=0", "SLURM_NODEID=2", "SLURM_GTIDS=2",
        "SLURMD_NODENAME=n3", "SLURM_TOPOLOGY_ADDR=n3", "SLURM_JOB_PARTITION=debug", NULL,
    };
    expect_entries(env, want);
    no_duplicates(env);
    stepenv_free(env);
    steplayout_free(l);
}

/* ---- a step on one component of two --------------------------------------------------- */

/* srun --het-group=1 -n4: the leader's id, component 1's numbers, ranks from 0. */
static void test_later_component_alone(void **state)
{
    struct fx f[2];
    ref_alloc(f);
    f[1].desc.partition = (char *)"big";
    f[1].alloc[0].cpus = f[1].alloc[1].cpus = 2;
    f[1].req.ntasks = 4;
    struct fx *comps[] = {&f[1]};
    Tessera__StepLayout *l = place(comps, 1, 538, 2, 5);
    char **env = task_env(l, 1, 1, -1, NULL, salloc_env);
    static const char *const want[] = {
        "SLURM_JOB_ID=538",
        "SLURM_JOBID=538",
        "SLURM_HET_SIZE=2",
        "SLURM_JOB_ID_HET_GROUP_1=539",
        "SLURM_JOB_NODELIST_HET_GROUP_1=n[2-3]",
        "SLURM_JOB_PARTITION_HET_GROUP_1=big",
        "SLURM_JOB_ID_HET_GROUP_0=538", /* salloc's, passed through */
        "SLURM_JOB_NODELIST_HET_GROUP_0=n1",
        "SLURM_NTASKS=4",
        "SLURM_NNODES=2",
        "SLURM_JOB_NUM_NODES=2",
        "SLURM_JOB_NODELIST=n[2-3]",
        "SLURM_NODELIST=n[2-3]",
        "SLURM_STEP_ID=5",
        "SLURM_TASKS_PER_NODE=2(x2)",
        "SLURM_JOB_PARTITION=big",
        "SLURM_PROCID=3",
        "SLURM_LOCALID=1",
        "SLURM_NODEID=1",
        "SLURM_GTIDS=2,3",
        "SLURMD_NODENAME=n3",
        "SLURM_CPUS_ON_NODE=2",
        NULL,
    };
    expect_entries(env, want);
    absent(env, "SLURM_JOB_PARTITION_HET_GROUP_0");
    absent(env, "SLURM_JOB_NODES_HET_GROUP_0");
    absent(env, "SLURM_SRUN_COMM_HOST"); /* no srun address given */
    absent(env, "SLURM_SRUN_COMM_PORT");
    absent(env, "SLURM_LAUNCH_NODE_IPADDR");
    absent(env, "SLURM_STEP_LAUNCHER_PORT");
    no_duplicates(env);
    stepenv_free(env);
    steplayout_free(l);
}

/* ---- shared nodes ---------------------------------------------------------------------- */

/* Component 0: -n2 -c2 on n1; component 1: -n2 on n1 and n2. On n1 the tasks of both
 * count together. */
static void test_shared_node(void **state)
{
    struct fx f[2];
    fx_init(&f[0], 1300, 0, "p");
    fx_init(&f[1], 1301, 1, "p");
    fx_node(&f[0], "n1", 4);
    fx_node(&f[1], "n1", 1);
    fx_node(&f[1], "n2", 1);
    f[0].req.ntasks = 2;
    f[0].req.cpus_per_task = 2;
    f[1].req.ntasks = 2;
    struct fx *comps[] = {&f[0], &f[1]};
    Tessera__StepLayout *l = place(comps, 2, 1300, 2, 1);

    static const char *const common[] = {
        "SLURM_NODEID=0", "SLURM_GTIDS=0,1,2", "SLURM_CPUS_ON_NODE=5",
        "SLURM_TASKS_PER_NODE=3,1", "SLURM_NNODES=2", "SLURM_NODELIST=n[1-2]", NULL,
    };
    char **env = task_env(l, 0, 1, -1, NULL, NULL);
    expect_entries(env, common);
    expect(env, "SLURM_LOCALID", "1");
    expect(env, "SLURM_PROCID", "1");
    expect(env, "SLURM_CPUS_PER_TASK", "2"); /* component 0's -c2 */
    stepenv_free(env);

    env = task_env(l, 0, 2, -1, NULL, NULL);
    expect_entries(env, common);
    expect(env, "SLURM_LOCALID", "2");
    expect(env, "SLURM_PROCID", "2");
    absent(env, "SLURM_CPUS_PER_TASK"); /* component 1's: one */
    stepenv_free(env);

    env = task_env(l, 1, 0, -1, NULL, NULL);
    expect(env, "SLURM_NODEID", "1");
    expect(env, "SLURM_LOCALID", "0");
    expect(env, "SLURM_PROCID", "3");
    expect(env, "SLURM_GTIDS", "3");
    expect(env, "SLURM_CPUS_ON_NODE", "1");
    stepenv_free(env);
    steplayout_free(l);
}

/* ---- what comes from srun's environment ------------------------------------------------ */

/* srun inside another step's task: the outer identities go, whether or not this task
 * gets its own; other variables stay, in their order. */
static void test_stale_dropped(void **state)
{
    struct fx f;
    fx_init(&f, 42, 0, ""); /* a plain job, no partition */
    fx_node(&f, "n1", 2);
    struct fx *comps[] = {&f};
    Tessera__StepLayout *l = place(comps, 1, 42, 0, 2);
    static char *base[] = {
        (char *)"FOO=1",
        (char *)"SLURM_STEP_ID=7",
        (char *)"SLURM_STEP_NODELIST=x[1-9]",
        (char *)"SLURM_STEP_GPUS=0",
        (char *)"SLURM_PROCID=5",
        (char *)"SLURM_LOCALID=3",
        (char *)"SLURM_NODEID=1",
        (char *)"SLURM_GTIDS=5,6",
        (char *)"SLURM_TASK_PID=123",
        (char *)"SLURMD_NODENAME=x1",
        (char *)"SLURM_CPUS_ON_NODE=64",
        (char *)"SLURM_CPUS_PER_TASK=4",
        (char *)"SLURM_HET_SIZE=5",
        (char *)"SLURM_JOB_PARTITION=outer",
        (char *)"SLURM_SRUN_COMM_HOST=10.0.0.9",
        (char *)"PMI_FD=9",
        (char *)"PMI_RANK=5",
        (char *)"PMI_SIZE=8",
        (char *)"PMI_PORT=x1:4000",
        (char *)"PMI_ID=5",
        (char *)"NO_EQUALS_SIGN",
        (char *)"=empty-name",
        (char *)"SLURM_NTASKS_PER_NODE=2",
        (char *)"PMI_DEBUG=1",
        (char *)"FOO=2",
        (char *)"SLURM_SUBMIT_DIR=/home/alice",
        NULL,
    };
    char **env = task_env(l, 0, 0, -1, NULL, base);
    static const char *const want[] = {
        "FOO=2", /* the last value, in the first one's place */
        "SLURM_NTASKS_PER_NODE=2",
        "PMI_DEBUG=1",
        "SLURM_SUBMIT_DIR=/home/alice",
        "SLURM_CLUSTER_NAME=ref",
        "SLURM_JOB_ID=42",
        "SLURM_JOBID=42",
        "SLURM_NTASKS=1",
        "SLURM_NPROCS=1",
        "SLURM_NNODES=1",
        "SLURM_STEP_NUM_NODES=1",
        "SLURM_JOB_NUM_NODES=1",
        "SLURM_JOB_NODELIST=n1",
        "SLURM_NODELIST=n1",
        "SLURM_STEP_NODELIST=n1",
        "SLURM_STEP_ID=2",
        "SLURM_STEPID=2",
        "SLURM_STEP_NUM_TASKS=1",
        "SLURM_STEP_TASKS_PER_NODE=1",
        "SLURM_TASKS_PER_NODE=1",
        "SLURM_PROCID=0",
        "SLURM_LOCALID=0",
        "SLURM_NODEID=0",
        "SLURM_GTIDS=0",
        "SLURMD_NODENAME=n1",
        "SLURM_TOPOLOGY_ADDR=n1",
        "SLURM_TOPOLOGY_ADDR_PATTERN=node",
        "SLURM_CPUS_ON_NODE=1",
        "SLURM_JOB_UID=0",
        "SLURM_JOB_GID=0",
        "SLURM_JOB_USER=root",
        NULL,
    };
    expect_all(env, want);
    stepenv_free(env);
    steplayout_free(l);
}

/* ---- PMI ----------------------------------------------------------------------------- */

static void test_pmi(void **state)
{
    struct fx f[2];
    ref_alloc(f);
    struct fx *comps[] = {&f[0], &f[1]};
    Tessera__StepLayout *l = place(comps, 2, 538, 2, 0);
    static char *base[] = {(char *)"PMI_FD=9", (char *)"PMI_RANK=0", (char *)"A=b", NULL};
    char **env = task_env(l, 1, 0, 7, "10.1.1.1", base);
    expect(env, "PMI_FD", "7");
    expect(env, "PMI_RANK", "1");
    expect(env, "PMI_SIZE", "3");
    expect(env, "SLURM_PROCID", "1");
    expect(env, "SLURM_SRUN_COMM_HOST", "10.1.1.1");
    assert_string_equal(env[0], "A=b"); /* srun's PMI_* went, the task's come last */
    size_t n = 0;
    while (env[n])
        n++;
    assert_string_equal(env[n - 3], "PMI_FD=7");
    assert_string_equal(env[n - 2], "PMI_RANK=1");
    assert_string_equal(env[n - 1], "PMI_SIZE=3");
    no_duplicates(env);
    stepenv_free(env);
    steplayout_free(l);
}

/* ---- no such task ---------------------------------------------------------------------- */

static void test_bad_task(void **state)
{
    struct fx f[2];
    ref_alloc(f);
    struct fx *comps[] = {&f[0], &f[1]};
    Tessera__StepLayout *l = place(comps, 2, 538, 2, 0);
    struct stepenv_task t = {3, 0, -1, NULL, 0};
    assert_null(stepenv_task(l, &t, NULL)); /* node 3 of 3 */
    t.node = 1;
    t.local = 1;
    assert_null(stepenv_task(l, &t, NULL)); /* n2 holds one task */
    t.local = 0;
    assert_null(stepenv_task(NULL, &t, NULL));
    assert_null(stepenv_task(l, NULL, NULL));
    char **env = stepenv_task(l, &t, NULL);
    assert_non_null(env);
    stepenv_free(env);
    stepenv_free(NULL);
    steplayout_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_rank0),
        cmocka_unit_test(test_reference_rank2),
        cmocka_unit_test(test_later_component_alone),
        cmocka_unit_test(test_shared_node),
        cmocka_unit_test(test_stale_dropped),
        cmocka_unit_test(test_pmi),
        cmocka_unit_test(test_bad_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
