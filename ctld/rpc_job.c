/* RPC handlers for jobs and partitions: submit, query, actions, update. Handlers that
 * change state answer only after the change is durable (store_after_commit). */
#include "ctld/ctld.h"
#include "ctld/filter_submit.h"
#include "ctld/job.h"
#include "ctld/job_private.h"
#include "ctld/node.h"
#include "ctld/rpc.h"
#include "ctld/sched.h"
#include "ctld/store_guard.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/net/frame.h"
#include "common/text/signame.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A response waiting for the batch that holds its changes. */
struct pending_reply {
    struct ctld *c;
    struct rpc_request *req;
    Tessera__Response resp;
    Tessera__SubmitResponse submit;
    Tessera__JobActionResponse action;
    Tessera__JobActionResult **results;
    size_t nresults;
    uint32_t leader_id;
    size_t ncomponents;
};

static void free_pending(struct pending_reply *p)
{
    for (size_t i = 0; i < p->nresults; i++) {
        free(p->results[i]->job_id);
        free(p->results[i]->text);
        free(p->results[i]);
    }
    free(p->results);
    free(p);
}

/* The batch is on disk (or failed): now the answer may leave. */
static void reply_committed(void *arg, int err)
{
    struct pending_reply *p = arg;
    if (err) {
        log_error("state commit failed: %s; refusing the request", ts_strerror(err));
        rpc_respond_error(p->req, err, NULL);
    } else {
        rpc_respond(p->req, &p->resp);
    }
    free_pending(p);
}

static void reply_after_commit(struct ctld *c, struct pending_reply *p)
{
    if (store_after_commit(c->store, reply_committed, p) != TS_OK) {
        rpc_respond_error(p->req, TS_ENOMEM, NULL);
        free_pending(p);
    }
}

/* "127.0.0.1:40112" -> "127.0.0.1" */
static void peer_host(struct rpc_request *req, char *buf, size_t len)
{
    snprintf(buf, len, "%s", rpc_request_peer(req));
    char *colon = strrchr(buf, ':');
    if (colon)
        *colon = '\0';
}

/* A failed submission must leave nothing behind: drop the components from memory. */
static void forget_unstored(struct ctld *c, uint32_t leader_id, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct job *j = job_find(&c->jobs, leader_id + (uint32_t)i);
        if (j)
            job_table_remove(&c->jobs, j);
    }
}

static void submit_committed(void *arg, int err)
{
    struct pending_reply *p = arg;
    if (err) {
        log_error("job %u: state commit failed: %s; the submission is refused", p->leader_id,
                  ts_strerror(err));
        forget_unstored(p->c, p->leader_id, p->ncomponents);
        rpc_respond_error(p->req, err, NULL);
    } else {
        rpc_respond(p->req, &p->resp);
    }
    free_pending(p);
}

void ctld_handle_submit(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    if (!msg->submit->test_only && ctld_refuse_change(c, req, CTLD_CHANGE_NEW_WORK))
        return;
    char host[64];
    peer_host(req, host, sizeof(host));
    /* sizes and counts before anything else sees it: filters get bounded jobs */
    char why[512];
    int err = job_limits_check_submission(c, msg->submit, rpc_request_uid(req), why,
                                          sizeof(why));
    if (err) {
        rpc_respond_error(req, err, why[0] ? why : NULL);
        return;
    }
    /* submission filters first, when any apply: they answer later (ctld/filter_submit.c) */
    if (!msg->submit->test_only &&
        filter_submit_start(c, req, msg->submit, rpc_request_uid(req), rpc_request_gid(req),
                            host))
        return;
    ctld_submit_finish(c, req, msg->submit, rpc_request_uid(req), rpc_request_gid(req), host);
}

