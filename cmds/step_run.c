/* srun's side of a running step: see step_run.h.
 *
 * The step daemons connect back to srun's server (authenticated with MUNGE credentials
 * restricted to the user's uid; only root, NodedUser or the user itself are listened
 * to). Requests on one connection arrive in order, so a task's output chunks are printed
 * in the order it wrote them.
 */
#include "cmds/step_run.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/job/steplayout.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/rpc/rpc_server.h"
#include "common/text/idset.h"
#include "common/text/linelabel.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/safefs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "srun"
#define STDIN_CHUNK (64 * 1024)

struct rank_state {
    int exited;
    int status;
    int eof[2];          /* stdout, stderr */
    struct linelabel label[2]; /* --label: a line not yet ended */
    size_t node;         /* index into the layout's nodes */
};

struct srun_step {
    const struct step_run_params *p;
    const Tessera__StepLayout *l;
    uint32_t step_job_id;      /* with l->step_id, what names the step (steplayout.h) */
    struct loop *loop;
    struct rpc_server *server;
    char io_host[64];
    struct rpc_peer **peers;
    int *launched;             /* per node: 1 accepted, -1 refused, 0 waiting */
    size_t answers;
    int launch_failed;
    struct rank_state *ranks;
    int label_width;
    int exit_code;
    int finished;

    /* input for the task that reads srun's */
    int stdin_open;            /* watched on the loop (a pipe or a terminal) */
    int stdin_file;            /* a regular file: read on demand, never blocks */
    int stdin_flags;           /* restored at the end: the descriptor is shared */
    uint8_t *in_buf;
    size_t in_len;
    int in_eof;
    struct rpc_request *stdin_req;

    /* PMI barriers */
    struct hashmap *kvs;       /* key -> value (malloc'd) */
    uint32_t fence_seq;
    struct rpc_request **fence_reqs;
    size_t nfence;

    /* signals */
    uint64_t last_int_ms;
    int interrupts;

    /* -K and -W: srun ends the step itself */
    enum { STEP_RUNS, STEP_BAD_EXIT, STEP_WAIT_OVER } terminating;
    struct loop_timer *first_exit; /* -W: armed when the first task ended */

    /* the controller's view, for a step whose daemons ended without a word to us */
    struct rpc_peer *ctld;
    struct loop_timer *watch;
    int watch_pending;
};

/* How often srun asks the controller whether its step still runs. */
#define WATCH_MS 2000

__attribute__((format(printf, 1, 2))) static void srun_error(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: error: %s\n", PROG, line);
}

__attribute__((format(printf, 2, 3))) static void srun_info(const struct srun_step *s,
                                                            const char *fmt, ...)
{
    if (s->p->quiet)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", PROG, line);
}

/* ------------------------------------------------------------------------------------ */
/* the end */

static int rank_done(const struct rank_state *r)
{
    return r->exited && r->eof[0] && r->eof[1];
}

static void check_finished(struct srun_step *s)
{
    if (s->finished)
        return;
    for (size_t i = 0; i < s->l->ntasks; i++)
        if (!rank_done(&s->ranks[i]))
            return;
    s->finished = 1;
    loop_stop(s->loop);
}

/* SIGKILL to the step everywhere it was accepted (a failed launch, a third Ctrl-C). */
static void signal_step(struct srun_step *s, int signo, int terminate);

/* -K and -W: what task ends make srun do to the rest of the step. */
static void end_rest_after_exits(struct srun_step *s, const Tessera__StepTaskExitRequest *te);

/* ------------------------------------------------------------------------------------ */
/* output */

/* Where a stream's output goes: srun's own, or the file -o/-e named. */
static int stream_fd(const struct srun_step *s, int stream)
{
    return stream == 0 ? s->p->streams->out_fd : s->p->streams->err_fd;
}

/* -o N / -e N: only task N's output is shown. */
static int stream_shows(const struct srun_step *s, int stream, uint32_t rank)
{
    int64_t only = stream == 0 ? s->p->streams->out_rank : s->p->streams->err_rank;
    return only < 0 || only == rank;
}

