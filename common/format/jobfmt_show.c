/* "scontrol show job" and "scontrol show partition", laid out as Slurm 22.05 lays them
 * out, so that scripts parsing "Key=Value" pairs keep working. Fields Tessera has no
 * notion of (MCS labels, sockets, power, network, ...) keep Slurm's neutral values rather
 * than disappearing: scripts index the layout as much as the keys. */
#include "common/format/jobfmt.h"

#include "common/format/jobfmt_int.h"
#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/text/hostlist.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record of "Key=Value" items: lines indented by three spaces, or one line. */
struct rec {
    FILE *f;
    int oneliner;
    int items;   /* written so far */
    int newline; /* the next item starts a line */
};

static void rec_line(struct rec *r)
{
    r->newline = 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void rec_add(struct rec *r, const char *fmt, ...)
{
    va_list ap;

    if (r->items++ > 0)
        fputs(r->newline && !r->oneliner ? "\n   " : " ", r->f);
    r->newline = 0;
    va_start(ap, fmt);
    vfprintf(r->f, fmt, ap);
    va_end(ap);
}

static char *rec_end(struct rec *r, char **text)
{
    fputs(r->oneliner ? "\n" : "\n\n", r->f);
    return memstream_done(r->f, text);
}

/* ---- show job ---------------------------------------------------------------------------- */

#define D(job) jobfmt_desc(job)
#define TBUF 64

static void show_identity(struct rec *r, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char buf[TBUF];

    if (job->het_job_id)
        rec_add(r, "JobId=%" PRIu32 " HetJobId=%" PRIu32 " HetJobOffset=%" PRIu32, job->job_id,
                job->het_job_id, job->het_job_offset);
    else
        rec_add(r, "JobId=%" PRIu32, job->job_id);
    rec_add(r, "JobName=%s", jobfmt_or_null(d->name));
    if (job->het_job_id) {
        rec_line(r);
        rec_add(r, "HetJobIdSet=%s", jobfmt_het_id_set(job, buf, sizeof(buf)));
    }
    rec_line(r);
    rec_add(r, "UserId=%s(%" PRIu32 ")", jobfmt_user_name(ctx, d->user_id), d->user_id);
    rec_add(r, "GroupId=%s(%" PRIu32 ")", jobfmt_group_name(ctx, d->group_id), d->group_id);
    rec_add(r, "MCS_label=N/A");
    rec_line(r);
    rec_add(r, "Priority=%" PRIu32 " Nice=%" PRId32 " Account=%s QOS=%s", job->priority,
            d->has_nice ? d->nice : 0, jobfmt_or_null(d->account), jobfmt_or_null(d->qos));
}

/* scontrol's reason: the detail when there is one, with blanks made '_' so that the
 * value stays one word for parsers. */
static void show_reason(struct rec *r, const Tessera__JobRecord *job)
{
    const char *reason = jobfmt_reason_text(job);
    char *copy = strdup(reason);

    if (copy)
        for (char *p = copy; *p; p++)
            if (*p == ' ' || *p == '\t')
                *p = '_';
    rec_add(r, "Reason=%s", copy ? copy : reason);
    free(copy);
}

static void show_state(struct rec *r, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char run[32], limit[32], tmin[32], exit_code[16];

    rec_line(r);
    rec_add(r, "JobState=%s", jobstate_name(job->state));
    show_reason(r, job);
    rec_add(r, "Dependency=%s", jobfmt_or_null(d->dependency));
    rec_line(r);
    /* BatchFlag: every component of an sbatch job; salloc and srun jobs have none. */
    rec_add(r, "Requeue=%d Restarts=%" PRIu32 " BatchFlag=%d Reboot=0 ExitCode=%s",
            jobfmt_requeue(job), job->restarts, job->batch || jobfmt_is_set(d->script),
            jobfmt_exit_text(job->exit_code, exit_code, sizeof(exit_code)));
    if (ctx->details) {
        rec_line(r);
        rec_add(r, "DerivedExitCode=%s",
                jobfmt_exit_text(job->derived_exit_code, exit_code, sizeof(exit_code)));
    }
    timefmt_format_duration(jobtime_used(job, ctx->now), run, sizeof(run));
    timefmt_format_duration(job->time_limit < 0 ? TIMEFMT_UNLIMITED : job->time_limit, limit,
                            sizeof(limit));
    if (d->has_time_min && d->time_min > 0)
        timefmt_format_duration(d->time_min, tmin, sizeof(tmin));
    else
        snprintf(tmin, sizeof(tmin), "N/A");
    rec_line(r);
    rec_add(r, "RunTime=%s TimeLimit=%s TimeMin=%s", run, limit, tmin);
}

static void show_times(struct rec *r, const Tessera__JobRecord *job)
{
    char a[TBUF], b[TBUF], c[TBUF];
    int open_ended;
    int64_t end = jobfmt_end_time(job, &open_ended);

    rec_line(r);
    rec_add(r, "SubmitTime=%s", jobfmt_time_text(job->submit_time, "Unknown", a, TBUF));
    rec_add(r, "EligibleTime=%s", jobfmt_time_text(job->eligible_time, "Unknown", b, TBUF));
    /* Priority age accrues from eligibility: Slurm shows the same time for both. */
    rec_line(r);
    rec_add(r, "AccrueTime=%s", b);
    /* A pending job shows the scheduler's plan: its expected start, and that plus its
     * time limit as the end (Unknown when the limit is unlimited, as in Slurm). */
    rec_line(r);
    rec_add(r, "StartTime=%s EndTime=%s Deadline=%s",
            jobfmt_time_text(jobfmt_start_time(job), "Unknown", a, TBUF),
            jobfmt_time_text(open_ended ? 0 : end, "Unknown", b, TBUF),
            jobfmt_time_text(D(job)->deadline, "N/A", c, TBUF));
    if (D(job)->has_hold_until && D(job)->hold_until) /* Tessera's: activation holds */
        rec_add(r, "HoldUntil=%s", jobfmt_time_text(D(job)->hold_until, "None", a, TBUF));
    rec_line(r);
    rec_add(r, "SuspendTime=%s SecsPreSuspend=%" PRId64 " LastSchedEval=%s Scheduler=Main",
            jobfmt_time_text(job->suspend_time, "None", a, TBUF), job->pre_suspend_secs,
            jobfmt_time_text(job->last_sched_eval, "Unknown", b, TBUF));
}

/* "1" or "1-3" when a node range was asked for and nothing is allocated yet. */
static const char *num_nodes_text(const Tessera__JobRecord *job, char *buf, size_t len)
{
    const Tessera__JobDesc *d = D(job);
    uint32_t n = jobfmt_num_nodes(job);

    if (job->alloc_nodes == 0 && d->has_max_nodes && d->max_nodes > n)
        snprintf(buf, len, "%" PRIu32 "-%" PRIu32, n, d->max_nodes);
    else
        snprintf(buf, len, "%" PRIu32, n);
    return buf;
}

static void show_place(struct rec *r, const Tessera__JobRecord *job)
{
    const Tessera__JobDesc *d = D(job);
    char host[JOBFMT_VALUE_MAX];

    rec_line(r);
    /* The session id of the submitting shell is not kept: 0. */
    rec_add(r, "Partition=%s AllocNode:Sid=%s:0", jobfmt_or_null(d->partition),
            jobfmt_or_null(d->submit_host));
    rec_line(r);
    rec_add(r, "ReqNodeList=%s ExcNodeList=%s", jobfmt_or_null(d->nodelist),
            jobfmt_or_null(d->exclude));
    rec_line(r);
    rec_add(r, "NodeList=%s", jobfmt_or_empty(job->nodes));
    /* Slurm adds where the plan starts a pending job */
    if (job->state == TESSERA__JOB_STATE__JOB_PENDING && jobfmt_is_set(job->sched_nodes))
        rec_add(r, "SchedNodeList=%s", job->sched_nodes);
    if (jobfmt_batch_host(job, host, sizeof(host))[0]) {
        rec_line(r);
        rec_add(r, "BatchHost=%s", host);
    }
}

/* Allocations [from, to) hold the same CPU indices and memory on each node: one line. */
static size_t same_holds_end(const Tessera__JobRecord *job, size_t from)
{
    const Tessera__NodeAlloc *a = job->allocs[from];
    size_t to = from + 1;
    while (to < job->n_allocs && job->allocs[to]->mem_mb == a->mem_mb &&
           !strcmp(job->allocs[to]->cpu_ids ? job->allocs[to]->cpu_ids : "",
                   a->cpu_ids ? a->cpu_ids : ""))
        to++;
    return to;
}

/* -d: "JOB_GRES=(null)", then per group of consecutive nodes with the same CPU indices
 * and memory "  Nodes=n[1-2] CPU_IDs=0-1 Mem=100 GRES=" (Slurm indents it by five). */
static void show_node_details(struct rec *r, const Tessera__JobRecord *job)
{
    rec_line(r);
    rec_add(r, "JOB_GRES=(null)");
    for (size_t i = 0, next; i < job->n_allocs; i = next) {
        next = same_holds_end(job, i);
        struct hostlist *hl = hostlist_create();
        for (size_t k = i; hl && k < next; k++)
            if (hostlist_push(hl, job->allocs[k]->node) != TS_OK)
                break;
        char *names = hl ? hostlist_compress(hl) : NULL;
        hostlist_destroy(hl);
        const Tessera__NodeAlloc *a = job->allocs[i];
        rec_line(r);
        rec_add(r, "  Nodes=%s CPU_IDs=%s Mem=%" PRIu64 " GRES=", names ? names : a->node,
                a->cpu_ids ? a->cpu_ids : "", a->mem_mb);
        free(names);
    }
}

static void show_resources(struct rec *r, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);
    char nodes[32], tasks[16], tres[256], mem[32];
    int per_cpu;
    uint64_t mb = jobfmt_min_mem(job, &per_cpu);

    if (job->ntasks)
        snprintf(tasks, sizeof(tasks), "%" PRIu32, job->ntasks);
    else
        snprintf(tasks, sizeof(tasks), "N/A");
    rec_line(r);
    rec_add(r, "NumNodes=%s NumCPUs=%" PRIu32 " NumTasks=%s CPUs/Task=%" PRIu32
               " ReqB:S:C:T=0:0:*:*",
            num_nodes_text(job, nodes, sizeof(nodes)), jobfmt_num_cpus(job), tasks,
            job->cpus_per_task ? job->cpus_per_task : 1);
    rec_line(r);
    rec_add(r, "TRES=%s", jobfmt_tres(job, tres, sizeof(tres)));
    rec_line(r);
    rec_add(r, "Socks/Node=* NtasksPerN:B:S:C=%" PRIu32 ":0:*:* CoreSpec=*",
            d->has_ntasks_per_node ? d->ntasks_per_node : 0);
    if (ctx->details)
        show_node_details(r, job);
    rec_line(r);
    rec_add(r, "MinCPUsNode=%" PRIu32 " MinMemory%s=%s MinTmpDiskNode=0",
            jobfmt_min_cpus_node(job), per_cpu ? "CPU" : "Node",
            jobfmt_mem_text(mb, mem, sizeof(mem)));
    rec_line(r);
    rec_add(r, "Features=%s DelayBoot=00:00:00", jobfmt_or_null(d->constraint));
    rec_line(r);
    rec_add(r, "OverSubscribe=%s Contiguous=0 Licenses=%s Network=(null)",
            d->has_exclusive && d->exclusive ? "NO" : "OK", jobfmt_or_null(d->licenses));
}

