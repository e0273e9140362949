/* Jobs on this node: launching batch scripts as their users, signals, terminations with
 * KillWait, exits, and the spool records that let a restarted daemon clean up.
 *
 * A batch script runs in a session (and so a process group) of its own, led by the
 * script's process: signals go to the whole group, and when the script ends whatever it
 * left in its group is killed. Its spool folder holds the script and a record of the
 * group (pid and the process's start time, so a later daemon never kills a stranger that
 * got the same pid).
 */
#include "noded/noded.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "common/loop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int job_table_create(struct noded *nd)
{
    nd->jobs = hashmap_create();
    return nd->jobs ? TS_OK : TS_ENOMEM;
}

void job_rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        char child[1400];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            if (unlink(child) != 0 && errno == EISDIR)
                job_rm_tree(child);
        }
        closedir(d);
    }
    rmdir(path);
}

/* Forget a job with nothing left running here. */
static void job_free(struct noded *nd, struct nd_job *j)
{
    loop_timer_cancel(nd->loop, j->kill_timer);
    hashmap_del_u32(nd->jobs, j->id);
    if (j->spool[0])
        job_rm_tree(j->spool);
    free(j);
}

void job_table_destroy(struct noded *nd)
{
    /* the daemon stops; its jobs go on (a restarted daemon kills them: their ends could
     * no longer be reported) */
    size_t cursor = 0;
    void *value;
    while (nd->jobs && hashmap_next(nd->jobs, &cursor, NULL, NULL, &value)) {
        struct nd_job *j = value;
        loop_timer_cancel(nd->loop, j->kill_timer);
        while (j->steps) {
            struct nd_step *s = j->steps;
            j->steps = s->next;
            loop_timer_cancel(nd->loop, s->kill_timer);
            if (s->ctl_fd >= 0)
                close(s->ctl_fd);
            free(s);
        }
        free(j);
    }
    hashmap_destroy(nd->jobs);
    nd->jobs = NULL;
}

struct nd_job *job_get_or_add(struct noded *nd, uint32_t job_id)
{
    struct nd_job *j = hashmap_get_u32(nd->jobs, job_id);
    if (j)
        return j;
    if (!(j = calloc(1, sizeof(*j))))
        return NULL;
    j->id = job_id;
    if (hashmap_put_u32(nd->jobs, job_id, j) != TS_OK) {
        free(j);
        return NULL;
    }
    return j;
}

void job_maybe_done(struct noded *nd, struct nd_job *j)
{
    if (j->pid || j->steps)
        return;
    /* a terminate is over once nothing is left: the controller waits for this report
     * (a batch script's own end was reported already) */
    if (j->terminating && !j->batch)
        link_report_end(nd, j->id, -1, 0, NULL);
    job_free(nd, j);
}

/* The start time of a process (field 22 of /proc/PID/stat), 0 when it is gone. */
unsigned long long job_proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long start = 0;
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                           "%*d %*d %*d %llu", &start) != 1)
        start = 0;
    return start;
}

/* ------------------------------------------------------------------------------------ */
/* the spool */

int job_write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return TS_ESYS;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n <= 0) {
            close(fd);
            return TS_ESYS;
        }
        off += (size_t)n;
    }
    return close(fd) == 0 ? TS_OK : TS_ESYS;
}

static void record_group(const struct nd_job *j)
{
    char path[700], text[64];
    snprintf(path, sizeof(path), "%s/pgid", j->spool);
    snprintf(text, sizeof(text), "%d %llu\n", (int)j->pid, j->start);
    if (job_write_text(path, text, 0600) != TS_OK)
        log_warn("job %u: cannot record its process group in %s", j->id, path);
}

/* Kill one process group a previous life recorded, if it is still the same one. */
void job_clean_dir(const char *dir)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/pgid", dir);
    FILE *f = fopen(path, "re");
    int pid = 0;
    unsigned long long start = 0;
    if (f) {
        if (fscanf(f, "%d %llu", &pid, &start) != 2)
            pid = 0;
        fclose(f);
    }
    if (pid > 1 && start && job_proc_start_time(pid) == start) {
        log_info("killing process group %d left by an earlier daemon (%s)", pid, dir);
        kill(-pid, SIGKILL);
    }
    job_rm_tree(dir);
}

void job_clean_spool(struct noded *nd)
{
    DIR *d = opendir(nd->spool);
    if (!d)
        return;
    struct dirent *e;
    char dir[1024];
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "job.", 4) != 0 && strncmp(e->d_name, "step.", 5) != 0)
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", nd->spool, e->d_name);
        job_clean_dir(dir);
    }
    closedir(d);
}

/* ------------------------------------------------------------------------------------ */
/* the child: from fork to exec */

/* Write a line where the job's error output goes (the child has no other channel). */
__attribute__((noreturn)) static void child_fail(const char *what, const char *detail)
{
    dprintf(2, "tessera-noded: error: %s: %s\n", what, detail);
    _exit(127);
}

