/* The trace simulator (contrib/sim/, docs/simulator.md).
 *
 * Replays a workload through the real scheduler and select plugins in simulated time: no
 * daemons, no sleeping, no clock. Events are submissions and job ends, in simulated
 * seconds; after all the events of one second, one SCHED_BACKFILL cycle decides with
 * now = that second. The scheduler sees what the controller would show it: waiting jobs in
 * arrival order (priority falling with arrival), each with its estimate as time limit, and
 * running jobs held until start + estimate, while they really end at start + run time.
 *
 * The machine is one partition of identical nodes, all up, with more memory than anyone
 * asks for. A job of p processors asks for p tasks of one CPU on at least one node; jobs
 * larger than the machine are dropped and counted.
 *
 * The library is what tessera-sim (main.c) runs and what tests/sim/ drives directly.
 */
#ifndef TESSERA_CONTRIB_SIM_SIM_H
#define TESSERA_CONTRIB_SIM_SIM_H

#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/sched/priority.h"
#include "common/sched/sched.h"
#include "common/sched/select.h"
#include "contrib/sim/swf.h"

#include <stddef.h>
#include <stdint.h>

/* ---- a simulation ---- */

struct sim;
struct conf;

struct sim_config {
    uint32_t nodes;                  /* >= 1 */
    uint32_t cpus_per_node;          /* >= 1 */
    const char *sched_params;        /* for the scheduler's create(); NULL: its defaults */
    const struct select_ops *select;
    const struct sched_ops *sched;
    /* One period's values of a policy file (docs/policies.md): the waiting jobs are
     * ordered as the controller orders them (sort keys, starving jobs, fair share) and
     * are greedy with strict_fifo off. NULL: arrival order, each waiting job holding the
     * later ones back. */
    const struct policy_set *policy;
    const struct priority_ops *priority; /* applies policy (priority/pbs); needed with it */
    /* The fair-share tree to charge (processors x seconds) and order by, the caller's
     * (its usage changes); a job's entity is the node whose id is its user (or group,
     * with fairshare_entity: egroup), else its number under "unknown". NULL: none. */
    struct fairshare *fairshare;
    /* The running-job limits of a tessera.conf (MaxRunning, MaxUserRunning,
     * MaxGroupRunning, ResourcesMax, ResourcesAvailable: docs/policies.md), decided as the
     * controller decides them (common/sched/limits.c) for the trace's users and groups; a
     * partition's limits do not apply (the simulated partition is none of conf's). The
     * caller's, kept until sim_destroy. NULL: none. */
    const struct conf *limits;
};

/* One job of the simulation: the trace's record and what became of it. */
struct sim_job {
    struct swf_job swf;
    int64_t start;  /* -1 until it starts */
    int64_t end;    /* start + run time */
    uint32_t nnodes; /* the nodes it runs on (0 until it starts) */
};

struct sim_stats {
    size_t jobs;            /* simulated */
    size_t dropped;         /* larger than the machine */
    double mean_wait;       /* seconds */
    double mean_bsld;       /* bounded slowdown, SIM_BSLD_TAU */
    double utilisation;     /* processor-seconds used / available over the makespan */
    int64_t first_submit;
    int64_t last_end;
    int64_t makespan;       /* last_end - first_submit */
    int64_t max_wait;       /* the longest wait: the window must reach at least this far */
    uint64_t cycles;        /* scheduling cycles run */
    uint64_t units;         /* waiting jobs shown to them, over all cycles */
};

/* Slowdowns of jobs shorter than this are measured against it, so that a 1-second job
 * that waited a minute does not dominate the mean. */
#define SIM_BSLD_TAU 10

/* Checks the configuration, keeps a copy of the jobs (sorted into arrival order: submit
 * time, then id), drops those larger than the machine and creates the scheduler's state
 * with cfg->sched_params. TS_OK, TS_EINVAL (a bad configuration, or the scheduler refused
 * its parameters) or TS_ENOMEM, with a one-line reason in errbuf. */
int sim_create(const struct sim_config *cfg, const struct swf_job *jobs, size_t njobs,
               struct sim **out, char *errbuf, size_t errlen);
/* NULL is ignored. */
void sim_destroy(struct sim *s);

/* Replays every job to its end. TS_OK, TS_ENOMEM, or TS_EINVAL when the scheduler did
 * something the simulation must not accept (a start beyond a node's CPUs or of the wrong
 * size, or no start at all while the machine is empty and jobs wait), with the time and
 * the job in errbuf. */
int sim_run(struct sim *s, char *errbuf, size_t errlen);

/* The simulated jobs in arrival order (dropped ones are not among them). */
size_t sim_job_count(const struct sim *s);
const struct sim_job *sim_job_at(const struct sim *s, size_t i);

/* The metrics of docs/simulator.md over the simulated jobs (after sim_run). */
void sim_stats(const struct sim *s, struct sim_stats *out);

/* The same per user of the trace, so that policies can be compared user by user. */
struct sim_user_stats {
    int32_t user;       /* the trace's field 12; -1: unknown */
    size_t jobs;
    double mean_wait;   /* seconds */
    double mean_bsld;
};
/* Users in ascending order (malloc'd into *out, the count returned); 0 and NULL when no
 * job ran or out of memory. */
size_t sim_user_stats(const struct sim *s, struct sim_user_stats **out);

/* ---- setting one up (sim_setup.c) ---- */

enum sim_policy {
    SIM_POLICY_FCFS,
    SIM_POLICY_EASY,
    SIM_POLICY_CONSERVATIVE,
    SIM_POLICY_DEFAULT,
};

/* "fcfs", "easy", "conservative", "default". TS_OK or TS_EINVAL. */
int sim_policy_parse(const char *name, enum sim_policy *out);
const char *sim_policy_name(enum sim_policy p);

/* A bf_window (minutes) that covers any queue the trace can build: the sum of all
 * estimates, which no job can wait beyond, capped at SIM_WINDOW_MAX_MIN. */
#define SIM_WINDOW_MAX_MIN (366 * 24 * 60)
int64_t sim_window_minutes(const struct swf_job *jobs, size_t n);

/* The SchedulerParameters of a policy with bf_window=window_min, then extra's entries
 * ("key=value,flag", may be NULL): each replaces an entry of the same key or is added.
 * malloc'd; NULL when out of memory. */
char *sim_policy_params(enum sim_policy p, int64_t window_min, const char *extra);

/* The plugins a simulation runs. */
struct sim_plugins {
    struct plugin *select_plugin;
    struct plugin *sched_plugin;
    struct plugin *priority_plugin;
    const struct select_ops *select;
    const struct sched_ops *sched;
    const struct priority_ops *priority;
};

#define SIM_SELECT_TYPE "select/consumable"
#define SIM_SCHED_TYPE "sched/backfill"
#define SIM_PRIORITY_TYPE "priority/pbs"

/* Loads select/consumable, sched_name (NULL: SIM_SCHED_TYPE) and priority/pbs from dir.
 * TS_OK, or
 * plugin_load's error with its reason in errbuf (nothing stays loaded then). */
int sim_plugins_load(const char *dir, const char *sched_name, struct sim_plugins *out,
                     char *errbuf, size_t errlen);
/* Unloads what is loaded; a zeroed struct is fine. */
void sim_plugins_unload(struct sim_plugins *p);

#endif
