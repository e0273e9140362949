/* The simulator's machine, jobs and event loop (contrib/sim/sim.h). */
#include "contrib/sim/sim.h"
#include "contrib/sim/sim_policy.h"

#include "common/sched/limits.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every node's memory: more than any job asks for (simulated jobs ask for none). */
#define NODE_MEM_MB (UINT64_C(1) << 30)
/* "n" and any size_t, and the NUL */
#define NODE_NAME_LEN 24

/* A running job's end, in the heap of ends. */
struct end_event {
    int64_t time;
    size_t job;
};

struct sim {
    const struct select_ops *select;
    const struct sched_ops *sched;
    void *plugin_state;
    int have_state;
    int ran;
    /* the machine */
    struct select_node *nodes;    /* as running jobs hold them */
    struct select_node *scratch;  /* a cycle's copy, which the plugin may change */
    char *names;                  /* node names, NODE_NAME_LEN apart */
    uint32_t *eligible;           /* 0..nnodes-1: every job may use every node */
    size_t nnodes;
    uint64_t capacity;            /* CPUs in all */
    /* the jobs, in arrival order */
    struct sim_job *jobs;
    struct select_request *reqs;
    struct select_node_alloc **placed; /* where each running job runs */
    size_t *nplaced;
    size_t njobs, dropped, next_submit;
    /* the waiting jobs in arrival order; the running ones as a min-heap of their ends */
    size_t *waiting;
    size_t nwaiting;
    /* a cycle's units: the waiting jobs the limits let start, in the policy's order */
    size_t *shown;
    size_t nshown;
    const struct conf *limits;       /* running-job limits; NULL: none */
    struct end_event *ends;
    size_t nends;
    /* a cycle's view, grown with the queue */
    struct sched_unit *units;
    struct sched_decision *decisions;
    struct select_alloc *allocs;
    struct select_node_alloc *slots; /* nnodes per unit: select's room for a placement */
    size_t cap_units;
    struct sched_hold *holds;        /* one per running job */
    uint64_t cycles, units_shown;
    /* a policy file's order and fair share (sim_policy.c); NULL: arrival order */
    struct sim_policy_state *policy;
    unsigned char *greedy;           /* per waiting position, from the policy */
    size_t *running;                 /* scratch: the running jobs' indexes */
    char *err;
    size_t errlen;
};

/* The one partition every job runs in. */
static const uint32_t partition0 = 0;

/* ------------------------------------------------------------------------------------ */
/* the heap of ends */

static int end_before(const struct end_event *a, const struct end_event *b)
{
    return a->time < b->time || (a->time == b->time && a->job < b->job);
}

static void swap_ends(struct end_event *a, struct end_event *b)
{
    struct end_event t = *a;
    *a = *b;
    *b = t;
}

