/* squeue's output: "-o %.18i %.9P ..." formats, "-O JobID:10,Name" field lists, and the
 * default sort order.
 *
 * Both syntaxes compile to the same list (fmtlist.h, shared with step and sinfo formats)
 * over one table of fields, so a field reads alike whichever way it was asked for. Where
 * -o and -O disagree in Slurm, the table has two rows: "%i" is the display id "93+1" but
 * "-O JobID" the component's own id; "%Q" the priority as a number but "-O Priority" the
 * normalized fraction ("%p").
 */
#include "common/format/jobfmt.h"

#include "common/format/fmtlist.h"
#include "common/format/fmtspec.h" /* FMTSPEC_MAX_WIDTH, for -O widths */
#include "common/format/jobfmt_int.h"
#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FIELDS_DEFAULT_WIDTH 20 /* -O without a width, as Slurm */
#define WIDTH_MAX FMTSPEC_MAX_WIDTH

typedef const char *(*getter_fn)(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len);

struct field {
    char letter;          /* for -o; 0: -O only */
    const char *name;     /* for -O (case-insensitive); NULL: -o only */
    const char *header;
    getter_fn get;        /* NULL: the value is `constant` */
    const char *constant; /* what Slurm prints for what Tessera has no notion of */
};

struct jobfmt {
    struct fmtlist list; /* over fields[] */
};

/* ---- getters -------------------------------------------------------------------------- */

#define D(job) jobfmt_desc(job)

static const char *put_u32(uint32_t v, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32, v);
    return buf;
}

static const char *get_display_id(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return jobstate_display_id(job, buf, len);
}

static const char *get_job_id(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                              size_t len)
{
    return put_u32(job->job_id, buf, len);
}

/* Het fields of a plain job: Slurm's "N/A", no value. */
static const char *get_het_job_id(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return job->het_job_id ? put_u32(job->het_job_id, buf, len) : "N/A";
}

static const char *get_het_offset(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return job->het_job_id ? put_u32(job->het_job_offset, buf, len) : "N/A";
}

static const char *get_het_id_set(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return job->het_job_id ? jobfmt_het_id_set(job, buf, len) : "N/A";
}

static const char *get_partition(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->partition);
}

static const char *get_name(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                            size_t len)
{
    return jobfmt_or_null(D(job)->name);
}

static const char *get_user(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                            size_t len)
{
    return jobfmt_user_name(ctx, D(job)->user_id);
}

static const char *get_uid(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                           size_t len)
{
    return put_u32(D(job)->user_id, buf, len);
}

static const char *get_group(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                             size_t len)
{
    return jobfmt_group_name(ctx, D(job)->group_id);
}

static const char *get_gid(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                           size_t len)
{
    return put_u32(D(job)->group_id, buf, len);
}

static const char *get_account(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                               char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->account);
}

static const char *get_state_short(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                   char *buf, size_t len)
{
    return jobstate_short(job->state);
}

static const char *get_state(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                             size_t len)
{
    return jobstate_name(job->state);
}

static const char *get_time_used(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    timefmt_format_elapsed(jobtime_used(job, ctx->now), buf, len);
    return buf;
}

static const char *get_time_limit(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    timefmt_format_elapsed(job->time_limit < 0 ? TIMEFMT_UNLIMITED : job->time_limit, buf,
                           len);
    return buf;
}

static const char *get_time_left(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    int64_t left;

    if (job->time_limit < 0)
        return "UNLIMITED";
    left = job->time_limit - jobtime_used(job, ctx->now);
    timefmt_format_elapsed(left < 0 ? 0 : left, buf, len);
    return buf;
}

static const char *get_num_nodes(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return put_u32(jobfmt_num_nodes(job), buf, len);
}

static const char *get_num_cpus(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return put_u32(jobfmt_num_cpus(job), buf, len);
}

static const char *get_num_tasks(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return put_u32(job->ntasks, buf, len);
}

static const char *get_cpus_per_task(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                     char *buf, size_t len)
{
    return put_u32(job->cpus_per_task ? job->cpus_per_task : 1, buf, len);
}

/* Pending: "(Reason)"; otherwise where the job runs or ran. */
static const char *get_reason_list(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                   char *buf, size_t len)
{
    if (job->state != TESSERA__JOB_STATE__JOB_PENDING)
        return jobfmt_or_empty(job->nodes);
    snprintf(buf, len, "(%s)", jobfmt_reason_text(job));
    return buf;
}