static void show_stream(struct rec *r, const char *key, const Tessera__JobRecord *job,
                        enum stdpath_stream which, struct jobfmt_ctx *ctx)
{
    char *path = jobfmt_std_path(job, which, ctx);

    rec_line(r);
    rec_add(r, "%s=%s", key, path ? path : "(null)");
    free(path);
}

/* The generic resources asked for, each on its line where set, in Slurm's order. */
static void show_gres(struct rec *r, const Tessera__JobDesc *d)
{
    const struct {
        const char *key;
        const char *value;
    } lines[] = {
        {"CpusPerTres", d->cpus_per_tres}, {"MemPerTres", d->mem_per_tres},
        {"TresPerJob", d->tres_per_job},   {"TresPerNode", d->tres_per_node},
        {"TresPerTask", d->tres_per_task},
    };
    if (jobfmt_is_set(d->gres_flags)) {
        rec_line(r);
        rec_add(r, "GresEnforceBind=%s", strcmp(d->gres_flags, "enforce-binding") ? "No" : "Yes");
    }
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        if (jobfmt_is_set(lines[i].value)) {
            rec_line(r);
            rec_add(r, "%s=%s", lines[i].key, lines[i].value);
        }
    }
}

static void show_files(struct rec *r, const Tessera__JobRecord *job, struct jobfmt_ctx *ctx)
{
    const Tessera__JobDesc *d = D(job);

    rec_line(r);
    rec_add(r, "Command=%s", jobfmt_or_null(d->command));
    rec_line(r);
    rec_add(r, "WorkDir=%s", jobfmt_or_null(d->work_dir));
    if (jobfmt_is_set(d->comment)) {
        rec_line(r);
        rec_add(r, "Comment=%s ", d->comment); /* Slurm's trailing blank */
    }
    show_stream(r, "StdErr", job, STDPATH_STDERR, ctx);
    show_stream(r, "StdIn", job, STDPATH_STDIN, ctx);
    show_stream(r, "StdOut", job, STDPATH_STDOUT, ctx);
    rec_line(r);
    rec_add(r, "Power=");
    show_gres(r, d);
    if (jobfmt_is_set(d->mail_type)) {
        rec_line(r);
        rec_add(r, "MailUser=%s MailType=%s",
                jobfmt_is_set(d->mail_user) ? d->mail_user : jobfmt_user_name(ctx, d->user_id),
                d->mail_type);
    }
    /* Slurm ends a record with an empty indented line. */
    rec_line(r);
    rec_add(r, "%s", "");
}

