/* sacct's fields: one small formatter each, and the table in Slurm 22.05's order.
 *
 * What a field shows for a job row and for a step row follows Slurm's print.c: step rows
 * have no partition, user, group, priority or limit; Submit and Eligible of a step are its
 * start; a step without an end takes its job's. Fields Tessera keeps nothing for (energy,
 * disk and page statistics, reservations, wckeys, ...) are accepted and print empty, so
 * that scripts asking for them keep working. */
#include "common/format/acctfmt_int.h"

#include "common/format/jobfmt.h"
#include "common/job/jobstate.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#define J(row) ((row)->job)
#define S(row) ((row)->step)

static void put(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static void put_str(char *buf, size_t len, const char *s)
{
    put(buf, len, "%s", s ? s : "");
}

static void put_u64(char *buf, size_t len, uint64_t v)
{
    put(buf, len, "%" PRIu64, v);
}

static void put_time(char *buf, size_t len, int64_t t)
{
    if (timefmt_format_timestamp((time_t)t, buf, len) != TS_OK)
        put_str(buf, len, "");
}

static void put_duration(char *buf, size_t len, int64_t secs)
{
    if (timefmt_format_duration(secs < 0 ? 0 : secs, buf, len) != TS_OK)
        put_str(buf, len, "");
}

/* ---- shared computations ------------------------------------------------------------- */

int64_t acctfmt_end(const struct acctfmt_row *row)
{
    return S(row) && S(row)->end_time ? S(row)->end_time : J(row)->end_time;
}

int64_t acctfmt_elapsed(const struct acctfmt_row *row, time_t now)
{
    int64_t start = S(row) ? S(row)->start_time : J(row)->start_time;
    int64_t end = acctfmt_end(row);
    int64_t secs;

    if (start <= 0)
        return 0;
    secs = (end > 0 ? end : (int64_t)now) - start;
    if (!S(row))
        secs -= J(row)->suspended_secs;
    return secs < 0 ? 0 : secs;
}

void acctfmt_cpu_usec(const struct acctfmt_row *row, uint64_t *user, uint64_t *sys)
{
    *user = *sys = 0;
    if (S(row)) {
        if (S(row)->usage) {
            *user = S(row)->usage->user_usec;
            *sys = S(row)->usage->sys_usec;
        }
        return;
    }
    for (size_t i = 0; i < row->nsteps; i++) {
        const Tessera__AcctStep *st = row->steps[i];
        if (st->usage && jobstate_is_finished(st->state)) { /* as Slurm: finished steps */
            *user += st->usage->user_usec;
            *sys += st->usage->sys_usec;
        }
    }
}

uint64_t acctfmt_req_mem_mb(const Tessera__AcctJob *job)
{
    uint64_t units = job->req_mem_per_cpu ? job->req_cpus : job->req_nodes;

    return job->req_mem_mb * (units ? units : 1);
}

void acctfmt_job_id(const Tessera__AcctJob *job, const Tessera__AcctStep *step, int raw,
                    char *buf, size_t len)
{
    char head[32];
    char tail[16] = "";

    if (job->het_job_id && !raw)
        snprintf(head, sizeof(head), "%u+%u", job->het_job_id, job->het_job_offset);
    else
        snprintf(head, sizeof(head), "%u", job->job_id);
    if (step && step->step_id == ACCTFMT_STEP_BATCH)
        snprintf(tail, sizeof(tail), ".batch");
    else if (step)
        snprintf(tail, sizeof(tail), ".%u", step->step_id);
    put(buf, len, "%s%s", head, tail);
}

void acctfmt_exit_code(int32_t status, char *buf, size_t len)
{
    int code = 0;
    int sig = 0;

    if (WIFSIGNALED(status))
        sig = WTERMSIG(status);
    else if (WIFEXITED(status))
        code = WEXITSTATUS(status);
    if (code >= 128)
        code -= 128;
    put(buf, len, "%d:%d", code, sig);
}

void acctfmt_cpu_time(uint64_t usec, char *buf, size_t len)
{
    uint64_t secs = usec / 1000000;
    unsigned ms = (unsigned)(usec % 1000000 / 1000);
    unsigned s = (unsigned)(secs % 60);
    unsigned m = (unsigned)(secs / 60 % 60);
    unsigned h = (unsigned)(secs / 3600 % 24);
    uint64_t d = secs / 86400;

    if (d)
        put(buf, len, "%" PRIu64 "-%02u:%02u:%02u", d, h, m, s);
    else if (h)
        put(buf, len, "%02u:%02u:%02u", h, m, s);
    else if (ms)
        put(buf, len, "%02u:%02u.%03u", m, s, ms);
    else
        put(buf, len, "00:%02u:%02u", m, s);
}

void acctfmt_size_kb(uint64_t kb, char *buf, size_t len)
{
    static const char units[] = "KMGTPE";
    size_t u = 0;

    if (kb == 0) {
        put_str(buf, len, "0");
        return;
    }
    while (kb % 1024 == 0 && u + 1 < sizeof(units) - 1) {
        kb /= 1024;
        u++;
    }
    put(buf, len, "%" PRIu64 "%c", kb, units[u]);
}

/* The exit status that ranks worst: a signal over any exit code, then the larger. */
static int exit_rank(int32_t status)
{
    return WIFSIGNALED(status) ? 256 + WTERMSIG(status) : WEXITSTATUS(status);
}

int32_t acctfmt_derived_exit(const struct acctfmt_row *row)
{
    int32_t worst = 0;

    for (size_t i = 0; i < row->nsteps; i++) {
        const Tessera__AcctStep *st = row->steps[i];
        if (st->step_id != ACCTFMT_STEP_BATCH && exit_rank(st->exit_code) > exit_rank(worst))
            worst = st->exit_code;
    }
    return worst;
}

/* ---- the formatters ------------------------------------------------------------------- */

#define FIELD(name)                                                                      \
    static void name(const struct acctfmt_row *row, struct jobfmt_ctx *ctx, char *buf,     \
                     size_t len)
#define UNUSED_CTX (void)ctx

FIELD(f_none)
{
    (void)row;
    UNUSED_CTX;
    (void)buf;
    (void)len;
}

FIELD(f_account)
{
    UNUSED_CTX;
    put_str(buf, len, J(row)->account);
}

FIELD(f_alloc_cpus)
{
    UNUSED_CTX;
    put_u64(buf, len, S(row) ? S(row)->cpus : J(row)->alloc_cpus);
}

FIELD(f_alloc_nodes)
{
    UNUSED_CTX;
    put_u64(buf, len, S(row) ? S(row)->nnodes : J(row)->alloc_nodes);
}

static void tres(char *buf, size_t len, uint32_t cpus, uint64_t mem_mb, uint32_t nodes,
                 int billing)
{
    char mem[32] = "";
    char bill[32] = "";

    if (mem_mb) {
        char size[24];
        acctfmt_size_kb(mem_mb * 1024, size, sizeof(size));
        snprintf(mem, sizeof(mem), ",mem=%s", size);
    }
    if (billing)
        snprintf(bill, sizeof(bill), "billing=%u,", cpus);
    put(buf, len, "%scpu=%u%s,node=%u", bill, cpus, mem, nodes);
}

FIELD(f_alloc_tres)
{
    UNUSED_CTX;
    if (S(row))
        tres(buf, len, S(row)->cpus, 0, S(row)->nnodes, 0);
    else if (J(row)->start_time && J(row)->alloc_cpus)
        tres(buf, len, J(row)->alloc_cpus, J(row)->alloc_mem_mb, J(row)->alloc_nodes, 1);
}

FIELD(f_req_tres)
{
    UNUSED_CTX;
    if (!S(row))
        tres(buf, len, J(row)->req_cpus, acctfmt_req_mem_mb(J(row)),
             J(row)->req_nodes ? J(row)->req_nodes : 1, 1);
}

FIELD(f_cluster)
{
    UNUSED_CTX;
    put_str(buf, len, J(row)->cluster);
}

FIELD(f_constraints)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, J(row)->constraint);
}

