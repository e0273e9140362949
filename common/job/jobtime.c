#include "common/job/jobtime.h"

int64_t jobtime_used(const Tessera__JobRecord *job, time_t now)
{
    int64_t until = now;
    int64_t used;

    if (job->state == TESSERA__JOB_STATE__JOB_PENDING || job->start_time == 0)
        return 0;
    if (job->state == TESSERA__JOB_STATE__JOB_SUSPENDED)
        return job->pre_suspend_secs;
    /* A running job's end_time may be its expected end; others stopped at end_time. */
    if (job->state != TESSERA__JOB_STATE__JOB_RUNNING && job->end_time)
        until = job->end_time;
    if (job->suspend_time)
        used = until - job->suspend_time + job->pre_suspend_secs;
    else
        used = until - job->start_time;
    return used < 0 ? 0 : used;
}
