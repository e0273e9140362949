/* The node daemon's line to the controller: register (telling which jobs still have
 * processes here), heartbeat, and carry the end reports (noded/report.c). Registration and
 * every heartbeat answer name the jobs the controller does not run here; they are killed.
 *
 * When the line breaks, also between two requests (the controller restarted, say), a
 * heartbeat goes at once: a controller that no longer knows the node answers with an
 * error and the daemon registers again at once, one that cannot be reached is tried again
 * every second. After registering, what was not acknowledged is sent again.
 */
#include "noded/gres.h"
#include "noded/noded.h"
#include "noded/stepstatus.h"

#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RETRY_MS 1000 /* between registration attempts */

static void link_register(struct noded *nd);
static void send_heartbeat(struct noded *nd);

static void link_timer_fired(struct loop *loop, struct loop_timer *t, void *arg);

static void schedule_link(struct noded *nd, uint64_t ms)
{
    loop_timer_cancel(nd->loop, nd->link_timer);
    nd->link_timer = loop_timer_add(nd->loop, ms, 0, link_timer_fired, nd);
}

/* Forget the registration and register again after ms. */
static void register_again(struct noded *nd, int err, uint64_t ms)
{
    if (nd->registered)
        log_warn("lost the controller (%s); registering again", ts_strerror(err));
    nd->registered = 0;
    reports_line_lost(nd);
    schedule_link(nd, ms);
}

void link_lost(struct noded *nd, int err)
{
    register_again(nd, err, RETRY_MS);
}

/* The line broke while nothing was waiting on it: find out now what became of the
 * controller rather than at the next heartbeat. */
static void line_broke(void *arg, int err)
{
    struct noded *nd = arg;
    if (!nd->registered)
        return; /* a registration is under way or due */
    log_debug("the line to the controller broke (%s); checking at once", ts_strerror(err));
    send_heartbeat(nd);
}

/* ------------------------------------------------------------------------------------ */
/* registration */

static void registered(void *arg, int err, const Tessera__Response *resp)
{
    struct noded *nd = arg;
    nd->registering = 0;
    if (err == TS_ESHUTDOWN)
        return;
    if (err) { /* the controller is not there (yet): keep trying, quietly */
        log_debug("registration failed: %s", ts_strerror(err));
        link_lost(nd, err);
        return;
    }
    if (resp->error || resp->msg_case != TESSERA__RESPONSE__MSG_NODE_REGISTER) {
        log_warn("registration refused: %s", resp->error ? resp->error->text : "unexpected answer");
        link_lost(nd, TS_EPROTO);
        return;
    }
    const Tessera__NodeRegisterResponse *r = resp->node_register;
    nd->registered = 1;
    if (r->cred_public_key && r->cred_public_key[0])
        link_take_cred_key(nd, r->cred_public_key);
    nd->heartbeat_secs = r->heartbeat_secs ? r->heartbeat_secs : 10;
    log_info("registered with the controller (heartbeat every %u s)", nd->heartbeat_secs);
    for (size_t i = 0; i < r->n_kill_jobs; i++)
        job_kill_listed(nd, r->kill_jobs[i]);
    schedule_link(nd, (uint64_t)nd->heartbeat_secs * 1000);
    reports_send(nd);
}

static void link_register(struct noded *nd)
{
    if (nd->registering)
        return;
    Tessera__NodeRegisterRequest reg = TESSERA__NODE_REGISTER_REQUEST__INIT;
    reg.name = nd->name;
    reg.cpus = nd->node->cpus;
    reg.real_memory_mb = nd->node->real_memory_mb;
    reg.features = nd->node->features;
    reg.boot_time = (int64_t)nd->boot_time;
    reg.version = (char *)TESSERA_VERSION;
    reg.drain_reason = nd->contain_failure;
    uint32_t *ids = NULL;
    reg.n_running_jobs = job_running_ids(nd, &ids);
    reg.running_jobs = ids;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_REGISTER;
    req.node_register = &reg;
    if (noded_gres_report(nd, &reg.gres, &reg.n_gres) == TS_OK &&
        rpc_peer_call(nd->ctl, &req, registered, nd) == TS_OK)
        nd->registering = 1;
    else
        schedule_link(nd, RETRY_MS);
    noded_gres_report_free(reg.gres, reg.n_gres);
    free(ids);
}

/* ------------------------------------------------------------------------------------ */
/* heartbeats */

static void heartbeat_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct noded *nd = arg;
    if (err == TS_ESHUTDOWN)
        return;
    if (err) {
        link_lost(nd, err);
        return;
    }
    if (resp->error) {
        /* the controller no longer knows us (it restarted): register again at once */
        register_again(nd, (int)resp->error->code, 0);
        return;
    }
    if (resp->msg_case == TESSERA__RESPONSE__MSG_NODE_HEARTBEAT)
        for (size_t i = 0; i < resp->node_heartbeat->n_kill_jobs; i++)
            job_kill_listed(nd, resp->node_heartbeat->kill_jobs[i]);
    schedule_link(nd, (uint64_t)nd->heartbeat_secs * 1000);
}

static void send_heartbeat(struct noded *nd)
{
    Tessera__NodeHeartbeatRequest hb = TESSERA__NODE_HEARTBEAT_REQUEST__INIT;
    hb.name = nd->name;
    uint32_t *ids = NULL;
    hb.n_running_jobs = job_running_ids(nd, &ids);
    hb.running_jobs = ids;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_HEARTBEAT;
    req.node_heartbeat = &hb;
    loop_timer_cancel(nd->loop, nd->link_timer); /* the next one follows the answer */
    nd->link_timer = NULL;
    if (rpc_peer_call(nd->ctl, &req, heartbeat_answered, nd) != TS_OK)
        link_lost(nd, TS_ENOMEM);
    free(ids);
}

static void link_timer_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct noded *nd = arg;
    nd->link_timer = NULL;
    if (nd->registered)
        send_heartbeat(nd);
    else
        link_register(nd);
}

/* ------------------------------------------------------------------------------------ */

void link_take_cred_key(struct noded *nd, const char *pem)
{
    if (nd->conf->cred_public_key)
        return; /* the configured key stands */
    struct cred_key *k = NULL;
    if (cred_key_from_public_pem(pem, strlen(pem), &k) != TS_OK) {
        log_error("the controller's step credential key is unusable");
        return;
    }
    cred_key_free(nd->cred_key);
    nd->cred_key = k;
}

int link_start(struct noded *nd)
{
    char name[AUTH_TARGET_MAX];
    struct rpc_peer_config cfg = {
        .host = nd->conf->ctld_host,
        .port = nd->conf->ctld_port,
        .server_uid = nd->conf->slurm_user_uid,
        .target = rpc_name_ctld(nd->conf, name, sizeof(name)),
        .on_lost = line_broke,
        .lost_arg = nd,
    };
    rpc_conf_peer(nd->conf, &cfg);
    int err = rpc_peer_create(nd->loop, &cfg, &nd->ctl);
    if (!err)
        link_register(nd);
    return err;
}

void link_stop(struct noded *nd)
{
    loop_timer_cancel(nd->loop, nd->link_timer);
    nd->link_timer = NULL;
    rpc_peer_destroy(nd->ctl); /* waiting calls free their report_call */
    nd->ctl = NULL;
    reports_free(nd);
}
