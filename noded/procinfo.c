/* Processes as /proc describes them (noded/procinfo.h). */
#include "noded/procinfo.h"

#include "common/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fields 3 (state) and 22 (start time) of stat; the command name (field 2) may hold
 * spaces and parentheses, so parsing starts after its last ')'. */
static int parse_stat(const char *text, struct procinfo *out)
{
    const char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || !p[2])
        return TS_EINVAL;
    out->state = p[2];
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                      "%*d %*d %*d %llu", &out->start) != 1)
        return TS_EINVAL;
    return TS_OK;
}

static int parse_uid(const char *text, uid_t *uid)
{
    const char *p = strstr(text, "\nUid:");
    if (!p)
        return TS_EINVAL;
    char *end;
    errno = 0;
    unsigned long v = strtoul(p + 5, &end, 10);
    if (errno || end == p + 5 || v > (uid_t)-1)
        return TS_EINVAL;
    *uid = (uid_t)v;
    return TS_OK;
}

/* The start of a /proc file (Uid: is among the first lines of status, whose Groups: line
 * can be long). */
static int read_prefix(int dfd, const char *name, char *buf, size_t cap)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TS_ENOENT;
    size_t off = 0;
    while (off < cap - 1) {
        ssize_t n = read(fd, buf + off, cap - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd);
    buf[off] = '\0';
    return off ? TS_OK : TS_ENOENT; /* an ended process reads as empty or fails */
}

int procinfo_read(pid_t pid, struct procinfo *out)
{
    char path[32], text[4096];
    if (pid <= 0)
        return TS_ENOENT;
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return TS_ENOENT;
    int err = read_prefix(dfd, "stat", text, sizeof(text));
    if (!err)
        err = parse_stat(text, out);
    if (!err && !(err = read_prefix(dfd, "status", text, sizeof(text))))
        err = parse_uid(text, &out->uid);
    close(dfd);
    return err;
}

unsigned long long procinfo_start_time(pid_t pid)
{
    struct procinfo pi;
    return procinfo_read(pid, &pi) == TS_OK ? pi.start : 0;
}

int procinfo_matches(pid_t pid, unsigned long long start, uid_t uid)
{
    struct procinfo pi;
    return start != 0 && procinfo_read(pid, &pi) == TS_OK && pi.state != 'Z' &&
           pi.start == start && pi.uid == uid;
}
