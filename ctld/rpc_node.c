/* RPC handlers for nodes and the scheduler: registrations, heartbeats and job ends from
 * node daemons; node queries and updates, scheduler statistics, reconfigure and schedule
 * from commands. */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/node.h"
#include "ctld/rpc.h"
#include "ctld/sched.h"
#include "ctld/store_guard.h"

#include "common/conf/conf.h"
#include "common/gres/gres_conf.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctld_handle_node_register(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    Tessera__NodeRegisterResponse nr = TESSERA__NODE_REGISTER_RESPONSE__INIT;
    uint32_t *kill = NULL;
    char why[512] = "";
    int err = node_register(c, msg->node_register, &nr, &kill, why, sizeof(why));
    if (err) {
        log_warn("registration from %s refused: %s", rpc_request_peer(req),
                 why[0] ? why : ts_strerror(err));
        rpc_respond_error(req, err, why[0] ? why : NULL);
    } else {
        nr.cred_public_key = c->cred_public_pem;
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_NODE_REGISTER;
        resp.node_register = &nr;
        rpc_respond(req, &resp);
    }
    free(kill);
}

void ctld_handle_node_heartbeat(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    Tessera__NodeHeartbeatResponse hb = TESSERA__NODE_HEARTBEAT_RESPONSE__INIT;
    uint32_t *kill = NULL;
    int err = node_heartbeat(c, msg->node_heartbeat, &hb, &kill);
    if (err) {
        rpc_respond_error(req, err, NULL);
    } else {
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_NODE_HEARTBEAT;
        resp.node_heartbeat = &hb;
        rpc_respond(req, &resp);
    }
    free(kill);
}

void ctld_handle_job_complete(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    /* refused while nothing can be stored: the daemon keeps the report and sends it again */
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    job_batch_ended(c, msg->job_complete);
    /* acknowledged once the end is durable: the daemon forgets it then. An end of a job
     * this controller does not know or has settled changes nothing and is acknowledged
     * all the same; only a failed commit answers an error, and the daemon resends. */
    ctld_respond_after_commit(c, req, TESSERA__RESPONSE__MSG_JOB_COMPLETE);
}

/* ------------------------------------------------------------------------------------ */

/* The names asked for: the request's host lists as one, matched against each node (never
 * expanded); NULL when the request names none. */
static int wanted_parse(const Tessera__NodeQueryRequest *q, struct hostpattern **out)
{
    *out = NULL;
    size_t total = 0;
    for (size_t i = 0; i < q->n_names && total <= NODE_LIST_MAX_LEN; i++)
        total += strnlen(q->names[i], NODE_LIST_MAX_LEN + 1) + 1;
    if (q->n_names == 0)
        return TS_OK;
    if (total > NODE_LIST_MAX_LEN)
        return TS_EINVALID_NODE_NAME;
    char *joined = malloc(total), *at = joined;
    if (!joined)
        return TS_ENOMEM;
    for (size_t i = 0; i < q->n_names; i++)
        at += sprintf(at, "%s%s", i ? "," : "", q->names[i]);
    int err = hostpattern_parse(joined, out);
    free(joined);
    return err == TS_ENOMEM ? err : err ? TS_EINVALID_NODE_NAME : TS_OK;
}

/* The node's Gres= as text (malloc'd, NULL when none or out of memory). */
static char *gres_text(const struct conf_node *cfg)
{
    char buf[GRES_SPEC_MAX_ITEMS * (GRES_NAME_MAX + GRES_TYPE_MAX + 24)];
    if (!cfg->ngres || gres_spec_format(cfg->gres, cfg->ngres, buf, sizeof(buf)) != TS_OK)
        return NULL;
    return strdup(buf);
}

