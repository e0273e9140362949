/* Nodes in the controller (ctld/node.h): registration, heartbeats, time-outs,
 * administrators' states, and the counters of what running jobs hold. */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"
#include "ctld/sched.h"
#include "ctld/step.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NODE_REASON_FROM_DAEMON_MAX 256 /* what is kept of a daemon's reason to drain */

/* ------------------------------------------------------------------------------------ */
/* the table */

static void node_clear(struct node *n)
{
    rpc_peer_destroy(n->peer);
    free(n->name);
    free(n->reason);
    free(n->version);
    free(n->cpu_holds);
    free(n->gres_found);
    memset(n, 0, sizeof(*n));
}

void node_table_free(struct node_table *t)
{
    for (size_t i = 0; t->nodes && i < t->count; i++)
        node_clear(&t->nodes[i]);
    free(t->nodes);
    hashmap_destroy(t->by_name);
    memset(t, 0, sizeof(*t));
}

static int set_reason(struct node *n, const char *reason, uid_t uid, time_t when)
{
    free(n->reason);
    n->reason = reason && *reason ? strdup(reason) : NULL;
    n->reason_uid = uid;
    n->reason_time = reason && *reason ? when : 0;
    return !reason || !*reason || n->reason ? TS_OK : TS_ENOMEM;
}

/* Administrators' settings outlive the controller: the "nodes" database. */
static int save_admin_state(struct ctld *c, const struct node *n)
{
    Tessera__NodeRecord r = TESSERA__NODE_RECORD__INIT;
    r.name = n->name;
    r.drain = n->drain;
    r.down = n->admin_down;
    r.reason = n->reason ? n->reason : (char *)"";
    r.reason_time = (int64_t)n->reason_time;
    r.reason_uid = (uint32_t)n->reason_uid;
    uint8_t buf[1024];
    size_t len = tessera__node_record__get_packed_size(&r);
    if (len > sizeof(buf))
        return TS_ETOOBIG;
    tessera__node_record__pack(&r, buf);
    return store_put(c->store, STORE_DB_NODES, n->name, strlen(n->name), buf, len);
}

static int restore_one(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct ctld *c = arg;
    Tessera__NodeRecord *r = tessera__node_record__unpack(NULL, vlen, val);
    if (!r)
        return TS_OK; /* an unreadable record only loses an administrator's note */
    struct node *n = node_find(c, r->name);
    if (n) {
        n->drain = r->drain;
        n->admin_down = r->down;
        set_reason(n, r->reason, (uid_t)r->reason_uid, (time_t)r->reason_time);
    }
    tessera__node_record__free_unpacked(r, NULL);
    return TS_OK;
}

/* The table for the current configuration; old (may be NULL) gives each node that keeps
 * its name its state. */
static int build(struct ctld *c, struct node_table *old, char *errbuf, size_t errlen)
{
    struct node_table t = {.count = c->conf->nnodes, .started = time(NULL)};
    t.nodes = calloc(t.count + 1, sizeof(*t.nodes));
    t.by_name = hashmap_create();
    int err = t.nodes && t.by_name ? TS_OK : TS_ENOMEM;
    for (size_t i = 0; !err && i < t.count; i++) {
        struct node *n = &t.nodes[i];
        n->cfg = &c->conf->nodes[i];
        struct node *prev = old ? hashmap_get_str(old->by_name, n->cfg->name) : NULL;
        if (prev) { /* the same node: everything but the configuration carries over */
            *n = *prev;
            n->cfg = &c->conf->nodes[i];
            memset(prev, 0, sizeof(*prev));
            if (n->peer && (strcmp(n->cfg->addr, n->peer_addr) || n->cfg->port != n->peer_port)) {
                rpc_peer_destroy(n->peer); /* the daemon moved: reach it at its new place */
                n->peer = NULL;
            }
        } else {
            n->name = strdup(n->cfg->name);
            n->drain = n->cfg->state == CONF_NODE_DRAIN;
            n->admin_down = n->cfg->state == CONF_NODE_DOWN;
        }
        if (!n->name || hashmap_put_str(t.by_name, n->name, n))
            err = TS_ENOMEM;
    }
    if (err) {
        snprintf(errbuf, errlen, "%s", ts_strerror(err));
        node_table_free(&t);
        return err;
    }
    if (old) {
        t.started = old->started;
        node_table_free(old); /* the moved nodes were zeroed: only the dropped ones go */
    }
    c->nodes = t;
    return TS_OK;
}

