/* The node daemon's line to the controller: register (telling which jobs still have
 * processes here), heartbeat, and report job ends until each is acknowledged. When the
 * line breaks (the controller restarted, say), the daemon registers again and resends
 * what was not acknowledged, so no end is lost.
 */
#include "noded/noded.h"
#include "noded/stepstatus.h"

#include "common/conf.h"
#include "common/cred.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/rpc_peer.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RETRY_MS 1000 /* between registration attempts */

static void link_register(struct noded *nd);
static void send_reports(struct noded *nd);

static void link_timer_fired(struct loop *loop, struct loop_timer *t, void *arg);

static void schedule_link(struct noded *nd, uint64_t ms)
{
    loop_timer_cancel(nd->loop, nd->link_timer);
    nd->link_timer = loop_timer_add(nd->loop, ms, 0, link_timer_fired, nd);
}

/* Anything wrong with the line: forget the registration and start again soon. */
static void link_lost(struct noded *nd, int err)
{
    if (nd->registered)
        log_warn("lost the controller (%s); registering again", ts_strerror(err));
    nd->registered = 0;
    for (struct nd_report *r = nd->reports; r; r = r->next)
        r->in_flight = 0;
    schedule_link(nd, RETRY_MS);
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
    send_reports(nd);
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
    uint32_t *ids = NULL;
    reg.n_running_jobs = job_running_ids(nd, &ids);
    reg.running_jobs = ids;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_REGISTER;
    req.node_register = &reg;
    if (rpc_peer_call(nd->ctl, &req, registered, nd) == TS_OK)
        nd->registering = 1;
    else
        schedule_link(nd, RETRY_MS);
    free(ids);
}

/* ------------------------------------------------------------------------------------ */
/* heartbeats */

static void heartbeat_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct noded *nd = arg;
    if (err == TS_ESHUTDOWN)
        return;
    if (err || resp->error) {
        /* an error here is the controller saying it no longer knows us (restarted with a
         * new configuration, say): register again */
        link_lost(nd, err ? err : (int)resp->error->code);
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
/* job ends */

struct report_call {
    struct noded *nd;
    struct nd_report *report;
};

static void drop_report(struct noded *nd, struct nd_report *target)
{
    struct nd_report *prev = NULL;
    for (struct nd_report *r = nd->reports; r; prev = r, r = r->next) {
        if (r != target)
            continue;
        if (prev)
            prev->next = r->next;
        else
            nd->reports = r->next;
        if (nd->reports_tail == r)
            nd->reports_tail = prev;
        free(r->msg.node);
        free(r->step.node);
        free(r);
        return;
    }
}

static void report_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct report_call *rc = arg;
    struct noded *nd = rc->nd;
    struct nd_report *r = rc->report;
    free(rc);
    if (err == TS_ESHUTDOWN)
        return;
    if (err) {
        r->in_flight = 0;
        link_lost(nd, err);
        return;
    }
    /* acknowledged (an error answer too: the controller has heard of it and will not
     * want it again) */
    log_debug("job %u: end acknowledged", r->is_step ? r->step.job_id : r->msg.job_id);
    drop_report(nd, r);
}

static void send_reports(struct noded *nd)
{
    for (struct nd_report *r = nd->reports; r && nd->registered; r = r->next) {
        if (r->in_flight)
            continue;
        struct report_call *rc = calloc(1, sizeof(*rc));
        if (!rc)
            return;
        rc->nd = nd;
        rc->report = r;
        Tessera__Request req = TESSERA__REQUEST__INIT;
        if (r->is_step) {
            req.msg_case = TESSERA__REQUEST__MSG_STEP_COMPLETE;
            req.step_complete = &r->step;
        } else {
            req.msg_case = TESSERA__REQUEST__MSG_JOB_COMPLETE;
            req.job_complete = &r->msg;
        }
        if (rpc_peer_call(nd->ctl, &req, report_answered, rc) != TS_OK) {
            free(rc);
            return;
        }
        r->in_flight = 1;
    }
}

static void queue_report(struct noded *nd, struct nd_report *r)
{
    if (nd->reports_tail)
        nd->reports_tail->next = r;
    else
        nd->reports = r;
    nd->reports_tail = r;
    send_reports(nd);
}

/* The report's own usage, naming this node (node: the message's copy of its name). */
static Tessera__AcctUsage *report_usage(struct nd_report *r, char *node,
                                        const struct stepstatus_usage *u)
{
    tessera__acct_usage__init(&r->usage);
    r->usage.user_usec = u->user_usec;
    r->usage.sys_usec = u->sys_usec;
    r->usage.max_rss_kb = u->max_rss_kb;
    r->usage.max_rss_node = node;
    r->usage.max_rss_task = u->max_rss_task;
    return &r->usage;
}

void link_report_end(struct noded *nd, uint32_t job_id, int status, int batch,
                     const struct stepstatus_usage *usage)
{
    struct nd_report *r = calloc(1, sizeof(*r));
    if (!r || !(r->msg.node = strdup(nd->name))) {
        log_error("job %u: out of memory; its end cannot be reported", job_id);
        free(r);
        return;
    }
    Tessera__JobCompleteRequest init = TESSERA__JOB_COMPLETE_REQUEST__INIT;
    char *node = r->msg.node;
    r->msg = init;
    r->msg.node = node;
    r->msg.job_id = job_id;
    r->msg.status = status;
    r->msg.batch = batch;
    r->msg.end_time = (int64_t)time(NULL);
    r->msg.seq = ++nd->report_seq;
    if (batch && usage)
        r->msg.usage = report_usage(r, node, usage);
    queue_report(nd, r);
}

void link_report_step_end(struct noded *nd, uint32_t job_id, uint32_t step_id, int status,
                          const struct stepstatus_usage *usage)
{
    struct nd_report *r = calloc(1, sizeof(*r));
    char *node = r ? strdup(nd->name) : NULL;
    if (!node) {
        log_error("step %u.%u: out of memory; its end cannot be reported", job_id, step_id);
        free(r);
        return;
    }
    tessera__step_complete_request__init(&r->step);
    r->is_step = 1;
    r->step.node = node;
    r->step.job_id = job_id;
    r->step.step_id = step_id;
    r->step.status = status;
    r->step.end_time = (int64_t)time(NULL);
    r->step.seq = ++nd->report_seq;
    if (usage)
        r->step.usage = report_usage(r, node, usage);
    queue_report(nd, r);
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
    struct rpc_peer_config cfg = {
        .host = nd->conf->ctld_host,
        .port = nd->conf->ctld_port,
        .munge_socket = nd->conf->munge_socket,
        .server_uid = nd->conf->slurm_user_uid,
        .cred_ttl = (int)nd->conf->cred_ttl,
        .timeout_ms = nd->conf->message_timeout * 1000,
    };
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
    while (nd->reports)
        drop_report(nd, nd->reports);
}
