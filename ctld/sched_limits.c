/* Running-job limits (SPEC 2.2, docs/policies.md): MaxRunning, MaxUserRunning and
 * MaxGroupRunning for the cluster and per partition. A het job counts as one job per
 * component. The counts are taken from the running components once per cycle (and once
 * more when its decisions are applied, growing with each start), so that neither the
 * view nor the starts of one cycle pass a limit. */
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/conf.h"
#include "common/hashmap.h"
#include "common/jobstate.h"

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
};

static size_t count_of(const struct limit_counts *lc, const struct limit_key *k)
{
    return (size_t)(uintptr_t)hashmap_get(lc->counts, k, sizeof(*k));
}

static int bump(struct limit_counts *lc, const struct limit_key *k)
{
    return hashmap_put(lc->counts, k, sizeof(*k), (void *)(uintptr_t)(count_of(lc, k) + 1));
}

int sched_limits_configured(const struct conf *conf)
{
    if (conf->max_running || conf->max_user_running || conf->max_group_running)
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

static int add_component(const struct ctld *c, struct limit_counts *lc,
                         const Tessera__JobRecord *r)
{
    struct limit_key k[6];
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
