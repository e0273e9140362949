/* Unit tests for common/jobfmt: squeue's -o and -O output, its default order, squeue
 * --json, scontrol show job and show partition.
 *
 * The records copy jobs observed on a real Slurm 22.05 (same ids, names, times and
 * requests), and the expected texts are Slurm's output for them, except where a comment
 * says Tessera differs on purpose. Times are UTC, "now" is fixed at 15:36:23. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/jobfmt.h"
#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/util/errors.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW ((time_t)1795361783)     /* 2026-11-22T15:36:23Z */
#define T_HET ((int64_t)1795361295)  /* 15:28:15 */
#define T_SUB ((int64_t)1795361659)  /* 15:34:19 */
#define T_HELD ((int64_t)1795361664) /* 15:34:24 */
#define T_RUN ((int64_t)1795361665)  /* 15:34:25 */
#define T_SUSP ((int64_t)1795361695) /* 15:34:55 */
#define T_PLAN ((int64_t)1795365265) /* 16:34:25, a pending job's expected start */
#define UNKNOWN_UID 4242424u         /* no such user or group */

/* A record and the description it points to. */
struct fx {
    Tessera__JobDesc desc;
    Tessera__JobRecord job;
};

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

static void base(struct fx *f, uint32_t id, const char *name, const char *work_dir)
{
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    Tessera__JobRecord j = TESSERA__JOB_RECORD__INIT;

    f->desc = d;
    f->job = j;
    f->desc.name = (char *)name;
    f->desc.partition = (char *)"debug";
    f->desc.work_dir = (char *)work_dir;
    f->desc.script = (char *)"#!/bin/sh\ntrue\n";
    f->desc.submit_host = (char *)"localhost";
    f->desc.has_user_id = f->desc.has_group_id = 1;
    f->job.desc = &f->desc;
    f->job.job_id = id;
    f->job.het_size = 1;
    f->job.time_limit = 3600;
    f->job.min_nodes = f->job.ntasks = f->job.cpus_per_task = f->job.min_cpus = 1;
    f->job.submit_time = T_SUB;
}

/* sbatch --hold -J jf_plain -A acct1 --comment="hello world" --nice=5 -t 30 --mem=100
 *   -w n2 -x n3 -o 'out-%j-%u-%x-%A-%a-%N-%%.txt' -e 'err-%j.log' -D /tmp/jfx */
static Tessera__JobRecord *held_plain(struct fx *f)
{
    base(f, 69, "jf_plain", "/tmp/jfx");
    f->desc.account = (char *)"acct1";
    f->desc.comment = (char *)"hello world";
    f->desc.has_nice = 1;
    f->desc.nice = 5;
    f->desc.has_mem_per_node_mb = 1;
    f->desc.mem_per_node_mb = 100;
    f->desc.nodelist = (char *)"n2";
    f->desc.exclude = (char *)"n3";
    f->desc.std_out = (char *)"out-%j-%u-%x-%A-%a-%N-%%.txt";
    f->desc.std_err = (char *)"err-%j.log";
    f->job.state = TESSERA__JOB_STATE__JOB_PENDING;
    f->job.reason = JOB_REASON_HELD_USER;
    f->job.hold = 1;
    f->job.time_limit = 1800;
    f->job.submit_time = f->job.last_sched_eval = T_HELD;
    return &f->job;
}

/* sbatch --hold -n2 : -n1 -c2 (components 1 and 2 of het job 1) */
static Tessera__JobRecord *het(struct fx *f, uint32_t offset)
{
    base(f, 1 + offset, "hj", "/tmp");
    f->job.het_job_id = 1;
    f->job.het_job_offset = offset;
    f->job.het_size = 2;
    f->job.state = TESSERA__JOB_STATE__JOB_PENDING;
    f->job.reason = JOB_REASON_HELD_USER;
    f->job.hold = 1;
    f->job.submit_time = f->job.last_sched_eval = T_HET;
    if (offset == 0) {
        f->job.ntasks = f->job.min_cpus = 2;
    } else {
        f->job.min_nodes = f->job.cpus_per_task = f->job.min_cpus = 2;
        f->desc.has_cpus_per_task = 1;
        f->desc.cpus_per_task = 2;
    }
    return &f->job;
}

/* sbatch -J jf_run -n3 --wrap="sleep 300", started at 15:34:25 on n2 */
static Tessera__JobRecord *running(struct fx *f)
{
    base(f, 63, "jf_run", "/tmp/jfx");
    f->job.state = TESSERA__JOB_STATE__JOB_RUNNING;
    f->job.priority = 4294901717u;
    f->job.eligible_time = T_SUB;
    f->job.start_time = f->job.last_sched_eval = T_RUN;
    f->job.end_time = T_RUN + 3600;
    f->job.nodes = (char *)"n2";
    f->job.alloc_nodes = 1;
    f->job.alloc_cpus = f->job.ntasks = f->job.min_cpus = 3;
    f->job.alloc_mem_mb = 2000;
    return &f->job;
}

/* sbatch -J jf_susp -N2, started 15:34:55, suspended 39 s later */
static Tessera__JobRecord *suspended(struct fx *f)
{
    base(f, 65, "jf_susp", "/tmp/jfx");
    f->job.state = TESSERA__JOB_STATE__JOB_SUSPENDED;
    f->job.eligible_time = T_SUB;
    f->job.start_time = f->job.last_sched_eval = T_SUSP;
    f->job.end_time = T_SUSP + 3600;
    f->job.suspend_time = T_SUSP + 39;
    f->job.pre_suspend_secs = 39;
    f->job.nodes = (char *)"n[3-4]";
    f->job.alloc_nodes = f->job.alloc_cpus = f->job.ntasks = 2;
    f->job.min_nodes = f->job.min_cpus = 2;
    f->job.alloc_mem_mb = 4000;
    return &f->job;
}

/* sbatch -J jf_done --wrap=true: ran on n3 and ended within the second */
static Tessera__JobRecord *completed(struct fx *f)
{
    base(f, 64, "jf_done", "/tmp/jfx");
    f->job.state = TESSERA__JOB_STATE__JOB_COMPLETED;
    f->job.priority = 4294901716u;
    f->job.eligible_time = T_SUB;
    f->job.start_time = f->job.end_time = f->job.last_sched_eval = T_RUN;
    f->job.nodes = (char *)"n3";
    f->job.alloc_nodes = f->job.alloc_cpus = 1;
    f->job.alloc_mem_mb = 2000;
    return &f->job;
}

/* sbatch -J jf_script -d afterok:3 -t UNLIMITED myscript.sh */
static Tessera__JobRecord *unlimited(struct fx *f)
{
    base(f, 68, "jf_script", "/tmp/jfx");
    f->desc.dependency = (char *)"afterok:3";
    f->job.state = TESSERA__JOB_STATE__JOB_PENDING;
    f->job.reason = JOB_REASON_DEPENDENCY;
    f->job.priority = 4294901712u;
    f->job.time_limit = -1;
    return &f->job;
}

/* sbatch -J jf_wait -N1 -t 30 --wrap=..., waiting for job 63's node: the scheduler's plan
 * starts it when 63's limit is up (16:34:25). Slurm's job 560 on the reference cluster
 * was the same case, its times shifted. */
static Tessera__JobRecord *planned(struct fx *f)
{
    base(f, 70, "jf_wait", "/tmp/jfx");
    f->job.state = TESSERA__JOB_STATE__JOB_PENDING;
    f->job.reason = JOB_REASON_RESOURCES;
    f->job.priority = 4294901710u;
    f->job.eligible_time = T_SUB;
    f->job.last_sched_eval = T_RUN;
    f->job.time_limit = 1800;
    f->job.expected_start = T_PLAN;
    return &f->job;
}

/* ---- helpers ----------------------------------------------------------------------- */

static struct jobfmt *compile(const char *format)
{
    struct jobfmt *fmt = NULL;
    char err[256] = "";
    int rc = jobfmt_compile(format, &fmt, err, sizeof(err));

    if (rc != TS_OK)
        fail_msg("jobfmt_compile(\"%s\"): %s", format, err);
    return fmt;
}

static struct jobfmt *compile_fields(const char *list)
{
    struct jobfmt *fmt = NULL;
    char err[256] = "";
    int rc = jobfmt_compile_fields(list, &fmt, err, sizeof(err));

    if (rc != TS_OK)
        fail_msg("jobfmt_compile_fields(\"%s\"): %s", list, err);
    return fmt;
}

