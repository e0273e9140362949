/* The step daemon's tasks: their environment, program, files and identity are computed
 * first; then each is forked and exec'd. Between fork and exec only async-signal-safe
 * calls are made (no allocation, no name service lookups).
 */
#include "noded/procinfo.h"
#include "noded/stepd.h"

#include "common/conf/conf.h"
#include "common/job/multiprog.h"
#include "common/job/stdpath.h"
#include "common/job/stepenv.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The value of name in env, or NULL. */
static const char *env_get(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; env && env[i]; i++)
        if (!strncmp(env[i], name, len) && env[i][len] == '=')
            return env[i] + len + 1;
    return NULL;
}

/* The task's PATH (execvp would search the daemon's), searched by the task's process once
 * it is the user: root never probes the user's folders. */
static const char *search_path(char *const *env)
{
    const char *path = env_get(env, "PATH");
    return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

/* A task's file: srun filled in the job's escapes (docs/steps.md, "Standard streams");
 * the task's rank, the node's index and name, and what an older srun left are filled in
 * here, below the step's working folder when relative. "" stays "" (srun's). */
static int task_path(const struct stepd *sd, const struct sd_task *t, const char *pattern,
                     char **out)
{
    if (!pattern || !*pattern)
        return (*out = strdup("")) ? TS_OK : TS_ENOMEM;
    const Tessera__StepLayout *l = sd->layout;
    struct stdpath_values v = STDPATH_VALUES_INIT;
    v.job_id = sd->step_job_id;
    v.step_id = l->step_id;
    v.task_id = t->rank;
    v.node_id = (int64_t)sd->node_index;
    v.host = sd->node;
    v.user = l->user_name;
    v.final = 1;
    return stdpath_pattern_expand(pattern, sd->launch->work_dir, &v, STDPATH_MAX - 1, out);
}

/* The index of (path, flags) in the step's files, added when new; -1 for "" (none). */
static int file_index(struct stepd *sd, const char *path, int flags)
{
    if (!*path)
        return -1;
    for (size_t i = 0; i < sd->nfiles; i++)
        if (sd->files[i].flags == flags && strcmp(sd->files[i].path, path) == 0)
            return (int)i;
    struct sd_file *v = realloc(sd->files, (sd->nfiles + 1) * sizeof(*v));
    if (!v)
        return -2;
    sd->files = v;
    char *copy = strdup(path);
    if (!copy)
        return -2;
    sd->files[sd->nfiles] = (struct sd_file){.path = copy, .flags = flags, .fd = -1};
    return (int)sd->nfiles++;
}

static int task_files(struct stepd *sd, struct sd_task *t)
{
    const Tessera__StepLaunchRequest *lr = sd->launch;
    int wmode = O_WRONLY | O_CREAT | (lr->append ? O_APPEND : O_TRUNC);
    int err = task_path(sd, t, lr->std_out, &t->out_path);
    if (!err)
        err = task_path(sd, t, lr->std_err, &t->err_path);
    if (!err)
        err = task_path(sd, t, lr->std_in, &t->in_path);
    if (err)
        return err;
    t->out_file = file_index(sd, t->out_path, wmode);
    t->err_file = file_index(sd, t->err_path, wmode);
    t->in_file = file_index(sd, t->in_path, O_RDONLY);
    return t->out_file < -1 || t->err_file < -1 || t->in_file < -1 ? TS_ENOMEM : TS_OK;
}

/* --multi-prog: each task's argv from the configuration text, parsed again here with the
 * same bounds srun applied, since the sender is not trusted (common/job/multiprog.h). */
static int multi_prog_argvs(struct stepd *sd, char *errbuf, size_t errlen)
{
    const Tessera__StepLaunchRequest *lr = sd->launch;
    struct multiprog *mp = NULL;
    char why[256];
    int err = multiprog_parse(lr->multi_prog, strlen(lr->multi_prog), sd->layout->ntasks,
                              "(multi-prog)", &mp, why, sizeof(why));
    if (err) {
        snprintf(errbuf, errlen, "invalid multi-prog configuration: %s", why);
        return err;
    }
    for (size_t i = 0; !err && i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        const Tessera__StepLaunchComponent *lc = lr->components[t->comp];
        err = multiprog_argv(mp, t->rank, lc->argv + 1, lc->n_argv - 1, &t->argv);
        t->argv_owned = t->argv != NULL;
    }
    multiprog_destroy(mp);
    if (err)
        snprintf(errbuf, errlen, "multi-prog: %s", ts_strerror(err));
    return err;
}

int stepd_tasks_prepare(struct stepd *sd, char *errbuf, size_t errlen)
{
    const Tessera__StepLayoutNode *here = sd->layout->nodes[sd->node_index];
    const Tessera__StepLaunchRequest *lr = sd->launch;
    sd->ntasks = here->n_ranks;
    sd->tasks = calloc(sd->ntasks ? sd->ntasks : 1, sizeof(*sd->tasks));
    if (!sd->tasks)
        return TS_ENOMEM;
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        t->rank = here->ranks[i];
        t->comp = i < here->n_rank_components ? here->rank_components[i] : 0;
        t->out_fd = t->err_fd = t->in_fd = -1;
        t->out_file = t->err_file = t->in_file = -1;
        t->labelled_fd[0] = t->labelled_fd[1] = -1;
        if (t->comp >= lr->n_components || lr->components[t->comp]->n_argv == 0) {
            snprintf(errbuf, errlen, "no program for task %u", t->rank);
            return TS_EINVAL;
        }
        int err = task_files(sd, t);
        if (err == TS_EPATH_TOOLONG)
            snprintf(errbuf, errlen, "the file name of task %u is too long", t->rank);
        if (err)
            return err;
    }
    return lr->multi_prog && *lr->multi_prog ? multi_prog_argvs(sd, errbuf, errlen) : TS_OK;
}

