/* Unit tests of ctld/job_run.c's "who may start": whether a unit waits for the scheduler
 * alone is a question of its reasons as they stand (job_unit_eligible changes nothing);
 * bringing them up to date is a separate, explicit step (job_unit_refresh_reasons). */
#include "ctld_fixture.h"

#include "common/job/jobstate.h"
#include "ctld/job.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eligible_reads_only, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_not_pending, setup, ctld_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
