/* Unit tests of ctld/job_run.c's "who may start": whether a unit waits for the scheduler
 * alone is a question of its reasons as they stand (job_unit_eligible changes nothing);
 * bringing them up to date is a separate, explicit step (job_unit_refresh_reasons). And
 * the end of a batch job cancelled before its start was stored, so before its launch
 * left: nothing on its node will ever report that end. */
#include "ctld_fixture.h"

#include "common/job/jobstate.h"
#include "common/util/errors.h"
#include "ctld/job.h"
#include "harness.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

static const char *const conf_text = "NodeName=n1 CPUs=4 RealMemory=1000\n"
                               "PartitionName=p Nodes=n1 Default=YES\n";

static int setup(void **state)
{
    return ctld_fixture_setup(state, conf_text, 0);
}

/* A released hold counts only once the reasons are refreshed; asking never rewrites. */
static void test_eligible_reads_only(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.has_hold = 1;
    d.hold = 1;
    struct job *j = ctld_fixture_job(f, ctld_fixture_submit_one(f, &d, FIX_UID));
    assert_int_equal(j->rec->reason, JOB_REASON_HELD_USER);
    assert_false(job_unit_eligible(j));

    j->rec->hold = 0; /* released behind the reasons' back */
    assert_false(job_unit_eligible(j));
    assert_int_equal(j->rec->reason, JOB_REASON_HELD_USER); /* the question wrote nothing */

    job_unit_refresh_reasons(f->c, j, time(NULL));
    assert_int_equal(j->rec->reason, JOB_REASON_NONE);
    assert_true(job_unit_eligible(j));
}

/* A unit with a component that is no longer pending is not the scheduler's. */
static void test_not_pending(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    struct job *j = ctld_fixture_job(f, ctld_fixture_submit_one(f, &d, FIX_UID));
    job_unit_refresh_reasons(f->c, j, time(NULL));
    assert_true(job_unit_eligible(j));
    job_end_unit(f->c, j, TESSERA__JOB_STATE__JOB_CANCELLED, 0);
    assert_false(job_unit_eligible(j));
}

/* ------------------------------------------------------------------------------------ */
/* a cancel that overtakes the launch */

struct overtaken {
    uint32_t cancelled, waiting;
};

static int waiting_started(struct ctld_fixture *f, void *arg)
{
    const struct overtaken *o = arg;
    return ctld_fixture_job(f, o->waiting)->rec->state == TESSERA__JOB_STATE__JOB_RUNNING;
}

/* A controller whose node n1 is registered but its daemon's port answers nothing (as a
 * daemon that has never heard of the job), with extra conf lines, and a batch job started
 * there whose start is not committed yet: its id. */
static uint32_t started_on_silent_node(struct ctld_fixture *f, const char *extra)
{
    char conf[512];
    snprintf(conf, sizeof(conf),
             "NodeName=n1 CPUs=4 RealMemory=1000 NodeAddr=127.0.0.1 Port=%u\n"
             "PartitionName=p Nodes=n1 Default=YES\nSchedulerType=sched/builtin\n%s",
             (unsigned)harness_free_port(), extra);
    ctld_fixture_up(f, conf, 1);
    ctld_fixture_register(f, "n1");
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.script = (char *)"#!/bin/sh\nsleep 300\n";
    uint32_t id = ctld_fixture_submit_one(f, &d, FIX_UID);
    ctld_fixture_start(f, id, "n1", 1);
    return id;
}

/* scancel reaches the controller after a batch job's start but before that start is
 * committed (squeue shows RUNNING from memory at once): its launch never leaves, so no
 * node daemon will report its end. It must end all the same, and stop counting against
 * MaxRunning, so the job held back by the limit starts. */
static void test_cancel_before_launch(void **state)
{
    (void)state;
    struct ctld_fixture f;
    struct overtaken o = {.cancelled = started_on_silent_node(&f, "MaxRunning=1\n")};
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL); /* an allocation: its start launches nothing */
    o.waiting = ctld_fixture_submit_one(&f, &d, FIX_UID);
    char text[16];
    snprintf(text, sizeof(text), "%u", o.cancelled);
    assert_int_equal(job_action_by_id(f.c, TESSERA__JOB_ACTION__JOB_ACTION_CANCEL, text,
                                      FIX_UID, NULL),
                     TS_OK);
    /* the node is up: the end waits for a report, as for any batch job */
    assert_int_equal(ctld_fixture_job(&f, o.cancelled)->rec->state,
                     TESSERA__JOB_STATE__JOB_RUNNING);
    assert_true(ctld_fixture_turn(&f, waiting_started, &o, 5000));
    const Tessera__JobRecord *r = ctld_fixture_job(&f, o.cancelled)->rec;
    assert_int_equal(r->state, TESSERA__JOB_STATE__JOB_CANCELLED);
    assert_int_equal(r->cancel_uid, FIX_UID);
    /* as any running job the cancel's SIGTERM ended */
    assert_true(WIFSIGNALED(r->exit_code) && WTERMSIG(r->exit_code) == SIGTERM);
    ctld_fixture_down(&f);
}

/* A job suspended after its start but before that start is committed: the launch leaves
 * all the same (here to a node that does not answer, which takes the job off it), where it
 * used to be skipped, leaving the job SUSPENDED with nothing anywhere to resume. */
static int left_suspended(struct ctld_fixture *f, void *arg)
{
    return ctld_fixture_job(f, *(const uint32_t *)arg)->rec->state !=
           TESSERA__JOB_STATE__JOB_SUSPENDED;
}

static void test_suspend_before_launch(void **state)
{
    (void)state;
    struct ctld_fixture f;
    uint32_t id = started_on_silent_node(&f, "");
    char text[16];
    snprintf(text, sizeof(text), "%u", id);
    assert_int_equal(job_action_by_id(f.c, TESSERA__JOB_ACTION__JOB_ACTION_SUSPEND, text, 0,
                                      NULL),
                     TS_OK);
    assert_int_equal(ctld_fixture_job(&f, id)->rec->state, TESSERA__JOB_STATE__JOB_SUSPENDED);
    /* the launch goes out and finds no daemon: the node is down, the job off it */
    assert_true(ctld_fixture_turn(&f, left_suspended, &id, 5000));
    ctld_fixture_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eligible_reads_only, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_not_pending, setup, ctld_fixture_teardown),
        cmocka_unit_test(test_cancel_before_launch),
        cmocka_unit_test(test_suspend_before_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
