#include "cluster.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int harness_cluster_write_conf(struct harness_cluster *c, const char *extra)
{
    char text[8192];
    snprintf(text, sizeof(text),
             "ClusterName=itest\n"
             "CtldHost=127.0.0.1\n"
             "CtldPort=%u\n"
             "StateSaveLocation=%s\n"
             "SpoolDir=%s/spool\n"
             "AuthInfo=socket=%s\n"
             "SlurmUser=%u\n"
             "PluginDir=%s\n"
             "%s",
             c->ctld_port, c->state, c->dir, c->munge.socket, (unsigned)geteuid(),
             TESSERA_LIB_DIR, extra ? extra : "");
    return harness_write_file(c->conf, text, 0644);
}

int harness_cluster_init(struct harness_cluster *c, const char *extra)
{
    memset(c, 0, sizeof(*c));
    if (harness_munge_start(&c->munge))
        return -1;
    if (harness_tmpdir("cluster", c->dir, sizeof(c->dir)))
        return -1;
    snprintf(c->conf, sizeof(c->conf), "%s/tessera.conf", c->dir);
    snprintf(c->state, sizeof(c->state), "%s/state", c->dir);
    snprintf(c->ctld_log, sizeof(c->ctld_log), "%s/ctld.log", c->dir);
    snprintf(c->conf_env, sizeof(c->conf_env), "TESSERA_CONF=%s", c->conf);
    const char *path = getenv("PATH");
    snprintf(c->path_env, sizeof(c->path_env), "PATH=%s:%s", TESSERA_BIN_DIR,
             path ? path : "/usr/bin:/bin");
    c->ctld_port = harness_free_port();
    for (int i = 0; i < HARNESS_MAX_NODES; i++) {
        snprintf(c->nodes[i].name, sizeof(c->nodes[i].name), "n%d", i + 1);
        c->nodes[i].port = harness_free_port();
        snprintf(c->nodes[i].log, sizeof(c->nodes[i].log), "%s/noded-n%d.log", c->dir, i + 1);
    }
    /* a job whose node daemon dies is re-parented to us, and killed at the end */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return harness_cluster_write_conf(c, extra);
}

static int ping_ok(struct harness_cluster *c)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = c->ctld_port,
                                    .munge_socket = c->munge.socket, .server_uid = geteuid(),
                                    .target = HARNESS_CTLD_NAME, .timeout_ms = 2000};
    struct rpc_client *cli = NULL;
    if (rpc_client_connect(&cfg, &cli) != TS_OK)
        return 0;
    Tessera__PingRequest p = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &p;
    Tessera__Response *resp = NULL;
    int ok = rpc_client_call(cli, &req, &resp) == TS_OK && !resp->error;
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
    return ok;
}

int harness_ctld_start(struct harness_cluster *c)
{
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tessera-ctld", TESSERA_BIN_DIR);
    char *argv[] = {bin, "-D", "-f", c->conf, NULL};
    c->ctld = harness_spawn(argv, NULL, c->ctld_log);
    if (c->ctld < 0)
        return -1;
    for (int i = 0; i < 500; i++) {
        if (ping_ok(c))
            return 0;
        if (waitpid(c->ctld, NULL, WNOHANG) == c->ctld) {
            c->ctld = 0; /* it exited: the log says why */
            return -1;
        }
        usleep(20000);
    }
    harness_ctld_stop(c, SIGKILL);
    return -1;
}

int harness_ctld_stop(struct harness_cluster *c, int sig)
{
    if (c->ctld <= 0)
        return -1; /* never signal pid 0: that is the test's own process group */
    int status = harness_stop(c->ctld, sig, 10000);
    c->ctld = 0;
    return status;
}

int harness_ctld_stop_clean(struct harness_cluster *c)
{
    int status = harness_ctld_stop(c, SIGTERM);
    if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char *log = harness_read_file(c->ctld_log);
    size_t len = log ? strlen(log) : 0;
    fprintf(stderr, "tessera-ctld did not stop cleanly (status %d); its log ends:\n%s\n", status,
            log ? log + (len > 8000 ? len - 8000 : 0) : "");
    free(log);
    return -1;
}

int harness_cmd(struct harness_cluster *c, const char *cmd, const char *const args[], char **out,
                char **err)
{
    return harness_cmd_as(c, (uid_t)-1, cmd, args, out, err);
}

int harness_cmd_as(struct harness_cluster *c, uid_t uid, const char *cmd, const char *const args[],
                   char **out, char **err)
{
    return harness_cmd_full(c, uid, NULL, cmd, args, out, err);
}

int harness_cmd_full(struct harness_cluster *c, uid_t uid, const char *const extra_env[],
                     const char *cmd, const char *const args[], char **out, char **err)
{
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/%s", TESSERA_BIN_DIR, cmd);
    char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args && args[i] && n < 63; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    char *env[32];
    size_t nenv = 0;
    env[nenv++] = c->conf_env;
    env[nenv++] = c->path_env;
    for (size_t i = 0; extra_env && extra_env[i] && nenv < 31; i++)
        env[nenv++] = (char *)extra_env[i];
    env[nenv] = NULL;
    return harness_run_as(argv, env, uid, uid == (uid_t)-1 ? (gid_t)-1 : (gid_t)uid, out, err,
                          30000);
}

pid_t harness_cmd_spawn(struct harness_cluster *c, const char *cmd, const char *const args[],
                        const char *log)
{
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/%s", TESSERA_BIN_DIR, cmd);
    char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args && args[i] && n < 63; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    char *env[] = {c->conf_env, c->path_env, NULL};
    return harness_spawn(argv, env, log);
}

