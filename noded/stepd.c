/* The step daemon's life: the line to srun, PMI, the tasks' start and ends, and the end
 * of the step daemon itself (noded/stepd.h).
 */
#include "noded/stepd.h"

#include "noded/pmi.h"
#include "noded/stepstatus.h"

#include "common/conf/conf.h"
#include "common/job/steplayout.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* the end */

/* The worst task status and what the tasks used, for the node daemon's report. */
static void write_status(struct stepd *sd)
{
    struct stepstatus st = {0};
    for (size_t i = 0; i < sd->ntasks; i++) {
        const struct sd_task *t = &sd->tasks[i];
        if (t->exited)
            stepstatus_add_task(&st, t->status, t->pid > 0 ? &t->usage : NULL, t->rank);
    }
    if (stepstatus_write_at(sd->record_fd, "status", &st) == TS_OK)
        sd->status_written = 1;
    else
        log_warn("cannot write the step's status: %s", strerror(errno));
}

static int all_exited(const struct stepd *sd)
{
    for (size_t i = 0; i < sd->ntasks; i++)
        if (!sd->tasks[i].exited)
            return 0;
    return 1;
}

void stepd_check_done(struct stepd *sd)
{
    if (sd->finished || !all_exited(sd))
        return;
    /* once srun is gone nobody waits for the output: pipes held by the tasks' leftovers
     * need not be drained */
    if (!sd->srun_lost && (!stepd_io_drained(sd) || !stepd_io_idle(sd)))
        return;
    sd->finished = 1;
    write_status(sd);
    loop_stop(sd->loop);
}

void stepd_srun_lost(struct stepd *sd, int err)
{
    if (sd->srun_lost)
        return;
    sd->srun_lost = 1;
    log_warn("step %u.%u: srun cannot be reached (%s); killing the step's tasks",
             sd->step_job_id, sd->layout->step_id, ts_strerror(err));
    for (size_t i = 0; i < sd->ntasks; i++)
        if (!sd->tasks[i].exited && sd->tasks[i].pid > 0)
            kill(sd->tasks[i].pid, SIGKILL);
    stepd_check_done(sd);
}

static void task_exited(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                        void *arg)
{
    struct stepd *sd = arg;
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        if (t->pid != pid)
            continue;
        t->exited = 1;
        t->status = status;
        t->usage = *ru;
        log_debug("step %u.%u: task %u ended (status %d)", sd->step_job_id,
                  sd->layout->step_id, t->rank, status);
        stepd_io_task_exit(sd, t);
    }
    stepd_check_done(sd);
}

/* The node daemon's "T<kill_wait>" lines on standard input: the step is being ended.
 * SIGTERM has gone to the whole group; the tasks still there after KillWait get SIGKILL,
 * one by one, so that this daemon lives on to report their ends. A later line with a
 * shorter wait brings that forward (never back). */
static void kill_wait_over(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct stepd *sd = arg;
    deadline_fired(&sd->kill_after);
    for (size_t i = 0; i < sd->ntasks; i++)
        if (!sd->tasks[i].exited && sd->tasks[i].pid > 0)
            kill(sd->tasks[i].pid, SIGKILL);
}

static void control_line(struct stepd *sd, const char *line)
{
    if (line[0] != 'T')
        return;
    unsigned long wait = strtoul(line + 1, NULL, 10);
    if (wait > UINT32_MAX)
        wait = UINT32_MAX;
    if (deadline_at_most(sd->loop, &sd->kill_after, (uint64_t)wait * 1000, kill_wait_over,
                         sd) < 0)
        kill_wait_over(sd->loop, NULL, sd); /* no timer: no waiting either */
}

static void control_readable(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct stepd *sd = arg;
    ssize_t n = read(fd, sd->ctl_buf + sd->ctl_len, sizeof(sd->ctl_buf) - 1 - sd->ctl_len);
    if (n <= 0) { /* the node daemon is gone (a restart kills us anyway) */
        loop_fd_remove(loop, fd);
        return;
    }
    sd->ctl_len += (size_t)n;
    sd->ctl_buf[sd->ctl_len] = '\0';
    char *line = sd->ctl_buf, *nl;
    while ((nl = strchr(line, '\n'))) {
        *nl = '\0';
        control_line(sd, line);
        line = nl + 1;
    }
    sd->ctl_len = strlen(line);
    if (sd->ctl_len == sizeof(sd->ctl_buf) - 1)
        sd->ctl_len = 0; /* no line is that long: drop it */
    memmove(sd->ctl_buf, line, sd->ctl_len);
}

