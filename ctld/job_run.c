/* Running jobs: start (allocate, persist, then launch the batch script), end (from the
 * script's exit status, or from a cancel, a time limit, a failed node), terminate,
 * requeue, suspend and resume. docs/job-states.md describes the transitions.
 *
 * Order matters for "never losing a job" (ARCHITECTURE principle 2): a start is stored
 * before the launch leaves, so a controller killed in between restarts with the job
 * RUNNING and learns from the node daemon whether its script runs.
 */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"
#include "ctld/step.h"

#include "common/conf/conf.h"
#include "common/job/acctusage.h"
#include "common/job/jobenv.h"
#include "common/job/jobstate.h"
#include "common/job/jobtime.h"
#include "common/job/stdpath.h"
#include "common/rpc/rpc_peer.h"
#include "common/sched/select.h"
#include "common/text/hostlist.h"
#include "common/text/idset.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "common/util/pbutil.h"
#include "ctld/store.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------------------------ */
/* who may start */

uint32_t job_unit_priority(const struct job *leader)
{
    uint32_t p = 0;
    for (size_t i = 0; i < job_ncomponents(leader); i++)
        if (job_component(leader, i)->rec->priority > p)
            p = job_component(leader, i)->rec->priority;
    return p;
}

void job_unit_refresh_reasons(struct ctld *c, struct job *leader, time_t now)
{
    for (size_t i = 0; i < job_ncomponents(leader); i++)
        job_update_reason(c, job_component(leader, i), now);
}

/* Pending, and waiting for nothing but the scheduler. */
int job_unit_eligible(const struct job *leader)
{
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        const Tessera__JobRecord *r = job_component(leader, i)->rec;
        /* the scheduler's own reasons (limits, dedicated time, standing filter verdicts,
         * resources...) are decided again by this cycle's view */
        if (r->state != TESSERA__JOB_STATE__JOB_PENDING ||
            !jobreason_scheduler_decides(r->reason))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* messages to node daemons */

/* Every process of the job on a node: what terminates and suspensions reach. */
static const Tessera__JobSignalScope ALL_PROCESSES = TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL;

/* Best effort: a node that does not answer is dealt with by its time-out. The signal
 * leaves after the commit of the change that caused it (node_send). */
static void signal_node(struct ctld *c, const char *name, uint32_t job_id, int signo,
                        int terminate, Tessera__JobSignalScope scope)
{
    Tessera__JobSignalRequest sig = TESSERA__JOB_SIGNAL_REQUEST__INIT;
    sig.job_id = job_id;
    sig.signal = (uint32_t)signo;
    sig.terminate = terminate;
    sig.scope = scope;
    sig.kill_wait = c->conf->kill_wait;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_SIGNAL;
    req.job_signal = &sig;
    node_send(c, name, &req, "signal");
}

/* Signal every node of the unit that may run its processes (the batch host, and the
 * nodes of every component: steps run there). Each node once. */
static void signal_unit(struct ctld *c, struct job *leader, int signo, int terminate,
                        Tessera__JobSignalScope scope)
{
    const char *sent[256];
    size_t nsent = 0;
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        const Tessera__JobRecord *r = job_component(leader, i)->rec;
        for (size_t k = 0; k < r->n_allocs; k++) {
            const char *name = r->allocs[k]->node;
            size_t s = 0;
            while (s < nsent && strcmp(sent[s], name))
                s++;
            if (s < nsent)
                continue;
            if (nsent < 256)
                sent[nsent++] = name;
            signal_node(c, name, leader->rec->job_id, signo, terminate, scope);
        }
    }
}

/* One component's own processes: its steps, known on its nodes by its own id (the batch
 * script belongs to component 0: a later component has none). */
static void signal_component(struct ctld *c, const struct job *j, int signo, int terminate,
                             Tessera__JobSignalScope scope)
{
    const Tessera__JobRecord *r = j->rec;
    for (size_t k = 0; k < r->n_allocs; k++)
        signal_node(c, r->allocs[k]->node, r->job_id, signo, terminate, scope);
}

