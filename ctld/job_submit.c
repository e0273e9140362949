/* Submission (docs/01-hetjob.md §2 and §3): every component is checked as a job of its own against
 * its partition and the nodes that could run it; a job that can never run is refused now,
 * with the reason and the component. Then all components get consecutive ids and are
 * stored in one batch: either all of them are accepted, or none. */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/gres/gres_req.h"
#include "common/job/jobstate.h"
#include "common/job/stdpath.h"
#include "common/jobopt/jobopt.h"
#include "common/sched/features.h"
#include "common/text/hostlist.h"
#include "common/text/licenses.h"
#include "common/text/signame.h"
#include "common/util/arith.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/pbutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The nodes of the partition a component may use: not excluded, features matched, and
 * within -w when given. */
struct candidates {
    size_t count;
    uint64_t total_cpus;
    uint64_t part_cpus;    /* of every node of the partition, chosen or not */
    uint32_t max_cpus;     /* of one node */
    uint64_t max_mem_mb;   /* of one node */
    struct gres_req_tally gres; /* the request's GRES over these nodes (docs/gres.md §2.3) */
};

static const struct conf_partition *pick_partition(const struct conf *conf,
                                                   const Tessera__JobDesc *d, int *err)
{
    const struct conf_partition *p =
        d->partition ? conf_find_partition(conf, d->partition) : conf_default_partition(conf);
    *err = p ? TS_OK : d->partition ? TS_EINVALID_PARTITION : TS_ENO_PARTITION;
    return p;
}

/* A -w or -x list: which configured nodes it names (flags by node index), all of them
 * nodes. The list is matched against the nodes, never expanded (ctld/node_match.c). */
struct node_sel {
    unsigned char *flags; /* NULL: no list given */
    size_t count;
};

static int select_nodes(struct ctld *c, const char *expr, struct node_sel *sel)
{
    sel->flags = NULL;
    sel->count = 0;
    if (!expr || !*expr)
        return TS_OK;
    uint32_t *idx = NULL;
    int complete;
    int err = node_list_match(c, expr, &idx, &sel->count, &complete);
    if (!err && (!complete || sel->count == 0))
        err = TS_EINVALID_NODE_NAME;
    if (!err && !(sel->flags = calloc(c->conf->nnodes + 1, 1)))
        err = TS_ENOMEM;
    for (size_t i = 0; !err && i < sel->count; i++)
        sel->flags[idx[i]] = 1;
    free(idx);
    return err;
}

/* A component's GRES fields as common/gres sees them. */
static void gres_job_of(const Tessera__JobDesc *d, struct gres_req_job *j)
{
    *j = (struct gres_req_job){
        .per_node = d->tres_per_node,
        .per_job = d->tres_per_job,
        .per_task = d->tres_per_task,
        .cpus_per_tres = d->cpus_per_tres,
        .mem_per_tres = d->mem_per_tres,
        .flags = d->gres_flags,
        .has_ntasks = d->has_ntasks,
        .ntasks = d->ntasks,
        .has_task_shape = d->has_ntasks || d->has_min_nodes || d->has_ntasks_per_node,
        .has_cpus_per_task = d->has_cpus_per_task,
        .has_mem = d->has_mem_per_node_mb || d->has_mem_per_cpu_mb,
    };
}

static int gather_candidates(const struct conf *conf, const struct conf_partition *part,
                             const Tessera__JobDesc *d, const struct node_sel *want,
                             const struct node_sel *avoid, struct candidates *cand)
{
    memset(cand, 0, sizeof(*cand));
    struct gres_req_job gj;
    gres_job_of(d, &gj);
    int err = gres_req_tally_init(&cand->gres, &gj, conf->gres_types);
    if (err)
        return err;
    size_t wanted_here = 0;
    for (size_t i = 0; i < part->nnodes; i++) {
        size_t idx = part->node_index[i];
        const struct conf_node *n = &conf->nodes[idx];
        int in_want = want->flags && want->flags[idx];
        wanted_here += in_want;
        cand->part_cpus += n->cpus;
        if ((want->flags && !in_want) || (avoid->flags && avoid->flags[idx]) ||
            !features_match(d->constraint, n->features))
            continue;
        cand->count++;
        gres_req_tally_node(&cand->gres, n->gres, n->ngres);
        cand->total_cpus += n->cpus;
        if (n->cpus > cand->max_cpus)
            cand->max_cpus = n->cpus;
        if (n->real_memory_mb > cand->max_mem_mb)
            cand->max_mem_mb = n->real_memory_mb;
    }
    return want->flags && wanted_here != want->count ? TS_ENODES_NOT_IN_PARTITION : TS_OK;
}

