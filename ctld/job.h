/* Jobs in the controller: the table, persistence, lookup by the ids users type, and the
 * operations of docs/01-hetjob.md §4. docs/job-states.md describes states, reasons and transitions.
 *
 * Every component of a job is a struct job holding its JobRecord (the protobuf that is
 * stored under its id in the "jobs" database). The components of a het job are linked:
 * each points at its leader, and the leader holds them all in offset order. A plain job
 * is a job of one component whose record has het_job_id 0.
 */
#ifndef TESSERA_CTLD_JOB_H
#define TESSERA_CTLD_JOB_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ctld;
struct hashmap;
struct step;
struct job_dep;
struct job_deps;
struct job_same_name;

struct job {
    Tessera__JobRecord *rec;   /* owned: built by protobuf-c's unpack, freed by free_unpacked */
    struct job *leader;        /* the leader component (itself for the leader, and for a
                                * plain job) */
    struct job **components;   /* leader only: het_size components in offset order */
    struct job *prev, *next;   /* every job in id order */
    struct step *steps;        /* its steps, ascending id (ctld/step.h) */
    uint64_t bf_cycle;         /* leader: the last backfill cycle that planned it (0: none) */
    int acct_state;            /* state + 1 of the last accounting record written (0: none
                                * since this controller started) */
    int64_t acct_start, acct_end; /* its start and end times */
    /* leader: its dependency parsed, with its last answer, and its place among the
     * unfinished units of its user and name (singleton); ctld/job_depend.c */
    struct job_dep *dep;
    struct job_same_name *same_name;
    struct job *same_prev, *same_next;
};

struct job_table {
    struct hashmap *by_id;     /* job_id -> struct job */
    struct job *head, *tail;
    size_t count;
    struct job_deps *deps;     /* who depends on whom (ctld/job_depend.c); NULL: nobody yet */
};

int job_table_init(struct job_table *t);
void job_table_fini(struct job_table *t);
struct job *job_find(const struct job_table *t, uint32_t job_id);
/* Unlink and free one component (the caller deals with its siblings). */
void job_table_remove(struct job_table *t, struct job *j);

/* Whole het jobs and plain jobs are "units"; this is the number of components. */
static inline size_t job_ncomponents(const struct job *j)
{
    return j->leader->rec->het_size ? j->leader->rec->het_size : 1;
}
static inline struct job *job_component(const struct job *j, size_t i)
{
    return j->leader->components ? j->leader->components[i] : j->leader;
}
static inline int job_is_het(const struct job *j)
{
    return j->rec->het_job_id != 0;
}

/* --- persistence (ctld/job_store.c) ------------------------------------------------- */

/* Rebuild the table from the "jobs" database at start-up. */
int job_table_load(struct ctld *c, char *errbuf, size_t errlen);
/* Queue the component's record in the open batch (durable at the next commit). */
int job_save(struct ctld *c, struct job *j);
/* Queue the deletion of its record and drop it from the table (frees j). */
int job_forget(struct ctld *c, struct job *j);
/* Insert a new component (rec is adopted) and link het components once all are in. */
struct job *job_insert(struct job_table *t, Tessera__JobRecord *rec);
int job_link_het(struct job_table *t, struct job *leader);

/* --- resolution of ids as typed (ctld/job_lookup.c) --------------------------------- */

enum job_scope {
    JOB_SCOPE_DISPLAY, /* squeue/scontrol show: "93" leader = all, "93+0" = leader alone */
    JOB_SCOPE_ACTION,  /* cancel/hold/release: "93" and "93+0" leader = whole job */
};

/* The components an id string means, in offset order, into out[] (at most max).
 * whole_hetjob applies docs/01-hetjob.md §3.3's rule to a non-leader's own id. *whole is set when
 * the id means the whole job. Returns the count, or a negative ts_err (TS_EINVALID_JOB_ID). */
int job_resolve(const struct job_table *t, const char *text, enum job_scope scope,
                int whole_hetjob, struct job **out, size_t max, int *whole);

/* --- submission and update (ctld/job_submit.c, ctld/job_update.c) -------------------- */

struct conf_partition;

/* --nice and scontrol update Nice= lie within -JOB_NICE_MAX..JOB_NICE_MAX. */
#define JOB_NICE_MAX 10000

/* What checking a component yields: its partition and effective request. */
struct job_sizing {
    const struct conf_partition *part;
    int64_t time_limit; /* seconds, or -1 for unlimited */
    uint32_t min_nodes;
    uint32_t ntasks;
    uint32_t cpus_per_task;
};

/* Check one component as a job of its own (partition, limits, nodes that could ever run
 * it); fills *s. Returns a ts_err with Slurm's meaning. */
int job_check_component(struct ctld *c, const Tessera__JobDesc *d, size_t offset, int admin,
                        struct job_sizing *s, char *why, size_t len);
