/* ctld/job_submit.c: submissions checked against partitions and nodes, all components
 * stored or none (docs/job-states.md), on a controller built in-process. */
#include "ctld_fixture.h"

#include "ctld/job.h"

#include "common/job/jobstate.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const conf_text =
    "NodeName=n1 CPUs=4 RealMemory=1000 Features=fast\n"
    "NodeName=n2 CPUs=4 RealMemory=1000 Features=fast\n"
    "NodeName=n3 CPUs=8 RealMemory=4000 Features=big\n"
    "PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=60 DefaultTime=10\n"
    "PartitionName=big Nodes=n3 MaxTime=UNLIMITED\n"
    "PartitionName=closed Nodes=n1,n2 State=INACTIVE\n"
    "PartitionName=drained Nodes=n1,n2 State=DRAIN\n"
    "MaxSubmitJobs=3\n";

static int setup(void **state)
{
    return ctld_fixture_setup(state, conf_text, 0);
}

/* A refused submission left nothing behind: no job, the id counter as it was. */
static void assert_nothing_stored(struct ctld_fixture *f, uint64_t next_id)
{
    assert_int_equal(f->c->jobs.count, 0);
    assert_null(f->c->jobs.head);
    assert_int_equal(f->c->next_job_id, next_id);
}

static void test_plain_submission(void **state)
{
    struct ctld_fixture *f = *state;
    uint64_t first = f->c->next_job_id;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    uint32_t id = ctld_fixture_submit_one(f, &d, FIX_UID);
    assert_int_equal(id, first);
    assert_int_equal(f->c->next_job_id, first + 1);
    for (int pass = 0; pass < 2; pass++) {
        /* the record as the controller keeps it, and as a restart reads it back */
        const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
        assert_int_equal(r->state, TESSERA__JOB_STATE__JOB_PENDING);
        assert_int_equal(r->desc->user_id, FIX_UID);
        assert_int_equal(r->desc->group_id, FIX_GID);
        assert_string_equal(r->desc->submit_host, "login");
        assert_string_equal(r->desc->partition, "debug"); /* the default, filled in */
        assert_int_equal(r->time_limit, 600);              /* DefaultTime=10 */
        assert_int_equal(r->min_nodes, 1);
        assert_int_equal(r->ntasks, 1);
        assert_int_equal(r->cpus_per_task, 1);
        assert_int_equal(r->min_cpus, 1);
        assert_int_equal(r->het_job_id, 0);
        assert_int_equal(r->hold, 0);
        assert_int_equal(r->batch, 0); /* no script: an allocation */
        assert_int_equal(r->reason, JOB_REASON_NONE);
        assert_true(r->priority > 0);
        assert_int_equal(r->priority, job_default_priority(r));
        assert_true(r->eligible_time > 0);
        if (pass == 0)
            ctld_fixture_restart(f);
    }
    assert_int_equal(f->c->next_job_id, first + 1);
    /* with a script: a batch job, its script kept */
    d.script = (char *)"#!/bin/sh\ntrue\n";
    id = ctld_fixture_submit_one(f, &d, FIX_UID);
    assert_int_equal(ctld_fixture_job(f, id)->rec->batch, 1);
    assert_string_equal(ctld_fixture_job(f, id)->rec->desc->script, "#!/bin/sh\ntrue\n");
}

static void test_bad_partition(void **state)
{
    struct ctld_fixture *f = *state;
    uint64_t next = f->c->next_job_id;
    Tessera__JobDesc d;
    Tessera__JobDesc *dp = &d;
    ctld_fixture_desc(&d, "nope");
    assert_int_equal(ctld_fixture_submit(f, &dp, 1, FIX_UID, NULL, NULL, 0),
                     TS_EINVALID_PARTITION);
    assert_string_equal(ts_strerror(TS_EINVALID_PARTITION), "Invalid partition name specified");
    ctld_fixture_desc(&d, "closed");
    assert_int_equal(ctld_fixture_submit(f, &dp, 1, FIX_UID, NULL, NULL, 0),
                     TS_EPARTITION_NOT_AVAIL);
    ctld_fixture_desc(&d, "drained");
    assert_int_equal(ctld_fixture_submit(f, &dp, 1, FIX_UID, NULL, NULL, 0),
                     TS_EPARTITION_NOT_AVAIL);
    assert_nothing_stored(f, next);
}

/* One change to the standard component and the error it must get. */
struct refusal {
    const char *what;
    void (*change)(Tessera__JobDesc *d);
    int err;
};

