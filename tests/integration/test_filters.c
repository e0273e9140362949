/* Submission filters on a live cluster (docs/05-filters.md §2): every row of the exit-code table,
 * chains with the undo calls observed, a time-out while the controller keeps answering,
 * a missing filter, a rewritten job, a filter that tries to change the user, a het job
 * refused as a whole with the partition's filters running first, a submitter that goes
 * away, and the example filters of contrib/filters.
 *
 * The filters are small shell scripts written into the test's folder; each appends
 * "<name> <second argument>" to a log, so the order of calls (and of undos) shows.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 2

static struct harness_cluster cluster;
static char outdir[512], fdir[300], flog[400];

/* A filter script named name: logs its call, then runs body. */
static void filter(const char *name, const char *body)
{
    char path[700], text[4096];
    snprintf(path, sizeof(path), "%s/%s", fdir, name);
    snprintf(text, sizeof(text), "#!/bin/sh\necho \"%s $2\" >> %s\n%s\n", name, flog, body);
    assert_int_equal(harness_write_file(path, text, 0755), 0);
}

/* The configuration with these filter lines (cluster keys, partition keys for "other"),
 * re-read by the controller. */
static void configure(const char *cluster_keys, const char *other_keys)
{
    char nodes[1024], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\n%s\n%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n"
             "PartitionName=other Nodes=n[1-2] MaxTime=UNLIMITED %s\n",
             cluster_keys, nodes, other_keys);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    struct result r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);
    unlink(flog);
}

static char *log_text(void)
{
    char *t = harness_read_file(flog);
    return t ? t : strdup("");
}

static void expect_log(const char *want)
{
    char *t = log_text();
    assert_string_equal(t, want);
    free(t);
}

static int jobs_now(void)
{
    struct result r = RUN("squeue", "-h", "-t", "all", "-o", "%i");
    int n = count_lines(r.out);
    result_free(&r);
    return n;
}

/* sbatch ARGS that must be refused with exactly this error; no job is left. */
static void expect_refused(const char *err, const char *const args[])
{
    int before = jobs_now();
    const char *full[16] = {"-D", outdir};
    size_t n = 2;
    for (size_t i = 0; args[i]; i++)
        full[n++] = args[i];
    full[n] = NULL;
    struct result r = cmdcheck_run(&cluster, "sbatch", full);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, err);
    result_free(&r);
    assert_int_equal(jobs_now(), before);
}
#define REFUSED(err, ...) expect_refused(err, (const char *const[]){__VA_ARGS__, NULL})

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_up(&cluster, NODES, "CPUs=2 RealMemory=1000", "MinJobAge=600\n", outdir,
                           sizeof(outdir)))
        return -1;
    snprintf(fdir, sizeof(fdir), "%s/filters", cluster.dir);
    snprintf(flog, sizeof(flog), "%s/filters.log", cluster.dir);
    mkdir(fdir, 0755);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

static void test_exit_0(void **state)
{
    (void)state;
    filter("pass", "exit 0");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/pass", fdir);
    configure(keys, "");
    unsigned id = SUBMIT("-J", "plain", "--wrap=true");
    assert_true(id > 0);
    expect_log("pass \n");
    assert_string_equal(show_field(id, "JobName"), "plain");
}

/* Exit 1: the job as the filter rewrote it goes on, to the next filter and the queue. */
static void test_exit_1_rewrites(void **state)
{
    (void)state;
    filter("comment", "[ \"$2\" = --undo ] && exit 0\n"
                      "sed -i 's/^{$/{\\n  \"comment\": \"set_by_filter\",/' \"$1\"\nexit 1");
    filter("limit", "[ \"$2\" = --undo ] && exit 0\n"
                    "grep -q '\"comment\": \"set_by_filter\"' \"$1\" || exit 5\n"
                    "sed -i 's/^{$/{\\n  \"time_limit\": 420,/' \"$1\"\nexit 1");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/comment,%s/limit", fdir, fdir);
    configure(keys, "");
    unsigned id = SUBMIT("-H", "--wrap=true");
    expect_log("comment \nlimit \n");
    assert_string_equal(show_field(id, "Comment"), "set_by_filter");
    assert_string_equal(show_field(id, "TimeLimit"), "00:07:00");
    struct result r = RUN("scancel", "--quiet", show_field(id, "JobId"));
    result_free(&r);
}

/* Another exit: refused with the filter's name and its first line on stderr. */
static void test_other_exit(void **state)
{
    (void)state;
    filter("picky", "echo 'jobs need a name' >&2\necho 'second line' >&2\nexit 3");
    filter("silent", "exit 7");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/picky", fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter failed the job "
            "(picky: jobs need a name)\n",
            "--wrap=true");
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/silent", fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter failed the job "
            "(silent)\n",
            "--wrap=true");
}

