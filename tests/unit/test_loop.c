/* Unit tests for the epoll event loop (common/net/loop.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/net/loop.h"
#include "common/util/errors.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 5000

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Iterate until *flag becomes true, failing the test after DEADLINE_MS. */
static void run_until(struct loop *loop, const bool *flag)
{
    uint64_t end = now_ms() + DEADLINE_MS;
    while (!*flag) {
        assert_true(now_ms() < end);
        assert_int_equal(loop_run_once(loop, 50), TS_OK);
    }
}

/* Iterate for about ms milliseconds. */
static void run_for(struct loop *loop, uint64_t ms)
{
    uint64_t end = now_ms() + ms;
    for (uint64_t t = now_ms(); t < end; t = now_ms())
        assert_int_equal(loop_run_once(loop, (int)(end - t)), TS_OK);
}

static int setup(void **state)
{
    struct loop *loop = loop_create();
    if (!loop)
        return -1;
    *state = loop;
    return 0;
}

static int teardown(void **state)
{
    loop_destroy(*state);
    return 0;
}

static void make_pipe(int fds[2])
{
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
}

/* ---- fd watchers ------------------------------------------------------------------- */

struct fd_rec {
    int calls;
    int fd;
    unsigned events;
};

static void record_fd(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct fd_rec *r = arg;
    r->calls++;
    r->fd = fd;
    r->events = events;
}

static void test_fd_readiness(void **state)
{
    struct loop *loop = *state;
    int p[2];
    make_pipe(p);
    struct fd_rec rd = {0}, wr = {0};

    assert_int_equal(loop_fd_add(loop, p[0], LOOP_READ, record_fd, &rd), TS_OK);
    assert_int_equal(loop_fd_add(loop, p[0], LOOP_READ, record_fd, &rd), TS_EEXIST);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(rd.calls, 0);

    assert_int_equal(write(p[1], "x", 1), 1);
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(rd.calls, 1);
    assert_int_equal(rd.fd, p[0]);
    assert_true(rd.events & LOOP_READ);

    /* Idle: registered, but not reported although still readable. */
    assert_int_equal(loop_fd_modify(loop, p[0], 0), TS_OK);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(rd.calls, 1);
    assert_int_equal(loop_fd_modify(loop, p[0], LOOP_READ), TS_OK);
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(rd.calls, 2);

    /* The write end of an empty pipe is writable at once. */
    assert_int_equal(loop_fd_add(loop, p[1], LOOP_WRITE, record_fd, &wr), TS_OK);
    assert_int_equal(loop_fd_remove(loop, p[0]), TS_OK);
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(wr.calls, 1);
    assert_int_equal(wr.events, LOOP_WRITE);
    assert_int_equal(rd.calls, 2);

    assert_int_equal(loop_fd_remove(loop, p[1]), TS_OK);
    assert_int_equal(loop_fd_remove(loop, p[1]), TS_ENOENT);
    assert_int_equal(loop_fd_modify(loop, p[1], LOOP_READ), TS_ENOENT);
    assert_int_equal(loop_fd_add(loop, -1, LOOP_READ, record_fd, &rd), TS_EINVAL);
    close(p[0]);
    close(p[1]);
}

static void test_fd_hangup(void **state)
{
    struct loop *loop = *state;
    int p[2];
    make_pipe(p);
    struct fd_rec rd = {0};
    assert_int_equal(loop_fd_add(loop, p[0], LOOP_READ, record_fd, &rd), TS_OK);
    close(p[1]);
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(rd.calls, 1);
    assert_true(rd.events & (LOOP_READ | LOOP_ERROR));
    assert_int_equal(loop_fd_remove(loop, p[0]), TS_OK);
    close(p[0]);
}

static void remove_self(struct loop *loop, int fd, unsigned events, void *arg)
{
    int *calls = arg;
    (*calls)++;
    assert_int_equal(loop_fd_remove(loop, fd), TS_OK);
}

static void test_fd_remove_in_own_callback(void **state)
{
    struct loop *loop = *state;
    int p[2];
    make_pipe(p);
    int calls = 0;
    assert_int_equal(loop_fd_add(loop, p[0], LOOP_READ, remove_self, &calls), TS_OK);
    assert_int_equal(write(p[1], "x", 1), 1); /* stays unread: level-triggered */
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(calls, 1);
    close(p[0]);
    close(p[1]);
}