/* Every feature named must exist on some node of the cluster. */
static int feature_known(void *arg, const char *name, size_t len)
{
    const struct conf *conf = arg;
    for (size_t i = 0; i < conf->nnodes; i++)
        if (features_list_has(conf->nodes[i].features, name, len))
            return 0;
    return TS_EINVALID_FEATURE;
}

static int check_time(const struct conf_partition *part, const Tessera__JobDesc *d,
                      struct job_sizing *s)
{
    s->time_limit = d->has_time_limit      ? d->time_limit
                    : part->default_time >= 0 ? part->default_time
                                              : part->max_time;
    if (part->max_time >= 0 && (s->time_limit < 0 || s->time_limit > part->max_time))
        return TS_EINVALID_TIME_LIMIT;
    if (d->has_time_min && d->time_min >= 0 && s->time_limit >= 0 && d->time_min > s->time_limit)
        return TS_EINVALID_TIME_MIN;
    return TS_OK;
}

/* Node and task counts with Slurm's defaults: one task per node, one CPU per task. */
static int check_counts(const struct conf_partition *part, const Tessera__JobDesc *d,
                        size_t wanted_nodes, struct job_sizing *s)
{
    s->cpus_per_task = d->has_cpus_per_task ? d->cpus_per_task : 1;
    s->min_nodes = d->has_min_nodes ? d->min_nodes : 1;
    if (!d->has_min_nodes && d->has_ntasks && d->has_ntasks_per_node && d->ntasks_per_node)
        s->min_nodes = (uint32_t)(((uint64_t)d->ntasks + d->ntasks_per_node - 1) / d->ntasks_per_node);
    if (wanted_nodes > s->min_nodes)
        s->min_nodes = (uint32_t)wanted_nodes;
    if (s->min_nodes == 0 || s->cpus_per_task == 0)
        return s->min_nodes == 0 ? TS_ENODE_COUNT : TS_ECPU_COUNT;
    if (d->has_max_nodes && d->max_nodes < s->min_nodes)
        return TS_ENODE_COUNT;
    if (s->min_nodes > part->max_nodes || (d->has_max_nodes && d->max_nodes < part->min_nodes))
        return TS_ENODE_COUNT;
    uint64_t ntasks = d->has_ntasks ? d->ntasks : s->min_nodes;
    if (!d->has_ntasks && d->has_ntasks_per_node && d->ntasks_per_node &&
        arith_mul_within(s->min_nodes, d->ntasks_per_node, UINT32_MAX, &ntasks))
        return TS_ETOO_MANY_CPUS; /* more tasks than a count holds */
    s->ntasks = (uint32_t)ntasks;
    if (s->ntasks == 0)
        return TS_ETASK_COUNT;
    return TS_OK;
}

/* Could the nodes that qualify ever hold the request? Products of the user's counts
 * saturate (common/util/arith.h): one that overflows is larger than any cluster. */
static int check_fit(const Tessera__JobDesc *d, const struct conf_partition *part,
                     const struct candidates *cand, const struct job_sizing *s)
{
    if (cand->count == 0)
        return TS_ENODE_CONFIG;
    /* Slurm's order and texts (EnforcePartLimits=ALL): the partition's CPUs first, so
     * "-N5k" is "More processors requested than permitted" and "-N5" on four nodes
     * "Node count specification invalid" */
    if (arith_mul_sat(s->ntasks, s->cpus_per_task) > cand->part_cpus)
        return TS_ETOO_MANY_CPUS;
    if (s->min_nodes > part->nnodes)
        return TS_ENODE_COUNT;
    if (s->min_nodes > cand->count)
        return TS_ENODE_CONFIG;
    if (s->cpus_per_task > cand->max_cpus ||
        (d->has_ntasks_per_node && arith_mul_sat(d->ntasks_per_node, s->cpus_per_task) > cand->max_cpus))
        return TS_ENODE_CONFIG;
    if (arith_mul_sat(s->ntasks, s->cpus_per_task) > cand->total_cpus)
        return TS_ETOO_MANY_CPUS;
    if (d->has_mem_per_node_mb && d->mem_per_node_mb > cand->max_mem_mb)
        return TS_EMEMORY;
    if (d->has_mem_per_cpu_mb && arith_mul_sat(d->mem_per_cpu_mb, s->cpus_per_task) > cand->max_mem_mb)
        return TS_EMEMORY;
    return TS_OK;
}

