/* How commands print jobs and partitions, as Slurm 22.05 prints them: squeue's
 * "-o %.18i %.9P ..." formats and "-O JobID:10,Name" field lists, squeue --json, and the
 * text of "scontrol show job" and "scontrol show partition".
 *
 * Pure functions of the records and a context (the current time, user and group names):
 * no I/O besides name lookups, so the unit tests check exact text.
 */
#ifndef TESSERA_COMMON_JOBFMT_H
#define TESSERA_COMMON_JOBFMT_H

#include "common/job/stdpath.h"

#include "tessera.pb-c.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* squeue's default format. */
#define JOBFMT_SQUEUE_DEFAULT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
/* squeue --start's: expected start times and the nodes planned (%Y). */
#define JOBFMT_SQUEUE_START "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"

struct jobfmt;     /* a compiled squeue format */
struct jobfmt_ctx; /* now, and caches of user and group names */

struct jobfmt_ctx *jobfmt_ctx_create(time_t now);
void jobfmt_ctx_destroy(struct jobfmt_ctx *ctx);
/* The context's "now". */
time_t jobfmt_ctx_now(const struct jobfmt_ctx *ctx);
/* User and group names for ids (cached; the number as text when unknown). */
const char *jobfmt_user_name(struct jobfmt_ctx *ctx, uint32_t uid);
const char *jobfmt_group_name(struct jobfmt_ctx *ctx, uint32_t gid);
/* Take names from a name cache (the controller's) instead of asking the system. */
struct namecache;
void jobfmt_ctx_set_names(struct jobfmt_ctx *ctx, struct namecache *names);
/* scontrol's -d count: from 1, "scontrol show job" adds DerivedExitCode=, JOB_GRES= and a
 * line per group of nodes holding the same CPU indices and memory (Nodes= CPU_IDs= Mem=
 * GRES=). */
void jobfmt_ctx_set_details(struct jobfmt_ctx *ctx, int level);

/* Compile a "-o/--format" string ("%.18i %.9P %R", with literal text between fields) or a
 * "-O/--Format" list ("JobID:10,Name:.20,State"). Errors (ts_err TS_EOPTVALUE) name the
 * bad field in errbuf, worded as Slurm's squeue does ("Invalid job format specification:
 * @"). Slurm only warns about an unknown field and prints the rest; here it is an error,
 * so that a typo does not go unnoticed in a script's output.
 * "-o": "%[.][width]X"; "." right-justifies; a value longer than the width is cut; no
 * width (or 0) is the value's own width; "%%" is a percent sign.
 * "-O": "Name[:[.][width][suffix]]", names case-insensitive, width 20 by default, the
 * suffix printed after the column; "%i" and "-O JobArrayID" print "93+1", "-O JobID" the
 * component's own id, as in Slurm. */
int jobfmt_compile(const char *format, struct jobfmt **out, char *errbuf, size_t errlen);
int jobfmt_compile_fields(const char *fields, struct jobfmt **out, char *errbuf, size_t errlen);
void jobfmt_free(struct jobfmt *fmt);

/* The header line and one line per job, each malloc'd and ending in "\n". */
char *jobfmt_header(const struct jobfmt *fmt);
char *jobfmt_row(const struct jobfmt *fmt, const Tessera__JobRecord *job,
                 struct jobfmt_ctx *ctx);


/* Where a job's standard streams go, as scontrol and squeue -O STDOUT show it: the
 * pattern given (or slurm-%j.out; errors go with the output unless -e was given; input
 * is /dev/null by default; "none" is /dev/null), below the work dir when relative, with
 * %j (job id), %u (user), %x (job name), %A (job id) and %a (no array task: 4294967294,
 * as Slurm) filled in; %N, %s, %J, %t, %n, %% and the rest are left for the node to
 * fill, as scontrol leaves them. One pass: what an escape inserts is not expanded again.
 * malloc'd, NULL when out of memory. (common/format/jobfmt.c, through common/job/stdpath.c) */
char *jobfmt_std_path(const Tessera__JobRecord *job, enum stdpath_stream which,
                      struct jobfmt_ctx *ctx);


/* Sort jobs in squeue's default order (in place): partition name, then state by its
 * short name ("CA" < "CD" < "PD" < "R"), then priority, highest first; equal jobs newest
 * (highest job id) first, which is the order Slurm's controller happens to hold them in.
 */
void jobfmt_sort_default(Tessera__JobRecord **jobs, size_t n);

/* Sort jobs in squeue --start's order (in place): by start time, the expected one for a
 * pending job (Slurm's --sort=S); jobs without one last, a pending job whose expected
 * start has passed as if it started now; equal times by job id. TS_OK, or TS_ENOMEM
 * with the jobs left as they were. */
int jobfmt_sort_start(Tessera__JobRecord **jobs, size_t n, time_t now);

/* sbatch --test-only's report of a response (no "sbatch: " prefix, no newline), as
 * Slurm words it: "Job 551 to start at 2026-11-22T18:16:57 using 1 processors on nodes
 * n1 in partition debug" (a het job: "... using 4 processors on n[1-2]", no partition).
 * When the controller could not plan the job (expected_start 0): "Job 551 would be
 * accepted in partition debug, but no start time could be estimated". A response without
 * a job id (0) says "Job to start at ...". malloc'd. */
char *jobfmt_test_only(const Tessera__SubmitResponse *resp);

/* squeue --json: the whole document for these jobs, malloc'd. */
char *jobfmt_json(Tessera__JobRecord *const *jobs, size_t n, struct jobfmt_ctx *ctx);

/* "scontrol show job": one block per component, as Slurm lays it out (blank line after
 * each); oneliner puts a record on one line. malloc'd. */
char *jobfmt_show_job(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, int oneliner);
/* "scontrol show partition". */
char *jobfmt_show_partition(const Tessera__PartitionInfo *part, int oneliner);

#endif