static void time_over_max(Tessera__JobDesc *d)
{
    d->has_time_limit = 1;
    d->time_limit = 61 * 60;
}
static void time_unlimited(Tessera__JobDesc *d)
{
    d->has_time_limit = 1;
    d->time_limit = -1;
}
static void too_many_nodes(Tessera__JobDesc *d)
{
    d->has_min_nodes = 1;
    d->min_nodes = 3;
}
static void too_many_cpus(Tessera__JobDesc *d)
{
    d->ntasks = 9; /* the partition has 8 */
}
static void task_too_wide(Tessera__JobDesc *d)
{
    d->has_cpus_per_task = 1;
    d->cpus_per_task = 5; /* its nodes have 4 */
}
static void too_much_memory(Tessera__JobDesc *d)
{
    d->has_mem_per_node_mb = 1;
    d->mem_per_node_mb = 2000;
}
static void unknown_feature(Tessera__JobDesc *d)
{
    d->constraint = (char *)"nosuch";
}
static void feature_elsewhere(Tessera__JobDesc *d)
{
    d->constraint = (char *)"big";
}
static void node_elsewhere(Tessera__JobDesc *d)
{
    d->nodelist = (char *)"n3";
}
static void node_unknown(Tessera__JobDesc *d)
{
    d->nodelist = (char *)"zz9";
}
static void relative_work_dir(Tessera__JobDesc *d)
{
    d->work_dir = (char *)"tmp";
}
static void licenses_without_filters(Tessera__JobDesc *d)
{
    d->licenses = (char *)"lic:1";
}
static void user_negative_nice(Tessera__JobDesc *d)
{
    d->has_nice = 1;
    d->nice = -5;
}
static void nice_out_of_range(Tessera__JobDesc *d)
{
    d->has_nice = 1;
    d->nice = JOB_NICE_MAX + 1;
}
static void user_priority(Tessera__JobDesc *d)
{
    d->has_priority = 1;
    d->priority = 5;
}
static void missing_dependency(Tessera__JobDesc *d)
{
    d->dependency = (char *)"afterok:999999";
}

static void test_refusals(void **state)
{
    static const struct refusal cases[] = {
        {"time over MaxTime", time_over_max, TS_EINVALID_TIME_LIMIT},
        {"unlimited time under MaxTime", time_unlimited, TS_EINVALID_TIME_LIMIT},
        {"more nodes than the partition", too_many_nodes, TS_ENODE_COUNT},
        {"more CPUs than the partition", too_many_cpus, TS_ETOO_MANY_CPUS},
        {"a task wider than any node", task_too_wide, TS_ENODE_CONFIG},
        {"more memory than a node", too_much_memory, TS_EMEMORY},
        {"a feature no node has", unknown_feature, TS_EINVALID_FEATURE},
        {"a feature of another partition", feature_elsewhere, TS_ENODE_CONFIG},
        {"-w outside the partition", node_elsewhere, TS_ENODES_NOT_IN_PARTITION},
        {"-w naming no node", node_unknown, TS_EINVALID_NODE_NAME},
        {"a relative working folder", relative_work_dir, TS_EINVAL},
        {"licences without activation filters", licenses_without_filters,
         TS_EINVALID_LICENSES},
        {"a negative nice from a user", user_negative_nice, TS_EPERM},
        {"a nice out of range", nice_out_of_range, TS_EINVALID_NICE},
        {"a priority from a user", user_priority, TS_EPERM},
        {"a dependency on no job", missing_dependency, TS_EDEPENDENCY},
    };
    struct ctld_fixture *f = *state;
    uint64_t next = f->c->next_job_id;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Tessera__JobDesc d;
        Tessera__JobDesc *dp = &d;
        ctld_fixture_desc(&d, NULL);
        cases[i].change(&d);
        int err = ctld_fixture_submit(f, &dp, 1, FIX_UID, NULL, NULL, 0);
        if (err != cases[i].err)
            fail_msg("%s: got %s, want %s", cases[i].what, ts_strerror(err),
                     ts_strerror(cases[i].err));
    }
    assert_nothing_stored(f, next);
}

/* What users may not set, administrators may: it is kept in the record. */
static void test_admin_privileges(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    user_priority(&d);
    uint32_t id = ctld_fixture_submit_one(f, &d, 0);
    assert_int_equal(ctld_fixture_job(f, id)->rec->priority, 5);
    assert_int_equal(ctld_fixture_job(f, id)->rec->desc->user_id, 0);
    ctld_fixture_desc(&d, NULL);
    user_negative_nice(&d);
    id = ctld_fixture_submit_one(f, &d, 0);
    assert_int_equal(ctld_fixture_job(f, id)->rec->desc->nice, -5);
}