/* Why the task cannot start when one of its files could not be opened (Slurm's words),
 * else NULL. */
static char *files_failed(const struct stepd *sd, const struct sd_task *t)
{
    static const char *const names[] = {"stdout", "stderr", "stdin"};
    const int which[] = {t->out_file, t->err_file, t->in_file};
    for (size_t k = 0; k < 3; k++) {
        if (which[k] < 0 || !sd->files[which[k]].err)
            continue;
        char *text = NULL;
        if (asprintf(&text, "Could not open %s file %s: %s", names[k],
                     sd->files[which[k]].path, strerror(sd->files[which[k]].err)) < 0)
            return NULL;
        return text;
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* fork and exec */

/* exec the task's program, found as the user finds it: a name with a '/' as it is, else
 * each folder of search in turn ("" is the working folder), then the working folder.
 * Returns only on failure, with
 * errno: EACCES when a candidate was there but could not be run, else what the last try
 * said (ENOENT when nothing was found). System calls only: this runs between fork and
 * exec. */
static void exec_searched(const char *prog, char *const argv[], char *const env[],
                          const char *search)
{
    if (strchr(prog, '/')) {
        execve(prog, argv, env);
        return;
    }
    size_t plen = strlen(prog);
    int denied = 0, last = ENOENT;
    for (const char *p = search;; p++) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[4096];
        if (len + plen + 3 <= sizeof(cand)) {
            if (len == 0) {
                memcpy(cand, "./", 2);
                len = 2;
            } else {
                memcpy(cand, p, len);
                cand[len++] = '/';
            }
            memcpy(cand + len, prog, plen + 1);
            execve(cand, argv, env);
            if (errno == EACCES)
                denied = 1;
            else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
                     errno != ENAMETOOLONG)
                return; /* found, but it cannot run (ENOEXEC, E2BIG...): say so */
            last = errno;
        }
        if (!end)
            break;
        p = end;
    }
    execve(prog, argv, env); /* the working folder last, as Slurm's srun searches */
    if (errno == EACCES)
        denied = 1;
    else if (errno != ENOENT && errno != ENOTDIR)
        return;
    errno = denied ? EACCES : (last == ENOTDIR || last == ELOOP ? ENOENT : last);
}

static void plan_identity(const struct stepd *sd, struct sd_identity *id)
{
    const Tessera__StepLayout *l = sd->layout;
    id->uid = (uid_t)l->uid;
    id->gid = (gid_t)l->gid;
    id->ngroups = -1;
    if (geteuid() != 0 || l->uid == 0)
        return;
    id->ngroups = namecache_user_groups(l->user_name, id->gid, id->groups,
                                        (int)(sizeof(id->groups) / sizeof(id->groups[0])));
}

