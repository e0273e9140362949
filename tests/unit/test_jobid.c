/* Job id parsing: plain ids, "+" forms, and everything that is not an id. */
#include "common/job/jobid.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_good(void **state)
{
    struct jobid j;
    assert_int_equal(jobid_parse("93", &j), TS_OK);
    assert_int_equal(j.id, 93);
    assert_false(j.has_offset);
    assert_int_equal(jobid_parse("93+0", &j), TS_OK);
    assert_true(j.has_offset);
    assert_int_equal(j.offset, 0);
    assert_int_equal(jobid_parse("123+4", &j), TS_OK);
    assert_int_equal(j.id, 123);
    assert_int_equal(j.offset, 4);
    assert_int_equal(jobid_parse("2147483647", &j), TS_OK);
}

static void test_bad(void **state)
{
    static const char *const bad[] = {"", "0", "abc", "93+", "+1", "93+x", "93+1+2", "-5",
                                      "93 ", " 93", "2147483648", "99999999999999999999",
                                      "93.0", "9_3", "93+-1"};
    struct jobid j;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(jobid_parse(bad[i], &j), TS_EINVALID_JOB_ID);
    assert_int_equal(jobid_parse(NULL, &j), TS_EINVALID_JOB_ID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_good), cmocka_unit_test(test_bad)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