static uint64_t row_cpus(const struct acctfmt_row *row)
{
    return S(row) ? S(row)->cpus : J(row)->alloc_cpus;
}

FIELD(f_cpu_time)
{
    put_duration(buf, len, acctfmt_elapsed(row, jobfmt_ctx_now(ctx)) * (int64_t)row_cpus(row));
}

FIELD(f_cpu_time_raw)
{
    put_u64(buf, len, (uint64_t)acctfmt_elapsed(row, jobfmt_ctx_now(ctx)) * row_cpus(row));
}

FIELD(f_derived_ec)
{
    UNUSED_CTX;
    if (!S(row))
        acctfmt_exit_code(acctfmt_derived_exit(row), buf, len);
}

FIELD(f_elapsed)
{
    put_duration(buf, len, acctfmt_elapsed(row, jobfmt_ctx_now(ctx)));
}

FIELD(f_elapsed_raw)
{
    put_u64(buf, len, (uint64_t)acctfmt_elapsed(row, jobfmt_ctx_now(ctx)));
}

FIELD(f_eligible)
{
    UNUSED_CTX;
    put_time(buf, len, S(row) ? S(row)->start_time : J(row)->eligible_time);
}

FIELD(f_end)
{
    UNUSED_CTX;
    put_time(buf, len, acctfmt_end(row));
}

