/* sched_getaffinity and CPU_* come with _GNU_SOURCE, which the build defines */
#include "noded/containment.h"

#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/text/idset.h"
#include "common/util/hashmap.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "noded/container.h"
#include "noded/noded.h"
#include "noded/stepstatus.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAP_EVERY_MS 100
#define REAP_TRIES 100 /* 10 s: what SIGKILL does not end by then is stuck in the kernel */
#define RECLAIM_MAX 4096

/* A killed unit waiting to be empty before it can be removed. */
struct reap {
    struct noded *nd;
    uint32_t job_id;
    char step[32];             /* "": the whole job */
    int tries;
    struct loop_timer *timer;
    struct reap *next;
};

struct containment {
    struct containers *c;
    struct reap *reaps;
    uint32_t machine_cpus[CPU_SETSIZE]; /* the CPUs this daemon may use, ascending */
    size_t nmachine;
};

/* ------------------------------------------------------------------------------------ */
/* opening */

static int wanted(const struct conf *conf)
{
    return strcmp(conf->proctrack_type, "proctrack/cgroup") == 0 &&
           strcmp(conf->cgroup_plugin, "none") != 0;
}

/* The node's CPU indices are mapped in order onto the CPUs the daemon may use; a node
 * that declares more CPUs than the machine has (several test nodes on one machine) wraps
 * around them. */
static void read_machine_cpus(struct noded *nd, struct containment *ct)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (uint32_t i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                ct->machine_cpus[ct->nmachine++] = i;
    if (nd->node && nd->node->cpus > ct->nmachine && ct->nmachine)
        log_info("node %s: its %u CPUs are mapped onto this machine's %zu", nd->name,
                 nd->node->cpus, ct->nmachine);
}

void containment_open(struct noded *nd)
{
    nd->contain_failure[0] = '\0';
    if (!wanted(nd->conf))
        return;
    const struct conf *conf = nd->conf;
    struct container_conf cc = {
        .plugin = conf->cgroup_plugin,
        .constrain_ram = conf->constrain_ram_space,
        .constrain_cores = conf->constrain_cores,
        .allowed_processes = conf->allowed_processes,
    };
    struct containment *ct = calloc(1, sizeof(*ct));
    char why[512] = "out of memory";
    int err = ct ? container_open(&cc, conf->cluster_name, nd->name, &ct->c, why, sizeof(why))
                 : TS_ENOMEM;
    if (err) {
        free(ct);
        snprintf(nd->contain_failure, sizeof(nd->contain_failure),
                 "cannot contain jobs: %s", why);
        log_error("node %s: %s; the node runs no job and asks to be drained", nd->name,
                  nd->contain_failure);
        return;
    }
    read_machine_cpus(nd, ct);
    nd->containment = ct;
    log_info("node %s: jobs contained (%s) in tessera/%s/%s", nd->name,
             container_describe(ct->c), conf->cluster_name, nd->name);
}

int containment_ready(const struct noded *nd)
{
    return nd->contain_failure[0] == '\0';
}

static void reap_unlink(struct containment *ct, struct reap *r)
{
    for (struct reap **p = &ct->reaps; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    free(r);
}

void containment_close(struct noded *nd)
{
    struct containment *ct = nd->containment;
    if (!ct)
        return;
    while (ct->reaps) {
        loop_timer_cancel(nd->loop, ct->reaps->timer);
        reap_unlink(ct, ct->reaps);
    }
    container_close(ct->c);
    free(ct);
    nd->containment = NULL;
}

/* ------------------------------------------------------------------------------------ */
/* units */

/* A unit's folder name: "batch", the step's id, or "<component>.<step>" for a step whose
 * first component is not the job's leader (its step id alone is not unique). */
static const char *unit_name(const struct nd_step_id *step, char name[32])
{
    if (!step)
        return "batch";
    if (step->step_job_id && step->step_job_id != step->job_id)
        snprintf(name, 32, "%" PRIu32 ".%" PRIu32, step->step_job_id, step->step_id);
    else
        snprintf(name, 32, "%" PRIu32, step->step_id);
    return name;
}

/* The node's CPU indices as the machine's CPUs, into buf ("" when all). */
static int map_cpus(const struct containment *ct, const char *cpu_ids, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!cpu_ids || !*cpu_ids || !ct->nmachine)
        return TS_OK;
    struct idset *ids = NULL, *cpus = idset_create();
    int err = cpus ? idset_parse(cpu_ids, &ids) : TS_ENOMEM;
    for (uint32_t i = err ? IDSET_INVALID : idset_first(ids); !err && i != IDSET_INVALID;
         i = idset_next(ids, i))
        err = idset_add(cpus, ct->machine_cpus[i % ct->nmachine]);
    char *text = err ? NULL : idset_format(cpus);
    if (!err && (!text || snprintf(buf, len, "%s", text) >= (int)len))
        err = text ? TS_ETOOBIG : TS_ENOMEM;
    free(text);
    idset_destroy(ids);
    idset_destroy(cpus);
    return err;
}

