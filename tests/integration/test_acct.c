/* Accounting on a live cluster: a controller (FirstJobId=67767, MinJobAge=3), four node
 * daemons, MUNGE and the real commands. docs/06-sacct.md §2.4's four sacct examples on a real
 * two-component job, its step rows, what the steps used, an ordinary user who cannot see
 * root's jobs, records that outlive MinJobAge and a kill -9 of the controller, a failed
 * launch's reason kept in its record, and the time window.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 4
#define NOBODY 65534

static struct harness_cluster cluster;
static char outdir[512];
static unsigned het_id; /* docs/06-sacct.md §2.4's job, submitted first: 67767 */

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "FirstJobId=67767\nNodedTimeout=3\nKillWait=1\nMinJobAge=3\nMessageTimeout=5\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* sacct's output for args, which must succeed. */
static char *sacct(const char *const args[])
{
    struct result r = cmdcheck_run(&cluster, "sacct", args);
    if (r.rc != 0)
        fail_msg("sacct failed (%d): %s", r.rc, r.err);
    free(r.err);
    return r.out;
}
#define SACCT(...) sacct((const char *const[]){__VA_ARGS__, NULL})

/* Poll "sacct -j id -X -n -P -o State" until it shows state. */
static void wait_acct_state(unsigned id, const char *state, int seconds)
{
    char sid[16], want[64];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(want, sizeof(want), "%s\n", state);
    char *last = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(last);
        last = SACCT("-j", sid, "-X", "-n", "-P", "-o", "State");
        if (strstr(last, want)) {
            free(last);
            return;
        }
        usleep(100000);
    }
    fail_msg("job %u: sacct shows '%s', not %s", id, last, state);
}

/* Poll sacct args until it prints want (steps settle when their nodes' reports arrive,
 * which may be just after the job's end). */
static void expect_settled(const char *const args[], const char *want, int seconds)
{
    char *out = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(out);
        out = sacct(args);
        if (!strcmp(out, want)) {
            free(out);
            return;
        }
        usleep(100000);
    }
    fail_msg("sacct printed:\n%s\nnot:\n%s", out, want);
}
#define EXPECT_SETTLED(want, ...) expect_settled((const char *const[]){__VA_ARGS__, NULL}, want, 10)

/* Slurm's default layout: JobID left in 12, the others right in 10 10 10 10 10 8, each
 * followed by a space. */
static void row(char *buf, size_t len, const char *id, const char *name, const char *part,
                const char *acct, const char *cpus, const char *state, const char *exit)
{
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%-12s %10s %10s %10s %10s %10s %8s \n", id, name, part,
             acct, cpus, state, exit);
}

static void header(char *buf, size_t len)
{
    buf[0] = '\0';
    row(buf, len, "JobID", "JobName", "Partition", "Account", "AllocCPUS", "State", "ExitCode");
    row(buf, len, "------------", "----------", "----------", "----------", "----------",
        "----------", "--------");
}

