/* The environment of one task of a step (docs/03-env.md §4): the
 * environment srun sends, plus Slurm's SLURM_* variables describing the step merged over
 * its components, the task's node and rank, and PMI-1's PMI_FD / PMI_RANK / PMI_SIZE.
 * Pure: computed from the signed layout (common/job/steplayout.h) alone. */
#ifndef TESSERA_COMMON_STEPENV_H
#define TESSERA_COMMON_STEPENV_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

struct stepenv_task {
    size_t node;            /* index into layout->nodes */
    size_t local;           /* index into that node's ranks */
    int pmi_fd;             /* -1: no PMI variables */
    const char *srun_host;  /* srun's address (SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR);
                             * NULL or "": none of srun's four variables */
    uint16_t srun_port;     /* SLURM_SRUN_COMM_PORT, SLURM_STEP_LAUNCHER_PORT */
};

/* base_env: the environment srun sends (already as --export says; NULL: empty). Returns
 * a NULL-terminated malloc'd array of malloc'd "NAME=value" (free with stepenv_free):
 * base_env in its order minus the names this module owns, then the computed variables.
 * Later entries never repeat a name. NULL when out of memory, and for a task that is not
 * in the layout (node or local out of range). */
char **stepenv_task(const Tessera__StepLayout *l, const struct stepenv_task *t,
                    char *const *base_env);
void stepenv_free(char **env);   /* NULL ok */

#endif
