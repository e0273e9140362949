/* The scheduler plugin interface (SchedulerType=sched/NAME, plugins/sched/).
 *
 * A scheduler plugin decides which pending jobs start now and on what. It is pure: the
 * controller hands it a view (pending units in priority order, the nodes with what
 * running jobs hold, the select plugin to place components) and gets decisions back:
 * start this unit with these placements, or why it waits. It does no I/O and reads no
 * clock (now is in the view), so the simulator and the unit tests drive exactly the code
 * the controller runs. The controller checks every decision again before applying it.
 *
 * A unit is a whole job: a plain job, or every component of a heterogeneous job, which
 * starts all at once or not at all.
 */
#ifndef TESSERA_COMMON_SCHED_H
#define TESSERA_COMMON_SCHED_H

#include "common/plugin.h"
#include "common/select.h"

#include <stddef.h>
#include <stdint.h>

#define SCHED_PLUGIN_TYPE "sched"

struct sched_unit {
    uint32_t id;                         /* the leader's job id */
    uint32_t priority;                   /* the highest of its components' */
    size_t ncomponents;
    const struct select_request *reqs;   /* one per component */
    const uint32_t *partitions;          /* each component's partition (an index) */
};

struct sched_view {
    int64_t now;
    /* The nodes as running jobs hold them. The plugin may change alloc_cpus,
     * alloc_mem_mb, jobs and exclusive of this copy as it decides (it is scratch for the
     * cycle). */
    struct select_node *nodes;
    size_t nnodes;
    size_t npartitions;
    const struct sched_unit *units;      /* eligible pending units, in priority order */
    size_t nunits;
    const struct select_ops *select;
};

enum sched_verdict {
    SCHED_START,      /* start now with the placements given */
    SCHED_RESOURCES,  /* waits for resources (the first waiting unit of its partitions) */
    SCHED_PRIORITY,   /* waits behind a higher-priority unit of its partitions */
    SCHED_NEVER,      /* cannot run on the nodes as configured (reason BadConstraints) */
};

/* One decision per unit, in the order of the view. For SCHED_START, allocs[i] (the
 * caller's storage: one select_alloc per component, each with room for the component's
 * eligible node count) holds component i's placement. */
struct sched_decision {
    enum sched_verdict verdict;
    struct select_alloc *allocs;
};

struct sched_ops {
    struct plugin_header header;
    /* Decide for every unit of the view; decisions[i] belongs to units[i]. Returns how
     * many units it starts. */
    size_t (*schedule)(struct sched_view *view, struct sched_decision *decisions);
};

#endif
