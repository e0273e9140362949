#include "common/net/loop.h"

#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOOP_MAX_EVENTS 64
#define LOOP_SIGINFO_BATCH 16
#define LOOP_CHILD_BUCKETS_MIN 16

/* An fd watcher. Every registration gets a fresh generation, which is also stored in the
 * epoll event, so an event collected for a watcher that was removed (and maybe replaced
 * by a new watcher on the same fd number) in the same iteration is recognised as stale
 * and dropped: removal can free the watcher at once. */
struct fd_watcher {
    int fd;
    unsigned events; /* LOOP_READ | LOOP_WRITE; 0 = idle and out of epoll */
    uint32_t gen;
    loop_fd_cb cb;
    void *arg;
};

struct loop_timer {
    uint64_t due;    /* monotonic ms */
    uint64_t seq;    /* creation order: ties on due fire first-added first */
    uint64_t repeat; /* ms, 0 = one-shot */
    size_t heap_idx; /* SIZE_MAX when not in the heap (running) */
    bool running;
    bool cancelled;  /* cancelled from its own callback: free when it returns */
    loop_timer_cb cb;
    void *arg;
};

struct child_watcher {
    pid_t pid;
    loop_child_cb cb;
    void *arg;
    struct child_watcher *next;
};

struct post {
    loop_fn fn;
    void *arg;
    struct post *next;
};

struct prepare_hook {
    loop_fn fn; /* NULL: removed while the hooks were running, compacted afterwards */
    void *arg;
};

struct signal_slot {
    loop_signal_cb cb;
    void *arg;
};

struct loop {
    int epfd;
    int wakefd; /* eventfd: posts and loop_stop */
    int sigfd;  /* signalfd, -1 until the first signal is added */
    sigset_t sigmask;
    uint64_t now;

    struct fd_watcher **fds; /* indexed by fd */
    size_t fds_cap;
    uint32_t next_gen;

    struct loop_timer **heap;
    size_t heap_len, heap_cap;
    uint64_t next_seq;

    struct signal_slot signals[_NSIG];

    bool child_installed;
    bool reap_pending; /* sweep for children that exited before SIGCHLD was blocked */
    struct child_watcher **child_buckets;
    size_t child_nbuckets, child_count;
    loop_child_cb orphan_cb;
    void *orphan_arg;

    struct prepare_hook *prepare;
    size_t prepare_len, prepare_cap;
    bool prepare_running, prepare_dirty;

    /* Shared with other threads. */
    pthread_mutex_t post_lock;
    struct post *post_head, *post_tail;
    atomic_bool stop;
};

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Returns arr, grown to hold need elements if it was smaller, or NULL (arr untouched)
 * when out of memory. */
static void *grow_array(void *arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return arr;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(arr, ncap * elem);
    if (p)
        *cap = ncap;
    return p;
}

/* ---- fd watchers ---------------------------------------------------------------- */

static struct fd_watcher *fd_lookup(const struct loop *loop, int fd)
{
    if (fd < 0 || (size_t)fd >= loop->fds_cap)
        return NULL;
    return loop->fds[fd];
}

static uint32_t to_epoll(unsigned events)
{
    uint32_t ev = 0;
    if (events & LOOP_READ)
        ev |= EPOLLIN;
    if (events & LOOP_WRITE)
        ev |= EPOLLOUT;
    return ev;
}

static unsigned from_epoll(uint32_t ev)
{
    unsigned events = 0;
    if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLPRI))
        events |= LOOP_READ;
    if (ev & EPOLLOUT)
        events |= LOOP_WRITE;
    if (ev & (EPOLLERR | EPOLLHUP))
        events |= LOOP_ERROR;
    return events;
}

static int errno_to_ts(int err)
{
    switch (err) {
    case ENOMEM:
        return TS_ENOMEM;
    case EEXIST:
        return TS_EEXIST;
    case ENOENT:
        return TS_ENOENT;
    case EBADF:
    case EINVAL:
    case EPERM: /* regular files cannot be polled */
        return TS_EINVAL;
    default:
        return TS_ESYS;
    }
}

