/* Unit tests for common/acctfmt: sacct's default layout (docs/06-sacct.md §2.4's het job 67767 with
 * a batch step and a step 0 over both components), -p/-P, -o lists, the field formatters,
 * --json's shape, the order of steps and the step part of -j. Times are UTC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/acctfmt.h"
#include "common/format/jobfmt.h"
#include "common/util/errors.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOW ((time_t)1795361783)    /* 2026-11-22T15:36:23Z */
#define T_SUB ((int64_t)1795361659) /* 15:34:19 */
#define T_RUN ((int64_t)1795361665) /* 15:34:25 */
#define T_END ((int64_t)1795361725) /* 15:35:25 */
#define BATCH ACCTFMT_STEP_BATCH

static Tessera__AcctJob comp0, comp1, plain;
static Tessera__AcctStep s_batch, s0_c0, s0_c1, s1_c0;
static Tessera__AcctUsage u_batch, u_step;
static struct jobfmt_ctx *ctx;

static void make_job(Tessera__AcctJob *j, uint32_t id, uint32_t het, uint32_t off, uint32_t cpus)
{
    tessera__acct_job__init(j);
    j->job_id = id;
    j->het_job_id = het;
    j->het_job_offset = off;
    j->name = (char *)"foo";
    j->user_id = 0;
    j->group_id = 0;
    j->account = (char *)"test";
    j->partition = (char *)"debug";
    j->qos = (char *)"normal";
    j->submit_time = j->eligible_time = T_SUB;
    j->start_time = T_RUN;
    j->end_time = T_END;
    j->time_limit = 3600;
    j->alloc_cpus = j->req_cpus = cpus;
    j->alloc_mem_mb = 1000;
    j->req_mem_mb = 500;
    j->req_mem_per_cpu = 1;
    j->alloc_nodes = j->req_nodes = 1;
    j->nodes = (char *)"n1";
    j->state = TESSERA__JOB_STATE__JOB_COMPLETED;
    j->cluster = (char *)"tessera";
    j->work_dir = (char *)"/home/u";
}

static void make_step(Tessera__AcctStep *s, const Tessera__AcctJob *j, uint32_t step,
                      const char *name, Tessera__AcctUsage *u)
{
    tessera__acct_step__init(s);
    s->job_id = j->job_id;
    s->step_id = step;
    s->het_job_id = j->het_job_id;
    s->het_job_offset = j->het_job_offset;
    s->name = (char *)name;
    s->state = TESSERA__JOB_STATE__JOB_COMPLETED;
    s->start_time = T_RUN + 1;
    s->end_time = T_END - 1;
    s->nodes = (char *)"n1";
    s->nnodes = 1;
    s->ntasks = 1;
    s->cpus = j->alloc_cpus;
    s->usage = u;
}

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    make_job(&comp0, 67767, 67767, 0, 2);
    make_job(&comp1, 67768, 67767, 1, 4);
    make_job(&plain, 70000, 0, 0, 1);
    tessera__acct_usage__init(&u_batch);
    u_batch.user_usec = 1500000; /* 1.5 s */
    u_batch.sys_usec = 250000;
    u_batch.max_rss_kb = 2144;
    u_batch.max_rss_node = (char *)"n1";
    tessera__acct_usage__init(&u_step);
    u_step.user_usec = 3600000000ull; /* one hour */
    u_step.sys_usec = 0;
    u_step.max_rss_kb = 4096;
    u_step.max_rss_node = (char *)"n2";
    u_step.max_rss_task = 3;
    make_step(&s_batch, &comp0, BATCH, "batch", &u_batch);
    make_step(&s0_c0, &comp0, 0, "hostname", &u_step);
    make_step(&s0_c1, &comp1, 0, "hostname", NULL);
    make_step(&s1_c0, &comp0, 1, "sleep", NULL);
    s1_c0.exit_code = 2 << 8;
    ctx = jobfmt_ctx_create(NOW);
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    jobfmt_ctx_destroy(ctx);
    return 0;
}

/* The rows of the het job: steps in the controller's order (batch last). */
static void het_rows(struct acctfmt_rows *rows, const struct acctfmt_sel *sel, int no_steps)
{
    Tessera__AcctJob *jobs[] = {&comp0, &comp1};
    Tessera__AcctStep *steps[] = {&s0_c0, &s1_c0, &s_batch, &s0_c1};

    assert_int_equal(acctfmt_rows_build(jobs, 2, steps, 4, sel, no_steps, rows), TS_OK);
}

