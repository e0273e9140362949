/* Unit tests for prime and non-prime time (common/sched/holidays.c): the source's example file,
 * day kinds, holidays of the file's year only, prime time across midnight, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/holidays.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Local time (the tests run in UTC) as Unix seconds. */
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
    struct holidays h;
    char err[256], path[512];
    snprintf(path, sizeof(path), "%s/contrib/policy/holidays", TESSERA_SOURCE_DIR);
    if (holidays_load(path, &h, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    assert_int_equal(h.year, 1998);
    assert_int_equal(h.prime[0], 4 * 60);
    assert_int_equal(h.non_prime[0], 11 * 60 + 30);
    assert_int_equal(h.prime[1], HOLIDAYS_NONE);
    assert_int_equal(h.non_prime[2], HOLIDAYS_ALL);
    assert_true(h.holiday[1] && h.holiday[359] && !h.holiday[2]);
    /* Friday 2 January 1998: prime from 04:00 until 11:30 */
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 3, 59)), POLICY_NON_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 4, 0)), POLICY_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 11, 29)), POLICY_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 11, 30)), POLICY_NON_PRIME);
    /* Saturday and Sunday: non-prime all day */
    assert_int_equal(holidays_period(&h, at(1998, 1, 3, 9, 0)), POLICY_NON_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 4, 9, 0)), POLICY_NON_PRIME);
    /* New Year's Day 1998, a Thursday: a holiday; in 1999 (a Friday) the file's holidays
     * do not count */
    assert_int_equal(holidays_period(&h, at(1998, 1, 1, 9, 0)), POLICY_NON_PRIME);
    assert_int_equal(holidays_period(&h, at(1999, 1, 1, 9, 0)), POLICY_PRIME);
}

static void test_other_forms(void **state)
{
    (void)state;
    struct holidays h;
    char err[256];
    assert_int_equal(holidays_parse("weekday 2200 0600\nsaturday all none\n", "h", &h, err,
                                    sizeof(err)),
                     TS_OK);
    /* prime across midnight */
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 23, 0)), POLICY_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 3, 0)), POLICY_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 2, 12, 0)), POLICY_NON_PRIME);
    assert_int_equal(holidays_period(&h, at(1998, 1, 3, 12, 0)), POLICY_PRIME);
    /* a kind of day without a line is prime all day */
    assert_int_equal(holidays_period(&h, at(1998, 1, 4, 12, 0)), POLICY_PRIME);
    assert_int_equal(holidays_parse("* c\nYEAR nineteen\n", "h", &h, err, sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "h:2: YEAR needs a year, not 'nineteen'");
    assert_int_equal(holidays_parse("weekday 0400\n", "h", &h, err, sizeof(err)), TS_ECONF);
    assert_string_equal(err, "h:1: weekday needs a prime and a non-prime start (HHMM, all or none)");
    assert_int_equal(holidays_parse("sunday 2500 none\n", "h", &h, err, sizeof(err)), TS_ECONF);
    assert_int_equal(holidays_parse("400 Feb 31 Nope\n", "h", &h, err, sizeof(err)), TS_ECONF);
    assert_string_equal(err, "h:1: '400' is neither YEAR, a kind of day nor a day of the year");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_example),
        cmocka_unit_test(test_other_forms),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