static int epoll_apply(struct loop *loop, int op, struct fd_watcher *w)
{
    struct epoll_event ev = {
        .events = to_epoll(w->events),
        .data.u64 = ((uint64_t)w->gen << 32) | (uint32_t)w->fd,
    };
    if (epoll_ctl(loop->epfd, op, w->fd, &ev) < 0)
        return errno_to_ts(errno);
    return TS_OK;
}

int loop_fd_add(struct loop *loop, int fd, unsigned events, loop_fd_cb cb, void *arg)
{
    if (fd < 0 || !cb || (events & ~(LOOP_READ | LOOP_WRITE)))
        return TS_EINVAL;
    if (fd_lookup(loop, fd))
        return TS_EEXIST;
    size_t old_cap = loop->fds_cap;
    struct fd_watcher **fds = grow_array(loop->fds, &loop->fds_cap, (size_t)fd + 1,
                                         sizeof(*loop->fds));
    if (!fds)
        return TS_ENOMEM;
    loop->fds = fds;
    if (loop->fds_cap > old_cap)
        memset(loop->fds + old_cap, 0, (loop->fds_cap - old_cap) * sizeof(*loop->fds));

    struct fd_watcher *w = malloc(sizeof(*w));
    if (!w)
        return TS_ENOMEM;
    *w = (struct fd_watcher){.fd = fd, .events = events, .gen = loop->next_gen++, .cb = cb,
                             .arg = arg};
    /* An idle watcher stays out of epoll: epoll reports hang-ups even with no events
     * requested, which would wake the loop for a watcher that asked for nothing. */
    if (events) {
        int rc = epoll_apply(loop, EPOLL_CTL_ADD, w);
        if (rc != TS_OK) {
            free(w);
            return rc;
        }
    }
    loop->fds[fd] = w;
    return TS_OK;
}

int loop_fd_modify(struct loop *loop, int fd, unsigned events)
{
    struct fd_watcher *w = fd_lookup(loop, fd);
    if (!w)
        return TS_ENOENT;
    if (events & ~(LOOP_READ | LOOP_WRITE))
        return TS_EINVAL;
    unsigned old = w->events;
    w->events = events;
    int rc = TS_OK;
    if (!old && events)
        rc = epoll_apply(loop, EPOLL_CTL_ADD, w);
    else if (old && !events)
        rc = epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL) < 0 ? errno_to_ts(errno) : TS_OK;
    else if (old != events)
        rc = epoll_apply(loop, EPOLL_CTL_MOD, w);
    if (rc != TS_OK)
        w->events = old;
    return rc;
}

int loop_fd_remove(struct loop *loop, int fd)
{
    struct fd_watcher *w = fd_lookup(loop, fd);
    if (!w)
        return TS_ENOENT;
    /* Failure is harmless: the fd may already be closed, which drops it from epoll. */
    if (w->events)
        (void)epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL);
    loop->fds[fd] = NULL;
    free(w);
    return TS_OK;
}

static void dispatch_fd_event(struct loop *loop, const struct epoll_event *ev)
{
    int fd = (int)(uint32_t)ev->data.u64;
    uint32_t gen = (uint32_t)(ev->data.u64 >> 32);
    struct fd_watcher *w = fd_lookup(loop, fd);
    if (!w || w->gen != gen || !w->events)
        return; /* removed (or replaced, or idled) earlier in this iteration */
    /* Mask with the current interest: an earlier callback may have narrowed it. */
    unsigned events = from_epoll(ev->events) & (w->events | LOOP_ERROR);
    if (events)
        w->cb(loop, fd, events, w->arg);
}

/* ---- timers: binary min-heap on (due, seq) --------------------------------------- */

static bool timer_before(const struct loop_timer *a, const struct loop_timer *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_set(struct loop *loop, size_t i, struct loop_timer *t)
{
    loop->heap[i] = t;
    t->heap_idx = i;
}

static void heap_sift_up(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(t, loop->heap[parent]))
            break;
        heap_set(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_set(loop, i, t);
}

static void heap_sift_down(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= loop->heap_len)
            break;
        if (child + 1 < loop->heap_len && timer_before(loop->heap[child + 1], loop->heap[child]))
            child++;
        if (!timer_before(loop->heap[child], t))
            break;
        heap_set(loop, i, loop->heap[child]);
        i = child;
    }
    heap_set(loop, i, t);
}

