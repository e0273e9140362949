/* The node daemon's job containers (ProctrackType=proctrack/cgroup; docs/containment.md):
 * a batch script's waiter goes into its job's step_batch folder and every step daemon
 * into its step's folder before they start user code, so all the job starts on the node,
 * detached or not, is in them and under the job's limits (memory, CPUs, processes). A
 * step's end kills what is left of the step; a job's end kills what is left of the job;
 * both folders are removed once empty. Suspending a job freezes it. With proctrack/pgid
 * (the default) or CgroupPlugin=none all of this does nothing and process groups are what
 * is tracked. */
#ifndef TESSERA_NODED_CONTAINMENT_H
#define TESSERA_NODED_CONTAINMENT_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct noded;
struct nd_step_id;
struct stepstatus_usage;

/* The node's containers, when the configuration asks for them. A node that must contain
 * jobs and cannot keeps serving but runs nothing: nd->contain_failure says why, and the
 * node is drained with that reason when it registers. */
void containment_open(struct noded *nd);
/* Pending removals given up, the hierarchies closed. */
void containment_close(struct noded *nd);
/* 1 when jobs may run here (containment works or is not asked for). */
int containment_ready(const struct noded *nd);

/* What a job holds on this node, from the controller's launch or signed step layout. */
struct containment_alloc {
    uint64_t mem_mb;       /* 0: no memory limit */
    const char *cpu_ids;   /* the node's CPU indices ("0-1,3"); NULL or "": all */
};

/* pid (which has not run user code yet) into the unit's container: step NULL is the batch
 * script's, else the step's; made when missing with the job's limits (a removal still
 * pending for the job is called off). */
int containment_enter(struct noded *nd, uint32_t job_id, const struct nd_step_id *step,
                      pid_t pid, const struct containment_alloc *alloc);
/* The batch script (step NULL) or the step ended: what is left of it is killed, what it
 * used is put into usage (when a container measured it: times, the peak memory of the
 * whole unit, OOM kills), and its folder removed once empty. */
void containment_unit_end(struct noded *nd, uint32_t job_id, const struct nd_step_id *step,
                          struct stepstatus_usage *usage, int *has_usage);
/* The job has nothing left here: whatever is still in its container is killed, and the
 * container removed once empty (retried a while; a line in the log when it stays). */
void containment_job_end(struct noded *nd, uint32_t job_id);
/* Suspend (1) or resume (0) the whole job. TS_ENOENT without containers: the caller
 * signals instead. */
int containment_freeze(struct noded *nd, uint32_t job_id, int frozen);
/* After recovery: containers of jobs this daemon does not run (an earlier life's, whose
 * processes outlived it) are killed and removed. */
void containment_reclaim(struct noded *nd);

#endif
