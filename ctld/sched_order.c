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
#include "common/sched/policy.h"
#include "common/sched/priority.h"
#include "common/sched/unitkeys.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/plugin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const Tessera__JobRecord **sched_unit_records(struct job *lead, size_t *n)
{
    *n = job_ncomponents(lead);
    const Tessera__JobRecord **recs = malloc((*n + 1) * sizeof(*recs));
    for (size_t i = 0; recs && i < *n; i++)
        recs[i] = job_component(lead, i)->rec;
    return recs;
}

/* The unit's keys (common/sched/unitkeys.c) and the entity its usage is charged to. */
static int fill_keys(struct ctld *c, struct job *lead, struct policy_unit *u, time_t now,
                     int fair)
{
    size_t n;
    const Tessera__JobRecord **recs = sched_unit_records(lead, &n);
    if (!recs)
        return TS_ENOMEM;
    unitkeys_fill(recs, n, c->conf, (int64_t)now, u);
    free(recs);
    u->owner = lead;
    u->fs_entity = fair ? fairshare_usage_entity(c, lead->rec, now) : -1;
    return TS_OK;
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
    int err = TS_OK;
    for (size_t i = 0; i < n && !err; i++)
        err = fill_keys(c, leaders[i], &units[i], now, fair);
    if (fair && !err)
        unitkeys_set_shares(view.fairshare, units, n);
    if (!err && sched_priority_order(c, &view, units, n, greedy) != TS_OK)
        memset(greedy, 0, n);
    for (size_t i = 0; !err && i < n; i++)
        leaders[i] = units[i].owner;
    free(units);
}
