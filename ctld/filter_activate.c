/* Activation filters: asked before the scheduler's start of a unit takes effect.
 *
 * Each component's chain (the partition's filters, then the cluster's) runs on the
 * component's JSON file with the pass number, the unit's place in the queue, whether the
 * cycle was a backfill one and the component's candidate CPUs. A chain stops at its first
 * non-zero exit (a time-out or a missing filter counts as 2); its passed filters are then
 * undone, last first. When every chain passed the unit stands "start": the next
 * scheduling cycle starts it on the candidate resources through the same checks as any
 * other start (they still fit, no running-job limit holds it back: ctld/sched.c), and
 * nothing is undone; a cycle that does not start it has every chain undone and the
 * filters asked again. Otherwise the passed chains are undone too and the strongest
 * verdict stands on the unit: fail (4) > hold (3) > block (1) > reserve (2).
 *
 * The standing verdict lives here, by leader id, until the filters may be asked again:
 * FilterRetryInterval seconds after a block or reserve, at HoldUntil (or after
 * DefaultHoldDuration) after a hold. While the filters run the unit stands as "reserve"
 * with the candidate resources kept, so the scheduler holds them for it and starts
 * nothing else there. */
#include "ctld/filter_activate.h"

#include "ctld/ctld.h"
#include "ctld/filter_run.h"
#include "ctld/job.h"
#include "ctld/job_change.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/pbutil.h"
#include "ctld/jobjson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct act_chain {
    struct activation *a;
    char **paths;
    size_t n;
    size_t passed;
    size_t undo_left;
    int running;
    int verdict;            /* -1 still going, 0 passed, else the exit that stopped it */
    char json[1024];
    char ncpus[16];
};

struct activation {
    struct ctld *c;
    struct activation *next;
    uint32_t job_id;
    size_t ncomp;
    enum sched_activation standing;
    time_t retry_at;        /* the filters may be asked again from then */
    int asked;              /* a cycle was triggered for the retry */
    int running;            /* chains or undos in flight */
    int passed;             /* every chain passed: "start" stands until a cycle acts */
    int undoing_all;        /* every chain passed but the unit did not start: undo all */
    int then_drop;          /* ... and then forget it (else: ask again at once) */
    int stale;              /* a reconfigure came while its filters ran */
    struct select_alloc *allocs;     /* the candidate resources, per component */
    struct select_node_alloc *slots;
    struct act_chain *chains;
    char pass[24], position[24], backfill[4];
};

static struct activation *find(struct ctld *c, uint32_t job_id)
{
    for (struct activation *a = c->activations; a; a = a->next)
        if (a->job_id == job_id)
            return a;
    return NULL;
}

static void free_chains(struct activation *a)
{
    for (size_t i = 0; a->chains && i < a->ncomp; i++) {
        if (a->chains[i].json[0])
            unlink(a->chains[i].json);
        conf_filters_free(a->chains[i].paths, a->chains[i].n);
    }
    free(a->chains);
    a->chains = NULL;
}

static void drop(struct activation *a)
{
    for (struct activation **p = &a->c->activations; *p; p = &(*p)->next) {
        if (*p == a) {
            *p = a->next;
            break;
        }
    }
    free_chains(a);
    free(a->allocs);
    free(a->slots);
    free(a);
}

static const struct conf_partition *partition_of(struct ctld *c, const Tessera__JobRecord *r)
{
    return conf_find_partition(c->conf, r->desc->partition);
}

int filter_activate_applies(struct ctld *c, struct job *lead)
{
    if (c->conf->activation_filters)
        return 1;
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        const struct conf_partition *p = partition_of(c, job_component(lead, i)->rec);
        if (p && p->activation_filters)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the verdict */

void filter_activate_fail_unit(struct ctld *c, struct job *lead)
{
    /* the detail and the reason are stored with the end, so accounting keeps them */
    for (size_t i = 0; i < job_ncomponents(lead); i++)
        pbutil_set_string(&job_component(lead, i)->rec->state_desc,
                          "activation filter failed the job");
    job_end_unit_reason(c, lead, TESSERA__JOB_STATE__JOB_FAILED, 0,
                        JOB_REASON_ACTIVATION_FAILED);
}

/* The order of strength of docs/05-filters.md §3.4: fail > hold > block > reserve. */
static int strength(int exit)
{
    switch (exit) {
    case 4: return 4;
    case 3: return 3;
    case 1: return 2;
    default: return 1; /* 2, others, time-outs, missing filters */
    }
}

static void set_reason(struct ctld *c, struct job *lead, uint32_t reason)
{
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        struct job *j = job_component(lead, i);
        j->rec->reason = reason;
        job_save(c, j);
    }
}

