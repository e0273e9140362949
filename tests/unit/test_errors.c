/* Error codes: stable numbers and texts, unknown codes. */
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_stable_numbers_and_texts(void **state)
{
    /* numbers travel on the wire: these must never change */
    assert_int_equal(TS_OK, 0);
    assert_int_equal(TS_EFRAME_TOOBIG, 200);
    assert_int_equal(TS_EAUTH_HMAC, 306);
    assert_int_equal(TS_EINVALID_JOB_ID, 1000);
    assert_string_equal(ts_strerror(TS_OK), "Success");
    assert_string_equal(ts_strerror(TS_EPERM), "Access/permission denied");
    assert_string_equal(ts_strerror(TS_EINVALID_JOB_ID), "Invalid job id specified");
    assert_string_equal(ts_strerror(TS_EVERSION), "Protocol version mismatch");
}

static int seen_codes[2048];

static void check(int code, const char *text)
{
    assert_true(code >= 0 && code < 2048);
    assert_int_equal(seen_codes[code], 0); /* no number used twice */
    seen_codes[code] = 1;
    assert_true(ts_err_known(code));
    assert_string_equal(ts_strerror(code), text);
    assert_true(strlen(text) > 0);
}

static void test_every_code(void **state)
{
#define CHECK(name, num, text) check(num, text);
    TS_ERRORS(CHECK)
#undef CHECK
}

static void test_unknown(void **state)
{
    assert_false(ts_err_known(99999));
    assert_string_equal(ts_strerror(99999), "Unknown error 99999");
    assert_string_equal(ts_strerror(-1), "Unknown error -1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stable_numbers_and_texts),
        cmocka_unit_test(test_every_code),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
