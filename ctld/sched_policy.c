/* The scheduling policy in force now (docs/policies.md): the policy file's prime or
 * non-prime values by HolidaysFile= (always prime without one), and dedicated time
 * (DedicatedTimeFile=), which keeps units out of the view: inside a period all but those
 * of dedicated partitions, outside it those, and units whose time limit would reach into
 * the next period. */
#include "ctld/sched.h"
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/job/jobstate.h"
#include "common/sched/dedicated.h"
#include "common/sched/holidays.h"
#include "common/sched/policy.h"

#include <string.h>
#include <time.h>

const struct policy_set *sched_policy_now(const struct ctld *c, time_t now)
{
    if (!c->policy)
        return NULL;
    enum policy_period p = c->holidays ? holidays_period(c->holidays, now) : POLICY_PRIME;
    return &c->policy->set[p];
}

static int dedicated_partition(const char *prefix, const char *partition)
{
    return partition && !strncmp(partition, prefix, strlen(prefix));
}

int sched_policy_admits(struct ctld *c, struct job *lead, time_t now)
{
    if (!c->dedicated)
        return 1;
    const struct policy_set *set = sched_policy_now(c, now);
    const char *prefix = set ? set->dedicated_prefix : "ded";
    int inside = dedicated_inside(c->dedicated, now), ok = 1;
    time_t next = inside ? 0 : dedicated_next_start(c->dedicated, now);
    for (size_t i = 0; ok && i < job_ncomponents(lead); i++) {
        const Tessera__JobRecord *r = job_component(lead, i)->rec;
        int ded = dedicated_partition(prefix, r->desc->partition);
        if (inside)
            ok = ded; /* during a period nothing else starts */
        else if (ded)
            ok = 0; /* dedicated partitions run only inside periods */
        else if (next)
            ok = r->time_limit > 0 && now + r->time_limit <= next; /* would reach into it */
    }
    if (!ok)
        for (size_t i = 0; i < job_ncomponents(lead); i++)
            job_component(lead, i)->rec->reason = JOB_REASON_DEDICATED_TIME;
    return ok;
}