void ctld_submit_finish(struct ctld *c, struct rpc_request *req,
                        const Tessera__SubmitRequest *sub, uid_t uid, gid_t gid,
                        const char *host)
{
    struct pending_reply *p = calloc(1, sizeof(*p));
    if (!p) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    p->c = c;
    p->req = req;
    char why[512];
    int err = job_submit(c, sub, uid, gid, host, &p->leader_id, why, sizeof(why));
    if (err) {
        rpc_respond_error(req, err, why[0] ? why : NULL);
        free_pending(p);
        return;
    }
    tessera__submit_response__init(&p->submit);
    tessera__response__init(&p->resp);
    p->ncomponents = sub->n_components;
    p->submit.ncomponents = (uint32_t)sub->n_components;
    /* test-only: the id the job would have had (Slurm spends it; nothing is spent here) */
    p->submit.job_id = sub->test_only ? (uint32_t)c->next_job_id : p->leader_id;
    p->resp.msg_case = TESSERA__RESPONSE__MSG_SUBMIT;
    p->resp.submit = &p->submit;
    if (sub->test_only) {
        err = sched_estimate(c, sub->components, sub->n_components, &p->submit);
        if (err && err != TS_ENOENT)
            rpc_respond_error(req, err, NULL);
        else
            rpc_respond(req, &p->resp);
        if (p->submit.nodes != protobuf_c_empty_string)
            free(p->submit.nodes);
        if (p->submit.partition != protobuf_c_empty_string)
            free(p->submit.partition);
        free_pending(p);
        return;
    }
    if (store_after_commit(c->store, submit_committed, p) != TS_OK) {
        forget_unstored(c, p->leader_id, p->ncomponents);
        rpc_respond_error(req, TS_ENOMEM, NULL);
        free_pending(p);
    }
}

/* ------------------------------------------------------------------------------------ */
/* queries */

struct selection {
    Tessera__JobRecord **recs;
    size_t n, cap;
    struct hashmap *seen;
};

static int select_add(struct selection *s, struct job *j)
{
    if (hashmap_get_u32(s->seen, j->rec->job_id))
        return TS_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        Tessera__JobRecord **grown = realloc(s->recs, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        s->recs = grown;
        s->cap = cap;
    }
    s->recs[s->n++] = j->rec;
    return hashmap_put_u32(s->seen, j->rec->job_id, j);
}

static struct job_filter query_filter(const Tessera__JobQueryRequest *q,
                                      const struct hashmap *nodes)
{
    struct job_filter f = {.uids = q->user_ids, .nuids = q->n_user_ids,
                           .partitions = q->partitions, .npartitions = q->n_partitions,
                           .states = q->states, .nstates = q->n_states,
                           .all_states = q->all_states, .names = q->names, .nnames = q->n_names,
                           .qos = q->qos, .nqos = q->n_qos, .accounts = q->accounts,
                           .naccounts = q->n_accounts, .nodes = nodes};
    return f;
}

/* squeue -w: the configured nodes the list names, by name (matched, never expanded:
 * ctld/node_match.c). A name that is no configured node is an error, as in Slurm. */
static int query_nodes(struct ctld *c, const char *expr, struct hashmap **out)
{
    *out = NULL;
    if (!expr || !*expr)
        return TS_OK;
    uint32_t *idx = NULL;
    size_t n = 0;
    int complete = 0;
    int err = node_list_match(c, expr, &idx, &n, &complete);
    if (!err && !complete)
        err = TS_EINVALID_NODE_NAME;
    if (!err && !(*out = hashmap_create()))
        err = TS_ENOMEM;
    for (size_t i = 0; !err && i < n; i++)
        err = hashmap_put_str(*out, c->conf->nodes[idx[i]].name, (void *)1);
    free(idx);
    if (err) {
        hashmap_destroy(*out);
        *out = NULL;
    }
    return err;
}

/* Jobs by the ids given (each as docs/01-hetjob.md §3.3 says), then filtered. */
static int select_by_ids(struct ctld *c, const Tessera__JobQueryRequest *q,
                         const struct job_filter *filter, struct selection *s)
{
    struct job_filter f = *filter;
    size_t resolved = 0;
    for (size_t i = 0; i < q->n_job_ids; i++) {
        struct job *found[128];
        int whole;
        int n = job_resolve(&c->jobs, q->job_ids[i], JOB_SCOPE_DISPLAY, 0, found, 128, &whole);
        if (n == -TS_EINVALID_JOB_ID)
            continue;
        if (n < 0)
            return -n;
        resolved++;
        for (int k = 0; k < n; k++)
            if (job_filter_matches(&f, found[k]) && select_add(s, found[k]))
                return TS_ENOMEM;
    }
    return resolved ? TS_OK : TS_EINVALID_JOB_ID;
}