static const char *get_reason(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                              size_t len)
{
    return jobfmt_reason_text(job);
}

static const char *get_node_list(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return jobfmt_or_empty(job->nodes);
}

/* Where the plan starts a pending job; "(null)" otherwise, as Slurm. */
static const char *get_sched_nodes(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                   char *buf, size_t len)
{
    return job->state == TESSERA__JOB_STATE__JOB_PENDING && jobfmt_is_set(job->sched_nodes)
               ? job->sched_nodes
               : "(null)";
}

static const char *get_priority(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return put_u32(job->priority, buf, len);
}

/* Slurm's normalized priority: the 32-bit priority as a fraction of its range. */
static const char *get_priority_norm(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                     char *buf, size_t len)
{
    snprintf(buf, len, "%.14f", (double)job->priority / (double)UINT32_MAX);
    return buf;
}

static const char *get_qos(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                           size_t len)
{
    return jobfmt_or_null(D(job)->qos);
}

static const char *get_submit(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                              char *buf, size_t len)
{
    return jobfmt_time_text(job->submit_time, "N/A", buf, len);
}

/* A pending job's expected start, N/A when the scheduler has not planned it. */
static const char *get_start(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                             size_t len)
{
    return jobfmt_time_text(jobfmt_start_time(job), "N/A", buf, len);
}

/* A planned pending job's expected end; NONE when its limit is unlimited, as Slurm. */
static const char *get_end(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                           size_t len)
{
    int open_ended;
    int64_t end = jobfmt_end_time(job, &open_ended);

    return open_ended ? "NONE" : jobfmt_time_text(end, "N/A", buf, len);
}

static const char *get_eligible(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return jobfmt_time_text(job->eligible_time, "N/A", buf, len);
}

static const char *get_deadline(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return jobfmt_time_text(D(job)->deadline, "N/A", buf, len);
}

static const char *get_last_sched(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return jobfmt_time_text(job->last_sched_eval, "N/A", buf, len);
}

/* The script's path and arguments; "(null)" for --wrap and standard input, as Slurm. */
static const char *get_command(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                               char *buf, size_t len)
{
    return job->desc && job->desc->command ? job->desc->command : "(null)";
}

static const char *get_work_dir(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->work_dir);
}

static const char *get_comment(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                               char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->comment);
}

static const char *get_min_mem(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                               char *buf, size_t len)
{
    int per_cpu;

    return jobfmt_mem_text(jobfmt_min_mem(job, &per_cpu), buf, len);
}

static const char *get_min_cpus(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return put_u32(jobfmt_min_cpus_node(job), buf, len);
}

static const char *get_dependency(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->dependency);
}

static const char *get_features(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->constraint);
}

static const char *get_req_nodes(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return jobfmt_or_empty(D(job)->nodelist);
}

static const char *get_exc_nodes(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return jobfmt_or_empty(D(job)->exclude);
}

static const char *get_licenses(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                char *buf, size_t len)
{
    return jobfmt_or_null(D(job)->licenses);
}

/* Generic resources as asked for; Slurm's "N/A" without. */
static const char *or_na(const char *s)
{
    return jobfmt_is_set(s) ? s : "N/A";
}

static const char *get_tres_per_node(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                     char *buf, size_t len)
{
    return or_na(D(job)->tres_per_node);
}

static const char *get_tres_per_job(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                    char *buf, size_t len)
{
    return or_na(D(job)->tres_per_job);
}

static const char *get_tres_per_task(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                     char *buf, size_t len)
{
    return or_na(D(job)->tres_per_task);
}

static const char *get_nice(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                            size_t len)
{
    snprintf(buf, len, "%" PRId32, D(job)->has_nice ? D(job)->nice : 0);
    return buf;
}

static const char *get_oversubscribe(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                     char *buf, size_t len)
{
    return D(job)->has_exclusive && D(job)->exclusive ? "NO" : "OK";
}

static const char *get_batch_host(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    jobfmt_batch_host(job, buf, len);
    return buf[0] ? buf : "n/a";
}

static const char *get_requeue(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                               char *buf, size_t len)
{
    return jobfmt_requeue(job) ? "1" : "0";
}

static const char *get_tres(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                            size_t len)
{
    return jobfmt_tres(job, buf, len);
}