static int64_t hold_until(struct job *lead)
{
    int64_t until = 0;
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        const Tessera__JobDesc *d = job_component(lead, i)->rec->desc;
        if (d->has_hold_until && d->hold_until > until)
            until = d->hold_until;
    }
    return until;
}

static void step(struct activation *a);

/* The filters passed but the unit will not start after all: every chain is undone (they
 * may have taken something), then the unit is forgotten (drop) or asked again at once. */
static void undo_everything(struct activation *a, int drop_after)
{
    a->passed = 0;
    a->undoing_all = 1;
    a->then_drop = drop_after;
    for (size_t i = 0; i < a->ncomp; i++)
        a->chains[i].undo_left = SIZE_MAX;
    step(a);
}

static void ask_again_now(struct activation *a, struct job *lead)
{
    free(a->allocs);
    free(a->slots);
    a->allocs = NULL;
    a->slots = NULL;
    a->standing = SCHED_ACT_NONE;
    a->retry_at = time(NULL);
    a->asked = 0;
    a->stale = 0;
    job_changed_waiting(a->c, lead);
}

/* Whether the unit may still start as it was when its filters were asked. */
static int still_startable(struct activation *a, struct job *lead, time_t now)
{
    if (!lead || lead->leader != lead || a->stale || job_ncomponents(lead) != a->ncomp)
        return 0;
    job_unit_refresh_reasons(a->c, lead, now);
    return job_unit_eligible(lead);
}

/* Every chain and undo is over: act on the verdict. */
static void conclude(struct activation *a)
{
    struct ctld *c = a->c;
    time_t now = time(NULL);
    struct job *lead = job_find(&c->jobs, a->job_id);
    if (a->undoing_all) {
        free_chains(a);
        a->undoing_all = 0;
        if (a->then_drop || !lead || lead->rec->state != TESSERA__JOB_STATE__JOB_PENDING)
            drop(a);
        else
            ask_again_now(a, lead);
        return;
    }
    int worst = 0, all_passed = 1;
    for (size_t i = 0; i < a->ncomp; i++) {
        int v = a->chains[i].verdict; /* -1: cut short by another chain's stop */
        all_passed &= v == 0;
        if (v > 0 && (!worst || strength(v) > strength(worst)))
            worst = v;
    }
    int pending = lead && lead->leader == lead &&
                  lead->rec->state == TESSERA__JOB_STATE__JOB_PENDING;
    if (all_passed) {
        if (still_startable(a, lead, now)) {
            /* "start" stands; the cycle asked for now starts it through its checks */
            a->passed = 1;
            log_info("job %u: activation filters passed; it starts in the next cycle",
                     a->job_id);
            job_changed_waiting(c, lead);
            return;
        }
        log_info("job %u: activation filters passed, but it cannot start now (%s)", a->job_id,
                 !pending ? "no longer pending" : "changed, or its resources went");
        undo_everything(a, !pending);
        return;
    }
    free_chains(a);
    if (!pending) {
        drop(a); /* cancelled meanwhile (its chains are undone already) */
        return;
    }
    if (a->stale) {
        ask_again_now(a, lead); /* the nodes changed: its placement means nothing now */
        return;
    }
    a->asked = 0;
    switch (strength(worst)) {
    case 4:
        log_info("job %u: an activation filter failed it", a->job_id);
        drop(a);
        filter_activate_fail_unit(c, lead);
        return;
    case 3: {
        int64_t until = hold_until(lead);
        a->standing = SCHED_ACT_HOLD;
        a->retry_at = until > now ? (time_t)until : now + c->conf->default_hold_duration;
        set_reason(c, lead, JOB_REASON_ACTIVATION_HOLD);
        break;
    }
    case 2:
        a->standing = SCHED_ACT_BLOCK;
        a->retry_at = now + c->conf->filter_retry_interval;
        set_reason(c, lead, JOB_REASON_ACTIVATION_BLOCKED);
        break;
    default:
        a->standing = SCHED_ACT_RESERVE;
        a->retry_at = now + c->conf->filter_retry_interval;
        set_reason(c, lead, JOB_REASON_ACTIVATION_RESERVED);
        break;
    }
    log_info("job %u: activation filter verdict %d; asked again at %lld", a->job_id, worst,
             (long long)a->retry_at);
    job_changed_waiting(c, lead); /* a block or a hold changes what may start */
}

