/* The scheduler plugin interface (SchedulerType=sched/NAME, plugins/sched/).
 *
 * A scheduler plugin decides which pending jobs start now and on what. It is pure: the
 * controller hands it a view (pending units in priority order, the nodes with what
 * running jobs hold and until when, the select plugin to place components) and gets
 * decisions back: start this unit with these placements, or why it waits and when it
 * is expected to start. It does no I/O and reads no clock (now is in the view), so the
 * simulator and the unit tests drive exactly the code the controller runs. The
 * controller checks every decision again before applying it.
 *
 * A plugin has state (sched_ops.create/destroy): a backfill plugin keeps its plan of
 * reservations between cycles, so that event-driven cycles start a lower-priority job
 * only when it delays no reservation, and the records of docs/02-sched.md §5.2's two-mode cycle.
 *
 * A unit is a whole job: a plain job, or every component of a heterogeneous job, which
 * starts all at once or not at all.
 */
#ifndef TESSERA_COMMON_SCHED_H
#define TESSERA_COMMON_SCHED_H

#include "common/sched/select.h"
#include "common/util/plugin.h"

#include <stddef.h>
#include <stdint.h>

#define SCHED_PLUGIN_TYPE "sched"

/* An end or a limit that is not known: a running job without a time limit. */
#define SCHED_NO_END INT64_MAX

/* What an activation filter last said about a unit (docs/05-filters.md §3), as the controller keeps
 * it until the filter is asked again: the scheduler honours it meanwhile. */
enum sched_activation {
    SCHED_ACT_NONE,    /* nothing standing: decide as usual */
    SCHED_ACT_BLOCK,   /* "block the queue": it does not start, nor does any unit after it */
    SCHED_ACT_RESERVE, /* "keep the resources": it does not start, its candidate resources
                        * (sched_unit.kept) stay held for it, others go on */
    SCHED_ACT_HOLD,    /* "hold until a time": it does not start and holds nothing until
                        * the controller lets its filter be asked again (retry) */
    SCHED_ACT_FAIL,    /* "fail the job": it never starts; retry does not apply */
};

struct sched_unit {
    uint32_t id;                         /* the leader's job id */
    uint32_t priority;                   /* the highest of its components' */
    size_t ncomponents;
    const struct select_request *reqs;   /* one per component */
    const uint32_t *partitions;          /* each component's partition (an index) */
    const int64_t *time_limits;          /* each component's limit in seconds (the
                                          * partition's MaxTime already applied); <= 0:
                                          * none, so it is never backfilled */
    enum sched_activation activation;    /* a standing filter verdict (docs/05-filters.md §3) */
    int retry;                           /* its filter may be asked again now: decide as
                                          * usual (a start goes to the filter first) */
    const struct select_alloc *kept;     /* SCHED_ACT_RESERVE: per component, the
                                          * candidate resources held for it */
    int greedy;                          /* when it cannot start it neither reserves nor
                                          * holds back the units after it: they start
                                          * wherever they fit (a policy file's
                                          * strict_fifo: false). 0: it does (Slurm's
                                          * rule, and strict_fifo: true) */
};

/* What one running job component holds, node by node, until its expected end. */
struct sched_hold {
    int64_t end;                         /* start + time limit, or SCHED_NO_END */
    const struct select_node_alloc *nodes;
    size_t nnodes;
};

enum sched_kind {
    SCHED_EVENT,    /* event-driven: start what fits now, in priority order */
    SCHED_BACKFILL, /* plan ahead: reservations, backfill, expected starts */
};

struct sched_view {
    enum sched_kind kind;
    int64_t now;
    /* An event-driven cycle may stop after the first default_queue_depth units (Slurm's
     * SchedulerParameters key); a timed one (sched_interval) sets this to look at all. */
    int full_queue;
    /* The nodes as running jobs hold them now. The plugin may change alloc_cpus,
     * alloc_mem_mb, jobs and exclusive of this copy as it decides (it is scratch for the
     * cycle). */
    struct select_node *nodes;
    size_t nnodes;
    size_t npartitions;
    const struct sched_hold *holds;      /* the running components */
    size_t nholds;
    const struct sched_unit *units;      /* eligible pending units, in priority order */
    size_t nunits;
    const struct select_ops *select;
    /* Asked between units of a long cycle: nonzero means "give the caller's loop a turn
     * now" (schedule returns SCHED_MORE and is called again with the same view and
     * decisions to go on). NULL: never. The caller owns the clock this reads. */
    int (*should_yield)(void *arg);
    void *yield_arg;
    /* Set by the caller on the calls that go on with a yielded cycle; 0 starts a new one
     * (a cycle the caller abandoned is forgotten). */
    int resume;
};

enum sched_verdict {
    SCHED_UNDECIDED,  /* no decision in this cycle (the caller leaves the unit as it was) */
    SCHED_START,      /* start now with the placements given */
    SCHED_RESOURCES,  /* waits for resources (the first waiting unit of its partitions) */
    SCHED_PRIORITY,   /* waits behind a higher-priority unit of its partitions */
    SCHED_NEVER,      /* cannot run on the nodes as configured (reason BadConstraints) */
    SCHED_BLOCK,      /* its standing activation verdict blocks the queue */
    SCHED_RESERVE,    /* waits on its standing activation verdict, its resources kept */
    SCHED_HOLD,       /* held by its standing activation verdict (reason ActivationHold) */
    SCHED_FAIL,       /* fail it: "activation filter failed the job" */
};

/* One decision per unit, in the order of the view. For SCHED_START, allocs[i] (the
 * caller's storage: one select_alloc per component, each with room for the component's
 * eligible node count) holds component i's placement. */
struct sched_decision {
    enum sched_verdict verdict;
    struct select_alloc *allocs;
    int64_t expected_start; /* a waiting unit's planned start; 0: not known (the caller
                             * zeroes it) */
    int reserved;           /* it holds a reservation in the plan from expected_start */
};

enum sched_status {
    SCHED_DONE = 0, /* every decision is made */
    SCHED_MORE = 1, /* yielded: call schedule again to go on */
};

struct sched_ops {
    struct plugin_header header;
    /* The plugin's state, configured by SchedulerParameters ("bf_window=60,..."; NULL or
     * "" for the defaults; keys it does not know are ignored, as other plugins own them).
     * TS_OK, or a ts_err with a one-line reason in errbuf. */
    int (*create)(const char *params, void **state, char *errbuf, size_t errlen);
    void (*destroy)(void *state);
    /* Decide for the units of the view: decisions[i] belongs to units[i]. SCHED_MORE
     * when it yielded: the caller calls again, with the same view (resume set) and
     * decisions, before applying any of them or starting another cycle of this kind (an
     * event-driven cycle may run in between, with its own view). */
    enum sched_status (*schedule)(void *state, struct sched_view *view,
                                  struct sched_decision *decisions);
    /* sbatch --test-only: when and where unit u (not in the view's queue) would start
     * given the running jobs of the view and the reservations of the last plan. TS_OK
     * with *start (now or later) and allocs[i] the placement expected then, TS_ENOENT
     * when it does not fit within the planning window, or SELECT_NEVER's TS_EINVAL. */
    int (*estimate)(void *state, struct sched_view *view, const struct sched_unit *u,
                    int64_t *start, struct select_alloc *allocs);
};

#endif
