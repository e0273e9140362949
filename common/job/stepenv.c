/* A step task's environment (docs/03-env.md §4, the step tasks' context).
 *
 * Built in two parts, in this order:
 *   1. srun's environment (base_env), in its order, minus every name this module sets for
 *      this task and every owned name (below);
 *   2. the computed variables, in the order of the tables below: the step merged over its
 *      components (SLURM_NTASKS is the total, SLURM_JOB_NODELIST the union of the
 *      components' allocations, SLURM_NODELIST the step's nodes), for a het job each of
 *      the step's components with _HET_GROUP_<n> and then _PACK_GROUP_<n>, then the task:
 *      its node, its ranks, srun's address and PMI.
 *
 * Owned names. srun's environment comes from a batch script, from salloc, or from
 * another step's task (srun inside srun), so it carries identities that are wrong for
 * this task: the outer step's SLURM_STEP_ID, SLURM_PROCID, SLURM_NODEID, SLURM_GTIDS, an
 * outer PMI server's PMI_FD and PMI_PORT, a batch script's SLURM_NTASKS... Slurm 22.05
 * overwrites only the variables it sets, so an outer SLURM_CPUS_PER_TASK or PMI_PORT
 * leaks into the task (and a PMI client then talks to the wrong server). Tessera drops
 * every unsuffixed name of the tables below and every name of `stale[]` (SLURM_STEP_*,
 * SLURM_TASK_PID, PMI identities) whether or not it sets it this time, so such a variable
 * is always this task's own or absent. Suffixed variables (_HET_GROUP_<n>) of components
 * outside the step pass through: they describe the allocation, as salloc set them.
 *
 * The values follow what Slurm 22.05 gave rank 0 of "salloc -N1 : -N2 srun
 * --het-group=0,1 env" on the reference cluster. Deliberate differences:
 *   - the owned-names rule above;
 *   - SLURM_JOB_ID / SLURM_JOBID are the leader's id also in a step on later components
 *     only (docs/03-env.md §1.1);
 *   - SLURM_JOB_NODES_HET_GROUP_<n> (docs/03-env.md §1.4) beside Slurm's
 *     SLURM_JOB_NUM_NODES_HET_GROUP_<n>;
 *   - SLURM_CPUS_PER_TASK only when the task's component has more than one CPU per task
 *     (Slurm sets it whenever -c was given: the layout does not tell -c1 from no -c, and
 *     1 is what a missing value means), and then always the task's own component's
 *     (Slurm 22.05 leaves it out of a het job's steps, and gives every task of the parts
 *     of one allocation the last part's);
 *   - on a node shared by components, SLURM_LOCALID and SLURM_GTIDS count every task of
 *     the step there (docs/04-steps.md §4.3: one step daemon a node), and SLURM_CPUS_ON_NODE is the
 *     step's CPUs there over all components.
 *
 * Slurm variables deliberately not produced:
 *   SLURM_JOB_NAME, SLURM_JOB_CPUS_PER_NODE, SLURM_JOB_ACCOUNT, SLURM_SUBMIT_DIR, ...
 *                        the layout does not carry them: they pass through from srun's
 *                        environment (a batch script's or salloc's), as Slurm's
 *                        SLURM_*_HET_GROUP_<n> do.
 *   SLURM_TASK_PID       the task's pid: known only after the fork, by the step daemon.
 *   SLURM_DISTRIBUTION, SLURM_CPU_BIND*, SLURM_MEM_BIND*, SLURM_STEP_RESV_PORTS,
 *   SLURM_MPI_TYPE       options Tessera's srun does not have (Tessera serves PMI-1 only).
 *   SLURM_UMASK, SLURM_PRIO_PROCESS, SLURM_WORKING_CLUSTER, SLURM_CONF
 *                        srun's own: srun puts them in base_env when it has them.
 *   PMI_JOBID, PMI_SPAWNED, PMI_APPNUM
 *                        Slurm's PMI-2 plugin's; MPICH's PMI-1 client reads only PMI_FD,
 *                        PMI_RANK and PMI_SIZE (they are dropped from base_env, though).
 */
#include "common/job/stepenv.h"

#include "common/job/jobenv.h"
#include "common/util/envbuf.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------
 * The task, resolved once
 * ------------------------------------------------------------------------------------ */

struct state {
    const Tessera__StepLayout *l;
    const struct stepenv_task *t;
    const Tessera__StepLayoutNode *node;
    uint32_t rank;                          /* global */
    const Tessera__StepLayoutComponent *comp; /* the task's; NULL if the layout is odd */
    char *tasks_per_node;                   /* "2(x2),1" over the step's nodes */
    char *gtids;                            /* "0,1,2": the node's ranks */
};