/* ------------------------------------------------------------------------------------ */
/* the chains */

static void undo_done(struct ctld *c, void *arg, const struct filter_result *r)
{
    (void)c;
    struct act_chain *ch = arg;
    ch->running = 0;
    ch->a->running--;
    if (r->end != FILTER_EXITED || r->code != 0)
        log_warn("job %u: undo of activation filter %s did not succeed", ch->a->job_id,
                 filter_name(ch->paths[ch->undo_left]));
    step(ch->a);
}

static void filter_done(struct ctld *c, void *arg, const struct filter_result *r)
{
    (void)c;
    struct act_chain *ch = arg;
    ch->running = 0;
    ch->a->running--;
    if (r->end == FILTER_EXITED && r->code == 0) {
        ch->passed++;
    } else {
        /* a non-zero exit stops the chain; time-outs and missing filters count as 2 */
        ch->verdict = r->end == FILTER_EXITED ? r->code : 2;
        log_info("job %u: activation filter %s: %s %d%s%s", ch->a->job_id,
                 filter_name(ch->paths[ch->passed]),
                 r->end == FILTER_EXITED    ? "exit"
                 : r->end == FILTER_TIMEOUT ? "timed out, as"
                 : r->end == FILTER_SIGNALED ? "killed, as"
                                             : "not found, as",
                 ch->verdict, r->first_err[0] ? ": " : "", r->first_err);
    }
    step(ch->a);
}

static int run(struct act_chain *ch, size_t k, int undo)
{
    struct activation *a = ch->a;
    char what[48];
    snprintf(what, sizeof(what), "job %u", a->job_id);
    const char *args[] = {ch->json, a->pass, a->position, a->backfill, ch->ncpus, NULL};
    const char *undo_args[] = {ch->json, "--undo", NULL};
    int err = filter_run_start(a->c, ch->paths[k], undo ? undo_args : args, what,
                               undo ? undo_done : filter_done, ch);
    if (!err) {
        ch->running = 1;
        a->running++;
    }
    return err;
}

static int any_stopped(const struct activation *a)
{
    for (size_t i = 0; i < a->ncomp; i++)
        if (a->chains[i].verdict > 0)
            return 1;
    return 0;
}

/* Move every chain on: the next filter while all goes well; once a chain stopped (the
 * unit will not start), the undos of every filter that passed, last first, chain by
 * chain; then the end. */
static void step(struct activation *a)
{
    if (!any_stopped(a) && !a->undoing_all) {
        for (size_t i = 0; i < a->ncomp; i++) {
            struct act_chain *ch = &a->chains[i];
            if (ch->running || ch->verdict >= 0)
                continue;
            if (ch->passed == ch->n)
                ch->verdict = 0;
            else if (run(ch, ch->passed, 0) != TS_OK)
                ch->verdict = 2; /* could not run: as a missing filter */
        }
    }
    int stopped = any_stopped(a) || a->undoing_all;
    for (size_t i = 0; stopped && i < a->ncomp; i++) {
        struct act_chain *ch = &a->chains[i];
        if (ch->running)
            continue;
        if (ch->undo_left == SIZE_MAX)
            ch->undo_left = ch->passed;
        while (ch->undo_left > 0 && run(ch, ch->undo_left - 1, 1) != TS_OK)
            ch->undo_left--; /* an undo that cannot run is skipped */
        if (ch->running)
            ch->undo_left--; /* undo_done names paths[undo_left] */
    }
    if (a->running)
        return;
    conclude(a);
}

