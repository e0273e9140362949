/* Logging with levels, to stderr, a file or syslog.
 *
 * The log destination is process-wide (set once by main before any thread starts);
 * every line is formatted into one buffer and written with a single write(2), so lines
 * from several threads never interleave. */
#ifndef TESSERA_COMMON_LOG_H
#define TESSERA_COMMON_LOG_H

#include <stdint.h>

enum log_level {
    LOG_LVL_QUIET = 0, /* nothing at all */
    LOG_LVL_ERROR,
    LOG_LVL_WARN,
    LOG_LVL_INFO,
    LOG_LVL_VERBOSE,
    LOG_LVL_DEBUG,
    LOG_LVL_DEBUG2,
};

/* ident: program name shown in each line. dest: NULL or "" for stderr, "syslog", or a
 * file path (opened for append). Returns a ts_err. */
int log_open(const char *ident, enum log_level level, const char *dest);
void log_close(void);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* "quiet", "error", "warn"/"warning", "info", "verbose", "debug", "debug2"; ts_err. */
int log_level_parse(const char *name, enum log_level *out);
const char *log_level_name(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A kind of line that others can provoke at will (a flood of connections): at most one
 * such line per interval, the next one written saying how many were left out. The caller
 * keeps the state (zeroed to start) and passes its own clock. */
struct log_rate {
    uint64_t next_ms;        /* no line before this */
    unsigned long dropped;   /* lines left out since the last one written */
};
void log_rate_msg(struct log_rate *rate, uint64_t now_ms, uint64_t interval_ms,
                  enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_verbose(...) log_msg(LOG_LVL_VERBOSE, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_debug2(...) log_msg(LOG_LVL_DEBUG2, __VA_ARGS__)

#endif