static int nonempty(const char *s)
{
    return s && *s;
}

static char *counts_per_node(const Tessera__StepLayout *l)
{
    uint32_t *counts = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(*counts));
    size_t len = 20 * l->n_nodes + 32; /* an item is at most 17 characters a node */
    char *s = malloc(len);
    if (counts && s) {
        for (size_t m = 0; m < l->n_nodes; m++)
            counts[m] = (uint32_t)l->nodes[m]->n_ranks;
        jobenv_compress_counts(counts, l->n_nodes, s, len);
    } else {
        free(s);
        s = NULL;
    }
    free(counts);
    return s;
}

static char *rank_list(const Tessera__StepLayoutNode *node)
{
    char *s = malloc(11 * node->n_ranks + 1), *p = s;
    if (!s)
        return NULL;
    *p = '\0';
    for (size_t k = 0; k < node->n_ranks; k++)
        p += sprintf(p, "%s%" PRIu32, k ? "," : "", node->ranks[k]);
    return s;
}

/* TS_EINVAL when the task is not in the layout. */
static int state_init(struct state *st, const Tessera__StepLayout *l,
                      const struct stepenv_task *t)
{
    if (!l || !t || t->node >= l->n_nodes || !l->nodes[t->node] ||
        t->local >= l->nodes[t->node]->n_ranks)
        return TS_EINVAL;
    st->l = l;
    st->t = t;
    st->node = l->nodes[t->node];
    st->rank = st->node->ranks[t->local];
    if (t->local < st->node->n_rank_components &&
        st->node->rank_components[t->local] < l->n_components)
        st->comp = l->components[st->node->rank_components[t->local]];
    if (!(st->tasks_per_node = counts_per_node(l)) || !(st->gtids = rank_list(st->node)))
        return TS_ENOMEM;
    return TS_OK;
}

static void state_fini(struct state *st)
{
    free(st->tasks_per_node);
    free(st->gtids);
}

/* ------------------------------------------------------------------------------------
 * The tables of computed variables
 * ------------------------------------------------------------------------------------ */

/* A value: text (in buf for numbers, or a string that outlives the call), or NULL when
 * the variable is not set. */
typedef const char *(*value_fn)(const struct state *st, char *buf, size_t len);

struct envvar {
    const char *name;
    value_fn value;
};

static const char *fmt_u64(char *buf, size_t len, uint64_t v)
{
    snprintf(buf, len, "%" PRIu64, v);
    return buf;
}

static const char *v_cluster(const struct state *st, char *b, size_t n)
{
    return nonempty(st->l->cluster) ? st->l->cluster : NULL;
}
static const char *v_job_id(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->job_id);
}
static const char *v_het_size(const struct state *st, char *b, size_t n)
{
    return st->l->het_size ? fmt_u64(b, n, st->l->het_size) : NULL;
}
static const char *v_ntasks(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->ntasks);
}
static const char *v_nnodes(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->n_nodes);
}
static const char *v_job_nnodes(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->job_nnodes);
}
static const char *v_job_nodelist(const struct state *st, char *b, size_t n)
{
    return st->l->job_nodelist;
}
static const char *v_nodelist(const struct state *st, char *b, size_t n)
{
    return st->l->nodelist;
}
static const char *v_step_id(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->step_id);
}
static const char *v_tasks_per_node(const struct state *st, char *b, size_t n)
{
    return st->tasks_per_node;
}
/* The first component of the step (Slurm: the leader's in a step on component 0). */
static const char *v_partition(const struct state *st, char *b, size_t n)
{
    const Tessera__StepLayout *l = st->l;
    return l->n_components && nonempty(l->components[0]->partition)
               ? l->components[0]->partition
               : NULL;
}
static const char *v_procid(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->rank);
}
static const char *v_localid(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->t->local);
}
static const char *v_nodeid(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->t->node);
}
static const char *v_gtids(const struct state *st, char *b, size_t n)
{
    return st->gtids;
}
static const char *v_node(const struct state *st, char *b, size_t n)
{
    return st->node->name;
}
/* Without a topology plugin Slurm gives the node name and the pattern "node". */
static const char *v_topo_pattern(const struct state *st, char *b, size_t n)
{
    return "node";
}
static const char *v_cpus_on_node(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->node->cpus);
}
static const char *v_cpus_per_task(const struct state *st, char *b, size_t n)
{
    return st->comp && st->comp->cpus_per_task > 1 ? fmt_u64(b, n, st->comp->cpus_per_task)
                                                   : NULL;
}
static const char *v_uid(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->uid);
}
static const char *v_gid(const struct state *st, char *b, size_t n)
{
    return fmt_u64(b, n, st->l->gid);
}
static const char *v_user(const struct state *st, char *b, size_t n)
{
    return nonempty(st->l->user_name) ? st->l->user_name : NULL;
}
static const char *v_srun_host(const struct state *st, char *b, size_t n)
{
    return nonempty(st->t->srun_host) ? st->t->srun_host : NULL;
}
static const char *v_srun_port(const struct state *st, char *b, size_t n)
{
    return nonempty(st->t->srun_host) ? fmt_u64(b, n, st->t->srun_port) : NULL;
}
static const char *v_pmi_fd(const struct state *st, char *b, size_t n)
{
    return st->t->pmi_fd >= 0 ? fmt_u64(b, n, (uint64_t)st->t->pmi_fd) : NULL;
}
static const char *v_pmi_rank(const struct state *st, char *b, size_t n)
{
    return st->t->pmi_fd >= 0 ? fmt_u64(b, n, st->rank) : NULL;
}
static const char *v_pmi_size(const struct state *st, char *b, size_t n)
{
    return st->t->pmi_fd >= 0 ? fmt_u64(b, n, st->l->ntasks) : NULL;
}

