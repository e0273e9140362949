/* Unit tests for fair-share usage from job records (common/sched/usage.c): what a
 * component is charged (from its start, the last charge or its resumption; nothing when it
 * does not run), and the charging steps (interval, decay, a clock that went back). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/fairshare.h"
#include "common/sched/usage.h"
#include "common/util/errors.h"

static void running(Tessera__JobRecord *r, Tessera__JobDesc *d, int64_t start, uint32_t cpus)
{
    tessera__job_desc__init(d);
    tessera__job_record__init(r);
    r->desc = d;
    r->state = TESSERA__JOB_STATE__JOB_RUNNING;
    r->start_time = start;
    r->alloc_cpus = cpus;
}

static void test_cpu_seconds(void **state)
{
    (void)state;
    Tessera__JobRecord r;
    Tessera__JobDesc d;
    running(&r, &d, 1000, 4);
    assert_true(usage_cpu_seconds(&r, 0, 1100) == 400);      /* since its start */
    assert_true(usage_cpu_seconds(&r, 1050, 1100) == 200);   /* since the last charge */
    assert_true(usage_cpu_seconds(&r, 1100, 1100) == 0);
    assert_true(usage_cpu_seconds(&r, 0, 900) == 0);         /* a clock before its start */
    r.suspend_time = 1080;                                   /* resumed at 1080 */
    assert_true(usage_cpu_seconds(&r, 1050, 1100) == 80);
    r.alloc_cpus = 0;
    assert_true(usage_cpu_seconds(&r, 0, 1100) == 0);
    r.alloc_cpus = 4;
    r.state = TESSERA__JOB_STATE__JOB_SUSPENDED;
    assert_true(usage_cpu_seconds(&r, 0, 1100) == 0);
    r.state = TESSERA__JOB_STATE__JOB_PENDING;
    assert_true(usage_cpu_seconds(&r, 0, 1100) == 0);
    /* a clock that starts at 0 (the simulator's) */
    running(&r, &d, 0, 2);
    assert_true(usage_cpu_seconds(&r, 0, 10) == 20);
}

static void test_steps(void **state)
{
    (void)state;
    struct fairshare *fs;
    char err[256];
    if (fairshare_parse("a 10 root 1\n", "rg", 10, &fs, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    int a = fairshare_find(fs, "a");
    fairshare_charge(fs, a, 1000);
    int64_t updated = 100;
    /* not due before the interval */
    assert_int_equal(usage_step(fs, &updated, 120, 30, 3600), -1);
    assert_int_equal(updated, 100);
    /* due: decayed over 3600 s with a half life of 3600 s, charged up to 100 before */
    assert_int_equal(usage_step(fs, &updated, 3700, 30, 3600), 100);
    assert_int_equal(updated, 3700);
    double own = fairshare_own_usage(fs, a);
    assert_true(own > 499.9 && own < 500.1);
    /* a clock that went back restarts from there, without a step */
    assert_int_equal(usage_step(fs, &updated, 3000, 30, 3600), -1);
    assert_int_equal(updated, 3000);
    /* an interval below 1 is 1; no half life, no decay */
    assert_int_equal(usage_step(fs, &updated, 3000, 0, 0), -1);
    assert_int_equal(usage_step(fs, &updated, 3001, 0, 0), 3000);
    assert_true(fairshare_own_usage(fs, a) == own);
    fairshare_destroy(fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_seconds),
        cmocka_unit_test(test_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
