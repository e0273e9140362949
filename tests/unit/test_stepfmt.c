/* Unit tests for common/stepfmt: squeue -s formats, their default order, and scontrol
 * show step.
 *
 * Steps 543.0 and 544.0 copy the steps of a real Slurm 22.05 ("srun sleep" on n1 and on
 * n[2-3]), and the expected texts are Slurm's output for them, except where a comment
 * says Tessera differs on purpose. Times are UTC; "now" is fixed one second after both
 * steps started, at 17:12:56. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/jobfmt.h"
#include "common/format/stepfmt.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T_START ((int64_t)1795367575) /* 2026-11-22T17:12:55Z */
#define NOW ((time_t)(T_START + 1))
#define T_DONE ((int64_t)1795367400) /* 17:10:00 */
#define UNKNOWN_UID 4242424u         /* no such user */

static struct jobfmt_ctx *ctx;

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    ctx = jobfmt_ctx_create(NOW);
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    jobfmt_ctx_destroy(ctx);
    return 0;
}

/* ---- records ------------------------------------------------------------------------ */

/* "srun -J name" by root in debug, running since T_START. */
static Tessera__StepRecord *step(Tessera__StepRecord *s, uint32_t job, uint32_t id,
                                 const char *name, const char *nodes, uint32_t nnodes)
{
    Tessera__StepRecord init = TESSERA__STEP_RECORD__INIT;

    *s = init;
    s->job_id = job;
    s->step_id = id;
    s->name = (char *)name;
    s->state = TESSERA__JOB_STATE__JOB_RUNNING;
    s->start_time = T_START;
    s->nodes = s->step_nodes = (char *)nodes;
    s->nnodes = s->ntasks = s->cpus = nnodes;
    s->partition = (char *)"debug";
    return s;
}

/* The reference cluster's steps: 543.0 on n1, 544.0 on n[2-3]. */
static Tessera__StepRecord *ref543(Tessera__StepRecord *s)
{
    return step(s, 543, 0, "sleep", "n1", 1);
}

static Tessera__StepRecord *ref544(Tessera__StepRecord *s)
{
    return step(s, 544, 0, "sleep", "n[2-3]", 2);
}

/* A step that ran 5 s from 17:10:00 and ended in state with wait status. */
static Tessera__StepRecord *ended(Tessera__StepRecord *s, uint32_t job, uint32_t id,
                                  Tessera__JobState state, int32_t status)
{
    step(s, job, id, "true", "n4", 1);
    s->state = state;
    s->start_time = T_DONE;
    s->end_time = T_DONE + 5;
    s->exit_code = status;
    return s;
}

/* ---- helpers ------------------------------------------------------------------------ */

static struct stepfmt *compile(const char *format)
{
    struct stepfmt *fmt = NULL;
    char err[256] = "";

    if (stepfmt_compile(format, &fmt, err, sizeof(err)) != TS_OK)
        fail_msg("stepfmt_compile(\"%s\"): %s", format, err);
    return fmt;
}

