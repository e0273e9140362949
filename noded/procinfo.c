/* Processes as /proc describes them (noded/procinfo.h). */
#include "noded/procinfo.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Fields 3 (state), 4 (parent) and 22 (start time) of stat; the command name (field 2)
 * may hold spaces and parentheses, so parsing starts after its last ')'. */
static int parse_stat(const char *text, struct procinfo *out)
{
    const char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || !p[2])
        return TS_EINVAL;
    out->state = p[2];
    int ppid;
    if (sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                      "%*d %*d %*d %llu", &ppid, &out->start) != 2)
        return TS_EINVAL;
    out->ppid = (pid_t)ppid;
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

static int signal_if_child(pid_t pid, pid_t parent, int signo)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return 0; /* gone already */
    struct procinfo pi;
    int sent = procinfo_read(pid, &pi) == TS_OK && pi.ppid == parent && pi.state != 'Z' &&
               syscall(SYS_pidfd_send_signal, fd, signo, NULL, 0) == 0;
    close(fd);
    return sent;
}

int procinfo_signal_children(pid_t parent, int signo)
{
    char path[64], text[4096];
    if (parent <= 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
    int err = read_prefix(AT_FDCWD, path, text, sizeof(text));
    if (err == TS_ENOENT && access(path, R_OK) == 0)
        return 0; /* listed, and empty: no child */
    if (err)
        return -1;
    int sent = 0;
    for (char *p = text, *end; *p; p = end) {
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0 && pid <= INT32_MAX)
            sent += signal_if_child((pid_t)pid, parent, signo);
    }
    return sent;
}

int procinfo_oom_protect(int protect)
{
    static const char kept[] = "-1000\n", chosen[] = "0\n";
    const char *text = protect ? kept : chosen;
    size_t len = protect ? sizeof(kept) - 1 : sizeof(chosen) - 1;
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = write(fd, text, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : -1;
}
