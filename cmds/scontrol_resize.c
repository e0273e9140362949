/* The resize scripts of scontrol_resize.h. Written with the caller's own rights: the
 * command runs as the user, in the user's folder. */
#include "cmds/scontrol_resize.h"

#include "common/job/jobenv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each variable becomes: a value, or NULL to unset it. */
static const char *value_of(const Tessera__JobRecord *job, const char *name, char *buf,
                            size_t len)
{
    if (!strcmp(name, "SLURM_NODELIST") || !strcmp(name, "SLURM_JOB_NODELIST"))
        return job->nodes ? job->nodes : "";
    if (!strcmp(name, "SLURM_NNODES") || !strcmp(name, "SLURM_JOB_NUM_NODES")) {
        snprintf(buf, len, "%u", job->alloc_nodes);
        return buf;
    }
    if (!strcmp(name, "SLURM_JOB_CPUS_PER_NODE")) {
        uint32_t cpus[256];
        size_t n = job->n_allocs < 256 ? job->n_allocs : 256;
        for (size_t i = 0; i < n; i++)
            cpus[i] = job->allocs[i]->cpus;
        return jobenv_compress_counts(cpus, n, buf, len);
    }
    return NULL; /* the task counts: a shrunk job's tasks are for its next steps to say */
}

static const char *const variables[] = {
    "SLURM_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
    "SLURM_JOB_CPUS_PER_NODE", "SLURM_NPROCS", "SLURM_NTASKS", "SLURM_TASKS_PER_NODE",
};

char *scontrol_resize_script(const Tessera__JobRecord *job, int csh)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    for (size_t i = 0; i < sizeof(variables) / sizeof(variables[0]); i++) {
        const char *name = variables[i];
        if (!getenv(name))
            continue;
        char buf[4096];
        const char *v = value_of(job, name, buf, sizeof(buf));
        /* numbers bare, lists quoted, as Slurm writes them */
        int quote = v && strcmp(name, "SLURM_NNODES") && strcmp(name, "SLURM_JOB_NUM_NODES");
        if (!v)
            fprintf(f, csh ? "unsetenv %s\n" : "unset %s\n", name);
        else
            fprintf(f, csh ? "setenv %s %s%s%s\n" : "export %s=%s%s%s\n", name,
                    quote ? "\"" : "", v, quote ? "\"" : "");
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static int write_one(const Tessera__JobRecord *job, int csh, const char *path)
{
    char *text = scontrol_resize_script(job, csh);
    int fd = text ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0700)
                  : -1;
    size_t len = text ? strlen(text) : 0;
    int bad = fd < 0 || write(fd, text, len) != (ssize_t)len;
    int saved = errno;
    if (fd >= 0 && close(fd) != 0)
        bad = 1;
    free(text);
    if (bad)
        fprintf(stderr, "Could not create file %s: %s\n", path, strerror(saved));
    return bad;
}

int scontrol_resize_write(const Tessera__JobRecord *job)
{
    if (!getenv("SLURM_JOBID"))
        return 0;
    char sh[64], csh[64];
    snprintf(sh, sizeof(sh), "slurm_job_%u_resize.sh", job->job_id);
    snprintf(csh, sizeof(csh), "slurm_job_%u_resize.csh", job->job_id);
    if (write_one(job, 1, csh) || write_one(job, 0, sh))
        return 1;
    printf("To reset Slurm environment variables, execute\n"
           "  For bash or sh shells:  . ./%s\n"
           "  For csh shells:         source ./%s\n",
           sh, csh);
    return 0;
}
