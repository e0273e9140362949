/* What one user may put into the controller (docs/configuration.md, "Limits"): how much
 * text each field of a job description may hold (one table), how large its script,
 * environment and arguments may be, and how many jobs may be in memory (MaxJobCount) and
 * pending or running for one user (MaxSubmitJobs). Checked when a submission arrives,
 * before filters see it, and again before it is stored; the table also on updates. */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/gres/gres_req.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"

#include <limits.h>
#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The longest text the controller keeps in each string field of a JobDesc, and the error
 * that names the field's kind. Paths follow PATH_MAX; host lists NODE_LIST_MAX_LEN; the
 * dependency leaves room for many items, which job_depend.c then deduplicates and caps.
 * The script has its own key (MaxScriptSize). Fields the controller sets itself are
 * bounded too: a raw request may carry them. */
static const struct field_max {
    const char *field; /* the JobDesc field */
    const char *option; /* how users know it */
    size_t max;        /* bytes, without the NUL */
    int code;
} field_maxima[] = {
    {"name", "--job-name", 1024, TS_ETOOBIG},
    {"account", "--account", 256, TS_ETOOBIG},
    {"partition", "--partition", 1024, TS_EINVALID_PARTITION},
    {"qos", "--qos", 256, TS_EINVALID_QOS},
    {"constraint", "--constraint", 4096, TS_EINVALID_FEATURE},
    {"exclude", "--exclude", NODE_LIST_MAX_LEN, TS_EINVALID_NODE_NAME},
    {"nodelist", "--nodelist", NODE_LIST_MAX_LEN, TS_EINVALID_NODE_NAME},
    {"dependency", "--dependency", JOB_DEP_MAX_TEXT, TS_EDEPENDENCY},
    {"std_out", "--output", PATH_MAX, TS_EPATH_TOOLONG},
    {"std_err", "--error", PATH_MAX, TS_EPATH_TOOLONG},
    {"std_in", "--input", PATH_MAX, TS_EPATH_TOOLONG},
    {"open_mode", "--open-mode", 16, TS_EINVAL},
    {"work_dir", "--chdir", PATH_MAX, TS_EPATH_TOOLONG},
    {"export_env", "--export", 64 * 1024, TS_EENV_TOOBIG},
    {"mail_type", "--mail-type", 256, TS_ETOOBIG},
    {"mail_user", "--mail-user", 1024, TS_ETOOBIG},
    {"licenses", "--licenses", 4096, TS_EINVALID_LICENSES},
    {"comment", "--comment", 64 * 1024, TS_ETOOBIG},
    {"command", "the command", 64 * 1024, TS_ETOOBIG},
    {"submit_dir", "the submission folder", PATH_MAX, TS_EPATH_TOOLONG},
    {"het_group", "--het-group", 1024, TS_EHET_GROUP},
    {"distribution", "--distribution", 64, TS_EINVAL},
    {"submit_host", "the submission host", 256, TS_ETOOBIG},
    {"tres_per_node", "--gres", GRES_REQ_SPEC_MAX, TS_EINVALID_GRES},
    {"tres_per_job", "--gpus", GRES_REQ_SPEC_MAX, TS_EINVALID_GRES},
    {"tres_per_task", "--gpus-per-task", GRES_REQ_SPEC_MAX, TS_EINVALID_GRES},
    {"cpus_per_tres", "--cpus-per-gpu", 64, TS_EINVALID_GRES},
    {"mem_per_tres", "--mem-per-gpu", 64, TS_EINVALID_GRES},
    {"gres_flags", "--gres-flags", 64, TS_EINVALID_GRES},
};

/* A batch script's arguments: at most this many, this many bytes together. */
#define ARGV_MAX_COUNT 4096u
#define ARGV_MAX_BYTES (1u << 20)
/* A whole submission, every component: so that answers carrying all of its records (an
 * allocation's grant) stay inside a 16 MiB frame. */
#define SUBMISSION_MAX_BYTES (15u << 20)

__attribute__((format(printf, 4, 5))) static int refuse(int code, char *why, size_t len,
                                                       const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    snprintf(why, len, "%s (%s)", ts_strerror(code), detail);
    return code;
}

