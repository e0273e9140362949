/* scontrol update of jobs that run or wait, through the real commands, as root and as the
 * unprivileged user nobody (docs/job-states.md, section 7): time limits of running jobs
 * (absolute and relative, whole het job or one component, kept across a controller
 * restart and enforced), priority and nice of pending jobs (the scheduler's order follows
 * them), and a running job shrunk with NumNodes=. Every refusal is checked to change
 * nothing. Texts and permissions are Slurm 22.05's.
 */
#define _XOPEN_SOURCE 700 /* strptime */
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

#define NODES 4
#define NOBODY 65534

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    char nodes[2048], extra[4096];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    int rc = harness_ctld_stop_clean(&cluster); /* under the sanitizers: leaks fail here */
    harness_cluster_fini(&cluster);
    return rc;
}

/* ------------------------------------------------------------------------------------ */

static struct result run_as(uid_t uid, const char *const env[], const char *cmd,
                            const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_full(&cluster, uid, env, cmd, args, &r.out, &r.err);
    return r;
}
#define RUN_AS(uid, cmd, ...) run_as(uid, NULL, cmd, (const char *const[]){__VA_ARGS__, NULL})

/* sbatch as uid with these options (NULL-terminated), writing into outdir; the id. */
static unsigned submit_as(uid_t uid, const char *const opts[])
{
    const char *args[32] = {"--parsable", "-D", outdir, "-o", "/dev/null"};
    size_t n = 5;
    for (size_t i = 0; opts[i] && n < 31; i++)
        args[n++] = opts[i];
    args[n] = NULL;
    struct result r = run_as(uid, NULL, "sbatch", args);
    if (r.rc != 0)
        fail_msg("sbatch failed (%d): %s", r.rc, r.err);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    return id;
}
#define SUBMIT_AS_USER(uid, ...) submit_as(uid, (const char *const[]){__VA_ARGS__, NULL})

/* "scontrol update jobid=ID KEY=VALUE" as uid: its exit status and standard error must be
 * these ("" for none). */
static void update(uid_t uid, const char *id, const char *setting, int rc, const char *err)
{
    char jobid[48];
    snprintf(jobid, sizeof(jobid), "jobid=%s", id);
    struct result r = uid == 0 ? RUN("scontrol", "update", jobid, setting)
                               : RUN_AS(uid, "scontrol", "update", jobid, setting);
    if (r.rc != rc || strcmp(r.err, err))
        fail_msg("scontrol update %s %s as uid %u: exit %d, stderr '%s'; expected %d, '%s'",
                 jobid, setting, (unsigned)uid, r.rc, r.err, rc, err);
    result_free(&r);
}

static const char *id_text(unsigned id, int offset)
{
    static char buf[4][24];
    static int next;
    char *b = buf[next++ % 4];
    if (offset < 0)
        snprintf(b, 24, "%u", id);
    else
        snprintf(b, 24, "%u+%d", id, offset);
    return b;
}

/* scontrol's refusal line, naming the id as typed. */
static const char *refusal(const char *id, const char *what)
{
    static char buf[128];
    snprintf(buf, sizeof(buf), "%s for job %s\n", what, id);
    return buf;
}
#define denied(id, what) refusal(id_text(id, -1), what)

static void cancel(unsigned id)
{
    struct result r = RUN("scancel", id_text(id, -1));
    result_free(&r);
}

/* ------------------------------------------------------------------------------------ */

/* Seconds from the job's StartTime to its EndTime as squeue prints them. */
static long run_span(unsigned id)
{
    char *q = query(id, "%S %e");
    struct tm start = {0}, end = {0};
    char *rest = strptime(q, "%Y-%m-%dT%H:%M:%S", &start);
    if (!rest || !strptime(rest + 1, "%Y-%m-%dT%H:%M:%S", &end))
        fail_msg("job %u: start and end '%s'", id, q);
    free(q);
    start.tm_isdst = end.tm_isdst = -1;
    return (long)difftime(mktime(&end), mktime(&start));
}

/* A running job's limit: its owner may lower it (absolutely or by -N), not raise it; an
 * administrator may do both. The new limit survives a controller restart and is the one
 * enforced. */
