/* How a step ended on this node, as the step daemon leaves it in its spool folder
 * ("status") for the node daemon's report (docs/steps.md): the worst task wait status,
 * and what the tasks used as wait4(2) measured them.
 *
 * The file is text, one "key value" line each:
 *
 *     status 256
 *     user_usec 301234
 *     sys_usec 12000
 *     max_rss_kb 41320
 *     max_rss_task 3
 *
 * "status" is required; the usage lines are optional (a reader ignores keys it does not
 * know). The usage struct also carries a batch script's usage (task 0) to the report.
 */
#ifndef TESSERA_NODED_STEPSTATUS_H
#define TESSERA_NODED_STEPSTATUS_H

#include <stddef.h>
#include <stdint.h>

struct rusage;

struct stepstatus_usage {
    uint64_t user_usec;        /* CPU time in user mode, summed over the tasks */
    uint64_t sys_usec;         /* CPU time in system mode, summed */
    uint64_t max_rss_kb;       /* the largest resident set of any one task */
    uint32_t max_rss_task;     /* that task's rank */
    uint32_t ntasks;           /* tasks counted */
    uint64_t oom_kills;        /* processes killed for the memory limit (the container's
                                * count; not in the status file) */
};

struct stepstatus {
    int status;                /* the worst task wait status (0: none ended) */
    int has_usage;             /* the usage is known (the file carried it) */
    struct stepstatus_usage usage;
};

/* The worse of two wait statuses: the highest exit code; a signal above any exit code. */
int stepstatus_worse(int a, int b);

/* Count one task's usage (ru NULL: nothing measured, a task that never started): times
 * are summed; the largest RSS is kept with its rank (the first one on a tie). */
void stepstatus_usage_add(struct stepstatus_usage *u, const struct rusage *ru, uint32_t rank);

/* One task ended with status and usage ru (may be NULL). Sets has_usage. */
void stepstatus_add_task(struct stepstatus *st, int status, const struct rusage *ru,
                         uint32_t rank);

/* The file's text into buf (always terminated); returns the length it needs, as snprintf
 * does. Async-signal-safe (no stdio, no allocation). */
size_t stepstatus_format(const struct stepstatus *st, char *buf, size_t len);
/* Parse the file's text: TS_OK, or TS_EINVAL when "status" is missing or a value is not
 * a number (st is then left as it was). */
int stepstatus_parse(const char *text, struct stepstatus *st);

/* Write and read the file name in the folder dirfd (never through a link; written
 * atomically; the write is async-signal-safe): TS_OK; TS_ENOENT (read: no file), TS_ESYS
 * (errno says why), TS_ETOOBIG (write), TS_EINVAL (read: not such a file). */
int stepstatus_write_at(int dirfd, const char *name, const struct stepstatus *st);
int stepstatus_read_at(int dirfd, const char *name, struct stepstatus *st);

#endif
