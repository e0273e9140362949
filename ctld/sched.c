/* The scheduling driver (ctld/sched.h): triggers, the view, decisions. */
#include "ctld/filter_activate.h"
#include "ctld/sched.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"
#include "ctld/sched_int.h"
#include "ctld/store_guard.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/net/loop.h"
#include "common/sched/priority.h"
#include "common/sched/sched.h"
#include "common/sched/select.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/pbutil.h"
#include "common/util/plugin.h"

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
    void *plugin_state;
    struct loop_timer *queued;     /* the one event-driven cycle waiting to run */
    struct loop_timer *periodic;   /* sched_interval */
    int queued_reason;
    uint64_t last_end_ms;          /* loop clock at the end of the last event cycle */
    uint64_t min_interval_ms;
    /* backfill */
    struct loop_timer *bf_queued;  /* the next backfill cycle, or the rest of one */
    struct loop_timer *bf_periodic; /* bf_interval */
    struct cycle *bf;              /* the backfill cycle in progress (yielded), or NULL */
    uint64_t bf_cycle_no;
    uint64_t bf_last_end_ms;
    uint64_t bf_interval_ms, bf_yield_us, bf_min_gap_ms;
    /* scratch of the re-check, one entry per node */
    uint32_t *add_cpus, *add_jobs;
    uint64_t *add_mem;
    size_t scratch_nodes;
    /* statistics */
    uint64_t cycles, by_trigger[SCHED_TRIGGER_COUNT], started;
    time_t last_cycle;
    uint64_t last_usecs, max_usecs, last_queue;
    uint64_t bf_cycles, bf_started, bf_last_usecs, bf_max_usecs, bf_last_work_usecs;
    uint64_t bf_last_queue, bf_last_yields, bf_last_reserved, bf_yields;
    time_t bf_last_cycle;
};

static void backfill_request(struct ctld *c, uint64_t after_ms);

static uint64_t mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* ------------------------------------------------------------------------------------ */
/* applying decisions: the world may have moved since the snapshot */

static int scratch_fit(struct sched_state *s, size_t n)
{
    if (s->scratch_nodes >= n)
        return TS_OK;
    free(s->add_cpus);
    free(s->add_jobs);
    free(s->add_mem);
    s->add_cpus = calloc(n, sizeof(*s->add_cpus));
    s->add_jobs = calloc(n, sizeof(*s->add_jobs));
    s->add_mem = calloc(n, sizeof(*s->add_mem));
    s->scratch_nodes = s->add_cpus && s->add_jobs && s->add_mem ? n : 0;
    return s->scratch_nodes ? TS_OK : TS_ENOMEM;
}

/* Whether every component's placement still fits the nodes as they are now (the
 * components of a het job may share nodes: what earlier ones take counts). */
static int unit_fits(struct ctld *c, struct job *lead, const struct select_alloc *allocs)
{
    struct sched_state *s = c->sched;
    if (scratch_fit(s, c->nodes.count) != TS_OK)
        return 0;
    int ok = 1;
    for (size_t i = 0; ok && i < job_ncomponents(lead); i++) {
        const Tessera__JobDesc *d = job_component(lead, i)->rec->desc;
        int excl = d->has_exclusive && d->exclusive;
        for (size_t k = 0; ok && k < allocs[i].nnodes; k++) {
            const struct select_node_alloc *a = &allocs[i].nodes[k];
            if (a->node >= c->nodes.count) {
                ok = 0;
                break;
            }
            const struct node *n = &c->nodes.nodes[a->node];
            uint32_t cpus = n->alloc_cpus + s->add_cpus[a->node] + a->cpus;
            uint64_t mem = n->alloc_mem_mb + s->add_mem[a->node] + a->mem_mb;
            ok = node_available(n) && !n->exclusive && cpus <= n->cfg->cpus &&
                 (a->mem_mb == 0 || mem <= n->cfg->real_memory_mb) &&
                 (!excl || n->njobs + s->add_jobs[a->node] == 0);
            s->add_cpus[a->node] += a->cpus;
            s->add_mem[a->node] += a->mem_mb;
            s->add_jobs[a->node]++;
        }
    }
    for (size_t i = 0; i < job_ncomponents(lead); i++)
        for (size_t k = 0; k < allocs[i].nnodes; k++)
            if (allocs[i].nodes[k].node < s->scratch_nodes) {
                s->add_cpus[allocs[i].nodes[k].node] = 0;
                s->add_mem[allocs[i].nodes[k].node] = 0;
                s->add_jobs[allocs[i].nodes[k].node] = 0;
            }
    return ok;
}