/* Two pipes are readable in the same iteration; whichever callback runs first removes the
 * other watcher, closes its fd and registers a new pipe, which likely reuses the fd
 * number: neither the removed callback nor the newcomer may see the stale event. */
struct pair_ctx {
    int a[2], b[2], c[2];
    int calls_a, calls_b, calls_new;
};

static void newcomer(struct loop *loop, int fd, unsigned events, void *arg)
{
    ((struct pair_ctx *)arg)->calls_new++;
}

static void remove_other(struct pair_ctx *ctx, struct loop *loop, int other[2])
{
    assert_int_equal(loop_fd_remove(loop, other[0]), TS_OK);
    close(other[0]);
    other[0] = -1;
    make_pipe(ctx->c);
    assert_int_equal(loop_fd_add(loop, ctx->c[0], LOOP_READ, newcomer, ctx), TS_OK);
}

static void pair_a(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct pair_ctx *ctx = arg;
    char byte;
    assert_int_equal(read(fd, &byte, 1), 1);
    ctx->calls_a++;
    remove_other(ctx, loop, ctx->b);
}

static void pair_b(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct pair_ctx *ctx = arg;
    char byte;
    assert_int_equal(read(fd, &byte, 1), 1);
    ctx->calls_b++;
    remove_other(ctx, loop, ctx->a);
}

static void test_fd_remove_collected(void **state)
{
    struct loop *loop = *state;
    struct pair_ctx ctx = {0};
    make_pipe(ctx.a);
    make_pipe(ctx.b);
    assert_int_equal(loop_fd_add(loop, ctx.a[0], LOOP_READ, pair_a, &ctx), TS_OK);
    assert_int_equal(loop_fd_add(loop, ctx.b[0], LOOP_READ, pair_b, &ctx), TS_OK);
    assert_int_equal(write(ctx.a[1], "x", 1), 1);
    assert_int_equal(write(ctx.b[1], "x", 1), 1);
    /* Let both become ready before the loop collects them in one epoll_wait. */
    assert_int_equal(loop_run_once(loop, 1000), TS_OK);
    assert_int_equal(ctx.calls_a + ctx.calls_b, 1);
    assert_int_equal(ctx.calls_new, 0);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(ctx.calls_a + ctx.calls_b, 1);
    assert_int_equal(ctx.calls_new, 0);

    int *live = ctx.a[0] >= 0 ? ctx.a : ctx.b;
    loop_fd_remove(loop, live[0]);
    loop_fd_remove(loop, ctx.c[0]);
    for (int i = 0; i < 2; i++) {
        close(ctx.c[i]);
        close(ctx.a[i]);
        close(ctx.b[i]);
    }
}

/* ---- timers --------------------------------------------------------------------------- */

struct order_ctx {
    int order[8];
    int n;
};

struct tagged {
    struct order_ctx *ctx;
    int tag;
};

static void record_order(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct tagged *tg = arg;
    tg->ctx->order[tg->ctx->n++] = tg->tag;
}

