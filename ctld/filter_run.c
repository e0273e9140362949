/* Filters as child processes on the controller's loop.
 *
 * posix_spawn (no fork of the threaded controller's memory): the child gets /dev/null as
 * input, pipes for its output, default signal handling with nothing blocked, a process
 * group of its own (a time-out kills the whole group) and a small fixed environment. Its
 * exit comes through loop_child_watch; its output is drained as it comes and once more
 * at the exit, kept up to OUTPUT_MAX bytes a stream, and logged. */
#include "ctld/filter_run.h"

#include "ctld/ctld.h"

#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTPUT_MAX 4096
#define MAX_ARGS 8
#define MAX_RUNNING 64 /* filters running at once; more wait their turn */

struct stream {
    int fd;
    char buf[OUTPUT_MAX + 1];
    size_t len;
    int cut;          /* more came than was kept */
};

struct filter_run {
    struct ctld *c;
    struct filter_run *next;   /* c->filters, oldest first */
    char *path, *what;
    char *args[MAX_ARGS + 1];
    pid_t pid;
    struct stream out, err;
    struct loop_timer *timer;
    int queued;                /* waiting for a free place (MAX_RUNNING run at once) */
    int timed_out, not_found, no_start;
    int dead;                  /* shutting down: killed, reaped, never reported */
    filter_done_fn done;
    void *arg;
};

const char *filter_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void unlink_run(struct filter_run *r)
{
    for (struct filter_run **p = &r->c->filters; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            return;
        }
    }
}

static void close_stream(struct ctld *c, struct stream *s)
{
    if (s->fd < 0)
        return;
    loop_fd_remove(c->loop, s->fd);
    close(s->fd);
    s->fd = -1;
}

static void free_run(struct filter_run *r)
{
    close_stream(r->c, &r->out);
    close_stream(r->c, &r->err);
    loop_timer_cancel(r->c->loop, r->timer);
    for (size_t i = 0; r->args[i]; i++)
        free(r->args[i]);
    free(r->path);
    free(r->what);
    free(r);
}

/* Read what is there; 0 at EOF or error (the stream is then closed). */
static void drain(struct ctld *c, struct stream *s)
{
    char chunk[1024];
    while (s->fd >= 0) {
        ssize_t n = read(s->fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close_stream(c, s);
            return;
        }
        size_t keep = OUTPUT_MAX - s->len < (size_t)n ? OUTPUT_MAX - s->len : (size_t)n;
        memcpy(s->buf + s->len, chunk, keep);
        s->len += keep;
        s->cut |= keep < (size_t)n;
    }
}

static void on_output(struct loop *loop, int fd, unsigned events, void *arg)
{
    (void)loop;
    (void)events;
    struct filter_run *r = arg;
    drain(r->c, fd == r->out.fd ? &r->out : &r->err);
}

static void log_stream(const struct filter_run *r, const char *name, struct stream *s)
{
    if (!s->len)
        return;
    s->buf[s->len] = '\0';
    for (char *line = s->buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        log_info("filter %s (%s) %s: %s", filter_name(r->path), r->what, name, line);
    }
    if (s->cut)
        log_info("filter %s (%s) %s: ... (cut after %d bytes)", filter_name(r->path), r->what,
                 name, OUTPUT_MAX);
}

static void pump(struct ctld *c);

static void finish(struct filter_run *r, struct filter_result *res)
{
    struct ctld *c = r->c;
    if (r->dead) { /* shutting down: nobody waits for it */
        unlink_run(r);
        free_run(r);
        return;
    }
    drain(r->c, &r->out);
    drain(r->c, &r->err);
    size_t first = strcspn(r->err.buf, "\n");
    r->err.buf[r->err.len] = '\0';
    snprintf(res->first_err, sizeof(res->first_err), "%.*s",
             (int)(first < r->err.len ? first : r->err.len), r->err.buf);
    if (r->no_start)
        snprintf(res->first_err, sizeof(res->first_err), "it could not be started");
    log_stream(r, "stdout", &r->out);
    log_stream(r, "stderr", &r->err);
    unlink_run(r);
    r->done(r->c, r->arg, res);
    free_run(r);
    pump(c);
}

static void on_exit_status(struct loop *loop, pid_t pid, int status, const struct rusage *usage,
                           void *arg)
{
    (void)loop;
    (void)usage;
    struct filter_run *r = arg;
    kill(-pid, SIGKILL); /* what it left in its group ends with it */
    struct filter_result res = {0};
    if (r->timed_out) {
        res.end = FILTER_TIMEOUT;
    } else if (WIFEXITED(status)) {
        res.end = FILTER_EXITED;
        res.code = WEXITSTATUS(status);
    } else {
        res.end = FILTER_SIGNALED;
        res.code = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    log_verbose("filter %s (%s): %s %d", filter_name(r->path), r->what,
                res.end == FILTER_TIMEOUT ? "timed out, killed" :
                res.end == FILTER_EXITED  ? "exit" : "signal", res.code);
    finish(r, &res);
}

static void on_timeout(struct loop *loop, struct loop_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    struct filter_run *r = arg;
    r->timer = NULL; /* a one-shot timer is freed after this returns */
    r->timed_out = 1;
    log_warn("filter %s (%s): no answer within %u s, killed", filter_name(r->path), r->what,
             r->c->conf->filter_timeout);
    kill(-r->pid, SIGKILL);
}

/* A filter that cannot run still answers through the loop, never from within start. */
static void on_not_found(struct loop *loop, struct loop_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    struct filter_run *r = arg;
    r->timer = NULL;
    struct filter_result res = {.end = r->no_start ? FILTER_SIGNALED : FILTER_NOT_FOUND};
    if (!r->dead && r->no_start)
        log_error("filter %s (%s): cannot be started", r->path, r->what);
    else if (!r->dead)
        log_warn("filter %s (%s): not found or not executable", r->path, r->what);
    finish(r, &res);
}

/* PATH for filters: the controller's folder and the bin/ beside it first, so that a
 * filter finds Tessera's commands (squeue, scontrol) where they were installed or built. */
static void filter_path_env(char *buf, size_t len)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        snprintf(buf, len, "PATH=%s:%s/../bin:/usr/local/bin:/usr/bin:/bin", exe, exe);
    } else {
        snprintf(buf, len, "PATH=/usr/local/bin:/usr/bin:/bin");
    }
}

