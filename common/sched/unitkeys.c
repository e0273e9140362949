/* A pending unit's order keys from its job records (common/sched/unitkeys.h). */
#include "common/sched/unitkeys.h"

#include "common/conf/conf.h"
#include "common/sched/fairshare.h"
#include "common/util/arith.h"

#include <string.h>

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* One component's requests added to the unit's keys. */
static void add_component(struct policy_unit *u, const Tessera__JobRecord *r)
{
    const Tessera__JobDesc *d = r->desc;
    int64_t limit = r->time_limit > 0 ? r->time_limit : INT64_MAX;
    uint32_t cpus = r->min_cpus ? r->min_cpus : 1;
    int64_t cput = limit == INT64_MAX || limit > INT64_MAX / cpus ? INT64_MAX : limit * cpus;
    u->cput = sat_add(u->cput, cput);
    if (limit > u->walltime)
        u->walltime = limit;
    if (d->has_mem_per_cpu_mb && d->mem_per_cpu_mb)
        u->mem_mb = arith_add_sat(u->mem_mb, arith_mul_sat(d->mem_per_cpu_mb, cpus));
    else if (d->has_mem_per_node_mb)
        u->mem_mb = arith_add_sat(u->mem_mb, arith_mul_sat(d->mem_per_node_mb,
                                                           r->min_nodes ? r->min_nodes : 1));
    if (r->priority > u->priority)
        u->priority = r->priority;
}

void unitkeys_fill(const Tessera__JobRecord *const *components, size_t n,
                   const struct conf *conf, int64_t now, struct policy_unit *out)
{
    const Tessera__JobRecord *r0 = components[0];
    const char *partition = r0->desc->partition ? r0->desc->partition : "";
    const struct conf_partition *p = conf ? conf_find_partition(conf, partition) : NULL;
    memset(out, 0, sizeof(*out));
    out->id = r0->job_id;
    out->tier = p ? p->priority_tier : 0;
    out->partition = partition;
    /* a unit in the view is eligible, so eligible_time is when it became so (the
     * simulator's clock starts at 0, the controller's never does) */
    out->waited = now > r0->eligible_time ? now - r0->eligible_time : 0;
    out->fs_entity = -1;
    for (size_t i = 0; i < n; i++)
        add_component(out, components[i]);
}

void unitkeys_set_shares(const struct fairshare *fs, struct policy_unit *units, size_t n)
{
    for (size_t i = 0; i < n; i++)
        units[i].fs_norm = fairshare_norm_shares(fs, units[i].fs_entity);
}
