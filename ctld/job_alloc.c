/* Interactive allocations (salloc, and srun outside a job): waiting for the grant or the
 * end, and ending an allocation when its command exits.
 *
 * salloc holds an AllocWait request open; the controller keeps it in a list of waiters
 * and answers it once the job is in the state it waits for. Every job change goes through
 * job_save(), which pokes this module; the check then runs once per loop iteration (a
 * posted call), so a burst of changes costs one pass over the waiters. An answer leaves
 * only after the state it shows is durable (store_after_commit), like every other reply.
 *
 * A grant that cannot be delivered because salloc's connection is gone (it was killed
 * while pending) would leave resources held by nobody: the allocation is cancelled then,
 * as Slurm kills an interactive job whose salloc does not answer. An allocation that
 * starts while nobody waits for it (its salloc died before asking, or is reconnecting)
 * must be claimed by an AllocWait within ALLOC_CLAIM_SECS, or it is cancelled too.
 */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_private.h"
#include "ctld/rpc.h"
#include "ctld/store_guard.h"

#include "common/job/jobstate.h"
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#define ALLOC_CLAIM_SECS 10

/* A started allocation nobody has claimed yet. */
struct alloc_unclaimed {
    struct alloc_unclaimed *next;
    uint32_t job_id;
    time_t deadline;
};

struct alloc_waiter {
    struct alloc_waiter *next;
    struct ctld *c;
    struct rpc_request *req;
    uint32_t job_id;
    int until_end;
    int answering; /* an answer waits for the commit */
    struct loop_timer *timer; /* timeout_ms: answer as things are */
};

/* Whether the unit is where the waiter waits for it to be. */
static int reached(const struct job *leader, int until_end)
{
    const Tessera__JobRecord *r = leader->rec;
    if (jobstate_is_finished(r->state) || r->end_pending)
        return 1;
    return !until_end && r->state != TESSERA__JOB_STATE__JOB_PENDING;
}

static void unlink_waiter(struct ctld *c, struct alloc_waiter *w)
{
    for (struct alloc_waiter **p = &c->alloc_waiters; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            return;
        }
    }
}

static void answer(struct alloc_waiter *w, struct job *leader)
{
    size_t n = job_ncomponents(leader);
    Tessera__JobRecord **recs = calloc(n, sizeof(*recs));
    if (!recs) {
        rpc_respond_error(w->req, TS_ENOMEM, NULL);
        return;
    }
    for (size_t i = 0; i < n; i++)
        recs[i] = job_component(leader, i)->rec;
    struct job_public *pub = job_public_records(recs, n); /* no private data in answers */
    if (!pub) {
        free(recs);
        rpc_respond_error(w->req, TS_ENOMEM, NULL);
        return;
    }
    Tessera__AllocWaitResponse aw = TESSERA__ALLOC_WAIT_RESPONSE__INIT;
    aw.components = recs;
    aw.n_components = n;
    aw.now = (int64_t)time(NULL);
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_ALLOC_WAIT;
    resp.alloc_wait = &aw;
    int alive = rpc_request_peer_alive(w->req);
    int err = rpc_respond(w->req, &resp);
    if (!alive)
        err = TS_ECLOSED;
    job_public_free(pub);
    free(recs);
    const Tessera__JobRecord *r = leader->rec;
    if (err == TS_ECLOSED && !w->c->alloc_closed && !w->until_end && r->state == TESSERA__JOB_STATE__JOB_RUNNING &&
        !r->end_pending) {
        log_warn("job %u: its allocation could not be delivered (the requester is gone); "
                 "cancelling it", r->job_id);
        job_terminate_unit(w->c, leader, TESSERA__JOB_STATE__JOB_CANCELLED);
    }
}

static void answer_committed(void *arg, int err)
{
    struct alloc_waiter *w = arg;
    struct ctld *c = w->c;
    unlink_waiter(c, w);
    struct job *j = job_find(&c->jobs, w->job_id);
    if (err)
        rpc_respond_error(w->req, err, NULL);
    else if (!j)
        rpc_respond_error(w->req, TS_EINVALID_JOB_ID, NULL);
    else
        answer(w, j->leader);
    free(w);
}

/* Answer w once what is queued now is durable. */
static void answer_after_commit(struct ctld *c, struct alloc_waiter *w)
{
    w->answering = 1;
    loop_timer_cancel(c->loop, w->timer);
    w->timer = NULL;
    if (store_after_commit(c->store, answer_committed, w) != TS_OK) {
        unlink_waiter(c, w);
        rpc_respond_error(w->req, TS_ENOMEM, NULL);
        free(w);
    }
}

static void check_waiters(struct loop *loop, void *arg)
{
    struct ctld *c = arg;
    c->alloc_check_posted = 0;
    for (struct alloc_waiter *w = c->alloc_waiters, *next; w; w = next) {
        next = w->next;
        if (w->answering)
            continue;
        struct job *j = job_find(&c->jobs, w->job_id);
        if (!j || reached(j->leader, w->until_end))
            answer_after_commit(c, w);
    }
}

static int has_waiter(const struct ctld *c, uint32_t job_id)
{
    for (const struct alloc_waiter *w = c->alloc_waiters; w; w = w->next)
        if (w->job_id == job_id)
            return 1;
    return 0;
}