static int copy_allocs(struct activation *a, const struct select_alloc *allocs)
{
    size_t total = 0;
    for (size_t i = 0; i < a->ncomp; i++)
        total += allocs[i].nnodes;
    a->allocs = calloc(a->ncomp, sizeof(*a->allocs));
    a->slots = calloc(total + 1, sizeof(*a->slots));
    if (!a->allocs || !a->slots)
        return TS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < a->ncomp; i++) {
        a->allocs[i].nodes = &a->slots[k];
        a->allocs[i].nnodes = allocs[i].nnodes;
        memcpy(&a->slots[k], allocs[i].nodes, allocs[i].nnodes * sizeof(*a->slots));
        k += allocs[i].nnodes;
    }
    return TS_OK;
}

static int prepare(struct activation *a, struct job *lead)
{
    struct ctld *c = a->c;
    char dir[900];
    if ((size_t)snprintf(dir, sizeof(dir), "%s/filters", c->conf->state_save_location) >=
            sizeof(dir) ||
        (mkdir(dir, 0700) != 0 && errno != EEXIST))
        return TS_ESYS;
    a->chains = calloc(a->ncomp, sizeof(*a->chains));
    if (!a->chains)
        return TS_ENOMEM;
    for (size_t i = 0; i < a->ncomp; i++) {
        struct act_chain *ch = &a->chains[i];
        const Tessera__JobRecord *r = job_component(lead, i)->rec;
        ch->a = a;
        ch->verdict = -1;
        ch->undo_left = SIZE_MAX;
        uint32_t cpus = 0;
        for (size_t k = 0; k < a->allocs[i].nnodes; k++)
            cpus += a->allocs[i].nodes[k].cpus;
        snprintf(ch->ncpus, sizeof(ch->ncpus), "%u", cpus);
        snprintf(ch->json, sizeof(ch->json), "%s/activate-%u.json", dir, r->job_id);
        if (conf_filters(c->conf, partition_of(c, r), CONF_FILTER_ACTIVATION, &ch->paths, &ch->n))
            return TS_ENOMEM;
        char *text = jobjson_dump_job(r->desc, r->job_id, r->het_job_id, r->het_job_offset);
        int fd = text ? open(ch->json, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
        size_t len = text ? strlen(text) : 0;
        int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
        if (fd >= 0 && close(fd) != 0)
            ok = 0;
        free(text);
        if (!ok)
            return TS_ESYS;
    }
    return TS_OK;
}

void filter_activate_start(struct ctld *c, struct job *lead, const struct select_alloc *allocs,
                           uint64_t pass, size_t position, int backfill)
{
    struct activation *a = find(c, lead->rec->job_id);
    if (a && (a->running || a->passed))
        return; /* its filters are being asked already, or agreed already */
    if (a && a->standing != SCHED_ACT_NONE && time(NULL) < a->retry_at)
        return; /* a verdict came after the cycle's snapshot: it stands until its time */
    if (!a) {
        if (!(a = calloc(1, sizeof(*a)))) {
            log_error("job %u: out of memory for its activation filters", lead->rec->job_id);
            return;
        }
        a->c = c;
        a->job_id = lead->rec->job_id;
        a->next = c->activations;
        c->activations = a;
    }
    free(a->allocs);
    free(a->slots);
    a->allocs = NULL;
    a->slots = NULL;
    free_chains(a);
    a->ncomp = job_ncomponents(lead);
    snprintf(a->pass, sizeof(a->pass), "%llu", (unsigned long long)pass);
    snprintf(a->position, sizeof(a->position), "%zu", position);
    snprintf(a->backfill, sizeof(a->backfill), "%d", backfill ? 1 : 0);
    int err = copy_allocs(a, allocs);
    if (!err)
        err = prepare(a, lead);
    if (err) {
        log_error("job %u: activation filters cannot run: %s; asked again later",
                  a->job_id, ts_strerror(err));
        free_chains(a);
        a->standing = SCHED_ACT_RESERVE;
        a->retry_at = time(NULL) + c->conf->filter_retry_interval;
        return;
    }
    /* held for it while they run; a unit that blocked the queue blocks it until it passes */
    if (a->standing != SCHED_ACT_BLOCK)
        a->standing = SCHED_ACT_RESERVE;
    a->retry_at = 0;
    a->asked = 1;
    log_verbose("job %u: asking its activation filters (pass %s, position %s, backfill %s)",
                a->job_id, a->pass, a->position, a->backfill);
    step(a);
}

/* ------------------------------------------------------------------------------------ */
/* the scheduler's side */

void filter_activate_unit(struct ctld *c, struct job *lead, time_t now, struct sched_unit *u)
{
    struct activation *a = find(c, lead->rec->job_id);
    if (!a)
        return;
    u->activation = a->standing;
    u->kept = a->standing == SCHED_ACT_RESERVE ? a->allocs : NULL;
    if (u->activation == SCHED_ACT_RESERVE && !u->kept)
        u->activation = SCHED_ACT_NONE; /* nothing to keep (dropped by a reconfigure) */
    u->retry = !a->running && !a->passed && a->standing != SCHED_ACT_FAIL &&
               now >= a->retry_at;
}

struct select_alloc *filter_activate_passed(struct ctld *c, struct job *lead)
{
    struct activation *a = find(c, lead->rec->job_id);
    return a && a->passed ? a->allocs : NULL;
}

void filter_activate_starting(struct ctld *c, struct job *lead)
{
    (void)c;
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        Tessera__JobDesc *d = job_component(lead, i)->rec->desc;
        d->has_hold_until = 0; /* saved with the start */
        d->hold_until = 0;
    }
    log_info("job %u: activation filters passed; starting it", lead->rec->job_id);
}

