#include "common/util/daemon.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int daemon_start(const char *prog)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: error: pipe: %s\n", prog, strerror(errno));
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: error: fork: %s\n", prog, strerror(errno));
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        char line[1024];
        ssize_t n = read(p[0], line, sizeof(line) - 1);
        if (n <= 0) {
            fprintf(stderr, "%s: error: the daemon died during start-up\n", prog);
            exit(1);
        }
        line[n] = '\0';
        if (strcmp(line, "ok") == 0)
            exit(0);
        fprintf(stderr, "%s: error: %s\n", prog, line);
        exit(1);
    }
    close(p[0]);
    setsid();
    if (fork() > 0) /* the session leader leaves: we can never regain a terminal */
        _exit(0);
    if (chdir("/") != 0) { /* cannot fail for "/" in practice; keep going regardless */
    }
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        close(null);
    }
    return p[1];
}

void daemon_report(int fd, const char *msg)
{
    if (fd < 0)
        return;
    ssize_t n = write(fd, msg, strlen(msg));
    (void)n; /* the parent reads what arrives; nothing more to do here */
    close(fd);
    if (strcmp(msg, "ok") == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 2);
            close(null);
        }
    }
}

int daemon_write_pid(const char *path, char *errbuf, unsigned long errlen)
{
    if (!path)
        return TS_OK;
    FILE *f = fopen(path, "we");
    int ok = f && fprintf(f, "%ld\n", (long)getpid()) > 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        snprintf(errbuf, errlen, "cannot write pid file %s: %s", path, strerror(errno));
        return TS_ESYS;
    }
    return TS_OK;
}

const char *daemon_absolute_path(const char *path, char *buf, unsigned long len)
{
    char cwd[4096];
    if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)) ||
        strlen(cwd) + 1 + strlen(path) >= len)
        return path;
    snprintf(buf, len, "%s/%s", cwd, path);
    return buf;
}

const char *daemon_expand_name(const char *pattern, const char *name, char *buf,
                               unsigned long len)
{
    const char *n = strstr(pattern, "%n");
    if (n)
        snprintf(buf, len, "%.*s%s%s", (int)(n - pattern), pattern, name, n + 2);
    else
        snprintf(buf, len, "%s", pattern);
    return buf;
}

/* The open-file limit the daemon started with: written once by daemon_raise_nofile before
 * any thread exists, read by forked children. */
static struct rlimit nofile_at_start;

static void restore_nofile(void)
{
    setrlimit(RLIMIT_NOFILE, &nofile_at_start); /* async-signal-safe: a system call */
}

unsigned long daemon_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur == rl.rlim_max)
        return (unsigned long)rl.rlim_cur;
    nofile_at_start = rl;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return (unsigned long)nofile_at_start.rlim_cur;
    pthread_atfork(NULL, NULL, restore_nofile);
    return (unsigned long)rl.rlim_cur;
}