FIELD(f_exit_code)
{
    UNUSED_CTX;
    acctfmt_exit_code(S(row) ? S(row)->exit_code : J(row)->exit_code, buf, len);
}

FIELD(f_gid)
{
    UNUSED_CTX;
    if (!S(row))
        put_u64(buf, len, J(row)->group_id);
}

FIELD(f_group)
{
    if (!S(row))
        put_str(buf, len, jobfmt_group_name(ctx, J(row)->group_id));
}

FIELD(f_het_job_id)
{
    UNUSED_CTX;
    if (J(row)->het_job_id)
        put_u64(buf, len, J(row)->het_job_id);
}

FIELD(f_het_job_offset)
{
    UNUSED_CTX;
    if (J(row)->het_job_id)
        put_u64(buf, len, J(row)->het_job_offset);
}

FIELD(f_job_id)
{
    UNUSED_CTX;
    acctfmt_job_id(J(row), S(row), 0, buf, len);
}

FIELD(f_job_id_raw)
{
    UNUSED_CTX;
    acctfmt_job_id(J(row), S(row), 1, buf, len);
}

FIELD(f_job_name)
{
    UNUSED_CTX;
    put_str(buf, len, S(row) ? S(row)->name : J(row)->name);
}

FIELD(f_max_rss)
{
    UNUSED_CTX;
    if (S(row) && S(row)->usage)
        acctfmt_size_kb(S(row)->usage->max_rss_kb, buf, len);
}

FIELD(f_max_rss_node)
{
    UNUSED_CTX;
    if (S(row) && S(row)->usage)
        put_str(buf, len, S(row)->usage->max_rss_node);
}

FIELD(f_max_rss_task)
{
    UNUSED_CTX;
    if (S(row) && S(row)->usage)
        put_u64(buf, len, S(row)->usage->max_rss_task);
}

FIELD(f_nnodes)
{
    UNUSED_CTX;
    if (S(row))
        put_u64(buf, len, S(row)->nnodes);
    else
        put_u64(buf, len, J(row)->alloc_nodes ? J(row)->alloc_nodes : J(row)->req_nodes);
}

FIELD(f_node_list)
{
    UNUSED_CTX;
    if (S(row))
        put_str(buf, len, S(row)->nodes);
    else
        put_str(buf, len, J(row)->nodes && *J(row)->nodes ? J(row)->nodes : "None assigned");
}

FIELD(f_ntasks)
{
    UNUSED_CTX;
    if (S(row))
        put_u64(buf, len, S(row)->ntasks);
}

FIELD(f_partition)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, J(row)->partition);
}

FIELD(f_priority)
{
    UNUSED_CTX;
    if (!S(row))
        put_u64(buf, len, J(row)->priority);
}

FIELD(f_qos)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, J(row)->qos);
}

FIELD(f_reason)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, jobreason_name(J(row)->reason));
}

FIELD(f_req_cpus)
{
    UNUSED_CTX;
    put_u64(buf, len, S(row) ? S(row)->cpus : J(row)->req_cpus);
}

FIELD(f_req_mem)
{
    UNUSED_CTX;
    if (!S(row))
        acctfmt_size_kb(acctfmt_req_mem_mb(J(row)) * 1024, buf, len);
}

FIELD(f_req_nodes)
{
    UNUSED_CTX;
    put_u64(buf, len, S(row) ? S(row)->nnodes : J(row)->req_nodes);
}

/* Slurm 22.05's "Reserved": how long the job waited from eligible to its start (or to its
 * end when it never started, or to now while pending). */
static int64_t reserved_secs(const Tessera__AcctJob *job, time_t now)
{
    int64_t until = job->start_time ? job->start_time : job->end_time ? job->end_time : now;

    if (job->eligible_time <= 0 || until < job->eligible_time)
        return 0;
    return until - job->eligible_time;
}

FIELD(f_reserved)
{
    if (!S(row))
        put_duration(buf, len, reserved_secs(J(row), jobfmt_ctx_now(ctx)));
}

FIELD(f_resv_cpu)
{
    if (!S(row))
        put_duration(buf, len, reserved_secs(J(row), jobfmt_ctx_now(ctx)) * J(row)->req_cpus);
}

