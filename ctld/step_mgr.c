/* Steps in the controller: see ctld/step.h and docs/steps.md.
 *
 * Step ids (docs/04-steps.md §3): every component counts its own steps (JobRecord.next_step_id); a
 * step over several components takes the highest of their counters and moves all of
 * them past it, so `--het-group=0,1` gives 1721.0 and 1722.0, then `--het-group=0`
 * 1721.1 alone, then `--het-group=0,1` 1721.2 and 1722.2.
 *
 * A step is named by its first component's own id and its step id (step_job_id, step_id:
 * 1721.0 above, and 1722.1 for a later `--het-group=1`): two steps of one job may share
 * a step id, never that pair. Every record of a step carries it; node daemons report
 * ends, and are sent signals, under it; "J.S" in scancel and queries names the step
 * whose component J has the step id S, with all its records.
 *
 * A step is RUNNING from its creation until every node of the step has reported its end
 * (or the job ends): COMPLETED when every task exited 0, FAILED otherwise, CANCELLED
 * after scancel or with its job.
 */
#include "ctld/step.h"

#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/node.h"

#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/job/acctusage.h"
#include "common/job/jobid.h"
#include "common/job/jobstate.h"
#include "common/job/steplayout.h"
#include "common/rpc/rpc_peer.h"
#include "common/text/hostlist.h"
#include "common/util/arith.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "common/util/pbutil.h"
#include "ctld/store.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* ------------------------------------------------------------------------------------ */
/* the signing key */

int step_cred_init(struct ctld *c, char *errbuf, size_t errlen)
{
    char path[1024];
    if (c->conf->cred_private_key)
        snprintf(path, sizeof(path), "%s", c->conf->cred_private_key);
    else
        snprintf(path, sizeof(path), "%s/cred_ed25519.pem", c->conf->state_save_location);
    int err = cred_key_load_or_create(path, &c->cred_key, errbuf, errlen);
    if (!err)
        err = cred_key_public_pem(c->cred_key, &c->cred_public_pem);
    if (err && !errbuf[0])
        snprintf(errbuf, errlen, "step credential key %s: %s", path, ts_strerror(err));
    return err;
}

void step_cred_fini(struct ctld *c)
{
    cred_key_free(c->cred_key);
    c->cred_key = NULL;
    free(c->cred_public_pem);
    c->cred_public_pem = NULL;
}

/* ------------------------------------------------------------------------------------ */
/* records */

static void step_key(uint8_t key[8], uint32_t job_id, uint32_t step_id)
{
    for (int i = 0; i < 4; i++) {
        key[i] = (uint8_t)(job_id >> (24 - 8 * i));
        key[4 + i] = (uint8_t)(step_id >> (24 - 8 * i));
    }
}

static int step_save(struct ctld *c, const struct step *s)
{
    size_t len = tessera__step_record__get_packed_size(s->rec);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return TS_ENOMEM;
    tessera__step_record__pack(s->rec, buf);
    uint8_t key[8];
    step_key(key, s->rec->job_id, s->rec->step_id);
    int err = store_put(c->store, STORE_DB_STEPS, key, sizeof(key), buf, len);
    free(buf);
    if (!err)
        acct_step_saved(c, s);
    return err;
}

/* Keep j's list in ascending step id. */
static void attach(struct job *j, struct step *s)
{
    struct step **p = &j->steps;
    while (*p && (*p)->rec->step_id < s->rec->step_id)
        p = &(*p)->next;
    s->next = *p;
    *p = s;
}

static struct step *find_step(const struct job *j, uint32_t step_id)
{
    for (struct step *s = j->steps; s; s = s->next)
        if (s->rec->step_id == step_id)
            return s;
    return NULL;
}

/* Component j's record of the step (step_job_id, step_id), or NULL. A 0 on either side
 * (a record or a report from before steps carried the pair) matches by step id alone, as
 * those did. */
static struct step *record_of(const struct job *j, uint32_t step_job_id, uint32_t step_id)
{
    struct step *s = find_step(j, step_id);
    if (!s || !step_job_id || !s->rec->step_job_id || s->rec->step_job_id == step_job_id)
        return s;
    return NULL;
}

void step_free_all(struct ctld *c, struct job *j, int forget)
{
    while (j->steps) {
        struct step *s = j->steps;
        j->steps = s->next;
        if (forget) {
            uint8_t key[8];
            step_key(key, s->rec->job_id, s->rec->step_id);
            store_del(c->store, STORE_DB_STEPS, key, sizeof(key));
        }
        tessera__step_record__free_unpacked(s->rec, NULL);
        free(s);
    }
}