__attribute__((noreturn)) static void child_fail(const char *what, const char *detail, int code)
{
    dprintf(2, "tessera-stepd: error: %s: %s\n", what, detail);
    _exit(code);
}

struct child_fds {
    int in, out, err, pmi; /* the child's ends or its files; -1: none */
};

/* The task's streams, then the user, the folder, the program. Every file was opened
 * before the fork (as the user); what fails here goes to the task's standard error,
 * which reaches srun or its file. */
__attribute__((noreturn)) static void child_exec(const struct stepd *sd, const struct sd_task *t,
                                                 const struct sd_identity *id,
                                                 const struct child_fds *fds)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    int in = fds->in >= 0 ? fds->in : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || dup2(in, 0) < 0 || dup2(fds->out, 1) < 0 ||
        (fds->err >= 0 ? dup2(fds->err, 2) : dup2(1, 2)) < 0)
        _exit(1);
    procinfo_oom_protect(0); /* the task is the kernel's to choose, not its step daemon */
    if (id->ngroups >= 0 && (setgroups((size_t)id->ngroups, id->groups) != 0 ||
                             setgid(id->gid) != 0 || setuid(id->uid) != 0))
        child_fail("cannot become the step's user", strerror(errno), 1);
    if (fds->pmi >= 0)
        fcntl(fds->pmi, F_SETFD, 0); /* PMI_FD must survive the exec */
    const char *dir = sd->launch->work_dir && *sd->launch->work_dir ? sd->launch->work_dir : "/";
    if (chdir(dir) != 0) {
        dprintf(2, "tessera-stepd: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                dir, strerror(errno));
        if (chdir("/tmp") != 0)
            _exit(1);
    }
    exec_searched(t->argv[0], t->argv, t->env, t->search);
    /* as Slurm's: the task exits 2 (ENOENT) or 126 and says why, naming the program */
    int err = errno;
    dprintf(2, "tessera-stepd: error: execve(): %s: %s\n", t->argv[0], strerror(err));
    _exit(err == ENOENT ? 2 : 126);
}

static int start_all(struct stepd *sd, const struct sd_identity *idp, char **base,
                     const int *pmi_fds, char *errbuf, size_t errlen);

static int pipe_pair(int fds[2])
{
    return pipe2(fds, O_CLOEXEC) == 0 ? TS_OK : TS_ESYS;
}

static int file_fd(const struct stepd *sd, int index)
{
    return index >= 0 ? sd->files[index].fd : -1;
}

/* The task's streams: its files, or pipes to us (ours non-blocking, the child's ends
 * closed after the fork). Errors go with the output when they name the same file. */
static int task_pipes(struct stepd *sd, struct sd_task *t, struct child_fds *c)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
    int stdin_here = sd->launch->stdin_task0 && t->rank == sd->launch->stdin_rank &&
                     t->in_file < 0;
    /* under --label a file's lines come through us, to be labelled */
    int label = sd->launch->label;
    int out_direct = t->out_file >= 0 && !label, err_direct = t->err_file >= 0 && !label;
    if ((!out_direct && pipe_pair(out)) || (!err_direct && pipe_pair(err)) ||
        (stdin_here && pipe_pair(in)))
        return TS_ESYS;
    t->out_fd = out[0];
    c->out = out_direct ? dup(file_fd(sd, t->out_file)) : out[1];
    t->err_fd = err[0];
    c->err = !err_direct ? err[1]
             : t->err_file == t->out_file ? -1 : dup(file_fd(sd, t->err_file));
    t->in_fd = in[1];
    c->in = t->in_file >= 0 ? dup(file_fd(sd, t->in_file)) : in[0];
    t->labelled_fd[0] = label && t->out_file >= 0 ? dup(file_fd(sd, t->out_file)) : -1;
    t->labelled_fd[1] = label && t->err_file >= 0 ? dup(file_fd(sd, t->err_file)) : -1;
    if (c->out < 0 || (err_direct && t->err_file != t->out_file && c->err < 0) ||
        (t->in_file >= 0 && c->in < 0) || (label && t->out_file >= 0 && t->labelled_fd[0] < 0) ||
        (label && t->err_file >= 0 && t->labelled_fd[1] < 0))
        return TS_ESYS;
    if (t->out_fd >= 0)
        fcntl(t->out_fd, F_SETFL, O_NONBLOCK);
    if (t->err_fd >= 0)
        fcntl(t->err_fd, F_SETFL, O_NONBLOCK);
    if (t->in_fd >= 0)
        fcntl(t->in_fd, F_SETFL, O_NONBLOCK);
    return TS_OK;
}