static int from_step_daemon(struct srun_step *s, struct rpc_request *req)
{
    uid_t uid = rpc_request_uid(req);
    if (uid == 0 || uid == getuid() || uid == s->p->conf->noded_user_uid)
        return 1;
    rpc_respond_error(req, TS_EPERM, NULL);
    return 0;
}

static int ours(const struct srun_step *s, uint32_t job_id, uint32_t step_job_id,
                uint32_t step_id)
{
    return job_id == s->l->job_id && step_job_id == s->step_job_id && step_id == s->l->step_id;
}

static void respond_empty(struct rpc_request *req, Tessera__Response__MsgCase kind)
{
    Tessera__Empty empty = TESSERA__EMPTY__INIT;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = kind;
    if (kind == TESSERA__RESPONSE__MSG_STEP_IO)
        resp.step_io = &empty;
    else
        resp.step_task_exit = &empty;
    rpc_respond(req, &resp);
}

static void handle_io(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct srun_step *s = arg;
    const Tessera__StepIoRequest *io = msg->step_io;
    if (!from_step_daemon(s, req))
        return;
    if (!ours(s, io->job_id, io->step_job_id, io->step_id)) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    for (size_t i = 0; i < io->n_chunks; i++) {
        const Tessera__StepIoChunk *c = io->chunks[i];
        if (c->rank >= s->l->ntasks || (c->stream != 1 && c->stream != 2))
            continue;
        int stream = (int)c->stream - 1;
        if (c->data.len && stream_shows(s, stream, c->rank)) {
            if (s->p->label)
                linelabel_write(&s->ranks[c->rank].label[stream], stream_fd(s, stream),
                                s->label_width, c->rank, c->data.data, c->data.len);
            else
                /* our output gone (a closed pipe): nothing to do about it */
                (void)safefs_write_all(stream_fd(s, stream), c->data.data, c->data.len);
        }
        if (c->eof) {
            if (s->p->label)
                linelabel_flush(&s->ranks[c->rank].label[stream], stream_fd(s, stream),
                                s->label_width, c->rank);
            s->ranks[c->rank].eof[stream] = 1;
        }
    }
    respond_empty(req, TESSERA__RESPONSE__MSG_STEP_IO);
    check_finished(s);
}

/* ------------------------------------------------------------------------------------ */
/* task ends */

static const char *signal_text(int sig)
{
    switch (sig) {
    case SIGKILL: return "Killed";
    case SIGTERM: return "Terminated";
    case SIGINT: return "Interrupt";
    case SIGSEGV: return "Segmentation fault";
    case SIGABRT: return "Aborted";
    case SIGBUS: return "Bus error";
    case SIGFPE: return "Floating point exception";
    case SIGHUP: return "Hangup";
    case SIGQUIT: return "Quit";
    default: return strsignal(sig);
    }
}

/* The exit code srun takes from one task. */
static int code_of(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int launch_failed(const Tessera__TaskExit *e)
{
    return e->launch_error && *e->launch_error;
}

/* Slurm's lines: "n2: task 1: Exited with exit code 3", "n1: tasks 0-1: Killed"; a task
 * that could not start: "task 0 launch failed: Could not open stdout file ...". */
static void report_exits(struct srun_step *s, const Tessera__StepTaskExitRequest *te)
{
    for (size_t i = 0; i < te->n_exits; i++) {
        int status = te->exits[i]->status;
        if (status == 0 || te->exits[i]->rank >= s->l->ntasks)
            continue;
        if (launch_failed(te->exits[i])) {
            srun_error("task %u launch failed: %s", te->exits[i]->rank,
                       te->exits[i]->launch_error);
            continue;
        }
        int seen = 0; /* grouped with an earlier one of this message */
        for (size_t k = 0; k < i && !seen; k++)
            seen = te->exits[k]->status == status && !launch_failed(te->exits[k]);
        if (seen)
            continue;
        struct idset *ids = idset_create();
        for (size_t k = i; ids && k < te->n_exits; k++)
            if (te->exits[k]->status == status && !launch_failed(te->exits[k]))
                idset_add(ids, te->exits[k]->rank);
        char *list = ids ? idset_format(ids) : NULL;
        char what[128];
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && te->oom_kills)
            snprintf(what, sizeof(what), "Out Of Memory"); /* the kernel's kill, for memory */
        else if (WIFSIGNALED(status))
            snprintf(what, sizeof(what), "%s", signal_text(WTERMSIG(status)));
        else
            snprintf(what, sizeof(what), "Exited with exit code %d", WEXITSTATUS(status));
        srun_error("%s: task%s %s: %s", te->node, idset_count(ids) > 1 ? "s" : "",
                   list ? list : "?", what);
        free(list);
        idset_destroy(ids);
    }
}