/* ------------------------------------------------------------------------------------ */
/* the end */

/* The reason an end in state gives when nothing more particular is known. */
static uint32_t end_reason(Tessera__JobState state)
{
    return state == TESSERA__JOB_STATE__JOB_NODE_FAIL ? JOB_REASON_NODE_FAIL
           : state == TESSERA__JOB_STATE__JOB_TIMEOUT ? JOB_REASON_TIME_LIMIT
           : state == TESSERA__JOB_STATE__JOB_FAILED  ? JOB_REASON_NON_ZERO_EXIT
           : state == TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY ? JOB_REASON_OUT_OF_MEMORY
                                                      : JOB_REASON_NONE;
}

/* The reason is set before the save: the save writes the accounting record of the end,
 * which a later save of the same end does not rewrite. */
static void finish_component(struct ctld *c, struct job *j, Tessera__JobState state,
                             int status, uint32_t reason, time_t now)
{
    Tessera__JobRecord *r = j->rec;
    if (jobstate_is_finished(r->state))
        return;
    job_changed_stopping(c, j, now);
    if (r->state != TESSERA__JOB_STATE__JOB_PENDING)
        node_release(c, r);
    r->state = state;
    r->end_time = now;
    r->exit_code = status;
    r->end_pending = 0;
    r->reason = reason;
    job_save(c, j);
}

void job_end_unit(struct ctld *c, struct job *leader, Tessera__JobState state, int status)
{
    job_end_unit_reason(c, leader, state, status, end_reason(state));
}

void job_end_unit_reason(struct ctld *c, struct job *leader, Tessera__JobState state,
                         int status, uint32_t reason)
{
    time_t now = time(NULL);
    for (size_t i = 0; i < job_ncomponents(leader); i++)
        finish_component(c, job_component(leader, i), state, i == 0 ? status : 0, reason,
                         now);
    job_changed_ended(c, leader, now); /* its steps end with it; its resources are free */
    log_info("job %u ended: %s (exit %d:%d)", leader->rec->job_id, jobstate_name(state),
             WIFEXITED(status) ? WEXITSTATUS(status) : 0,
             WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void job_requeue_unit(struct ctld *c, struct job *leader)
{
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        struct job *j = job_component(leader, i);
        Tessera__JobRecord *r = j->rec;
        if (r->state != TESSERA__JOB_STATE__JOB_PENDING && !jobstate_is_finished(r->state))
            node_release(c, r);
        job_changed_stopping(c, j, time(NULL));
        acct_job_requeued(c, j, time(NULL));
        acctusage_replace(&r->batch_usage, NULL); /* the next run measures its own */
        r->derived_exit_code = 0;
        r->state = TESSERA__JOB_STATE__JOB_PENDING;
        r->restarts++;
        r->start_time = r->end_time = r->eligible_time = r->suspend_time = 0;
        r->pre_suspend_secs = 0;
        r->exit_code = 0;
        r->end_pending = 0;
        r->reason = JOB_REASON_NONE;
        pbutil_set_string(&r->state_desc, ""); /* the last run's detail is not this one's */
        r->alloc_nodes = r->alloc_cpus = 0;
        r->alloc_mem_mb = 0;
        pbutil_set_string(&r->nodes, "");
        for (size_t k = 0; k < r->n_allocs; k++)
            tessera__node_alloc__free_unpacked(r->allocs[k], NULL);
        free(r->allocs);
        r->allocs = NULL;
        r->n_allocs = 0;
        pbutil_set_string(&r->batch_host, "");
        job_update_reason(c, j, time(NULL));
        job_save(c, j);
    }
    log_info("job %u requeued", leader->rec->job_id);
    job_changed_waiting(c, leader);
}

/* The ending a terminate was for, once nothing of the unit runs any more. */
static void settle(struct ctld *c, struct job *leader, int status)
{
    Tessera__JobState final = leader->rec->final_state;
    if (final == TESSERA__JOB_STATE__JOB_PENDING)
        job_requeue_unit(c, leader);
    else
        job_end_unit(c, leader, final, status);
}

void job_terminate_unit(struct ctld *c, struct job *leader, Tessera__JobState final)
{
    Tessera__JobRecord *lr = leader->rec;
    if (lr->end_pending)
        return; /* already ending: the first reason stands */
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        struct job *j = job_component(leader, i);
        j->rec->end_pending = 1;
        j->rec->final_state = final;
        job_save(c, j);
    }
    signal_unit(c, leader, SIGTERM, 1, ALL_PROCESSES);
    /* Without a batch script nothing will report: the unit ends now. A batch script
     * reports its end from its node (or the node's time-out ends the unit). */
    int batch = lr->batch || lr->desc->script;
    struct node *host = batch && lr->batch_host ? node_find(c, lr->batch_host) : NULL;
    if (!host || host->down)
        settle(c, leader, 0);
}

