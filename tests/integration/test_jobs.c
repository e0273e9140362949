/* Jobs and heterogeneous jobs through the real commands (sbatch, squeue, scancel,
 * scontrol) against a real controller and MUNGE: docs/01-hetjob.md on pending jobs.
 *
 * The cluster starts at FirstJobId=123, so the first het job of five components is
 * docs/01-hetjob.md §3.1: 123..127, het_job_id_set 123-127. Tests run in order and share
 * the cluster; each says which job ids it expects.
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

#define NOBODY 65534

static struct harness_cluster cluster;

static const char *conf_extra =
    "FirstJobId=123\n"
    "MinJobAge=300\n"
    "NodeName=n[1-4] CPUs=4 RealMemory=2000 Features=fast NodeAddr=127.0.0.1 Port=17101-17104\n"
    "NodeName=big CPUs=16 RealMemory=64000 NodeAddr=127.0.0.1 Port=17105\n"
    "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60\n"
    "PartitionName=long Nodes=n[1-4],big MaxTime=UNLIMITED DefaultTime=120\n";

static int group_setup(void **state)
{
    if (harness_cluster_init(&cluster, conf_extra))
        return -1;
    return harness_ctld_start(&cluster);
}

static int group_teardown(void **state)
{
    int rc = harness_ctld_stop_clean(&cluster); /* under the sanitizers: leaks fail here */
    harness_cluster_fini(&cluster);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* running commands */

struct result {
    int rc;
    char *out, *err;
};

static void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
}

/* cmd with NULL-terminated words, as root (uid -1) or another user, with extra env. */
static struct result run_full(uid_t uid, const char *const env[], const char *cmd,
                              const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_full(&cluster, uid, env, cmd, args, &r.out, &r.err);
    return r;
}

#define RUN(cmd, ...) run_full((uid_t)-1, NULL, cmd, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_AS(uid, cmd, ...) run_full(uid, NULL, cmd, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_ENV(env, cmd, ...) run_full((uid_t)-1, env, cmd, (const char *const[]){__VA_ARGS__, NULL})

static void expect(struct result r, int rc, const char *out, const char *err)
{
    if (r.rc != rc || (out && strcmp(r.out, out)) || (err && strcmp(r.err, err)))
        fail_msg("exit %d, stdout '%s', stderr '%s'; expected %d, '%s', '%s'", r.rc, r.out,
                 r.err, rc, out ? out : "*", err ? err : "*");
    result_free(&r);
}

/* squeue -h -o FORMAT [args...], as one string. */
static char *squeue(const char *format, const char *a1, const char *a2)
{
    const char *args[] = {"-h", "-o", format, a1, a2, NULL};
    struct result r = run_full((uid_t)-1, NULL, "squeue", args);
    if (r.rc != 0)
        fail_msg("squeue failed (%d): %s", r.rc, r.err);
    free(r.err);
    return r.out;
}

static void expect_squeue(const char *format, const char *a1, const char *a2, const char *want)
{
    char *got = squeue(format, a1, a2);
    if (strcmp(got, want))
        fail_msg("squeue -o '%s' %s %s:\n%s\nexpected:\n%s", format, a1 ? a1 : "", a2 ? a2 : "",
                 got, want);
    free(got);
}

/* The value of Key= in "scontrol show job ID" for every component, space-joined. */
static char *show_field(const char *id, const char *key)
{
    struct result r = RUN("scontrol", "show", "job", id);
    if (r.rc != 0)
        fail_msg("scontrol show job %s: %s", id, r.err);
    static char buf[1024];
    buf[0] = '\0';
    char pat[64];
    snprintf(pat, sizeof(pat), "%s=", key);
    for (const char *p = r.out; (p = strstr(p, pat));) {
        if (p != r.out && p[-1] != ' ' && p[-1] != '\n') {
            p++;
            continue;
        }
        p += strlen(pat);
        size_t n = strcspn(p, " \n");
        if (buf[0])
            strcat(buf, " ");
        strncat(buf, p, n);
    }
    result_free(&r);
    return buf;
}

/* sbatch ... and return the job id it printed with --parsable. */
static unsigned submit(const char *const args[])
{
    const char *full[32] = {"--parsable"};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 31; i++)
        full[n++] = args[i];
    full[n] = NULL;
    struct result r = run_full((uid_t)-1, NULL, "sbatch", full);
    if (r.rc != 0)
        fail_msg("sbatch failed (%d): %s", r.rc, r.err);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    return id;
}
#define SUBMIT(...) submit((const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------------------------ */

