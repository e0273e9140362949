/* Steps of a three-component allocation whose components share one node (docs/steps.md,
 * "Step ids"): every component counts its own step ids, so steps of different components
 * share step ids on that node. Each must launch (the replay guard, the node's step table
 * and its records name a step by its first component's own id and its step id), end under
 * its own records (squeue -s, sacct), and be cancelled alone.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

static struct harness_cluster cluster;
static char outdir[512];

/* One node that holds all three components. */
static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, 1, "CPUs=8 RealMemory=4000",
                              "NodedTimeout=5\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* salloc -N1 : -N1 : -N1 running a shell script. */
static struct result salloc3(const char *script)
{
    return RUN("salloc", "-Q", "-N1", ":", "-N1", ":", "-N1", "sh", "-c", script);
}

/* The leader's id from a line "job=<id>" of the script's output. */
static unsigned job_of(const struct result *r)
{
    const char *p = r->out ? strstr(r->out, "job=") : NULL;
    if (!p)
        fail_msg("no job= line\nstdout:\n%s\nstderr:\n%s", r->out, r->err);
    return (unsigned)strtoul(p + 4, NULL, 10);
}

static int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p++)
        n++;
    return n;
}

/* Waits until no step of the job is RUNNING any more (node daemons report the ends a
 * moment after srun has seen its tasks end). */
#define WAIT_STEPS_ENDED                                                                    \
    "for i in $(seq 100); do "                                                              \
    "squeue -h -s -t all -j $SLURM_JOB_ID -o '%T' | grep -q RUNNING || break; "             \
    "sleep 0.1; done; "

/* Every single-group and multi-group step, twice over: the groups, and the step id each
 * component gets (docs/04-steps.md §3.1: a step takes the highest counter of its components and
 * moves theirs past it). -1: the component is not in the step. */
static const struct {
    const char *groups;
    int ids[3];
} steps[] = {
    {"0", {0, -1, -1}},   {"1", {-1, 0, -1}},    {"2", {-1, -1, 0}},  {"0,1", {1, 1, -1}},
    {"1,2", {-1, 2, 2}},  {"0,2", {3, -1, 3}},   {"0-2", {4, 4, 4}},  {"0", {5, -1, -1}},
    {"1", {-1, 5, -1}},   {"2", {-1, -1, 5}},    {"0,1", {6, 6, -1}}, {"1,2", {-1, 7, 7}},
    {"0,2", {8, -1, 8}},  {"0-2", {9, 9, 9}},
};
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static void test_every_group_on_one_node(void **state)
{
    (void)state;
    char script[4096];
    size_t o = (size_t)snprintf(script, sizeof(script), "echo job=$SLURM_JOB_ID; ");
    for (size_t i = 0; i < NSTEPS; i++)
        o += (size_t)snprintf(script + o, sizeof(script) - o,
                              "srun --het-group=%s sh -c 'echo s%zu $SLURM_STEP_ID "
                              "$SLURM_PROCID $SLURMD_NODENAME'; echo rc%zu=$?; ",
                              steps[i].groups, i, i);
    snprintf(script + o, sizeof(script) - o,
             "%s squeue -h -s -t all -j $SLURM_JOB_ID -o '%%i %%T'; "
             "sacct -n -P -j $SLURM_JOB_ID -o JobID,State; "
             "squeue -h -s -t all -j $((SLURM_JOB_ID+1)).0 -o 'one %%i'",
             WAIT_STEPS_ENDED);
    struct result r = salloc3(script);
    expect_ok(&r);
    unsigned job = job_of(&r);
    int records = 0;
    for (size_t i = 0; i < NSTEPS; i++) {
        /* ran, on the one node, one task per component, ranks over its components */
        expect_line(r.out, "rc%zu=0", i);
        int rank = 0;
        for (unsigned k = 0; k < 3; k++) {
            int id = steps[i].ids[k];
            if (id < 0)
                continue;
            expect_line(r.out, "s%zu %d %d n1", i, id, rank++);
            expect_line(r.out, "%u.%d COMPLETED", job + k, id);
            expect_line(r.out, "%u+%u.%d|COMPLETED", job, k, id);
            records++;
        }
    }
    assert_null(strstr(r.err, "replayed"));
    /* nothing more: each component's own step ids, each step once in squeue and sacct */
    assert_int_equal(occurrences(r.out, "COMPLETED"), 2 * records);
    /* "J.S" names one step: 1722.0 is component 1's alone */
    expect_line(r.out, "one %u.0", job + 1);
    assert_int_equal(occurrences(r.out, "one "), 1);
    result_free(&r);
}

/* The state of step J.S (J given as an offset from the leader) in the script's last
 * squeue -s, as printed by "%i %T". */
static void expect_state(const struct result *r, unsigned job, unsigned k, unsigned step,
                         const char *state)
{
    expect_line(r->out, "%u.%u %s", job + k, step, state);
}

/* scancel of one component's step stops that step alone, while steps of the other
 * components with the same step id run on the same node; a step over two components is
 * cancelled whole. "J.S" with the leader's id J names component 0's step S (as squeue -s
 * shows it), not every component's. Each component has one CPU: the steps share them
 * (--overlap), as they must to run at once. */