static uint32_t verdict_reason(enum sched_verdict v)
{
    switch (v) {
    case SCHED_RESOURCES: return JOB_REASON_RESOURCES;
    case SCHED_PRIORITY: return JOB_REASON_PRIORITY;
    case SCHED_BLOCK: return JOB_REASON_ACTIVATION_BLOCKED;
    case SCHED_RESERVE: return JOB_REASON_ACTIVATION_RESERVED;
    case SCHED_HOLD: return JOB_REASON_ACTIVATION_HOLD;
    default: return JOB_REASON_BAD_CONSTRAINTS;
    }
}

/* The unit as it was in the snapshot, if it is still waiting for the scheduler alone. */
static struct job *unit_now(struct ctld *c, const struct cycle *cy, size_t u, time_t now)
{
    struct job *lead = job_find(&c->jobs, cy->ids[u]);
    if (!lead || lead->leader != lead || job_ncomponents(lead) != cy->units[u].ncomponents)
        return NULL;
    job_unit_refresh_reasons(c, lead, now);
    return job_unit_eligible(lead) ? lead : NULL;
}

static void set_expected(struct job *lead, int64_t start)
{
    for (size_t i = 0; i < job_ncomponents(lead); i++)
        job_component(lead, i)->rec->expected_start = start;
}

/* The nodes of placements allocs[0..n) as one host list ("n[1-4]"), malloc'd; NULL when
 * out of memory. */
static char *placement_hosts(const struct cycle *cy, const struct select_alloc *allocs,
                             size_t n)
{
    struct hostlist *hl = hostlist_create();
    for (size_t i = 0; hl && i < n; i++)
        for (size_t k = 0; hl && k < allocs[i].nnodes; k++) {
            uint32_t node = allocs[i].nodes[k].node;
            if (node >= cy->nnodes || hostlist_push(hl, cy->nodes[node].name) != TS_OK) {
                hostlist_destroy(hl);
                hl = NULL;
            }
        }
    if (hl)
        hostlist_uniq(hl);
    char *text = hl ? hostlist_compress(hl) : NULL;
    hostlist_destroy(hl);
    return text;
}

/* Each component's planned nodes (SchedNodeList), from its placement at the expected
 * start; cleared without one. */
static void set_sched_nodes(const struct cycle *cy, struct job *lead,
                            const struct sched_decision *d)
{
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        char *text = d->expected_start ? placement_hosts(cy, &d->allocs[i], 1) : NULL;
        pbutil_set_string(&job_component(lead, i)->rec->sched_nodes, text ? text : "");
        free(text);
    }
}

/* Whether the unit may start on allocs now: they still fit the nodes, and no running-job
 * limit holds it back, counting what runs and the cycle's earlier starts (lc). */
static int may_start(struct ctld *c, struct limit_counts *lc, struct job *lead,
                     const struct select_alloc *allocs)
{
    return unit_fits(c, lead, allocs) && sched_limits_allow(c, lc, lead);
}

/* The one start path: a unit the plugin placed, or one whose activation filters agreed to
 * a placement (activated: its standing "start" verdict, docs/05-filters.md §3.12). Returns 1 if it
 * started. */
static int start_unit(struct ctld *c, struct limit_counts *lc, struct job *lead,
                      struct select_alloc *allocs, int activated)
{
    if (!may_start(c, lc, lead, allocs))
        return 0;
    if (activated)
        filter_activate_starting(c, lead);
    set_expected(lead, 0);
    if (job_start_unit(c, lead, allocs) != TS_OK)
        return 0;
    sched_limits_started(c, lc, lead);
    return 1;
}

/* Starts and reasons; a backfill cycle also sets every pending job's expected start.
 * Returns how many units started; *unplanned: a unit waits that no backfill cycle has
 * planned yet. */
