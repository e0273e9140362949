/* The job options of sbatch, salloc and srun, parsed into job descriptions (one
 * Tessera__JobDesc per component).
 *
 * One option table serves the three commands (each option says which commands take it,
 * whether it propagates to later components, and whether only the first component may
 * carry it). Sources, from lowest to highest precedence:
 *   1. "#SBATCH" directives of the batch script (sbatch only), before its first command
 *      line; "#SBATCH hetjob" starts the next component;
 *   2. environment defaults (SBATCH_* / SALLOC_* / SRUN_*), applied to every component;
 *   3. the command line, whose lone ":" arguments separate components.
 * Component i starts from the propagated options of component i-1 (docs/01-hetjob.md §2.2: account,
 * time, output, ... carry over; ntasks, nodes, partition, ... do not), then takes its
 * script directives, the environment defaults, and its command-line options.
 *
 * Sizes without a unit are megabytes; time limits are kept in seconds ("-t 0:30" is 30 s,
 * "-t 0" is unlimited); --begin and --deadline are absolute times computed from `now`.
 */
#ifndef TESSERA_COMMON_JOBOPT_H
#define TESSERA_COMMON_JOBOPT_H

#include "jobdesc.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum jobopt_cmd { JOBOPT_SBATCH, JOBOPT_SALLOC, JOBOPT_SRUN };

/* Largest batch script accepted (bytes). */
#define JOBOPT_MAX_SCRIPT (4u << 20)
/* Largest memory size accepted (MB): 1 EiB, beyond any node, far from overflow even when
 * multiplied by a CPU count. */
#define JOBOPT_MAX_SIZE_MB (UINT64_C(1) << 40)
/* Largest --signal=SIG@TIME warning time (seconds), as Slurm bounds it. */
#define JOBOPT_WARN_SECS_MAX 65535

struct jobopt_input {
    enum jobopt_cmd cmd;
    int argc;
    char **argv;           /* argv[0] is the command's name */
    char **envp;           /* the submitter's environment */
    time_t now;
    const char *cwd;       /* default work_dir */
    /* sbatch: the script's text when the caller already has it (tests, --wrap is handled
     * inside); NULL: read the file named on the command line, or standard input. */
    const char *script_text;
};

struct jobopt {
    enum jobopt_cmd cmd;
    Tessera__JobDesc **components; /* at least one on success */
    size_t ncomponents;

    /* What the command does rather than what the job is. */
    int help;              /* 1: --help, 2: --usage: print it, do nothing else */
    int version;           /* --version */
    int parsable;          /* --parsable */
    int test_only;         /* --test-only */
    int wait_end;          /* sbatch -W: return once the job has ended, with its exit code */
    int quiet;             /* -Q */
    int verbose;           /* -v, counted */
    int label;             /* srun --label */
    int unbuffered;        /* srun -u (output is never buffered anyway) */
    uint32_t jobid;        /* srun --jobid: the running job to add the step to (0: none) */
    int overlap;           /* srun --overlap: the step shares CPUs with other steps */
    int overcommit;        /* srun -O: more tasks than CPUs */
    int kill_on_bad_exit;  /* srun -K: a task's non-zero exit terminates the step */
    uint32_t wait_secs;    /* srun -W: end the rest this long after the first task ended */
    int multi_prog;        /* srun --multi-prog: argv[0] is the configuration file */
    char *script_path;     /* sbatch: the script file, NULL for stdin or --wrap */
    char **command;        /* salloc/srun: the program and its arguments (NULL-terminated,
                            * NULL when none was given); srun: component 0's */
};
/* Where the parse puts the rest:
 *  - components[0]->script: the batch script (sbatch); ->argv: the script's arguments;
 *    ->environment: every entry of envp (all commands);
 *  - srun: every component's program and arguments in components[i]->argv, since srun
 *    takes one program per component ("srun -n1 a : -n2 b"); a component without one
 *    takes the next component's ("srun -n2 : -n1 hostname" runs hostname in both);
 *  - defaults: name (sbatch: the script's file name, "wrap", or "sbatch" for standard
 *    input; salloc: "interactive"; srun: the program's file name, or "srun") and work_dir
 *    (in->cwd; a relative -D is taken relative to it).
 * With --help, --usage or --version the parse stops there and succeeds with one empty
 * component, as Slurm prints and exits at once. */

/* Parse. On failure returns a ts_err and writes the message into errbuf, without the
 * "sbatch: error: " prefix; with several components the message starts with
 * "component N: ". TS_EOPTION means an unknown option or a missing argument (printed
 * getopt-style: "sbatch: unrecognized option '--bogus'" and a "Try ... --help" line), or
 * another misuse of the command line or #SBATCH lines (a stray word in a directive, a
 * component without options); TS_EOPTVALUE a bad value ("Invalid numeric value \"abc\"
 * for --ntasks."), an option Tessera does not support ("--array is not supported") or
 * one not allowed where it is (licenses on a later component); TS_ESCRIPT a script that
 * cannot be read or is not a batch script. Errors from #SBATCH lines and environment
 * variables name them after the component: "batch script line 3: ...",
 * "SBATCH_TIMELIMIT: ...". */
int jobopt_parse(const struct jobopt_input *in, struct jobopt *out, char *errbuf,
                 size_t errlen);
void jobopt_free(struct jobopt *opt);

/* Sizes as the options take them: "100" (MB), "100K", "2G", "1T" (case-insensitive);
 * *mb rounded up to whole megabytes. TS_EOPTVALUE when malformed or too large. */
int jobopt_parse_size_mb(const char *s, uint64_t *mb);

#endif