/* The step's folder on a node counted OOM kills: said as Slurm's step daemon says it. */
static void tell_oom(const struct srun_step *s, uint64_t kills)
{
    uint32_t shown = s->step_job_id ? s->step_job_id : s->l->job_id;
    char step[16], line[256];
    snprintf(step, sizeof(step), "%u", s->l->step_id);
    jobstate_oom_notice(line, sizeof(line), kills, shown, step);
    fputs(line, stderr);
}

static void handle_task_exit(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct srun_step *s = arg;
    const Tessera__StepTaskExitRequest *te = msg->step_task_exit;
    if (!from_step_daemon(s, req))
        return;
    if (!ours(s, te->job_id, te->step_job_id, te->step_id)) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    if (te->oom_kills)
        tell_oom(s, te->oom_kills);
    for (size_t i = 0; i < te->n_exits; i++) {
        uint32_t rank = te->exits[i]->rank;
        if (rank >= s->l->ntasks || s->ranks[rank].exited)
            continue;
        s->ranks[rank].exited = 1;
        s->ranks[rank].status = te->exits[i]->status;
        if (code_of(te->exits[i]->status) > s->exit_code)
            s->exit_code = code_of(te->exits[i]->status);
    }
    report_exits(s, te);
    end_rest_after_exits(s, te); /* te goes with the answer */
    respond_empty(req, TESSERA__RESPONSE__MSG_STEP_TASK_EXIT);
    check_finished(s);
}

/* ------------------------------------------------------------------------------------ */
/* input for the task that reads srun's */

static void answer_stdin(struct srun_step *s)
{
    if (!s->stdin_req || (!s->in_len && !s->in_eof))
        return;
    Tessera__StepStdinResponse in = TESSERA__STEP_STDIN_RESPONSE__INIT;
    in.data.data = s->in_buf;
    in.data.len = s->in_len;
    in.eof = s->in_eof && !s->in_len;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_STEP_STDIN;
    resp.step_stdin = &in;
    rpc_respond(s->stdin_req, &resp);
    s->stdin_req = NULL;
    s->in_len = 0;
    /* read more once this is delivered */
    if (s->stdin_open && !s->in_eof)
        loop_fd_modify(s->loop, 0, LOOP_READ);
}

static void stdin_readable(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct srun_step *s = arg;
    ssize_t n = read(fd, s->in_buf, STDIN_CHUNK);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        s->in_eof = 1;
        loop_fd_remove(loop, fd);
        fcntl(0, F_SETFL, s->stdin_flags);
        s->stdin_open = 0;
    } else {
        s->in_len = (size_t)n;
        loop_fd_modify(loop, fd, 0); /* one chunk at a time: the task sets the pace */
    }
    answer_stdin(s);
}

static void read_stdin_file(struct srun_step *s)
{
    ssize_t n;
    do
        n = read(0, s->in_buf, STDIN_CHUNK);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        s->in_eof = 1;
    else
        s->in_len = (size_t)n;
}

static void handle_stdin(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct srun_step *s = arg;
    if (!from_step_daemon(s, req))
        return;
    const Tessera__StepStdinRequest *si = msg->step_stdin;
    if (!ours(s, si->job_id, si->step_job_id, si->step_id) || s->stdin_req) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    s->stdin_req = req;
    if (s->stdin_file && !s->in_len && !s->in_eof)
        read_stdin_file(s);
    answer_stdin(s);
}