static int heap_push(struct loop *loop, struct loop_timer *t)
{
    struct loop_timer **heap = grow_array(loop->heap, &loop->heap_cap, loop->heap_len + 1,
                                          sizeof(*loop->heap));
    if (!heap)
        return TS_ENOMEM;
    loop->heap = heap;
    t->seq = loop->next_seq++;
    heap_set(loop, loop->heap_len++, t);
    heap_sift_up(loop, t->heap_idx);
    return TS_OK;
}

static void heap_remove(struct loop *loop, struct loop_timer *t)
{
    size_t i = t->heap_idx;
    struct loop_timer *last = loop->heap[--loop->heap_len];
    t->heap_idx = SIZE_MAX;
    if (last == t)
        return;
    heap_set(loop, i, last);
    if (i > 0 && timer_before(last, loop->heap[(i - 1) / 2]))
        heap_sift_up(loop, i);
    else
        heap_sift_down(loop, i);
}

struct loop_timer *loop_timer_add(struct loop *loop, uint64_t after_ms, uint64_t repeat_ms,
                                  loop_timer_cb cb, void *arg)
{
    if (!cb)
        return NULL;
    struct loop_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->due = loop->now + after_ms;
    t->repeat = repeat_ms;
    t->cb = cb;
    t->arg = arg;
    if (heap_push(loop, t) != TS_OK) {
        free(t);
        return NULL;
    }
    return t;
}

void loop_timer_cancel(struct loop *loop, struct loop_timer *timer)
{
    if (!timer)
        return;
    if (timer->running) {
        /* Out of the heap while its callback runs; run_timer frees it afterwards. */
        timer->cancelled = true;
        return;
    }
    if (timer->heap_idx != SIZE_MAX)
        heap_remove(loop, timer);
    free(timer);
}

static void run_timer(struct loop *loop, struct loop_timer *t)
{
    heap_remove(loop, t);
    t->running = true;
    t->cb(loop, t, t->arg);
    t->running = false;
    if (t->cancelled || !t->repeat) {
        free(t);
        return;
    }
    t->due = loop->now + t->repeat;
    if (heap_push(loop, t) != TS_OK) {
        log_error("loop: out of memory rescheduling a repeating timer; it is dropped");
        free(t);
    }
}

/* Timers created during this iteration (seq >= seq_limit) wait for the next one, so a
 * callback that re-adds a 0 ms timer cannot keep the loop from polling. Because the heap
 * orders by (due, seq), once such a timer is on top no older due timer remains. */
static void run_due_timers(struct loop *loop, uint64_t seq_limit)
{
    while (loop->heap_len > 0) {
        struct loop_timer *t = loop->heap[0];
        if (t->due > loop->now || t->seq >= seq_limit)
            break;
        run_timer(loop, t);
    }
}

uint64_t loop_now_ms(const struct loop *loop)
{
    return loop->now;
}

/* ---- posts and stop ----------------------------------------------------------------- */

