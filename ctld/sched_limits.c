/* Limits checked before a start (docs/07-policy.md §4, docs/policies.md): MaxRunning,
 * MaxUserRunning and MaxGroupRunning for the cluster and per partition (a het job counts as one job
 * per component); ResourcesMax (CPUs, memory, nodes and time one job may ask, its components
 * summed) and ResourcesAvailable (CPUs, memory and nodes the running jobs may hold
 * together; where it names nothing ResourcesMax's value is the cap, PBS's rule). The counts are taken from the running components once per cycle (and once
 * more when its decisions are applied, growing with each start), so that neither the
 * view nor the starts of one cycle pass a limit. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/arith.h"
#include "common/util/hashmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum limit_kind { LIM_ALL, LIM_USER, LIM_GROUP };

/* What one count is of: a kind, the partition (NULL: the cluster), a uid or gid. */
struct limit_key {
    uint32_t kind;
    uint32_t id;
    const void *partition; /* the conf_partition, by address (stable within a cycle) */
};

struct limit_counts {
    struct hashmap *counts; /* limit_key -> count (as a pointer, never 0) */
    struct conf_resources used; /* what running components hold, in all */
};

static size_t count_of(const struct limit_counts *lc, const struct limit_key *k)
{
    return (size_t)(uintptr_t)hashmap_get(lc->counts, k, sizeof(*k));
}

static int bump(struct limit_counts *lc, const struct limit_key *k)
{
    return hashmap_put(lc->counts, k, sizeof(*k), (void *)(uintptr_t)(count_of(lc, k) + 1));
}

static int resources_set(const struct conf_resources *r)
{
    return r->cpus || r->mem_mb || r->nodes || r->walltime;
}

int sched_limits_configured(const struct conf *conf)
{
    if (conf->max_running || conf->max_user_running || conf->max_group_running ||
        resources_set(&conf->res_max) || resources_set(&conf->res_available))
        return 1;
    for (size_t i = 0; i < conf->npartitions; i++) {
        const struct conf_partition *p = &conf->partitions[i];
        if (p->max_running || p->max_user_running || p->max_group_running)
            return 1;
    }
    return 0;
}

/* The six keys a component counts under. */
static void keys_of(const struct ctld *c, const Tessera__JobRecord *r, struct limit_key k[6])
{
    const void *part = conf_find_partition(c->conf, r->desc->partition);
    memset(k, 0, 6 * sizeof(*k)); /* the padding too: keys are compared as bytes */
    for (int i = 0; i < 6; i++) {
        k[i].kind = (uint32_t)(i % 3);
        k[i].id = i % 3 == LIM_USER ? r->desc->user_id : i % 3 == LIM_GROUP ? r->desc->group_id
                                                                           : 0;
        k[i].partition = i < 3 ? NULL : part;
    }
}

static int running(const Tessera__JobRecord *r);

/* What a component holds (running) or asks for (pending); walltime: its limit
 * (INT64_MAX: none). */
static void amounts_of(const Tessera__JobRecord *r, struct conf_resources *out)
{
    const Tessera__JobDesc *d = r->desc;
    if (running(r)) {
        *out = (struct conf_resources){r->alloc_cpus, r->alloc_mem_mb, r->alloc_nodes, 0};
    } else {
        uint64_t cpus = r->min_cpus ? r->min_cpus : 1, nodes = r->min_nodes ? r->min_nodes : 1;
        uint64_t mem = d->has_mem_per_cpu_mb && d->mem_per_cpu_mb
                           ? arith_mul_sat(d->mem_per_cpu_mb, cpus)
                       : d->has_mem_per_node_mb ? arith_mul_sat(d->mem_per_node_mb, nodes)
                                                : 0;
        *out = (struct conf_resources){cpus, mem, nodes, 0};
    }
    out->walltime = r->time_limit > 0 ? r->time_limit : INT64_MAX;
}

static void add_amounts(struct conf_resources *to, const struct conf_resources *a)
{
    to->cpus = arith_add_sat(to->cpus, a->cpus);
    to->mem_mb = arith_add_sat(to->mem_mb, a->mem_mb);
    to->nodes = arith_add_sat(to->nodes, a->nodes);
    if (a->walltime > to->walltime)
        to->walltime = a->walltime;
}

static int add_component(const struct ctld *c, struct limit_counts *lc,
                         const Tessera__JobRecord *r)
{
    struct limit_key k[6];
    struct conf_resources a;
    amounts_of(r, &a);
    add_amounts(&lc->used, &a);
    keys_of(c, r, k);
    int err = 0;
    for (int i = 0; i < 6 && !err; i++)
        err = bump(lc, &k[i]);
    return err;
}