static char *render(const char *list, enum acctfmt_mode mode, const struct acctfmt_rows *rows)
{
    struct acctfmt *fmt = NULL;
    char err[128];
    size_t cap = 8192, len = 0;
    char *out = calloc(1, cap);

    assert_int_equal(acctfmt_compile(list, &fmt, err, sizeof(err)), TS_OK);
    char *h = acctfmt_header(fmt, mode);
    len += (size_t)snprintf(out + len, cap - len, "%s", h);
    free(h);
    for (size_t i = 0; i < rows->n; i++) {
        char *line = acctfmt_line(fmt, mode, &rows->rows[i], ctx);
        len += (size_t)snprintf(out + len, cap - len, "%s", line);
        free(line);
    }
    acctfmt_free(fmt);
    return out;
}

static void test_default_layout(void **state)
{
    struct acctfmt_rows rows;
    (void)state;
    comp1.state = TESSERA__JOB_STATE__JOB_CANCELLED;
    comp1.cancel_uid = 1000;
    het_rows(&rows, NULL, 0);
    char *out = render(ACCTFMT_DEFAULT, ACCTFMT_FIXED, &rows);
    assert_string_equal(out,
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
        "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
        "67767+0             foo      debug       test          2  COMPLETED      0:0 \n"
        "67767+0.bat+      batch                  test          2  COMPLETED      0:0 \n"
        "67767+0.0      hostname                  test          2  COMPLETED      0:0 \n"
        "67767+0.1         sleep                  test          2  COMPLETED      2:0 \n"
        "67767+1             foo      debug       test          4 CANCELLED+      0:0 \n"
        "67767+1.0      hostname                  test          4  COMPLETED      0:0 \n");
    free(out);
    acctfmt_rows_free(&rows);
    comp1.state = TESSERA__JOB_STATE__JOB_COMPLETED;
}

static void test_parsable(void **state)
{
    struct acctfmt_rows rows;
    (void)state;
    het_rows(&rows, NULL, 1);
    char *p = render("JobID,JobIDRaw,State", ACCTFMT_PARSABLE, &rows);
    assert_string_equal(p, "JobID|JobIDRaw|State|\n"
                           "67767+0|67767|COMPLETED|\n"
                           "67767+1|67768|COMPLETED|\n");
    char *p2 = render("JobID,JobIDRaw,State", ACCTFMT_PARSABLE2, &rows);
    assert_string_equal(p2, "JobID|JobIDRaw|State\n"
                            "67767+0|67767|COMPLETED\n"
                            "67767+1|67768|COMPLETED\n");
    free(p);
    free(p2);
    acctfmt_rows_free(&rows);
}

static void test_compile(void **state)
{
    struct acctfmt *fmt = NULL;
    struct acctfmt_rows rows;
    char err[128];
    (void)state;

    assert_int_equal(acctfmt_compile("jobid,Foo", &fmt, err, sizeof(err)), TS_EOPTVALUE);
    assert_string_equal(err, "Invalid field requested: \"Foo\"");
    assert_int_equal(acctfmt_compile(" , ", &fmt, err, sizeof(err)), TS_EOPTVALUE);
    het_rows(&rows, NULL, 1);
    /* prefixes, case, widths: positive right-justifies, negative left-justifies */
    char *out = render("jobid%15,jobn%-6,alloc,state%4", ACCTFMT_FIXED, &rows);
    assert_string_equal(out, "          JobID JobNam  AllocCPUS Stat \n"
                             "--------------- ------ ---------- ---- \n"
                             "        67767+0 foo             2 COM+ \n"
                             "        67767+1 foo             4 COM+ \n");
    free(out);
    acctfmt_rows_free(&rows);
    assert_int_equal(acctfmt_compile("ALL", &fmt, err, sizeof(err)), TS_OK);
    char *h = acctfmt_header(fmt, ACCTFMT_PARSABLE2);
    assert_non_null(strstr(h, "Account|AdminComment|AllocCPUS|"));
    assert_non_null(strstr(h, "|WorkDir|HetJobID|HetJobOffset\n"));
    free(h);
    acctfmt_free(fmt);
    char *help = acctfmt_helpformat();
    assert_memory_equal(help, "Account             AdminComment        AllocCPUS           AllocNodes         \n", 80);
    free(help);
}

