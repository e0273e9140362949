/* Backfill on a live cluster: a controller with sched/backfill (one-second cycles and
 * resolution), four node daemons of 4 CPUs, MUNGE, and the real commands. A short job
 * starts in the gap before a blocked wide job, which still starts at its reserved time;
 * a longer one waits; squeue --start, scontrol's StartTime and sbatch --test-only show
 * the plan; a het job whose nodes free up at different times starts all at once.
 */
#include "cluster.h"

#include <setjmp.h>
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

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n"
                              "SchedulerType=sched/backfill\n"
                              /* a yield after every unit: the cycles go on across loop turns */
                              "SchedulerParameters=bf_interval=1,bf_resolution=1,bf_min_gap=200,"
                              "bf_yield_interval=1\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* A time squeue printed (local, ISO 8601), or 0 for N/A. */
static time_t parse_time(const char *text)
{
    struct tm tm = {0};
    if (!text || !strptime(text, "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    tm.tm_isdst = -1;
    return mktime(&tm);
}

static time_t time_of(unsigned id, const char *format)
{
    char *s = query(id, format);
    time_t t = parse_time(s);
    free(s);
    return t;
}

static char *stamp(time_t t, char *buf, size_t len)
{
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

/* Waits until the job's expected start is known and returns it. */
static time_t wait_planned(unsigned id, int seconds)
{
    for (int i = 0; i < seconds * 10; i++) {
        time_t t = time_of(id, "%S");
        if (t)
            return t;
        usleep(100000);
    }
    fail_msg("job %u got no expected start", id);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

static void test_backfill_around_wide_job(void **state)
{
    (void)state;
    /* A holds three nodes until its limit (12 s); the wide job W needs all four */
    unsigned a = SUBMIT("-N3", "--exclusive", "-t", "0:12", "--wrap=sleep 60");
    wait_for(a, "%T", "RUNNING\n", 20);
    time_t a_start = time_of(a, "%S");
    assert_true(a_start > 0);
    unsigned w = SUBMIT("-N4", "--exclusive", "-t", "0:10", "--wrap=sleep 2");
    time_t reserved = wait_planned(w, 10);
    assert_true(reserved >= a_start + 12 && reserved <= a_start + 13);
    char *reason = query(w, "%T %r");
    assert_string_equal(reason, "PENDING Resources\n");
    free(reason);
    char want[32];
    assert_string_equal(show_field(w, "StartTime"), stamp(reserved, want, sizeof(want)));
    assert_string_equal(show_field(w, "SchedNodeList"), "n[1-4]");
    char *sched_nodes = query(w, "%Y");
    assert_string_equal(sched_nodes, "n[1-4]\n");
    free(sched_nodes);

    /* S fits the free node before W's reservation: it starts ahead of W */
    unsigned s = SUBMIT("-N1", "-t", "0:05", "--wrap=sleep 2");
    wait_for(s, "%T", "RUNNING\n", 10);
    /* L would delay W: it waits behind it, with an expected start after W's end */
    unsigned l = SUBMIT("-N1", "-t", "1:00", "--wrap=sleep 1");
    time_t l_planned = wait_planned(l, 10);
    assert_true(l_planned >= reserved + 10);
    char *st = query(l, "%T %r");
    assert_string_equal(st, "PENDING Priority\n");
    free(st);

    /* squeue --start lists the pending jobs by expected start */
    struct result r = cmdcheck_run(&cluster, "squeue", (const char *const[]){"--start", "-h",
                                                                              "-o", "%i %S",
                                                                              NULL});
    expect_ok(&r);
    char line[64];
    snprintf(line, sizeof(line), "%u %s", w, stamp(reserved, want, sizeof(want)));
    assert_true(has_line(r.out, line));
    assert_true(strstr(r.out, line) < strstr(r.out, "\n") + 1); /* W first */
    result_free(&r);

    /* sbatch --test-only: a four-node job would start after W */
    r = cmdcheck_run(&cluster, "sbatch", (const char *const[]){"--test-only", "-N4", "-t",
                                                                "0:05", "--wrap=true", NULL});
    expect_ok(&r);
    char text[160];
    snprintf(text, sizeof(text), " to start at %s using 4 processors on nodes n[1-4] in "
                                 "partition debug",
             stamp(reserved + 10, want, sizeof(want)));
    if (!strstr(r.err, text))
        fail_msg("sbatch --test-only printed '%s', wanted '...%s'", r.err, text);
    result_free(&r);

    /* W starts when A's limit frees its nodes: at the reserved time, not later */
    wait_for(w, "%T", "RUNNING\n", 20);
    time_t w_start = time_of(w, "%S");
    assert_true(w_start >= reserved - 1 && w_start <= reserved + 3);
    char *s_state = query(s, "%T");
    assert_string_equal(s_state, "COMPLETED\n");
    free(s_state);
    wait_for(l, "%T", "COMPLETED\n", 30);
    assert_true(time_of(l, "%S") >= w_start);
    /* those cycles gave the loop a turn between units, and still planned as above */
    r = cmdcheck_run(&cluster, "scontrol", (const char *const[]){"show", "sched", NULL});
    expect_ok(&r);
    const char *y = strstr(r.out, "Total yields: ");
    assert_non_null(y);
    assert_true(strtoul(y + strlen("Total yields: "), NULL, 10) > 0);
    result_free(&r);
}

/* A het job pinned to n1 and n2, which free up 4 s apart: never partly running, and
 * both components start together once both nodes are free. */
static void test_het_starts_all_at_once(void **state)
{
    (void)state;
    unsigned x = SUBMIT("-w", "n1", "--exclusive", "-t", "0:08", "--wrap=sleep 3");
    unsigned y = SUBMIT("-w", "n2", "--exclusive", "-t", "0:10", "--wrap=sleep 7");
    wait_for(x, "%T", "RUNNING\n", 10);
    wait_for(y, "%T", "RUNNING\n", 10);
    time_t y_start = time_of(y, "%S");
    unsigned h = SUBMIT("-w", "n1", "--exclusive", "-t", "0:05", ":", "-w", "n2",
                        "--exclusive", "-t", "0:05", "--wrap=sleep 2");
    time_t planned = wait_planned(h, 10);
    assert_true(planned >= y_start + 10 - 1 && planned <= y_start + 10 + 1);
    /* one squeue answer shows both components as of one moment */
    for (int i = 0; i < 300; i++) {
        char *st = query(h, "%t");
        int running = !strcmp(st, "R\nR\n"), pending = !strcmp(st, "PD\nPD\n");
        if (!running && !pending)
            fail_msg("het job %u partly running: %s", h, st);
        free(st);
        if (running)
            break;
        usleep(50000);
    }
    char *starts = query(h, "%S");
    char *nl = strchr(starts, '\n');
    assert_non_null(nl);
    assert_true(!strncmp(starts, nl + 1, (size_t)(nl - starts))); /* the same time twice */
    time_t h_start = parse_time(starts);
    free(starts);
    assert_true(h_start >= y_start + 6); /* not before y's node came free */
    wait_for(h, "%T", "COMPLETED\nCOMPLETED\n", 20);
    wait_for(x, "%T", "COMPLETED\n", 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backfill_around_wide_job),
        cmocka_unit_test(test_het_starts_all_at_once),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
