/* sacct --json: Slurm 22.05's document (openapi v0.0.38), the keys Tessera keeps data
 * for, each job with its steps inside. Times are Unix seconds (0 unknown), elapsed times
 * seconds, time limits minutes (null when unlimited or the partition's), memory MB. */
#include "common/format/acctfmt_int.h"

#include "common/format/jobfmt.h"
#include "common/format/jsondoc.h"
#include "common/job/jobstate.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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
    struct jsondoc_obj t = {json_object(), 0};
    uint64_t user, sys;
    const Tessera__AcctJob *job = row->job;
    const Tessera__AcctStep *st = row->step;

    if (!t.o)
        return NULL;
    acctfmt_cpu_usec(row, &user, &sys);
    jsondoc_set(&t, "elapsed", json_integer(acctfmt_elapsed(row, now)));
    if (!st)
        jsondoc_set(&t, "eligible", json_integer(job->eligible_time));
    jsondoc_set(&t, "end", json_integer(acctfmt_end(row)));
    jsondoc_set(&t, "start", json_integer(st ? st->start_time : job->start_time));
    if (!st)
        jsondoc_set(&t, "submission", json_integer(job->submit_time));
    jsondoc_set(&t, "suspended", json_integer(st ? 0 : job->suspended_secs));
    jsondoc_set(&t, "system", cpu_usec(sys));
    if (!st)
        jsondoc_set(&t, "limit", job->time_limit > 0 ? json_integer((job->time_limit + 59) / 60)
                                             : json_null());
    jsondoc_set(&t, "total", cpu_usec(user + sys));
    jsondoc_set(&t, "user", cpu_usec(user));
    return jsondoc_finish(&t);
}

static json_t *step_object(const struct acctfmt_row *row, time_t now)
{
    struct jsondoc_obj s = {json_object(), 0};
    const Tessera__AcctStep *st = row->step;
    char id[48];

    if (!s.o)
        return NULL;
    acctfmt_job_id(row->job, st, 1, id, sizeof(id));
    jsondoc_set(&s, "time", time_object(row, now));
    jsondoc_set(&s, "exit_code", exit_code(st->exit_code));
    jsondoc_set(&s, "nodes", json_pack("{s:i,s:s}", "count", (int)st->nnodes, "range",
                               st->nodes ? st->nodes : ""));
    jsondoc_set(&s, "tasks", json_pack("{s:i}", "count", (int)st->ntasks));
    jsondoc_set(&s, "state", jsondoc_str(jobstate_name(st->state)));
    if (st->usage)
        jsondoc_set(&s, "statistics", json_pack("{s:{s:I,s:s,s:i}}", "RSS", "max_kb",
                                        (json_int_t)st->usage->max_rss_kb, "node",
                                        st->usage->max_rss_node ? st->usage->max_rss_node : "",
                                        "task", (int)st->usage->max_rss_task));
    jsondoc_set(&s, "step", json_pack("{s:i,s:{s:o},s:s,s:s}", "job_id", (int)row->job->job_id, "het",
                              "component",
                              row->job->het_job_id ? json_integer(row->job->het_job_offset)
                                                   : json_null(),
                              "id", id, "name", st->name ? st->name : ""));
    return jsondoc_finish(&s);
}

static json_t *het_object(const Tessera__AcctJob *job)
{
    return json_pack("{s:i,s:o}", "job_id", (int)job->het_job_id, "job_offset",
                     job->het_job_id ? json_integer(job->het_job_offset) : json_null());
}

static void job_keys(struct jsondoc_obj *o, const struct acctfmt_row *row, struct jobfmt_ctx *ctx)
{
    const Tessera__AcctJob *job = row->job;
    jsondoc_set(o, "account", jsondoc_str(job->account));
    jsondoc_set(o, "allocation_nodes", json_integer(job->alloc_nodes));
    jsondoc_set(o, "cluster", jsondoc_str(job->cluster));
    jsondoc_set(o, "constraints", jsondoc_str(job->constraint));
    jsondoc_set(o, "derived_exit_code", exit_code(acctfmt_derived_exit(row)));
    jsondoc_set(o, "time", time_object(row, jobfmt_ctx_now(ctx)));
    jsondoc_set(o, "exit_code", exit_code(job->exit_code));
    jsondoc_set(o, "group", jsondoc_str(jobfmt_group_name(ctx, job->group_id)));
    jsondoc_set(o, "het", het_object(job));
    jsondoc_set(o, "job_id", json_integer(job->job_id));
    jsondoc_set(o, "name", jsondoc_str(job->name));
    jsondoc_set(o, "nodes", jsondoc_str(job->nodes && *job->nodes ? job->nodes : "None assigned"));
    jsondoc_set(o, "partition", jsondoc_str(job->partition));
    jsondoc_set(o, "priority", json_integer(job->priority));
    jsondoc_set(o, "qos", jsondoc_str(job->qos));
    jsondoc_set(o, "required", json_pack("{s:i,s:I}", "CPUs", (int)job->req_cpus, "memory",
                                 (json_int_t)acctfmt_req_mem_mb(job)));
    jsondoc_set(o, "restart_cnt", json_integer(job->restarts));
}

static json_t *job_object(const struct acctfmt_row *row, struct jobfmt_ctx *ctx,
                          json_t **steps)
{
    struct jsondoc_obj o = {json_object(), 0};
    const Tessera__AcctJob *job = row->job;

    if (!o.o)
        return NULL;
    job_keys(&o, row, ctx);
    jsondoc_set(&o, "state", json_pack("{s:s,s:s}", "current", jobstate_name(job->state), "reason",
                               jobreason_name(job->reason)));
    *steps = json_array();
    jsondoc_set(&o, "steps", json_incref(*steps));
    jsondoc_set(&o, "submit_line", jsondoc_str(job->submit_line));
    jsondoc_set(&o, "user", jsondoc_str(jobfmt_user_name(ctx, job->user_id)));
    jsondoc_set(&o, "working_directory", jsondoc_str(job->work_dir));
    json_decref(*steps);
    return jsondoc_finish(&o);
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
    json_t *list = json_array();
    if (list && fill_jobs(list, rows, ctx) != 0) {
        json_decref(list);
        list = NULL;
    }
    return jsondoc_jobs(list);
}