static void value(const char *field, const Tessera__AcctJob *job, const Tessera__AcctStep *step,
                  const char *expected)
{
    const Tessera__AcctStep *steps[] = {&s_batch, &s0_c0, &s1_c0};
    struct acctfmt_row row = {job, step, steps, step ? 0 : 3};
    char buf[256];

    assert_int_equal(acctfmt_value(field, &row, ctx, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, expected);
}

static void test_formatters(void **state)
{
    char buf[64];
    (void)state;

    acctfmt_cpu_time(1750000, buf, sizeof(buf));
    assert_string_equal(buf, "00:01.750");
    acctfmt_cpu_time(61000000, buf, sizeof(buf));
    assert_string_equal(buf, "00:01:01");
    acctfmt_cpu_time(3723000000ull, buf, sizeof(buf));
    assert_string_equal(buf, "01:02:03");
    acctfmt_cpu_time(90061000000ull, buf, sizeof(buf));
    assert_string_equal(buf, "1-01:01:01");
    acctfmt_size_kb(2144, buf, sizeof(buf));
    assert_string_equal(buf, "2144K");
    acctfmt_size_kb(4096, buf, sizeof(buf));
    assert_string_equal(buf, "4M");
    acctfmt_size_kb(0, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    acctfmt_exit_code(9, buf, sizeof(buf));
    assert_string_equal(buf, "0:9");
    acctfmt_exit_code(137 << 8, buf, sizeof(buf));
    assert_string_equal(buf, "9:0");

    value("Start", &comp0, NULL, "2026-11-22T15:34:25");
    value("End", &comp0, &s0_c1, "2026-11-22T15:35:24");
    value("Elapsed", &comp0, NULL, "00:01:00");
    value("ElapsedRaw", &comp0, NULL, "60");
    value("CPUTime", &comp0, NULL, "00:02:00");
    value("CPUTimeRAW", &comp0, NULL, "120");
    value("TotalCPU", &comp0, NULL, "01:00:01");  /* batch 1.75 s + step 0's hour */
    value("UserCPU", &comp0, &s_batch, "00:01.500");
    value("SystemCPU", &comp0, &s_batch, "00:00.250");
    value("MaxRSS", &comp0, &s_batch, "2144K");
    value("MaxRSS", &comp0, NULL, "");
    value("MaxRSSNode", &comp0, &s0_c0, "n2");
    value("MaxRSSTask", &comp0, &s0_c0, "3");
    value("DerivedExitCode", &comp0, NULL, "2:0");
    value("Timelimit", &comp0, NULL, "01:00:00");
    value("TimelimitRaw", &comp0, NULL, "60");
    value("ReqMem", &comp0, NULL, "1000M"); /* 500 MB per CPU, 2 CPUs */
    value("AllocTRES", &comp0, NULL, "billing=2,cpu=2,mem=1000M,node=1");
    value("Partition", &comp0, &s_batch, "");
    value("Account", &comp0, &s_batch, "test");
    value("User", &comp0, NULL, "root");
    value("Group", &comp0, NULL, "root");
    value("HetJobID", &comp1, NULL, "67767");
    value("HetJobOffset", &comp1, NULL, "1");
    value("HetJobID", &plain, NULL, "");
    value("JobIDRaw", &comp1, &s0_c1, "67768.0");
    value("Reason", &comp0, NULL, "None");
    value("Suspended", &comp0, NULL, "00:00:00");

    Tessera__AcctJob pend = plain;
    pend.start_time = pend.end_time = 0;
    pend.nodes = (char *)"";
    pend.time_limit = -1;
    pend.state = TESSERA__JOB_STATE__JOB_PENDING;
    value("NodeList", &pend, NULL, "None assigned");
    value("Start", &pend, NULL, "Unknown");
    value("Elapsed", &pend, NULL, "00:00:00");
    value("Timelimit", &pend, NULL, "UNLIMITED");
    value("State", &pend, NULL, "PENDING");
    Tessera__AcctJob run = plain;
    run.end_time = 0;
    run.state = TESSERA__JOB_STATE__JOB_RUNNING;
    value("End", &run, NULL, "Unknown");
    value("Elapsed", &run, NULL, "00:01:58"); /* now - start */
    run.time_limit = 0;
    value("Timelimit", &run, NULL, "Partition_Limit");
}

static void test_step_order(void **state)
{
    struct acctfmt_rows rows;
    char id[48];
    const char *want[] = {"67767+0", "67767+0.batch", "67767+0.0", "67767+0.1", "67767+1",
                          "67767+1.0"};
    (void)state;
    het_rows(&rows, NULL, 0);
    assert_int_equal(rows.n, 6);
    for (size_t i = 0; i < rows.n; i++) {
        acctfmt_job_id(rows.rows[i].job, rows.rows[i].step, 0, id, sizeof(id));
        assert_string_equal(id, want[i]);
    }
    acctfmt_rows_free(&rows);
}

static size_t select_rows(char **items, size_t n, int whole, const char **ids)
{
    struct acctfmt_sel *sel = NULL;
    struct acctfmt_rows rows;
    const char *bad = NULL;
    char id[48];
    size_t count;

    assert_int_equal(acctfmt_sel_parse(items, n, whole, &sel, &bad), TS_OK);
    het_rows(&rows, sel, 0);
    for (size_t i = 0; i < rows.n; i++) {
        acctfmt_job_id(rows.rows[i].job, rows.rows[i].step, 0, id, sizeof(id));
        assert_string_equal(id, ids[i]);
    }
    count = rows.n;
    acctfmt_rows_free(&rows);
    acctfmt_sel_free(sel);
    return count;
}

static void test_step_selection(void **state)
{
    (void)state;
    char *a[] = {(char *)"67767.0"};
    const char *a_ids[] = {"67767+0.0", "67767+1.0"};
    assert_int_equal(select_rows(a, 1, 0, a_ids), 2);
    char *b[] = {(char *)"67767+1.0"};
    const char *b_ids[] = {"67767+1.0"};
    assert_int_equal(select_rows(b, 1, 0, b_ids), 1);
    char *c[] = {(char *)"67767+0.batch", (char *)"67768"};
    const char *c_ids[] = {"67767+0.batch", "67767+1", "67767+1.0"};
    assert_int_equal(select_rows(c, 2, 0, c_ids), 3);
    char *d[] = {(char *)"67767"};
    assert_int_equal(select_rows(d, 1, 0, (const char *[]){"67767+0", "67767+0.batch",
                                                          "67767+0.0", "67767+0.1", "67767+1",
                                                          "67767+1.0"}),
                     6);

    struct acctfmt_sel *sel = NULL;
    const char *bad = NULL;
    char *e[] = {(char *)"93", (char *)"93.x"};
    assert_int_equal(acctfmt_sel_parse(e, 2, 0, &sel, &bad), TS_EINVALID_JOB_ID);
    assert_string_equal(bad, "93.x");
    char *f[] = {(char *)"abc"};
    assert_int_equal(acctfmt_sel_parse(f, 1, 0, &sel, &bad), TS_EINVALID_JOB_ID);
    char *g[] = {(char *)"93+1.batch", (char *)"94.12"};
    assert_int_equal(acctfmt_sel_parse(g, 2, 0, &sel, &bad), TS_OK);
    acctfmt_sel_free(sel);
}

static void test_json(void **state)
{
    struct acctfmt_rows rows;
    json_error_t jerr;
    (void)state;
    het_rows(&rows, NULL, 0);
    char *doc = acctfmt_json(&rows, ctx);
    json_t *root = json_loads(doc, 0, &jerr);
    assert_non_null(root);
    assert_non_null(json_object_get(root, "meta"));
    assert_int_equal(json_array_size(json_object_get(root, "errors")), 0);
    json_t *jobs = json_object_get(root, "jobs");
    assert_int_equal(json_array_size(jobs), 2);
    json_t *j1 = json_array_get(jobs, 1);
    assert_int_equal(json_integer_value(json_object_get(j1, "job_id")), 67768);
    json_t *het = json_object_get(j1, "het");
    assert_int_equal(json_integer_value(json_object_get(het, "job_id")), 67767);
    assert_int_equal(json_integer_value(json_object_get(het, "job_offset")), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j1, "state"), "current")),
                        "COMPLETED");
    json_t *t = json_object_get(json_array_get(jobs, 0), "time");
    assert_int_equal(json_integer_value(json_object_get(t, "elapsed")), 60);
    assert_int_equal(json_integer_value(json_object_get(t, "limit")), 60);
    assert_non_null(json_object_get(json_object_get(t, "total"), "microseconds"));
    json_t *steps = json_object_get(json_array_get(jobs, 0), "steps");
    assert_int_equal(json_array_size(steps), 3);
    json_t *st = json_object_get(json_array_get(steps, 0), "step");
    assert_string_equal(json_string_value(json_object_get(st, "name")), "batch");
    assert_string_equal(json_string_value(json_object_get(st, "id")), "67767.batch");
    json_t *ec = json_object_get(json_array_get(steps, 2), "exit_code");
    assert_string_equal(json_string_value(json_object_get(ec, "status")), "FAILED");
    assert_int_equal(json_integer_value(json_object_get(ec, "return_code")), 2);
    for (const char *const *k = (const char *const[]){"account", "user", "group", "partition",
                                                     "qos", "nodes", "allocation_nodes",
                                                     "required", "priority", "cluster",
                                                     "working_directory", "exit_code", NULL};
         *k; k++)
        assert_non_null(json_object_get(j1, *k));
    json_decref(root);
    free(doc);
    acctfmt_rows_free(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_layout), cmocka_unit_test(test_parsable),
        cmocka_unit_test(test_compile),        cmocka_unit_test(test_formatters),
        cmocka_unit_test(test_step_order),     cmocka_unit_test(test_step_selection),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