/* Room for every running job was made at creation: each holds at least one CPU. */
static void heap_push(struct sim *s, int64_t time, size_t job)
{
    size_t i = s->nends++;
    s->ends[i] = (struct end_event){.time = time, .job = job};
    while (i && end_before(&s->ends[i], &s->ends[(i - 1) / 2])) {
        swap_ends(&s->ends[i], &s->ends[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static size_t heap_pop(struct sim *s)
{
    size_t job = s->ends[0].job;
    s->ends[0] = s->ends[--s->nends];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nends && end_before(&s->ends[l], &s->ends[m]))
            m = l;
        if (r < s->nends && end_before(&s->ends[r], &s->ends[m]))
            m = r;
        if (m == i)
            break;
        swap_ends(&s->ends[i], &s->ends[m]);
        i = m;
    }
    return job;
}

/* ------------------------------------------------------------------------------------ */
/* creation */

static int machine_create(struct sim *s, const struct sim_config *cfg)
{
    s->nnodes = cfg->nodes;
    s->capacity = (uint64_t)cfg->nodes * cfg->cpus_per_node;
    s->nodes = calloc(s->nnodes, sizeof(*s->nodes));
    s->scratch = calloc(s->nnodes, sizeof(*s->scratch));
    s->names = calloc(s->nnodes, NODE_NAME_LEN);
    s->eligible = calloc(s->nnodes, sizeof(*s->eligible));
    if (!s->nodes || !s->scratch || !s->names || !s->eligible)
        return TS_ENOMEM;
    for (size_t i = 0; i < s->nnodes; i++) {
        char *name = s->names + i * NODE_NAME_LEN;
        snprintf(name, NODE_NAME_LEN, "n%zu", i + 1);
        s->nodes[i] = (struct select_node){.name = name, .cpus = cfg->cpus_per_node,
                                           .mem_mb = NODE_MEM_MB, .features = "",
                                           .available = 1};
        s->eligible[i] = (uint32_t)i;
    }
    return TS_OK;
}

/* A job and its place in the file, so that equal keys keep the file's order. */
struct keyed {
    struct swf_job job;
    size_t order;
};

static int arrival_cmp(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;
    if (a->job.submit != b->job.submit)
        return a->job.submit < b->job.submit ? -1 : 1;
    if (a->job.id != b->job.id)
        return a->job.id < b->job.id ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The jobs that fit the machine, in arrival order. */
static int jobs_sorted(struct sim *s, const struct swf_job *jobs, size_t njobs)
{
    struct keyed *k = malloc((njobs ? njobs : 1) * sizeof(*k));
    s->jobs = calloc(njobs ? njobs : 1, sizeof(*s->jobs));
    if (!k || !s->jobs) {
        free(k);
        return TS_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < njobs; i++) {
        if (jobs[i].procs > s->capacity)
            s->dropped++;
        else
            k[n++] = (struct keyed){.job = jobs[i], .order = i};
    }
    qsort(k, n, sizeof(*k), arrival_cmp);
    for (size_t i = 0; i < n; i++)
        s->jobs[i] = (struct sim_job){.swf = k[i].job, .start = -1, .end = -1};
    s->njobs = n;
    free(k);
    return TS_OK;
}

static int jobs_create(struct sim *s, const struct swf_job *jobs, size_t njobs)
{
    if (jobs_sorted(s, jobs, njobs) != TS_OK)
        return TS_ENOMEM;
    size_t n = s->njobs ? s->njobs : 1;
    /* no more jobs run at once than there are CPUs, each holding one at least */
    size_t running = s->capacity < n ? (size_t)s->capacity : n;
    s->reqs = calloc(n, sizeof(*s->reqs));
    s->placed = calloc(n, sizeof(*s->placed));
    s->nplaced = calloc(n, sizeof(*s->nplaced));
    s->waiting = calloc(n, sizeof(*s->waiting));
    s->shown = calloc(n, sizeof(*s->shown));
    s->ends = calloc(running, sizeof(*s->ends));
    s->holds = calloc(running, sizeof(*s->holds));
    s->greedy = calloc(n, 1);
    s->running = calloc(running, sizeof(*s->running));
    if (!s->reqs || !s->placed || !s->nplaced || !s->waiting || !s->shown || !s->ends ||
        !s->holds || !s->greedy || !s->running)
        return TS_ENOMEM;
    for (size_t i = 0; i < s->njobs; i++)
        s->reqs[i] = (struct select_request){.eligible = s->eligible, .neligible = s->nnodes,
                                             .min_nodes = 1, .ntasks = s->jobs[i].swf.procs,
                                             .cpus_per_task = 1};
    return TS_OK;
}

static int check_config(const struct sim_config *cfg, size_t njobs, char *errbuf,
                        size_t errlen)
{
    if (!cfg->nodes || !cfg->cpus_per_node || !cfg->select || !cfg->sched) {
        snprintf(errbuf, errlen, "a simulation needs nodes, CPUs per node and both plugins");
        return TS_EINVAL;
    }
    /* priorities fall with arrival: one distinct value per job */
    if (njobs >= UINT32_MAX) {
        snprintf(errbuf, errlen, "too many jobs (%zu)", njobs);
        return TS_EINVAL;
    }
    return TS_OK;
}

int sim_create(const struct sim_config *cfg, const struct swf_job *jobs, size_t njobs,
               struct sim **out, char *errbuf, size_t errlen)
{
    char dummy[1];
    if (!errbuf) {
        errbuf = dummy;
        errlen = sizeof(dummy);
    }
    errbuf[0] = '\0';
    *out = NULL;
    int err = check_config(cfg, njobs, errbuf, errlen);
    if (err)
        return err;
    struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return TS_ENOMEM;
    s->select = cfg->select;
    s->sched = cfg->sched;
    s->limits = cfg->limits;
    err = TS_ENOMEM;
    if (machine_create(s, cfg) != TS_OK || jobs_create(s, jobs, njobs) != TS_OK)
        goto error;
    if (cfg->policy && (err = sim_policy_create(cfg->policy, cfg->priority, cfg->fairshare,
                                                s->jobs, s->njobs, &s->policy, errbuf,
                                                errlen)))
        goto error;
    err = s->sched->create(cfg->sched_params, &s->plugin_state, errbuf, errlen);
    if (err)
        goto error;
    s->have_state = 1;
    *out = s;
    return TS_OK;
error:
    if (err == TS_ENOMEM && !errbuf[0])
        snprintf(errbuf, errlen, "out of memory");
    sim_destroy(s);
    return err;
}

void sim_destroy(struct sim *s)
{
    if (!s)
        return;
    if (s->have_state)
        s->sched->destroy(s->plugin_state);
    for (size_t i = 0; s->placed && i < s->njobs; i++)
        free(s->placed[i]);
    free(s->nodes);
    free(s->scratch);
    free(s->names);
    free(s->eligible);
    free(s->jobs);
    free(s->reqs);
    free(s->placed);
    free(s->nplaced);
    free(s->waiting);
    free(s->shown);
    free(s->greedy);
    free(s->running);
    sim_policy_destroy(s->policy);
    free(s->ends);
    free(s->units);
    free(s->decisions);
    free(s->allocs);
    free(s->slots);
    free(s->holds);
    free(s);
}

/* ------------------------------------------------------------------------------------ */
/* starts and ends */

static int refuse(struct sim *s, int64_t now, size_t j, const char *what)
{
    snprintf(s->err, s->errlen, "t=%lld: the scheduler started job %u (%u processors) %s",
             (long long)now, s->jobs[j].swf.id, s->jobs[j].swf.procs, what);
    return TS_EINVAL;
}

/* What the controller re-checks before a start: the placement is the job's size and fits
 * the nodes as running jobs hold them. */
static int check_placement(struct sim *s, size_t j, const struct select_alloc *a, int64_t now)
{
    uint64_t cpus = 0;
    for (size_t k = 0; k < a->nnodes; k++) {
        const struct select_node_alloc *na = &a->nodes[k];
        if (na->node >= s->nnodes || (k && na->node <= a->nodes[k - 1].node))
            return refuse(s, now, j, "on a node list out of range or order");
        const struct select_node *n = &s->nodes[na->node];
        if (na->cpus > n->cpus - n->alloc_cpus)
            return refuse(s, now, j, "on a node beyond its CPUs");
        cpus += na->cpus;
    }
    if (cpus != s->jobs[j].swf.procs)
        return refuse(s, now, j, "with another number of CPUs");
    return TS_OK;
}

static int start_job(struct sim *s, size_t j, const struct select_alloc *a, int64_t now)
{
    int err = check_placement(s, j, a, now);
    if (err)
        return err;
    struct select_node_alloc *copy = malloc(a->nnodes * sizeof(*copy));
    if (!copy)
        return TS_ENOMEM;
    memcpy(copy, a->nodes, a->nnodes * sizeof(*copy));
    for (size_t k = 0; k < a->nnodes; k++) {
        s->nodes[copy[k].node].alloc_cpus += copy[k].cpus;
        s->nodes[copy[k].node].jobs++;
    }
    s->placed[j] = copy;
    s->nplaced[j] = a->nnodes;
    s->jobs[j].start = now;
    s->jobs[j].end = now + s->jobs[j].swf.run;
    s->jobs[j].nnodes = (uint32_t)a->nnodes;
    heap_push(s, s->jobs[j].end, j);
    return TS_OK;
}

static void end_job(struct sim *s, size_t j)
{
    if (s->policy)
        sim_policy_job_ended(s->policy, s->jobs, j, s->jobs[j].end);
    for (size_t k = 0; k < s->nplaced[j]; k++) {
        s->nodes[s->placed[j][k].node].alloc_cpus -= s->placed[j][k].cpus;
        s->nodes[s->placed[j][k].node].jobs--;
    }
    free(s->placed[j]);
    s->placed[j] = NULL;
    s->nplaced[j] = 0;
}

/* ------------------------------------------------------------------------------------ */
/* a scheduling cycle */

static int units_fit(struct sim *s, size_t n)
{
    if (n <= s->cap_units)
        return TS_OK;
    size_t cap = s->cap_units ? s->cap_units : 64;
    while (cap < n)
        cap *= 2;
    struct sched_unit *u = realloc(s->units, cap * sizeof(*u));
    if (u)
        s->units = u;
    struct sched_decision *d = realloc(s->decisions, cap * sizeof(*d));
    if (d)
        s->decisions = d;
    struct select_alloc *a = realloc(s->allocs, cap * sizeof(*a));
    if (a)
        s->allocs = a;
    struct select_node_alloc *sl = realloc(s->slots, cap * s->nnodes * sizeof(*sl));
    if (sl)
        s->slots = sl;
    if (!u || !d || !a || !sl)
        return TS_ENOMEM;
    s->cap_units = cap;
    return TS_OK;
}

/* The shown jobs as units: arrival order is priority order. */
static void view_units(struct sim *s)
{
    for (size_t i = 0; i < s->nshown; i++) {
        size_t j = s->shown[i];
        s->units[i] = (struct sched_unit){.id = s->jobs[j].swf.id,
                                          .priority = (uint32_t)(s->njobs - j),
                                          .ncomponents = 1, .reqs = &s->reqs[j],
                                          .partitions = &partition0,
                                          .time_limits = &s->jobs[j].swf.estimate,
                                          .greedy = s->greedy[i]};
        s->allocs[i] = (struct select_alloc){.nodes = s->slots + i * s->nnodes};
        s->decisions[i] = (struct sched_decision){.allocs = &s->allocs[i]};
    }
}

/* The running jobs as the scheduler believes them: held until start + estimate. */
static void view_holds(struct sim *s)
{
    for (size_t k = 0; k < s->nends; k++) {
        const size_t j = s->ends[k].job;
        s->holds[k] = (struct sched_hold){.end = s->jobs[j].start + s->jobs[j].swf.estimate,
                                          .nodes = s->placed[j], .nnodes = s->nplaced[j]};
    }
}

/* A pending or running job's record under the limits (common/sched/limits.c). */
static uint32_t limit_reason(struct sim *s, struct limit_counts *lc, size_t j)
{
    Tessera__JobRecord r;
    Tessera__JobDesc d;
    sim_job_record(s->jobs, j, &r, &d);
    const Tessera__JobRecord *one = &r;
    return limits_reason(lc, &one, 1);
}

static int limit_count(struct sim *s, struct limit_counts *lc, size_t j)
{
    Tessera__JobRecord r;
    Tessera__JobDesc d;
    sim_job_record(s->jobs, j, &r, &d);
    return limits_add_running(lc, &r);
}

/* The counts of what runs now (NULL without limits), and the waiting jobs they let
 * start as the cycle's units, in arrival order: as the controller leaves a unit a limit
 * holds back out of its view. */
static int show_waiting(struct sim *s, struct limit_counts **lc)
{
    *lc = s->limits ? limits_create(s->limits) : NULL;
    int err = TS_OK;
    for (size_t k = 0; *lc && !err && k < s->nends; k++)
        err = limit_count(s, *lc, s->ends[k].job);
    s->nshown = 0;
    for (size_t i = 0; !err && i < s->nwaiting; i++)
        if (!limit_reason(s, *lc, s->waiting[i]))
            s->shown[s->nshown++] = s->waiting[i];
    return err;
}

/* Starts what the cycle decided, each checked again against the limits as they grow
 * with the cycle's starts (the controller's apply); the rest keeps waiting, in arrival
 * order. */
static int apply(struct sim *s, struct limit_counts *lc, int64_t now, size_t *started)
{
    for (size_t i = 0; i < s->nshown; i++) {
        size_t j = s->shown[i];
        if (s->decisions[i].verdict != SCHED_START || limit_reason(s, lc, j))
            continue;
        int err = start_job(s, j, &s->allocs[i], now);
        if (!err && lc)
            err = limit_count(s, lc, j);
        if (err)
            return err;
        (*started)++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < s->nwaiting; i++)
        if (s->jobs[s->waiting[i]].start < 0)
            s->waiting[kept++] = s->waiting[i];
    s->nwaiting = kept;
    return TS_OK;
}

static const char *verdict_name(enum sched_verdict v)
{
    switch (v) {
    case SCHED_START: return "start";
    case SCHED_RESOURCES: return "resources";
    case SCHED_PRIORITY: return "priority";
    default: return "never";
    }
}

/* Nothing runs and nothing started: without an end to wait for, the queue would wait
 * forever, and every job fits the empty machine. The scheduler is wrong. */
static int stalled(struct sim *s, int64_t now)
{
    const struct sim_job *head = &s->jobs[s->shown[0]];
    snprintf(s->err, s->errlen,
             "t=%lld: the machine is empty and %zu jobs wait, but the scheduler started "
             "none (first waiting: job %u, %u processors, verdict %s): a scheduler bug",
             (long long)now, s->nwaiting, head->swf.id, head->swf.procs,
             verdict_name(s->decisions[0].verdict));
    return TS_EINVAL;
}

static int out_of_memory(struct sim *s)
{
    snprintf(s->err, s->errlen, "out of memory");
    return TS_ENOMEM;
}

static int cycle(struct sim *s, int64_t now)
{
    struct limit_counts *lc = NULL;
    if (units_fit(s, s->nwaiting) != TS_OK || show_waiting(s, &lc) != TS_OK) {
        limits_destroy(lc);
        return out_of_memory(s);
    }
    if (s->policy) {
        for (size_t k = 0; k < s->nends; k++)
            s->running[k] = s->ends[k].job;
        sim_policy_advance(s->policy, s->jobs, s->running, s->nends, now);
        if (sim_policy_order(s->policy, s->jobs, s->shown, s->nshown, now, s->greedy)) {
            limits_destroy(lc);
            return out_of_memory(s);
        }
    }
    view_units(s);
    view_holds(s);
    memcpy(s->scratch, s->nodes, s->nnodes * sizeof(*s->nodes));
    struct sched_view view = {.kind = SCHED_BACKFILL, .now = now, .nodes = s->scratch,
                              .nnodes = s->nnodes, .npartitions = 1, .holds = s->holds,
                              .nholds = s->nends, .units = s->units, .nunits = s->nshown,
                              .select = s->select};
    while (s->sched->schedule(s->plugin_state, &view, s->decisions) == SCHED_MORE)
        ; /* it never needs to yield here, but may */
    s->cycles++;
    s->units_shown += s->nshown;
    size_t started = 0;
    int err = apply(s, lc, now, &started);
    limits_destroy(lc);
    if (!err && !started && !s->nends && s->nshown)
        err = stalled(s, now);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* the event loop */

static int64_t next_event(const struct sim *s)
{
    int64_t t = INT64_MAX;
    if (s->next_submit < s->njobs)
        t = s->jobs[s->next_submit].swf.submit;
    if (s->nends && s->ends[0].time < t)
        t = s->ends[0].time;
    return t;
}

int sim_run(struct sim *s, char *errbuf, size_t errlen)
{
    char dummy[1];
    s->err = errbuf ? errbuf : dummy;
    s->errlen = errbuf ? errlen : sizeof(dummy);
    s->err[0] = '\0';
    if (s->ran) {
        snprintf(s->err, s->errlen, "a simulation runs once");
        return TS_EINVAL;
    }
    s->ran = 1;
    /* every job ends after it starts, so the loop ends; with jobs waiting and nothing
     * running, cycle() reports the stall instead of spinning */
    while (s->next_submit < s->njobs || s->nends) {
        int64_t now = next_event(s);
        while (s->nends && s->ends[0].time == now)
            end_job(s, heap_pop(s));
        while (s->next_submit < s->njobs && s->jobs[s->next_submit].swf.submit == now)
            s->waiting[s->nwaiting++] = s->next_submit++;
        if (!s->nwaiting)
            continue;
        int err = cycle(s, now);
        if (err)
            return err;
    }
    /* nothing runs and nothing comes: what still waits, a limit keeps back for good
     * (ResourcesMax, or ResourcesAvailable below the job's size) */
    if (s->nwaiting) {
        const struct swf_job *head = &s->jobs[s->waiting[0]].swf;
        snprintf(s->err, s->errlen,
                 "%zu jobs wait that the running-job limits never let start (first waiting: "
                 "job %u, %u processors)", s->nwaiting, head->id, head->procs);
        return TS_EINVAL;
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* results */

size_t sim_job_count(const struct sim *s)
{
    return s->njobs;
}

const struct sim_job *sim_job_at(const struct sim *s, size_t i)
{
    return i < s->njobs ? &s->jobs[i] : NULL;
}

static double bounded_slowdown(int64_t wait, int64_t run)
{
    double bsld = (double)(wait + run) / (double)(run > SIM_BSLD_TAU ? run : SIM_BSLD_TAU);
    return bsld > 1 ? bsld : 1;
}

void sim_stats(const struct sim *s, struct sim_stats *out)
{
    *out = (struct sim_stats){.jobs = s->njobs, .dropped = s->dropped, .cycles = s->cycles,
                              .units = s->units_shown};
    double wait = 0, bsld = 0, work = 0;
    size_t ran = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        const struct sim_job *j = &s->jobs[i];
        if (j->start < 0)
            continue;
        int64_t w = j->start - j->swf.submit;
        if (!ran++ || j->swf.submit < out->first_submit)
            out->first_submit = j->swf.submit;
        if (j->end > out->last_end)
            out->last_end = j->end;
        if (w > out->max_wait)
            out->max_wait = w;
        wait += (double)w;
        bsld += bounded_slowdown(w, j->swf.run);
        work += (double)j->swf.run * j->swf.procs;
    }
    if (!ran)
        return;
    out->mean_wait = wait / (double)ran;
    out->mean_bsld = bsld / (double)ran;
    out->makespan = out->last_end - out->first_submit;
    out->utilisation = work / ((double)s->capacity * (double)out->makespan);
}

struct user_job {
    int32_t user;
    double wait, bsld;
};

static int by_user(const void *a, const void *b)
{
    const struct user_job *x = a, *y = b;
    return x->user < y->user ? -1 : x->user > y->user;
}

size_t sim_user_stats(const struct sim *s, struct sim_user_stats **out)
{
    *out = NULL;
    struct user_job *uj = malloc((s->njobs + 1) * sizeof(*uj));
    struct sim_user_stats *us = malloc((s->njobs + 1) * sizeof(*us));
    if (!uj || !us) {
        free(uj);
        free(us);
        return 0;
    }
    size_t n = 0, k = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        const struct sim_job *j = &s->jobs[i];
        if (j->start < 0)
            continue;
        int64_t w = j->start - j->swf.submit;
        uj[n++] = (struct user_job){j->swf.user, (double)w, bounded_slowdown(w, j->swf.run)};
    }
    qsort(uj, n, sizeof(*uj), by_user);
    for (size_t i = 0; i < n; i++) {
        if (!k || us[k - 1].user != uj[i].user)
            us[k++] = (struct sim_user_stats){.user = uj[i].user};
        struct sim_user_stats *u = &us[k - 1];
        u->jobs++;
        u->mean_wait += uj[i].wait;
        u->mean_bsld += uj[i].bsld;
    }
    for (size_t i = 0; i < k; i++) {
        us[i].mean_wait /= (double)us[i].jobs;
        us[i].mean_bsld /= (double)us[i].jobs;
    }
    free(uj);
    if (!k) {
        free(us);
        return 0;
    }
    *out = us;
    return k;
}
