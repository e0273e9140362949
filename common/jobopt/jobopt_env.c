/* Environment defaults: SBATCH_* for sbatch, SALLOC_* for salloc, SLURM_* and SRUN_* for
 * srun, with the names of Slurm 22.05's man pages (INPUT ENVIRONMENT VARIABLES).
 *
 * Variables of options Tessera does not have are refused like the options (a job that
 * silently loses its --gres is worse than one that is not submitted). Flag options
 * follow Slurm's rule (empty, "yes" or a non-zero number sets the flag) except that a
 * value that means nothing ("maybe") is an error instead of "not set".
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

enum env_kind {
    ENV_VALUE,         /* the option's argument, or its flag for options without one */
    ENV_DEBUG,         /* -v: "0" or "1" only, as the man pages say */
    ENV_OUTSIDE_ALLOC, /* ignored inside an allocation (SLURM_JOB_ID set) */
    ENV_OUTSIDE_HET,   /* ignored inside a het allocation (SLURM_HET_SIZE set): they
                        * describe component 0 or the sum, and srun takes each
                        * component's own (SLURM_NTASKS_HET_GROUP_<n>) */
};

struct jobopt_envdef {
    const char *var;
    unsigned cmds;
    const char *opt; /* the long option it stands for */
    enum env_kind kind;
};

#define SB JOBOPT_SB
#define SA JOBOPT_SA
#define SR JOBOPT_SR

/* Where two variables set one option the later row wins (SRUN_EXPORT_ENV overrides
 * SLURM_EXPORT_ENV, as documented). */