static int cmp_rec_id(const void *a, const void *b)
{
    uint32_t x = (*(Tessera__JobRecord *const *)a)->job_id;
    uint32_t y = (*(Tessera__JobRecord *const *)b)->job_id;
    return x < y ? -1 : x > y;
}

/* A record that could not travel even alone (kept from before the submission limits):
 * sent without its script, environment and arguments. */
#define JOB_RECORD_SEND_MAX (FRAME_DEFAULT_MAX - ((size_t)1 << 20))

struct stripped {
    Tessera__JobRecord rec;
    Tessera__JobDesc desc;
};

static Tessera__JobRecord *sendable(Tessera__JobRecord *r, size_t size, struct stripped *st)
{
    if (size <= JOB_RECORD_SEND_MAX)
        return r;
    st->rec = *r;
    st->desc = *r->desc;
    st->desc.script = NULL;
    st->desc.n_environment = st->desc.n_argv = 0;
    st->rec.desc = &st->desc;
    return &st->rec;
}

/* The page after q->after_job_id of the selection (ascending ids), in place at recs. */
static size_t page_of(Tessera__JobRecord **recs, size_t n, const Tessera__JobQueryRequest *q,
                      struct stripped *st, int *more)
{
    size_t first = 0, kept = 0;
    while (first < n && recs[first]->job_id <= q->after_job_id)
        first++;
    struct ctld_page page = ctld_page_start(q->max_jobs);
    size_t i = first;
    for (; i < n; i++) {
        size_t size = tessera__job_record__get_packed_size(recs[i]);
        if (!ctld_page_take(&page, size))
            break;
        recs[kept++] = sendable(recs[i], size, st); /* alone in its page: one st suffices */
    }
    *more = i < n;
    return kept;
}

/* Each filter list is walked once per job: their lengths are bounded before any walk. */
static int filter_lists_bounded(const size_t *counts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (counts[i] > JOB_FILTER_MAX_ITEMS)
            return TS_EINVAL;
    return TS_OK;
}

void ctld_handle_job_query(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__JobQueryRequest *q = msg->job_query;
    struct selection s = {.seen = hashmap_create()};
    int err = s.seen ? TS_OK : TS_ENOMEM;
    struct hashmap *nodes = NULL;
    const size_t counts[] = {q->n_user_ids, q->n_partitions, q->n_states,
                             q->n_names,    q->n_qos,        q->n_accounts};
    if (!err)
        err = filter_lists_bounded(counts, sizeof(counts) / sizeof(counts[0]));
    if (!err)
        err = query_nodes(c, q->nodelist, &nodes);
    struct job_filter f = query_filter(q, nodes);
    if (!err && q->n_job_ids)
        err = select_by_ids(c, q, &f, &s);
    for (struct job *j = c->jobs.head; !err && !q->n_job_ids && j; j = j->next)
        if (j->rec->job_id > q->after_job_id && job_filter_matches(&f, j))
            err = select_add(&s, j);
    /* scripts, environments and arguments never leave in a query (ctld/job_private.h) */
    struct job_public *pub = err ? NULL : job_public_records(s.recs, s.n);
    if (!err && !pub)
        err = TS_ENOMEM;
    if (err) {
        rpc_respond_error(req, err, NULL);
    } else {
        if (q->n_job_ids && s.n > 1) /* the table's walk is in id order already */
            qsort(s.recs, s.n, sizeof(*s.recs), cmp_rec_id);
        struct stripped st;
        int more;
        Tessera__JobQueryResponse jq = TESSERA__JOB_QUERY_RESPONSE__INIT;
        jq.jobs = s.recs;
        jq.n_jobs = page_of(s.recs, s.n, q, &st, &more);
        jq.more = more;
        jq.now = (int64_t)time(NULL);
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_JOB_QUERY;
        resp.job_query = &jq;
        rpc_respond(req, &resp);
    }
    job_public_free(pub);
    free(s.recs);
    hashmap_destroy(s.seen);
    hashmap_destroy(nodes);
}

