/* Durability under a crash: the controller is killed with SIGKILL in the middle of
 * submission bursts from several concurrent clients, started again, and every job that
 * sbatch acknowledged must still be there, with ids that go on after the highest one ever
 * handed out. Several trials, each killing at another point of the burst.
 *
 * The bursts are bounded (a fixed number of submissions per client) and the kill waits for
 * a number of acknowledgements, never for a fixed time.
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

#define CLIENTS 3
#define PER_CLIENT 150 /* submissions a client attempts per trial */
#define TRIALS 4

static struct harness_cluster cluster;

static const char *conf_extra =
    "NodeName=n1 CPUs=4 RealMemory=2000 NodeAddr=127.0.0.1 Port=17201\n"
    "PartitionName=debug Nodes=n1 Default=YES MaxTime=60\n";

static int group_setup(void **state)
{
    if (harness_cluster_init(&cluster, conf_extra))
        return -1;
    return harness_ctld_start(&cluster);
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* One client: sbatch --parsable in a loop, each acknowledged id on a line of its log,
 * until the controller stops answering. Held jobs: nothing runs, the queue only grows. */
static pid_t start_client(const char *log)
{
    char script[256];
    snprintf(script, sizeof(script),
             "i=0; while [ $i -lt %d ]; do sbatch --parsable -H -J burst --wrap=true || exit 0; "
             "i=$((i+1)); done",
             PER_CLIENT);
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
    char *env[] = {cluster.conf_env, cluster.path_env, NULL};
    return harness_spawn(argv, env, log);
}

/* The ids acknowledged in a client's log (one per line), appended to ids. */
static size_t read_acked(const char *log, unsigned *ids, size_t n, size_t cap)
{
    char *text = harness_read_file(log);
    for (char *p = text; p && *p && n < cap;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end != p && *end == '\n')
            ids[n++] = (unsigned)v;
        char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    free(text);
    return n;
}

static size_t acked_so_far(char logs[CLIENTS][400], unsigned *ids, size_t cap)
{
    size_t n = 0;
    for (int k = 0; k < CLIENTS; k++)
        n = read_acked(logs[k], ids, n, cap);
    return n;
}

/* Every job id the controller knows, as a sorted-free membership bitmap over [0, max]. */
static unsigned char *known_jobs(unsigned max)
{
    char *out = NULL, *err = NULL;
    int rc = harness_cmd(&cluster, "squeue", (const char *const[]){"-h", "-t", "all", "-o", "%i",
                                                                    NULL},
                         &out, &err);
    if (rc != 0)
        fail_msg("squeue failed (%d): %s", rc, err ? err : "");
    unsigned char *seen = calloc(max + 1, 1);
    assert_non_null(seen);
    for (char *p = out; p && *p;) {
        unsigned long v = strtoul(p, &p, 10);
        if (v <= max)
            seen[v] = 1;
        while (*p == '\n')
            p++;
    }
    free(out);
    free(err);
    return seen;
}

static void one_trial(int trial, unsigned *highest)
{
    char logs[CLIENTS][400];
    pid_t pids[CLIENTS];
    for (int k = 0; k < CLIENTS; k++) {
        snprintf(logs[k], sizeof(logs[k]), "%s/burst-%d-%d.log", cluster.dir, trial, k);
        pids[k] = start_client(logs[k]);
        assert_true(pids[k] > 0);
    }
    /* kill at another point of each burst: after 20, 60, 100, ... acknowledgements */
    size_t kill_after = 20 + 40 * (size_t)trial;
    size_t cap = CLIENTS * PER_CLIENT;
    unsigned *ids = calloc(cap, sizeof(*ids));
    assert_non_null(ids);
    for (int waited = 0; acked_so_far(logs, ids, cap) < kill_after; waited += 10) {
        if (waited > 60000)
            fail_msg("trial %d: only %zu submissions acknowledged in 60 s", trial,
                     acked_so_far(logs, ids, cap));
        usleep(10000);
    }
    harness_ctld_stop(&cluster, SIGKILL);
    for (int k = 0; k < CLIENTS; k++)
        harness_wait(pids[k], 30000);
    size_t n = acked_so_far(logs, ids, cap);
    assert_true(n >= kill_after);

    assert_int_equal(harness_ctld_start(&cluster), 0);
    unsigned max = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] > max)
            max = ids[i];
    unsigned char *seen = known_jobs(max);
    for (size_t i = 0; i < n; i++)
        if (!seen[ids[i]])
            fail_msg("trial %d: job %u was acknowledged but is gone after the crash", trial,
                     ids[i]);
    free(seen);
    /* ids never go back: the next job comes after every one acknowledged, in any trial */
    assert_true(max > *highest);
    *highest = max;
    char *out = NULL;
    int rc = harness_cmd(&cluster, "sbatch", (const char *const[]){"--parsable", "-H",
                                                                    "--wrap=true", NULL},
                         &out, NULL);
    assert_int_equal(rc, 0);
    assert_true(strtoul(out, NULL, 10) > max);
    *highest = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(ids);
}

static void test_kill9_during_bursts(void **state)
{
    unsigned highest = 0;
    for (int trial = 0; trial < TRIALS; trial++)
        one_trial(trial, &highest);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_during_bursts),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