/* docs/06-sacct.md §2.4 on a real two-component job; the first test, so the job is 67767. */
static void test_spec_examples(void **state)
{
    (void)state;
    char script[600];
    snprintf(script, sizeof(script), "%s/het.sh", cluster.dir);
    harness_write_file(script, "#!/bin/sh\nsrun --het-group=0,1 true\n", 0755);
    het_id = SUBMIT("-J", "foo", "-A", "test", "-p", "debug", "-n2", ":", "-n4", script);
    assert_int_equal(het_id, 67767);
    wait_acct_state(het_id, "COMPLETED", 30);

    char want[2048], *out;
    header(want, sizeof(want));
    row(want, sizeof(want), "67767+0", "foo", "debug", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+1", "foo", "debug", "test", "4", "COMPLETED", "0:0");
    out = SACCT("-X", "-j", "67767");
    assert_string_equal(out, want);
    free(out);

    header(want, sizeof(want));
    row(want, sizeof(want), "67767+1", "foo", "debug", "test", "4", "COMPLETED", "0:0");
    out = SACCT("-X", "-j", "67767+1");
    assert_string_equal(out, want);
    free(out);

    header(want, sizeof(want));
    row(want, sizeof(want), "67767+0", "foo", "debug", "test", "2", "COMPLETED", "0:0");
    out = SACCT("-X", "-j", "67767", "--whole-hetjob=no");
    assert_string_equal(out, want);
    free(out);

    header(want, sizeof(want));
    row(want, sizeof(want), "67767+0", "foo", "debug", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+1", "foo", "debug", "test", "4", "COMPLETED", "0:0");
    out = SACCT("-X", "-j", "67767+1", "--whole-hetjob=yes");
    assert_string_equal(out, want);
    free(out);

    /* with steps: the batch script on component 0, the step on both components */
    header(want, sizeof(want));
    row(want, sizeof(want), "67767+0", "foo", "debug", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+0.bat+", "batch", "", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+0.0", "true", "", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+1", "foo", "debug", "test", "4", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+1.0", "true", "", "test", "4", "COMPLETED", "0:0");
    EXPECT_SETTLED(want, "-j", "67767");
    /* the component's own id, and JobIDRaw */
    out = SACCT("-j", "67768", "-n", "-P", "-o", "JobID,JobIDRaw,HetJobID,HetJobOffset");
    assert_string_equal(out, "67767+1|67768|67767|1\n67767+1.0|67768.0|67767|1\n");
    free(out);
}

/* Step rows: states and exit codes of each step, and what a busy step used. */
static void test_step_rows(void **state)
{
    (void)state;
    char script[600];
    snprintf(script, sizeof(script), "%s/steps.sh", cluster.dir);
    harness_write_file(script,
                       "#!/bin/sh\n"
                       "srun -n2 sh -c 'exit 3'\n"
                       "srun -n1 sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'\n"
                       "exit 0\n",
                       0755);
    unsigned id = SUBMIT("-J", "steps", "-n2", script);
    wait_acct_state(id, "COMPLETED", 60);
    char sid[16], want[512];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(want, sizeof(want),
             "%u|steps|COMPLETED|0:0|\n" /* NTasks: steps only, as in Slurm */
             "%u.batch|batch|COMPLETED|0:0|1\n"
             "%u.0|sh|FAILED|3:0|2\n"
             "%u.1|sh|COMPLETED|0:0|1\n",
             id, id, id, id);
    EXPECT_SETTLED(want, "-j", sid, "-n", "-P", "-o", "JobID,JobName,State,ExitCode,NTasks");
    char *out;
    /* the busy step used CPU time and memory, as its node measured them */
    char step[32];
    snprintf(step, sizeof(step), "%u.1", id);
    out = SACCT("-j", step, "-n", "-P", "-o", "JobID,UserCPU,MaxRSS");
    unsigned mins = 0, secs = 0, ms = 0, rss = 0;
    char unit = 0;
    snprintf(want, sizeof(want), "%u.1|%%u:%%u.%%u|%%u%%c", id);
    if (sscanf(out, want, &mins, &secs, &ms, &rss, &unit) != 5)
        fail_msg("unexpected usage line: %s", out);
    assert_true(mins * 60000 + secs * 1000 + ms > 0);
    assert_true(rss > 0);
    free(out);
}

/* An ordinary user sees its own jobs only, whatever it asks; root sees anyone's. */
static void test_other_user(void **state)
{
    (void)state;
    const char *args[] = {"--parsable", "-D", "/tmp", "-J", "mine", "--wrap=true", NULL};
    char *out = NULL, *err = NULL;
    if (harness_cmd_as(&cluster, NOBODY, "sbatch", args, &out, &err) != 0)
        fail_msg("sbatch as nobody: %s", err);
    unsigned mine = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(err);
    wait_acct_state(mine, "COMPLETED", 30);
    char want[64];
    snprintf(want, sizeof(want), "%u|mine\n", mine);
    const char *queries[][8] = {
        {"-X", "-n", "-P", "-o", "JobID,JobName", NULL},
        {"-X", "-n", "-P", "-o", "JobID,JobName", "-a", NULL},
        {"-X", "-n", "-P", "-o", "JobID,JobName", "-j", "67767,67768", NULL},
    };
    for (size_t i = 0; i < 3; i++) {
        out = err = NULL;
        int rc = harness_cmd_as(&cluster, NOBODY, "sacct", queries[i], &out, &err);
        if (rc != 0)
            fail_msg("sacct as nobody: %s", err);
        if (strcmp(out, i == 2 ? "" : want) != 0) /* root's het job is never there */
            fail_msg("sacct as nobody (query %zu): '%s' (stderr '%s'), not '%s'", i, out, err,
                     i == 2 ? "" : want);
        free(out);
        free(err);
    }
    out = SACCT("-X", "-n", "-P", "-o", "JobID,User", "-u", "nobody");
    snprintf(want, sizeof(want), "%u|nobody\n", mine);
    assert_string_equal(out, want);
    free(out);
    out = SACCT("-X", "-n", "-P", "-o", "JobID", "-a");
    snprintf(want, sizeof(want), "%u\n", mine);
    assert_non_null(strstr(out, "67767+0\n"));
    assert_non_null(strstr(out, want));
    free(out);
}

/* Records outlive MinJobAge and a kill -9 of the controller. */
static void test_records_survive(void **state)
{
    (void)state;
    unsigned running = SUBMIT("-J", "through", "--wrap=sleep 300");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", running);
    wait_acct_state(running, "RUNNING", 20);
    wait_forgotten(het_id, 20); /* MinJobAge=3: 67767 leaves the controller's memory */
    harness_ctld_stop(&cluster, SIGKILL);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char want[1024], *out;
    header(want, sizeof(want));
    row(want, sizeof(want), "67767+0", "foo", "debug", "test", "2", "COMPLETED", "0:0");
    row(want, sizeof(want), "67767+1", "foo", "debug", "test", "4", "COMPLETED", "0:0");
    out = SACCT("-X", "-j", "67767");
    assert_string_equal(out, want);
    free(out);
    out = SACCT("-j", sid, "-X", "-n", "-P", "-o", "JobName,State,End");
    assert_string_equal(out, "through|RUNNING|Unknown\n");
    free(out);
    struct result r = RUN("scancel", sid);
    result_free(&r);
    wait_acct_state(running, "CANCELLED by 0", 20);
}

/* A batch script that could not start: its record says why (JobLaunchFailure) once the
 * job has left the controller's memory, and after a restart. */
static void test_launch_failure_reason_kept(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof(path), "%s/nodir/%%j.out", outdir);
    unsigned id = SUBMIT("-o", path, "--wrap", "true");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    wait_acct_state(id, "FAILED", 20);
    wait_forgotten(id, 20);
    char *out = SACCT("-j", sid, "-X", "-n", "-P", "-o", "State,Reason");
    assert_string_equal(out, "FAILED|JobLaunchFailure\n");
    free(out);
    assert_int_equal(harness_ctld_stop_clean(&cluster), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 10000), 0);
    out = SACCT("-j", sid, "-X", "-n", "-P", "-o", "State,Reason");
    assert_string_equal(out, "FAILED|JobLaunchFailure\n");
    free(out);
}