const char *harness_node_lines(struct harness_cluster *c, int n, const char *attrs, char *buf,
                               size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < HARNESS_MAX_NODES && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "NodeName=%s NodeAddr=127.0.0.1 Port=%u %s\n",
                                c->nodes[i].name, c->nodes[i].port, attrs ? attrs : "");
    return buf;
}

int harness_cluster_up(struct harness_cluster *c, int n, const char *attrs, const char *extra,
                       char *outdir, size_t outlen)
{
    char nodes[HARNESS_MAX_NODES * 128], conf[8192];
    if (n < 1 || n > HARNESS_MAX_NODES || harness_cluster_init(c, NULL))
        return -1;
    harness_node_lines(c, n, attrs, nodes, sizeof(nodes));
    if ((size_t)snprintf(conf, sizeof(conf),
                         "%s%sPartitionName=debug Nodes=n[1-%d] Default=YES MaxTime=UNLIMITED\n",
                         extra ? extra : "", nodes, n) >= sizeof(conf) ||
        harness_cluster_write_conf(c, conf))
        return -1;
    return harness_cluster_start(c, n, outdir, outlen);
}

int harness_cluster_start(struct harness_cluster *c, int n, char *outdir, size_t outlen)
{
    snprintf(outdir, outlen, "%s/out", c->dir);
    mkdir(outdir, 01777);
    chmod(outdir, 01777); /* jobs of other users write there too */
    if (harness_ctld_start(c))
        return -1;
    for (int i = 1; i <= n; i++)
        if (harness_noded_start(c, i))
            return -1;
    return harness_wait_nodes(c, n, 15000);
}

int harness_noded_start(struct harness_cluster *c, int i)
{
    struct harness_node *n = &c->nodes[i - 1];
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tessera-noded", TESSERA_BIN_DIR);
    char *argv[] = {bin, "-D", "-f", c->conf, "-N", n->name, NULL};
    n->pid = harness_spawn(argv, NULL, n->log);
    return n->pid > 0 ? 0 : -1;
}

int harness_noded_stop(struct harness_cluster *c, int i, int sig)
{
    struct harness_node *n = &c->nodes[i - 1];
    /* only the daemon: its jobs are in sessions of their own and must outlive it */
    int status = -1;
    if (n->pid > 0) {
        kill(n->pid, sig);
        status = harness_wait(n->pid, 10000);
    }
    n->pid = 0;
    return status;
}

const char *harness_daemon_name(struct harness_cluster *c, uint16_t port, char *buf, size_t len)
{
    snprintf(buf, len, "%s", port == c->ctld_port ? HARNESS_CTLD_NAME : "");
    for (int i = 0; i < HARNESS_MAX_NODES; i++)
        if (port != c->ctld_port && c->nodes[i].port == port)
            snprintf(buf, len, "itest/noded/%s", c->nodes[i].name);
    return buf;
}

/* Nodes registered and responding, as the controller says. */
static int nodes_up(struct harness_cluster *c)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = c->ctld_port,
                                    .munge_socket = c->munge.socket, .server_uid = geteuid(),
                                    .target = HARNESS_CTLD_NAME, .timeout_ms = 2000};
    struct rpc_client *cli = NULL;
    if (rpc_client_connect(&cfg, &cli) != TS_OK)
        return -1;
    Tessera__NodeQueryRequest q = TESSERA__NODE_QUERY_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &q;
    Tessera__Response *resp = NULL;
    int up = 0, more = 1;
    while (up >= 0 && more) { /* page by page (docs/protocol.md, "Pages") */
        if (rpc_client_call(cli, &req, &resp) != TS_OK || resp->error) {
            up = -1;
        } else {
            for (size_t i = 0; i < resp->node_query->n_nodes; i++) {
                const char *st = resp->node_query->nodes[i]->state;
                if (strncmp(st, "UNKNOWN", 7) && strncmp(st, "DOWN", 4) &&
                    !strstr(st, "NOT_RESP"))
                    up++;
            }
            more = resp->node_query->more && resp->node_query->next_index > q.start_index;
            q.start_index = resp->node_query->next_index;
        }
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
        resp = NULL;
    }
    rpc_client_close(cli);
    return up;
}

int harness_wait_nodes(struct harness_cluster *c, int count, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 50) {
        if (nodes_up(c) >= count)
            return 0;
        usleep(50000);
    }
    return -1;
}

void harness_kill_leftovers(void)
{
    for (int round = 0; round < 20; round++) {
        DIR *d = opendir("/proc");
        int found = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            int pid = atoi(e->d_name);
            if (pid <= 1)
                continue;
            char path[64], buf[512];
            snprintf(path, sizeof(path), "/proc/%d/stat", pid);
            FILE *f = fopen(path, "re");
            if (!f)
                continue;
            size_t n = fread(buf, 1, sizeof(buf) - 1, f);
            fclose(f);
            buf[n] = '\0';
            char *p = strrchr(buf, ')');
            int ppid = 0;
            if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) {
                kill(pid, SIGKILL);
                found++;
            }
        }
        if (d)
            closedir(d);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!found)
            return;
        usleep(20000);
    }
}

void harness_cluster_fini(struct harness_cluster *c)
{
    for (int i = 1; i <= HARNESS_MAX_NODES; i++)
        if (c->nodes[i - 1].pid > 0)
            harness_noded_stop(c, i, SIGKILL);
    if (c->ctld > 0)
        harness_ctld_stop(c, SIGKILL);
    harness_munge_stop(&c->munge);
    harness_kill_leftovers();
    if (c->dir[0])
        harness_rmrf(c->dir);
    c->dir[0] = '\0';
}
