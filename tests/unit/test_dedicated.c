/* Unit tests for dedicated time periods (common/sched/dedicated.c): the source's example file,
 * inside and next-start queries, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/dedicated.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static time_t at(int year, int mon, int day, int hour, int min)
{
    struct tm tm = {.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day, .tm_hour = hour,
                    .tm_min = min, .tm_isdst = -1};
    return mktime(&tm);
}

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

static void test_source_example(void **state)
{
    (void)state;
    struct dedicated d;
    char err[256], path[512];
    snprintf(path, sizeof(path), "%s/contrib/policy/dedicated_time", TESSERA_SOURCE_DIR);
    if (dedicated_load(path, &d, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    assert_int_equal(d.n, 3);
    assert_false(dedicated_inside(&d, at(1998, 4, 10, 15, 29)));
    assert_true(dedicated_inside(&d, at(1998, 4, 10, 15, 30)));
    assert_true(dedicated_inside(&d, at(1998, 4, 11, 23, 49)));
    assert_false(dedicated_inside(&d, at(1998, 4, 11, 23, 50))); /* the end is outside */
    assert_int_equal(dedicated_next_start(&d, at(1998, 4, 1, 0, 0)), at(1998, 4, 10, 15, 30));
    assert_int_equal(dedicated_next_start(&d, at(1998, 4, 12, 0, 0)), at(1998, 5, 15, 5, 15));
    assert_int_equal(dedicated_next_start(&d, at(1998, 7, 1, 0, 0)), 0);
}

static void test_errors(void **state)
{
    (void)state;
    struct dedicated d;
    char err[256];
    const char *want = "f:2: a period is \"MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM\", start before end";
    const char *bad[] = {"# c\n04/10/1998 15:30\n", "# c\n04/10/1998 15:30 04/10/1998 15:30\n",
                         "# c\n02/31/1998 10:00 03/01/1998 10:00\n",
                         "# c\n04/10/1998 25:00 04/11/1998 10:00\n",
                         "# c\n04/10/1998 15:30 04/11/1998 10:00 extra\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(dedicated_parse(bad[i], "f", &d, err, sizeof(err)), TS_ECONF);
        assert_string_equal(err, want);
    }
    assert_int_equal(dedicated_parse("", "f", &d, err, sizeof(err)), TS_OK);
    assert_int_equal(d.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_example),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
