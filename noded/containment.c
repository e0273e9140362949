#include "noded/containment.h"

#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "noded/cgroup.h"
#include "noded/noded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAP_EVERY_MS 100
#define REAP_TRIES 100 /* 10 s: what SIGKILL does not end by then is stuck in the kernel */

/* A killed container waiting to be empty before it can be removed. */
struct reap {
    struct noded *nd;
    uint32_t job_id;
    int tries;
    struct loop_timer *timer;
    struct reap *next;
};

int containment_open(struct noded *nd, char *errbuf, size_t errlen)
{
    if (strcmp(nd->conf->proctrack_type, "proctrack/cgroup") != 0)
        return TS_OK;
    char mount[1024], why[512] = "";
    int err = cgroup_v2_mount(mount, sizeof(mount));
    if (err)
        snprintf(why, sizeof(why), "no cgroup2 filesystem is mounted");
    else
        err = cgroup_root_open(mount, nd->conf->cluster_name, nd->name, &nd->cgroups, why,
                               sizeof(why));
    if (err) {
        snprintf(errbuf, errlen, "ProctrackType=proctrack/cgroup: %s", why);
        return err;
    }
    log_info("node %s: jobs contained in %s/tessera/%s/%s", nd->name, mount,
             nd->conf->cluster_name, nd->name);
    return TS_OK;
}

static void reap_unlink(struct noded *nd, struct reap *r)
{
    for (struct reap **p = &nd->reaps; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    free(r);
}

static void reap_tick(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct reap *r = arg;
    struct noded *nd = r->nd;
    if (cgroup_job_remove(nd->cgroups, r->job_id) == TS_OK) {
        loop_timer_cancel(loop, t);
        reap_unlink(nd, r);
    } else if (++r->tries >= REAP_TRIES) {
        log_error("job %u: its container cannot be removed: processes stay after SIGKILL",
                  r->job_id);
        loop_timer_cancel(loop, t);
        reap_unlink(nd, r);
    }
}

void containment_job_end(struct noded *nd, uint32_t job_id)
{
    if (!nd->cgroups)
        return;
    int err = cgroup_job_kill(nd->cgroups, job_id);
    if (err)
        log_error("job %u: cannot kill its container: %s", job_id, ts_strerror(err));
    if (cgroup_job_remove(nd->cgroups, job_id) == TS_OK)
        return;
    struct reap *r = calloc(1, sizeof(*r));
    if (!r || !(r->timer = loop_timer_add(nd->loop, REAP_EVERY_MS, REAP_EVERY_MS, reap_tick, r))) {
        free(r);
        log_error("job %u: out of memory: its container stays", job_id);
        return;
    }
    r->nd = nd;
    r->job_id = job_id;
    r->next = nd->reaps;
    nd->reaps = r;
}

int containment_job_enter(struct noded *nd, uint32_t job_id, pid_t pid)
{
    if (!nd->cgroups)
        return TS_OK;
    /* the job runs here again (a new step of its allocation): its container stays */
    for (struct reap *r = nd->reaps; r; r = r->next)
        if (r->job_id == job_id) {
            loop_timer_cancel(nd->loop, r->timer);
            reap_unlink(nd, r);
            break;
        }
    int err = cgroup_job_create(nd->cgroups, job_id);
    return err ? err : cgroup_job_attach(nd->cgroups, job_id, pid);
}

void containment_close(struct noded *nd)
{
    while (nd->reaps) {
        struct reap *r = nd->reaps;
        loop_timer_cancel(nd->loop, r->timer);
        reap_unlink(nd, r);
    }
    cgroup_root_close(nd->cgroups);
    nd->cgroups = NULL;
}
