/* The batch script's environment (docs/03-env.md §2, the batch script's context).
 *
 * Built in two parts, in this order:
 *   1. the submitter's variables as --export says (component 0's environment), in the
 *      submitter's order, minus every name this module owns (below);
 *   2. the computed variables, in the order of the table `vars`: first the unsuffixed
 *      ones (component 0 and the whole job), then for a het job every per-component
 *      variable with _HET_GROUP_<n> for n = 0, 1, ..., then the same with Slurm's older
 *      _PACK_GROUP_<n> spelling, which Slurm 22.05 still sets and old scripts read.
 *
 * Owned names. A job submitted from inside another job carries the outer job's SLURM_*
 * variables in its environment. Slurm 22.05 overwrites only the variables it computes for
 * the new job, so the outer SLURM_HET_SIZE, SLURM_JOB_ACCOUNT, SLURM_MEM_PER_NODE,
 * SLURM_NTASKS_PER_NODE, ... leak into it (checked on the reference cluster) and srun in
 * the inner script then runs with the outer job's settings. Tessera does better: every
 * name the table can produce (with or without a _HET_GROUP_<n>/_PACK_GROUP_<n> suffix),
 * and the step, task and array identities of `stale[]`, is dropped from the submitter's
 * environment, so such a variable is always this job's own or absent.
 *
 * The values follow what Slurm 22.05 puts in a batch script's environment on the
 * reference cluster (sbatch -N2 -n3, het jobs, -c, --ntasks-per-node, --mem,
 * --mem-per-cpu, -J/-A/-p, --export forms). Deliberate differences, all where Slurm is
 * wrong or incomplete:
 *   - the owned-names rule above;
 *   - every computed variable is set whatever --export says; with --export=NONE (and
 *     lists without ALL) the node daemon puts the user's login environment under them
 *     (noded/loginenv.h);
 *   - in a het job the unsuffixed SLURM_CPUS_PER_TASK and SLURM_NTASKS_PER_NODE describe
 *     component 0 (Slurm sets only the suffixed ones), and each component's account and
 *     memory are its own (Slurm showed a later component's -A and --mem on component 0);
 *   - docs/03-env.md §1.4-1.5: SLURM_JOB_NODES_HET_GROUP_<n>, and suffixed forms of the
 *     obsolete SLURM_JOBID, SLURM_NNODES and SLURM_NODELIST (Slurm's salloc has them);
 *   - SLURM_JOB_START_TIME and SLURM_JOB_END_TIME (Slurm 23.02) when the record has them;
 *   - the node list is sorted and the per-node counts follow its order even when the
 *     allocation lists nodes in another order.
 *
 * SLURM_TASK_PID, the script's pid, is known only after the fork: the node daemon sets it.
 *
 * Slurm variables deliberately not produced:
 *   SLURM_PRIO_PROCESS   sbatch's scheduling priority (getpriority): not in the record; a
 *                        command that wants it passes it in the environment, where it is
 *                        kept like any SLURM_* variable of the submitter.
 *   SLURM_CONF           Slurm's configuration path: Tessera's commands do not read it.
 *   SLURM_WORKING_CLUSTER  "cluster:host:port:protocol:plugin" for Slurm's own commands.
 *   SLURM_NODE_ALIASES   cloud node addresses; Slurm 22.05 even prints "(null)" there.
 *   SLURM_JOB_RESERVATION, SLURM_ARRAY_*, SLURM_NETWORK, SLURM_ACCTG_FREQ, SLURM_OVERCOMMIT,
 *   SLURM_DISTRIBUTION, SLURM_*_BIND*, SBATCH_MEM_BIND*: options Tessera's job
 *                        description does not have.
 */
#include "common/job/jobenv.h"

#include "common/conf/conf.h"
#include "common/text/hostlist.h"
#include "common/util/arith.h"
#include "common/util/envbuf.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------------------------
 * Per-component facts, computed once
 * ------------------------------------------------------------------------------------ */

struct comp {
    const Tessera__JobRecord *rec;
    const Tessera__JobDesc *desc;  /* never NULL (an empty one when the record has none) */
    char *nodelist;                /* sorted, compressed */
    char *first_node;              /* the first of them, NULL when there is none */
    uint32_t nnodes;
    uint32_t ntasks;               /* 0: not known (neither -n nor --ntasks-per-node) */
    char *cpus_per_node;           /* "4(x2),2" */
    char *tasks_per_node;
    uint32_t *cpus;                /* per node, in nodelist order */
};

