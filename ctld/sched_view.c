/* The scheduler's snapshot of the controller's state (ctld/sched_int.h). */
#include "ctld/filter_activate.h"
#include "ctld/sched_int.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

void sched_cycle_free(struct cycle *cy)
{
    for (size_t i = 0; i < cy->ncomps; i++) {
        free(cy->eligible ? cy->eligible[i] : NULL);
        free(cy->required ? cy->required[i] : NULL);
        free(cy->constraints ? cy->constraints[i] : NULL);
        free(cy->slots ? cy->slots[i] : NULL);
    }
    for (size_t i = 0; i < cy->nparts; i++)
        free(cy->part_nodes ? cy->part_nodes[i] : NULL);
    free(cy->part_nodes);
    free(cy->part_count);
    free(cy->eligible);
    free(cy->required);
    free(cy->constraints);
    free(cy->slots);
    free(cy->nodes);
    free(cy->units);
    free(cy->decisions);
    free(cy->ids);
    free(cy->reqs);
    free(cy->parts);
    free(cy->limits);
    free(cy->allocs);
    free(cy->holds);
    free(cy->held);
    for (size_t i = 0; i < cy->nkept; i++)
        free(cy->kept_copies[i]);
    free(cy->kept_copies);
    memset(cy, 0, sizeof(*cy));
}

/* ------------------------------------------------------------------------------------ */
/* nodes and what running jobs hold */

static void fill_nodes(struct ctld *c, struct select_node *out)
{
    for (size_t i = 0; i < c->nodes.count; i++) {
        const struct node *n = &c->nodes.nodes[i];
        out[i] = (struct select_node){
            .name = n->name,
            .cpus = n->cfg->cpus,
            .alloc_cpus = n->alloc_cpus,
            .mem_mb = n->cfg->real_memory_mb,
            .alloc_mem_mb = n->alloc_mem_mb,
            .features = n->cfg->features,
            .weight = n->cfg->weight,
            .jobs = n->njobs,
            .available = node_available(n),
            .exclusive = n->exclusive > 0,
        };
    }
}

/* Components that hold nodes: started and not finished (what node_hold counted). */
static int holds_nodes(const Tessera__JobRecord *r)
{
    return r->state != TESSERA__JOB_STATE__JOB_PENDING && !jobstate_is_finished(r->state) &&
           r->n_allocs > 0;
}

/* When a running component gives its nodes back, as far as the plan can tell: its start
 * plus its limit (time spent suspended added), never before the next second (one past
 * its limit is being killed: its nodes come back any moment). */
static int64_t expected_end(const Tessera__JobRecord *r, int64_t now)
{
    if (r->time_limit <= 0)
        return SCHED_NO_END;
    int64_t end = r->start_time + r->time_limit;
    if (r->state == TESSERA__JOB_STATE__JOB_SUSPENDED)
        end = now + (r->time_limit - r->pre_suspend_secs);
    return end > now ? end : now + 1;
}

