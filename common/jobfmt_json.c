/* squeue --json: the document Slurm 22.05 prints (data format openapi v0.0.38), with the
 * keys Tessera can fill, in Slurm's order. Keys for what Tessera has no notion of
 * (burst buffers, federation, array tasks, ...) are left out rather than faked. Values
 * keep Slurm's units: times in Unix seconds (0 unknown), time limits in minutes (null
 * for UNLIMITED), memory in megabytes (null when not requested). */
#include "common/jobfmt.h"

#include "common/jobfmt_int.h"
#include "common/jobstate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

#define D(job) jobfmt_desc(job)

/* A job object under construction; any failed allocation marks it failed, so that the
 * many keys need no check each. */
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

/* Minutes, rounded up as Slurm rounds limits; null for unlimited. */
static json_t *minutes(int64_t secs)
{
    return secs < 0 ? json_null() : json_integer((secs + 59) / 60);
}

static json_t *mem_or_null(int has, uint64_t mb)
{
    return has ? json_integer((json_int_t)mb) : json_null();
}

/* A planned pending job's expected end; 0 when its limit is unlimited (Slurm prints a
 * time some 136 years on, an artefact of its INFINITE limit). */
static int64_t end_time(const Tessera__JobRecord *job)
{
    int open_ended;
    int64_t end = jobfmt_end_time(job, &open_ended);

    return open_ended ? 0 : end;
}

static void job_head(struct obj *o, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char host[JOBFMT_VALUE_MAX];

    set(o, "account", str(d->account));
    set(o, "batch_flag", json_boolean(job->batch || jobfmt_is_set(d->script)));
    set(o, "batch_host", str(jobfmt_batch_host(job, host, sizeof(host))));
    set(o, "comment", str(d->comment));
    set(o, "cpus_per_task", json_integer(job->cpus_per_task ? job->cpus_per_task : 1));
    set(o, "deadline", json_integer(d->deadline));
    set(o, "dependency", str(d->dependency));
    set(o, "eligible_time", json_integer(job->eligible_time));
    set(o, "end_time", json_integer(end_time(job)));
    set(o, "excluded_nodes", str(d->exclude));
    set(o, "exit_code", json_integer(job->exit_code));
    set(o, "features", str(d->constraint));
    set(o, "group_id", json_integer(d->group_id));
    set(o, "group_name", str(jobfmt_group_name(ctx, d->group_id)));
    set(o, "job_id", json_integer(job->job_id));
    set(o, "job_state", str(jobstate_name(job->state)));
    set(o, "last_sched_evaluation", json_integer(job->last_sched_eval));
    set(o, "licenses", str(d->licenses));
    set(o, "max_nodes", json_integer(d->has_max_nodes ? d->max_nodes : 0));
    set(o, "name", str(d->name));
    set(o, "nodes", str(job->nodes));
    set(o, "nice", json_integer(d->has_nice ? d->nice : 0));
    set(o, "tasks_per_node", json_integer(d->has_ntasks_per_node ? d->ntasks_per_node : 0));
}

static void job_resources(struct obj *o, const Tessera__JobRecord *job)
{
    const Tessera__JobDesc *d = D(job);
    char set_text[32];

    set(o, "cpus", json_integer(jobfmt_num_cpus(job)));
    set(o, "node_count", json_integer(jobfmt_num_nodes(job)));
    set(o, "tasks", json_integer(job->ntasks));
    /* Slurm's neutral values for a plain job: 0 and "". */
    set(o, "het_job_id", json_integer(job->het_job_id));
    set(o, "het_job_id_set",
        str(job->het_job_id ? jobfmt_het_id_set(job, set_text, sizeof(set_text)) : ""));
    set(o, "het_job_offset", json_integer(job->het_job_id ? job->het_job_offset : 0));
    set(o, "partition", str(d->partition));
    set(o, "memory_per_node", mem_or_null(d->has_mem_per_node_mb && !d->has_mem_per_cpu_mb,
                                          d->mem_per_node_mb));
    set(o, "memory_per_cpu", mem_or_null(d->has_mem_per_cpu_mb, d->mem_per_cpu_mb));
    set(o, "minimum_cpus_per_node", json_integer(jobfmt_min_cpus_node(job)));
    set(o, "pre_sus_time", json_integer(job->pre_suspend_secs));
    set(o, "priority", json_integer(job->priority));
    set(o, "qos", str(d->qos));
    set(o, "required_nodes", str(d->nodelist));
    set(o, "requeue", json_boolean(jobfmt_requeue(job)));
    set(o, "restart_cnt", json_integer(job->restarts));
}

static void job_tail(struct obj *o, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char tres[256];

    set(o, "start_time", json_integer(jobfmt_start_time(job)));
    set(o, "state_description", str(job->state_desc));
    set(o, "state_reason", str(jobreason_name(job->reason)));
    /* The patterns as given, as Slurm keeps them here (scontrol shows them expanded). */
    set(o, "standard_error", str(d->std_err));
    set(o, "standard_input", str(jobfmt_is_set(d->std_in) ? d->std_in : "/dev/null"));
    set(o, "standard_output", str(d->std_out));
    set(o, "submit_time", json_integer(job->submit_time));
    set(o, "suspend_time", json_integer(job->suspend_time));
    set(o, "time_limit", minutes(job->time_limit));
    set(o, "time_minimum", json_integer(d->has_time_min ? (d->time_min + 59) / 60 : 0));
    set(o, "tres_req_str", str(jobfmt_tres(job, tres, sizeof(tres))));
    set(o, "tres_alloc_str", str(job->alloc_nodes ? tres : ""));
    set(o, "user_id", json_integer(d->user_id));
    set(o, "user_name", str(jobfmt_user_name(ctx, d->user_id)));
    set(o, "current_working_directory", str(d->work_dir));
}

static json_t *job_object(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    struct obj b = {json_object(), 0};

    if (!b.o)
        return NULL;
    job_head(&b, job, ctx);
    job_resources(&b, job);
    job_tail(&b, job, ctx);
    if (b.failed) {
        json_decref(b.o);
        return NULL;
    }
    return b.o;
}

/* The format is Slurm 22.05.8's; "Tessera" says what produced it. */
static json_t *meta_object(void)
{
    return json_pack("{s:{s:s,s:s},s:{s:{s:i,s:i,s:i},s:s},s:{s:s}}", "plugin", "type",
                     "openapi/v0.0.38", "name", "Slurm OpenAPI v0.0.38", "Slurm", "version",
                     "major", 22, "micro", 8, "minor", 5, "release", "22.05.8", "Tessera",
                     "release", TESSERA_VERSION);
}

char *jobfmt_json(Tessera__JobRecord *const *jobs, size_t n, struct jobfmt_ctx *ctx)
{
    struct obj root = {json_object(), 0};
    json_t *list = json_array();
    char *doc = NULL;

    if (!root.o || !list)
        root.failed = 1;
    for (size_t i = 0; !root.failed && i < n; i++)
        if (json_array_append_new(list, job_object(jobs[i], ctx)) != 0)
            root.failed = 1;
    if (!root.failed) {
        set(&root, "meta", meta_object());
        set(&root, "errors", json_array());
        set(&root, "jobs", json_incref(list));
    }
    if (!root.failed) {
        /* Slurm escapes '/' in its JSON; so do we, for byte-for-byte diffs of paths. */
        char *body = json_dumps(root.o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ESCAPE_SLASH);

        if (body && (doc = malloc(strlen(body) + 2)))
            sprintf(doc, "%s\n", body);
        free(body);
    }
    json_decref(list);
    json_decref(root.o);
    return doc;
}
