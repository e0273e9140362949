/* Controller life: start-up, the event loop, signals, reconfiguration, shutdown. */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/filter_activate.h"
#include "ctld/filter_run.h"
#include "ctld/filter_submit.h"
#include "ctld/step.h"
#include "ctld/store_guard.h"

#include "common/auth/auth.h"
#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_server.h"
#include "common/sched/dedicated.h"
#include "common/sched/fairshare.h"
#include "common/sched/holidays.h"
#include "common/sched/policy.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "ctld/sched.h"
#include "ctld/store.h"
#include "ctld/store_file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void on_terminate(struct loop *loop, int signo, void *arg)
{
    log_info("terminating on signal %d", signo);
    loop_stop(loop);
}

/* Running jobs hold their nodes again after a restart (the daemons confirm them when they
 * register, or the nodes time out). */
static void hold_running(struct ctld *c)
{
    for (struct job *j = c->jobs.head; j; j = j->next) {
        Tessera__JobState st = j->rec->state;
        if (st != TESSERA__JOB_STATE__JOB_PENDING && !jobstate_is_finished(st))
            node_hold(c, j->rec);
    }
}

static void housekeeping_tick(struct loop *loop, struct loop_timer *t, void *arg)
{
    time_t now = time(NULL);
    job_housekeeping(arg, now);
    acct_housekeeping(arg, now);
    filter_activate_housekeeping(arg, now);
    fairshare_usage_tick(arg, now);
}

/* The policy, holidays, dedicated-time and resource-group files the configuration names,
 * parsed (NULL when it names none; the fair-share tree is always there); nothing is kept
 * when one of them is wrong. */
struct policy_files {
    struct policy *policy;
    struct holidays *holidays;
    struct dedicated *dedicated;
    struct fairshare *tree;
};

static void policy_files_free(struct policy_files *f)
{
    free(f->policy);
    free(f->holidays);
    free(f->dedicated);
    fairshare_destroy(f->tree);
    memset(f, 0, sizeof(*f));
}

static int load_policy(const struct conf *conf, struct policy_files *out, char *errbuf,
                       size_t errlen)
{
    struct policy_files f = {0};
    int err = TS_OK;
    if (conf->policy_file && !(f.policy = malloc(sizeof(*f.policy))))
        err = TS_ENOMEM;
    if (!err && conf->holidays_file && !(f.holidays = malloc(sizeof(*f.holidays))))
        err = TS_ENOMEM;
    if (!err && conf->dedicated_time_file && !(f.dedicated = malloc(sizeof(*f.dedicated))))
        err = TS_ENOMEM;
    if (!err && f.policy)
        err = policy_load(conf->policy_file, f.policy, errbuf, errlen);
    if (!err && f.holidays)
        err = holidays_load(conf->holidays_file, f.holidays, errbuf, errlen);
    if (!err && f.dedicated)
        err = dedicated_load(conf->dedicated_time_file, f.dedicated, errbuf, errlen);
    if (!err)
        err = fairshare_usage_load_tree(conf, f.policy, &f.tree, errbuf, errlen);
    if (err)
        policy_files_free(&f);
    *out = f;
    return err;
}

static void policy_files_take(struct ctld *c, struct policy_files *f)
{
    free(c->policy);
    free(c->holidays);
    free(c->dedicated);
    c->policy = f->policy;
    c->holidays = f->holidays;
    c->dedicated = f->dedicated;
    if (f->tree) /* at start-up the tree goes to fairshare_usage_init instead */
        fairshare_usage_replace_tree(c, f->tree);
    f->tree = NULL;
}

static void on_orphan(struct loop *loop, pid_t pid, int status, const struct rusage *usage,
                      void *arg)
{
    (void)loop;
    (void)usage;
    (void)arg;
    log_debug("child %d reaped (status %d)", (int)pid, status);
}

static void on_hangup(struct loop *loop, int signo, void *arg)
{
    char err[512] = "";
    if (ctld_reconfigure(arg, err, sizeof(err)) != TS_OK)
        log_error("reconfigure: %s (keeping the previous configuration)", err);
}

/* Create StateSaveLocation if it is missing: one level, private to the controller. */
static int prepare_state_dir(const char *path, char *errbuf, size_t errlen)
{
    if (mkdir(path, 0700) == 0 || errno == EEXIST)
        return TS_OK;
    snprintf(errbuf, errlen, "cannot create StateSaveLocation %s: %s", path, strerror(errno));
    return TS_ESYS;
}

static int setup_logging(const struct conf *conf, const struct ctld_options *opts,
                         char *errbuf, size_t errlen)
{
    enum log_level lvl = LOG_LVL_INFO;
    log_level_parse(conf->ctld_debug, &lvl); /* the parser already checked the name */
    for (int i = 0; i < opts->verbose && lvl < LOG_LVL_DEBUG2; i++)
        lvl++;
    const char *dest = opts->foreground ? NULL
                       : conf->ctld_log_file ? conf->ctld_log_file
                                             : "syslog";
    int err = log_open("tessera-ctld", lvl, dest);
    if (err)
        snprintf(errbuf, errlen, "cannot open CtldLogFile %s: %s", dest, ts_strerror(err));
    return err;
}