/* srun's input goes to a task (task 0, or the one -i names) unless -i names a file or
 * "none", or srun is in the background of a terminal (reading would stop it). */
static int stdin_wanted(const struct step_run_params *p)
{
    if (!p->streams->stdin_to_task)
        return 0;
    return !(isatty(0) && tcgetpgrp(0) != getpgrp());
}

static int start_stdin(struct srun_step *s)
{
    if (!stdin_wanted(s->p))
        return TS_OK;
    if (!(s->in_buf = malloc(STDIN_CHUNK)))
        return TS_ENOMEM;
    s->stdin_flags = fcntl(0, F_GETFL);
    if (s->stdin_flags < 0) {
        s->in_eof = 1; /* closed: task 0 reads an empty input */
    } else if (loop_fd_add(s->loop, 0, LOOP_READ, stdin_readable, s) == TS_OK) {
        fcntl(0, F_SETFL, s->stdin_flags | O_NONBLOCK);
        s->stdin_open = 1;
    } else {
        s->stdin_file = 1; /* epoll refuses regular files: they are read on demand */
    }
    return TS_OK;
}


/* ------------------------------------------------------------------------------------ */
/* PMI barriers */

static int kv_put(struct srun_step *s, const char *key, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return TS_ENOMEM;
    free(hashmap_get_str(s->kvs, key));
    int err = hashmap_put_str(s->kvs, key, copy);
    if (err)
        free(copy);
    return err;
}

static void answer_fence(struct srun_step *s)
{
    size_t n = hashmap_count(s->kvs), k = 0;
    Tessera__PmiKv *kvs = calloc(n ? n : 1, sizeof(*kvs));
    Tessera__PmiKv **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    char **keys = calloc(n ? n : 1, sizeof(*keys));
    int oom = !kvs || !ptrs || !keys;
    size_t cursor = 0;
    const void *key;
    size_t klen;
    void *value;
    while (!oom && hashmap_next(s->kvs, &cursor, &key, &klen, &value) && k < n) {
        tessera__pmi_kv__init(&kvs[k]);
        keys[k] = strndup(key, klen);
        kvs[k].key = keys[k];
        kvs[k].value = value;
        ptrs[k] = &kvs[k];
        oom = !keys[k];
        k++;
    }
    Tessera__PmiFenceResponse f = TESSERA__PMI_FENCE_RESPONSE__INIT;
    f.kvs = ptrs;
    f.n_kvs = k;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PMI_FENCE;
    resp.pmi_fence = &f;
    for (size_t i = 0; i < s->nfence; i++) {
        if (oom)
            rpc_respond_error(s->fence_reqs[i], TS_ENOMEM, NULL);
        else
            rpc_respond(s->fence_reqs[i], &resp);
    }
    s->nfence = 0;
    s->fence_seq++;
    for (size_t i = 0; keys && i < k; i++)
        free(keys[i]);
    free(keys);
    free(kvs);
    free(ptrs);
}

static void handle_fence(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct srun_step *s = arg;
    const Tessera__PmiFenceRequest *f = msg->pmi_fence;
    if (!from_step_daemon(s, req))
        return;
    if (!ours(s, f->job_id, f->step_job_id, f->step_id) || f->seq != s->fence_seq ||
        s->nfence >= s->l->n_nodes) {
        rpc_respond_error(req, TS_EINVAL, "PMI barrier out of sequence");
        return;
    }
    for (size_t i = 0; i < f->n_kvs; i++) {
        if (kv_put(s, f->kvs[i]->key, f->kvs[i]->value) != TS_OK) {
            rpc_respond_error(req, TS_ENOMEM, NULL);
            return;
        }
    }
    s->fence_reqs[s->nfence++] = req;
    /* every node contributes once per barrier (a tree of daemons would send fewer,
     * bigger ones, counted by `contributors`) */
    if (s->nfence >= s->l->n_nodes)
        answer_fence(s);
}

static const struct rpc_handler handlers[] = {
    {TESSERA__REQUEST__MSG_STEP_IO, "step_io", handle_io, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_TASK_EXIT, "step_task_exit", handle_task_exit, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_STDIN, "step_stdin", handle_stdin, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_PMI_FENCE, "pmi_fence", handle_fence, RPC_ROLE_USER},
};