static const char *put_path(char *path, char *buf, size_t len)
{
    snprintf(buf, len, "%s", path ? path : "");
    free(path);
    return buf;
}

static const char *get_stdout(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                              char *buf, size_t len)
{
    return put_path(jobfmt_std_path(job, STDPATH_STDOUT, ctx), buf, len);
}

static const char *get_stderr(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx,
                              char *buf, size_t len)
{
    return put_path(jobfmt_std_path(job, STDPATH_STDERR, ctx), buf, len);
}

static const char *get_stdin(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, char *buf,
                             size_t len)
{
    return put_path(jobfmt_std_path(job, STDPATH_STDIN, ctx), buf, len);
}

/* ---- the table ------------------------------------------------------------------------ */

static const struct field fields[] = {
    {'i', "JobArrayID", "JOBID", get_display_id, NULL},
    {'A', "JobID", "JOBID", get_job_id, NULL},
    {'F', "ArrayJobID", "ARRAY_JOB_ID", get_job_id, NULL},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", NULL, "N/A"},
    {0, "HetJobID", "HET_JOB_ID", get_het_job_id, NULL},
    {0, "HetJobOffset", "HET_JOB_OFFSET", get_het_offset, NULL},
    {0, "HetJobIDSet", "HET_JOB_ID_SET", get_het_id_set, NULL},
    {'P', "Partition", "PARTITION", get_partition, NULL},
    {'j', "Name", "NAME", get_name, NULL},
    {'u', "UserName", "USER", get_user, NULL},
    {'U', "UserID", "UID", get_uid, NULL},
    {'g', "GroupName", "GROUP", get_group, NULL},
    {'G', "GroupID", "GROUP", get_gid, NULL},
    {'a', "Account", "ACCOUNT", get_account, NULL},
    {'t', "StateCompact", "ST", get_state_short, NULL},
    {'T', "State", "STATE", get_state, NULL},
    {'M', "TimeUsed", "TIME", get_time_used, NULL},
    {'l', "TimeLimit", "TIME_LIMIT", get_time_limit, NULL},
    {'L', "TimeLeft", "TIME_LEFT", get_time_left, NULL},
    {'D', "NumNodes", "NODES", get_num_nodes, NULL},
    {'C', "NumCPUs", "CPUS", get_num_cpus, NULL},
    {0, "NumTasks", "TASKS", get_num_tasks, NULL},
    {0, "cpus-per-task", "CPUS_PER_TASK", get_cpus_per_task, NULL},
    {'R', "ReasonList", "NODELIST(REASON)", get_reason_list, NULL},
    {'r', "Reason", "REASON", get_reason, NULL},
    {'N', "NodeList", "NODELIST", get_node_list, NULL},
    {'Q', "PriorityLong", "PRIORITY", get_priority, NULL},
    {'p', "Priority", "PRIORITY", get_priority_norm, NULL},
    {'q', "QOS", "QOS", get_qos, NULL},
    {'V', "SubmitTime", "SUBMIT_TIME", get_submit, NULL},
    {'S', "StartTime", "START_TIME", get_start, NULL},
    {'e', "EndTime", "END_TIME", get_end, NULL},
    /* The nodes a pending job is planned on: the plan does not send them (yet), so
     * Slurm's text for a job without them. */
    {'Y', "SchedNodes", "SCHEDNODES", get_sched_nodes, NULL},
    {0, "EligibleTime", "ELIGIBLE_TIME", get_eligible, NULL},
    {0, "Deadline", "DEADLINE", get_deadline, NULL},
    {0, "LastSchedEval", "LAST_SCHED_EVAL", get_last_sched, NULL},
    {'o', "Command", "COMMAND", get_command, NULL},
    {'Z', "WorkDir", "WORK_DIR", get_work_dir, NULL},
    {'k', "Comment", "COMMENT", get_comment, NULL},
    {'m', "MinMemory", "MIN_MEMORY", get_min_mem, NULL},
    {'c', "MinCpus", "MIN_CPUS", get_min_cpus, NULL},
    {'E', "Dependency", "DEPENDENCY", get_dependency, NULL},
    {'f', "Feature", "FEATURES", get_features, NULL},
    {'n', "ReqNodes", "REQ_NODES", get_req_nodes, NULL},
    {'x', NULL, "EXC_NODES", get_exc_nodes, NULL},
    {'y', "Nice", "NICE", get_nice, NULL},
    {'h', "OverSubscribe", "OVER_SUBSCRIBE", get_oversubscribe, NULL},
    {0, "Shared", "OVER_SUBSCRIBE", get_oversubscribe, NULL},
    {'B', "BatchHost", "EXEC_HOST", get_batch_host, NULL},
    {'W', "Licenses", "LICENSES", get_licenses, NULL},
    {0, "Requeue", "REQUEUE", get_requeue, NULL},
    {0, "tres-alloc", "TRES_ALLOC", get_tres, NULL},
    {0, "tres", "TRES_ALLOC", get_tres, NULL},
    {'b', "tres-per-node", "TRES_PER_NODE", get_tres_per_node, NULL},
    {0, "tres-per-job", "TRES_PER_JOB", get_tres_per_job, NULL},
    {0, "tres-per-task", "TRES_PER_TASK", get_tres_per_task, NULL},
    {0, "STDOUT", "STDOUT", get_stdout, NULL},
    {0, "STDERR", "STDERR", get_stderr, NULL},
    {0, "STDIN", "STDIN", get_stdin, NULL},
    /* Slurm's neutral values for what Tessera has no notion of. */
    {'d', "MinTmpDisk", "MIN_TMP_DISK", NULL, "0"},
    {'v', "Reservation", "RESERVATION", NULL, "(null)"},
    {'w', "WCKey", "WCKEY", NULL, "(null)"},
    {'O', "Contiguous", "CONTIGUOUS", NULL, "0"},
    {'X', NULL, "CORE_SPEC", NULL, "N/A"},
    {'z', NULL, "S:C:T", NULL, "*:*:*"},
    {'H', NULL, "SOCKETS_PER_NODE", NULL, "*"},
    {'I', NULL, "CORES_PER_SOCKET", NULL, "*"},
    {'J', NULL, "THREADS_PER_CORE", NULL, "*"},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const void *field_by_letter(char c)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].letter && fields[i].letter == c)
            return &fields[i];
    return NULL;
}