static void test_time_limit_running(void **state)
{
    unsigned id = SUBMIT_AS_USER(NOBODY, "-t", "10", "--wrap=sleep 300");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    wait_for(id, "%T %l", "RUNNING 10:00\n", 20);

    const char *no = denied(id, "Access/permission denied");
    update(NOBODY, sid, "TimeLimit=20", 1, no);
    update(NOBODY, sid, "TimeLimit=+5", 1, no);
    update(NOBODY, sid, "TimeLimit=UNLIMITED", 1, no);
    update(NOBODY, sid, "TimeLimit=-100", 1,
           "scontrol: error: TimeLimit decrement larger than current time limit (100 > 10)\n");
    wait_for(id, "%T %l", "RUNNING 10:00\n", 1); /* nothing changed */

    update(NOBODY, sid, "TimeLimit=8", 0, "");
    wait_for(id, "%l", "8:00\n", 1);
    update(NOBODY, sid, "TimeLimit=-2", 0, "");
    wait_for(id, "%l", "6:00\n", 1);
    update(0, sid, "TimeLimit=+9", 0, "");
    wait_for(id, "%l", "15:00\n", 1);
    update(0, sid, "TimeLimit=UNLIMITED", 0, "");
    wait_for(id, "%l", "UNLIMITED\n", 1);
    update(0, sid, "TimeLimit=+5", 0, ""); /* unlimited stays unlimited */
    wait_for(id, "%l", "UNLIMITED\n", 1);
    update(0, sid, "TimeLimit=30", 0, "");
    assert_int_equal(run_span(id), 30 * 60); /* its expected end moved with it */

    /* someone else's job */
    unsigned other = SUBMIT("-o", "/dev/null", "-t", "10", "--wrap=sleep 300");
    wait_for(other, "%T", "RUNNING\n", 20);
    update(NOBODY, id_text(other, -1), "TimeLimit=5", 1, denied(other, "Invalid user id"));
    wait_for(other, "%l", "10:00\n", 1);
    cancel(other);

    /* kept on disk: a controller killed and started again still has it */
    harness_ctld_stop(&cluster, SIGKILL);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    wait_for(id, "%T %l", "RUNNING 30:00\n", 20);
    assert_int_equal(run_span(id), 30 * 60);
    /* and enforced: a limit the job has already used up ends it */
    update(NOBODY, sid, "TimeLimit=0:01", 0, "");
    wait_for(id, "%T", "TIMEOUT\n", 20);
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 15000), 0);
}

/* docs/01-hetjob.md §4.2: "N" changes every component, "N+K" that component alone. */
static void test_time_limit_het(void **state)
{
    unsigned id = SUBMIT_AS_USER(NOBODY, "-t", "10", ":", "-t", "20", "--wrap=sleep 300");
    char want[96];
    snprintf(want, sizeof(want), "%u+0 RUNNING 10:00\n%u+1 RUNNING 20:00\n", id, id);
    wait_for(id, "%i %T %l", want, 20);

    update(NOBODY, id_text(id, 1), "TimeLimit=+1", 1,
           refusal(id_text(id, 1), "Access/permission denied"));
    wait_for(id, "%i %T %l", want, 1);
    update(NOBODY, id_text(id, 1), "TimeLimit=15", 0, "");
    snprintf(want, sizeof(want), "%u+0 10:00\n%u+1 15:00\n", id, id);
    wait_for(id, "%i %l", want, 1);
    update(0, id_text(id, -1), "TimeLimit=+5", 0, "");
    snprintf(want, sizeof(want), "%u+0 15:00\n%u+1 20:00\n", id, id);
    wait_for(id, "%i %l", want, 1);
    update(NOBODY, id_text(id, -1), "TimeLimit=12", 0, "");
    snprintf(want, sizeof(want), "%u+0 12:00\n%u+1 12:00\n", id, id);
    wait_for(id, "%i %l", want, 1);
    cancel(id);
}

static unsigned long priority_of(unsigned id)
{
    char *q = query(id, "%Q");
    unsigned long p = strtoul(q, NULL, 10);
    free(q);
    return p;
}

/* Priority and nice of pending jobs: the owner may lower the priority (0 holds the job)
 * and set a nice of 0 or more; raising either is for administrators. The scheduler starts
 * the job that is first by the new priority. */
