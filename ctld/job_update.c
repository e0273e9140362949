/* scontrol update jobid=... key=value: change fields of one component ("123+2", or a
 * non-leader's own id) or of every component ("123", the leader). The changes arrive as a
 * JobDesc whose present fields are the ones to set; they are merged into a copy of each
 * component's description, the copy is checked as a new submission would be, and only if
 * every component passes are the copies put in place (SPEC 1.3). */
#include "ctld/ctld.h"
#include "ctld/filter_activate.h"
#include "ctld/job.h"
#include "ctld/sched.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/jobstate.h"
#include "common/log.h"
#include "common/pbutil.h"

#include <protobuf-c/protobuf-c.h>
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

static int is_updatable(const char *name)
{
    for (size_t i = 0; i < sizeof(updatable) / sizeof(updatable[0]); i++)
        if (!strcmp(updatable[i], name))
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
 * freed: dst is protobuf-c's unpacked tree, which uses malloc). Refuses fields that may
 * not be updated. */
static int merge_desc(Tessera__JobDesc *dst, const Tessera__JobDesc *src)
{
    const ProtobufCMessageDescriptor *md = &tessera__job_desc__descriptor;
    for (unsigned i = 0; i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &md->fields[i];
        if (f->label != PROTOBUF_C_LABEL_OPTIONAL || !field_present(f, src))
            continue;
        if (!is_updatable(f->name))
            return TS_EINVAL;
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

/* Rules beyond "is it a valid job": who may change what, and when. */
static int check_rights(const struct ctld *c, const struct job *j,
                        const Tessera__JobDesc *changes, uid_t uid)
{
    const Tessera__JobRecord *r = j->rec;
    int admin = job_is_admin(c, uid);
    if (!admin && !(r->desc->has_user_id && r->desc->user_id == (uint32_t)uid))
        return TS_EUSER_ID;
    if (jobstate_is_finished(r->state))
        return TS_EALREADY_DONE;
    if (r->state != TESSERA__JOB_STATE__JOB_PENDING)
        return TS_ENOTSUP; /* running jobs arrive with the node daemons */
    if (changes->has_priority && !admin)
        return TS_EPERM;
    /* users may shorten their limit, and lower their priority with nice, not the reverse */
    if (!admin && changes->has_time_limit &&
        (changes->time_limit < 0 || (r->time_limit >= 0 && changes->time_limit > r->time_limit)))
        return TS_EPERM;
    if (!admin && changes->has_nice && changes->nice < (r->desc->has_nice ? r->desc->nice : 0))
        return TS_EPERM;
    return TS_OK;
}

int job_update(struct ctld *c, const char *text, const Tessera__JobDesc *changes, uid_t uid)
{
    struct job *targets[128];
    Tessera__JobDesc *merged[128] = {0};
    struct job_sizing sizes[128];
    char why[256];
    int whole = 0;
    int n = job_resolve(&c->jobs, text, JOB_SCOPE_DISPLAY, 0, targets,
                        sizeof(targets) / sizeof(targets[0]), &whole);
    if (n < 0)
        return -n;
    int err = TS_OK;
    for (int i = 0; i < n && !err; i++) {
        err = check_rights(c, targets[i], changes, uid);
        if (!err && !(merged[i] = pbutil_copy(&targets[i]->rec->desc->base)))
            err = TS_ENOMEM;
        if (!err)
            err = merge_desc(merged[i], changes);
        if (!err)
            err = job_limits_check_fields(merged[i], why, sizeof(why));
        if (!err && changes->licenses && targets[i]->rec->het_job_offset > 0)
            err = TS_EINVALID_LICENSES;
        if (!err)
            err = job_check_component(c, merged[i], targets[i]->rec->het_job_offset,
                                      job_is_admin(c, uid), &sizes[i], why, sizeof(why));
    }
    time_t now = time(NULL);
    for (int i = 0; i < n; i++) {
        if (!err) {
            Tessera__JobRecord *r = targets[i]->rec;
            tessera__job_desc__free_unpacked(r->desc, NULL);
            r->desc = merged[i];
            merged[i] = NULL;
            job_apply_sizing(r, &sizes[i]);
            if (changes->has_priority && !r->hold)
                r->priority = changes->priority;
            else if (changes->has_nice && !r->hold && !r->desc->has_priority)
                r->priority = job_default_priority(r);
        }
        if (merged[i])
            tessera__job_desc__free_unpacked(merged[i], NULL);
    }
    for (int i = 0; i < n && !err; i++) {
        err = job_dependency_attach(c, targets[i]); /* its text or name may have changed */
        if (!err) {
            job_update_reason(c, targets[i], now);
            err = job_save(c, targets[i]);
        }
    }
    if (!err) {
        log_verbose("job %s updated by uid %u", text, (unsigned)uid);
        if (changes->has_hold_until) /* a standing hold lasts until the new time */
            for (int i = 0; i < n; i++)
                filter_activate_hold_changed(c, targets[i]->leader);
        sched_trigger(c, SCHED_TRIGGER_NEW);
    }
    return err;
}
