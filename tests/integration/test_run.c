/* Jobs that run: a controller, four node daemons on loopback ports, MUNGE, and the real
 * commands. Registration and sinfo; a het batch job and its environment; all-or-nothing
 * starts; no queue jumping; dependencies and begin times; exit codes, time limits,
 * cancels of a running job and of one component; suspend, resume, requeue; a node daemon
 * killed and restarted; the controller killed mid-run.
 */
#include "cluster.h"

#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 4

static struct harness_cluster cluster;
static char outdir[512];

static void write_conf(void)
{
    char nodes[2048], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
}

static int group_setup(void **state)
{
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    write_conf();
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

static char *read_output(unsigned id)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/slurm-%u.out", outdir, id);
    for (int i = 0; i < 50; i++) {
        char *text = harness_read_file(path);
        if (text)
            return text;
        usleep(100000);
    }
    fail_msg("no output file %s", path);
    return NULL;
}

static char *env_value(const char *text, const char *name)
{
    static char buf[512];
    char pat[128];
    snprintf(pat, sizeof(pat), "\n%s=", name);
    const char *p = strstr(text, pat);
    if (!p && !strncmp(text, pat + 1, strlen(pat + 1)))
        p = text - 1;
    if (!p)
        return NULL;
    p += strlen(pat);
    snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "\n"), p);
    return buf;
}

static void expect_env(const char *text, const char *name, const char *want)
{
    const char *got = env_value(text, name);
    if (!got || strcmp(got, want))
        fail_msg("%s=%s, expected %s\n%s", name, got ? got : "(unset)", want, text);
}

/* ------------------------------------------------------------------------------------ */

static void test_nodes_registered(void **state)
{
    struct result r = RUN("sinfo", "-h", "-o", "%P %a %D %t %N");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "debug* up 4 idle n[1-4]\n");
    result_free(&r);
    r = RUN("scontrol", "show", "node", "n2");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "NodeName=n2 "));
    assert_non_null(strstr(r.out, "State=IDLE"));
    assert_non_null(strstr(r.out, "CPUTot=4"));
    result_free(&r);
    r = RUN("scontrol", "show", "node=n2"); /* Slurm's other spelling */
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "NodeName=n2 "));
    result_free(&r);
}

/* A two-component het job from "#SBATCH hetjob" runs, with docs/03-env.md §2's batch
 * environment. */
static void test_het_batch_environment(void **state)
{
    char script[600];
    snprintf(script, sizeof(script), "%s/env.sh", cluster.dir);
    harness_write_file(script,
                       "#!/bin/sh\n"
                       "#SBATCH -J envtest -n2\n"
                       "#SBATCH hetjob\n"
                       "#SBATCH -N2 -n2\n"
                       "env | sort\n",
                       0755);
    unsigned id = SUBMIT(script);
    char want[64];
    snprintf(want, sizeof(want), "%u+0 COMPLETED\n%u+1 COMPLETED\n", id, id);
    wait_for(id, "%i %T", want, 20);
    char *out = read_output(id);
    char s0[16], s1[16];
    snprintf(s0, sizeof(s0), "%u", id);
    snprintf(s1, sizeof(s1), "%u", id + 1);
    expect_env(out, "SLURM_JOB_ID", s0);
    expect_env(out, "SLURM_JOBID", s0);
    expect_env(out, "SLURM_JOB_NAME", "envtest");
    expect_env(out, "SLURM_HET_SIZE", "2");
    expect_env(out, "SLURM_JOB_ID_HET_GROUP_0", s0);
    expect_env(out, "SLURM_JOB_ID_HET_GROUP_1", s1);
    expect_env(out, "SLURM_NTASKS", "2");
    expect_env(out, "SLURM_NTASKS_HET_GROUP_0", "2");
    expect_env(out, "SLURM_NTASKS_HET_GROUP_1", "2");
    expect_env(out, "SLURM_JOB_NUM_NODES_HET_GROUP_1", "2");
    expect_env(out, "SLURM_JOB_NODES_HET_GROUP_1", "2");
    expect_env(out, "SLURM_JOB_NUM_NODES", "1");
    expect_env(out, "SLURM_JOB_PARTITION", "debug");
    expect_env(out, "SLURM_CLUSTER_NAME", "itest");
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof(cwd))); /* where sbatch ran, not its -D */
    expect_env(out, "SLURM_SUBMIT_DIR", cwd);
    expect_env(out, "SLURM_JOB_USER", "root");
    expect_env(out, "SLURM_JOB_UID", "0");
    /* node lists agree with what the controller allocated */
    char *nodes0 = strdup(show_field(id, "NodeList"));
    char *nodes1 = strdup(show_field(id + 1, "NodeList"));
    expect_env(out, "SLURM_JOB_NODELIST", nodes0);
    expect_env(out, "SLURM_JOB_NODELIST_HET_GROUP_0", nodes0);
    expect_env(out, "SLURM_JOB_NODELIST_HET_GROUP_1", nodes1);
    /* the script ran on the first node of component 0 */
    expect_env(out, "SLURMD_NODENAME", show_field(id, "BatchHost"));
    free(nodes0);
    free(nodes1);
    assert_string_equal(show_field(id, "ExitCode"), "0:0");
    free(out);
}