/* ------------------------------------------------------------------------------------ */
/* signals */

/* The ranks still running (exited 0) or those that have exited (1), as "0,2-3". */
static void task_list(const struct srun_step *s, int exited, char *buf, size_t len)
{
    struct idset *ids = idset_create();
    for (size_t i = 0; ids && i < s->l->ntasks; i++)
        if (!s->ranks[i].exited == !exited)
            idset_add(ids, (uint32_t)i);
    char *list = ids ? idset_format(ids) : NULL;
    snprintf(buf, len, "%s", list ? list : "");
    free(list);
    idset_destroy(ids);
}

/* Ctrl-C: the first forwards SIGINT to the tasks; a second within a second stops the step
 * (SIGCONT, SIGTERM, SIGKILL after KillWait); a third leaves at once. */
static void on_interrupt(struct srun_step *s)
{
    uint64_t now = loop_now_ms(s->loop);
    int quick = s->interrupts && now - s->last_int_ms < 1000;
    s->last_int_ms = now;
    if (!quick) {
        s->interrupts = 1;
        char list[256];
        task_list(s, 0, list, sizeof(list));
        srun_info(s, "interrupt (one more within 1 sec to abort)");
        srun_info(s, "StepId=%u.%u task%s %s: running", s->step_job_id, s->l->step_id,
                  strpbrk(list, ",-") ? "s" : "", list);
        srun_info(s, "sending Ctrl-C to StepId=%u.%u", s->step_job_id, s->l->step_id);
        signal_step(s, SIGINT, 0);
        return;
    }
    if (++s->interrupts == 2) {
        srun_info(s, "forcing job termination");
        srun_info(s, "Job step aborted: Waiting up to %u seconds for job step to finish.",
                  s->p->conf->kill_wait + 2);
        signal_step(s, 0, 1);
        return;
    }
    srun_error("Job step aborted before step completely launched.");
    s->exit_code = s->exit_code ? s->exit_code : 1;
    s->finished = 1;
    loop_stop(s->loop);
}

static void on_signal(struct loop *loop, int signo, void *arg)
{
    struct srun_step *s = arg;
    if (signo == SIGINT)
        on_interrupt(s);
    else
        signal_step(s, signo, 0);
}

/* ------------------------------------------------------------------------------------ */
/* -K and -W: srun ends the step (Slurm's lines, docs/steps.md section 5) */

static void say_terminating(struct srun_step *s, int why)
{
    s->terminating = why;
    srun_info(s, "launch/slurm: _step_signal: Terminating StepId=%u.%u", s->step_job_id,
              s->l->step_id);
}

/* -W's time is up: what still runs is terminated (SIGTERM, SIGKILL after KillWait; a
 * plain SIGKILL to the step's group would end its step daemon too). */
static void first_exit_expired(struct loop *loop, struct loop_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    struct srun_step *s = arg;
    s->first_exit = NULL; /* a one-shot timer is freed after this call */
    if (s->finished || s->terminating)
        return;
    char running[256], exited[256];
    task_list(s, 0, running, sizeof(running));
    task_list(s, 1, exited, sizeof(exited));
    srun_info(s, "First task exited %us ago", s->p->wait_secs);
    srun_info(s, "StepId=%u.%u task%s %s: running", s->step_job_id, s->l->step_id,
              strpbrk(running, ",-") ? "s" : "", running);
    srun_info(s, "StepId=%u.%u task%s %s: exited", s->step_job_id, s->l->step_id,
              strpbrk(exited, ",-") ? "s" : "", exited);
    say_terminating(s, STEP_WAIT_OVER);
    srun_info(s, "Job step aborted: Waiting up to %u seconds for job step to finish.",
              s->p->conf->kill_wait + 2);
    signal_step(s, 0, 1);
}

