/* The environment of a job's batch script (docs/03-env.md §2), and of
 * salloc's command ("salloc" context): the submitter's environment (as --export says, for
 * a batch script), plus Slurm's SLURM_* variables describing the allocation. Unsuffixed variables describe component 0; a het job also gets
 * SLURM_HET_SIZE and every per-component variable with the suffix _HET_GROUP_<n>.
 * Pure: computed from the job records (with their allocations) alone. */
#ifndef TESSERA_COMMON_JOBENV_H
#define TESSERA_COMMON_JOBENV_H

#include "tessera.pb-c.h"

#include <stddef.h>

struct jobenv_context {
    const char *cluster;       /* ClusterName */
    const char *node_name;     /* SLURMD_NODENAME: the node running the script */
    const char *user_name;     /* SLURM_JOB_USER */
};

/* components: every component of the job in offset order (one for a plain job), each
 * with allocs filled; components[0]->desc holds the environment and --export. Returns a
 * NULL-terminated malloc'd array of malloc'd "NAME=value" strings (free with
 * jobenv_free), or NULL when out of memory. Later entries never repeat a name. */
char **jobenv_batch(const Tessera__JobRecord *const *components, size_t n,
                    const struct jobenv_context *ctx);
/* salloc's context (docs/03-env.md §3): the command runs where salloc runs, with envp (salloc's
 * own environment, minus the names this module owns) and the allocation's variables. A
 * plain job's are unsuffixed as in a batch script; a het job has only SLURM_JOB_ID,
 * SLURM_JOBID, SLURM_HET_SIZE (and SLURM_NTASKS, the sum, when every component gave -n)
 * and the job-wide ones unsuffixed, the rest with _HET_GROUP_<n>. Nothing of a node or a
 * task (SLURMD_NODENAME, SLURM_PROCID, ...): the command runs on no node of the job. */
char **jobenv_salloc(const Tessera__JobRecord *const *components, size_t n, char *const *envp,
                     const struct jobenv_context *ctx);
/* d's environment as its --export says (srun's tasks start from it), SLURM_* variables
 * included: inside an allocation they are the allocation's. */
char **jobenv_exported(const Tessera__JobDesc *d);
void jobenv_free(char **env);
/* Whether d's batch script starts from its user's login environment (the node daemon
 * reads it as the user): Slurm's rule for --get-user-env, --export=NONE and lists
 * without ALL. */
int jobenv_login_wanted(const Tessera__JobDesc *d);

/* Slurm's compressed per-node lists: "4(x2),2" for 4,4,2. buf gets the text; returns it. */
const char *jobenv_compress_counts(const uint32_t *counts, size_t n, char *buf, size_t len);

#endif