static size_t apply(struct ctld *c, struct cycle *cy, time_t now, int *unplanned)
{
    struct sched_state *s = c->sched;
    int backfill = cy->kind == SCHED_BACKFILL;
    size_t started = 0, dropped = 0;
    /* Nothing starts while the state cannot be stored: a start must be durable before
     * its launch leaves. The store's recovery triggers a cycle (ctld/store_guard.c). */
    if (ctld_change_refusal(c, CTLD_CHANGE_START) != TS_OK)
        return 0;
    /* running-job limits hold for the starts of this cycle together */
    struct limit_counts *lc = sched_limits_count(c);
    if (backfill)
        for (struct job *j = c->jobs.head; j; j = j->next) {
            /* those not in this plan have no estimate */
            j->rec->expected_start = 0;
            if (j->rec->sched_nodes && *j->rec->sched_nodes)
                pbutil_set_string(&j->rec->sched_nodes, "");
        }
    for (size_t u = 0; u < cy->nunits; u++) {
        const struct sched_decision *d = &cy->decisions[u];
        struct job *lead = unit_now(c, cy, u, now);
        if (!lead) {
            dropped += d->verdict == SCHED_START;
            continue;
        }
        /* its activation filters agreed to a start: that verdict stands over the plugin's */
        struct select_alloc *agreed = filter_activate_passed(c, lead);
        if (d->verdict == SCHED_UNDECIDED && !agreed)
            continue;
        for (size_t i = 0; i < job_ncomponents(lead); i++)
            job_component(lead, i)->rec->last_sched_eval = now;
        if (backfill)
            lead->bf_cycle = s->bf_cycle_no;
        if (agreed) {
            int ok = start_unit(c, lc, lead, agreed, 1);
            started += ok;
            dropped += !ok;
            filter_activate_settled(c, lead, ok); /* not started: undone, asked again */
            continue;
        }
        if (d->verdict == SCHED_FAIL) {
            filter_activate_fail_unit(c, lead);
            continue;
        }
        if (d->verdict == SCHED_START && filter_activate_applies(c, lead)) {
            if (!may_start(c, lc, lead, d->allocs)) {
                dropped++;
                continue;
            }
            /* its activation filters decide first; the resources wait for it, and it
             * counts against the running-job limits for the rest of this cycle */
            filter_activate_start(c, lead, d->allocs,
                                  backfill ? s->bf_cycle_no : s->cycles + 1, u + 1, backfill);
            sched_limits_started(c, lc, lead);
            continue;
        }
        if (d->verdict == SCHED_START) {
            if (start_unit(c, lc, lead, d->allocs, 0))
                started++;
            else
                dropped++;
            continue;
        }
        for (size_t i = 0; i < job_ncomponents(lead); i++)
            job_component(lead, i)->rec->reason = verdict_reason(d->verdict);
        if (backfill) {
            set_expected(lead, d->expected_start);
            set_sched_nodes(cy, lead, d);
        }
        else if (!lead->bf_cycle && d->verdict != SCHED_NEVER)
            *unplanned = 1;
    }
    sched_limits_free(lc);
    /* an event-driven cycle's view is built and applied at once: a "start" verdict that
     * stood when it was built and did not start (not in the view) is undone */
    if (!backfill)
        filter_activate_settle_all(c);
    if (dropped)
        log_debug("scheduler: %zu start%s overtaken by events since the snapshot", dropped,
                  dropped == 1 ? "" : "s");
    return started;
}

/* ------------------------------------------------------------------------------------ */
/* event-driven cycles */

static void run_cycle(struct ctld *c, int reason)
{
    struct sched_state *s = c->sched;
    uint64_t t0 = mono_us();
    time_t now = time(NULL);
    struct cycle cy;
    int err = sched_cycle_build(c, &cy, SCHED_EVENT, now);
    size_t started = 0;
    int unplanned = 0;
    if (err) {
        log_error("scheduler: cannot build the cycle's view: %s", ts_strerror(err));
    } else {
        cy.view.select = s->select;
        /* the timed cycle and the administrator's look at the whole queue (Slurm's
         * default_queue_depth bounds the others) */
        cy.view.full_queue = reason == SCHED_TRIGGER_TIME || reason == SCHED_TRIGGER_CMD ||
                             reason == SCHED_TRIGGER_FIRST;
        if (cy.nunits)
            s->sched->schedule(s->plugin_state, &cy.view, cy.decisions);
        started = apply(c, &cy, now, &unplanned); /* with no unit: standing verdicts */
    }
    s->last_queue = cy.nunits;
    sched_cycle_free(&cy);
    uint64_t usecs = mono_us() - t0;
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
    /* a job the event-driven scheduler gave up on gets a plan soon */
    if (unplanned)
        backfill_request(c, s->bf_min_gap_ms);
}

static void queued_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct ctld *c = arg;
    c->sched->queued = NULL;
    run_cycle(c, c->sched->queued_reason);
}