static int start_server(struct ctld *c, uint16_t port, char *errbuf, size_t errlen)
{
    char name[AUTH_TARGET_MAX];
    struct rpc_server_config cfg = {
        .host = c->conf->ctld_host,
        .port = port ? port : c->conf->ctld_port,
        .uid = geteuid(),
        .identity = rpc_name_ctld(c->conf, name, sizeof(name)),
    };
    rpc_conf_server(c->conf, &cfg);
    cfg.roles_of = ctld_rpc_roles;
    int err = rpc_server_create(c->loop, &cfg, ctld_rpc_handlers, ctld_rpc_nhandlers, c,
                                &c->server);
    if (err)
        snprintf(errbuf, errlen, "cannot listen on %s port %u: %s", cfg.host, cfg.port,
                 ts_strerror(err));
    return err;
}

int ctld_observe_jobs(struct ctld *c)
{
    job_observer_fn *const order[] = {acct_job_changed,           job_dependency_changed,
                                      step_job_changed,           job_alloc_changed,
                                      fairshare_usage_job_changed, filter_activate_job_changed,
                                      sched_job_changed};
    int err = TS_OK;
    for (size_t i = 0; !err && i < sizeof(order) / sizeof(order[0]); i++)
        err = job_change_observe(c, order[i]);
    return err;
}

int ctld_state_open(struct ctld *c, struct fairshare *tree, char *errbuf, size_t errlen)
{
    int err = prepare_state_dir(c->conf->state_save_location, errbuf, errlen);
    /* a damaged or lost state is refused in one line before LMDB maps anything */
    if (!err)
        err = store_file_check(c->conf->state_save_location, NULL, errbuf, errlen);
    if (!err && (err = store_open(c->loop, c->conf->state_save_location,
                                  STORE_DEFAULT_MAP_SIZE, &c->store)))
        snprintf(errbuf, errlen, "cannot open the state in %s: %s",
                 c->conf->state_save_location, ts_strerror(err));
    if (err) {
        fairshare_destroy(tree);
        return err;
    }
    ctld_store_guard_init(c);
    if ((err = step_cred_init(c, errbuf, errlen)) || (err = ctld_state_load(c, errbuf, errlen)) ||
        (err = acct_init(c, errbuf, errlen)) || (err = job_table_load(c, errbuf, errlen)) ||
        (err = step_table_load(c, errbuf, errlen)) ||
        (err = node_table_build(c, errbuf, errlen))) {
        fairshare_destroy(tree);
        return err;
    }
    if ((err = fairshare_usage_init(c, tree, errbuf, errlen)))
        return err;
    hold_running(c);
    job_housekeeping(c, time(NULL));
    if (!(c->housekeeping = loop_timer_add(c->loop, 1000, 1000, housekeeping_tick, c)))
        return TS_ENOMEM;
    return TS_OK;
}

int ctld_create(const struct ctld_options *opts, struct ctld **out, char *errbuf, size_t errlen)
{
    errbuf[0] = '\0';
    *out = NULL;
    struct ctld *c = calloc(1, sizeof(*c));
    struct policy_files files;
    struct fairshare *tree = NULL; /* until fairshare_usage_init owns it */
    if (!c)
        return TS_ENOMEM;
    c->start_time = time(NULL);
    int err = job_table_init(&c->jobs);
    if (!err)
        err = ctld_observe_jobs(c);
    if (err)
        goto error;
    err = TS_ENOMEM;
    if (!(c->names = namecache_create(NULL)))
        goto error;
    if (!(c->conf_path = strdup(conf_locate(opts->conf_path))))
        goto error;
    if ((err = conf_load(c->conf_path, &c->conf, errbuf, errlen)))
        goto error;
    if ((err = setup_logging(c->conf, opts, errbuf, errlen)) ||
        (err = load_policy(c->conf, &files, errbuf, errlen)))
        goto error;
    tree = files.tree;
    files.tree = NULL;
    policy_files_take(c, &files);

    /* Commands restrict their credentials to SlurmUser's uid: as anyone else we could
     * decode none of them. */
    if (geteuid() != c->conf->slurm_user_uid) {
        snprintf(errbuf, errlen, "running as uid %u, but SlurmUser is %s (uid %u)",
                 (unsigned)geteuid(), c->conf->slurm_user, (unsigned)c->conf->slurm_user_uid);
        err = TS_ECONF;
        goto error;
    }
    /* Refuse early when MUNGE is not there: nothing could authenticate to us. */
    if ((err = auth_selftest(c->conf->munge_socket))) {
        snprintf(errbuf, errlen, "MUNGE does not work (socket %s): %s",
                 c->conf->munge_socket ? c->conf->munge_socket : "default", ts_strerror(err));
        goto error;
    }
    err = TS_ENOMEM;
    if (!(c->loop = loop_create()))
        goto error;
    /* Signals first: the threads started below inherit the blocked mask. */
    if ((err = loop_signal_add(c->loop, SIGTERM, on_terminate, c)) ||
        (err = loop_signal_add(c->loop, SIGINT, on_terminate, c)) ||
        (err = loop_signal_add(c->loop, SIGHUP, on_hangup, c)))
        goto error;
    /* filters are children of the controller: SIGCHLD goes through the loop too */
    loop_set_orphan_cb(c->loop, on_orphan, c);
    signal(SIGPIPE, SIG_IGN);

    err = ctld_state_open(c, tree, errbuf, errlen);
    tree = NULL;
    if (err)
        goto error;
    if ((err = start_server(c, opts->port_override, errbuf, errlen)) ||
        (err = sched_init(c, errbuf, errlen)))
        goto error;
    if ((err = daemon_write_pid(c->conf->ctld_pid_file, errbuf, errlen)))
        goto error;
    log_info("%s controller %s listening on %s port %u", c->conf->cluster_name,
             TESSERA_VERSION, c->conf->ctld_host, rpc_server_port(c->server));
    *out = c;
    return TS_OK;
error:
    if (!errbuf[0])
        snprintf(errbuf, errlen, "%s", ts_strerror(err));
    fairshare_destroy(tree);
    ctld_destroy(c);
    return err;
}

