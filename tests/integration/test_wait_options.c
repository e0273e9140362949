/* The options that make a command wait for an end, through the real commands on a
 * two-node cluster: sbatch -W returns with the job's exit code (1 for a job killed by a
 * signal, a cancelled one); srun -K ends a step when a task fails; srun -W ends the rest
 * of a step some seconds after its first task ended.
 */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 2

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "KillWait=1\nMinJobAge=600\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* sbatch -W */

/* The script's exit status becomes sbatch's, after the usual line. */
static void test_sbatch_wait_exit_code(void **state)
{
    (void)state;
    struct result r = RUN("sbatch", "-W", "-D", outdir, "--wrap", "exit 3");
    assert_int_equal(r.rc, 3);
    assert_true(has_prefix_line(r.out, "Submitted batch job "));
    result_free(&r);

    r = RUN("sbatch", "--wait", "--parsable", "-D", outdir, "--wrap", "true");
    expect_ok(&r);
    result_free(&r);

    /* killed by a signal: 1, as Slurm */
    r = RUN("sbatch", "-W", "-D", outdir, "--wrap", "kill -9 $$");
    assert_int_equal(r.rc, 1);
    result_free(&r);
}

/* A het job: the leader's script decides. */
static void test_sbatch_wait_het(void **state)
{
    (void)state;
    struct result r = RUN("sbatch", "-W", "-D", outdir, "-n1", ":", "-n1", "--wrap", "exit 4");
    assert_int_equal(r.rc, 4);
    result_free(&r);
}

/* The job id sbatch printed into log (waits for the line, up to 20 s). */
static unsigned submitted_id(const char *log)
{
    for (int i = 0; i < 200; i++) {
        char *text = harness_read_file(log);
        const char *p = text ? strstr(text, "Submitted batch job ") : NULL;
        unsigned id = p ? (unsigned)strtoul(p + 20, NULL, 10) : 0;
        free(text);
        if (id)
            return id;
        usleep(100000);
    }
    fail_msg("no job id in %s", log);
    return 0;
}

/* Cancelled while it runs: sbatch -W ends with it, exit 1. */
static void test_sbatch_wait_cancelled(void **state)
{
    (void)state;
    char log[600];
    snprintf(log, sizeof(log), "%s/sbatch-wait.log", outdir);
    pid_t pid = harness_cmd_spawn(&cluster, "sbatch",
                                  (const char *const[]){"-W", "-D", outdir, "--wrap", "sleep 60",
                                                        NULL},
                                  log);
    assert_true(pid > 0);
    unsigned id = submitted_id(log);
    wait_for(id, "%T", "RUNNING\n", 20);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    expect_ok(&r);
    result_free(&r);
    int status = harness_wait(pid, 20000);
    assert_true(status >= 0 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbatch_wait_exit_code),
        cmocka_unit_test(test_sbatch_wait_het),
        cmocka_unit_test(test_sbatch_wait_cancelled),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