void sched_job_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind == JOB_CHANGE_WAITING)
        sched_trigger(c, SCHED_TRIGGER_NEW);
    else if (ch->kind == JOB_CHANGE_ENDED || ch->kind == JOB_CHANGE_FREED)
        sched_trigger(c, SCHED_TRIGGER_TERM);
    else if (ch->kind == JOB_CHANGE_NODES)
        sched_trigger(c, SCHED_TRIGGER_NODE);
    else if (ch->kind == JOB_CHANGE_STORE_BACK)
        sched_trigger(c, SCHED_TRIGGER_TIME); /* the starts held back go now */
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
/* backfill cycles: planned ahead, and long ones give the loop a turn now and then */

static int slice_over(void *arg)
{
    struct sched_state *s = arg;
    return mono_us() - s->bf->slice_start_us >= s->bf_yield_us;
}

static void backfill_done(struct ctld *c)
{
    struct sched_state *s = c->sched;
    struct cycle *cy = s->bf;
    int unplanned = 0;
    time_t now = time(NULL);
    size_t started = apply(c, cy, now, &unplanned);
    uint64_t reserved = 0;
    for (size_t u = 0; u < cy->nunits; u++)
        reserved += cy->decisions[u].reserved != 0;
    uint64_t total = mono_us() - cy->started_us;
    s->bf_cycles++;
    s->bf_started += started;
    s->bf_last_cycle = now;
    s->bf_last_usecs = total;
    s->bf_last_work_usecs = cy->work_us;
    s->bf_last_queue = cy->nunits;
    s->bf_last_yields = cy->yields;
    s->bf_yields += cy->yields;
    s->bf_last_reserved = reserved;
    if (total > s->bf_max_usecs)
        s->bf_max_usecs = total;
    s->bf_last_end_ms = loop_now_ms(c->loop);
    if (started || cy->yields)
        log_debug("backfill: started %zu of %zu units, %llu reserved, in %llu us (%llu yields)",
                  started, cy->nunits, (unsigned long long)reserved, (unsigned long long)total,
                  (unsigned long long)cy->yields);
    sched_cycle_free(cy);
    free(cy);
    s->bf = NULL;
    if (started)
        sched_trigger(c, SCHED_TRIGGER_RECYC);
}

/* One slice of the backfill cycle in progress, starting one when none is. */
static void backfill_slice(struct ctld *c)
{
    struct sched_state *s = c->sched;
    if (!s->bf) {
        struct cycle *cy = calloc(1, sizeof(*cy));
        int err = cy ? sched_cycle_build(c, cy, SCHED_BACKFILL, time(NULL)) : TS_ENOMEM;
        if (err) {
            log_error("backfill: cannot build the cycle's view: %s", ts_strerror(err));
            if (cy)
                sched_cycle_free(cy);
            free(cy);
            return;
        }
        cy->started_us = mono_us();
        cy->view.select = s->select;
        cy->view.should_yield = slice_over;
        cy->view.yield_arg = s;
        s->bf = cy;
        s->bf_cycle_no++;
    }
    struct cycle *cy = s->bf;
    cy->slice_start_us = mono_us();
    enum sched_status st = s->sched->schedule(s->plugin_state, &cy->view, cy->decisions);
    cy->work_us += mono_us() - cy->slice_start_us;
    if (st == SCHED_MORE) {
        cy->yields++;
        cy->view.resume = 1;
        backfill_request(c, 0); /* the loop serves what waits, then this goes on */
        return;
    }
    backfill_done(c);
}

static void bf_queued_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct ctld *c = arg;
    c->sched->bf_queued = NULL;
    backfill_slice(c);
}

/* A backfill cycle (or the rest of one) after_ms from now, unless one is queued. */
static void backfill_request(struct ctld *c, uint64_t after_ms)
{
    struct sched_state *s = c->sched;
    if (!s || s->bf_queued)
        return;
    if (!s->bf) {
        uint64_t now = loop_now_ms(c->loop), earliest = s->bf_last_end_ms + after_ms;
        after_ms = earliest > now ? earliest - now : 0;
    }
    s->bf_queued = loop_timer_add(c->loop, after_ms, 0, bf_queued_fired, c);
}

static void bf_periodic_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    backfill_request(arg, 0);
}

