/* What every command shares: Slurm-style error lines and the connection to the
 * controller (configuration located by docs/08-ops.md §1.1, credentials for SlurmUser's uid). */
#ifndef TESSERA_CMDS_CMDUTIL_H
#define TESSERA_CMDS_CMDUTIL_H

#include "common/jobopt/jobopt.h"
#include "common/util/namecache.h"
#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct conf;
struct jobopt;
struct rpc_client;

/* "prog: error: ..." on stderr. */
void cmd_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failure of jobopt_parse (err, msg) as Slurm's sbatch, salloc and srun print it; returns
 * their exit status: getopt's wording and 255 for an unknown option, 255 for the values
 * Slurm's commands refuse as fatal (TS_EOPTSPEC), 1 otherwise. The errors Slurm reports
 * from the submission (a malformed --dependency or --array) follow submit_failed, the
 * command's words for a refused submission ("Batch job submission failed"). */
int cmd_option_failure(const char *prog, const char *submit_failed, int err, const char *msg);

/* What sbatch, salloc and srun are, for their common main. */
struct cmd_start {
    const char *prog;
    enum jobopt_cmd cmd;
    const char *submit_failed; /* for cmd_option_failure */
    void (*usage)(FILE *out);  /* --help's text */
    /* the command itself, with its parsed options and what they were parsed from (in->cwd:
     * the working folder); returns the exit status */
    int (*run)(struct jobopt *opt, const struct jobopt_input *in);
};
/* The main of sbatch, salloc and srun: the working folder, the options parsed from argv, a
 * failure printed as cmd_option_failure says, --help and --version answered; else
 * start->run, and the options freed. Returns the exit status. */
int cmd_job_main(const struct cmd_start *start, int argc, char **argv);
/* Slurm's sbatch and salloc: a component asking for fewer tasks than nodes (-N5 -n2) gets
 * as many nodes as tasks, with Slurm's warning ("can't run 2 processes on 5 nodes,
 * setting nnodes to 2"). */
void cmd_fit_nodes_to_tasks(const char *prog, struct jobopt *opt);
/* The line Slurm's commands print before a refused submission's own when it names a
 * partition that does not exist: "invalid partition specified: NAME", NAME the one of the
 * component the refusal names ("component N: ..."; the first without that). */
void cmd_refusal_detail(const char *prog, Tessera__JobDesc *const *components, size_t n,
                        const Tessera__Error *e);

struct ctl {
    const char *prog;
    struct conf *conf;
    struct rpc_client *cli;
};

/* Load the configuration (conf_path NULL: $TESSERA_CONF, then the default). Prints the
 * error and returns non-zero on failure. */
int ctl_load_conf(struct ctl *ctl, const char *prog, const char *conf_path);
/* Connect to the controller (after ctl_load_conf). TS_ECONNECT when it does not answer;
 * errors are not printed (callers word them as Slurm does). */
int ctl_connect(struct ctl *ctl);
/* One request, one response; connects first when needed. Errors of the transport come
 * back as codes (TS_OK means *resp is set, possibly holding an Error). */
int ctl_call(struct ctl *ctl, const Tessera__Request *req, Tessera__Response **resp);
/* The same for a job, step or node query, whose answers come in pages: req's cursor is
 * moved page by page until the last, and *resp holds the records of every page (or the
 * error response that stopped the walk). */
int ctl_call_pages(struct ctl *ctl, Tessera__Request *req, Tessera__Response **resp);
/* The detail of the last transport failure. */
const char *ctl_error_text(const struct ctl *ctl);
/* Drop the connection (after a failure left it unusable); the next call reconnects. */
void ctl_disconnect(struct ctl *ctl);
void ctl_close(struct ctl *ctl);

/* A growable list of strings: what list options select ("-j 93,94 -j 95"). */
struct cmd_list {
    char **items;
    size_t n;
};
/* Add a copy of item; "a,b" adds a and b. 0, or -1 when out of memory. */
int cmd_list_add(struct cmd_list *l, const char *item);
int cmd_list_add_split(struct cmd_list *l, const char *text);
void cmd_list_free(struct cmd_list *l);

/* A user or group as the commands take them (-u, -g): a name, else a number (0 to
 * UINT32_MAX). 0, or -1 when it is neither (the command words the error). */
int cmd_id_of(enum namecache_kind kind, const char *text, uint32_t *id);

struct jobopt;
/* Where and from which host the job is submitted (SLURM_SUBMIT_DIR, SLURM_SUBMIT_HOST),
 * into every component. Returns TS_OK or TS_ENOMEM. */
int cmd_set_origin(const struct jobopt *opt, const char *cwd);

#endif