static int fill_holds(struct ctld *c, struct cycle *cy)
{
    size_t nh = 0, nn = 0;
    for (struct job *j = c->jobs.head; j; j = j->next)
        if (holds_nodes(j->rec)) {
            nh++;
            nn += j->rec->n_allocs;
        }
    cy->holds = calloc(nh + 1, sizeof(*cy->holds));
    cy->held = calloc(nn + 1, sizeof(*cy->held));
    if (!cy->holds || !cy->held)
        return TS_ENOMEM;
    size_t k = 0;
    for (struct job *j = c->jobs.head; j; j = j->next) {
        const Tessera__JobRecord *r = j->rec;
        if (!holds_nodes(r))
            continue;
        struct sched_hold *h = &cy->holds[cy->nholds];
        h->end = expected_end(r, cy->now);
        h->nodes = &cy->held[k];
        for (size_t i = 0; i < r->n_allocs; i++) {
            struct node *n = node_find(c, r->allocs[i]->node);
            if (!n)
                continue; /* a node gone from the configuration holds nothing we plan */
            cy->held[k++] = (struct select_node_alloc){.node = (uint32_t)node_index(c, n),
                                                        .cpus = r->allocs[i]->cpus,
                                                        .mem_mb = r->allocs[i]->mem_mb,
                                                        .tasks = r->allocs[i]->tasks};
            h->nnodes++;
        }
        if (h->nnodes)
            cy->nholds++;
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* units */

/* Node indexes of a host list (-w, -x), ascending; unknown names are skipped. */
static uint32_t *host_indexes(struct ctld *c, const char *expr, size_t *count)
{
    uint32_t *idx = NULL;
    int complete;
    if (node_list_match(c, expr, &idx, count, &complete) != TS_OK)
        *count = 0;
    return idx;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int contains(const uint32_t *set, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == v)
            return 1;
    return 0;
}

/* The nodes of partition p, ascending, shared by the cycle's requests that take them
 * all: 100,000 jobs on a 10,000-node partition need one list, not 100,000. */
static const uint32_t *partition_nodes(struct ctld *c, struct cycle *cy,
                                       const struct conf_partition *p, size_t *count)
{
    size_t i = (size_t)(p - c->conf->partitions);
    if (!cy->part_nodes[i]) {
        uint32_t *nodes = calloc(p->nnodes + 1, sizeof(*nodes));
        if (!nodes)
            return NULL;
        for (size_t k = 0; k < p->nnodes; k++)
            nodes[k] = (uint32_t)p->node_index[k];
        qsort(nodes, p->nnodes, sizeof(*nodes), cmp_u32);
        cy->part_nodes[i] = nodes;
        cy->part_count[i] = p->nnodes;
    }
    *count = cy->part_count[i];
    return cy->part_nodes[i];
}

/* Component k's select request on eligible[0..n) (nreq of them required: -w), and room
 * for its placement. */
static int finish_request(struct cycle *cy, size_t k, const Tessera__JobRecord *r,
                          const uint32_t *eligible, size_t n, size_t nreq)
{
    const Tessera__JobDesc *d = r->desc;
    cy->reqs[k] = (struct select_request){
        .eligible = eligible,
        .neligible = n,
        .required = cy->required[k],
        .nrequired = nreq,
        .constraint = cy->constraints[k],
        .min_nodes = r->min_nodes,
        .max_nodes = d->has_max_nodes ? d->max_nodes : d->has_min_nodes ? d->min_nodes : 0,
        .ntasks = r->ntasks,
        .cpus_per_task = r->cpus_per_task,
        .ntasks_per_node = d->has_ntasks_per_node ? d->ntasks_per_node : 0,
        .mem_per_node_mb = d->has_mem_per_node_mb ? d->mem_per_node_mb : 0,
        .mem_whole_node = d->has_mem_per_node_mb && d->mem_per_node_mb == 0,
        .mem_per_cpu_mb = d->has_mem_per_cpu_mb ? d->mem_per_cpu_mb : 0,
        .exclusive = d->has_exclusive && d->exclusive,
    };
    /* the scheduler plugins give the select plugin scratch: a placement needs room for
     * no more nodes than it can use */
    size_t room = select_alloc_room(&cy->reqs[k]);
    if (!(cy->slots[k] = calloc(room + 1, sizeof(*cy->slots[k]))))
        return TS_ENOMEM;
    cy->allocs[k].nodes = cy->slots[k];
    return TS_OK;
}

/* Component k's request: the nodes of partition p within -w and without -x. r carries the
 * effective sizes (job_apply_sizing). */
static int fill_request(struct ctld *c, struct cycle *cy, size_t k, const Tessera__JobRecord *r,
                        const struct conf_partition *p)
{
    const Tessera__JobDesc *d = r->desc;
    if (!p)
        return TS_EINVALID_PARTITION;
    cy->parts[k] = (uint32_t)(p - c->conf->partitions);
    cy->limits[k] = r->time_limit > 0 ? r->time_limit : 0;
    if (d->constraint && *d->constraint && !(cy->constraints[k] = strdup(d->constraint)))
        return TS_ENOMEM;
    size_t n = 0;
    if ((!d->nodelist || !*d->nodelist) && (!d->exclude || !*d->exclude)) {
        const uint32_t *shared = partition_nodes(c, cy, p, &n);
        return shared ? finish_request(cy, k, r, shared, n, 0) : TS_ENOMEM;
    }
    size_t nreq = 0, nexc = 0;
    cy->required[k] = host_indexes(c, d->nodelist, &nreq);
    uint32_t *exclude = host_indexes(c, d->exclude, &nexc);
    uint32_t *eligible = cy->eligible[k] = calloc(p->nnodes + 1, sizeof(*eligible));
    if (!eligible) {
        free(exclude);
        return TS_ENOMEM;
    }
    for (size_t i = 0; i < p->nnodes; i++) {
        uint32_t idx = (uint32_t)p->node_index[i];
        if ((nreq && !contains(cy->required[k], nreq, idx)) || contains(exclude, nexc, idx))
            continue;
        eligible[n++] = idx;
    }
    free(exclude);
    qsort(eligible, n, sizeof(*eligible), cmp_u32);
    return finish_request(cy, k, r, eligible, n, nreq);
}

/* A reconfigure may have removed a pending unit's partition: the unit can never run as it
 * is (an administrator may move it with scontrol update), and it must not keep the others
 * from being scheduled. */
static int partitions_exist(struct ctld *c, struct job *lead)
{
    for (size_t i = 0; i < job_ncomponents(lead); i++) {
        Tessera__JobRecord *r = job_component(lead, i)->rec;
        if (!conf_find_partition(c->conf, r->desc->partition)) {
            for (size_t k = 0; k < job_ncomponents(lead); k++)
                job_component(lead, k)->rec->reason = JOB_REASON_BAD_CONSTRAINTS;
            return 0;
        }
    }
    return 1;
}

static struct job **collect_units(struct ctld *c, time_t now, size_t *count, size_t *ncomps,
                                  unsigned char **greedy)
{
    size_t n = 0, cap = 64;
    struct job **leaders = malloc(cap * sizeof(*leaders));
    /* units a running-job limit holds back now are not in the view (they cannot start) */
    struct limit_counts *lc = sched_limits_count(c);
    for (struct job *j = c->jobs.head; leaders && j; j = j->next) {
        if (j->leader == j)
            job_unit_refresh_reasons(c, j, now);
        if (j->leader != j || !job_unit_eligible(j) || !partitions_exist(c, j) ||
            !sched_policy_admits(c, j, now) || !sched_limits_allow(c, lc, j))
            continue;
        if (n == cap) {
            struct job **grown = realloc(leaders, (cap *= 2) * sizeof(*grown));
            if (!grown) {
                free(leaders);
                sched_limits_free(lc);
                return NULL;
            }
            leaders = grown;
        }
        leaders[n++] = j;
        *ncomps += job_ncomponents(j);
    }
    sched_limits_free(lc);
    if (leaders && !(*greedy = malloc(n + 1))) {
        free(leaders);
        return NULL;
    }
    if (leaders)
        sched_order_units(c, leaders, n, *greedy);
    *count = n;
    return leaders;
}

/* The arrays for nunits units of ncomps components in all, the nodes and the holds. */
static int cycle_alloc(struct ctld *c, struct cycle *cy, enum sched_kind kind, time_t now)
{
    size_t nc = cy->ncomps ? cy->ncomps : 1;
    cy->kind = kind;
    cy->now = (int64_t)now;
    cy->nnodes = c->nodes.count;
    cy->nodes = calloc(cy->nnodes + 1, sizeof(*cy->nodes));
    cy->units = calloc(cy->nunits + 1, sizeof(*cy->units));
    cy->decisions = calloc(cy->nunits + 1, sizeof(*cy->decisions));
    cy->ids = calloc(cy->nunits + 1, sizeof(*cy->ids));
    cy->reqs = calloc(nc, sizeof(*cy->reqs));
    cy->parts = calloc(nc, sizeof(*cy->parts));
    cy->limits = calloc(nc, sizeof(*cy->limits));
    cy->allocs = calloc(nc, sizeof(*cy->allocs));
    cy->eligible = calloc(nc, sizeof(*cy->eligible));
    cy->required = calloc(nc, sizeof(*cy->required));
    cy->constraints = calloc(nc, sizeof(*cy->constraints));
    cy->slots = calloc(nc, sizeof(*cy->slots));
    cy->nparts = c->conf->npartitions;
    cy->part_nodes = calloc(cy->nparts + 1, sizeof(*cy->part_nodes));
    cy->part_count = calloc(cy->nparts + 1, sizeof(*cy->part_count));
    if (!cy->nodes || !cy->units || !cy->decisions || !cy->ids || !cy->reqs || !cy->parts ||
        !cy->limits || !cy->allocs || !cy->eligible || !cy->required || !cy->constraints ||
        !cy->slots || !cy->part_nodes || !cy->part_count)
        return TS_ENOMEM;
    fill_nodes(c, cy->nodes);
    return fill_holds(c, cy);
}

static void view_init(struct ctld *c, struct cycle *cy)
{
    cy->view = (struct sched_view){
        .kind = cy->kind, .now = cy->now, .nodes = cy->nodes, .nnodes = cy->nnodes,
        .npartitions = c->conf->npartitions, .holds = cy->holds, .nholds = cy->nholds,
        .units = cy->units, .nunits = cy->nunits,
    };
}

/* Unit u starts at component k. */
/* A copy of u's kept resources in the cycle's own memory (one block: the per-component
 * placements, then their nodes). */
static int own_kept(struct cycle *cy, struct sched_unit *u)
{
    size_t nodes = 0;
    for (size_t i = 0; i < u->ncomponents; i++)
        nodes += u->kept[i].nnodes;
    struct select_alloc *copy =
        malloc(u->ncomponents * sizeof(*copy) + (nodes + 1) * sizeof(struct select_node_alloc));
    void **grown = realloc(cy->kept_copies, (cy->nkept + 1) * sizeof(*grown));
    if (grown)
        cy->kept_copies = grown;
    if (!copy || !grown) {
        free(copy);
        return TS_ENOMEM;
    }
    cy->kept_copies[cy->nkept++] = copy;
    struct select_node_alloc *slot = (struct select_node_alloc *)(copy + u->ncomponents);
    for (size_t i = 0; i < u->ncomponents; i++) {
        copy[i].nodes = slot;
        copy[i].nnodes = u->kept[i].nnodes;
        if (copy[i].nnodes)
            memcpy(slot, u->kept[i].nodes, copy[i].nnodes * sizeof(*slot));
        slot += copy[i].nnodes;
    }
    u->kept = copy;
    return TS_OK;
}

static void unit_init(struct cycle *cy, size_t u, uint32_t id, uint32_t prio, size_t ncomp,
                      size_t k)
{
    cy->ids[u] = id;
    cy->units[u] = (struct sched_unit){.id = id, .priority = prio, .ncomponents = ncomp,
                                       .reqs = &cy->reqs[k], .partitions = &cy->parts[k],
                                       .time_limits = &cy->limits[k]};
    cy->decisions[u].allocs = &cy->allocs[k];
}

int sched_cycle_build(struct ctld *c, struct cycle *cy, enum sched_kind kind, time_t now)
{
    memset(cy, 0, sizeof(*cy));
    unsigned char *greedy = NULL;
    struct job **leaders = collect_units(c, now, &cy->nunits, &cy->ncomps, &greedy);
    int err = leaders ? cycle_alloc(c, cy, kind, now) : TS_ENOMEM;
    size_t k = 0;
    for (size_t u = 0; !err && u < cy->nunits; u++) {
        struct job *lead = leaders[u];
        size_t ncomp = job_ncomponents(lead);
        unit_init(cy, u, lead->rec->job_id, job_unit_priority(lead), ncomp, k);
        cy->units[u].greedy = greedy[u];
        filter_activate_unit(c, lead, now, &cy->units[u]); /* a standing filter verdict */
        if (cy->units[u].kept)
            err = own_kept(cy, &cy->units[u]);
        for (size_t i = 0; !err && i < ncomp; i++, k++) {
            const Tessera__JobRecord *r = job_component(lead, i)->rec;
            err = fill_request(c, cy, k, r, conf_find_partition(c->conf, r->desc->partition));
        }
    }
    free(leaders);
    free(greedy);
    if (!err)
        view_init(c, cy);
    return err;
}

int sched_cycle_build_one(struct ctld *c, struct cycle *cy, Tessera__JobDesc *const *descs,
                          size_t n, time_t now)
{
    memset(cy, 0, sizeof(*cy));
    cy->nunits = 1;
    cy->ncomps = n;
    int err = cycle_alloc(c, cy, SCHED_BACKFILL, now);
    if (!err)
        unit_init(cy, 0, 0, 0, n, 0);
    for (size_t i = 0; !err && i < n; i++) {
        struct job_sizing s;
        Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
        r.desc = descs[i];
        err = job_check_component(c, descs[i], i, 1, &s, NULL, 0);
        if (!err) {
            job_apply_sizing(&r, &s);
            err = fill_request(c, cy, i, &r, s.part);
        }
    }
    if (!err)
        view_init(c, cy);
    return err;
}