/* The script runs as the user who submitted it, in the working directory, and its
 * output file is that user's. */
static void test_runs_as_user(void **state)
{
    const char *args[] = {"--parsable", "-D", outdir, "--wrap=id -u; id -g; pwd", NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, 65534, "sbatch", args, &out, &err);
    if (rc != 0)
        fail_msg("sbatch as nobody: %s", err);
    unsigned id = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(err);
    wait_for(id, "%T %u", "COMPLETED nobody\n", 20);
    char *text = read_output(id);
    char want[600];
    snprintf(want, sizeof(want), "65534\n65534\n%s\n", outdir);
    assert_string_equal(text, want);
    free(text);
    char path[700];
    snprintf(path, sizeof(path), "%s/slurm-%u.out", outdir, id);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 65534);
}

static void test_exit_codes(void **state)
{
    unsigned a = SUBMIT("--wrap=exit 2");
    unsigned b = SUBMIT("--wrap=kill -9 $$");
    unsigned c = SUBMIT("--wrap=true");
    wait_for(a, "%T", "FAILED\n", 20);
    wait_for(b, "%T", "FAILED\n", 20);
    wait_for(c, "%T", "COMPLETED\n", 20);
    assert_string_equal(show_field(a, "ExitCode"), "2:0");
    assert_string_equal(show_field(b, "ExitCode"), "0:9");
    assert_string_equal(show_field(c, "ExitCode"), "0:0");
}

/* A het job that does not fit as a whole stays pending: no component starts alone. */
static void test_het_all_or_nothing(void **state)
{
    unsigned blocker = SUBMIT("-N3", "--exclusive", "--wrap=sleep 60");
    wait_for(blocker, "%T", "RUNNING\n", 20);
    unsigned het = SUBMIT("-N1", "-n1", ":", "-N2", "-n2", "--wrap=true");
    char want[64];
    snprintf(want, sizeof(want), "%u+0 PENDING Resources\n%u+1 PENDING Resources\n", het, het);
    wait_for(het, "%i %T %r", want, 10);
    wait_sched_cycle(10);
    char *s = query(het, "%i %T %r");
    assert_string_equal(s, want); /* still nothing started */
    free(s);
    char b[16];
    snprintf(b, sizeof(b), "%u", blocker);
    struct result r = RUN("scancel", b);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    snprintf(want, sizeof(want), "%u+0 COMPLETED\n%u+1 COMPLETED\n", het, het);
    wait_for(het, "%i %T", want, 20);
    /* both components started in the same instant */
    assert_string_equal(show_field(het, "StartTime"), show_field(het + 1, "StartTime"));
}

/* A wide job at the head is not overtaken by a stream of small jobs. */
static void cancel(unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
}