char *jobfmt_show_job(const Tessera__JobRecord *job, struct jobfmt_ctx *ctx, int oneliner)
{
    char *text = NULL;
    size_t len = 0;
    struct rec r = {open_memstream(&text, &len), oneliner, 0, 0};

    if (!r.f)
        return NULL;
    show_identity(&r, job, ctx);
    show_state(&r, job, ctx);
    show_times(&r, job);
    show_place(&r, job);
    show_resources(&r, job, ctx);
    show_files(&r, job, ctx);
    return rec_end(&r, &text);
}

/* ---- show partition ---------------------------------------------------------------- */

static const char *limit_text(int64_t secs, const char *none, char *buf, size_t len)
{
    if (secs < 0)
        snprintf(buf, len, "%s", none);
    else
        timefmt_format_duration(secs, buf, len);
    return buf;
}

/* The lines that carry PartitionInfo's limits. */
static void partition_limits(struct rec *r, const Tessera__PartitionInfo *p)
{
    char deft[32], maxt[32], maxn[16];

    if (p->max_nodes == UINT32_MAX)
        snprintf(maxn, sizeof(maxn), "UNLIMITED");
    else
        snprintf(maxn, sizeof(maxn), "%" PRIu32, p->max_nodes);
    rec_line(r);
    rec_add(r, "AllocNodes=ALL Default=%s QoS=N/A", p->is_default ? "YES" : "NO");
    rec_line(r);
    rec_add(r, "DefaultTime=%s DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO",
            limit_text(p->default_time, "NONE", deft, sizeof(deft)));
    rec_line(r);
    rec_add(r, "MaxNodes=%s MaxTime=%s MinNodes=%" PRIu32 " LLN=NO MaxCPUsPerNode=UNLIMITED",
            maxn, limit_text(p->max_time, "UNLIMITED", maxt, sizeof(maxt)), p->min_nodes);
}

