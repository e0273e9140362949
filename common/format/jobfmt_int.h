/* What the jobfmt_*.c files share: the context and the values that squeue, scontrol and
 * the JSON document compute the same way (elapsed time, node and CPU counts, memory,
 * TRES, reasons). Not for use outside common/jobfmt*.c; the public interface is
 * common/format/jobfmt.h. */
#ifndef TESSERA_COMMON_JOBFMT_INT_H
#define TESSERA_COMMON_JOBFMT_INT_H

#include "common/format/jobfmt.h"
#include "common/util/memstream.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct hashmap;

struct jobfmt_ctx {
    time_t now;
    struct hashmap *users;  /* uid -> malloc'd name */
    struct hashmap *groups; /* gid -> malloc'd name */
    struct namecache *names; /* where names come from (NULL: the system, directly) */
    int details;            /* scontrol -d: DerivedExitCode and per-node lines in show job */
};

/* Large enough for any value squeue prints; longer values are cut (only free text such
 * as a 4 KiB comment could be). */
#define JOBFMT_VALUE_MAX 4096

/* The record's description, or an empty one when the record has none, so that getters
 * never test for NULL. */
const Tessera__JobDesc *jobfmt_desc(const Tessera__JobRecord *job);

/* s, or "(null)" / "" when s is NULL or empty: Slurm prints unset strings either way
 * depending on the field. */
const char *jobfmt_or_null(const char *s);
const char *jobfmt_or_empty(const char *s);
int jobfmt_is_set(const char *s);

/* Nodes and CPUs: the allocation once there is one, else the effective request. */
uint32_t jobfmt_num_nodes(const Tessera__JobRecord *job);
uint32_t jobfmt_num_cpus(const Tessera__JobRecord *job);
/* CPUs a node must offer: cpus-per-task times ntasks-per-node (Slurm's MinCPUsNode). */
uint32_t jobfmt_min_cpus_node(const Tessera__JobRecord *job);

/* Megabytes as Slurm prints them: "0", "100M", "1G" (divided by 1024 while exact). */
const char *jobfmt_mem_text(uint64_t mb, char *buf, size_t len);
/* The memory request: per CPU when --mem-per-cpu was given (*per_cpu = 1), else per
 * node; 0 when none. */
uint64_t jobfmt_min_mem(const Tessera__JobRecord *job, int *per_cpu);
/* "cpu=2,mem=200M,node=1,billing=2": the allocation, or the request while there is none;
 * mem is left out when unknown. */
const char *jobfmt_tres(const Tessera__JobRecord *job, char *buf, size_t len);

/* The first allocated node (Slurm's batch host), or "" when none. */
const char *jobfmt_batch_host(const Tessera__JobRecord *job, char *buf, size_t len);

/* Reason as squeue and the JSON show it: the free text detail when there is one. */
const char *jobfmt_reason_text(const Tessera__JobRecord *job);

/* The het job's component ids "123-127" ("123" for one component). */
const char *jobfmt_het_id_set(const Tessera__JobRecord *job, char *buf, size_t len);

/* Timestamps "YYYY-MM-DDTHH:MM:SS" in local time, or `unset` for 0. */
const char *jobfmt_time_text(int64_t t, const char *unset, char *buf, size_t len);

/* When the job starts or started, as squeue, scontrol and the JSON document show it: for
 * a pending job the scheduler's planned start (expected_start; 0 when it has none),
 * otherwise start_time. */
int64_t jobfmt_start_time(const Tessera__JobRecord *job);
/* When the job ends or is expected to: for a pending job with a planned start, that
 * start plus the time limit, for a running or suspended one its start plus its (current)
 * limit and the time it spent suspended, or 0 with *open_ended set when the limit is
 * unlimited (Slurm: "EndTime=Unknown", squeue "NONE"); otherwise end_time (*open_ended 0). */
int64_t jobfmt_end_time(const Tessera__JobRecord *job, int *open_ended);

/* Exit code "code:signal". */
const char *jobfmt_exit_text(int32_t status, char *buf, size_t len);

/* Whether the job would be requeued (Slurm's default with JobRequeue=1: yes). */
int jobfmt_requeue(const Tessera__JobRecord *job);

#endif
