/* Dedicated time (docs/07-policy.md §5): PBS's dedicated_time file, one period a line,
 * "MM/DD/YYYY HH:MM MM/DD/YYYY HH:MM" (local time), '#' comments. During a period only
 * the partitions named with the policy's dedicated_prefix run; outside, they do not, and
 * a job whose time limit would reach into the next period waits. docs/policies.md. */
#ifndef TESSERA_COMMON_DEDICATED_H
#define TESSERA_COMMON_DEDICATED_H

#include <stddef.h>
#include <time.h>

#define DEDICATED_MAX 256

struct dedicated {
    size_t n;
    struct {
        time_t start, end;
    } periods[DEDICATED_MAX]; /* in file order */
};

/* TS_OK or TS_ECONF with "FILE:LINE: why". */
int dedicated_parse(const char *text, const char *file, struct dedicated *d, char *errbuf,
                    size_t errlen);
int dedicated_load(const char *path, struct dedicated *d, char *errbuf, size_t errlen);

/* Whether t is inside a period. */
int dedicated_inside(const struct dedicated *d, time_t t);
/* The start of the first period that begins after t (0: none). */
time_t dedicated_next_start(const struct dedicated *d, time_t t);

#endif
