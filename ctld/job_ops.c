/* Job life in the controller: who may act on a job, pending reasons, priorities, and the
 * actions of scancel and scontrol (cancel, signal, hold, release, requeue, suspend,
 * resume) with docs/01-hetjob.md §4's rules for het jobs. docs/job-states.md has the state table.
 *
 * Every action first checks every component it would touch and changes nothing when one
 * check fails, so a refused action leaves the job exactly as it was.
 */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"
#include "ctld/sched.h"
#include "ctld/step.h"

#include "common/conf/conf.h"
#include "common/job/jobid.h"
#include "common/job/jobstate.h"
#include "common/rpc/rpc_conf.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

int job_is_admin(const struct ctld *c, uid_t uid)
{
    return (rpc_conf_roles(c->conf, uid) & RPC_ROLE_ADMIN) != 0;
}

static int job_owned_by(const struct job *j, uid_t uid)
{
    return j->rec->desc->has_user_id && j->rec->desc->user_id == (uint32_t)uid;
}

int job_owner_or_admin(const struct ctld *c, const struct job *j, uid_t uid)
{
    return job_owned_by(j, uid) || job_is_admin(c, uid);
}

/* FIFO: earlier ids first. nice shifts a job down (or up, for administrators) by that many
 * places. Large enough that held jobs (0) are always last. */