/* A "start" verdict the cycle acted on: forgotten once started, else undone. */
static void settle(struct activation *a, int started)
{
    if (started) {
        drop(a);
        return;
    }
    struct job *lead = job_find(&a->c->jobs, a->job_id);
    int pending = lead && lead->rec->state == TESSERA__JOB_STATE__JOB_PENDING;
    log_info("job %u: activation filters passed, but it did not start (%s)", a->job_id,
             !pending ? "no longer pending" : "held back, changed, or its resources went");
    undo_everything(a, !pending);
}

void filter_activate_settled(struct ctld *c, struct job *lead, int started)
{
    struct activation *a = find(c, lead->rec->job_id);
    if (a && a->passed)
        settle(a, started);
}

void filter_activate_settle_all(struct ctld *c)
{
    struct activation *a = c->activations;
    while (a) {
        struct activation *next = a->next; /* a may be dropped */
        if (a->passed)
            settle(a, 0);
        a = next;
    }
}

void filter_activate_housekeeping(struct ctld *c, time_t now)
{
    struct activation *a = c->activations;
    while (a) {
        struct activation *next = a->next;
        struct job *lead = job_find(&c->jobs, a->job_id);
        if (!a->running && (!lead || lead->rec->state != TESSERA__JOB_STATE__JOB_PENDING)) {
            if (a->passed)
                settle(a, 0); /* gone before a cycle started it: undone, then dropped */
            else
                drop(a);
        } else if (!a->running && !a->asked && now >= a->retry_at) {
            a->asked = 1; /* one cycle decides it again; its start asks the filters */
            job_changed_waiting(c, lead);
        }
        a = next;
    }
}

void filter_activate_job_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind != JOB_CHANGE_HOLD_UNTIL)
        return;
    struct job *lead = ch->job;
    struct activation *a = find(c, lead->rec->job_id);
    if (!a || a->running || a->standing != SCHED_ACT_HOLD)
        return;
    time_t now = time(NULL);
    int64_t until = hold_until(lead);
    a->retry_at = until > now ? (time_t)until : now;
    a->asked = 0;
}

void filter_activate_reconfigured(struct ctld *c)
{
    struct activation *next;
    for (struct activation *a = c->activations; a; a = next) {
        next = a->next; /* a may be dropped */
        if (a->running) {
            a->stale = 1; /* its placement used the old nodes: not started on it */
            continue;
        }
        if (a->passed) {
            settle(a, 0); /* the same: undone and asked again */
            continue;
        }
        free(a->allocs);
        free(a->slots);
        a->allocs = NULL;
        a->slots = NULL;
    }
}

void filter_activate_shutdown(struct ctld *c)
{
    while (c->activations)
        drop(c->activations);
}
