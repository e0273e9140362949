/* The controller's scheduling driver: when cycles run (docs/02-sched.md §2's triggers, coalesced:
 * at most one cycle queued, and at least sched_min_interval between two), what view the
 * scheduler plugin gets, and how its decisions are applied. */
#ifndef TESSERA_CTLD_SCHED_H
#define TESSERA_CTLD_SCHED_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <time.h>

struct ctld;
struct job;

enum sched_trigger {
    SCHED_TRIGGER_NEW,   /* a job became eligible (submitted, released, requeued, ...) */
    SCHED_TRIGGER_TERM,  /* a job ended: resources free */
    SCHED_TRIGGER_TIME,  /* sched_interval passed */
    SCHED_TRIGGER_CMD,   /* scontrol schedule */
    SCHED_TRIGGER_RECYC, /* the last cycle started exactly one job */
    SCHED_TRIGGER_FIRST, /* the controller started */
    SCHED_TRIGGER_NODE,  /* a node came, went or changed state */
    SCHED_TRIGGER_COUNT
};

/* Load SelectType and SchedulerType, arm the timer and the first cycle. */
int sched_init(struct ctld *c, char *errbuf, size_t errlen);
void sched_fini(struct ctld *c);
/* Drop a backfill cycle in progress (its snapshot points into the configuration that a
 * reconfiguration replaces) and plan afresh. */
void sched_abort(struct ctld *c);
/* sbatch --test-only: when and where the checked components of a submission would start;
 * fills expected_start, cpus, nodes and partition of out (malloc'd strings). TS_ENOENT:
 * not within the planning window. */
int sched_estimate(struct ctld *c, Tessera__JobDesc *const *descs, size_t n,
                   Tessera__SubmitResponse *out);
/* The policy file's values in force at now (ctld/sched_policy.c): prime or non-prime
 * time by HolidaysFile= (always prime without one). NULL without a policy file. */
struct policy_set;
const struct policy_set *sched_policy_now(const struct ctld *c, time_t now);
/* Ask for a cycle. */
void sched_trigger(struct ctld *c, enum sched_trigger why);
/* The scheduler's observer of job changes (ctld/job_change.h): a cycle when a unit may
 * start (SCHED_TRIGGER_NEW), a unit gave resources back (SCHED_TRIGGER_TERM), the nodes
 * changed (SCHED_TRIGGER_NODE) or the store takes commits again (SCHED_TRIGGER_TIME). */
struct job_change;
void sched_job_changed(struct ctld *c, const struct job_change *ch);
/* scontrol show sched. Strings point into static storage; triggers into *storage. */
void sched_fill_stats(struct ctld *c, Tessera__SchedStatsResponse *out,
                      Tessera__SchedTrigger *storage, Tessera__SchedTrigger **ptrs);

#endif