struct state {
    const struct jobenv_context *ctx;
    int salloc;                    /* salloc's context rather than a batch script's */
    struct comp *comps;
    size_t n;
    int het;
    const char *node;              /* the node running the script */
    uint32_t cpus_on_node;         /* component 0's CPUs there */
    int have_cpus_on_node;
};

static const Tessera__JobDesc empty_desc = TESSERA__JOB_DESC__INIT;

static int nonempty(const char *s)
{
    return s && *s;
}

/* ------------------------------------------------------------------------------------
 * Count lists: "4(x2),2"
 * ------------------------------------------------------------------------------------ */

/* snprintf-style: writes what fits (always terminated when len > 0) and returns the full
 * length, so callers can size a buffer first. */
static size_t format_counts(const uint32_t *counts, size_t n, char *buf, size_t len)
{
    size_t need = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n;) {
        size_t reps = 1;
        while (i + reps < n && counts[i + reps] == counts[i])
            reps++;
        char item[40];
        int w = reps > 1 ? snprintf(item, sizeof(item), "%s%" PRIu32 "(x%zu)", i ? "," : "",
                                    counts[i], reps)
                         : snprintf(item, sizeof(item), "%s%" PRIu32, i ? "," : "", counts[i]);
        if (need < len)
            snprintf(buf + need, len - need, "%s", item);
        need += (size_t)w;
        i += reps;
    }
    return need;
}

const char *jobenv_compress_counts(const uint32_t *counts, size_t n, char *buf, size_t len)
{
    format_counts(counts, n, buf, len);
    return buf;
}

static char *counts_dup(const uint32_t *counts, size_t n)
{
    size_t need = format_counts(counts, n, NULL, 0) + 1;
    char *s = malloc(need);
    if (s)
        format_counts(counts, n, s, need);
    return s;
}

/* ------------------------------------------------------------------------------------
 * Task layout: SLURM_TASKS_PER_NODE
 * ------------------------------------------------------------------------------------ */

/* Slurm's block layout for a batch job (slurm_step_layout_create with SLURM_DIST_BLOCK,
 * without CR_PACK_NODES): each node holds cpus/cpus_per_task tasks; tasks are dealt out
 * round by round, one per node that still has room, and once every node is full the rest
 * go round-robin over all nodes. Dealing by rounds is what gives 2,1 for 3 tasks on nodes
 * of 2 and 1 CPUs, and 3,2 (not 4,1) for 5 tasks on two nodes of 4 (reference jobs 267
 * and 305). The layout is recomputed here
 * rather than taken from NodeAlloc.tasks so that the script sees Slurm's numbers whatever
 * placement the select plugin chose. Without a task count the layout is the capacity,
 * as in Slurm. */
static void layout_block(const uint32_t *cpus, size_t n, uint32_t cpus_per_task,
                         uint32_t ntasks, uint32_t *tasks)
{
    uint32_t maxcap = 0;
    uint64_t placed = 0;
    for (size_t i = 0; i < n; i++) {
        tasks[i] = 0;
        if (cpus[i] / cpus_per_task > maxcap)
            maxcap = cpus[i] / cpus_per_task;
    }
    if (ntasks == 0) { /* not given: as many as fit */
        for (size_t i = 0; i < n; i++)
            tasks[i] = cpus[i] / cpus_per_task;
        return;
    }
    for (uint32_t round = 0; round < maxcap && placed < ntasks; round++)
        for (size_t i = 0; i < n && placed < ntasks; i++)
            if (round < cpus[i] / cpus_per_task) {
                tasks[i]++;
                placed++;
            }
    if (placed < ntasks && n > 0) { /* overcommitted: spread the rest evenly */
        uint64_t rest = ntasks - placed;
        for (size_t i = 0; i < n; i++)
            tasks[i] += (uint32_t)(rest / n + (i < rest % n ? 1 : 0));
    }
}

/* ------------------------------------------------------------------------------------
 * Building the per-component facts
 * ------------------------------------------------------------------------------------ */

/* Sort the component's nodes as SLURM_JOB_NODELIST shows them (natural order, as
 * Slurm's node bitmaps do) and put the CPU and task counts in that same order. */
