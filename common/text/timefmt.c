/* Slurm's duration and timestamp formats.
 *
 * Every number is read with a cap far below overflow (TIMEFMT_MAX_SECONDS), so no input
 * can make the arithmetic wrap. Timestamps go through localtime_r/mktime with tm_isdst
 * left to mktime, so day changes across daylight saving time keep the wall-clock hour.
 */
#include "common/text/timefmt.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Overflow checks below assume a 64-bit time_t, as on every Linux target we build for. */
_Static_assert(sizeof(time_t) == sizeof(int64_t), "64-bit time_t");

/* ---- shared helpers ------------------------------------------------------------------ */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *s)
{
    while (is_blank(*s))
        s++;
    return s;
}

/* A run of at least one digit at *p, advancing *p past it. Values above limit are refused
 * as soon as they exceed it, before they can overflow. */
static int read_number(const char **p, int64_t limit, int64_t *out)
{
    const char *s = *p;
    int64_t v = 0;

    if (!is_digit(*s))
        return TS_ETIMEFMT;
    while (is_digit(*s)) {
        v = v * 10 + (*s - '0');
        if (v > limit)
            return TS_ETIMEFMT;
        s++;
    }
    *out = v;
    *p = s;
    return TS_OK;
}

/* Exactly n digits at *p (dates and times use fixed widths), advancing *p. Returns 1 on
 * success, 0 otherwise. */
static int read_fixed(const char **p, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (!is_digit((*p)[i]))
            return 0; /* also stops at the NUL, so never reads past it */
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 1;
}

/* ---- durations ----------------------------------------------------------------------- */

/* Up to three ':'-separated numbers making up all of s. */
static int read_fields(const char *s, int64_t f[3], int *n)
{
    int rc;

    *n = 0;
    for (;;) {
        if (*n == 3)
            return TS_ETIMEFMT;
        rc = read_number(&s, TIMEFMT_MAX_SECONDS, &f[(*n)++]);
        if (rc != TS_OK)
            return rc;
        if (*s == '\0')
            return TS_OK;
        if (*s != ':')
            return TS_ETIMEFMT;
        s++;
    }
}

/* "D-H", "D-H:M", "D-H:M:S": everything after the day count is a clock time. */
static int days_form(int64_t days, const char *rest, int64_t *secs)
{
    int64_t f[3] = {0, 0, 0};
    int n;
    int rc = read_fields(rest, f, &n);

    if (rc != TS_OK)
        return rc;
    if (f[0] >= 24 || f[1] >= 60 || f[2] >= 60)
        return TS_ETIMEFMT;
    *secs = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
    return TS_OK;
}

/* "M", "M:S", "H:M:S": the leading field is unbounded, as in Slurm ("90:00"). */
static int clock_form(const char *s, int64_t *secs)
{
    int64_t f[3];
    int n;
    int rc = read_fields(s, f, &n);

    if (rc != TS_OK)
        return rc;
    if (n == 1) {
        *secs = f[0] * 60;
    } else if (n == 2) {
        if (f[1] >= 60)
            return TS_ETIMEFMT;
        *secs = f[0] * 60 + f[1];
    } else {
        if (f[1] >= 60 || f[2] >= 60)
            return TS_ETIMEFMT;
        *secs = f[0] * 3600 + f[1] * 60 + f[2];
    }
    return TS_OK;
}

int timefmt_parse_duration(const char *s, int64_t *secs)
{
    const char *p = s;
    int64_t days;
    int64_t v;
    int rc;

    if (!s || !secs)
        return TS_ETIMEFMT;
    if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0) {
        *secs = TIMEFMT_UNLIMITED;
        return TS_OK;
    }
    if (strchr(s, '-')) {
        rc = read_number(&p, TIMEFMT_MAX_SECONDS, &days);
        if (rc != TS_OK || *p != '-')
            return TS_ETIMEFMT;
        rc = days_form(days, p + 1, &v);
    } else {
        rc = clock_form(s, &v);
    }
    /* every field is <= TIMEFMT_MAX_SECONDS, so v cannot have overflowed */
    if (rc != TS_OK || v > TIMEFMT_MAX_SECONDS)
        return TS_ETIMEFMT;
    *secs = v;
    return TS_OK;
}

/* snprintf's result: TS_ETOOBIG when the text did not fit. */
static int fitted(int n, size_t len)
{
    return (n < 0 || (size_t)n >= len) ? TS_ETOOBIG : TS_OK;
}

/* Negative durations: UNLIMITED, or any other negative value printed as Slurm does,
 * "INVALID". */
static int format_negative(int64_t secs, char *buf, size_t len)
{
    return fitted(snprintf(buf, len, "%s", secs == TIMEFMT_UNLIMITED ? "UNLIMITED" : "INVALID"),
                  len);
}

