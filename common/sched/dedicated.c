/* PBS's dedicated_time file. */
#include "common/sched/dedicated.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "MM/DD/YYYY" "HH:MM" -> local time; -1 when malformed. */
static time_t when(const char *date, const char *clock)
{
    int mon, day, year, hh, mm;
    char tail;
    if (sscanf(date, "%d/%d/%d%c", &mon, &day, &year, &tail) != 3 ||
        sscanf(clock, "%d:%d%c", &hh, &mm, &tail) != 2 || mon < 1 || mon > 12 || day < 1 ||
        day > 31 || year < 1970 || year > 9999 || hh < 0 || hh > 23 || mm < 0 || mm > 59)
        return -1;
    struct tm tm = {.tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day, .tm_hour = hh,
                    .tm_min = mm, .tm_isdst = -1};
    time_t t = mktime(&tm);
    return tm.tm_mday == day ? t : -1; /* 02/31 moved to March: refused */
}

int dedicated_parse(const char *text, const char *file, struct dedicated *d, char *errbuf,
                    size_t errlen)
{
    memset(d, 0, sizeof(*d));
    errbuf[0] = '\0';
    int line = 0;
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, "\n");
        char buf[256];
        line++;
        if (len >= sizeof(buf)) {
            snprintf(errbuf, errlen, "%s:%d: line too long", file, line);
            return TS_ECONF;
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + (s[len] == '\n');
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char w[4][32], extra[2];
        int n = sscanf(buf, "%31s %31s %31s %31s %1s", w[0], w[1], w[2], w[3], extra);
        if (n <= 0)
            continue;
        time_t from = n == 4 ? when(w[0], w[1]) : -1, to = n == 4 ? when(w[2], w[3]) : -1;
        if (from < 0 || to < 0 || to <= from) {
            snprintf(errbuf, errlen,
                     "%s:%d: a period is \"MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM\", start before end",
                     file, line);
            return TS_ECONF;
        }
        if (d->n == DEDICATED_MAX) {
            snprintf(errbuf, errlen, "%s:%d: more than %d periods", file, line, DEDICATED_MAX);
            return TS_ECONF;
        }
        d->periods[d->n].start = from;
        d->periods[d->n].end = to;
        d->n++;
    }
    return TS_OK;
}

int dedicated_load(const char *path, struct dedicated *d, char *errbuf, size_t errlen)
{
    char *text;
    int err = conf_read_text(path, 65535, &text, errbuf, errlen);
    if (err)
        return err;
    err = dedicated_parse(text, path, d, errbuf, errlen);
    free(text);
    return err;
}

int dedicated_inside(const struct dedicated *d, time_t t)
{
    for (size_t i = 0; i < d->n; i++)
        if (t >= d->periods[i].start && t < d->periods[i].end)
            return 1;
    return 0;
}

time_t dedicated_next_start(const struct dedicated *d, time_t t)
{
    time_t next = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->periods[i].start > t && (!next || d->periods[i].start < next))
            next = d->periods[i].start;
    return next;
}