static void test_cancel_one_component_step(void **state)
{
    (void)state;
    struct result r = salloc3(
        "echo job=$SLURM_JOB_ID; J=$SLURM_JOB_ID; "
        "running() { squeue -h -s -j $J -o %i | wc -l; }; "
        "until_running() { for i in $(seq 200); do [ $(running) = $1 ] && break; sleep 0.1; "
        "done; }; "
        /* 1721.0, 1722.0, 1723.0 */
        "srun --overlap --het-group=0 sleep 60 & p0=$!; "
        "srun --overlap --het-group=1 sleep 60 & p1=$!; "
        "srun --overlap --het-group=2 sleep 60 & p2=$!; "
        "until_running 3; "
        "scancel $((J+1)).0; wait $p1; echo rc1=$?; "
        /* 1722.1 and the step 1721.1 + 1723.1 (leader id and step id alike) */
        "srun --overlap --het-group=1 sleep 60 & p3=$!; "
        "srun --overlap --het-group=0,2 sleep 60 & p4=$!; "
        "until_running 5; "
        "squeue -h -s -j $J.1 -o 'q %i'; "
        "scancel $J.1; wait $p4; echo rc4=$?; "
        "until_running 3; squeue -h -s -t all -j $J -o '%i %T'; "
        "scancel $J.0 $((J+1)).1 $((J+2)).0; wait; echo done");
    unsigned job = job_of(&r);
    /* the cancelled sruns failed; the others ran on until the end */
    assert_true(has_prefix_line(r.out, "rc1=") && !has_line(r.out, "rc1=0"));
    assert_true(has_prefix_line(r.out, "rc4=") && !has_line(r.out, "rc4=0"));
    expect_line(r.out, "done");
    /* J.1 is the step of components 0 and 2, not component 1's 1722.1 */
    expect_line(r.out, "q %u.1", job);
    expect_line(r.out, "q %u.1", job + 2);
    assert_int_equal(occurrences(r.out, "q "), 2);
    expect_state(&r, job, 0, 0, "RUNNING");
    expect_state(&r, job, 1, 0, "CANCELLED");
    expect_state(&r, job, 2, 0, "RUNNING");
    expect_state(&r, job, 1, 1, "RUNNING");
    expect_state(&r, job, 0, 1, "CANCELLED");
    expect_state(&r, job, 2, 1, "CANCELLED");
    assert_null(strstr(r.err, "replayed"));
    result_free(&r);
}

/* The step records in n1's state folder ("step.<job>.<first component>.<step>"), as one
 * sorted line. */
static void step_records(char *buf, size_t len)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/spool/n1/state", cluster.dir);
    char names[8][256];
    size_t n = 0;
    DIR *d = opendir(path);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) && n < 8;)
        if (!strncmp(e->d_name, "step.", 5))
            snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
    closedir(d);
    qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "", names[i]);
}

/* Steps 1721.0 and 1722.0 run on n1 when its node daemon dies: each has its own record
 * there, the restarted daemon kills both and reports each end under its own name, and
 * each srun learns that its step ended. */
static void test_node_daemon_restarted(void **state)
{
    (void)state;
    char log[600], script[2048];
    snprintf(log, sizeof(log), "%s/restart.log", outdir);
    snprintf(script, sizeof(script),
             "echo job=$SLURM_JOB_ID; "
             "srun --het-group=0 sh -c 'touch %s/m0; exec sleep 60' & "
             "srun --het-group=1 sh -c 'touch %s/m1; exec sleep 60' & "
             "wait; %s squeue -h -s -t all -j $SLURM_JOB_ID -o '%%i %%T'",
             outdir, outdir, WAIT_STEPS_ENDED);
    pid_t pid = harness_cmd_spawn(
        &cluster, "salloc",
        (const char *const[]){"-Q", "-N1", ":", "-N1", ":", "-N1", "sh", "-c", script, NULL},
        log);
    assert_true(pid > 0);
    char m0[600], m1[600];
    snprintf(m0, sizeof(m0), "%s/m0", outdir);
    snprintf(m1, sizeof(m1), "%s/m1", outdir);
    for (int i = 0; i < 200 && (access(m0, F_OK) || access(m1, F_OK)); i++)
        usleep(50000);
    assert_int_equal(access(m0, F_OK) | access(m1, F_OK), 0);
    char *text = harness_read_file(log);
    unsigned job = (text && strstr(text, "job=")) ? (unsigned)atoi(strstr(text, "job=") + 4) : 0;
    free(text);
    assert_true(job > 0);
    char have[256], want[256];
    step_records(have, sizeof(have));
    snprintf(want, sizeof(want), "step.%u.%u.0 step.%u.%u.0", job, job, job, job + 1);
    assert_string_equal(have, want);

    assert_true(harness_noded_stop(&cluster, 1, SIGKILL) >= 0);
    assert_int_equal(harness_noded_start(&cluster, 1), 0);
    int status = harness_wait(pid, 25000);
    text = harness_read_file(log);
    if (!WIFEXITED(status) || !text)
        fail_msg("salloc did not end; it said:\n%s", text ? text : "(nothing)");
    /* both sruns learned it; both records ended (killed there: FAILED) */
    const char *p = strstr(text, "ended without reporting");
    assert_true(p && strstr(p + 1, "ended without reporting"));
    char line[64];
    for (unsigned k = 0; k < 2; k++) {
        snprintf(line, sizeof(line), "%u.0 FAILED\n", job + k);
        if (!strstr(text, line))
            fail_msg("no '%u.0 FAILED' in:\n%s", job + k, text);
    }
    free(text);
    step_records(have, sizeof(have));
    assert_string_equal(have, "");
    assert_int_equal(harness_wait_nodes(&cluster, 1, 15000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_group_on_one_node),
        cmocka_unit_test(test_cancel_one_component_step),
        cmocka_unit_test(test_node_daemon_restarted),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