int node_table_build(struct ctld *c, char *errbuf, size_t errlen)
{
    int err = build(c, NULL, errbuf, errlen);
    if (!err)
        err = store_foreach(c->store, STORE_DB_NODES, restore_one, c);
    return err;
}

static void drain_for_daemon(struct ctld *c, struct node *n, const char *why, time_t now);

int node_table_rebuild(struct ctld *c, char *errbuf, size_t errlen)
{
    struct node_table old = c->nodes;
    memset(&c->nodes, 0, sizeof(c->nodes));
    int err = build(c, &old, errbuf, errlen);
    if (err) {
        c->nodes = old;
        return err;
    }
    /* a node line that now asks for more generic resources than the node has */
    char why[NODE_REASON_FROM_DAEMON_MAX];
    for (size_t i = 0; i < c->nodes.count; i++)
        if (c->nodes.nodes[i].registered && node_gres_short(&c->nodes.nodes[i], why, sizeof(why)))
            drain_for_daemon(c, &c->nodes.nodes[i], why, time(NULL));
    return TS_OK;
}

struct node *node_find(const struct ctld *c, const char *name)
{
    return name && c->nodes.by_name ? hashmap_get_str(c->nodes.by_name, name) : NULL;
}

size_t node_index(const struct ctld *c, const struct node *n)
{
    return (size_t)(n - c->nodes.nodes);
}

/* ------------------------------------------------------------------------------------ */
/* state */

int node_available(const struct node *n)
{
    return n->registered && n->responding && !n->down && !n->admin_down && !n->drain &&
           n->cfg->state != CONF_NODE_FUTURE;
}

const char *node_state_text(const struct node *n, char *buf, size_t len)
{
    const char *base;
    if (n->down || n->admin_down)
        base = "DOWN";
    else if (n->cfg->state == CONF_NODE_FUTURE)
        base = "FUTURE";
    else if (!n->registered)
        base = "UNKNOWN";
    else if (n->njobs == 0)
        base = "IDLE";
    else if (n->alloc_cpus >= n->cfg->cpus)
        base = "ALLOCATED";
    else
        base = "MIXED";
    snprintf(buf, len, "%s%s%s", base, n->drain ? "+DRAIN" : "",
             n->registered && !n->responding ? "+NOT_RESPONDING" : "");
    return buf;
}

static void node_apply(struct ctld *c, const Tessera__JobRecord *rec, int sign)
{
    int exclusive = rec->desc->has_exclusive && rec->desc->exclusive;
    for (size_t i = 0; i < rec->n_allocs; i++) {
        struct node *n = node_find(c, rec->allocs[i]->node);
        if (!n)
            continue; /* left the configuration while the job ran */
        if (node_cpus_hold(n, rec->allocs[i]->cpu_ids, sign) != TS_OK)
            log_error("job %u: CPU ids '%s' on %s not %s", rec->job_id, rec->allocs[i]->cpu_ids,
                      n->name, sign > 0 ? "held" : "released");
        if (sign > 0) {
            n->alloc_cpus += rec->allocs[i]->cpus;
            n->alloc_mem_mb += rec->allocs[i]->mem_mb;
            n->njobs++;
            n->exclusive += exclusive;
        } else {
            n->alloc_cpus -= rec->allocs[i]->cpus < n->alloc_cpus ? rec->allocs[i]->cpus
                                                                  : n->alloc_cpus;
            n->alloc_mem_mb -= rec->allocs[i]->mem_mb < n->alloc_mem_mb
                                   ? rec->allocs[i]->mem_mb
                                   : n->alloc_mem_mb;
            n->njobs -= n->njobs ? 1 : 0;
            n->exclusive -= exclusive && n->exclusive ? 1 : 0;
        }
    }
}

void node_hold(struct ctld *c, const Tessera__JobRecord *rec)
{
    node_apply(c, rec, 1);
}