struct load_state {
    struct ctld *c;
    size_t loaded, orphans;
    char *errbuf;
    size_t errlen;
};

static int load_one(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct load_state *ls = arg;
    Tessera__StepRecord *rec = tessera__step_record__unpack(NULL, vlen, val);
    if (!rec || klen != 8) {
        if (rec)
            tessera__step_record__free_unpacked(rec, NULL);
        snprintf(ls->errbuf, ls->errlen, "state: a step record is corrupt");
        return TS_ESTORE_CORRUPT;
    }
    struct job *j = job_find(&ls->c->jobs, rec->job_id);
    struct step *s = j ? calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        tessera__step_record__free_unpacked(rec, NULL);
        if (j)
            return TS_ENOMEM;
        store_del(ls->c->store, STORE_DB_STEPS, key, klen); /* its job is gone */
        ls->orphans++;
        return TS_OK;
    }
    s->rec = rec;
    attach(j, s);
    ls->loaded++;
    return TS_OK;
}

int step_table_load(struct ctld *c, char *errbuf, size_t errlen)
{
    struct load_state ls = {.c = c, .errbuf = errbuf, .errlen = errlen};
    int err = store_foreach(c->store, STORE_DB_STEPS, load_one, &ls);
    if (!err)
        log_info("state: %zu step records loaded%s", ls.loaded,
                 ls.orphans ? " (records of forgotten jobs dropped)" : "");
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* creation */

static int check_job(struct ctld *c, struct job *leader, uid_t uid)
{
    const Tessera__JobRecord *r = leader->rec;
    if (!job_owner_or_admin(c, leader, uid))
        return TS_EPERM;
    if (r->state == TESSERA__JOB_STATE__JOB_PENDING)
        return TS_EJOB_PENDING;
    if (r->state == TESSERA__JOB_STATE__JOB_SUSPENDED)
        return TS_EJOB_SUSPENDED;
    /* running and not being ended: a credential outlives its job by its lifetime (the
     * nodes revoke it when the job ends there), so none is signed for a job that ends */
    if (r->state != TESSERA__JOB_STATE__JOB_RUNNING || r->end_pending)
        return TS_EALREADY_DONE;
    return TS_OK;
}

/* The components asked for, checked as docs/04-steps.md §2 says, into comps[] by offset order. */
static int check_components(struct ctld *c, struct job *leader,
                            const Tessera__StepCreateRequest *req,
                            struct steplayout_component *comps, char *errbuf, size_t errlen)
{
    size_t ncomp = job_ncomponents(leader);
    if (req->n_components == 0)
        return TS_EINVAL;
    if (req->n_components > 1 && conf_sched_param(c->conf, "disable_hetjob_steps", NULL))
        return TS_EHETJOB_STEPS;
    uint32_t max = 0;
    for (size_t i = 0; i < req->n_components; i++)
        if (req->components[i]->het_group > max)
            max = req->components[i]->het_group;
    if (max >= ncomp) {
        snprintf(errbuf, errlen,
                 "Attempt to run a job step with het group value of %u, but the job allocation "
                 "has maximum value of %zu",
                 max, ncomp - 1);
        return TS_EHET_GROUP;
    }
    for (size_t i = 0; i < req->n_components; i++) {
        const Tessera__StepComponentRequest *cr = req->components[i];
        if (comps[cr->het_group].req) {
            snprintf(errbuf, errlen, "Only one step per component (het group %u) in one srun",
                     cr->het_group);
            return TS_EHET_GROUP;
        }
        struct job *j = job_component(leader, cr->het_group);
        if (j->rec->state != TESSERA__JOB_STATE__JOB_RUNNING)
            return TS_EALREADY_DONE; /* this component ended alone (scancel 93+1) */
        comps[cr->het_group].rec = j->rec;
        comps[cr->het_group].req = cr;
    }
    return TS_OK;
}

/* What the layout's callbacks see. */
struct placing_ctx {
    struct ctld *c;
    struct hashmap *busy; /* "<component id> <node>" -> CPUs held + 1; NULL: none counted */
};

static int node_addr(void *arg, const char *name, const char **addr, uint16_t *port)
{
    const struct placing_ctx *pc = arg;
    const struct conf_node *n = conf_find_node(pc->c->conf, name);
    if (!n)
        return TS_EINVALID_NODE_NAME;
    *addr = n->addr;
    *port = n->port;
    return TS_OK;
}

static void busy_key(char *key, size_t len, uint32_t job_id, const char *node)
{
    snprintf(key, len, "%" PRIu32 " %s", job_id, node);
}

static uint32_t busy_cpus(void *arg, uint32_t job_id, const char *node)
{
    const struct placing_ctx *pc = arg;
    char key[300];
    busy_key(key, sizeof(key), job_id, node);
    uintptr_t v = pc->busy ? (uintptr_t)hashmap_get_str(pc->busy, key) : 0;
    return v ? (uint32_t)(v - 1) : 0;
}

/* Add what record r holds on its nodes to the map. */
static int hold(struct hashmap *busy, const Tessera__StepRecord *r)
{
    struct hostlist *hl = NULL;
    if (r->n_node_cpus == 0)
        return TS_OK; /* --overlap, or a record from before steps held CPUs */
    int err = hostlist_expand(r->nodes, &hl);
    for (size_t i = 0; !err && i < r->n_node_cpus && i < hostlist_count(hl); i++) {
        char key[300];
        busy_key(key, sizeof(key), r->job_id, hostlist_nth(hl, i));
        uintptr_t v = (uintptr_t)hashmap_get_str(busy, key);
        uint64_t sum = (v ? v - 1 : 0) + (uint64_t)r->node_cpus[i];
        err = hashmap_put_str(busy, key, (void *)(uintptr_t)((sum > UINT32_MAX ? UINT32_MAX : sum) + 1));
    }
    hostlist_destroy(hl);
    return err;
}

/* The CPUs the running steps of the job hold, per component and node (docs/steps.md,
 * "Steps that share an allocation"). */
static int busy_map(struct job *leader, struct hashmap **out)
{
    struct hashmap *busy = hashmap_create();
    int err = busy ? TS_OK : TS_ENOMEM;
    for (size_t i = 0; !err && i < job_ncomponents(leader); i++)
        for (struct step *s = job_component(leader, i)->steps; !err && s; s = s->next)
            if (s->rec->state == TESSERA__JOB_STATE__JOB_RUNNING)
                err = hold(busy, s->rec);
    if (err) {
        hashmap_destroy(busy);
        busy = NULL;
    }
    *out = busy;
    return err;
}

/* What one record of a step counts: a layout component, or for the parts of one
 * allocation the whole step. */
struct record_view {
    uint32_t nnodes, ntasks, cpus;
    const char *nodelist, *partition;
    const uint32_t *node_cpus;
    size_t n_node_cpus;
};

static struct record_view view_of_component(const Tessera__StepLayoutComponent *lc)
{
    return (struct record_view){
        .nnodes = lc->nnodes,
        .ntasks = lc->ntasks,
        .cpus = arith_mul_u32_sat(lc->ntasks, lc->cpus_per_task ? lc->cpus_per_task : 1),
        .nodelist = lc->nodelist,
        .partition = lc->partition,
        .node_cpus = lc->node_cpus,
        .n_node_cpus = lc->n_node_cpus,
    };
}

/* The parts of one allocation run on nodes of their own, so the layout's nodes, in
 * order, are theirs with the CPUs they take. */
static struct record_view view_of_step(const Tessera__StepLayout *l, uint32_t *node_cpus)
{
    struct record_view v = {.nnodes = (uint32_t)l->n_nodes, .ntasks = l->ntasks,
                            .nodelist = l->nodelist, .node_cpus = node_cpus,
                            .partition = l->n_components ? l->components[0]->partition : "",
                            .n_node_cpus = l->n_nodes};
    uint64_t cpus = 0;
    for (size_t m = 0; m < l->n_nodes; m++) {
        node_cpus[m] = l->nodes[m]->cpus;
        cpus += l->nodes[m]->cpus;
    }
    v.cpus = cpus > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus;
    return v;
}

/* The per-component records of a new step, queued in the open batch; an --overlap step
 * holds no CPUs. */
static int record_step(struct ctld *c, struct job *j, const Tessera__StepLayout *l,
                       const struct record_view *v, int overlap, const char *name, time_t now)
{
    struct step *s = calloc(1, sizeof(*s));
    Tessera__StepRecord *r = s ? calloc(1, sizeof(*r)) : NULL;
    if (!r) {
        free(s);
        return TS_ENOMEM;
    }
    tessera__step_record__init(r);
    s->rec = r;
    r->job_id = j->rec->job_id;
    r->step_id = l->step_id;
    r->step_job_id = l->step_job_id;
    r->het_job_id = j->rec->het_job_id;
    r->het_job_offset = j->rec->het_job_offset;
    r->state = TESSERA__JOB_STATE__JOB_RUNNING;
    r->start_time = now;
    r->nnodes = v->nnodes;
    r->ntasks = v->ntasks;
    r->cpus = v->cpus;
    r->user_id = l->uid;
    int err = pbutil_set_string(&r->name, name) || pbutil_set_string(&r->nodes, v->nodelist) ||
              pbutil_set_string(&r->partition, v->partition) ||
              pbutil_set_string(&r->step_nodes, l->nodelist);
    if (!err && !overlap && v->n_node_cpus) {
        if (!(r->node_cpus = malloc(v->n_node_cpus * sizeof(*r->node_cpus))))
            err = 1;
        else
            memcpy(r->node_cpus, v->node_cpus, (r->n_node_cpus = v->n_node_cpus) *
                                                   sizeof(*r->node_cpus));
    }
    r->pending_nodes = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(char *));
    for (size_t i = 0; !err && r->pending_nodes && i < l->n_nodes; i++) {
        if (!(r->pending_nodes[i] = strdup(l->nodes[i]->name)))
            err = 1;
        else
            r->n_pending_nodes++;
    }
    if (err || !r->pending_nodes) {
        tessera__step_record__free_unpacked(r, NULL);
        free(s);
        return TS_ENOMEM;
    }
    attach(j, s);
    return step_save(c, s);
}