FIELD(f_resv_cpu_raw)
{
    if (!S(row))
        put_u64(buf, len, (uint64_t)reserved_secs(J(row), jobfmt_ctx_now(ctx)) * J(row)->req_cpus);
}

FIELD(f_restarts)
{
    UNUSED_CTX;
    if (!S(row))
        put_u64(buf, len, J(row)->restarts);
}

FIELD(f_start)
{
    UNUSED_CTX;
    put_time(buf, len, S(row) ? S(row)->start_time : J(row)->start_time);
}

FIELD(f_state)
{
    UNUSED_CTX;
    if (S(row))
        put_str(buf, len, jobstate_name(S(row)->state));
    else if (J(row)->state == TESSERA__JOB_STATE__JOB_CANCELLED)
        put(buf, len, "CANCELLED by %u", J(row)->cancel_uid);
    else
        put_str(buf, len, jobstate_name(J(row)->state));
}

FIELD(f_submit)
{
    UNUSED_CTX;
    put_time(buf, len, S(row) ? S(row)->start_time : J(row)->submit_time);
}

FIELD(f_submit_line)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, J(row)->submit_line);
}

FIELD(f_suspended)
{
    UNUSED_CTX;
    put_duration(buf, len, S(row) ? 0 : J(row)->suspended_secs);
}

FIELD(f_system_cpu)
{
    uint64_t user, sys;

    UNUSED_CTX;
    acctfmt_cpu_usec(row, &user, &sys);
    acctfmt_cpu_time(sys, buf, len);
}

FIELD(f_user_cpu)
{
    uint64_t user, sys;

    UNUSED_CTX;
    acctfmt_cpu_usec(row, &user, &sys);
    acctfmt_cpu_time(user, buf, len);
}

FIELD(f_total_cpu)
{
    uint64_t user, sys;

    UNUSED_CTX;
    acctfmt_cpu_usec(row, &user, &sys);
    acctfmt_cpu_time(user + sys, buf, len);
}

/* Limits: "UNLIMITED"; "Partition_Limit" when the job had none of its own (0). */
FIELD(f_timelimit)
{
    UNUSED_CTX;
    if (S(row))
        return;
    if (J(row)->time_limit < 0)
        put_str(buf, len, "UNLIMITED");
    else if (J(row)->time_limit == 0)
        put_str(buf, len, "Partition_Limit");
    else
        put_duration(buf, len, J(row)->time_limit);
}

FIELD(f_timelimit_raw)
{
    UNUSED_CTX;
    if (S(row))
        return;
    if (J(row)->time_limit < 0)
        put_str(buf, len, "UNLIMITED");
    else if (J(row)->time_limit == 0)
        put_str(buf, len, "Partition_Limit");
    else
        put_u64(buf, len, (uint64_t)(J(row)->time_limit + 59) / 60); /* minutes */
}

FIELD(f_uid)
{
    UNUSED_CTX;
    if (!S(row))
        put_u64(buf, len, J(row)->user_id);
}

FIELD(f_user)
{
    if (!S(row))
        put_str(buf, len, jobfmt_user_name(ctx, J(row)->user_id));
}

FIELD(f_work_dir)
{
    UNUSED_CTX;
    if (!S(row))
        put_str(buf, len, J(row)->work_dir);
}

/* Slurm 22.05's list (sacct --helpformat) and default widths; HetJobID and HetJobOffset
 * are Tessera's. */