int timefmt_format_duration(int64_t secs, char *buf, size_t len)
{
    if (!buf || len == 0)
        return TS_ETOOBIG;
    if (secs < 0)
        return format_negative(secs, buf, len);
    if (secs >= 86400)
        return fitted(snprintf(buf, len, "%" PRId64 "-%02d:%02d:%02d", secs / 86400,
                               (int)(secs / 3600 % 24), (int)(secs / 60 % 60), (int)(secs % 60)),
                      len);
    return fitted(snprintf(buf, len, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                           (int)(secs % 60)),
                  len);
}

int timefmt_format_elapsed(int64_t secs, char *buf, size_t len)
{
    int n;

    if (!buf || len == 0)
        return TS_ETOOBIG;
    if (secs < 0)
        return format_negative(secs, buf, len);
    if (secs >= 86400) /* squeue and scontrol agree from one day on */
        return timefmt_format_duration(secs, buf, len);
    if (secs >= 3600)
        n = snprintf(buf, len, "%d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                     (int)(secs % 60));
    else
        n = snprintf(buf, len, "%d:%02d", (int)(secs / 60), (int)(secs % 60));
    return fitted(n, len);
}

/* ---- timestamps ---------------------------------------------------------------------- */

static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return days[month - 1] + (month == 2 && leap);
}

/* mktime with the time zone's own DST rule; mktime's -1 is only ever an error here
 * because dates start in 1970 and end within 9999. */
static int to_time(struct tm *tm, time_t *out)
{
    time_t t;

    tm->tm_isdst = -1;
    t = mktime(tm);
    if (t == (time_t)-1)
        return TS_ETIMEFMT;
    *out = t;
    return TS_OK;
}

/* Midnight of year-month-day (1900-based year as in struct tm), plus a clock time. */
static int at_date(int year, int month, int day, int hms[3], time_t *out)
{
    struct tm tm;

    if (year + 1900 < 1970 || year + 1900 > 9999 || month < 1 || month > 12 || day < 1 ||
        day > days_in_month(year + 1900, month))
        return TS_ETIMEFMT;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = year;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hms[0];
    tm.tm_min = hms[1];
    tm.tm_sec = hms[2];
    return to_time(&tm, out);
}

/* A clock time today, or tomorrow when it is already past (--begin semantics). With
 * day_offset >= 0 the day is fixed instead (today = 0, tomorrow = 1). */
static int at_clock(time_t now, int h, int m, int s, int day_offset, time_t *out)
{
    struct tm base;
    struct tm tm;
    int rc;

    if (!localtime_r(&now, &base))
        return TS_ETIMEFMT;
    tm = base;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = s;
    tm.tm_mday += day_offset > 0 ? day_offset : 0;
    rc = to_time(&tm, out);
    if (rc != TS_OK || day_offset >= 0 || *out >= now)
        return rc;
    tm = base; /* mktime normalised tm: start again from today's date */
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = s;
    tm.tm_mday++;
    return to_time(&tm, out);
}

struct unit {
    const char *name;
    int64_t secs;
};

static const struct unit units[] = {
    {"s", 1},           {"sec", 1},         {"secs", 1},       {"second", 1},
    {"seconds", 1},     {"min", 60},        {"mins", 60},      {"minute", 60},
    {"minutes", 60},    {"h", 3600},        {"hour", 3600},    {"hours", 3600},
    {"d", 86400},       {"day", 86400},     {"days", 86400},   {"w", 604800},
    {"week", 604800},   {"weeks", 604800},
};

static int unit_secs(const char *name, int64_t *secs)
{
    if (*name == '\0') {
        *secs = 1; /* Slurm's default unit */
        return TS_OK;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(name, units[i].name) == 0) {
            *secs = units[i].secs;
            return TS_OK;
        }
    }
    return TS_ETIMEFMT;
}

/* "now", "now+N[unit]", "now-N[unit]"; blanks between the parts and after, as Slurm
 * allows. */
static int parse_now(const char *s, time_t now, time_t *out)
{
    int64_t n;
    int64_t unit;
    int64_t delta;
    int sign;
    char name[16];
    size_t len;

    s = skip_blanks(s + 3);
    if (*s == '\0') {
        *out = now;
        return TS_OK;
    }
    if (*s != '+' && *s != '-')
        return TS_ETIMEFMT;
    sign = *s == '-' ? -1 : 1;
    s = skip_blanks(s + 1);
    if (read_number(&s, TIMEFMT_MAX_SECONDS, &n) != TS_OK)
        return TS_ETIMEFMT;
    s = skip_blanks(s);
    for (len = 0; s[len] && !is_blank(s[len]); len++)
        ;
    if (len >= sizeof(name) || *skip_blanks(s + len) != '\0')
        return TS_ETIMEFMT;
    memcpy(name, s, len);
    name[len] = '\0';
    if (unit_secs(name, &unit) != TS_OK || n > TIMEFMT_MAX_SECONDS / unit)
        return TS_ETIMEFMT;
    delta = sign * n * unit;
    /* keep now + delta inside time_t and after 1970 */
    if ((delta > 0 && now > INT64_MAX - delta) || (delta < 0 && now < INT64_MIN - delta) ||
        now + delta < 0)
        return TS_ETIMEFMT;
    *out = now + delta;
    return TS_OK;
}

