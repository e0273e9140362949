/* Unit tests of noded/container.c on this machine's real cgroup hierarchies (skipped
 * without root or where they are missing), under a cluster name of the test's own: the
 * limits a job's folder gets hold (memory: the kernel kills; CPUs: the affinity; processes:
 * fork fails), freezing stops a job's CPU time and thawing lets it go on, killing a unit
 * takes what left its session and nothing of another unit, folders go once empty, and a
 * unit name that is no step's is refused without anything made or removed.
 *
 * The tests run twice: with the hierarchies as mounted (on a hybrid host: tracking and
 * freezing by the v2 core, limits by v1 controllers), and again in a private mount
 * namespace without the cgroup2 filesystem, where the v1 freezer tracks and cpuacct counts
 * (skipped where no cgroup2 is mounted or the namespace cannot be made). */
#include "noded/container.h"

#include "noded/cgroup.h"

#include "common/util/errors.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define NODE "c1"
#define MIB (1024ULL * 1024ULL)

struct fixture {
    char cluster[64];
    struct containers *c;
};

static struct fixture fixture;

static int open_containers(void)
{
    memset(&fixture, 0, sizeof(fixture));
    if (geteuid() != 0)
        return 0; /* each test skips */
    snprintf(fixture.cluster, sizeof(fixture.cluster), "unit-%ld", (long)getpid());
    struct container_conf cc = {
        .plugin = "autodetect", .constrain_ram = 1, .constrain_cores = 1, .allowed_processes = 5,
        .constrain_devices = 1,
    };
    char why[512];
    int err = container_open(&cc, fixture.cluster, NODE, &fixture.c, why, sizeof(why));
    if (err == TS_ENOENT) {
        print_message("no cgroup hierarchies for containers here (%s): skipped\n", why);
        harness_cgroup_cleanup(fixture.cluster, NODE);
        return 0;
    }
    if (err) {
        print_message("container_open: %s (%s)\n", ts_strerror(err), why);
        return -1;
    }
    print_message("containers: %s\n", container_describe(fixture.c));
    return 0;
}

static int group_setup(void **state)
{
    (void)state;
    return open_containers();
}

/* The same with the cgroup2 filesystem out of sight: v1 alone tracks and freezes. */
static int group_setup_v1_only(void **state)
{
    (void)state;
    char v2[1024];
    memset(&fixture, 0, sizeof(fixture));
    if (geteuid() != 0 || cgroup_mount_find(CGROUP_V2, NULL, v2, sizeof(v2)) != TS_OK)
        return 0; /* already v1 alone (the first group ran so), or no root: skipped */
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        umount2(v2, MNT_DETACH) != 0) {
        print_message("no private mount namespace without cgroup2 (%s): skipped\n",
                      strerror(errno));
        return 0;
    }
    return open_containers();
}

static struct fixture *need(void)
{
    if (!fixture.c)
        skip();
    return &fixture;
}

/* Until the job (step NULL) or unit has no process left, at most 5 s. */
static void wait_empty(struct containers *c, uint32_t job, const char *step)
{
    for (int i = 0; i < 500 && container_populated(c, job, step) != 0; i++)
        usleep(10000);
    assert_int_equal(container_populated(c, job, step), 0);
}

/* Every job the tests made killed and removed. */
static void remove_all(struct containers *c)
{
    uint32_t ids[64];
    size_t n = 0;
    if (container_jobs(c, ids, 64, &n) != TS_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        container_freeze(c, ids[i], 0);
        container_kill(c, ids[i], NULL);
        for (int k = 0; k < 500 && container_populated(c, ids[i], NULL) != 0; k++)
            usleep(10000);
        container_remove(c, ids[i], NULL);
    }
}

