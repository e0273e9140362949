/* sacct --json: Slurm 22.05's document (openapi v0.0.38), the keys Tessera keeps data
 * for, each job with its steps inside. Times are Unix seconds (0 unknown), elapsed times
 * seconds, time limits minutes (null when unlimited or the partition's), memory MB. */
#include "common/acctfmt_int.h"

#include "common/jobfmt.h"
#include "common/jobstate.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

/* An object under construction; a failed allocation marks it failed. */
struct obj {
    json_t *o;
    int failed;
};

static void set(struct obj *b, const char *key, json_t *value)
{
    if (!value || json_object_set_new(b->o, key, value) != 0)
        b->failed = 1;
}

static json_t *str(const char *s)
{
    return json_string(s ? s : "");
}

static json_t *finish(struct obj *b)
{
    if (b->failed) {
        json_decref(b->o);
        return NULL;
    }
    return b->o;
}

static json_t *cpu_usec(uint64_t usec)
{
    return json_pack("{s:I,s:I}", "seconds", (json_int_t)(usec / 1000000), "microseconds",
                     (json_int_t)(usec % 1000000));
}

/* {"status": "SUCCESS"|"FAILED"|"SIGNALED", "return_code": N[, "signal": {...}]} */
static json_t *exit_code(int32_t status)
{
    if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        return json_pack("{s:s,s:i,s:{s:i,s:s}}", "status", "SIGNALED", "return_code", 0,
                         "signal", "signal_id", WTERMSIG(status), "name", name ? name : "");
    }
    return json_pack("{s:s,s:i}", "status", WEXITSTATUS(status) ? "FAILED" : "SUCCESS",
                     "return_code", WEXITSTATUS(status));
}

static json_t *time_object(const struct acctfmt_row *row, time_t now)
{
    struct obj t = {json_object(), 0};
    uint64_t user, sys;
    const Tessera__AcctJob *job = row->job;
    const Tessera__AcctStep *st = row->step;

    if (!t.o)
        return NULL;
    acctfmt_cpu_usec(row, &user, &sys);
    set(&t, "elapsed", json_integer(acctfmt_elapsed(row, now)));
    if (!st)
        set(&t, "eligible", json_integer(job->eligible_time));
    set(&t, "end", json_integer(acctfmt_end(row)));
    set(&t, "start", json_integer(st ? st->start_time : job->start_time));
    if (!st)
        set(&t, "submission", json_integer(job->submit_time));
    set(&t, "suspended", json_integer(st ? 0 : job->suspended_secs));
    set(&t, "system", cpu_usec(sys));
    if (!st)
        set(&t, "limit", job->time_limit > 0 ? json_integer((job->time_limit + 59) / 60)
                                             : json_null());
    set(&t, "total", cpu_usec(user + sys));
    set(&t, "user", cpu_usec(user));
    return finish(&t);
}

static json_t *step_object(const struct acctfmt_row *row, time_t now)
{
    struct obj s = {json_object(), 0};
    const Tessera__AcctStep *st = row->step;
    char id[48];

    if (!s.o)
        return NULL;
    acctfmt_job_id(row->job, st, 1, id, sizeof(id));
    set(&s, "time", time_object(row, now));
    set(&s, "exit_code", exit_code(st->exit_code));
    set(&s, "nodes", json_pack("{s:i,s:s}", "count", (int)st->nnodes, "range",
                               st->nodes ? st->nodes : ""));
    set(&s, "tasks", json_pack("{s:i}", "count", (int)st->ntasks));
    set(&s, "state", str(jobstate_name(st->state)));
    if (st->usage)
        set(&s, "statistics", json_pack("{s:{s:I,s:s,s:i}}", "RSS", "max_kb",
                                        (json_int_t)st->usage->max_rss_kb, "node",
                                        st->usage->max_rss_node ? st->usage->max_rss_node : "",
                                        "task", (int)st->usage->max_rss_task));
    set(&s, "step", json_pack("{s:i,s:{s:o},s:s,s:s}", "job_id", (int)row->job->job_id, "het",
                              "component",
                              row->job->het_job_id ? json_integer(row->job->het_job_offset)
                                                   : json_null(),
                              "id", id, "name", st->name ? st->name : ""));
    return finish(&s);
}