static const struct field *field_by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].name && strlen(fields[i].name) == len &&
            !strncasecmp(fields[i].name, name, len))
            return &fields[i];
    return NULL;
}

/* ---- compiling -------------------------------------------------------------------------- */

void jobfmt_free(struct jobfmt *fmt)
{
    if (!fmt)
        return;
    fmtlist_clear(&fmt->list);
    free(fmt);
}

/* "[.][width]" from s up to end: width 0 or none means natural width. Sets *stop past
 * it. */
static int parse_width(const char *s, const char *end, const char **stop, int *width,
                       int *right)
{
    long w = 0;

    *right = (s < end && *s == '.');
    if (*right)
        s++;
    while (s < end && *s >= '0' && *s <= '9') {
        w = w * 10 + (*s++ - '0');
        if (w > WIDTH_MAX)
            return -1;
    }
    *width = (int)w;
    *stop = s;
    return 0;
}

int jobfmt_compile(const char *format, struct jobfmt **out, char *errbuf, size_t errlen)
{
    struct jobfmt *fmt = calloc(1, sizeof(*fmt));
    int rc;

    *out = NULL;
    if (!fmt)
        return TS_ENOMEM;
    rc = fmtlist_compile(&fmt->list, format, field_by_letter, "job", errbuf, errlen);
    if (rc != TS_OK) {
        jobfmt_free(fmt);
        return rc;
    }
    *out = fmt;
    return TS_OK;
}

/* One "Name[:[.][width][suffix]]" of a -O list. */
static int compile_token(struct jobfmt *fmt, const char *tok, size_t len, char *errbuf,
                         size_t errlen)
{
    const char *colon = memchr(tok, ':', len);
    const char *end = tok + len;
    size_t nlen = colon ? (size_t)(colon - tok) : len;
    const struct field *f = field_by_name(tok, nlen);
    const char *suffix;
    int width = FIELDS_DEFAULT_WIDTH, right = 0, rc;

    if (!f)
        return fmtlist_spec_error(errbuf, errlen, "job", tok, nlen);
    if (!colon)
        return fmtlist_add_field(&fmt->list, f, width, right);
    if (parse_width(colon + 1, end, &suffix, &width, &right) != 0)
        return fmtlist_spec_error(errbuf, errlen, "job", tok, len);
    if ((rc = fmtlist_add_field(&fmt->list, f, width, right)) != TS_OK)
        return rc;
    return fmtlist_add_literal(&fmt->list, suffix, (size_t)(end - suffix));
}

