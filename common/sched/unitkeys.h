/* The order keys of a pending unit, from its job records (docs/policies.md, "Sort keys").
 *
 * What the priority plugin compares: the unit's priority (its components' highest), its
 * queue (the first component's partition and that partition's PriorityTier), its
 * requested CPU time, time limit and memory (its components summed; the longest limit),
 * and how long it has waited since it became eligible. Pure: the time is a parameter, and
 * nothing is read but the records and the configuration, so the controller
 * (ctld/sched_order.c) and the simulator (contrib/sim/) order the same unit alike. */
#ifndef TESSERA_COMMON_SCHED_UNITKEYS_H
#define TESSERA_COMMON_SCHED_UNITKEYS_H

#include "common/sched/policy.h"

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

struct conf;
struct fairshare;

/* The keys of the unit of components[0..n) (n >= 1, in offset order) at now, into *out;
 * conf (may be NULL) gives the partition's tier. fs_entity is -1, fs_norm 0 and owner
 * NULL: the caller's. */
void unitkeys_fill(const Tessera__JobRecord *const *components, size_t n,
                   const struct conf *conf, int64_t now, struct policy_unit *out);

/* fs_norm of units[0..n) from their fs_entity in fs: once every entity is in the tree,
 * since a name added under "unknown" changes its siblings' shares. */
void unitkeys_set_shares(const struct fairshare *fs, struct policy_unit *units, size_t n);

#endif
