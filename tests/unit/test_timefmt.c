/* Unit tests for common/timefmt: durations and timestamps.
 *
 * Timestamps are checked in UTC (set before every test) with a fixed "now", so the
 * expected values are plain numbers; one test runs in Europe/Berlin to check that local
 * time, including a daylight saving change, is honoured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Tuesday 2024-03-05T10:20:30Z */
#define NOW ((time_t)1709634030)
#define TODAY_UTC ((time_t)1709596800) /* 2024-03-05T00:00:00Z */
#define DAY 86400

static void set_tz(const char *tz)
{
    assert_int_equal(setenv("TZ", tz, 1), 0);
    tzset();
}

static int utc_setup(void **state)
{
    (void)state;
    set_tz("UTC");
    return 0;
}

static void check_duration(const char *in, int64_t expected)
{
    int64_t secs = -12345;

    print_message("duration \"%s\"\n", in);
    assert_int_equal(timefmt_parse_duration(in, &secs), TS_OK);
    assert_int_equal(secs, expected);
}

static void check_duration_bad(const char *in)
{
    int64_t secs = -12345;

    print_message("bad duration \"%s\"\n", in ? in : "(null)");
    assert_int_equal(timefmt_parse_duration(in, &secs), TS_ETIMEFMT);
    assert_int_equal(secs, -12345); /* untouched */
}

static void check_stamp(const char *in, time_t now, time_t expected)
{
    time_t t = 0;

    print_message("timestamp \"%s\"\n", in);
    assert_int_equal(timefmt_parse_timestamp(in, now, &t), TS_OK);
    assert_int_equal(t, expected);
}

static void check_stamp_bad(const char *in)
{
    time_t t = 777;

    print_message("bad timestamp \"%s\"\n", in ? in : "(null)");
    assert_int_equal(timefmt_parse_timestamp(in, NOW, &t), TS_ETIMEFMT);
    assert_int_equal(t, 777);
}

