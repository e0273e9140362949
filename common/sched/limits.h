/* The running-job limits (docs/policies.md, "Running-job limits" and "Resource limits"):
 * MaxRunning, MaxUserRunning and MaxGroupRunning for the cluster and per partition (a het
 * job counts as one job per component), ResourcesMax (what one unit may ask for, its
 * components summed, its longest limit) and ResourcesAvailable (what the running jobs may
 * hold together; where it names nothing, ResourcesMax's value is the cap, PBS's rule).
 *
 * Pure: the counts are built from the job records the caller hands in, so the controller
 * (ctld/sched_limits.c) and the simulator (contrib/sim/) decide alike. Counts of one
 * scheduling cycle grow with its starts, so that neither its view nor its starts pass a
 * limit. */
#ifndef TESSERA_COMMON_SCHED_LIMITS_H
#define TESSERA_COMMON_SCHED_LIMITS_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

struct conf;
struct limit_counts;

/* Whether conf sets any of the limits. */
int limits_configured(const struct conf *conf);

/* Empty counts under conf's limits (conf must outlive them); NULL when conf sets none, or
 * when out of memory: then nothing is held back. */
struct limit_counts *limits_create(const struct conf *conf);
/* NULL is ignored. */
void limits_destroy(struct limit_counts *lc);

/* Counts r when it runs (running or suspended: suspended jobs count as running); other
 * states are ignored. TS_OK or TS_ENOMEM. */
int limits_add_running(struct limit_counts *lc, const Tessera__JobRecord *r);

/* The reason (a job_reason code: MaxRunningLimit, ..., ResourcesAvailableLimit) why the
 * pending unit of components[0..n) may not start now, 0 when it may (always with lc
 * NULL). */
uint32_t limits_reason(const struct limit_counts *lc, const Tessera__JobRecord *const *components,
                       size_t n);

#endif
