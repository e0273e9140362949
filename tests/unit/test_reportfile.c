/* Unit tests for noded/reportfile.c: job and step reports written and read back, names,
 * the listing in order, and files that are not reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "noded/reportfile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static int dfd = -1;

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/test_reportfile.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    return dfd >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    close(dfd);
    return system(cmd) == 0 ? 0 : -1;
}

static void put_file(const char *name, const void *data, size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_round_trip(void **state)
{
    Tessera__AcctUsage u = TESSERA__ACCT_USAGE__INIT;
    u.user_usec = 12345;
    u.max_rss_node = (char *)"n1";
    Tessera__JobCompleteRequest job = TESSERA__JOB_COMPLETE_REQUEST__INIT;
    job.job_id = 93;
    job.node = (char *)"n1";
    job.status = 3 << 8;
    job.batch = 1;
    job.seq = 7;
    job.usage = &u;
    Tessera__StepCompleteRequest step = TESSERA__STEP_COMPLETE_REQUEST__INIT;
    step.job_id = 94;
    step.step_id = 2;
    step.node = (char *)"n1";
    step.status = 9;
    step.seq = 8;
    assert_int_equal(reportfile_write(dfd, 7, &job, NULL), TS_OK);
    assert_int_equal(reportfile_write(dfd, 8, NULL, &step), TS_OK);

    struct reportfile f;
    assert_int_equal(reportfile_read(dfd, 7, &f), TS_OK);
    assert_non_null(f.job);
    assert_null(f.step);
    assert_int_equal(f.job->job_id, 93);
    assert_int_equal(f.job->status, 3 << 8);
    assert_true(f.job->batch);
    assert_int_equal(f.job->usage->user_usec, 12345);
    assert_string_equal(f.job->usage->max_rss_node, "n1");
    reportfile_clear(&f);
    assert_int_equal(reportfile_read(dfd, 8, &f), TS_OK);
    assert_non_null(f.step);
    assert_int_equal(f.step->step_id, 2);
    assert_int_equal(f.step->status, 9);
    reportfile_clear(&f);

    reportfile_remove(dfd, 7);
    assert_int_equal(reportfile_read(dfd, 7, &f), TS_ENOENT);
}

static void test_names_and_order(void **state)
{
    uint64_t seq;
    assert_true(reportfile_parse_name("report.12", &seq));
    assert_int_equal(seq, 12);
    assert_false(reportfile_parse_name("report.", &seq));
    assert_false(reportfile_parse_name("report.12.tmp", &seq));
    assert_false(reportfile_parse_name("report.-1", &seq));
    assert_false(reportfile_parse_name("job.12", &seq));
    Tessera__StepCompleteRequest step = TESSERA__STEP_COMPLETE_REQUEST__INIT;
    uint64_t made[] = {30, 4, 1000, 200};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(reportfile_write(dfd, made[i], NULL, &step), TS_OK);
    put_file("report.5.tmp", "x", 1); /* a half-written one: not listed */
    uint64_t *seqs = NULL;
    size_t n = reportfile_list(dfd, 100, &seqs);
    assert_int_equal(n, 4);
    assert_int_equal(seqs[0], 4);
    assert_int_equal(seqs[1], 30);
    assert_int_equal(seqs[2], 200);
    assert_int_equal(seqs[3], 1000);
    free(seqs);
    n = reportfile_list(dfd, 2, &seqs); /* bounded */
    assert_int_equal(n, 2);
    free(seqs);
}

static void test_not_reports(void **state)
{
    struct reportfile f;
    put_file("report.1", "", 0);
    assert_int_equal(reportfile_read(dfd, 1, &f), TS_EDECODE);
    put_file("report.2", "Xabc", 4);
    assert_int_equal(reportfile_read(dfd, 2, &f), TS_EDECODE);
    put_file("report.3", "J\xff\xff\xff", 4);
    assert_int_equal(reportfile_read(dfd, 3, &f), TS_EDECODE);
    char *big = calloc(1, REPORTFILE_MAX_BYTES + 10);
    big[0] = 'J';
    put_file("report.4", big, REPORTFILE_MAX_BYTES + 10);
    free(big);
    assert_int_equal(reportfile_read(dfd, 4, &f), TS_EDECODE);
    char path[256];
    snprintf(path, sizeof(path), "%s/report.5", dir);
    assert_int_equal(symlink("/etc/passwd", path), 0);
    assert_int_equal(reportfile_read(dfd, 5, &f), TS_EDECODE);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_round_trip),
        T(test_names_and_order),
        T(test_not_reports),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
