#include "common/job/jobstate.h"

#include <inttypes.h>
#include <stdio.h>
#include <strings.h>

static const struct {
    const char *name;
    const char *shortname;
} states[] = {
    [TESSERA__JOB_STATE__JOB_PENDING] = {"PENDING", "PD"},
    [TESSERA__JOB_STATE__JOB_RUNNING] = {"RUNNING", "R"},
    [TESSERA__JOB_STATE__JOB_SUSPENDED] = {"SUSPENDED", "S"},
    [TESSERA__JOB_STATE__JOB_COMPLETING] = {"COMPLETING", "CG"},
    [TESSERA__JOB_STATE__JOB_COMPLETED] = {"COMPLETED", "CD"},
    [TESSERA__JOB_STATE__JOB_CANCELLED] = {"CANCELLED", "CA"},
    [TESSERA__JOB_STATE__JOB_FAILED] = {"FAILED", "F"},
    [TESSERA__JOB_STATE__JOB_TIMEOUT] = {"TIMEOUT", "TO"},
    [TESSERA__JOB_STATE__JOB_NODE_FAIL] = {"NODE_FAIL", "NF"},
    [TESSERA__JOB_STATE__JOB_PREEMPTED] = {"PREEMPTED", "PR"},
    [TESSERA__JOB_STATE__JOB_BOOT_FAIL] = {"BOOT_FAIL", "BF"},
    [TESSERA__JOB_STATE__JOB_DEADLINE] = {"DEADLINE", "DL"},
    [TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY] = {"OUT_OF_MEMORY", "OOM"},
    [TESSERA__JOB_STATE__JOB_REQUEUED] = {"REQUEUED", "RQ"},
};
#define NSTATES (sizeof(states) / sizeof(states[0]))

const char *jobstate_name(Tessera__JobState state)
{
    return (unsigned)state < NSTATES && states[state].name ? states[state].name : "UNKNOWN";
}

const char *jobstate_short(Tessera__JobState state)
{
    return (unsigned)state < NSTATES && states[state].shortname ? states[state].shortname
                                                                : "?";
}

int jobstate_parse(const char *s, Tessera__JobState *out)
{
    for (unsigned i = 0; i < NSTATES; i++) {
        if (!strcasecmp(s, states[i].name) || !strcasecmp(s, states[i].shortname)) {
            *out = (Tessera__JobState)i;
            return 0;
        }
    }
    return -1;
}

int jobstate_is_finished(Tessera__JobState state)
{
    switch (state) {
    case TESSERA__JOB_STATE__JOB_PENDING:
    case TESSERA__JOB_STATE__JOB_RUNNING:
    case TESSERA__JOB_STATE__JOB_SUSPENDED:
    case TESSERA__JOB_STATE__JOB_COMPLETING:
        return 0;
    default:
        return 1;
    }
}

static const struct {
    uint32_t code;
    const char *text;
    int sched;
} reasons[] = {
#define JOB_REASON_ROW(name, num, text, sched) {num, text, sched},
    JOB_REASONS(JOB_REASON_ROW)
#undef JOB_REASON_ROW
};

const char *jobreason_name(uint32_t reason)
{
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (reasons[i].code == reason)
            return reasons[i].text;
    return "Unknown";
}

int jobreason_scheduler_decides(uint32_t reason)
{
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (reasons[i].code == reason)
            return reasons[i].sched;
    return 0;
}

const char *jobstate_display_id(const Tessera__JobRecord *job, char *buf, size_t len)
{
    if (job->het_job_id)
        snprintf(buf, len, "%u+%u", job->het_job_id, job->het_job_offset);
    else
        snprintf(buf, len, "%u", job->job_id);
    return buf;
}

void jobstate_oom_notice(char *buf, size_t len, uint64_t kills, uint32_t job_id,
                         const char *step)
{
    snprintf(buf, len,
             "slurmstepd: error: Detected %" PRIu64 " oom_kill event%s in StepId=%" PRIu32
             ".%s. Some of the step tasks have been OOM Killed.\n",
             kills, kills == 1 ? "" : "s", job_id, step);
}