static void wake(struct loop *loop)
{
    uint64_t one = 1;
    /* EAGAIN means the counter is already non-zero: the loop will wake anyway. */
    if (write(loop->wakefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_error("loop: eventfd write failed: %s", strerror(errno));
}

int loop_post(struct loop *loop, loop_fn fn, void *arg)
{
    struct post *p = malloc(sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    *p = (struct post){.fn = fn, .arg = arg, .next = NULL};
    pthread_mutex_lock(&loop->post_lock);
    bool was_empty = loop->post_head == NULL;
    if (was_empty)
        loop->post_head = p;
    else
        loop->post_tail->next = p;
    loop->post_tail = p;
    /* Only the first post of a batch needs a wake-up: the loop resets the eventfd before
     * it takes the queue, so later posts are either taken with it or wake it again. */
    if (was_empty)
        wake(loop);
    pthread_mutex_unlock(&loop->post_lock);
    return TS_OK;
}

void loop_stop(struct loop *loop)
{
    atomic_store(&loop->stop, true);
    wake(loop);
}

static void on_wake(struct loop *loop, int fd, unsigned events, void *arg)
{
    uint64_t count;
    /* Reset first, then take the queue: see loop_post(). */
    (void)!read(fd, &count, sizeof(count));
    pthread_mutex_lock(&loop->post_lock);
    struct post *p = loop->post_head;
    loop->post_head = loop->post_tail = NULL;
    pthread_mutex_unlock(&loop->post_lock);
    while (p) {
        struct post *next = p->next;
        loop_fn fn = p->fn;
        void *fn_arg = p->arg;
        free(p);
        fn(loop, fn_arg);
        p = next;
    }
}

static void free_posts(struct post *p)
{
    while (p) {
        struct post *next = p->next;
        free(p);
        p = next;
    }
}

/* ---- signals and children ---------------------------------------------------------- */

static void on_signalfd(struct loop *loop, int fd, unsigned events, void *arg);

/* Block signo and route it through the signalfd (created on first use). */
static int signal_route(struct loop *loop, int signo)
{
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    /* Block before routing, so that no instance slips through to the default action. */
    pthread_sigmask(SIG_BLOCK, &one, NULL);
    sigset_t mask = loop->sigmask;
    sigaddset(&mask, signo);
    int fd = signalfd(loop->sigfd, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return errno_to_ts(errno);
    if (loop->sigfd < 0) {
        int rc = loop_fd_add(loop, fd, LOOP_READ, on_signalfd, NULL);
        if (rc != TS_OK) {
            close(fd);
            return rc;
        }
        loop->sigfd = fd;
    }
    loop->sigmask = mask;
    return TS_OK;
}

int loop_signal_add(struct loop *loop, int signo, loop_signal_cb cb, void *arg)
{
    if (signo <= 0 || signo >= _NSIG || signo == SIGKILL || signo == SIGSTOP || !cb)
        return TS_EINVAL;
    if (loop->signals[signo].cb)
        return TS_EEXIST;
    if (!sigismember(&loop->sigmask, signo)) {
        int rc = signal_route(loop, signo);
        if (rc != TS_OK)
            return rc;
    }
    loop->signals[signo] = (struct signal_slot){.cb = cb, .arg = arg};
    return TS_OK;
}

static size_t child_bucket(const struct loop *loop, pid_t pid)
{
    return ((size_t)pid * 2654435761u) & (loop->child_nbuckets - 1);
}

static int child_table_grow(struct loop *loop)
{
    size_t n = loop->child_nbuckets ? loop->child_nbuckets * 2 : LOOP_CHILD_BUCKETS_MIN;
    struct child_watcher **buckets = calloc(n, sizeof(*buckets));
    if (!buckets)
        return TS_ENOMEM;
    struct child_watcher **old = loop->child_buckets;
    size_t old_n = loop->child_nbuckets;
    loop->child_buckets = buckets;
    loop->child_nbuckets = n;
    for (size_t i = 0; i < old_n; i++) {
        for (struct child_watcher *w = old[i], *next; w; w = next) {
            next = w->next;
            size_t b = child_bucket(loop, w->pid);
            w->next = buckets[b];
            buckets[b] = w;
        }
    }
    free(old);
    return TS_OK;
}

static struct child_watcher **child_find(struct loop *loop, pid_t pid)
{
    if (!loop->child_nbuckets)
        return NULL;
    struct child_watcher **pp = &loop->child_buckets[child_bucket(loop, pid)];
    while (*pp && (*pp)->pid != pid)
        pp = &(*pp)->next;
    return *pp ? pp : NULL;
}

static int child_install(struct loop *loop)
{
    if (loop->child_installed)
        return TS_OK;
    if (!sigismember(&loop->sigmask, SIGCHLD)) {
        int rc = signal_route(loop, SIGCHLD);
        if (rc != TS_OK)
            return rc;
    }
    loop->child_installed = true;
    /* A child that exited before SIGCHLD was blocked raised a signal nobody saw. */
    loop->reap_pending = true;
    return TS_OK;
}

int loop_child_watch(struct loop *loop, pid_t pid, loop_child_cb cb, void *arg)
{
    if (pid <= 0 || !cb)
        return TS_EINVAL;
    int rc = child_install(loop);
    if (rc != TS_OK)
        return rc;
    if (child_find(loop, pid))
        return TS_EEXIST;
    if (loop->child_count >= loop->child_nbuckets && (rc = child_table_grow(loop)) != TS_OK)
        return rc;
    struct child_watcher *w = malloc(sizeof(*w));
    if (!w)
        return TS_ENOMEM;
    size_t b = child_bucket(loop, pid);
    *w = (struct child_watcher){.pid = pid, .cb = cb, .arg = arg, .next = loop->child_buckets[b]};
    loop->child_buckets[b] = w;
    loop->child_count++;
    return TS_OK;
}

void loop_set_orphan_cb(struct loop *loop, loop_child_cb cb, void *arg)
{
    loop->orphan_cb = cb;
    loop->orphan_arg = arg;
    /* A subreaper may never watch a child of its own: orphans alone need SIGCHLD. */
    int rc = child_install(loop);
    if (rc != TS_OK)
        log_error("loop: cannot install SIGCHLD handling: %s", ts_strerror(rc));
}

static void dispatch_child(struct loop *loop, pid_t pid, int status, const struct rusage *ru)
{
    struct child_watcher **pp = child_find(loop, pid);
    if (!pp) {
        if (loop->orphan_cb)
            loop->orphan_cb(loop, pid, status, ru, loop->orphan_arg);
        else
            log_debug("loop: reaped unwatched child %d", (int)pid);
        return;
    }
    struct child_watcher *w = *pp;
    *pp = w->next;
    loop->child_count--;
    loop_child_cb cb = w->cb;
    void *arg = w->arg;
    free(w);
    cb(loop, pid, status, ru, arg);
}

/* SIGCHLD coalesces, so one signal may stand for many exits: reap until none is left. */
static void reap_children(struct loop *loop)
{
    loop->reap_pending = false;
    for (;;) {
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, WNOHANG, &ru);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        dispatch_child(loop, pid, status, &ru);
    }
}

static void on_signalfd(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct signalfd_siginfo si[LOOP_SIGINFO_BATCH];
    bool reap = false;
    ssize_t n;
    while ((n = read(fd, si, sizeof(si))) > 0) {
        for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++) {
            int signo = (int)si[i].ssi_signo;
            if (signo == SIGCHLD && loop->child_installed)
                reap = true;
            if (signo > 0 && signo < _NSIG && loop->signals[signo].cb)
                loop->signals[signo].cb(loop, signo, loop->signals[signo].arg);
        }
    }
    if (reap)
        reap_children(loop);
}

/* ---- prepare hooks --------------------------------------------------------------- */

int loop_prepare_add(struct loop *loop, loop_fn fn, void *arg)
{
    if (!fn)
        return TS_EINVAL;
    struct prepare_hook *hooks = grow_array(loop->prepare, &loop->prepare_cap,
                                            loop->prepare_len + 1, sizeof(*loop->prepare));
    if (!hooks)
        return TS_ENOMEM;
    loop->prepare = hooks;
    loop->prepare[loop->prepare_len++] = (struct prepare_hook){.fn = fn, .arg = arg};
    return TS_OK;
}

static void prepare_compact(struct loop *loop)
{
    size_t j = 0;
    for (size_t i = 0; i < loop->prepare_len; i++)
        if (loop->prepare[i].fn)
            loop->prepare[j++] = loop->prepare[i];
    loop->prepare_len = j;
    loop->prepare_dirty = false;
}

int loop_prepare_remove(struct loop *loop, loop_fn fn, void *arg)
{
    for (size_t i = 0; i < loop->prepare_len; i++) {
        if (loop->prepare[i].fn == fn && loop->prepare[i].arg == arg) {
            /* While the hooks run, only blank the slot so their indexes stay valid. */
            loop->prepare[i].fn = NULL;
            loop->prepare_dirty = true;
            if (!loop->prepare_running)
                prepare_compact(loop);
            return TS_OK;
        }
    }
    return TS_ENOENT;
}

static void run_prepare_hooks(struct loop *loop)
{
    /* Hooks added by a hook wait for the next iteration. */
    size_t n = loop->prepare_len;
    loop->prepare_running = true;
    for (size_t i = 0; i < n; i++) {
        struct prepare_hook h = loop->prepare[i];
        if (h.fn)
            h.fn(loop, h.arg);
    }
    loop->prepare_running = false;
    if (loop->prepare_dirty)
        prepare_compact(loop);
}

/* ---- the loop ------------------------------------------------------------------------- */

struct loop *loop_create(void)
{
    struct loop *loop = calloc(1, sizeof(*loop));
    if (!loop)
        return NULL;
    loop->epfd = loop->wakefd = loop->sigfd = -1;
    loop->next_gen = 1;
    sigemptyset(&loop->sigmask);
    atomic_init(&loop->stop, false);
    if (pthread_mutex_init(&loop->post_lock, NULL) != 0) {
        free(loop);
        return NULL;
    }
    loop->now = monotonic_ms();
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0)
        goto error;
    loop->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loop->wakefd < 0)
        goto error;
    if (loop_fd_add(loop, loop->wakefd, LOOP_READ, on_wake, NULL) != TS_OK)
        goto error;
    return loop;

error:
    log_error("loop: cannot create event loop: %s", strerror(errno));
    loop_destroy(loop);
    return NULL;
}