static int test_teardown(void **state)
{
    (void)state;
    if (fixture.c)
        remove_all(fixture.c);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    if (!fixture.c)
        return 0;
    remove_all(fixture.c);
    container_close(fixture.c);
    fixture.c = NULL;
    harness_cgroup_cleanup(fixture.cluster, NODE);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* children placed in a unit before they do anything */

struct child {
    pid_t pid;
    int go;      /* a byte: start */
    int report;  /* what the child tells */
};

typedef void (*child_fn)(int report);

static struct child child_start(child_fn fn)
{
    int go[2], report[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(report), 0);
    struct child ch = {fork(), go[1], report[0]};
    assert_true(ch.pid >= 0);
    if (ch.pid == 0) {
        char c;
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves nothing waiting */
        close(go[1]);
        close(report[0]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        fn(report[1]);
        _exit(0);
    }
    close(go[0]);
    close(report[1]);
    return ch;
}

static void child_go(struct child *ch)
{
    assert_int_equal(write(ch->go, "x", 1), 1);
    close(ch->go);
    ch->go = -1;
}

/* A child that runs fn in the unit (job, step) with the job's limits lim. */
static struct child child_in(struct fixture *f, uint32_t job, const char *step,
                             const struct container_limits *lim, child_fn fn)
{
    struct child ch = child_start(fn);
    assert_int_equal(container_enter(f->c, job, step, ch.pid, lim), TS_OK);
    child_go(&ch);
    return ch;
}

static void child_read(struct child *ch, void *buf, size_t len)
{
    assert_int_equal(read(ch->report, buf, len), (ssize_t)len);
}

static int child_wait(struct child *ch)
{
    int status = 0;
    assert_int_equal(waitpid(ch->pid, &status, 0), ch->pid);
    close(ch->report);
    return status;
}

static void expect_killed(struct child *ch)
{
    int status = child_wait(ch);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("child %d: status %#x, not killed by SIGKILL", (int)ch->pid, status);
}

static void report_and_wait(int report, const void *what, size_t len)
{
    if (write(report, what, len) != (ssize_t)len)
        _exit(1);
    for (;;)
        pause();
}

/* ------------------------------------------------------------------------------------ */
/* limits */

/* errno of opening /dev/null and of opening /dev/zero (0: opened). */
static void try_devices(int report)
{
    int errs[2];
    const char *paths[2] = {"/dev/null", "/dev/zero"};
    for (int i = 0; i < 2; i++) {
        int fd = open(paths[i], O_RDONLY);
        errs[i] = fd < 0 ? errno : 0;
        if (fd >= 0)
            close(fd);
    }
    report_and_wait(report, errs, sizeof(errs));
}

/* A job told not to open a device (here /dev/null, as a GPU it was not given) cannot;
 * other devices still open. */
static void test_devices_refused(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct devcg_device null_dev;
    assert_int_equal(devcg_of_path("/dev/null", &null_dev), TS_OK);
    struct container_limits lim = {.deny_devices = &null_dev, .ndeny_devices = 1};
    struct child ch = child_in(f, 16, "batch", &lim, try_devices);
    int errs[2];
    child_read(&ch, errs, sizeof(errs));
    assert_int_equal(errs[0], EPERM);
    assert_int_equal(errs[1], 0);
    kill(ch.pid, SIGKILL);
    child_wait(&ch);
}

static void eat_128_mib(int report)
{
    (void)report;
    size_t len = 128 * MIB;
    volatile char *p = malloc(len);
    if (!p)
        _exit(2);
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    _exit(0); /* reached only when the limit did not hold */
}

/* A job of 32 MiB that touches 128 MiB is killed by the kernel; the unit counts the OOM
 * kill and a peak at the limit. */
static void test_memory_limit_kills(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct container_limits lim = {.mem_bytes = 32 * MIB};
    struct child ch = child_in(f, 11, "batch", &lim, eat_128_mib);
    expect_killed(&ch);
    struct container_usage u;
    assert_int_equal(container_usage(f->c, 11, "batch", &u), TS_OK);
    assert_true(u.has_memory);
    if (u.oom_kills < 1)
        fail_msg("oom_kills %llu", (unsigned long long)u.oom_kills);
    if (u.peak_bytes < 24 * MIB || u.peak_bytes > 32 * MIB)
        fail_msg("peak %llu bytes, limit %llu", (unsigned long long)u.peak_bytes, 32 * MIB);
}

static void tell_cpus(int report)
{
    char *status = harness_read_file("/proc/self/status");
    const char *p = status ? strstr(status, "Cpus_allowed_list:") : NULL;
    char cpus[64] = "";
    if (p)
        sscanf(p, "Cpus_allowed_list: %63s", cpus);
    report_and_wait(report, cpus, sizeof(cpus));
}

/* A job given CPU 0 runs on CPU 0 alone, and so does a later step of it. */
static void test_cpus_limit(void **state)
{
    (void)state;
    struct fixture *f = need();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        skip();
    struct container_limits lim = {.cpus = "0"};
    char cpus[64];
    struct child ch = child_in(f, 12, "batch", &lim, tell_cpus);
    child_read(&ch, cpus, sizeof(cpus));
    assert_string_equal(cpus, "0");
    struct child step = child_in(f, 12, "0", &lim, tell_cpus);
    child_read(&step, cpus, sizeof(cpus));
    assert_string_equal(cpus, "0");
    assert_int_equal(container_kill(f->c, 12, NULL), TS_OK);
    expect_killed(&ch);
    expect_killed(&step);
}

static void fork_20(int report)
{
    int counts[2] = {0, 0}; /* forked, refused with EAGAIN */
    for (int i = 0; i < 20; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (;;)
                pause();
        }
        if (p > 0)
            counts[0]++;
        else if (errno == EAGAIN)
            counts[1]++;
    }
    report_and_wait(report, counts, sizeof(counts));
}

/* pids.max 5: the job's fifth process is its last. */
static void test_pids_limit(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct container_limits lim = {.pids_max = 5};
    struct child ch = child_in(f, 13, "batch", &lim, fork_20);
    int counts[2];
    child_read(&ch, counts, sizeof(counts));
    if (counts[0] > 4 || counts[1] < 1)
        fail_msg("%d forks worked, %d refused with EAGAIN", counts[0], counts[1]);
    assert_int_equal(counts[0] + counts[1], 20);
    assert_int_equal(container_kill(f->c, 13, NULL), TS_OK);
    expect_killed(&ch);
    wait_empty(f->c, 13, NULL);
}

/* ------------------------------------------------------------------------------------ */
/* freezing */

static void spin(int report)
{
    (void)report;
    for (volatile unsigned long i = 0;; i++)
        ;
}

static uint64_t cpu_usec(struct containers *c, uint32_t job)
{
    struct container_usage u;
    assert_int_equal(container_usage(c, job, NULL, &u), TS_OK);
    assert_true(u.has_cpu);
    return u.user_usec + u.sys_usec;
}

/* Until the job's CPU time passes above, at most 5 s. */
static uint64_t wait_cpu_above(struct containers *c, uint32_t job, uint64_t above)
{
    uint64_t now = cpu_usec(c, job);
    for (int i = 0; i < 500 && now <= above; i++) {
        usleep(10000);
        now = cpu_usec(c, job);
    }
    if (now <= above)
        fail_msg("job %u: CPU time stays at %llu us", job, (unsigned long long)now);
    return now;
}

/* Until the kernel says the job is frozen (v2: cgroup.events; v1: freezer.state), at
 * most 5 s: the hierarchy is the one container.c freezes with. */
static void wait_frozen(const struct fixture *f, uint32_t job)
{
    char mount[1024], path[1400];
    int v2 = cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) == TS_OK;
    if (!v2)
        assert_int_equal(cgroup_mount_find(CGROUP_V1, "freezer", mount, sizeof(mount)), TS_OK);
    snprintf(path, sizeof(path), "%s/tessera/%s/%s/job_%u/%s", mount, f->cluster, NODE, job,
             v2 ? "cgroup.events" : "freezer.state");
    const char *want = v2 ? "frozen 1\n" : "FROZEN\n";
    char *text = NULL;
    for (int i = 0; i < 500; i++) {
        free(text);
        text = harness_read_file(path);
        if (text && (v2 ? strstr(text, want) != NULL : strcmp(text, want) == 0)) {
            free(text);
            return;
        }
        usleep(10000);
    }
    fail_msg("%s: '%s', never '%s'", path, text ? text : "(unreadable)", want);
}