uint32_t job_default_priority(const Tessera__JobRecord *rec)
{
    int64_t p = INT64_C(0x7fff0000) - (int64_t)(rec->het_job_id ? rec->het_job_id : rec->job_id);
    if (rec->desc->has_nice)
        p -= rec->desc->nice;
    return p < 1 ? 1 : p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

static const struct conf_partition *job_partition(const struct ctld *c, const struct job *j)
{
    return j->rec->desc->partition ? conf_find_partition(c->conf, j->rec->desc->partition)
                                   : NULL;
}

void job_update_reason(struct ctld *c, struct job *j, time_t now)
{
    Tessera__JobRecord *r = j->rec;
    if (r->state != TESSERA__JOB_STATE__JOB_PENDING)
        return;
    const Tessera__JobRecord *lead = j->leader->rec;
    const struct conf_partition *part = job_partition(c, j);
    uint32_t reason = JOB_REASON_NONE;
    int eligible = 0;
    int dep = job_dependency_state(c, j, now);
    if (r->hold)
        reason = r->hold == 2 ? JOB_REASON_HELD_ADMIN : JOB_REASON_HELD_USER;
    else if (lead->desc->has_begin_time && lead->desc->begin_time > now)
        reason = JOB_REASON_BEGIN_TIME;
    else if (dep == JOB_DEP_NEVER)
        reason = JOB_REASON_DEPENDENCY_NEVER;
    else if (dep == JOB_DEP_WAIT)
        reason = JOB_REASON_DEPENDENCY;
    else {
        eligible = 1;
        if (part && part->state == CONF_PART_DOWN)
            reason = JOB_REASON_PARTITION_DOWN;
        else if (part && part->state == CONF_PART_INACTIVE)
            reason = JOB_REASON_PARTITION_INACTIVE;
        else if (r->reason == JOB_REASON_HELD_USER || r->reason == JOB_REASON_HELD_ADMIN ||
                 r->reason == JOB_REASON_BEGIN_TIME || r->reason == JOB_REASON_DEPENDENCY ||
                 r->reason == JOB_REASON_PARTITION_DOWN ||
                 r->reason == JOB_REASON_PARTITION_INACTIVE)
            reason = JOB_REASON_NONE; /* waiting on the scheduler from now on */
        else
            reason = r->reason; /* what the scheduler last said stands */
    }
    r->reason = reason;
    if (eligible && !r->eligible_time)
        r->eligible_time = lead->desc->has_begin_time && lead->desc->begin_time > r->submit_time
                               ? lead->desc->begin_time
                               : now;
    else if (!eligible && r->hold)
        r->eligible_time = 0; /* Slurm shows EligibleTime=Unknown while held */
}

/* ------------------------------------------------------------------------------------ */
/* the actions */

struct action {
    struct ctld *c;
    Tessera__JobAction kind;
    uid_t uid;
    int admin;
    uint32_t signal;
    Tessera__JobSignalScope scope;
    time_t now;
};

/* May this caller act on this component? Slurm answers scontrol's hold, release and
 * update with "Invalid user id", scancel with "Access/permission denied". */
static int check_owner(const struct action *a, const struct job *j)
{
    if (a->admin || job_owned_by(j, a->uid))
        return TS_OK;
    return a->kind == TESSERA__JOB_ACTION__JOB_ACTION_CANCEL ||
                   a->kind == TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL
               ? TS_EPERM
               : TS_EUSER_ID;
}

/* Check one component for the action; nothing changes here. */
static int check_one(const struct action *a, const struct job *j)
{
    const Tessera__JobRecord *r = j->rec;
    int err = check_owner(a, j);
    if (err)
        return err;
    int pending = r->state == TESSERA__JOB_STATE__JOB_PENDING;
    int finished = jobstate_is_finished(r->state);
    int suspended = r->state == TESSERA__JOB_STATE__JOB_SUSPENDED;
    switch (a->kind) {
    case TESSERA__JOB_ACTION__JOB_ACTION_CANCEL:
        return finished ? TS_EALREADY_DONE : TS_OK;
    case TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL:
        return finished ? TS_EALREADY_DONE : pending ? TS_ETRANSITION : TS_OK;
    case TESSERA__JOB_ACTION__JOB_ACTION_HOLD:
    case TESSERA__JOB_ACTION__JOB_ACTION_UHOLD:
        if (a->kind == TESSERA__JOB_ACTION__JOB_ACTION_UHOLD && !a->admin)
            return TS_EPERM;
        return pending ? TS_OK : TS_EJOB_NOT_PENDING;
    case TESSERA__JOB_ACTION__JOB_ACTION_RELEASE:
        if (!pending)
            return TS_EJOB_NOT_PENDING;
        return r->hold == 2 && !a->admin ? TS_EPERM : TS_OK;
    case TESSERA__JOB_ACTION__JOB_ACTION_REQUEUE:
        if (pending)
            return TS_EJOB_PENDING;
        return r->end_pending && !finished ? TS_ETRANSITION : TS_OK;
    case TESSERA__JOB_ACTION__JOB_ACTION_SUSPEND:
        if (!a->admin)
            return TS_EPERM;
        return pending ? TS_EJOB_PENDING
               : finished ? TS_EALREADY_DONE
               : suspended ? TS_EJOB_SUSPENDED
               : r->end_pending ? TS_ETRANSITION
                                : TS_OK;
    case TESSERA__JOB_ACTION__JOB_ACTION_RESUME:
        if (!a->admin)
            return TS_EPERM;
        return pending ? TS_EJOB_PENDING : !suspended ? TS_EJOB_NOT_SUSPENDED : TS_OK;
    default:
        return TS_EINVAL;
    }
}

static void release_priority(Tessera__JobRecord *r)
{
    r->priority = r->desc->has_priority ? r->desc->priority : job_default_priority(r);
}

/* Apply the checked action to one component of a pending job. */
static void apply_pending(const struct action *a, struct job *j)
{
    Tessera__JobRecord *r = j->rec;
    switch (a->kind) {
    case TESSERA__JOB_ACTION__JOB_ACTION_CANCEL:
        r->state = TESSERA__JOB_STATE__JOB_CANCELLED;
        r->end_time = a->now;
        r->reason = JOB_REASON_NONE;
        r->cancel_uid = (uint32_t)a->uid;
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_HOLD:
        r->hold = a->admin ? 2 : 1;
        r->priority = 0;
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_UHOLD:
        r->hold = 1;
        r->priority = 0;
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_RELEASE:
        r->hold = 0;
        release_priority(r);
        job_changed_waiting(a->c, j->leader);
        break;
    default:
        break;
    }
    job_update_reason(a->c, j, a->now);
    job_save(a->c, j);
}

/* Actions on jobs that run (or ran): they reach the node daemons. whole: the targets
 * are every component of the job. */
static void apply_started(const struct action *a, struct job **targets, int n, int whole)
{
    struct job *leader = targets[0]->leader;
    switch (a->kind) {
    case TESSERA__JOB_ACTION__JOB_ACTION_CANCEL:
        for (int i = 0; i < (whole ? (int)job_ncomponents(leader) : n); i++) {
            Tessera__JobRecord *r = whole ? job_component(leader, (size_t)i)->rec
                                          : targets[i]->rec;
            if (!r->end_pending && !jobstate_is_finished(r->state))
                r->cancel_uid = (uint32_t)a->uid; /* sacct's "CANCELLED by <uid>" */
        }
        if (whole)
            job_terminate_unit(a->c, leader, TESSERA__JOB_STATE__JOB_CANCELLED);
        else
            for (int i = 0; i < n; i++)
                job_end_component(a->c, targets[i], TESSERA__JOB_STATE__JOB_CANCELLED);
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL:
        job_signal_unit(a->c, leader, (int)a->signal, a->scope);
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_REQUEUE:
        if (jobstate_is_finished(leader->rec->state))
            job_requeue_unit(a->c, leader);
        else
            job_terminate_unit(a->c, leader, TESSERA__JOB_STATE__JOB_PENDING);
        break;
    case TESSERA__JOB_ACTION__JOB_ACTION_SUSPEND:
    case TESSERA__JOB_ACTION__JOB_ACTION_RESUME:
        job_suspend_unit(a->c, leader, a->kind == TESSERA__JOB_ACTION__JOB_ACTION_RESUME);
        break;
    default:
        break;
    }
}

/* Requeue, suspend and resume take a whole job by its leader (docs/01-hetjob.md §4.3). Slurm's
 * answers for a component: requeue "93+1" is an invalid id, requeue "94" names a non-leader;
 * suspend and resume refuse an individual component. */
static int leader_only(const struct action *a, const char *text)
{
    struct jobid id;
    if (jobid_parse(text, &id) != TS_OK)
        return TS_EINVALID_JOB_ID;
    struct job *j = job_find(&a->c->jobs, id.id);
    if (!j)
        return TS_EINVALID_JOB_ID;
    int is_requeue = a->kind == TESSERA__JOB_ACTION__JOB_ACTION_REQUEUE;
    if (id.has_offset && !(job_is_het(j) && j->leader == j && id.offset == 0))
        return is_requeue || !job_is_het(j) ? TS_EINVALID_JOB_ID : TS_ENOT_WHOLE_HET_JOB;
    if (!id.has_offset && job_is_het(j) && j->leader != j)
        return is_requeue ? TS_ENOT_HET_LEADER : TS_ENOT_WHOLE_HET_JOB;
    return TS_OK;
}

static int is_leader_action(Tessera__JobAction kind)
{
    return kind == TESSERA__JOB_ACTION__JOB_ACTION_REQUEUE ||
           kind == TESSERA__JOB_ACTION__JOB_ACTION_SUSPEND ||
           kind == TESSERA__JOB_ACTION__JOB_ACTION_RESUME;
}

/* Act on the components one id means. Returns a ts_err for that id. */
static int act_on(const struct action *a, struct job **targets, int n, int whole)
{
    /* a pending het job is one unit: cancelling (or signalling) a piece of it would leave
     * the rest waiting for a partner that is gone */
    if (!whole && job_is_het(targets[0]) &&
        targets[0]->leader->rec->state == TESSERA__JOB_STATE__JOB_PENDING &&
        (a->kind == TESSERA__JOB_ACTION__JOB_ACTION_CANCEL ||
         a->kind == TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL))
        return TS_ENOT_WHOLE_HET_JOB;
    /* cancelling or signalling a whole job passes over the components already finished
     * (one cancelled alone earlier, say); only a job finished entirely is "done" */
    int stopping = a->kind == TESSERA__JOB_ACTION__JOB_ACTION_CANCEL ||
                   a->kind == TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL;
    int live = 0;
    for (int i = 0; i < n; i++) {
        if (stopping && whole && n > 1 && jobstate_is_finished(targets[i]->rec->state))
            continue;
        int err = check_one(a, targets[i]);
        if (err)
            return err;
        live++;
    }
    if (live == 0)
        return TS_EALREADY_DONE;
    if (targets[0]->leader->rec->state == TESSERA__JOB_STATE__JOB_PENDING)
        for (int i = 0; i < n; i++)
            apply_pending(a, targets[i]);
    else
        apply_started(a, targets, n, whole);
    return TS_OK;
}

int job_action_by_id(struct ctld *c, Tessera__JobAction kind, const char *text, uid_t uid,
                     const struct job_signal_req *sig)
{
    uint32_t signal = sig ? sig->signo : 0;
    /* SIGKILL reaches every process of the job whatever scancel asked (as in Slurm) */
    Tessera__JobSignalScope scope = !sig || signal == SIGKILL
                                        ? TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL
                                        : sig->scope;
    struct action a = {.c = c, .kind = kind, .uid = uid, .admin = job_is_admin(c, uid),
                       .signal = signal, .scope = scope, .now = time(NULL)};
    if (strchr(text, '.')) { /* JOB.STEP: scancel of a step */
        if (kind == TESSERA__JOB_ACTION__JOB_ACTION_CANCEL)
            return step_action(c, text, uid, SIGTERM, 1);
        if (kind == TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL)
            return step_action(c, text, uid, (int)signal, 0);
        return TS_EINVALID_JOB_ID;
    }
    if (is_leader_action(kind)) {
        int err = leader_only(&a, text);
        if (err)
            return err;
    }
    struct job *targets[128];
    int whole = 0;
    int n = job_resolve(&c->jobs, text, JOB_SCOPE_ACTION, conf_sched_param(c->conf, "whole_hetjob", NULL),
                        targets, sizeof(targets) / sizeof(targets[0]), &whole);
    if (n < 0)
        return -n;
    int err = act_on(&a, targets, n, whole);
    if (!err)
        log_verbose("job %s: %s by uid %u", text,
                    protobuf_c_enum_descriptor_get_value(&tessera__job_action__descriptor, kind)->name,
                    (unsigned)uid);
    return err;
}

static int has_string(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (s && !strcmp(list[i], s))
            return 1;
    return 0;
}

/* Whether the job's allocation has a node of the set (its own host list, made by the
 * controller, so expanding it costs what the cluster has). */
static int allocated_any(const Tessera__JobRecord *r, const struct hashmap *nodes)
{
    struct hostlist *hl = NULL;
    if (!r->nodes || !*r->nodes || hostlist_expand(r->nodes, &hl) != TS_OK)
        return 0;
    int found = 0;
    for (size_t i = 0; !found && i < hostlist_count(hl); i++)
        found = hashmap_get_str(nodes, hostlist_nth(hl, i)) != NULL;
    hostlist_destroy(hl);
    return found;
}

int job_filter_matches(const struct job_filter *f, const struct job *j)
{
    const Tessera__JobRecord *r = j->rec;
    int ok = f->nuids == 0;
    for (size_t i = 0; !ok && i < f->nuids; i++)
        ok = r->desc->user_id == f->uids[i];
    if (ok && f->npartitions)
        ok = has_string(f->partitions, f->npartitions, r->desc->partition);
    if (ok && f->nstates) {
        ok = 0;
        for (size_t i = 0; !ok && i < f->nstates; i++)
            ok = r->state == f->states[i];
    } else if (ok && !f->all_states) {
        ok = !jobstate_is_finished(r->state);
    }
    if (ok && f->nnames)
        ok = has_string(f->names, f->nnames, r->desc->name);
    if (ok && f->nqos)
        ok = has_string(f->qos, f->nqos, r->desc->qos);
    if (ok && f->naccounts)
        ok = has_string(f->accounts, f->naccounts, r->desc->account);
    if (ok && f->nodes)
        ok = allocated_any(r, f->nodes);
    return ok;
}

/* ------------------------------------------------------------------------------------ */
/* housekeeping */

/* A unit leaves memory (and the "jobs" database) once every component finished more than
 * MinJobAge seconds ago. */
static int unit_expired(const struct ctld *c, const struct job *leader, time_t now)
{
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        const Tessera__JobRecord *r = job_component(leader, i)->rec;
        if (!jobstate_is_finished(r->state) || r->end_time + (int64_t)c->conf->min_job_age > now)
            return 0;
    }
    return 1;
}

static void purge_unit(struct ctld *c, struct job *leader)
{
    size_t n = job_ncomponents(leader);
    uint32_t first = leader->rec->job_id;
    for (size_t i = n; i-- > 0;) { /* the leader last: the others reach it through it */
        struct job *j = job_find(&c->jobs, first + (uint32_t)i);
        if (j)
            job_forget(c, j);
    }
}

void job_housekeeping(struct ctld *c, time_t now)
{
    node_check_timeouts(c, now);
    job_check_time_limits(c, now);
    job_alloc_housekeeping(c, now);
    struct job *j = c->jobs.head;
    while (j) {
        struct job *next = j->next;
        if (j->rec->state == TESSERA__JOB_STATE__JOB_PENDING) {
            int64_t eligible = j->rec->eligible_time;
            job_update_reason(c, j, now);
            if (eligible != j->rec->eligible_time) {
                job_save(c, j);
                job_changed_waiting(c, j->leader); /* a begin time or dependency passed */
            }
        } else if (j->leader == j && unit_expired(c, j, now)) {
            /* skip past the unit's other components before they are freed */
            while (next && next->leader == j)
                next = next->next;
            purge_unit(c, j);
        }
        j = next;
    }
}