void job_terminate_resend(struct ctld *c, struct job *leader, const char *node)
{
    signal_node(c, node, leader->rec->job_id, SIGTERM, 1, ALL_PROCESSES);
}

/* One component alone (docs/01-hetjob.md §4.1: scancel 93+1 on a running job): its nodes stop its
 * processes; the rest of the job goes on. */
void job_end_component(struct ctld *c, struct job *j, Tessera__JobState state)
{
    signal_component(c, j, SIGTERM, 1, ALL_PROCESSES);
    finish_component(c, j, state, 0, end_reason(state), time(NULL));
    job_changed_freed(c, j->leader);
}

static int set_node_list(Tessera__JobRecord *r);

int job_shrink_component(struct ctld *c, struct job *j, uint32_t keep)
{
    Tessera__JobRecord *r = j->rec;
    if (keep == 0 || keep >= r->n_allocs)
        return TS_OK;
    /* the released part as a record of its own, for the node accounts */
    Tessera__JobRecord released = *r;
    released.allocs = r->allocs + keep;
    released.n_allocs = r->n_allocs - keep;
    node_release(c, &released);
    for (size_t k = keep; k < r->n_allocs; k++) {
        /* its processes there are known by its own id (the batch script stays: it runs on
         * the first node, which is kept) */
        signal_node(c, r->allocs[k]->node, r->job_id, SIGTERM, 1, ALL_PROCESSES);
        r->alloc_cpus -= r->allocs[k]->cpus;
        r->alloc_mem_mb -= r->allocs[k]->mem_mb;
        tessera__node_alloc__free_unpacked(r->allocs[k], NULL);
        r->allocs[k] = NULL;
    }
    r->n_allocs = keep;
    r->alloc_nodes = keep;
    r->min_nodes = keep;
    r->desc->has_min_nodes = r->desc->has_max_nodes = 1;
    r->desc->min_nodes = r->desc->max_nodes = keep;
    log_info("job %u: shrunk to %u node(s)", r->job_id, keep);
    job_changed_freed(c, j->leader);
    return set_node_list(r);
}

/* The most of a node's "why" a job's reason keeps. */
#define LAUNCH_WHY_MAX 1024

/* The unit ends in state with the launch's failure as every component's reason; why
 * (NULL: none known) becomes the leader's detail, printable and bounded: it came from a
 * node and names a user's file. */
static void end_launch_failed(struct ctld *c, struct job *leader, Tessera__JobState state,
                              int status, const char *why)
{
    if (why && *why) {
        char text[LAUNCH_WHY_MAX + 32];
        int n = snprintf(text, sizeof(text), "%s: %.*s",
                         jobreason_name(JOB_REASON_LAUNCH_FAILED), LAUNCH_WHY_MAX, why);
        for (int k = 0; k < n && (size_t)k < sizeof(text); k++)
            if ((unsigned char)text[k] < 0x20 || (unsigned char)text[k] >= 0x7f)
                text[k] = '?';
        pbutil_set_string(&leader->rec->state_desc, text);
        log_error("job %u: the batch script could not start: %s", leader->rec->job_id, why);
    }
    job_end_unit_reason(c, leader, state, status, JOB_REASON_LAUNCH_FAILED);
}

