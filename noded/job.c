/* Jobs on this node: launching batch scripts as their users, signals, terminations with
 * KillWait, exits, and what a restarted daemon finds of them (noded/spool.h).
 *
 * A batch script runs under a waiter: a child of the daemon that stays root, leads a
 * session (and so a process group) of its own, blocks every signal it can, and forks the
 * script, which becomes the user. Terminates go to the whole group: the script and what
 * it started get them, the waiter (root, signals blocked) only SIGKILL; a signal may also
 * be for the steps alone or the script alone (scancel -b, --signal=B:). When the
 * script ends, the waiter writes its wait status and usage to the job's record in the
 * daemon's state folder and then SIGKILLs its group, itself included: what the script left
 * running ends with it, and the end is known even when the daemon is down at that moment.
 * A restarted daemon adopts a waiter that still runs, and reports an end it recorded.
 *
 * The waiter is forked from a threaded daemon and does not exec: it makes system calls
 * only (common/util/safefs.h's async-signal-safe functions, stepstatus_format). It starts the
 * script only once the daemon has recorded it (a byte on a pipe), so no script runs that
 * a restarted daemon could not find.
 */
#include "noded/containment.h"
#include "noded/loginenv.h"
#include "noded/noded.h"
#include "noded/procinfo.h"
#include "noded/spool.h"
#include "noded/stepstatus.h"
#include "noded/userfile.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "common/util/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define ADOPTED_POLL_MS 1000 /* how often an adopted waiter is looked at */

int job_table_create(struct noded *nd)
{
    nd->jobs = hashmap_create();
    return nd->jobs ? TS_OK : TS_ENOMEM;
}

static void job_release(struct noded *nd, struct nd_job *j)
{
    deadline_cancel(nd->loop, &j->kill_after);
    loop_timer_cancel(nd->loop, j->poll_timer);
    free(j->user_name);
    free(j->work_dir);
    free(j->err_path);
    free(j);
}

/* Forget a job with nothing left running here. */
static void job_free(struct noded *nd, struct nd_job *j)
{
    containment_job_end(nd, j->id); /* what it left detached here goes with it */
    hashmap_del_u32(nd->jobs, j->id);
    job_release(nd, j);
}

void job_table_destroy(struct noded *nd)
{
    /* the daemon stops; its jobs go on (a restarted daemon adopts their batch scripts and
     * kills their steps) */
    size_t cursor = 0;
    void *value;
    while (nd->jobs && hashmap_next(nd->jobs, &cursor, NULL, NULL, &value)) {
        struct nd_job *j = value;
        while (j->steps) {
            struct nd_step *s = j->steps;
            j->steps = s->next;
            deadline_cancel(nd->loop, &s->kill_after);
            if (s->ctl_fd >= 0)
                close(s->ctl_fd);
            free(s);
        }
        job_release(nd, j);
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
    j->nd = nd;
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
        report_job_end(nd, j->id, -1, 0, NULL);
    job_free(nd, j);
}

/* ------------------------------------------------------------------------------------ */
/* the waiter and the script: from fork to exec, system calls only */

/* What the waiter and the script need, computed before the fork: after it only
 * async-signal-safe work is sound (the daemon has threads), so no allocation or name
 * service lookups there. */
struct exec_plan {
    const Tessera__BatchLaunchRequest *req;
    const char *script;
    char **argv;
    char **envp;
    char task_pid[40];       /* SLURM_TASK_PID=, the script's pid filled in by its process */
    int login;               /* req->login_env, and `login_env` is prepared */
    struct loginenv login_env;
    gid_t groups[256];
    int ngroups;   /* -1: keep the daemon's identity */
    int record_fd; /* the job's record folder: the waiter writes "status" there */
    int go_fd;     /* the read end of the daemon's "recorded, go" pipe */
    int why_fd;    /* the script's process: where it says why it could not start */
};

/* Write a line where the job's error output goes (the child has no other channel). */
__attribute__((noreturn)) static void child_fail(const char *what, const char *detail)
{
    dprintf(2, "tessera-noded: error: %s: %s\n", what, detail);
    _exit(127);
}

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

/* One of the script's files, opened as the user; when it cannot be, the waiter hears why
 * (Slurm's words) for the job's reason, and the script does not run. */
static void child_redirect(const struct exec_plan *plan, int target, const char *path,
                           int flags)
{
    static const char *const names[] = {"stdin", "stdout", "stderr"};
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        dprintf(plan->why_fd, "Could not open %s file %s: %s", names[target], path,
                strerror(err));
        child_fail(path, strerror(err));
    }
    if (dup2(fd, target) < 0)
        child_fail("dup2", strerror(errno));
    close(fd);
}

