/* sched/builtin: the event-driven scheduler.
 *
 * Units are walked in priority order. A unit starts when every one of its components
 * fits now (a het job all at once, never in part). Per partition the walk stops at the
 * first unit that cannot start: later units of that partition wait behind it ("never
 * jump the queue", docs/02-sched.md §3.2), so a wide job is not starved by a stream of small ones.
 * A unit that touches a blocked partition waits too. A unit that could not run even on an
 * empty cluster blocks nobody, and neither does a greedy one (a policy file's strict_fifo:
 * false): the units after it start wherever they fit.
 *
 * Standing activation verdicts (docs/05-filters.md §3) are honoured as sched/backfill honours them:
 * a blocking unit stops every unit after it (also while its filter is asked again), a
 * reserving one keeps its resources (taken off the view) and the others go on, a held one
 * waits holding nothing, a failed one is failed.
 */
#include "common/sched/sched.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

/* What a started unit holds comes off the scratch view, so later units see it. */
static void consume(struct sched_view *view, const struct select_request *req,
                    const struct select_alloc *a)
{
    for (size_t i = 0; i < a->nnodes; i++) {
        struct select_node *n = &view->nodes[a->nodes[i].node];
        n->alloc_cpus += a->nodes[i].cpus;
        n->alloc_mem_mb += a->nodes[i].mem_mb;
        n->jobs++;
        if (req->exclusive)
            n->exclusive = 1;
    }
}

static int touches_blocked(const struct sched_unit *u, const unsigned char *blocked)
{
    for (size_t c = 0; c < u->ncomponents; c++)
        if (blocked[u->partitions[c]])
            return 1;
    return 0;
}

static enum select_result place_unit(struct sched_view *view, const struct sched_unit *u,
                                     struct select_alloc *allocs,
                                     struct select_node_alloc *scratch)
{
    const struct select_view sv = {.nodes = view->nodes, .nnodes = view->nnodes,
                                   .scratch = scratch};
    if (u->ncomponents == 1)
        return view->select->place(&sv, &u->reqs[0], &allocs[0]);
    return view->select->place_het(&sv, u->reqs, u->ncomponents, allocs);
}

/* Stateless: every cycle looks only at now. */
static int create(const char *params, void **state, char *errbuf, size_t errlen)
{
    (void)params;
    (void)errbuf;
    (void)errlen;
    *state = NULL;
    return TS_OK;
}

static void destroy(void *state)
{
    (void)state;
}

/* A standing activation verdict decides u (1), or it is decided as usual (0). */
static int standing(struct sched_view *view, const struct sched_unit *u,
                    struct sched_decision *d, int *queue_blocked)
{
    if (u->activation == SCHED_ACT_FAIL) {
        d->verdict = SCHED_FAIL;
        return 1;
    }
    if (u->activation == SCHED_ACT_BLOCK)
        *queue_blocked = 1; /* after this unit, whatever becomes of it */
    if (u->retry || u->activation == SCHED_ACT_NONE)
        return 0;
    switch (u->activation) {
    case SCHED_ACT_HOLD: d->verdict = SCHED_HOLD; break;
    case SCHED_ACT_BLOCK: d->verdict = SCHED_BLOCK; break;
    default:
        for (size_t c = 0; u->kept && c < u->ncomponents; c++)
            consume(view, &u->reqs[c], &u->kept[c]);
        d->verdict = SCHED_RESERVE;
        break;
    }
    return 1;
}

static enum sched_status schedule(void *state, struct sched_view *view,
                                  struct sched_decision *decisions)
{
    (void)state;
    unsigned char *blocked = calloc(view->npartitions + 1, 1);
    struct select_node_alloc *scratch = calloc(view->nnodes + 1, sizeof(*scratch));
    int queue_blocked = 0;
    for (size_t i = 0; i < view->nunits; i++) {
        const struct sched_unit *u = &view->units[i];
        struct sched_decision *d = &decisions[i];
        if (queue_blocked && u->activation != SCHED_ACT_FAIL) {
            d->verdict = SCHED_PRIORITY;
            continue;
        }
        if (standing(view, u, d, &queue_blocked))
            continue;
        if (!blocked || !scratch || touches_blocked(u, blocked)) {
            d->verdict = SCHED_PRIORITY;
            continue;
        }
        switch (place_unit(view, u, d->allocs, scratch)) {
        case SELECT_OK:
            for (size_t c = 0; c < u->ncomponents; c++)
                consume(view, &u->reqs[c], &d->allocs[c]);
            d->verdict = SCHED_START;
            break;
        case SELECT_BUSY:
            d->verdict = SCHED_RESOURCES;
            for (size_t c = 0; !u->greedy && c < u->ncomponents; c++)
                blocked[u->partitions[c]] = 1;
            break;
        default:
            d->verdict = SCHED_NEVER;
            break;
        }
    }
    free(blocked);
    free(scratch);
    return SCHED_DONE;
}

/* Now or never: without a plan there is no later start to promise. */
static int estimate(void *state, struct sched_view *view, const struct sched_unit *u,
                    int64_t *start, struct select_alloc *allocs)
{
    (void)state;
    struct select_node_alloc *scratch = calloc(view->nnodes + 1, sizeof(*scratch));
    if (!scratch)
        return TS_ENOMEM;
    enum select_result r = place_unit(view, u, allocs, scratch);
    free(scratch);
    if (r == SELECT_OK)
        *start = view->now;
    return r == SELECT_OK ? TS_OK : r == SELECT_BUSY ? TS_ENOENT : TS_EINVAL;
}

const struct sched_ops tessera_plugin = {
    .header = {.type = SCHED_PLUGIN_TYPE, .name = "sched/builtin",
               .abi_version = PLUGIN_ABI_VERSION},
    .create = create,
    .destroy = destroy,
    .schedule = schedule,
    .estimate = estimate,
};