static const struct jobopt_envdef envs[] = {
    {"SBATCH_ACCOUNT", SB, "account", ENV_VALUE},
    {"SBATCH_ARRAY_INX", SB, "array", ENV_VALUE},
    {"SBATCH_CLUSTERS", SB, "clusters", ENV_VALUE},
    {"SBATCH_CONSTRAINT", SB, "constraint", ENV_VALUE},
    {"SBATCH_CPUS_PER_GPU", SB, "cpus-per-gpu", ENV_VALUE},
    {"SBATCH_DEBUG", SB, "verbose", ENV_DEBUG},
    {"SBATCH_ERROR", SB, "error", ENV_VALUE},
    {"SBATCH_EXCLUSIVE", SB, "exclusive", ENV_VALUE},
    {"SBATCH_EXPORT", SB, "export", ENV_VALUE},
    {"SBATCH_GPUS", SB, "gpus", ENV_VALUE},
    {"SBATCH_GPUS_PER_NODE", SB, "gpus-per-node", ENV_VALUE},
    {"SBATCH_GPUS_PER_TASK", SB, "gpus-per-task", ENV_VALUE},
    {"SBATCH_GRES", SB, "gres", ENV_VALUE},
    {"SBATCH_GRES_FLAGS", SB, "gres-flags", ENV_VALUE},
    {"SBATCH_INPUT", SB, "input", ENV_VALUE},
    {"SBATCH_JOB_NAME", SB, "job-name", ENV_VALUE},
    {"SBATCH_MEM_PER_CPU", SB, "mem-per-cpu", ENV_VALUE},
    {"SBATCH_MEM_PER_GPU", SB, "mem-per-gpu", ENV_VALUE},
    {"SBATCH_MEM_PER_NODE", SB, "mem", ENV_VALUE},
    {"SBATCH_NO_KILL", SB, "no-kill", ENV_VALUE},
    {"SBATCH_NO_REQUEUE", SB, "no-requeue", ENV_VALUE},
    {"SBATCH_OPEN_MODE", SB, "open-mode", ENV_VALUE},
    {"SBATCH_OUTPUT", SB, "output", ENV_VALUE},
    {"SBATCH_PARTITION", SB, "partition", ENV_VALUE},
    {"SBATCH_QOS", SB, "qos", ENV_VALUE},
    {"SBATCH_REQUEUE", SB, "requeue", ENV_VALUE},
    {"SBATCH_RESERVATION", SB, "reservation", ENV_VALUE},
    {"SBATCH_SIGNAL", SB, "signal", ENV_VALUE},
    {"SBATCH_TIMELIMIT", SB, "time", ENV_VALUE},
    {"SBATCH_WAIT", SB, "wait", ENV_VALUE},

    {"SALLOC_ACCOUNT", SA, "account", ENV_VALUE},
    {"SALLOC_CLUSTERS", SA, "clusters", ENV_VALUE},
    {"SALLOC_CONSTRAINT", SA, "constraint", ENV_VALUE},
    {"SALLOC_CPUS_PER_GPU", SA, "cpus-per-gpu", ENV_VALUE},
    {"SALLOC_DEBUG", SA, "verbose", ENV_DEBUG},
    {"SALLOC_EXCLUSIVE", SA, "exclusive", ENV_VALUE},
    {"SALLOC_GPUS", SA, "gpus", ENV_VALUE},
    {"SALLOC_GPUS_PER_NODE", SA, "gpus-per-node", ENV_VALUE},
    {"SALLOC_GPUS_PER_TASK", SA, "gpus-per-task", ENV_VALUE},
    {"SALLOC_GRES", SA, "gres", ENV_VALUE},
    {"SALLOC_GRES_FLAGS", SA, "gres-flags", ENV_VALUE},
    {"SALLOC_IMMEDIATE", SA, "immediate", ENV_VALUE},
    {"SALLOC_MEM_PER_CPU", SA, "mem-per-cpu", ENV_VALUE},
    {"SALLOC_MEM_PER_GPU", SA, "mem-per-gpu", ENV_VALUE},
    {"SALLOC_MEM_PER_NODE", SA, "mem", ENV_VALUE},
    {"SALLOC_NO_KILL", SA, "no-kill", ENV_VALUE},
    {"SALLOC_PARTITION", SA, "partition", ENV_VALUE},
    {"SALLOC_QOS", SA, "qos", ENV_VALUE},
    {"SALLOC_RESERVATION", SA, "reservation", ENV_VALUE},
    {"SALLOC_SIGNAL", SA, "signal", ENV_VALUE},
    {"SALLOC_TIMELIMIT", SA, "time", ENV_VALUE},

    {"SLURM_CLUSTERS", SB | SA | SR, "clusters", ENV_VALUE},

    {"SLURM_ACCOUNT", SR, "account", ENV_VALUE},
    {"SLURM_CONSTRAINT", SR, "constraint", ENV_VALUE},
    /* A -c job's (sbatch -c 4 --wrap 'srun prog'): its steps take the job's CPUs per task;
     * a het job's components each have their own, SLURM_CPUS_PER_TASK_HET_GROUP_<n>. */
    {"SLURM_CPUS_PER_TASK", SR, "cpus-per-task", ENV_OUTSIDE_HET},
    {"SRUN_CPUS_PER_TASK", SR, "cpus-per-task", ENV_VALUE},
    {"SLURM_CPUS_PER_GPU", SR, "cpus-per-gpu", ENV_VALUE},
    {"SLURM_DEBUG", SR, "verbose", ENV_DEBUG},
    {"SLURM_DEPENDENCY", SR, "dependency", ENV_VALUE},
    {"SLURM_EXCLUSIVE", SR, "exclusive", ENV_VALUE},
    {"SLURM_EXPORT_ENV", SR, "export", ENV_VALUE},
    {"SRUN_EXPORT_ENV", SR, "export", ENV_VALUE},
    {"SLURM_GPUS", SR, "gpus", ENV_VALUE},
    {"SLURM_GPUS_PER_NODE", SR, "gpus-per-node", ENV_VALUE},
    {"SLURM_GPUS_PER_TASK", SR, "gpus-per-task", ENV_VALUE},
    {"SLURM_GRES", SR, "gres", ENV_VALUE},
    {"SLURM_GRES_FLAGS", SR, "gres-flags", ENV_VALUE},
    /* Inside an allocation this is the allocation's name, not a request for the step. */
    {"SLURM_JOB_NAME", SR, "job-name", ENV_OUTSIDE_ALLOC},
    {"SLURM_KILL_BAD_EXIT", SR, "kill-on-bad-exit", ENV_VALUE},
    {"SLURM_MEM_PER_CPU", SR, "mem-per-cpu", ENV_OUTSIDE_HET},
    {"SLURM_MEM_PER_GPU", SR, "mem-per-gpu", ENV_VALUE},
    {"SLURM_MEM_PER_NODE", SR, "mem", ENV_OUTSIDE_HET},
    {"SLURM_NNODES", SR, "nodes", ENV_OUTSIDE_HET},
    {"SLURM_JOB_NUM_NODES", SR, "nodes", ENV_OUTSIDE_HET},
    {"SLURM_NO_KILL", SR, "no-kill", ENV_VALUE},
    {"SLURM_NPROCS", SR, "ntasks", ENV_OUTSIDE_HET},
    {"SLURM_NTASKS", SR, "ntasks", ENV_OUTSIDE_HET},
    {"SLURM_NTASKS_PER_NODE", SR, "ntasks-per-node", ENV_OUTSIDE_HET},
    {"SLURM_OPEN_MODE", SR, "open-mode", ENV_VALUE},
    {"SLURM_OVERCOMMIT", SR, "overcommit", ENV_VALUE},
    {"SLURM_OVERLAP", SR, "overlap", ENV_VALUE},
    {"SLURM_PARTITION", SR, "partition", ENV_VALUE},
    {"SLURM_QOS", SR, "qos", ENV_VALUE},
    {"SLURM_REMOTE_CWD", SR, "chdir", ENV_VALUE},
    {"SLURM_WORKING_DIR", SR, "chdir", ENV_VALUE},
    {"SLURM_RESERVATION", SR, "reservation", ENV_VALUE},
    {"SLURM_SIGNAL", SR, "signal", ENV_VALUE},
    {"SLURM_STDERRMODE", SR, "error", ENV_VALUE},
    {"SLURM_STDINMODE", SR, "input", ENV_VALUE},
    {"SLURM_STDOUTMODE", SR, "output", ENV_VALUE},
    {"SLURM_TIMELIMIT", SR, "time", ENV_VALUE},
    {"SLURM_WAIT", SR, "wait", ENV_VALUE},
};

