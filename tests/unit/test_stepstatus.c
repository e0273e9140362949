/* Unit tests for the step daemon's status file (noded/stepstatus.c): the tasks' sums, the
 * text both ways, and the file itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "noded/stepstatus.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rusage ru_of(long user_us, long sys_us, long maxrss_kb)
{
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    ru.ru_utime.tv_sec = user_us / 1000000;
    ru.ru_utime.tv_usec = user_us % 1000000;
    ru.ru_stime.tv_sec = sys_us / 1000000;
    ru.ru_stime.tv_usec = sys_us % 1000000;
    ru.ru_maxrss = maxrss_kb;
    return ru;
}

#define EXITED(code) ((code) << 8)

static void test_worse(void **state)
{
    assert_int_equal(stepstatus_worse(0, EXITED(3)), EXITED(3));
    assert_int_equal(stepstatus_worse(EXITED(3), EXITED(1)), EXITED(3));
    assert_int_equal(stepstatus_worse(EXITED(255), 9), 9); /* SIGKILL beats any exit */
    assert_int_equal(stepstatus_worse(15, 9), 15);          /* SIGTERM (15) above SIGKILL */
}

static void test_tasks_summed(void **state)
{
    struct stepstatus st = {0};
    struct rusage a = ru_of(1500000, 20000, 1000);
    struct rusage b = ru_of(700000, 5000, 40000);
    struct rusage c = ru_of(1, 1, 40000); /* as large as b: b stays */
    stepstatus_add_task(&st, 0, &a, 4);
    stepstatus_add_task(&st, EXITED(2), &b, 5);
    stepstatus_add_task(&st, EXITED(1), &c, 6);
    stepstatus_add_task(&st, 0, NULL, 7); /* never started: nothing measured */
    assert_true(st.has_usage);
    assert_int_equal(st.status, EXITED(2));
    assert_int_equal(st.usage.user_usec, 2200001);
    assert_int_equal(st.usage.sys_usec, 25001);
    assert_int_equal(st.usage.max_rss_kb, 40000);
    assert_int_equal(st.usage.max_rss_task, 5);
    assert_int_equal(st.usage.ntasks, 4);
}

static void test_first_task_names_rss(void **state)
{
    struct stepstatus_usage u = {0};
    struct rusage z = ru_of(10, 0, 0);
    stepstatus_usage_add(&u, &z, 3);
    assert_int_equal(u.max_rss_task, 3); /* the only task, even without any RSS */
    assert_int_equal(u.user_usec, 10);
}

static void test_round_trip(void **state)
{
    struct stepstatus st = {.status = EXITED(7), .has_usage = 1};
    st.usage = (struct stepstatus_usage){.user_usec = UINT64_C(123456789012),
                                         .sys_usec = 42,
                                         .max_rss_kb = UINT64_C(5000000000),
                                         .max_rss_task = UINT32_MAX};
    char buf[256];
    size_t n = stepstatus_format(&st, buf, sizeof(buf));
    assert_int_equal(n, strlen(buf));
    assert_string_equal(buf, "status 1792\nuser_usec 123456789012\nsys_usec 42\n"
                             "max_rss_kb 5000000000\nmax_rss_task 4294967295\n");
    struct stepstatus back;
    memset(&back, 0xff, sizeof(back));
    assert_int_equal(stepstatus_parse(buf, &back), TS_OK);
    assert_int_equal(back.status, st.status);
    assert_true(back.has_usage);
    assert_int_equal(back.usage.user_usec, st.usage.user_usec);
    assert_int_equal(back.usage.sys_usec, 42);
    assert_int_equal(back.usage.max_rss_kb, st.usage.max_rss_kb);
    assert_int_equal(back.usage.max_rss_task, UINT32_MAX);

    /* without usage: the status alone */
    struct stepstatus plain = {.status = 9};
    assert_int_equal(stepstatus_format(&plain, buf, sizeof(buf)), strlen("status 9\n"));
    assert_string_equal(buf, "status 9\n");
    assert_int_equal(stepstatus_parse(buf, &back), TS_OK);
    assert_int_equal(back.status, 9);
    assert_false(back.has_usage);

    /* too small a buffer: the length it needs, and a terminated prefix */
    char tiny[4];
    assert_int_equal(stepstatus_format(&st, tiny, sizeof(tiny)), n);
    assert_int_equal(strlen(tiny), 3);
}

static void test_parse_lenient_and_strict(void **state)
{
    struct stepstatus st;
    /* keys in any order, unknown keys and blank lines ignored, no final newline */
    assert_int_equal(stepstatus_parse("max_rss_kb 10\n\nfuture_key x y\nstatus -1", &st), TS_OK);
    assert_int_equal(st.status, -1);
    assert_true(st.has_usage);
    assert_int_equal(st.usage.max_rss_kb, 10);
    assert_int_equal(st.usage.user_usec, 0);

    struct stepstatus keep = {.status = 77};
    static const char *const bad[] = {
        "",                              /* no status */
        "user_usec 5\n",                 /* no status */
        "status\n",                      /* no value */
        "status x\n",
        "status 1 2\n",
        "status 0\nuser_usec -5\n",      /* negative */
        "status 0\nmax_rss_task 4294967296\n", /* beyond a rank */
        "status 0\nsys_usec 99999999999999999999999\n",
        "256\n",                         /* the old format */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        st = keep;
        assert_int_equal(stepstatus_parse(bad[i], &st), TS_EINVAL);
        assert_int_equal(st.status, 77); /* left as it was */
    }
}

static void test_file(void **state)
{
    char dir[] = "/tmp/test_stepstatus.XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    char path[256];
    snprintf(path, sizeof(path), "%s/status", dir);

    struct stepstatus st;
    assert_int_equal(stepstatus_read_at(dfd, "status", &st), TS_ENOENT);

    struct stepstatus w = {0};
    struct rusage ru = ru_of(300000, 1000, 41000);
    stepstatus_add_task(&w, EXITED(1), &ru, 2);
    assert_int_equal(stepstatus_write_at(dfd, "status", &w), TS_OK);
    assert_int_equal(stepstatus_read_at(dfd, "status", &st), TS_OK);
    assert_int_equal(st.status, EXITED(1));
    assert_true(st.has_usage);
    assert_int_equal(st.usage.user_usec, 300000);
    assert_int_equal(st.usage.sys_usec, 1000);
    assert_int_equal(st.usage.max_rss_kb, 41000);
    assert_int_equal(st.usage.max_rss_task, 2);

    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("garbage\n", f);
    fclose(f);
    assert_int_equal(stepstatus_read_at(dfd, "status", &st), TS_EINVAL);

    /* a link in its place is not read through */
    unlink(path);
    assert_int_equal(symlink("/etc/hostname", path), 0);
    assert_int_equal(stepstatus_read_at(dfd, "status", &st), TS_EINVAL);

    unlink(path);
    close(dfd);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worse),
        cmocka_unit_test(test_tasks_summed),
        cmocka_unit_test(test_first_task_names_rss),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_parse_lenient_and_strict),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
