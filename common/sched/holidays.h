/* Prime and non-prime time (docs/07-policy.md §1.2): the holidays file in UNICOS 8 format, as PBS
 * reads it: "YEAR yyyy", then per kind of day (weekday, saturday, sunday) the start of prime and
 * of non-prime time (HHMM, "all" or "none"), then holidays by day of the year (non-prime
 * all day). Lines starting with '*' are comments. docs/policies.md. */
#ifndef TESSERA_COMMON_HOLIDAYS_H
#define TESSERA_COMMON_HOLIDAYS_H

#include "common/sched/policy.h"

#include <stddef.h>
#include <time.h>

#define HOLIDAYS_ALL (-1)  /* "all": the whole day */
#define HOLIDAYS_NONE (-2) /* "none": not that day */

struct holidays {
    int year;                 /* 0: none given */
    int prime[3], non_prime[3]; /* minutes after midnight, or ALL/NONE; weekday, sat, sun */
    unsigned char holiday[367]; /* by day of the year, 1-366 */
};

/* Parse text (file names it in messages). TS_OK or TS_ECONF with "FILE:LINE: why". */
int holidays_parse(const char *text, const char *file, struct holidays *h, char *errbuf,
                   size_t errlen);
int holidays_load(const char *path, struct holidays *h, char *errbuf, size_t errlen);

/* The period at t (local time). A holiday counts only in the file's YEAR. */
enum policy_period holidays_period(const struct holidays *h, time_t t);

#endif
