/* ctld/sched_limits.c: MaxRunning, MaxUserRunning, MaxGroupRunning (cluster and per
 * partition) and ResourcesMax/ResourcesAvailable on a controller built in-process; the
 * counts as a cycle takes them, and a real cycle that applies them (docs/policies.md). */
#include "ctld_fixture.h"

#include "common/sched/limits.h"
#include "ctld/job.h"
#include "ctld/sched_int.h"

#include "common/job/jobstate.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NODES                                                                              \
    "NodeName=n1 CPUs=4 RealMemory=1000\n"                                                 \
    "NodeName=n2 CPUs=4 RealMemory=1000\n"                                                 \
    "NodeName=n3 CPUs=4 RealMemory=1000\n"

static uint32_t submit_as(struct ctld_fixture *f, const char *part, uid_t uid)
{
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, part);
    return ctld_fixture_submit_one(f, &d, uid);
}

static uint32_t run_as(struct ctld_fixture *f, const char *part, uid_t uid, const char *node)
{
    uint32_t id = submit_as(f, part, uid);
    ctld_fixture_start(f, id, node, 1);
    return id;
}

/* sched_limits_allow on the unit of id, with the counts of what runs now. */
static int allowed(struct ctld_fixture *f, uint32_t id)
{
    struct limit_counts *lc = sched_limits_count(f->c);
    assert_non_null(lc);
    int ok = sched_limits_allow(f->c, lc, ctld_fixture_job(f, id)->leader);
    sched_limits_free(lc);
    return ok;
}

static uint32_t reason_of(struct ctld_fixture *f, uint32_t id)
{
    return ctld_fixture_job(f, id)->rec->reason;
}

/* No limit configured: no counts, everything may start. */
static void test_no_limits(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n", 0);
    assert_false(limits_configured(f.c->conf));
    run_as(&f, NULL, FIX_UID, "n1");
    uint32_t id = submit_as(&f, NULL, FIX_UID);
    assert_null(sched_limits_count(f.c));
    assert_true(sched_limits_allow(f.c, NULL, ctld_fixture_job(&f, id)));
    assert_int_equal(reason_of(&f, id), JOB_REASON_NONE);
    ctld_fixture_down(&f);
}

/* MaxUserRunning: per user; another user is not held back. */
static void test_max_user_running(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n"
                              "MaxUserRunning=2\n", 0);
    run_as(&f, NULL, FIX_UID, "n1");
    uint32_t second = submit_as(&f, NULL, FIX_UID);
    uint32_t other = submit_as(&f, NULL, FIX_OTHER_UID);
    assert_true(allowed(&f, second));
    ctld_fixture_start(&f, second, "n2", 1);
    uint32_t third = submit_as(&f, NULL, FIX_UID);
    assert_false(allowed(&f, third));
    assert_int_equal(reason_of(&f, third), JOB_REASON_MAX_USER_RUNNING);
    assert_true(allowed(&f, other));
    assert_int_equal(reason_of(&f, other), JOB_REASON_NONE);
    /* a suspended job still counts; an ended one no longer does */
    job_suspend_unit(f.c, ctld_fixture_job(&f, second), 0);
    assert_int_equal(ctld_fixture_job(&f, second)->rec->state,
                     TESSERA__JOB_STATE__JOB_SUSPENDED);
    assert_false(allowed(&f, third));
    job_end_unit(f.c, ctld_fixture_job(&f, second), TESSERA__JOB_STATE__JOB_CANCELLED, 0);
    assert_true(allowed(&f, third));
    ctld_fixture_down(&f);
}

/* A partition's MaxRunning counts that queue's jobs, whoever runs them; other queues are
 * not limited by it. */
static void test_max_running_per_queue(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES MaxRunning=2\n"
                              "PartitionName=other Nodes=n[1-3]\n", 0);
    run_as(&f, "debug", FIX_UID, "n1");
    run_as(&f, "debug", FIX_OTHER_UID, "n2");
    uint32_t in_debug = submit_as(&f, "debug", 0);
    uint32_t in_other = submit_as(&f, "other", FIX_UID);
    assert_false(allowed(&f, in_debug));
    assert_int_equal(reason_of(&f, in_debug), JOB_REASON_MAX_RUNNING);
    assert_true(allowed(&f, in_other));
    ctld_fixture_down(&f);
}

/* MaxGroupRunning in a partition: users of one group share it. */
static void test_max_group_running(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES "
                              "MaxGroupRunning=1\n", 0);
    run_as(&f, NULL, FIX_UID, "n1");
    uint32_t id = submit_as(&f, NULL, FIX_OTHER_UID); /* the same group, FIX_GID */
    assert_false(allowed(&f, id));
    assert_int_equal(reason_of(&f, id), JOB_REASON_MAX_GROUP_RUNNING);
    ctld_fixture_down(&f);
}

/* Within a cycle each start counts at once: MaxRunning=1 lets one of two through. */
static void test_starts_counted(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n"
                              "MaxRunning=1\n", 0);
    uint32_t a = submit_as(&f, NULL, FIX_UID);
    uint32_t b = submit_as(&f, NULL, FIX_OTHER_UID);
    struct limit_counts *lc = sched_limits_count(f.c);
    assert_non_null(lc);
    struct job *ja = ctld_fixture_job(&f, a), *jb = ctld_fixture_job(&f, b);
    assert_true(sched_limits_allow(f.c, lc, jb));
    assert_true(sched_limits_allow(f.c, lc, ja));
    ctld_fixture_start(&f, a, "n1", 1);
    sched_limits_started(f.c, lc, ja);
    assert_false(sched_limits_allow(f.c, lc, jb));
    assert_int_equal(reason_of(&f, b), JOB_REASON_MAX_RUNNING);
    sched_limits_free(lc);
    ctld_fixture_down(&f);
}