static void check_text(int (*fmt)(int64_t, char *, size_t), int64_t secs, const char *expected)
{
    char buf[32];

    assert_int_equal(fmt(secs, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, expected);
}

static void test_duration_forms(void **state)
{
    (void)state;
    check_duration("0", 0);
    check_duration("5", 5 * 60);         /* bare number: minutes */
    check_duration("007", 7 * 60);
    check_duration("1:30", 90);          /* M:S */
    check_duration("0:30", 30);          /* seconds kept, not rounded up to a minute */
    check_duration("90:30", 90 * 60 + 30); /* the leading field is not bounded */
    check_duration("1:00:00", 3600);     /* H:M:S */
    check_duration("25:00:00", 25 * 3600);
    check_duration("1:02:03", 3723);
    check_duration("1-0", DAY);          /* D-H */
    check_duration("1-2", DAY + 2 * 3600);
    check_duration("1-2:3", DAY + 2 * 3600 + 3 * 60);    /* D-H:M */
    check_duration("1-2:3:4", DAY + 2 * 3600 + 3 * 60 + 4); /* D-H:M:S */
    check_duration("0-0:0:0", 0);
    check_duration("2-23:59:59", 3 * DAY - 1);
    check_duration("UNLIMITED", TIMEFMT_UNLIMITED);
    check_duration("unlimited", TIMEFMT_UNLIMITED);
    check_duration("Infinite", TIMEFMT_UNLIMITED);
    check_duration("INFINITE", TIMEFMT_UNLIMITED);
}

static void test_duration_limits(void **state)
{
    (void)state;
    check_duration("365000-0", TIMEFMT_MAX_SECONDS);
    check_duration("525600000", TIMEFMT_MAX_SECONDS); /* minutes */
    check_duration("8760000:00:00", TIMEFMT_MAX_SECONDS);
    check_duration_bad("365000-0:0:1");
    check_duration_bad("365001-0");
    check_duration_bad("525600001");
    check_duration_bad("8760000:00:01");
    check_duration_bad("9223372036854775807");
    check_duration_bad("99999999999999999999999999");
    check_duration_bad("106751991167300-0");
    check_duration_bad("1:9223372036854775807");
}

static void test_duration_bad(void **state)
{
    static const char *const bad[] = {
        "1:60",   "1:00:60", "1:60:00", "1-24",   "1-0:60", "1-0:0:60", "-5",     "abc",
        "1:2:3:4", "",       "1-",      "-",      "1-2-3",  ":1",       "1:",     " 5",
        "5 ",     "5x",      "1.5",     "+5",     "1-2:3:4:5", "1--2",  "1-:3",   "::",
        "UNLIMITEDX", "unlim", "1h",    "0x10",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_duration_bad(bad[i]);
    check_duration_bad(NULL);
}

static void test_format_duration(void **state)
{
    char buf[32];

    (void)state;
    check_text(timefmt_format_duration, 0, "00:00:00");
    check_text(timefmt_format_duration, 59, "00:00:59");
    check_text(timefmt_format_duration, 3600, "01:00:00");
    check_text(timefmt_format_duration, 86399, "23:59:59");
    check_text(timefmt_format_duration, 86400, "1-00:00:00");
    check_text(timefmt_format_duration, 90061, "1-01:01:01");
    check_text(timefmt_format_duration, 11 * DAY + 5, "11-00:00:05");
    check_text(timefmt_format_duration, TIMEFMT_MAX_SECONDS, "365000-00:00:00");
    check_text(timefmt_format_duration, INT64_MAX, "106751991167300-15:30:07");
    check_text(timefmt_format_duration, TIMEFMT_UNLIMITED, "UNLIMITED");
    check_text(timefmt_format_duration, -5, "INVALID");
    /* buffer sizes: "01:00:00" needs 9 bytes */
    assert_int_equal(timefmt_format_duration(3600, buf, 8), TS_ETOOBIG);
    assert_int_equal(timefmt_format_duration(3600, buf, 9), TS_OK);
    assert_string_equal(buf, "01:00:00");
    assert_int_equal(timefmt_format_duration(TIMEFMT_UNLIMITED, buf, 9), TS_ETOOBIG);
    assert_int_equal(timefmt_format_duration(3600, buf, 0), TS_ETOOBIG);
    assert_int_equal(timefmt_format_duration(3600, NULL, 32), TS_ETOOBIG);
}

static void test_format_elapsed(void **state)
{
    char buf[8];

    (void)state;
    check_text(timefmt_format_elapsed, 0, "0:00");
    check_text(timefmt_format_elapsed, 5, "0:05");
    check_text(timefmt_format_elapsed, 65, "1:05");
    check_text(timefmt_format_elapsed, 3599, "59:59");
    check_text(timefmt_format_elapsed, 3600, "1:00:00");
    check_text(timefmt_format_elapsed, 36061, "10:01:01");
    check_text(timefmt_format_elapsed, 86399, "23:59:59");
    check_text(timefmt_format_elapsed, 86400, "1-00:00:00");
    check_text(timefmt_format_elapsed, 90061, "1-01:01:01");
    check_text(timefmt_format_elapsed, TIMEFMT_UNLIMITED, "UNLIMITED");
    check_text(timefmt_format_elapsed, -7, "INVALID");
    assert_int_equal(timefmt_format_elapsed(5, buf, 5), TS_OK);
    assert_string_equal(buf, "0:05");
    assert_int_equal(timefmt_format_elapsed(5, buf, 4), TS_ETOOBIG);
    assert_int_equal(timefmt_format_elapsed(86400, buf, sizeof(buf)), TS_ETOOBIG);
}

/* What scontrol prints, read back, is the same duration. */
static void test_duration_round_trip(void **state)
{
    static const int64_t values[] = {0, 1, 59, 60, 3599, 3600, 86399, 86400, 90061,
                                     7 * DAY + 12345, TIMEFMT_MAX_SECONDS};

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char buf[32];
        int64_t back = -2;
        assert_int_equal(timefmt_format_duration(values[i], buf, sizeof(buf)), TS_OK);
        assert_int_equal(timefmt_parse_duration(buf, &back), TS_OK);
        assert_int_equal(back, values[i]);
        assert_int_equal(timefmt_format_elapsed(values[i], buf, sizeof(buf)), TS_OK);
        /* "M:SS", "H:MM:SS" and "D-HH:MM:SS" are all duration forms too */
        assert_int_equal(timefmt_parse_duration(buf, &back), TS_OK);
        assert_int_equal(back, values[i]);
    }
}

static void test_timestamp_iso(void **state)
{
    (void)state;
    check_stamp("2024-03-05", NOW, TODAY_UTC);
    check_stamp("2024-03-05T10:20", NOW, 1709634000);
    check_stamp("2024-03-05T10:20:30", NOW, NOW);
    check_stamp("2024-03-06", NOW, TODAY_UTC + DAY);
    check_stamp("2024-02-29", NOW, 1709164800);
    check_stamp("2024-12-25T00:00:00", NOW, 1735084800);
    check_stamp("2099-03-05", NOW, 4076352000);
    check_stamp("1970-01-01T00:00:01", NOW, 1);
    /* a date in the past stays in the past (no "tomorrow" rule for dates) */
    check_stamp("2020-01-01", NOW, 1577836800);
}

static void test_timestamp_now(void **state)
{
    (void)state;
    check_stamp("now", NOW, NOW);
    check_stamp("NOW", NOW, NOW);
    check_stamp("now+1hour", NOW, NOW + 3600);
    check_stamp("now+1hours", NOW, NOW + 3600);
    check_stamp("now+1h", NOW, NOW + 3600);
    check_stamp("now + 1 hour", NOW, NOW + 3600);
    check_stamp("now+90", NOW, NOW + 90); /* default unit: seconds */
    check_stamp("now+3s", NOW, NOW + 3);
    check_stamp("now+3sec", NOW, NOW + 3);
    check_stamp("now+3seconds", NOW, NOW + 3);
    check_stamp("now+1min", NOW, NOW + 60);
    check_stamp("now+5minutes", NOW, NOW + 300);
    check_stamp("now-1day", NOW, NOW - DAY);
    check_stamp("now+2days", NOW, NOW + 2 * DAY);
    check_stamp("now+1d", NOW, NOW + DAY);
    check_stamp("now+1w", NOW, NOW + 7 * DAY);
    check_stamp("now+2weeks", NOW, NOW + 14 * DAY);
    check_stamp("now-1week", NOW, NOW - 7 * DAY);
    check_stamp("NOW+1HOUR", NOW, NOW + 3600);
    check_stamp("now+0", NOW, NOW);
}

static void test_timestamp_clock(void **state)
{
    (void)state;
    /* later today stays today */
    check_stamp("11:00", NOW, TODAY_UTC + 11 * 3600);
    check_stamp("23:59:59", NOW, TODAY_UTC + DAY - 1);
    check_stamp("10:20:30", NOW, NOW); /* exactly now is not past */
    /* already past today means tomorrow */
    check_stamp("09:00", NOW, TODAY_UTC + DAY + 9 * 3600);
    check_stamp("9:00", NOW, TODAY_UTC + DAY + 9 * 3600);
    check_stamp("10:20:29", NOW, NOW - 1 + DAY);
    check_stamp("00:00", NOW, TODAY_UTC + DAY);
    /* AM / PM */
    check_stamp("4:00PM", NOW, TODAY_UTC + 16 * 3600);
    check_stamp("4:00 pm", NOW, TODAY_UTC + 16 * 3600);
    check_stamp("12:00 PM", NOW, TODAY_UTC + 12 * 3600);
    check_stamp("12:00AM", NOW, TODAY_UTC + DAY);
    check_stamp("12:30am", NOW, TODAY_UTC + DAY + 1800);
    check_stamp("9:30:15 AM", NOW, TODAY_UTC + DAY + 9 * 3600 + 30 * 60 + 15);
    check_stamp("11:30:15AM", NOW, TODAY_UTC + 11 * 3600 + 30 * 60 + 15);
}

static void test_timestamp_names(void **state)
{
    (void)state;
    check_stamp("today", NOW, TODAY_UTC);
    check_stamp("tomorrow", NOW, TODAY_UTC + DAY);
    check_stamp("midnight", NOW, TODAY_UTC + DAY);
    check_stamp("noon", NOW, TODAY_UTC + 12 * 3600);
    check_stamp("NOON", NOW, TODAY_UTC + 12 * 3600);
    check_stamp("elevenses", NOW, TODAY_UTC + 11 * 3600);
    check_stamp("fika", NOW, TODAY_UTC + 15 * 3600);
    check_stamp("teatime", NOW, TODAY_UTC + 16 * 3600);
    /* after 16:00 teatime is tomorrow's; "today" does not move */
    check_stamp("teatime", TODAY_UTC + 17 * 3600, TODAY_UTC + DAY + 16 * 3600);
    check_stamp("noon", TODAY_UTC + 17 * 3600, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("today", TODAY_UTC + 17 * 3600, TODAY_UTC);
    /* "midnight" exactly at midnight is now */
    check_stamp("midnight", TODAY_UTC, TODAY_UTC);
}

static void test_timestamp_us_dates(void **state)
{
    (void)state;
    check_stamp("12/25", NOW, 1735084800);    /* this year */
    check_stamp("1225", NOW, 1735084800);
    /* a day already begun is next year's (Slurm's --begin), unless a later time is given */
    check_stamp("03/05", NOW, TODAY_UTC + 365 * DAY);
    check_stamp("0305", NOW, TODAY_UTC + 365 * DAY);
    check_stamp("03.05", NOW, TODAY_UTC + 365 * DAY);
    check_stamp("03/05 noon", NOW, TODAY_UTC + 12 * 3600);
    check_stamp("03/04 noon", NOW, TODAY_UTC + 364 * DAY + 12 * 3600);
    check_stamp("12.25.24", NOW, 1735084800);
    check_stamp("01/02/25", NOW, 1735776000); /* 2025-01-02 */
    check_stamp("010225", NOW, 1735776000);
    check_stamp("02/29/24", NOW, 1709164800); /* 2024 is a leap year */
    check_stamp("03/05/99", NOW, 4076352000); /* two-digit years are 20YY, as in Slurm */
}

/* A day and a time of day in either order, apart by blanks or '-' (Slurm's forms). */
static void test_timestamp_combined(void **state)
{
    (void)state;
    check_stamp("noon tomorrow", NOW, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("tomorrow noon", NOW, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("noon-tomorrow", NOW, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("noontomorrow", NOW, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("16:00 tomorrow", NOW, TODAY_UTC + DAY + 16 * 3600);
    check_stamp("16:00-tomorrow", NOW, TODAY_UTC + DAY + 16 * 3600);
    check_stamp("tomorrow-16:00", NOW, TODAY_UTC + DAY + 16 * 3600);
    check_stamp("1:00 PM tomorrow", NOW, TODAY_UTC + DAY + 13 * 3600);
    check_stamp("midnight tomorrow", NOW, TODAY_UTC + DAY);
    check_stamp("today 23:00", NOW, TODAY_UTC + 23 * 3600);
    check_stamp("09:00 today", NOW, TODAY_UTC + 9 * 3600); /* a fixed day does not move */
    check_stamp("teatime 12/25", NOW, 1735084800 + 16 * 3600);
    check_stamp("12/25 teatime", NOW, 1735084800 + 16 * 3600);
    check_stamp("2024-12-25 noon", NOW, 1735084800 + 12 * 3600);
    check_stamp("2024-12-25-noon", NOW, 1735084800 + 12 * 3600);
    check_stamp("2024-03-05 10:20", NOW, 1709634000);
    check_stamp("noon 2024-12-25", NOW, 1735084800 + 12 * 3600);
    check_stamp(" today", NOW, TODAY_UTC);
    check_stamp("today ", NOW, TODAY_UTC);
    check_stamp("noon\ttomorrow", NOW, TODAY_UTC + DAY + 12 * 3600);
    check_stamp("now+1hour ", NOW, NOW + 3600);
    check_stamp("now + 1 hours", NOW, NOW + 3600);
}

static void test_timestamp_bad(void **state)
{
    static const char *const bad[] = {
        "",          "garbage",      "now+",           "now+1x",        "now1",
        "nowhere",   "now+-1",       "now++1",         "now+1hour x",   "now 1",
        "now+1.5",   "now+h",        "2024-02-30",     "2023-02-29",    "2024-13-01",
        "2024-00-10", "2024-01-00",  "2024-3-5",       "2024-03-05T",   "2024-03-05T25:00",
        "2024-03-05T10", "2024-03-05T10:20:60", "2024-03-05 10:20 x", "2024-03-05T10:2",
        "24:00",     "23:60",        "13:00PM",        "1:2",           "123:00",
        "10:00XM",   "10:00 P",      "12/32",          "13/01",         "00/10",
        "1301",      "0305240",      "03/05/2",        "03/0524",       "03-05",
        "1969-12-31", "0000-01-01",  "now+99999999999999999999",       "now+1000000weeks",
        "now-100000days", "tomorrow+1", "noon+1hour", "now tomorrow", "12/25/",
        "-1",        "12",           "12345",          "10:00:00:00",   ":10",
        "6",         "6 noon",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_stamp_bad(bad[i]);
    check_stamp_bad(NULL);
}

static void test_format_timestamp(void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal(timefmt_format_timestamp(0, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "Unknown");
    assert_int_equal(timefmt_format_timestamp(NOW, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "2024-03-05T10:20:30");
    assert_int_equal(timefmt_format_timestamp(1, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "1970-01-01T00:00:01");
    assert_int_equal(timefmt_format_timestamp(NOW, buf, 20), TS_OK);
    assert_int_equal(timefmt_format_timestamp(NOW, buf, 19), TS_ETOOBIG);
    assert_int_equal(timefmt_format_timestamp(0, buf, 7), TS_ETOOBIG);
    assert_int_equal(timefmt_format_timestamp(NOW, NULL, 0), TS_ETOOBIG);
    /* absurd times must not crash */
    (void)timefmt_format_timestamp((time_t)INT64_MAX, buf, sizeof(buf));
    (void)timefmt_format_timestamp((time_t)INT64_MIN, buf, sizeof(buf));
}

/* Parse what we print: the ISO form is read back to the same instant. */
static void test_timestamp_round_trip(void **state)
{
    static const time_t values[] = {1, NOW, TODAY_UTC, 4076352000, 1719835200};

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char buf[32];
        assert_int_equal(timefmt_format_timestamp(values[i], buf, sizeof(buf)), TS_OK);
        check_stamp(buf, NOW, values[i]);
    }
}

static void test_timestamp_berlin(void **state)
{
    char buf[32];

    (void)state;
    if (access("/usr/share/zoneinfo/Europe/Berlin", R_OK) != 0)
        skip();
    set_tz("Europe/Berlin");
    /* NOW is 11:20:30 CET (UTC+1) */
    check_stamp("2024-03-05T12:00", NOW, 1709636400);
    check_stamp("2024-07-01T12:00", NOW, 1719828000); /* CEST, UTC+2 */
    check_stamp("noon", NOW, 1709636400);
    check_stamp("today", NOW, TODAY_UTC - 3600);
    check_stamp("11:00", NOW, TODAY_UTC - 3600 + DAY + 11 * 3600); /* past: tomorrow */
    check_stamp("now+1hour", NOW, NOW + 3600);
    assert_int_equal(timefmt_format_timestamp(NOW, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "2024-03-05T11:20:30");
    assert_int_equal(timefmt_format_timestamp(1719828000, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "2024-07-01T12:00:00");
    /* 2024-03-30T20:00 CET; clocks go forward that night: tomorrow 09:00 is CEST and
     * only 12 hours ahead, and tomorrow's midnight is still CET */
    check_stamp("09:00", 1711825200, 1711868400);
    check_stamp("tomorrow", 1711825200, 1711839600);
    check_stamp("midnight", 1711825200, 1711839600);
    set_tz("UTC");
}

/* sacct -S/-E look into the past (Slurm's parse_time with "past"): a clock time still to
 * come today stays today, and a date without a year in a later month is last year's. */
static void test_timestamp_past(void **state)
{
    time_t t;

    (void)state;
    /* NOW is 2024-03-05T10:20:30Z */
    assert_int_equal(timefmt_parse_past_timestamp("11:00", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC + 11 * 3600);
    assert_int_equal(timefmt_parse_timestamp("09:00", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC + DAY + 9 * 3600); /* --begin: tomorrow */
    assert_int_equal(timefmt_parse_past_timestamp("09:00", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC + 9 * 3600);
    assert_int_equal(timefmt_parse_past_timestamp("noon", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC + 12 * 3600);
    assert_int_equal(timefmt_parse_past_timestamp("midnight", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC);
    assert_int_equal(timefmt_parse_past_timestamp("today", NOW, &t), TS_OK);
    assert_int_equal(t, TODAY_UTC);
    assert_int_equal(timefmt_parse_past_timestamp("12/25", NOW, &t), TS_OK);
    assert_int_equal(t, 1703462400); /* 2023-12-25 */
    assert_int_equal(timefmt_parse_past_timestamp("0301", NOW, &t), TS_OK);
    assert_int_equal(t, 1709251200); /* 2024-03-01 */
    assert_int_equal(timefmt_parse_past_timestamp("12/25/24", NOW, &t), TS_OK);
    assert_int_equal(t, 1735084800);
    assert_int_equal(timefmt_parse_past_timestamp("now-1hour", NOW, &t), TS_OK);
    assert_int_equal(t, NOW - 3600);
    assert_int_equal(timefmt_parse_past_timestamp("yesterday", NOW, &t), TS_ETIMEFMT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_duration_forms, utc_setup),
        cmocka_unit_test_setup(test_timestamp_past, utc_setup),
        cmocka_unit_test_setup(test_duration_limits, utc_setup),
        cmocka_unit_test_setup(test_duration_bad, utc_setup),
        cmocka_unit_test_setup(test_format_duration, utc_setup),
        cmocka_unit_test_setup(test_format_elapsed, utc_setup),
        cmocka_unit_test_setup(test_duration_round_trip, utc_setup),
        cmocka_unit_test_setup(test_timestamp_iso, utc_setup),
        cmocka_unit_test_setup(test_timestamp_combined, utc_setup),
        cmocka_unit_test_setup(test_timestamp_now, utc_setup),
        cmocka_unit_test_setup(test_timestamp_clock, utc_setup),
        cmocka_unit_test_setup(test_timestamp_names, utc_setup),
        cmocka_unit_test_setup(test_timestamp_us_dates, utc_setup),
        cmocka_unit_test_setup(test_timestamp_bad, utc_setup),
        cmocka_unit_test_setup(test_format_timestamp, utc_setup),
        cmocka_unit_test_setup(test_timestamp_round_trip, utc_setup),
        cmocka_unit_test_setup(test_timestamp_berlin, utc_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
