/* Unit tests for the running-job limits (common/sched/limits.c): MaxRunning,
 * MaxUserRunning, MaxGroupRunning for the cluster and a partition, het units counted per
 * component, suspended jobs counted, ResourcesMax and ResourcesAvailable (with PBS's rule
 * that ResourcesMax caps what ResourcesAvailable leaves unnamed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/sched/limits.h"
#include "common/util/errors.h"

#include <string.h>

struct rec {
    Tessera__JobRecord r;
    Tessera__JobDesc d;
};

static struct conf *parse(const char *text)
{
    struct conf *c = NULL;
    char err[256];
    if (conf_parse_string(text, "t.conf", 0, &c, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    return c;
}

/* A component of uid/gid in partition, pending and asking for cpus, or running on them
 * (state). */
static const Tessera__JobRecord *make(struct rec *x, Tessera__JobState state, uint32_t uid,
                                      uint32_t gid, const char *partition, uint32_t cpus)
{
    tessera__job_desc__init(&x->d);
    x->d.user_id = uid;
    x->d.group_id = gid;
    x->d.partition = (char *)partition;
    tessera__job_record__init(&x->r);
    x->r.desc = &x->d;
    x->r.state = state;
    x->r.min_cpus = cpus;
    x->r.min_nodes = 1;
    x->r.time_limit = 3600;
    if (state != TESSERA__JOB_STATE__JOB_PENDING) {
        x->r.alloc_cpus = cpus;
        x->r.alloc_nodes = 1;
    }
    return &x->r;
}

#define RUNNING TESSERA__JOB_STATE__JOB_RUNNING
#define PENDING TESSERA__JOB_STATE__JOB_PENDING

static uint32_t reason_of(const struct limit_counts *lc, const Tessera__JobRecord *r)
{
    return limits_reason(lc, &r, 1);
}

static void test_none_configured(void **state)
{
    (void)state;
    struct conf *c = parse("PartitionName=p\n");
    assert_false(limits_configured(c));
    assert_null(limits_create(c));
    struct rec x;
    assert_int_equal(reason_of(NULL, make(&x, PENDING, 1, 1, "p", 1)), 0);
    assert_int_equal(limits_add_running(NULL, &x.r), TS_OK);
    conf_free(c);
}

static void test_max_running(void **state)
{
    (void)state;
    struct conf *c = parse("MaxRunning=2\n");
    assert_true(limits_configured(c));
    struct limit_counts *lc = limits_create(c);
    assert_non_null(lc);
    struct rec a, b, p, q;
    /* a pending record counts for nothing */
    assert_int_equal(limits_add_running(lc, make(&p, PENDING, 1, 1, "p", 1)), TS_OK);
    assert_int_equal(limits_add_running(lc, make(&a, RUNNING, 1, 1, "p", 1)), TS_OK);
    assert_int_equal(reason_of(lc, make(&q, PENDING, 2, 2, "p", 1)), 0);
    /* a suspended job counts as running */
    limits_add_running(lc, make(&b, TESSERA__JOB_STATE__JOB_SUSPENDED, 3, 3, "p", 1));
    assert_int_equal(reason_of(lc, &q.r), JOB_REASON_MAX_RUNNING);
    limits_destroy(lc);
    conf_free(c);
}

static void test_user_and_group(void **state)
{
    (void)state;
    struct conf *c = parse("MaxUserRunning=1\nMaxGroupRunning=2\n");
    struct limit_counts *lc = limits_create(c);
    struct rec a, b, x;
    limits_add_running(lc, make(&a, RUNNING, 1, 10, "p", 1));
    assert_int_equal(reason_of(lc, make(&x, PENDING, 1, 10, "p", 1)),
                     JOB_REASON_MAX_USER_RUNNING);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 10, "p", 1)), 0);
    limits_add_running(lc, make(&b, RUNNING, 2, 10, "p", 1));
    assert_int_equal(reason_of(lc, make(&x, PENDING, 3, 10, "p", 1)),
                     JOB_REASON_MAX_GROUP_RUNNING);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 3, 11, "p", 1)), 0);
    limits_destroy(lc);
    conf_free(c);
}

