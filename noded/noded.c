/* Node daemon life: start-up checks, the loop, signals, shutdown. */
#include "noded/containment.h"
#include "noded/gres.h"
#include "noded/noded.h"
#include "noded/spool.h"

#include "common/auth/auth.h"
#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/rpc/rpc_server.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static void on_terminate(struct loop *loop, int signo, void *arg)
{
    log_info("terminating on signal %d", signo);
    loop_stop(loop);
}

static void on_orphan(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                      void *arg)
{
    /* a job's straggler, re-parented to us when its parent ended: reaped, nothing else */
    log_debug("reaped orphan %d", (int)pid);
}

static int setup_logging(const struct conf *conf, const struct noded_options *opts,
                         const char *name, char *errbuf, size_t errlen)
{
    enum log_level lvl = LOG_LVL_INFO;
    log_level_parse(conf->noded_debug, &lvl);
    for (int i = 0; i < opts->verbose && lvl < LOG_LVL_DEBUG2; i++)
        lvl++;
    char ident[128], path[1024];
    snprintf(ident, sizeof(ident), "tessera-noded(%s)", name);
    const char *dest = NULL;
    if (!opts->foreground)
        dest = daemon_expand_name(conf->noded_log_file ? conf->noded_log_file : "syslog", name,
                                  path, sizeof(path));
    int err = log_open(ident, lvl, dest);
    if (err)
        snprintf(errbuf, errlen, "cannot open NodedLogFile %s: %s", dest, ts_strerror(err));
    return err;
}

static int start_server(struct noded *nd, char *errbuf, size_t errlen)
{
    char name[AUTH_TARGET_MAX];
    struct rpc_server_config cfg = {
        .host = nd->node->addr,
        .port = nd->node->port,
        .uid = geteuid(),
        .identity = rpc_name_noded(nd->conf, nd->name, name, sizeof(name)),
    };
    rpc_conf_server(nd->conf, &cfg);
    cfg.auth_threads = 2;
    cfg.roles_of = noded_rpc_roles;
    int err = rpc_server_create(nd->loop, &cfg, noded_rpc_handlers, noded_rpc_nhandlers, nd,
                                &nd->server);
    if (err)
        snprintf(errbuf, errlen, "cannot listen on %s port %u: %s", cfg.host, cfg.port,
                 ts_strerror(err));
    return err;
}

static int check_identity(const struct noded *nd, char *errbuf, size_t errlen)
{
    if (!nd->node) {
        snprintf(errbuf, errlen, "node %s is not in %s", nd->name, nd->conf_path);
        return TS_ECONF;
    }
    if (geteuid() != nd->conf->noded_user_uid) {
        snprintf(errbuf, errlen, "running as uid %u, but NodedUser is %s (uid %u)",
                 (unsigned)geteuid(), nd->conf->noded_user, (unsigned)nd->conf->noded_user_uid);
        return TS_ECONF;
    }
    return TS_OK;
}

int noded_create(const struct noded_options *opts, struct noded **out, char *errbuf,
                 size_t errlen)
{
    errbuf[0] = '\0';
    *out = NULL;
    struct noded *nd = calloc(1, sizeof(*nd));
    if (!nd)
        return TS_ENOMEM;
    nd->boot_time = time(NULL);
    nd->spool_fd = nd->state_fd = -1;
    int err = TS_ENOMEM;
    if (!(nd->conf_path = strdup(conf_locate(opts->conf_path))) ||
        !(nd->name = strdup(opts->node_name)))
        goto error;
    if ((err = conf_load(nd->conf_path, &nd->conf, errbuf, errlen)))
        goto error;
    nd->node = conf_find_node(nd->conf, nd->name);
    if ((err = check_identity(nd, errbuf, errlen)) ||
        (err = setup_logging(nd->conf, opts, nd->name, errbuf, errlen)) ||
        (err = noded_gres_resolve(nd, errbuf, errlen)))
        goto error;
    if ((err = auth_selftest(nd->conf->munge_socket))) {
        snprintf(errbuf, errlen, "MUNGE does not work (socket %s): %s",
                 nd->conf->munge_socket ? nd->conf->munge_socket : "default", ts_strerror(err));
        goto error;
    }
    /* jobs' orphans come to us, not to init: nothing escapes being reaped */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    err = TS_ENOMEM;
    if (!(nd->loop = loop_create()) || job_table_create(nd))
        goto error;
    if ((err = loop_signal_add(nd->loop, SIGTERM, on_terminate, nd)) ||
        (err = loop_signal_add(nd->loop, SIGINT, on_terminate, nd)))
        goto error;
    loop_set_orphan_cb(nd->loop, on_orphan, nd);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    if ((err = spool_open(nd, errbuf, errlen)) || (err = step_setup(nd, errbuf, errlen)))
        goto error;
    containment_open(nd); /* a failure drains the node, and the daemon goes on */
    reports_load(nd);  /* the ends an earlier life did not have acknowledged */
    spool_recover(nd); /* what it left running: adopted, reported, or killed */
    containment_reclaim(nd); /* and what outlived it in containers */
    if ((err = start_server(nd, errbuf, errlen)))
        goto error;
    if ((err = link_start(nd)))
        goto error;
    if (nd->conf->noded_pid_file) {
        char path[1024];
        daemon_expand_name(nd->conf->noded_pid_file, nd->name, path, sizeof(path));
        if ((err = daemon_write_pid(path, errbuf, errlen)))
            goto error;
        nd->pid_written = 1;
    }
    log_info("node %s: daemon %s listening on %s port %u (%u CPUs, %llu MB)", nd->name,
             TESSERA_VERSION, nd->node->addr, nd->node->port, nd->node->cpus,
             (unsigned long long)nd->node->real_memory_mb);
    *out = nd;
    return TS_OK;
error:
    if (!errbuf[0])
        snprintf(errbuf, errlen, "%s", ts_strerror(err));
    noded_destroy(nd);
    return err;
}

int noded_run(struct noded *nd)
{
    int err = loop_run(nd->loop);
    if (err) {
        log_error("event loop failed: %s", ts_strerror(err));
        nd->exit_code = 1;
    }
    return nd->exit_code;
}

void noded_destroy(struct noded *nd)
{
    if (!nd)
        return;
    if (nd->ctl)
        link_stop(nd);
    rpc_server_destroy(nd->server);
    bcast_teardown(nd);
    job_table_destroy(nd);
    step_teardown(nd);
    containment_close(nd);
    spool_close(nd);
    noded_gres_clear(nd);
    if (nd->loop)
        for (int i = 0; i < 3; i++) /* deliver what the auth threads posted */
            loop_run_once(nd->loop, 0);
    loop_destroy(nd->loop);
    if (nd->pid_written) {
        char path[1024];
        unlink(daemon_expand_name(nd->conf->noded_pid_file, nd->name, path, sizeof(path)));
    }
    conf_free(nd->conf);
    free(nd->conf_path);
    free(nd->name);
    free(nd);
}