void node_release(struct ctld *c, const Tessera__JobRecord *rec)
{
    node_apply(c, rec, -1);
}

/* ------------------------------------------------------------------------------------ */
/* the daemons */

static int listed(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* Jobs whose batch script ran on the node but that its daemon no longer has: they ended
 * while the daemon was gone (it restarted, and kills what it finds of its previous life).
 * An allocation without a script (salloc) has nothing on its nodes between steps. */
static void reconcile_lost(struct ctld *c, struct node *n, const uint32_t *ids, size_t nids)
{
    struct job *j = c->jobs.head;
    while (j) {
        struct job *next = j->next;
        const Tessera__JobRecord *r = j->rec;
        if (j->leader == j && (r->batch || r->desc->script) &&
            r->state != TESSERA__JOB_STATE__JOB_PENDING &&
            !jobstate_is_finished(r->state) && r->batch_host && !strcmp(r->batch_host, n->name) &&
            !listed(ids, nids, r->job_id)) {
            log_warn("job %u: its batch script is gone from %s", r->job_id, n->name);
            job_node_failed_unit(c, j);
        }
        j = next;
    }
}

/* What the daemon lists against what the controller knows: ids it does not run there
 * (unknown, finished, requeued, or not placed on the node) go into out for the daemon to
 * kill; a unit that is ending gets its terminate again (the first may have been lost).
 * The daemon also lists jobs whose end it has not had acknowledged: a kill or terminate
 * for a job it has no processes of changes nothing there. */
static size_t reconcile_listed(struct ctld *c, const struct node *n, const uint32_t *ids,
                               size_t nids, uint32_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < nids; i++) {
        struct job *j = job_find(&c->jobs, ids[i]);
        const Tessera__JobRecord *r = j ? j->leader->rec : NULL;
        /* the batch script, or steps of any component placed there */
        if (!r || jobstate_is_finished(r->state) || !job_unit_uses_node(j->leader, n->name))
            out[k++] = ids[i];
        else if (r->end_pending && ids[i] == r->job_id)
            job_terminate_resend(c, j->leader, n->name);
    }
    return k;
}

static int update_one(struct ctld *c, struct node *n, const char *state, const char *reason,
                      uid_t uid, time_t now);

/* The daemon cannot run jobs (it cannot contain them): drained with its reason, as an
 * administrator would, so that it stays drained until one resumes it. */
static void drain_for_daemon(struct ctld *c, struct node *n, const char *why, time_t now)
{
    char reason[NODE_REASON_FROM_DAEMON_MAX];
    snprintf(reason, sizeof(reason), "%s", why); /* the daemon's words, bounded */
    if (n->drain && n->reason && !strcmp(n->reason, reason))
        return;
    log_warn("node %s drained: %s", n->name, reason);
    if (update_one(c, n, "drain", reason, 0, now) != TS_OK)
        log_error("node %s: its drain could not be stored", n->name);
}

