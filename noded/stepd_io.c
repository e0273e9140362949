/* The step daemon's traffic with srun: task output (in order per task and stream, as it
 * is written), task exits, and srun's input for task 0.
 *
 * Output read in one loop iteration goes out in one request, sent by a prepare hook. At
 * most IO_MAX_IN_FLIGHT requests wait for srun's acknowledgement; beyond that the task
 * pipes are not read, so a slow srun slows the tasks down (their pipes fill) instead of
 * growing this daemon's memory.
 */
#include "noded/container.h"
#include "noded/stepd.h"

#include "common/net/loop.h"
#include "common/rpc/rpc_peer.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IO_READ_MAX (64 * 1024)      /* per read */
#define IO_BATCH_MAX (256 * 1024)    /* per request */
#define IO_MAX_IN_FLIGHT 4

static void watch_tasks(struct stepd *sd);

/* ------------------------------------------------------------------------------------ */
/* output */

static int add_chunk(struct stepd *sd, uint32_t rank, uint32_t stream, const uint8_t *data,
                     size_t len, int eof)
{
    struct sd_chunk_buf *b = &sd->out;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        Tessera__StepIoChunk **v = realloc(b->chunks, cap * sizeof(*v));
        if (!v)
            return TS_ENOMEM;
        b->chunks = v;
        b->cap = cap;
    }
    Tessera__StepIoChunk *c = calloc(1, sizeof(*c));
    uint8_t *copy = len ? malloc(len) : NULL;
    if (!c || (len && !copy)) {
        free(c);
        free(copy);
        return TS_ENOMEM;
    }
    tessera__step_io_chunk__init(c);
    c->rank = rank;
    c->stream = stream;
    if (len)
        memcpy(copy, data, len);
    c->data.data = copy;
    c->data.len = len;
    c->eof = eof;
    b->chunks[b->n++] = c;
    b->bytes += len;
    return TS_OK;
}

static void free_chunks(Tessera__StepIoChunk **chunks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(chunks[i]->data.data);
        free(chunks[i]);
    }
    free(chunks);
}

static void close_stream(struct stepd *sd, struct sd_task *t, int *fd, uint32_t stream)
{
    loop_fd_remove(sd->loop, *fd);
    close(*fd);
    *fd = -1;
    int *file = &t->labelled_fd[stream - 1];
    if (*file >= 0) {
        linelabel_flush(&t->label[stream - 1], *file, linelabel_width(sd->layout->ntasks),
                        t->rank);
        close(*file);
        *file = -1;
    }
    if (add_chunk(sd, t->rank, stream, NULL, 0, 1) != TS_OK)
        log_error("out of memory: the end of task %u's output is lost", t->rank);
    stepd_check_done(sd);
}

static void task_readable(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct stepd *sd = arg;
    struct sd_task *t = NULL;
    uint32_t stream = 1;
    for (size_t i = 0; i < sd->ntasks && !t; i++) {
        if (sd->tasks[i].out_fd == fd)
            t = &sd->tasks[i];
        else if (sd->tasks[i].err_fd == fd) {
            t = &sd->tasks[i];
            stream = 2;
        }
    }
    if (!t)
        return;
    int *fdp = stream == 1 ? &t->out_fd : &t->err_fd;
    uint8_t buf[IO_READ_MAX];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0 && t->labelled_fd[stream - 1] >= 0) { /* --label into a file */
        linelabel_write(&t->label[stream - 1], t->labelled_fd[stream - 1],
                        linelabel_width(sd->layout->ntasks), t->rank, buf, (size_t)n);
    } else if (n > 0) {
        if (!sd->srun_lost && add_chunk(sd, t->rank, stream, buf, (size_t)n, 0) != TS_OK)
            log_error("out of memory: output of task %u lost", t->rank);
        if (sd->out.bytes >= IO_BATCH_MAX && !sd->paused) {
            sd->paused = 1; /* the prepare hook sends, acknowledgements resume */
            watch_tasks(sd);
        }
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close_stream(sd, t, fdp, stream);
    }
}

/* Watch (or, while paused, stop watching) every open task pipe. */
static void watch_tasks(struct stepd *sd)
{
    unsigned ev = sd->paused ? 0 : LOOP_READ;
    for (size_t i = 0; i < sd->ntasks; i++) {
        if (sd->tasks[i].out_fd >= 0)
            loop_fd_modify(sd->loop, sd->tasks[i].out_fd, ev);
        if (sd->tasks[i].err_fd >= 0)
            loop_fd_modify(sd->loop, sd->tasks[i].err_fd, ev);
    }
}