int jobfmt_compile_fields(const char *list, struct jobfmt **out, char *errbuf, size_t errlen)
{
    struct jobfmt *fmt = calloc(1, sizeof(*fmt));
    const char *p = list ? list : "";
    int rc = TS_OK;

    *out = NULL;
    if (!fmt)
        return TS_ENOMEM;
    while (rc == TS_OK && *p) {
        size_t len = strcspn(p, ",");

        if (len > 0) /* empty elements ("a,,b") are skipped, as Slurm does */
            rc = compile_token(fmt, p, len, errbuf, errlen);
        p += len + (p[len] == ',');
    }
    if (rc == TS_OK && fmt->list.n == 0)
        rc = fmtlist_spec_error(errbuf, errlen, "job", "", 0);
    if (rc != TS_OK) {
        jobfmt_free(fmt);
        return rc;
    }
    *out = fmt;
    return TS_OK;
}

/* ---- printing ------------------------------------------------------------------------ */

/* What a row shows; the header is the line without one. */
struct row {
    const Tessera__JobRecord *job;
    struct jobfmt_ctx *ctx;
};

static void fill_cell(void *arg, size_t i, const struct fmtlist_item *it,
                      struct fmtlist_cell *cell, char *buf, size_t len)
{
    const struct row *r = arg;
    const struct field *fd = it->field;

    if (!r)
        cell->text = fd->header;
    else
        cell->text = fd->get ? fd->get(r->job, r->ctx, buf, len) : fd->constant;
}

char *jobfmt_header(const struct jobfmt *fmt)
{
    return fmtlist_line(&fmt->list, fill_cell, NULL, 1);
}

char *jobfmt_row(const struct jobfmt *fmt, const Tessera__JobRecord *job,
                 struct jobfmt_ctx *ctx)
{
    struct row r = {job, ctx};

    return fmtlist_line(&fmt->list, fill_cell, &r, JOBFMT_VALUE_MAX);
}

/* ---- default order ------------------------------------------------------------------- */

static int cmp_default(const void *a, const void *b)
{
    const Tessera__JobRecord *x = *(Tessera__JobRecord *const *)a;
    const Tessera__JobRecord *y = *(Tessera__JobRecord *const *)b;
    int c = strcmp(jobfmt_or_empty(jobfmt_desc(x)->partition),
                   jobfmt_or_empty(jobfmt_desc(y)->partition));

    if (c)
        return c;
    /* Slurm compares the short state names as text, hence CA, CD, CG, PD, R, S, ... */
    if ((c = strcmp(jobstate_short(x->state), jobstate_short(y->state))))
        return c;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    /* Slurm leaves ties in the controller's list order, which shows the newest first
     * ("10+1" above "10+0"); we show older jobs and lower offsets first. */
    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    return 0;
}

void jobfmt_sort_default(Tessera__JobRecord **jobs, size_t n)
{
    if (jobs && n > 1)
        qsort(jobs, n, sizeof(jobs[0]), cmp_default);
}

/* ---- squeue --start order -------------------------------------------------------------- */

/* The sort key, as Slurm 22.05's squeue --start orders jobs: those without a start time
 * last, a pending job whose expected start has passed as if it started now. */
static int64_t start_key(const Tessera__JobRecord *job, int64_t now)
{
    int64_t t = jobfmt_start_time(job);

    if (t == 0)
        return INT64_MAX;
    if (job->state == TESSERA__JOB_STATE__JOB_PENDING && t < now)
        return now;
    return t;
}

struct keyed {
    int64_t key;
    Tessera__JobRecord *job;
};

static int cmp_start(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->job->job_id != y->job->job_id)
        return x->job->job_id < y->job->job_id ? -1 : 1;
    return 0;
}

int jobfmt_sort_start(Tessera__JobRecord **jobs, size_t n, time_t now)
{
    struct keyed *k;

    if (!jobs || n < 2)
        return TS_OK;
    if (!(k = malloc(n * sizeof(*k))))
        return TS_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        k[i].key = start_key(jobs[i], (int64_t)now);
        k[i].job = jobs[i];
    }
    qsort(k, n, sizeof(*k), cmp_start);
    for (size_t i = 0; i < n; i++)
        jobs[i] = k[i].job;
    free(k);
    return TS_OK;
}
