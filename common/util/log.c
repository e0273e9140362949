#include "common/util/log.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* Process-wide log settings: written by log_open() before threads exist, read after. */
static struct {
    char ident[64];
    enum log_level level;
    int fd;        /* stderr or the log file */
    int use_syslog;
    int own_fd;    /* close fd in log_close() */
} log_state = {"tessera", LOG_LVL_INFO, STDERR_FILENO, 0, 0};

static const char *const level_names[] = {
    [LOG_LVL_QUIET] = "quiet", [LOG_LVL_ERROR] = "error",     [LOG_LVL_WARN] = "warning",
    [LOG_LVL_INFO] = "info",   [LOG_LVL_VERBOSE] = "verbose", [LOG_LVL_DEBUG] = "debug",
    [LOG_LVL_DEBUG2] = "debug2",
};

int log_open(const char *ident, enum log_level level, const char *dest)
{
    log_close();
    snprintf(log_state.ident, sizeof(log_state.ident), "%s", ident ? ident : "tessera");
    log_state.level = level;
    if (!dest || !*dest)
        return TS_OK;
    if (strcmp(dest, "syslog") == 0) {
        openlog(log_state.ident, LOG_PID, LOG_DAEMON);
        log_state.use_syslog = 1;
        return TS_OK;
    }
    int fd = open(dest, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (fd < 0)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    log_state.fd = fd;
    log_state.own_fd = 1;
    return TS_OK;
}

void log_close(void)
{
    if (log_state.own_fd)
        close(log_state.fd);
    if (log_state.use_syslog)
        closelog();
    log_state.fd = STDERR_FILENO;
    log_state.own_fd = 0;
    log_state.use_syslog = 0;
}

void log_set_level(enum log_level level)
{
    log_state.level = level;
}

enum log_level log_get_level(void)
{
    return log_state.level;
}

int log_level_parse(const char *name, enum log_level *out)
{
    if (!name)
        return TS_EINVAL;
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return TS_OK;
        }
    }
    if (strcasecmp(name, "warn") == 0) {
        *out = LOG_LVL_WARN;
        return TS_OK;
    }
    return TS_EINVAL;
}

const char *log_level_name(enum log_level level)
{
    if ((int)level < 0 || level > LOG_LVL_DEBUG2)
        return "unknown";
    return level_names[level];
}

static int syslog_priority(enum log_level level)
{
    switch (level) {
    case LOG_LVL_ERROR: return LOG_ERR;
    case LOG_LVL_WARN: return LOG_WARNING;
    case LOG_LVL_INFO: return LOG_INFO;
    default: return LOG_DEBUG;
    }
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if (level == LOG_LVL_QUIET || level > log_state.level)
        return;
    int saved_errno = errno; /* callers often log and then look at errno */
    char line[4096];
    size_t len = 0;
    va_list ap;

    if (!log_state.use_syslog) {
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        len = strftime(line, sizeof(line), "[%Y-%m-%dT%H:%M:%S", &tm);
        len += (size_t)snprintf(line + len, sizeof(line) - len, ".%03ld] %s: ",
                                (long)tv.tv_usec / 1000, log_state.ident);
    }
    if (level != LOG_LVL_INFO && level != LOG_LVL_VERBOSE)
        len += (size_t)snprintf(line + len, sizeof(line) - len, "%s: ", level_names[level]);
    va_start(ap, fmt);
    int n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    len += (size_t)n;
    if (len > sizeof(line) - 2) {
        len = sizeof(line) - 2; /* keep the newline: a truncated line is still one line */
        memcpy(line + len - 3, "...", 3);
    }
    if (log_state.use_syslog) {
        line[len] = '\0';
        syslog(syslog_priority(level), "%s", line);
    } else {
        line[len++] = '\n';
        ssize_t w = write(log_state.fd, line, len);
        (void)w; /* nowhere left to report a failed log write */
    }
    errno = saved_errno;
}

void log_rate_msg(struct log_rate *rate, uint64_t now_ms, uint64_t interval_ms,
                  enum log_level level, const char *fmt, ...)
{
    if (level == LOG_LVL_QUIET || level > log_state.level)
        return;
    if (now_ms < rate->next_ms) {
        rate->dropped++;
        return;
    }
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (rate->dropped)
        log_msg(level, "%s (%lu more like it since the last one, not logged)", text,
                rate->dropped);
    else
        log_msg(level, "%s", text);
    rate->dropped = 0;
    rate->next_ms = now_ms + interval_ms;
}