/* ------------------------------------------------------------------------------------ */
/* actions and updates */

static int add_result(struct pending_reply *p, const char *id, int code)
{
    Tessera__JobActionResult **grown = realloc(p->results, (p->nresults + 1) * sizeof(*grown));
    if (!grown)
        return TS_ENOMEM;
    p->results = grown;
    Tessera__JobActionResult *r = calloc(1, sizeof(*r));
    if (!r)
        return TS_ENOMEM;
    tessera__job_action_result__init(r);
    r->code = (uint32_t)code;
    r->job_id = strdup(id);
    r->text = strdup(ts_strerror(code));
    p->results[p->nresults++] = r;
    return r->job_id && r->text ? TS_OK : TS_ENOMEM;
}

/* A signal the node daemons can send, to processes they know how to find. */
static int signal_request_ok(const Tessera__JobActionRequest *a)
{
    if (a->action != TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL)
        return 1;
    return a->signal >= 1 && a->signal <= SIGNAME_MAX &&
           (a->signal_scope == TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL ||
            a->signal_scope == TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_STEPS ||
            a->signal_scope == TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_BATCH_SHELL);
}

/* One id of a job action: acted on, or (list_only) only named. */
static int act_or_list(struct ctld *c, const Tessera__JobActionRequest *req, const char *id,
                       uid_t uid)
{
    struct job_signal_req sig = {.signo = req->signal, .scope = req->signal_scope};
    return req->list_only ? TS_OK : job_action_by_id(c, req->action, id, uid, &sig);
}

/* The ids that scancel's filters mean: a het job whose components all match is acted on
 * whole ("93"); otherwise each matching component by itself ("93+1"). */
static int act_on_matches(struct ctld *c, const Tessera__JobActionRequest *req, uid_t uid,
                          const struct hashmap *nodes, struct pending_reply *p)
{
    struct job_filter f = {.uids = req->user_ids, .nuids = req->n_user_ids,
                           .partitions = req->partitions, .npartitions = req->n_partitions,
                           .states = req->states, .nstates = req->n_states,
                           .names = req->names, .nnames = req->n_names,
                           .qos = req->qos, .nqos = req->n_qos, .accounts = req->accounts,
                           .naccounts = req->n_accounts, .nodes = nodes};
    /* users who name no user mean their own jobs, as scancel -p/-t/-n do in Slurm */
    uint32_t self = (uint32_t)uid;
    if (!job_is_admin(c, uid) && req->n_user_ids == 0) {
        f.uids = &self;
        f.nuids = 1;
    }
    for (struct job *j = c->jobs.head; j; j = j->next) {
        if (j->leader != j)
            continue; /* visit units through their leaders */
        size_t n = job_ncomponents(j), matched = 0;
        for (size_t i = 0; i < n; i++)
            matched += job_filter_matches(&f, job_component(j, i));
        char id[32];
        if (matched == n) {
            snprintf(id, sizeof(id), "%u", j->rec->job_id);
            if (add_result(p, id, act_or_list(c, req, id, uid)))
                return TS_ENOMEM;
            continue;
        }
        for (size_t i = 0; matched && i < n; i++) {
            struct job *comp = job_component(j, i);
            if (!job_filter_matches(&f, comp))
                continue;
            jobstate_display_id(comp->rec, id, sizeof(id));
            if (add_result(p, id, act_or_list(c, req, id, uid)))
                return TS_ENOMEM;
        }
    }
    return TS_OK;
}

