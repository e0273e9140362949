/* Fair-share usage charged from job records (docs/policies.md, "Fair share"): allocated
 * CPU-seconds, charged to a job's entity at charging steps for what runs and when a
 * component stops running for the rest, the tree decayed over the time since the last
 * step before each.
 *
 * Pure: the time is a parameter and the caller says which entity a job is charged to, so
 * the controller (ctld/fairshare_usage.c, every 30 s on its clock) and the simulator
 * (contrib/sim/, at each simulated event) charge alike. */
#ifndef TESSERA_COMMON_SCHED_USAGE_H
#define TESSERA_COMMON_SCHED_USAGE_H

#include "tessera.pb-c.h"

#include <stdint.h>

struct fairshare;

/* The CPU-seconds r has to be charged at now when usage was charged up to charged_to:
 * its allocated CPUs times the seconds it ran since the latest of its start, charged_to
 * and its last resumption (suspend_time: a suspended job is not charged while
 * suspended). 0 when it does not run. */
double usage_cpu_seconds(const Tessera__JobRecord *r, int64_t charged_to, int64_t now);

/* A charging step at now, when at least interval seconds (>= 1) passed since *updated:
 * decays fs over that time with half_life (<= 0: no decay), moves *updated to now and
 * returns the time usage was charged up to before, from which the caller then charges
 * each running component (usage_cpu_seconds). -1 when no step is due; a clock that went
 * back (now < *updated) restarts charging from now. */
int64_t usage_step(struct fairshare *fs, int64_t *updated, int64_t now, int64_t interval,
                   int64_t half_life);

#endif
