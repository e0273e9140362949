/* A batch script's login environment: see loginenv.h. */
#include "noded/loginenv.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The login PATH of login(1) and su(1) (ENV_SUPATH and ENV_PATH of Debian's login.defs):
 * what the shell starts with before its profile, and what a failed login leaves. */
#define ROOT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define USER_PATH "/usr/local/bin:/usr/bin:/bin"

/* The shell's own descriptor for the environment it prints. */
#define ENV_FD 3
#define ENV_COMMAND "/usr/bin/env -0 >/dev/fd/3"

/* Names that describe the login shell's process, not the script's. */
static const char *const dropped[] = {"PWD", "OLDPWD", "_"};

static char *entry(const char *name, const char *value)
{
    char *s = NULL;
    return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

static int make_minimal(struct loginenv *le, const struct passwd *pw)
{
    const char *path = pw->pw_uid == 0 ? ROOT_PATH : USER_PATH;
    le->minimal[0] = entry("HOME", le->home);
    le->minimal[1] = entry("SHELL", le->shell);
    le->minimal[2] = entry("USER", pw->pw_name);
    le->minimal[3] = entry("LOGNAME", pw->pw_name);
    le->minimal[4] = entry("PATH", path);
    le->minimal[5] = NULL;
    for (size_t i = 0; i < 5; i++)
        if (!le->minimal[i])
            return TS_ENOMEM;
    return TS_OK;
}

static int copy_bounded(char *dst, size_t len, const char *src)
{
    int w = snprintf(dst, len, "%s", src);
    return w < 0 || (size_t)w >= len ? TS_EINVAL : TS_OK;
}

int loginenv_prepare(struct loginenv *le, const struct passwd *pw, size_t n_passed,
                     unsigned timeout_ms)
{
    memset(le, 0, sizeof(*le));
    le->timeout_ms = timeout_ms;
    le->out_cap = n_passed + LOGINENV_MAX_VARS + 6; /* passed, vars or the minimal, NULL */
    if (!(le->out = calloc(le->out_cap, sizeof(char *))))
        return TS_ENOMEM;
    if (!pw)
        return TS_OK;
    /* login(1): an empty shell field means /bin/sh */
    const char *shell = pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
    const char *base = strrchr(shell, '/');
    base = base ? base + 1 : shell;
    int err = copy_bounded(le->shell, sizeof(le->shell), shell);
    if (!err)
        err = copy_bounded(le->home, sizeof(le->home), pw->pw_dir ? pw->pw_dir : "/");
    if (!err && snprintf(le->argv0, sizeof(le->argv0), "-%s", base) < 0)
        err = TS_EINVAL;
    if (!err)
        err = make_minimal(le, pw);
    if (!err && !(le->buf = malloc(LOGINENV_MAX_BYTES)))
        err = TS_ENOMEM;
    if (!err && !(le->vars = calloc(LOGINENV_MAX_VARS + 1, sizeof(char *))))
        err = TS_ENOMEM;
    le->cap = LOGINENV_MAX_BYTES;
    le->known = !err;
    return err == TS_EINVAL ? TS_OK : err; /* an unusable entry: the passed variables alone */
}

void loginenv_release(struct loginenv *le)
{
    for (size_t i = 0; i < 5; i++)
        free(le->minimal[i]);
    free(le->buf);
    free(le->vars);
    free(le->out);
    memset(le, 0, sizeof(*le));
}

/* ------------------------------------------------------------------------------------ */
/* in the script's process: system calls only */

__attribute__((noreturn)) static void shell_exec(const struct loginenv *le, int wfd)
{
    if (wfd == ENV_FD)
        fcntl(ENV_FD, F_SETFD, 0);
    else if (dup2(wfd, ENV_FD) < 0)
        _exit(127);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
        _exit(127);
    if (chdir(le->home) != 0 && chdir("/") != 0)
        _exit(127);
    char *argv[] = {(char *)le->argv0, (char *)"-c", (char *)ENV_COMMAND, NULL};
    execve(le->shell, argv, le->minimal);
    _exit(127);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

enum outcome { READ_OK, READ_TIMEOUT, READ_TOO_LONG, READ_FAILED };

/* Read fd until its end and the shell's exit, the bound, or the deadline; *used is what
 * came, *reaped whether the shell's status is in *status. The shell's children may keep
 * the pipe open: once the shell has exited, what is in the pipe is all there will be. */
static enum outcome read_output(struct loginenv *le, int fd, pid_t pid, int *status,
                                size_t *used, int *reaped)
{
    long long deadline = now_ms() + le->timeout_ms;
    int eof = 0;
    *used = 0;
    *reaped = 0;
    for (;;) {
        while (!eof) {
            ssize_t n = read(fd, le->buf + *used, le->cap - *used);
            if (n > 0 && (*used += (size_t)n) == le->cap)
                return READ_TOO_LONG;
            if (n > 0 || (n < 0 && errno == EINTR))
                continue;
            if (n < 0 && errno != EAGAIN)
                return READ_FAILED;
            eof = n == 0;
            break;
        }
        if (*reaped)
            return READ_OK; /* the read after the exit took what it wrote */
        if (waitpid(pid, status, WNOHANG) == pid) {
            *reaped = 1;
            continue;
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return READ_TIMEOUT;
        struct pollfd p = {.fd = eof ? -1 : fd, .events = POLLIN};
        poll(&p, 1, left < 50 ? (int)left : 50);
    }
}

static int name_eq(const char *a, const char *b)
{
    while (*a && *a != '=' && *a == *b)
        a++, b++;
    return (*a == '=' || !*a) && (*b == '=' || !*b);
}

static int named_in(const char *e, char *const *list)
{
    for (size_t i = 0; list && list[i]; i++)
        if (name_eq(e, list[i]))
            return 1;
    return 0;
}

static int dropped_name(const char *e)
{
    for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
        if (name_eq(e, dropped[i]))
            return 1;
    return 0;
}

/* Entries of base that passed does not name, then passed. */
static char **merge(struct loginenv *le, char *const *base, char *const *passed)
{
    size_t n = 0;
    for (size_t i = 0; base && base[i]; i++)
        if (!named_in(base[i], passed))
            le->out[n++] = base[i];
    for (size_t i = 0; passed && passed[i] && n + 1 < le->out_cap; i++)
        le->out[n++] = passed[i];
    le->out[n] = NULL;
    return le->out;
}

/* The shell's output as le->vars, dropping malformed entries and the dropped names; 0
 * when it has more entries than the bound. */
static int split_output(struct loginenv *le, size_t used)
{
    size_t n = 0;
    le->buf[used - 1] = '\0'; /* env -0 ends every entry with one */
    for (size_t at = 0; at < used;) {
        char *e = le->buf + at;
        size_t len = strlen(e);
        at += len + 1;
        const char *eq = strchr(e, '=');
        if (!eq || eq == e || dropped_name(e))
            continue;
        if (n == LOGINENV_MAX_VARS)
            return 0;
        le->vars[n++] = e;
    }
    le->vars[n] = NULL;
    return 1;
}

/* One line where the job's errors go: the script's process has no other channel. why: a
 * reason in which a "%d" takes value. */
static void warn(const struct loginenv *le, const char *why, int value)
{
    char reason[96];
    snprintf(reason, sizeof(reason), why, value);
    dprintf(2,
            "tessera-noded: warning: the login environment of %s could not be read (%s): "
            "running with the job's variables and HOME, SHELL, USER, LOGNAME, PATH only\n",
            le->known ? le->shell : "a user without a usable passwd entry", reason);
}

char **loginenv_merge(struct loginenv *le, char *const *passed)
{
    if (!le->known) {
        warn(le, "no passwd entry", 0);
        return merge(le, NULL, passed);
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        warn(le, "pipe failed", 0);
        return merge(le, le->minimal, passed);
    }
    pid_t pid = fork();
    if (pid == 0)
        shell_exec(le, p[1]); /* never returns */
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        warn(le, "fork failed", 0);
        return merge(le, le->minimal, passed);
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    int status = 0, reaped;
    size_t used = 0;
    enum outcome o = read_output(le, p[0], pid, &status, &used, &reaped);
    close(p[0]);
    if (!reaped) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    if (o == READ_TIMEOUT)
        warn(le, "no answer within %d ms", (int)le->timeout_ms);
    else if (o == READ_TOO_LONG)
        warn(le, "more than %d bytes", (int)le->cap);
    else if (o == READ_FAILED)
        warn(le, "reading failed", 0);
    else if (WIFSIGNALED(status))
        warn(le, "the shell was killed by signal %d", WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
        warn(le, "the shell exited with status %d", WEXITSTATUS(status));
    else if (used == 0)
        warn(le, "the shell printed nothing", 0);
    else if (!split_output(le, used))
        warn(le, "more than %d variables", (int)LOGINENV_MAX_VARS);
    else
        return merge(le, le->vars, passed);
    return merge(le, le->minimal, passed);
}