static void check_header(const struct jobfmt *fmt, const char *expected)
{
    char *got = jobfmt_header(fmt);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

static void check_row(const struct jobfmt *fmt, const Tessera__JobRecord *job,
                      const char *expected)
{
    char *got = jobfmt_row(fmt, job, ctx);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

/* One -o format: its header and its row for a job. */
static void check_o(const char *format, const Tessera__JobRecord *job, const char *header,
                    const char *row)
{
    struct jobfmt *fmt = compile(format);

    check_header(fmt, header);
    check_row(fmt, job, row);
    jobfmt_free(fmt);
}

static void check_bad(int fields, const char *spec, const char *message)
{
    struct jobfmt *fmt = (struct jobfmt *)&fmt; /* must be reset to NULL */
    char err[256] = "";
    int rc = fields ? jobfmt_compile_fields(spec, &fmt, err, sizeof(err))
                    : jobfmt_compile(spec, &fmt, err, sizeof(err));

    assert_int_equal(rc, TS_EOPTVALUE);
    assert_null(fmt);
    assert_string_equal(err, message);
}

/* ---- squeue -o --------------------------------------------------------------------- */

static void test_default_format(void **state)
{
    struct fx a, b, c, d, e, g, h;
    Tessera__JobRecord *jobs[] = {running(&a), het(&b, 0), suspended(&c), held_plain(&d),
                                  het(&e, 1),  unlimited(&g), completed(&h)};
    static const char *const expected[] = {
        "                64     debug  jf_done     root CD       0:00      1 n3\n",
        "                68     debug jf_scrip     root PD       0:00      1 (Dependency)\n",
        "               1+0     debug       hj     root PD       0:00      1 (JobHeldUser)\n",
        "               1+1     debug       hj     root PD       0:00      2 (JobHeldUser)\n",
        "                69     debug jf_plain     root PD       0:00      1 (JobHeldUser)\n",
        "                63     debug   jf_run     root  R       1:58      1 n2\n",
        "                65     debug  jf_susp     root  S       0:39      2 n[3-4]\n",
    };
    struct jobfmt *fmt = compile(JOBFMT_SQUEUE_DEFAULT);

    (void)state;
    check_header(fmt, "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
                      "NODELIST(REASON)\n");
    jobfmt_sort_default(jobs, 7);
    for (size_t i = 0; i < 7; i++)
        check_row(fmt, jobs[i], expected[i]);
    jobfmt_free(fmt);
}

#define FIELDS_1 "%i|%A|%P|%j|%u|%U|%g|%G|%a|%t|%T|%M|%l|%L|%D|%C|%R|%r|%N|%Q|%q|%V|%S|%e"
#define HEADER_1                                                                           \
    "JOBID|JOBID|PARTITION|NAME|USER|UID|GROUP|GROUP|ACCOUNT|ST|STATE|TIME|TIME_LIMIT|"    \
    "TIME_LEFT|NODES|CPUS|NODELIST(REASON)|REASON|NODELIST|PRIORITY|QOS|SUBMIT_TIME|"      \
    "START_TIME|END_TIME\n"

static void test_percent_fields_times(void **state)
{
    struct fx f;

    (void)state;
    check_o(FIELDS_1, held_plain(&f), HEADER_1,
            "69|69|debug|jf_plain|root|0|root|0|acct1|PD|PENDING|0:00|30:00|30:00|1|1|"
            "(JobHeldUser)|JobHeldUser||0|(null)|2026-11-22T15:34:24|N/A|N/A\n");
    check_o(FIELDS_1, running(&f), HEADER_1,
            "63|63|debug|jf_run|root|0|root|0|(null)|R|RUNNING|1:58|1:00:00|58:02|1|3|n2|None|"
            "n2|4294901717|(null)|2026-11-22T15:34:19|2026-11-22T15:34:25|"
            "2026-11-22T16:34:25\n");
    check_o(FIELDS_1, suspended(&f), HEADER_1,
            "65|65|debug|jf_susp|root|0|root|0|(null)|S|SUSPENDED|0:39|1:00:00|59:21|2|2|"
            "n[3-4]|None|n[3-4]|0|(null)|2026-11-22T15:34:19|2026-11-22T15:34:55|"
            "2026-11-22T16:34:55\n");
    check_o(FIELDS_1, het(&f, 1), HEADER_1,
            "1+1|2|debug|hj|root|0|root|0|(null)|PD|PENDING|0:00|1:00:00|1:00:00|2|2|"
            "(JobHeldUser)|JobHeldUser||0|(null)|2026-11-22T15:28:15|N/A|N/A\n");
    check_o(FIELDS_1, unlimited(&f), HEADER_1,
            "68|68|debug|jf_script|root|0|root|0|(null)|PD|PENDING|0:00|UNLIMITED|UNLIMITED|1|"
            "1|(Dependency)|Dependency||4294901712|(null)|2026-11-22T15:34:19|N/A|N/A\n");
}

#define FIELDS_2 "%i|%o|%Z|%k|%m|%c|%E|%f|%n|%y|%h|%x|%B|%F|%K|%p|%W|%d|%v|%w|%z|%O|%X|%b"
#define HEADER_2                                                                           \
    "JOBID|COMMAND|WORK_DIR|COMMENT|MIN_MEMORY|MIN_CPUS|DEPENDENCY|FEATURES|REQ_NODES|"    \
    "NICE|OVER_SUBSCRIBE|EXC_NODES|EXEC_HOST|ARRAY_JOB_ID|ARRAY_TASK_ID|PRIORITY|"         \
    "LICENSES|MIN_TMP_DISK|RESERVATION|WCKEY|S:C:T|CONTIGUOUS|CORE_SPEC|TRES_PER_NODE\n"

static void test_percent_fields_requests(void **state)
{
    struct fx f;

    (void)state;
    check_o(FIELDS_2, held_plain(&f), HEADER_2,
            "69|(null)|/tmp/jfx|hello world|100M|1|(null)|(null)|n2|5|OK|n3|n/a|69|N/A|"
            "0.00000000000000|(null)|0|(null)|(null)|*:*:*|0|N/A|N/A\n");
    check_o(FIELDS_2, running(&f), HEADER_2,
            "63|(null)|/tmp/jfx|(null)|0|1|(null)|(null)||0|OK||n2|63|N/A|0.99998473143205|"
            "(null)|0|(null)|(null)|*:*:*|0|N/A|N/A\n");
    check_o(FIELDS_2, het(&f, 1), HEADER_2,
            "1+1|(null)|/tmp|(null)|0|2|(null)|(null)||0|OK||n/a|2|N/A|0.00000000000000|"
            "(null)|0|(null)|(null)|*:*:*|0|N/A|N/A\n");
    check_o(FIELDS_2, unlimited(&f), HEADER_2,
            "68|(null)|/tmp/jfx|(null)|0|1|afterok:3|(null)||0|OK||n/a|68|N/A|"
            "0.99998473026789|(null)|0|(null)|(null)|*:*:*|0|N/A|N/A\n");
}

/* Memory as Slurm prints it, per CPU or per node; MIN_CPUS times ntasks-per-node;
 * OVER_SUBSCRIBE NO for --exclusive; features; nice below zero. */
static void test_percent_fields_variants(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = held_plain(&f);

    (void)state;
    f.desc.mem_per_node_mb = 1024;
    check_o("%m", job, "MIN_MEMORY\n", "1G\n");
    f.desc.mem_per_node_mb = 1536;
    check_o("%m", job, "MIN_MEMORY\n", "1536M\n");
    f.desc.mem_per_node_mb = 2u * 1024 * 1024;
    check_o("%m", job, "MIN_MEMORY\n", "2T\n");
    f.desc.has_mem_per_cpu_mb = 1;
    f.desc.mem_per_cpu_mb = 50;
    f.desc.has_ntasks_per_node = 1;
    f.desc.ntasks_per_node = 2;
    f.job.cpus_per_task = 2;
    f.desc.has_exclusive = f.desc.exclusive = 1;
    f.desc.constraint = (char *)"fast&big";
    f.desc.nice = -3;
    check_o("%m %c %h %f %y", job, "MIN_MEMORY MIN_CPUS OVER_SUBSCRIBE FEATURES NICE\n",
            "50M 4 NO fast&big -3\n");
    /* a reason with detail shows the detail, in %R and %r alike */
    f.job.reason = JOB_REASON_NODES_DOWN;
    f.job.state_desc = (char *)"ReqNodeNotAvail, UnavailableNodes:n2";
    check_o("%R|%r", job, "NODELIST(REASON)|REASON\n",
            "(ReqNodeNotAvail, UnavailableNodes:n2)|ReqNodeNotAvail, UnavailableNodes:n2\n");
}

/* Names of ids that do not exist are the numbers. */
static void test_unknown_ids(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = held_plain(&f);

    (void)state;
    f.desc.user_id = UNKNOWN_UID;
    f.desc.group_id = UNKNOWN_UID;
    check_o("%u %U %g %G", job, "USER UID GROUP GROUP\n", "4242424 4242424 4242424 4242424\n");
    assert_string_equal(jobfmt_user_name(ctx, 0), "root");
    assert_string_equal(jobfmt_group_name(ctx, 0), "root");
    /* cached: the same text comes back */
    assert_ptr_equal(jobfmt_user_name(ctx, UNKNOWN_UID), jobfmt_user_name(ctx, UNKNOWN_UID));
}

/* Slurm's output of "[%.3P][%3P][%.20j][%20j][%4i][%.4i][%0j][%.0j][%%][%R]". */
static void test_width_justify_truncate(void **state)
{
    const char *format = "[%.3P][%3P][%.20j][%20j][%4i][%.4i][%0j][%.0j][%%][%R]";
    struct fx f;

    (void)state;
    check_o(format, completed(&f),
            "[PAR][PAR][                NAME][NAME                ][JOBI][JOBI][NAME][NAME][%]"
            "[NODELIST(REASON)]\n",
            "[deb][deb][             jf_done][jf_done             ][64  ][  64][jf_done]"
            "[jf_done][%][n3]\n");
    check_o(format, het(&f, 0),
            "[PAR][PAR][                NAME][NAME                ][JOBI][JOBI][NAME][NAME][%]"
            "[NODELIST(REASON)]\n",
            "[deb][deb][                  hj][hj                  ][1+0 ][ 1+0][hj][hj][%]"
            "[(JobHeldUser)]\n");
    /* literal text only, and "%%" next to a field */
    check_o("lit only", &f.job, "lit only\n", "lit only\n");
    check_o("%%%i%%", &f.job, "%JOBID%\n", "%1+0%\n");
    check_o("", &f.job, "\n", "\n");
}

static void test_bad_formats(void **state)
{
    (void)state;
    check_bad(0, "%i %@ end", "Invalid job format specification: @");
    check_bad(0, "%.18i %.9P %1 x", "Invalid job format specification:  ");
    check_bad(0, "%.5", "Invalid job format specification: ");
    check_bad(0, "%i %", "Invalid job format specification: ");
    check_bad(0, "%-5i", "Invalid job format specification: -");
    check_bad(0, "%999999i", "Invalid job format specification: 999999i");
}

/* ---- squeue -O ------------------------------------------------------------------------- */

static void test_fields_het(void **state)
{
    struct fx a, b;
    struct jobfmt *fmt = compile_fields("JobID,HetJobID,HetJobOffset,HetJobIDSet,Name");

    (void)state;
    check_header(fmt, "JOBID               HET_JOB_ID          HET_JOB_OFFSET      "
                      "HET_JOB_ID_SET      NAME                \n");
    check_row(fmt, completed(&a), "64                  N/A                 N/A                 "
                                  "N/A                 jf_done             \n");
    check_row(fmt, het(&b, 1), "2                   1                   1                   "
                               "1-2                 hj                  \n");
    jobfmt_free(fmt);
    /* JobArrayID is the id users see */
    fmt = compile_fields("jobarrayid:0");
    check_row(fmt, &b.job, "1+1\n");
    jobfmt_free(fmt);
}

static void test_fields_default_width(void **state)
{
    struct fx f;
    struct jobfmt *fmt =
        compile_fields("Partition,State,StateCompact,TimeUsed,TimeLimit,TimeLeft,NumNodes,"
                       "NumCPUs,Reason,ReasonList,NodeList");
    Tessera__JobRecord *job = unlimited(&f);

    (void)state;
    check_header(fmt, "PARTITION           STATE               ST                  TIME      "
                      "          TIME_LIMIT          TIME_LEFT           NODES               "
                      "CPUS                REASON              NODELIST(REASON)    NODELIST "
                      "           \n");
    /* values of 20 characters or more are cut to 20: no blank between the columns */
    f.job.reason = JOB_REASON_DEPENDENCY_NEVER;
    check_row(fmt, job, "debug               PENDING             PD                  0:00      "
                        "          UNLIMITED           UNLIMITED           1                   "
                        "1                   DependencyNeverSatis(DependencyNeverSati         "
                        "           \n");
    jobfmt_free(fmt);
}

static void test_fields_more(void **state)
{
    struct fx f;
    struct jobfmt *fmt =
        compile_fields("Priority,QOS,SubmitTime,StartTime,EndTime,WorkDir,Command,Comment,"
                       "MinMemory,Dependency,Feature,Nice,ArrayJobID,ArrayTaskID,JobArrayID,"
                       "MinCPUs");

    (void)state;
    check_header(fmt, "PRIORITY            QOS                 SUBMIT_TIME         START_TIME  "
                      "        END_TIME            WORK_DIR            COMMAND             "
                      "COMMENT             MIN_MEMORY          DEPENDENCY          FEATURES    "
                      "        NICE                ARRAY_JOB_ID        ARRAY_TASK_ID       "
                      "JOBID               MIN_CPUS            \n");
    check_row(fmt, running(&f),
              "0.99998473143205    (null)              2026-11-22T15:34:19 2026-11-22T15:34:25 "
              "2026-11-22T16:34:25 /tmp/jfx            (null)              (null)              "
              "0                   (null)              (null)              0                   "
              "63                  N/A                 63                  1                   "
              "\n");
    check_row(fmt, held_plain(&f),
              "0.00000000000000    (null)              2026-11-22T15:34:24 N/A                 "
              "N/A                 /tmp/jfx            (null)              hello world         "
              "100M                (null)              (null)              5                   "
              "69                  N/A                 69                  1                   "
              "\n");
    jobfmt_free(fmt);
}

/* Slurm's output of -O "JobID:10,name:.10,STATE:5|,PriorityLong,jobid:.6  x ,UserName:3":
 * widths, right justification, suffixes, case-insensitive names. */
static void test_fields_widths(void **state)
{
    struct fx f;
    struct jobfmt *fmt =
        compile_fields("JobID:10,name:.10,STATE:5|,PriorityLong,jobid:.6  x ,UserName:3");

    (void)state;
    check_header(fmt, "JOBID           NAMESTATE|PRIORITY             JOBID  x USE\n");
    check_row(fmt, held_plain(&f), "69          jf_plainPENDI|0                       69  x roo\n");
    check_row(fmt, running(&f), "63            jf_runRUNNI|4294901717              63  x roo\n");
    jobfmt_free(fmt);
    fmt = compile_fields("JobID:0,Name:,NumNodes:.0,,");
    check_header(fmt, "JOBIDNAMENODES\n");
    check_row(fmt, held_plain(&f), "69jf_plain1\n");
    jobfmt_free(fmt);
}

static void test_fields_streams(void **state)
{
    struct fx f;
    struct jobfmt *fmt = compile_fields("STDOUT:0,STDERR:.0,STDIN:0,tres-alloc:0,Shared:0");

    (void)state;
    check_header(fmt, "STDOUTSTDERRSTDINTRES_ALLOCOVER_SUBSCRIBE\n");
    check_row(fmt, running(&f),
              "/tmp/jfx/slurm-63.out/tmp/jfx/slurm-63.out/dev/nullcpu=3,mem=2000M,node=1,"
              "billing=3OK\n");
    jobfmt_free(fmt);
}

static void test_bad_fields(void **state)
{
    (void)state;
    check_bad(1, "Bogus", "Invalid job format specification: Bogus");
    check_bad(1, "JobID,Bogus:5,Name", "Invalid job format specification: Bogus");
    check_bad(1, "Nam", "Invalid job format specification: Nam"); /* no prefixes */
    check_bad(1, "", "Invalid job format specification: ");
    check_bad(1, ",,", "Invalid job format specification: ");
}

/* ---- default order -------------------------------------------------------------------- */

static void test_sort_default(void **state)
{
    struct fx f[9];
    Tessera__JobRecord *jobs[9];
    static const uint32_t order[] = {7, 6, 64, 68, 1, 2, 69, 63, 65};

    (void)state;
    jobs[0] = het(&f[0], 0);
    jobs[1] = running(&f[1]);
    jobs[2] = het(&f[2], 1);
    jobs[3] = held_plain(&f[3]);
    jobs[4] = suspended(&f[4]);
    jobs[5] = completed(&f[5]);
    jobs[6] = unlimited(&f[6]);
    /* partitions come first: "alpha" before "debug", whatever the state */
    jobs[7] = running(&f[7]);
    f[7].job.job_id = 7;
    f[7].desc.partition = (char *)"alpha";
    /* CANCELLED sorts before COMPLETED ("CA" < "CD") though its number is higher */
    jobs[8] = completed(&f[8]);
    f[8].job.job_id = 6;
    f[8].job.state = TESSERA__JOB_STATE__JOB_CANCELLED;
    f[8].job.priority = 0;
    jobfmt_sort_default(jobs, 9);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(jobs[i]->job_id, order[i]);
    jobfmt_sort_default(jobs, 0);
    jobfmt_sort_default(NULL, 0);
}

/* ---- scontrol show job ------------------------------------------------------------- */

static void check_show(const Tessera__JobRecord *job, int oneliner, const char *expected)
{
    char *got = jobfmt_show_job(job, ctx, oneliner);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

/* Slurm prints "AllocNode:Sid=localhost:9333": Tessera keeps no session id (0). */
static const char show_held[] =
    "JobId=69 JobName=jf_plain\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   Priority=0 Nice=5 Account=acct1 QOS=(null)\n"
    "   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
    "   RunTime=00:00:00 TimeLimit=00:30:00 TimeMin=N/A\n"
    "   SubmitTime=2026-11-22T15:34:24 EligibleTime=Unknown\n"
    "   AccrueTime=Unknown\n"
    "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
    "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T15:34:24 Scheduler=Main\n"
    "   Partition=debug AllocNode:Sid=localhost:0\n"
    "   ReqNodeList=n2 ExcNodeList=n3\n"
    "   NodeList=\n"
    "   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=1,mem=100M,node=1,billing=1\n"
    "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
    "   MinCPUsNode=1 MinMemoryNode=100M MinTmpDiskNode=0\n"
    "   Features=(null) DelayBoot=00:00:00\n"
    "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
    "   Command=(null)\n"
    "   WorkDir=/tmp/jfx\n"
    "   Comment=hello world \n"
    "   StdErr=/tmp/jfx/err-69.log\n"
    "   StdIn=/dev/null\n"
    "   StdOut=/tmp/jfx/out-69-root-jf_plain-69-4294967294-%N-%%.txt\n"
    "   Power=\n"
    "   \n"
    "\n";

static void test_show_held(void **state)
{
    struct fx f;

    (void)state;
    check_show(held_plain(&f), 0, show_held);
}

static void test_show_oneliner(void **state)
{
    struct fx f;

    (void)state;
    check_show(held_plain(&f), 1,
               "JobId=69 JobName=jf_plain UserId=root(0) GroupId=root(0) MCS_label=N/A "
               "Priority=0 Nice=5 Account=acct1 QOS=(null) JobState=PENDING "
               "Reason=JobHeldUser Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
               "Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=00:30:00 TimeMin=N/A "
               "SubmitTime=2026-11-22T15:34:24 EligibleTime=Unknown AccrueTime=Unknown "
               "StartTime=Unknown EndTime=Unknown Deadline=N/A SuspendTime=None "
               "SecsPreSuspend=0 LastSchedEval=2026-11-22T15:34:24 Scheduler=Main "
               "Partition=debug AllocNode:Sid=localhost:0 ReqNodeList=n2 ExcNodeList=n3 "
               "NodeList= NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
               "TRES=cpu=1,mem=100M,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* "
               "CoreSpec=* MinCPUsNode=1 MinMemoryNode=100M MinTmpDiskNode=0 "
               "Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 "
               "Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/jfx "
               "Comment=hello world  StdErr=/tmp/jfx/err-69.log StdIn=/dev/null "
               "StdOut=/tmp/jfx/out-69-root-jf_plain-69-4294967294-%N-%%.txt Power= \n");
}

/* Slurm shows TRES=cpu=2,mem=2000M,...: with no memory asked for, it counts the whole
 * node's; the record does not know node sizes, so mem is left out. */
static const char show_het1[] =
    "JobId=1 HetJobId=1 HetJobOffset=0 JobName=hj\n"
    "   HetJobIdSet=1-2\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   Priority=0 Nice=0 Account=(null) QOS=(null)\n"
    "   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
    "   RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A\n"
    "   SubmitTime=2026-11-22T15:28:15 EligibleTime=Unknown\n"
    "   AccrueTime=Unknown\n"
    "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
    "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T15:28:15 Scheduler=Main\n"
    "   Partition=debug AllocNode:Sid=localhost:0\n"
    "   ReqNodeList=(null) ExcNodeList=(null)\n"
    "   NodeList=\n"
    "   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=2,node=1,billing=2\n"
    "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
    "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
    "   Features=(null) DelayBoot=00:00:00\n"
    "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
    "   Command=(null)\n"
    "   WorkDir=/tmp\n"
    "   StdErr=/tmp/slurm-1.out\n"
    "   StdIn=/dev/null\n"
    "   StdOut=/tmp/slurm-1.out\n"
    "   Power=\n"
    "   \n"
    "\n";

static const char show_het2_head[] = "JobId=2 HetJobId=1 HetJobOffset=1 JobName=hj\n"
                                     "   HetJobIdSet=1-2\n"
                                     "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n";

static void test_show_het(void **state)
{
    struct fx a, b;
    char *got;

    (void)state;
    check_show(het(&a, 0), 0, show_het1);
    got = jobfmt_show_job(het(&b, 1), ctx, 0);
    assert_non_null(got);
    assert_memory_equal(got, show_het2_head, strlen(show_het2_head));
    assert_non_null(strstr(got, "\n   NumNodes=2 NumCPUs=2 NumTasks=1 CPUs/Task=2 "));
    assert_non_null(strstr(got, "\n   MinCPUsNode=2 MinMemoryNode=0 MinTmpDiskNode=0\n"));
    assert_non_null(strstr(got, "\n   StdOut=/tmp/slurm-2.out\n"));
    free(got);
    got = jobfmt_show_job(&b.job, ctx, 1);
    assert_non_null(got);
    assert_non_null(strstr(got, "JobId=2 HetJobId=1 HetJobOffset=1 JobName=hj HetJobIdSet=1-2 "
                                "UserId=root(0) "));
    free(got);
}

/* Slurm's job 63, but Scheduler=Main (Slurm: Backfill, which Tessera does not tell). */
static const char show_running[] =
    "JobId=63 JobName=jf_run\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   Priority=4294901717 Nice=0 Account=(null) QOS=(null)\n"
    "   JobState=RUNNING Reason=None Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
    "   RunTime=00:01:58 TimeLimit=01:00:00 TimeMin=N/A\n"
    "   SubmitTime=2026-11-22T15:34:19 EligibleTime=2026-11-22T15:34:19\n"
    "   AccrueTime=2026-11-22T15:34:19\n"
    "   StartTime=2026-11-22T15:34:25 EndTime=2026-11-22T16:34:25 Deadline=N/A\n"
    "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T15:34:25 Scheduler=Main\n"
    "   Partition=debug AllocNode:Sid=localhost:0\n"
    "   ReqNodeList=(null) ExcNodeList=(null)\n"
    "   NodeList=n2\n"
    "   BatchHost=n2\n"
    "   NumNodes=1 NumCPUs=3 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=3,mem=2000M,node=1,billing=3\n"
    "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
    "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
    "   Features=(null) DelayBoot=00:00:00\n"
    "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
    "   Command=(null)\n"
    "   WorkDir=/tmp/jfx\n"
    "   StdErr=/tmp/jfx/slurm-63.out\n"
    "   StdIn=/dev/null\n"
    "   StdOut=/tmp/jfx/slurm-63.out\n"
    "   Power=\n"
    "   \n"
    "\n";

static void test_show_running(void **state)
{
    struct fx f;

    (void)state;
    check_show(running(&f), 0, show_running);
}

static void check_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("\"%s\" not in:\n%s", part, text);
}

static void test_show_suspended_completed(void **state)
{
    struct fx f;
    char *got;

    (void)state;
    got = jobfmt_show_job(suspended(&f), ctx, 0);
    assert_non_null(got);
    check_contains(got, "\n   JobState=SUSPENDED Reason=None Dependency=(null)\n");
    check_contains(got, "\n   RunTime=00:00:39 TimeLimit=01:00:00 TimeMin=N/A\n");
    check_contains(got, "\n   SuspendTime=2026-11-22T15:35:34 SecsPreSuspend=39 "
                        "LastSchedEval=2026-11-22T15:34:55 Scheduler=Main\n");
    check_contains(got, "\n   NodeList=n[3-4]\n   BatchHost=n3\n");
    check_contains(got, "\n   TRES=cpu=2,mem=4000M,node=2,billing=2\n");
    free(got);

    got = jobfmt_show_job(completed(&f), ctx, 0);
    assert_non_null(got);
    check_contains(got, "\n   JobState=COMPLETED Reason=None Dependency=(null)\n");
    check_contains(got, "\n   RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A\n");
    check_contains(got, "\n   StartTime=2026-11-22T15:34:25 EndTime=2026-11-22T15:34:25 "
                        "Deadline=N/A\n");
    check_contains(got, "\n   NodeList=n3\n   BatchHost=n3\n");
    free(got);

    /* failed with exit code 3, then killed by signal 9 */
    f.job.state = TESSERA__JOB_STATE__JOB_FAILED;
    f.job.exit_code = 3 << 8;
    f.job.end_time = T_RUN + 90061; /* 1 day 1 h 1 min 1 s */
    got = jobfmt_show_job(&f.job, ctx, 0);
    check_contains(got, " ExitCode=3:0\n");
    check_contains(got, "\n   RunTime=1-01:01:01 TimeLimit=01:00:00 ");
    free(got);
    f.job.exit_code = 9;
    got = jobfmt_show_job(&f.job, ctx, 0);
    check_contains(got, " ExitCode=0:9\n");
    free(got);
}

/* The rarer lines and values: ranges of nodes, mail, deadline, time-min, per-CPU memory,
 * --no-requeue, --exclusive, licenses, a reason with detail, srun jobs (BatchFlag=0). */
static void test_show_options(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = unlimited(&f);
    char *got;

    (void)state;
    f.desc.has_max_nodes = 1;
    f.desc.max_nodes = 3;
    f.desc.mail_type = (char *)"END";
    f.desc.has_deadline = 1;
    f.desc.deadline = T_SUB + 3 * 3600;
    f.desc.has_time_min = 1;
    f.desc.time_min = 600;
    f.desc.has_mem_per_cpu_mb = 1;
    f.desc.mem_per_cpu_mb = 100;
    f.desc.has_ntasks_per_node = 1;
    f.desc.ntasks_per_node = 2;
    f.job.cpus_per_task = 2;
    f.job.ntasks = f.job.min_cpus = 2;
    f.desc.has_requeue = 1;
    f.desc.has_exclusive = f.desc.exclusive = 1;
    f.desc.licenses = (char *)"lic1:2";
    f.desc.std_in = (char *)"in.txt";
    f.desc.script = NULL;
    f.job.reason = JOB_REASON_NODES_DOWN;
    f.job.state_desc = (char *)"ReqNodeNotAvail, UnavailableNodes:n2";
    got = jobfmt_show_job(job, ctx, 0);
    assert_non_null(got);
    check_contains(got, "\n   JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:n2 "
                        "Dependency=afterok:3\n");
    check_contains(got, "\n   Requeue=0 Restarts=0 BatchFlag=0 Reboot=0 ExitCode=0:0\n");
    check_contains(got, "\n   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=00:10:00\n");
    check_contains(got, " Deadline=2026-11-22T18:34:19\n");
    check_contains(got, "\n   NumNodes=1-3 NumCPUs=2 NumTasks=2 CPUs/Task=2 ");
    check_contains(got, "\n   TRES=cpu=2,mem=200M,node=1,billing=2\n");
    check_contains(got, "\n   Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*\n");
    check_contains(got, "\n   MinCPUsNode=4 MinMemoryCPU=100M MinTmpDiskNode=0\n");
    check_contains(got, "\n   OverSubscribe=NO Contiguous=0 Licenses=lic1:2 Network=(null)\n");
    check_contains(got, "\n   StdIn=/tmp/jfx/in.txt\n");
    check_contains(got, "\n   Power=\n   MailUser=root MailType=END\n   \n\n");
    free(got);
}

/* ---- expected start times ----------------------------------------------------------- */

/* Slurm's text for a pending job with an estimate (scontrol show job 560 on the reference
 * cluster, times shifted), less the "SchedNodeList=n1" it adds after "NodeList=": the
 * record does not carry the planned nodes. */
static const char show_planned[] =
    "JobId=70 JobName=jf_wait\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   Priority=4294901710 Nice=0 Account=(null) QOS=(null)\n"
    "   JobState=PENDING Reason=Resources Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
    "   RunTime=00:00:00 TimeLimit=00:30:00 TimeMin=N/A\n"
    "   SubmitTime=2026-11-22T15:34:19 EligibleTime=2026-11-22T15:34:19\n"
    "   AccrueTime=2026-11-22T15:34:19\n"
    "   StartTime=2026-11-22T16:34:25 EndTime=2026-11-22T17:04:25 Deadline=N/A\n"
    "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T15:34:25 Scheduler=Main\n"
    "   Partition=debug AllocNode:Sid=localhost:0\n"
    "   ReqNodeList=(null) ExcNodeList=(null)\n"
    "   NodeList=\n"
    "   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=1,node=1,billing=1\n"
    "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
    "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
    "   Features=(null) DelayBoot=00:00:00\n"
    "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
    "   Command=(null)\n"
    "   WorkDir=/tmp/jfx\n"
    "   StdErr=/tmp/jfx/slurm-70.out\n"
    "   StdIn=/dev/null\n"
    "   StdOut=/tmp/jfx/slurm-70.out\n"
    "   Power=\n"
    "   \n"
    "\n";

static void check_show_line(const Tessera__JobRecord *job, const char *line)
{
    char *got = jobfmt_show_job(job, ctx, 0);

    assert_non_null(got);
    check_contains(got, line);
    free(got);
}

/* Generic resources as Slurm 22.05 printed them for "sbatch --mail-type=END --gres=gpu:1
 * --gres-flags=disable-binding --cpus-per-gpu=3" on the reference cluster: after Power=,
 * before the mail line, each only when set; squeue's %b and -O tres-per-*. */
static void test_show_gres(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = unlimited(&f);

    (void)state;
    f.desc.mail_type = (char *)"END";
    f.desc.tres_per_node = (char *)"gres:gpu:1";
    f.desc.gres_flags = (char *)"disable-binding";
    f.desc.cpus_per_tres = (char *)"gres:gpu:3";
    check_show_line(job, "\n   Power=\n   GresEnforceBind=No\n   CpusPerTres=gres:gpu:3\n"
                         "   TresPerNode=gres:gpu:1\n   MailUser=root MailType=END\n");
    f.desc.gres_flags = (char *)"enforce-binding";
    f.desc.cpus_per_tres = NULL;
    f.desc.mem_per_tres = (char *)"gres:gpu:100";
    f.desc.tres_per_job = (char *)"gres:gpu:2";
    f.desc.tres_per_task = (char *)"gres:gpu:1";
    check_show_line(job, "\n   Power=\n   GresEnforceBind=Yes\n   MemPerTres=gres:gpu:100\n"
                         "   TresPerJob=gres:gpu:2\n   TresPerNode=gres:gpu:1\n"
                         "   TresPerTask=gres:gpu:1\n   MailUser=");
    check_o("%b|%.5b", job, "TRES_PER_NODE|TRES_\n", "gres:gpu:1|gres:\n");
    struct jobfmt *fmt = compile_fields("tres-per-node,tres-per-job:12,tres-per-task");
    check_row(fmt, job, "gres:gpu:1          gres:gpu:2  gres:gpu:1          \n");
    check_row(fmt, held_plain(&f), "N/A                 N/A         N/A                 \n");
    jobfmt_free(fmt);
}

/* The controller keeps no end time while a job runs: EndTime= is its start plus its limit
 * (moved by a change of the limit: scontrol update), the time it spent suspended added;
 * Unknown without a limit (squeue: NONE). */
static void test_show_running_end(void **state)
{
    struct fx f;

    (void)state;
    running(&f);
    f.job.end_time = 0;
    check_show_line(&f.job,
                    "\n   StartTime=2026-11-22T15:34:25 EndTime=2026-11-22T16:34:25 Deadline=N/A\n");
    f.job.time_limit = 1800;
    check_show_line(&f.job,
                    "\n   StartTime=2026-11-22T15:34:25 EndTime=2026-11-22T16:04:25 Deadline=N/A\n");
    f.job.suspend_time = T_RUN + 600; /* resumed 10 min in, having used 4 min */
    f.job.pre_suspend_secs = 240;
    check_show_line(&f.job,
                    "\n   StartTime=2026-11-22T15:34:25 EndTime=2026-11-22T16:10:25 Deadline=N/A\n");
    f.job.time_limit = -1;
    check_show_line(&f.job, "\n   StartTime=2026-11-22T15:34:25 EndTime=Unknown Deadline=N/A\n");
    suspended(&f);
    f.job.end_time = 0;
    check_show_line(&f.job,
                    "\n   StartTime=2026-11-22T15:34:55 EndTime=2026-11-22T16:34:55 Deadline=N/A\n");
}

/* StartTime= is the expected start, EndTime= that plus the limit; Unknown for both without
 * an estimate, and EndTime=Unknown for an unlimited job (Slurm's job 573). Only pending
 * jobs show the plan. */
static void test_show_planned(void **state)
{
    struct fx f, r;
    char *got;

    (void)state;
    check_show(planned(&f), 0, show_planned);
    got = jobfmt_show_job(&f.job, ctx, 1);
    assert_non_null(got);
    check_contains(got, " StartTime=2026-11-22T16:34:25 EndTime=2026-11-22T17:04:25 "
                        "Deadline=N/A ");
    free(got);
    f.job.time_limit = -1;
    check_show_line(&f.job, "\n   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A\n");
    check_show_line(&f.job, "\n   StartTime=2026-11-22T16:34:25 EndTime=Unknown Deadline=N/A\n");
    f.job.expected_start = 0;
    check_show_line(&f.job, "\n   StartTime=Unknown EndTime=Unknown Deadline=N/A\n");
    f.job.time_limit = 1800;
    check_show_line(&f.job, "\n   StartTime=Unknown EndTime=Unknown Deadline=N/A\n");
    /* a running job's times are its own, whatever estimate the record still holds */
    running(&r);
    r.job.expected_start = T_PLAN;
    check_show(&r.job, 0, show_running);
}

/* squeue %S and %e of pending jobs: the plan's times, N/A without an estimate, NONE as the
 * end of an unlimited one (Slurm's jobs 560, 562 and 573); %Y "(null)" as Slurm prints it
 * for a job without planned nodes. */
static void test_squeue_planned(void **state)
{
    struct fx f, r;
    struct jobfmt *fmt;

    (void)state;
    check_o("%i|%t|%S|%e|%Y|%l", planned(&f),
            "JOBID|ST|START_TIME|END_TIME|SCHEDNODES|TIME_LIMIT\n",
            "70|PD|2026-11-22T16:34:25|2026-11-22T17:04:25|(null)|30:00\n");
    f.job.time_limit = -1;
    check_o("%S|%e|%l", &f.job, "START_TIME|END_TIME|TIME_LIMIT\n",
            "2026-11-22T16:34:25|NONE|UNLIMITED\n");
    f.job.expected_start = 0;
    check_o("%S|%e", &f.job, "START_TIME|END_TIME\n", "N/A|N/A\n");
    check_o("%.19S %.19e", held_plain(&f), "         START_TIME            END_TIME\n",
            "                N/A                 N/A\n");
    running(&r);
    r.job.expected_start = T_PLAN;
    check_o("%S|%e|%Y", &r.job, "START_TIME|END_TIME|SCHEDNODES\n",
            "2026-11-22T15:34:25|2026-11-22T16:34:25|(null)\n");
    /* -O names, at Slurm's default width */
    fmt = compile_fields("StartTime,EndTime,SchedNodes");
    check_header(fmt, "START_TIME          END_TIME            SCHEDNODES          \n");
    check_row(fmt, planned(&f),
              "2026-11-22T16:34:25 2026-11-22T17:04:25 (null)              \n");
    jobfmt_free(fmt);
}

/* squeue --start's columns: Slurm's header, byte for byte, and its rows (jobs 560, 562). */
static void test_squeue_start_format(void **state)
{
    struct fx a, b;
    struct jobfmt *fmt = compile(JOBFMT_SQUEUE_START);

    (void)state;
    check_header(fmt, "             JOBID PARTITION     NAME     USER ST          START_TIME  "
                      "NODES SCHEDNODES           NODELIST(REASON)\n");
    check_row(fmt, planned(&a),
              "                70     debug  jf_wait     root PD 2026-11-22T16:34:25      1 "
              "(null)               (Resources)\n");
    check_row(fmt, held_plain(&b),
              "                69     debug jf_plain     root PD                 N/A      1 "
              "(null)               (JobHeldUser)\n");
    jobfmt_free(fmt);
}

static Tessera__JobRecord *pending_at(struct fx *f, uint32_t id, int64_t start)
{
    Tessera__JobRecord *job = planned(f);

    f->job.job_id = id;
    f->job.expected_start = start;
    return job;
}

/* Slurm's --start order: by start; equal starts by id; a pending job's passed start as
 * now, so after jobs that really started earlier; jobs without a start last (-t all). */
static void test_sort_start(void **state)
{
    struct fx f[9];
    Tessera__JobRecord *jobs[9];
    static const uint32_t order[] = {63, 64, 80, 81, 82, 83, 84, 68, 69};

    (void)state;
    jobs[0] = held_plain(&f[0]);                     /* 69: no estimate */
    jobs[1] = pending_at(&f[1], 84, T_PLAN + 3600);  /* later */
    jobs[2] = pending_at(&f[2], 83, T_PLAN);         /* ties by id */
    jobs[3] = pending_at(&f[3], 82, T_PLAN);
    jobs[4] = unlimited(&f[4]);                      /* 68: no estimate */
    jobs[5] = running(&f[5]);                        /* 63: 15:34:25 */
    jobs[6] = pending_at(&f[6], 81, NOW + 50);       /* soon */
    jobs[7] = pending_at(&f[7], 80, T_SUB);          /* passed: as now */
    jobs[8] = completed(&f[8]);                      /* 64: 15:34:25, after 63 by id */
    assert_int_equal(jobfmt_sort_start(jobs, 9, NOW), TS_OK);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(jobs[i]->job_id, order[i]);
    assert_int_equal(jobfmt_sort_start(jobs, 0, NOW), TS_OK);
    assert_int_equal(jobfmt_sort_start(NULL, 0, NOW), TS_OK);
}

static void check_test_only(uint32_t id, uint32_t ncomp, int64_t start, const char *part,
                            uint32_t cpus, const char *nodes, const char *expected)
{
    Tessera__SubmitResponse r = TESSERA__SUBMIT_RESPONSE__INIT;
    char *got;

    r.job_id = id;
    r.ncomponents = ncomp;
    r.expected_start = start;
    r.partition = (char *)part;
    r.cpus = cpus;
    r.nodes = (char *)nodes;
    got = jobfmt_test_only(&r);
    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

/* sbatch --test-only, as Slurm printed it on the reference cluster ("sbatch: " comes
 * from sbatch): a plain job, and a het job (the components' processors summed, their
 * nodes together, no partition); then the lines for what Slurm never prints. */
static void test_test_only(void **state)
{
    (void)state;
    check_test_only(553, 1, T_PLAN, "debug", 3, "n[1-2]",
                    "Job 553 to start at 2026-11-22T16:34:25 using 3 processors on nodes "
                    "n[1-2] in partition debug");
    check_test_only(571, 2, T_PLAN, "debug", 4, "n[1-2]",
                    "Job 571 to start at 2026-11-22T16:34:25 using 4 processors on n[1-2]");
    /* Slurm's wording when the partition is not told */
    check_test_only(551, 1, T_PLAN, "", 1, "n1",
                    "Job 551 to start at 2026-11-22T16:34:25 using 1 processors on nodes n1");
    /* the controller could not plan it */
    check_test_only(551, 1, 0, "debug", 0, "",
                    "Job 551 would be accepted in partition debug, but no start time could be "
                    "estimated");
    check_test_only(571, 2, 0, "debug", 0, "",
                    "Job 571 would be accepted, but no start time could be estimated");
    /* no job id in the response */
    check_test_only(0, 1, T_PLAN, "debug", 1, "n1",
                    "Job to start at 2026-11-22T16:34:25 using 1 processors on nodes n1 in "
                    "partition debug");
    check_test_only(0, 1, 0, NULL, 0, NULL,
                    "Job would be accepted, but no start time could be estimated");
}

/* ---- standard streams and elapsed time ---------------------------------------------- */

static void check_path(const Tessera__JobRecord *job, enum stdpath_stream which,
                       const char *expected)
{
    char *got = jobfmt_std_path(job, which, ctx);

    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

static void test_std_paths(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = het(&f, 1);

    (void)state;
    check_path(job, STDPATH_STDOUT, "/tmp/slurm-2.out");
    check_path(job, STDPATH_STDERR, "/tmp/slurm-2.out");
    check_path(job, STDPATH_STDIN, "/dev/null");
    /* -o only: errors follow it; %A of a component is its own id, as in Slurm */
    f.desc.std_out = (char *)"/abs/%x-%A_%a.%j.%u%";
    check_path(job, STDPATH_STDOUT, "/abs/hj-2_4294967294.2.root%");
    check_path(job, STDPATH_STDERR, "/abs/hj-2_4294967294.2.root%");
    /* what the node fills in stays: %N %n %t %s %%, and %%j is not a job id */
    f.desc.std_err = (char *)"e-%N-%n-%t-%s-%%j-%q";
    check_path(job, STDPATH_STDERR, "/tmp/e-%N-%n-%t-%s-%%j-%q");
    f.desc.std_in = (char *)"sub/in-%j";
    check_path(job, STDPATH_STDIN, "/tmp/sub/in-2");
    /* no work dir: the pattern as it is */
    f.desc.work_dir = NULL;
    check_path(job, STDPATH_STDIN, "sub/in-2");
}

/* The file the node opens: stdpath_expand with a user and a batch host. */
static void check_file(const Tessera__JobRecord *job, enum stdpath_stream which,
                       const char *host, const char *expected)
{
    struct stdpath_fill fill = {.user = "alice", .host = host};
    char *got = NULL;

    assert_int_equal(stdpath_expand(job, which, &fill, &got), TS_OK);
    assert_non_null(got);
    assert_string_equal(got, expected);
    free(got);
}

static int expand_err(const Tessera__JobRecord *job, enum stdpath_stream which,
                      const char *host)
{
    struct stdpath_fill fill = {.user = "alice", .host = host};
    char *got = (char *)"untouched";
    int err = stdpath_expand(job, which, &fill, &got);

    if (err)
        assert_null(got);
    free(got);
    return err;
}

/* count copies of unit, then tail, in one malloc'd string */
static char *repeat(const char *unit, size_t count, const char *tail)
{
    size_t ulen = strlen(unit), tlen = strlen(tail);
    char *s = malloc(ulen * count + tlen + 1);

    assert_non_null(s);
    for (size_t i = 0; i < count; i++)
        memcpy(s + i * ulen, unit, ulen);
    memcpy(s + ulen * count, tail, tlen + 1);
    return s;
}

static void test_path_expand_escapes(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = het(&f, 1);

    (void)state;
    check_file(job, STDPATH_STDOUT, "n1", "/tmp/slurm-2.out");
    check_file(job, STDPATH_STDIN, "n1", "/dev/null");
    /* %N the host, %% one percent (and %%N is no host), a trailing % stays */
    f.desc.std_out = (char *)"o-%N-%%-%%N-%j-%u-%x-%q%";
    check_file(job, STDPATH_STDOUT, "node-abcdefg", "/tmp/o-node-abcdefg-%-%N-2-alice-hj-%q%");
    check_file(job, STDPATH_STDERR, "n1", "/tmp/o-n1-%-%N-2-alice-hj-%q%");
    /* one pass: a job name or work dir holding escapes is taken as it is */
    f.desc.name = (char *)"%N%N%%";
    f.desc.work_dir = (char *)"/w/%N%%";
    f.desc.std_out = (char *)"%x.%N";
    check_file(job, STDPATH_STDOUT, "h", "/w/%N%%/%N%N%%.h");
    check_path(job, STDPATH_STDOUT, "/w/%N%%/%N%N%%.%N");
    /* just a percent sign */
    f.desc.std_out = (char *)"%";
    check_file(job, STDPATH_STDOUT, "h", "/w/%N%%/%");
}

/* The generic fill: every escape of Slurm's patterns, widths, what stays for later. */
static void check_pattern(const char *pattern, const struct stdpath_values *v,
                          const char *expected)
{
    char *got = NULL;

    assert_int_equal(stdpath_pattern_expand(pattern, NULL, v, STDPATH_MAX - 1, &got), TS_OK);
    assert_string_equal(got, expected);
    free(got);
}

static void test_pattern_escapes_and_widths(void **state)
{
    struct stdpath_values v = STDPATH_VALUES_INIT;

    (void)state;
    v.job_id = 7;
    v.step_id = 3;
    v.task_id = 5;
    v.node_id = 1;
    v.host = "h";
    v.user = "al";
    v.job_name = "nm";
    v.final = 1;
    check_pattern("%j.%5j.%A.%a.%s.%J.%3t.%2n.%N.%3N.%u.%2x.%%.%q.%4q", &v,
                  "7.00007.7.4294967294.3.7.3.005.01.h.h.al.nm.%.%q.%4q");
    /* a batch script: %s is "batch", %J the job id alone */
    v.step_name = "batch";
    check_pattern("%s-%J-%3J", &v, "batch-7-007");
    /* a backslash turns the escapes off and goes */
    check_pattern("o\\%t-%j", &v, "o%t-%j");
    /* a width past any path: refused at once, nothing built */
    char *got = (char *)"untouched";
    assert_int_equal(stdpath_pattern_expand("%999999999999999999999t", NULL, &v,
                                           STDPATH_MAX - 1, &got),
                     TS_EPATH_TOOLONG);
    assert_null(got);

    /* srun's fill: the job's values; the node's escapes stay, widths and all, and a % in
     * an inserted name is no escape for the node */
    struct stdpath_values job = STDPATH_VALUES_INIT;
    job.job_id = 7;
    job.step_id = 3;
    job.user = "al";
    job.job_name = "a%tb";
    job.quote_inserted = 1;
    check_pattern("%x-%J-%3t-%2n-%N-%%", &job, "a%%tb-7.3-%3t-%2n-%N-%%");
    struct stdpath_values node = STDPATH_VALUES_INIT;
    node.task_id = 4;
    node.node_id = 0;
    node.host = "n1";
    node.final = 1;
    check_pattern("a%%tb-7.3-%3t-%2n-%N-%%", &node, "a%tb-7.3-004-00-n1-%");

    /* which patterns the nodes open */
    assert_true(stdpath_pattern_per_node("o.%t"));
    assert_true(stdpath_pattern_per_node("o.%3N"));
    assert_true(stdpath_pattern_per_node("o.%%%n"));
    assert_false(stdpath_pattern_per_node("o.%%t"));
    assert_false(stdpath_pattern_per_node("o.%j-%J"));
    assert_false(stdpath_pattern_per_node("o\\%t"));
    assert_true(stdpath_pattern_is_none("none"));
    assert_false(stdpath_pattern_is_none("none.out"));
}

/* "none" is /dev/null, as Slurm shows and opens it. */
static void test_path_none(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = het(&f, 1);

    (void)state;
    f.desc.std_out = (char *)"none";
    f.desc.std_in = (char *)"none";
    check_path(job, STDPATH_STDOUT, "/dev/null");
    check_path(job, STDPATH_STDERR, "/dev/null");
    check_file(job, STDPATH_STDIN, "n1", "/dev/null");
    /* the batch script's own escapes */
    f.desc.std_out = (char *)"o-%J-%s-%t-%n-%3t";
    check_file(job, STDPATH_STDOUT, "n1", "/tmp/o-2-batch-0-0-000");
    check_path(job, STDPATH_STDOUT, "/tmp/o-%J-%s-%t-%n-%3t");
}

static void test_path_expand_many_hosts(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = het(&f, 1);
    const char *host = "nodename0012"; /* 12 characters */

    (void)state;
    f.desc.work_dir = (char *)"/w";
    /* 300 %N: 3,600 bytes plus "/w/x" fits; every copy is there */
    char *pattern = repeat("%N", 300, "");
    char *full = malloc(strlen(pattern) + 2);
    assert_non_null(full);
    sprintf(full, "x%s", pattern);
    f.desc.std_out = full;
    char *expected = repeat(host, 300, "");
    char *with_dir = malloc(strlen(expected) + 5);
    assert_non_null(with_dir);
    sprintf(with_dir, "/w/x%s", expected);
    check_file(job, STDPATH_STDOUT, host, with_dir);
    /* scontrol's view keeps them */
    char *shown = malloc(strlen(full) + 4);
    assert_non_null(shown);
    sprintf(shown, "/w/%s", full);
    check_path(job, STDPATH_STDOUT, shown);
    free(pattern);
    free(full);
    free(expected);
    free(with_dir);
    free(shown);

    /* 400 %N: the attack; 4,800 bytes is past PATH_MAX, refused whole */
    pattern = repeat("%N", 400, "");
    f.desc.std_out = pattern;
    assert_int_equal(expand_err(job, STDPATH_STDOUT, host), TS_EPATH_TOOLONG);
    assert_int_equal(expand_err(job, STDPATH_STDERR, host), TS_EPATH_TOOLONG);
    /* the same pattern on a short host fits */
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_OK);
    free(pattern);

    /* one host name longer than PATH_MAX */
    char *long_host = repeat("h", STDPATH_MAX, "");
    f.desc.std_out = (char *)"%N";
    assert_int_equal(expand_err(job, STDPATH_STDOUT, long_host), TS_EPATH_TOOLONG);
    free(long_host);
}

static void test_path_expand_limits(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = het(&f, 1);

    (void)state;
    f.desc.work_dir = (char *)"/w";
    /* "/w/" plus the pattern: PATH_MAX - 1 bytes in all is the longest file name */
    char *fits = repeat("a", STDPATH_MAX - 1 - 3, "");
    f.desc.std_out = fits;
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_OK);
    char *over = repeat("a", STDPATH_MAX - 3, "");
    f.desc.std_out = over;
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_EPATH_TOOLONG);
    /* the pattern itself is limited even when its expansion is shorter ("%%" is "%") */
    char *percents = repeat("%%", STDPATH_MAX / 2, "");
    f.desc.std_out = percents;
    f.desc.work_dir = NULL;
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_EPATH_TOOLONG);
    percents[STDPATH_MAX - 2] = '\0'; /* 4094 bytes: 2047 percent signs */
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_OK);
    /* an absolute pattern ignores the work dir, however long that is */
    char *long_dir = repeat("d", STDPATH_MAX, "");
    f.desc.work_dir = long_dir;
    f.desc.std_out = (char *)"/abs/%j";
    check_file(job, STDPATH_STDOUT, "n", "/abs/2");
    f.desc.std_out = (char *)"rel";
    assert_int_equal(expand_err(job, STDPATH_STDOUT, "n"), TS_EPATH_TOOLONG);
    /* input and errors are checked the same way */
    f.desc.std_out = NULL;
    f.desc.std_in = (char *)"in";
    f.desc.std_err = (char *)"/e";
    assert_int_equal(expand_err(job, STDPATH_STDIN, "n"), TS_EPATH_TOOLONG);
    assert_int_equal(expand_err(job, STDPATH_STDERR, "n"), TS_OK);
    free(fits);
    free(over);
    free(percents);
    free(long_dir);
}

