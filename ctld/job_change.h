/* One notion of "a job changed" in the controller (docs/architecture.md, "Job changes").
 *
 * The job lifecycle (submission, updates, actions, starts, ends, requeues, the activation
 * filters' verdicts) reports each change here, once, and so do the two changes outside
 * jobs that decide what jobs may start on (the nodes, and the store taking commits
 * again); the observers registered at start-up
 * hear it in the order they were registered, all on the loop thread and before the
 * change's batch is committed (so what they queue is durable with it, and what they
 * answer waits for that commit). The controller registers, in this order
 * (ctld_observe_jobs in ctld/ctld.c):
 *
 *   1. accounting (ctld/acct.c): a stored record's accounting record, into the same batch
 *   2. dependencies (ctld/job_depend.c): the units depending on it answer again
 *   3. steps (ctld/step_mgr.c): a unit's end ends its steps still running
 *   4. allocation waiters (ctld/job_alloc.c): salloc's waits are looked at again (they
 *      are answered after the commit)
 *   5. fair share (ctld/fairshare_usage.c): what a component used until it stops running
 *   6. activation filters (ctld/filter_activate.c): a standing hold follows HoldUntil
 *   7. the scheduler (ctld/sched.c): a cycle when a unit may start, resources came free,
 *      the nodes changed or the store takes commits again
 *
 * Each observer acts on the kinds it cares about and ignores the others. The job
 * lifecycle calls nothing else of the observers: they may depend on it, not it on them. */
#ifndef TESSERA_CTLD_JOB_CHANGE_H
#define TESSERA_CTLD_JOB_CHANGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct ctld;
struct job;

enum job_change_kind {
    JOB_CHANGE_SAVED,     /* a component's record was queued in the open batch (job_save) */
    JOB_CHANGE_FORGOTTEN, /* a component left the table and the state (job_forget) */
    JOB_CHANGE_WAITING,   /* a unit may start that could not before: submitted, released,
                           * updated, requeued, a begin time or dependency passed, an
                           * activation verdict given or ended */
    JOB_CHANGE_ENDED,     /* a unit ended (every component is finished) */
    JOB_CHANGE_FREED,     /* a running unit gave resources back: a component ended alone,
                           * or it shrank */
    JOB_CHANGE_STOPPING,  /* a running component is about to stop running (it ends, is
                           * requeued or suspended); its record is still as it ran */
    JOB_CHANGE_HOLD_UNTIL, /* the unit's HoldUntil was set (scontrol update) */
    JOB_CHANGE_NODES,     /* no job's: nodes registered, responded again or were updated */
    JOB_CHANGE_STORE_BACK, /* no job's: commits work again after failing */
};

struct job_change {
    enum job_change_kind kind;
    uint32_t job_id;      /* the component's id (SAVED, FORGOTTEN), else the leader's */
    struct job *job;      /* the component (SAVED, STOPPING) or the unit's leader
                           * (WAITING, ENDED, FREED, HOLD_UNTIL); NULL for FORGOTTEN (the
                           * component is freed), NODES and STORE_BACK */
    int stored;           /* SAVED: its record is in the open batch (0: the store refused
                           * it; the change stands in memory) */
    time_t now;           /* ENDED: the end time; STOPPING: the time it stops */
};

typedef void job_observer_fn(struct ctld *c, const struct job_change *ch);

/* At most this many observers. */
#define JOB_OBSERVERS_MAX 8

/* Add fn after those registered already. TS_ENOMEM when JOB_OBSERVERS_MAX are. */
int job_change_observe(struct ctld *c, job_observer_fn *fn);
/* The observers in the order they hear changes (count; *out points into c). */
size_t job_change_observers(const struct ctld *c, job_observer_fn *const **out);
/* Tell every observer, in order. */
void job_changed(struct ctld *c, const struct job_change *ch);

/* The changes the lifecycle reports, in one call each. */
void job_changed_waiting(struct ctld *c, struct job *leader);
void job_changed_freed(struct ctld *c, struct job *leader);
void job_changed_ended(struct ctld *c, struct job *leader, time_t now);
void job_changed_stopping(struct ctld *c, struct job *j, time_t now);
void job_changed_hold_until(struct ctld *c, struct job *leader);
void job_changed_nodes(struct ctld *c);
void job_changed_store_back(struct ctld *c);

#endif