static void test_partition(void **state)
{
    (void)state;
    struct conf *c = parse("PartitionName=p MaxRunning=1\nPartitionName=q\n");
    assert_true(limits_configured(c));
    struct limit_counts *lc = limits_create(c);
    struct rec a, x;
    limits_add_running(lc, make(&a, RUNNING, 1, 1, "p", 1));
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "p", 1)), JOB_REASON_MAX_RUNNING);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "q", 1)), 0);
    /* a record without a partition is in none of them */
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, NULL, 1)), 0);
    limits_destroy(lc);
    conf_free(c);
}

/* A het unit counts one job per component: two components of one user pass
 * MaxUserRunning=1 together, though each alone would not. */
static void test_het_unit(void **state)
{
    (void)state;
    struct conf *c = parse("MaxUserRunning=1\n");
    struct limit_counts *lc = limits_create(c);
    struct rec x, y;
    const Tessera__JobRecord *unit[2] = {make(&x, PENDING, 1, 1, "p", 1),
                                         make(&y, PENDING, 1, 1, "p", 1)};
    assert_int_equal(limits_reason(lc, unit, 1), 0);
    assert_int_equal(limits_reason(lc, unit, 2), JOB_REASON_MAX_USER_RUNNING);
    limits_destroy(lc);
    conf_free(c);
}

static void test_resources_max(void **state)
{
    (void)state;
    struct conf *c = parse("ResourcesMax=cpus=4,walltime=2:00:00\n");
    struct limit_counts *lc = limits_create(c);
    struct rec x, y;
    assert_int_equal(reason_of(lc, make(&x, PENDING, 1, 1, "p", 4)), 0);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 1, 1, "p", 5)), JOB_REASON_RESOURCES_MAX);
    /* a het unit's components are summed */
    const Tessera__JobRecord *unit[2] = {make(&x, PENDING, 1, 1, "p", 2),
                                         make(&y, PENDING, 1, 1, "p", 3)};
    assert_int_equal(limits_reason(lc, unit, 2), JOB_REASON_RESOURCES_MAX);
    /* no time limit is longer than any */
    make(&x, PENDING, 1, 1, "p", 1);
    x.r.time_limit = -1;
    assert_int_equal(reason_of(lc, &x.r), JOB_REASON_RESOURCES_MAX);
    x.r.time_limit = 7200;
    assert_int_equal(reason_of(lc, &x.r), 0);
    limits_destroy(lc);
    conf_free(c);
}

static void test_resources_available(void **state)
{
    (void)state;
    struct conf *c = parse("ResourcesAvailable=cpus=8\n");
    struct limit_counts *lc = limits_create(c);
    struct rec a, x;
    limits_add_running(lc, make(&a, RUNNING, 1, 1, "p", 6));
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "p", 2)), 0);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "p", 3)),
                     JOB_REASON_RESOURCES_AVAILABLE);
    limits_destroy(lc);
    conf_free(c);
    /* ResourcesMax alone caps the running total too */
    c = parse("ResourcesMax=cpus=2\n");
    lc = limits_create(c);
    limits_add_running(lc, make(&a, RUNNING, 1, 1, "p", 1));
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "p", 1)), 0);
    assert_int_equal(reason_of(lc, make(&x, PENDING, 2, 2, "p", 2)),
                     JOB_REASON_RESOURCES_AVAILABLE);
    limits_destroy(lc);
    conf_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_configured),
        cmocka_unit_test(test_max_running),
        cmocka_unit_test(test_user_and_group),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_het_unit),
        cmocka_unit_test(test_resources_max),
        cmocka_unit_test(test_resources_available),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