static void test_time_used(void **state)
{
    struct fx f;
    Tessera__JobRecord *job = running(&f);

    (void)state;
    assert_int_equal(jobtime_used(job, NOW), 118);
    /* resumed at 15:37:55 after 39 s: 39 + 10 s since */
    f.job.suspend_time = 1795361875;
    f.job.pre_suspend_secs = 39;
    assert_int_equal(jobtime_used(job, 1795361885), 49);
    f.job.state = TESSERA__JOB_STATE__JOB_SUSPENDED;
    assert_int_equal(jobtime_used(job, 1795361885), 39);
    /* ended: up to end_time, whatever now is */
    f.job.state = TESSERA__JOB_STATE__JOB_TIMEOUT;
    f.job.suspend_time = 0;
    f.job.end_time = T_RUN + 3600;
    assert_int_equal(jobtime_used(job, NOW + 99999), 3600);
    f.job.state = TESSERA__JOB_STATE__JOB_COMPLETING;
    assert_int_equal(jobtime_used(job, NOW + 99999), 3600);
    /* pending, or never started */
    f.job.state = TESSERA__JOB_STATE__JOB_PENDING;
    assert_int_equal(jobtime_used(job, NOW), 0);
    f.job.state = TESSERA__JOB_STATE__JOB_CANCELLED;
    f.job.start_time = 0;
    assert_int_equal(jobtime_used(job, NOW), 0);
    /* a clock that went backwards gives 0, not a negative time */
    f.job.state = TESSERA__JOB_STATE__JOB_RUNNING;
    f.job.start_time = NOW + 10;
    f.job.end_time = 0;
    assert_int_equal(jobtime_used(job, NOW), 0);
}