static int running(const Tessera__JobRecord *r)
{
    return r->state == TESSERA__JOB_STATE__JOB_RUNNING ||
           r->state == TESSERA__JOB_STATE__JOB_SUSPENDED;
}

struct limit_counts *sched_limits_count(struct ctld *c)
{
    if (!sched_limits_configured(c->conf))
        return NULL;
    struct limit_counts *lc = calloc(1, sizeof(*lc));
    if (!lc || !(lc->counts = hashmap_create())) {
        free(lc);
        return NULL;
    }
    for (struct job *j = c->jobs.head; j; j = j->next)
        if (running(j->rec))
            add_component(c, lc, j->rec);
    return lc;
}

void sched_limits_free(struct limit_counts *lc)
{
    if (!lc)
        return;
    hashmap_destroy(lc->counts);
    free(lc);
}

static uint32_t limit_for(const struct ctld *c, const struct limit_key *k)
{
    const struct conf_partition *p = k->partition;
    if (!k->partition)
        return k->kind == LIM_ALL    ? c->conf->max_running
               : k->kind == LIM_USER ? c->conf->max_user_running
                                     : c->conf->max_group_running;
    return k->kind == LIM_ALL ? p->max_running
           : k->kind == LIM_USER ? p->max_user_running
                                 : p->max_group_running;
}

static const uint32_t reasons[3] = {JOB_REASON_MAX_RUNNING, JOB_REASON_MAX_USER_RUNNING,
                                    JOB_REASON_MAX_GROUP_RUNNING};

/* ResourcesMax (one job) and ResourcesAvailable (all running jobs; ResourcesMax where it
 * names nothing): the reason the unit may not start, 0 if it may. */
static uint32_t resources_reason(const struct ctld *c, const struct limit_counts *lc,
                                 struct job *lead)
{
    const struct conf_resources *max = &c->conf->res_max, *avail = &c->conf->res_available;
    struct conf_resources want = {0};
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        struct conf_resources a;
        amounts_of(job_component(lead, i)->rec, &a);
        add_amounts(&want, &a);
    }
    if ((max->cpus && want.cpus > max->cpus) || (max->mem_mb && want.mem_mb > max->mem_mb) ||
        (max->nodes && want.nodes > max->nodes) ||
        (max->walltime && want.walltime > max->walltime))
        return JOB_REASON_RESOURCES_MAX;
    uint64_t cap_cpus = avail->cpus ? avail->cpus : max->cpus;
    uint64_t cap_mem = avail->mem_mb ? avail->mem_mb : max->mem_mb;
    uint64_t cap_nodes = avail->nodes ? avail->nodes : max->nodes;
    if ((cap_cpus && arith_add_sat(lc->used.cpus, want.cpus) > cap_cpus) ||
        (cap_mem && arith_add_sat(lc->used.mem_mb, want.mem_mb) > cap_mem) ||
        (cap_nodes && arith_add_sat(lc->used.nodes, want.nodes) > cap_nodes))
        return JOB_REASON_RESOURCES_AVAILABLE;
    return 0;
}

int sched_limits_allow(struct ctld *c, struct limit_counts *lc, struct job *lead)
{
    if (!lc)
        return 1;
    size_t n = job_ncomponents(lead);
    /* the unit's own components add up under the keys they share */
    struct limit_key *keys = calloc(n * 6, sizeof(*keys));
    size_t *adds = calloc(n * 6, sizeof(*adds));
    size_t nkeys = 0;
    uint32_t reason = 0;
    for (size_t i = 0; keys && adds && i < n; i++) {
        struct limit_key k[6];
        keys_of(c, job_component(lead, i)->rec, k);
        for (int m = 0; m < 6; m++) {
            size_t s = 0;
            while (s < nkeys && memcmp(&keys[s], &k[m], sizeof(k[m])))
                s++;
            if (s == nkeys)
                keys[nkeys++] = k[m];
            adds[s]++;
        }
    }
    for (size_t s = 0; s < nkeys && !reason; s++) {
        uint32_t limit = limit_for(c, &keys[s]);
        if (limit && count_of(lc, &keys[s]) + adds[s] > limit)
            reason = reasons[keys[s].kind];
    }
    free(keys);
    free(adds);
    if (!reason)
        reason = resources_reason(c, lc, lead);
    if (!reason)
        return 1;
    for (size_t i = 0; i < n; i++)
        job_component(lead, i)->rec->reason = reason;
    return 0;
}

void sched_limits_started(struct ctld *c, struct limit_counts *lc, struct job *lead)
{
    for (size_t i = 0; lc && i < job_ncomponents(lead); i++)
        add_component(c, lc, job_component(lead, i)->rec);
}
