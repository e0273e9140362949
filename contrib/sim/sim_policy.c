/* The simulator's policy file: order and greediness by the priority plugin, and fair
 * share, as the controller does it (ctld/sched_order.c, ctld/fairshare_usage.c) but with
 * the trace's users and groups and simulated time. Holidays and dedicated time are not simulated: one period's values. */
#include "contrib/sim/sim_policy.h"

#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_policy_state {
    const struct policy_set *set;
    const struct priority_ops *priority;
    void *priority_state;
    struct fairshare *fs;
    int *entity;                 /* per job: its tree node */
    struct policy_unit *units;   /* scratch, one per job at most */
    int64_t updated;             /* usage charged up to here */
    int fair;                    /* the order reads the tree */
};

static int entity_of(struct fairshare *fs, int32_t who)
{
    if (who < 0)
        return FAIRSHARE_UNKNOWN;
    int node = fairshare_find_id(fs, (uint32_t)who);
    if (node >= 0)
        return node;
    char name[16];
    snprintf(name, sizeof(name), "%d", who);
    node = fairshare_entity(fs, name);
    return node >= 0 ? node : FAIRSHARE_UNKNOWN;
}

int sim_policy_create(const struct policy_set *set, const struct priority_ops *priority,
                      struct fairshare *fs, const struct sim_job *jobs, size_t njobs,
                      struct sim_policy_state **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    if (!priority) {
        snprintf(errbuf, errlen, "a policy needs a priority plugin");
        return TS_EINVAL;
    }
    struct sim_policy_state *p = calloc(1, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    int err = priority->create(NULL, &p->priority_state, errbuf, errlen);
    if (err) {
        free(p);
        return err;
    }
    p->priority = priority;
    p->set = set;
    p->fs = fs;
    p->fair = fs && policy_uses_fair_share(set);
    p->entity = calloc(njobs + 1, sizeof(*p->entity));
    p->units = calloc(njobs + 1, sizeof(*p->units));
    if (!p->entity || !p->units) {
        sim_policy_destroy(p);
        return TS_ENOMEM;
    }
    for (size_t j = 0; fs && j < njobs; j++) {
        int32_t who = set->fairshare_entity == POLICY_ENTITY_GROUP ? jobs[j].swf.group
                                                                   : jobs[j].swf.user;
        p->entity[j] = entity_of(fs, who);
    }
    *out = p;
    return TS_OK;
}

void sim_policy_destroy(struct sim_policy_state *p)
{
    if (!p)
        return;
    if (p->priority)
        p->priority->destroy(p->priority_state);
    free(p->entity);
    free(p->units);
    free(p);
}

static void charge(struct sim_policy_state *p, const struct sim_job *jobs, size_t j, int64_t now)
{
    int64_t from = jobs[j].start > p->updated ? jobs[j].start : p->updated;
    if (p->fs && jobs[j].start >= 0 && now > from)
        fairshare_charge(p->fs, p->entity[j], (double)jobs[j].swf.procs * (double)(now - from));
}

void sim_policy_advance(struct sim_policy_state *p, const struct sim_job *jobs,
                        const size_t *running, size_t n, int64_t now)
{
    if (!p->fs || now <= p->updated)
        return;
    fairshare_decay(p->fs, (double)(now - p->updated), (double)p->set->half_life);
    for (size_t i = 0; i < n; i++)
        charge(p, jobs, running[i], now);
    p->updated = now;
}

void sim_policy_job_ended(struct sim_policy_state *p, const struct sim_job *jobs, size_t j,
                          int64_t now)
{
    charge(p, jobs, j, now);
}

int sim_policy_order(struct sim_policy_state *p, const struct sim_job *jobs, size_t *waiting,
                     size_t n, int64_t now, unsigned char *greedy)
{
    memset(greedy, 0, n);
    for (size_t i = 0; i < n; i++) {
        size_t j = waiting[i];
        const struct swf_job *w = &jobs[j].swf;
        int64_t est = w->estimate > 0 ? w->estimate : INT64_MAX;
        p->units[i] = (struct policy_unit){
            .id = w->id, .priority = UINT32_MAX - (uint32_t)j, .partition = "",
            .cput = est > INT64_MAX / w->procs ? INT64_MAX : est * (int64_t)w->procs,
            .walltime = est, .waited = now > w->submit ? now - w->submit : 0,
            .fs_entity = p->fair ? p->entity[j] : -1,
            .fs_norm = p->fair ? fairshare_norm_shares(p->fs, p->entity[j]) : 0,
            .owner = (void *)(uintptr_t)j, /* the job's index rides along */
        };
    }
    struct priority_view view = {.now = now, .policy = p->set,
                                 .fairshare = p->fair ? p->fs : NULL};
    int err = p->priority->order(p->priority_state, &view, p->units, n, greedy);
    for (size_t i = 0; i < n; i++)
        waiting[i] = (size_t)(uintptr_t)p->units[i].owner;
    if (err)
        memset(greedy, 0, n);
    return err;
}
