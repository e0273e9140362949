/* ctld/job_update.c: scontrol update on a controller built in-process: who may change
 * what, pending against running jobs, all components or none (docs/job-states.md,
 * section 7). */
#include "ctld_fixture.h"

#include "ctld/job.h"

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

static const char *const conf_text =
    "NodeName=n1 CPUs=4 RealMemory=1000\n"
    "NodeName=n2 CPUs=4 RealMemory=1000\n"
    "NodeName=n3 CPUs=8 RealMemory=4000\n"
    "PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=60 DefaultTime=10\n"
    "PartitionName=big Nodes=n3 MaxTime=UNLIMITED\n";

static int setup(void **state)
{
    return ctld_fixture_setup(state, conf_text, 0);
}

/* job_update of the present fields of changes (and a relative limit) on id, by uid. */
static int update(struct ctld_fixture *f, uint32_t id, Tessera__JobDesc *changes,
                  int64_t delta, uid_t uid, char *why, size_t len)
{
    char text[32];
    snprintf(text, sizeof(text), "%u", id);
    Tessera__JobUpdateRequest u = TESSERA__JOB_UPDATE_REQUEST__INIT;
    u.job_id = text;
    u.changes = changes;
    u.time_limit_delta = delta;
    char local[256];
    if (!why) {
        why = local;
        len = sizeof(local);
    }
    why[0] = '\0';
    return job_update(f->c, &u, uid, why, len);
}

static int set_limit(struct ctld_fixture *f, uint32_t id, int64_t secs, uid_t uid)
{
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.has_time_limit = 1;
    ch.time_limit = secs;
    return update(f, id, &ch, 0, uid, NULL, 0);
}

static uint32_t submit(struct ctld_fixture *f, const char *part)
{
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, part);
    return ctld_fixture_submit_one(f, &d, FIX_UID);
}

/* The owner changes a pending job; the change is kept in the state. */
static void test_owner_updates_pending(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.name = (char *)"renamed";
    ch.has_time_limit = 1;
    ch.time_limit = 1200;
    ch.has_ntasks = 1;
    ch.ntasks = 6;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_OK);
    for (int pass = 0; pass < 2; pass++) {
        const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
        assert_string_equal(r->desc->name, "renamed");
        assert_int_equal(r->time_limit, 1200);
        assert_int_equal(r->ntasks, 6);
        assert_int_equal(r->min_nodes, 2); /* six tasks need both 4-CPU nodes */
        assert_int_equal(r->min_cpus, 6);
        assert_int_equal(r->desc->user_id, FIX_UID);
        if (pass == 0)
            ctld_fixture_restart(f);
    }
}

static void test_other_user_refused(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.name = (char *)"mine";
    assert_int_equal(update(f, id, &ch, 0, FIX_OTHER_UID, NULL, 0), TS_EUSER_ID);
    assert_string_equal(ctld_fixture_job(f, id)->rec->desc->name, "unit");
    /* root may */
    assert_int_equal(update(f, id, &ch, 0, 0, NULL, 0), TS_OK);
    assert_string_equal(ctld_fixture_job(f, id)->rec->desc->name, "mine");
    assert_int_equal(update(f, 999999, &ch, 0, 0, NULL, 0), TS_EINVALID_JOB_ID);
}

/* A pending change is checked as a submission would be: refused, nothing changes. */
static void test_pending_rechecked(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.partition = (char *)"nope";
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EINVALID_PARTITION);
    assert_int_equal(set_limit(f, id, 61 * 60, FIX_UID), TS_EINVALID_TIME_LIMIT);
    tessera__job_desc__init(&ch);
    ch.has_min_nodes = 1;
    ch.min_nodes = 3;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_ENODE_COUNT);
    /* the controller's own fields are not for updates */
    tessera__job_desc__init(&ch);
    ch.has_user_id = 1;
    ch.user_id = 0;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EINVAL);
    tessera__job_desc__init(&ch);
    ch.script = (char *)"#!/bin/sh\n";
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EINVAL);
    const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
    assert_string_equal(r->desc->partition, "debug");
    assert_int_equal(r->time_limit, 600);
    assert_int_equal(r->min_nodes, 1);
    assert_int_equal(r->desc->user_id, FIX_UID);
    assert_null(r->desc->script);
    /* moving it to another partition re-sizes it there */
    tessera__job_desc__init(&ch);
    ch.partition = (char *)"big";
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_OK);
    assert_string_equal(r->desc->partition, "big");
}

/* Users may lower their priority, not raise it; Priority=0 holds the job. */
static void test_priority_and_hold(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
    uint32_t prio = r->priority;
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.has_priority = 1;
    ch.priority = prio + 1;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EPERM);
    assert_int_equal(r->priority, prio);
    ch.priority = prio - 1;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_OK);
    assert_int_equal(r->priority, prio - 1);
    ch.priority = prio + 100;
    assert_int_equal(update(f, id, &ch, 0, 0, NULL, 0), TS_OK);
    assert_int_equal(r->priority, prio + 100);
    tessera__job_desc__init(&ch);
    ch.has_nice = 1;
    ch.nice = -1;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EPERM);
    /* Priority=0 by the owner: a user hold; by root: an administrator's */
    tessera__job_desc__init(&ch);
    ch.has_priority = 1;
    ch.priority = 0;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_OK);
    assert_int_equal(r->hold, 1);
    assert_int_equal(r->priority, 0);
    assert_int_equal(r->reason, JOB_REASON_HELD_USER);
    uint32_t other = submit(f, NULL);
    assert_int_equal(update(f, other, &ch, 0, 0, NULL, 0), TS_OK);
    assert_int_equal(ctld_fixture_job(f, other)->rec->hold, 2);
    assert_int_equal(ctld_fixture_job(f, other)->rec->reason, JOB_REASON_HELD_ADMIN);
    /* a held job gets no priority until released */
    ch.priority = 7;
    assert_int_equal(update(f, id, &ch, 0, 0, NULL, 0), TS_EJOB_HELD);
}

