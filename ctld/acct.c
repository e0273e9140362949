/* Accounting records: written with the changes they describe, purged after
 * AccountingRetention months.
 *
 * A component's record is written when it starts, when it ends (a pending job that is
 * cancelled too) and when its run ends in a requeue; its acct_by_end key moves with it
 * (end 0 while it runs). The previous key is deleted when this controller knows it (it
 * wrote it since it started); a key left behind by a restart is recognised by readers
 * (the record's end differs) and dropped by the purge. */
#include "ctld/acct.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/step.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/acct_record.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPAN_KEY "acct_max_span"
#define PURGE_INTERVAL 3600 /* seconds between retention passes */
#define PURGE_BATCH 20000   /* deletions queued per pass at most: the loop keeps serving and
                             * the live state's commits stay small */

int acct_init(struct ctld *c, char *errbuf, size_t errlen)
{
    void *val = NULL;
    size_t len = 0;
    int err = store_get(c->store, STORE_DB_COUNTERS, MAX_SPAN_KEY, strlen(MAX_SPAN_KEY), &val,
                        &len);
    c->acct_max_span = 0;
    c->acct_next_purge = 0;
    if (err == TS_ENOENT)
        return TS_OK;
    if (err)
        return err;
    Tessera__Counter *ctr = tessera__counter__unpack(NULL, len, val);
    free(val);
    if (!ctr) {
        snprintf(errbuf, errlen, "state: accounting span counter is corrupt");
        return TS_ESTORE_CORRUPT;
    }
    c->acct_max_span = (int64_t)ctr->value;
    tessera__counter__free_unpacked(ctr, NULL);
    return TS_OK;
}

static void note_span(struct ctld *c, const Tessera__AcctJob *a)
{
    if (!a->end_time || !a->eligible_time || a->end_time - a->eligible_time <= c->acct_max_span)
        return;
    c->acct_max_span = a->end_time - a->eligible_time;
    Tessera__Counter ctr = TESSERA__COUNTER__INIT;
    ctr.value = (uint64_t)c->acct_max_span;
    uint8_t buf[16];
    size_t len = tessera__counter__pack(&ctr, buf);
    store_put(c->store, STORE_DB_COUNTERS, MAX_SPAN_KEY, strlen(MAX_SPAN_KEY), buf, len);
}

static int put_step(struct ctld *c, const Tessera__AcctStep *s)
{
    size_t len;
    uint8_t *buf = acct_step_pack(s, &len);
    if (!buf)
        return TS_ENOMEM;
    uint8_t key[ACCT_STEP_KEY_LEN];
    acct_step_key(key, s->job_id, s->step_id);
    int err = store_put(c->store, STORE_DB_ACCT_STEPS, key, sizeof(key), buf, len);
    free(buf);
    return err;
}

/* The first write for j since this controller started: learn the stored record's end, so
 * that its index key moves too (a job running across a restart has its end-0 key). */
static void learn_stored(struct ctld *c, struct job *j)
{
    uint8_t key[ACCT_JOB_KEY_LEN];
    acct_job_key(key, j->rec->job_id);
    void *val = NULL;
    size_t len = 0;
    if (store_get(c->store, STORE_DB_ACCT_JOBS, key, sizeof(key), &val, &len) != TS_OK)
        return;
    Tessera__AcctJob *old = tessera__acct_job__unpack(NULL, len, val);
    free(val);
    if (!old)
        return;
    j->acct_state = (int)old->state + 1;
    j->acct_start = old->start_time;
    j->acct_end = old->end_time;
    tessera__acct_job__free_unpacked(old, NULL);
}

