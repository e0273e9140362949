/* Job formatting: the context (clock and name caches) and the values that squeue,
 * scontrol and the JSON document compute alike. The three outputs live in
 * jobfmt_squeue.c, jobfmt_show.c and jobfmt_json.c. */
#include "common/format/jobfmt.h"

#include "common/format/jobfmt_int.h"
#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/text/hostlist.h"
#include "common/text/timefmt.h"
#include "common/util/arith.h"
#include "common/util/hashmap.h"
#include "common/util/namecache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- context and names --------------------------------------------------------------- */

struct jobfmt_ctx *jobfmt_ctx_create(time_t now)
{
    struct jobfmt_ctx *ctx = calloc(1, sizeof(*ctx));

    if (!ctx)
        return NULL;
    ctx->now = now;
    ctx->users = hashmap_create();
    ctx->groups = hashmap_create();
    if (!ctx->users || !ctx->groups) {
        jobfmt_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

time_t jobfmt_ctx_now(const struct jobfmt_ctx *ctx)
{
    return ctx->now;
}

static void free_names(struct hashmap *map)
{
    size_t cursor = 0;
    const void *key;
    size_t klen;
    void *value;

    if (!map)
        return;
    while (hashmap_next(map, &cursor, &key, &klen, &value))
        free(value);
    hashmap_destroy(map);
}

void jobfmt_ctx_destroy(struct jobfmt_ctx *ctx)
{
    if (!ctx)
        return;
    free_names(ctx->users);
    free_names(ctx->groups);
    free(ctx);
}

/* The name, looked up once per context (through the name cache when the context has
 * one); an unknown id is kept as its number so that a queue of a thousand jobs of a
 * deleted user asks NSS once. */
static const char *cached_name(struct jobfmt_ctx *ctx, struct hashmap *map,
                               enum namecache_kind kind, uint32_t id)
{
    char *name = map ? hashmap_get_u32(map, id) : NULL;
    char buf[NAMECACHE_NAME_MAX];

    if (name)
        return name;
    name = strdup(namecache_name(ctx->names, kind, id, buf, sizeof(buf)));
    if (!name)
        return "?";
    if (!map || hashmap_put_u32(map, id, name) != 0) {
        free(name);
        return "?";
    }
    return name;
}

void jobfmt_ctx_set_names(struct jobfmt_ctx *ctx, struct namecache *names)
{
    ctx->names = names;
}

void jobfmt_ctx_set_details(struct jobfmt_ctx *ctx, int level)
{
    ctx->details = level;
}

const char *jobfmt_user_name(struct jobfmt_ctx *ctx, uint32_t uid)
{
    return cached_name(ctx, ctx->users, NAMECACHE_USER, uid);
}

const char *jobfmt_group_name(struct jobfmt_ctx *ctx, uint32_t gid)
{
    return cached_name(ctx, ctx->groups, NAMECACHE_GROUP, gid);
}

/* ---- shared values -------------------------------------------------------------------- */

static const Tessera__JobDesc empty_desc = TESSERA__JOB_DESC__INIT;

const Tessera__JobDesc *jobfmt_desc(const Tessera__JobRecord *job)
{
    return job->desc ? job->desc : &empty_desc;
}

int jobfmt_is_set(const char *s)
{
    return s && *s;
}

const char *jobfmt_or_null(const char *s)
{
    return jobfmt_is_set(s) ? s : "(null)";
}

const char *jobfmt_or_empty(const char *s)
{
    return s ? s : "";
}

static int has_allocation(const Tessera__JobRecord *job)
{
    return job->alloc_nodes > 0;
}

uint32_t jobfmt_num_nodes(const Tessera__JobRecord *job)
{
    return has_allocation(job) ? job->alloc_nodes : job->min_nodes;
}

uint32_t jobfmt_num_cpus(const Tessera__JobRecord *job)
{
    return has_allocation(job) ? job->alloc_cpus : job->min_cpus;
}

uint32_t jobfmt_min_cpus_node(const Tessera__JobRecord *job)
{
    const Tessera__JobDesc *d = jobfmt_desc(job);
    uint32_t cpt = job->cpus_per_task ? job->cpus_per_task : 1;

    if (d->has_ntasks_per_node && d->ntasks_per_node > 0)
        return arith_mul_u32_sat(cpt, d->ntasks_per_node);
    return cpt;
}

const char *jobfmt_mem_text(uint64_t mb, char *buf, size_t len)
{
    static const char units[] = "MGTP";
    size_t u = 0;

    if (mb == 0) {
        snprintf(buf, len, "0");
        return buf;
    }
    while (mb % 1024 == 0 && u + 1 < sizeof(units) - 1) {
        mb /= 1024;
        u++;
    }
    snprintf(buf, len, "%" PRIu64 "%c", mb, units[u]);
    return buf;
}

uint64_t jobfmt_min_mem(const Tessera__JobRecord *job, int *per_cpu)
{
    const Tessera__JobDesc *d = jobfmt_desc(job);

    *per_cpu = d->has_mem_per_cpu_mb;
    if (d->has_mem_per_cpu_mb)
        return d->mem_per_cpu_mb;
    return d->has_mem_per_node_mb ? d->mem_per_node_mb : 0;
}

/* Memory of the whole job: the allocation, else the request scaled to nodes or CPUs. */
static uint64_t total_mem(const Tessera__JobRecord *job)
{
    int per_cpu;
    uint64_t mb;

    if (has_allocation(job) && job->alloc_mem_mb)
        return job->alloc_mem_mb;
    mb = jobfmt_min_mem(job, &per_cpu);
    return mb * (per_cpu ? jobfmt_num_cpus(job) : jobfmt_num_nodes(job));
}

const char *jobfmt_tres(const Tessera__JobRecord *job, char *buf, size_t len)
{
    uint32_t cpus = jobfmt_num_cpus(job);
    uint64_t mem = total_mem(job);
    char memtext[32];

    /* billing is Slurm's default weighting: one unit per CPU. */
    if (mem)
        snprintf(buf, len, "cpu=%" PRIu32 ",mem=%s,node=%" PRIu32 ",billing=%" PRIu32, cpus,
                 jobfmt_mem_text(mem, memtext, sizeof(memtext)), jobfmt_num_nodes(job), cpus);
    else
        snprintf(buf, len, "cpu=%" PRIu32 ",node=%" PRIu32 ",billing=%" PRIu32, cpus,
                 jobfmt_num_nodes(job), cpus);
    return buf;
}

const char *jobfmt_batch_host(const Tessera__JobRecord *job, char *buf, size_t len)
{
    struct hostlist *hl = NULL;

    buf[0] = '\0';
    if (!jobfmt_is_set(job->nodes))
        return buf;
    if (hostlist_expand(job->nodes, &hl) == 0 && hostlist_count(hl) > 0)
        snprintf(buf, len, "%s", hostlist_nth(hl, 0));
    else /* not a host list: show it as it is rather than nothing */
        snprintf(buf, len, "%s", job->nodes);
    hostlist_destroy(hl);
    return buf;
}

const char *jobfmt_reason_text(const Tessera__JobRecord *job)
{
    return jobfmt_is_set(job->state_desc) ? job->state_desc : jobreason_name(job->reason);
}

const char *jobfmt_het_id_set(const Tessera__JobRecord *job, char *buf, size_t len)
{
    if (job->het_size > 1)
        snprintf(buf, len, "%" PRIu32 "-%" PRIu32, job->het_job_id,
                 job->het_job_id + job->het_size - 1);
    else
        snprintf(buf, len, "%" PRIu32, job->het_job_id);
    return buf;
}

const char *jobfmt_time_text(int64_t t, const char *unset, char *buf, size_t len)
{
    if (t == 0 || timefmt_format_timestamp((time_t)t, buf, len) != 0)
        snprintf(buf, len, "%s", unset);
    return buf;
}

static int planned(const Tessera__JobRecord *job)
{
    return job->state == TESSERA__JOB_STATE__JOB_PENDING && job->expected_start != 0;
}

int64_t jobfmt_start_time(const Tessera__JobRecord *job)
{
    if (job->state != TESSERA__JOB_STATE__JOB_PENDING)
        return job->start_time;
    /* a job waiting for its --begin time starts no earlier (Slurm shows that time, held
     * or not) */
    int64_t begin = job->desc && job->desc->has_begin_time ? job->desc->begin_time : 0;
    return begin > job->expected_start ? begin : job->expected_start;
}

/* A job that runs (or is suspended) ends when its limit is used up: from its start, or
 * from its last resume or suspension less what it had used by then (jobtime_used).
 * Its time limit may have been changed since it started (scontrol update). */
static int64_t running_end(const Tessera__JobRecord *job, int *open_ended)
{
    if (job->time_limit < 0) {
        *open_ended = 1;
        return 0;
    }
    if (job->suspend_time > 0)
        return job->suspend_time - job->pre_suspend_secs + job->time_limit;
    return job->start_time + job->time_limit;
}

int64_t jobfmt_end_time(const Tessera__JobRecord *job, int *open_ended)
{
    *open_ended = 0;
    int runs = job->state == TESSERA__JOB_STATE__JOB_RUNNING ||
               job->state == TESSERA__JOB_STATE__JOB_SUSPENDED;
    if (runs && !job->end_time && job->start_time > 0)
        return running_end(job, open_ended);
    if (!planned(job))
        return job->end_time;
    if (job->time_limit < 0) {
        *open_ended = 1;
        return 0;
    }
    return job->expected_start + job->time_limit;
}

const char *jobfmt_exit_text(int32_t status, char *buf, size_t len)
{
    snprintf(buf, len, "%d:%d", (status >> 8) & 0xff, status & 0x7f);
    return buf;
}

int jobfmt_requeue(const Tessera__JobRecord *job)
{
    const Tessera__JobDesc *d = jobfmt_desc(job);

    return d->has_requeue ? d->requeue != 0 : 1;
}

/* ---- sbatch --test-only ----------------------------------------------------------------- */

char *jobfmt_test_only(const Tessera__SubmitResponse *r)
{
    char *text = NULL;
    size_t len = 0;
    char when[64];
    int het = r->ncomponents > 1;
    int has_part = !het && jobfmt_is_set(r->partition);
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return NULL;
    /* Slurm names the id the job would have had; without one (0), "Job" alone. */
    fputs("Job", f);
    if (r->job_id)
        fprintf(f, " %" PRIu32, r->job_id);
    if (r->expected_start == 0) {
        /* Slurm always names a time; a controller that could not plan the job says so. */
        fprintf(f, " would be accepted%s%s, but no start time could be estimated",
                has_part ? " in partition " : "", has_part ? r->partition : "");
    } else {
        jobfmt_time_text(r->expected_start, "Unknown", when, sizeof(when));
        /* Slurm's two wordings: a het job's components are summed, without partition. */
        fprintf(f, " to start at %s using %" PRIu32 " processors on %s%s", when, r->cpus,
                het ? "" : "nodes ", jobfmt_or_empty(r->nodes));
        if (has_part)
            fprintf(f, " in partition %s", r->partition);
    }
    return memstream_done(f, &text);
}

struct user_lookup {
    struct jobfmt_ctx *ctx;
    uint32_t uid;
};

static const char *lookup_user(void *arg)
{
    struct user_lookup *u = arg;
    return jobfmt_user_name(u->ctx, u->uid);
}

char *jobfmt_std_path(const Tessera__JobRecord *job, enum stdpath_stream which,
                      struct jobfmt_ctx *ctx)
{
    struct user_lookup u = {.ctx = ctx, .uid = jobfmt_desc(job)->user_id};
    return stdpath_shown(job, which, lookup_user, &u);
}
