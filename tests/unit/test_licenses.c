/* Licence requests: the forms sbatch and the controller accept, and every malformed or
 * out-of-bounds one they refuse (negative, zero, signed, spaced, huge counts; empty
 * items; too many or too long). */
#include "common/text/licenses.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_accepted(void **state)
{
    (void)state;
    static const char *const good[] = {
        "matlab", "matlab:2", "matlab:2,fluent", "a:1,b:100000,c", "fluent@db:3",
        "x_y-z.w:7", "matlab:007",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_int_equal(licenses_check(good[i]), TS_OK);
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "matlab:-5", "matlab:0", "matlab:+5", "matlab: 5", "matlab:5 ", "matlab:",
        "matlab:100001", "matlab:99999999999999999999999", "matlab:2x", ":2", "",
        ",", "matlab,", ",matlab", "matlab,,fluent", "mat lab", "matlab:2:3",
        "matlab;rm", "matlab|fluent", "matlab\n", "m\xc3\xa9", "matlab:1.5",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(licenses_check(bad[i]), TS_EINVALID_LICENSES);
    assert_int_equal(licenses_check(NULL), TS_EINVALID_LICENSES);
}

static void test_bounds(void **state)
{
    (void)state;
    char buf[LICENSES_MAX_LEN * 2];
    /* LICENSES_MAX_ITEMS items pass, one more does not */
    buf[0] = '\0';
    for (int i = 0; i < LICENSES_MAX_ITEMS; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%sl%d", i ? "," : "", i);
    assert_int_equal(licenses_check(buf), TS_OK);
    strcat(buf, ",extra");
    assert_int_equal(licenses_check(buf), TS_EINVALID_LICENSES);
    /* a name of LICENSES_MAX_NAME characters passes, one longer does not */
    memset(buf, 'n', LICENSES_MAX_NAME);
    buf[LICENSES_MAX_NAME] = '\0';
    assert_int_equal(licenses_check(buf), TS_OK);
    strcat(buf, "n");
    assert_int_equal(licenses_check(buf), TS_EINVALID_LICENSES);
    /* the whole request is bounded whatever its shape */
    memset(buf, 'n', sizeof(buf) - 1);
    buf[sizeof(buf) - 1] = '\0';
    for (size_t i = 10; i < sizeof(buf) - 1; i += 11)
        buf[i] = ',';
    assert_int_equal(licenses_check(buf), TS_EINVALID_LICENSES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
