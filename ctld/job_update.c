/* scontrol update jobid=... key=value: change fields of one component ("123+2", or a
 * non-leader's own id) or of every component ("123", the leader). The changes arrive as a
 * JobDesc whose present fields are the ones to set. A pending component's copy of its
 * description takes them and is checked as a new submission would be; a running one takes
 * only what can change under a running job (its time limit, a smaller node count, its
 * priority). Only if every component passes are the changes put in place (docs/01-hetjob.md §4.2;
 * docs/job-states.md, section 7). */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/pbutil.h"

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fields a user may change at all; the controller's own (user_id, group_id, submit_host)
 * and the batch script are not among them. */
static const char *const updatable[] = {
    "name", "account", "partition", "qos", "ntasks", "min_nodes", "max_nodes",
    "cpus_per_task", "mem_per_node_mb", "mem_per_cpu_mb", "time_limit", "time_min",
    "constraint", "exclude", "nodelist", "ntasks_per_node", "exclusive", "begin_time",
    "deadline", "dependency", "nice", "priority", "requeue", "comment", "work_dir",
    "mail_type", "mail_user", "std_out", "std_err", "std_in", "open_mode", "hold_until",
    "licenses", /* checked again as at submission (job_check_component) */
};

/* What may change under a running job: the rest was its allocation's basis. */
static const char *const running_updatable[] = {
    "time_limit", "min_nodes", "max_nodes", "priority", "nice",
};

/* Largest limit, and largest move of one, in seconds: Slurm's limits are 32-bit minutes. */
#define UPDATE_MAX_LIMIT ((int64_t)UINT32_MAX * 60)

static int listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return 1;
    return 0;
}

static int field_present(const ProtobufCFieldDescriptor *f, const void *msg)
{
    const char *base = msg;
    if (f->type == PROTOBUF_C_TYPE_STRING)
        return *(char *const *)(base + f->offset) != NULL;
    return *(const protobuf_c_boolean *)(base + f->quantifier_offset);
}

/* TS_OK when every present field of changes is among names[0..n). */
static int only_fields(const Tessera__JobDesc *changes, const char *const *names, size_t n,
                       int refusal)
{
    const ProtobufCMessageDescriptor *md = &tessera__job_desc__descriptor;
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &md->fields[i];
        if (f->label == PROTOBUF_C_LABEL_OPTIONAL && field_present(f, changes) &&
            !listed(names, n, f->name))
            return refusal;
    }
    return TS_OK;
}

static size_t scalar_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

/* Copy every present optional field of src into dst (strings duplicated, the old ones
 * freed: dst is protobuf-c's unpacked tree, which uses malloc). The fields were checked
 * to be updatable. */
static int merge_desc(Tessera__JobDesc *dst, const Tessera__JobDesc *src)
{
    const ProtobufCMessageDescriptor *md = &tessera__job_desc__descriptor;
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &md->fields[i];
        if (f->label != PROTOBUF_C_LABEL_OPTIONAL || !field_present(f, src))
            continue;
        char *d = (char *)dst + f->offset;
        const char *s = (const char *)src + f->offset;
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            char *copy = strdup(*(char *const *)s);
            if (!copy)
                return TS_ENOMEM;
            free(*(char **)d);
            *(char **)d = copy;
        } else {
            memcpy(d, s, scalar_size(f->type));
            *(protobuf_c_boolean *)((char *)dst + f->quantifier_offset) = 1;
        }
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* what one component would become */

/* One component's share of the update, worked out before anything changes. */
struct planned {
    struct job *job;
    Tessera__JobDesc *merged;  /* pending: its new description */
    struct job_sizing sizing;  /* pending: its new effective request */
    int has_limit;
    int64_t limit;             /* its new time limit (-1 unlimited) */
    uint32_t keep_nodes;       /* running: the node count it shrinks to (0: unchanged) */
};

/* The limit a component gets: the one asked for, or its own moved by the delta (an
 * unlimited one stays unlimited). Slurm's texts count minutes. */