static int sign_layout(struct ctld *c, Tessera__StepCreateResponse *resp)
{
    size_t len = tessera__step_layout__get_packed_size(resp->layout);
    uint8_t *buf = malloc(len ? len : 1);
    uint8_t *sig = malloc(CRED_SIG_LEN);
    if (!buf || !sig) {
        free(buf);
        free(sig);
        return TS_ENOMEM;
    }
    tessera__step_layout__pack(resp->layout, buf);
    int err = cred_sign(c->cred_key, buf, len, sig);
    resp->credential.data = buf;
    resp->credential.len = len;
    resp->signature.data = sig;
    resp->signature.len = CRED_SIG_LEN;
    return err;
}

void step_create_response_clear(Tessera__StepCreateResponse *resp)
{
    steplayout_free(resp->layout);
    free(resp->credential.data);
    free(resp->signature.data);
    tessera__step_create_response__init(resp);
}

/* The parts of one allocation (srun A : B in a plain job): part i is the request whose
 * het_group is i, and every part runs in the job's one component. */
static int check_parts(struct job *leader, const Tessera__StepCreateRequest *req,
                       struct steplayout_component *parts)
{
    if (job_is_het(leader) || job_ncomponents(leader) != 1)
        return TS_EHET_GROUP; /* srun maps a het job's components itself */
    for (size_t i = 0; i < req->n_components; i++) {
        const Tessera__StepComponentRequest *cr = req->components[i];
        if (cr->het_group >= req->n_components || parts[cr->het_group].req)
            return TS_EINVAL;
        parts[cr->het_group].rec = leader->rec;
        parts[cr->het_group].req = cr;
    }
    return TS_OK;
}

