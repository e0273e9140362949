/* Answers shared by the controller's handlers (ctld/rpc.h): the empty ones, and those
 * that wait for the commit of the changes queued before them ("durable before
 * acknowledged", docs/architecture.md). */
#include "ctld/ctld.h"
#include "ctld/rpc.h"

#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "ctld/store.h"

#include <stdlib.h>

void ctld_respond_empty(struct rpc_request *req, Tessera__Response__MsgCase kind)
{
    Tessera__Empty empty = TESSERA__EMPTY__INIT;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = kind;
    switch (kind) {
    case TESSERA__RESPONSE__MSG_JOB_COMPLETE: resp.job_complete = &empty; break;
    case TESSERA__RESPONSE__MSG_NODE_UPDATE: resp.node_update = &empty; break;
    case TESSERA__RESPONSE__MSG_RECONFIGURE: resp.reconfigure = &empty; break;
    case TESSERA__RESPONSE__MSG_JOB_FINISH: resp.job_finish = &empty; break;
    case TESSERA__RESPONSE__MSG_STEP_COMPLETE: resp.step_complete = &empty; break;
    default: resp.schedule = &empty; break;
    }
    rpc_respond(req, &resp);
}

/* A handler whose answer must wait for its changes to be durable. */
struct deferred {
    struct rpc_request *req;
    Tessera__Response__MsgCase kind;
};

static void deferred_committed(void *arg, int err)
{
    struct deferred *d = arg;
    if (err)
        rpc_respond_error(d->req, err, NULL);
    else
        ctld_respond_empty(d->req, d->kind);
    free(d);
}

void ctld_respond_after_commit(struct ctld *c, struct rpc_request *req,
                               Tessera__Response__MsgCase kind)
{
    struct deferred *d = calloc(1, sizeof(*d));
    if (!d) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    d->req = req;
    d->kind = kind;
    if (store_after_commit(c->store, deferred_committed, d) != TS_OK) {
        free(d);
        rpc_respond_error(req, TS_ENOMEM, NULL);
    }
}
