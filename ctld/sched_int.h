/* Inside the scheduling driver: a cycle's snapshot of the controller's state, built by
 * ctld/sched_view.c and decided on by ctld/sched.c.
 *
 * A snapshot owns everything the plugin reads (requests, constraints, placements, the
 * running jobs' holds) and names jobs by id, never by pointer: a backfill cycle yields to
 * the event loop between units, and meanwhile jobs may end, be cancelled or change. */
#ifndef TESSERA_CTLD_SCHED_INT_H
#define TESSERA_CTLD_SCHED_INT_H

#include "common/sched/sched.h"
#include "common/sched/select.h"
#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct ctld;
struct job;

struct cycle {
    enum sched_kind kind;
    int64_t now;
    struct sched_view view;
    struct select_node *nodes;
    size_t nnodes;
    struct sched_unit *units;
    struct sched_decision *decisions;
    uint32_t *ids;                    /* each unit's leader id */
    size_t nunits, ncomps;
    /* per component, every unit's back to back */
    struct select_request *reqs;
    uint32_t *parts;
    int64_t *limits;
    struct select_alloc *allocs;
    uint32_t **eligible, **required; /* eligible[k] NULL: the partition's shared list */
    uint32_t **part_nodes;           /* per partition, its nodes ascending (shared by the
                                      * components without -w or -x), built on demand */
    size_t *part_count;
    size_t nparts;
    char **constraints;
    struct select_node_alloc **slots;
    /* copies of the resources kept for units under a standing "reserve" verdict: the
     * cycle may yield, and the verdict change, before the plugin reads them */
    void **kept_copies;
    size_t nkept;
    /* the running components */
    struct sched_hold *holds;
    struct select_node_alloc *held;   /* every hold's nodes, back to back */
    size_t nholds;
    /* how long it took, yields included */
    uint64_t started_us, work_us, slice_start_us;
    uint64_t yields;
};

/* The snapshot of kind for now: the nodes, the running components and the eligible
 * pending units in priority order. */
int sched_cycle_build(struct ctld *c, struct cycle *cy, enum sched_kind kind, time_t now);
/* A snapshot of the nodes and running components with one unit: the components of a
 * submission checked by job_submit (sbatch --test-only). */
int sched_cycle_build_one(struct ctld *c, struct cycle *cy, Tessera__JobDesc *const *descs,
                          size_t n, time_t now);
void sched_cycle_free(struct cycle *cy);

/* ctld/sched_order.c: the order of pending units (the default priority, or the policy
 * file's order: sort keys, fair share, round robin) and, per unit in that order, whether
 * it is greedy (strict_fifo off: sched_unit.greedy). */
void sched_order_units(struct ctld *c, struct job **leaders, size_t n, unsigned char *greedy);
/* The records of a unit's components in offset order (malloc'd; NULL when out of
 * memory), their count in *n. */
const Tessera__JobRecord **sched_unit_records(struct job *lead, size_t *n);
/* ctld/sched_limits.c: the running-job limits of common/sched/limits.h over the
 * controller's jobs. The counts of what runs now (NULL when no limit is configured);
 * whether a unit may start on top of them (if not its reason says which limit); a start
 * counted. */
struct limit_counts;
struct limit_counts *sched_limits_count(struct ctld *c);
void sched_limits_free(struct limit_counts *lc);
int sched_limits_allow(struct ctld *c, struct limit_counts *lc, struct job *lead);
void sched_limits_started(struct ctld *c, struct limit_counts *lc, struct job *lead);

/* ctld/sched_order.c: the priority plugin (PriorityType=), loaded and created by
 * sched_init (errors into errbuf), destroyed and unloaded by sched_fini. */
int sched_order_init(struct ctld *c, char *errbuf, size_t errlen);
void sched_order_fini(struct ctld *c);
/* The priority plugin's order of units (and their greedy flags); the default order while
 * no plugin is loaded. */
struct priority_view;
struct policy_unit;
int sched_priority_order(struct ctld *c, const struct priority_view *view,
                         struct policy_unit *units, size_t n, unsigned char *greedy);

/* ctld/sched_policy.c: whether dedicated time lets the unit start now; if not its reason
 * says so. */
int sched_policy_admits(struct ctld *c, struct job *lead, time_t now);

#endif
