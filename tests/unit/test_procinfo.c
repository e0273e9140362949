/* Unit tests for noded/procinfo.c: start time, real uid and state of this process, of a
 * child running as another user, of a zombie, of a pid that is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "noded/procinfo.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_self(void **state)
{
    struct procinfo pi;
    assert_int_equal(procinfo_read(getpid(), &pi), TS_OK);
    assert_true(pi.start > 0);
    assert_int_equal(pi.uid, getuid());
    assert_int_equal(pi.state, 'R');
    assert_true(procinfo_matches(getpid(), pi.start, getuid()));
    assert_false(procinfo_matches(getpid(), pi.start + 1, getuid())); /* another process */
    assert_false(procinfo_matches(getpid(), pi.start, getuid() + 1)); /* another owner */
    assert_false(procinfo_matches(getpid(), 0, getuid()));
    assert_int_equal(procinfo_start_time(getpid()), pi.start);
}

static void test_gone_and_zombie(void **state)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    unsigned long long start = 0;
    struct procinfo pi;
    for (int i = 0; i < 1000; i++) { /* until it is a zombie (not reaped yet) */
        if (procinfo_read(pid, &pi) == TS_OK && pi.state == 'Z')
            break;
        usleep(1000);
    }
    assert_int_equal(pi.state, 'Z');
    start = pi.start;
    assert_false(procinfo_matches(pid, start, getuid())); /* a zombie is not alive */
    waitpid(pid, NULL, 0);
    assert_int_equal(procinfo_read(pid, &pi), TS_ENOENT);
    assert_int_equal(procinfo_start_time(pid), 0);
    assert_int_equal(procinfo_read(-1, &pi), TS_ENOENT);
}

static void test_other_user(void **state)
{
    if (geteuid() != 0)
        skip();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(1);
        char c = 'x';
        if (write(fds[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(fds[1]);
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    struct procinfo pi;
    assert_int_equal(procinfo_read(pid, &pi), TS_OK);
    assert_int_equal(pi.uid, 65534);
    assert_true(procinfo_matches(pid, pi.start, 65534));
    assert_false(procinfo_matches(pid, pi.start, 0));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_gone_and_zombie),
        cmocka_unit_test(test_other_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