static int comp_init(struct comp *c, const Tessera__JobRecord *rec)
{
    int rc = TS_ENOMEM;
    struct hostlist *hl = hostlist_create();
    struct hashmap *byname = hashmap_create();
    uint32_t *tasks = NULL;

    c->rec = rec;
    c->desc = rec->desc ? rec->desc : &empty_desc;
    if (!hl || !byname)
        goto out;
    for (size_t i = 0; i < rec->n_allocs; i++) {
        const Tessera__NodeAlloc *a = rec->allocs[i];
        if (!a || !nonempty(a->node))
            continue;
        int err = hostlist_push(hl, a->node);
        if (err == TS_ENOMEM)
            goto out;
        if (err != TS_OK) /* not a host name: the controller never sends one */
            continue;
        if (hashmap_put_str(byname, a->node, (void *)a) != TS_OK)
            goto out;
    }
    hostlist_uniq(hl);
    size_t nn = hostlist_count(hl);
    c->nnodes = (uint32_t)nn;
    if (!(c->nodelist = hostlist_compress(hl)) ||
        (nn && !(c->first_node = strdup(hostlist_nth(hl, 0)))))
        goto out;
    c->cpus = calloc(nn ? nn : 1, sizeof(*c->cpus));
    tasks = calloc(nn ? nn : 1, sizeof(*tasks));
    if (!c->cpus || !tasks)
        goto out;
    for (size_t i = 0; i < nn; i++) {
        const Tessera__NodeAlloc *a = hashmap_get_str(byname, hostlist_nth(hl, i));
        c->cpus[i] = a ? a->cpus : 0;
    }

    /* Slurm's SLURM_NTASKS: -n, or else --ntasks-per-node times the nodes (sbatch's own
     * SLURM_NTASKS_PER_NODE makes slurmd compute it so); otherwise unknown and unset. */
    const Tessera__JobDesc *d = c->desc;
    if (d->has_ntasks && d->ntasks)
        c->ntasks = d->ntasks;
    else if (d->has_ntasks_per_node && d->ntasks_per_node)
        c->ntasks = arith_mul_u32_sat(d->ntasks_per_node, c->nnodes);
    uint32_t cpt = rec->cpus_per_task ? rec->cpus_per_task
                   : (d->has_cpus_per_task && d->cpus_per_task) ? d->cpus_per_task
                                                                : 1;
    layout_block(c->cpus, nn, cpt, c->ntasks, tasks);
    if (!(c->cpus_per_node = counts_dup(c->cpus, nn)) ||
        !(c->tasks_per_node = counts_dup(tasks, nn)))
        goto out;
    rc = TS_OK;
out:
    free(tasks);
    hashmap_destroy(byname);
    hostlist_destroy(hl);
    return rc;
}

static void comp_fini(struct comp *c)
{
    free(c->nodelist);
    free(c->first_node);
    free(c->cpus_per_node);
    free(c->tasks_per_node);
    free(c->cpus);
}

/* The node running the script: the caller's (the daemon knows where it is), else the
 * record's batch host, else component 0's first node (docs/03-env.md §2.1: the script runs
 * there). */
static void find_batch_node(struct state *st)
{
    const struct comp *c0 = &st->comps[0];
    st->node = nonempty(st->ctx->node_name)   ? st->ctx->node_name
               : nonempty(c0->rec->batch_host) ? c0->rec->batch_host
                                               : c0->first_node;
    for (size_t i = 0; st->node && i < c0->rec->n_allocs; i++) {
        const Tessera__NodeAlloc *a = c0->rec->allocs[i];
        if (a && a->node && strcmp(a->node, st->node) == 0) {
            st->cpus_on_node = a->cpus;
            st->have_cpus_on_node = 1;
            break;
        }
    }
}

/* ------------------------------------------------------------------------------------
 * The table of computed variables
 * ------------------------------------------------------------------------------------ */

enum scope {
    JOB,      /* once, unsuffixed: the whole job, the batch step or the script's node */
    COMP,     /* unsuffixed for component 0, and suffixed for every component of a het job */
    HET_ONLY, /* only suffixed (a het job's alias with no unsuffixed twin) */
};

/* Row flags */
#define F_HET 1u     /* het jobs only */
#define F_NOPACK 2u  /* no _PACK_GROUP_ alias (a name Slurm never had) */
#define F_BATCH 4u   /* the batch script's only: its node, its task, its user */
#define F_LEADER 8u  /* salloc of a het job: also unsuffixed (the leader's id) */