static const char *env_get(char *const *envp, const char *name)
{
    size_t len = strlen(name);

    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
            return *envp + len + 1;
    return NULL;
}

/* Slurm's rule for flags: empty, "yes" or a non-zero number. */
static int env_flag(const char *v, int *on)
{
    uint64_t n;

    if (*v == '\0' || strcasecmp(v, "yes") == 0)
        *on = 1;
    else if (strcasecmp(v, "no") == 0)
        *on = 0;
    else if (jobopt_parse_u64(v, UINT64_MAX, &n) == TS_OK)
        *on = n != 0;
    else
        return TS_EOPTVALUE;
    return TS_OK;
}

static int env_apply_one(struct jobopt_ctx *c, const struct jobopt_envdef *e,
                         const struct jobopt_def *def, const char *v)
{
    int on;

    if (e->kind == ENV_DEBUG) {
        if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
            return v[0] == '1' ? jobopt_apply(c, def, NULL) : TS_OK;
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid value \"%s\" (must be 0 or 1)", v);
    }
    if (def->arg == JOBOPT_ARG_NONE) {
        if (env_flag(v, &on) != TS_OK)
            return jobopt_fail(c->err, TS_EOPTVALUE,
                               "Invalid value \"%s\" (use yes, no or a number)", v);
        return on ? jobopt_apply(c, def, NULL) : TS_OK;
    }
    if (def->arg == JOBOPT_ARG_OPTIONAL && *v == '\0')
        return jobopt_apply(c, def, NULL); /* SBATCH_EXCLUSIVE= means --exclusive */
    return jobopt_apply(c, def, v);
}

int jobopt_apply_env(struct jobopt_ctx *c)
{
    enum jobopt_cmd cmd = c->in->cmd;

    for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
        const struct jobopt_envdef *e = &envs[i];
        const char *v = (e->cmds & JOBOPT_CMD(cmd)) ? env_get(c->in->envp, e->var) : NULL;
        const struct jobopt_def *def = v ? jobopt_find(cmd, e->opt) : NULL;
        int rc;

        if (!def)
            continue;
        if (e->kind == ENV_OUTSIDE_HET && env_get(c->in->envp, "SLURM_HET_SIZE"))
            continue;
        if (e->kind == ENV_OUTSIDE_ALLOC && env_get(c->in->envp, "SLURM_JOB_ID"))
            continue;
        /* The environment applies to every component; -v must count once. */
        if ((def->flags & JOBOPT_F_COMMAND) && c->comp > 0)
            continue;
        snprintf(c->err->cur_where, sizeof(c->err->cur_where), "%s", e->var);
        rc = env_apply_one(c, e, def, v);
        c->err->cur_where[0] = '\0';
        if (rc != TS_OK)
            return rc;
    }
    return TS_OK;
}