/* The layout, on the CPUs other steps leave; one that would fit but for them is
 * TS_ESTEP_BUSY (srun waits and asks again). */
static int place_step(struct steplayout_input *in, Tessera__StepLayout **out, char *errbuf,
                      size_t errlen)
{
    int err = steplayout_build(in, out, errbuf, errlen);
    if (err != TS_ETOO_MANY_CPUS || !in->busy)
        return err;
    in->busy = NULL;
    Tessera__StepLayout *idle = NULL;
    if (steplayout_build(in, &idle, NULL, 0) != TS_OK)
        return err;
    steplayout_free(idle);
    snprintf(errbuf, errlen, "%s", ts_strerror(TS_ESTEP_BUSY));
    return TS_ESTEP_BUSY;
}

/* Take the step id on every component of the step and queue its records. */
static int record_all(struct ctld *c, struct job *leader, const Tessera__StepCreateRequest *req,
                      const Tessera__StepLayout *l, time_t now)
{
    int err = TS_OK;
    if (req->one_allocation) { /* one record: the step is one job's */
        uint32_t *node_cpus = calloc(l->n_nodes ? l->n_nodes : 1, sizeof(*node_cpus));
        if (!node_cpus)
            return TS_ENOMEM;
        struct record_view v = view_of_step(l, node_cpus);
        leader->rec->next_step_id = l->step_id + 1;
        err = job_save(c, leader);
        if (!err)
            err = record_step(c, leader, l, &v, req->overlap, req->name, now);
        free(node_cpus);
        return err;
    }
    for (size_t i = 0; !err && i < l->n_components; i++) {
        const Tessera__StepLayoutComponent *lc = l->components[i];
        struct job *cj = job_component(leader, lc->offset);
        struct record_view v = view_of_component(lc);
        cj->rec->next_step_id = l->step_id + 1;
        err = job_save(c, cj);
        if (!err)
            err = record_step(c, cj, l, &v, req->overlap, req->name, now);
    }
    return err;
}