/* The test frees nodes itself, one by one (no job's run time decides the order). */
static void test_no_queue_jumping(void **state)
{
    unsigned small[4];
    for (int i = 0; i < 4; i++)
        small[i] = SUBMIT("-N1", "--exclusive", "--wrap=sleep 300");
    for (int i = 0; i < 4; i++)
        wait_for(small[i], "%T", "RUNNING\n", 20);
    unsigned wide = SUBMIT("-N4", "--exclusive", "--wrap=sleep 300");
    unsigned later[3];
    for (int i = 0; i < 3; i++)
        later[i] = SUBMIT("-N1", "--wrap=true");
    for (int i = 0; i < 3; i++)
        wait_for(later[i], "%T %r", "PENDING Priority\n", 10);
    /* as the small jobs end one by one, nodes free up that the later jobs could use:
     * they wait behind the wide job all the same */
    for (int i = 0; i < 3; i++) {
        cancel(small[i]);
        wait_for(small[i], "%T", "CANCELLED\n", 20);
        struct result r = RUN("scontrol", "schedule");
        result_free(&r);
        for (int k = 0; k < 3; k++)
            wait_for(later[k], "%T %r", "PENDING Priority\n", 10);
    }
    cancel(small[3]);
    wait_for(wide, "%T", "RUNNING\n", 30);
    for (int i = 0; i < 3; i++) {
        char *st = query(later[i], "%T");
        assert_string_equal(st, "PENDING\n");
        free(st);
    }
    cancel(wide);
    for (int i = 0; i < 3; i++)
        wait_for(later[i], "%T", "COMPLETED\n", 30);
}

static void test_dependency_and_begin(void **state)
{
    unsigned a = SUBMIT("--wrap=sleep 2");
    char dep[64];
    snprintf(dep, sizeof(dep), "--dependency=afterok:%u", a);
    unsigned b = SUBMIT(dep, "--wrap=true");
    wait_for(b, "%T %r", "PENDING Dependency\n", 10);
    wait_for(b, "%T", "COMPLETED\n", 30);
    char *sa = strdup(show_field(a, "EndTime"));
    char *sb = strdup(show_field(b, "StartTime"));
    assert_true(strcmp(sb, sa) >= 0); /* b started once a had ended */
    free(sa);
    free(sb);
    /* afterok on a failed job: never */
    unsigned f = SUBMIT("--wrap=exit 1");
    snprintf(dep, sizeof(dep), "--dependency=afterok:%u", f);
    unsigned never = SUBMIT(dep, "--wrap=true");
    wait_for(never, "%T %r", "PENDING DependencyNeverSatisfied\n", 30);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", never);
    struct result r = RUN("scancel", sid);
    result_free(&r);
    /* --begin a few seconds ahead */
    time_t before = time(NULL);
    unsigned later = SUBMIT("--begin=now+3", "--wrap=true");
    wait_for(later, "%T %r", "PENDING BeginTime\n", 5);
    wait_for(later, "%T", "COMPLETED\n", 20);
    assert_true(time(NULL) - before >= 3);
}

static void test_time_limit(void **state)
{
    unsigned id = SUBMIT("-t", "0:02", "--wrap=sleep 60");
    wait_for(id, "%T", "RUNNING\n", 20);
    wait_for(id, "%T", "TIMEOUT\n", 20);
    assert_string_equal(show_field(id, "ExitCode"), "0:15");
}

