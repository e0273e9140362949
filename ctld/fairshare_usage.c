/* Fair share in the controller: charging, decay, saving, and the query.
 *
 * Usage is allocated CPU-seconds (the CPUs a component holds times the seconds it runs;
 * sacct's CPUTimeRAW), charged to the job's entity: every 30 s for what runs, and when a
 * component stops running for the rest. Charges are counted from the later of the job's
 * start and the last charge, so nothing is charged twice and a controller restart charges
 * the jobs that went on running meanwhile. Decay runs before each charge, over the time
 * since the last one. A component is charged up to its suspension and again from its
 * resumption (JobRecord.suspend_time), not while it is suspended. What a component is
 * charged and when the tree decays is common/sched/usage.c's, which the simulator shares.
 *
 * The usage (each entity's own, by name) is saved as one record, key "usage" of the
 * "fairshare" database, every sync_time and at shutdown; names the tree does not know
 * come back under "unknown", so a reconfigure that changes the tree loses nothing. */
#include "ctld/fairshare_usage.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/sched.h"

#include "common/conf/conf.h"
#include "common/rpc/rpc_server.h"
#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/sched/usage.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHARGE_INTERVAL 30
#define USAGE_KEY "usage"

struct fairshare_usage {
    struct fairshare *tree;
    int64_t updated;          /* usage charged and decayed up to here */
    time_t next_sync;
};

int fairshare_usage_load_tree(const struct conf *conf, const struct policy *policy,
                              struct fairshare **out, char *errbuf, size_t errlen)
{
    uint32_t unknown = policy ? policy->set[POLICY_PRIME].unknown_shares : 10;
    if (conf->resource_group_file)
        return fairshare_load(conf->resource_group_file, unknown, out, errbuf, errlen);
    return fairshare_parse(NULL, "", unknown, out, errbuf, errlen);
}

const struct fairshare *fairshare_usage_tree(const struct ctld *c)
{
    return c->fairshare ? c->fairshare->tree : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* saving and restoring */

static void save(struct ctld *c)
{
    struct fairshare_usage *fu = c->fairshare;
    size_t n = fairshare_count(fu->tree), k = 0;
    Tessera__FairshareUsage *items = calloc(n + 1, sizeof(*items));
    Tessera__FairshareUsage **ptrs = calloc(n + 1, sizeof(*ptrs));
    if (!items || !ptrs) {
        free(items);
        free(ptrs);
        log_error("fair share: out of memory saving the usage");
        return;
    }
    struct fairshare_info in;
    for (size_t i = 0; fairshare_info(fu->tree, i, &in) == TS_OK; i++) {
        if (!(in.own_usage > 0))
            continue;
        tessera__fairshare_usage__init(&items[k]);
        items[k].name = (char *)in.name;
        items[k].usage = in.own_usage;
        ptrs[k] = &items[k];
        k++;
    }
    Tessera__FairshareState st = TESSERA__FAIRSHARE_STATE__INIT;
    st.updated = (int64_t)fu->updated;
    st.usage = ptrs;
    st.n_usage = k;
    size_t len = tessera__fairshare_state__get_packed_size(&st);
    uint8_t *buf = malloc(len + 1);
    if (buf) {
        tessera__fairshare_state__pack(&st, buf);
        if (store_put(c->store, STORE_DB_FAIRSHARE, USAGE_KEY, strlen(USAGE_KEY), buf, len))
            log_error("fair share: cannot queue the usage record");
    }
    free(buf);
    free(items);
    free(ptrs);
}

static int restore(struct ctld *c, char *errbuf, size_t errlen)
{
    struct fairshare_usage *fu = c->fairshare;
    void *val;
    size_t len;
    int err = store_get(c->store, STORE_DB_FAIRSHARE, USAGE_KEY, strlen(USAGE_KEY), &val, &len);
    if (err == TS_ENOENT)
        return TS_OK;
    if (err) {
        snprintf(errbuf, errlen, "cannot read the fair-share usage: %s", ts_strerror(err));
        return err;
    }
    Tessera__FairshareState *st = tessera__fairshare_state__unpack(NULL, len, val);
    free(val);
    if (!st) {
        /* a damaged record costs history, never the controller */
        log_error("fair share: the saved usage cannot be read; starting from none");
        return TS_OK;
    }
    for (size_t i = 0; i < st->n_usage; i++) {
        int node = fairshare_entity(fu->tree, st->usage[i]->name);
        if (node >= 0)
            fairshare_charge(fu->tree, node, st->usage[i]->usage);
    }
    if (st->updated > 0 && st->updated <= time(NULL))
        fu->updated = st->updated;
    log_info("fair share: usage of %zu entities restored", st->n_usage);
    tessera__fairshare_state__free_unpacked(st, NULL);
    return TS_OK;
}

int fairshare_usage_init(struct ctld *c, struct fairshare *tree, char *errbuf, size_t errlen)
{
    struct fairshare_usage *fu = calloc(1, sizeof(*fu));
    if (!fu) {
        fairshare_destroy(tree);
        return TS_ENOMEM;
    }
    fu->tree = tree;
    fu->updated = time(NULL);
    c->fairshare = fu;
    int err = restore(c, errbuf, errlen);
    const struct policy_set *s = sched_policy_now(c, fu->updated);
    fu->next_sync = time(NULL) + (s ? s->sync_time : 3600);
    return err;
}

void fairshare_usage_replace_tree(struct ctld *c, struct fairshare *tree)
{
    struct fairshare_usage *fu = c->fairshare;
    if (!fu) {
        fairshare_destroy(tree);
        return;
    }
    struct fairshare_info in;
    for (size_t i = 0; fairshare_info(fu->tree, i, &in) == TS_OK; i++) {
        if (!(in.own_usage > 0))
            continue;
        int node = fairshare_entity(tree, in.name);
        if (node >= 0)
            fairshare_charge(tree, node, in.own_usage);
    }
    fairshare_destroy(fu->tree);
    fu->tree = tree;
}

void fairshare_usage_fini(struct ctld *c)
{
    struct fairshare_usage *fu = c->fairshare;
    if (!fu)
        return;
    if (c->store)
        save(c);
    fairshare_destroy(fu->tree);
    free(fu);
    c->fairshare = NULL;
}

/* ------------------------------------------------------------------------------------ */
/* entities */

int fairshare_usage_entity(struct ctld *c, const Tessera__JobRecord *r, time_t now)
{
    struct fairshare_usage *fu = c->fairshare;
    if (!fu)
        return -1;
    const struct policy_set *s = sched_policy_now(c, now);
    enum policy_entity kind = s ? s->fairshare_entity : POLICY_ENTITY_USER;
    /* names through the controller's cache: this runs for every job of every cycle */
    char buf[NAMECACHE_NAME_MAX];
    const char *name;
    switch (kind) {
    case POLICY_ENTITY_ACCOUNT: name = r->desc->account ? r->desc->account : ""; break;
    case POLICY_ENTITY_GROUP:
        name = namecache_name(c->names, NAMECACHE_GROUP, r->desc->group_id, buf, sizeof(buf));
        break;
    default:
        name = namecache_name(c->names, NAMECACHE_USER, r->desc->user_id, buf, sizeof(buf));
        break;
    }
    return fairshare_entity(fu->tree, name);
}

int fairshare_usage_wanted(const struct ctld *c, time_t now)
{
    const struct policy_set *s = sched_policy_now(c, now);
    return s && c->fairshare && policy_uses_fair_share(s);
}

/* ------------------------------------------------------------------------------------ */
/* charging */

/* r's usage since the last charging step (common/sched/usage.c), to its entity */
static void charge(struct ctld *c, const Tessera__JobRecord *r, int64_t charged_to, time_t now)
{
    double used = usage_cpu_seconds(r, charged_to, (int64_t)now);
    if (!(used > 0))
        return;
    int node = fairshare_usage_entity(c, r, now);
    if (node >= 0)
        fairshare_charge(c->fairshare->tree, node, used);
}

void fairshare_usage_job_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind == JOB_CHANGE_STOPPING && c->fairshare)
        charge(c, ch->job->rec, c->fairshare->updated, ch->now);
}

