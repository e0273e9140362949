/* File name patterns of the standard streams (sbatch -o/-e/-i, scontrol update StdOut=,
 * srun -o/-e/-i): their escapes, filled in one place for the controller, the node, srun
 * and what the commands show (common/format/jobfmt.h's jobfmt_std_path). */
#ifndef TESSERA_COMMON_JOB_STDPATH_H
#define TESSERA_COMMON_JOB_STDPATH_H

#include "tessera.pb-c.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* A job's standard streams. */
enum stdpath_stream { STDPATH_STDOUT, STDPATH_STDERR, STDPATH_STDIN };

/* A file name pattern and the file it names are shorter than this (the system's
 * PATH_MAX, the terminating NUL included). */
#define STDPATH_MAX PATH_MAX

/* What the file's name fills in besides the job's own fields. */
struct stdpath_fill {
    const char *user; /* %u */
    const char *host; /* %N (the batch host); NULL leaves %N, %s, %J, %t, %n and %% as
                       * written */
};

/* The file a job's stream goes to on its node: jobfmt_std_path's text with %N the host,
 * %s "batch", %J the job id alone, %t and %n 0 (the batch script is task 0 on the job's
 * first node) and %% one percent sign; a % at the end or before a letter that is no
 * escape stays. TS_EPATH_TOOLONG when the pattern or the file name would have
 * STDPATH_MAX bytes or more (nothing longer is built), TS_ENOMEM; *out malloc'd on
 * TS_OK, else NULL. */
int stdpath_expand(const Tessera__JobRecord *job, enum stdpath_stream which,
                       const struct stdpath_fill *fill, char **out);

/* The values of a file name pattern's escapes (Slurm's filename patterns: %j, %A, %a,
 * %s, %J, %t, %n, %N, %u, %x, %%, each numeric one with an optional zero-padding width
 * such as %3t). A negative number or a NULL text leaves its escape as written, width
 * included, for a later fill: srun fills the job's values, the node the task's. */
struct stdpath_values {
    int64_t job_id;        /* %j, %J's first part; %A and %a need it too */
    int64_t array_job_id;  /* %A (<= 0: the job id) */
    int64_t array_task_id; /* %a (< 0: 4294967294, not an array task) */
    int64_t step_id;       /* %s, %J's second part */
    const char *step_name; /* instead of step_id: "batch" */
    int64_t task_id;       /* %t */
    int64_t node_id;       /* %n, the node's index in the step */
    const char *host;      /* %N */
    const char *user;      /* %u; NULL: user_lookup(user_arg) when %u appears */
    const char *(*user_lookup)(void *arg);
    void *user_arg;
    const char *job_name;  /* %x */
    int final;             /* %% becomes one %; else it stays "%%" for the next fill */
    int quote_inserted;    /* a % in a name an escape inserts is doubled, so that the
                            * next fill leaves it alone (srun's fill before the node's) */
};
#define STDPATH_VALUES_INIT                                                          \
    {.job_id = -1, .array_job_id = -1, .array_task_id = -1, .step_id = -1, .task_id = -1,   \
     .node_id = -1}

/* pattern expanded in one pass with v, below work_dir when relative (work_dir NULL or
 * ""; none); a backslash anywhere turns the escapes off and is dropped. TS_EPATH_TOOLONG
 * when the pattern or the result would be longer than max bytes (nothing longer is
 * built), TS_ENOMEM; *out malloc'd on TS_OK, else NULL. */
int stdpath_pattern_expand(const char *pattern, const char *work_dir,
                          const struct stdpath_values *v, size_t max, char **out);
/* Whether the pattern names a file per task or per node (%t, %n or %N, any width): such
 * files are opened on the nodes; others by srun. */
int stdpath_pattern_per_node(const char *pattern);
/* Whether the pattern is Slurm's "none" (no file: /dev/null). */
int stdpath_pattern_is_none(const char *pattern);
/* The job's pattern for a stream (or its default: slurm-%j.out; errors with the output
 * unless -e was given; input /dev/null; "none" is /dev/null) expanded with the job's own
 * values, %u from user_lookup(user_arg) when it appears; the escapes only the node knows
 * are left as written. Shown as stored, however long. malloc'd, NULL when out of memory. */
char *stdpath_shown(const Tessera__JobRecord *job, enum stdpath_stream which,
                    const char *(*user_lookup)(void *arg), void *user_arg);

#endif
