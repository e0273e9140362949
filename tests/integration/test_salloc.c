/* salloc on a four-node cluster (docs/03-env.md §3, docs/08-ops.md §2.3): the het allocation's
 * environment, the messages and exit status, cancels and Ctrl-C while pending, a salloc
 * that dies before its grant, and an allocation revoked (cancelled, timed out) while its
 * command runs.
 */
#include "cluster.h"

#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 4

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* The id in "salloc: Granted job allocation N" (or Pending). */
static unsigned allocation_id(const char *err, const char *what)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "salloc: %s job allocation ", what);
    const char *p = err ? strstr(err, pat) : NULL;
    if (!p)
        fail_msg("no '%s' in:\n%s", pat, err ? err : "(null)");
    return (unsigned)strtoul(p + strlen(pat), NULL, 10);
}

/* The one pending job's id, once there is one. */
static unsigned wait_pending(void)
{
    for (int i = 0; i < 100; i++) {
        struct result r = RUN("squeue", "-h", "-t", "PD", "-o", "%i");
        unsigned id = (unsigned)strtoul(r.out ? r.out : "", NULL, 10);
        result_free(&r);
        if (id)
            return id;
        usleep(100000);
    }
    fail_msg("no pending job appeared");
    return 0;
}

/* A batch job holding every node until cancelled. */
static unsigned block_cluster(void)
{
    struct result r = RUN("sbatch", "--parsable", "-D", outdir, "-N4", "--exclusive",
                          "--wrap", "sleep 300");
    assert_int_equal(r.rc, 0);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    wait_for(id, "%T", "RUNNING\n", 10);
    return id;
}

static void cancel(unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
}

static pid_t spawn_salloc(const char *log, const char *const args[])
{
    pid_t pid = harness_cmd_spawn(&cluster, "salloc", args, log);
    assert_true(pid > 0);
    return pid;
}

static char *log_path(const char *name)
{
    static char path[600];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    return path;
}

/* ------------------------------------------------------------------------------------ */

/* docs/03-env.md §3.4: salloc -N1 : -N2 gives one CPU per node, and the salloc context's
 * variables (only the leader's id and the size unsuffixed). */
static void test_het_environment(void **state)
{
    (void)state;
    struct result r = RUN("salloc", "-N1", ":", "-N2", "env");
    assert_int_equal(r.rc, 0);
    unsigned id = allocation_id(r.err, "Granted");
    assert_int_equal(allocation_id(r.err, "Pending"), id);
    expect_line(r.err, "salloc: Relinquishing job allocation %u", id);

    expect_line(r.out, "SLURM_JOB_ID=%u", id);
    expect_line(r.out, "SLURM_JOBID=%u", id);
    expect_line(r.out, "SLURM_HET_SIZE=2");
    expect_line(r.out, "SLURM_JOB_ID_HET_GROUP_0=%u", id);
    expect_line(r.out, "SLURM_JOB_ID_HET_GROUP_1=%u", id + 1);
    expect_line(r.out, "SLURM_JOB_NODES_HET_GROUP_0=1");
    expect_line(r.out, "SLURM_JOB_NODES_HET_GROUP_1=2");
    expect_line(r.out, "SLURM_JOB_NUM_NODES_HET_GROUP_1=2");
    expect_line(r.out, "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_0=1");
    expect_line(r.out, "SLURM_JOB_CPUS_PER_NODE_HET_GROUP_1=1(x2)");
    expect_line(r.out, "SLURM_JOB_NAME_HET_GROUP_0=interactive");
    assert_true(has_prefix_line(r.out, "SLURM_JOB_NODELIST_HET_GROUP_0=n"));
    assert_true(has_prefix_line(r.out, "SLURM_JOB_NODELIST_HET_GROUP_1=n"));
    /* nothing else unsuffixed, and nothing of a node or a task */
    assert_false(has_prefix_line(r.out, "SLURM_JOB_NODELIST="));
    assert_false(has_prefix_line(r.out, "SLURM_NNODES="));
    assert_false(has_prefix_line(r.out, "SLURM_NTASKS="));
    assert_false(has_prefix_line(r.out, "SLURMD_NODENAME="));
    assert_false(has_prefix_line(r.out, "SLURM_PROCID="));
    result_free(&r);
    char want[64];
    snprintf(want, sizeof(want), "%u+0 COMPLETED\n%u+1 COMPLETED\n", id, id);
    wait_for(id, "%i %T", want, 5);
}