static void io_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct stepd *sd = arg;
    sd->io_in_flight--;
    if (err == TS_ESHUTDOWN)
        return;
    if (err || resp->error) {
        stepd_srun_lost(sd, err ? err : (int)resp->error->code);
        return;
    }
    if (sd->paused && sd->io_in_flight < IO_MAX_IN_FLIGHT && sd->out.bytes < IO_BATCH_MAX) {
        sd->paused = 0;
        watch_tasks(sd);
    }
    stepd_check_done(sd);
}

static void send_output(struct stepd *sd)
{
    if (sd->out.n == 0 || sd->io_in_flight >= IO_MAX_IN_FLIGHT)
        return;
    Tessera__StepIoRequest io = TESSERA__STEP_IO_REQUEST__INIT;
    io.job_id = sd->layout->job_id;
    io.step_id = sd->layout->step_id;
    io.step_job_id = sd->step_job_id;
    io.node = (char *)sd->node;
    io.chunks = sd->out.chunks;
    io.n_chunks = sd->out.n;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_IO;
    req.step_io = &io;
    int err = rpc_peer_call(sd->srun, &req, io_answered, sd); /* packs a copy */
    free_chunks(sd->out.chunks, sd->out.n);
    memset(&sd->out, 0, sizeof(sd->out));
    if (err)
        stepd_srun_lost(sd, err);
    else
        sd->io_in_flight++;
}

void stepd_io_task_closed(struct stepd *sd, struct sd_task *t)
{
    int *fds[] = {&t->out_fd, &t->err_fd, &t->in_fd};
    for (size_t i = 0; i < 3; i++) {
        if (*fds[i] < 0)
            continue;
        loop_fd_remove(sd->loop, *fds[i]);
        close(*fds[i]);
        *fds[i] = -1;
    }
}

/* ------------------------------------------------------------------------------------ */
/* exits */

static void exits_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct stepd *sd = arg;
    sd->io_in_flight--;
    if (err == TS_ESHUTDOWN)
        return;
    if (err || resp->error) {
        stepd_srun_lost(sd, err ? err : (int)resp->error->code);
        return;
    }
    stepd_check_done(sd);
}

void stepd_io_task_exit(struct stepd *sd, struct sd_task *t)
{
    Tessera__TaskExit **v = realloc(sd->exits, (sd->nexits + 1) * sizeof(*v));
    Tessera__TaskExit *e = v ? calloc(1, sizeof(*e)) : NULL;
    if (v)
        sd->exits = v;
    if (!e) {
        log_error("out of memory: the exit of task %u is lost", t->rank);
        return;
    }
    tessera__task_exit__init(e);
    e->rank = t->rank;
    e->status = t->status;
    if (t->launch_error) /* borrowed: the task outlives the message */
        e->launch_error = t->launch_error;
    sd->exits[sd->nexits++] = e;
}

/* After the output read so far: an exit never overtakes its task's last words. */
static void send_exits(struct stepd *sd)
{
    if (sd->nexits == 0 || sd->out.n > 0)
        return;
    Tessera__StepTaskExitRequest te = TESSERA__STEP_TASK_EXIT_REQUEST__INIT;
    te.job_id = sd->layout->job_id;
    te.step_id = sd->layout->step_id;
    te.step_job_id = sd->step_job_id;
    te.node = (char *)sd->node;
    te.exits = sd->exits;
    te.n_exits = sd->nexits;
    uint64_t kills = 0; /* read once the tasks are reaped: the kernel counted the kill before */
    if (container_self_oom_kills(&kills) == TS_OK && kills > sd->oom_reported) {
        te.oom_kills = kills - sd->oom_reported;
        sd->oom_reported = kills;
    }
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_TASK_EXIT;
    req.step_task_exit = &te;
    int err = rpc_peer_call(sd->srun, &req, exits_answered, sd);
    for (size_t i = 0; i < sd->nexits; i++)
        free(sd->exits[i]);
    free(sd->exits);
    sd->exits = NULL;
    sd->nexits = 0;
    if (err)
        stepd_srun_lost(sd, err);
    else
        sd->io_in_flight++;
}

/* ------------------------------------------------------------------------------------ */
/* input for task 0 */

static struct sd_task *stdin_task(struct stepd *sd)
{
    for (size_t i = 0; i < sd->ntasks; i++)
        if (sd->tasks[i].in_fd >= 0)
            return &sd->tasks[i];
    return NULL;
}

static void poll_stdin(struct stepd *sd);

