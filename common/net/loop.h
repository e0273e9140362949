/* The epoll event loop: file descriptors, timers, signals, child exits, work posted from
 * other threads, and prepare hooks that run once per iteration before the loop waits.
 *
 * One thread runs a loop and owns everything its callbacks touch. The only functions
 * that other threads may call are loop_post() and loop_stop().
 *
 * Every callback may add or remove any watcher, including its own; a removed watcher's
 * callback is never called again, even for events already collected in the same
 * iteration.
 */
#ifndef TESSERA_COMMON_LOOP_H
#define TESSERA_COMMON_LOOP_H

#include <stdint.h>
#include <sys/types.h>

struct loop;
struct loop_timer;
struct rusage;

#define LOOP_READ 0x1u
#define LOOP_WRITE 0x2u
#define LOOP_ERROR 0x4u /* reported (never requested): EPOLLERR or EPOLLHUP */

typedef void (*loop_fd_cb)(struct loop *loop, int fd, unsigned events, void *arg);
typedef void (*loop_timer_cb)(struct loop *loop, struct loop_timer *timer, void *arg);
typedef void (*loop_signal_cb)(struct loop *loop, int signo, void *arg);
/* status and usage as from wait4(2): usage is what the child and the descendants it
 * waited for used (ru_maxrss in kilobytes); valid during the call only. */
typedef void (*loop_child_cb)(struct loop *loop, pid_t pid, int status,
                              const struct rusage *usage, void *arg);
typedef void (*loop_fn)(struct loop *loop, void *arg);

struct loop *loop_create(void);
/* Closes the loop's own descriptors; does not close watched fds. Pending posts are
 * dropped without being run. */
void loop_destroy(struct loop *loop);

/* Run until loop_stop(); returns TS_OK or a ts_err when epoll itself fails. */
int loop_run(struct loop *loop);
/* Run one iteration, waiting at most timeout_ms (-1: until something happens). */
int loop_run_once(struct loop *loop, int timeout_ms);
/* Make loop_run() return after the current iteration; callable from any thread. */
void loop_stop(struct loop *loop);

/* Watch fd for LOOP_READ and/or LOOP_WRITE (events 0 keeps it registered but idle).
 * One watcher per fd. */
int loop_fd_add(struct loop *loop, int fd, unsigned events, loop_fd_cb cb, void *arg);
int loop_fd_modify(struct loop *loop, int fd, unsigned events);
int loop_fd_remove(struct loop *loop, int fd);

/* A timer firing after_ms from now, then every repeat_ms (0: once). A one-shot timer is
 * freed after its callback returns; a repeating one lives until loop_timer_cancel(). */
struct loop_timer *loop_timer_add(struct loop *loop, uint64_t after_ms, uint64_t repeat_ms,
                                  loop_timer_cb cb, void *arg);
/* Cancel a pending timer (also from within its own callback). NULL is ignored. */
void loop_timer_cancel(struct loop *loop, struct loop_timer *timer);

/* Monotonic milliseconds, read once per iteration (cheap, consistent within callbacks). */
uint64_t loop_now_ms(const struct loop *loop);

/* Deliver signo through the loop (signalfd). Blocks signo in the calling thread: call
 * before creating threads so that they inherit the mask. One callback per signal. */
int loop_signal_add(struct loop *loop, int signo, loop_signal_cb cb, void *arg);

/* Report the exit of child pid once, with its wait status and resource usage (the loop
 * reaps with wait4(2): a callback learns both without a call of its own). Register in the
 * same iteration as the fork (before control returns to the loop), so the exit cannot be
 * reaped unwatched. Installs the SIGCHLD handling on first use (the same threading rule
 * as loop_signal_add). */
int loop_child_watch(struct loop *loop, pid_t pid, loop_child_cb cb, void *arg);
/* Called for reaped children nobody watched (a subreaper's adopted orphans). Installs
 * the SIGCHLD handling too, as loop_child_watch() does. */
void loop_set_orphan_cb(struct loop *loop, loop_child_cb cb, void *arg);

/* Run fn(arg) on the loop thread during a coming iteration; callable from any thread.
 * Posts run in the order they were posted. Returns TS_OK or TS_ENOMEM. */
int loop_post(struct loop *loop, loop_fn fn, void *arg);

/* Run fn(arg) in every iteration just before the loop waits for events, in the order the
 * hooks were added (the store's group commit flushes its batch here). */
int loop_prepare_add(struct loop *loop, loop_fn fn, void *arg);
/* Remove the hook added with this fn and arg (also from within a hook): it does not run
 * again. TS_ENOENT when there is none. Lets a module detach before it is freed. */
int loop_prepare_remove(struct loop *loop, loop_fn fn, void *arg);

#endif