static void end_rest_after_exits(struct srun_step *s, const Tessera__StepTaskExitRequest *te)
{
    if (s->terminating || s->finished)
        return;
    for (size_t i = 0; s->p->kill_on_bad_exit && i < te->n_exits; i++) {
        if (te->exits[i]->status != 0) {
            say_terminating(s, STEP_BAD_EXIT);
            signal_step(s, 0, 1);
            return;
        }
    }
    if (s->p->wait_secs && !s->first_exit && te->n_exits) {
        s->first_exit = loop_timer_add(s->loop, (uint64_t)s->p->wait_secs * 1000, 0,
                                       first_exit_expired, s);
        if (!s->first_exit)
            srun_error("%s: --wait is not enforced", ts_strerror(TS_ENOMEM));
    }
}

/* ------------------------------------------------------------------------------------ */
/* a step that ended behind our back */

/* Every node reported the step's end to the controller, yet tasks are unaccounted for:
 * their step daemon died (or srun was cut off). Nothing more will come. */
static void step_lost(struct srun_step *s)
{
    for (size_t i = 0; i < s->l->ntasks; i++) {
        struct rank_state *r = &s->ranks[i];
        if (rank_done(r))
            continue;
        if (!r->exited) {
            srun_error("%s: task %zu: ended without reporting (its step daemon is gone)",
                       s->l->nodes[r->node]->name, i);
            if (s->exit_code < 1)
                s->exit_code = 1;
        }
        r->exited = r->eof[0] = r->eof[1] = 1;
    }
    check_finished(s);
}

static void watch_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct srun_step *s = arg;
    s->watch_pending = 0;
    if (err || resp->error || resp->msg_case != TESSERA__RESPONSE__MSG_STEP_QUERY)
        return; /* the controller is busy or restarting: ask again later */
    const Tessera__StepQueryResponse *sq = resp->step_query;
    for (size_t i = 0; i < sq->n_steps; i++)
        if (sq->steps[i]->state == TESSERA__JOB_STATE__JOB_RUNNING)
            return;
    if (sq->n_steps > 0)
        step_lost(s);
}

static void watch_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct srun_step *s = arg;
    if (s->watch_pending || s->finished)
        return;
    char id[32];
    snprintf(id, sizeof(id), "%u.%u", s->step_job_id, s->l->step_id); /* this step alone */
    char *ids[] = {id};
    Tessera__StepQueryRequest q = TESSERA__STEP_QUERY_REQUEST__INIT;
    q.job_ids = ids;
    q.n_job_ids = 1;
    q.all_states = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_QUERY;
    req.step_query = &q;
    if (rpc_peer_call(s->ctld, &req, watch_answered, s) == TS_OK)
        s->watch_pending = 1;
}

static int start_watch(struct srun_step *s)
{
    const struct conf *c = s->p->conf;
    char name[AUTH_TARGET_MAX];
    struct rpc_peer_config cfg = {
        .host = c->ctld_host,
        .port = c->ctld_port,
        .server_uid = c->slurm_user_uid,
        .target = rpc_name_ctld(c, name, sizeof(name)),
    };
    rpc_conf_peer(c, &cfg);
    if (rpc_peer_create(s->loop, &cfg, &s->ctld) != TS_OK)
        return TS_ENOMEM;
    s->watch = loop_timer_add(s->loop, WATCH_MS, WATCH_MS, watch_fired, s);
    return s->watch ? TS_OK : TS_ENOMEM;
}

/* ------------------------------------------------------------------------------------ */
/* the launch */

struct launch_call {
    struct srun_step *s;
    size_t node;
};

static void step_signal_answered(void *arg, int err, const Tessera__Response *resp)
{
    (void)arg;
    (void)err;
    (void)resp;
}

static void signal_step(struct srun_step *s, int signo, int terminate)
{
    for (size_t i = 0; i < s->l->n_nodes; i++) {
        if (s->launched[i] != 1)
            continue;
        Tessera__StepSignalRequest sig = TESSERA__STEP_SIGNAL_REQUEST__INIT;
        sig.job_id = s->l->job_id;
        sig.step_id = s->l->step_id;
        sig.step_job_id = s->step_job_id;
        sig.signal = (uint32_t)(signo ? signo : SIGTERM);
        sig.terminate = terminate;
        sig.kill_wait = s->p->conf->kill_wait;
        Tessera__Request req = TESSERA__REQUEST__INIT;
        req.msg_case = TESSERA__REQUEST__MSG_STEP_SIGNAL;
        req.step_signal = &sig;
        rpc_peer_call(s->peers[i], &req, step_signal_answered, NULL);
    }
}

