/* Fair-share usage from job records (common/sched/usage.h). */
#include "common/sched/usage.h"

#include "common/sched/fairshare.h"

double usage_cpu_seconds(const Tessera__JobRecord *r, int64_t charged_to, int64_t now)
{
    if (r->state != TESSERA__JOB_STATE__JOB_RUNNING)
        return 0;
    /* a running component always has its start (the simulator's clock may start it at
     * 0, the controller's never does) */
    int64_t from = r->start_time > charged_to ? r->start_time : charged_to;
    if (r->suspend_time > from)
        from = r->suspend_time;
    if (now <= from || !r->alloc_cpus)
        return 0;
    return (double)r->alloc_cpus * (double)(now - from);
}

int64_t usage_step(struct fairshare *fs, int64_t *updated, int64_t now, int64_t interval,
                   int64_t half_life)
{
    if (now < *updated) {
        *updated = now;
        return -1;
    }
    if (now - *updated < (interval > 0 ? interval : 1))
        return -1;
    int64_t from = *updated;
    fairshare_decay(fs, (double)(now - from), (double)half_life);
    *updated = now;
    return from;
}