/* ---- scontrol show partition -------------------------------------------------------- */

static void init_partition(Tessera__PartitionInfo *p)
{
    Tessera__PartitionInfo init = TESSERA__PARTITION_INFO__INIT;

    *p = init;
    p->name = (char *)"debug";
    p->is_default = 1;
    p->nodes = (char *)"n[1-4]";
    p->total_nodes = 4;
    p->total_cpus = 16;
    p->max_time = 3600;
    p->default_time = -1;
    p->max_nodes = UINT32_MAX;
    p->min_nodes = 0;
    p->priority_tier = 1;
    p->state = (char *)"UP";
}

/* Slurm's text but for TRES, which has no mem=8000M: node memory is not in the record. */
static const char show_debug[] =
    "PartitionName=debug\n"
    "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
    "   AllocNodes=ALL Default=YES QoS=N/A\n"
    "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
    "   MaxNodes=UNLIMITED MaxTime=01:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
    "   Nodes=n[1-4]\n"
    "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
    "   OverTimeLimit=NONE PreemptMode=OFF\n"
    "   State=UP TotalCPUs=16 TotalNodes=4 SelectTypeParameters=NONE\n"
    "   JobDefaults=(null)\n"
    "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
    "   TRES=cpu=16,node=4,billing=16\n"
    "\n";