int ctld_run(struct ctld *c)
{
    int err = loop_run(c->loop);
    if (err) {
        log_error("event loop failed: %s", ts_strerror(err));
        c->exit_code = 1;
    }
    return c->exit_code;
}

int ctld_destroy(struct ctld *c)
{
    if (!c)
        return TS_OK;
    /* Stop taking requests, then make everything queued durable before leaving. */
    rpc_server_destroy(c->server);
    /* filters first: none reports any more, so what waited for them can go */
    filter_run_shutdown(c);
    filter_submit_shutdown(c);
    filter_activate_shutdown(c);
    job_alloc_fini(c);
    sched_fini(c);
    node_table_free(&c->nodes); /* closes the lines to node daemons */
    if (c->loop) {
        loop_timer_cancel(c->loop, c->housekeeping);
        for (int i = 0; i < 3; i++) /* deliver what the auth threads posted */
            loop_run_once(c->loop, 0);
    }
    fairshare_usage_fini(c); /* its usage goes into the store's last batch */
    int err = store_close(c->store); /* a failing store: once more, then given up */
    job_table_fini(&c->jobs);
    step_cred_fini(c);
    if (c->server && c->conf->ctld_pid_file)
        unlink(c->conf->ctld_pid_file);
    filter_run_free_all(c); /* after the last loop turn: nothing calls back into them */
    loop_destroy(c->loop);
    struct policy_files none = {0};
    policy_files_take(c, &none);
    conf_free(c->conf);
    free(c->conf_path);
    namecache_destroy(c->names);
    free(c);
    return err;
}

/* Settings that only a restart can change: warn rather than pretend. */
static void warn_restart_needed(const struct conf *old, const struct conf *new)
{
    if (old->ctld_port != new->ctld_port || strcmp(old->ctld_host, new->ctld_host))
        log_warn("reconfigure: CtldHost/CtldPort changes take effect at the next restart");
    if (strcmp(old->scheduler_type, new->scheduler_type) ||
        strcmp(old->select_type, new->select_type) ||
        strcmp(old->priority_type, new->priority_type))
        log_warn("reconfigure: SchedulerType/SelectType/PriorityType changes take effect at "
                 "the next restart");
    if (strcmp(old->state_save_location, new->state_save_location))
        log_warn("reconfigure: StateSaveLocation changes take effect at the next restart");
    if ((old->munge_socket == NULL) != (new->munge_socket == NULL) ||
        (old->munge_socket && strcmp(old->munge_socket, new->munge_socket)))
        log_warn("reconfigure: AuthInfo changes take effect at the next restart");
}

int ctld_reconfigure(struct ctld *c, char *errbuf, size_t errlen)
{
    struct conf *fresh = NULL;
    struct policy_files files = {0};
    int err = conf_load(c->conf_path, &fresh, errbuf, errlen);
    if (!err && (err = load_policy(fresh, &files, errbuf, errlen))) {
        conf_free(fresh); /* a broken policy file keeps the running configuration */
        return err;
    }
    if (!err) {
        sched_abort(c);
        filter_activate_reconfigured(c);
    }
    if (err)
        return err;
    warn_restart_needed(c->conf, fresh);
    struct conf *old = c->conf;
    c->conf = fresh;
    if ((err = node_table_rebuild(c, errbuf, errlen))) {
        c->conf = old;
        conf_free(fresh);
        policy_files_free(&files);
        return err;
    }
    policy_files_take(c, &files);
    enum log_level lvl;
    if (log_level_parse(fresh->ctld_debug, &lvl) == TS_OK)
        log_set_level(lvl);
    conf_free(old);
    log_info("reconfigured from %s", c->conf_path);
    sched_trigger(c, SCHED_TRIGGER_NODE);
    return TS_OK;
}