int job_limits_check_fields(const Tessera__JobDesc *d, char *why, size_t len)
{
    const ProtobufCMessageDescriptor *md = &tessera__job_desc__descriptor;
    for (size_t i = 0; i < sizeof(field_maxima) / sizeof(field_maxima[0]); i++) {
        const struct field_max *fm = &field_maxima[i];
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(md,
                                                                                    fm->field);
        const char *text = f ? *(char *const *)((const char *)d + f->offset) : NULL;
        if (text && strnlen(text, fm->max + 1) > fm->max)
            return refuse(fm->code, why, len, "%s is longer than %zu bytes", fm->option,
                          fm->max);
    }
    return TS_OK;
}

/* Total bytes of a string list (each with its NUL), stopping once past max. */
static size_t list_bytes(char *const *items, size_t n, size_t max)
{
    size_t total = 0;
    for (size_t i = 0; i < n && total <= max; i++)
        total += strnlen(items[i], max + 1) + 1;
    return total;
}

int job_limits_check_payload(const struct ctld *c, const Tessera__JobDesc *d, char *why,
                             size_t len)
{
    const struct conf *conf = c->conf;
    size_t script = d->script ? strnlen(d->script, (size_t)conf->max_script_size + 1) : 0;
    if (script > conf->max_script_size)
        return refuse(TS_ESCRIPT_TOOBIG, why, len, "MaxScriptSize=%u bytes",
                      conf->max_script_size);
    if (d->n_environment > conf->max_env_count)
        return refuse(TS_EENV_TOOBIG, why, len, "%zu variables, MaxEnvCount=%u",
                      d->n_environment, conf->max_env_count);
    if (list_bytes(d->environment, d->n_environment, conf->max_env_size) > conf->max_env_size)
        return refuse(TS_EENV_TOOBIG, why, len, "MaxEnvSize=%u bytes", conf->max_env_size);
    if (d->n_argv > ARGV_MAX_COUNT ||
        list_bytes(d->argv, d->n_argv, ARGV_MAX_BYTES) > ARGV_MAX_BYTES)
        return refuse(TS_ETOOBIG, why, len, "script arguments: at most %u, %u bytes together",
                      ARGV_MAX_COUNT, ARGV_MAX_BYTES);
    return job_limits_check_fields(d, why, len);
}

/* A user's components that are not finished: what MaxSubmitJobs counts. */
static size_t user_jobs(const struct ctld *c, uid_t uid)
{
    size_t n = 0;
    for (const struct job *j = c->jobs.head; j; j = j->next)
        n += j->rec->desc->has_user_id && j->rec->desc->user_id == (uint32_t)uid &&
             !jobstate_is_finished(j->rec->state);
    return n;
}

int job_limits_check_counts(const struct ctld *c, size_t ncomponents, uid_t uid)
{
    const struct conf *conf = c->conf;
    if (c->jobs.count + ncomponents > conf->max_job_count)
        return TS_EMAX_JOB_COUNT;
    if (conf->max_submit_jobs && user_jobs(c, uid) + ncomponents > conf->max_submit_jobs)
        return TS_EACCOUNTING_POLICY;
    return TS_OK;
}

int job_limits_check_submission(const struct ctld *c, const Tessera__SubmitRequest *req,
                                uid_t uid, char *why, size_t len)
{
    why[0] = '\0';
    size_t n = req->n_components;
    if (n == 0 || n > JOB_MAX_COMPONENTS) {
        snprintf(why, len, "a job has 1 to %d components", JOB_MAX_COMPONENTS);
        return TS_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        int err = job_limits_check_payload(c, req->components[i], why, len);
        if (err)
            return err;
    }
    if (tessera__submit_request__get_packed_size(req) > SUBMISSION_MAX_BYTES)
        return refuse(TS_ETOOBIG, why, len, "the job's description is larger than %u bytes",
                      SUBMISSION_MAX_BYTES);
    return req->test_only ? TS_OK : job_limits_check_counts(c, n, uid);
}
