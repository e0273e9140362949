/* Activation filters (docs/05-filters.md §3, docs/filters.md): asked when the scheduler is about to
 * start a unit; their verdict stands on the unit until they may be asked again. */
#ifndef TESSERA_CTLD_FILTER_ACTIVATE_H
#define TESSERA_CTLD_FILTER_ACTIVATE_H

#include "common/sched/sched.h"
#include "common/sched/select.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct ctld;
struct job;

/* Whether any component of the unit has activation filters. */
int filter_activate_applies(struct ctld *c, struct job *lead);

/* The scheduler would start the unit on allocs (one per component): ask its filters
 * first. While they run the candidate resources stay held for it (it stands as
 * "reserve"); all 0 starts it there, otherwise the strongest verdict stands. pass: the
 * scheduling cycle's number; position: the unit's place in the queue (1 first);
 * backfill: the cycle was a backfill one. */
void filter_activate_start(struct ctld *c, struct job *lead, const struct select_alloc *allocs,
                           uint64_t pass, size_t position, int backfill);

/* For the scheduler's view: the standing verdict on the unit, whether its filters may be
 * asked again now, and the resources kept for it (valid until the cycle's view is freed;
 * the cycle must not outlive a reconfigure, which drops every kept placement). */
void filter_activate_unit(struct ctld *c, struct job *lead, time_t now, struct sched_unit *u);

/* Once a second: a scheduling cycle when a standing verdict may be asked again; forget
 * units that are gone or no longer pending. */
void filter_activate_housekeeping(struct ctld *c, time_t now);

/* scontrol update HoldUntil= on the unit: a standing hold now lasts until then. */
void filter_activate_hold_changed(struct ctld *c, struct job *lead);

/* Reconfigure: node indexes may change, so kept placements are dropped (the units are
 * asked again). */
void filter_activate_reconfigured(struct ctld *c);

void filter_activate_shutdown(struct ctld *c);

#endif