static void launch_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct launch_call *lc = arg;
    struct srun_step *s = lc->s;
    size_t node = lc->node;
    free(lc);
    if (err == TS_ESHUTDOWN)
        return;
    s->answers++;
    const Tessera__StepLayoutNode *n = s->l->nodes[node];
    if (err || resp->error) {
        s->launched[node] = -1;
        srun_error("Task launch for StepId=%u.%u failed on node %s: %s", s->step_job_id,
                   s->l->step_id, n->name,
                   err ? ts_strerror(err) : resp->error->text ? resp->error->text : "");
        s->launch_failed = 1;
    } else {
        s->launched[node] = 1;
    }
    if (s->answers < s->l->n_nodes || !s->launch_failed)
        return;
    srun_error("Application launch failed: the step could not start on every node");
    signal_step(s, SIGKILL, 0);
    s->exit_code = 1;
    s->finished = 1;
    loop_stop(s->loop);
}

/* The address the node daemons reach us at: the one this host uses toward the first of
 * them (a UDP "connection" sends nothing, it only picks the route). */
static void pick_io_host(struct srun_step *s)
{
    snprintf(s->io_host, sizeof(s->io_host), "127.0.0.1");
    const Tessera__StepLayoutNode *n = s->l->nodes[0];
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(n->addr, "9", &hints, &res) != 0 || !res)
        return;
    int fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, s->io_host,
                      sizeof(s->io_host));
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, s->io_host,
                      sizeof(s->io_host));
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
}

static int send_launches(struct srun_step *s)
{
    const struct step_run_params *p = s->p;
    Tessera__StepLaunchRequest sl = TESSERA__STEP_LAUNCH_REQUEST__INIT;
    sl.credential = p->step->credential;
    sl.signature = p->step->signature;
    sl.components = p->components;
    sl.n_components = s->l->n_components;
    size_t nenv = 0;
    while (p->env && p->env[nenv])
        nenv++;
    sl.env = p->env;
    sl.n_env = nenv;
    sl.work_dir = (char *)(p->work_dir ? p->work_dir : "/");
    sl.io_host = s->io_host;
    sl.io_port = rpc_server_port(s->server);
    sl.stdin_task0 = stdin_wanted(p);
    sl.stdin_rank = p->streams->stdin_rank;
    sl.label = p->label;
    sl.multi_prog = (char *)(p->multi_prog ? p->multi_prog : "");
    sl.std_out = p->streams->node_out;
    sl.std_err = p->streams->node_err;
    sl.std_in = p->streams->node_in;
    sl.append = p->streams->append;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_LAUNCH;
    req.step_launch = &sl;
    for (size_t i = 0; i < s->l->n_nodes; i++) {
        const Tessera__StepLayoutNode *n = s->l->nodes[i];
        char name[AUTH_TARGET_MAX];
        struct rpc_peer_config cfg = {
            .host = n->addr,
            .port = (uint16_t)n->port,
            .server_uid = p->conf->noded_user_uid,
            .target = rpc_name_noded(p->conf, n->name, name, sizeof(name)),
        };
        rpc_conf_peer(p->conf, &cfg);
        struct launch_call *lc = calloc(1, sizeof(*lc));
        if (!lc || rpc_peer_create(s->loop, &cfg, &s->peers[i]) != TS_OK) {
            free(lc);
            return TS_ENOMEM;
        }
        lc->s = s;
        lc->node = i;
        if (rpc_peer_call(s->peers[i], &req, launch_answered, lc) != TS_OK) {
            free(lc);
            return TS_ENOMEM;
        }
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */

static int setup(struct srun_step *s)
{
    const Tessera__StepLayout *l = s->l;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    if (!(s->loop = loop_create()))
        return TS_ENOMEM;
    /* signals first: the server's threads inherit the blocked mask. An srun started in
     * the background of a script inherits SIGINT ignored, and an ignored signal never
     * reaches a signalfd: srun forwards them, so it takes them back. */
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        signal(sigs[i], SIG_DFL);
        if (loop_signal_add(s->loop, sigs[i], on_signal, s) != TS_OK)
            return TS_ENOMEM;
    }
    signal(SIGPIPE, SIG_IGN);
    s->ranks = calloc(l->ntasks ? l->ntasks : 1, sizeof(*s->ranks));
    s->peers = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(*s->peers));
    s->launched = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(*s->launched));
    s->fence_reqs = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(*s->fence_reqs));
    s->kvs = hashmap_create();
    if (!s->ranks || !s->peers || !s->launched || !s->fence_reqs || !s->kvs)
        return TS_ENOMEM;
    for (size_t i = 0; i < l->n_nodes; i++)
        for (size_t k = 0; k < l->nodes[i]->n_ranks; k++)
            if (l->nodes[i]->ranks[k] < l->ntasks)
                s->ranks[l->nodes[i]->ranks[k]].node = i;
    s->label_width = linelabel_width(l->ntasks);
    /* srun serves every node's step daemon and keeps a line to every node daemon: it
     * needs descriptors as a daemon does */
    daemon_raise_nofile();
    char name[AUTH_TARGET_MAX];
    struct rpc_server_config cfg = {
        .host = NULL,
        .port = 0,
        .uid = getuid(),
        .identity = rpc_name_srun(s->p->conf, s->step_job_id, l->step_id, name, sizeof(name)),
    };
    rpc_conf_server(s->p->conf, &cfg);
    cfg.auth_threads = 1;
    int err = rpc_server_create(s->loop, &cfg, handlers, sizeof(handlers) / sizeof(handlers[0]),
                                s, &s->server);
    if (!err)
        err = start_stdin(s);
    if (!err)
        err = start_watch(s);
    return err;
}