int node_register(struct ctld *c, const Tessera__NodeRegisterRequest *req,
                  Tessera__NodeRegisterResponse *resp, uint32_t **kill, char *errbuf,
                  size_t errlen)
{
    struct node *n = node_find(c, req->name);
    if (!n) {
        snprintf(errbuf, errlen, "node %s is not in the controller's configuration", req->name);
        return TS_EINVALID_NODE_NAME;
    }
    char gres_short[NODE_REASON_FROM_DAEMON_MAX];
    int err = node_gres_check(n, req, gres_short, sizeof(gres_short), errbuf, errlen);
    if (err)
        return err;
    if (req->cpus != n->cfg->cpus || req->real_memory_mb != n->cfg->real_memory_mb)
        log_warn("node %s registered with %u CPUs and %llu MB, the configuration says %u and "
                 "%llu: the configuration counts", n->name, req->cpus,
                 (unsigned long long)req->real_memory_mb, n->cfg->cpus,
                 (unsigned long long)n->cfg->real_memory_mb);
    time_t now = time(NULL);
    int returning = n->down && !n->admin_down;
    n->registered = 1;
    n->responding = 1;
    n->last_seen = now;
    n->boot_time = (time_t)req->boot_time;
    free(n->version);
    n->version = strdup(req->version ? req->version : "");
    if (returning) {
        n->down = 0;
        if (n->reason && !strcmp(n->reason, "Not responding"))
            set_reason(n, NULL, 0, 0);
        log_info("node %s is back", n->name);
    }
    if (req->drain_reason && *req->drain_reason)
        drain_for_daemon(c, n, req->drain_reason, now);
    else if (gres_short[0])
        drain_for_daemon(c, n, gres_short, now);
    reconcile_lost(c, n, req->running_jobs, req->n_running_jobs);
    step_node_registered(c, n->name, req->boot_time, req->running_jobs, req->n_running_jobs);
    *kill = calloc(req->n_running_jobs + 1, sizeof(**kill));
    if (!*kill)
        return TS_ENOMEM;
    resp->kill_jobs = *kill;
    resp->n_kill_jobs = reconcile_listed(c, n, req->running_jobs, req->n_running_jobs, *kill);
    unsigned hb = c->conf->noded_timeout / 3;
    resp->heartbeat_secs = hb < 1 ? 1 : hb > 30 ? 30 : hb;
    log_info("node %s registered (daemon %s, %zu job%s running)", n->name,
             n->version ? n->version : "?", req->n_running_jobs,
             req->n_running_jobs == 1 ? "" : "s");
    job_changed_nodes(c);
    return TS_OK;
}

int node_heartbeat(struct ctld *c, const Tessera__NodeHeartbeatRequest *req,
                   Tessera__NodeHeartbeatResponse *resp, uint32_t **kill)
{
    struct node *n = node_find(c, req->name);
    if (!n || !n->registered)
        return TS_EINVALID_NODE_NAME; /* unknown to us (we restarted): register again */
    n->last_seen = time(NULL);
    if (!n->responding) {
        n->responding = 1;
        job_changed_nodes(c);
    }
    *kill = calloc(req->n_running_jobs + 1, sizeof(**kill));
    if (!*kill)
        return TS_ENOMEM;
    resp->kill_jobs = *kill;
    resp->n_kill_jobs = reconcile_listed(c, n, req->running_jobs, req->n_running_jobs, *kill);
    for (size_t i = 0; i < resp->n_kill_jobs; i++)
        log_debug("job %u: listed by node %s, which does not run it: to be killed there",
                  resp->kill_jobs[i], n->name);
    return TS_OK;
}

void node_set_down(struct ctld *c, struct node *n, const char *reason)
{
    if (!n->down)
        log_warn("node %s is DOWN: %s", n->name, reason);
    n->down = 1;
    n->responding = 0;
    if (!n->reason)
        set_reason(n, reason, 0, time(NULL));
    job_node_failed(c, n);
}

void node_check_timeouts(struct ctld *c, time_t now)
{
    time_t limit = (time_t)c->conf->noded_timeout;
    for (size_t i = 0; i < c->nodes.count; i++) {
        struct node *n = &c->nodes.nodes[i];
        if (n->down)
            continue;
        /* a node that never registered since we started is only a problem when jobs run
         * there (they were running when the controller went down) */
        time_t since = n->registered ? n->last_seen : c->nodes.started;
        if (now - since <= limit || (!n->registered && n->njobs == 0))
            continue;
        if (n->registered && n->responding)
            n->responding = 0;
        node_set_down(c, n, "Not responding");
    }
}

struct rpc_peer *node_peer(struct ctld *c, struct node *n)
{
    if (n->peer)
        return n->peer;
    char name[AUTH_TARGET_MAX];
    struct rpc_peer_config cfg = {
        .host = n->cfg->addr,
        .port = n->cfg->port,
        .server_uid = c->conf->noded_user_uid,
        .target = rpc_name_noded(c->conf, n->cfg->name, name, sizeof(name)),
    };
    rpc_conf_peer(c->conf, &cfg);
    if (rpc_peer_create(c->loop, &cfg, &n->peer) != TS_OK)
        return NULL;
    snprintf(n->peer_addr, sizeof(n->peer_addr), "%s", n->cfg->addr);
    n->peer_port = n->cfg->port;
    return n->peer;
}

/* ------------------------------------------------------------------------------------ */
/* administrators */