static void fill_info(struct ctld *c, struct node *n, Tessera__NodeInfo *ni, char *state,
                      size_t slen, char **parts, size_t *nparts, char **gres)
{
    const struct conf_node *cfg = n->cfg;
    tessera__node_info__init(ni);
    ni->name = n->name;
    ni->state = (char *)node_state_text(n, state, slen);
    ni->reason = n->reason ? n->reason : (char *)"";
    ni->reason_time = (int64_t)n->reason_time;
    ni->reason_uid = (uint32_t)n->reason_uid;
    ni->cpus = cfg->cpus;
    ni->alloc_cpus = n->alloc_cpus;
    ni->real_memory_mb = cfg->real_memory_mb;
    ni->alloc_mem_mb = n->alloc_mem_mb;
    ni->features = cfg->features;
    ni->addr = cfg->addr;
    ni->hostname = cfg->hostname;
    ni->port = cfg->port;
    ni->boot_time = (int64_t)n->boot_time;
    ni->last_seen = (int64_t)n->last_seen;
    ni->sockets = cfg->sockets;
    ni->cores_per_socket = cfg->cores_per_socket;
    ni->threads_per_core = cfg->threads_per_core;
    ni->weight = cfg->weight;
    ni->version = n->version ? n->version : (char *)"";
    *gres = gres_text(cfg);
    ni->gres = *gres ? *gres : (char *)"";
    *nparts = 0;
    size_t idx = node_index(c, n);
    for (size_t p = 0; p < c->conf->npartitions; p++)
        for (size_t k = 0; k < c->conf->partitions[p].nnodes; k++)
            if (c->conf->partitions[p].node_index[k] == idx)
                parts[(*nparts)++] = c->conf->partitions[p].name;
    ni->partitions = parts;
    ni->n_partitions = *nparts;
}

void ctld_handle_node_query(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__NodeQueryRequest *q = msg->node_query;
    struct hostpattern *wanted = NULL;
    int err = wanted_parse(q, &wanted);
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    size_t count = c->nodes.count, np = c->conf->npartitions + 1;
    struct ctld_page page = ctld_page_start(q->max_nodes);
    size_t room = count < page.max_items ? count : page.max_items; /* of one page */
    Tessera__NodeInfo *infos = calloc(room + 1, sizeof(*infos));
    Tessera__NodeInfo **ptrs = calloc(room + 1, sizeof(*ptrs));
    char (*states)[64] = calloc(room + 1, sizeof(*states));
    char **parts = calloc((room + 1) * np, sizeof(*parts));
    char **gres = calloc(room + 1, sizeof(*gres));
    size_t n = 0, i = q->start_index;
    for (; infos && ptrs && states && parts && gres && i < count; i++) {
        struct node *nd = &c->nodes.nodes[i];
        if (wanted && !hostpattern_contains(wanted, nd->name))
            continue;
        size_t nparts;
        fill_info(c, nd, &infos[n], states[n], sizeof(states[n]), &parts[n * np], &nparts,
                  &gres[n]);
        if (!ctld_page_take(&page, tessera__node_info__get_packed_size(&infos[n])))
            break; /* gres[n] is freed with the rest */
        ptrs[n] = &infos[n];
        n++;
    }
    if (!infos || !ptrs || !states || !parts || !gres) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
    } else if (q->n_names && n == 0 && q->start_index == 0) {
        rpc_respond_error(req, TS_EINVALID_NODE_NAME, NULL);
    } else {
        Tessera__NodeQueryResponse nq = TESSERA__NODE_QUERY_RESPONSE__INIT;
        nq.nodes = ptrs;
        nq.n_nodes = n;
        nq.more = i < count;
        nq.next_index = (uint32_t)i;
        nq.now = (int64_t)time(NULL);
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_NODE_QUERY;
        resp.node_query = &nq;
        rpc_respond(req, &resp);
    }
    hostpattern_destroy(wanted);
    free(infos);
    free(ptrs);
    free(states);
    free(parts);
    for (size_t k = 0; gres && k <= n && k < room + 1; k++)
        free(gres[k]);
    free(gres);
}

void ctld_handle_node_update(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    char why[256] = "";
    int err = node_update(c, msg->node_update, rpc_request_uid(req), why, sizeof(why));
    if (err)
        rpc_respond_error(req, err, why[0] ? why : NULL);
    else
        ctld_respond_after_commit(c, req, TESSERA__RESPONSE__MSG_NODE_UPDATE);
}

void ctld_handle_sched_stats(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    Tessera__SchedStatsResponse st = TESSERA__SCHED_STATS_RESPONSE__INIT;
    Tessera__SchedTrigger storage[SCHED_TRIGGER_COUNT];
    Tessera__SchedTrigger *ptrs[SCHED_TRIGGER_COUNT];
    sched_fill_stats(c, &st, storage, ptrs);
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_SCHED_STATS;
    resp.sched_stats = &st;
    rpc_respond(req, &resp);
}

void ctld_handle_reconfigure(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    char why[1024] = "";
    int err = ctld_reconfigure(c, why, sizeof(why));
    if (err)
        rpc_respond_error(req, err, why[0] ? why : NULL);
    else
        ctld_respond_empty(req, TESSERA__RESPONSE__MSG_RECONFIGURE);
}

void ctld_handle_schedule(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    sched_trigger(c, SCHED_TRIGGER_CMD);
    ctld_respond_empty(req, TESSERA__RESPONSE__MSG_SCHEDULE);
}