static void test_het_submission(void **state)
{
    struct ctld_fixture *f = *state;
    uint64_t first = f->c->next_job_id;
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, NULL);
    ctld_fixture_desc(&d1, "big");
    d1.ntasks = 8;
    Tessera__JobDesc *comps[] = {&d0, &d1};
    uint32_t id = 0;
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, &id, NULL, 0), TS_OK);
    assert_int_equal(id, first);
    assert_int_equal(f->c->next_job_id, first + 2);
    struct job *lead = ctld_fixture_job(f, id);
    struct job *second = ctld_fixture_job(f, id + 1);
    assert_ptr_equal(lead->leader, lead);
    assert_ptr_equal(second->leader, lead);
    assert_int_equal(job_ncomponents(lead), 2);
    assert_ptr_equal(job_component(lead, 1), second);
    for (uint32_t i = 0; i < 2; i++) {
        const Tessera__JobRecord *r = job_component(lead, i)->rec;
        assert_int_equal(r->job_id, id + i);
        assert_int_equal(r->het_job_id, id);
        assert_int_equal(r->het_job_offset, i);
        assert_int_equal(r->het_size, 2);
        assert_string_equal(r->desc->open_mode, "append");
    }
    assert_string_equal(second->rec->desc->partition, "big");
    assert_int_equal(second->rec->time_limit, -1); /* MaxTime=UNLIMITED, no DefaultTime */
    assert_int_equal(second->rec->min_cpus, 8);
}

/* One bad component refuses the whole job, naming it. */
static void test_het_all_or_nothing(void **state)
{
    struct ctld_fixture *f = *state;
    uint64_t next = f->c->next_job_id;
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, NULL);
    ctld_fixture_desc(&d1, "nope");
    Tessera__JobDesc *comps[] = {&d0, &d1};
    char err[256];
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, NULL, err, sizeof(err)),
                     TS_EINVALID_PARTITION);
    assert_string_equal(err, "component 1: Invalid partition name specified");
    assert_nothing_stored(f, next);
    /* licences belong to the first component only */
    ctld_fixture_desc(&d1, NULL);
    d1.licenses = (char *)"lic:1";
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, NULL, err, sizeof(err)),
                     TS_EINVALID_LICENSES);
    assert_nothing_stored(f, next);
}

static void test_hold(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.has_hold = 1;
    d.hold = 1;
    uint32_t id = ctld_fixture_submit_one(f, &d, FIX_UID);
    const Tessera__JobRecord *r = ctld_fixture_job(f, id)->rec;
    assert_int_equal(r->state, TESSERA__JOB_STATE__JOB_PENDING);
    assert_int_equal(r->hold, 1);
    assert_int_equal(r->priority, 0);
    assert_int_equal(r->reason, JOB_REASON_HELD_USER);
    assert_int_equal(r->eligible_time, 0); /* Slurm shows EligibleTime=Unknown */
}

/* --test-only checks everything and stores nothing. */
static void test_test_only(void **state)
{
    struct ctld_fixture *f = *state;
    uint64_t next = f->c->next_job_id;
    Tessera__JobDesc d;
    Tessera__JobDesc *dp = &d;
    ctld_fixture_desc(&d, NULL);
    Tessera__SubmitRequest req = TESSERA__SUBMIT_REQUEST__INIT;
    req.components = &dp;
    req.n_components = 1;
    req.test_only = 1;
    uint32_t id = 0;
    char err[256] = "";
    assert_int_equal(job_submit(f->c, &req, FIX_UID, FIX_GID, "login", &id, err, sizeof(err)),
                     TS_OK);
    assert_nothing_stored(f, next);
    too_many_nodes(&d);
    assert_int_equal(job_submit(f->c, &req, FIX_UID, FIX_GID, "login", &id, err, sizeof(err)),
                     TS_ENODE_COUNT);
    assert_nothing_stored(f, next);
}

/* MaxSubmitJobs=3: a user's pending and running components; --test-only is not counted,
 * other users have their own. */
static void test_max_submit_jobs(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, NULL);
    ctld_fixture_desc(&d1, NULL);
    Tessera__JobDesc *comps[] = {&d0, &d1};
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, NULL, NULL, 0), TS_OK);
    ctld_fixture_submit_one(f, &d0, FIX_UID);
    uint64_t next = f->c->next_job_id;
    assert_int_equal(ctld_fixture_submit(f, comps, 1, FIX_UID, NULL, NULL, 0),
                     TS_EACCOUNTING_POLICY);
    assert_int_equal(f->c->next_job_id, next);
    assert_int_equal(f->c->jobs.count, 3);
    Tessera__SubmitRequest req = TESSERA__SUBMIT_REQUEST__INIT;
    req.components = comps;
    req.n_components = 1;
    req.test_only = 1;
    uint32_t id;
    char err[256];
    assert_int_equal(job_submit(f->c, &req, FIX_UID, FIX_GID, "login", &id, err, sizeof(err)),
                     TS_OK);
    ctld_fixture_submit_one(f, &d0, FIX_OTHER_UID);
    /* a finished job no longer counts */
    struct job *lead = f->c->jobs.head;
    job_end_unit(f->c, lead, TESSERA__JOB_STATE__JOB_CANCELLED, 0);
    assert_true(jobstate_is_finished(lead->rec->state));
    ctld_fixture_submit_one(f, &d0, FIX_UID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_submission, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_bad_partition, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_admin_privileges, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_het_submission, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_het_all_or_nothing, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hold, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_test_only, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_max_submit_jobs, setup, ctld_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
