/* The scheduling driver (ctld/sched.h): triggers, the view, decisions. */
#include "ctld/sched.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/node.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/hashmap.h"
#include "common/hostlist.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/plugin.h"
#include "common/sched.h"
#include "common/select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const trigger_names[SCHED_TRIGGER_COUNT] = {
    "NEW", "TERM", "TIME", "CMD", "RECYC", "FIRST", "NODE",
};

struct sched_state {
    struct plugin *select_plugin, *sched_plugin;
    const struct select_ops *select;
    const struct sched_ops *sched;
    struct loop_timer *queued;   /* the one cycle waiting to run */
    struct loop_timer *periodic; /* sched_interval */
    int queued_reason;
    uint64_t last_end_ms;        /* loop clock at the end of the last cycle */
    uint64_t min_interval_ms;
    /* statistics */
    uint64_t cycles, by_trigger[SCHED_TRIGGER_COUNT], started;
    time_t last_cycle;
    uint64_t last_usecs, max_usecs, last_queue;
};

/* ------------------------------------------------------------------------------------ */
/* the view */

/* What the units of one cycle need, freed together. */
struct cycle {
    struct select_node *nodes;
    struct sched_unit *units;
    struct sched_decision *decisions;
    struct job **leaders;
    struct select_request *reqs;    /* every unit's components, back to back */
    uint32_t *parts;
    struct select_alloc *allocs;
    size_t nunits, ncomps;
    /* per component: eligible and required node indexes, placement storage */
    uint32_t **eligible, **required;
    struct select_node_alloc **slots;
};

static void cycle_free(struct cycle *cy)
{
    for (size_t i = 0; i < cy->ncomps; i++) {
        free(cy->eligible ? cy->eligible[i] : NULL);
        free(cy->required ? cy->required[i] : NULL);
        free(cy->slots ? cy->slots[i] : NULL);
    }
    free(cy->eligible);
    free(cy->required);
    free(cy->slots);
    free(cy->nodes);
    free(cy->units);
    free(cy->decisions);
    free(cy->leaders);
    free(cy->reqs);
    free(cy->parts);
    free(cy->allocs);
}

static void fill_nodes(struct ctld *c, struct select_node *out)
{
    for (size_t i = 0; i < c->nodes.count; i++) {
        const struct node *n = &c->nodes.nodes[i];
        out[i] = (struct select_node){
            .name = n->name,
            .cpus = n->cfg->cpus,
            .alloc_cpus = n->alloc_cpus,
            .mem_mb = n->cfg->real_memory_mb,
            .alloc_mem_mb = n->alloc_mem_mb,
            .features = n->cfg->features,
            .weight = n->cfg->weight,
            .jobs = n->njobs,
            .available = node_available(n),
            .exclusive = n->exclusive > 0,
        };
    }
}