/* A running job: only its time limit, node count, priority and nice; users may shorten
 * its limit, not lengthen it. */
static void test_running_fields(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    ctld_fixture_start(f, id, "n1", 1);
    const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
    assert_int_equal(r->state, TESSERA__JOB_STATE__JOB_RUNNING);
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.name = (char *)"late";
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_EJOB_NOT_PENDING);
    assert_int_equal(update(f, id, &ch, 0, 0, NULL, 0), TS_EJOB_NOT_PENDING);
    assert_string_equal(r->desc->name, "unit");
    /* raising the limit: refused for the owner, allowed for root */
    assert_int_equal(set_limit(f, id, 1200, FIX_UID), TS_EPERM);
    assert_int_equal(set_limit(f, id, -1, FIX_UID), TS_EPERM);
    assert_int_equal(r->time_limit, 600);
    assert_int_equal(set_limit(f, id, 300, FIX_UID), TS_OK);
    assert_int_equal(r->time_limit, 300);
    assert_int_equal(r->desc->time_limit, 300);
    assert_int_equal(set_limit(f, id, 1200, FIX_OTHER_UID), TS_EUSER_ID);
    assert_int_equal(set_limit(f, id, 7200, 0), TS_OK); /* past MaxTime: root's call */
    assert_int_equal(r->time_limit, 7200);
    /* a relative change: +N is a raise too; -N larger than the limit is refused in
     * minutes */
    Tessera__JobDesc none = TESSERA__JOB_DESC__INIT;
    assert_int_equal(update(f, id, &none, 60, FIX_UID, NULL, 0), TS_EPERM);
    char why[256];
    assert_int_equal(update(f, id, &none, -7260, FIX_UID, why, sizeof(why)),
                     TS_ETIME_DECREMENT);
    assert_string_equal(why, "TimeLimit decrement larger than current time limit (121 > 120)");
    assert_int_equal(update(f, id, &none, -600, FIX_UID, NULL, 0), TS_OK);
    assert_int_equal(r->time_limit, 6600);
    /* a running job never grows */
    tessera__job_desc__init(&ch);
    ch.has_min_nodes = 1;
    ch.min_nodes = 2;
    assert_int_equal(update(f, id, &ch, 0, 0, NULL, 0), TS_ENOT_SUPPORTED_HERE);
    /* nice is stored; the priority of a running job does not move with it */
    uint32_t prio = r->priority;
    tessera__job_desc__init(&ch);
    ch.has_nice = 1;
    ch.nice = 100;
    assert_int_equal(update(f, id, &ch, 0, FIX_UID, NULL, 0), TS_OK);
    assert_int_equal(r->desc->nice, 100);
    assert_int_equal(r->priority, prio);
}

static void test_finished_refused(void **state)
{
    struct ctld_fixture *f = *state;
    uint32_t id = submit(f, NULL);
    struct job *j = ctld_fixture_job(f, id);
    job_end_unit(f->c, j, TESSERA__JOB_STATE__JOB_CANCELLED, 0);
    assert_int_equal(set_limit(f, id, 300, 0), TS_EALREADY_DONE);
    assert_int_equal(set_limit(f, id, 300, FIX_UID), TS_EALREADY_DONE);
}

/* "id" of a het job means every component: one refusal and none changes. */
static void test_het_all_or_nothing(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, "big");
    ctld_fixture_desc(&d1, NULL);
    Tessera__JobDesc *comps[] = {&d0, &d1};
    uint32_t id = 0;
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, &id, NULL, 0), TS_OK);
    const Tessera__JobRecord *r0 = ctld_fixture_job(f, id)->rec;
    const Tessera__JobRecord *r1 = ctld_fixture_job(f, id + 1)->rec;
    /* 61 minutes suits "big" (unlimited), not "debug" (60): neither changes */
    assert_int_equal(set_limit(f, id, 61 * 60, FIX_UID), TS_EINVALID_TIME_LIMIT);
    assert_int_equal(r0->time_limit, -1);
    assert_int_equal(r1->time_limit, 600);
    assert_int_equal(set_limit(f, id, 30 * 60, FIX_UID), TS_OK);
    assert_int_equal(r0->time_limit, 1800);
    assert_int_equal(r1->time_limit, 1800);
    /* "id+1" is that component alone */
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.has_time_limit = 1;
    ch.time_limit = 120;
    Tessera__JobUpdateRequest u = TESSERA__JOB_UPDATE_REQUEST__INIT;
    char text[32], why[256];
    snprintf(text, sizeof(text), "%u+1", id);
    u.job_id = text;
    u.changes = &ch;
    assert_int_equal(job_update(f->c, &u, FIX_UID, why, sizeof(why)), TS_OK);
    assert_int_equal(r0->time_limit, 1800);
    assert_int_equal(r1->time_limit, 120);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_owner_updates_pending, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_other_user_refused, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_pending_rechecked, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_priority_and_hold, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_running_fields, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_finished_refused, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_het_all_or_nothing, setup, ctld_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
