/* Unit tests of noded/cgroup.c on this machine's real cgroup2 filesystem (skipped where
 * none is mounted or without root): a job's folder holds what its processes start,
 * detached or not, and cgroup.kill ends all of it; a node folder another user could
 * change is refused. Everything the tests make is removed. */
#include "noded/cgroup.h"

#include "common/util/errors.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
    char mount[1024];
    char cluster[64];
    struct cgroup_tree *root;
};

static int setup(void **state)
{
    static struct fixture f;
    char why[256];
    memset(&f, 0, sizeof(f));
    if (geteuid() != 0 || cgroup_mount_find(CGROUP_V2, NULL, f.mount, sizeof(f.mount)) != TS_OK)
        return 0; /* each test skips */
    snprintf(f.cluster, sizeof(f.cluster), "unit-%ld", (long)getpid());
    int err = cgroup_tree_open(f.mount, CGROUP_V2, NULL, f.cluster, "n1", &f.root, why, sizeof(why));
    if (err)
        fail_msg("cgroup_tree_open: %s (%s)", ts_strerror(err), why);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (!f || !f->root)
        return 0;
    cgroup_tree_close(f->root);
    char path[1200];
    snprintf(path, sizeof(path), "%s/tessera/%s/n1", f->mount, f->cluster);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/tessera/%s", f->mount, f->cluster);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/tessera", f->mount);
    rmdir(path); /* fails while another node's folder is there: that is theirs */
    return 0;
}

static struct fixture *need(void **state)
{
    struct fixture *f = *state;
    if (!f || !f->root)
        skip();
    return f;
}

/* Until the job's folder is empty, at most 5 s. */
static void wait_empty(struct cgroup_tree *r, uint32_t job)
{
    for (int i = 0; i < 500 && cgroup_unit_populated(r, job, NULL) != 0; i++)
        usleep(10000);
    assert_int_equal(cgroup_unit_populated(r, job, NULL), 0);
}

/* A child the test places in the job's folder, which then starts a process that leaves
 * its session and parent (setsid, double fork), as a job escaping its process group
 * would; the detached process's pid comes back through report. */
static pid_t start_escaper(struct cgroup_tree *r, uint32_t job, pid_t *detached)
{
    int go[2], report[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(report), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        if (fork() == 0) {
            setsid();
            if (fork() == 0) {
                pid_t me = getpid();
                if (write(report[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
                    _exit(1);
                execl("/bin/sleep", "sleep", "300", (char *)NULL);
                _exit(127);
            }
            _exit(0);
        }
        pause();
        _exit(0);
    }
    close(go[0]);
    close(report[1]);
    assert_int_equal(cgroup_unit_attach(r, job, "batch", child), TS_OK);
    assert_int_equal(write(go[1], "x", 1), 1);
    close(go[1]);
    assert_int_equal(read(report[0], detached, sizeof(*detached)), (ssize_t)sizeof(*detached));
    close(report[0]);
    return child;
}

static void test_kill_takes_detached(void **state)
{
    struct fixture *f = need(state);
    assert_int_equal(cgroup_unit_make(f->root, 7, "batch", NULL), TS_OK);
    assert_int_equal(cgroup_unit_make(f->root, 7, "batch", NULL), TS_OK); /* again: no harm */
    assert_int_equal(cgroup_unit_populated(f->root, 7, NULL), 0);
    pid_t detached = 0;
    pid_t child = start_escaper(f->root, 7, &detached);
    assert_int_equal(cgroup_unit_populated(f->root, 7, NULL), 1);
    assert_int_equal(kill(detached, 0), 0); /* out of the child's session, still alive */

    assert_int_equal(cgroup_unit_write(f->root, 7, NULL, "cgroup.kill", "1"), TS_OK);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    wait_empty(f->root, 7); /* the detached sleep went with it */
    assert_int_equal(cgroup_unit_remove(f->root, 7, NULL), TS_OK);
    assert_int_equal(cgroup_unit_remove(f->root, 7, NULL), TS_OK); /* gone: nothing to do */
    assert_int_equal(cgroup_unit_populated(f->root, 7, NULL), 0);
    assert_int_equal(cgroup_unit_write(f->root, 7, NULL, "cgroup.kill", "1"), TS_ENOENT);
}

/* A folder with processes stays (the kernel refuses), and can go once they are killed. */
static void test_remove_waits_for_processes(void **state)
{
    struct fixture *f = need(state);
    assert_int_equal(cgroup_unit_make(f->root, 8, "batch", NULL), TS_OK);
    pid_t detached = 0;
    pid_t child = start_escaper(f->root, 8, &detached);
    assert_int_equal(cgroup_unit_remove(f->root, 8, NULL), TS_ESYS);
    assert_int_equal(cgroup_unit_write(f->root, 8, NULL, "cgroup.kill", "1"), TS_OK);
    assert_int_equal(waitpid(child, NULL, 0), child);
    wait_empty(f->root, 8);
    assert_int_equal(cgroup_unit_remove(f->root, 8, NULL), TS_OK);
}

/* A node folder that another user could change is refused: it is where root kills. */
static void test_foreign_folder_refused(void **state)
{
    struct fixture *f = need(state);
    char path[1200], why[256];
    snprintf(path, sizeof(path), "%s/tessera/%s/n1", f->mount, f->cluster);
    assert_int_equal(chown(path, 65534, 65534), 0);
    struct cgroup_tree *r = NULL;
    assert_int_equal(cgroup_tree_open(f->mount, CGROUP_V2, NULL, f->cluster, "n1", &r, why, sizeof(why)), TS_EPERM);
    assert_null(r);
    assert_non_null(strstr(why, "65534"));
    assert_int_equal(chown(path, 0, 0), 0);
    assert_int_equal(cgroup_tree_open(f->mount, CGROUP_V2, NULL, f->cluster, "n1", &r, why, sizeof(why)), TS_OK);
    cgroup_tree_close(r);
    /* and a folder that is no cgroup2 filesystem is no place for jobs */
    assert_int_equal(cgroup_tree_open("/tmp", CGROUP_V2, NULL, f->cluster, "n1", &r, why, sizeof(why)), TS_ENOENT);
    assert_int_equal(cgroup_tree_open(f->mount, CGROUP_V2, NULL, f->cluster, "../x", &r, why, sizeof(why)), TS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_takes_detached),
        cmocka_unit_test(test_remove_waits_for_processes),
        cmocka_unit_test(test_foreign_folder_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
