/* sacct's question: -j resolution, filters, the time window and the plan. */
#include "ctld/acct_query.h"

#include "common/job/jobid.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

/* "93+1.batch" -> 93, offset 1: the step part is left to the command. */
static int parse_sel(const char *text, struct acct_sel *out)
{
    char buf[64];
    size_t len = strcspn(text, ".");
    if (len == 0 || len >= sizeof(buf) || (text[len] == '.' && !text[len + 1]))
        return TS_EINVALID_JOB_ID;
    memcpy(buf, text, len);
    buf[len] = '\0';
    struct jobid id;
    int err = jobid_parse(buf, &id);
    if (err)
        return err;
    out->id = id.id;
    out->has_offset = id.has_offset;
    out->offset = id.offset;
    return TS_OK;
}

static int set_users(struct acct_query *q, const Tessera__AcctQueryRequest *req, uid_t caller,
                     int admin)
{
    q->caller_uid = (uint32_t)caller;
    if (!admin) {
        /* ordinary users see their own jobs, whatever they ask */
        q->uids = &q->caller_uid;
        q->nuids = 1;
    } else if (req->n_user_ids) {
        q->uids = req->user_ids;
        q->nuids = req->n_user_ids;
    } else if (!req->all_users) {
        q->uids = &q->caller_uid;
        q->nuids = 1;
    }
    return TS_OK;
}

int acct_query_init(struct acct_query *q, const Tessera__AcctQueryRequest *req, uid_t caller,
                    int admin, time_t now)
{
    memset(q, 0, sizeof(*q));
    q->req = req;
    if (req->n_job_ids) {
        q->sels = calloc(req->n_job_ids, sizeof(*q->sels));
        if (!q->sels)
            return TS_ENOMEM;
        for (size_t i = 0; i < req->n_job_ids; i++) {
            int err = parse_sel(req->job_ids[i], &q->sels[i]);
            if (err) {
                acct_query_fini(q);
                return err;
            }
        }
        q->nsels = req->n_job_ids;
    }
    set_users(q, req, caller, admin);
    q->windowed = req->window_start > 0 || req->window_end > 0;
    q->start = req->window_start > 0 ? req->window_start : 0;
    /* without -E the window ends now, this second included: a job eligible a moment ago
     * is in it */
    q->end = req->window_end > 0 ? req->window_end : (int64_t)now + 1;
    return TS_OK;
}

void acct_query_fini(struct acct_query *q)
{
    free(q->sels);
    q->sels = NULL;
    q->nsels = 0;
}

/* ------------------------------------------------------------------------------------ */
/* -j */

struct idvec {
    uint32_t *v;
    size_t n, cap;
};

static int idvec_push(struct idvec *iv, uint32_t id)
{
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? iv->cap * 2 : 16;
        uint32_t *grown = realloc(iv->v, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        iv->v = grown;
        iv->cap = cap;
    }
    iv->v[iv->n++] = id;
    return TS_OK;
}

/* Every component of het job leader (consecutive ids from the leader's). */
static int push_components(struct idvec *iv, uint32_t leader, acct_lookup_fn lookup, void *arg)
{
    uint32_t het, off;
    int err = TS_OK;
    for (uint32_t id = leader, k = 0; !err && id >= leader && lookup(arg, id, &het, &off) &&
                                      het == leader && off == k;
         id++, k++)
        err = idvec_push(iv, id);
    return err;
}