/* "SLURM_TASK_PID=" and the caller's pid, as Slurm gives the batch script its own pid. */
static void fill_task_pid(char *entry, size_t len)
{
    static const char name[] = "SLURM_TASK_PID=";
    char digits[24];
    size_t n = 0;
    for (unsigned long v = (unsigned long)getpid(); n == 0 || v; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    if (sizeof(name) + n > len)
        return;
    memcpy(entry, name, sizeof(name) - 1);
    for (size_t i = 0; i < n; i++)
        entry[sizeof(name) - 1 + i] = digits[n - 1 - i];
    entry[sizeof(name) - 1 + n] = '\0';
}

/* The script's process: the user, its files, its environment, its folder, exec. */
__attribute__((noreturn)) static void script_exec(struct exec_plan *plan)
{
    const Tessera__BatchLaunchRequest *req = plan->req;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    procinfo_oom_protect(0); /* the script is the kernel's to choose, not its waiter */
    child_become_user(plan);
    int mode = O_WRONLY | O_CREAT | (req->append ? O_APPEND : O_TRUNC);
    child_redirect(plan, 0, req->std_in && *req->std_in ? req->std_in : "/dev/null", O_RDONLY);
    child_redirect(plan, 1, req->std_out, mode);
    if (req->std_err && *req->std_err && strcmp(req->std_err, req->std_out) != 0)
        child_redirect(plan, 2, req->std_err, mode);
    else if (dup2(1, 2) < 0)
        _exit(127);
    fill_task_pid(plan->task_pid, sizeof(plan->task_pid));
    char **envp = plan->login ? loginenv_merge(&plan->login_env, plan->envp) : plan->envp;
    if (chdir(req->work_dir) != 0) {
        /* as Slurm: say so in the job's output and run in /tmp */
        dprintf(2, "tessera-noded: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                req->work_dir, strerror(errno));
        if (chdir("/tmp") != 0)
            _exit(127);
    }
    execve(plan->script, plan->argv, envp);
    child_fail(plan->script, strerror(errno));
}

/* Close every descriptor above stderr but the two kept (the daemon's listening socket
 * above all: a restarted daemon must be able to bind it again). */
static void close_all_but(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo > 3)
        close_range(3, (unsigned)lo - 1, 0);
    if (hi > lo + 1)
        close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
    close_range((unsigned)hi + 1, ~0u, 0);
}

/* No status could be recorded: exit as the script did, so that the daemon's wait4 of the
 * waiter tells the script's end (no core: this is a copy of the daemon). */
__attribute__((noreturn)) static void mirror_status(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        _exit(128 + sig); /* a signal whose default is not to terminate */
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

/* What the script's process said before it gave up (its write end is closed: it has
 * exited or exec'd), kept beside the status for the daemon's report. */
static void keep_why(int record_fd, int fd)
{
    char text[JOB_WHY_MAX];
    ssize_t n;
    while ((n = read(fd, text, sizeof(text))) < 0 && errno == EINTR)
        ;
    close(fd);
    if (n > 0)
        safefs_write_atomic(record_fd, "why", text, (size_t)n, 0600);
}

__attribute__((noreturn)) static void waiter_main(struct exec_plan *plan)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL); /* the job's signals are for the script */
    for (int s = 1; s < NSIG; s++)
        signal(s, SIG_DFL);
    setsid();
    prctl(PR_SET_NAME, "tessera-waiter");
    /* in the job's container, under its memory limit: the kernel must kill the script's
     * processes, never the waiter that records how the script ended */
    procinfo_oom_protect(1);
    close_all_but(plan->record_fd, plan->go_fd);
    char go;
    ssize_t n;
    while ((n = read(plan->go_fd, &go, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        _exit(127); /* the daemon could not record the job (or died): run nothing */
    close(plan->go_fd);
    int why[2];
    if (pipe2(why, O_CLOEXEC) != 0)
        _exit(127);
    /* the waiter's own copy of the plan (it was forked): the script's process fills in its
     * entries (SLURM_TASK_PID) where the environment points */
    plan->why_fd = why[1];
    pid_t pid = fork();
    if (pid == 0)
        script_exec(plan); /* never returns */
    close(why[1]);
    if (pid < 0)
        _exit(127);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            _exit(127);
    keep_why(plan->record_fd, why[0]);
    struct stepstatus st = {0};
    stepstatus_add_task(&st, status, &ru, 0);
    char text[256];
    size_t len = stepstatus_format(&st, text, sizeof(text));
    if (len < sizeof(text) &&
        safefs_write_atomic(plan->record_fd, "status", text, len, 0600) == TS_OK)
        kill(0, SIGKILL); /* the group: what the script left running, and this waiter */
    mirror_status(status);
}

/* What the script's process needs to read the user's login environment. A user without
 * a passwd entry still runs (the process says why it has no login environment). */
static int plan_login(struct exec_plan *plan, const Tessera__BatchLaunchRequest *req,
                      size_t n_env)
{
    struct passwd pwbuf, *pw = NULL;
    char strings[4096];
    if (getpwuid_r((uid_t)req->uid, &pwbuf, strings, sizeof(strings), &pw) != 0)
        pw = NULL;
    int err = loginenv_prepare(&plan->login_env, pw, n_env, LOGINENV_TIMEOUT_MS);
    plan->login = 1; /* released either way */
    return err;
}

static int plan_exec(struct exec_plan *plan, const Tessera__BatchLaunchRequest *req,
                     const char *script)
{
    plan->req = req;
    plan->script = script;
    plan->ngroups = -1;
    if (geteuid() == 0 && req->uid != 0)
        plan->ngroups =
            namecache_user_groups(req->user_name, (gid_t)req->gid, plan->groups,
                                  (int)(sizeof(plan->groups) / sizeof(plan->groups[0])));
    plan->argv = calloc(req->n_argv + 2, sizeof(char *));
    plan->envp = calloc(req->n_env + 2, sizeof(char *));
    if (!plan->argv || !plan->envp)
        return TS_ENOMEM;
    plan->argv[0] = (char *)script;
    for (size_t i = 0; i < req->n_argv; i++)
        plan->argv[i + 1] = req->argv[i];
    size_t n = 0;
    for (size_t i = 0; i < req->n_env; i++)
        if (strncmp(req->env[i], "SLURM_TASK_PID=", 15) != 0)
            plan->envp[n++] = req->env[i];
    plan->envp[n++] = plan->task_pid; /* filled in by the script's process */
    return req->login_env ? plan_login(plan, req, n) : TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the end of a batch script */

/* The batch script's owner, kept in its root-only record ("owner": uid, gid, user, folder,
 * error file, each ended by a NUL), so that a restarted daemon that adopts or reports the
 * script can still add the OOM line to its error file. */
static void owner_write(int recfd, const struct nd_job *j)
{
    char buf[3 * PATH_MAX + 64];
    int n = snprintf(buf, sizeof(buf), "%u%c%u%c%s%c%s%c%s%c", (unsigned)j->uid, 0,
                     (unsigned)j->gid, 0, j->user_name, 0, j->work_dir, 0, j->err_path, 0);
    if (n < 0 || n >= (int)sizeof(buf) ||
        safefs_write_atomic(recfd, "owner", buf, (size_t)n, 0600) != TS_OK)
        log_warn("job %u: cannot record its owner: no OOM line after a restart", j->id);
}

static void owner_read(int recfd, struct nd_job *j)
{
    char buf[3 * PATH_MAX + 64];
    size_t len = 0;
    if (safefs_read_small(recfd, "owner", buf, sizeof(buf), &len) != TS_OK || len == 0)
        return;
    const char *field[5];
    size_t k = 0;
    for (size_t at = 0; at < len && k < 5; at += strlen(buf + at) + 1)
        field[k++] = buf + at;
    if (k < 5 || (buf[len - 1] != '\0'))
        return; /* damaged: no line rather than a wrong one */
    j->uid = (uid_t)strtoul(field[0], NULL, 10);
    j->gid = (gid_t)strtoul(field[1], NULL, 10);
    j->user_name = strdup(field[2]);
    j->work_dir = strdup(field[3]);
    j->err_path = strdup(field[4]);
    if (!j->user_name || !j->work_dir || !j->err_path) {
        free(j->err_path);
        j->err_path = NULL; /* no line without all of it */
    }
}

/* Forget the batch script of j: its record, its script, its place in the table. */
static void batch_forget(struct noded *nd, struct nd_job *j)
{
    spool_job_forget(nd, j->id);
    loop_timer_cancel(nd->loop, j->poll_timer);
    j->poll_timer = NULL;
    j->pid = 0;
    j->adopted = 0;
}

/* Why the script could not start, as its waiter kept it ("" when it started). */
static void read_why(uint32_t job_id, int recfd, char *why, size_t len)
{
    size_t n = 0;
    if (safefs_read_small(recfd, "why", why, len, &n) != TS_OK)
        n = 0;
    why[n < len ? n : len - 1] = '\0';
    if (*why)
        log_error("job %u: the batch script could not start: %s", job_id, why);
}

/* The script's end as its waiter recorded it; else fallback (and usage when known). */
static void read_end(struct noded *nd, uint32_t job_id, int fallback, struct stepstatus *st,
                     char *why, size_t len)
{
    char name[32];
    int recfd;
    spool_job_name(job_id, name, sizeof(name));
    why[0] = '\0';
    if (spool_record_open(nd, name, &recfd) == TS_OK) {
        read_why(job_id, recfd, why, len);
        close(recfd);
    }
    if (spool_record_status(nd, name, st) != TS_OK)
        *st = (struct stepstatus){.status = fallback};
}

static void log_end(uint32_t job_id, int status, const char *when)
{
    log_info("job %u: batch script ended%s (%s %d)", job_id, when,
             WIFSIGNALED(status) ? "signal" : "exit",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* The kernel killed processes of the script for the job's memory limit: say so where
 * its errors go, as Slurm does. */
static void tell_oom(struct noded *nd, struct nd_job *j, uint64_t kills)
{
    log_info("job %u: %" PRIu64 " process%s killed for the memory limit", j->id, kills,
             kills == 1 ? "" : "es");
    if (!j->err_path)
        return;
    char line[256];
    jobstate_oom_notice(line, sizeof(line), kills, j->id, "batch");
    struct userfile_owner owner = {j->uid, j->gid, j->user_name, j->work_dir};
    if (userfile_append(nd, &owner, j->err_path, line) != TS_OK)
        log_warn("job %u: cannot tell its error file about the OOM kill", j->id);
}

/* The waiter of j is gone (fallback: its own status, ru: its usage, when it was our
 * child): report the script's end. Steps of the job go on until the controller ends them. */
static void batch_ended(struct noded *nd, struct nd_job *j, int fallback, const struct rusage *ru)
{
    struct stepstatus st;
    char why[JOB_WHY_MAX];
    read_end(nd, j->id, fallback, &st, why, sizeof(why));
    if (!st.has_usage && ru) {
        stepstatus_usage_add(&st.usage, ru, 0);
        st.has_usage = 1;
    }
    /* what the script left anywhere ends with it, and its container's figures count */
    containment_unit_end(nd, j->id, NULL, &st.usage, &st.has_usage);
    if (st.usage.oom_kills)
        tell_oom(nd, j, st.usage.oom_kills);
    log_end(j->id, st.status, "");
    step_revoke(nd, j->id); /* the script's end is the job's */
    report_batch_end(nd, j->id, st.status, st.has_usage ? &st.usage : NULL, why);
    batch_forget(nd, j);
    job_maybe_done(nd, j);
}

static struct nd_job *job_by_pid(struct noded *nd, pid_t pid)
{
    size_t cursor = 0;
    void *value;
    while (hashmap_next(nd->jobs, &cursor, NULL, NULL, &value))
        if (((struct nd_job *)value)->pid == pid)
            return value;
    return NULL;
}

static void waiter_exited(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                          void *arg)
{
    struct noded *nd = arg;
    struct nd_job *j = job_by_pid(nd, pid);
    if (!j)
        return;
    kill(-pid, SIGKILL); /* what is left of its group (the waiter did so unless it failed) */
    batch_ended(nd, j, status, ru);
}

/* ------------------------------------------------------------------------------------ */
/* launch */

static void launch_failed(struct noded *nd, struct nd_job *j)
{
    spool_job_forget(nd, j->id);
    job_release(nd, j);
}

/* What plan_exec() and spool_record_make() took. */
static void plan_release(struct exec_plan *plan)
{
    free(plan->argv);
    free(plan->envp);
    if (plan->login)
        loginenv_release(&plan->login_env);
    if (plan->record_fd >= 0)
        close(plan->record_fd);
}

/* Record the waiter, then let it start the script. */
static int record_and_go(struct nd_job *j, int recfd, int go_fd)
{
    struct spool_proc p = {.pid = j->pid, .start = j->start, .uid = getuid()};
    int err = j->start ? spool_proc_write(recfd, &p) : TS_ENOENT;
    if (!err && safefs_write_all(go_fd, "g", 1) != TS_OK)
        err = TS_ESYS;
    return err;
}

static int fork_waiter(struct noded *nd, struct nd_job *j, struct exec_plan *plan,
                       char *errbuf, size_t errlen)
{
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) {
        snprintf(errbuf, errlen, "pipe: %s", strerror(errno));
        return TS_ESYS;
    }
    plan->go_fd = go[0];
    pid_t pid = fork();
    if (pid == 0)
        waiter_main(plan); /* never returns */
    int fork_errno = errno;
    close(go[0]);
    if (pid < 0) {
        close(go[1]);
        snprintf(errbuf, errlen, "fork: %s", strerror(fork_errno));
        return TS_ESYS;
    }
    /* watched in the same iteration as the fork: its exit cannot be reaped unwatched */
    j->pid = pid;
    j->start = procinfo_start_time(pid);
    int err = loop_child_watch(nd->loop, pid, waiter_exited, nd);
    struct containment_alloc alloc = {.mem_mb = plan->req->mem_mb, .cpu_ids = plan->req->cpu_ids};
    if (!err && (err = containment_enter(nd, j->id, NULL, pid, &alloc)))
        snprintf(errbuf, errlen, "cannot place the job in its container: %s",
                 err == TS_ESYS ? strerror(errno) : ts_strerror(err));
    if (!err)
        err = hashmap_put_u32(nd->jobs, j->id, j);
    if (!err && (err = record_and_go(j, plan->record_fd, go[1])))
        hashmap_del_u32(nd->jobs, j->id);
    close(go[1]);
    if (err) {
        kill(pid, SIGKILL); /* before the script started: the waiter waits for "go" */
        j->pid = 0;
        snprintf(errbuf, errlen, "cannot record the job: %s", ts_strerror(err));
    }
    return err;
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
    j->nd = nd;
    j->batch = 1;
    j->uid = (uid_t)req->uid;
    j->gid = (gid_t)req->gid;
    const char *err_path = req->std_err && *req->std_err ? req->std_err : req->std_out;
    if (!(j->user_name = strdup(req->user_name ? req->user_name : "")) ||
        !(j->work_dir = strdup(req->work_dir ? req->work_dir : "/")) ||
        !(j->err_path = strdup(err_path ? err_path : ""))) {
        launch_failed(nd, j);
        return TS_ENOMEM;
    }
    char script[700], name[32];
    struct exec_plan plan = {.record_fd = -1};
    int err = spool_script_write(nd, j->id, req->script ? req->script : "", req->uid, req->gid,
                                 script, sizeof(script));
    if (err) {
        snprintf(errbuf, errlen, "cannot write the script to %s: %s", script,
                 err == TS_ESYS ? strerror(errno) : ts_strerror(err));
        goto out;
    }
    spool_job_name(j->id, name, sizeof(name));
    if ((err = spool_record_make(nd, name, &plan.record_fd))) {
        snprintf(errbuf, errlen, "cannot make the job's record: %s", ts_strerror(err));
        goto out;
    }
    owner_write(plan.record_fd, j);
    if ((err = plan_exec(&plan, req, script)))
        snprintf(errbuf, errlen, "%s", ts_strerror(err));
    else
        err = fork_waiter(nd, j, &plan, errbuf, errlen);
out:
    plan_release(&plan); /* the waiter has its own copy */
    if (err) {
        launch_failed(nd, j);
        return err;
    }
    log_info("job %u: batch script started as uid %u, waiter pid %d", j->id, req->uid,
             (int)j->pid);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* an earlier life's batch scripts */

static void adopted_poll(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct nd_job *j = arg;
    struct spool_proc p = {.pid = j->pid, .start = j->start, .uid = getuid()};
    if (spool_proc_alive(&p))
        return;
    /* gone: its end is recorded, unless the waiter itself was killed (SIGKILL to the
     * group, by a terminate) */
    batch_ended(j->nd, j, SIGKILL, NULL);
}

/* Watch an earlier life's waiter that still runs. */
static int adopt(struct noded *nd, uint32_t job_id, const struct spool_proc *p, int recfd)
{
    struct nd_job *j = job_get_or_add(nd, job_id);
    if (!j)
        return TS_ENOMEM;
    owner_read(recfd, j);
    j->pid = p->pid;
    j->start = p->start;
    j->batch = 1;
    j->adopted = 1;
    j->poll_timer = loop_timer_add(nd->loop, ADOPTED_POLL_MS, ADOPTED_POLL_MS, adopted_poll, j);
    if (!j->poll_timer) {
        j->pid = 0;
        job_maybe_done(nd, j);
        return TS_ENOMEM;
    }
    log_info("job %u: its batch script still runs (waiter %d): adopted", job_id, (int)p->pid);
    return TS_OK;
}

void job_recover(struct noded *nd, uint32_t job_id, int recfd)
{
    struct spool_proc p;
    /* a waiter is ours (our uid), and still the process recorded */
    if (spool_proc_read(recfd, &p) == TS_OK && p.uid == getuid() && spool_proc_alive(&p) &&
        adopt(nd, job_id, &p, recfd) == TS_OK)
        return;
    struct stepstatus st;
    if (stepstatus_read_at(recfd, "status", &st) == TS_OK) {
        char why[JOB_WHY_MAX];
        read_why(job_id, recfd, why, sizeof(why));
        log_end(job_id, st.status, " while the daemon was down");
        /* what the script left in its container goes, and the container's figures count */
        containment_unit_end(nd, job_id, NULL, &st.usage, &st.has_usage);
        if (st.usage.oom_kills) {
            struct nd_job gone = {.nd = nd, .id = job_id};
            owner_read(recfd, &gone);
            tell_oom(nd, &gone, st.usage.oom_kills);
            free(gone.user_name);
            free(gone.work_dir);
            free(gone.err_path);
        }
        step_revoke(nd, job_id);
        report_batch_end(nd, job_id, st.status, st.has_usage ? &st.usage : NULL, why);
    } else {
        log_info("job %u: its batch script is gone and left no end", job_id);
    }
    spool_job_forget(nd, job_id);
}

/* ------------------------------------------------------------------------------------ */
/* signals */

/* signo to the batch script's group (an adopted waiter only while it is still the one
 * recorded). */
static void signal_batch(struct nd_job *j, int signo)
{
    if (!j->pid)
        return;
    if (j->adopted) {
        struct spool_proc p = {.pid = j->pid, .start = j->start, .uid = getuid()};
        spool_proc_signal_group(&p, signo);
    } else {
        kill(-j->pid, signo);
    }
}

/* signo to the batch shell alone, not what it started (scancel -b, --signal=B:): the
 * waiter's one child (noded/procinfo.h pins and checks it before the signal). */
static void signal_batch_shell(struct nd_job *j, int signo)
{
    if (!j->pid)
        return;
    struct spool_proc p = {.pid = j->pid, .start = j->start, .uid = getuid()};
    if (j->adopted && !spool_proc_alive(&p))
        return; /* not the waiter recorded any more: its children are no one's to touch */
    if (procinfo_signal_children(j->pid, signo) < 0)
        log_warn("job %u: cannot find its batch shell to signal (/proc)", j->id);
}

/* signo to the processes of the job here that scope names. */
static void signal_scope(struct noded *nd, struct nd_job *j, int signo,
                         Tessera__JobSignalScope scope)
{
    if (scope == TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_BATCH_SHELL) {
        signal_batch_shell(j, signo);
        return;
    }
    if (scope != TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_STEPS)
        signal_batch(j, signo); /* JOB_SIGNAL_ALL: its whole process group */
    step_signal_all(nd, j, signo);
}

static void kill_wait_over(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct nd_job *j = arg;
    deadline_fired(&j->kill_after);
    if (j->pid) {
        log_info("job %u: still there after KillWait, SIGKILL", j->id);
        signal_batch(j, SIGKILL);
    }
}

int job_signal(struct noded *nd, uint32_t job_id, int signo, int terminate, unsigned kill_wait,
               Tessera__JobSignalScope scope)
{
    if (terminate)
        step_revoke(nd, job_id); /* also with nothing here yet: no step may start later */
    struct nd_job *j = hashmap_get_u32(nd->jobs, job_id);
    if (!j)
        return TS_OK; /* nothing of it runs here */
    if (!terminate) {
        /* suspend and resume freeze and thaw the whole job where it is contained: what
         * left its process groups stops too, and nothing runs between the signals */
        int whole = scope == TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL;
        if (!(whole && (signo == SIGSTOP || signo == SIGCONT) &&
              containment_freeze(nd, job_id, signo == SIGSTOP) == TS_OK))
            signal_scope(nd, j, signo, scope);
        return TS_OK;
    }
    if (!j->terminating) {
        j->terminating = 1;
        containment_freeze(nd, job_id, 0); /* a suspended job must be able to end */
        signal_batch(j, SIGCONT); /* a suspended job must be able to act on SIGTERM */
        signal_batch(j, SIGTERM);
    }
    for (struct nd_step *s = j->steps; s; s = s->next)
        step_terminate(nd, s, kill_wait);
    if (deadline_at_most(nd->loop, &j->kill_after, (uint64_t)kill_wait * 1000, kill_wait_over,
                         j) < 0) {
        signal_batch(j, SIGKILL); /* no timer: no waiting either */
        return TS_ENOMEM;
    }
    return TS_OK;
}

void job_kill_listed(struct noded *nd, uint32_t job_id)
{
    step_revoke(nd, job_id);
    struct nd_job *j = hashmap_get_u32(nd->jobs, job_id);
    if (!j || j->terminating)
        return;
    log_info("job %u: the controller does not run it here; killing it", job_id);
    job_signal(nd, job_id, SIGKILL, 1, 0, TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL);
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