static void test_cancel_running(void **state)
{
    unsigned plain = SUBMIT("--wrap=sleep 60");
    wait_for(plain, "%T", "RUNNING\n", 20);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", plain);
    struct result r = RUN("scancel", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_for(plain, "%T", "CANCELLED\n", 20);

    /* one running component alone, then the rest */
    unsigned het = SUBMIT("-n1", ":", "-n1", "--wrap=sleep 60");
    char want[64], one[24];
    snprintf(want, sizeof(want), "%u+0 RUNNING\n%u+1 RUNNING\n", het, het);
    wait_for(het, "%i %T", want, 20);
    snprintf(one, sizeof(one), "%u+1", het);
    r = RUN("scancel", one);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    /* squeue's order: by state ("CA" before "R") */
    snprintf(want, sizeof(want), "%u+1 CANCELLED\n%u+0 RUNNING\n", het, het);
    wait_for(het, "%i %T", want, 10);
    snprintf(sid, sizeof(sid), "%u", het);
    r = RUN("scancel", sid);
    result_free(&r);
    snprintf(want, sizeof(want), "%u+0 CANCELLED\n%u+1 CANCELLED\n", het, het);
    wait_for(het, "%i %T", want, 20);
}

static void test_suspend_resume_requeue(void **state)
{
    unsigned id = SUBMIT("--wrap=sleep 5");
    wait_for(id, "%T", "RUNNING\n", 20);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scontrol", "suspend", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_for(id, "%T", "SUSPENDED\n", 5);
    r = RUN("scontrol", "resume", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_for(id, "%T", "RUNNING\n", 5);
    r = RUN("scontrol", "requeue", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    /* back to the queue, then run again to the end */
    wait_for(id, "%T", "COMPLETED\n", 40);
    assert_string_equal(show_field(id, "Restarts"), "1");
}

/* A node daemon killed: its jobs end NODE_FAIL; restarted, the node serves again and
 * nothing of the old job is left running. */
static void test_node_daemon_killed(void **state)
{
    /* a duration of its own names the job's process (other clusters may run on the host) */
    char nap[32], wrap[64];
    snprintf(nap, sizeof(nap), "sleep 313.%d", (int)getpid());
    snprintf(wrap, sizeof(wrap), "--wrap=%s", nap);
    unsigned id = SUBMIT("-w", "n4", wrap);
    unsigned again_later = SUBMIT("-w", "n4", "--requeue", "--wrap=sleep 1");
    wait_for(id, "%T", "RUNNING\n", 20);
    wait_for(again_later, "%T", "RUNNING\n", 20);
    harness_noded_stop(&cluster, 4, SIGKILL);
    wait_for(id, "%T", "NODE_FAIL\n", 20);
    /* the job that asked for --requeue waits for its node instead */
    wait_for(again_later, "%T", "PENDING\n", 20);
    assert_string_equal(show_field(again_later, "Restarts"), "1");
    struct result r = RUN("sinfo", "-h", "-n", "n4", "-o", "%t");
    assert_non_null(strstr(r.out, "down"));
    result_free(&r);
    assert_int_equal(harness_noded_start(&cluster, 4), 0);
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 15000), 0);
    /* the old sleep is killed by the restarted daemon */
    char *argv[] = {"/usr/bin/pgrep", "-f", nap, NULL};
    int rc = 0;
    for (int i = 0; i < 100 && rc != 1; i++) {
        char *out = NULL;
        rc = harness_run(argv, NULL, &out, NULL, 5000);
        free(out);
        if (rc != 1)
            usleep(100000);
    }
    assert_int_equal(rc, 1); /* pgrep: nothing matched */
    unsigned again = SUBMIT("-w", "n4", "--wrap=true");
    wait_for(again, "%T", "COMPLETED\n", 20);
    wait_for(again_later, "%T", "COMPLETED\n", 20);
}

/* The controller killed with -9 while jobs run: on restart the daemons reconnect, and the
 * jobs end with their true exit codes. */
static void test_controller_killed_mid_run(void **state)
{
    unsigned id = SUBMIT("--wrap=sleep 3; exit 3");
    wait_for(id, "%T", "RUNNING\n", 20);
    char *log = harness_read_file(cluster.nodes[0].log);
    int lost = cmdcheck_count(log, "lost the controller");
    free(log);
    harness_ctld_stop(&cluster, SIGKILL);
    /* the node daemons noticed, and register again once it is back */
    free(cmdcheck_file_with_n(cluster.nodes[0].log, "lost the controller", lost + 1, 10));
    assert_int_equal(harness_ctld_start(&cluster), 0);
    wait_for(id, "%T", "FAILED\n", 30);
    assert_string_equal(show_field(id, "ExitCode"), "3:0");
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 15000), 0);
}

static void test_drain_and_resume(void **state)
{
    struct result r = RUN("scontrol", "update", "nodename=n3", "state=drain", "reason=maintenance");
    assert_int_equal(r.rc, 0);
    result_free(&r);
    r = RUN("sinfo", "-h", "-n", "n3", "-o", "%t %E");
    assert_string_equal(r.out, "drain maintenance\n");
    result_free(&r);
    unsigned id = SUBMIT("-w", "n3", "--wrap=true");
    wait_for(id, "%T", "PENDING\n", 5);
    r = RUN("scontrol", "update", "nodename=n3", "state=resume");
    assert_int_equal(r.rc, 0);
    result_free(&r);
    wait_for(id, "%T", "COMPLETED\n", 20);
    r = RUN("scontrol", "update", "nodename=n3", "state=drain");
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "You must specify a reason"));
    result_free(&r);
}