/* docs/01-hetjob.md §3.1: five components submitted as 123. */
static void test_five_components(void **state)
{
    expect(RUN("sbatch", "-H", "-n1", ":", "-n1", ":", "-n1", ":", "-n1", ":", "-n1", "--wrap=true"),
           0, "Submitted batch job 123\n", "");
    expect_squeue("%i %A", "-j", "123",
                  "123+0 123\n123+1 124\n123+2 125\n123+3 126\n123+4 127\n");
    assert_string_equal(show_field("123", "HetJobId"), "123 123 123 123 123");
    assert_string_equal(show_field("123", "HetJobOffset"), "0 1 2 3 4");
    assert_string_equal(show_field("123", "HetJobIdSet"), "123-127 123-127 123-127 123-127 123-127");
    assert_string_equal(show_field("123", "JobId"), "123 124 125 126 127");
    assert_string_equal(show_field("123", "BatchFlag"), "1 1 1 1 1");
    /* the next submission continues after the five */
    unsigned next = SUBMIT("-H", "--wrap=true");
    assert_int_equal(next, 128);
}

static void test_plain_job(void **state)
{
    unsigned id = SUBMIT("-H", "-J", "plain", "--wrap=true");
    char sid[16], plus0[20];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(plus0, sizeof(plus0), "%u+0", id);
    /* no het fields anywhere */
    struct result r = RUN("scontrol", "show", "job", sid);
    assert_int_equal(r.rc, 0);
    assert_null(strstr(r.out, "HetJob"));
    result_free(&r);
    char want[64];
    snprintf(want, sizeof(want), "%u plain\n", id);
    expect_squeue("%i %j", "-j", sid, want);
    /* N+0 on a plain job is an invalid job id */
    expect(RUN("scontrol", "show", "job", plus0), 1, "",
           "slurm_load_jobs error: Invalid job id specified\n");
    char msg[128];
    snprintf(msg, sizeof(msg), "Invalid job id specified for job %s\n", plus0);
    expect(RUN("scontrol", "hold", plus0), 1, "", msg);
}

/* The same job by "#SBATCH hetjob" and by ":" gives the same components. */
static void test_script_equals_colon_form(void **state)
{
    char script[512];
    snprintf(script, sizeof(script), "%s/het.sh", cluster.dir);
    harness_write_file(script,
                       "#!/bin/sh\n"
                       "#SBATCH -J scripted -A acct -t 10\n"
                       "#SBATCH -n 2 -c 2\n"
                       "#SBATCH hetjob\n"
                       "#SBATCH -n 1 --mem=100\n"
                       "echo hello\n"
                       "#SBATCH -n 99\n", /* after the first command: ignored */
                       0644);
    unsigned a = SUBMIT("-H", script);
    unsigned b = SUBMIT("-H", "-J", "scripted", "-A", "acct", "-t", "10", "-n", "2", "-c", "2", ":",
                        "-n", "1", "--mem=100", script);
    char ida[16], idb[16];
    snprintf(ida, sizeof(ida), "%u", a);
    snprintf(idb, sizeof(idb), "%u", b);
    const char *fmt = "%j %a %l %D %C %m %P";
    char *sa = squeue(fmt, "-j", ida), *sb = squeue(fmt, "-j", idb);
    assert_string_equal(sa, sb);
    assert_string_equal(sa, "scripted acct 10:00 1 4 0 debug\nscripted acct 10:00 1 1 100M debug\n");
    free(sa);
    free(sb);
}

/* docs/01-hetjob.md §2.2: propagated options carry over, others reset, a propagated one may be set
 * again. */
static void test_propagation(void **state)
{
    unsigned id = SUBMIT("-H", "-A", "first", "-J", "prop", "-t", "5", "-p", "long", "-n", "3",
                         "-c", "2", ":", "-n1", ":", "-A", "third", "-n1", "--wrap=true");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    /* squeue sorts by partition first */
    char want[256];
    snprintf(want, sizeof(want),
             "%u+1 first prop 5:00 debug 1\n"
             "%u+2 third prop 5:00 debug 1\n"
             "%u+0 first prop 5:00 long 6\n", id, id, id);
    expect_squeue("%i %a %j %l %P %C", "-j", sid, want);
}

