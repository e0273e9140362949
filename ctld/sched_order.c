/* The order the scheduler sees pending units in (docs/policies.md).
 *
 * Without a policy file: the highest component priority first, then the lower id (the
 * default priority weighs age, nice and size). With one, PBS's order: when by_queue is
 * on, queue by queue (the partition's PriorityTier, highest first; then its name), with
 * help_starving_jobs the starving units first, and within that by the sort_by key or the
 * multi_sort keys, ties in submission order. The head of the queue gets the backfill
 * scheduler's reservation: a starving job is not overtaken except by jobs that do not
 * delay it. The
 * period's values apply: prime or non-prime time by HolidaysFile= (always prime without
 * one). Dedicated time (DedicatedTimeFile=) keeps units out of the view: inside a period
 * all but those of dedicated partitions, outside it those, and units whose time limit
 * would reach into the next period. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/conf.h"
#include "common/dedicated.h"
#include "common/holidays.h"
#include "common/jobstate.h"
#include "common/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct unit_keys {
    struct job *lead;
    struct policy_unit u;
};

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void fill_keys(struct ctld *c, struct job *lead, struct unit_keys *k, time_t now)
{
    memset(k, 0, sizeof(*k));
    k->lead = lead;
    struct policy_unit *u = &k->u;
    u->id = lead->rec->job_id;
    u->priority = job_unit_priority(lead);
    const Tessera__JobRecord *r0 = lead->rec;
    const struct conf_partition *p = conf_find_partition(c->conf, r0->desc->partition);
    u->tier = p ? p->priority_tier : 0;
    u->partition = r0->desc->partition ? r0->desc->partition : "";
    u->waited = r0->eligible_time && now > r0->eligible_time ? now - r0->eligible_time : 0;
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

static int cmp_policy(const void *a, const void *b, void *arg)
{
    const struct unit_keys *x = a, *y = b;
    return policy_compare(arg, &x->u, &y->u);
}

static int cmp_default(const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    uint32_t px = job_unit_priority(x), py = job_unit_priority(y);
    if (px != py)
        return px > py ? -1 : 1;
    return CMP(x->rec->job_id, y->rec->job_id);
}

void sched_order_units(struct ctld *c, struct job **leaders, size_t n)
{
    if (n < 2)
        return;
    if (!c->policy) {
        qsort(leaders, n, sizeof(*leaders), cmp_default);
        return;
    }
    struct unit_keys *keys = malloc(n * sizeof(*keys));
    if (!keys) { /* out of memory: the default order rather than none */
        qsort(leaders, n, sizeof(*leaders), cmp_default);
        return;
    }
    time_t now = time(NULL);
    for (size_t i = 0; i < n; i++)
        fill_keys(c, leaders[i], &keys[i], now);
    enum policy_period period = c->holidays ? holidays_period(c->holidays, now) : POLICY_PRIME;
    qsort_r(keys, n, sizeof(*keys), cmp_policy, &c->policy->set[period]);
    for (size_t i = 0; i < n; i++)
        leaders[i] = keys[i].lead;
    free(keys);
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
