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

/* cmd with extra environment entries ("K=V", NULL-terminated). */
static struct result cmdcheck_run_env(struct harness_cluster *c, const char *const env[],
                                      const char *cmd, const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_full(c, (uid_t)-1, env, cmd, args, &r.out, &r.err);
    return r;
}

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

/* "sbatch -W [-H] --wrap CMD" in the background, its job cancelled once in state (as
 * squeue prints it); sbatch's exit code. */
static int cancelled_exit(const char *log_name, int held, const char *cmd, const char *state)
{
    char log[600];
    snprintf(log, sizeof(log), "%s/%s", outdir, log_name);
    const char *const args[] = {"-W", "-D", outdir, "--wrap", cmd, held ? "-H" : NULL, NULL};
    pid_t pid = harness_cmd_spawn(&cluster, "sbatch", args, log);
    assert_true(pid > 0);
    unsigned id = submitted_id(log);
    wait_for(id, "%T", state, 20);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    expect_ok(&r);
    result_free(&r);
    int status = harness_wait(pid, 20000);
    assert_true(status >= 0 && WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Cancelled while it runs: sbatch -W ends with it, exit 1; cancelled before it ran: 0. */
static void test_sbatch_wait_cancelled(void **state)
{
    (void)state;
    assert_int_equal(cancelled_exit("sbatch-wait.log", 0, "sleep 60", "RUNNING\n"), 1);
    assert_int_equal(cancelled_exit("sbatch-wait-held.log", 1, "true", "PENDING\n"), 0);
}

/* ------------------------------------------------------------------------------------ */
/* srun -K and -W */

/* Rank 1 ends at once with code; the others would sleep 20 s. */
#define RANK1_ENDS(code)                                                                      \
    "sh", "-c", "if [ $SLURM_PROCID = 1 ]; then exit " code "; fi; exec sleep 20"

static void expect_rc(const struct result *r, int rc)
{
    if (r->rc != rc)
        fail_msg("exit %d, not %d\nstdout:\n%s\nstderr:\n%s", r->rc, rc, r->out, r->err);
}

static void expect_text(const char *text, const char *want)
{
    if (!text || !strstr(text, want))
        fail_msg("no '%s' in:\n%s", want, text ? text : "(null)");
}

/* A task's failure terminates the others (SIGTERM): srun's status is theirs, 143. */
static void test_srun_kill_on_bad_exit(void **state)
{
    (void)state;
    struct result r = RUN("srun", "-K", "-n3", RANK1_ENDS("5"));
    expect_rc(&r, 143);
    expect_text(r.err, "task 1: Exited with exit code 5\n");
    expect_text(r.err, ": Terminated\n"); /* "tasks 0,2" or one line each, as reported */
    expect_text(r.err, "srun: launch/slurm: _step_signal: Terminating StepId=");
    expect_text(r.err, "srun: Force Terminated StepId=");
    result_free(&r);

    /* the variable does the same; a success terminates nothing */
    r = cmdcheck_run_env(&cluster, (const char *const[]){"SLURM_KILL_BAD_EXIT=1", NULL}, "srun",
                         (const char *const[]){"-n2", RANK1_ENDS("2"), NULL});
    expect_rc(&r, 143);
    result_free(&r);
    r = RUN("srun", "--kill-on-bad-exit", "-n2", "sh", "-c", "exit 0");
    expect_ok(&r);
    result_free(&r);

    r = RUN("srun", "-Kx", "true");
    assert_int_equal(r.rc, 1);
    expect_text(r.err, "srun: error: Invalid numeric value \"x\" for --kill-on-bad-exit.");
    result_free(&r);
}

/* -W 1: a second after rank 1 ended, the others are terminated (SIGTERM). */
static void test_srun_wait_after_first_exit(void **state)
{
    (void)state;
    struct result r = RUN("srun", "-W", "1", "-n3", RANK1_ENDS("0"));
    expect_rc(&r, 143);
    expect_text(r.err, "srun: First task exited 1s ago\n");
    expect_text(r.err, ".0 tasks 0,2: running\n");
    expect_text(r.err, ".0 task 1: exited\n");
    expect_text(r.err, ": Terminated\n"); /* "tasks 0,2" or one line each, as reported */
    result_free(&r);

    r = RUN("srun", "--wait=x", "true");
    assert_int_equal(r.rc, 1);
    expect_text(r.err, "srun: error: Invalid numeric value \"x\" for --wait.");
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbatch_wait_exit_code),
        cmocka_unit_test(test_sbatch_wait_het),
        cmocka_unit_test(test_sbatch_wait_cancelled),
        cmocka_unit_test(test_srun_kill_on_bad_exit),
        cmocka_unit_test(test_srun_wait_after_first_exit),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