void job_batch_ended(struct ctld *c, const Tessera__JobCompleteRequest *msg)
{
    struct job *j = job_find(&c->jobs, msg->job_id);
    if (!j || j->leader != j || jobstate_is_finished(j->rec->state) ||
        j->rec->state == TESSERA__JOB_STATE__JOB_PENDING)
        return; /* already settled (the node's report crossed a time-out, say) */
    /* Outside an end only the batch script's own report ends the unit: a terminate that
     * completes meanwhile is that of nodes the job gave back (job_shrink_component), which
     * another component of the unit may still use. */
    if (!msg->batch && !j->rec->end_pending)
        return;
    int status = msg->status < 0 ? 0 : msg->status;
    if (msg->batch && msg->usage && acctusage_replace(&j->rec->batch_usage, msg->usage) != TS_OK)
        log_error("job %u: out of memory; the batch script's usage is lost", j->rec->job_id);
    if (j->rec->end_pending) {
        settle(c, j, status);
        return;
    }
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (msg->batch) /* steps the script left behind end with it */
        signal_unit(c, j, SIGTERM, 1, ALL_PROCESSES);
    Tessera__JobState state = ok ? TESSERA__JOB_STATE__JOB_COMPLETED
                                 : TESSERA__JOB_STATE__JOB_FAILED;
    /* the kernel killed some of the script's processes for the job's memory limit: the
     * job ran out of memory, whatever the script made of it (docs/containment.md §3) */
    if (msg->batch && msg->usage && msg->usage->oom_kills)
        state = TESSERA__JOB_STATE__JOB_OUT_OF_MEMORY;
    if (msg->batch && msg->launch_failure && *msg->launch_failure)
        end_launch_failed(c, j, state, status, msg->launch_failure);
    else
        job_end_unit(c, j, state, status);
}

/* A node of the unit failed: NODE_FAIL, or requeue when the job asked for it. The other
 * nodes are told to stop what they run of it. */
void job_node_failed_unit(struct ctld *c, struct job *leader)
{
    if (jobstate_is_finished(leader->rec->state))
        return;
    signal_unit(c, leader, SIGKILL, 1, ALL_PROCESSES);
    if (leader->rec->end_pending) {
        settle(c, leader, 0);
        return;
    }
    const Tessera__JobDesc *d = leader->rec->desc;
    if (d->has_requeue && d->requeue)
        job_requeue_unit(c, leader);
    else
        job_end_unit(c, leader, TESSERA__JOB_STATE__JOB_NODE_FAIL, 0);
}

int job_unit_uses_node(const struct job *leader, const char *node)
{
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        const Tessera__JobRecord *r = job_component(leader, i)->rec;
        if (r->state == TESSERA__JOB_STATE__JOB_PENDING || jobstate_is_finished(r->state))
            continue;
        for (size_t k = 0; k < r->n_allocs; k++)
            if (!strcmp(r->allocs[k]->node, node))
                return 1;
    }
    return 0;
}

void job_node_failed(struct ctld *c, struct node *n)
{
    for (struct job *j = c->jobs.head; j;) {
        struct job *next = j->next;
        if (j->leader == j && job_unit_uses_node(j, n->name)) {
            log_warn("job %u: node %s failed", j->rec->job_id, n->name);
            job_node_failed_unit(c, j);
        }
        j = next;
    }
}

/* ------------------------------------------------------------------------------------ */
/* time limits, suspend, resume */

/* --signal: the warning goes out once per run, warn_secs (default 60) before the limit
 * ends, or at once when the limit is shorter. It is stored as sent before it leaves
 * (node_send waits for the commit), so a restarted controller does not send it again. */
