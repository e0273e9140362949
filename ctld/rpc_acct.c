/* sacct's query: the plan picks the index (ctld/acct_query.h), records come from the
 * accounting databases through one read snapshot, and live components (pending ones have
 * no record; running ones change) from memory. Answers are pages in job id order. */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/rpc.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/acct_query.h"
#include "ctld/acct_record.h"
#include "ctld/store.h"

#include <stdlib.h>
#include <string.h>

struct answer {
    struct ctld *c;
    struct acct_query q;
    struct store_reader *rd;
    uint32_t *ids;                    /* matching job ids */
    size_t nids, cap;
    int err;
};

static int push_id(struct answer *a, uint32_t id)
{
    if (a->nids == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        uint32_t *grown = realloc(a->ids, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        a->ids = grown;
        a->cap = cap;
    }
    a->ids[a->nids++] = id;
    return TS_OK;
}

/* The stored record of id, unpacked (free it), NULL when there is none. */
static Tessera__AcctJob *stored(struct answer *a, uint32_t id)
{
    uint8_t key[ACCT_JOB_KEY_LEN];
    acct_job_key(key, id);
    const void *val;
    size_t len;
    if (store_reader_get(a->rd, STORE_DB_ACCT_JOBS, key, sizeof(key), &val, &len) != TS_OK)
        return NULL;
    Tessera__AcctJob *j = tessera__acct_job__unpack(NULL, len, val);
    if (!j)
        log_warn("accounting: record of job %u is corrupt; skipped", id);
    return j;
}

static int lookup(void *arg, uint32_t id, uint32_t *het, uint32_t *off)
{
    struct answer *a = arg;
    struct job *j = job_find(&a->c->jobs, id);
    if (j) {
        *het = j->rec->het_job_id;
        *off = j->rec->het_job_offset;
        return 1;
    }
    Tessera__AcctJob *r = stored(a, id);
    if (!r)
        return 0;
    *het = r->het_job_id;
    *off = r->het_job_offset;
    tessera__acct_job__free_unpacked(r, NULL);
    return 1;
}

/* A stored record that is not live: keep its id when it passes. want_end >= 0: it came
 * from the end index, whose key must still be the record's. */
static int consider_stored(struct answer *a, uint32_t id, int64_t want_end)
{
    if (id <= a->q.req->after_job_id || job_find(&a->c->jobs, id))
        return TS_OK; /* an earlier page's, or live: judged from memory */
    Tessera__AcctJob *r = stored(a, id);
    if (!r)
        return TS_OK;
    int keep = (want_end < 0 || r->end_time == want_end) && acct_query_matches(&a->q, r);
    tessera__acct_job__free_unpacked(r, NULL);
    return keep ? push_id(a, id) : TS_OK;
}

static int visit_end_key(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)val;
    (void)vlen;
    return consider_stored(arg, acct_end_key_job(key, klen), acct_end_key_time(key, klen));
}

static size_t page_size(const Tessera__AcctQueryRequest *q)
{
    return ctld_page_start(q->max_jobs).max_items;
}

/* The full scan walks ids in order: once it has a page and one more, the rest can wait
 * for the next page (-1 stops the walk). */
static int visit_job(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)val;
    (void)vlen;
    struct answer *a = arg;
    int err = klen == ACCT_JOB_KEY_LEN
                  ? consider_stored(a, (uint32_t)store_key_get_u64(key), -1)
                  : TS_OK;
    if (!err && a->nids > page_size(a->q.req))
        return -1;
    return err;
}

static int end_range(struct answer *a, int64_t from, int64_t to)
{
    uint8_t f[ACCT_END_KEY_LEN], t[ACCT_END_KEY_LEN];
    acct_end_key(f, from, 0);
    acct_end_key(t, to, UINT32_MAX);
    return store_reader_range(a->rd, STORE_DB_ACCT_BY_END, f, sizeof(f), t, sizeof(t),
                              visit_end_key, a);
}

static int live_jobs(struct answer *a)
{
    int err = TS_OK;
    for (struct job *j = a->c->jobs.head; j && !err; j = j->next) {
        if (j->rec->job_id <= a->q.req->after_job_id)
            continue;
        Tessera__AcctJob r = TESSERA__ACCT_JOB__INIT;
        acct_job_from_record(&r, j->rec, a->c->conf->cluster_name);
        if (acct_query_matches(&a->q, &r))
            err = push_id(a, j->rec->job_id);
    }
    return err;
}