void ctld_handle_job_action(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__JobActionRequest *a = msg->job_action;
    uid_t uid = rpc_request_uid(req);
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    struct pending_reply *p = calloc(1, sizeof(*p));
    if (!p) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    p->c = c;
    p->req = req;
    struct hashmap *nodes = NULL;
    const size_t counts[] = {a->n_user_ids, a->n_partitions, a->n_states,
                             a->n_names,    a->n_qos,        a->n_accounts};
    int err = filter_lists_bounded(counts, sizeof(counts) / sizeof(counts[0]));
    if (!err && !signal_request_ok(a))
        err = TS_EINVAL;
    if (!err)
        err = query_nodes(c, a->nodelist, &nodes);
    for (size_t i = 0; i < a->n_job_ids && !err; i++)
        err = add_result(p, a->job_ids[i], act_or_list(c, a, a->job_ids[i], uid));
    if (!err && a->n_job_ids == 0)
        err = act_on_matches(c, a, uid, nodes, p);
    hashmap_destroy(nodes);
    if (err) {
        rpc_respond_error(req, err, NULL);
        free_pending(p);
        return;
    }
    tessera__job_action_response__init(&p->action);
    p->action.results = p->results;
    p->action.n_results = p->nresults;
    tessera__response__init(&p->resp);
    p->resp.msg_case = TESSERA__RESPONSE__MSG_JOB_ACTION;
    p->resp.job_action = &p->action;
    reply_after_commit(c, p);
}

void ctld_handle_job_update(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const Tessera__JobUpdateRequest *u = msg->job_update;
    if (!u->changes || !u->job_id || !*u->job_id) {
        rpc_respond_error(req, TS_EINVAL, NULL);
        return;
    }
    if (ctld_refuse_change(c, req, CTLD_CHANGE_OTHER))
        return;
    char why[256] = "";
    int err = job_update(c, u, rpc_request_uid(req), why, sizeof(why));
    if (err) {
        rpc_respond_error(req, err, why[0] ? why : NULL);
        return;
    }
    struct pending_reply *p = calloc(1, sizeof(*p));
    if (!p) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return;
    }
    p->c = c;
    p->req = req;
    tessera__job_action_response__init(&p->action);
    tessera__response__init(&p->resp);
    p->resp.msg_case = TESSERA__RESPONSE__MSG_JOB_UPDATE;
    p->resp.job_update = &p->action;
    reply_after_commit(c, p);
}

/* ------------------------------------------------------------------------------------ */
/* partitions */

static int wanted(const Tessera__PartitionQueryRequest *q, const char *name)
{
    if (q->n_names == 0)
        return 1;
    for (size_t i = 0; i < q->n_names; i++)
        if (!strcmp(q->names[i], name))
            return 1;
    return 0;
}

void ctld_handle_partition_query(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const struct conf *conf = c->conf;
    const Tessera__PartitionQueryRequest *q = msg->partition_query;
    Tessera__PartitionInfo *infos = calloc(conf->npartitions + 1, sizeof(*infos));
    Tessera__PartitionInfo **ptrs = calloc(conf->npartitions + 1, sizeof(*ptrs));
    size_t n = 0;
    for (size_t i = 0; infos && ptrs && i < conf->npartitions; i++) {
        const struct conf_partition *pt = &conf->partitions[i];
        if (!wanted(q, pt->name))
            continue;
        Tessera__PartitionInfo *pi = &infos[n];
        tessera__partition_info__init(pi);
        pi->name = pt->name;
        pi->is_default = pt->is_default;
        pi->nodes = pt->nodes ? pt->nodes : (char *)"";
        pi->total_nodes = (uint32_t)pt->nnodes;
        for (size_t k = 0; k < pt->nnodes; k++)
            pi->total_cpus += conf->nodes[pt->node_index[k]].cpus;
        pi->max_time = pt->max_time;
        pi->default_time = pt->default_time;
        pi->max_nodes = pt->max_nodes;
        pi->min_nodes = pt->min_nodes;
        pi->priority_tier = pt->priority_tier;
        pi->state = (char *)conf_partition_state_name(pt->state);
        ptrs[n++] = pi;
    }
    if (!infos || !ptrs) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
    } else if (q->n_names && n == 0) {
        rpc_respond_error(req, TS_EINVALID_PARTITION, NULL);
    } else {
        Tessera__PartitionQueryResponse pq = TESSERA__PARTITION_QUERY_RESPONSE__INIT;
        pq.partitions = ptrs;
        pq.n_partitions = n;
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.msg_case = TESSERA__RESPONSE__MSG_PARTITION_QUERY;
        resp.partition_query = &pq;
        rpc_respond(req, &resp);
    }
    free(infos);
    free(ptrs);
}
