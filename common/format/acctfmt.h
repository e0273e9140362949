/* sacct's output: Slurm 22.05's fields, their layout (fixed width, --parsable,
 * --parsable2), --json, the order of job and step rows and sacct's step selection (-j
 * "93.2").
 *
 * A row is a job (component) or one of its steps, printed with the job at hand: step rows
 * take the job's account, user and cluster, as Slurm's do. All functions are pure: the
 * current time comes in the context, never from the clock. */
#ifndef TESSERA_COMMON_ACCTFMT_H
#define TESSERA_COMMON_ACCTFMT_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The step id of the batch script in accounting records (Slurm's SLURM_BATCH_SCRIPT). */
#define ACCTFMT_STEP_BATCH 0xfffffffbu

/* Slurm's field lists: the default, -b/--brief and -l/--long. */
#define ACCTFMT_DEFAULT "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode"
#define ACCTFMT_BRIEF "JobID,State,ExitCode"
#define ACCTFMT_LONG                                                                     \
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,"   \
    "MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,"    \
    "MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,"        \
    "AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,"         \
    "MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,"               \
    "MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,ReqTRES,AllocTRES,TRESUsageInAve,"    \
    "TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,"                \
    "TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"               \
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot"

enum acctfmt_mode {
    ACCTFMT_FIXED,     /* columns of fixed width, each followed by a space */
    ACCTFMT_PARSABLE,  /* -p: "|" after every field */
    ACCTFMT_PARSABLE2, /* -P: "|" between fields */
};

struct jobfmt_ctx; /* common/format/jobfmt.h: now, and cached user and group names */

/* One output row: a job (step NULL) or one of its steps. For a job row, steps/nsteps are
 * the job's steps (TotalCPU and DerivedExitCode sum or compare over them); they may be
 * absent (sacct -X), and then those fields show no usage. */
struct acctfmt_row {
    const Tessera__AcctJob *job;
    const Tessera__AcctStep *step;
    const Tessera__AcctStep *const *steps;
    size_t nsteps;
};

struct acctfmt; /* a compiled field list */

/* Compile a -o list: comma-separated field names, case-insensitive, each the first field
 * of the table that starts with what is given (Slurm's rule: "jobid" is JobID, "alloc"
 * AllocCPUS); "Name%N" sets the width, a negative N left-justifies (Slurm: positive
 * widths right-justify, whatever the field's own alignment); "ALL" is every field.
 * Errors: TS_EOPTVALUE with errbuf holding Slurm's text, 'Invalid field requested: "X"'. */
int acctfmt_compile(const char *list, struct acctfmt **out, char *errbuf, size_t errlen);
void acctfmt_free(struct acctfmt *fmt);

/* The header (and in ACCTFMT_FIXED the dash rule), newline-terminated; malloc'ed. */
char *acctfmt_header(const struct acctfmt *fmt, enum acctfmt_mode mode);
/* One row, newline-terminated; malloc'ed (NULL when out of memory). */
char *acctfmt_line(const struct acctfmt *fmt, enum acctfmt_mode mode,
                   const struct acctfmt_row *row, struct jobfmt_ctx *ctx);

/* One field's value as sacct -P prints it ("" for a field without a value for this row).
 * TS_OK, TS_EINVAL for an unknown field name (exact, case-insensitive), TS_ETOOBIG. */
int acctfmt_value(const char *field, const struct acctfmt_row *row, struct jobfmt_ctx *ctx,
                  char *buf, size_t len);

/* sacct --helpformat: the field names, four to a line in columns of 19, as Slurm. */
char *acctfmt_helpformat(void);

/* Formatters shared with the JSON document, exposed for tests. */
/* A job or step id as sacct prints it: "93", "93+1", "93.batch", "93+1.0"; raw: the
 * component's own id ("94.0"). */
void acctfmt_job_id(const Tessera__AcctJob *job, const Tessera__AcctStep *step, int raw,
                    char *buf, size_t len);
/* "code:signal" from a wait status; exit codes of 128 and over lose 128, as in Slurm. */
void acctfmt_exit_code(int32_t status, char *buf, size_t len);
/* CPU times: "MM:SS.mmm" under an hour when there are milliseconds, else "00:MM:SS",
 * "HH:MM:SS", "D-HH:MM:SS" (Slurm's TotalCPU/UserCPU/SystemCPU). */
void acctfmt_cpu_time(uint64_t usec, char *buf, size_t len);
/* A size in KiB as Slurm's exact unit conversion prints it: the largest of K, M, G, T, P
 * that divides it exactly ("2144K", "4M", "0" for zero). */
void acctfmt_size_kb(uint64_t kb, char *buf, size_t len);
/* Elapsed seconds of a job or step row at now: end (or now while running) minus start,
 * minus the time suspended (jobs); 0 when it never started. */
int64_t acctfmt_elapsed(const struct acctfmt_row *row, time_t now);

/* ---- rows: order and step selection (acctfmt_rows.c) ----------------------------------- */

struct acctfmt_sel; /* the -j items */

/* Parse the -j items ("93", "93+1", "93.2", "93+1.batch"). On a bad item returns
 * TS_EINVALID_JOB_ID and sets *bad to it. n == 0 selects everything. */
int acctfmt_sel_parse(char *const *items, size_t n, int whole_hetjob,
                      struct acctfmt_sel **out, const char **bad);
void acctfmt_sel_free(struct acctfmt_sel *sel);

struct acctfmt_rows {
    struct acctfmt_row *rows;
    size_t n;
    Tessera__AcctStep **steps; /* the steps in row order, which rows point into */
};

/* The rows to print for the jobs and steps received (jobs ascending by id, steps in any
 * order): for each job, its row, then its steps with the batch script first and the
 * others by step id. With step items in -j, a job that no item without a step part
 * selects prints no job row, and only its steps named by a step item ("93.2" names step 2
 * of job 93 or of any component of het job 93; "93+1.2" step 2 of that component).
 * no_steps (-X) leaves steps out. sel NULL selects everything. TS_OK or TS_ENOMEM; free
 * with acctfmt_rows_free. */
int acctfmt_rows_build(Tessera__AcctJob *const *jobs, size_t njobs,
                       Tessera__AcctStep *const *steps, size_t nsteps,
                       const struct acctfmt_sel *sel, int no_steps, struct acctfmt_rows *out);
void acctfmt_rows_free(struct acctfmt_rows *rows);

/* ---- sacct --json (acctfmt_json.c) ------------------------------------------------------ */

/* The document Slurm 22.05's sacct --json prints (openapi v0.0.38), the keys Tessera can
 * fill: one object per job row with its steps inside. malloc'ed text ending in a
 * newline, NULL when out of memory. */
char *acctfmt_json(const struct acctfmt_rows *rows, struct jobfmt_ctx *ctx);

#endif
