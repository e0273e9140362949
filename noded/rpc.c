/* The node daemon's RPC handlers: batch launches and job signals from the controller;
 * step launches from srun, step signals, and sbcast's blocks. Who may send which is the
 * table's role column at the end. */
#include "noded/noded.h"

#include "common/conf/conf.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <signal.h>
#include <stdio.h>

static void respond_empty(struct rpc_request *req, Tessera__Response__MsgCase kind)
{
    Tessera__Empty empty = TESSERA__EMPTY__INIT;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = kind;
    switch (kind) {
    case TESSERA__RESPONSE__MSG_BATCH_LAUNCH: resp.batch_launch = &empty; break;
    case TESSERA__RESPONSE__MSG_STEP_LAUNCH: resp.step_launch = &empty; break;
    case TESSERA__RESPONSE__MSG_STEP_SIGNAL: resp.step_signal = &empty; break;
    default: resp.job_signal = &empty; break;
    }
    rpc_respond(req, &resp);
}

static void handle_batch_launch(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct noded *nd = arg;
    char why[512] = "";
    int err = job_launch_batch(nd, msg->batch_launch, why, sizeof(why));
    if (err) {
        log_error("job %u: launch failed: %s", msg->batch_launch->job_id, why);
        rpc_respond_error(req, err, why);
        return;
    }
    respond_empty(req, TESSERA__RESPONSE__MSG_BATCH_LAUNCH);
}

static void handle_job_signal(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct noded *nd = arg;
    const Tessera__JobSignalRequest *s = msg->job_signal;
    if (!s->terminate && (s->signal == 0 || s->signal >= NSIG)) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    job_signal(nd, s->job_id, (int)s->signal, s->terminate, s->kill_wait, s->scope);
    respond_empty(req, TESSERA__RESPONSE__MSG_JOB_SIGNAL);
}

static void handle_step_launch(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct noded *nd = arg;
    char why[512] = "";
    int err = step_launch(nd, msg->step_launch, rpc_request_uid(req), why, sizeof(why));
    if (err) {
        log_warn("step launch from uid %u at %s refused: %s", (unsigned)rpc_request_uid(req),
                 rpc_request_peer(req), why[0] ? why : ts_strerror(err));
        rpc_respond_error(req, err, why[0] ? why : NULL);
        return;
    }
    respond_empty(req, TESSERA__RESPONSE__MSG_STEP_LAUNCH);
}

static void handle_step_signal(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct noded *nd = arg;
    const Tessera__StepSignalRequest *s = msg->step_signal;
    if (!s->terminate && (s->signal == 0 || s->signal >= NSIG)) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    int err = step_signal(nd, s, rpc_request_uid(req));
    if (err)
        rpc_respond_error(req, err, NULL);
    else
        respond_empty(req, TESSERA__RESPONSE__MSG_STEP_SIGNAL);
}

static void handle_file_bcast(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    bcast_write(arg, req, msg->file_bcast);
}

static void handle_ping(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct noded *nd = arg;
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.cluster = nd->conf->cluster_name;
    ping.host = nd->name;
    ping.start_time = (int64_t)nd->boot_time;
    ping.uid = (uint32_t)rpc_request_uid(req);
    ping.gid = (uint32_t)rpc_request_gid(req);
    ping.version = (char *)TESSERA_VERSION;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

/* The role column (docs/security.md, section 1): batch launches and job signals come from
 * the controller, which runs as SlurmUser (the administrator role); step launches and
 * sbcast's blocks from anyone, their signed credentials decide; step signals from anyone,
 * step_signal lets the step's user or the controller through. */
const struct rpc_handler noded_rpc_handlers[] = {
    {TESSERA__REQUEST__MSG_PING, "ping", handle_ping, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_BATCH_LAUNCH, "batch_launch", handle_batch_launch, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_JOB_SIGNAL, "job_signal", handle_job_signal, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_STEP_LAUNCH, "step_launch", handle_step_launch, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_SIGNAL, "step_signal", handle_step_signal, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_FILE_BCAST, "file_bcast", handle_file_bcast, RPC_ROLE_USER},
};
const size_t noded_rpc_nhandlers = sizeof(noded_rpc_handlers) / sizeof(noded_rpc_handlers[0]);

unsigned noded_rpc_roles(void *arg, uid_t uid)
{
    const struct noded *nd = arg;
    return rpc_conf_roles(nd->conf, uid);
}
