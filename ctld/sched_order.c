/* The order the scheduler sees pending units in (docs/policies.md): each unit's keys
 * (priority, queue, requested CPU time and memory, limit, wait, fair-share entity) handed
 * to the priority plugin (PriorityType=, plugins/priority/) with the policy period in
 * force (prime or non-prime time by HolidaysFile=, always prime without one). priority/pbs
 * orders by the policy file and makes units greedy with strict_fifo off; without a policy
 * file, and with priority/basic, the highest priority first, then the lower id.
 *
 * Dedicated time (DedicatedTimeFile=) keeps units out of the view: inside a period all
 * but those of dedicated partitions, outside it those, and units whose time limit would
 * reach into the next period. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/job.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/sched/dedicated.h"
#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/sched/priority.h"
#include "common/util/arith.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void fill_keys(struct ctld *c, struct job *lead, struct policy_unit *u, time_t now,
                      int fair)
{
    memset(u, 0, sizeof(*u));
    u->owner = lead;
    u->id = lead->rec->job_id;
    u->priority = job_unit_priority(lead);
    const Tessera__JobRecord *r0 = lead->rec;
    const struct conf_partition *p = conf_find_partition(c->conf, r0->desc->partition);
    u->tier = p ? p->priority_tier : 0;
    u->partition = r0->desc->partition ? r0->desc->partition : "";
    u->waited = r0->eligible_time && now > r0->eligible_time ? now - r0->eligible_time : 0;
    u->fs_entity = fair ? fairshare_usage_entity(c, r0, now) : -1; /* fs_norm: later */
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        const Tessera__JobRecord *r = job_component(lead, i)->rec;
        const Tessera__JobDesc *d = r->desc;
        int64_t limit = r->time_limit > 0 ? r->time_limit : INT64_MAX;
        uint32_t cpus = r->min_cpus ? r->min_cpus : 1;
        int64_t cput = limit == INT64_MAX || limit > INT64_MAX / cpus ? INT64_MAX
                                                                      : limit * cpus;
        u->cput = sat_add(u->cput, cput);
        if (limit > u->walltime)
            u->walltime = limit;
        if (d->has_mem_per_cpu_mb && d->mem_per_cpu_mb)
            u->mem_mb = arith_add_sat(u->mem_mb, arith_mul_sat(d->mem_per_cpu_mb, cpus));
        else if (d->has_mem_per_node_mb)
            u->mem_mb = arith_add_sat(u->mem_mb, arith_mul_sat(d->mem_per_node_mb,
                                                               r->min_nodes ? r->min_nodes : 1));
    }
}

void sched_order_units(struct ctld *c, struct job **leaders, size_t n, unsigned char *greedy)
{
    memset(greedy, 0, n);
    struct policy_unit *units = malloc((n + 1) * sizeof(*units));
    if (!units)
        return; /* out of memory: id order rather than none */
    time_t now = time(NULL);
    int fair = fairshare_usage_wanted(c, now);
    struct priority_view view = {
        .now = (int64_t)now,
        .policy = ctld_policy_now(c, now),
        .fairshare = fair ? fairshare_usage_tree(c) : NULL,
    };
    for (size_t i = 0; i < n; i++)
        fill_keys(c, leaders[i], &units[i], now, fair);
    /* shares once every entity is in the tree: a name added under "unknown" changes
     * its siblings' */
    for (size_t i = 0; fair && i < n; i++)
        units[i].fs_norm = fairshare_norm_shares(view.fairshare, units[i].fs_entity);
    if (sched_priority_order(c, &view, units, n, greedy) != TS_OK)
        memset(greedy, 0, n);
    for (size_t i = 0; i < n; i++)
        leaders[i] = units[i].owner;
    free(units);
}

/* ------------------------------------------------------------------------------------ */
/* dedicated time */

static int dedicated_partition(const char *prefix, const char *partition)
{
    return partition && !strncmp(partition, prefix, strlen(prefix));
}

int sched_policy_admits(struct ctld *c, struct job *lead, time_t now)
{
    if (!c->dedicated)
        return 1;
    const struct policy_set *set = ctld_policy_now(c, now);
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
