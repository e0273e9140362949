/* The order the scheduler sees pending units in (docs/policies.md): each unit's keys
 * (priority, queue, requested CPU time and memory, limit, wait, fair-share entity) handed
 * to the priority plugin (PriorityType=, plugins/priority/) with the policy period in
 * force (prime or non-prime time by HolidaysFile=, always prime without one). priority/pbs
 * orders by the policy file and makes units greedy with strict_fifo off; without a policy
 * file, and with priority/basic, the highest priority first, then the lower id. */
#include "ctld/sched.h"
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
#include "common/util/log.h"
#include "common/util/plugin.h"

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

/* ------------------------------------------------------------------------------------ */
/* the priority plugin */

struct sched_priority {
    struct plugin *plugin;
    const struct priority_ops *ops;
    void *state;
};

int sched_order_init(struct ctld *c, char *errbuf, size_t errlen)
{
    struct sched_priority *p = calloc(1, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    c->priority = p;
    int err = plugin_load(c->conf->plugin_dir, c->conf->priority_type, PRIORITY_PLUGIN_TYPE,
                          PLUGIN_ABI_VERSION, NULL, &p->plugin, errbuf, errlen);
    if (err)
        return err;
    p->ops = plugin_ops(p->plugin);
    if ((err = p->ops->create(NULL, &p->state, errbuf, errlen)))
        return err;
    if (c->conf->policy_file && strcmp(c->conf->priority_type, "priority/pbs"))
        log_warn("PolicyFile= is read, but %s does not apply it (priority/pbs does)",
                 c->conf->priority_type);
    return TS_OK;
}

void sched_order_fini(struct ctld *c)
{
    struct sched_priority *p = c->priority;
    if (!p)
        return;
    if (p->ops && p->state)
        p->ops->destroy(p->state);
    plugin_unload(p->plugin);
    free(p);
    c->priority = NULL;
}

int sched_priority_order(struct ctld *c, const struct priority_view *view,
                         struct policy_unit *units, size_t n, unsigned char *greedy)
{
    struct sched_priority *p = c->priority;
    if (!p || !p->ops) { /* not started yet: the default order */
        memset(greedy, 0, n);
        priority_default_order(units, n);
        return TS_OK;
    }
    return p->ops->order(p->state, view, units, n, greedy);
}

/* ------------------------------------------------------------------------------------ */
/* the keys */

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
        .policy = sched_policy_now(c, now),
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