/* SIGHUP re-reads nodes and partitions. */
static void test_reconfigure(void **state)
{
    char nodes[2048], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n"
             "PartitionName=small Nodes=n[1-2] MaxTime=10\n",
             nodes);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    struct result r = RUN("scontrol", "reconfigure");
    assert_int_equal(r.rc, 0);
    result_free(&r);
    r = RUN("sinfo", "-h", "-p", "small", "-o", "%P %D %N %l");
    assert_string_equal(r.out, "small 2 n[1-2] 10:00\n");
    result_free(&r);
    unsigned id = SUBMIT("-p", "small", "--wrap=true");
    wait_for(id, "%T %P", "COMPLETED small\n", 20);
    /* nodes kept their state through it */
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 5000), 0);
    write_conf();
    assert_true(cluster.ctld > 0);
    kill(cluster.ctld, SIGHUP);
    for (int i = 0; i < 50; i++) {
        r = RUN("sinfo", "-h", "-o", "%P");
        int gone = !strstr(r.out, "small");
        result_free(&r);
        if (gone)
            return;
        usleep(100000);
    }
    fail_msg("SIGHUP did not remove partition small");
}

static void test_sched_stats(void **state)
{
    struct result r = RUN("scontrol", "show", "sched");
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "Scheduler: sched/backfill"));
    assert_non_null(strstr(r.out, "Total cycles:"));
    assert_non_null(strstr(r.out, "NEW"));
    result_free(&r);
}

/* --export=NONE still takes the cluster along: srun inside the script reaches the same
 * controller (TESSERA_CONF goes with the SLURM_* variables). */
static void test_export_none_reaches_cluster(void **state)
{
    char script[600];
    snprintf(script, sizeof(script), "--wrap=%s/srun -n1 echo step-ran; echo conf=$TESSERA_CONF",
             TESSERA_BIN_DIR);
    unsigned id = SUBMIT("--export=NONE", script);
    wait_for(id, "%T", "COMPLETED\n", 20);
    char *out = read_output(id);
    char want[700];
    snprintf(want, sizeof(want), "step-ran\nconf=%s\n", cluster.conf);
    assert_string_equal(out, want);
    free(out);
}

/* squeue -w/--nodelist: jobs allocated any of the nodes named (pending ones have none);
 * a name that is no node is Slurm's error. --partitions is -p. */
static void test_squeue_by_node(void **state)
{
    unsigned on2 = SUBMIT("-w", "n2", "--wrap=sleep 300");
    wait_for(on2, "%T", "RUNNING\n", 20);
    unsigned held = SUBMIT("-H", "-w", "n2", "--wrap=true");
    char want[64];
    snprintf(want, sizeof(want), "%u\n", on2);
    struct result r = RUN("squeue", "-h", "-o", "%i", "-w", "n2");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, want);
    result_free(&r);
    r = RUN("squeue", "-h", "-o", "%i", "--nodelist=n[1-2]", "--partitions=debug");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, want);
    result_free(&r);
    r = RUN("squeue", "-h", "-o", "%i", "-w", "n1");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "");
    result_free(&r);
    r = RUN("squeue", "-h", "-w", "n1,nosuch");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "squeue: error: Invalid node name nosuch\n");
    result_free(&r);
    cancel(on2);
    cancel(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_registered),
        cmocka_unit_test(test_het_batch_environment),
        cmocka_unit_test(test_runs_as_user),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_het_all_or_nothing),
        cmocka_unit_test(test_no_queue_jumping),
        cmocka_unit_test(test_dependency_and_begin),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_cancel_running),
        cmocka_unit_test(test_suspend_resume_requeue),
        cmocka_unit_test(test_node_daemon_killed),
        cmocka_unit_test(test_controller_killed_mid_run),
        cmocka_unit_test(test_drain_and_resume),
        cmocka_unit_test(test_reconfigure),
        cmocka_unit_test(test_sched_stats),
        cmocka_unit_test(test_export_none_reaches_cluster),
        cmocka_unit_test(test_squeue_by_node),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
