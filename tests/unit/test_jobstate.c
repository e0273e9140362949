/* Unit tests for common/jobstate: Slurm's state names and short names, parsing them as
 * squeue -t does, the finished states, reason texts and the ids users see ("93+1"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/job/jobstate.h"

#include <string.h>

static const struct {
    Tessera__JobState state;
    const char *name;
    const char *shortname;
    int finished;
} states[] = {
    {TESSERA__JOB_STATE__JOB_PENDING, "PENDING", "PD", 0},
    {TESSERA__JOB_STATE__JOB_RUNNING, "RUNNING", "R", 0},
    {TESSERA__JOB_STATE__JOB_SUSPENDED, "SUSPENDED", "S", 0},
    {TESSERA__JOB_STATE__JOB_COMPLETING, "COMPLETING", "CG", 0},
    {TESSERA__JOB_STATE__JOB_COMPLETED, "COMPLETED", "CD", 1},
    {TESSERA__JOB_STATE__JOB_CANCELLED, "CANCELLED", "CA", 1},
    {TESSERA__JOB_STATE__JOB_FAILED, "FAILED", "F", 1},
    {TESSERA__JOB_STATE__JOB_TIMEOUT, "TIMEOUT", "TO", 1},
    {TESSERA__JOB_STATE__JOB_NODE_FAIL, "NODE_FAIL", "NF", 1},
    {TESSERA__JOB_STATE__JOB_PREEMPTED, "PREEMPTED", "PR", 1},
    {TESSERA__JOB_STATE__JOB_BOOT_FAIL, "BOOT_FAIL", "BF", 1},
    {TESSERA__JOB_STATE__JOB_DEADLINE, "DEADLINE", "DL", 1},
    {TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY, "OUT_OF_MEMORY", "OOM", 1},
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

static void test_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSTATES; i++) {
        assert_string_equal(jobstate_name(states[i].state), states[i].name);
        assert_string_equal(jobstate_short(states[i].state), states[i].shortname);
    }
    assert_string_equal(jobstate_name((Tessera__JobState)99), "UNKNOWN");
    assert_string_equal(jobstate_short((Tessera__JobState)99), "?");
    assert_string_equal(jobstate_name((Tessera__JobState)-1), "UNKNOWN");
}

static void check_parse(const char *text, Tessera__JobState expected)
{
    Tessera__JobState got = (Tessera__JobState)-1;

    assert_int_equal(jobstate_parse(text, &got), 0);
    assert_int_equal(got, expected);
}

static void test_parse(void **state)
{
    char lower[32];

    (void)state;
    for (size_t i = 0; i < NSTATES; i++) {
        check_parse(states[i].name, states[i].state);
        check_parse(states[i].shortname, states[i].state);
        /* squeue -t takes any case */
        strcpy(lower, states[i].name);
        for (char *p = lower; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        check_parse(lower, states[i].state);
    }
    check_parse("pd", TESSERA__JOB_STATE__JOB_PENDING);
    check_parse("oom", TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY);
}

static void test_parse_rejects(void **state)
{
    Tessera__JobState got = TESSERA__JOB_STATE__JOB_RUNNING;

    (void)state;
    assert_int_equal(jobstate_parse("", &got), -1);
    assert_int_equal(jobstate_parse("PEND", &got), -1);
    assert_int_equal(jobstate_parse("PENDINGX", &got), -1);
    assert_int_equal(jobstate_parse("RUNNING ", &got), -1);
    assert_int_equal(jobstate_parse("all", &got), -1);
    assert_int_equal(got, TESSERA__JOB_STATE__JOB_RUNNING); /* untouched on failure */
}

static void test_finished(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSTATES; i++)
        assert_int_equal(jobstate_is_finished(states[i].state), states[i].finished);
}