static void check_warning(struct ctld *c, struct job *j, time_t now)
{
    Tessera__JobRecord *r = j->rec;
    const Tessera__JobDesc *d = r->desc;
    if (!d->has_warn_signal || r->warn_signal_sent)
        return;
    int64_t secs = d->has_warn_secs ? d->warn_secs : JOB_WARN_SECS_DEFAULT;
    if (jobtime_used(r, now) < r->time_limit - secs)
        return;
    r->warn_signal_sent = 1;
    job_save(c, j);
    Tessera__JobSignalScope scope = d->warn_batch_shell
                                        ? TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_BATCH_SHELL
                                        : TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_STEPS;
    log_info("job %u: %lld seconds or less left, signal %u (--signal)", r->job_id,
             (long long)secs, d->warn_signal);
    if (j->leader == j)
        signal_unit(c, j, (int)d->warn_signal, 0, scope);
    else
        signal_component(c, j, (int)d->warn_signal, 0, scope);
}

void job_check_time_limits(struct ctld *c, time_t now)
{
    for (struct job *j = c->jobs.head; j; j = j->next) {
        Tessera__JobRecord *r = j->rec;
        if (r->state != TESSERA__JOB_STATE__JOB_RUNNING || r->time_limit < 0 || r->end_pending)
            continue;
        check_warning(c, j, now);
        if (jobtime_used(r, now) < r->time_limit)
            continue;
        log_info("job %u: time limit exhausted", r->job_id);
        /* each component keeps its own limit; the leader's is the whole job's */
        if (j->leader == j)
            job_terminate_unit(c, j, TESSERA__JOB_STATE__JOB_TIMEOUT);
        else if (!j->leader->rec->end_pending)
            job_end_component(c, j, TESSERA__JOB_STATE__JOB_TIMEOUT);
    }
}

void job_suspend_unit(struct ctld *c, struct job *leader, int resume)
{
    time_t now = time(NULL);
    signal_unit(c, leader, resume ? SIGCONT : SIGSTOP, 0, ALL_PROCESSES);
    for (size_t i = 0; i < job_ncomponents(leader); i++) {
        struct job *j = job_component(leader, i);
        Tessera__JobRecord *r = j->rec;
        if (resume && r->state == TESSERA__JOB_STATE__JOB_SUSPENDED) {
            r->state = TESSERA__JOB_STATE__JOB_RUNNING;
            r->suspend_time = now; /* counting resumes from here (jobtime_used) */
        } else if (!resume && r->state == TESSERA__JOB_STATE__JOB_RUNNING) {
            job_changed_stopping(c, j, now);
            r->pre_suspend_secs = jobtime_used(r, now);
            r->state = TESSERA__JOB_STATE__JOB_SUSPENDED;
            r->suspend_time = now;
        }
        job_save(c, j);
    }
}

/* ------------------------------------------------------------------------------------ */
/* the start */

/* The nodes of r's allocation as a host list, for display (NodeList=, %N). */
static int set_node_list(Tessera__JobRecord *r)
{
    struct hostlist *hl = hostlist_create();
    for (size_t i = 0; hl && i < r->n_allocs; i++)
        if (hostlist_push(hl, r->allocs[i]->node) != TS_OK)
            break;
    char *list = hl ? hostlist_compress(hl) : NULL;
    hostlist_destroy(hl);
    int err = !list || pbutil_set_string(&r->nodes, list) ? TS_ENOMEM : TS_OK;
    free(list);
    return err;
}