static void teardown(struct srun_step *s)
{
    if (s->stdin_open) {
        loop_fd_remove(s->loop, 0);
        fcntl(0, F_SETFL, s->stdin_flags);
    }
    rpc_server_destroy(s->server);
    for (size_t i = 0; s->peers && i < s->l->n_nodes; i++)
        rpc_peer_destroy(s->peers[i]);
    if (s->loop) {
        loop_timer_cancel(s->loop, s->watch);
        loop_timer_cancel(s->loop, s->first_exit);
    }
    rpc_peer_destroy(s->ctld);
    if (s->loop)
        for (int i = 0; i < 3; i++) /* deliver what the auth threads posted */
            loop_run_once(s->loop, 0);
    loop_destroy(s->loop);
    for (size_t i = 0; s->ranks && i < s->l->ntasks; i++) {
        linelabel_free(&s->ranks[i].label[0]);
        linelabel_free(&s->ranks[i].label[1]);
    }
    if (s->kvs) {
        size_t cursor = 0;
        void *value;
        while (hashmap_next(s->kvs, &cursor, NULL, NULL, &value))
            free(value);
        hashmap_destroy(s->kvs);
    }
    free(s->ranks);
    free(s->peers);
    free(s->launched);
    free(s->fence_reqs);
    free(s->in_buf);
}

int step_run(const struct step_run_params *p)
{
    struct srun_step s = {.p = p, .l = p->step->layout,
                          .step_job_id = steplayout_step_job_id(p->step->layout)};
    if (!s.l || s.l->n_nodes == 0) {
        srun_error("the step has no nodes");
        return 1;
    }
    int err = setup(&s);
    if (!err) {
        pick_io_host(&s);
        err = send_launches(&s);
    }
    if (!err)
        err = loop_run(s.loop);
    if (err) {
        srun_error("%s", ts_strerror(err));
        s.exit_code = 1;
    }
    if (s.terminating == STEP_BAD_EXIT)
        srun_info(&s, "Force Terminated StepId=%u.%u", s.step_job_id, s.l->step_id);
    teardown(&s);
    return s.exit_code;
}