/* Before the per-component variables. */
static const struct envvar head[] = {
    {"SLURM_CLUSTER_NAME", v_cluster},
    {"SLURM_JOB_ID", v_job_id},
    {"SLURM_JOBID", v_job_id},
    {"SLURM_HET_SIZE", v_het_size},
    {"SLURM_PACK_SIZE", v_het_size},
};

/* After them: the step, then the task. */
static const struct envvar tail[] = {
    {"SLURM_NTASKS", v_ntasks},
    {"SLURM_NPROCS", v_ntasks},
    {"SLURM_NNODES", v_nnodes},
    {"SLURM_STEP_NUM_NODES", v_nnodes},
    {"SLURM_JOB_NUM_NODES", v_job_nnodes},
    {"SLURM_JOB_NODELIST", v_job_nodelist},
    {"SLURM_NODELIST", v_nodelist},
    {"SLURM_STEP_NODELIST", v_nodelist},
    {"SLURM_STEP_ID", v_step_id},
    {"SLURM_STEPID", v_step_id},
    {"SLURM_STEP_NUM_TASKS", v_ntasks},
    {"SLURM_STEP_TASKS_PER_NODE", v_tasks_per_node},
    {"SLURM_TASKS_PER_NODE", v_tasks_per_node},
    {"SLURM_JOB_PARTITION", v_partition},
    {"SLURM_PROCID", v_procid},
    {"SLURM_LOCALID", v_localid},
    {"SLURM_NODEID", v_nodeid},
    {"SLURM_GTIDS", v_gtids},
    {"SLURMD_NODENAME", v_node},
    {"SLURM_TOPOLOGY_ADDR", v_node},
    {"SLURM_TOPOLOGY_ADDR_PATTERN", v_topo_pattern},
    {"SLURM_CPUS_ON_NODE", v_cpus_on_node},
    {"SLURM_CPUS_PER_TASK", v_cpus_per_task},
    {"SLURM_JOB_UID", v_uid},
    {"SLURM_JOB_GID", v_gid},
    {"SLURM_JOB_USER", v_user},
    {"SLURM_SRUN_COMM_HOST", v_srun_host},
    {"SLURM_SRUN_COMM_PORT", v_srun_port},
    {"SLURM_LAUNCH_NODE_IPADDR", v_srun_host},
    {"SLURM_STEP_LAUNCHER_PORT", v_srun_port},
    {"PMI_FD", v_pmi_fd},
    {"PMI_RANK", v_pmi_rank},
    {"PMI_SIZE", v_pmi_size},
};

/* Per step component of a het job, with _HET_GROUP_<offset> (and _PACK_GROUP_<offset>
 * unless nopack: a name of docs/03-env.md §1.4, which Slurm never had). */
typedef const char *(*comp_fn)(const Tessera__StepLayoutComponent *c, char *buf, size_t len);

struct compvar {
    const char *name;
    int nopack;
    comp_fn value;
};

