/* The environment of a job's batch script (SPEC 1.5, "Batch script" context): the
 * submitter's environment as --export says, plus Slurm's SLURM_* variables describing the
 * allocation. Unsuffixed variables describe component 0; a het job also gets
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
void jobenv_free(char **env);

/* Slurm's compressed per-node lists: "4(x2),2" for 4,4,2. buf gets the text; returns it. */
const char *jobenv_compress_counts(const uint32_t *counts, size_t n, char *buf, size_t len);

#endif
