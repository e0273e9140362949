/* RPC handlers for steps: srun's creation, node daemons' end reports, queries. */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/rpc.h"
#include "ctld/step.h"
#include "ctld/store_guard.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The step's answer waits for its records (and the jobs' step counters) to be durable:
 * otherwise a controller restarted in between would hand out the same step id again. */
struct create_reply {
    struct rpc_request *req;
    Tessera__StepCreateResponse sc;
};

static void create_committed(void *arg, int err)
{
    struct create_reply *cr = arg;
    if (err) {
        rpc_respond_error(cr->req, err, NULL);
    } else {
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_STEP_CREATE;
        resp.step_create = &cr->sc;
        rpc_respond(cr->req, &resp);
    }
    step_create_response_clear(&cr->sc);
    free(cr);
}

void ctld_handle_step_create(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    struct create_reply *cr = calloc(1, sizeof(*cr));
    if (!cr) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    cr->req = req;
    char why[512];
    int err = step_create(c, msg->step_create, rpc_request_uid(req), &cr->sc, why, sizeof(why));
    if (!err && store_after_commit(c->store, create_committed, cr) == TS_OK)
        return;
    if (!err) {
        step_create_response_clear(&cr->sc);
        err = TS_ENOMEM;
    }
    rpc_respond_error(req, err, why[0] ? why : NULL);
    free(cr);
}

void ctld_handle_step_complete(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    /* refused while nothing can be stored: the daemon keeps the report and sends it again */
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    step_node_ended(c, msg->step_complete);
    /* acknowledged once durable: the daemon forgets the report then (also for a step it
     * does not know: nothing more to do; only a failed commit answers an error) */
    ctld_respond_after_commit(c, req, TESSERA__RESPONSE__MSG_STEP_COMPLETE);
}

static int cmp_step(const void *a, const void *b)
{
    const Tessera__StepRecord *x = *(Tessera__StepRecord *const *)a;
    const Tessera__StepRecord *y = *(Tessera__StepRecord *const *)b;
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

static int after_cursor(const Tessera__StepRecord *r, const Tessera__StepQueryRequest *q)
{
    return r->job_id > q->after_job_id ||
           (r->job_id == q->after_job_id && r->step_id > q->after_step_id);
}

/* The page after the request's cursor, in place at recs (sorted, each step once). */
static size_t page_of(Tessera__StepRecord **recs, size_t n, const Tessera__StepQueryRequest *q,
                      int *more)
{
    if (n > 1)
        qsort(recs, n, sizeof(*recs), cmp_step);
    struct ctld_page page = ctld_page_start(q->max_steps);
    size_t kept = 0, i = 0;
    for (; i < n; i++) {
        if (!after_cursor(recs[i], q) || (kept && recs[kept - 1] == recs[i]))
            continue; /* before the cursor, or named twice ("93" and "93.2") */
        if (!ctld_page_take(&page, tessera__step_record__get_packed_size(recs[i])))
            break;
        recs[kept++] = recs[i];
    }
    *more = i < n;
    return kept;
}

void ctld_handle_step_query(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    Tessera__StepRecord **recs = NULL;
    size_t n = 0;
    int err = step_query(c, msg->step_query, &recs, &n);
    if (err) {
        free(recs);
        rpc_respond_error(req, err, NULL);
        return;
    }
    int more;
    Tessera__StepQueryResponse sq = TESSERA__STEP_QUERY_RESPONSE__INIT;
    sq.steps = recs;
    sq.n_steps = page_of(recs, n, msg->step_query, &more);
    sq.more = more;
    sq.now = (int64_t)time(NULL);
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_STEP_QUERY;
    resp.step_query = &sq;
    rpc_respond(req, &resp);
    free(recs);
}