/* A het job counts one job per component, and its components add up against the limit:
 * every component gets the reason. */
static void test_het_components_count(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n"
                              "MaxUserRunning=2\n", 0);
    Tessera__JobDesc d[3];
    Tessera__JobDesc *comps[3] = {&d[0], &d[1], &d[2]};
    for (int i = 0; i < 3; i++)
        ctld_fixture_desc(&d[i], NULL);
    uint32_t three = 0, two = 0;
    assert_int_equal(ctld_fixture_submit(&f, comps, 3, FIX_UID, &three, NULL, 0), TS_OK);
    assert_int_equal(ctld_fixture_submit(&f, comps, 2, FIX_OTHER_UID, &two, NULL, 0), TS_OK);
    assert_false(allowed(&f, three));
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(reason_of(&f, three + i), JOB_REASON_MAX_USER_RUNNING);
    assert_true(allowed(&f, two));
    ctld_fixture_start(&f, two, "n1", 1);
    uint32_t one = submit_as(&f, NULL, FIX_OTHER_UID);
    assert_false(allowed(&f, one)); /* the het job running holds two */
    ctld_fixture_down(&f);
}

/* ResourcesMax: what one job may ask (its components summed); ResourcesAvailable: what
 * the running jobs may hold together. */
static void test_resources(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n"
                              "ResourcesMax=cpus=3\nResourcesAvailable=cpus=4\n", 0);
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.ntasks = 4;
    uint32_t wide = ctld_fixture_submit_one(&f, &d, FIX_UID);
    assert_false(allowed(&f, wide));
    assert_int_equal(reason_of(&f, wide), JOB_REASON_RESOURCES_MAX);
    d.ntasks = 3;
    uint32_t three = ctld_fixture_submit_one(&f, &d, FIX_UID);
    assert_true(allowed(&f, three));
    ctld_fixture_start(&f, three, "n1", 3);
    d.ntasks = 2;
    uint32_t two = ctld_fixture_submit_one(&f, &d, FIX_OTHER_UID);
    assert_false(allowed(&f, two)); /* 3 + 2 > 4 */
    assert_int_equal(reason_of(&f, two), JOB_REASON_RESOURCES_AVAILABLE);
    d.ntasks = 1;
    uint32_t one = ctld_fixture_submit_one(&f, &d, FIX_OTHER_UID);
    assert_true(allowed(&f, one));
    ctld_fixture_down(&f);
}

/* ------------------------------------------------------------------------------------ */
/* the scheduler's cycles apply them */

struct running_count {
    uint32_t ids[8];
    size_t n;
    size_t want_running;
};

static size_t count_running(struct ctld_fixture *f, const struct running_count *rc)
{
    size_t running = 0;
    for (size_t i = 0; i < rc->n; i++)
        running += job_find(&f->c->jobs, rc->ids[i])->rec->state ==
                   TESSERA__JOB_STATE__JOB_RUNNING;
    return running;
}

/* want_running run, and every other pending one waits for MaxRunning. */
static int settled(struct ctld_fixture *f, void *arg)
{
    const struct running_count *rc = arg;
    size_t limited = 0;
    for (size_t i = 0; i < rc->n; i++) {
        const Tessera__JobRecord *r = job_find(&f->c->jobs, rc->ids[i])->rec;
        limited += r->state == TESSERA__JOB_STATE__JOB_PENDING &&
                   r->reason == JOB_REASON_MAX_RUNNING;
    }
    size_t pending = 0;
    for (size_t i = 0; i < rc->n; i++)
        pending += job_find(&f->c->jobs, rc->ids[i])->rec->state ==
                   TESSERA__JOB_STATE__JOB_PENDING;
    return count_running(f, rc) == rc->want_running && limited == pending;
}

static void test_cycle_applies_max_running(void **state)
{
    struct ctld_fixture f;
    ctld_fixture_up(&f, NODES "PartitionName=debug Nodes=n[1-3] Default=YES\n"
                              "SchedulerType=sched/builtin\nMaxRunning=1\n", 1);
    static const char *const names[] = {"n1", "n2", "n3"};
    for (size_t i = 0; i < 3; i++)
        ctld_fixture_register(&f, names[i]);
    struct running_count rc = {.n = 3, .want_running = 1};
    for (size_t i = 0; i < rc.n; i++)
        rc.ids[i] = submit_as(&f, NULL, i == 0 ? FIX_UID : FIX_OTHER_UID);
    assert_true(ctld_fixture_turn(&f, settled, &rc, 10000));
    /* the first in the queue started; when it ends, the next one does, alone */
    assert_int_equal(job_find(&f.c->jobs, rc.ids[0])->rec->state,
                     TESSERA__JOB_STATE__JOB_RUNNING);
    job_end_unit(f.c, job_find(&f.c->jobs, rc.ids[0]), TESSERA__JOB_STATE__JOB_COMPLETED, 0);
    struct running_count rest = {.ids = {rc.ids[1], rc.ids[2]}, .n = 2, .want_running = 1};
    assert_true(ctld_fixture_turn(&f, settled, &rest, 10000));
    assert_int_equal(job_find(&f.c->jobs, rc.ids[1])->rec->state,
                     TESSERA__JOB_STATE__JOB_RUNNING);
    ctld_fixture_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_limits),
        cmocka_unit_test(test_max_user_running),
        cmocka_unit_test(test_max_running_per_queue),
        cmocka_unit_test(test_max_group_running),
        cmocka_unit_test(test_starts_counted),
        cmocka_unit_test(test_het_components_count),
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_cycle_applies_max_running),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