/* What the words of a timestamp named: a day and a time of day, each optional (the last
 * word of each kind counts, as in Slurm). */
struct stamp_words {
    int has_day, has_clock;
    int day_offset;        /* >= 0: today + offset ("today", "tomorrow"); -1: the date below */
    int has_year;          /* else this year or the next (or with past, the last) */
    int year, month, day;  /* year as in struct tm */
    int hms[3];
};

struct named_word {
    const char *name;
    int is_day;            /* a day ("today"), else a time of day ("noon") */
    int value;             /* the day's offset, or the hour */
};

/* Longest first where one is a prefix of another, since words may run together
 * ("noontomorrow", as Slurm accepts). */
static const struct named_word named_words[] = {
    {"today", 1, 0},        {"tomorrow", 1, 1}, {"midnight", 0, 0}, {"noon", 0, 12},
    {"elevenses", 0, 11},   {"fika", 0, 15},    {"teatime", 0, 16},
};

static int read_named(const char **p, struct stamp_words *w)
{
    for (size_t i = 0; i < sizeof(named_words) / sizeof(named_words[0]); i++) {
        const struct named_word *nw = &named_words[i];
        size_t len = strlen(nw->name);
        if (strncasecmp(*p, nw->name, len) != 0)
            continue;
        *p += len;
        if (nw->is_day) {
            w->has_day = 1;
            w->day_offset = nw->value;
        } else {
            w->has_clock = 1;
            w->hms[0] = nw->value;
            w->hms[1] = w->hms[2] = 0;
        }
        return TS_OK;
    }
    return TS_ETIMEFMT;
}

/* "HH:MM[:SS]" at *p (hour one or two digits), advancing *p. */
static int read_clock(const char **p, int hms[3])
{
    const char *s = *p;

    if (!is_digit(s[0]) || !read_fixed(&s, is_digit(s[1]) ? 2 : 1, &hms[0]) || *s != ':')
        return TS_ETIMEFMT;
    s++;
    if (!read_fixed(&s, 2, &hms[1]))
        return TS_ETIMEFMT;
    hms[2] = 0;
    if (*s == ':') {
        s++;
        if (!read_fixed(&s, 2, &hms[2]))
            return TS_ETIMEFMT;
    }
    if (hms[0] > 23 || hms[1] > 59 || hms[2] > 59 || is_digit(*s) || *s == ':')
        return TS_ETIMEFMT;
    *p = s;
    return TS_OK;
}

/* "HH:MM[:SS] [AM|PM]": 12 AM is midnight, 12 PM noon. */
static int read_clock_word(const char **p, struct stamp_words *w)
{
    int hms[3];
    const char *s = *p;

    if (read_clock(&s, hms) != TS_OK)
        return TS_ETIMEFMT;
    const char *m = skip_blanks(s);
    if ((m[0] == 'A' || m[0] == 'a' || m[0] == 'P' || m[0] == 'p') && (m[1] == 'M' || m[1] == 'm') &&
        !isalpha((unsigned char)m[2])) {
        if (hms[0] > 12)
            return TS_ETIMEFMT;
        hms[0] = hms[0] % 12 + (m[0] == 'p' || m[0] == 'P' ? 12 : 0);
        s = m + 2;
    }
    w->has_clock = 1;
    memcpy(w->hms, hms, sizeof(hms));
    *p = s;
    return TS_OK;
}

/* "YYYY-MM-DD[THH:MM[:SS]]" */
static int read_iso(const char **p, struct stamp_words *w)
{
    const char *s = *p;
    int y, mo, d;

    if (!read_fixed(&s, 4, &y) || *s++ != '-' || !read_fixed(&s, 2, &mo) || *s++ != '-' ||
        !read_fixed(&s, 2, &d) || is_digit(*s))
        return TS_ETIMEFMT;
    if (*s == 'T') {
        s++;
        if (read_clock(&s, w->hms) != TS_OK)
            return TS_ETIMEFMT;
        w->has_clock = 1;
    }
    w->has_day = 1;
    w->day_offset = -1;
    w->has_year = 1;
    w->year = y - 1900;
    w->month = mo;
    w->day = d;
    *p = s;
    return TS_OK;
}

