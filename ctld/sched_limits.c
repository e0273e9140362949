/* Limits checked before a start (docs/07-policy.md §4, docs/policies.md): the running-job limits of
 * common/sched/limits.h over the controller's jobs. The counts are taken from the running
 * components once per cycle (and once more when its decisions are applied, growing with
 * each start), so that neither the view nor the starts of one cycle pass a limit; a unit
 * held back carries the limit's reason. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/sched/limits.h"

#include <stdlib.h>

struct limit_counts *sched_limits_count(struct ctld *c)
{
    struct limit_counts *lc = limits_create(c->conf);
    for (struct job *j = c->jobs.head; lc && j; j = j->next)
        limits_add_running(lc, j->rec);
    return lc;
}

void sched_limits_free(struct limit_counts *lc)
{
    limits_destroy(lc);
}

int sched_limits_allow(struct ctld *c, struct limit_counts *lc, struct job *lead)
{
    (void)c;
    if (!lc)
        return 1;
    size_t n;
    const Tessera__JobRecord **recs = sched_unit_records(lead, &n);
    uint32_t reason = recs ? limits_reason(lc, recs, n) : 0;
    free(recs);
    if (!reason)
        return 1;
    for (size_t i = 0; i < job_ncomponents(lead); i++)
        job_component(lead, i)->rec->reason = reason;
    return 0;
}

void sched_limits_started(struct ctld *c, struct limit_counts *lc, struct job *lead)
{
    (void)c;
    for (size_t i = 0; lc && i < job_ncomponents(lead); i++)
        limits_add_running(lc, job_component(lead, i)->rec);
}