static int plan_time_limit(const Tessera__JobRecord *r, const Tessera__JobUpdateRequest *u,
                           struct planned *p, char *why, size_t len)
{
    int64_t delta = u->time_limit_delta;
    if (u->changes->has_time_limit) {
        p->limit = u->changes->time_limit;
    } else if (delta) {
        if (delta > UPDATE_MAX_LIMIT || delta < -UPDATE_MAX_LIMIT)
            return TS_EINVALID_TIME_LIMIT;
        if (r->time_limit >= 0 && delta < 0 && -delta > r->time_limit) {
            snprintf(why, len, "%s (%lld > %lld)", ts_strerror(TS_ETIME_DECREMENT),
                     (long long)(-delta / 60), (long long)(r->time_limit / 60));
            return TS_ETIME_DECREMENT;
        }
        p->limit = r->time_limit < 0 ? -1 : r->time_limit + delta;
    } else {
        return TS_OK;
    }
    if (p->limit < -1 || p->limit > UPDATE_MAX_LIMIT)
        return TS_EINVALID_TIME_LIMIT;
    p->has_limit = 1;
    return TS_OK;
}

static int raises_limit(const Tessera__JobRecord *r, int64_t limit)
{
    return r->time_limit >= 0 && (limit < 0 || limit > r->time_limit);
}

/* Priority and nice, for pending and running components alike: users may lower their
 * priority and set a nice of 0 or more; a held job keeps priority 0 until released. */
static int check_priority(const Tessera__JobRecord *r, const Tessera__JobDesc *changes,
                          int admin)
{
    if (changes->has_priority && changes->priority && r->hold)
        return TS_EJOB_HELD;
    if (changes->has_priority && !admin && changes->priority > r->priority)
        return TS_EPERM;
    if (changes->has_nice && (changes->nice < -JOB_NICE_MAX || changes->nice > JOB_NICE_MAX))
        return TS_EINVALID_NICE;
    if (changes->has_nice && !admin && changes->nice < 0)
        return TS_EPERM;
    return TS_OK;
}

static int plan_pending(struct ctld *c, struct planned *p, const Tessera__JobDesc *changes,
                        char *why, size_t len)
{
    const Tessera__JobRecord *r = p->job->rec;
    int err = only_fields(changes, updatable, sizeof(updatable) / sizeof(updatable[0]),
                          TS_EINVAL);
    if (err)
        return err;
    if (!(p->merged = pbutil_copy(&r->desc->base)))
        return TS_ENOMEM;
    if ((err = merge_desc(p->merged, changes)))
        return err;
    /* Priority=0 is a hold (applied below), not a priority to keep */
    if (changes->has_priority && !changes->priority) {
        p->merged->has_priority = r->desc->has_priority;
        p->merged->priority = r->desc->priority;
    }
    if (p->has_limit) {
        p->merged->has_time_limit = 1;
        p->merged->time_limit = p->limit;
    }
    if ((err = job_limits_check_fields(p->merged, why, len)))
        return err;
    if (changes->licenses && r->het_job_offset > 0)
        return TS_EINVALID_LICENSES;
    /* who may set priority and nice is this update's own rule (check_priority): a value
     * an administrator set before stands when its owner changes something else */
    return job_check_component(c, p->merged, r->het_job_offset, 1, &p->sizing, why, len);
}

static int plan_running(struct planned *p, const Tessera__JobDesc *changes, int admin)
{
    const Tessera__JobRecord *r = p->job->rec;
    int err = only_fields(changes, running_updatable,
                          sizeof(running_updatable) / sizeof(running_updatable[0]),
                          TS_EJOB_NOT_PENDING);
    if (err)
        return err;
    if (r->end_pending)
        return TS_EALREADY_DONE;
    if (p->has_limit && !admin && raises_limit(r, p->limit))
        return TS_EPERM; /* users may shorten a running job, not lengthen it */
    if (!changes->has_min_nodes)
        return TS_OK;
    if (!changes->min_nodes)
        return TS_ENODE_COUNT;
    if (changes->min_nodes > r->n_allocs)
        return TS_ENOT_SUPPORTED_HERE; /* a running job never grows */
    if (r->state != TESSERA__JOB_STATE__JOB_RUNNING)
        return TS_EJOB_SUSPENDED;
    if (changes->min_nodes < r->n_allocs)
        p->keep_nodes = changes->min_nodes;
    return TS_OK;
}