/* At most this many parts of one allocation (srun's own bound on components). */
#define STEP_MAX_PARTS 128

int step_create(struct ctld *c, const Tessera__StepCreateRequest *req, uid_t uid,
                Tessera__StepCreateResponse *resp, char *errbuf, size_t errlen)
{
    tessera__step_create_response__init(resp);
    errbuf[0] = '\0';
    struct job *j = job_find(&c->jobs, req->job_id);
    if (!j)
        return TS_EINVALID_JOB_ID;
    struct job *leader = j->leader;
    int err = check_job(c, leader, uid);
    if (err)
        return err;
    if (req->one_allocation && (req->n_components == 0 || req->n_components > STEP_MAX_PARTS))
        return TS_EINVAL;
    size_t nslots = req->one_allocation ? req->n_components : job_ncomponents(leader);
    struct steplayout_component *all = calloc(nslots, sizeof(*all));
    struct steplayout_component *chosen = calloc(nslots, sizeof(*chosen));
    struct placing_ctx pc = {.c = c};
    if (!all || !chosen || (!req->overlap && busy_map(leader, &pc.busy) != TS_OK)) {
        free(all);
        free(chosen);
        return TS_ENOMEM;
    }
    err = req->one_allocation ? check_parts(leader, req, all)
                              : check_components(c, leader, req, all, errbuf, errlen);
    size_t n = 0;
    uint32_t step_id = 0;
    for (size_t i = 0; !err && i < nslots; i++) {
        if (!all[i].req)
            continue;
        chosen[n++] = all[i];
        if (all[i].rec->next_step_id > step_id)
            step_id = all[i].rec->next_step_id;
    }
    char uname[256];
    namecache_name(c->names, NAMECACHE_USER, leader->rec->desc->user_id, uname, sizeof(uname));
    struct timespec clock_now;
    clock_gettime(CLOCK_REALTIME, &clock_now);
    time_t now = clock_now.tv_sec;
    struct steplayout_input in = {
        .job_id = leader->rec->job_id,
        .step_id = step_id,
        .uid = leader->rec->desc->user_id,
        .gid = leader->rec->desc->group_id,
        .user_name = uname,
        .cluster = c->conf->cluster_name,
        .het_size = job_is_het(leader) ? (uint32_t)job_ncomponents(leader) : 0,
        .components = chosen,
        .ncomponents = n,
        .node_addr = node_addr,
        .arg = &pc,
        .issued = now,
        .issued_ms = (int64_t)clock_now.tv_sec * 1000 + clock_now.tv_nsec / 1000000,
        .expires = now + CRED_STEP_LIFETIME,
        .one_allocation = req->one_allocation,
        .busy = pc.busy ? busy_cpus : NULL,
    };
    if (!err)
        err = place_step(&in, &resp->layout, errbuf, errlen);
    for (size_t m = 0; !err && m < resp->layout->n_nodes; m++) {
        Tessera__StepLayoutNode *node = resp->layout->nodes[m];
        err = job_node_share(leader, node->name, &node->job_mem_mb, &node->job_cpu_ids);
    }
    if (!err)
        err = sign_layout(c, resp);
    /* the ids are taken and the records stored only once the step surely exists */
    if (!err)
        err = record_all(c, leader, req, resp->layout, now);
    free(all);
    free(chosen);
    hashmap_destroy(pc.busy);
    if (err) {
        step_create_response_clear(resp);
        return err;
    }
    log_info("step %u.%u (job %u) created on %s (%u tasks)", resp->layout->step_job_id,
             step_id, leader->rec->job_id, resp->layout->nodelist, resp->layout->ntasks);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* ends */

static void remove_pending(Tessera__StepRecord *r, const char *node)
{
    for (size_t i = 0; i < r->n_pending_nodes; i++) {
        if (strcmp(r->pending_nodes[i], node) != 0)
            continue;
        free(r->pending_nodes[i]);
        r->pending_nodes[i] = r->pending_nodes[--r->n_pending_nodes];
        return;
    }
}

/* The state the reported statuses give: a signal (the end of the job kills what is left)
 * counts as cancelled for a step its job's end closed. */
static Tessera__JobState settled_state(const Tessera__StepRecord *r)
{
    int ok = WIFEXITED(r->exit_code) && WEXITSTATUS(r->exit_code) == 0;
    /* the kernel's kills for memory say more than the end that followed them (the job's
     * end often reaches the controller before the step's own report) */
    if (r->usage && r->usage->oom_kills)
        return TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY;
    if (r->cancelled || (r->ended_with_job && WIFSIGNALED(r->exit_code)))
        return TESSERA__JOB_STATE__JOB_CANCELLED;
    return ok ? TESSERA__JOB_STATE__JOB_COMPLETED : TESSERA__JOB_STATE__JOB_FAILED;
}

static void finish(struct ctld *c, struct step *s, time_t now)
{
    Tessera__StepRecord *r = s->rec;
    r->state = settled_state(r);
    r->end_time = now;
    for (size_t i = 0; i < r->n_pending_nodes; i++)
        free(r->pending_nodes[i]);
    r->n_pending_nodes = 0;
    log_info("step %u.%u ended: %s", r->job_id, r->step_id, jobstate_name(r->state));
}

/* The highest exit code wins; a signal counts above any exit code. */
static int worse(int a, int b)
{
    int ka = WIFSIGNALED(a) ? 256 + WTERMSIG(a) : WEXITSTATUS(a);
    int kb = WIFSIGNALED(b) ? 256 + WTERMSIG(b) : WEXITSTATUS(b);
    return kb > ka ? b : a;
}

/* A step of j ended with status: the job's DerivedExitCode is the worst of its steps'. */
static void note_derived_exit(struct ctld *c, struct job *j, int status)
{
    int derived = worse(j->rec->derived_exit_code, status);
    if (derived == j->rec->derived_exit_code)
        return;
    j->rec->derived_exit_code = derived;
    job_save(c, j);
}

/* Is node among this component's nodes of the step? */
static int runs_on(const Tessera__StepRecord *r, const char *node)
{
    struct hostlist *hl = NULL;
    if (hostlist_expand(r->nodes, &hl) != TS_OK)
        return 1; /* cannot tell: count it rather than lose it */
    int found = hostlist_find(hl, node) >= 0;
    hostlist_destroy(hl);
    return found;
}

void step_node_ended(struct ctld *c, const Tessera__StepCompleteRequest *msg)
{
    struct job *j = job_find(&c->jobs, msg->job_id);
    if (!j)
        return;
    time_t now = time(NULL);
    for (size_t i = 0; i < job_ncomponents(j->leader); i++) {
        struct job *cj = job_component(j->leader, i);
        struct step *s = record_of(cj, msg->step_job_id, msg->step_id);
        if (!s || (s->rec->state != TESSERA__JOB_STATE__JOB_RUNNING && !s->rec->ended_with_job))
            continue;
        size_t before = s->rec->n_pending_nodes;
        remove_pending(s->rec, msg->node);
        if (before == s->rec->n_pending_nodes)
            continue; /* a resent report */
        s->rec->exit_code = worse(s->rec->exit_code, msg->status);
        /* usage counts for the components that ran on the node (all of those that share
         * it: its step daemon measured their tasks together) */
        if (runs_on(s->rec, msg->node) && acctusage_merge(&s->rec->usage, msg->usage) != TS_OK)
            log_error("step %u.%u: out of memory; usage on %s not counted", s->rec->job_id,
                      msg->step_id, msg->node);
        if (s->rec->n_pending_nodes == 0 && s->rec->state == TESSERA__JOB_STATE__JOB_RUNNING)
            finish(c, s, now);
        else if (s->rec->n_pending_nodes == 0) /* closed by the job's end: now it is known */
            s->rec->state = settled_state(s->rec);
        if (s->rec->n_pending_nodes == 0)
            note_derived_exit(c, cj, s->rec->exit_code);
        step_save(c, s);
    }
}

static int listed(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static int pending_on(const Tessera__StepRecord *r, const char *node)
{
    for (size_t i = 0; i < r->n_pending_nodes; i++)
        if (!strcmp(r->pending_nodes[i], node))
            return 1;
    return 0;
}

void step_node_registered(struct ctld *c, const char *node, int64_t boot_time,
                          const uint32_t *running, size_t n)
{
    for (struct job *j = c->jobs.head; j; j = j->next) {
        if (j->leader != j || listed(running, n, j->rec->job_id))
            continue;
        for (size_t i = 0; i < job_ncomponents(j); i++) {
            for (struct step *s = job_component(j, i)->steps; s; s = s->next) {
                const Tessera__StepRecord *r = s->rec;
                if ((r->state != TESSERA__JOB_STATE__JOB_RUNNING && !r->ended_with_job) ||
                    r->start_time > boot_time ||
                    !pending_on(r, node))
                    continue;
                log_warn("step %u.%u: gone from %s (its daemon restarted)", r->job_id,
                         r->step_id, node);
                Tessera__StepCompleteRequest lost = TESSERA__STEP_COMPLETE_REQUEST__INIT;
                lost.job_id = j->rec->job_id;
                lost.step_id = r->step_id;
                lost.step_job_id = r->step_job_id;
                lost.node = (char *)node;
                lost.status = SIGKILL; /* a wait status: killed */
                /* every component's record of this step: no longer pending on node */
                step_node_ended(c, &lost);
            }
        }
    }
}

void step_job_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind != JOB_CHANGE_ENDED)
        return;
    struct job *leader = ch->job;
    time_t now = ch->now;
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        struct job *cj = job_component(leader, i);
        for (struct step *s = cj->steps; s; s = s->next) {
            Tessera__StepRecord *r = s->rec;
            if (r->state != TESSERA__JOB_STATE__JOB_RUNNING)
                continue;
            /* Its nodes may not have reported yet (srun returned, the script ended before
             * the step daemons' reports arrived): CANCELLED for now, and the nodes still
             * pending may settle it from what they report. */
            r->ended_with_job = 1;
            r->state = TESSERA__JOB_STATE__JOB_CANCELLED;
            r->end_time = now;
            log_info("step %u.%u ended with its job", r->job_id, r->step_id);
            step_save(c, s);
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* signals */

static void signal_node(struct ctld *c, const char *name, uint32_t job_id,
                        const Tessera__StepRecord *r, int signo, int terminate)
{
    Tessera__StepSignalRequest sig = TESSERA__STEP_SIGNAL_REQUEST__INIT;
    sig.job_id = job_id;
    sig.step_id = r->step_id;
    sig.step_job_id = r->step_job_id;
    sig.signal = (uint32_t)signo;
    sig.terminate = terminate;
    sig.kill_wait = c->conf->kill_wait;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_SIGNAL;
    req.step_signal = &sig;
    node_send(c, name, &req, "step signal");
}

static void signal_step(struct ctld *c, const Tessera__StepRecord *r, uint32_t leader_id,
                        int signo, int terminate)
{
    struct hostlist *hl = hostlist_create();
    if (!hl || hostlist_push_expr(hl, r->step_nodes) != TS_OK) {
        hostlist_destroy(hl);
        return;
    }
    for (size_t i = 0; i < hostlist_count(hl); i++)
        signal_node(c, hostlist_nth(hl, i), leader_id, r, signo, terminate);
    hostlist_destroy(hl);
}

/* "93.2" -> "93", 2. */
static int split_step_id(const char *text, char *job, size_t len, uint32_t *step_id)
{
    const char *dot = strrchr(text, '.');
    if (!dot || dot == text || (size_t)(dot - text) >= len || !dot[1])
        return TS_EINVALID_JOB_ID;
    char *end = NULL;
    unsigned long v = strtoul(dot + 1, &end, 10);
    if (*end || dot[1] < '0' || dot[1] > '9' || v > UINT32_MAX)
        return TS_EINVALID_JOB_ID;
    memcpy(job, text, (size_t)(dot - text));
    job[dot - text] = '\0';
    *step_id = (uint32_t)v;
    return TS_OK;
}

/* The step "J.S" names: J's component (its own id, "N+k"; a leader's own id is component
 * 0, not the whole job) has a record with step id S, and the step is that record's
 * (step_job_id, S) over every component. *leader: the job, for permissions; *named: the
 * record, NULL when the component has no step S. */
static int named_step(struct ctld *c, const char *text, struct job **leader,
                      struct step **named)
{
    char job[64];
    uint32_t step_id;
    struct jobid id;
    int err = split_step_id(text, job, sizeof(job), &step_id);
    if (!err)
        err = jobid_parse(job, &id);
    if (err)
        return err;
    struct job *targets[128];
    int whole = 0;
    int n = job_resolve(&c->jobs, job, JOB_SCOPE_DISPLAY, 0, targets, 128, &whole);
    if (n < 0)
        return -n;
    struct job *comp = targets[0];
    for (int i = 0; i < n && !id.has_offset; i++)
        if (targets[i]->rec->job_id == id.id)
            comp = targets[i];
    *leader = comp->leader;
    *named = find_step(comp, step_id);
    return TS_OK;
}

int step_action(struct ctld *c, const char *text, uid_t uid, int signo, int terminate)
{
    struct job *leader;
    struct step *named;
    int err = named_step(c, text, &leader, &named);
    if (err)
        return err;
    const Tessera__JobRecord *lr = leader->rec;
    if (!job_owner_or_admin(c, leader, uid))
        return TS_EPERM;
    if (!named)
        return TS_ESTEP_NOT_FOUND;
    uint32_t step_job_id = named->rec->step_job_id, step_id = named->rec->step_id;
    int running = 0;
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        struct step *s = record_of(job_component(leader, i), step_job_id, step_id);
        if (!s || s->rec->state != TESSERA__JOB_STATE__JOB_RUNNING)
            continue;
        if (!running++) /* the step runs once per node whatever its components */
            signal_step(c, s->rec, lr->job_id, signo, terminate);
        if (terminate) {
            s->rec->cancelled = 1;
            step_save(c, s);
        }
    }
    return running ? TS_OK : TS_EALREADY_DONE;
}

/* ------------------------------------------------------------------------------------ */
/* queries */

static int matches_user(const Tessera__StepQueryRequest *q, const Tessera__StepRecord *r)
{
    if (q->n_user_ids == 0)
        return 1;
    for (size_t i = 0; i < q->n_user_ids; i++)
        if (q->user_ids[i] == r->user_id)
            return 1;
    return 0;
}

static int push(Tessera__StepRecord ***out, size_t *n, size_t *cap, Tessera__StepRecord *r)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        Tessera__StepRecord **v = realloc(*out, ncap * sizeof(*v));
        if (!v)
            return TS_ENOMEM;
        *out = v;
        *cap = ncap;
    }
    (*out)[(*n)++] = r;
    return TS_OK;
}