static void check_header(const struct stepfmt *fmt, const char *expected)
{
    char *got = stepfmt_header(fmt);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

static void check_row(const struct stepfmt *fmt, const Tessera__StepRecord *s,
                      const char *expected)
{
    char *got = stepfmt_row(fmt, s, ctx);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

/* One format: its header and its row for a step. */
static void check_o(const char *format, const Tessera__StepRecord *s, const char *header,
                    const char *row)
{
    struct stepfmt *fmt = compile(format);

    check_header(fmt, header);
    check_row(fmt, s, row);
    stepfmt_free(fmt);
}

static void check_bad(const char *format, const char *message)
{
    struct stepfmt *fmt = (struct stepfmt *)&fmt; /* must be reset to NULL */
    char err[256] = "";

    assert_int_equal(stepfmt_compile(format, &fmt, err, sizeof(err)), TS_EOPTVALUE);
    assert_null(fmt);
    assert_string_equal(err, message);
}

static void check_show(const Tessera__StepRecord *s, int oneliner, const char *expected)
{
    char *got = stepfmt_show(s, ctx, oneliner);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

/* ---- squeue -s ---------------------------------------------------------------------- */

/* "squeue -s" on the reference cluster, exactly. */
static void test_default_format(void **state)
{
    Tessera__StepRecord a, b;
    struct stepfmt *fmt = compile(STEPFMT_SQUEUE_DEFAULT);

    (void)state;
    assert_string_equal(STEPFMT_SQUEUE_DEFAULT, "%.15i %.8j %.9P %.8u %.9M %N");
    check_header(fmt, "         STEPID     NAME PARTITION     USER      TIME NODELIST\n");
    check_row(fmt, ref543(&a), "          543.0    sleep     debug     root      0:01 n1\n");
    check_row(fmt, ref544(&b), "          544.0    sleep     debug     root      0:01 n[2-3]\n");
    stepfmt_free(fmt);
}

/* squeue -s -o "%i %j %N %P %u %M %l %A" on the reference cluster, exactly. */
static void test_custom_format(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    check_o("%i %j %N %P %u %M %l %A", ref543(&a),
            "STEPID NAME NODELIST PARTITION USER TIME TIME_LIMIT TASKS\n",
            "543.0 sleep n1 debug root 0:01 UNLIMITED 1\n");
}

/* Every letter, the Tessera-only %T included. */
static void test_all_letters(void **state)
{
    Tessera__StepRecord a, b;

    (void)state;
    check_o("%i|%j|%P|%u|%U|%M|%l|%A|%N|%b|%S|%T", ref544(&a),
            "STEPID|NAME|PARTITION|USER|UID|TIME|TIME_LIMIT|TASKS|NODELIST|TRES_PER_JOB|"
            "START_TIME|STATE\n",
            "544.0|sleep|debug|root|0|0:01|UNLIMITED|2|n[2-3]|(null)|2026-11-22T17:12:55|"
            "RUNNING\n");
    ended(&b, 541, 3, TESSERA__JOB_STATE__JOB_FAILED, 2 << 8);
    b.user_id = UNKNOWN_UID;
    check_o("%i %u %U %T %S", &b, "STEPID USER UID STATE START_TIME\n",
            "541.3 4242424 4242424 FAILED 2026-11-22T17:10:00\n");
    /* unset texts print as Slurm prints them: "(null)", no nodes, no start "N/A" */
    step(&b, 7, 1, NULL, NULL, 0);
    b.partition = (char *)"";
    b.start_time = 0;
    check_o("[%j][%P][%N][%S][%M]", &b, "[NAME][PARTITION][NODELIST][START_TIME][TIME]\n",
            "[(null)][(null)][][N/A][0:00]\n");
}

/* Slurm's cells: "." pads on the left, a long value is cut to the width on either side,
 * width 0 is the value's own. */
static void test_width_justify_cut(void **state)
{
    const char *format = "[%.3P][%3P][%.10j][%10j][%4i][%.4i][%0j][%.0j][%.9N]";
    Tessera__StepRecord a;

    (void)state;
    check_o(format, ref544(&a),
            "[PAR][PAR][      NAME][NAME      ][STEP][STEP][NAME][NAME][ NODELIST]\n",
            "[deb][deb][     sleep][sleep     ][544.][544.][sleep][sleep][   n[2-3]]\n");
    /* a twelve-digit step id under the default %.15i */
    step(&a, 4000000000u, 4000000000u, "a-very-long-name", "n1", 1);
    check_o(STEPFMT_SQUEUE_DEFAULT, &a,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n",
            "4000000000.4000 a-very-l     debug     root      0:01 n1\n");
}

/* Slurm prints the START_TIME header left-justified even under "."; its values follow the
 * format. */
static void test_start_time_header(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    check_o("[%.20S][%20S][%.5S]", ref543(&a),
            "[START_TIME          ][START_TIME          ][START]\n",
            "[ 2026-11-22T17:12:55][2026-11-22T17:12:55 ][2026-]\n");
    /* other headers keep the side the format gives them */
    check_o("[%.10T]", &a, "[     STATE]\n", "[   RUNNING]\n");
}

static void test_percent_and_literals(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    ref543(&a);
    check_o("%%%i%%", &a, "%STEPID%\n", "%543.0%\n");
    check_o("100%% %.5A%%", &a, "100% TASKS%\n", "100%     1%\n");
    check_o("lit only", &a, "lit only\n", "lit only\n");
    check_o("", &a, "\n", "\n");
    check_o(NULL, &a, "\n", "\n");
}

static void test_bad_formats(void **state)
{
    struct stepfmt *fmt = NULL;

    (void)state;
    check_bad("%i %Q end", "Invalid job step format specification: Q");
    /* job letters that steps do not have */
    check_bad("%.18i %t", "Invalid job step format specification: t");
    check_bad("%R", "Invalid job step format specification: R");
    check_bad("%.5", "Invalid job step format specification: ");
    check_bad("%i %", "Invalid job step format specification: ");
    check_bad("%999999i", "Invalid job step format specification: 999999i");
    /* no room for a message is no reason to crash */
    assert_int_equal(stepfmt_compile("%Q", &fmt, NULL, 0), TS_EOPTVALUE);
    assert_null(fmt);
}

/* Running steps count to now; ended ones stop at end_time whatever the clock says. */
static void test_time_used(void **state)
{
    Tessera__StepRecord a;
    struct stepfmt *fmt = compile("%M|%.10M");
    struct jobfmt_ctx *later = jobfmt_ctx_create(NOW + 86400);
    char *got;

    (void)state;
    assert_non_null(later);
    ref543(&a);
    a.start_time = NOW - (86400 + 2 * 3600 + 3 * 60 + 4);
    check_row(fmt, &a, "1-02:03:04|1-02:03:04\n");
    a.start_time = NOW - 3600;
    check_row(fmt, &a, "1:00:00|   1:00:00\n");
    a.start_time = NOW + 30; /* clocks disagree: never a negative time */
    check_row(fmt, &a, "0:00|      0:00\n");
    a.start_time = 0; /* not started */
    check_row(fmt, &a, "0:00|      0:00\n");

    ended(&a, 540, 0, TESSERA__JOB_STATE__JOB_COMPLETED, 0);
    check_row(fmt, &a, "0:05|      0:05\n");
    got = stepfmt_row(fmt, &a, later); /* a day later: still 5 s */
    assert_non_null(got);
    assert_string_equal(got, "0:05|      0:05\n");
    free(got);
    /* ended without an end time recorded: up to now */
    a.end_time = 0;
    check_row(fmt, &a, "2:56|      2:56\n");
    /* a running step's end_time is not an end */
    ref543(&a);
    a.end_time = T_START - 1;
    check_row(fmt, &a, "0:01|      0:01\n");

    jobfmt_ctx_destroy(later);
    stepfmt_free(fmt);
}

/* A step over het job 545's two components: one line each, under each component's own
 * id, as Slurm prints them. */
static void test_het_components(void **state)
{
    Tessera__StepRecord c0, c1;
    struct stepfmt *fmt = compile(STEPFMT_SQUEUE_DEFAULT);

    (void)state;
    step(&c0, 545, 0, "sleep", "n1", 1);
    step(&c1, 546, 0, "sleep", "n[2-3]", 2);
    c0.het_job_id = c1.het_job_id = 545;
    c1.het_job_offset = 1;
    c0.step_nodes = c1.step_nodes = (char *)"n[1-3]";
    check_row(fmt, &c0, "          545.0    sleep     debug     root      0:01 n1\n");
    check_row(fmt, &c1, "          546.0    sleep     debug     root      0:01 n[2-3]\n");
    check_show(&c1, 1,
               "StepId=546.0 UserId=0 StartTime=2026-11-22T17:12:55 TimeLimit=UNLIMITED "
               "State=RUNNING Partition=debug NodeList=n[2-3] Nodes=2 CPUs=2 Tasks=2 "
               "Name=sleep TRES=cpu=2,node=2\n");
    stepfmt_free(fmt);
}

/* squeue -s's order: partition, then job id, then step id (Slurm's default "P,i"). */
static void test_sort(void **state)
{
    Tessera__StepRecord r[6];
    Tessera__StepRecord *v[] = {
        step(&r[0], 544, 2, "x", "n1", 1), step(&r[1], 543, 10, "x", "n1", 1),
        step(&r[2], 9, 0, "x", "n1", 1),   step(&r[3], 543, 2, "x", "n1", 1),
        step(&r[4], 544, 0, "x", "n1", 1), step(&r[5], 100, 1, "x", "n1", 1),
    };
    static const char *const expected[] = {"100.1", "543.2", "543.10",
                                           "544.0", "544.2", "9.0"};
    char id[32];

    (void)state;
    r[2].partition = (char *)"long"; /* after "debug" though its id is lowest */
    r[5].partition = (char *)"batch";
    stepfmt_sort(v, 6);
    for (size_t i = 0; i < 6; i++) {
        snprintf(id, sizeof(id), "%u.%u", v[i]->job_id, v[i]->step_id);
        assert_string_equal(id, expected[i]);
    }
    /* nothing to sort is no error */
    stepfmt_sort(NULL, 0);
    stepfmt_sort(v, 1);
    assert_int_equal(v[0]->job_id, 100);
}

/* ---- scontrol show step --------------------------------------------------------------- */

/* The reference's "scontrol show step 543.0" as Tessera prints it: Slurm's lines for what
 * a step record holds. Slurm also shows mem=2000M in TRES, then Network=(null),
 * ResvPorts, CPUFreqReq, Dist and SrunHost:Pid, which Tessera has no notion of. */
static void test_show_running(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    check_show(ref543(&a), 0,
               "StepId=543.0 UserId=0 StartTime=2026-11-22T17:12:55 TimeLimit=UNLIMITED\n"
               "   State=RUNNING Partition=debug NodeList=n1\n"
               "   Nodes=1 CPUs=1 Tasks=1 Name=sleep\n"
               "   TRES=cpu=1,node=1\n"
               "\n");
    /* a step asked to end (scancel) still runs until it has */
    a.cancelled = 1;
    a.end_time = NOW;
    check_show(&a, 0,
               "StepId=543.0 UserId=0 StartTime=2026-11-22T17:12:55 TimeLimit=UNLIMITED\n"
               "   State=RUNNING Partition=debug NodeList=n1\n"
               "   Nodes=1 CPUs=1 Tasks=1 Name=sleep\n"
               "   TRES=cpu=1,node=1\n"
               "\n");
}

/* Ended steps (Tessera only): one more line with the end time and "exit:signal". */
static void test_show_ended(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    ended(&a, 540, 0, TESSERA__JOB_STATE__JOB_COMPLETED, 0);
    a.ntasks = 4;
    a.cpus = 4;
    a.user_id = UNKNOWN_UID;
    check_show(&a, 0,
               "StepId=540.0 UserId=4242424 StartTime=2026-11-22T17:10:00 TimeLimit=UNLIMITED\n"
               "   State=COMPLETED Partition=debug NodeList=n4\n"
               "   Nodes=1 CPUs=4 Tasks=4 Name=true\n"
               "   TRES=cpu=4,node=1\n"
               "   EndTime=2026-11-22T17:10:05 ExitCode=0:0\n"
               "\n");
    ended(&a, 541, 3, TESSERA__JOB_STATE__JOB_FAILED, 2 << 8);
    check_show(&a, 0,
               "StepId=541.3 UserId=0 StartTime=2026-11-22T17:10:00 TimeLimit=UNLIMITED\n"
               "   State=FAILED Partition=debug NodeList=n4\n"
               "   Nodes=1 CPUs=1 Tasks=1 Name=true\n"
               "   TRES=cpu=1,node=1\n"
               "   EndTime=2026-11-22T17:10:05 ExitCode=2:0\n"
               "\n");
    /* killed by SIGKILL: the signal after the colon */
    ended(&a, 542, 0, TESSERA__JOB_STATE__JOB_CANCELLED, 9);
    a.end_time = 0;
    check_show(&a, 0,
               "StepId=542.0 UserId=0 StartTime=2026-11-22T17:10:00 TimeLimit=UNLIMITED\n"
               "   State=CANCELLED Partition=debug NodeList=n4\n"
               "   Nodes=1 CPUs=1 Tasks=1 Name=true\n"
               "   TRES=cpu=1,node=1\n"
               "   EndTime=Unknown ExitCode=0:9\n"
               "\n");
}

/* scontrol -o: the same items on one line, no blank line after. */
static void test_show_oneliner(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    check_show(ref543(&a), 1,
               "StepId=543.0 UserId=0 StartTime=2026-11-22T17:12:55 TimeLimit=UNLIMITED "
               "State=RUNNING Partition=debug NodeList=n1 Nodes=1 CPUs=1 Tasks=1 Name=sleep "
               "TRES=cpu=1,node=1\n");
    ended(&a, 541, 3, TESSERA__JOB_STATE__JOB_FAILED, 2 << 8);
    check_show(&a, 1,
               "StepId=541.3 UserId=0 StartTime=2026-11-22T17:10:00 TimeLimit=UNLIMITED "
               "State=FAILED Partition=debug NodeList=n4 Nodes=1 CPUs=1 Tasks=1 Name=true "
               "TRES=cpu=1,node=1 EndTime=2026-11-22T17:10:05 ExitCode=2:0\n");
}

/* Unset texts in show: "(null)", and "Unknown" for a start not recorded. */
static void test_show_unset(void **state)
{
    Tessera__StepRecord a;

    (void)state;
    step(&a, 7, 1, NULL, NULL, 0);
    a.partition = NULL;
    a.start_time = 0;
    check_show(&a, 0,
               "StepId=7.1 UserId=0 StartTime=Unknown TimeLimit=UNLIMITED\n"
               "   State=RUNNING Partition=(null) NodeList=(null)\n"
               "   Nodes=0 CPUs=0 Tasks=0 Name=(null)\n"
               "   TRES=cpu=0,node=0\n"
               "\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_format),
        cmocka_unit_test(test_custom_format),
        cmocka_unit_test(test_all_letters),
        cmocka_unit_test(test_width_justify_cut),
        cmocka_unit_test(test_start_time_header),
        cmocka_unit_test(test_percent_and_literals),
        cmocka_unit_test(test_bad_formats),
        cmocka_unit_test(test_time_used),
        cmocka_unit_test(test_het_components),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_show_running),
        cmocka_unit_test(test_show_ended),
        cmocka_unit_test(test_show_oneliner),
        cmocka_unit_test(test_show_unset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