static int select_one(const struct acct_query *q, const struct acct_sel *s, acct_lookup_fn lookup,
                      void *arg, struct idvec *iv)
{
    uint32_t whole = q->req->whole_hetjob; /* 0 default, 1 yes, 2 no */
    uint32_t het, off;
    if (!lookup(arg, s->id, &het, &off))
        return TS_OK;
    if (s->has_offset) {
        /* "N+K": component K of het job N; nothing for a plain job or a non-leader */
        uint32_t target = s->id + s->offset, th, to;
        if (het != s->id || target < s->id || !lookup(arg, target, &th, &to) || th != s->id ||
            to != s->offset)
            return TS_OK;
        return whole == 1 ? push_components(iv, s->id, lookup, arg) : idvec_push(iv, target);
    }
    if (!het)
        return idvec_push(iv, s->id); /* a plain job */
    if (het == s->id) /* the leader's id: the whole job unless --whole-hetjob=no */
        return whole == 2 ? idvec_push(iv, s->id) : push_components(iv, s->id, lookup, arg);
    /* a component's own id: that component unless --whole-hetjob=yes */
    return whole == 1 ? push_components(iv, het, lookup, arg) : idvec_push(iv, s->id);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int acct_query_select_ids(const struct acct_query *q, acct_lookup_fn lookup, void *arg,
                          uint32_t **ids, size_t *n)
{
    struct idvec iv = {0};
    int err = TS_OK;
    for (size_t i = 0; i < q->nsels && !err; i++)
        err = select_one(q, &q->sels[i], lookup, arg, &iv);
    if (err) {
        free(iv.v);
        return err;
    }
    if (iv.n)
        qsort(iv.v, iv.n, sizeof(*iv.v), cmp_u32);
    size_t w = 0;
    for (size_t r = 0; r < iv.n; r++)
        if (w == 0 || iv.v[w - 1] != iv.v[r])
            iv.v[w++] = iv.v[r];
    *ids = iv.v;
    *n = w;
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* filters */

static int has_u32(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static int has_str(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

static int is_ended_state(Tessera__JobState s)
{
    return s != TESSERA__JOB_STATE__JOB_PENDING && s != TESSERA__JOB_STATE__JOB_RUNNING &&
           s != TESSERA__JOB_STATE__JOB_SUSPENDED && s != TESSERA__JOB_STATE__JOB_COMPLETING;
}

/* Was j in state s at some time in [start, end]? */
static int in_state_during(const struct acct_query *q, const Tessera__AcctJob *j,
                           Tessera__JobState s)
{
    switch (s) {
    case TESSERA__JOB_STATE__JOB_PENDING: /* not started, nor ended unstarted, before start */
        return j->eligible_time && j->eligible_time < q->end &&
               (j->start_time == 0 || j->start_time > q->start) &&
               (j->start_time || !j->end_time || j->end_time >= q->start);
    case TESSERA__JOB_STATE__JOB_RUNNING:
    case TESSERA__JOB_STATE__JOB_SUSPENDED:
        return j->start_time && j->start_time < q->end &&
               (j->end_time == 0 || j->end_time >= q->start) &&
               (s == TESSERA__JOB_STATE__JOB_RUNNING || j->suspended_secs ||
                j->state == TESSERA__JOB_STATE__JOB_SUSPENDED);
    default:
        return j->state == s && j->end_time && j->end_time >= q->start && j->end_time <= q->end;
    }
}

static int in_window(const struct acct_query *q, const Tessera__AcctJob *j)
{
    const Tessera__AcctQueryRequest *r = q->req;
    if (r->n_states) {
        for (size_t i = 0; i < r->n_states; i++) {
            int hit = q->windowed ? in_state_during(q, j, r->states[i]) : j->state == r->states[i];
            if (hit)
                return 1;
        }
        return 0;
    }
    if (!q->windowed)
        return 1;
    return j->eligible_time && j->eligible_time < q->end &&
           (j->end_time == 0 || j->end_time >= q->start);
}

int acct_query_matches(const struct acct_query *q, const Tessera__AcctJob *j)
{
    const Tessera__AcctQueryRequest *r = q->req;
    if (q->uids && !has_u32(q->uids, q->nuids, j->user_id))
        return 0;
    if (r->n_group_ids && !has_u32(r->group_ids, r->n_group_ids, j->group_id))
        return 0;
    if (r->n_accounts && !has_str(r->accounts, r->n_accounts, j->account))
        return 0;
    if (r->n_partitions && !has_str(r->partitions, r->n_partitions, j->partition))
        return 0;
    if (r->n_names && !has_str(r->names, r->n_names, j->name))
        return 0;
    return in_window(q, j);
}

/* ------------------------------------------------------------------------------------ */
/* the plan */

void acct_query_plan(const struct acct_query *q, int64_t max_span, struct acct_plan *out)
{
    memset(out, 0, sizeof(*out));
    if (q->nsels) {
        out->kind = ACCT_PLAN_IDS;
        return;
    }
    if (!q->windowed || q->start <= 0) {
        out->kind = ACCT_PLAN_SCAN;
        return;
    }
    /* Every rule of the window wants end 0 or end >= start. Without -s (or with a state
     * that is not an ending) it also wants eligible < end, so end <= end + max_span; with
     * ending states only, end itself is in [start, end]. */
    int endings_only = q->req->n_states > 0;
    for (size_t i = 0; i < q->req->n_states; i++)
        if (!is_ended_state(q->req->states[i]))
            endings_only = 0;
    out->kind = ACCT_PLAN_END_RANGE;
    out->end_from = q->start;
    int64_t span = max_span > 0 ? max_span : 0;
    out->end_to = endings_only ? q->end : q->end > INT64_MAX - span ? INT64_MAX : q->end + span;
    out->running_too = !endings_only;
}
