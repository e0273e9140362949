/* Slurm's time formats: durations (time limits) and timestamps (--begin, sacct -S).
 *
 * Durations are seconds (int64_t). Tessera keeps limits in seconds: "-t 0:30" is 30 s,
 * not rounded up to a minute as Slurm does. A bare number is minutes, as in Slurm.
 * All functions are pure: the current time is a parameter, never read from the clock.
 */
#ifndef TESSERA_COMMON_TIMEFMT_H
#define TESSERA_COMMON_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TIMEFMT_UNLIMITED INT64_C(-1) /* "UNLIMITED", "INFINITE", "unlimited" */
/* Largest duration accepted: 365000 days, far beyond any real limit, far from overflow. */
#define TIMEFMT_MAX_SECONDS (INT64_C(365000) * 86400)

/* Formats: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", "UNLIMITED"/"INFINITE"
 * (case-insensitive). Fields are non-negative decimal numbers; in the forms with more than
 * one field, seconds and minutes must be < 60 and hours < 24 after a day count, as Slurm
 * checks. "0" gives 0 (callers decide what a zero limit means). Errors: TS_ETIMEFMT. */
int timefmt_parse_duration(const char *s, int64_t *secs);

/* scontrol style: "HH:MM:SS" or "D-HH:MM:SS"; TIMEFMT_UNLIMITED -> "UNLIMITED".
 * Returns TS_OK or TS_ETOOBIG when buf is too small (32 bytes always suffice). */
int timefmt_format_duration(int64_t secs, char *buf, size_t len);

/* squeue TIME style: "M:SS", "H:MM:SS", "D-HH:MM:SS"; TIMEFMT_UNLIMITED -> "UNLIMITED". */
int timefmt_format_elapsed(int64_t secs, char *buf, size_t len);

/* Timestamps relative to now (local time zone), Slurm's --begin forms:
 *   now[{+|-}N[seconds|minutes|hours|days|weeks]] alone (default unit seconds; singular
 *   and abbreviated units "s", "sec", "min", "h", "hour", "d", "day", "w", "week" too),
 *   or words naming a day and a time of day, in either order, apart by blanks or '-':
 *     days:  YYYY-MM-DD   MM/DD[/YY]   MM.DD[.YY]   MMDD[YY]   today   tomorrow
 *     times: HH:MM[:SS] [AM|PM]   midnight   noon   elevenses (11:00)   fika (15:00)
 *            teatime (16:00);  YYYY-MM-DDTHH:MM[:SS] names both
 *   ("noon tomorrow", "16:00-tomorrow", "teatime 01/05", "2027-01-05 10:00").
 * A time of day alone that is already past today means tomorrow; a month and day without
 * a year whose moment is past means next year, as in Slurm. Errors: TS_ETIMEFMT. */
int timefmt_parse_timestamp(const char *s, time_t now, time_t *out);

/* The same forms looking into the past, as sacct -S/-E read them (Slurm's parse_time
 * with "past" set): a bare clock time or named hour is today's even when still to come,
 * and a date without a year is last year's when its month is later than this one. */
int timefmt_parse_past_timestamp(const char *s, time_t now, time_t *out);

/* "YYYY-MM-DDTHH:MM:SS" in local time; 0 -> "Unknown" (Slurm prints that for unset
 * times). Returns TS_OK or TS_ETOOBIG. */
int timefmt_format_timestamp(time_t t, char *buf, size_t len);

#endif