static int spawn(struct filter_run *r, int out_w, int err_w)
{
    char *argv[MAX_ARGS + 2];
    size_t n = 0;
    argv[n++] = r->path;
    for (size_t i = 0; r->args[i]; i++)
        argv[n++] = r->args[i];
    argv[n] = NULL;
    char conf_env[1100], path_env[2200];
    snprintf(conf_env, sizeof(conf_env), "TESSERA_CONF=%s", r->c->conf_path);
    filter_path_env(path_env, sizeof(path_env));
    char *envp[] = {path_env, "LANG=C.UTF-8", conf_env, NULL};

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_w, 1);
    posix_spawn_file_actions_adddup2(&fa, err_w, 2);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawn(&r->pid, r->path, &fa, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Our read end of a pipe: non-blocking for the loop; the child's end stays blocking, so a
 * filter that writes much is slowed down, not failed. */
static int open_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    int fl = fcntl(fds[0], F_GETFL);
    return fl < 0 ? -1 : fcntl(fds[0], F_SETFL, fl | O_NONBLOCK);
}

/* Start r now. A filter that cannot be found or started answers through a 0 ms timer. */
static void launch(struct filter_run *r)
{
    struct ctld *c = r->c;
    r->queued = 0;
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (access(r->path, X_OK) != 0) {
        r->not_found = 1;
    } else if (open_pipe(out) || open_pipe(err)) {
        r->no_start = 1;
    } else {
        int e = spawn(r, out[1], err[1]);
        if (e == ENOENT || e == EACCES || e == ENOEXEC || e == ENOTDIR)
            r->not_found = 1;
        else if (e)
            r->no_start = 1;
    }
    for (int i = 0; i < 2; i++) { /* the child has its ends; ours are the read ends */
        if (i == 1 || r->not_found || r->no_start) {
            if (out[i] >= 0)
                close(out[i]);
            if (err[i] >= 0)
                close(err[i]);
        }
    }
    if (!r->not_found && !r->no_start) {
        r->out.fd = out[0];
        r->err.fd = err[0];
        /* the child watch last: once it stands, only the exit frees r */
        if (loop_fd_add(c->loop, r->out.fd, LOOP_READ, on_output, r) ||
            loop_fd_add(c->loop, r->err.fd, LOOP_READ, on_output, r) ||
            !(r->timer = loop_timer_add(c->loop, (uint64_t)c->conf->filter_timeout * 1000, 0,
                                        on_timeout, r)) ||
            loop_child_watch(c->loop, r->pid, on_exit_status, r)) {
            kill(-r->pid, SIGKILL); /* reaped as an orphan */
            close_stream(c, &r->out);
            close_stream(c, &r->err);
            loop_timer_cancel(c->loop, r->timer);
            r->timer = NULL;
            r->no_start = 1;
        }
    }
    if ((r->not_found || r->no_start) && !(r->timer = loop_timer_add(c->loop, 0, 0, on_not_found, r)))
        log_error("filter %s (%s): out of memory; its answer is lost", r->path, r->what);
}

static size_t running(const struct ctld *c)
{
    size_t n = 0;
    for (const struct filter_run *r = c->filters; r; r = r->next)
        n += !r->queued && !r->dead;
    return n;
}

/* Start waiting filters, oldest first, while there is room. */
static void pump(struct ctld *c)
{
    size_t n = running(c);
    for (struct filter_run *r = c->filters; r && n < MAX_RUNNING; r = r->next) {
        if (r->queued) {
            launch(r);
            n++;
        }
    }
}

int filter_run_start(struct ctld *c, const char *path, const char *const args[],
                     const char *what, filter_done_fn done, void *arg)
{
    struct filter_run *r = calloc(1, sizeof(*r));
    if (!r)
        return TS_ENOMEM;
    r->c = c;
    r->out.fd = r->err.fd = -1;
    r->done = done;
    r->arg = arg;
    r->queued = 1;
    int err = !(r->path = strdup(path)) || !(r->what = strdup(what)) ? TS_ENOMEM : TS_OK;
    for (size_t i = 0; !err && args[i]; i++) {
        if (i == MAX_ARGS)
            err = TS_EINVAL;
        else if (!(r->args[i] = strdup(args[i])))
            err = TS_ENOMEM;
    }
    if (err) {
        free_run(r);
        return err;
    }
    struct filter_run **tail = &c->filters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    pump(c);
    return TS_OK;
}

void filter_run_shutdown(struct ctld *c)
{
    struct filter_run **p = &c->filters;
    while (*p) {
        struct filter_run *r = *p;
        if (r->queued) { /* never started: nothing refers to it */
            *p = r->next;
            free_run(r);
            continue;
        }
        /* a started one stays until the loop reaps it (its watchers point at it) */
        if (r->pid > 0 && !r->dead)
            kill(-r->pid, SIGKILL);
        r->dead = 1;
        p = &r->next;
    }
}

void filter_run_free_all(struct ctld *c)
{
    while (c->filters) {
        struct filter_run *r = c->filters;
        c->filters = r->next;
        free_run(r);
    }
}