void sched_abort(struct ctld *c)
{
    struct sched_state *s = c->sched;
    if (!s || !s->bf)
        return;
    sched_cycle_free(s->bf);
    free(s->bf);
    s->bf = NULL;
    loop_timer_cancel(c->loop, s->bf_queued);
    s->bf_queued = NULL;
    backfill_request(c, 0); /* a fresh one, on the new state */
}

/* ------------------------------------------------------------------------------------ */
/* sbatch --test-only */

int sched_estimate(struct ctld *c, Tessera__JobDesc *const *descs, size_t n,
                   Tessera__SubmitResponse *out)
{
    struct sched_state *s = c->sched;
    struct cycle cy;
    int err = sched_cycle_build_one(c, &cy, descs, n, time(NULL));
    int64_t start = 0;
    if (!err) {
        cy.view.select = s->select;
        err = s->sched->estimate(s->plugin_state, &cy.view, &cy.units[0], &start,
                                 cy.decisions[0].allocs);
    }
    uint32_t cpus = 0;
    for (size_t i = 0; !err && i < n; i++)
        for (size_t k = 0; k < cy.allocs[i].nnodes; k++)
            cpus += cy.allocs[i].nodes[k].cpus;
    if (!err) {
        out->nodes = placement_hosts(&cy, cy.allocs, n);
        out->expected_start = start;
        out->cpus = cpus;
        out->partition = strdup(c->conf->partitions[cy.parts[0]].name);
        if (!out->nodes || !out->partition)
            err = TS_ENOMEM;
    }
    sched_cycle_free(&cy);
    return err;
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
    if (!err)
        err = sched_order_init(c, errbuf, errlen);
    if (err)
        return err;
    s->select = plugin_ops(s->select_plugin);
    s->sched = plugin_ops(s->sched_plugin);
    err = s->sched->create(c->conf->scheduler_parameters, &s->plugin_state, errbuf, errlen);
    if (err)
        return err;
    /* Slurm's sched_min_interval is in microseconds */
    s->min_interval_ms = param_u64(c->conf, "sched_min_interval", 0) / 1000;
    uint64_t interval = param_u64(c->conf, "sched_interval", 60);
    s->periodic = loop_timer_add(c->loop, interval * 1000, interval * 1000, periodic_fired, c);
    /* bf_interval in seconds, bf_yield_interval in microseconds, as Slurm's */
    s->bf_interval_ms = param_u64(c->conf, "bf_interval", 30) * 1000;
    if (!s->bf_interval_ms)
        s->bf_interval_ms = 1000;
    s->bf_yield_us = param_u64(c->conf, "bf_yield_interval", 2000000);
    if (!s->bf_yield_us)
        s->bf_yield_us = 1;
    s->bf_min_gap_ms = param_u64(c->conf, "bf_min_gap", 1000);
    s->bf_periodic = loop_timer_add(c->loop, s->bf_interval_ms, s->bf_interval_ms,
                                    bf_periodic_fired, c);
    if (!s->periodic || !s->bf_periodic)
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
    loop_timer_cancel(c->loop, s->bf_queued);
    loop_timer_cancel(c->loop, s->bf_periodic);
    if (s->bf) {
        sched_cycle_free(s->bf);
        free(s->bf);
    }
    if (s->sched && s->plugin_state)
        s->sched->destroy(s->plugin_state);
    sched_order_fini(c);
    plugin_unload(s->sched_plugin);
    plugin_unload(s->select_plugin);
    free(s->add_cpus);
    free(s->add_jobs);
    free(s->add_mem);
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
    out->bf_cycles = s->bf_cycles;
    out->bf_last_cycle_time = (int64_t)s->bf_last_cycle;
    out->bf_last_cycle_usecs = s->bf_last_usecs;
    out->bf_max_cycle_usecs = s->bf_max_usecs;
    out->bf_last_work_usecs = s->bf_last_work_usecs;
    out->bf_jobs_started = s->bf_started;
    out->bf_last_queue_length = s->bf_last_queue;
    out->bf_last_yields = s->bf_last_yields;
    out->bf_last_reserved = s->bf_last_reserved;
    out->bf_yields = s->bf_yields;
    for (int i = 0; i < SCHED_TRIGGER_COUNT; i++) {
        tessera__sched_trigger__init(&storage[i]);
        storage[i].name = (char *)trigger_names[i];
        storage[i].cycles = s->by_trigger[i];
        ptrs[i] = &storage[i];
    }
    out->triggers = ptrs;
    out->n_triggers = SCHED_TRIGGER_COUNT;
}
