/* The simulator's policy file and limits, through the controller's own pure core: each
 * simulated job as the job record the controller would hold for it, its order keys
 * (common/sched/unitkeys.c), its fair-share charges (common/sched/usage.c) and the
 * running-job limits (common/sched/limits.c, in sim.c). What is the simulator's own: the
 * trace's users and groups as fair-share entities, charging at each simulated event, and
 * one period's values (holidays and dedicated time are not simulated). */
#include "contrib/sim/sim_policy.h"

#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/sched/unitkeys.h"
#include "common/sched/usage.h"
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

void sim_job_record(const struct sim_job *jobs, size_t j, Tessera__JobRecord *r,
                    Tessera__JobDesc *d)
{
    const struct sim_job *job = &jobs[j];
    tessera__job_desc__init(d);
    d->has_user_id = d->has_group_id = 1;
    d->user_id = (uint32_t)job->swf.user;
    d->group_id = (uint32_t)job->swf.group;
    tessera__job_record__init(r);
    r->desc = d;
    r->job_id = job->swf.id;
    r->het_size = 1;
    r->priority = UINT32_MAX - (uint32_t)j; /* falling with arrival */
    r->submit_time = r->eligible_time = job->swf.submit;
    r->time_limit = job->swf.estimate;
    r->min_nodes = 1;
    r->ntasks = r->min_cpus = job->swf.procs;
    r->cpus_per_task = 1;
    r->state = job->start >= 0 ? TESSERA__JOB_STATE__JOB_RUNNING
                               : TESSERA__JOB_STATE__JOB_PENDING;
    if (job->start >= 0) {
        r->start_time = job->start;
        r->alloc_cpus = job->swf.procs;
        r->alloc_nodes = job->nnodes;
    }
}

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

static void charge(struct sim_policy_state *p, const struct sim_job *jobs, size_t j,
                   int64_t charged_to, int64_t now)
{
    Tessera__JobRecord r;
    Tessera__JobDesc d;
    sim_job_record(jobs, j, &r, &d);
    double used = usage_cpu_seconds(&r, charged_to, now);
    if (used > 0)
        fairshare_charge(p->fs, p->entity[j], used);
}

void sim_policy_advance(struct sim_policy_state *p, const struct sim_job *jobs,
                        const size_t *running, size_t n, int64_t now)
{
    if (!p->fs)
        return;
    /* at every simulated event: the controller's charging steps, one second apart at
     * the least */
    int64_t from = usage_step(p->fs, &p->updated, now, 1, p->set->half_life);
    for (size_t i = 0; from >= 0 && i < n; i++)
        charge(p, jobs, running[i], from, now);
}

void sim_policy_job_ended(struct sim_policy_state *p, const struct sim_job *jobs, size_t j,
                          int64_t now)
{
    if (p->fs)
        charge(p, jobs, j, p->updated, now);
}

int sim_policy_order(struct sim_policy_state *p, const struct sim_job *jobs, size_t *waiting,
                     size_t n, int64_t now, unsigned char *greedy)
{
    memset(greedy, 0, n);
    for (size_t i = 0; i < n; i++) {
        size_t j = waiting[i];
        Tessera__JobRecord r;
        Tessera__JobDesc d;
        sim_job_record(jobs, j, &r, &d);
        const Tessera__JobRecord *one = &r;
        unitkeys_fill(&one, 1, NULL, now, &p->units[i]);
        p->units[i].fs_entity = p->fair ? p->entity[j] : -1;
        p->units[i].owner = (void *)(uintptr_t)j; /* the job's index rides along */
    }
    if (p->fair)
        unitkeys_set_shares(p->fs, p->units, n);
    struct priority_view view = {.now = now, .policy = p->set,
                                 .fairshare = p->fair ? p->fs : NULL};
    int err = p->priority->order(p->priority_state, &view, p->units, n, greedy);
    for (size_t i = 0; i < n; i++)
        waiting[i] = (size_t)(uintptr_t)p->units[i].owner;
    if (err)
        memset(greedy, 0, n);
    return err;
}