static void test_timer_order(void **state)
{
    struct loop *loop = *state;
    struct order_ctx ctx = {0};
    static const uint64_t after[] = {30, 10, 20, 10, 0};
    struct tagged tg[5];
    for (int i = 0; i < 5; i++) {
        tg[i] = (struct tagged){&ctx, i};
        assert_non_null(loop_timer_add(loop, after[i], 0, record_order, &tg[i]));
    }
    run_for(loop, 60);
    assert_int_equal(ctx.n, 5);
    /* by due time; equal due times in the order they were added */
    static const int expect[] = {4, 1, 3, 2, 0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(ctx.order[i], expect[i]);
}

static void count_timer(struct loop *loop, struct loop_timer *t, void *arg)
{
    (*(int *)arg)++;
}

static void test_timer_one_shot(void **state)
{
    struct loop *loop = *state;
    int calls = 0;
    uint64_t start = loop_now_ms(loop); /* timers count from the loop's clock */
    assert_non_null(loop_timer_add(loop, 20, 0, count_timer, &calls));
    while (calls == 0)
        assert_int_equal(loop_run_once(loop, -1), TS_OK);
    assert_true(now_ms() - start >= 20);
    run_for(loop, 30);
    assert_int_equal(calls, 1);
}

struct repeat_ctx {
    int calls;
    bool done;
};

static void repeat_cb(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct repeat_ctx *ctx = arg;
    if (++ctx->calls == 5) {
        loop_timer_cancel(loop, t);
        ctx->done = true;
    }
}

static void test_timer_repeat_cancel_self(void **state)
{
    struct loop *loop = *state;
    struct repeat_ctx ctx = {0};
    assert_non_null(loop_timer_add(loop, 2, 2, repeat_cb, &ctx));
    run_until(loop, &ctx.done);
    run_for(loop, 20);
    assert_int_equal(ctx.calls, 5);
}

struct cancel_ctx {
    struct loop_timer *victim;
    int victim_calls;
    bool fired;
};

static void canceller(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct cancel_ctx *ctx = arg;
    loop_timer_cancel(loop, ctx->victim);
    ctx->fired = true;
}

static void victim_cb(struct loop *loop, struct loop_timer *t, void *arg)
{
    ((struct cancel_ctx *)arg)->victim_calls++;
}

static void test_timer_cancel_other(void **state)
{
    struct loop *loop = *state;
    struct cancel_ctx ctx = {0};
    int pending_calls = 0;
    /* Same due time: the canceller runs first, the victim is due in the same pass. */
    assert_non_null(loop_timer_add(loop, 5, 0, canceller, &ctx));
    ctx.victim = loop_timer_add(loop, 5, 0, victim_cb, &ctx);
    assert_non_null(ctx.victim);
    struct loop_timer *pending = loop_timer_add(loop, 10, 0, count_timer, &pending_calls);
    loop_timer_cancel(loop, pending);
    loop_timer_cancel(loop, NULL);
    run_until(loop, &ctx.fired);
    run_for(loop, 20);
    assert_int_equal(ctx.victim_calls, 0);
    assert_int_equal(pending_calls, 0);
}

/* Many timers, half of them cancelled from arbitrary heap positions: the rest fire in
 * due order, the cancelled ones never. */
#define MANY_TIMERS 300

struct many_ctx {
    struct loop_timer *timers[MANY_TIMERS];
    uint64_t due[MANY_TIMERS];
    bool cancelled[MANY_TIMERS];
    int fired, expected;
    uint64_t last_due;
    bool bad;
};

struct many_item {
    struct many_ctx *ctx;
    int i;
};

static void many_cb(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct many_item *it = arg;
    struct many_ctx *ctx = it->ctx;
    if (ctx->cancelled[it->i] || ctx->due[it->i] < ctx->last_due ||
        loop_now_ms(loop) < ctx->due[it->i])
        ctx->bad = true;
    ctx->last_due = ctx->due[it->i];
    ctx->timers[it->i] = NULL;
    ctx->fired++;
    /* Cancel a later one from inside a callback too. */
    int victim = (it->i * 7 + 3) % MANY_TIMERS;
    if (ctx->timers[victim] && !ctx->cancelled[victim]) {
        loop_timer_cancel(loop, ctx->timers[victim]);
        ctx->timers[victim] = NULL;
        ctx->cancelled[victim] = true;
        ctx->expected--;
    }
}

static void test_timer_many(void **state)
{
    struct loop *loop = *state;
    static struct many_ctx ctx;
    static struct many_item items[MANY_TIMERS];
    memset(&ctx, 0, sizeof(ctx));
    unsigned seed = 12345;
    uint64_t base = loop_now_ms(loop);
    for (int i = 0; i < MANY_TIMERS; i++) {
        uint64_t after = (uint64_t)(rand_r(&seed) % 30);
        items[i] = (struct many_item){&ctx, i};
        ctx.due[i] = base + after;
        ctx.timers[i] = loop_timer_add(loop, after, 0, many_cb, &items[i]);
        assert_non_null(ctx.timers[i]);
    }
    ctx.expected = MANY_TIMERS;
    for (int i = 0; i < MANY_TIMERS; i++) {
        if (rand_r(&seed) % 2) {
            loop_timer_cancel(loop, ctx.timers[i]);
            ctx.timers[i] = NULL;
            ctx.cancelled[i] = true;
            ctx.expected--;
        }
    }
    run_for(loop, 50);
    assert_false(ctx.bad);
    assert_int_equal(ctx.fired, ctx.expected);
}

struct zero_ctx {
    int iteration;
    int added_in, fired_in;
    bool fired;
};

static void count_iteration(struct loop *loop, void *arg)
{
    ((struct zero_ctx *)arg)->iteration++;
}

static void zero_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct zero_ctx *ctx = arg;
    ctx->fired_in = ctx->iteration;
    ctx->fired = true;
}

