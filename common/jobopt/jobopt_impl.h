/* Internals of the job option parser, shared by common/jobopt*.c only.
 *
 * The parse runs in two stages so that every source can be merged in precedence order:
 *   scan:  argv segments and #SBATCH lines are turned into lists of option occurrences
 *          (struct jobopt_seg), resolving names, abbreviations and arguments; unknown
 *          options are found here, before anything is applied or a script is read;
 *   apply: for each component, occurrences are fed to the options' setters in the order
 *          propagated values, script, environment, command line, so a later source simply
 *          overwrites an earlier one.
 */
#ifndef TESSERA_COMMON_JOBOPT_IMPL_H
#define TESSERA_COMMON_JOBOPT_IMPL_H

#include "common/jobopt/jobopt.h"

#include "common/gres/gres_req.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Where a value came from, lowest precedence first. */
enum jobopt_src {
    JOBOPT_SRC_NONE,
    JOBOPT_SRC_PROPAGATED,
    JOBOPT_SRC_SCRIPT,
    JOBOPT_SRC_ENV,
    JOBOPT_SRC_CLI,
};

enum jobopt_arg { JOBOPT_ARG_NONE, JOBOPT_ARG_REQUIRED, JOBOPT_ARG_OPTIONAL };

#define JOBOPT_CMD(c) (1u << (c))
#define JOBOPT_SB JOBOPT_CMD(JOBOPT_SBATCH)
#define JOBOPT_SA JOBOPT_CMD(JOBOPT_SALLOC)
#define JOBOPT_SR JOBOPT_CMD(JOBOPT_SRUN)
#define JOBOPT_ALLCMDS (JOBOPT_SB | JOBOPT_SA | JOBOPT_SR)

/* Option flags. */
#define JOBOPT_F_PROPAGATE 0x01u   /* copied from component i-1 into component i */
#define JOBOPT_F_FIRST_DROP 0x02u  /* on a later component: silently ignored (mail) */
#define JOBOPT_F_FIRST_ONLY 0x04u  /* on a later component: an error (licenses) */
#define JOBOPT_F_COMMAND 0x08u     /* about the command, not the job: env applies once */
#define JOBOPT_F_STOP 0x10u        /* --help, --version: nothing after them matters */
#define JOBOPT_F_UNSUPPORTED 0x20u /* Slurm has it, Tessera does not (yet) */

/* The JobDesc field an option sets, so that propagation and the generic setters need no
 * per-option code. */
enum jobopt_kind {
    JOBOPT_K_NONE,
    JOBOPT_K_STR,
    JOBOPT_K_BOOL,
    JOBOPT_K_U32,
    JOBOPT_K_I32,
    JOBOPT_K_U64,
    JOBOPT_K_I64,
};

/* The first error of a parse, and the context (component, source) the drivers keep up to
 * date so that the place an error is found need not know where it is. */
struct jobopt_err {
    int code;          /* TS_OK until the first error */
    long comp;         /* component of the recorded error, -1 when none */
    char where[96];    /* "batch script line 3: ", "SBATCH_TIMELIMIT: " or "" */
    char msg[512];
    long cur_comp;     /* context for the next error */
    char cur_where[96];
};

struct jobopt_ctx;
struct jobopt_def;
typedef int (*jobopt_setter)(struct jobopt_ctx *c, const struct jobopt_def *def,
                             const char *arg);

struct jobopt_def {
    const char *name;  /* long name without "--" */
    char letter;       /* short option, 0 when none */
    enum jobopt_arg arg;
    unsigned cmds;     /* JOBOPT_SB | JOBOPT_SA | JOBOPT_SR */
    unsigned flags;    /* JOBOPT_F_* */
    enum jobopt_kind kind;
    size_t off;        /* the field in Tessera__JobDesc */
    size_t has_off;    /* its has_ flag (numbers and booleans) */
    jobopt_setter set; /* NULL for unsupported options */
};

/* One option as found in argv or a directive; arg points into argv or the token pool. */
struct jobopt_occ {
    const struct jobopt_def *def;
    const char *arg;   /* NULL: none given */
    unsigned line;     /* script line, 0 for the command line */
};

