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
             "MinJobAge=600\nKillWait=1\nProctrackType=proctrack/cgroup\n"
             "ConstrainRAMSpace=yes\nConstrainCores=yes\n%s"
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
    cmdcheck_expect_process("sleep 3172", 10); /* the marker may come before it starts */
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

/* A control file of the job's cgroup in the tracking (v2) hierarchy; malloc'd. */
static char *job_control(unsigned id, const char *file)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/tessera/itest/n1/job_%u/%s", mount, id, file);
    return harness_read_file(path);
}

/* The job's CPU time so far (cpu.stat's usage_usec), as the kernel counts it. */
static unsigned long long job_cpu_usec(unsigned id)
{
    char *text = job_control(id, "cpu.stat");
    const char *p = text ? strstr(text, "usage_usec ") : NULL;
    unsigned long long v = p ? strtoull(p + strlen("usage_usec "), NULL, 10) : 0;
    free(text);
    return v;
}

/* Until the job's cgroup says "frozen want" (10 s at most). */
static void wait_frozen(unsigned id, int want)
{
    char line[16];
    snprintf(line, sizeof(line), "frozen %d", want);
    char *text = NULL;
    for (int i = 0; i < 100; i++) {
        free(text);
        text = job_control(id, "cgroup.events");
        if (text && strstr(text, line))
            break;
        usleep(100000);
    }
    if (!text || !strstr(text, line))
        fail_msg("job %u never got '%s': %s", id, line, text ? text : "(no cgroup)");
    free(text);
}

/* The job's output holds Slurm's line for one OOM kill in its step (up to 10 s). */
static void expect_oom_line(unsigned id, const char *step)
{
    char want[256];
    snprintf(want, sizeof(want),
             "slurmstepd: error: Detected 1 oom_kill event in StepId=%u.%s. "
             "Some of the step tasks have been OOM Killed.\n", id, step);
    free(output_with(id, want, 10));
}

/* A job above its memory: the kernel kills the process, the job ends OUT_OF_MEMORY (even
 * though its script went on and exited 0), and its error file says so in Slurm's words. */
static void test_oom_ends_out_of_memory(void **state)
{
    (void)state;
    need_cgroups();
    /* tail keeps a line without newline whole: 300 MB of zeros is one such line */
    unsigned id = SUBMIT("--mem=50M", "--wrap", "head -c 300m /dev/zero | tail; echo after");
    wait_for(id, "%T %r", "OUT_OF_MEMORY OutOfMemory\n", 60);
    expect_oom_line(id, "batch");
    free(output_with(id, "after\n", 1));
    expect_no_container(id);
}

/* A batch script that runs out of memory while its node daemon is down: the restarted
 * daemon reports the end OUT_OF_MEMORY and still adds the line to the error file (the
 * file's name is kept in the daemon's root-only record). */
static void test_oom_while_daemon_down(void **state)
{
    (void)state;
    need_cgroups();
    char marker[600], script[1400];
    snprintf(marker, sizeof(marker), "%s/oom-go", outdir);
    snprintf(script, sizeof(script),
             "while [ ! -e %s ]; do sleep 0.1; done; head -c 300m /dev/zero | tail", marker);
    unsigned id = SUBMIT("--mem=50M", "--wrap", script);
    wait_for(id, "%T", "RUNNING\n", 30);
    assert_true(harness_noded_stop(&cluster, 1, SIGKILL) >= 0);
    assert_int_equal(harness_write_file(marker, "go\n", 0644), 0);
    assert_int_equal(harness_noded_start(&cluster, 1), 0);
    wait_for(id, "%T", "OUT_OF_MEMORY\n", 60);
    expect_oom_line(id, "batch");
    expect_no_container(id);
}

/* A step's task above the job's memory: srun says so as Slurm does (the step daemon's line
 * and the task's "Out Of Memory"), and the step ends OUT_OF_MEMORY in sacct. */
static void test_step_oom(void **state)
{
    (void)state;
    need_cgroups();
    char script[1200];
    /* tail keeps a line without newline whole: /dev/zero has none */
    snprintf(script, sizeof(script), "%s/srun -n1 tail /dev/zero", TESSERA_BIN_DIR);
    unsigned id = SUBMIT("--mem=50M", "--wrap", script);
    wait_for(id, "%T", "FAILED\n", 60);
    expect_oom_line(id, "0");
    free(output_with(id, "srun: error: n1: task 0: Out Of Memory\n", 1));
    char sid[32];
    snprintf(sid, sizeof(sid), "%u.0", id);
    struct result r = RUN("sacct", "-n", "-P", "-j", sid, "-o", "State");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "OUT_OF_MEMORY\n");
    result_free(&r);
}

/* scontrol suspend freezes the whole job, also what left its process group: its CPU time
 * stops; resume thaws it. */
