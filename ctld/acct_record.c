/* Accounting records: keys, and records built from the controller's live ones. */
#include "ctld/acct_record.h"

#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/job/stdpath.h"
#include "ctld/store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

void acct_job_key(uint8_t out[ACCT_JOB_KEY_LEN], uint32_t job_id)
{
    store_key_u64(out, job_id);
}

void acct_step_key(uint8_t out[ACCT_STEP_KEY_LEN], uint32_t job_id, uint32_t step_id)
{
    store_key_u64(out, job_id);
    for (int i = 0; i < 4; i++)
        out[8 + i] = (uint8_t)(step_id >> (24 - 8 * i));
}

void acct_end_key(uint8_t out[ACCT_END_KEY_LEN], int64_t end_time, uint32_t job_id)
{
    store_key_u64(out, end_time > 0 ? (uint64_t)end_time : 0);
    store_key_u64(out + 8, job_id);
}

uint32_t acct_step_key_job(const void *key, size_t len)
{
    return len == ACCT_STEP_KEY_LEN ? (uint32_t)store_key_get_u64(key) : 0;
}

uint32_t acct_end_key_job(const void *key, size_t len)
{
    return len == ACCT_END_KEY_LEN ? (uint32_t)store_key_get_u64((const uint8_t *)key + 8) : 0;
}

int64_t acct_end_key_time(const void *key, size_t len)
{
    return len == ACCT_END_KEY_LEN ? (int64_t)store_key_get_u64(key) : 0;
}

static char *str(char *s)
{
    return s ? s : (char *)"";
}

void acct_job_from_record(Tessera__AcctJob *out, const Tessera__JobRecord *rec,
                          const char *cluster)
{
    const Tessera__JobDesc *d = rec->desc;
    out->job_id = rec->job_id;
    out->het_job_id = rec->het_job_id;
    out->het_job_offset = rec->het_job_offset;
    out->name = str(d->name);
    out->user_id = d->user_id;
    out->group_id = d->group_id;
    out->account = str(d->account);
    out->partition = str(d->partition);
    out->qos = str(d->qos);
    out->submit_time = rec->submit_time;
    out->eligible_time = rec->eligible_time;
    out->start_time = rec->start_time;
    out->end_time = rec->end_time;
    /* suspended: what the run lasted beyond the time it ran */
    if (rec->start_time && rec->end_time && jobstate_is_finished(rec->state)) {
        int64_t span = rec->end_time - rec->start_time;
        int64_t used = jobtime_used(rec, (time_t)rec->end_time);
        out->suspended_secs = span > used ? span - used : 0;
    }
    out->time_limit = rec->time_limit;
    out->alloc_cpus = rec->alloc_cpus;
    out->alloc_mem_mb = rec->alloc_mem_mb;
    out->alloc_nodes = rec->alloc_nodes;
    out->nodes = str(rec->nodes);
    /* A component that is still COMPLETING ends in final_state: that is what it ran to. */
    out->state = rec->state == TESSERA__JOB_STATE__JOB_COMPLETING ? rec->final_state : rec->state;
    out->exit_code = rec->exit_code;
    out->req_cpus = rec->min_cpus;
    out->req_mem_per_cpu = d->has_mem_per_cpu_mb && d->mem_per_cpu_mb;
    out->req_mem_mb = out->req_mem_per_cpu ? d->mem_per_cpu_mb : d->mem_per_node_mb;
    out->req_nodes = rec->min_nodes;
    out->ntasks = rec->ntasks;
    out->priority = rec->priority;
    out->reason = rec->reason;
    out->cancel_uid = rec->cancel_uid;
    out->restarts = rec->restarts;
    out->work_dir = str(d->work_dir);
    out->constraint = str(d->constraint);
    out->cluster = str((char *)cluster);
    out->submit_line = str(d->command);
}

void acct_step_from_record(Tessera__AcctStep *out, const Tessera__StepRecord *rec)
{
    out->job_id = rec->job_id;
    out->step_id = rec->step_id;
    out->het_job_id = rec->het_job_id;
    out->het_job_offset = rec->het_job_offset;
    out->name = str(rec->name);
    out->state = rec->state;
    out->start_time = rec->start_time;
    out->end_time = rec->end_time;
    out->exit_code = rec->exit_code;
    out->nodes = str(rec->nodes);
    out->nnodes = rec->nnodes;
    out->ntasks = rec->ntasks;
    out->cpus = rec->cpus;
    out->user_id = rec->user_id;
    out->usage = rec->usage;
}

/* The script's end as a state: its wait status when it ended by itself, else the job's
 * ending (Slurm shows a timed-out or cancelled job's script as CANCELLED). */
static Tessera__JobState batch_state(const Tessera__JobRecord *r, Tessera__JobState job_state)
{
    switch (job_state) {
    case TESSERA__JOB_STATE__JOB_PENDING:
    case TESSERA__JOB_STATE__JOB_RUNNING:
    case TESSERA__JOB_STATE__JOB_SUSPENDED:
        return TESSERA__JOB_STATE__JOB_RUNNING;
    case TESSERA__JOB_STATE__JOB_CANCELLED:
    case TESSERA__JOB_STATE__JOB_TIMEOUT:
    case TESSERA__JOB_STATE__JOB_DEADLINE:
    case TESSERA__JOB_STATE__JOB_PREEMPTED:
        return TESSERA__JOB_STATE__JOB_CANCELLED;
    case TESSERA__JOB_STATE__JOB_NODE_FAIL:
    case TESSERA__JOB_STATE__JOB_BOOT_FAIL:
    case TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY:
    case TESSERA__JOB_STATE__JOB_REQUEUED:
        return job_state;
    default:
        return WIFEXITED(r->exit_code) && WEXITSTATUS(r->exit_code) == 0
                   ? TESSERA__JOB_STATE__JOB_COMPLETED
                   : TESSERA__JOB_STATE__JOB_FAILED;
    }
}

void acct_batch_step_from_record(Tessera__AcctStep *out, const Tessera__JobRecord *leader)
{
    Tessera__JobState js = leader->state == TESSERA__JOB_STATE__JOB_COMPLETING
                               ? leader->final_state
                               : leader->state;
    out->job_id = leader->job_id;
    out->step_id = ACCT_STEP_BATCH;
    out->het_job_id = leader->het_job_id;
    out->het_job_offset = leader->het_job_offset;
    out->name = (char *)"batch";
    out->state = batch_state(leader, js);
    out->start_time = leader->start_time;
    out->end_time = jobstate_is_finished(leader->state) ? leader->end_time : 0;
    out->exit_code = leader->exit_code;
    out->nodes = str(leader->batch_host);
    out->nnodes = 1;
    out->ntasks = 1;
    out->cpus = 0;
    for (size_t i = 0; i < leader->n_allocs; i++)
        if (leader->batch_host && !strcmp(leader->allocs[i]->node, leader->batch_host))
            out->cpus = leader->allocs[i]->cpus;
    out->user_id = leader->desc->user_id;
    out->usage = leader->batch_usage;
}

uint8_t *acct_job_pack(const Tessera__AcctJob *j, size_t *len)
{
    *len = tessera__acct_job__get_packed_size(j);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        tessera__acct_job__pack(j, buf);
    return buf;
}

uint8_t *acct_step_pack(const Tessera__AcctStep *s, size_t *len)
{
    *len = tessera__acct_step__get_packed_size(s);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        tessera__acct_step__pack(s, buf);
    return buf;
}