/* "MM/DD[/YY]", "MM.DD[.YY]" and "MMDD[YY]": two-digit years are 20YY. */
static int read_us_date(const char **p, struct stamp_words *w)
{
    const char *s = *p;
    /* two digits first: only then is s[2] inside the string */
    if (!is_digit(s[0]) || !is_digit(s[1]))
        return TS_ETIMEFMT;
    char sep = s[2] == '/' || s[2] == '.' ? s[2] : '\0';
    int mo, d, yy;

    if (!read_fixed(&s, 2, &mo) || (sep && *s++ != sep) || !read_fixed(&s, 2, &d))
        return TS_ETIMEFMT;
    w->has_year = 0;
    if ((sep && *s == sep) || (!sep && is_digit(*s))) {
        if (sep)
            s++;
        if (!read_fixed(&s, 2, &yy))
            return TS_ETIMEFMT;
        w->has_year = 1;
        w->year = 100 + yy;
    }
    if (is_digit(*s) || *s == '/' || *s == '.')
        return TS_ETIMEFMT;
    w->has_day = 1;
    w->day_offset = -1;
    w->month = mo;
    w->day = d;
    *p = s;
    return TS_OK;
}

static int read_word(const char **p, struct stamp_words *w)
{
    const char *s = *p;

    if (isalpha((unsigned char)*s))
        return read_named(p, w);
    if (!is_digit(*s))
        return TS_ETIMEFMT;
    if (is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) && s[4] == '-')
        return read_iso(p, w);
    if (strchr(s, ':') && strcspn(s, ":") < strcspn(s, " \t-"))
        return read_clock_word(p, w);
    return read_us_date(p, w);
}

/* Midnight, or the clock time, of the day the words name. A month and day without a year
 * are this year's, or next year's when that moment is past (Slurm's --begin), or with
 * past (sacct) last year's when the month is later than this one. */
static int words_day(const struct stamp_words *w, time_t now, int past, int hms[3],
                     time_t *out)
{
    struct tm base;

    if (!localtime_r(&now, &base))
        return TS_ETIMEFMT;
    if (w->day_offset >= 0)
        return at_clock(now, hms[0], hms[1], hms[2], w->day_offset, out);
    if (w->has_year)
        return at_date(w->year, w->month, w->day, hms, out);
    if (past)
        return at_date(base.tm_year - (w->month - 1 > base.tm_mon), w->month, w->day, hms, out);
    int rc = at_date(base.tm_year, w->month, w->day, hms, out);
    if (rc == TS_OK && *out < now)
        rc = at_date(base.tm_year + 1, w->month, w->day, hms, out);
    return rc;
}

/* Slurm's timestamps: "now[{+|-}N[unit]]" alone, or words naming a day and a time of
 * day in either order, apart by blanks or '-' ("noon tomorrow", "16:00-tomorrow",
 * "2027-01-05 10:00"). A time of day alone is its next occurrence (with past: today's). */
static int parse_timestamp(const char *s, time_t now, int past, time_t *out)
{
    struct stamp_words w = {.day_offset = -1};
    time_t t;
    int rc;

    if (!s || !out)
        return TS_ETIMEFMT;
    s = skip_blanks(s);
    if (strncasecmp(s, "now", 3) == 0)
        rc = parse_now(s, now, &t);
    else {
        rc = *s ? TS_OK : TS_ETIMEFMT;
        while (rc == TS_OK && *s) {
            rc = read_word(&s, &w);
            while (is_blank(*s) || *s == '-')
                s++;
        }
        if (rc == TS_OK && w.has_day) {
            int midnight[3] = {0, 0, 0};
            rc = words_day(&w, now, past, w.has_clock ? w.hms : midnight, &t);
        } else if (rc == TS_OK) {
            rc = at_clock(now, w.hms[0], w.hms[1], w.hms[2], past ? 0 : -1, &t);
        }
    }
    if (rc == TS_OK)
        *out = t;
    return rc;
}

int timefmt_parse_timestamp(const char *s, time_t now, time_t *out)
{
    return parse_timestamp(s, now, 0, out);
}

int timefmt_parse_past_timestamp(const char *s, time_t now, time_t *out)
{
    return parse_timestamp(s, now, 1, out);
}

int timefmt_format_timestamp(time_t t, char *buf, size_t len)
{
    struct tm tm;
    int n;

    if (!buf || len == 0)
        return TS_ETOOBIG;
    if (t == 0)
        n = snprintf(buf, len, "Unknown");
    else if (!localtime_r(&t, &tm))
        return TS_ETOOBIG; /* year beyond struct tm */
    else
        n = snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return (n < 0 || (size_t)n >= len) ? TS_ETOOBIG : TS_OK;
}