static void claim(struct ctld *c, uint32_t job_id)
{
    for (struct alloc_unclaimed **p = &c->alloc_unclaimed; *p;) {
        struct alloc_unclaimed *u = *p;
        if (u->job_id == job_id) {
            *p = u->next;
            free(u);
        } else {
            p = &u->next;
        }
    }
}

void job_alloc_started(struct ctld *c, struct job *leader)
{
    uint32_t id = leader->rec->job_id;
    /* closed: a start committed by the shutdown's last batch; nothing would free it */
    if (c->alloc_closed || has_waiter(c, id))
        return;
    struct alloc_unclaimed *u = calloc(1, sizeof(*u));
    if (!u)
        return; /* it stays until its time limit: the worst case is wasted nodes */
    u->job_id = id;
    u->deadline = time(NULL) + ALLOC_CLAIM_SECS;
    u->next = c->alloc_unclaimed;
    c->alloc_unclaimed = u;
}

void job_alloc_housekeeping(struct ctld *c, time_t now)
{
    for (struct alloc_unclaimed **p = &c->alloc_unclaimed; *p;) {
        struct alloc_unclaimed *u = *p;
        if (u->deadline > now) {
            p = &u->next;
            continue;
        }
        *p = u->next;
        struct job *j = job_find(&c->jobs, u->job_id);
        const Tessera__JobRecord *r = j ? j->leader->rec : NULL;
        if (r && r->state == TESSERA__JOB_STATE__JOB_RUNNING && !r->end_pending) {
            log_warn("job %u: nobody claimed its allocation; cancelling it", r->job_id);
            job_terminate_unit(c, j->leader, TESSERA__JOB_STATE__JOB_CANCELLED);
        }
        free(u);
    }
}

void job_alloc_changed(struct ctld *c, const struct job_change *ch)
{
    if ((ch->kind != JOB_CHANGE_SAVED && ch->kind != JOB_CHANGE_FORGOTTEN) ||
        !c->alloc_waiters || c->alloc_check_posted)
        return;
    if (loop_post(c->loop, check_waiters, c) == TS_OK)
        c->alloc_check_posted = 1;
}

void job_alloc_fini(struct ctld *c)
{
    /* the server is gone: responses would be dropped, only the memory is left */
    c->alloc_closed = 1;
    while (c->alloc_unclaimed) {
        struct alloc_unclaimed *u = c->alloc_unclaimed;
        c->alloc_unclaimed = u->next;
        free(u);
    }
    while (c->alloc_waiters) {
        struct alloc_waiter *w = c->alloc_waiters;
        c->alloc_waiters = w->next;
        if (!w->answering) {
            loop_timer_cancel(c->loop, w->timer);
            rpc_respond_error(w->req, TS_ESHUTDOWN, NULL);
            free(w);
        }
    }
}

/* The allocation a request names: the leader of an existing job the caller may act on. */
static int find_allocation(struct ctld *c, uint32_t job_id, uid_t uid, struct job **out)
{
    struct job *j = job_find(&c->jobs, job_id);
    if (!j || j->leader != j)
        return TS_EINVALID_JOB_ID;
    if (!job_owner_or_admin(c, j, uid))
        return TS_EPERM;
    *out = j;
    return TS_OK;
}

/* The requester asked to hear back after a while whatever happens (srun stays quiet for
 * its first second, then says it waits): the answer shows the job still pending. */
static void waiter_timeout(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct alloc_waiter *w = arg;
    w->timer = NULL;
    if (!w->answering)
        answer_after_commit(w->c, w);
}

void ctld_handle_alloc_wait(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__AllocWaitRequest *aw = msg->alloc_wait;
    struct job *leader;
    int err = find_allocation(c, aw->job_id, rpc_request_uid(req), &leader);
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    struct alloc_waiter *w = calloc(1, sizeof(*w));
    if (!w) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    claim(c, aw->job_id);
    w->c = c;
    w->req = req;
    w->job_id = aw->job_id;
    w->until_end = aw->until_end;
    w->next = c->alloc_waiters;
    c->alloc_waiters = w;
    if (reached(leader, w->until_end))
        answer_after_commit(c, w);
    else if (aw->timeout_ms)
        w->timer = loop_timer_add(c->loop, aw->timeout_ms, 0, waiter_timeout, w);
}

void ctld_handle_job_finish(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__JobFinishRequest *jf = msg->job_finish;
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    struct job *leader;
    int err = find_allocation(c, jf->job_id, rpc_request_uid(req), &leader);
    const Tessera__JobRecord *r = err ? NULL : leader->rec;
    if (!err && (r->batch || r->desc->script))
        err = TS_EINVAL; /* a batch job ends with its script */
    else if (!err && jobstate_is_finished(r->state))
        err = TS_EALREADY_DONE;
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    if (r->state == TESSERA__JOB_STATE__JOB_PENDING) {
        log_info("job %u: allocation request withdrawn", r->job_id);
        job_end_unit(c, leader, TESSERA__JOB_STATE__JOB_CANCELLED, 0);
    } else if (!r->end_pending) {
        int status = jf->status;
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        job_finish_allocation(c, leader,
                              ok ? TESSERA__JOB_STATE__JOB_COMPLETED
                                 : TESSERA__JOB_STATE__JOB_FAILED,
                              status);
    }
    ctld_respond_after_commit(c, req, TESSERA__RESPONSE__MSG_JOB_FINISH);
}
