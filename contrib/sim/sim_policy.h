/* A policy file's order in the simulator (contrib/sim/sim_policy.c): the simulated jobs as
 * the controller's job records, the waiting jobs as the priority plugin (priority/pbs)
 * orders them under one period's values, and the fair-share usage the simulated jobs
 * charge (processors x seconds, decayed with half_life), through the controller's pure
 * core (common/sched/). Internal to the simulator library. */
#ifndef TESSERA_CONTRIB_SIM_SIM_POLICY_H
#define TESSERA_CONTRIB_SIM_SIM_POLICY_H

#include "contrib/sim/sim.h"
#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

struct sim_policy_state;

/* The record the controller would hold for jobs[j] (arrival position j) as it stands:
 * pending, or running since its start; d is its description. The priority falls with
 * arrival; the estimate is the time limit. Nothing is allocated: r points into d. */
void sim_job_record(const struct sim_job *jobs, size_t j, Tessera__JobRecord *r,
                    Tessera__JobDesc *d);

/* For jobs[0..njobs) (arrival order) under set, ordered by the priority plugin; fs (may be
 * NULL) is charged and read. Each job's fair-share entity is the tree node whose id is its
 * user (group with egroup), else its number as a name (under "unknown"). TS_OK, or
 * TS_ENOMEM or the plugin's error with a reason in errbuf. */
int sim_policy_create(const struct policy_set *set, const struct priority_ops *priority,
                      struct fairshare *fs, const struct sim_job *jobs, size_t njobs,
                      struct sim_policy_state **out, char *errbuf, size_t errlen);
void sim_policy_destroy(struct sim_policy_state *p);

/* Decay the usage to now and charge running[0..n) (job indexes) for the time since the
 * last charge. */
void sim_policy_advance(struct sim_policy_state *p, const struct sim_job *jobs,
                        const size_t *running, size_t n, int64_t now);
/* Charge job j, which ends at now, for the time since the last charge. */
void sim_policy_job_ended(struct sim_policy_state *p, const struct sim_job *jobs, size_t j,
                          int64_t now);

/* Reorder waiting[0..n) (job indexes) for now; greedy[i]: the job at position i holds
 * nobody back when it waits (strict_fifo off, not starving). TS_OK or TS_ENOMEM (the
 * order is left, nobody greedy). */
int sim_policy_order(struct sim_policy_state *p, const struct sim_job *jobs, size_t *waiting,
                     size_t n, int64_t now, unsigned char *greedy);

#endif
