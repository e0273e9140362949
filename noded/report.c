/* End reports to the controller: a job's (its batch script, or all its processes after a
 * terminate) or a step's on this node, each kept until the controller acknowledges it.
 *
 * Only a success answer acknowledges. An error answer (a controller that cannot store
 * the end now, say) keeps the report, which is sent again after a back-off of 1 s doubling
 * to 30 s, with one warning per report; a broken line resends everything once the daemon
 * has registered again (noded/link.c).
 *
 * Each report is also a file of the daemon's state folder (noded/reportfile.h) from its
 * creation to its acknowledgement, so a daemon killed in between sends it after its
 * restart: the files are read back at start-up, in their order.
 */
#include "noded/noded.h"
#include "noded/reportfile.h"
#include "noded/stepstatus.h"

#include "common/net/loop.h"
#include "common/rpc/rpc_peer.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000

static uint64_t seq_of(const struct nd_report *r)
{
    return r->is_step ? r->step.seq : r->msg.seq;
}

/* The strings a report owns: its message's node name, why a batch script could not
 * start, and, with usage, its copy. */
static void report_free(struct nd_report *r)
{
    if (!r)
        return;
    free(r->is_step ? r->step.node : r->msg.node);
    if (!r->is_step && r->msg.launch_failure != protobuf_c_empty_string)
        free(r->msg.launch_failure);
    if (r->usage.max_rss_node != protobuf_c_empty_string)
        free(r->usage.max_rss_node);
    free(r);
}

static void unlink_report(struct noded *nd, const struct nd_report *target)
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
        return;
    }
}

/* ------------------------------------------------------------------------------------ */
/* sending */

struct report_call {
    struct noded *nd;
    struct nd_report *report;
};

static void retry_timer_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct noded *nd = arg;
    nd->report_timer = NULL;
    reports_send(nd);
}

/* The retry timer at the earliest report waiting out a back-off. */
static void arm_retry(struct noded *nd)
{
    uint64_t first = UINT64_MAX, now = loop_now_ms(nd->loop);
    for (const struct nd_report *r = nd->reports; r; r = r->next)
        if (!r->in_flight && r->retry_at > now && r->retry_at < first)
            first = r->retry_at;
    loop_timer_cancel(nd->loop, nd->report_timer);
    nd->report_timer = NULL;
    if (first != UINT64_MAX)
        nd->report_timer = loop_timer_add(nd->loop, first - now, 0, retry_timer_fired, nd);
}

/* "job 93" or "step 93.2", for logs. */
static const char *report_what(const struct nd_report *r, char *buf, size_t len)
{
    struct nd_step_id id = {.job_id = r->step.job_id, .step_job_id = r->step.step_job_id,
                            .step_id = r->step.step_id};
    if (r->is_step)
        snprintf(buf, len, "step %u.%u", nd_step_shown_id(&id), id.step_id);
    else
        snprintf(buf, len, "job %u", r->msg.job_id);
    return buf;
}

/* The controller refused the report: keep it, and try again later (one warning). */
static void refused(struct noded *nd, struct nd_report *r, const Tessera__Error *error)
{
    if (!r->warned) {
        char what[48];
        log_warn("%s: the controller refused its end report (%s); sending it again until "
                 "accepted", report_what(r, what, sizeof(what)),
                 error->text ? error->text : ts_strerror((int)error->code));
    }
    r->warned = 1;
    r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : BACKOFF_FIRST_MS;
    if (r->backoff_ms > BACKOFF_MAX_MS)
        r->backoff_ms = BACKOFF_MAX_MS;
    r->retry_at = loop_now_ms(nd->loop) + r->backoff_ms;
    arm_retry(nd);
}

static void acknowledged(struct noded *nd, struct nd_report *r)
{
    char what[48];
    if (r->warned)
        log_info("%s: end report accepted", report_what(r, what, sizeof(what)));
    else
        log_debug("%s: end acknowledged", report_what(r, what, sizeof(what)));
    if (r->persisted) {
        reportfile_remove(nd->state_fd, seq_of(r));
        nd->reports_persisted--;
    }
    unlink_report(nd, r);
    report_free(r);
}

