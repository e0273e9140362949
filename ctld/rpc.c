/* The controller's RPC handlers and their static table. Handlers run on the loop thread
 * with the request's proven uid and gid. */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/rpc.h"

#include "common/conf/conf.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_server.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void handle_ping(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.cluster = c->conf->cluster_name;
    ping.host = c->conf->ctld_host;
    ping.start_time = (int64_t)c->start_time;
    ping.uid = (uint32_t)rpc_request_uid(req);
    ping.gid = (uint32_t)rpc_request_gid(req);
    ping.version = (char *)TESSERA_VERSION;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

/* Entries of "scontrol show config", collected before sorting. Values are copied: the
 * configuration formats numbers into a buffer valid during one callback only. */
struct entries {
    Tessera__ConfigEntry *items;
    Tessera__ConfigEntry **ptrs;
    char **values;
    size_t n, cap;
};

static void entries_take(struct entries *e, const char *key, char *value)
{
    if (!value || e->n == e->cap) { /* sized up front: a full table cannot happen */
        free(value);
        return;
    }
    Tessera__ConfigEntry *it = &e->items[e->n];
    tessera__config_entry__init(it);
    it->key = (char *)key;
    it->value = value;
    e->values[e->n] = value;
    e->ptrs[e->n] = it;
    e->n++;
}

static void entries_add(void *arg, const char *key, const char *value)
{
    entries_take(arg, key, strdup(value));
}

static char *format_time(time_t t)
{
    char buf[64];
    timefmt_format_timestamp(t, buf, sizeof(buf));
    return strdup(buf);
}

static char *format_u64(unsigned long long v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", v);
    return strdup(buf);
}

/* Slurm sorts the keys without regard to case (BOOT_TIME among the Bs). */
static int entry_cmp(const void *a, const void *b)
{
    const Tessera__ConfigEntry *x = *(Tessera__ConfigEntry *const *)a;
    const Tessera__ConfigEntry *y = *(Tessera__ConfigEntry *const *)b;
    return strcasecmp(x->key, y->key);
}

static void handle_show_config(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    struct entries e = {.cap = conf_entry_count() + 4}; /* and the four added below */
    e.items = calloc(e.cap, sizeof(*e.items));
    e.ptrs = calloc(e.cap, sizeof(*e.ptrs));
    e.values = calloc(e.cap, sizeof(*e.values));
    if (!e.items || !e.ptrs || !e.values) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        goto out;
    }
    conf_foreach_entry(c->conf, entries_add, &e);
    entries_take(&e, "BOOT_TIME", format_time(c->start_time));
    entries_take(&e, "NEXT_JOB_ID", format_u64(c->next_job_id));
    entries_add(&e, "TESSERA_CONF", c->conf_path);
    entries_add(&e, "TESSERA_VERSION", TESSERA_VERSION);
    qsort(e.ptrs, e.n, sizeof(*e.ptrs), entry_cmp);

    Tessera__ShowConfigResponse show = TESSERA__SHOW_CONFIG_RESPONSE__INIT;
    show.as_of = (int64_t)c->conf->read_time;
    show.n_entries = e.n;
    show.entries = e.ptrs;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_SHOW_CONFIG;
    resp.show_config = &show;
    rpc_respond(req, &resp);
out:
    for (size_t i = 0; i < e.n; i++)
        free(e.values[i]);
    free(e.values);
    free(e.ptrs);
    free(e.items);
}

/* The role column: who may send each request (docs/security.md, section 1). The server
 * checks it before the handler runs; handlers check only what depends on the request
 * (the owner of a job, say). */
const struct rpc_handler ctld_rpc_handlers[] = {
    {TESSERA__REQUEST__MSG_PING, "ping", handle_ping, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SHOW_CONFIG, "show_config", handle_show_config, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SUBMIT, "submit", ctld_handle_submit, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_QUERY, "job_query", ctld_handle_job_query, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_ACTION, "job_action", ctld_handle_job_action, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_UPDATE, "job_update", ctld_handle_job_update, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_PARTITION_QUERY, "partition_query", ctld_handle_partition_query,
     RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_REGISTER, "node_register", ctld_handle_node_register,
     RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_NODE_HEARTBEAT, "node_heartbeat", ctld_handle_node_heartbeat,
     RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_JOB_COMPLETE, "job_complete", ctld_handle_job_complete,
     RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_NODE_QUERY, "node_query", ctld_handle_node_query, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_UPDATE, "node_update", ctld_handle_node_update, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_SCHED_STATS, "sched_stats", ctld_handle_sched_stats, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_RECONFIGURE, "reconfigure", ctld_handle_reconfigure, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_SCHEDULE, "schedule", ctld_handle_schedule, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_ALLOC_WAIT, "alloc_wait", ctld_handle_alloc_wait, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_FINISH, "job_finish", ctld_handle_job_finish, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_CREATE, "step_create", ctld_handle_step_create, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_COMPLETE, "step_complete", ctld_handle_step_complete,
     RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_STEP_QUERY, "step_query", ctld_handle_step_query, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_ACCT_QUERY, "acct_query", ctld_handle_acct_query, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_FAIRSHARE_QUERY, "fairshare_query", ctld_handle_fairshare_query,
     RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_SCRIPT, "job_script", ctld_handle_job_script, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_BCAST_CRED, "bcast_cred", ctld_handle_bcast_cred, RPC_ROLE_USER},
};
const size_t ctld_rpc_nhandlers = sizeof(ctld_rpc_handlers) / sizeof(ctld_rpc_handlers[0]);

unsigned ctld_rpc_roles(void *arg, uid_t uid)
{
    const struct ctld *c = arg;
    return rpc_conf_roles(c->conf, uid);
}