/* A frozen job's CPU time stands still; thawed, it grows again. */
static void test_freeze_stops_cpu(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct container_limits lim = {0};
    struct child ch = child_in(f, 14, "batch", &lim, spin);
    wait_cpu_above(f->c, 14, 0);
    assert_int_equal(container_freeze(f->c, 14, 1), TS_OK);
    wait_frozen(f, 14);
    uint64_t before = cpu_usec(f->c, 14);
    /* the one wait that is the point: a spinning process would run meanwhile */
    struct timespec pause_300ms = {0, 300 * 1000 * 1000};
    nanosleep(&pause_300ms, NULL);
    uint64_t after = cpu_usec(f->c, 14);
    if (after != before)
        fail_msg("frozen, yet the CPU time went from %llu to %llu us",
                 (unsigned long long)before, (unsigned long long)after);
    assert_int_equal(container_freeze(f->c, 14, 0), TS_OK);
    wait_cpu_above(f->c, 14, after);
    assert_int_equal(container_kill(f->c, 14, NULL), TS_OK);
    expect_killed(&ch);
}

/* ------------------------------------------------------------------------------------ */
/* killing and removing */

/* A child that starts a process out of its session and parent (setsid, double fork), as
 * a job escaping its process group would, and tells its pid. */
static void escape(int report)
{
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            pid_t me = getpid();
            if (write(report, &me, sizeof(me)) != (ssize_t)sizeof(me))
                _exit(1);
            execl("/bin/sleep", "sleep", "300", (char *)NULL);
            _exit(127);
        }
        _exit(0);
    }
    for (;;)
        pause();
}

static void idle(int report)
{
    (void)report;
    for (;;)
        pause();
}

static void leave(int report)
{
    (void)report;
    _exit(0);
}