static void test_priority_and_nice(void **state)
{
    unsigned blocker = SUBMIT("-o", "/dev/null", "-N4", "--exclusive", "--wrap=sleep 300");
    wait_for(blocker, "%T", "RUNNING\n", 20);
    unsigned a = SUBMIT_AS_USER(NOBODY, "-N4", "--exclusive", "--wrap=sleep 300");
    unsigned b = SUBMIT_AS_USER(NOBODY, "-N4", "--exclusive", "--wrap=sleep 300");
    char sa[16], sb[16];
    snprintf(sa, sizeof(sa), "%u", a);
    snprintf(sb, sizeof(sb), "%u", b);
    wait_for(a, "%T", "PENDING\n", 5);
    unsigned long pa = priority_of(a), pb = priority_of(b);
    assert_true(pa > pb); /* first come, first served */

    char set[64];
    const char *no = denied(a, "Access/permission denied");
    snprintf(set, sizeof(set), "Priority=%lu", pa + 1);
    update(NOBODY, sa, set, 1, no);
    update(NOBODY, sa, "Nice=-5", 1, no);
    assert_int_equal(priority_of(a), pa);
    char *y = query(a, "%y");
    assert_string_equal(y, "0\n");
    free(y);

    update(NOBODY, sa, "Nice=5", 0, "");
    assert_int_equal(priority_of(a), pa - 5);
    y = query(a, "%y");
    assert_string_equal(y, "5\n");
    free(y);
    update(NOBODY, sa, "Nice=0", 0, ""); /* back down to 0 is the owner's */
    assert_int_equal(priority_of(a), pa);
    snprintf(set, sizeof(set), "Priority=%lu", pa - 10);
    update(NOBODY, sa, set, 0, ""); /* lowering is the owner's too */
    assert_int_equal(priority_of(a), pa - 10);

    /* 0 holds the job; a held job takes no other priority until released */
    update(NOBODY, sa, "Priority=0", 0, "");
    wait_for(a, "%T %r %Q", "PENDING JobHeldUser 0\n", 5);
    update(NOBODY, sa, "Priority=5", 1,
           denied(a, "Job is in held state, pending scheduler release"));
    update(0, sa, "Priority=5", 1, denied(a, "Job is in held state, pending scheduler release"));
    struct result r = RUN_AS(NOBODY, "scontrol", "release", sa);
    expect_ok(&r);
    result_free(&r);
    assert_int_equal(priority_of(a), pa - 10);

    /* an administrator moves b ahead of a: b starts first once the nodes are free */
    snprintf(set, sizeof(set), "Priority=%lu", pa + 100);
    update(0, sb, set, 0, "");
    assert_int_equal(priority_of(b), pa + 100);
    cancel(blocker);
    wait_for(b, "%T", "RUNNING\n", 20);
    wait_for(a, "%T", "PENDING\n", 1);
    cancel(b);
    wait_for(a, "%T", "RUNNING\n", 20);
    cancel(a);
    wait_for(a, "%T", "CANCELLED\n", 20);
}

static int count_processes(const char *pattern)
{
    char *argv[] = {"/usr/bin/pgrep", "-c", "-f", (char *)pattern, NULL};
    char *out = NULL;
    harness_run(argv, NULL, &out, NULL, 5000);
    int n = out ? atoi(out) : -1;
    free(out);
    return n;
}

/* NumNodes= shrinks a running job (its owner may): the released nodes serve other jobs
 * and what the job ran there ends; from inside the job scontrol writes the scripts that
 * bring the shell's variables up to date. Growing is refused. */