void fairshare_usage_tick(struct ctld *c, time_t now)
{
    struct fairshare_usage *fu = c->fairshare;
    if (!fu)
        return;
    const struct policy_set *s = sched_policy_now(c, now);
    int64_t from = usage_step(fu->tree, &fu->updated, (int64_t)now, CHARGE_INTERVAL,
                              s ? s->half_life : 24 * 3600);
    for (struct job *j = c->jobs.head; from >= 0 && j; j = j->next)
        charge(c, j->rec, from, now);
    if (now >= fu->next_sync) {
        save(c);
        int64_t every = s && s->sync_time > 0 ? s->sync_time : 3600;
        fu->next_sync = now + (time_t)every;
    }
}

/* ------------------------------------------------------------------------------------ */
/* scontrol show fairshare */

void ctld_handle_fairshare_query(struct rpc_request *req, const Tessera__Request *msg,
                                 void *arg)
{
    (void)msg;
    struct ctld *c = arg;
    struct fairshare_usage *fu = c->fairshare;
    time_t now = time(NULL);
    size_t n = fu ? fairshare_count(fu->tree) : 0;
    Tessera__FairshareNode *nodes = calloc(n + 1, sizeof(*nodes));
    Tessera__FairshareNode **ptrs = calloc(n + 1, sizeof(*ptrs));
    if (!nodes || !ptrs) {
        free(nodes);
        free(ptrs);
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    struct fairshare_info in;
    for (size_t i = 0; i < n && fairshare_info(fu->tree, i, &in) == TS_OK; i++) {
        tessera__fairshare_node__init(&nodes[i]);
        nodes[i].name = (char *)in.name;
        nodes[i].id = in.id;
        nodes[i].depth = (uint32_t)in.depth;
        nodes[i].shares = in.shares;
        nodes[i].norm_shares = in.norm_shares;
        nodes[i].usage = in.usage;
        nodes[i].effective_usage = in.effective_usage;
        nodes[i].factor = in.factor;
        ptrs[i] = &nodes[i];
    }
    const struct policy_set *s = sched_policy_now(c, now);
    static const char *const entity[] = {"euser", "egroup", "account"};
    Tessera__FairshareQueryResponse r = TESSERA__FAIRSHARE_QUERY_RESPONSE__INIT;
    r.nodes = ptrs;
    r.n_nodes = n;
    r.entity = (char *)entity[s ? s->fairshare_entity : POLICY_ENTITY_USER];
    r.enabled = fairshare_usage_wanted(c, now);
    r.half_life = s ? s->half_life : 24 * 3600;
    r.updated = fu ? (int64_t)fu->updated : 0;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_FAIRSHARE_QUERY;
    resp.fairshare_query = &r;
    rpc_respond(req, &resp);
    free(nodes);
    free(ptrs);
}
