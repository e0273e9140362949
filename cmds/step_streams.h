/* srun's -o, -e and -i (docs/steps.md, "Standard streams"), resolved once the step's id
 * is known, as Slurm's srun resolves them:
 *   - unset or "all": every task's output to srun's own output (errors to its errors);
 *     srun's input to task 0;
 *   - "none": /dev/null on the nodes;
 *   - a task number N: only task N's output is shown; only task N reads srun's input;
 *   - a pattern naming a file per task or per node (%t, %n, %N), and every input file:
 *     the nodes open the files (below the working folder when relative) as the user,
 *     with the job's escapes filled in here;
 *   - any other name: srun opens the file itself, below its working folder, and writes
 *     every task's output into it (labelled under --label).
 * Errors go where the output goes unless -e was given.
 */
#ifndef TESSERA_CMDS_STEP_STREAMS_H
#define TESSERA_CMDS_STEP_STREAMS_H

#include <stddef.h>
#include <stdint.h>

/* What the patterns are resolved with. */
struct step_streams_params {
    const char *std_out, *std_err, *std_in; /* -o, -e, -i as given (NULL: unset) */
    const char *work_dir;                   /* where relative names are */
    int append;                             /* --open-mode=append */
    uint32_t job_id, step_id;
    const char *user, *job_name;
};

struct step_streams {
    char *node_out, *node_err, *node_in; /* patterns the nodes open; "" none (srun's) */
    int out_fd, err_fd;                  /* where srun writes what comes back */
    int own_out, own_err;                /* srun opened them (closed at the end) */
    char *out_path;                      /* the file srun opened for the output */
    int64_t out_rank, err_rank;          /* -o N: task N's output alone; -1 every task's */
    int stdin_to_task;                   /* srun's input goes to a task: stdin_rank */
    int append;                          /* the nodes' files: --open-mode=append */
    uint32_t stdin_rank;
};

/* TS_OK; else prints srun's error line ("srun: error: Could not open stdout file ...")
 * and returns the error, with nothing left open. */
int step_streams_resolve(const struct step_streams_params *p, struct step_streams *s);
void step_streams_close(struct step_streams *s);

#endif