static int by_ids(struct answer *a)
{
    uint32_t *ids = NULL;
    size_t n = 0;
    int err = acct_query_select_ids(&a->q, lookup, a, &ids, &n);
    for (size_t i = 0; i < n && !err; i++) {
        struct job *j = job_find(&a->c->jobs, ids[i]);
        if (j) {
            Tessera__AcctJob r = TESSERA__ACCT_JOB__INIT;
            acct_job_from_record(&r, j->rec, a->c->conf->cluster_name);
            if (acct_query_matches(&a->q, &r))
                err = push_id(a, ids[i]);
        } else {
            err = consider_stored(a, ids[i], -1);
        }
    }
    free(ids);
    return err;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Gather the matching ids, ascending and unique. */
static int gather(struct answer *a)
{
    struct acct_plan plan;
    acct_query_plan(&a->q, a->c->acct_max_span, &plan);
    int err;
    switch (plan.kind) {
    case ACCT_PLAN_IDS:
        err = by_ids(a);
        break;
    case ACCT_PLAN_END_RANGE:
        err = end_range(a, plan.end_from, plan.end_to);
        if (!err && plan.running_too && plan.end_from > 0)
            err = end_range(a, 0, 0);
        if (!err)
            err = live_jobs(a);
        break;
    default: {
        uint8_t from[ACCT_JOB_KEY_LEN];
        store_key_u64(from, (uint64_t)a->q.req->after_job_id + 1);
        err = store_reader_range(a->rd, STORE_DB_ACCT_JOBS, from, sizeof(from), NULL, 0,
                                 visit_job, a);
        if (err == -1) /* a page's worth and one more */
            err = TS_OK;
        if (!err)
            err = live_jobs(a);
        break;
    }
    }
    if (err)
        return err;
    if (a->nids)
        qsort(a->ids, a->nids, sizeof(*a->ids), cmp_u32);
    size_t w = 0;
    for (size_t r = 0; r < a->nids; r++)
        if (w == 0 || a->ids[w - 1] != a->ids[r])
            a->ids[w++] = a->ids[r];
    a->nids = w;
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the answer */

struct page {
    Tessera__AcctJob **jobs;          /* response order */
    size_t njobs;
    Tessera__AcctJob *live;           /* records built from memory (point into it) */
    size_t nlive;
    Tessera__AcctJob **unpacked;      /* stored ones, freed after the answer */
    size_t nunpacked;
    Tessera__AcctStep **steps;
    size_t nsteps, capsteps;
    size_t bytes;
    int full;                         /* the next job did not fit */
    uint32_t step_job;                /* whose steps add_steps is adding */
    int cut;                          /* its steps from cut_step on did not fit */
    uint32_t cut_step;
};

#define PAGE_CUT (-2) /* a visit's answer: the page is full */

/* The page's byte budget: the first record always fits. */
static int page_full(const struct page *p, size_t size)
{
    return p->njobs + p->nsteps > 0 && p->bytes + size > CTLD_PAGE_BYTES;
}

static int visit_step(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)key;
    (void)klen;
    struct page *p = arg;
    if (p->nsteps == p->capsteps) {
        size_t cap = p->capsteps ? p->capsteps * 2 : 64;
        Tessera__AcctStep **grown = realloc(p->steps, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        p->steps = grown;
        p->capsteps = cap;
    }
    Tessera__AcctStep *s = tessera__acct_step__unpack(NULL, vlen, val);
    if (!s)
        return TS_OK; /* a corrupt step record is left out */
    if (page_full(p, vlen)) {
        p->cut = 1;
        p->cut_step = s->step_id;
        tessera__acct_step__free_unpacked(s, NULL);
        return PAGE_CUT;
    }
    p->steps[p->nsteps++] = s;
    p->bytes += vlen;
    return TS_OK;
}

/* The steps of job id from step id from_step on, while the page has room. */
static int add_steps(struct answer *a, struct page *p, uint32_t id, uint32_t from_step)
{
    uint8_t from[ACCT_STEP_KEY_LEN], to[ACCT_STEP_KEY_LEN];
    acct_step_key(from, id, from_step);
    acct_step_key(to, id, UINT32_MAX);
    p->step_job = id;
    int err = store_reader_range(a->rd, STORE_DB_ACCT_STEPS, from, sizeof(from), to, sizeof(to),
                                 visit_step, p);
    return err == PAGE_CUT ? TS_OK : err;
}

static int add_job(struct answer *a, struct page *p, uint32_t id)
{
    struct job *j = job_find(&a->c->jobs, id);
    Tessera__AcctJob *r;
    if (j) {
        r = &p->live[p->nlive];
        tessera__acct_job__init(r);
        acct_job_from_record(r, j->rec, a->c->conf->cluster_name);
    } else if (!(r = stored(a, id))) {
        return TS_OK; /* gone since gather (cannot happen within one snapshot) */
    }
    size_t size = tessera__acct_job__get_packed_size(r);
    if (page_full(p, size)) {
        p->full = 1;
        if (!j)
            tessera__acct_job__free_unpacked(r, NULL);
        return TS_OK;
    }
    if (j)
        p->nlive++;
    else
        p->unpacked[p->nunpacked++] = r;
    p->jobs[p->njobs++] = r;
    p->bytes += size;
    return a->q.req->no_steps ? TS_OK : add_steps(a, p, id, 0);
}

static void page_free(struct page *p)
{
    for (size_t i = 0; i < p->nunpacked; i++)
        tessera__acct_job__free_unpacked(p->unpacked[i], NULL);
    for (size_t i = 0; i < p->nsteps; i++)
        tessera__acct_step__free_unpacked(p->steps[i], NULL);
    free(p->unpacked);
    free(p->live);
    free(p->jobs);
    free(p->steps);
}

/* One page: first what a cut left of a job's steps, then jobs after after_job_id with
 * their steps, while the page has room (docs/protocol.md, "Pages"). */
static void respond(struct rpc_request *req, struct answer *a)
{
    const Tessera__AcctQueryRequest *q = a->q.req;
    size_t first = 0;
    while (first < a->nids && a->ids[first] <= q->after_job_id)
        first++;
    size_t max = page_size(q);
    size_t n = a->nids - first < max ? a->nids - first : max;
    struct page p = {0};
    p.jobs = calloc(n + 1, sizeof(*p.jobs));
    p.live = calloc(n + 1, sizeof(*p.live));
    p.unpacked = calloc(n + 1, sizeof(*p.unpacked));
    int err = p.jobs && p.live && p.unpacked ? TS_OK : TS_ENOMEM;
    if (!err && q->resume_job_id && !q->no_steps)
        err = add_steps(a, &p, q->resume_job_id, q->resume_from_step);
    size_t i = 0;
    for (; i < n && !err && !p.cut && !p.full; i++)
        err = add_job(a, &p, a->ids[first + i]);
    if (p.full)
        i--; /* the job that did not fit comes first in the next page */
    if (err) {
        page_free(&p);
        rpc_respond_error(req, err, NULL);
        return;
    }
    Tessera__AcctQueryResponse ar = TESSERA__ACCT_QUERY_RESPONSE__INIT;
    ar.jobs = p.jobs;
    ar.n_jobs = p.njobs;
    ar.steps = p.steps;
    ar.n_steps = p.nsteps;
    ar.now = (int64_t)time(NULL);
    ar.cluster = a->c->conf->cluster_name;
    ar.more = p.cut || first + i < a->nids;
    if (p.cut) {
        ar.resume_job_id = p.step_job;
        ar.resume_from_step = p.cut_step;
    }
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_ACCT_QUERY;
    resp.acct_query = &ar;
    rpc_respond(req, &resp);
    page_free(&p);
}

void ctld_handle_acct_query(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct answer a = {.c = arg};
    uid_t uid = rpc_request_uid(req);
    time_t now = time(NULL);
    int err = acct_query_init(&a.q, msg->acct_query, uid, job_is_admin(a.c, uid), now);
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    err = store_reader_open(a.c->store, &a.rd);
    if (!err)
        err = gather(&a);
    if (err)
        rpc_respond_error(req, err, NULL);
    else
        respond(req, &a);
    store_reader_close(a.rd);
    acct_query_fini(&a.q);
    free(a.ids);
}