static void test_show_partition(void **state)
{
    Tessera__PartitionInfo p;
    char *got;

    (void)state;
    init_partition(&p);
    got = jobfmt_show_partition(&p, 0);
    assert_non_null(got);
    assert_string_equal(got, show_debug);
    free(got);

    p.is_default = 0;
    p.default_time = 1800;
    p.max_time = -1;
    p.max_nodes = 2;
    p.min_nodes = 1;
    p.priority_tier = 5;
    p.state = (char *)"DRAIN";
    p.name = (char *)"long";
    got = jobfmt_show_partition(&p, 1);
    assert_non_null(got);
    assert_string_equal(
        got, "PartitionName=long AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL "
             "AllocNodes=ALL Default=NO QoS=N/A DefaultTime=00:30:00 DisableRootJobs=NO "
             "ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes=2 MaxTime=UNLIMITED MinNodes=1 "
             "LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=n[1-4] PriorityJobFactor=1 PriorityTier=5 "
             "RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF "
             "State=DRAIN TotalCPUs=16 TotalNodes=4 SelectTypeParameters=NONE "
             "JobDefaults=(null) DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
             "TRES=cpu=16,node=4,billing=16\n");
    free(got);

    p.max_time = 2 * 86400 + 3 * 3600;
    got = jobfmt_show_partition(&p, 0);
    check_contains(got, "\n   MaxNodes=2 MaxTime=2-03:00:00 MinNodes=1 ");
    free(got);
}

