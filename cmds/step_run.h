/* srun's side of a running step (docs/steps.md): the launch sent to every node of the
 * step at once, and then, on an event loop, the server the step daemons talk to: task
 * output (printed as it comes, with --label prefixes, where -o and -e say), task ends
 * (and why a task could not start), input for the task -i names, PMI
 * barriers gathered over all nodes; and signals forwarded to the tasks.
 */
#ifndef TESSERA_CMDS_STEP_RUN_H
#define TESSERA_CMDS_STEP_RUN_H

#include "cmds/step_streams.h"

#include "tessera.pb-c.h"

#include <stddef.h>

struct conf;

struct step_run_params {
    const struct conf *conf;
    const Tessera__StepCreateResponse *step;  /* the layout, its credential and signature */
    Tessera__StepLaunchComponent **components; /* argv per layout component, same order */
    char **env;                                /* the tasks' environment before the step's */
    const char *work_dir;
    int label;
    int quiet;
    int kill_on_bad_exit;                      /* -K: a task's non-zero end terminates the step */
    uint32_t wait_secs;                        /* -W: kill the rest this long after a task ended */
    const char *multi_prog;                    /* --multi-prog: the file's text, or NULL */
    const struct step_streams *streams;        /* -o, -e, -i resolved (step_streams.h) */
};

/* Launch and run the step to its end. Returns srun's exit status: the highest task exit
 * code, 128+signal for a task killed by a signal, 1 when the launch failed. */
int step_run(const struct step_run_params *p);

#endif