static int wanted(const Tessera__StepQueryRequest *q, const Tessera__StepRecord *r)
{
    return (q->all_states || r->state == TESSERA__JOB_STATE__JOB_RUNNING) && matches_user(q, r);
}

/* "J.S": the records of the step it names; "J": the steps of what J names. */
static int query_id(struct ctld *c, const Tessera__StepQueryRequest *q, const char *text,
                    Tessera__StepRecord ***out, size_t *n, size_t *cap)
{
    if (strchr(text, '.')) {
        struct job *leader;
        struct step *named;
        int err = named_step(c, text, &leader, &named);
        for (size_t i = 0; !err && named && i < job_ncomponents(leader); i++) {
            struct step *s =
                record_of(job_component(leader, i), named->rec->step_job_id, named->rec->step_id);
            if (s && wanted(q, s->rec))
                err = push(out, n, cap, s->rec);
        }
        return err;
    }
    struct job *targets[128];
    int whole = 0;
    int k = job_resolve(&c->jobs, text, JOB_SCOPE_DISPLAY, 0, targets, 128, &whole);
    if (k < 0)
        return -k;
    for (int i = 0; i < k; i++)
        for (struct step *s = targets[i]->steps; s; s = s->next)
            if (wanted(q, s->rec) && push(out, n, cap, s->rec) != TS_OK)
                return TS_ENOMEM;
    return TS_OK;
}

int step_query(struct ctld *c, const Tessera__StepQueryRequest *q, Tessera__StepRecord ***out,
               size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (q->n_job_ids == 0) {
        for (struct job *j = c->jobs.head; j; j = j->next)
            for (struct step *s = j->steps; s; s = s->next)
                if (wanted(q, s->rec) && push(out, n, &cap, s->rec) != TS_OK)
                    return TS_ENOMEM;
        return TS_OK;
    }
    for (size_t i = 0; i < q->n_job_ids; i++) {
        int err = query_id(c, q, q->job_ids[i], out, n, &cap);
        if (err == TS_EINVALID_JOB_ID && q->n_job_ids > 1)
            continue; /* as squeue: ids no longer known are skipped among others */
        if (err)
            return err;
    }
    return TS_OK;
}
