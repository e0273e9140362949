/* Interactive allocations: see alloc.h. */
#include "cmds/alloc.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/jobopt/jobopt.h"
#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "salloc: ..." on stderr, as Slurm's informational lines; -Q silences them. */
__attribute__((format(printf, 2, 3))) static void info(const struct alloc *a, const char *fmt, ...)
{
    if (a->quiet)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", a->ctl->prog, line);
}

static const char *transport_text(const struct alloc *a, int err)
{
    if (err == TS_ECONNECT)
        return "Unable to contact slurm controller (connect failure)";
    const char *t = ctl_error_text(a->ctl);
    return t[0] ? t : ts_strerror(err);
}

/* Slurm's words for a refused allocation: srun's differ from salloc's. */
static const char *submit_failed(const struct alloc *a)
{
    return a->srun ? "Unable to allocate resources" : "Job submit/allocate failed";
}

int alloc_submit(struct alloc *a, const struct jobopt *opt)
{
    Tessera__SubmitRequest sub = TESSERA__SUBMIT_REQUEST__INIT;
    sub.components = opt->components;
    sub.n_components = opt->ncomponents;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
    req.submit = &sub;
    Tessera__Response *resp = NULL;
    int err = ctl_call(a->ctl, &req, &resp);
    if (err) {
        cmd_error(a->ctl->prog, "%s: %s", submit_failed(a), transport_text(a, err));
        return 1;
    }
    int rc = 0;
    if (resp->error) {
        cmd_refusal_detail(a->ctl->prog, opt->components, opt->ncomponents, resp->error);
        /* MaxJobCount's text speaks of sbatch's retries; an allocation does not retry */
        cmd_error(a->ctl->prog, "%s: %s", submit_failed(a),
                  resp->error->code == TS_EMAX_JOB_COUNT ? ts_strerror(TS_EAGAIN)
                                                        : resp->error->text);
        rc = 1;
    } else if (resp->msg_case != TESSERA__RESPONSE__MSG_SUBMIT) {
        cmd_error(a->ctl->prog, "%s: unexpected response", submit_failed(a));
        rc = 1;
    } else {
        a->job_id = resp->submit->job_id;
        if (!a->srun)
            info(a, "Pending job allocation %u", a->job_id);
    }
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

/* Sleep ms unless *intr is set meanwhile. */
static void pause_ms(int ms, const volatile sig_atomic_t *intr)
{
    for (int t = 0; t < ms && !(intr && *intr); t += 100) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* One AllocWait, held open by the controller. A lost controller is retried (it may be
 * restarting: the allocation is in its state); TS_EINTR when *intr is set. *resp holds
 * an AllocWait answer or an Error. */
static int wait_call(struct alloc *a, int until_end, uint32_t timeout_ms,
                     const volatile sig_atomic_t *intr, Tessera__Response **resp)
{
    Tessera__AllocWaitRequest aw = TESSERA__ALLOC_WAIT_REQUEST__INIT;
    aw.job_id = a->job_id;
    aw.until_end = until_end;
    aw.timeout_ms = timeout_ms;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_ALLOC_WAIT;
    req.alloc_wait = &aw;
    int complained = 0;
    for (;;) {
        if (intr && *intr)
            return TS_EINTR;
        int err = ctl_connect(a->ctl);
        if (!err) {
            rpc_client_set_timeout(a->ctl->cli, -1);
            rpc_client_set_interrupt(a->ctl->cli, intr);
            err = rpc_client_call(a->ctl->cli, &req, resp);
        }
        if (!err) {
            rpc_client_set_timeout(a->ctl->cli, 0);
            rpc_client_set_interrupt(a->ctl->cli, NULL);
            return TS_OK;
        }
        ctl_disconnect(a->ctl);
        if (err == TS_EINTR)
            return err;
        if (!complained++)
            cmd_error(a->ctl->prog, "%s; retrying", transport_text(a, err));
        pause_ms(1000, intr);
    }
}

static const Tessera__JobRecord *leader_of(const Tessera__AllocWaitResponse *aw)
{
    return aw && aw->n_components ? aw->components[0] : NULL;
}

/* How long srun waits quietly before saying it waits. */
#define SRUN_QUIET_MS 1000

enum alloc_wait_result alloc_wait_grant(struct alloc *a, const volatile sig_atomic_t *intr)
{
    int waited = !a->srun;
    if (waited)
        info(a, "job %u queued and waiting for resources", a->job_id);
    Tessera__Response *resp = NULL;
    const Tessera__JobRecord *r = NULL;
    for (;;) {
        if (wait_call(a, 0, waited ? 0 : SRUN_QUIET_MS, intr, &resp) == TS_EINTR)
            return ALLOC_INTERRUPTED;
        r = resp->error ? NULL : leader_of(resp->alloc_wait);
        if (!r || r->state != TESSERA__JOB_STATE__JOB_PENDING)
            break;
        /* the quiet second is over */
        tessera__response__free_unpacked(resp, NULL);
        waited = 1;
        info(a, "job %u queued and waiting for resources", a->job_id);
    }
    if (r && r->state == TESSERA__JOB_STATE__JOB_RUNNING && !r->end_pending) {
        if (waited)
            info(a, "job %u has been allocated resources", a->job_id);
        if (!a->srun)
            info(a, "Granted job allocation %u", a->job_id);
        a->grant_resp = resp;
        a->grant = resp->alloc_wait;
        return ALLOC_GRANTED;
    }
    if (r && r->state == TESSERA__JOB_STATE__JOB_CANCELLED)
        info(a, "Job has been cancelled");
    info(a, "Job allocation %u has been revoked.", a->job_id);
    cmd_error(a->ctl->prog, "Job submit/allocate failed: %s",
              resp->error ? resp->error->text : ts_strerror(TS_EALREADY_DONE));
    a->revoked = 1;
    tessera__response__free_unpacked(resp, NULL);
    return ALLOC_REVOKED;
}

int alloc_watch_end(struct alloc *a, const volatile sig_atomic_t *intr)
{
    Tessera__Response *resp = NULL;
    if (wait_call(a, 1, 0, intr, &resp) == TS_EINTR)
        return 0;
    const Tessera__JobRecord *r = resp->error ? NULL : leader_of(resp->alloc_wait);
    Tessera__JobState final = r && r->end_pending ? r->final_state : r ? r->state : 0;
    if (final == TESSERA__JOB_STATE__JOB_TIMEOUT)
        info(a, "Job %u has exceeded its time limit and its allocation has been revoked.",
             a->job_id);
    else
        info(a, "Job allocation %u has been revoked.", a->job_id);
    a->revoked = 1;
    tessera__response__free_unpacked(resp, NULL);
    return 1;
}

/* While the nodes confirm the end (end_pending), the controller answers at once: ask again
 * after a pause that grows to ALLOC_ENDED_MAX_PAUSE_MS, so that a slow node costs few calls. */
#define ALLOC_ENDED_FIRST_PAUSE_MS 100
#define ALLOC_ENDED_MAX_PAUSE_MS 2000

int alloc_wait_ended(struct alloc *a, const volatile sig_atomic_t *intr, Tessera__JobState *state,
                     int32_t *status)
{
    for (int pause = ALLOC_ENDED_FIRST_PAUSE_MS;;) {
        Tessera__Response *resp = NULL;
        if (wait_call(a, 1, 0, intr, &resp) == TS_EINTR)
            return TS_EINTR;
        int err = resp->error ? (int)resp->error->code : TS_OK;
        const Tessera__JobRecord *r = err ? NULL : leader_of(resp->alloc_wait);
        if (!err && !r)
            err = TS_EINVALID_JOB_ID;
        int done = err || jobstate_is_finished(r->state);
        if (r && done) {
            *state = r->state;
            *status = r->exit_code;
        }
        tessera__response__free_unpacked(resp, NULL);
        if (done)
            return err;
        pause_ms(pause, intr);
        pause = pause * 2 > ALLOC_ENDED_MAX_PAUSE_MS ? ALLOC_ENDED_MAX_PAUSE_MS : pause * 2;
    }
}

void alloc_release(struct alloc *a, int status)
{
    if (a->revoked || !a->job_id)
        return;
    if (a->grant && !a->srun)
        info(a, "Relinquishing job allocation %u", a->job_id);
    Tessera__JobFinishRequest jf = TESSERA__JOB_FINISH_REQUEST__INIT;
    jf.job_id = a->job_id;
    jf.status = status;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_FINISH;
    req.job_finish = &jf;
    Tessera__Response *resp = NULL;
    int err = ctl_call(a->ctl, &req, &resp);
    if (err) {
        ctl_disconnect(a->ctl); /* one more try on a fresh connection */
        err = ctl_call(a->ctl, &req, &resp);
    }
    if (err)
        cmd_error(a->ctl->prog, "Unable to release job allocation %u: %s", a->job_id,
                  transport_text(a, err));
    else if (resp->error && resp->error->code != TS_EALREADY_DONE)
        cmd_error(a->ctl->prog, "Unable to release job allocation %u: %s", a->job_id,
                  resp->error->text);
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
}

void alloc_cancel(struct alloc *a)
{
    char id[16];
    snprintf(id, sizeof(id), "%u", a->job_id);
    char *ids[] = {id};
    Tessera__JobActionRequest act = TESSERA__JOB_ACTION_REQUEST__INIT;
    act.action = TESSERA__JOB_ACTION__JOB_ACTION_CANCEL;
    act.job_ids = ids;
    act.n_job_ids = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &act;
    Tessera__Response *resp = NULL;
    if (ctl_call(a->ctl, &req, &resp) != TS_OK) {
        ctl_disconnect(a->ctl);
        if (ctl_call(a->ctl, &req, &resp) != TS_OK)
            cmd_error(a->ctl->prog, "Unable to cancel job allocation %u", a->job_id);
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
}

void alloc_free(struct alloc *a)
{
    if (a->grant_resp)
        tessera__response__free_unpacked(a->grant_resp, NULL);
    a->grant_resp = NULL;
    a->grant = NULL;
}
