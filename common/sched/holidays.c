/* The holidays file: prime and non-prime time by kind of day, and holidays. */
#include "common/sched/holidays.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t len, const char *where,
                                                      const char *fmt, ...)
{
    int n = snprintf(err, len, "%s: ", where);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < len)
        vsnprintf(err + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return TS_ECONF;
}

/* "HHMM", "all" or "none" -> minutes after midnight, HOLIDAYS_ALL or HOLIDAYS_NONE. */
static int parse_start(const char *w, int *out)
{
    if (!strcasecmp(w, "all")) {
        *out = HOLIDAYS_ALL;
        return 0;
    }
    if (!strcasecmp(w, "none")) {
        *out = HOLIDAYS_NONE;
        return 0;
    }
    if (strlen(w) != 4 || !isdigit((unsigned char)w[0]) || !isdigit((unsigned char)w[1]) ||
        !isdigit((unsigned char)w[2]) || !isdigit((unsigned char)w[3]))
        return -1;
    int hh = (w[0] - '0') * 10 + (w[1] - '0'), mm = (w[2] - '0') * 10 + (w[3] - '0');
    if (hh > 24 || mm > 59 || (hh == 24 && mm))
        return -1;
    *out = hh * 60 + mm;
    return 0;
}

static int parse_line(char *line, struct holidays *h, const char *where, char *err, size_t len)
{
    char *words[3] = {0};
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t\r", &save); w && n < 3;
         w = strtok_r(NULL, " \t\r", &save))
        words[n++] = w;
    if (n == 0)
        return TS_OK;
    static const char *const days[3] = {"weekday", "saturday", "sunday"};
    if (!strcasecmp(words[0], "YEAR")) {
        char *end;
        long y = n > 1 ? strtol(words[1], &end, 10) : 0;
        if (n < 2 || *end || y < 1970 || y > 9999)
            return fail(err, len, where, "YEAR needs a year, not '%s'", n > 1 ? words[1] : "");
        h->year = (int)y;
        return TS_OK;
    }
    for (int d = 0; d < 3; d++) {
        if (strcasecmp(words[0], days[d]))
            continue;
        if (n < 3 || parse_start(words[1], &h->prime[d]) ||
            parse_start(words[2], &h->non_prime[d]))
            return fail(err, len, where,
                        "%s needs a prime and a non-prime start (HHMM, all or none)", days[d]);
        return TS_OK;
    }
    char *end;
    long day = strtol(words[0], &end, 10);
    if (*end || day < 1 || day > 366)
        return fail(err, len, where, "'%s' is neither YEAR, a kind of day nor a day of the year",
                    words[0]);
    h->holiday[day] = 1; /* the rest of the line is the date and the name */
    return TS_OK;
}

int holidays_parse(const char *text, const char *file, struct holidays *h, char *errbuf,
                   size_t errlen)
{
    memset(h, 0, sizeof(*h));
    for (int d = 0; d < 3; d++) { /* without a line: prime all day */
        h->prime[d] = HOLIDAYS_ALL;
        h->non_prime[d] = HOLIDAYS_NONE;
    }
    errbuf[0] = '\0';
    int lineno = 0;
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, "\n");
        char buf[512], where[300];
        lineno++;
        snprintf(where, sizeof(where), "%s:%d", file, lineno);
        if (len >= sizeof(buf))
            return fail(errbuf, errlen, where, "line too long");
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + (s[len] == '\n');
        char *p = buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '*' || *p == '#')
            continue;
        int err = parse_line(p, h, where, errbuf, errlen);
        if (err)
            return err;
    }
    return TS_OK;
}

int holidays_load(const char *path, struct holidays *h, char *errbuf, size_t errlen)
{
    char *text;
    int err = conf_read_text(path, 65535, &text, errbuf, errlen);
    if (err)
        return err;
    err = holidays_parse(text, path, h, errbuf, errlen);
    free(text);
    return err;
}

enum policy_period holidays_period(const struct holidays *h, time_t t)
{
    struct tm tm;
    localtime_r(&t, &tm);
    if (h->year == tm.tm_year + 1900 && h->holiday[tm.tm_yday + 1])
        return POLICY_NON_PRIME;
    int d = tm.tm_wday == 6 ? 1 : tm.tm_wday == 0 ? 2 : 0;
    int p = h->prime[d], np = h->non_prime[d], now = tm.tm_hour * 60 + tm.tm_min;
    if (p == HOLIDAYS_ALL)
        return POLICY_PRIME;
    if (np == HOLIDAYS_ALL || p == HOLIDAYS_NONE)
        return np == HOLIDAYS_NONE && p == HOLIDAYS_NONE ? POLICY_PRIME : POLICY_NON_PRIME;
    if (np == HOLIDAYS_NONE)
        return now >= p ? POLICY_PRIME : POLICY_NON_PRIME;
    if (p <= np) /* prime from p until np */
        return now >= p && now < np ? POLICY_PRIME : POLICY_NON_PRIME;
    return now >= np && now < p ? POLICY_NON_PRIME : POLICY_PRIME; /* prime over midnight */
}