static void close_child_ends(struct child_fds *c)
{
    if (c->out >= 0)
        close(c->out);
    if (c->err >= 0)
        close(c->err);
    if (c->in >= 0)
        close(c->in);
}

int stepd_tasks_start(struct stepd *sd, const int *pmi_fds, char *errbuf, size_t errlen)
{
    struct sd_identity id;
    plan_identity(sd, &id);
    /* the message's array has a count, not a NULL at its end */
    const Tessera__StepLaunchRequest *lr = sd->launch;
    char **base = calloc(lr->n_env + 1, sizeof(char *));
    if (!base)
        return TS_ENOMEM;
    if (lr->n_env)
        memcpy(base, lr->env, lr->n_env * sizeof(char *));
    int err = start_all(sd, &id, base, pmi_fds, errbuf, errlen);
    free(base);
    return err;
}

static int start_all(struct stepd *sd, const struct sd_identity *idp, char **base,
                     const int *pmi_fds, char *errbuf, size_t errlen)
{
    const struct sd_identity id = *idp;
    if (stepd_files_open(&id, sd->files, sd->nfiles) != TS_OK) {
        snprintf(errbuf, errlen, "the tasks' files could not be opened");
        return TS_ESYS;
    }
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        if ((t->launch_error = files_failed(sd, t)))
            continue; /* it ends unstarted, saying why (noded/stepd.c) */
        struct stepenv_task st = {.node = sd->node_index, .local = i, .pmi_fd = pmi_fds[i],
                                  .srun_host = sd->launch->io_host,
                                  .srun_port = (uint16_t)sd->launch->io_port};
        t->env = stepenv_task(sd->layout, &st, base);
        if (!t->env)
            return TS_ENOMEM;
        const Tessera__StepLaunchComponent *lc = sd->launch->components[t->comp];
        t->search = search_path(t->env);
        if (!t->argv && !(t->argv = calloc(lc->n_argv + 1, sizeof(char *))))
            return TS_ENOMEM;
        for (size_t k = 0; !t->argv_owned && k < lc->n_argv; k++)
            t->argv[k] = lc->argv[k];
        struct child_fds c = {.in = -1, .out = -1, .err = -1, .pmi = pmi_fds[i]};
        if (task_pipes(sd, t, &c) != TS_OK) {
            close_child_ends(&c);
            snprintf(errbuf, errlen, "pipe: %s", strerror(errno));
            return TS_ESYS;
        }
        pid_t pid = fork();
        if (pid == 0)
            child_exec(sd, t, &id, &c); /* never returns */
        close_child_ends(&c);
        if (pid < 0) {
            snprintf(errbuf, errlen, "fork: %s", strerror(errno));
            return TS_ESYS;
        }
        t->pid = pid;
    }
    stepd_files_close(sd->files, sd->nfiles); /* the tasks have their own copies */
    return TS_OK;
}

void stepd_tasks_free(struct stepd *sd)
{
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        stepenv_free(t->env);
        if (t->argv_owned)
            multiprog_argv_free(t->argv);
        else
            free(t->argv);
        free(t->out_path);
        free(t->err_path);
        free(t->in_path);
        free(t->launch_error);
        for (int k = 0; k < 2; k++) {
            linelabel_free(&t->label[k]);
            if (t->labelled_fd[k] >= 0)
                close(t->labelled_fd[k]);
        }
        if (t->out_fd >= 0)
            close(t->out_fd);
        if (t->err_fd >= 0)
            close(t->err_fd);
        if (t->in_fd >= 0)
            close(t->in_fd);
    }
    free(sd->tasks);
    sd->tasks = NULL;
    sd->ntasks = 0;
    stepd_files_close(sd->files, sd->nfiles);
    for (size_t i = 0; i < sd->nfiles; i++)
        free(sd->files[i].path);
    free(sd->files);
    sd->files = NULL;
    sd->nfiles = 0;
}