/* The command's exit status is salloc's, and the allocation ends COMPLETED or FAILED. */
static void test_exit_status(void **state)
{
    (void)state;
    struct result r = RUN("salloc", "-n2", "sh", "-c", "echo tasks=$SLURM_NTASKS; exit 3");
    assert_int_equal(r.rc, 3);
    expect_line(r.out, "tasks=2");
    unsigned id = allocation_id(r.err, "Granted");
    result_free(&r);
    wait_for(id, "%T", "FAILED\n", 5);

    r = RUN("salloc", "-N1", "true");
    assert_int_equal(r.rc, 0);
    id = allocation_id(r.err, "Granted");
    result_free(&r);
    wait_for(id, "%T", "COMPLETED\n", 5);

    /* killed by a signal: 1, but 0 for the ones a user stops a command with (Slurm) */
    r = RUN("salloc", "-N1", "sh", "-c", "kill -TERM $$");
    assert_int_equal(r.rc, 1);
    result_free(&r);
    r = RUN("salloc", "-N1", "sh", "-c", "kill -HUP $$");
    assert_int_equal(r.rc, 0);
    result_free(&r);

    /* -Q: no messages; a bad option: getopt's words */
    r = RUN("salloc", "-Q", "-N1", "true");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    result_free(&r);
    r = RUN("salloc", "--bogus", "true");
    assert_int_equal(r.rc, 255);
    assert_non_null(strstr(r.err, "unrecognized option '--bogus'"));
    result_free(&r);
}

/* scancel while pending: Slurm's three lines, exit status 1. */
static void test_cancel_while_pending(void **state)
{
    (void)state;
    unsigned blocker = block_cluster();
    const char *log = log_path("cancel_pending.log");
    pid_t pid = spawn_salloc(log, (const char *const[]){"-N1", "true", NULL});
    unsigned id = wait_pending();
    cancel(id);
    int status = harness_wait(pid, 10000);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    char *text = harness_read_file(log);
    expect_line(text, "salloc: Pending job allocation %u", id);
    expect_line(text, "salloc: job %u queued and waiting for resources", id);
    expect_line(text, "salloc: Job has been cancelled");
    expect_line(text, "salloc: Job allocation %u has been revoked.", id);
    expect_line(text, "salloc: error: Job submit/allocate failed: Job/step already completing "
                      "or completed");
    free(text);
    cancel(blocker);
}

/* Ctrl-C while pending withdraws the request. */
static void test_interrupt_while_pending(void **state)
{
    (void)state;
    unsigned blocker = block_cluster();
    const char *log = log_path("interrupt.log");
    pid_t pid = spawn_salloc(log, (const char *const[]){"-N1", "true", NULL});
    unsigned id = wait_pending();
    kill(pid, SIGINT);
    int status = harness_wait(pid, 10000);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    char *text = harness_read_file(log);
    expect_line(text, "salloc: Job allocation %u has been revoked.", id);
    expect_line(text, "salloc: Job aborted due to signal");
    free(text);
    wait_for(id, "%T", "CANCELLED\n", 5);
    cancel(blocker);
}

/* A salloc killed while pending cannot take its grant: the allocation is cancelled
 * rather than left holding nodes for nobody. */
static void test_salloc_gone_before_grant(void **state)
{
    (void)state;
    unsigned blocker = block_cluster();
    pid_t pid = spawn_salloc(log_path("gone.log"), (const char *const[]){"-N1", "true", NULL});
    unsigned id = wait_pending();
    kill(pid, SIGKILL);
    harness_wait(pid, 5000);
    cancel(blocker);
    wait_for(id, "%T", "CANCELLED\n", 20);
}

