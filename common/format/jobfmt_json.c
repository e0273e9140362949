/* squeue --json: the document Slurm 22.05 prints (data format openapi v0.0.38), with the
 * keys Tessera can fill, in Slurm's order. Keys for what Tessera has no notion of
 * (burst buffers, federation, array tasks, ...) are left out rather than faked. Values
 * keep Slurm's units: times in Unix seconds (0 unknown), time limits in minutes (null
 * for UNLIMITED), memory in megabytes (null when not requested). */
#include "common/format/jobfmt.h"

#include "common/format/jobfmt_int.h"
#include "common/format/jsondoc.h"
#include "common/job/jobstate.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define D(job) jobfmt_desc(job)

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

static void job_head(struct jsondoc_obj *o, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char host[JOBFMT_VALUE_MAX];

    jsondoc_set(o, "account", jsondoc_str(d->account));
    jsondoc_set(o, "batch_flag", json_boolean(job->batch || jobfmt_is_set(d->script)));
    jsondoc_set(o, "batch_host", jsondoc_str(jobfmt_batch_host(job, host, sizeof(host))));
    jsondoc_set(o, "comment", jsondoc_str(d->comment));
    jsondoc_set(o, "cpus_per_task", json_integer(job->cpus_per_task ? job->cpus_per_task : 1));
    jsondoc_set(o, "deadline", json_integer(d->deadline));
    jsondoc_set(o, "dependency", jsondoc_str(d->dependency));
    jsondoc_set(o, "eligible_time", json_integer(job->eligible_time));
    jsondoc_set(o, "end_time", json_integer(end_time(job)));
    jsondoc_set(o, "excluded_nodes", jsondoc_str(d->exclude));
    jsondoc_set(o, "exit_code", json_integer(job->exit_code));
    jsondoc_set(o, "features", jsondoc_str(d->constraint));
    jsondoc_set(o, "group_id", json_integer(d->group_id));
    jsondoc_set(o, "group_name", jsondoc_str(jobfmt_group_name(ctx, d->group_id)));
    jsondoc_set(o, "job_id", json_integer(job->job_id));
    jsondoc_set(o, "job_state", jsondoc_str(jobstate_name(job->state)));
    jsondoc_set(o, "last_sched_evaluation", json_integer(job->last_sched_eval));
    jsondoc_set(o, "licenses", jsondoc_str(d->licenses));
    jsondoc_set(o, "max_nodes", json_integer(d->has_max_nodes ? d->max_nodes : 0));
    jsondoc_set(o, "name", jsondoc_str(d->name));
    jsondoc_set(o, "nodes", jsondoc_str(job->nodes));
    jsondoc_set(o, "nice", json_integer(d->has_nice ? d->nice : 0));
    jsondoc_set(o, "tasks_per_node", json_integer(d->has_ntasks_per_node ? d->ntasks_per_node : 0));
}

static void job_resources(struct jsondoc_obj *o, const Tessera__JobRecord *job)
{
    const Tessera__JobDesc *d = D(job);
    char set_text[32];

    jsondoc_set(o, "cpus", json_integer(jobfmt_num_cpus(job)));
    jsondoc_set(o, "node_count", json_integer(jobfmt_num_nodes(job)));
    jsondoc_set(o, "tasks", json_integer(job->ntasks));
    /* Slurm's neutral values for a plain job: 0 and "". */
    jsondoc_set(o, "het_job_id", json_integer(job->het_job_id));
    jsondoc_set(o, "het_job_id_set",
        jsondoc_str(job->het_job_id ? jobfmt_het_id_set(job, set_text, sizeof(set_text)) : ""));
    jsondoc_set(o, "het_job_offset", json_integer(job->het_job_id ? job->het_job_offset : 0));
    jsondoc_set(o, "partition", jsondoc_str(d->partition));
    jsondoc_set(o, "memory_per_node", mem_or_null(d->has_mem_per_node_mb && !d->has_mem_per_cpu_mb,
                                          d->mem_per_node_mb));
    jsondoc_set(o, "memory_per_cpu", mem_or_null(d->has_mem_per_cpu_mb, d->mem_per_cpu_mb));
    jsondoc_set(o, "minimum_cpus_per_node", json_integer(jobfmt_min_cpus_node(job)));
    jsondoc_set(o, "pre_sus_time", json_integer(job->pre_suspend_secs));
    jsondoc_set(o, "priority", json_integer(job->priority));
    jsondoc_set(o, "qos", jsondoc_str(d->qos));
    jsondoc_set(o, "required_nodes", jsondoc_str(d->nodelist));
    jsondoc_set(o, "requeue", json_boolean(jobfmt_requeue(job)));
    jsondoc_set(o, "restart_cnt", json_integer(job->restarts));
}

static void job_tail(struct jsondoc_obj *o, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char tres[256];

    jsondoc_set(o, "start_time", json_integer(jobfmt_start_time(job)));
    jsondoc_set(o, "state_description", jsondoc_str(job->state_desc));
    jsondoc_set(o, "state_reason", jsondoc_str(jobreason_name(job->reason)));
    /* The patterns as given, as Slurm keeps them here (scontrol shows them expanded). */
    jsondoc_set(o, "standard_error", jsondoc_str(d->std_err));
    jsondoc_set(o, "standard_input", jsondoc_str(jobfmt_is_set(d->std_in) ? d->std_in : "/dev/null"));
    jsondoc_set(o, "standard_output", jsondoc_str(d->std_out));
    jsondoc_set(o, "submit_time", json_integer(job->submit_time));
    jsondoc_set(o, "suspend_time", json_integer(job->suspend_time));
    jsondoc_set(o, "time_limit", minutes(job->time_limit));
    jsondoc_set(o, "time_minimum", json_integer(d->has_time_min ? (d->time_min + 59) / 60 : 0));
    jsondoc_set(o, "cpus_per_tres", jsondoc_str(d->cpus_per_tres));
    jsondoc_set(o, "memory_per_tres", jsondoc_str(d->mem_per_tres));
    jsondoc_set(o, "tres_per_job", jsondoc_str(d->tres_per_job));
    jsondoc_set(o, "tres_per_node", jsondoc_str(d->tres_per_node));
    jsondoc_set(o, "tres_per_socket", jsondoc_str(NULL));
    jsondoc_set(o, "tres_per_task", jsondoc_str(d->tres_per_task));
    jsondoc_set(o, "tres_req_str", jsondoc_str(jobfmt_tres(job, tres, sizeof(tres))));
    jsondoc_set(o, "tres_alloc_str", jsondoc_str(job->alloc_nodes ? tres : ""));
    jsondoc_set(o, "user_id", json_integer(d->user_id));
    jsondoc_set(o, "user_name", jsondoc_str(jobfmt_user_name(ctx, d->user_id)));
    jsondoc_set(o, "current_working_directory", jsondoc_str(d->work_dir));
}

static json_t *job_object(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    struct jsondoc_obj b = {json_object(), 0};

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

char *jobfmt_json(Tessera__JobRecord *const *jobs, size_t n, struct jobfmt_ctx *ctx)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        if (json_array_append_new(list, job_object(jobs[i], ctx)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return jsondoc_jobs(list);
}