/* Node indexes of a host list (-w, -x); unknown names are skipped. */
static uint32_t *host_indexes(struct ctld *c, const char *expr, size_t *count)
{
    *count = 0;
    struct hostlist *hl = NULL;
    if (!expr || !*expr || hostlist_expand(expr, &hl) != TS_OK)
        return NULL;
    uint32_t *idx = calloc(hostlist_count(hl) + 1, sizeof(*idx));
    for (size_t i = 0; idx && i < hostlist_count(hl); i++) {
        struct node *n = node_find(c, hostlist_nth(hl, i));
        if (n)
            idx[(*count)++] = (uint32_t)node_index(c, n);
    }
    hostlist_destroy(hl);
    return idx;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int contains(const uint32_t *set, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

/* A component's request: its partition's nodes within -w and without -x. */
static int fill_request(struct ctld *c, const Tessera__JobRecord *r, struct select_request *q,
                        uint32_t **eligible, uint32_t **required, uint32_t *part_index)
{
    const Tessera__JobDesc *d = r->desc;
    const struct conf_partition *p = conf_find_partition(c->conf, d->partition);
    if (!p)
        return TS_EINVALID_PARTITION;
    *part_index = (uint32_t)(p - c->conf->partitions);
    size_t nreq = 0, nexc = 0;
    *required = host_indexes(c, d->nodelist, &nreq);
    uint32_t *exclude = host_indexes(c, d->exclude, &nexc);
    *eligible = calloc(p->nnodes + 1, sizeof(**eligible));
    if (!*eligible) {
        free(exclude);
        return TS_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->nnodes; i++) {
        uint32_t idx = (uint32_t)p->node_index[i];
        if ((nreq && !contains(*required, nreq, idx)) || contains(exclude, nexc, idx))
            continue;
        (*eligible)[n++] = idx;
    }
    free(exclude);
    qsort(*eligible, n, sizeof(**eligible), cmp_u32);
    *q = (struct select_request){
        .eligible = *eligible,
        .neligible = n,
        .required = *required,
        .nrequired = nreq,
        .constraint = d->constraint,
        .min_nodes = r->min_nodes,
        .max_nodes = d->has_max_nodes ? d->max_nodes : d->has_min_nodes ? d->min_nodes : 0,
        .ntasks = r->ntasks,
        .cpus_per_task = r->cpus_per_task,
        .ntasks_per_node = d->has_ntasks_per_node ? d->ntasks_per_node : 0,
        .mem_per_node_mb = d->has_mem_per_node_mb ? d->mem_per_node_mb : 0,
        .mem_whole_node = d->has_mem_per_node_mb && d->mem_per_node_mb == 0,
        .mem_per_cpu_mb = d->has_mem_per_cpu_mb ? d->mem_per_cpu_mb : 0,
        .exclusive = d->has_exclusive && d->exclusive,
    };
    return TS_OK;
}

/* Units in priority order: the highest component priority, then the lower id. */
static int cmp_units(const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    uint32_t px = job_unit_priority(x), py = job_unit_priority(y);
    if (px != py)
        return px > py ? -1 : 1;
    return x->rec->job_id < y->rec->job_id ? -1 : x->rec->job_id > y->rec->job_id;
}

static int collect_units(struct ctld *c, struct cycle *cy, time_t now)
{
    size_t n = 0, cap = 64;
    cy->leaders = malloc(cap * sizeof(*cy->leaders));
    for (struct job *j = c->jobs.head; cy->leaders && j; j = j->next) {
        if (j->leader != j || !job_unit_eligible(c, j, now))
            continue;
        if (n == cap) {
            struct job **grown = realloc(cy->leaders, (cap *= 2) * sizeof(*grown));
            if (!grown)
                return TS_ENOMEM;
            cy->leaders = grown;
        }
        cy->leaders[n++] = j;
        cy->ncomps += job_ncomponents(j);
    }
    if (!cy->leaders)
        return TS_ENOMEM;
    qsort(cy->leaders, n, sizeof(*cy->leaders), cmp_units);
    cy->nunits = n;
    return TS_OK;
}

static int build_cycle(struct ctld *c, struct cycle *cy, time_t now)
{
    int err = collect_units(c, cy, now);
    if (err)
        return err;
    size_t nc = cy->ncomps ? cy->ncomps : 1;
    cy->nodes = calloc(c->nodes.count + 1, sizeof(*cy->nodes));
    cy->units = calloc(cy->nunits + 1, sizeof(*cy->units));
    cy->decisions = calloc(cy->nunits + 1, sizeof(*cy->decisions));
    cy->reqs = calloc(nc, sizeof(*cy->reqs));
    cy->parts = calloc(nc, sizeof(*cy->parts));
    cy->allocs = calloc(nc, sizeof(*cy->allocs));
    cy->eligible = calloc(nc, sizeof(*cy->eligible));
    cy->required = calloc(nc, sizeof(*cy->required));
    cy->slots = calloc(nc, sizeof(*cy->slots));
    if (!cy->nodes || !cy->units || !cy->decisions || !cy->reqs || !cy->parts || !cy->allocs ||
        !cy->eligible || !cy->required || !cy->slots)
        return TS_ENOMEM;
    fill_nodes(c, cy->nodes);
    size_t k = 0;
    for (size_t u = 0; u < cy->nunits; u++) {
        struct job *lead = cy->leaders[u];
        size_t ncomp = job_ncomponents(lead);
        cy->units[u] = (struct sched_unit){.id = lead->rec->job_id,
                                           .priority = job_unit_priority(lead),
                                           .ncomponents = ncomp,
                                           .reqs = &cy->reqs[k],
                                           .partitions = &cy->parts[k]};
        cy->decisions[u].allocs = &cy->allocs[k];
        for (size_t i = 0; i < ncomp; i++, k++) {
            err = fill_request(c, job_component(lead, i)->rec, &cy->reqs[k], &cy->eligible[k],
                               &cy->required[k], &cy->parts[k]);
            size_t room = cy->reqs[k].neligible > cy->reqs[k].min_nodes
                              ? cy->reqs[k].neligible
                              : cy->reqs[k].min_nodes;
            if (!err && !(cy->slots[k] = calloc(room + 1, sizeof(*cy->slots[k]))))
                err = TS_ENOMEM;
            if (err)
                return err;
            cy->allocs[k].nodes = cy->slots[k];
        }
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* a cycle */

static uint32_t verdict_reason(enum sched_verdict v)
{
    switch (v) {
    case SCHED_RESOURCES: return JOB_REASON_RESOURCES;
    case SCHED_PRIORITY: return JOB_REASON_PRIORITY;
    default: return JOB_REASON_BAD_CONSTRAINTS;
    }
}

static size_t apply(struct ctld *c, struct cycle *cy, time_t now)
{
    size_t started = 0;
    for (size_t u = 0; u < cy->nunits; u++) {
        struct job *lead = cy->leaders[u];
        const struct sched_decision *d = &cy->decisions[u];
        for (size_t i = 0; i < job_ncomponents(lead); i++)
            job_component(lead, i)->rec->last_sched_eval = now;
        if (d->verdict == SCHED_START) {
            if (job_start_unit(c, lead, d->allocs) == TS_OK)
                started++;
            continue;
        }
        for (size_t i = 0; i < job_ncomponents(lead); i++)
            job_component(lead, i)->rec->reason = verdict_reason(d->verdict);
    }
    return started;
}

static void run_cycle(struct ctld *c, int reason)
{
    struct sched_state *s = c->sched;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    time_t now = time(NULL);
    struct cycle cy = {0};
    int err = build_cycle(c, &cy, now);
    size_t started = 0;
    if (err) {
        log_error("scheduler: cannot build the cycle's view: %s", ts_strerror(err));
    } else if (cy.nunits) {
        struct sched_view view = {.now = now, .nodes = cy.nodes, .nnodes = c->nodes.count,
                                  .npartitions = c->conf->npartitions, .units = cy.units,
                                  .nunits = cy.nunits, .select = s->select};
        s->sched->schedule(&view, cy.decisions);
        started = apply(c, &cy, now);
    }
    s->last_queue = cy.nunits;
    cycle_free(&cy);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t usecs = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000u +
                     (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000);
    s->cycles++;
    s->by_trigger[reason]++;
    s->started += started;
    s->last_cycle = now;
    s->last_usecs = usecs;
    if (usecs > s->max_usecs)
        s->max_usecs = usecs;
    s->last_end_ms = loop_now_ms(c->loop);
    if (started)
        log_debug("scheduler: %s cycle started %zu of %zu units in %llu us",
                  trigger_names[reason], started, s->last_queue, (unsigned long long)usecs);
    if (started == 1)
        sched_trigger(c, SCHED_TRIGGER_RECYC);
}

static void queued_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct ctld *c = arg;
    c->sched->queued = NULL;
    run_cycle(c, c->sched->queued_reason);
}

void sched_trigger(struct ctld *c, enum sched_trigger why)
{
    struct sched_state *s = c->sched;
    if (!s || s->queued)
        return; /* one cycle is already coming: it will see this change too */
    uint64_t now = loop_now_ms(c->loop);
    uint64_t earliest = s->last_end_ms + s->min_interval_ms;
    s->queued_reason = why;
    s->queued = loop_timer_add(c->loop, earliest > now ? earliest - now : 0, 0, queued_fired, c);
}

static void periodic_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    sched_trigger(arg, SCHED_TRIGGER_TIME);
}

/* ------------------------------------------------------------------------------------ */

static uint64_t param_u64(const struct conf *conf, const char *key, uint64_t def)
{
    const char *v = NULL;
    return conf_sched_param(conf, key, &v) && *v ? strtoull(v, NULL, 10) : def;
}

int sched_init(struct ctld *c, char *errbuf, size_t errlen)
{
    struct sched_state *s = calloc(1, sizeof(*s));
    if (!s)
        return TS_ENOMEM;
    c->sched = s;
    int err = plugin_load(c->conf->plugin_dir, c->conf->select_type, SELECT_PLUGIN_TYPE,
                          PLUGIN_ABI_VERSION, NULL, &s->select_plugin, errbuf, errlen);
    if (!err)
        err = plugin_load(c->conf->plugin_dir, c->conf->scheduler_type, SCHED_PLUGIN_TYPE,
                          PLUGIN_ABI_VERSION, NULL, &s->sched_plugin, errbuf, errlen);
    if (err)
        return err;
    s->select = plugin_ops(s->select_plugin);
    s->sched = plugin_ops(s->sched_plugin);
    /* Slurm's sched_min_interval is in microseconds */
    s->min_interval_ms = param_u64(c->conf, "sched_min_interval", 0) / 1000;
    uint64_t interval = param_u64(c->conf, "sched_interval", 60);
    s->periodic = loop_timer_add(c->loop, interval * 1000, interval * 1000, periodic_fired, c);
    if (!s->periodic)
        return TS_ENOMEM;
    sched_trigger(c, SCHED_TRIGGER_FIRST);
    return TS_OK;
}

void sched_fini(struct ctld *c)
{
    struct sched_state *s = c->sched;
    if (!s)
        return;
    loop_timer_cancel(c->loop, s->queued);
    loop_timer_cancel(c->loop, s->periodic);
    plugin_unload(s->sched_plugin);
    plugin_unload(s->select_plugin);
    free(s);
    c->sched = NULL;
}

void sched_fill_stats(struct ctld *c, Tessera__SchedStatsResponse *out,
                      Tessera__SchedTrigger *storage, Tessera__SchedTrigger **ptrs)
{
    struct sched_state *s = c->sched;
    out->scheduler = c->conf->scheduler_type;
    out->cycles = s->cycles;
    out->last_cycle_time = (int64_t)s->last_cycle;
    out->last_cycle_usecs = s->last_usecs;
    out->max_cycle_usecs = s->max_usecs;
    out->jobs_started = s->started;
    out->last_queue_length = s->last_queue;
    out->now = (int64_t)time(NULL);
    for (int i = 0; i < SCHED_TRIGGER_COUNT; i++) {
        tessera__sched_trigger__init(&storage[i]);
        storage[i].name = (char *)trigger_names[i];
        storage[i].cycles = s->by_trigger[i];
        ptrs[i] = &storage[i];
    }
    out->triggers = ptrs;
    out->n_triggers = SCHED_TRIGGER_COUNT;
}