static int plan_component(struct ctld *c, struct planned *p, const Tessera__JobUpdateRequest *u,
                          uid_t uid, char *why, size_t len)
{
    const Tessera__JobRecord *r = p->job->rec;
    int admin = job_is_admin(c, uid);
    if (!admin && !(r->desc->has_user_id && r->desc->user_id == (uint32_t)uid))
        return TS_EUSER_ID;
    if (jobstate_is_finished(r->state))
        return TS_EALREADY_DONE;
    int err = plan_time_limit(r, u, p, why, len);
    if (!err)
        err = check_priority(r, u->changes, admin);
    if (err)
        return err;
    if (r->state == TESSERA__JOB_STATE__JOB_PENDING)
        return plan_pending(c, p, u->changes, why, len);
    return plan_running(p, u->changes, admin);
}

/* ------------------------------------------------------------------------------------ */
/* putting it in place */

static void apply_priority(Tessera__JobRecord *r, const Tessera__JobDesc *changes, int admin)
{
    if (changes->has_priority && !changes->priority) {
        if (r->state == TESSERA__JOB_STATE__JOB_PENDING)
            r->hold = admin ? 2 : 1; /* Slurm: Priority=0 holds a pending job */
        r->priority = 0;
    } else if (changes->has_priority && !r->hold) {
        r->priority = changes->priority;
    } else if (changes->has_nice && !r->hold && !r->desc->has_priority &&
               r->state == TESSERA__JOB_STATE__JOB_PENDING) { /* as Slurm: running, stored only */
        r->priority = job_default_priority(r);
    }
}

static int apply_pending(struct planned *p)
{
    Tessera__JobRecord *r = p->job->rec;
    tessera__job_desc__free_unpacked(r->desc, NULL);
    r->desc = p->merged;
    p->merged = NULL;
    job_apply_sizing(r, &p->sizing);
    return TS_OK;
}

static int apply_running(struct ctld *c, struct planned *p, const Tessera__JobDesc *changes)
{
    Tessera__JobRecord *r = p->job->rec;
    Tessera__JobDesc *d = r->desc;
    if (p->has_limit) {
        r->time_limit = p->limit; /* job_check_time_limits reads it at its next tick */
        d->has_time_limit = 1;
        d->time_limit = p->limit;
    }
    if (changes->has_priority && changes->priority) {
        d->has_priority = 1;
        d->priority = changes->priority;
    }
    if (changes->has_nice) {
        d->has_nice = 1;
        d->nice = changes->nice;
    }
    return p->keep_nodes ? job_shrink_component(c, p->job, p->keep_nodes) : TS_OK;
}

static int apply_component(struct ctld *c, struct planned *p, const Tessera__JobDesc *changes,
                           int admin, time_t now)
{
    Tessera__JobRecord *r = p->job->rec;
    int pending = r->state == TESSERA__JOB_STATE__JOB_PENDING;
    int err = pending ? apply_pending(p) : apply_running(c, p, changes);
    apply_priority(r, changes, admin);
    if (!err && pending)
        err = job_dependency_attach(c, p->job); /* its text or name may have changed */
    if (!err) {
        job_update_reason(c, p->job, now);
        err = job_save(c, p->job);
    }
    return err;
}

int job_update(struct ctld *c, const Tessera__JobUpdateRequest *u, uid_t uid, char *why,
               size_t len)
{
    struct job *targets[128];
    struct planned plan[128];
    int whole = 0;
    int n = job_resolve(&c->jobs, u->job_id, JOB_SCOPE_DISPLAY, 0, targets,
                        sizeof(targets) / sizeof(targets[0]), &whole);
    if (n < 0)
        return -n;
    memset(plan, 0, sizeof(plan));
    int err = TS_OK;
    for (int i = 0; i < n && !err; i++) {
        plan[i].job = targets[i];
        err = plan_component(c, &plan[i], u, uid, why, len);
    }
    time_t now = time(NULL);
    int admin = job_is_admin(c, uid);
    for (int i = 0; i < n && !err; i++)
        err = apply_component(c, &plan[i], u->changes, admin, now);
    for (int i = 0; i < n; i++)
        if (plan[i].merged)
            tessera__job_desc__free_unpacked(plan[i].merged, NULL);
    if (err != TS_ETIME_DECREMENT)
        why[0] = '\0'; /* the other refusals keep their stable texts, as Slurm prints them */
    if (!err) {
        log_verbose("job %s updated by uid %u", u->job_id, (unsigned)uid);
        if (u->changes->has_hold_until) /* a standing hold lasts until the new time */
            for (int i = 0; i < n; i++)
                job_changed_hold_until(c, targets[i]->leader);
        for (int i = 0; i < n; i++)
            job_changed_waiting(c, targets[i]->leader);
    }
    return err;
}