void job_apply_sizing(Tessera__JobRecord *r, const struct job_sizing *s);
/* Check and store every component of a submission (all or none); *leader_id is the first
 * id. errbuf names the failing component of a het job. The records are queued in the open
 * batch: reply after the commit. */
int job_submit(struct ctld *c, const Tessera__SubmitRequest *req, uid_t uid, gid_t gid,
               const char *host, uint32_t *leader_id, char *errbuf, size_t errlen);
/* scontrol update: the present fields of u->changes (and its relative time limit), on the
 * components u->job_id means; why may get a more precise text than the error's own. */
int job_update(struct ctld *c, const Tessera__JobUpdateRequest *u, uid_t uid, char *why,
               size_t len);

/* --- limits (ctld/job_limits.c) ------------------------------------------------------ */

/* The text fields of a description against their maxima (one table): TS_OK, or the
 * field's error with a line naming it in why. Submissions and updates. */
int job_limits_check_fields(const Tessera__JobDesc *d, char *why, size_t len);
/* The fields, and the script, environment and arguments against MaxScriptSize,
 * MaxEnvSize, MaxEnvCount and the argument bounds: TS_ESCRIPT_TOOBIG, TS_EENV_TOOBIG... */
int job_limits_check_payload(const struct ctld *c, const Tessera__JobDesc *d, char *why,
                             size_t len);
/* Room for ncomponents more jobs: TS_EMAX_JOB_COUNT (MaxJobCount: every job record in
 * memory, finished ones until MinJobAge included, one per component) or
 * TS_EACCOUNTING_POLICY (MaxSubmitJobs: the user's pending and running components). */
int job_limits_check_counts(const struct ctld *c, size_t ncomponents, uid_t uid);
/* Everything above for a whole submission (counts not for test_only), before filters. */
int job_limits_check_submission(const struct ctld *c, const Tessera__SubmitRequest *req,
                                uid_t uid, char *why, size_t len);

/* --- life (ctld/job_ops.c) ---------------------------------------------------------- */

/* One action on the components an id means (docs/01-hetjob.md §3.3). Returns a ts_err. */
struct job_signal_req {
    uint32_t signo;                 /* JOB_ACTION_SIGNAL */
    Tessera__JobSignalScope scope;  /* which processes (scancel -b, -f); SIGKILL: all */
};
int job_action_by_id(struct ctld *c, Tessera__JobAction kind, const char *text, uid_t uid,
                     const struct job_signal_req *sig);
/* The filters of squeue and scancel: a job matches when it matches each list given
 * (an empty list matches everything); with no states, finished jobs match only when
 * all_states is set. */
struct job_filter {
    const uint32_t *uids;
    size_t nuids;
    char *const *partitions;
    size_t npartitions;
    const Tessera__JobState *states;
    size_t nstates;
    int all_states;
    char *const *names;
    size_t nnames;
    char *const *qos;
    size_t nqos;
    char *const *accounts;
    size_t naccounts;
    const struct hashmap *nodes; /* names of nodes: jobs allocated any of them (NULL: any) */
};
int job_filter_matches(const struct job_filter *f, const struct job *j);
/* The most items one filter list of a query or action may hold. */
#define JOB_FILTER_MAX_ITEMS 1024

/* Root or SlurmUser (rpc_conf_roles: the same answer the RPC role column gets). */
int job_is_admin(const struct ctld *c, uid_t uid);
/* The rule "the job's owner or an administrator", for requests any user may send that
 * touch one job (its script, its steps, its allocation, sbcast to its nodes). */
int job_owner_or_admin(const struct ctld *c, const struct job *j, uid_t uid);
/* The reason a pending job waits for, from what the controller knows without a
 * scheduler (holds, begin time, dependencies, partition state). */
void job_update_reason(struct ctld *c, struct job *j, time_t now);
/* Dependencies (ctld/job_depend.c): TS_OK when spec is well formed and names existing
 * jobs (checked at submission and update), else TS_EDEPENDENCY. The text may be this long;
 * its items, once duplicates are dropped, this many. */
#define JOB_DEP_MAX_TEXT (256 * 1024)
#define JOB_DEP_MAX_ITEMS 1000
int job_dependency_check(const struct ctld *c, const char *spec, char *why, size_t len);
enum { JOB_DEP_OK, JOB_DEP_WAIT, JOB_DEP_NEVER };
/* Whether j's unit may start as far as its dependency goes: the answer is kept and
 * computed again only when something it depends on changed. */
int job_dependency_state(const struct ctld *c, const struct job *j, time_t now);
/* (Re)read j's unit's dependency text and index it; after it is inserted, updated or
 * loaded (a text that no longer parses is never satisfied). TS_OK or TS_ENOMEM. */
int job_dependency_attach(struct ctld *c, struct job *j);
/* The dependencies' observer of job changes (ctld/job_change.h): when j was saved, the
 * units depending on its unit answer again. */
struct job_change;
void job_dependency_changed(struct ctld *c, const struct job_change *ch);
/* j leaves the table (job_table_remove calls it); the indexes, and the table's end. */
void job_deps_forget(struct job_table *t, struct job *j);
void job_deps_free(struct job_table *t);
void job_dep_free(struct job_dep *dep);