static void child_reset_signals(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
}

/* What the child needs, computed before the fork: after it only async-signal-safe work is
 * sound (the daemon has threads), so no allocation or name service lookups there. */
struct exec_plan {
    const Tessera__BatchLaunchRequest *req;
    const char *script;
    char **argv;
    char **envp;
    gid_t groups[256];
    int ngroups; /* -1: keep the daemon's identity */
};

static void child_become_user(const struct exec_plan *plan)
{
    const Tessera__BatchLaunchRequest *req = plan->req;
    if (plan->ngroups < 0)
        return;
    if (setgroups((size_t)plan->ngroups, plan->groups) != 0)
        child_fail("setgroups", strerror(errno));
    if (setgid((gid_t)req->gid) != 0)
        child_fail("setgid", strerror(errno));
    if (setuid((uid_t)req->uid) != 0)
        child_fail("setuid", strerror(errno));
}

static void child_redirect(int target, const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0)
        child_fail(path, strerror(errno));
    if (dup2(fd, target) < 0)
        child_fail("dup2", strerror(errno));
    close(fd);
}

__attribute__((noreturn)) static void child_exec(const struct exec_plan *plan)
{
    const Tessera__BatchLaunchRequest *req = plan->req;
    child_reset_signals();
    setsid();
    child_become_user(plan);
    int mode = O_WRONLY | O_CREAT | (req->append ? O_APPEND : O_TRUNC);
    child_redirect(0, req->std_in && *req->std_in ? req->std_in : "/dev/null", O_RDONLY);
    child_redirect(1, req->std_out, mode);
    if (req->std_err && *req->std_err && strcmp(req->std_err, req->std_out) != 0)
        child_redirect(2, req->std_err, mode);
    else if (dup2(1, 2) < 0)
        _exit(127);
    if (chdir(req->work_dir) != 0) {
        /* as Slurm: say so in the job's output and run in /tmp */
        dprintf(2, "tessera-noded: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                req->work_dir, strerror(errno));
        if (chdir("/tmp") != 0)
            _exit(127);
    }
    execve(plan->script, plan->argv, plan->envp);
    child_fail(plan->script, strerror(errno));
}

static int plan_exec(struct exec_plan *plan, const Tessera__BatchLaunchRequest *req,
                     const char *script)
{
    plan->req = req;
    plan->script = script;
    plan->ngroups = -1;
    if (geteuid() == 0 && req->uid != 0) {
        int n = (int)(sizeof(plan->groups) / sizeof(plan->groups[0]));
        if (getgrouplist(req->user_name, (gid_t)req->gid, plan->groups, &n) < 0)
            n = 0; /* more groups than we keep, or none known: the primary group alone */
        if (n == 0) {
            plan->groups[0] = (gid_t)req->gid;
            n = 1;
        }
        plan->ngroups = n;
    }
    plan->argv = calloc(req->n_argv + 2, sizeof(char *));
    plan->envp = calloc(req->n_env + 1, sizeof(char *));
    if (!plan->argv || !plan->envp)
        return TS_ENOMEM;
    plan->argv[0] = (char *)script;
    for (size_t i = 0; i < req->n_argv; i++)
        plan->argv[i + 1] = req->argv[i];
    for (size_t i = 0; i < req->n_env; i++)
        plan->envp[i] = req->env[i];
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the daemon's side */

/* The script ended (or the group leader did): clean the group up and report. Steps of
 * the job go on until the controller ends them. */
static void job_exited(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                       void *arg)
{
    struct noded *nd = arg;
    size_t cursor = 0;
    void *value;
    struct nd_job *j = NULL;
    while (hashmap_next(nd->jobs, &cursor, NULL, NULL, &value))
        if (((struct nd_job *)value)->pid == pid)
            j = value;
    if (!j)
        return;
    kill(-pid, SIGKILL); /* what the script left running in its group ends with it */
    log_info("job %u: batch script ended (%s %d)", j->id,
             WIFSIGNALED(status) ? "signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    link_report_end(nd, j->id, status, 1, ru);
    j->pid = 0;
    job_rm_tree(j->spool);
    j->spool[0] = '\0';
    job_maybe_done(nd, j);
}

/* The spool folder: owned by the user, who must be able to read and run the script. */
static int prepare_spool(struct noded *nd, struct nd_job *j,
                         const Tessera__BatchLaunchRequest *req, char *script, size_t len)
{
    snprintf(j->spool, sizeof(j->spool), "%s/job.%u", nd->spool, req->job_id);
    job_rm_tree(j->spool); /* a requeued job may come back to the same node */
    if (mkdir(j->spool, 0700) != 0)
        return TS_ESYS;
    snprintf(script, len, "%s/script", j->spool);
    if (job_write_text(script, req->script, 0700) != TS_OK)
        return TS_ESYS;
    if (geteuid() == 0 && (chown(j->spool, req->uid, req->gid) != 0 ||
                           chown(script, req->uid, req->gid) != 0))
        return TS_ESYS;
    return TS_OK;
}

int job_launch_batch(struct noded *nd, const Tessera__BatchLaunchRequest *req, char *errbuf,
                     size_t errlen)
{
    struct nd_job *old = hashmap_get_u32(nd->jobs, req->job_id);
    if (old && (old->pid || old->batch)) {
        snprintf(errbuf, errlen, "job %u is already running here", req->job_id);
        return TS_EEXIST;
    }
    if (old) { /* steps of an earlier life of the job (requeued): not this one's */
        snprintf(errbuf, errlen, "job %u still has steps ending here", req->job_id);
        return TS_EEXIST;
    }
    if (geteuid() != 0 && req->uid != geteuid()) {
        snprintf(errbuf, errlen, "a daemon running as uid %u cannot run jobs of uid %u",
                 (unsigned)geteuid(), req->uid);
        return TS_EPERM;
    }
    struct nd_job *j = calloc(1, sizeof(*j));
    if (!j)
        return TS_ENOMEM;
    j->id = req->job_id;
    j->batch = 1;
    char script[700];
    if (prepare_spool(nd, j, req, script, sizeof(script)) != TS_OK) {
        snprintf(errbuf, errlen, "cannot prepare %s: %s", j->spool, strerror(errno));
        job_rm_tree(j->spool);
        free(j);
        return TS_ESYS;
    }
    struct exec_plan plan;
    if (plan_exec(&plan, req, script) != TS_OK) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ENOMEM));
        free(plan.argv);
        free(plan.envp);
        job_rm_tree(j->spool);
        free(j);
        return TS_ENOMEM;
    }
    pid_t pid = fork();
    if (pid == 0)
        child_exec(&plan); /* never returns */
    int fork_errno = errno;
    free(plan.argv);
    free(plan.envp);
    if (pid < 0) {
        snprintf(errbuf, errlen, "fork: %s", strerror(fork_errno));
        job_rm_tree(j->spool);
        free(j);
        return TS_ESYS;
    }
    /* watched in the same iteration as the fork: its exit cannot be reaped unwatched */
    j->pid = pid;
    j->start = job_proc_start_time(pid);
    if (loop_child_watch(nd->loop, pid, job_exited, nd) != TS_OK ||
        hashmap_put_u32(nd->jobs, j->id, j) != TS_OK) {
        kill(pid, SIGKILL);
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ENOMEM));
        free(j);
        return TS_ENOMEM;
    }
    record_group(j);
    log_info("job %u: batch script started as uid %u, pid %d", j->id, req->uid, (int)pid);
    return TS_OK;
}