static int record_allocation(struct ctld *c, Tessera__JobRecord *r, const struct select_alloc *a,
                             time_t now)
{
    r->allocs = calloc(a->nnodes ? a->nnodes : 1, sizeof(*r->allocs));
    if (!r->allocs)
        return TS_ENOMEM;
    r->alloc_nodes = r->alloc_cpus = 0;
    r->alloc_mem_mb = 0;
    for (size_t i = 0; i < a->nnodes; i++) {
        Tessera__NodeAlloc *na = calloc(1, sizeof(*na));
        if (!na)
            return TS_ENOMEM;
        tessera__node_alloc__init(na);
        const struct node *n = &c->nodes.nodes[a->nodes[i].node];
        na->node = strdup(n->name);
        na->cpus = a->nodes[i].cpus;
        na->mem_mb = a->nodes[i].mem_mb;
        na->tasks = a->nodes[i].tasks;
        /* the components started before this one on the node hold theirs already */
        na->cpu_ids = node_cpus_pick(n, na->cpus);
        r->allocs[r->n_allocs++] = na;
        if (!na->node || !na->cpu_ids)
            return TS_ENOMEM;
        r->alloc_nodes++;
        r->alloc_cpus += na->cpus;
        r->alloc_mem_mb += na->mem_mb;
    }
    int err = set_node_list(r);
    if (err)
        return err;
    r->state = TESSERA__JOB_STATE__JOB_RUNNING;
    r->warn_signal_sent = 0; /* each run gets its warning */
    r->start_time = now;
    r->suspend_time = 0;
    r->pre_suspend_secs = 0;
    r->end_pending = 0;
    r->reason = JOB_REASON_NONE;
    if (!r->eligible_time)
        r->eligible_time = now;
    return TS_OK;
}

/* A launch on its way: to the commit, then to the node. */
struct launch_call {
    struct ctld *c;
    uint32_t job_id;
};

static void launch_after_commit(void *arg, int err);

