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

/* A filter failed the unit (exit 4, now or standing): it ends FAILED and says why. */
void filter_activate_fail_unit(struct ctld *c, struct job *lead);

/* Whether any component of the unit has activation filters. */
int filter_activate_applies(struct ctld *c, struct job *lead);

/* The scheduler would start the unit on allocs (one per component): ask its filters
 * first. While they run the candidate resources stay held for it (it stands as
 * "reserve"); all 0 starts it there, otherwise the strongest verdict stands. pass: the
 * scheduling cycle's number; position: the unit's place in the queue (1 first);
 * backfill: the cycle was a backfill one. */
void filter_activate_start(struct ctld *c, struct job *lead, const struct select_alloc *allocs,
                           uint64_t pass, size_t position, int backfill);

/* A unit whose filters all passed stands "start" (docs/05-filters.md §3.12) until the next scheduling
 * cycle acts on it, through the checks of every start. The placements they agreed to (one
 * per component, owned here), or NULL when no "start" stands. In the view it stands as
 * "reserve", its placements kept, not to be asked again. */
struct select_alloc *filter_activate_passed(struct ctld *c, struct job *lead);
/* The cycle starts it there: its HoldUntil is cleared (saved with the start). */
void filter_activate_starting(struct ctld *c, struct job *lead);
/* The cycle acted on the "start": once started it is forgotten; not started (the
 * resources went, a running-job limit holds it back) every filter is undone and asked
 * again (or the unit forgotten, when no longer pending). */
void filter_activate_settled(struct ctld *c, struct job *lead, int started);
/* After an event-driven cycle: every "start" still standing was not in its view (held,
 * held back by a limit, ...): settled as not started. */
void filter_activate_settle_all(struct ctld *c);

/* For the scheduler's view: the standing verdict on the unit, whether its filters may be
 * asked again now, and the resources kept for it (valid until the cycle's view is freed;
 * the cycle must not outlive a reconfigure, which drops every kept placement). */
void filter_activate_unit(struct ctld *c, struct job *lead, time_t now, struct sched_unit *u);

/* Once a second: a scheduling cycle when a standing verdict may be asked again; forget
 * units that are gone or no longer pending. */
void filter_activate_housekeeping(struct ctld *c, time_t now);

/* The activation filters' observer of job changes (ctld/job_change.h): when the unit's
 * HoldUntil was set (scontrol update), a standing hold now lasts until then. */
struct job_change;
void filter_activate_job_changed(struct ctld *c, const struct job_change *ch);

/* Reconfigure: node indexes may change, so kept placements are dropped (the units are
 * asked again). */
void filter_activate_reconfigured(struct ctld *c);

void filter_activate_shutdown(struct ctld *c);

#endif