static void close_stdin(struct stepd *sd, struct sd_task *t)
{
    loop_fd_remove(sd->loop, t->in_fd);
    close(t->in_fd);
    t->in_fd = -1;
    free(sd->in_buf);
    sd->in_buf = NULL;
    sd->in_len = sd->in_off = 0;
}

static void stdin_writable(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct stepd *sd = arg;
    struct sd_task *t = stdin_task(sd);
    if (!t)
        return;
    while (sd->in_off < sd->in_len) {
        ssize_t n = write(fd, sd->in_buf + sd->in_off, sd->in_len - sd->in_off);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return; /* later */
        if (n <= 0) { /* the task closed its input */
            close_stdin(sd, t);
            return;
        }
        sd->in_off += (size_t)n;
    }
    loop_fd_modify(sd->loop, fd, 0);
    if (sd->in_eof)
        close_stdin(sd, t);
    else
        poll_stdin(sd);
}

static void stdin_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct stepd *sd = arg;
    sd->in_polling = 0;
    if (err == TS_ESHUTDOWN)
        return;
    struct sd_task *t = stdin_task(sd);
    if (err || resp->error || !resp->step_stdin) {
        if (t)
            close_stdin(sd, t);
        return;
    }
    if (!t)
        return;
    const Tessera__StepStdinResponse *in = resp->step_stdin;
    sd->in_eof = in->eof;
    free(sd->in_buf);
    sd->in_buf = NULL;
    sd->in_len = sd->in_off = 0;
    if (in->data.len && (sd->in_buf = malloc(in->data.len))) {
        memcpy(sd->in_buf, in->data.data, in->data.len);
        sd->in_len = in->data.len;
    }
    loop_fd_modify(sd->loop, t->in_fd, LOOP_WRITE);
}

static void poll_stdin(struct stepd *sd)
{
    if (sd->in_polling || sd->srun_lost || !stdin_task(sd))
        return;
    Tessera__StepStdinRequest si = TESSERA__STEP_STDIN_REQUEST__INIT;
    si.job_id = sd->layout->job_id;
    si.step_id = sd->layout->step_id;
    si.step_job_id = sd->step_job_id;
    si.node = (char *)sd->node;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_STDIN;
    req.step_stdin = &si;
    if (rpc_peer_call_held(sd->srun, &req, stdin_answered, sd) == TS_OK)
        sd->in_polling = 1;
}

/* ------------------------------------------------------------------------------------ */

static void io_prepare(struct loop *loop, void *arg)
{
    struct stepd *sd = arg;
    if (sd->srun_lost)
        return;
    send_output(sd);
    send_exits(sd);
}

int stepd_io_start(struct stepd *sd)
{
    for (size_t i = 0; i < sd->ntasks; i++) {
        struct sd_task *t = &sd->tasks[i];
        if (t->out_fd >= 0 && loop_fd_add(sd->loop, t->out_fd, LOOP_READ, task_readable, sd))
            return TS_ENOMEM;
        if (t->err_fd >= 0 && loop_fd_add(sd->loop, t->err_fd, LOOP_READ, task_readable, sd))
            return TS_ENOMEM;
        /* a stream going to a file is over for srun from the start */
        if (t->out_fd < 0 && add_chunk(sd, t->rank, 1, NULL, 0, 1))
            return TS_ENOMEM;
        if (t->err_fd < 0 && add_chunk(sd, t->rank, 2, NULL, 0, 1))
            return TS_ENOMEM;
    }
    struct sd_task *t = stdin_task(sd);
    if (t && loop_fd_add(sd->loop, t->in_fd, 0, stdin_writable, sd))
        return TS_ENOMEM;
    poll_stdin(sd);
    return loop_prepare_add(sd->loop, io_prepare, sd);
}

int stepd_io_idle(const struct stepd *sd)
{
    return sd->srun_lost || (sd->out.n == 0 && sd->nexits == 0 && sd->io_in_flight == 0);
}

int stepd_io_drained(const struct stepd *sd)
{
    for (size_t i = 0; i < sd->ntasks; i++)
        if (sd->tasks[i].out_fd >= 0 || sd->tasks[i].err_fd >= 0)
            return 0;
    return 1;
}

void stepd_io_stop(struct stepd *sd)
{
    loop_prepare_remove(sd->loop, io_prepare, sd);
    free_chunks(sd->out.chunks, sd->out.n);
    memset(&sd->out, 0, sizeof(sd->out));
    for (size_t i = 0; i < sd->nexits; i++)
        free(sd->exits[i]);
    free(sd->exits);
    sd->exits = NULL;
    sd->nexits = 0;
    free(sd->in_buf);
    sd->in_buf = NULL;
}