/* Queue a's record and move its index key. */
static int put_job(struct ctld *c, struct job *j, const Tessera__AcctJob *a)
{
    if (!j->acct_state)
        learn_stored(c, j);
    size_t len;
    uint8_t *buf = acct_job_pack(a, &len);
    if (!buf)
        return TS_ENOMEM;
    uint8_t key[ACCT_JOB_KEY_LEN], ekey[ACCT_END_KEY_LEN];
    acct_job_key(key, a->job_id);
    int err = store_put(c->store, STORE_DB_ACCT_JOBS, key, sizeof(key), buf, len);
    free(buf);
    if (!err && j->acct_state && j->acct_end != a->end_time) {
        acct_end_key(ekey, j->acct_end, a->job_id);
        err = store_del(c->store, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey));
    }
    if (!err && !(j->acct_state && j->acct_end == a->end_time)) {
        acct_end_key(ekey, a->end_time, a->job_id);
        err = store_put(c->store, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey), "", 0);
    }
    if (!err) {
        j->acct_state = (int)a->state + 1;
        j->acct_start = a->start_time;
        j->acct_end = a->end_time;
        note_span(c, a);
    }
    return err;
}

static int is_batch_leader(const struct job *j)
{
    const Tessera__JobRecord *r = j->rec;
    return j->leader == j && (r->batch || r->desc->script) && r->start_time;
}

static void write_job(struct ctld *c, struct job *j, Tessera__AcctJob *a)
{
    int err = put_job(c, j, a);
    if (!err && is_batch_leader(j)) {
        Tessera__AcctStep s = TESSERA__ACCT_STEP__INIT;
        acct_batch_step_from_record(&s, j->rec);
        err = put_step(c, &s);
    }
    if (err)
        log_error("job %u: accounting record not written: %s", j->rec->job_id,
                  ts_strerror(err));
}

void acct_job_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind != JOB_CHANGE_SAVED || !ch->stored)
        return; /* only a record in the batch gets its accounting record there */
    struct job *j = ch->job;
    const Tessera__JobRecord *r = j->rec;
    if (r->state == TESSERA__JOB_STATE__JOB_PENDING)
        return; /* pending jobs are answered from memory */
    Tessera__AcctJob a = TESSERA__ACCT_JOB__INIT;
    acct_job_from_record(&a, r, c->conf->cluster_name);
    if (j->acct_state == (int)a.state + 1 && j->acct_start == a.start_time &&
        j->acct_end == a.end_time)
        return; /* the record written last still holds: saves in between change nothing
                 * it shows that matters (the next start, end or requeue rewrites it) */
    write_job(c, j, &a);
}

static int del_step(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)val;
    (void)vlen;
    return store_del(arg, STORE_DB_ACCT_STEPS, key, klen);
}

/* Drop the stored steps of job_id (a requeued job's previous run: records keep the last
 * run only, and the next run numbers its steps on). */
static int drop_steps(struct ctld *c, uint32_t job_id)
{
    struct store_reader *rd;
    int err = store_reader_open(c->store, &rd);
    if (err)
        return err;
    uint8_t from[ACCT_STEP_KEY_LEN], to[ACCT_STEP_KEY_LEN];
    acct_step_key(from, job_id, 0);
    acct_step_key(to, job_id, UINT32_MAX);
    err = store_reader_range(rd, STORE_DB_ACCT_STEPS, from, sizeof(from), to, sizeof(to),
                             del_step, c->store);
    store_reader_close(rd);
    return err;
}

void acct_job_requeued(struct ctld *c, struct job *j, time_t now)
{
    const Tessera__JobRecord *r = j->rec;
    if (!r->start_time)
        return; /* it never ran: there is no run to record */
    Tessera__AcctJob a = TESSERA__ACCT_JOB__INIT;
    acct_job_from_record(&a, r, c->conf->cluster_name);
    a.state = TESSERA__JOB_STATE__JOB_REQUEUED;
    a.end_time = now;
    int err = drop_steps(c, r->job_id);
    if (!err)
        err = put_job(c, j, &a);
    if (!err && is_batch_leader(j)) {
        Tessera__AcctStep s = TESSERA__ACCT_STEP__INIT;
        acct_batch_step_from_record(&s, r);
        s.state = TESSERA__JOB_STATE__JOB_REQUEUED;
        s.end_time = now;
        err = put_step(c, &s);
    }
    if (err)
        log_error("job %u: accounting record of the requeue not written: %s", r->job_id,
                  ts_strerror(err));
}