/* ---- squeue --json ---------------------------------------------------------------- */

static json_t *parse_json(Tessera__JobRecord *const *jobs, size_t n, char **text)
{
    json_error_t err;
    json_t *root;

    *text = jobfmt_json(jobs, n, ctx);
    assert_non_null(*text);
    root = json_loads(*text, 0, &err);
    if (!root)
        fail_msg("not JSON: %s\n%s", err.text, *text);
    return root;
}

static void check_str(json_t *obj, const char *key, const char *expected)
{
    json_t *v = json_object_get(obj, key);

    if (!json_is_string(v))
        fail_msg("%s: not a string", key);
    assert_string_equal(json_string_value(v), expected);
}

static void check_int(json_t *obj, const char *key, json_int_t expected)
{
    json_t *v = json_object_get(obj, key);

    if (!json_is_integer(v))
        fail_msg("%s: not an integer", key);
    assert_int_equal(json_integer_value(v), expected);
}

static void test_json_meta(void **state)
{
    char *text;
    json_t *root = parse_json(NULL, 0, &text);
    json_t *slurm;

    (void)state;
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(root, "meta"), "plugin"), "type")),
                        "openapi/v0.0.38");
    slurm = json_object_get(json_object_get(root, "meta"), "Slurm");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(slurm, "version"),
                                                        "major")),
                     22);
    check_str(slurm, "release", "22.05.8");
    assert_true(json_is_array(json_object_get(root, "errors")));
    assert_int_equal(json_array_size(json_object_get(root, "errors")), 0);
    assert_true(json_is_array(json_object_get(root, "jobs")));
    assert_int_equal(json_array_size(json_object_get(root, "jobs")), 0);
    /* Slurm's writer escapes slashes */
    assert_non_null(strstr(text, "\"openapi\\/v0.0.38\""));
    assert_int_equal(text[strlen(text) - 1], '\n');
    json_decref(root);
    free(text);
}