static void free_children(struct loop *loop)
{
    for (size_t i = 0; i < loop->child_nbuckets; i++) {
        for (struct child_watcher *w = loop->child_buckets[i], *next; w; w = next) {
            next = w->next;
            free(w);
        }
    }
    free(loop->child_buckets);
}

void loop_destroy(struct loop *loop)
{
    if (!loop)
        return;
    for (size_t i = 0; i < loop->fds_cap; i++)
        free(loop->fds[i]);
    free(loop->fds);
    for (size_t i = 0; i < loop->heap_len; i++)
        free(loop->heap[i]);
    free(loop->heap);
    free_children(loop);
    free(loop->prepare);
    free_posts(loop->post_head);
    /* Signals stay blocked: unblocking would deliver pending ones with their default
     * action (often death) now that nobody reads the signalfd. */
    if (loop->sigfd >= 0)
        close(loop->sigfd);
    if (loop->wakefd >= 0)
        close(loop->wakefd);
    if (loop->epfd >= 0)
        close(loop->epfd);
    pthread_mutex_destroy(&loop->post_lock);
    free(loop);
}

static int wait_timeout(const struct loop *loop, int timeout_ms)
{
    if (loop->reap_pending)
        return 0;
    if (loop->heap_len == 0)
        return timeout_ms;
    uint64_t now = monotonic_ms();
    uint64_t due = loop->heap[0]->due;
    uint64_t wait = due > now ? due - now : 0;
    if (wait > INT_MAX)
        wait = INT_MAX;
    if (timeout_ms >= 0 && (uint64_t)timeout_ms < wait)
        return timeout_ms;
    return (int)wait;
}

int loop_run_once(struct loop *loop, int timeout_ms)
{
    struct epoll_event events[LOOP_MAX_EVENTS];
    loop->now = monotonic_ms();
    run_prepare_hooks(loop);
    /* Timers created from here on, by callbacks, fire next iteration at the earliest. */
    uint64_t seq_limit = loop->next_seq;

    int n = epoll_wait(loop->epfd, events, LOOP_MAX_EVENTS, wait_timeout(loop, timeout_ms));
    if (n < 0 && errno != EINTR) {
        log_error("loop: epoll_wait failed: %s", strerror(errno));
        return TS_ESYS;
    }
    loop->now = monotonic_ms();
    for (int i = 0; i < n; i++)
        dispatch_fd_event(loop, &events[i]);
    if (loop->reap_pending)
        reap_children(loop);
    run_due_timers(loop, seq_limit);
    return TS_OK;
}

int loop_run(struct loop *loop)
{
    /* Consuming the flag makes a stop apply to one run, and a stop requested before the
     * run started is not lost. */
    while (!atomic_exchange(&loop->stop, false)) {
        int rc = loop_run_once(loop, -1);
        if (rc != TS_OK)
            return rc;
    }
    return TS_OK;
}