/* A failure in a chain undoes what passed, last first. */
static void test_chain_undo(void **state)
{
    (void)state;
    filter("first", "exit 0");
    filter("second", "[ \"$2\" = --undo ] && exit 0\nexit 1");
    filter("third", "exit 2");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/first,%s/second,%s/third", fdir, fdir, fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter failed the job "
            "(third)\n",
            "--wrap=true");
    expect_log("first \nsecond \nthird \nsecond --undo\nfirst --undo\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A filter past FilterTimeout is killed and the job refused; meanwhile the controller
 * answers others at once. */
static void test_timeout(void **state)
{
    (void)state;
    filter("slow", "[ \"$2\" = --undo ] && exit 0\nsleep 30");
    char keys[2048], log[800];
    snprintf(keys, sizeof(keys), "FilterTimeout=2\nSubmitFilters=%s/slow", fdir);
    configure(keys, "");
    snprintf(log, sizeof(log), "%s/slow-sbatch.log", cluster.dir);
    pid_t pid = harness_cmd_spawn(&cluster, "sbatch", (const char *const[]){"-D", outdir,
                                                                            "--wrap=true", NULL},
                                  log);
    assert_true(pid > 0);
    free(file_with(flog, "slow \n", 10)); /* the filter runs */
    double t0 = now_s();
    struct result r = RUN("squeue", "-h");
    expect_ok(&r);
    result_free(&r);
    assert_true(now_s() - t0 < 1.0);
    int status = harness_wait(pid, 15000);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    char *text = harness_read_file(log);
    assert_string_equal(text, "sbatch: error: Batch job submission failed: submission filter "
                              "timed out (slow)\n");
    free(text);
}

static void test_not_found(void **state)
{
    (void)state;
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/missing", fdir);
    configure(keys, "");
    char want[1024];
    snprintf(want, sizeof(want),
             "sbatch: error: Batch job submission failed: submission filter not found "
             "(%s/missing)\n", fdir);
    REFUSED(want, "--wrap=true");
}

/* A filter cannot make the job someone else's, nor write something that is not a job. */
static void test_invalid_rewrites(void **state)
{
    (void)state;
    filter("thief", "sed -i 's/\"user_id\": [0-9]*/\"user_id\": 4242/' \"$1\"\nexit 1");
    filter("garbage", "echo 'not json' > \"$1\"\nexit 1");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/thief", fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter wrote an invalid job "
            "(thief: it may not change user_id or group_id)\n",
            "--wrap=true");
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/garbage", fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter wrote an invalid job "
            "(garbage: not a JSON object: '[' or '{' expected near 'not')\n",
            "--wrap=true");
}

/* A rewrite is checked like a submission: a job the submitter could not submit is
 * refused, and what passed is undone. */
static void test_rewrite_checked(void **state)
{
    (void)state;
    filter("elsewhere", "[ \"$2\" = --undo ] && exit 0\n"
                        "sed -i 's/^{$/{\\n  \"partition\": \"nowhere\",/' \"$1\"\nexit 1");
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/elsewhere", fdir);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: Invalid partition name specified\n",
            "--wrap=true");
    expect_log("elsewhere \nelsewhere --undo\n");
}

/* A het job is refused as a whole; the partition's filters run before the cluster's. */
static void test_het_job(void **state)
{
    (void)state;
    filter("cluster", "exit 0");
    filter("part", "exit 0");
    filter("partfail", "echo 'not here' >&2\nexit 2");
    char keys[2048], pkeys[1024];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/cluster", fdir);
    snprintf(pkeys, sizeof(pkeys), "SubmitFilters=%s/part", fdir);
    configure(keys, pkeys);
    unsigned id = SUBMIT("-H", "-p", "other", "--wrap=true");
    expect_log("part \ncluster \n");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    result_free(&r);
    snprintf(pkeys, sizeof(pkeys), "SubmitFilters=%s/partfail", fdir);
    configure(keys, pkeys);
    REFUSED("sbatch: error: Batch job submission failed: submission filter failed the job "
            "(partfail: not here)\n",
            "-n1", ":", "-p", "other", "-n1", "--wrap=true");
    /* component 0 passed "cluster", which was undone */
    char *t = log_text();
    assert_non_null(strstr(t, "cluster \n"));
    assert_non_null(strstr(t, "partfail \n"));
    assert_non_null(strstr(t, "cluster --undo\n"));
    free(t);
}

/* A submitter that goes away before the answer leaves no job behind. */
static void test_submitter_gone(void **state)
{
    (void)state;
    filter("slowpass", "[ \"$2\" = --undo ] && exit 0\nsleep 2\nexit 0");
    char keys[2048], log[800];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/slowpass", fdir);
    configure(keys, "");
    int before = jobs_now();
    snprintf(log, sizeof(log), "%s/gone-sbatch.log", cluster.dir);
    pid_t pid = harness_cmd_spawn(&cluster, "sbatch", (const char *const[]){"-D", outdir,
                                                                            "--wrap=true", NULL},
                                  log);
    assert_true(pid > 0);
    free(file_with(flog, "slowpass \n", 10)); /* the filter runs */
    kill(pid, SIGKILL);
    harness_wait(pid, 5000);
    free(file_with(flog, "slowpass --undo\n", 10)); /* the submission was undone */
    assert_int_equal(jobs_now(), before);
    expect_log("slowpass \nslowpass --undo\n");
}

/* contrib/filters: a job without a time limit is refused; one without an account gets
 * the default one. */
static void test_examples(void **state)
{
    (void)state;
    char keys[2048];
    snprintf(keys, sizeof(keys), "SubmitFilters=%s/contrib/filters/require_time_limit,"
             "%s/contrib/filters/default_account",
             TESSERA_SOURCE_DIR, TESSERA_SOURCE_DIR);
    configure(keys, "");
    REFUSED("sbatch: error: Batch job submission failed: submission filter failed the job "
            "(require_time_limit: jobs need a time limit (-t): the backfill scheduler plans "
            "with it)\n",
            "--wrap=true");
    unsigned id = SUBMIT("-H", "-t", "5", "--wrap=true");
    assert_string_equal(show_field(id, "Account"), "default");
    unsigned mine = SUBMIT("-H", "-t", "5", "-A", "mine", "--wrap=true");
    assert_string_equal(show_field(mine, "Account"), "mine");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_0),
        cmocka_unit_test(test_exit_1_rewrites),
        cmocka_unit_test(test_other_exit),
        cmocka_unit_test(test_chain_undo),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_invalid_rewrites),
        cmocka_unit_test(test_rewrite_checked),
        cmocka_unit_test(test_het_job),
        cmocka_unit_test(test_submitter_gone),
        cmocka_unit_test(test_examples),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