static void test_json_plain(void **state)
{
    struct fx f;
    Tessera__JobRecord *jobs[] = {held_plain(&f)};
    char *text;
    json_t *root = parse_json(jobs, 1, &text);
    json_t *job = json_array_get(json_object_get(root, "jobs"), 0);

    (void)state;
    check_int(job, "job_id", 69);
    check_int(job, "het_job_id", 0);
    check_str(job, "het_job_id_set", "");
    check_int(job, "het_job_offset", 0);
    check_str(job, "name", "jf_plain");
    check_str(job, "user_name", "root");
    check_int(job, "user_id", 0);
    check_int(job, "group_id", 0);
    check_str(job, "group_name", "root");
    check_str(job, "account", "acct1");
    check_str(job, "partition", "debug");
    check_str(job, "job_state", "PENDING");
    check_str(job, "state_reason", "JobHeldUser");
    check_int(job, "priority", 0);
    check_int(job, "time_limit", 30);
    check_int(job, "submit_time", T_HELD);
    check_int(job, "start_time", 0);
    check_int(job, "end_time", 0);
    check_int(job, "node_count", 1);
    check_int(job, "cpus", 1);
    check_int(job, "tasks", 1);
    check_str(job, "nodes", "");
    check_str(job, "batch_host", "");
    check_str(job, "current_working_directory", "/tmp/jfx");
    check_str(job, "comment", "hello world");
    check_int(job, "memory_per_node", 100);
    assert_true(json_is_null(json_object_get(job, "memory_per_cpu")));
    check_int(job, "nice", 5);
    check_str(job, "required_nodes", "n2");
    check_str(job, "excluded_nodes", "n3");
    check_str(job, "standard_output", "out-%j-%u-%x-%A-%a-%N-%%.txt");
    check_str(job, "standard_error", "err-%j.log");
    check_str(job, "standard_input", "/dev/null");
    check_str(job, "tres_req_str", "cpu=1,mem=100M,node=1,billing=1");
    check_str(job, "tres_alloc_str", "");
    assert_true(json_is_true(json_object_get(job, "batch_flag")));
    assert_true(json_is_true(json_object_get(job, "requeue")));
    /* nothing Tessera cannot fill */
    assert_null(json_object_get(job, "command"));
    assert_null(json_object_get(job, "array_job_id"));
    assert_null(json_object_get(job, "cluster"));
    /* Slurm's key order */
    assert_true(strstr(text, "\"account\"") < strstr(text, "\"batch_flag\""));
    assert_true(strstr(text, "\"job_id\"") < strstr(text, "\"het_job_id\""));
    assert_true(strstr(text, "\"user_name\"") < strstr(text, "\"current_working_directory\""));
    json_decref(root);
    free(text);
}