/* The options of one component from one source. */
struct jobopt_seg {
    struct jobopt_occ *occ;
    size_t n, cap;
    /* command line only: argv index of the first word that is not an option (script or
     * command), and for srun the end of this component's command; 0 when none */
    int first_arg;
    int end_arg;
};

struct jobopt_segs {
    struct jobopt_seg *v;
    size_t n, cap;
};

/* Strings the parse owns (script tokens, the script text); freed together at the end. */
struct jobopt_pool {
    char **v;
    size_t n, cap;
};

/* What a setter sees. */
struct jobopt_ctx {
    const struct jobopt_input *in;
    struct jobopt *out;
    Tessera__JobDesc *d;   /* the component being built */
    size_t comp;
    enum jobopt_src src;
    enum jobopt_src mem_src; /* who set --mem / --mem-per-cpu in this component */
    enum jobopt_src mem_per_cpu_src;
    struct jobopt_err *err;
    enum jobopt_src mem_per_gpu_src;
    /* --gpus-per-node in its stored form ("" when not given): joined to --gres's list
     * once the component is built (jobopt_finish_component), as Slurm joins them */
    char gpus_per_node[GRES_REQ_SPEC_MAX + 1];
};

/* Errors (jobopt.c). Records the first error only and returns code. */
int jobopt_fail(struct jobopt_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Containers (jobopt.c). All return TS_OK or TS_ENOMEM. */
struct jobopt_seg *jobopt_segs_add(struct jobopt_segs *s);
int jobopt_seg_add(struct jobopt_seg *s, const struct jobopt_def *def, const char *arg,
                   unsigned line);
void jobopt_segs_free(struct jobopt_segs *s);
char *jobopt_pool_keep(struct jobopt_pool *p, char *str); /* NULL (and str freed) on ENOMEM */
void jobopt_pool_free(struct jobopt_pool *p);

/* The option and environment tables (jobopt_table.c). */
const struct jobopt_def *jobopt_table(size_t *n);
/* Exact long name visible to cmd, or NULL. */
const struct jobopt_def *jobopt_find(enum jobopt_cmd cmd, const char *name);
/* Propagation: copy def's field from src to dst; clear it. TS_OK or TS_ENOMEM. */
int jobopt_copy_field(Tessera__JobDesc *dst, const Tessera__JobDesc *src,
                      const struct jobopt_def *def);
void jobopt_clear_field(Tessera__JobDesc *d, const struct jobopt_def *def);
/* Apply the environment defaults of in->cmd to c's component. */
int jobopt_apply_env(struct jobopt_ctx *c);
/* What the setters leave to the end of a component (--gpus-per-node). */
int jobopt_finish_component(struct jobopt_ctx *c);
/* Feed one occurrence to its setter (checks the first-component rules). */
int jobopt_apply(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg);

/* Argument scanning (jobopt_args.c). args[*i] starts with '-' and is neither "-" nor
 * "--". Appends to seg and advances *i past the option and its argument; a lone ":" is
 * never taken as an argument when colon_splits (it ends the component). Errors are
 * recorded in e and scanning may go on, as getopt does. *stop is set to the option when
 * it is a JOBOPT_F_STOP option. */
int jobopt_scan_option(enum jobopt_cmd cmd, char **args, int n, int *i, int colon_splits,
                       unsigned line, struct jobopt_seg *seg, struct jobopt_err *e,
                       const struct jobopt_def **stop);
int jobopt_is_option(const char *a);

/* Batch scripts (jobopt_script.c). */
int jobopt_script_load(const struct jobopt_input *in, const char *path, const char *wrap,
                       char **text, struct jobopt_err *e);
int jobopt_script_directives(enum jobopt_cmd cmd, const char *text, struct jobopt_segs *segs,
                             struct jobopt_pool *pool, struct jobopt_err *e);

/* Values (jobopt_value.c). */
int jobopt_parse_u64(const char *s, uint64_t max, uint64_t *v); /* strictly decimal */
int jobopt_check_dependency(const char *s);
/* TS_OK or TS_EJOB_ARRAY: whether s is an --array list Slurm accepts. */
int jobopt_check_array(const char *s);
int jobopt_norm_mail_type(const char *s, char **out);

#endif