static void report_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct report_call *rc = arg;
    struct noded *nd = rc->nd;
    struct nd_report *r = rc->report;
    free(rc);
    if (err == TS_ESHUTDOWN)
        return;
    r->in_flight = 0;
    if (err)
        link_lost(nd, err); /* registers again, then sends everything again */
    else if (resp->error)
        refused(nd, r, resp->error);
    else
        acknowledged(nd, r);
}

void reports_send(struct noded *nd)
{
    uint64_t now = loop_now_ms(nd->loop);
    for (struct nd_report *r = nd->reports; r && nd->registered; r = r->next) {
        if (r->in_flight || r->retry_at > now)
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

void reports_line_lost(struct noded *nd)
{
    for (struct nd_report *r = nd->reports; r; r = r->next)
        r->in_flight = 0;
}

/* ------------------------------------------------------------------------------------ */
/* making them */

/* Kept on disk until acknowledged, while there are not too many files already. */
static void persist(struct noded *nd, struct nd_report *r)
{
    if (nd->reports_persisted >= REPORTFILE_MAX_FILES) {
        if (!nd->reports_cap_warned)
            log_warn("%d end reports wait for the controller: further ones are kept in "
                     "memory only", REPORTFILE_MAX_FILES);
        nd->reports_cap_warned = 1;
        return;
    }
    int err = reportfile_write(nd->state_fd, seq_of(r), r->is_step ? NULL : &r->msg,
                               r->is_step ? &r->step : NULL);
    if (err) {
        char what[48];
        log_error("%s: cannot keep its end report on disk: %s",
                  report_what(r, what, sizeof(what)), ts_strerror(err));
        return;
    }
    r->persisted = 1;
    nd->reports_persisted++;
}

static void queue(struct noded *nd, struct nd_report *r)
{
    if (nd->reports_tail)
        nd->reports_tail->next = r;
    else
        nd->reports = r;
    nd->reports_tail = r;
    reports_send(nd);
}

/* A report with this node's name in the message and in its usage (u NULL: none). */
static struct nd_report *report_new(struct noded *nd, int is_step,
                                    const struct stepstatus_usage *u)
{
    struct nd_report *r = calloc(1, sizeof(*r));
    char *node = r ? strdup(nd->name) : NULL;
    if (!node) {
        free(r);
        return NULL;
    }
    tessera__job_complete_request__init(&r->msg);
    tessera__step_complete_request__init(&r->step);
    r->is_step = is_step;
    if (is_step)
        r->step.node = node;
    else
        r->msg.node = node;
    if (u) {
        tessera__acct_usage__init(&r->usage);
        r->usage.user_usec = u->user_usec;
        r->usage.sys_usec = u->sys_usec;
        r->usage.max_rss_kb = u->max_rss_kb;
        r->usage.max_rss_task = u->max_rss_task;
        r->usage.oom_kills = u->oom_kills;
        if (!(r->usage.max_rss_node = strdup(nd->name))) {
            report_free(r);
            return NULL;
        }
        if (is_step)
            r->step.usage = &r->usage;
        else
            r->msg.usage = &r->usage;
    }
    return r;
}

/* A job end (batch: the script's, with its usage and why it could not start), kept on
 * disk and queued for the controller. */
static void report_end(struct noded *nd, uint32_t job_id, int status, int batch,
                       const struct stepstatus_usage *usage, const char *why)
{
    struct nd_report *r = report_new(nd, 0, batch ? usage : NULL);
    if (!r || (why && *why && !(r->msg.launch_failure = strdup(why)))) {
        report_free(r);
        log_error("job %u: out of memory; its end cannot be reported", job_id);
        return;
    }
    r->msg.job_id = job_id;
    r->msg.status = status;
    r->msg.batch = batch;
    r->msg.end_time = (int64_t)time(NULL);
    r->msg.seq = ++nd->report_seq;
    persist(nd, r);
    queue(nd, r);
}

void report_job_end(struct noded *nd, uint32_t job_id, int status, int batch,
                    const struct stepstatus_usage *usage)
{
    if (batch)
        report_batch_end(nd, job_id, status, usage, NULL);
    else
        report_end(nd, job_id, status, 0, NULL, NULL);
}

void report_batch_end(struct noded *nd, uint32_t job_id, int status,
                      const struct stepstatus_usage *usage, const char *why)
{
    report_end(nd, job_id, status, 1, usage, why);
}

void report_step_end(struct noded *nd, const struct nd_step_id *id, int status,
                     const struct stepstatus_usage *usage)
{
    struct nd_report *r = report_new(nd, 1, usage);
    if (!r) {
        log_error("step %u.%u: out of memory; its end cannot be reported",
                  nd_step_shown_id(id), id->step_id);
        return;
    }
    r->step.job_id = id->job_id;
    r->step.step_job_id = id->step_job_id;
    r->step.step_id = id->step_id;
    r->step.status = status;
    r->step.end_time = (int64_t)time(NULL);
    r->step.seq = ++nd->report_seq;
    persist(nd, r);
    queue(nd, r);
}

/* ------------------------------------------------------------------------------------ */
/* start-up and shutdown */

static void usage_of(const Tessera__AcctUsage *a, struct stepstatus_usage *u)
{
    *u = (struct stepstatus_usage){.user_usec = a->user_usec, .sys_usec = a->sys_usec,
                                   .max_rss_kb = a->max_rss_kb, .max_rss_task = a->max_rss_task,
                                   .oom_kills = a->oom_kills};
}

/* A report as its file kept it (the same number, end time and contents). */
static struct nd_report *report_from_file(struct noded *nd, const struct reportfile *f)
{
    struct stepstatus_usage u;
    const Tessera__AcctUsage *a = f->job ? f->job->usage : f->step->usage;
    if (a)
        usage_of(a, &u);
    struct nd_report *r = report_new(nd, f->step != NULL, a ? &u : NULL);
    if (!r)
        return NULL;
    if (f->job) {
        r->msg.job_id = f->job->job_id;
        r->msg.status = f->job->status;
        r->msg.batch = f->job->batch;
        r->msg.end_time = f->job->end_time;
        r->msg.seq = f->job->seq;
        if (f->job->launch_failure && *f->job->launch_failure &&
            !(r->msg.launch_failure = strdup(f->job->launch_failure))) {
            report_free(r);
            return NULL;
        }
        if (!r->msg.batch)
            r->msg.usage = NULL;
    } else {
        r->step.job_id = f->step->job_id;
        r->step.step_job_id = f->step->step_job_id;
        r->step.step_id = f->step->step_id;
        r->step.status = f->step->status;
        r->step.end_time = f->step->end_time;
        r->step.seq = f->step->seq;
    }
    r->persisted = 1;
    return r;
}

void reports_load(struct noded *nd)
{
    uint64_t *seqs = NULL;
    size_t n = reportfile_list(nd->state_fd, REPORTFILE_MAX_FILES, &seqs);
    for (size_t i = 0; i < n; i++) {
        struct reportfile f;
        struct nd_report *r = NULL;
        if (reportfile_read(nd->state_fd, seqs[i], &f) == TS_OK &&
            (f.job ? f.job->seq : f.step->seq) == seqs[i])
            r = report_from_file(nd, &f);
        reportfile_clear(&f);
        if (!r) {
            log_warn("state: report.%llu is not a usable end report; dropped",
                     (unsigned long long)seqs[i]);
            reportfile_remove(nd->state_fd, seqs[i]);
            continue;
        }
        nd->reports_persisted++;
        if (seqs[i] > nd->report_seq)
            nd->report_seq = seqs[i];
        queue(nd, r);
    }
    if (n)
        log_info("%zu end report%s of an earlier life to send", n, n == 1 ? "" : "s");
    free(seqs);
}

void reports_free(struct noded *nd)
{
    loop_timer_cancel(nd->loop, nd->report_timer);
    nd->report_timer = NULL;
    while (nd->reports) { /* their files stay: the next start sends them */
        struct nd_report *r = nd->reports;
        nd->reports = r->next;
        report_free(r);
    }
    nd->reports_tail = NULL;
}