static int limits_for(struct noded *nd, const struct containment_alloc *alloc,
                      struct container_limits *lim)
{
    const struct conf *conf = nd->conf;
    memset(lim, 0, sizeof(*lim));
    if (conf->constrain_ram_space && alloc->mem_mb) {
        uint64_t bytes = alloc->mem_mb * 1024 * 1024;
        lim->mem_bytes = bytes / 100 * conf->allowed_ram_space;
        lim->swap_bytes = lim->mem_bytes / 100 * conf->allowed_swap_space;
    }
    lim->pids_max = conf->allowed_processes;
    return conf->constrain_cores ? map_cpus(nd->containment, alloc->cpu_ids, lim->cpus,
                                            sizeof(lim->cpus))
                                 : TS_OK;
}

/* A pending removal of the job (or of the unit) called off: it runs here again. */
static void reap_cancel(struct noded *nd, uint32_t job_id)
{
    struct containment *ct = nd->containment;
    for (struct reap *r = ct->reaps, *next; r; r = next) {
        next = r->next;
        if (r->job_id == job_id) {
            loop_timer_cancel(nd->loop, r->timer);
            reap_unlink(ct, r);
        }
    }
}

int containment_enter(struct noded *nd, uint32_t job_id, const struct nd_step_id *step,
                      pid_t pid, const struct containment_alloc *alloc)
{
    struct containment *ct = nd->containment;
    if (!ct)
        return containment_ready(nd) ? TS_OK : TS_EPERM;
    reap_cancel(nd, job_id);
    char name[32];
    struct container_limits lim;
    int err = limits_for(nd, alloc, &lim);
    if (!err)
        err = container_enter(ct->c, job_id, unit_name(step, name), pid, &lim);
    return err;
}

static void reap_tick(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct reap *r = arg;
    struct containment *ct = r->nd->containment;
    const char *step = r->step[0] ? r->step : NULL;
    if (container_remove(ct->c, r->job_id, step) == TS_OK) {
        loop_timer_cancel(loop, t);
        reap_unlink(ct, r);
    } else if (++r->tries >= REAP_TRIES) {
        log_error("job %u: its container%s%s cannot be removed: processes stay after SIGKILL",
                  r->job_id, step ? " of step " : "", step ? step : "");
        loop_timer_cancel(loop, t);
        reap_unlink(ct, r);
    }
}

/* Remove the unit now, or once it is empty (retried a while). */
static void remove_or_reap(struct noded *nd, uint32_t job_id, const char *step)
{
    struct containment *ct = nd->containment;
    if (container_remove(ct->c, job_id, step) == TS_OK)
        return;
    struct reap *r = calloc(1, sizeof(*r));
    if (!r || !(r->timer = loop_timer_add(nd->loop, REAP_EVERY_MS, REAP_EVERY_MS, reap_tick, r))) {
        free(r);
        log_error("job %u: out of memory: its container stays", job_id);
        return;
    }
    r->nd = nd;
    r->job_id = job_id;
    snprintf(r->step, sizeof(r->step), "%s", step ? step : "");
    r->next = ct->reaps;
    ct->reaps = r;
}

/* What is in the unit killed. */
static void kill_unit(struct noded *nd, uint32_t job_id, const char *step)
{
    int err = container_kill(nd->containment->c, job_id, step);
    if (err)
        log_error("job %u: cannot kill its container: %s", job_id, ts_strerror(err));
}

void containment_unit_end(struct noded *nd, uint32_t job_id, const struct nd_step_id *step,
                          struct stepstatus_usage *usage, int *has_usage)
{
    struct containment *ct = nd->containment;
    if (!ct)
        return;
    char name[32];
    const char *unit = unit_name(step, name);
    kill_unit(nd, job_id, unit); /* measured once nothing of it runs on */
    struct container_usage u;
    if (container_usage(ct->c, job_id, unit, &u) == TS_OK) {
        /* the container saw every process of the unit, also those that left their
         * parents: its figures replace what wait4 counted */
        if (u.has_cpu) {
            usage->user_usec = u.user_usec;
            usage->sys_usec = u.sys_usec;
        }
        if (u.has_memory)
            usage->max_rss_kb = u.peak_bytes / 1024;
        usage->oom_kills = u.oom_kills;
        *has_usage = 1;
    }
    remove_or_reap(nd, job_id, unit);
}

void containment_job_end(struct noded *nd, uint32_t job_id)
{
    if (!nd->containment)
        return;
    kill_unit(nd, job_id, NULL);
    remove_or_reap(nd, job_id, NULL);
}

int containment_freeze(struct noded *nd, uint32_t job_id, int frozen)
{
    if (!nd->containment)
        return TS_ENOENT;
    int err = container_freeze(nd->containment->c, job_id, frozen);
    if (err && err != TS_ENOENT)
        log_error("job %u: cannot %s its container: %s", job_id, frozen ? "freeze" : "thaw",
                  ts_strerror(err));
    return err;
}

void containment_reclaim(struct noded *nd)
{
    struct containment *ct = nd->containment;
    if (!ct)
        return;
    uint32_t *ids = calloc(RECLAIM_MAX, sizeof(*ids));
    size_t n = 0;
    if (!ids || container_jobs(ct->c, ids, RECLAIM_MAX, &n) != TS_OK)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        if (hashmap_get_u32(nd->jobs, ids[i]))
            continue; /* adopted: its batch script still runs */
        log_info("job %u: its container outlived an earlier daemon; killed", ids[i]);
        containment_job_end(nd, ids[i]);
    }
    free(ids);
}