int job_start_unit(struct ctld *c, struct job *leader, struct select_alloc *allocs)
{
    time_t now = time(NULL);
    int err = TS_OK;
    for (size_t i = 0; i < job_ncomponents(leader) && !err; i++) {
        Tessera__JobRecord *r = job_component(leader, i)->rec;
        err = record_allocation(c, r, &allocs[i], now);
        if (!err)
            node_hold(c, r);
    }
    Tessera__JobRecord *lr = leader->rec;
    if (pbutil_set_string(&lr->batch_host, lr->n_allocs ? lr->allocs[0]->node : ""))
        err = TS_ENOMEM;
    for (size_t i = 0; i < job_ncomponents(leader) && !err; i++)
        err = job_save(c, job_component(leader, i));
    if (err) {
        log_error("job %u: cannot start: %s", lr->job_id, ts_strerror(err));
        job_end_unit(c, leader, TESSERA__JOB_STATE__JOB_FAILED, 0);
        return err;
    }
    log_info("job %u started on %s%s", lr->job_id, lr->batch_host,
             job_ncomponents(leader) > 1 ? " (and the other components' nodes)" : "");
    /* the start is on disk before the launch leaves */
    struct launch_call *lc = calloc(1, sizeof(*lc));
    if (lc) {
        lc->c = c;
        lc->job_id = lr->job_id;
    }
    if (!lc || store_after_commit(c->store, launch_after_commit, lc) != TS_OK) {
        free(lc);
        log_error("job %u: cannot launch: %s", lr->job_id, ts_strerror(TS_ENOMEM));
        job_requeue_unit(c, leader);
        return TS_ENOMEM;
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the launch */

/* The launch cannot happen: FAILED with JobLaunchFailure as its stored reason, never
 * requeued (the same launch would fail again, after every restart too). */
static void launch_failed(struct ctld *c, struct job *leader)
{
    end_launch_failed(c, leader, TESSERA__JOB_STATE__JOB_FAILED, 1 << 8, NULL);
}

/* A started job whose launch still matters: running, or suspended before it reached its
 * node. */
static int launchable(const struct job *j)
{
    return j->rec->state == TESSERA__JOB_STATE__JOB_RUNNING ||
           j->rec->state == TESSERA__JOB_STATE__JOB_SUSPENDED;
}

static void launch_answered(void *arg, int err, const Tessera__Response *resp)
{
    struct launch_call *lc = arg;
    struct ctld *c = lc->c;
    struct job *j = job_find(&c->jobs, lc->job_id);
    free(lc);
    if (err == TS_ESHUTDOWN || !j || !launchable(j))
        return;
    if (err) {
        /* the node did not take it: its daemon is gone, the job goes back to the queue */
        log_warn("job %u: launch on %s failed: %s", j->rec->job_id, j->rec->batch_host,
                 ts_strerror(err));
        struct node *n = node_find(c, j->rec->batch_host);
        if (n)
            node_set_down(c, n, "Not responding");
        else
            job_requeue_unit(c, j);
    } else if (resp->error) {
        log_error("job %u: %s refused the launch: %s", j->rec->job_id, j->rec->batch_host,
                  resp->error->text);
        launch_failed(c, j);
    } else if (j->rec->state == TESSERA__JOB_STATE__JOB_SUSPENDED) {
        /* suspended while its launch was on its way: the node had nothing to stop then */
        signal_unit(c, j, SIGSTOP, 0, ALL_PROCESSES);
    }
}

/* The three files of the batch script, named as the node will open them. A pattern that
 * grew past the limit (stored before it was checked, or a node name longer than the one
 * the submission was checked with) fails the launch: TS_EPATH_TOOLONG. */
static int launch_paths(const Tessera__JobRecord *r, const char *uname,
                        Tessera__BatchLaunchRequest *bl)
{
    struct stdpath_fill fill = {.user = uname, .host = r->batch_host};
    int err = stdpath_expand(r, STDPATH_STDOUT, &fill, &bl->std_out);
    if (!err)
        err = stdpath_expand(r, STDPATH_STDERR, &fill, &bl->std_err);
    if (!err && r->desc->std_in)
        err = stdpath_expand(r, STDPATH_STDIN, &fill, &bl->std_in);
    else if (!err && !(bl->std_in = strdup("")))
        err = TS_ENOMEM;
    return err;
}

/* Add the CPU indices of text ("0-1,3") to ids. */
static int add_ids(struct idset *ids, const char *text)
{
    struct idset *one = NULL;
    if (!text || !*text)
        return TS_OK;
    int err = idset_parse(text, &one);
    for (uint32_t id = err ? IDSET_INVALID : idset_first(one); !err && id != IDSET_INVALID;
         id = idset_next(one, id))
        err = idset_add(ids, id);
    idset_destroy(one);
    return err;
}

int job_node_share(const struct job *leader, const char *node, uint64_t *mem_mb,
                   char **cpu_ids)
{
    *mem_mb = 0;
    *cpu_ids = NULL;
    struct idset *ids = idset_create();
    int err = ids ? TS_OK : TS_ENOMEM;
    for (size_t i = 0; !err && i < job_ncomponents(leader); i++) {
        const Tessera__JobRecord *r = job_component(leader, i)->rec;
        for (size_t k = 0; !err && k < r->n_allocs; k++) {
            if (strcmp(r->allocs[k]->node, node) != 0)
                continue;
            *mem_mb += r->allocs[k]->mem_mb;
            err = add_ids(ids, r->allocs[k]->cpu_ids);
        }
    }
    if (!err && !(*cpu_ids = idset_format(ids)))
        err = TS_ENOMEM;
    idset_destroy(ids);
    return err;
}

static int build_launch(struct ctld *c, struct job *leader, Tessera__BatchLaunchRequest *bl,
                        char *uname, size_t ulen, char ***env)
{
    const Tessera__JobRecord *lr = leader->rec;
    const Tessera__JobDesc *d = lr->desc;
    /* SLURM_JOB_USER, and the daemon's group lookup */
    namecache_name(c->names, NAMECACHE_USER, d->user_id, uname, ulen);
    const Tessera__JobRecord *comps[128];
    size_t n = job_ncomponents(leader);
    for (size_t i = 0; i < n && i < 128; i++)
        comps[i] = job_component(leader, i)->rec;
    struct jobenv_context ectx = {.cluster = c->conf->cluster_name, .node_name = lr->batch_host,
                                  .user_name = uname};
    *env = jobenv_batch(comps, n, &ectx);
    if (!*env)
        return TS_ENOMEM;
    bl->job_id = lr->job_id;
    bl->uid = d->user_id;
    bl->gid = d->group_id;
    bl->user_name = uname;
    bl->script = d->script;
    for (bl->n_env = 0; (*env)[bl->n_env]; bl->n_env++)
        ;
    bl->env = *env;
    bl->argv = d->argv;
    bl->n_argv = d->n_argv;
    bl->work_dir = d->work_dir;
    bl->append = d->open_mode && !strcmp(d->open_mode, "append");
    bl->login_env = jobenv_login_wanted(d);
    int err = job_node_share(leader, lr->batch_host, &bl->mem_mb, &bl->cpu_ids);
    return err ? err : launch_paths(lr, uname, bl);
}

static void launch_after_commit(void *arg, int err)
{
    struct launch_call *lc = arg;
    struct ctld *c = lc->c;
    uint32_t job_id = lc->job_id;
    struct job *j = job_find(&c->jobs, job_id);
    /* a job suspended before its start was on disk is launched all the same (and
     * suspended again once the node has it: launch_answered), or nothing would ever run
     * or end it */
    if (!j || !launchable(j)) {
        free(lc);
        return; /* ended (or requeued) before its start was even on disk */
    }
    if (err) {
        /* the store gave up on the start at shutdown: nothing is launched, and the job is
         * still pending in the state the next start reads */
        free(lc);
        log_error("job %u: its start could not be stored (%s); not launched", job_id,
                  ts_strerror(err));
        return;
    }
    if (j->rec->end_pending) {
        /* cancelled (or requeued, timed out) before its start was on disk: the launch
         * does not leave, so no node runs its script and none will report its end (a
         * terminate for a job a daemon does not have changes nothing there). It ends
         * here, or it would stay RUNNING, holding its nodes and its place under the
         * running-job limits, for ever. Its users saw it RUNNING: it ends as a script
         * that the terminate's SIGTERM killed (ExitCode 0:15, sbatch -W exits 1). */
        free(lc);
        log_info("job %u: ended before its launch left", job_id);
        settle(c, j, SIGTERM);
        return;
    }
    if (!j->rec->batch && !j->rec->desc->script) {
        free(lc);
        job_alloc_started(c, j); /* an allocation (salloc): nothing to launch */
        return;
    }
    struct node *n = node_find(c, j->rec->batch_host);
    struct rpc_peer *peer = n ? node_peer(c, n) : NULL;
    Tessera__BatchLaunchRequest bl = TESSERA__BATCH_LAUNCH_REQUEST__INIT;
    bl.std_out = bl.std_err = bl.std_in = bl.cpu_ids = NULL; /* not protobuf's shared "":
                                                               * freed below */
    char uname[256];
    char **env = NULL;
    int e = !peer ? TS_ENOMEM : build_launch(c, j, &bl, uname, sizeof(uname), &env);
    if (!e) {
        Tessera__Request req = TESSERA__REQUEST__INIT;
        req.msg_case = TESSERA__REQUEST__MSG_BATCH_LAUNCH;
        req.batch_launch = &bl;
        e = rpc_peer_call(peer, &req, launch_answered, lc);
    }
    if (e) {
        free(lc);
        log_error("job %u: cannot launch: %s", job_id, ts_strerror(e));
        launch_failed(c, j);
    }
    free(bl.std_out);
    free(bl.std_err);
    free(bl.std_in);
    free(bl.cpu_ids);
    jobenv_free(env);
}

void job_finish_allocation(struct ctld *c, struct job *leader, Tessera__JobState state,
                           int status)
{
    signal_unit(c, leader, SIGTERM, 1, ALL_PROCESSES); /* steps still running there stop */
    job_end_unit(c, leader, state, status);
}

void job_signal_unit(struct ctld *c, struct job *leader, int signo, Tessera__JobSignalScope scope)
{
    signal_unit(c, leader, signo, 0, scope);
}
