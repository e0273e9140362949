/* The priority plugin interface (PriorityType=priority/NAME, plugins/priority/).
 *
 * A priority plugin decides the order in which the scheduler plugin sees the pending units
 * of a cycle, and which of them are greedy (a greedy unit that cannot start holds nobody
 * back: sched_unit.greedy). Like the scheduler it is pure: the controller fills one
 * policy_unit per unit (its keys: priority, queue, requested CPU time and memory, time
 * limit, wait, fair-share entity) and hands over the policy period in force and the
 * fair-share tree; the plugin reads no clock and does no I/O, so the simulator drives it
 * exactly as the controller does.
 *
 * priority/pbs applies a PBS-style policy file (docs/policies.md) and, without one, the
 * default order; priority/basic always applies the default order: the highest priority
 * (age, nice, size) first, then the lower job id.
 */
#ifndef TESSERA_COMMON_PRIORITY_H
#define TESSERA_COMMON_PRIORITY_H

#include "common/sched/policy.h"
#include "common/util/plugin.h"

#include <stddef.h>
#include <stdint.h>

#define PRIORITY_PLUGIN_TYPE "priority"

struct fairshare;

struct priority_view {
    int64_t now;
    const struct policy_set *policy;   /* the current period's values; NULL: no policy file */
    const struct fairshare *fairshare; /* the tree and its usage, when the policy orders
                                        * by fair share; else NULL */
};

struct priority_ops {
    struct plugin_header header;
    /* The plugin's state, from PriorityParameters (NULL or "": defaults). TS_OK, or a
     * ts_err with a one-line reason in errbuf. */
    int (*create)(const char *params, void **state, char *errbuf, size_t errlen);
    void (*destroy)(void *state);
    /* Reorder units[0..n) into the scheduler's order and set greedy[i] for the unit that
     * ends up at position i. TS_OK, or TS_ENOMEM with the units in an order still usable
     * (the caller then treats nobody as greedy). */
    int (*order)(void *state, const struct priority_view *view, struct policy_unit *units,
                 size_t n, unsigned char *greedy);
};

/* The default order (priority descending, then id ascending), shared by both plugins. */
void priority_default_order(struct policy_unit *units, size_t n);
/* create and destroy for a plugin without state (parameters ignored). */
int priority_stateless_create(const char *params, void **state, char *errbuf, size_t errlen);
void priority_stateless_destroy(void *state);

#endif