/* signo to every process group of the job here: its batch script's and its steps'. */
static void signal_groups(struct noded *nd, struct nd_job *j, int signo)
{
    if (j->pid)
        kill(-j->pid, signo);
    step_signal_all(nd, j, signo);
}

static void kill_wait_over(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct nd_job *j = arg;
    j->kill_timer = NULL;
    if (j->pid) {
        log_info("job %u: still there after KillWait, SIGKILL", j->id);
        kill(-j->pid, SIGKILL);
    }
}

int job_signal(struct noded *nd, uint32_t job_id, int signo, int terminate, unsigned kill_wait)
{
    struct nd_job *j = hashmap_get_u32(nd->jobs, job_id);
    if (!j)
        return TS_OK; /* nothing of it runs here */
    if (!terminate) {
        signal_groups(nd, j, signo);
        return TS_OK;
    }
    if (j->terminating)
        return TS_OK;
    j->terminating = 1;
    if (j->pid) {
        kill(-j->pid, SIGCONT); /* a suspended job must be able to act on SIGTERM */
        kill(-j->pid, SIGTERM);
    }
    for (struct nd_step *s = j->steps; s; s = s->next)
        step_terminate(nd, s, kill_wait);
    j->kill_timer = loop_timer_add(nd->loop, (uint64_t)kill_wait * 1000, 0, kill_wait_over, j);
    return TS_OK;
}

size_t job_running_ids(struct noded *nd, uint32_t **ids)
{
    size_t n = hashmap_count(nd->jobs), k = 0;
    for (const struct nd_report *r = nd->reports; r; r = r->next)
        n++;
    *ids = calloc(n + 1, sizeof(**ids));
    if (!*ids)
        return 0;
    size_t cursor = 0;
    void *value;
    while (hashmap_next(nd->jobs, &cursor, NULL, NULL, &value))
        (*ids)[k++] = ((struct nd_job *)value)->id;
    for (const struct nd_report *r = nd->reports; r; r = r->next)
        (*ids)[k++] = r->is_step ? r->step.job_id : r->msg.job_id;
    return k;
}