/* A task never spans nodes: with the largest node taking as many tasks as fit, how many
 * nodes does the job need at least? Raises min_nodes to that (what squeue shows). */
static int spread_tasks(const Tessera__JobDesc *d, const struct candidates *cand,
                        struct job_sizing *s)
{
    uint32_t per_node = cand->max_cpus / s->cpus_per_task; /* >= 1: check_fit saw to it */
    if (d->has_ntasks_per_node && d->ntasks_per_node && d->ntasks_per_node < per_node)
        per_node = d->ntasks_per_node;
    uint64_t needed = (s->ntasks + (uint64_t)per_node - 1) / per_node;
    /* "-N 2" means exactly two nodes; "-N 2-4" at most four; no -N, as many as needed */
    uint64_t most = d->has_max_nodes ? d->max_nodes : d->has_min_nodes ? d->min_nodes : UINT32_MAX;
    if (needed > cand->count || needed > most)
        return TS_ENODE_CONFIG;
    if (needed > s->min_nodes)
        s->min_nodes = (uint32_t)needed;
    return TS_OK;
}

/* The partition's longest node name: what %N may become. */
static const char *longest_node_name(const struct conf *conf, const struct conf_partition *part)
{
    const char *longest = "";
    for (size_t i = 0; i < part->nnodes; i++) {
        const char *name = conf->nodes[part->node_index[i]].name;
        if (strlen(name) > strlen(longest))
            longest = name;
    }
    return longest;
}

/* Each stream's pattern, and the file it names at its longest, must stay below PATH_MAX:
 * the id is not given yet (ten digits, the widest), %N the partition's longest node name,
 * %u a name as long as useradd allows (the real one is not looked up on the loop). The
 * launch checks the real file names again (ctld/job_run.c). */
#define LONGEST_USER_NAME 32
static int check_paths(const struct conf *conf, const struct conf_partition *part,
                       const Tessera__JobDesc *d)
{
    char user[LONGEST_USER_NAME + 1];
    memset(user, 'u', LONGEST_USER_NAME);
    user[LONGEST_USER_NAME] = '\0';
    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    r.job_id = UINT32_MAX;
    r.desc = (Tessera__JobDesc *)d;
    struct stdpath_fill fill = {.user = user, .host = longest_node_name(conf, part)};
    static const enum stdpath_stream streams[] = {STDPATH_STDOUT, STDPATH_STDERR, STDPATH_STDIN};
    int err = TS_OK;
    for (size_t i = 0; !err && i < sizeof(streams) / sizeof(streams[0]); i++) {
        char *path = NULL;
        err = stdpath_expand(&r, streams[i], &fill, &path);
        free(path);
    }
    return err;
}

/* Options only administrators may use, and values no one may. */
static int check_privileges(const Tessera__JobDesc *d, int admin)
{
    if (d->has_priority && !admin)
        return TS_EPERM;
    if (d->has_nice && (d->nice < -JOB_NICE_MAX || d->nice > JOB_NICE_MAX))
        return TS_EINVALID_NICE;
    if (d->has_nice && d->nice < 0 && !admin)
        return TS_EPERM;
    return TS_OK;
}

/* --signal: a real signal, a bounded time, and nothing of it without the signal. */
static int check_warn_signal(const Tessera__JobDesc *d)
{
    if (!d->has_warn_signal)
        return d->has_warn_secs || d->has_warn_batch_shell ? TS_EINVALID_SIGNAL : TS_OK;
    if (d->warn_signal < 1 || d->warn_signal > SIGNAME_MAX ||
        (d->has_warn_secs && d->warn_secs > JOBOPT_WARN_SECS_MAX))
        return TS_EINVALID_SIGNAL;
    return TS_OK;
}