/* The step's signals reach this daemon too (its tasks are in its group): noted, not
 * obeyed; SIGKILL alone ends it. */
static void on_signal(struct loop *loop, int signo, void *arg)
{
    log_debug("signal %d to the step", signo);
}

static void on_orphan(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                      void *arg)
{
    /* a task's child, re-parented here: reaped */
}

/* ------------------------------------------------------------------------------------ */
/* PMI through srun */

static void fence_answered(void *arg, int err, const Tessera__Response *resp);

struct fence_call {
    struct stepd *sd;
    uint32_t seq;
};

static void pmi_fence(void *arg, uint32_t seq, const struct pmi_kv *pairs, size_t n)
{
    struct stepd *sd = arg;
    Tessera__PmiKv *kvs = calloc(n ? n : 1, sizeof(*kvs));
    Tessera__PmiKv **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    struct fence_call *fc = calloc(1, sizeof(*fc));
    if (!kvs || !ptrs || !fc) {
        free(kvs);
        free(ptrs);
        free(fc);
        stepd_srun_lost(sd, TS_ENOMEM);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        tessera__pmi_kv__init(&kvs[i]);
        kvs[i].key = (char *)pairs[i].key;
        kvs[i].value = (char *)pairs[i].value;
        ptrs[i] = &kvs[i];
    }
    Tessera__PmiFenceRequest f = TESSERA__PMI_FENCE_REQUEST__INIT;
    f.job_id = sd->layout->job_id;
    f.step_id = sd->layout->step_id;
    f.step_job_id = sd->step_job_id;
    f.node = (char *)sd->node;
    f.seq = seq;
    f.kvs = ptrs;
    f.n_kvs = n;
    f.contributors = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PMI_FENCE;
    req.pmi_fence = &f;
    fc->sd = sd;
    fc->seq = seq;
    int err = rpc_peer_call_held(sd->srun, &req, fence_answered, fc);
    free(kvs);
    free(ptrs);
    if (err) {
        free(fc);
        stepd_srun_lost(sd, err);
    }
}

static void fence_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct fence_call *fc = arg;
    struct stepd *sd = fc->sd;
    uint32_t seq = fc->seq;
    free(fc);
    if (err == TS_ESHUTDOWN)
        return;
    if (err || resp->error || !resp->pmi_fence) {
        stepd_srun_lost(sd, err ? err : TS_EPROTO);
        return;
    }
    const Tessera__PmiFenceResponse *r = resp->pmi_fence;
    struct pmi_kv *pairs = calloc(r->n_kvs ? r->n_kvs : 1, sizeof(*pairs));
    if (!pairs) {
        stepd_srun_lost(sd, TS_ENOMEM);
        return;
    }
    for (size_t i = 0; i < r->n_kvs; i++) {
        pairs[i].key = r->kvs[i]->key;
        pairs[i].value = r->kvs[i]->value;
    }
    if (pmi_fence_done(sd->pmi, seq, pairs, r->n_kvs) != TS_OK)
        log_error("step %u.%u: PMI barrier %u could not be completed", sd->step_job_id,
                  sd->layout->step_id, seq);
    free(pairs);
}

static void pmi_abort(void *arg, uint32_t rank, int exit_code, const char *msg)
{
    struct stepd *sd = arg;
    log_warn("step %u.%u: task %u aborted the job (exit code %d%s%s)", sd->step_job_id,
             sd->layout->step_id, rank, exit_code, msg && *msg ? ": " : "", msg ? msg : "");
    for (size_t i = 0; i < sd->ntasks; i++)
        if (!sd->tasks[i].exited && sd->tasks[i].pid > 0)
            kill(sd->tasks[i].pid, SIGKILL);
}

static const struct pmi_ops pmi_ops = {.fence = pmi_fence, .abort = pmi_abort};

/* One socketpair per task: the task's end is returned in task_fds. */
static int start_pmi(struct stepd *sd, int *task_fds)
{
    char kvsname[64], mapping[4096];
    snprintf(kvsname, sizeof(kvsname), "tessera.%u.%u", sd->step_job_id, sd->layout->step_id);
    mapping[0] = '\0';
    steplayout_process_mapping(sd->layout, mapping, sizeof(mapping));
    struct pmi_kv preset = {"PMI_process_mapping", mapping};
    struct pmi_config cfg = {
        .size = sd->layout->ntasks,
        .universe_size = sd->layout->ntasks,
        .appnum = 0,
        .kvsname = kvsname,
        .local_tasks = sd->ntasks,
        .preset = mapping[0] ? &preset : NULL,
        .npreset = mapping[0] ? 1 : 0,
    };
    int err = pmi_create(sd->loop, &cfg, &pmi_ops, sd, &sd->pmi);
    for (size_t i = 0; !err && i < sd->ntasks; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            return TS_ESYS;
        task_fds[i] = sv[1];
        err = pmi_add_client(sd->pmi, sv[0], sd->tasks[i].rank);
    }
    return err;
}