static void add_zero(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct zero_ctx *ctx = arg;
    ctx->added_in = ctx->iteration;
    assert_non_null(loop_timer_add(loop, 0, 0, zero_fired, ctx));
}

static void test_timer_zero_next_iteration(void **state)
{
    struct loop *loop = *state;
    struct zero_ctx ctx = {0};
    assert_int_equal(loop_prepare_add(loop, count_iteration, &ctx), TS_OK);
    assert_non_null(loop_timer_add(loop, 0, 0, add_zero, &ctx));
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_int_equal(ctx.added_in, 1);
    assert_false(ctx.fired);
    /* Due at once, so the loop must not block even with an infinite timeout. */
    assert_int_equal(loop_run_once(loop, -1), TS_OK);
    assert_true(ctx.fired);
    assert_int_equal(ctx.fired_in, 2);
}

static void test_timer_no_busy_loop(void **state)
{
    struct loop *loop = *state;
    struct zero_ctx ctx = {0};
    int calls = 0;
    assert_int_equal(loop_prepare_add(loop, count_iteration, &ctx), TS_OK);
    assert_non_null(loop_timer_add(loop, 50, 0, count_timer, &calls));
    while (calls == 0)
        assert_int_equal(loop_run_once(loop, -1), TS_OK);
    /* One wait for the timer; a spurious early wake-up at most. */
    assert_in_range(ctx.iteration, 1, 3);
}

/* ---- signals and children --------------------------------------------------------------- */

struct sig_ctx {
    int signo;
    bool got;
};

static void on_signal(struct loop *loop, int signo, void *arg)
{
    struct sig_ctx *ctx = arg;
    ctx->signo = signo;
    ctx->got = true;
}

static void test_signal(void **state)
{
    struct loop *loop = *state;
    struct sig_ctx ctx = {0};
    assert_int_equal(loop_signal_add(loop, SIGUSR1, on_signal, &ctx), TS_OK);
    assert_int_equal(loop_signal_add(loop, SIGUSR1, on_signal, &ctx), TS_EEXIST);
    assert_int_equal(loop_signal_add(loop, SIGKILL, on_signal, &ctx), TS_EINVAL);
    assert_int_equal(raise(SIGUSR1), 0);
    run_until(loop, &ctx.got);
    assert_int_equal(ctx.signo, SIGUSR1);
}

struct child_ctx {
    pid_t pid;
    int status;
    struct rusage ru;
    bool done;
};

static void on_child(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                     void *arg)
{
    struct child_ctx *ctx = arg;
    assert_false(ctx->done); /* reported once */
    assert_non_null(ru);
    ctx->pid = pid;
    ctx->status = status;
    ctx->ru = *ru;
    ctx->done = true;
}

static void test_child_exit(void **state)
{
    struct loop *loop = *state;
    struct child_ctx exited = {0}, killed = {0};

    pid_t p1 = fork();
    assert_true(p1 >= 0);
    if (p1 == 0)
        _exit(3);
    assert_int_equal(loop_child_watch(loop, p1, on_child, &exited), TS_OK);
    assert_int_equal(loop_child_watch(loop, p1, on_child, &exited), TS_EEXIST);

    pid_t p2 = fork();
    assert_true(p2 >= 0);
    if (p2 == 0) {
        for (;;)
            pause();
    }
    assert_int_equal(loop_child_watch(loop, p2, on_child, &killed), TS_OK);
    assert_int_equal(kill(p2, SIGKILL), 0);

    run_until(loop, &exited.done);
    run_until(loop, &killed.done);
    assert_int_equal(exited.pid, p1);
    assert_true(WIFEXITED(exited.status));
    assert_int_equal(WEXITSTATUS(exited.status), 3);
    assert_int_equal(killed.pid, p2);
    assert_true(WIFSIGNALED(killed.status));
    assert_int_equal(WTERMSIG(killed.status), SIGKILL);
}