/* 1 when the jobs listed are exactly want[0..n). */
static int jobs_are(struct containers *c, const uint32_t *want, size_t n)
{
    uint32_t ids[64];
    size_t got = 0;
    assert_int_equal(container_jobs(c, ids, 64, &got), TS_OK);
    if (got != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < got && ids[k] != want[i])
            k++;
        if (k == got)
            return 0;
    }
    return 1;
}

/* Killing the batch unit takes what left its session and spares the job's other step;
 * the folders go once empty, and only jobs with folders are listed. */
static void test_kill_takes_detached(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct container_limits lim = {0};
    struct child batch = child_in(f, 15, "batch", &lim, escape);
    pid_t detached = 0;
    child_read(&batch, &detached, sizeof(detached));
    struct child step = child_in(f, 15, "0", &lim, idle);
    struct child gone = child_in(f, 16, "batch", &lim, leave);
    assert_int_equal(child_wait(&gone), 0);
    wait_empty(f->c, 16, NULL);
    assert_int_equal(container_populated(f->c, 15, "batch"), 1);
    assert_int_equal(kill(detached, 0), 0);
    assert_int_equal(container_remove(f->c, 15, "batch"), TS_ESYS); /* busy: it stays */

    assert_int_equal(container_kill(f->c, 15, "batch"), TS_OK);
    expect_killed(&batch);
    wait_empty(f->c, 15, "batch"); /* the detached sleep went too */
    assert_int_equal(container_populated(f->c, 15, "0"), 1); /* the other step runs on */
    assert_int_equal(waitpid(step.pid, NULL, WNOHANG), 0);
    assert_int_equal(container_remove(f->c, 15, "batch"), TS_OK);
    assert_int_equal(jobs_are(f->c, (uint32_t[]){15, 16}, 2), 1);

    assert_int_equal(container_kill(f->c, 15, NULL), TS_OK); /* the whole job */
    expect_killed(&step);
    wait_empty(f->c, 15, NULL);
    assert_int_equal(container_remove(f->c, 15, NULL), TS_OK);
    assert_int_equal(container_remove(f->c, 15, NULL), TS_OK); /* gone: nothing to do */
    assert_int_equal(container_kill(f->c, 15, NULL), TS_OK);
    assert_int_equal(jobs_are(f->c, (uint32_t[]){16}, 1), 1);
    assert_int_equal(container_remove(f->c, 16, NULL), TS_OK);
    assert_int_equal(jobs_are(f->c, NULL, 0), 1);
}

/* A unit name that is no step's ("batch", "3", "94.3") is refused by every call, and
 * changes nothing: no folder made, no other job's folder removed through it. */
static void test_bad_unit_name_refused(void **state)
{
    (void)state;
    struct fixture *f = need();
    struct container_limits lim = {.mem_bytes = 32 * MIB};
    struct child ch = child_in(f, 17, "1", &lim, leave);
    assert_int_equal(child_wait(&ch), 0);
    struct child other = child_in(f, 18, "batch", &lim, leave);
    assert_int_equal(child_wait(&other), 0);
    assert_int_equal(container_remove(f->c, 18, "batch"), TS_OK); /* job 18: empty folder */
    const char *bad[] = {"../x", "x/y", "", "..", "1/../../job_18", ".1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct container_usage u;
        struct child idle_child = child_start(leave);
        assert_int_equal(container_enter(f->c, 19, bad[i], idle_child.pid, &lim), TS_EINVAL);
        assert_int_equal(kill(idle_child.pid, SIGKILL), 0);
        child_wait(&idle_child);
        assert_int_equal(container_kill(f->c, 17, bad[i]), TS_EINVAL);
        assert_int_equal(container_remove(f->c, 17, bad[i]), TS_EINVAL);
        assert_true(container_populated(f->c, 17, bad[i]) < 0);
        assert_int_not_equal(container_usage(f->c, 17, bad[i], &u), TS_OK);
        if (!jobs_are(f->c, (uint32_t[]){17, 18}, 2))
            fail_msg("unit name '%s': the jobs' folders changed", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_memory_limit_kills, test_teardown),
        cmocka_unit_test_teardown(test_devices_refused, test_teardown),
        cmocka_unit_test_teardown(test_cpus_limit, test_teardown),
        cmocka_unit_test_teardown(test_pids_limit, test_teardown),
        cmocka_unit_test_teardown(test_freeze_stops_cpu, test_teardown),
        cmocka_unit_test_teardown(test_kill_takes_detached, test_teardown),
        cmocka_unit_test_teardown(test_bad_unit_name_refused, test_teardown),
    };
    int failed = cmocka_run_group_tests_name("as mounted", tests, group_setup, group_teardown);
    failed += cmocka_run_group_tests_name("v1 alone", tests, group_setup_v1_only,
                                          group_teardown);
    return failed;
}