/* ------------------------------------------------------------------------------------ */

static int connect_srun(struct stepd *sd)
{
    char name[AUTH_TARGET_MAX];
    struct rpc_peer_config cfg = {
        .host = sd->launch->io_host,
        .port = (uint16_t)sd->launch->io_port,
        .server_uid = (uid_t)sd->layout->uid, /* srun runs as the step's user */
        .target = rpc_name_srun(sd->conf, sd->step_job_id, sd->layout->step_id, name,
                                sizeof(name)),
    };
    rpc_conf_peer(sd->conf, &cfg);
    return rpc_peer_create(sd->loop, &cfg, &sd->srun);
}

/* Tasks that could not be started end at once with exit code 1, and srun hears why (its
 * own reason, or why for all), as Slurm's srun reports a failed launch; the node's log
 * has it too. */
static void fail_unstarted(struct stepd *sd, const char *why)
{
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        if (t->pid > 0 || t->exited)
            continue;
        if (!t->launch_error)
            t->launch_error = strdup(why ? why : "task could not be started");
        log_error("step %u.%u: task %u could not be started: %s", sd->step_job_id,
                  sd->layout->step_id, t->rank, t->launch_error ? t->launch_error : why);
        t->exited = 1;
        t->status = 1 << 8;
        stepd_io_task_closed(sd, t);
        stepd_io_task_exit(sd, t);
    }
}

int stepd_start(struct stepd *sd, char *errbuf, size_t errlen)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                               SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        if (loop_signal_add(sd->loop, sigs[i], on_signal, sd) != TS_OK)
            return TS_ENOMEM;
    signal(SIGPIPE, SIG_IGN);
    loop_set_orphan_cb(sd->loop, on_orphan, sd);
    if (loop_fd_add(sd->loop, 0, LOOP_READ, control_readable, sd) != TS_OK)
        return TS_ENOMEM;
    int err = connect_srun(sd);
    if (!err)
        err = stepd_tasks_prepare(sd, errbuf, errlen);
    int *pmi_fds = calloc(sd->ntasks ? sd->ntasks : 1, sizeof(int));
    if (!pmi_fds)
        err = TS_ENOMEM;
    for (size_t i = 0; pmi_fds && i < sd->ntasks; i++)
        pmi_fds[i] = -1;
    if (!err)
        err = start_pmi(sd, pmi_fds);
    if (!err)
        err = stepd_tasks_start(sd, pmi_fds, errbuf, errlen);
    /* watched before control returns to the loop: no exit goes unreaped */
    for (size_t i = 0; i < sd->ntasks; i++) {
        if (sd->tasks[i].pid > 0 && loop_child_watch(sd->loop, sd->tasks[i].pid, task_exited, sd))
            err = TS_ENOMEM;
        if (pmi_fds && pmi_fds[i] >= 0)
            close(pmi_fds[i]); /* the task has its own copy */
    }
    free(pmi_fds);
    if (err && !errbuf[0])
        snprintf(errbuf, errlen, "%s", ts_strerror(err));
    if (err && sd->srun && sd->tasks) {
        log_error("step %u.%u: %s", sd->step_job_id, sd->layout->step_id, errbuf);
        fail_unstarted(sd, errbuf);
        err = TS_OK; /* srun hears of it through the tasks' ends */
    } else if (!err) {
        fail_unstarted(sd, NULL); /* those whose files could not be opened */
    }
    if (!err)
        err = stepd_io_start(sd);
    if (!err)
        stepd_check_done(sd);
    return err;
}

void stepd_stop(struct stepd *sd)
{
    deadline_cancel(sd->loop, &sd->kill_after);
    loop_fd_remove(sd->loop, 0);
    stepd_io_stop(sd);
    pmi_destroy(sd->pmi);
    sd->pmi = NULL;
    rpc_peer_destroy(sd->srun);
    sd->srun = NULL;
    stepd_tasks_free(sd);
}