static void test_suspend_freezes(void **state)
{
    (void)state;
    need_cgroups();
    unsigned id = SUBMIT("--wrap", "setsid sh -c 'while :; do :; done' & sleep 300");
    wait_for(id, "%T", "RUNNING\n", 30);
    unsigned long long before = 0;
    for (int i = 0; i < 100 && (before = job_cpu_usec(id)) < 100000; i++)
        usleep(100000); /* until the loop has run a tenth of a second */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scontrol", "suspend", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_frozen(id, 1);
    unsigned long long a = job_cpu_usec(id);
    usleep(300000); /* a frozen job's time stands still: this wait is what is tested */
    assert_true(job_cpu_usec(id) == a);
    r = RUN("scontrol", "resume", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_frozen(id, 0);
    for (int i = 0; i < 100 && job_cpu_usec(id) <= a; i++)
        usleep(100000);
    assert_true(job_cpu_usec(id) > a);
    cancel_job(id);
    wait_for(id, "%T", "CANCELLED\n", 30);
    expect_no_container(id);
}

/* sacct's MaxRSS of the batch step counts a child that daemonised (setsid, re-parented
 * away from the script): wait4 never sees it, the job's cgroup does. */
static void test_maxrss_counts_daemonised(void **state)
{
    (void)state;
    need_cgroups();
    char marker[600], script[1600];
    snprintf(marker, sizeof(marker), "%s/rss-done", outdir);
    snprintf(script, sizeof(script),
             "setsid sh -c 'head -c 100m /dev/zero | tail; touch %s' & "
             "while [ ! -e %s ]; do sleep 0.1; done",
             marker, marker);
    unsigned id = SUBMIT("--mem=400M", "--wrap", script);
    wait_for(id, "%T", "COMPLETED\n", 60);
    char sid[32];
    snprintf(sid, sizeof(sid), "%u.batch", id);
    struct result r = RUN("sacct", "-n", "-P", "-j", sid, "-o", "MaxRSS");
    assert_int_equal(r.rc, 0);
    unsigned long kb = strtoul(r.out, NULL, 10);
    if (kb < 100 * 1024)
        fail_msg("MaxRSS of %s is %s, below the 100 MB its daemonised child held", sid, r.out);
    result_free(&r);
}

/* The job's own processes are the kernel's to choose under its memory limit (OOM score
 * adjustment 0), not the root helpers beside them (the waiter and the step daemon keep
 * -1000, so that an OOM kill never loses how the job ended). */
static void test_job_processes_oom_adjustable(void **state)
{
    (void)state;
    need_cgroups();
    char script_adj[600], task_adj[600], script[2000];
    snprintf(script_adj, sizeof(script_adj), "%s/adj-script", outdir);
    snprintf(task_adj, sizeof(task_adj), "%s/adj-task", outdir);
    snprintf(script, sizeof(script),
             "cat /proc/self/oom_score_adj > %s; %s/srun -n1 cat /proc/self/oom_score_adj > %s",
             script_adj, TESSERA_BIN_DIR, task_adj);
    unsigned id = SUBMIT("--wrap", script);
    wait_for(id, "%T", "COMPLETED\n", 30);
    char *text = harness_read_file(script_adj);
    assert_non_null(text);
    assert_string_equal(text, "0\n");
    free(text);
    text = harness_read_file(task_adj);
    assert_non_null(text);
    assert_string_equal(text, "0\n");
    free(text);
}

/* With ConstrainCores the job's processes see only the CPU it was given (of the node's
 * two, mapped onto this machine's). */
static void test_cpus_constrained(void **state)
{
    (void)state;
    need_cgroups();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        skip();
    char where[600], script[1400];
    snprintf(where, sizeof(where), "%s/cpus", outdir);
    snprintf(script, sizeof(script), "grep Cpus_allowed_list /proc/self/status > %s", where);
    unsigned id = SUBMIT("-c1", "--wrap", script);
    wait_for(id, "%T", "COMPLETED\n", 30);
    char *text = file_with(where, "Cpus_allowed_list:\t", 10);
    /* one CPU of the two (which one depends on what else runs): "0" or "1", not "0-1" */
    const char *list = text + strlen("Cpus_allowed_list:\t");
    if (strspn(list, "0123456789") != strcspn(list, "\n") || list[0] == '\n')
        fail_msg("the job saw more than its one CPU: %s", text);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detached_ends_with_job),
        cmocka_unit_test(test_double_fork_ends_with_cancel),
        cmocka_unit_test(test_step_in_job_container),
        cmocka_unit_test(test_oom_ends_out_of_memory),
        cmocka_unit_test(test_step_oom),
        cmocka_unit_test(test_oom_while_daemon_down),
        cmocka_unit_test(test_suspend_freezes),
        cmocka_unit_test(test_maxrss_counts_daemonised),
        cmocka_unit_test(test_cpus_constrained),
        cmocka_unit_test(test_job_processes_oom_adjustable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