const struct acctfmt_field acctfmt_fields[] = {
    {"Account", 10, f_account},           {"AdminComment", 15, f_none},
    {"AllocCPUS", 10, f_alloc_cpus},      {"AllocNodes", 10, f_alloc_nodes},
    {"AllocTRES", 10, f_alloc_tres},      {"AssocID", 7, f_none},
    {"AveCPU", 10, f_none},               {"AveCPUFreq", 10, f_none},
    {"AveDiskRead", 14, f_none},          {"AveDiskWrite", 14, f_none},
    {"AvePages", 10, f_none},             {"AveRSS", 10, f_none},
    {"AveVMSize", 10, f_none},            {"BlockID", 16, f_none},
    {"Cluster", 10, f_cluster},           {"Comment", 14, f_none},
    {"Constraints", 19, f_constraints},   {"Container", 19, f_none},
    {"ConsumedEnergy", 14, f_none},       {"ConsumedEnergyRaw", 17, f_none},
    {"CPUTime", 10, f_cpu_time},          {"CPUTimeRAW", 10, f_cpu_time_raw},
    {"DBIndex", -21, f_none},             {"DerivedExitCode", 15, f_derived_ec},
    {"Elapsed", 10, f_elapsed},           {"ElapsedRaw", 10, f_elapsed_raw},
    {"Eligible", 19, f_eligible},         {"End", 19, f_end},
    {"ExitCode", 8, f_exit_code},         {"Flags", 19, f_none},
    {"GID", 6, f_gid},                    {"Group", 9, f_group},
    {"JobID", -12, f_job_id},             {"JobIDRaw", -12, f_job_id_raw},
    {"JobName", 10, f_job_name},          {"Layout", 9, f_none},
    {"MaxDiskRead", 12, f_none},          {"MaxDiskReadNode", 15, f_none},
    {"MaxDiskReadTask", 15, f_none},      {"MaxDiskWrite", 12, f_none},
    {"MaxDiskWriteNode", 16, f_none},     {"MaxDiskWriteTask", 16, f_none},
    {"MaxPages", 8, f_none},              {"MaxPagesNode", 12, f_none},
    {"MaxPagesTask", 14, f_none},         {"MaxRSS", 10, f_max_rss},
    {"MaxRSSNode", 10, f_max_rss_node},   {"MaxRSSTask", 10, f_max_rss_task},
    {"MaxVMSize", 10, f_none},            {"MaxVMSizeNode", 14, f_none},
    {"MaxVMSizeTask", 14, f_none},        {"McsLabel", 12, f_none},
    {"MinCPU", 10, f_none},               {"MinCPUNode", 10, f_none},
    {"MinCPUTask", 10, f_none},           {"NCPUS", 10, f_alloc_cpus},
    {"NNodes", 8, f_nnodes},              {"NodeList", 15, f_node_list},
    {"NTasks", 8, f_ntasks},              {"Priority", 10, f_priority},
    {"Partition", 10, f_partition},       {"QOS", 10, f_qos},
    {"QOSRAW", 6, f_none},                {"Reason", 22, f_reason},
    {"ReqCPUFreq", 10, f_none},           {"ReqCPUFreqGov", 13, f_none},
    {"ReqCPUFreqMax", 13, f_none},        {"ReqCPUFreqMin", 13, f_none},
    {"ReqCPUS", 8, f_req_cpus},           {"ReqMem", 10, f_req_mem},
    {"ReqNodes", 8, f_req_nodes},         {"ReqTRES", 10, f_req_tres},
    {"Reservation", 20, f_none},          {"ReservationId", 8, f_none},
    {"Reserved", 10, f_reserved},         {"ResvCPU", 10, f_resv_cpu},
    {"ResvCPURAW", 10, f_resv_cpu_raw},   {"Restarts", 8, f_restarts},
    {"Start", 19, f_start},               {"State", 10, f_state},
    {"Submit", 19, f_submit},             {"SubmitLine", 20, f_submit_line},
    {"Suspended", 10, f_suspended},       {"SystemComment", 15, f_none},
    {"SystemCPU", 10, f_system_cpu},      {"Timelimit", 10, f_timelimit},
    {"TimelimitRaw", 10, f_timelimit_raw}, {"TotalCPU", 10, f_total_cpu},
    {"TRESUsageInAve", 14, f_none},       {"TRESUsageInMax", 14, f_none},
    {"TRESUsageInMaxNode", 18, f_none},   {"TRESUsageInMaxTask", 18, f_none},
    {"TRESUsageInMin", 14, f_none},       {"TRESUsageInMinNode", 18, f_none},
    {"TRESUsageInMinTask", 18, f_none},   {"TRESUsageInTot", 14, f_none},
    {"TRESUsageOutAve", 15, f_none},      {"TRESUsageOutMax", 15, f_none},
    {"TRESUsageOutMaxNode", 19, f_none},  {"TRESUsageOutMaxTask", 19, f_none},
    {"TRESUsageOutMin", 15, f_none},      {"TRESUsageOutMinNode", 19, f_none},
    {"TRESUsageOutMinTask", 19, f_none},  {"TRESUsageOutTot", 15, f_none},
    {"UID", 6, f_uid},                    {"User", 9, f_user},
    {"UserCPU", 10, f_user_cpu},          {"WCKey", 10, f_none},
    {"WCKeyID", 10, f_none},              {"WorkDir", 20, f_work_dir},
    {"HetJobID", 10, f_het_job_id},       {"HetJobOffset", 12, f_het_job_offset},
};
const size_t acctfmt_nfields = sizeof(acctfmt_fields) / sizeof(acctfmt_fields[0]);
