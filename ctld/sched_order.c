/* The order the scheduler sees pending units in (docs/policies.md).
 *
 * Without a policy file: the highest component priority first, then the lower id (the
 * default priority weighs age, nice and size), and every unit that waits holds the ones
 * after it back (reservations, Slurm's rule). With one, common/policy_order.c's order
 * under the current period's values (prime or non-prime time by HolidaysFile=, always
 * prime without one): queues, starving units, sort keys, fair share, round robin. With
 * strict_fifo off (PBS's default) the units are greedy: one that cannot start holds
 * nobody back, except a starving one, which keeps the head and its reservation.
 *
 * Dedicated time (DedicatedTimeFile=) keeps units out of the view: inside a period all
 * but those of dedicated partitions, outside it those, and units whose time limit would
 * reach into the next period. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/job.h"

#include "common/conf.h"
#include "common/dedicated.h"
#include "common/fairshare.h"
#include "common/holidays.h"
#include "common/jobstate.h"
#include "common/policy.h"

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
    u->fs_entity = fair ? fairshare_usage_entity(c, r0, now) : -1;
    u->fs_norm = fair ? fairshare_norm_shares(fairshare_usage_tree(c), u->fs_entity) : 0;
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
            u->mem_mb += d->mem_per_cpu_mb * cpus;
        else if (d->has_mem_per_node_mb)
            u->mem_mb += d->mem_per_node_mb * (r->min_nodes ? r->min_nodes : 1);
    }
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int cmp_default(const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    uint32_t px = job_unit_priority(x), py = job_unit_priority(y);
    if (px != py)
        return px > py ? -1 : 1;
    return CMP(x->rec->job_id, y->rec->job_id);
}

void sched_order_units(struct ctld *c, struct job **leaders, size_t n, unsigned char *greedy)
{
    memset(greedy, 0, n);
    if (!c->policy) {
        qsort(leaders, n, sizeof(*leaders), cmp_default);
        return;
    }
    struct policy_unit *units = malloc((n + 1) * sizeof(*units));
    if (!units) { /* out of memory: the default order rather than none */
        qsort(leaders, n, sizeof(*leaders), cmp_default);
        return;
    }
    time_t now = time(NULL);
    enum policy_period period = c->holidays ? holidays_period(c->holidays, now) : POLICY_PRIME;
    const struct policy_set *set = &c->policy->set[period];
    int fair = fairshare_usage_wanted(c, now);
    for (size_t i = 0; i < n; i++)
        fill_keys(c, leaders[i], &units[i], now, fair);
    policy_order(set, units, n, fair ? fairshare_usage_tree(c) : NULL);
    for (size_t i = 0; i < n; i++) {
        leaders[i] = units[i].owner;
        /* strict_fifo off: a unit that cannot start holds nobody back, except a starving
         * one (help_starving_jobs), which reserves */
        greedy[i] = !set->strict_fifo && !units[i].starving;
    }
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
    enum policy_period period = c->holidays ? holidays_period(c->holidays, now) : POLICY_PRIME;
    const char *prefix = c->policy ? c->policy->set[period].dedicated_prefix : "ded";
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