static json_t *het_object(const Tessera__AcctJob *job)
{
    return json_pack("{s:i,s:o}", "job_id", (int)job->het_job_id, "job_offset",
                     job->het_job_id ? json_integer(job->het_job_offset) : json_null());
}

static void job_keys(struct obj *o, const struct acctfmt_row *row, struct jobfmt_ctx *ctx)
{
    const Tessera__AcctJob *job = row->job;
    set(o, "account", str(job->account));
    set(o, "allocation_nodes", json_integer(job->alloc_nodes));
    set(o, "cluster", str(job->cluster));
    set(o, "constraints", str(job->constraint));
    set(o, "derived_exit_code", exit_code(acctfmt_derived_exit(row)));
    set(o, "time", time_object(row, jobfmt_ctx_now(ctx)));
    set(o, "exit_code", exit_code(job->exit_code));
    set(o, "group", str(jobfmt_group_name(ctx, job->group_id)));
    set(o, "het", het_object(job));
    set(o, "job_id", json_integer(job->job_id));
    set(o, "name", str(job->name));
    set(o, "nodes", str(job->nodes && *job->nodes ? job->nodes : "None assigned"));
    set(o, "partition", str(job->partition));
    set(o, "priority", json_integer(job->priority));
    set(o, "qos", str(job->qos));
    set(o, "required", json_pack("{s:i,s:I}", "CPUs", (int)job->req_cpus, "memory",
                                 (json_int_t)acctfmt_req_mem_mb(job)));
    set(o, "restart_cnt", json_integer(job->restarts));
}

static json_t *job_object(const struct acctfmt_row *row, struct jobfmt_ctx *ctx,
                          json_t **steps)
{
    struct obj o = {json_object(), 0};
    const Tessera__AcctJob *job = row->job;

    if (!o.o)
        return NULL;
    job_keys(&o, row, ctx);
    set(&o, "state", json_pack("{s:s,s:s}", "current", jobstate_name(job->state), "reason",
                               jobreason_name(job->reason)));
    *steps = json_array();
    set(&o, "steps", json_incref(*steps));
    set(&o, "submit_line", str(job->submit_line));
    set(&o, "user", str(jobfmt_user_name(ctx, job->user_id)));
    set(&o, "working_directory", str(job->work_dir));
    json_decref(*steps);
    return finish(&o);
}

static json_t *meta_object(void)
{
    return json_pack("{s:{s:s,s:s},s:{s:{s:i,s:i,s:i},s:s},s:{s:s}}", "plugin", "type",
                     "openapi/v0.0.38", "name", "Slurm OpenAPI v0.0.38", "Slurm", "version",
                     "major", 22, "micro", 8, "minor", 5, "release", "22.05.8", "Tessera",
                     "release", TESSERA_VERSION);
}

/* The job objects, one per job met in the rows, each row's step in its job's "steps". */
static int fill_jobs(json_t *list, const struct acctfmt_rows *rows, struct jobfmt_ctx *ctx)
{
    const Tessera__AcctJob *current = NULL;
    json_t *steps = NULL;

    for (size_t i = 0; i < rows->n; i++) {
        const struct acctfmt_row *r = &rows->rows[i];
        if (r->job != current) {
            json_t *job = job_object(r, ctx, &steps);
            if (!job || json_array_append_new(list, job) != 0)
                return -1;
            current = r->job;
        }
        if (r->step && json_array_append_new(steps, step_object(r, jobfmt_ctx_now(ctx))) != 0)
            return -1;
    }
    return 0;
}

char *acctfmt_json(const struct acctfmt_rows *rows, struct jobfmt_ctx *ctx)
{
    struct obj root = {json_object(), 0};
    json_t *list = json_array();
    char *doc = NULL;

    if (!root.o || !list || fill_jobs(list, rows, ctx) != 0)
        root.failed = 1;
    if (!root.failed) {
        set(&root, "meta", meta_object());
        set(&root, "errors", json_array());
        set(&root, "jobs", json_incref(list));
    }
    if (!root.failed) {
        char *body = json_dumps(root.o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ESCAPE_SLASH);
        if (body && (doc = malloc(strlen(body) + 2)))
            sprintf(doc, "%s\n", body);
        free(body);
    }
    json_decref(list);
    json_decref(root.o);
    return doc;
}