/* A requeued job keeps the record of its last run: the first run's steps go, the next
 * run's steps number on. */
static void test_requeue(void **state)
{
    (void)state;
    char script[600], marker[700];
    snprintf(script, sizeof(script), "%s/again.sh", cluster.dir);
    snprintf(marker, sizeof(marker), "%s/again.ran", cluster.dir);
    char text[1600];
    /* the first run waits to be requeued; the second finds the marker and ends */
    snprintf(text, sizeof(text),
             "#!/bin/sh\nsrun true\nif [ -e %s ]; then exit 0; fi\ntouch %s\nsleep 300\n",
             marker, marker);
    harness_write_file(script, text, 0755);
    unsigned id = SUBMIT("-J", "again", script);
    char sid[16], step0[32], want[256];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(step0, sizeof(step0), "%u.0", id);
    snprintf(want, sizeof(want), "%u.0|COMPLETED\n", id);
    EXPECT_SETTLED(want, "-j", step0, "-n", "-P", "-o", "JobID,State");
    struct result r = RUN("scontrol", "requeue", sid);
    expect_ok(&r);
    result_free(&r);
    wait_acct_state(id, "COMPLETED", 30);
    snprintf(want, sizeof(want), "%u|COMPLETED\n%u.batch|COMPLETED\n%u.1|COMPLETED\n", id, id,
             id);
    EXPECT_SETTLED(want, "-j", sid, "-n", "-P", "-o", "JobID,State");
    char *out = SACCT("-j", sid, "-X", "-n", "-P", "-o", "Restarts");
    assert_string_equal(out, "1\n");
    free(out);
}

/* The time window: Slurm's rules through -S and -E; a held job that was cancelled. */
static void test_window(void **state)
{
    (void)state;
    unsigned held = SUBMIT("-H", "-J", "held", "--wrap=true");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", held);
    struct result r = RUN("scancel", sid);
    result_free(&r);
    char *out = SACCT("-j", sid, "-n", "-P", "-o", "JobID,State,Start,NodeList");
    char want[256];
    snprintf(want, sizeof(want), "%u|CANCELLED by 0|Unknown|None assigned\n", held);
    assert_string_equal(out, want);
    free(out);

    time_t now = time(NULL);
    char hour_ago[32], later[32], far[32];
    struct tm tm;
    time_t t = now - 3600;
    strftime(hour_ago, sizeof(hour_ago), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    t = now + 60;
    strftime(later, sizeof(later), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    t = now + 7200;
    strftime(far, sizeof(far), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    /* every job of this test ran within the last hour */
    out = SACCT("-X", "-n", "-P", "-o", "JobID", "-S", hour_ago, "-E", later);
    assert_non_null(strstr(out, "67767+0\n"));
    assert_non_null(strstr(out, "67767+1\n"));
    free(out);
    /* a window that starts after everything ended holds nothing */
    out = SACCT("-X", "-n", "-P", "-o", "JobID", "-S", later, "-E", far);
    assert_string_equal(out, "");
    free(out);
    /* a held job never became eligible: Slurm's window leaves it out, -j finds it */
    out = SACCT("-X", "-n", "-P", "-o", "JobID", "-S", hour_ago);
    snprintf(want, sizeof(want), "%u\n", held);
    assert_null(strstr(out, want));
    free(out);
    /* -s with the window: jobs that completed in it */
    out = SACCT("-X", "-n", "-P", "-o", "JobID,State", "-s", "CD", "-S", hour_ago, "-E", later);
    assert_non_null(strstr(out, "67767+0|COMPLETED\n"));
    assert_null(strstr(out, "CANCELLED"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_examples),
        cmocka_unit_test(test_step_rows),
        cmocka_unit_test(test_other_user),
        cmocka_unit_test(test_records_survive),
        cmocka_unit_test(test_launch_failure_reason_kept),
        cmocka_unit_test(test_requeue),
        cmocka_unit_test(test_window),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