void acct_step_saved(struct ctld *c, const struct step *s)
{
    Tessera__AcctStep a = TESSERA__ACCT_STEP__INIT;
    acct_step_from_record(&a, s->rec);
    int err = put_step(c, &a);
    if (err)
        log_error("step %u.%u: accounting record not written: %s", s->rec->job_id,
                  s->rec->step_id, ts_strerror(err));
}

/* ------------------------------------------------------------------------------------ */
/* retention */

/* now less the given number of calendar months, in local time */
static time_t months_ago(time_t now, unsigned months)
{
    struct tm tm;
    localtime_r(&now, &tm);
    tm.tm_mon -= (int)months;
    tm.tm_isdst = -1;
    return mktime(&tm);
}

struct purge {
    struct ctld *c;
    struct store_reader *rd;
    size_t done;        /* records purged */
    size_t ops;         /* deletions queued */
};

static int purge_steps(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)val;
    (void)vlen;
    struct purge *p = arg;
    p->ops++;
    return store_del(p->c->store, STORE_DB_ACCT_STEPS, key, klen);
}

/* One index key (end, id) older than the cutoff: the record goes with its steps when the
 * key is the record's; a stale key just goes. */
static int purge_one(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    (void)val;
    (void)vlen;
    struct purge *p = arg;
    uint32_t id = acct_end_key_job(key, klen);
    int64_t end = acct_end_key_time(key, klen);
    uint8_t jkey[ACCT_JOB_KEY_LEN];
    acct_job_key(jkey, id);
    const void *rec;
    size_t rlen;
    int err = TS_OK;
    if (store_reader_get(p->rd, STORE_DB_ACCT_JOBS, jkey, sizeof(jkey), &rec, &rlen) == TS_OK) {
        Tessera__AcctJob *a = tessera__acct_job__unpack(NULL, rlen, rec);
        int current = a && a->end_time == end;
        if (a)
            tessera__acct_job__free_unpacked(a, NULL);
        if (current && job_find(&p->c->jobs, id))
            return 0; /* still in memory: left alone, key and all */
        if (current) {
            uint8_t from[ACCT_STEP_KEY_LEN], to[ACCT_STEP_KEY_LEN];
            acct_step_key(from, id, 0);
            acct_step_key(to, id, UINT32_MAX);
            err = store_reader_range(p->rd, STORE_DB_ACCT_STEPS, from, sizeof(from), to,
                                     sizeof(to), purge_steps, p);
            if (!err)
                err = store_del(p->c->store, STORE_DB_ACCT_JOBS, jkey, sizeof(jkey));
            p->done++;
            p->ops++;
        }
    }
    if (!err)
        err = store_del(p->c->store, STORE_DB_ACCT_BY_END, key, klen);
    if (err)
        return err;
    return ++p->ops >= PURGE_BATCH ? -1 : 0; /* -1: enough for this pass */
}

void acct_housekeeping(struct ctld *c, time_t now)
{
    unsigned months = c->conf->accounting_retention;
    if (!months || now < c->acct_next_purge)
        return;
    time_t cutoff = months_ago(now, months);
    struct purge p = {.c = c};
    uint8_t from[ACCT_END_KEY_LEN], to[ACCT_END_KEY_LEN];
    acct_end_key(from, 1, 0); /* end 0 is "still running": never purged */
    acct_end_key(to, (int64_t)cutoff - 1, UINT32_MAX);
    int err = store_reader_open(c->store, &p.rd);
    if (!err) {
        err = store_reader_range(p.rd, STORE_DB_ACCT_BY_END, from, sizeof(from), to, sizeof(to),
                                 purge_one, &p);
        store_reader_close(p.rd);
    }
    if (err > 0)
        log_error("accounting: purge failed: %s", ts_strerror(err));
    else if (p.done)
        log_info("accounting: %zu records older than %u months purged", p.done, months);
    /* a full pass means there is more: come back soon */
    c->acct_next_purge = now + (p.ops >= PURGE_BATCH ? 1 : PURGE_INTERVAL);
}