static int update_one(struct ctld *c, struct node *n, const char *state, const char *reason,
                      uid_t uid, time_t now)
{
    if (!strcasecmp(state, "drain")) {
        n->drain = 1;
        set_reason(n, reason, uid, now);
    } else if (!strcasecmp(state, "down")) {
        n->admin_down = 1;
        set_reason(n, reason, uid, now);
        job_node_failed(c, n);
    } else if (!strcasecmp(state, "resume") || !strcasecmp(state, "idle")) {
        n->drain = 0;
        n->admin_down = 0;
        set_reason(n, NULL, 0, 0);
    } else if (!strcasecmp(state, "undrain")) {
        n->drain = 0;
        if (!n->admin_down)
            set_reason(n, NULL, 0, 0);
    } else if (!*state && reason && *reason) {
        set_reason(n, reason, uid, now);
    }
    return save_admin_state(c, n);
}

int node_update(struct ctld *c, const Tessera__NodeUpdateRequest *req, uid_t uid, char *errbuf,
                size_t errlen)
{
    const char *state = req->state ? req->state : "";
    int needs_reason = !strcasecmp(state, "drain") || !strcasecmp(state, "down");
    if (*state && !needs_reason && strcasecmp(state, "resume") && strcasecmp(state, "idle") &&
        strcasecmp(state, "undrain")) {
        snprintf(errbuf, errlen, "Invalid node state specified");
        return TS_EINVAL;
    }
    if (needs_reason && (!req->reason || !*req->reason)) {
        snprintf(errbuf, errlen, "You must specify a reason when DOWNING or DRAINING a node. "
                                 "Request denied");
        return TS_EINVAL;
    }
    uint32_t *idx = NULL;
    size_t count = 0;
    int complete;
    int err = node_list_match(c, req->names, &idx, &count, &complete);
    if (!err && (!complete || count == 0))
        err = TS_EINVALID_NODE_NAME;
    time_t now = time(NULL);
    for (size_t i = 0; !err && i < count; i++)
        err = update_one(c, &c->nodes.nodes[idx[i]], state, req->reason, uid, now);
    if (!err)
        log_info("nodes %s: state=%s reason=%s by uid %u", req->names, state,
                 req->reason ? req->reason : "", (unsigned)uid);
    free(idx);
    job_changed_nodes(c);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* best-effort messages to node daemons */

/* A message on its way: first to the commit of the changes queued before it (what caused
 * it: a cancel, a time limit, a node's failure), then to the node. */
struct send_call {
    struct ctld *c;
    char node[256];
    const char *what;
    size_t len;
    uint8_t packed[]; /* the request */
};

static void send_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct send_call *sc = arg;
    if (err && err != TS_ESHUTDOWN)
        log_warn("node %s: %s not delivered: %s", sc->node, sc->what, ts_strerror(err));
    free(sc);
}

static void send_committed(void *arg, int err)
{
    struct send_call *sc = arg;
    struct node *n = err ? NULL : node_find(sc->c, sc->node);
    struct rpc_peer *peer = n && !n->down ? node_peer(sc->c, n) : NULL;
    Tessera__Request *req = peer ? tessera__request__unpack(NULL, sc->len, sc->packed) : NULL;
    if (err)
        log_warn("node %s: %s not sent: the change it follows was not stored (%s)", sc->node,
                 sc->what, ts_strerror(err));
    if (!req || rpc_peer_call(peer, req, send_answered, sc) != TS_OK)
        free(sc);
    if (req)
        tessera__request__free_unpacked(req, NULL);
}

void node_send(struct ctld *c, const char *name, const Tessera__Request *req, const char *what)
{
    struct node *n = node_find(c, name);
    if (!n || n->down)
        return;
    size_t len = tessera__request__get_packed_size(req);
    struct send_call *sc = calloc(1, sizeof(*sc) + len);
    if (!sc)
        return;
    sc->c = c;
    snprintf(sc->node, sizeof(sc->node), "%s", name);
    sc->what = what;
    sc->len = len;
    tessera__request__pack(req, sc->packed);
    if (store_after_commit(c->store, send_committed, sc) != TS_OK)
        free(sc);
}