static const char *c_job_id(const Tessera__StepLayoutComponent *c, char *b, size_t n)
{
    return fmt_u64(b, n, c->job_id);
}
static const char *c_nodelist(const Tessera__StepLayoutComponent *c, char *b, size_t n)
{
    return c->job_nodelist;
}
static const char *c_nnodes(const Tessera__StepLayoutComponent *c, char *b, size_t n)
{
    return fmt_u64(b, n, c->job_nnodes);
}
static const char *c_partition(const Tessera__StepLayoutComponent *c, char *b, size_t n)
{
    return nonempty(c->partition) ? c->partition : NULL;
}

static const struct compvar per_comp[] = {
    {"SLURM_JOB_ID", 0, c_job_id},
    {"SLURM_JOB_NODELIST", 0, c_nodelist},
    {"SLURM_JOB_NUM_NODES", 0, c_nnodes},
    {"SLURM_JOB_NODES", 1, c_nnodes},
    {"SLURM_JOB_PARTITION", 0, c_partition},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Identities of an outer step, task or PMI server that this module may not set (see
 * "Owned names" above). Entries ending in '_' are prefixes. */
static const char *const stale[] = {
    "SLURM_STEP_", "SLURM_TASK_PID", "PMI_ID",     "PMI_PORT",
    "PMI_SPAWNED", "PMI_JOBID",      "PMI_APPNUM", "PMI_KVSNAME",
};

static int in_table(const struct envvar *t, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, name, len) == 0)
            return 1;
    return 0;
}

static int is_owned(const char *name, size_t len)
{
    if (in_table(head, NELEM(head), name, len) || in_table(tail, NELEM(tail), name, len))
        return 1;
    for (size_t i = 0; i < NELEM(stale); i++) {
        size_t sl = strlen(stale[i]);
        int prefix = stale[i][sl - 1] == '_';
        if (prefix ? len >= sl && memcmp(name, stale[i], sl) == 0
                   : len == sl && memcmp(name, stale[i], sl) == 0)
            return 1;
    }
    return 0;
}

static void put_table(struct envbuf *e, const struct state *st, const struct envvar *t,
                      size_t n)
{
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        const char *value = t[i].value(st, buf, sizeof(buf));
        if (value)
            envbuf_put(e, t[i].name, strlen(t[i].name), value);
    }
}

static void put_components(struct envbuf *e, const Tessera__StepLayout *l)
{
    static const char *const tags[] = {"HET", "PACK"};
    char buf[32], name[128];
    for (size_t t = 0; t < NELEM(tags); t++)
        for (size_t c = 0; c < l->n_components; c++)
            for (size_t i = 0; i < NELEM(per_comp); i++) {
                const char *value = per_comp[i].value(l->components[c], buf, sizeof(buf));
                if (!value || (t == 1 && per_comp[i].nopack))
                    continue;
                int w = snprintf(name, sizeof(name), "%s_%s_GROUP_%" PRIu32, per_comp[i].name,
                                 tags[t], l->components[c]->offset);
                if (w > 0 && (size_t)w < sizeof(name)) /* always: the names are short */
                    envbuf_put(e, name, (size_t)w, value);
            }
}

static void put_computed(struct envbuf *e, const struct state *st)
{
    put_table(e, st, head, NELEM(head));
    if (st->l->het_size)
        put_components(e, st->l);
    put_table(e, st, tail, NELEM(tail));
}

/* base_env minus owned names and the names computed, then the computed ones. */
static void merge(struct envbuf *out, char *const *base, const struct envbuf *computed)
{
    for (size_t i = 0; base && base[i]; i++) {
        const char *eq = strchr(base[i], '=');
        if (!eq || eq == base[i])
            continue;
        size_t nlen = (size_t)(eq - base[i]);
        if (!is_owned(base[i], nlen) && !envbuf_has(computed, base[i], nlen))
            envbuf_put(out, base[i], nlen, eq + 1);
    }
    for (size_t i = 0; i < computed->n; i++) {
        const char *s = computed->v[i];
        const char *eq = strchr(s, '=');
        envbuf_put(out, s, (size_t)(eq - s), eq + 1);
    }
}

char **stepenv_task(const Tessera__StepLayout *l, const struct stepenv_task *t,
                    char *const *base_env)
{
    struct state st = {0};
    struct envbuf computed = {0}, result = {0};
    char **env = NULL;

    if (state_init(&st, l, t) != TS_OK || envbuf_init(&computed) != TS_OK ||
        envbuf_init(&result) != TS_OK)
        goto out;
    put_computed(&computed, &st);
    if (computed.oom)
        goto out;
    merge(&result, base_env, &computed);
    env = envbuf_take(&result);
out:
    state_fini(&st);
    envbuf_release(&computed);
    envbuf_release(&result);
    return env;
}

void stepenv_free(char **env)
{
    if (!env)
        return;
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
}