/* Generic resources: their forms and how the options combine (docs/gres.md §2), checked
 * for every request, whoever sent it; the names against GresTypes and the units against
 * the candidate nodes' Gres= in gather_candidates. No scheduling counts units yet. */
static int check_gres(const Tessera__JobDesc *d, char *why, size_t len)
{
    struct gres_req_job j;
    char detail[256] = "";
    gres_job_of(d, &j);
    int err = gres_req_check(&j, detail, sizeof(detail));
    if (err && strcmp(detail, ts_strerror(err)) != 0)
        snprintf(why, len, "%s (%s)", ts_strerror(err), detail);
    return err;
}

int job_check_component(struct ctld *c, const Tessera__JobDesc *d, size_t offset, int admin,
                        struct job_sizing *s, char *why, size_t len)
{
    const struct conf *conf = c->conf;
    int err;
    if (!(s->part = pick_partition(conf, d, &err)))
        return err;
    if (s->part->state == CONF_PART_DRAIN || s->part->state == CONF_PART_INACTIVE)
        return TS_EPARTITION_NOT_AVAIL;
    /* Licences are counted by activation filters (docs/filters.md, the licences example),
     * which trust their form: the controller checks it for every request, whoever sent
     * it. Licences belong to the first component only. Without any filter, a request is
     * one that cannot be met. */
    if (d->licenses && *d->licenses &&
        (licenses_check(d->licenses) || offset > 0 ||
         (!conf->activation_filters && !s->part->activation_filters)))
        return TS_EINVALID_LICENSES;
    if ((err = check_privileges(d, admin)) || (err = check_warn_signal(d)) ||
        (err = check_gres(d, why, len)))
        return err;
    if (d->constraint && (features_check(d->constraint) ||
                          features_foreach_name(d->constraint, feature_known, (void *)conf)))
        return TS_EINVALID_FEATURE;
    if (offset == 0 && (err = job_dependency_check(c, d->dependency, why, len)))
        return err;
    if ((err = check_time(s->part, d, s)))
        return err;
    struct node_sel want = {0}, avoid = {0};
    struct candidates cand;
    if (!(err = select_nodes(c, d->nodelist, &want)) &&
        !(err = select_nodes(c, d->exclude, &avoid)) &&
        !(err = check_counts(s->part, d, want.count, s)))
        err = gather_candidates(conf, s->part, d, &want, &avoid, &cand);
    free(want.flags);
    free(avoid.flags);
    if (err)
        return err;
    if (!d->work_dir || d->work_dir[0] != '/')
        return TS_EINVAL;
    if ((err = check_paths(conf, s->part, d)))
        return err;
    if ((err = check_fit(d, s->part, &cand, s)) ||
        (err = gres_req_tally_verdict(&cand.gres, s->min_nodes)))
        return err;
    /* A well-formed request that the nodes could meet: the scheduler does not count units
     * yet (docs/gres.md §3), so such a job would start without its GPUs or share them.
     * Refused, as every capability not built yet is, rather than accepted and ignored. */
    if (cand.gres.asks)
        return TS_EGRES_NOT_SCHEDULED;
    return spread_tasks(d, &cand, s);
}

void job_apply_sizing(Tessera__JobRecord *r, const struct job_sizing *s)
{
    r->time_limit = s->time_limit;
    r->min_nodes = s->min_nodes;
    r->ntasks = s->ntasks;
    r->cpus_per_task = s->cpus_per_task;
    r->min_cpus = arith_mul_u32_sat(s->ntasks, s->cpus_per_task); /* check_fit bounds it */
}

/* ------------------------------------------------------------------------------------ */