static void test_shrink(void **state)
{
    char nap[48], wrap[96];
    snprintf(nap, sizeof(nap), "^sleep 317.%d", (int)getpid()); /* the tasks, not srun */
    snprintf(wrap, sizeof(wrap), "--wrap=srun %s; sleep 300", nap + 1);
    unsigned id = SUBMIT_AS_USER(NOBODY, "-N3", wrap);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    wait_for(id, "%T %D %N", "RUNNING 3 n[1-3]\n", 20);
    for (int i = 0; i < 100 && count_processes(nap) != 3; i++)
        usleep(100000);
    assert_int_equal(count_processes(nap), 3);

    update(NOBODY, sid, "NumNodes=4", 1,
           denied(id, "Requested operation not supported on this system"));
    update(NOBODY, sid, "NumNodes=0", 1, denied(id, "Node count specification invalid"));
    update(NOBODY, sid, "NumTasks=1", 1, denied(id, "Job is no longer pending execution"));
    unsigned other = SUBMIT("-o", "/dev/null", "-w", "n4", "--wrap=sleep 300");
    wait_for(other, "%T", "RUNNING\n", 20);
    update(NOBODY, id_text(other, -1), "NumNodes=1", 1, denied(other, "Invalid user id"));
    wait_for(id, "%T %D %N", "RUNNING 3 n[1-3]\n", 1);

    /* from inside the job: scontrol writes the scripts where it runs */
    char jobenv[32];
    snprintf(jobenv, sizeof(jobenv), "SLURM_JOBID=%u", id);
    const char *env[] = {jobenv, "SLURM_NODELIST=n[1-3]", "SLURM_NNODES=3",
                         "SLURM_JOB_CPUS_PER_NODE=1(x3)", "SLURM_NTASKS=3", NULL};
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(outdir), 0);
    char jobid[32];
    snprintf(jobid, sizeof(jobid), "jobid=%u", id);
    struct result r =
        run_as(NOBODY, env, "scontrol", (const char *const[]){"update", jobid, "NumNodes=1", NULL});
    assert_int_equal(chdir(cwd), 0);
    expect_ok(&r);
    char want[512];
    snprintf(want, sizeof(want),
             "To reset Slurm environment variables, execute\n"
             "  For bash or sh shells:  . ./slurm_job_%u_resize.sh\n"
             "  For csh shells:         source ./slurm_job_%u_resize.csh\n",
             id, id);
    assert_string_equal(r.out, want);
    result_free(&r);
    char path[700];
    snprintf(path, sizeof(path), "%s/slurm_job_%u_resize.sh", outdir, id);
    char *text = harness_read_file(path);
    assert_non_null(text);
    assert_string_equal(text, "export SLURM_NODELIST=\"n1\"\n"
                              "export SLURM_NNODES=1\n"
                              "export SLURM_JOB_CPUS_PER_NODE=\"1\"\n"
                              "unset SLURM_NTASKS\n");
    free(text);
    snprintf(path, sizeof(path), "%s/slurm_job_%u_resize.csh", outdir, id);
    text = harness_read_file(path);
    assert_non_null(text);
    assert_string_equal(text, "setenv SLURM_NODELIST \"n1\"\n"
                              "setenv SLURM_NNODES 1\n"
                              "setenv SLURM_JOB_CPUS_PER_NODE \"1\"\n"
                              "unsetenv SLURM_NTASKS\n");
    free(text);

    wait_for(id, "%T %D %N", "RUNNING 1 n1\n", 1);
    /* what it ran on the released nodes ends; its first node goes on */
    for (int i = 0; i < 100 && count_processes(nap) > 1; i++)
        usleep(100000);
    assert_int_equal(count_processes(nap), 1);
    /* the released nodes take other work while the job runs */
    unsigned next = SUBMIT("-o", "/dev/null", "-N2", "-w", "n[2-3]", "--wrap=sleep 300");
    wait_for(next, "%T", "RUNNING\n", 20);
    wait_for(id, "%T %D %N", "RUNNING 1 n1\n", 1);
    cancel(next);
    cancel(other);
    cancel(id);
    wait_for(id, "%T", "CANCELLED\n", 20);
}

/* Whether "squeue -o FORMAT -j ID" keeps printing want for a few seconds. */
static int stays(unsigned id, const char *format, const char *want)
{
    for (int i = 0; i < 30; i++) {
        char *got = query(id, format);
        int same = !strcmp(got, want);
        free(got);
        if (!same)
            return 0;
        usleep(100000);
    }
    return 1;
}

/* One component shrunk off a node another component still uses: the end of what it ran
 * there is not taken for the end of the job. */
static void test_shrink_het_component(void **state)
{
    char nap[48], wrap[128];
    snprintf(nap, sizeof(nap), "^sleep 319.%d", (int)getpid());
    snprintf(wrap, sizeof(wrap), "--wrap=srun --het-group=0 %s; sleep 300", nap + 1);
    unsigned id = SUBMIT_AS_USER(NOBODY, "-N2", "-w", "n[1-2]", ":", "-N1", "-w", "n2", wrap);
    char want[96];
    snprintf(want, sizeof(want), "%u+0 RUNNING n[1-2]\n%u+1 RUNNING n2\n", id, id);
    wait_for(id, "%i %T %N", want, 20);
    for (int i = 0; i < 100 && count_processes(nap) != 2; i++)
        usleep(100000);
    assert_int_equal(count_processes(nap), 2);

    update(NOBODY, id_text(id, 0), "NumNodes=1", 0, "");
    snprintf(want, sizeof(want), "%u+0 RUNNING n1\n%u+1 RUNNING n2\n", id, id);
    wait_for(id, "%i %T %N", want, 5);
    for (int i = 0; i < 100 && count_processes(nap) > 1; i++)
        usleep(100000);
    assert_int_equal(count_processes(nap), 1);
    assert_true(stays(id, "%i %T %N", want));
    cancel(id);
    snprintf(want, sizeof(want), "%u+0 CANCELLED\n%u+1 CANCELLED\n", id, id);
    wait_for(id, "%i %T", want, 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_limit_running),
        cmocka_unit_test(test_time_limit_het),
        cmocka_unit_test(test_priority_and_nice),
        cmocka_unit_test(test_shrink),
        cmocka_unit_test(test_shrink_het_component),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