/* A row's value for component c (component 0 for JOB rows): a pointer to text (into buf
 * for numbers, or to a string that outlives the call), or NULL when the variable is not
 * set for this job. */
typedef const char *(*value_fn)(const struct state *st, const struct comp *c, char *buf,
                                size_t len);

struct envvar {
    const char *name;
    enum scope scope;
    unsigned flags;
    value_fn value;
};

static const char *fmt_u64(char *buf, size_t len, uint64_t v)
{
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static const char *v_cluster(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(st->ctx->cluster) ? st->ctx->cluster : NULL;
}
static const char *v_job_id(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return fmt_u64(b, l, c->rec->job_id);
}
static const char *v_name(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->desc->name; /* sbatch always names a job ("wrap", the script's name) */
}
static const char *v_nnodes(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return fmt_u64(b, l, c->nnodes);
}
static const char *v_nodelist(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->nodelist;
}
static const char *v_partition(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(c->desc->partition) ? c->desc->partition : NULL;
}
/* Slurm sets the account (and QOS) only when the job has one: without accounting, only
 * when -A was given. */
static const char *v_account(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(c->desc->account) ? c->desc->account : NULL;
}
static const char *v_qos(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(c->desc->qos) ? c->desc->qos : NULL;
}
static const char *v_cpus_per_node(const struct state *st, const struct comp *c, char *b,
                                   size_t l)
{
    return c->cpus_per_node;
}
/* Only when -c was given: srun inside the script reads it as its own -c. */
static const char *v_cpus_per_task(const struct state *st, const struct comp *c, char *b,
                                   size_t l)
{
    return c->desc->has_cpus_per_task ? fmt_u64(b, l, c->desc->cpus_per_task) : NULL;
}
static const char *v_ntasks(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->ntasks ? fmt_u64(b, l, c->ntasks) : NULL;
}
static const char *v_ntasks_per_node(const struct state *st, const struct comp *c, char *b,
                                     size_t l)
{
    return c->desc->has_ntasks_per_node ? fmt_u64(b, l, c->desc->ntasks_per_node) : NULL;
}
static const char *v_tasks_per_node(const struct state *st, const struct comp *c, char *b,
                                    size_t l)
{
    return c->tasks_per_node;
}
/* As requested (Slurm shows the request, not what a node's share came to). */
static const char *v_mem_per_node(const struct state *st, const struct comp *c, char *b,
                                  size_t l)
{
    return c->desc->has_mem_per_node_mb ? fmt_u64(b, l, c->desc->mem_per_node_mb) : NULL;
}
static const char *v_mem_per_cpu(const struct state *st, const struct comp *c, char *b,
                                 size_t l)
{
    return c->desc->has_mem_per_cpu_mb ? fmt_u64(b, l, c->desc->mem_per_cpu_mb) : NULL;
}
/* Slurm 23.02's variables; harmless earlier, and known from the record. */
static const char *v_start_time(const struct state *st, const struct comp *c, char *b,
                                size_t l)
{
    return c->rec->start_time > 0 ? fmt_u64(b, l, (uint64_t)c->rec->start_time) : NULL;
}
static const char *v_end_time(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->rec->end_time > 0 ? fmt_u64(b, l, (uint64_t)c->rec->end_time) : NULL;
}
static const char *v_het_size(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return fmt_u64(b, l, st->n);
}
static const char *v_uid(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->desc->has_user_id ? fmt_u64(b, l, c->desc->user_id) : NULL;
}
static const char *v_gid(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return c->desc->has_group_id ? fmt_u64(b, l, c->desc->group_id) : NULL;
}
static const char *v_user(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(st->ctx->user_name) ? st->ctx->user_name : NULL;
}
static const char *v_submit_dir(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return nonempty(c->desc->submit_dir) ? c->desc->submit_dir : NULL;
}
static const char *v_submit_host(const struct state *st, const struct comp *c, char *b,
                                 size_t l)
{
    return nonempty(c->desc->submit_host) ? c->desc->submit_host : NULL;
}
/* sbatch passes --export on to srun in the script this way; only when it says something
 * else than the default (Slurm leaves it out for an explicit --export=ALL too). */
static const char *v_export(const struct state *st, const struct comp *c, char *b, size_t l)
{
    const char *x = c->desc->export_env;
    return nonempty(x) && strcasecmp(x, "ALL") != 0 ? x : NULL;
}
/* Slurm's sign that the script starts from the user's login environment (the node daemon
 * builds it: noded/loginenv.h). */
static const char *v_get_user_env(const struct state *st, const struct comp *c, char *b,
                                  size_t l)
{
    return jobenv_login_wanted(c->desc) ? "1" : NULL;
}
/* Only when --open-mode was given: "a" or "t", for srun's output files. */
static const char *v_open_mode(const struct state *st, const struct comp *c, char *b, size_t l)
{
    const char *m = c->desc->open_mode;
    if (!nonempty(m))
        return NULL;
    return strcasecmp(m, "append") == 0 || strcasecmp(m, "a") == 0 ? "a" : "t";
}
static const char *v_node(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return st->node;
}
static const char *v_cpus_on_node(const struct state *st, const struct comp *c, char *b,
                                  size_t l)
{
    return st->have_cpus_on_node ? fmt_u64(b, l, st->cpus_on_node) : NULL;
}
/* The batch script is task 0 of the batch step on node 0. */
static const char *v_zero(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return "0";
}
/* Without a topology plugin Slurm gives the node name and the pattern "node". */
static const char *v_topo_pattern(const struct state *st, const struct comp *c, char *b,
                                  size_t l)
{
    return st->node ? "node" : NULL;
}
static const char *v_batch(const struct state *st, const struct comp *c, char *b, size_t l)
{
    return "BATCH";
}

/* In output order. The obsolete spellings (SLURM_JOBID, SLURM_NNODES, SLURM_NODELIST,
 * SLURM_NPROCS) are kept because MPI libraries and old scripts read them; they are
 * per-component like their modern twins, so docs/03-env.md §1.3's "every per-component variable
 * exists with the suffix" gives them suffixes too (Slurm's salloc does the same). */
static const struct envvar vars[] = {
    {"SLURM_CLUSTER_NAME", JOB, 0, v_cluster},
    {"SLURM_JOB_ID", COMP, F_LEADER, v_job_id},
    {"SLURM_JOBID", COMP, F_LEADER, v_job_id},
    {"SLURM_JOB_NAME", COMP, 0, v_name},
    {"SLURM_JOB_NUM_NODES", COMP, 0, v_nnodes},
    {"SLURM_JOB_NODES", HET_ONLY, F_NOPACK, v_nnodes}, /* docs/03-env.md §1.4 */
    {"SLURM_NNODES", COMP, 0, v_nnodes},
    {"SLURM_JOB_NODELIST", COMP, 0, v_nodelist},
    {"SLURM_NODELIST", COMP, 0, v_nodelist},
    {"SLURM_JOB_PARTITION", COMP, 0, v_partition},
    {"SLURM_JOB_ACCOUNT", COMP, 0, v_account},
    {"SLURM_JOB_QOS", COMP, 0, v_qos},
    {"SLURM_JOB_CPUS_PER_NODE", COMP, 0, v_cpus_per_node},
    {"SLURM_CPUS_PER_TASK", COMP, 0, v_cpus_per_task},
    {"SLURM_NTASKS", COMP, 0, v_ntasks},
    {"SLURM_NPROCS", COMP, 0, v_ntasks},
    {"SLURM_NTASKS_PER_NODE", COMP, 0, v_ntasks_per_node},
    {"SLURM_TASKS_PER_NODE", COMP, 0, v_tasks_per_node},
    {"SLURM_MEM_PER_NODE", COMP, 0, v_mem_per_node},
    {"SLURM_MEM_PER_CPU", COMP, 0, v_mem_per_cpu},
    {"SLURM_JOB_START_TIME", COMP, 0, v_start_time},
    {"SLURM_JOB_END_TIME", COMP, 0, v_end_time},
    {"SLURM_HET_SIZE", JOB, F_HET, v_het_size},
    {"SLURM_PACK_SIZE", JOB, F_HET, v_het_size},
    {"SLURM_JOB_UID", JOB, F_BATCH, v_uid},
    {"SLURM_JOB_GID", JOB, F_BATCH, v_gid},
    {"SLURM_JOB_USER", JOB, F_BATCH, v_user},
    {"SLURM_SUBMIT_DIR", JOB, 0, v_submit_dir},
    {"SLURM_SUBMIT_HOST", JOB, 0, v_submit_host},
    {"SLURM_EXPORT_ENV", JOB, F_BATCH, v_export},
    {"SLURM_GET_USER_ENV", JOB, F_BATCH, v_get_user_env},
    {"SLURM_OPEN_MODE", JOB, F_BATCH, v_open_mode},
    {"SLURMD_NODENAME", JOB, F_BATCH, v_node},
    {"SLURM_CPUS_ON_NODE", JOB, F_BATCH, v_cpus_on_node},
    {"SLURM_NODEID", JOB, F_BATCH, v_zero},
    {"SLURM_PROCID", JOB, F_BATCH, v_zero},
    {"SLURM_LOCALID", JOB, F_BATCH, v_zero},
    {"SLURM_GTIDS", JOB, F_BATCH, v_zero},
    {"SLURM_TOPOLOGY_ADDR", JOB, F_BATCH, v_node},
    {"SLURM_TOPOLOGY_ADDR_PATTERN", JOB, F_BATCH, v_topo_pattern},
    /* Not SLURM_*, but Slurm sets both for every batch script (HOSTNAME is the node's
     * name in the cluster, not gethostname's). */
    {"ENVIRONMENT", JOB, F_BATCH, v_batch},
    {"HOSTNAME", JOB, F_BATCH, v_node},
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))

