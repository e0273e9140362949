/* Job containers (ProctrackType=proctrack/cgroup, docs/containment.md): what a batch
 * script starts is in its job's cgroup, however it detaches, and goes when the job ends,
 * be it by the script's end or by scancel; a step's tasks are in it too; the job's
 * cgroup goes when the job ends. Skipped where no
 * cgroup2 filesystem is mounted. Each job's stray process sleeps a time of its own, so
 * that pgrep finds exactly it. */
#include "cluster.h"

#include "noded/cgroup.h"

#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 1

static struct harness_cluster cluster;
static char outdir[512];
static char mount[1024];

static int group_setup(void **state)
{
    (void)state;
    if (cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) != TS_OK)
        return 0; /* the tests skip */
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char nodes[1024], extra[2048];
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\nKillWait=1\nProctrackType=proctrack/cgroup\n%s"
             "PartitionName=debug Nodes=n1 Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    if (!mount[0])
        return 0;
    harness_cluster_fini(&cluster);
    harness_cgroup_cleanup("itest", "n1"); /* empty once their jobs are gone */
    return 0;
}

static void need_cgroups(void)
{
    if (!mount[0])
        skip();
}

/* The job's cgroup is removed once nothing of it is left (within 10 s). */
static void expect_no_container(unsigned id)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/tessera/itest/n1/job_%u", mount, id);
    struct stat st;
    for (int i = 0; i < 100 && stat(path, &st) == 0; i++)
        usleep(100000);
    assert_int_not_equal(stat(path, &st), 0);
}

/* A process that left the script's session (setsid) ends with the job. */
static void test_detached_ends_with_job(void **state)
{
    (void)state;
    need_cgroups();
    unsigned id = SUBMIT("--wrap", "setsid sleep 3171 & sleep 1");
    wait_for(id, "%T", "COMPLETED\n", 30);
    cmdcheck_expect_no_process("sleep 3171", 10);
    expect_no_container(id);
}

/* A double fork out of a script that scancel ends goes with it. */
static void test_double_fork_ends_with_cancel(void **state)
{
    (void)state;
    need_cgroups();
    char marker[600];
    snprintf(marker, sizeof(marker), "%s/forked", outdir);
    char script[1400];
    snprintf(script, sizeof(script), "( (setsid sleep 3172 &) & ); echo go > %s; sleep 300",
             marker);
    unsigned id = SUBMIT("--wrap", script);
    free(file_with(marker, "go", 30));
    assert_true(cmdcheck_process_running("sleep 3172"));
    cancel_job(id);
    wait_for(id, "%T", "CANCELLED\n", 30);
    cmdcheck_expect_no_process("sleep 3172", 10);
    expect_no_container(id);
}

/* A step's tasks run in their step's cgroup below the job's (their step daemon is placed
 * there before it reads its launch), so what they leave detached ends with the job. */
static void test_step_in_job_container(void **state)
{
    (void)state;
    need_cgroups();
    char srun[600], where[600], script[1600];
    snprintf(srun, sizeof(srun), "%s/srun", TESSERA_BIN_DIR);
    snprintf(where, sizeof(where), "%s/step-cgroup", outdir);
    snprintf(script, sizeof(script), "%s -n1 sh -c 'cat /proc/self/cgroup > %s'", srun, where);
    unsigned id = SUBMIT("--wrap", script);
    wait_for(id, "%T", "COMPLETED\n", 30);
    char want[64];
    snprintf(want, sizeof(want), "/tessera/itest/n1/job_%u/step_0\n", id);
    free(file_with(where, want, 10));
    expect_no_container(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detached_ends_with_job),
        cmocka_unit_test(test_double_fork_ends_with_cancel),
        cmocka_unit_test(test_step_in_job_container),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