/* Once a second: pending reasons that time changes (begin times, dependencies), and
 * finished jobs older than MinJobAge leave memory and the state. */
void job_housekeeping(struct ctld *c, time_t now);

/* --- running jobs (ctld/job_run.c) ------------------------------------------------- */

struct node;
struct select_alloc;

/* The highest priority of the unit's components: its place in the queue. */
uint32_t job_unit_priority(const struct job *leader);
/* Every component's pending reason brought up to date (holds, begin time, dependencies,
 * partition states); what the scheduler last said stands otherwise. */
void job_unit_refresh_reasons(struct ctld *c, struct job *leader, time_t now);
/* Pending, and waiting for nothing but the scheduler, by the reasons as they stand: call
 * job_unit_refresh_reasons first for a decision of now. */
int job_unit_eligible(const struct job *leader);
/* More components than this is a mistake, not a job. */
#define JOB_MAX_COMPONENTS 128
/* Start every component on its placement (allocs[i] for component i); the batch script
 * is launched once the start is durable. */
int job_start_unit(struct ctld *c, struct job *leader, struct select_alloc *allocs);
/* Every unfinished component ends in state; status (wait status) is the leader's. */
void job_end_unit(struct ctld *c, struct job *leader, Tessera__JobState state, int status);
/* The same with the reason every component keeps (a job_reason code), stored with the
 * end: a reason set after the end would miss its accounting record. */
void job_end_unit_reason(struct ctld *c, struct job *leader, Tessera__JobState state,
                         int status, uint32_t reason);
/* Stop the unit's processes (SIGTERM, KillWait, SIGKILL); it ends in final when its
 * batch script reports, or at once when none runs. final PENDING means requeue. */
void job_terminate_unit(struct ctld *c, struct job *leader, Tessera__JobState final);
/* The terminate of a unit that is ending, again to one node that still lists it (the first
 * may have been lost while its daemon restarted; a daemon already ending it goes on). */
void job_terminate_resend(struct ctld *c, struct job *leader, const char *node);
/* One component of a running het job ends alone (its processes are signalled). */
void job_end_component(struct ctld *c, struct job *j, Tessera__JobState state);
/* A running component keeps its first keep nodes (scontrol update NumNodes=): the others
 * go back to the scheduler and their daemons stop what it runs there. */
int job_shrink_component(struct ctld *c, struct job *j, uint32_t keep);
void job_requeue_unit(struct ctld *c, struct job *leader);
/* scancel --signal: the signal to the unit's processes that scope names. */
void job_signal_unit(struct ctld *c, struct job *leader, int signo, Tessera__JobSignalScope scope);
/* --signal=SIG without @TIME: seconds before the time limit (as Slurm). */
#define JOB_WARN_SECS_DEFAULT 60
void job_suspend_unit(struct ctld *c, struct job *leader, int resume);
/* A node daemon reported the end of a batch script. */
void job_batch_ended(struct ctld *c, const Tessera__JobCompleteRequest *msg);
/* Whether a started, unfinished component of the unit holds resources on node. */
int job_unit_uses_node(const struct job *leader, const char *node);
/* Units with a component on n end NODE_FAIL (or are requeued when they asked). */
void job_node_failed(struct ctld *c, struct node *n);
void job_node_failed_unit(struct ctld *c, struct job *leader);
/* Components past their time limit are terminated (TIMEOUT). */
void job_check_time_limits(struct ctld *c, time_t now);

/* An allocation's command ended (salloc): its processes on the nodes are stopped and the
 * unit ends in state with the command's wait status. */
void job_finish_allocation(struct ctld *c, struct job *leader, Tessera__JobState state,
                           int status);

/* --- interactive allocations (ctld/job_alloc.c) ------------------------------------- */

/* The allocation waiters' observer of job changes (ctld/job_change.h): when a job was
 * saved or forgotten, waiters whose job reached its state are answered. */
void job_alloc_changed(struct ctld *c, const struct job_change *ch);
/* Drop the waiters (at shutdown). */
void job_alloc_fini(struct ctld *c);
/* An allocation without a script started: nobody waiting for it must claim it soon. */
void job_alloc_started(struct ctld *c, struct job *leader);
/* Once a second: unclaimed allocations past their deadline are cancelled. */
void job_alloc_housekeeping(struct ctld *c, time_t now);

/* The default priority of a new component (FIFO by id, shifted by nice). */
uint32_t job_default_priority(const Tessera__JobRecord *rec);

/* What all of the job's components hold on node (ctld/job_run.c): their memory summed,
 * their CPU indices united into *cpu_ids (malloc'd, "" for none). The node daemon limits
 * the job's container to this (docs/containment.md §3). */
int job_node_share(const struct job *leader, const char *node, uint64_t *mem_mb,
                   char **cpu_ids);

#endif