/* Cancelled or timed out while the command runs: salloc says so, and the command goes on
 * to its end, as Slurm's does. */
static void test_revoked_while_running(void **state)
{
    (void)state;
    const char *log = log_path("revoked.log");
    char go[600], script[700];
    snprintf(go, sizeof(go), "%s/revoked.go", cluster.dir);
    /* the command runs until the revocation was said */
    snprintf(script, sizeof(script), "while [ ! -e %s ]; do sleep 0.1; done; echo after", go);
    pid_t pid = spawn_salloc(log, (const char *const[]){"-N1", "sh", "-c", script, NULL});
    unsigned id = 0;
    for (int i = 0; i < 100 && !id; i++) { /* the id salloc was granted, from its words */
        char *text = harness_read_file(log);
        const char *p = text ? strstr(text, "Granted job allocation ") : NULL;
        if (p)
            id = (unsigned)strtoul(p + strlen("Granted job allocation "), NULL, 10);
        free(text);
        if (!id)
            usleep(100000);
    }
    assert_true(id != 0);
    cancel(id);
    free(file_with(log, "has been revoked.", 10));
    assert_int_equal(harness_write_file(go, "", 0644), 0);
    int status = harness_wait(pid, 10000);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char *text = harness_read_file(log);
    expect_line(text, "salloc: Job allocation %u has been revoked.", id);
    expect_line(text, "after");
    assert_null(strstr(text, "Relinquishing"));
    free(text);
    wait_for(id, "%T", "CANCELLED\n", 5);

    struct result r = RUN("salloc", "-t", "0:01", "-N1", "sleep", "4");
    assert_int_equal(r.rc, 0);
    id = allocation_id(r.err, "Granted");
    expect_line(r.err, "salloc: Job %u has exceeded its time limit and its allocation has been "
                       "revoked.", id);
    result_free(&r);
    wait_for(id, "%T", "TIMEOUT\n", 5);
}

/* Another user's allocation is theirs: its waits and its release are refused to others. */
static void test_runs_as_user(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, 65534, "salloc", (const char *const[]){"-N1", "id", "-u",
                                                                             NULL},
                            &out, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "65534\n");
    unsigned id = allocation_id(err, "Granted");
    free(out);
    free(err);
    char *u = query(id, "%u %T");
    assert_string_equal(u, "nobody COMPLETED\n");
    free(u);
}

/* salloc's command is found as Slurm's salloc finds it: PATH, then the working folder;
 * one that is nowhere is said plainly, exit status 1. */
static void test_command_search(void **state)
{
    (void)state;
    char script[600], here[PATH_MAX];
    snprintf(script, sizeof(script), "%s/in_cwd.sh", outdir);
    assert_int_equal(harness_write_file(script, "#!/bin/sh\necho ran $0\n", 0755), 0);
    assert_non_null(getcwd(here, sizeof(here)));
    assert_int_equal(chdir(outdir), 0);
    struct result r = RUN("salloc", "-N1", "in_cwd.sh");
    struct result missing = RUN("salloc", "-N1", "no_such_command_here");
    assert_int_equal(chdir(here), 0);
    assert_int_equal(r.rc, 0);
    char want[700];
    snprintf(want, sizeof(want), "ran %s\n", script);
    assert_string_equal(r.out, want);
    result_free(&r);
    assert_int_equal(missing.rc, 1);
    expect_line(missing.err, "salloc: error: Unable to find command \"no_such_command_here\"");
    result_free(&missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_het_environment),
        cmocka_unit_test(test_exit_status),
        cmocka_unit_test(test_cancel_while_pending),
        cmocka_unit_test(test_interrupt_while_pending),
        cmocka_unit_test(test_salloc_gone_before_grant),
        cmocka_unit_test(test_revoked_while_running),
        cmocka_unit_test(test_runs_as_user),
        cmocka_unit_test(test_command_search),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