static Tessera__JobRecord *build_record(const Tessera__JobDesc *desc, const struct job_sizing *s,
                                        uint32_t id, uint32_t leader, size_t offset, size_t n,
                                        uid_t uid, gid_t gid, const char *host, time_t now,
                                        int batch)
{
    Tessera__JobDesc d = *desc; /* shallow: the strings stay the request's */
    d.has_user_id = d.has_group_id = 1;
    d.user_id = (uint32_t)uid;
    d.group_id = (uint32_t)gid;
    if (!d.submit_host || !*d.submit_host)
        d.submit_host = (char *)host; /* the command says its host name; else its address */
    if (!d.partition)
        d.partition = s->part->name;
    if (n > 1 && !d.open_mode)
        d.open_mode = (char *)"append"; /* docs/01-hetjob.md §2.3: het jobs' default */

    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    r.job_id = id;
    r.het_job_id = n > 1 ? leader : 0;
    r.het_job_offset = n > 1 ? (uint32_t)offset : 0;
    r.het_size = n > 1 ? (uint32_t)n : 0;
    r.desc = &d;
    r.state = TESSERA__JOB_STATE__JOB_PENDING;
    r.hold = d.has_hold && d.hold ? 1 : 0;
    r.submit_time = now;
    r.batch = batch;
    job_apply_sizing(&r, s);
    return pbutil_copy(&r.base);
}

/* Turn the checked components into stored jobs: ids, records, one batch. */
static int create_jobs(struct ctld *c, const Tessera__SubmitRequest *req,
                       const struct job_sizing *sizes, uid_t uid, gid_t gid, const char *host,
                       uint32_t *leader_id)
{
    size_t n = req->n_components;
    time_t now = time(NULL);
    uint32_t first = (uint32_t)c->next_job_id;
    struct job *leader = NULL;
    for (size_t i = 0; i < n; i++) {
        int batch = req->components[0]->script != NULL;
        Tessera__JobRecord *rec = build_record(req->components[i], &sizes[i], first + (uint32_t)i,
                                               first, i, n, uid, gid, host, now, batch);
        struct job *j = rec ? job_insert(&c->jobs, rec) : NULL;
        if (!j) {
            if (rec)
                tessera__job_record__free_unpacked(rec, NULL);
            /* undo the components already in the table: nothing was stored yet */
            for (size_t k = 0; k < i; k++)
                job_table_remove(&c->jobs, job_find(&c->jobs, first + (uint32_t)k));
            return TS_ENOMEM;
        }
        if (i == 0)
            leader = j;
    }
    int err = job_link_het(&c->jobs, leader);
    if (!err)
        err = job_dependency_attach(c, leader);
    c->next_job_id += n;
    for (size_t i = 0; i < n && !err; i++) {
        struct job *j = job_component(leader, i);
        j->rec->priority = j->rec->hold ? 0
                           : j->rec->desc->has_priority ? j->rec->desc->priority
                                                        : job_default_priority(j->rec);
        job_update_reason(c, j, now);
        err = job_save(c, j);
    }
    if (!err)
        err = ctld_state_save_next_job_id(c);
    *leader_id = first;
    job_changed_waiting(c, leader);
    return err;
}

int job_submit(struct ctld *c, const Tessera__SubmitRequest *req, uid_t uid, gid_t gid,
               const char *host, uint32_t *leader_id, char *errbuf, size_t errlen)
{
    size_t n = req->n_components;
    /* again: filters may have rewritten the job, and jobs came while they ran */
    int err = job_limits_check_submission(c, req, uid, errbuf, errlen);
    if (err)
        return err;
    struct job_sizing *sizes = calloc(n, sizeof(*sizes));
    if (!sizes)
        return TS_ENOMEM;
    int admin = job_is_admin(c, uid);
    for (size_t i = 0; i < n && !err; i++) {
        char why[256] = "";
        err = job_check_component(c, req->components[i], i, admin, &sizes[i], why, sizeof(why));
        if (err && n > 1)
            snprintf(errbuf, errlen, "component %zu: %s", i, why[0] ? why : ts_strerror(err));
        else if (err)
            snprintf(errbuf, errlen, "%s", why);
    }
    if (!err && !req->test_only)
        err = create_jobs(c, req, sizes, uid, gid, host, leader_id);
    free(sizes);
    if (!err && !req->test_only)
        log_verbose("job %u submitted by uid %u (%zu component%s)", *leader_id, (unsigned)uid, n,
                    n > 1 ? "s" : "");
    return err;
}