static void test_reasons(void **state)
{
    static const struct {
        uint32_t code;
        const char *text;
    } reasons[] = {
        {JOB_REASON_NONE, "None"},
        {JOB_REASON_PRIORITY, "Priority"},
        {JOB_REASON_RESOURCES, "Resources"},
        {JOB_REASON_DEPENDENCY, "Dependency"},
        {JOB_REASON_BEGIN_TIME, "BeginTime"},
        {JOB_REASON_HELD_USER, "JobHeldUser"},
        {JOB_REASON_HELD_ADMIN, "JobHeldAdmin"},
        {JOB_REASON_PARTITION_DOWN, "PartitionDown"},
        {JOB_REASON_PARTITION_INACTIVE, "PartitionInactive"},
        {JOB_REASON_PARTITION_NODE_LIMIT, "PartitionNodeLimit"},
        {JOB_REASON_PARTITION_TIME_LIMIT, "PartitionTimeLimit"},
        {JOB_REASON_NODES_DOWN, "ReqNodeNotAvail"},
        {JOB_REASON_DEPENDENCY_NEVER, "DependencyNeverSatisfied"},
        {JOB_REASON_DEADLINE, "DeadLine"},
        {JOB_REASON_NON_ZERO_EXIT, "NonZeroExitCode"},
        {JOB_REASON_TIME_LIMIT, "TimeLimit"},
        {JOB_REASON_NODE_FAIL, "NodeDown"},
        {JOB_REASON_CANCELLED, "None"},
        {JOB_REASON_BAD_CONSTRAINTS, "BadConstraints"},
        {JOB_REASON_LAUNCH_FAILED, "JobLaunchFailure"},
        {JOB_REASON_SYSTEM_FAILURE, "SystemFailure"},
        {JOB_REASON_ACTIVATION_BLOCKED, "ActivationBlocked"},
        {JOB_REASON_ACTIVATION_RESERVED, "ActivationReserved"},
        {JOB_REASON_ACTIVATION_HOLD, "ActivationHold"},
        {JOB_REASON_ACTIVATION_FAILED, "ActivationFailed"},
        {JOB_REASON_DEDICATED_TIME, "DedicatedTime"},
        {JOB_REASON_MAX_RUNNING, "MaxRunningLimit"},
        {JOB_REASON_MAX_USER_RUNNING, "MaxUserRunningLimit"},
        {JOB_REASON_MAX_GROUP_RUNNING, "MaxGroupRunningLimit"},
        {JOB_REASON_RESOURCES_MAX, "ResourcesMaxLimit"},
        {JOB_REASON_RESOURCES_AVAILABLE, "ResourcesAvailableLimit"},
        {JOB_REASON_OUT_OF_MEMORY, "OutOfMemory"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        assert_string_equal(jobreason_name(reasons[i].code), reasons[i].text);
    assert_string_equal(jobreason_name(32), "Unknown");
    assert_string_equal(jobreason_name(UINT32_MAX), "Unknown");
    /* the reasons the scheduler decides every cycle keep a unit in its view */
    static const uint32_t sched[] = {JOB_REASON_NONE, JOB_REASON_PRIORITY, JOB_REASON_RESOURCES,
                                     JOB_REASON_BAD_CONSTRAINTS, JOB_REASON_ACTIVATION_HOLD,
                                     JOB_REASON_DEDICATED_TIME, JOB_REASON_MAX_RUNNING,
                                     JOB_REASON_RESOURCES_MAX, JOB_REASON_RESOURCES_AVAILABLE};
    static const uint32_t other[] = {JOB_REASON_DEPENDENCY, JOB_REASON_BEGIN_TIME,
                                     JOB_REASON_HELD_USER, JOB_REASON_HELD_ADMIN,
                                     JOB_REASON_ACTIVATION_FAILED, JOB_REASON_CANCELLED, 31};
    for (size_t i = 0; i < sizeof(sched) / sizeof(sched[0]); i++)
        assert_true(jobreason_scheduler_decides(sched[i]));
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        assert_false(jobreason_scheduler_decides(other[i]));
}

static void test_display_id(void **state)
{
    Tessera__JobRecord job = TESSERA__JOB_RECORD__INIT;
    char buf[24];

    (void)state;
    job.job_id = 93;
    assert_string_equal(jobstate_display_id(&job, buf, sizeof(buf)), "93");
    job.job_id = 94;
    job.het_job_id = 93;
    job.het_job_offset = 1;
    assert_string_equal(jobstate_display_id(&job, buf, sizeof(buf)), "93+1");
    job.job_id = 93;
    job.het_job_offset = 0;
    assert_string_equal(jobstate_display_id(&job, buf, sizeof(buf)), "93+0");
    job.job_id = UINT32_MAX;
    job.het_job_id = UINT32_MAX - 1;
    job.het_job_offset = 1;
    assert_string_equal(jobstate_display_id(&job, buf, sizeof(buf)), "4294967294+1");
    /* a short buffer is cut, never overrun */
    assert_string_equal(jobstate_display_id(&job, buf, 5), "4294");
}

/* Slurm's OOM notice, for one kill and for several. */
static void test_oom_notice(void **state)
{
    (void)state;
    char buf[256];
    jobstate_oom_notice(buf, sizeof(buf), 1, 12, "batch");
    assert_string_equal(buf, "slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. "
                             "Some of the step tasks have been OOM Killed.\n");
    jobstate_oom_notice(buf, sizeof(buf), 3, 94, "0");
    assert_string_equal(buf, "slurmstepd: error: Detected 3 oom_kill events in StepId=94.0. "
                             "Some of the step tasks have been OOM Killed.\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),         cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_rejects), cmocka_unit_test(test_finished),
        cmocka_unit_test(test_reasons),       cmocka_unit_test(test_display_id),
        cmocka_unit_test(test_oom_notice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
