/* The plan: when each node's CPUs and memory are free, from now into the future.
 *
 * The backfill scheduler and the trace simulator put every running job (until its time
 * limit) and every reservation made during a cycle into a plan as holds, then ask when and
 * where a job could start. A plan is pure data: times are passed in (int64 seconds, any
 * epoch), and it does no I/O, reads no clock and keeps no globals.
 *
 * Conventions
 * - Intervals are half-open: a hold on [start, end) frees its resources at end, so a job
 *   may start on them at end; free_during(a, b) looks at [a, b), so a hold that ends at a
 *   or starts at b does not count.
 * - end == PLAN_FOREVER: a hold without a known end (a running job without a time limit).
 * - Free = capacity - sum of the holds active at that time, at least 0: holds may
 *   overcommit a node (the controller's view may be slightly stale), and a node they
 *   overcommit is simply full. Sums are kept unclamped, so releasing such a hold restores
 *   exactly what was there.
 * - CPUs and memory are independent: the minimum free CPUs and the minimum free memory of
 *   an interval may come from different times. A job needs both throughout, so "both
 *   minimums suffice" is exactly "it fits the whole interval".
 * - The plan knows no job counts, --exclusive, features or node states: an exclusive job
 *   holds a node's every CPU and all its memory; down or drained nodes are left out of
 *   the node sets by the caller.
 *
 * Structure
 * Each node has a step function of what the holds use of it: a sorted array of change
 * points (time, CPUs used, memory used from that time on, how many hold starts and ends lie
 * at that time); before its first point a node is unused. A hold adds a point at its start
 * and one at its end (none for PLAN_FOREVER) and adds its amounts to the points in
 * between; a point goes away with the last hold starting or ending there, so the points
 * are a function of the set of holds and a release leaves the plan exactly as it was
 * before the hold, whatever came in between. Hold groups live in a slot table (ids carry a
 * generation, so a stale id is refused); the end times of holds are also kept in a treap
 * for plan_next_release.
 *
 * Costs (N nodes, k points on a node, w points inside a queried interval on the queried
 * nodes, H holds)
 *   plan_hold, plan_release   per entry O(log k + points under the hold + k) (the last for
 *                             the array insertion), plus O(log H) expected
 *   plan_free_during          O(nodes queried × log k + w)
 *   plan_next_release         O(log H) expected
 *   plan_earliest             O(n × log k + w) to start at `from` (n nodes queried, w
 *                             points in the first window), then O(log n) per point that
 *                             enters or leaves a node's window on the way to the answer
 *                             (each at most once: a sliding-window minimum per node), plus
 *                             one fit call per candidate time at which some node got freer
 *   plan_clone                O(N + points + hold entries) in a handful of allocations
 * Memory: 32 bytes a point, 16 bytes a hold entry, plus about 40 bytes a hold and 24 a
 * node. plan_earliest allocates about 40 bytes per queried node and 8 per point after
 * `from` on them for the duration of the call.
 */
#ifndef TESSERA_COMMON_PLAN_H
#define TESSERA_COMMON_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* The end of a hold that has none (a running job without a time limit). */
#define PLAN_FOREVER INT64_MAX

struct plan;

struct plan_node {
    uint32_t cpus;
    uint64_t mem_mb;
};

/* A group of holds added and released together; 0 is never an id. */
typedef uint64_t plan_hold_id;
#define PLAN_HOLD_NONE ((plan_hold_id)0)

/* A plan of n nodes (indexes 0..n-1) with these capacities and no holds. TS_OK or
 * TS_ENOMEM (*out NULL then). */
int plan_create(const struct plan_node *nodes, size_t n, struct plan **out);
/* NULL is ignored. */
void plan_destroy(struct plan *p);
/* An independent copy (a long cycle works on one while the loop changes the original);
 * hold ids of p are valid in the copy. TS_OK or TS_ENOMEM. */
int plan_clone(const struct plan *p, struct plan **out);
/* Drops every hold (their ids become invalid) and keeps the nodes and the memory, so the
 * next cycle fills it again without allocating. */
void plan_reset(struct plan *p);
size_t plan_node_count(const struct plan *p);

/* Holds cpus[i] CPUs and mem_mb[i] MB of node nodes[i] for i < n, all on [start, end), as
 * one group (a job's or a reservation's nodes): *id releases them together. A node may
 * appear more than once (the amounts add up). All or nothing: on error the plan is
 * unchanged. TS_EINVAL (n == 0, a node out of range, start >= end), TS_ENOMEM. */
int plan_hold(struct plan *p, const uint32_t *nodes, const uint32_t *cpus,
              const uint64_t *mem_mb, size_t n, int64_t start, int64_t end, plan_hold_id *id);
/* Gives back every hold of the group. Never allocates. TS_OK, or TS_ENOENT for an id that
 * is not held (0, released, from before plan_reset). */
int plan_release(struct plan *p, plan_hold_id id);

/* For k < n, the fewest CPUs and MB free on node nodes[k] at any time of [start, end)
 * (end == PLAN_FOREVER: from start on; end <= start: at the instant start) into
 * free_cpus[k] and free_mem[k]. nodes == NULL: node k itself. A node index out of range
 * reads as nothing free. */
void plan_free_during(const struct plan *p, int64_t start, int64_t end, const uint32_t *nodes,
                      size_t n, uint32_t *free_cpus, uint64_t *free_mem);

/* The first time after `after` (strictly) at which a hold ends: resources come back then,
 * unless another hold takes them at the same instant. PLAN_FOREVER when none does. */
int64_t plan_next_release(const struct plan *p, int64_t after);

/* The caller's placement attempt: nonzero when the job fits if free_cpus[k] CPUs and
 * free_mem[k] MB of node nodes[k] (the node set given to plan_earliest) are free for the
 * whole run starting at `start`. It must be monotone (with no less free on any node it
 * does not change a yes into a no) and must not change the plan; the arrays are valid only
 * during the call. */
typedef int (*plan_fit_fn)(void *arg, int64_t start, const uint32_t *free_cpus,
                           const uint64_t *free_mem);

/* The earliest start t of a job running `duration` seconds on nodes[0..n-1] (NULL: nodes
 * 0..n-1), asking fit with what is free on each throughout [t, t + duration).
 *
 * Tried in order: t = from, then the candidate times up to from + horizon (inclusive): the
 * times after `from` at which some resource of the given nodes is released (some node's
 * use of CPUs or memory drops), rounded up to from + a multiple of `resolution` (<= 1:
 * exact). Only at such times can a job that does not fit earlier begin to fit: in between
 * a window only loses free time. A candidate at which no node got freer than at the last
 * try is skipped (fit is monotone). A gap shorter than the duration is passed over, since
 * the window must hold for the whole run. Resolution bounds the fit calls to
 * horizon / resolution + 1, at the price of gaps that close between a release and the next
 * multiple.
 *
 * TS_OK with *start, TS_ENOENT when no tried time fits, TS_EINVAL (duration < 1,
 * horizon < 0, a node out of range, p, fit or start NULL), TS_ENOMEM. */
int plan_earliest(const struct plan *p, int64_t from, int64_t duration, int64_t horizon,
                  int64_t resolution, const uint32_t *nodes, size_t n, plan_fit_fn fit,
                  void *arg, int64_t *start);

#endif
