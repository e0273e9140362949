/* The SWF reader: which fields it takes, estimates raised to run times, dropped records,
 * the header's machine size, malformed lines, and plain and gzip files alike. */
#include "contrib/sim/swf.h"

#include "common/util/errors.h"
#include "harness.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

/* Fields: id submit wait run alloc cpu mem req_procs req_time req_mem status user group
 * exe queue partition preceding think. */
static const char trace[] =
    "; Version: 2.2\n"
    "; MaxNodes: 64\n"
    "; MaxProcs: 128\n"
    ";\n"
    "   1   0  5  100  4 -1 -1  8  200 -1 1 12 3 -1 -1 -1 -1 -1\n"   /* field 8 wins */
    "   2  10  0   50  3 -1 -1 -1   60 -1 1 13 4 -1 -1 -1 -1 -1\n"   /* field 5 then */
    "   3  20  0  300  2 -1 -1  2  100 -1 0 -1 -1 -1 -1 -1 -1 -1\n"  /* estimate < run */
    "   4  30  0   40  1 -1 -1  1   -1 -1 1 14 4 -1 -1 -1 -1 -1\n"   /* no estimate */
    "   5  40  0    0  1 -1 -1  1   60 -1 0 14 4 -1 -1 -1 -1 -1\n"   /* no run time */
    "   6  50  0   -1  1 -1 -1  1   60 -1 5 14 4 -1 -1 -1 -1 -1\n"   /* unknown run time */
    "   7  60  0   10 -1 -1 -1 -1   60 -1 1 14 4 -1 -1 -1 -1 -1\n"   /* no size */
    "\n"
    "   8  70.4 0 0.3  1 1.5 -1  2.0 59.2 -1 1 15 4 -1 -1 -1 -1 -1"; /* fractions, no \n */

static void check_trace(const struct swf_trace *t)
{
    assert_int_equal(t->njobs, 5);
    assert_int_equal(t->dropped, 3);
    assert_int_equal(t->max_nodes, 64);
    assert_int_equal(t->max_procs, 128);
    const struct swf_job *j = t->jobs;
    assert_int_equal(j[0].id, 1);
    assert_int_equal(j[0].procs, 8);
    assert_int_equal(j[0].run, 100);
    assert_int_equal(j[0].estimate, 200);
    assert_int_equal(j[0].user, 12);
    assert_int_equal(j[0].group, 3);
    assert_int_equal(j[1].procs, 3);
    assert_int_equal(j[1].submit, 10);
    assert_int_equal(j[2].estimate, 300);
    assert_int_equal(j[2].user, -1);
    assert_int_equal(j[2].group, -1);
    assert_int_equal(j[3].estimate, 40);
    /* submit rounds, durations round up */
    assert_int_equal(j[4].id, 8);
    assert_int_equal(j[4].submit, 70);
    assert_int_equal(j[4].run, 1);
    assert_int_equal(j[4].estimate, 60);
    assert_int_equal(j[4].procs, 2);
    assert_int_equal(swf_machine_size(t), 64);
}

static void test_fields_and_drops(void **state)
{
    struct swf_trace *t = NULL;
    char err[256];
    assert_int_equal(swf_parse("t.swf", trace, &t, err, sizeof(err)), TS_OK);
    check_trace(t);
    swf_destroy(t);
}

static void test_machine_size(void **state)
{
    struct swf_trace *t = NULL;
    const char *procs_only = "; MaxProcs: 128\n"
                             "1 0 0 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n";
    assert_int_equal(swf_parse("p", procs_only, &t, NULL, 0), TS_OK);
    assert_int_equal(swf_machine_size(t), 128);
    swf_destroy(t);
    /* no header: the largest job; a malformed header value is only a note */
    const char *none = "; MaxNodes: many\n"
                       "1 0 0 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
                       "2 0 0 10 9 -1 -1 -1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
                       "3 0 0 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n";
    assert_int_equal(swf_parse("n", none, &t, NULL, 0), TS_OK);
    assert_int_equal(t->max_nodes, 0);
    assert_int_equal(swf_machine_size(t), 9);
    swf_destroy(t);
    assert_int_equal(swf_parse("e", "; nothing\n", &t, NULL, 0), TS_OK);
    assert_int_equal(t->njobs, 0);
    assert_int_equal(swf_machine_size(t), 0);
    swf_destroy(t);
}

static void expect_error(const char *text, const char *message)
{
    struct swf_trace *t = (struct swf_trace *)1;
    char err[256];
    assert_int_equal(swf_parse("bad.swf", text, &t, err, sizeof(err)), TS_EINVAL);
    assert_null(t);
    assert_string_equal(err, message);
}

static void test_malformed(void **state)
{
    expect_error("; h\n1 0 0 10 4 -1 -1 4 10 -1 1 1 1\n",
                 "bad.swf:2: expected 18 fields, found 13");
    expect_error("1 0 0 10 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1 7\n",
                 "bad.swf:1: more than 18 fields");
    expect_error("1 0 0 1x 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
                 "bad.swf:1: a field is not a number");
    expect_error("1 0 0 nan 4 -1 -1 4 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
                 "bad.swf:1: a field is not a number");
    expect_error("1 0 0 10 4 -1 -1 5e9 10 -1 1 1 1 -1 -1 -1 -1 -1\n",
                 "bad.swf:1: job id or processor count out of range");
    char longline[5000];
    memset(longline, '1', sizeof(longline) - 1);
    longline[sizeof(longline) - 1] = '\0';
    expect_error(longline, "bad.swf:1: line too long");
}

/* The same trace from a plain file and from a gzip file written with zlib. */
static void test_files(void **state)
{
    char dir[PATH_MAX], plain[PATH_MAX + 16], gz[PATH_MAX + 16], err[512];
    assert_int_equal(harness_tmpdir("swf", dir, sizeof(dir)), 0);
    snprintf(plain, sizeof(plain), "%s/t.swf", dir);
    snprintf(gz, sizeof(gz), "%s/t.swf.gz", dir);
    assert_int_equal(harness_write_file(plain, trace, 0644), 0);
    gzFile f = gzopen(gz, "wb");
    assert_non_null(f);
    assert_int_equal(gzwrite(f, trace, (unsigned)strlen(trace)), (int)strlen(trace));
    assert_int_equal(gzclose(f), Z_OK);

    struct swf_trace *t = NULL;
    assert_int_equal(swf_read(plain, &t, err, sizeof(err)), TS_OK);
    check_trace(t);
    swf_destroy(t);
    assert_int_equal(swf_read(gz, &t, err, sizeof(err)), TS_OK);
    check_trace(t);
    swf_destroy(t);

    /* a truncated gzip stream is an error, not a shorter trace */
    char cut[PATH_MAX + 16];
    snprintf(cut, sizeof(cut), "%s/cut.swf.gz", dir);
    FILE *src = fopen(gz, "rb"), *dst = fopen(cut, "wb");
    assert_non_null(src);
    assert_non_null(dst);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf), src);
    assert_int_equal(fwrite(buf, 1, n - 12, dst), n - 12);
    fclose(src);
    fclose(dst);
    assert_int_equal(swf_read(cut, &t, err, sizeof(err)), TS_ESYS);
    assert_null(t);

    char missing[PATH_MAX + 16];
    snprintf(missing, sizeof(missing), "%s/none.swf", dir);
    assert_int_equal(swf_read(missing, &t, err, sizeof(err)), TS_ENOENT);
    assert_non_null(strstr(err, "none.swf"));
    assert_int_equal(harness_rmrf(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_and_drops),
        cmocka_unit_test(test_machine_size),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
