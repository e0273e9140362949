/* Job containers across a node daemon's crash (ProctrackType=proctrack/cgroup,
 * docs/containment.md): a restarted daemon kills and removes what a job that ended while
 * it was down left in its container, and nothing else (neither a process outside every
 * job nor a job that still runs, whose batch script it adopts and whose container it
 * keeps). Skipped where no cgroup2 filesystem is mounted. Each stray process sleeps a
 * time of its own, so that pgrep finds exactly it. */
#include "cluster.h"

#include "noded/cgroup.h"
#include "noded/container.h"

#include "common/util/errors.h"

#include <setjmp.h>
#include <signal.h>
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
static unsigned jobs[2]; /* what the test submitted */
static int passed;       /* else the teardown removes the folders the jobs left */

static int group_setup(void **state)
{
    (void)state;
    if (cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) != TS_OK)
        return 0; /* the tests skip */
    return harness_cluster_up(&cluster, NODES, "CPUs=2 RealMemory=1000",
                              "MinJobAge=600\nKillWait=1\nProctrackType=proctrack/cgroup\n",
                              outdir, sizeof(outdir));
}

/* The folders of the test's jobs, in every hierarchy, where a failed test left them (its
 * daemons are stopped and their processes killed by then; only empty folders go). */
static void remove_job_folders(void)
{
    struct container_conf cc = {
        .plugin = "autodetect", .constrain_ram = 1, .constrain_cores = 1, .allowed_processes = 1,
    };
    struct containers *c = NULL;
    char why[512];
    if (container_open(&cc, "itest", "n1", &c, why, sizeof(why)) != TS_OK)
        return;
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
        if (jobs[i])
            container_remove(c, jobs[i], NULL);
    container_close(c);
}

static int group_teardown(void **state)
{
    (void)state;
    if (!mount[0])
        return 0;
    harness_cluster_fini(&cluster);
    if (!passed)
        remove_job_folders();
    harness_cgroup_cleanup("itest", "n1"); /* empty once their jobs are gone */
    return 0;
}

static void need_cgroups(void)
{
    if (!mount[0])
        skip();
}

static void container_path(unsigned id, const char *below, char *path, size_t len)
{
    snprintf(path, len, "%s/tessera/itest/n1/job_%u%s", mount, id, below);
}

/* The job's cgroup is removed once nothing of it is left (within 10 s). */
static void expect_no_container(unsigned id)
{
    char path[1200];
    container_path(id, "", path, sizeof(path));
    struct stat st;
    for (int i = 0; i < 100 && stat(path, &st) == 0; i++)
        usleep(100000);
    if (stat(path, &st) == 0)
        fail_msg("%s is still there", path);
}

/* The processes in the job's batch unit (its cgroup.procs), -1 when it has none. */
static int batch_procs(unsigned id)
{
    char path[1200];
    container_path(id, "/step_batch/cgroup.procs", path, sizeof(path));
    char *text = harness_read_file(path);
    int n = text ? count_lines(text) : -1;
    free(text);
    return n;
}

/* Until the job's batch unit holds n processes (up to 10 s). */
static void wait_batch_procs(unsigned id, int n)
{
    for (int i = 0; i < 100 && batch_procs(id) != n; i++)
        usleep(100000);
    if (batch_procs(id) != n)
        fail_msg("job %u: %d processes in its batch cgroup, waited for %d", id,
                 batch_procs(id), n);
}

/* A job that ends while its node daemon is down leaves a detached sleep in its
 * container: the restarted daemon reports the end, kills the sleep and removes the
 * container, but leaves alone a process of no job and a job that runs on. */
static void test_restart_reclaims_ended_job(void **state)
{
    (void)state;
    need_cgroups();
    char started[600], ended[600], running[600], finish[600], script[2000];
    snprintf(started, sizeof(started), "%s/started-detached", outdir);
    snprintf(ended, sizeof(ended), "%s/end-detached", outdir);
    snprintf(running, sizeof(running), "%s/started-running", outdir);
    snprintf(finish, sizeof(finish), "%s/end-running", outdir);
    snprintf(script, sizeof(script),
             "setsid sleep 3181 & echo up > %s; while [ ! -e %s ]; do sleep 0.1; done",
             started, ended);
    unsigned detaching = jobs[0] = SUBMIT("--wrap", script);
    snprintf(script, sizeof(script),
             "echo up > %s; while [ ! -e %s ]; do sleep 0.1; done", running, finish);
    unsigned staying = jobs[1] = SUBMIT("--wrap", script);
    free(file_with(started, "up", 30));
    free(file_with(running, "up", 30));
    cmdcheck_expect_process("sleep 3181", 10); /* "up" may come before it starts */

    assert_true(harness_noded_stop(&cluster, 1, SIGKILL) != 0);
    /* the script ends with no daemon to see it: its waiter records the end and kills its
     * process group, which the detached sleep has left */
    assert_int_equal(harness_write_file(ended, "go\n", 0644), 0);
    wait_batch_procs(detaching, 1);
    assert_true(cmdcheck_process_running("sleep 3181"));
    char *stranger_argv[] = {"/bin/sleep", "3182", NULL};
    pid_t stranger = harness_spawn(stranger_argv, NULL, NULL);
    assert_true(stranger > 0);

    assert_int_equal(harness_noded_start(&cluster, 1), 0);
    wait_for(detaching, "%T", "COMPLETED\n", 30);
    cmdcheck_expect_no_process("sleep 3181", 10);
    expect_no_container(detaching);
    assert_int_equal(kill(stranger, 0), 0);
    cmdcheck_expect_process("sleep 3182", 10); /* spawned: it may not have exec'd yet */

    /* the job still running was adopted: it runs on, in its container */
    wait_for(staying, "%T", "RUNNING\n", 5);
    assert_true(batch_procs(staying) >= 2); /* its waiter and its script at least */
    assert_int_equal(harness_write_file(finish, "go\n", 0644), 0);
    wait_for(staying, "%T", "COMPLETED\n", 30);
    expect_no_container(staying);

    assert_true(harness_stop(stranger, SIGKILL, 5000) != 0);
    passed = 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_reclaims_ended_job),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