/* Identities of an outer job's steps, tasks and array that are never right for a new job,
 * though this module does not set them (see "Owned names" above). Entries ending in '_'
 * are prefixes. */
static const char *const stale[] = {
    "SLURM_STEP_",      "SLURM_STEPID",      "SLURM_SRUN_COMM_PORT", "SLURM_LAUNCH_NODE_IPADDR",
    "SLURM_TASK_PID",   "SLURM_ARRAY_",      "SLURM_NODE_ALIASES",   "SLURM_JOB_RESERVATION",
};

/* ------------------------------------------------------------------------------------
 * Owned names
 * ------------------------------------------------------------------------------------ */

/* Length of name without a trailing _HET_GROUP_<n> or _PACK_GROUP_<n>; len when there is
 * none. */
static size_t strip_group_suffix(const char *name, size_t len)
{
    size_t d = len;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == len)
        return len;
    static const char *const tags[] = {"_HET_GROUP_", "_PACK_GROUP_"};
    for (size_t i = 0; i < 2; i++) {
        size_t tl = strlen(tags[i]);
        if (d > tl && memcmp(name + d - tl, tags[i], tl) == 0)
            return d - tl;
    }
    return len;
}

/* salloc keeps the user's HOSTNAME and ENVIRONMENT: only a batch script gets Slurm's. */
static int is_owned(const char *name, size_t len, int salloc)
{
    size_t base = strip_group_suffix(name, len);
    for (size_t i = 0; i < NVARS; i++) {
        size_t vl = strlen(vars[i].name);
        if (vl != base || memcmp(name, vars[i].name, vl) != 0)
            continue;
        if (salloc && (vars[i].flags & F_BATCH) && strncmp(name, "SLURM", 5) != 0)
            continue;
        if (base == len ? vars[i].scope != HET_ONLY : vars[i].scope != JOB)
            return 1;
    }
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
        size_t sl = strlen(stale[i]);
        int prefix = stale[i][sl - 1] == '_';
        if (prefix ? len >= sl && memcmp(name, stale[i], sl) == 0
                   : len == sl && memcmp(name, stale[i], sl) == 0)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------
 * The output array: names unique, a later value for a name replaces the earlier one in
 * place (Slurm's env_array_merge)
 * ------------------------------------------------------------------------------------ */

/* The environment being built, and which owned names apply. */
struct outenv {
    struct envbuf b;
    int salloc;            /* the owned names of salloc's context */
    int keep_owned;        /* jobenv_exported: the allocation's variables are right */
};

/* A submitter's "NAME=value" entry, unless it is malformed or an owned name. */
static void env_put_entry(struct outenv *e, const char *entry)
{
    const char *eq = entry ? strchr(entry, '=') : NULL;
    if (!eq || eq == entry || (!e->keep_owned && is_owned(entry, (size_t)(eq - entry), e->salloc)))
        return;
    envbuf_put(&e->b, entry, (size_t)(eq - entry), eq + 1);
}

/* ------------------------------------------------------------------------------------
 * --export
 * ------------------------------------------------------------------------------------ */

static const char *env_lookup(const Tessera__JobDesc *d, const char *name, size_t nlen)
{
    const char *found = NULL;
    for (size_t i = 0; i < d->n_environment; i++) {
        const char *s = d->environment[i];
        if (s && strncmp(s, name, nlen) == 0 && s[nlen] == '=')
            found = s; /* the last one, as the merge keeps the last value */
    }
    return found;
}

static void export_all(struct outenv *e, const Tessera__JobDesc *d)
{
    for (size_t i = 0; i < d->n_environment; i++)
        env_put_entry(e, d->environment[i]);
}

/* What ties a job to its cluster goes with it whatever --export says: Slurm's SLURM_*
 * variables and TESSERA_CONF, so the commands inside the job (srun) reach the same
 * controller. */
static int cluster_var(const char *entry)
{
    return strncmp(entry, "SLURM_", 6) == 0 ||
           (strncmp(entry, CONF_ENV, strlen(CONF_ENV)) == 0 && entry[strlen(CONF_ENV)] == '=');
}

static void export_slurm(struct outenv *e, const Tessera__JobDesc *d)
{
    for (size_t i = 0; i < d->n_environment; i++)
        if (d->environment[i] && cluster_var(d->environment[i]))
            env_put_entry(e, d->environment[i]);
}

/* One item of an --export list: "ALL", "NAME=value" or "NAME". */
static void export_item(struct outenv *e, const Tessera__JobDesc *d, const char *tok,
                        size_t len)
{
    if (len == 0)
        return;
    if (len == 3 && strncasecmp(tok, "ALL", 3) == 0) {
        export_all(e, d);
        return;
    }
    char *item = strndup(tok, len);
    if (!item) {
        e->b.oom = 1;
        return;
    }
    if (strchr(item, '=')) {
        env_put_entry(e, item);
    } else {
        const char *s = env_lookup(d, item, len);
        if (s)
            env_put_entry(e, s);
    }
    free(item);
}

/* The next item of an --export list at *p: commas inside quotes do not split, and quotes
 * around a whole item are removed ('FOO=a,b'). 0 at the end. */
static int next_item(const char **p, const char **item, size_t *len)
{
    if (!**p)
        return 0;
    const char *start = *p;
    char quote = 0;
    for (; **p && (quote || **p != ','); (*p)++) {
        if (quote && **p == quote)
            quote = 0;
        else if (!quote && (**p == '\'' || **p == '"'))
            quote = **p;
    }
    *len = (size_t)(*p - start);
    if (*len >= 2 && (start[0] == '\'' || start[0] == '"') && start[*len - 1] == start[0]) {
        start++;
        *len -= 2;
    }
    if (**p == ',')
        (*p)++;
    *item = start;
    return 1;
}

static int is_none(const char *x)
{
    return strcasecmp(x, "NONE") == 0 || strcasecmp(x, "NIL") == 0;
}

/* Slurm's rules (sbatch 22.05, _env_merge_filter): absent, empty or ALL: everything;
 * NONE: only the SLURM_* variables (and TESSERA_CONF); otherwise a list of ALL, NAME and
 * NAME=value in that order, followed by the SLURM_* variables. NIL is Slurm 23.02's
 * NONE without the login environment (jobenv_login_wanted). */
static void export_env(struct outenv *e, const Tessera__JobDesc *d)
{
    const char *x = d->export_env;
    if (!nonempty(x) || strcasecmp(x, "ALL") == 0) {
        export_all(e, d);
        return;
    }
    if (!is_none(x)) {
        const char *item;
        size_t len;
        while (next_item(&x, &item, &len))
            export_item(e, d, item, len);
    }
    export_slurm(e, d);
}

int jobenv_login_wanted(const Tessera__JobDesc *d)
{
    if (d->has_get_user_env && d->get_user_env)
        return 1;
    const char *x = d->export_env;
    if (!nonempty(x) || strcasecmp(x, "NIL") == 0)
        return 0;
    if (strcasecmp(x, "NONE") == 0)
        return 1;
    const char *item;
    size_t len;
    while (next_item(&x, &item, &len))
        if (len == 3 && strncasecmp(item, "ALL", 3) == 0)
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------
 * Putting it together
 * ------------------------------------------------------------------------------------ */

static void put_var(struct outenv *e, const struct state *st, const struct envvar *v,
                    size_t comp, const char *tag)
{
    char buf[32], name[128];
    const char *value = v->value(st, &st->comps[comp], buf, sizeof(buf));
    if (!value)
        return;
    if (!tag) {
        envbuf_put(&e->b, v->name, strlen(v->name), value);
        return;
    }
    int w = snprintf(name, sizeof(name), "%s_%s_GROUP_%zu", v->name, tag, comp);
    if (w > 0 && (size_t)w < sizeof(name)) /* always: the table's names are short */
        envbuf_put(&e->b, name, (size_t)w, value);
}

/* Whether row v is set unsuffixed. docs/03-env.md §3.3: in salloc's context a het job has only the
 * job-wide rows and the leader's id unsuffixed. */
static int unsuffixed(const struct state *st, const struct envvar *v)
{
    if (v->scope == HET_ONLY || (!st->het && (v->flags & F_HET)))
        return 0;
    if (st->salloc && (v->flags & F_BATCH))
        return 0;
    if (st->salloc && st->het)
        return v->scope == JOB || (v->flags & F_LEADER);
    return 1;
}

/* salloc of a het job: SLURM_NTASKS is the sum when every component gave a count. */
static void put_total_tasks(struct outenv *e, const struct state *st)
{
    uint64_t total = 0;
    for (size_t c = 0; c < st->n; c++) {
        if (!st->comps[c].desc->has_ntasks || !st->comps[c].desc->ntasks)
            return;
        total += st->comps[c].desc->ntasks;
    }
    char buf[32];
    envbuf_put(&e->b, "SLURM_NTASKS", strlen("SLURM_NTASKS"), fmt_u64(buf, sizeof(buf), total));
}

static void put_computed(struct outenv *e, const struct state *st)
{
    for (size_t i = 0; i < NVARS; i++)
        if (unsuffixed(st, &vars[i]))
            put_var(e, st, &vars[i], 0, NULL);
    if (st->salloc && st->het)
        put_total_tasks(e, st);
    if (!st->het)
        return;
    static const char *const tags[] = {"HET", "PACK"};
    for (size_t t = 0; t < 2; t++)
        for (size_t c = 0; c < st->n; c++)
            for (size_t i = 0; i < NVARS; i++) {
                if (vars[i].scope == JOB || (t == 1 && (vars[i].flags & F_NOPACK)))
                    continue;
                put_var(e, st, &vars[i], c, tags[t]);
            }
}

/* NULL also when there is no component 0 to describe. A NULL ctx is an empty one.
 * envp NULL: the batch context (the submitter's environment as --export says); else
 * salloc's context, starting from envp. */
static char **build(const Tessera__JobRecord *const *components, size_t n, char *const *envp,
                    const struct jobenv_context *ctx)
{
    static const struct jobenv_context no_ctx = {NULL, NULL, NULL};
    struct state st = {.ctx = ctx ? ctx : &no_ctx, .n = n, .salloc = envp != NULL};
    struct outenv e = {.salloc = envp != NULL};
    char **env = NULL;

    if (!components || n == 0 || !components[0])
        return NULL;
    st.het = n > 1 || components[0]->het_job_id != 0;
    if (!(st.comps = calloc(n, sizeof(*st.comps))) || envbuf_init(&e.b) != TS_OK)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (!components[i] || comp_init(&st.comps[i], components[i]) != TS_OK)
            goto out; /* comp_fini below frees what it got: the array starts zeroed */
    find_batch_node(&st);

    if (envp)
        for (size_t i = 0; envp[i]; i++)
            env_put_entry(&e, envp[i]);
    else
        export_env(&e, st.comps[0].desc);
    put_computed(&e, &st);
    env = envbuf_take(&e.b);
out:
    for (size_t i = 0; i < n && st.comps; i++)
        comp_fini(&st.comps[i]);
    free(st.comps);
    envbuf_release(&e.b);
    return env;
}

char **jobenv_batch(const Tessera__JobRecord *const *components, size_t n,
                    const struct jobenv_context *ctx)
{
    return build(components, n, NULL, ctx);
}

char **jobenv_exported(const Tessera__JobDesc *d)
{
    struct outenv e = {.keep_owned = 1};
    if (envbuf_init(&e.b) != TS_OK)
        return NULL;
    export_env(&e, d);
    return envbuf_take(&e.b);
}

char **jobenv_salloc(const Tessera__JobRecord *const *components, size_t n, char *const *envp,
                     const struct jobenv_context *ctx)
{
    static char *const none[] = {NULL};
    return build(components, n, envp ? envp : none, ctx);
}

void jobenv_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}