/* SBATCH_* defaults apply to every component; the command line wins over them. */
static void test_environment_defaults(void **state)
{
    const char *env[] = {"SBATCH_ACCOUNT=envacct", NULL};
    struct result r = RUN_ENV(env, "sbatch", "--parsable", "-H", "-n1", ":", "-n1", ":", "-A",
                              "cli", "-n1", "--wrap=true");
    assert_int_equal(r.rc, 0);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", (unsigned)strtoul(r.out, NULL, 10));
    result_free(&r);
    expect_squeue("%a", "-j", sid, "envacct\nenvacct\ncli\n");
}

/* One bad component rejects the whole job, names the component, and stores nothing. */
static void test_atomic_rejection(void **state)
{
    struct result before = RUN("scontrol", "show", "config");
    char *next = strstr(before.out, "NEXT_JOB_ID");
    assert_non_null(next);
    char want_next[64];
    snprintf(want_next, sizeof(want_next), "%.*s", (int)strcspn(next, "\n"), next);
    result_free(&before);
    char *queue_before = squeue("%i", "-t", "all");

    expect(RUN("sbatch", "-n1", ":", "-n1", ":", "-p", "nosuch", "-n1", "--wrap=true"), 1, "",
           "sbatch: error: invalid partition specified: nosuch\n" /* Slurm's line first */
           "sbatch: error: Batch job submission failed: component 2: Invalid partition name "
           "specified\n");
    /* more nodes than the partition has (Slurm, EnforcePartLimits=ALL) */
    expect(RUN("sbatch", "-n1", ":", "-N", "9", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: component 1: Node count "
           "specification invalid\n");
    expect(RUN("sbatch", "-t", "2:00:00", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Requested time limit is invalid "
           "(missing or exceeds some limit)\n");
    expect(RUN("sbatch", "-C", "slow", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Invalid feature specification\n");
    expect(RUN("sbatch", "-n", "17", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: More processors requested than "
           "permitted\n");
    expect(RUN("sbatch", "-w", "big", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Requested nodes not in this partition\n");
    expect(RUN("sbatch", "-N", "1", "-n", "3", "-c", "2", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Requested node configuration is not "
           "available\n");
    expect(RUN("sbatch", "-L", "matlab:1", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Invalid license specification\n");
    expect(RUN("sbatch", "-d", "afterok:99999", "--wrap=true"), 1, "",
           "sbatch: error: Batch job submission failed: Job dependency problem\n");

    char *queue_after = squeue("%i", "-t", "all");
    assert_string_equal(queue_before, queue_after);
    free(queue_before);
    free(queue_after);
    struct result after = RUN("scontrol", "show", "config");
    assert_non_null(strstr(after.out, want_next));
    result_free(&after);
}

/* docs/01-hetjob.md §3.3: the leader's id lists every component, "+k" one, a non-leader's id
 * itself. */
static void test_query_forms(void **state)
{
    expect_squeue("%i", "-j", "123+2", "123+2\n");
    expect_squeue("%i", "-j", "125", "123+2\n");
    expect_squeue("%i", "-j", "123+0", "123+0\n");
    expect_squeue("%i", "--job=123", NULL, "123+0\n123+1\n123+2\n123+3\n123+4\n");
    assert_string_equal(show_field("123+4", "JobId"), "127");
    assert_string_equal(show_field("126", "HetJobOffset"), "3");
    expect(RUN("scontrol", "show", "job", "123+5"), 1, "",
           "slurm_load_jobs error: Invalid job id specified\n");
    expect(RUN("squeue", "-j", "abc"), 1, "", "squeue: error: Invalid job id: abc\n");
}

/* docs/01-hetjob.md §4.1: a pending component cannot be cancelled alone; nothing changes. */
static void test_pending_component_cancel_refused(void **state)
{
    char *before = squeue("%i %T %r", "-j", "123");
    expect(RUN("scancel", "123+1"), 60, "",
           "scancel: error: Kill job error on job id 123+1: Operation not permitted on "
           "individual component of heterogeneous job\n");
    expect(RUN("scancel", "124"), 60, "",
           "scancel: error: Kill job error on job id 124: Operation not permitted on "
           "individual component of heterogeneous job\n");
    char *after = squeue("%i %T %r", "-j", "123");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* docs/01-hetjob.md §4.2: update of one component vs every component. */
static void test_update_component_vs_all(void **state)
{
    expect(RUN("scontrol", "update", "jobid=123+2", "account=abc"), 0, "", "");
    expect_squeue("%i %a", "-j", "123", "123+0 (null)\n123+1 (null)\n123+2 abc\n123+3 (null)\n"
                                        "123+4 (null)\n");
    expect(RUN("scontrol", "update", "jobid=123", "timelimit=30"), 0, "", "");
    assert_string_equal(show_field("123", "TimeLimit"), "00:30:00 00:30:00 00:30:00 00:30:00 00:30:00");
    expect(RUN("scontrol", "update", "jobid=126", "timelimit=20"), 0, "", "");
    assert_string_equal(show_field("123", "TimeLimit"), "00:30:00 00:30:00 00:30:00 00:20:00 00:30:00");
    /* a change the partition forbids changes nothing */
    expect(RUN("scontrol", "update", "jobid=123", "timelimit=90"), 1, "",
           "Requested time limit is invalid (missing or exceeds some limit) for job 123\n");
    assert_string_equal(show_field("123", "TimeLimit"), "00:30:00 00:30:00 00:30:00 00:20:00 00:30:00");
    expect(RUN("scontrol", "update", "jobid=123", "foo=bar"), 1, "",
           "Update of this parameter is not supported: foo=bar\nRequest aborted\n");
    expect(RUN("scontrol", "update", "jobid=123"), 1, "", "No changes specified\n");
    expect(RUN("scontrol", "update", "jobid=123", "timelimit=abc"), 1, "",
           "scontrol: error: Invalid TimeLimit value\n");
    /* Slurm's other spellings: "update job=N", "show job=N" */
    expect(RUN("scontrol", "update", "job=126", "timelimit=20"), 0, "", "");
    struct result a = RUN("scontrol", "show", "job=123");
    struct result b = RUN("scontrol", "show", "job", "123");
    assert_int_equal(a.rc, 0);
    assert_string_equal(a.out, b.out);
    assert_non_null(strstr(a.out, "TimeLimit=00:20:00"));
    result_free(&a);
    result_free(&b);
}

/* docs/01-hetjob.md §4.3: requeue, suspend, resume take the leader only; components fail and
 * nothing changes. On the pending leader they fail as Slurm's do. */
static void test_leader_only_operations(void **state)
{
    char *before = squeue("%i %T %r %Q", "-j", "123");
    expect(RUN("scontrol", "requeue", "123+1"), 1, "", "Invalid job id specified for job 123+1\n");
    expect(RUN("scontrol", "requeue", "124"), 1, "", "Job not heterogeneous job leader for job 124\n");
    expect(RUN("scontrol", "suspend", "123+1"), 1, "",
           "Operation not permitted on individual component of heterogeneous job for job 123+1\n");
    expect(RUN("scontrol", "resume", "124"), 1, "",
           "Operation not permitted on individual component of heterogeneous job for job 124\n");
    expect(RUN("scontrol", "suspend", "123"), 1, "", "Job is pending execution for job 123\n");
    expect(RUN("scontrol", "requeue", "123"), 1, "", "Job is pending execution for job 123\n");
    char *after = squeue("%i %T %r %Q", "-j", "123");
    assert_string_equal(before, after);
    free(before);
    free(after);
}

/* squeue output with the scheduler's reasons (None, Resources, Priority: no node daemon
 * runs in these tests, so jobs wait for resources) all written "waiting": the tests here
 * are about holds, begin times and the like. */
static char *squeue_waiting(const char *format, const char *a1, const char *a2)
{
    char *s = squeue(format, a1, a2);
    static const char *const words[] = {"None", "Resources", "Priority"};
    char *out = calloc(strlen(s) * 2 + 1, 1);
    const char *p = s;
    char *o = out;
    while (*p) {
        size_t k = 0;
        while (k < 3 && strncmp(p, words[k], strlen(words[k])))
            k++;
        if (k < 3 && (p == s || p[-1] == ' ' || p[-1] == '\n')) {
            o += sprintf(o, "waiting");
            p += strlen(words[k]);
        } else {
            *o++ = *p++;
        }
    }
    free(s);
    return out;
}

static void expect_squeue_waiting(const char *format, const char *a1, const char *a2,
                                  const char *want)
{
    char *got = squeue_waiting(format, a1, a2);
    if (strcmp(got, want))
        fail_msg("squeue -o '%s' %s %s:\n%s\nexpected:\n%s", format, a1 ? a1 : "", a2 ? a2 : "",
                 got, want);
    free(got);
}

/* Holds and releases: reasons, priorities, a component alone. */
static void test_hold_release(void **state)
{
    expect_squeue("%r %Q", "-j", "128", "JobHeldUser 0\n");
    expect(RUN("scontrol", "release", "128"), 0, "", "");
    expect_squeue_waiting("%r", "-j", "128", "waiting\n");
    expect(RUN("scontrol", "hold", "128"), 0, "", "");
    expect_squeue("%r %Q", "-j", "128", "JobHeldAdmin 0\n"); /* root holds as administrator */
    expect(RUN("scontrol", "release", "128"), 0, "", "");
    unsigned id = SUBMIT("--begin=now+1hour", "--wrap=true");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    expect_squeue("%r", "-j", sid, "BeginTime\n");
}

/* --begin in Slurm's forms; a job waiting for its begin time shows it as StartTime=, held
 * or not, in scontrol and squeue --start. */
static void test_begin_forms(void **state)
{
    time_t tomorrow = time(NULL) + 86400;
    struct tm tm;
    localtime_r(&tomorrow, &tm);
    char tea[64];
    snprintf(tea, sizeof(tea), "%04d-%02d-%02dT16:00:00", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday);
    static const char *const forms[][2] = {
        {"2099-01-05 noon", "2099-01-05T12:00:00"},  {"2099-01-05-noon", "2099-01-05T12:00:00"},
        {"teatime 01/05/99", "2099-01-05T16:00:00"}, {"01.05.99 10:30", "2099-01-05T10:30:00"},
        {"2099-01-05T10:00", "2099-01-05T10:00:00"}, {"010599", "2099-01-05T00:00:00"},
        {"16:00-tomorrow", NULL},                    {"tomorrow 4:00 PM", NULL},
        {"teatime tomorrow", NULL},
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char opt[64];
        snprintf(opt, sizeof(opt), "--begin=%s", forms[i][0]);
        unsigned id = SUBMIT(i % 2 ? "-H" : "-J", i % 2 ? "-Jb" : "b", opt, "--wrap=true");
        char sid[16];
        snprintf(sid, sizeof(sid), "%u", id);
        const char *want = forms[i][1] ? forms[i][1] : tea;
        if (strcmp(show_field(sid, "StartTime"), want))
            fail_msg("--begin='%s': StartTime=%s, expected %s", forms[i][0],
                     show_field(sid, "StartTime"), want);
        char line[80];
        snprintf(line, sizeof(line), "%s\n", want);
        expect_squeue("%S", "-j", sid, line);
        expect(RUN("scancel", sid), 0, "", "");
    }
    expect(RUN("sbatch", "--begin=tomorrow+1", "--wrap=true"), 255, "",
           "sbatch: error: Invalid --begin specification\n");
}

static void set_whole_hetjob(int on)
{
    char extra[2048];
    snprintf(extra, sizeof(extra), "%s%s", conf_extra,
             on ? "SchedulerParameters=whole_hetjob\n" : "");
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    assert_true(cluster.ctld > 0);
    kill(cluster.ctld, SIGHUP);
    /* the controller logs when it has read the file */
    for (int i = 0; i < 100; i++) {
        struct result r = RUN("scontrol", "show", "config");
        int done = (strstr(r.out, "whole_hetjob") != NULL) == on;
        result_free(&r);
        if (done)
            return;
        usleep(50000);
    }
    fail_msg("the controller did not pick up whole_hetjob=%d", on);
}

/* docs/01-hetjob.md §3.3: a non-leader's own id acts on that component, or on the whole job under
 * whole_hetjob; "N+k" always means the one component. */
static void test_whole_hetjob(void **state)
{
    unsigned id = SUBMIT("-n1", ":", "-n1", ":", "-n1", "--wrap=true");
    char leader[16], second[16], plus2[20];
    snprintf(leader, sizeof(leader), "%u", id);
    snprintf(second, sizeof(second), "%u", id + 1);
    snprintf(plus2, sizeof(plus2), "%u+2", id);

    /* held components have priority 0 and sort last */
    char want[256];
    expect(RUN("scontrol", "hold", second), 0, "", "");
    snprintf(want, sizeof(want), "%u+0 waiting\n%u+2 waiting\n%u+1 JobHeldAdmin\n", id, id, id);
    expect_squeue_waiting("%i %r", "-j", leader, want);
    expect(RUN("scontrol", "release", second), 0, "", "");

    set_whole_hetjob(1);
    expect(RUN("scontrol", "hold", second), 0, "", "");
    snprintf(want, sizeof(want), "%u+0 JobHeldAdmin\n%u+1 JobHeldAdmin\n%u+2 JobHeldAdmin\n", id,
             id, id);
    expect_squeue_waiting("%i %r", "-j", leader, want);
    expect(RUN("scontrol", "release", plus2), 0, "", ""); /* one component, whatever the flag */
    snprintf(want, sizeof(want), "%u+2 waiting\n%u+0 JobHeldAdmin\n%u+1 JobHeldAdmin\n", id, id,
             id);
    expect_squeue_waiting("%i %r", "-j", leader, want);
    expect(RUN("scontrol", "release", leader), 0, "", "");
    /* scancel of a non-leader's id cancels the whole (pending) job */
    expect(RUN("scancel", second), 0, "", "");
    expect_squeue("%T", "-j", leader, "");
    set_whole_hetjob(0);
}

/* Another user may neither cancel nor update nor hold root's job, and sees it. */
static void test_other_user(void **state)
{
    struct result r = RUN_AS(NOBODY, "squeue", "-h", "-o", "%i", "-j", "128");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "128\n");
    result_free(&r);
    expect(RUN_AS(NOBODY, "scancel", "128"), 210, "",
           "scancel: error: Kill job error on job id 128: Access/permission denied\n");
    expect(RUN_AS(NOBODY, "scontrol", "update", "jobid=128", "timelimit=5"), 1, "",
           "Invalid user id for job 128\n");
    expect(RUN_AS(NOBODY, "scontrol", "hold", "128"), 1, "", "Invalid user id for job 128\n");
    /* nobody's own job: submitted, held and cancelled by nobody */
    struct result s = RUN_AS(NOBODY, "sbatch", "--parsable", "-D", "/tmp", "--wrap=true");
    assert_int_equal(s.rc, 0);
    char id[16];
    snprintf(id, sizeof(id), "%u", (unsigned)strtoul(s.out, NULL, 10));
    result_free(&s);
    expect_squeue("%u", "-j", id, "nobody\n");
    expect(RUN_AS(NOBODY, "scontrol", "hold", id), 0, "", "");
    expect_squeue("%r", "-j", id, "JobHeldUser\n");
    expect(RUN_AS(NOBODY, "scancel", id), 0, "", "");
    char *st = squeue("%i %T", "-t", "all");
    char want[64];
    snprintf(want, sizeof(want), "%s CANCELLED\n", id);
    assert_non_null(strstr(st, want));
    free(st);
    /* a user may not raise a priority */
    struct result p = RUN_AS(NOBODY, "sbatch", "-D", "/tmp", "--priority=5", "--wrap=true");
    assert_int_equal(p.rc, 1);
    assert_string_equal(p.err, "sbatch: error: Batch job submission failed: Access/permission denied\n");
    result_free(&p);
}

/* scancel: a whole pending het job, already finished jobs, filters. */
static void test_scancel(void **state)
{
    unsigned id = SUBMIT("-J", "tocancel", "-n1", ":", "-n1", "--wrap=true");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    expect(RUN("scancel", sid), 0, "", "");
    expect_squeue("%i %T", "-j", sid, "");
    char want[128];
    snprintf(want, sizeof(want), "%u+0 CANCELLED\n%u+1 CANCELLED\n", id, id);
    char *all = squeue("%i %T", "-t", "CANCELLED");
    assert_non_null(strstr(all, want));
    free(all);
    /* again: already done, quietly (as Slurm), loudly with -v */
    expect(RUN("scancel", sid), 0, "", "");
    char loud[256];
    snprintf(loud, sizeof(loud),
             "scancel: Terminating job %s\n"
             "scancel: error: Kill job error on job id %s: Job/step already completing or "
             "completed\n", sid, sid);
    expect(RUN("scancel", "-v", sid), 0, "", loud);
    /* by name */
    unsigned a = SUBMIT("-J", "byname", "--wrap=true");
    unsigned b = SUBMIT("-J", "byname", "--wrap=true");
    expect(RUN("scancel", "-n", "byname"), 0, "", "");
    char ids[64];
    snprintf(ids, sizeof(ids), "%u,%u", a, b);
    expect_squeue("%T", "-j", ids, "");
    expect(run_full((uid_t)-1, NULL, "scancel", (const char *const[]){NULL}), 1, "",
           "scancel: error: No job identification provided\n");
    expect(RUN("scancel", "-t", "XX"), 1, "",
           "Invalid job state specified: XX\nValid job states are PENDING, RUNNING, and "
           "SUSPENDED\n");
    /* ids that are no job id: each named, nothing cancelled (Slurm's check before sending) */
    unsigned kept = SUBMIT("-H", "--wrap=true");
    char skept[16];
    snprintf(skept, sizeof(skept), "%u", kept);
    expect(RUN("scancel", skept, "abc", "0"), 1, "",
           "scancel: error: Invalid job id abc\nscancel: error: Invalid job id 0\n");
    expect_squeue("%T", "-j", skept, "PENDING\n");
    expect(RUN("scancel", "5.batch"), 1, "", "scancel: error: Invalid job id 5.batch\n");
    expect(RUN("scancel", "5+x"), 1, "", "scancel: error: Invalid job id 5+x\n");
    /* a well-formed id of no job is quiet, as any unknown job */
    expect(RUN("scancel", "99999999999"), 0, "", "");
    expect(RUN("scancel", skept), 0, "", "");
}

/* A job acknowledged to the user is on disk: kill -9 right after sbatch returns. */
static void test_survives_kill9(void **state)
{
    unsigned id = SUBMIT("-J", "durable", "-n2", ":", "-n1", "-A", "x", "--wrap=true");
    harness_ctld_stop(&cluster, SIGKILL);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char sid[16], want[128];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(want, sizeof(want), "%u+0 durable (null) 2\n%u+1 durable x 1\n", id, id);
    expect_squeue("%i %j %a %C", "-j", sid, want);
    /* and every earlier job exactly as it was */
    assert_string_equal(show_field("123", "TimeLimit"), "00:30:00 00:30:00 00:30:00 00:20:00 00:30:00");
    expect_squeue("%i %a", "-j", "123+2", "123+2 abc\n");
    /* ids go on after the restart */
    unsigned next = SUBMIT("--wrap=true");
    assert_int_equal(next, id + 2);
}

/* Tasks never span nodes: 4 tasks of 2 CPUs on 4-CPU nodes need 2 nodes. */
static void test_node_estimate(void **state)
{
    unsigned id = SUBMIT("-H", "-n4", "-c2", ":", "-N", "1-3", "-n", "6", "--wrap=true");
    char sid[16], want[64];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(want, sizeof(want), "%u+0 2 8\n%u+1 2 6\n", id, id);
    expect_squeue("%i %D %C", "-j", sid, want);
}

static void test_show_partition(void **state)
{
    struct result r = RUN("scontrol", "show", "partition", "debug");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "PartitionName=debug"));
    assert_non_null(strstr(r.out, "Nodes=n[1-4]"));
    assert_non_null(strstr(r.out, "TotalCPUs=16"));
    result_free(&r);
    expect(RUN("scontrol", "show", "partition", "nosuch"), 1, "Partition nosuch not found\n", "");
}

static void test_sbatch_messages(void **state)
{
    expect(RUN("sbatch", "--bogus", "--wrap=true"), 255, "",
           "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n");
    struct result r = RUN("sbatch", "-n", "abc", "--wrap=true");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "sbatch: error: Invalid numeric value \"abc\" for --ntasks.\n");
    result_free(&r);
    struct result t = RUN("sbatch", "--test-only", "-n2", "--wrap=true");
    assert_int_equal(t.rc, 0);
    result_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_components),
        cmocka_unit_test(test_plain_job),
        cmocka_unit_test(test_script_equals_colon_form),
        cmocka_unit_test(test_propagation),
        cmocka_unit_test(test_environment_defaults),
        cmocka_unit_test(test_atomic_rejection),
        cmocka_unit_test(test_query_forms),
        cmocka_unit_test(test_pending_component_cancel_refused),
        cmocka_unit_test(test_update_component_vs_all),
        cmocka_unit_test(test_leader_only_operations),
        cmocka_unit_test(test_hold_release),
        cmocka_unit_test(test_begin_forms),
        cmocka_unit_test(test_whole_hetjob),
        cmocka_unit_test(test_other_user),
        cmocka_unit_test(test_scancel),
        cmocka_unit_test(test_survives_kill9),
        cmocka_unit_test(test_node_estimate),
        cmocka_unit_test(test_show_partition),
        cmocka_unit_test(test_sbatch_messages),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