char *jobfmt_show_partition(const Tessera__PartitionInfo *p, int oneliner)
{
    char *text = NULL;
    size_t len = 0;
    struct rec r = {open_memstream(&text, &len), oneliner, 0, 0};

    if (!r.f)
        return NULL;
    rec_add(&r, "PartitionName=%s", jobfmt_or_null(p->name));
    rec_line(&r);
    rec_add(&r, "AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL");
    partition_limits(&r, p);
    rec_line(&r);
    rec_add(&r, "Nodes=%s", jobfmt_or_null(p->nodes));
    rec_line(&r);
    rec_add(&r, "PriorityJobFactor=1 PriorityTier=%" PRIu32
                " RootOnly=NO ReqResv=NO OverSubscribe=NO",
            p->priority_tier);
    rec_line(&r);
    rec_add(&r, "OverTimeLimit=NONE PreemptMode=OFF");
    rec_line(&r);
    rec_add(&r, "State=%s TotalCPUs=%" PRIu32 " TotalNodes=%" PRIu32 " SelectTypeParameters=NONE",
            jobfmt_is_set(p->state) ? p->state : "UP", p->total_cpus, p->total_nodes);
    rec_line(&r);
    rec_add(&r, "JobDefaults=(null)");
    rec_line(&r);
    rec_add(&r, "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED");
    rec_line(&r);
    /* Node memory is not part of PartitionInfo: TRES without mem. */
    rec_add(&r, "TRES=cpu=%" PRIu32 ",node=%" PRIu32 ",billing=%" PRIu32, p->total_cpus,
            p->total_nodes, p->total_cpus);
    return rec_end(&r, &text);
}
