/* The running-job limits (common/sched/limits.h): counts and totals of what runs, and the
 * decision whether one more unit may start. */
#include "common/sched/limits.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/arith.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdlib.h>
#include <string.h>

enum limit_kind { LIM_ALL, LIM_USER, LIM_GROUP };

/* What one count is of: a kind, the partition (NULL: the cluster), a uid or gid. */
struct limit_key {
    uint32_t kind;
    uint32_t id;
    const void *partition; /* the conf_partition, by address (stable while conf lives) */
};

/* Each component counts under three kinds, for the cluster and for its partition. */
#define KEYS_PER_COMPONENT 6

struct limit_counts {
    const struct conf *conf;
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

int limits_configured(const struct conf *conf)
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

struct limit_counts *limits_create(const struct conf *conf)
{
    if (!limits_configured(conf))
        return NULL;
    struct limit_counts *lc = calloc(1, sizeof(*lc));
    if (!lc || !(lc->counts = hashmap_create())) {
        free(lc);
        return NULL;
    }
    lc->conf = conf;
    return lc;
}

void limits_destroy(struct limit_counts *lc)
{
    if (!lc)
        return;
    hashmap_destroy(lc->counts);
    free(lc);
}

static int running(const Tessera__JobRecord *r)
{
    return r->state == TESSERA__JOB_STATE__JOB_RUNNING ||
           r->state == TESSERA__JOB_STATE__JOB_SUSPENDED;
}

/* The keys a component counts under, and how many: the cluster's, and its partition's
 * when conf has it (a component is never counted twice under one key). */
static int keys_of(const struct conf *conf, const Tessera__JobRecord *r,
                   struct limit_key k[KEYS_PER_COMPONENT])
{
    const char *name = r->desc->partition ? r->desc->partition : "";
    const void *part = conf_find_partition(conf, name);
    int n = part ? KEYS_PER_COMPONENT : 3;
    memset(k, 0, KEYS_PER_COMPONENT * sizeof(*k)); /* the padding too: compared as bytes */
    for (int i = 0; i < n; i++) {
        k[i].kind = (uint32_t)(i % 3);
        k[i].id = i % 3 == LIM_USER ? r->desc->user_id : i % 3 == LIM_GROUP ? r->desc->group_id
                                                                           : 0;
        k[i].partition = i < 3 ? NULL : part;
    }
    return n;
}

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

int limits_add_running(struct limit_counts *lc, const Tessera__JobRecord *r)
{
    if (!lc || !running(r))
        return TS_OK;
    struct limit_key k[KEYS_PER_COMPONENT];
    struct conf_resources a;
    amounts_of(r, &a);
    add_amounts(&lc->used, &a);
    int nk = keys_of(lc->conf, r, k), err = 0;
    for (int i = 0; i < nk && !err; i++)
        err = bump(lc, &k[i]);
    return err ? TS_ENOMEM : TS_OK;
}

static uint32_t limit_for(const struct conf *conf, const struct limit_key *k)
{
    const struct conf_partition *p = k->partition;
    if (!p)
        return k->kind == LIM_ALL    ? conf->max_running
               : k->kind == LIM_USER ? conf->max_user_running
                                     : conf->max_group_running;
    return k->kind == LIM_ALL    ? p->max_running
           : k->kind == LIM_USER ? p->max_user_running
                                 : p->max_group_running;
}

static const uint32_t count_reasons[3] = {JOB_REASON_MAX_RUNNING, JOB_REASON_MAX_USER_RUNNING,
                                          JOB_REASON_MAX_GROUP_RUNNING};

/* MaxRunning and friends: the unit's own components add up under the keys they share. */
static uint32_t count_reason(const struct limit_counts *lc,
                             const Tessera__JobRecord *const *components, size_t n)
{
    struct limit_key *keys = calloc(n * KEYS_PER_COMPONENT, sizeof(*keys));
    size_t *adds = calloc(n * KEYS_PER_COMPONENT, sizeof(*adds));
    size_t nkeys = 0;
    uint32_t reason = 0;
    for (size_t i = 0; keys && adds && i < n; i++) {
        struct limit_key k[KEYS_PER_COMPONENT];
        int nk = keys_of(lc->conf, components[i], k);
        for (int m = 0; m < nk; m++) {
            size_t s = 0;
            while (s < nkeys && memcmp(&keys[s], &k[m], sizeof(k[m])))
                s++;
            if (s == nkeys)
                keys[nkeys++] = k[m];
            adds[s]++;
        }
    }
    for (size_t s = 0; s < nkeys && !reason; s++) {
        uint32_t limit = limit_for(lc->conf, &keys[s]);
        if (limit && count_of(lc, &keys[s]) + adds[s] > limit)
            reason = count_reasons[keys[s].kind];
    }
    free(keys);
    free(adds);
    return reason;
}

/* ResourcesMax (one unit) and ResourcesAvailable (all running jobs; ResourcesMax where it
 * names nothing). */
static uint32_t resources_reason(const struct limit_counts *lc,
                                 const Tessera__JobRecord *const *components, size_t n)
{
    const struct conf_resources *max = &lc->conf->res_max, *avail = &lc->conf->res_available;
    struct conf_resources want = {0};
    for (size_t i = 0; i < n; i++) {
        struct conf_resources a;
        amounts_of(components[i], &a);
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

uint32_t limits_reason(const struct limit_counts *lc, const Tessera__JobRecord *const *components,
                       size_t n)
{
    if (!lc)
        return 0;
    uint32_t reason = count_reason(lc, components, n);
    return reason ? reason : resources_reason(lc, components, n);
}