/* A planned pending job's start and end, as Slurm's squeue --json shows job 560; an
 * unlimited one has no end (Slurm: a time 136 years on). */
static void test_json_planned(void **state)
{
    struct fx a, b, c;
    Tessera__JobRecord *jobs[] = {planned(&a), planned(&b), running(&c)};
    char *text;
    json_t *root, *list;

    (void)state;
    b.job.job_id = 71;
    b.job.time_limit = -1;
    c.job.expected_start = T_PLAN; /* not a pending job's: ignored */
    root = parse_json(jobs, 3, &text);
    list = json_object_get(root, "jobs");
    check_int(json_array_get(list, 0), "start_time", T_PLAN);
    check_int(json_array_get(list, 0), "end_time", T_PLAN + 1800);
    check_int(json_array_get(list, 1), "start_time", T_PLAN);
    check_int(json_array_get(list, 1), "end_time", 0);
    check_int(json_array_get(list, 2), "start_time", T_RUN);
    check_int(json_array_get(list, 2), "end_time", T_RUN + 3600);
    json_decref(root);
    free(text);
}

static void test_json_het_running(void **state)
{
    struct fx a, b, c;
    Tessera__JobRecord *jobs[] = {het(&a, 1), running(&b), unlimited(&c)};
    char *text;
    json_t *root = parse_json(jobs, 3, &text);
    json_t *list = json_object_get(root, "jobs");
    json_t *job;

    (void)state;
    assert_int_equal(json_array_size(list), 3);
    job = json_array_get(list, 0);
    check_int(job, "job_id", 2);
    check_int(job, "het_job_id", 1);
    check_str(job, "het_job_id_set", "1-2");
    check_int(job, "het_job_offset", 1);
    check_int(job, "node_count", 2);
    check_int(job, "cpus", 2);
    check_int(job, "cpus_per_task", 2);
    check_int(job, "minimum_cpus_per_node", 2);
    check_int(job, "time_limit", 60);

    job = json_array_get(list, 1);
    check_str(job, "job_state", "RUNNING");
    check_str(job, "nodes", "n2");
    check_str(job, "batch_host", "n2");
    check_int(job, "start_time", T_RUN);
    check_int(job, "priority", 4294901717);
    check_str(job, "tres_alloc_str", "cpu=3,mem=2000M,node=1,billing=3");
    assert_true(json_is_null(json_object_get(job, "memory_per_node")));

    job = json_array_get(list, 2);
    assert_true(json_is_null(json_object_get(job, "time_limit")));
    check_str(job, "dependency", "afterok:3");
    check_str(job, "state_reason", "Dependency");
    json_decref(root);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_format),
        cmocka_unit_test(test_percent_fields_times),
        cmocka_unit_test(test_percent_fields_requests),
        cmocka_unit_test(test_percent_fields_variants),
        cmocka_unit_test(test_unknown_ids),
        cmocka_unit_test(test_width_justify_truncate),
        cmocka_unit_test(test_bad_formats),
        cmocka_unit_test(test_fields_het),
        cmocka_unit_test(test_fields_default_width),
        cmocka_unit_test(test_fields_more),
        cmocka_unit_test(test_fields_widths),
        cmocka_unit_test(test_fields_streams),
        cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_sort_default),
        cmocka_unit_test(test_show_held),
        cmocka_unit_test(test_show_oneliner),
        cmocka_unit_test(test_show_het),
        cmocka_unit_test(test_show_running),
        cmocka_unit_test(test_show_suspended_completed),
        cmocka_unit_test(test_show_options),
        cmocka_unit_test(test_show_gres),
        cmocka_unit_test(test_show_planned),
        cmocka_unit_test(test_show_running_end),
        cmocka_unit_test(test_squeue_planned),
        cmocka_unit_test(test_squeue_start_format),
        cmocka_unit_test(test_sort_start),
        cmocka_unit_test(test_test_only),
        cmocka_unit_test(test_std_paths),
        cmocka_unit_test(test_path_expand_escapes),
        cmocka_unit_test(test_pattern_escapes_and_widths),
        cmocka_unit_test(test_path_none),
        cmocka_unit_test(test_path_expand_many_hosts),
        cmocka_unit_test(test_path_expand_limits),
        cmocka_unit_test(test_time_used),
        cmocka_unit_test(test_show_partition),
        cmocka_unit_test(test_json_meta),
        cmocka_unit_test(test_json_plain),
        cmocka_unit_test(test_json_planned),
        cmocka_unit_test(test_json_het_running),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