/* A child burning CPU for ~0.3 s in 40 MB it touched: the loop hands wait4's usage. */
static void test_child_usage(void **state)
{
    struct loop *loop = *state;
    struct child_ctx ctx = {0};
    enum { MB = 40 };
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        volatile unsigned char *mem = malloc((size_t)MB << 20);
        if (!mem)
            _exit(1);
        for (size_t i = 0; i < (size_t)MB << 20; i += 512)
            mem[i] = (unsigned char)i;
        struct timespec ts;
        unsigned sum = 0;
        do {
            for (size_t i = 0; i < (size_t)MB << 20; i += 4096)
                sum += mem[i];
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        } while (ts.tv_sec == 0 && ts.tv_nsec < 300000000L);
        _exit(sum == 1 ? 2 : 0);
    }
    assert_int_equal(loop_child_watch(loop, pid, on_child, &ctx), TS_OK);
    run_until(loop, &ctx.done);
    assert_int_equal(ctx.pid, pid);
    assert_true(WIFEXITED(ctx.status));
    assert_int_equal(WEXITSTATUS(ctx.status), 0);
    const struct rusage *ru = &ctx.ru;
    uint64_t user_us = (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
    uint64_t sys_us = (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
    assert_true(user_us > 0);
    assert_true(user_us + sys_us >= 250000u); /* the clock it burnt, give or take a tick */
    assert_true(ru->ru_maxrss >= MB * 1024L); /* kilobytes */
}

static void test_many_children(void **state)
{
    struct loop *loop = *state;
    enum { N = 40 };
    struct child_ctx ctx[N] = {{0}};
    for (int i = 0; i < N; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(i);
        assert_int_equal(loop_child_watch(loop, pid, on_child, &ctx[i]), TS_OK);
    }
    for (int i = 0; i < N; i++) {
        run_until(loop, &ctx[i].done);
        assert_true(WIFEXITED(ctx[i].status));
        assert_int_equal(WEXITSTATUS(ctx[i].status), i);
    }
}

static void test_orphan(void **state)
{
    struct loop *loop = *state;
    struct child_ctx orphan = {0};
    loop_set_orphan_cb(loop, on_child, &orphan);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(7);
    run_until(loop, &orphan.done);
    assert_int_equal(orphan.pid, pid);
    assert_true(WIFEXITED(orphan.status));
    assert_int_equal(WEXITSTATUS(orphan.status), 7);
}

/* ---- posts, prepare hooks, stop ---------------------------------------------------------- */

#define POSTS_PER_THREAD 5000

struct post_ctx {
    struct loop *loop;
    int next[2];
    int received;
    bool all;
    bool out_of_order;
};

struct post_item {
    struct post_ctx *ctx;
    int thread, seq;
};

struct poster {
    struct post_ctx *ctx;
    int thread;
    struct post_item items[POSTS_PER_THREAD];
};

static void on_post(struct loop *loop, void *arg)
{
    struct post_item *it = arg;
    struct post_ctx *ctx = it->ctx;
    if (it->seq != ctx->next[it->thread])
        ctx->out_of_order = true;
    ctx->next[it->thread] = it->seq + 1;
    if (++ctx->received == 2 * POSTS_PER_THREAD)
        ctx->all = true;
}

static void *poster_main(void *arg)
{
    struct poster *p = arg;
    for (int i = 0; i < POSTS_PER_THREAD; i++) {
        p->items[i] = (struct post_item){p->ctx, p->thread, i};
        if (loop_post(p->ctx->loop, on_post, &p->items[i]) != TS_OK)
            abort();
    }
    return NULL;
}

static void test_post_threads(void **state)
{
    struct loop *loop = *state;
    struct post_ctx ctx = {.loop = loop};
    static struct poster posters[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        posters[i].ctx = &ctx;
        posters[i].thread = i;
        assert_int_equal(pthread_create(&th[i], NULL, poster_main, &posters[i]), 0);
    }
    run_until(loop, &ctx.all);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_false(ctx.out_of_order);
    assert_int_equal(ctx.received, 2 * POSTS_PER_THREAD);
    assert_int_equal(ctx.next[0], POSTS_PER_THREAD);
    assert_int_equal(ctx.next[1], POSTS_PER_THREAD);
}

struct hook_log {
    char text[32];
    size_t len;
};

struct hook {
    struct hook_log *log;
    char name;
};

static void log_hook(struct loop *loop, void *arg)
{
    struct hook *h = arg;
    if (h->log->len + 1 < sizeof(h->log->text))
        h->log->text[h->log->len++] = h->name;
}

static void log_and_remove_self(struct loop *loop, void *arg)
{
    log_hook(loop, arg);
    assert_int_equal(loop_prepare_remove(loop, log_and_remove_self, arg), TS_OK);
}

static void test_prepare_hooks(void **state)
{
    struct loop *loop = *state;
    struct hook_log log = {0};
    struct hook a = {&log, 'a'}, b = {&log, 'b'}, c = {&log, 'c'};
    assert_int_equal(loop_prepare_add(loop, log_hook, &a), TS_OK);
    assert_int_equal(loop_prepare_add(loop, log_and_remove_self, &c), TS_OK);
    assert_int_equal(loop_prepare_add(loop, log_hook, &b), TS_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_string_equal(log.text, "acbabab");
    assert_int_equal(loop_prepare_remove(loop, log_hook, &a), TS_OK);
    assert_int_equal(loop_prepare_remove(loop, log_hook, &a), TS_ENOENT);
    assert_int_equal(loop_run_once(loop, 0), TS_OK);
    assert_string_equal(log.text, "acbababb");
}

struct stop_ctx {
    struct loop *loop;
    bool timed_out;
};

static void *stopper_main(void *arg)
{
    struct stop_ctx *ctx = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    loop_stop(ctx->loop);
    return NULL;
}

static void guard_timer(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct stop_ctx *ctx = arg;
    ctx->timed_out = true;
    loop_stop(loop);
}

static void stop_from_post(struct loop *loop, void *arg)
{
    loop_stop(loop);
}

static void test_stop_from_thread(void **state)
{
    struct loop *loop = *state;
    struct stop_ctx ctx = {.loop = loop};
    struct loop_timer *guard = loop_timer_add(loop, DEADLINE_MS, 0, guard_timer, &ctx);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stopper_main, &ctx), 0);
    assert_int_equal(loop_run(loop), TS_OK);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_false(ctx.timed_out);

    /* A stop from a callback; then a stop requested before the run starts. */
    assert_int_equal(loop_post(loop, stop_from_post, NULL), TS_OK);
    assert_int_equal(loop_run(loop), TS_OK);
    loop_stop(loop);
    assert_int_equal(loop_run(loop), TS_OK);
    assert_false(ctx.timed_out);
    loop_timer_cancel(loop, guard);
}

static void never_called(struct loop *loop, void *arg)
{
    fail_msg("a dropped post ran");
}

static void test_destroy_with_pending_work(void **state)
{
    struct loop *loop = *state;
    int p[2];
    make_pipe(p);
    int calls = 0;
    struct fd_rec rec = {0};
    assert_int_equal(loop_fd_add(loop, p[0], LOOP_READ, record_fd, &rec), TS_OK);
    assert_non_null(loop_timer_add(loop, 1000, 1000, count_timer, &calls));
    assert_non_null(loop_timer_add(loop, 2000, 0, count_timer, &calls));
    assert_int_equal(loop_post(loop, never_called, NULL), TS_OK);
    assert_int_equal(loop_prepare_add(loop, stop_from_post, NULL), TS_OK);
    /* teardown destroys the loop: nothing leaks (checked under valgrind/ASan) */
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fd_readiness, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fd_hangup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fd_remove_in_own_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fd_remove_collected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_one_shot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_repeat_cancel_self, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_cancel_other, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_zero_next_iteration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_no_busy_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_child_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_children, setup, teardown),
        cmocka_unit_test_setup_teardown(test_child_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_orphan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prepare_hooks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_from_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_pending_work, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
