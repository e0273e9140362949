/* Job states and pending reasons with Slurm's names, shared by the controller and the
 * commands. Reason codes are stored in job records: append, never renumber. */
#ifndef TESSERA_COMMON_JOBSTATE_H
#define TESSERA_COMMON_JOBSTATE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

/* X(name, number, Slurm's text, sched): sched is 1 for the reasons the scheduler gives and
 * takes back itself, every cycle (a unit pending for one of them stays in its view), 0
 * for those something else must clear (a hold, a dependency, a begin time...). */
#define JOB_REASONS(X)                                                                   \
    X(JOB_REASON_NONE, 0, "None", 1)                                                     \
    X(JOB_REASON_PRIORITY, 1, "Priority", 1)                                             \
    X(JOB_REASON_RESOURCES, 2, "Resources", 1)                                           \
    X(JOB_REASON_DEPENDENCY, 3, "Dependency", 0)                                         \
    X(JOB_REASON_BEGIN_TIME, 4, "BeginTime", 0)                                          \
    X(JOB_REASON_HELD_USER, 5, "JobHeldUser", 0)                                         \
    X(JOB_REASON_HELD_ADMIN, 6, "JobHeldAdmin", 0)                                       \
    X(JOB_REASON_PARTITION_DOWN, 7, "PartitionDown", 0)                                  \
    X(JOB_REASON_PARTITION_INACTIVE, 8, "PartitionInactive", 0)                          \
    X(JOB_REASON_PARTITION_NODE_LIMIT, 9, "PartitionNodeLimit", 0)                       \
    X(JOB_REASON_PARTITION_TIME_LIMIT, 10, "PartitionTimeLimit", 0)                      \
    X(JOB_REASON_NODES_DOWN, 11, "ReqNodeNotAvail", 0)                                   \
    X(JOB_REASON_DEPENDENCY_NEVER, 12, "DependencyNeverSatisfied", 0)                    \
    X(JOB_REASON_DEADLINE, 13, "DeadLine", 0)                                            \
    X(JOB_REASON_NON_ZERO_EXIT, 14, "NonZeroExitCode", 0)                                \
    X(JOB_REASON_TIME_LIMIT, 15, "TimeLimit", 0)                                         \
    X(JOB_REASON_NODE_FAIL, 16, "NodeDown", 0)                                           \
    X(JOB_REASON_CANCELLED, 17, "None", 0)                                               \
    X(JOB_REASON_BAD_CONSTRAINTS, 18, "BadConstraints", 1)                               \
    X(JOB_REASON_LAUNCH_FAILED, 19, "JobLaunchFailure", 0)                               \
    X(JOB_REASON_SYSTEM_FAILURE, 20, "SystemFailure", 0)                                 \
    X(JOB_REASON_ACTIVATION_BLOCKED, 21, "ActivationBlocked", 1)                         \
    X(JOB_REASON_ACTIVATION_RESERVED, 22, "ActivationReserved", 1)                       \
    X(JOB_REASON_ACTIVATION_HOLD, 23, "ActivationHold", 1)                               \
    X(JOB_REASON_ACTIVATION_FAILED, 24, "ActivationFailed", 0)                           \
    X(JOB_REASON_DEDICATED_TIME, 25, "DedicatedTime", 1)                                 \
    X(JOB_REASON_MAX_RUNNING, 26, "MaxRunningLimit", 1)                                  \
    X(JOB_REASON_MAX_USER_RUNNING, 27, "MaxUserRunningLimit", 1)                         \
    X(JOB_REASON_MAX_GROUP_RUNNING, 28, "MaxGroupRunningLimit", 1)                       \
    X(JOB_REASON_RESOURCES_MAX, 29, "ResourcesMaxLimit", 1)                              \
    X(JOB_REASON_RESOURCES_AVAILABLE, 30, "ResourcesAvailableLimit", 1)                  \
    X(JOB_REASON_OUT_OF_MEMORY, 31, "OutOfMemory", 0)

enum job_reason {
#define JOB_REASON_ENUM(name, num, text, sched) name = num,
    JOB_REASONS(JOB_REASON_ENUM)
#undef JOB_REASON_ENUM
};

/* "PENDING", "RUNNING", ... ("UNKNOWN" for a state this build does not know). */
const char *jobstate_name(Tessera__JobState state);
/* squeue's two letters: "PD", "R", "S", "CG", "CD", "CA", "F", "TO", "NF", "PR", "BF",
 * "DL", "OOM". */
const char *jobstate_short(Tessera__JobState state);
/* Parse a state as squeue -t takes it: full or short name, case-insensitive. Returns 0
 * and sets *out, or -1. */
int jobstate_parse(const char *s, Tessera__JobState *out);
/* Finished: completed, cancelled, failed, timeout, node_fail, preempted, boot_fail,
 * deadline, out_of_memory. */
int jobstate_is_finished(Tessera__JobState state);

/* "Resources", "JobHeldUser", ... ("Unknown" for a code this build does not know). */
const char *jobreason_name(uint32_t reason);
/* Whether the scheduler decides this reason each cycle (the table's sched column): a
 * pending unit with it is eligible. 0 for unknown codes. */
int jobreason_scheduler_decides(uint32_t reason);

/* A job's id as users see it: "93+1" for a component of a het job, "93" for a plain one.
 * buf must hold 24 bytes. */
const char *jobstate_display_id(const Tessera__JobRecord *job, char *buf, size_t len);

/* Slurm's notice of OOM kills in a step, one line with its newline, into buf: "slurmstepd:
 * error: Detected 1 oom_kill event in StepId=12.batch. Some of the step tasks have been OOM
 * Killed." (step: "batch" or the step's number; job_id: the id the step is shown under).
 * The node daemon writes it to a batch job's error file, srun to its own. */
void jobstate_oom_notice(char *buf, size_t len, uint64_t kills, uint32_t job_id,
                         const char *step);

#endif
