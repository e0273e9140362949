#include "cluster.h"

#include "common/errors.h"
#include "common/rpc_client.h"

#include <signal.h>
#include <stdio.h>
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
             "%s",
             c->ctld_port, c->state, c->dir, c->munge.socket, (unsigned)geteuid(),
             extra ? extra : "");
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
    c->ctld_port = harness_free_port();
    return harness_cluster_write_conf(c, extra);
}

static int ping_ok(struct harness_cluster *c)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = c->ctld_port,
                                    .munge_socket = c->munge.socket, .server_uid = geteuid(),
                                    .timeout_ms = 2000};
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
    int status = harness_stop(c->ctld, sig, 10000);
    c->ctld = 0;
    return status;
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
    for (size_t i = 0; extra_env && extra_env[i] && nenv < 31; i++)
        env[nenv++] = (char *)extra_env[i];
    env[nenv] = NULL;
    return harness_run_as(argv, env, uid, uid == (uid_t)-1 ? (gid_t)-1 : (gid_t)uid, out, err,
                          30000);
}

void harness_cluster_fini(struct harness_cluster *c)
{
    if (c->ctld > 0)
        harness_ctld_stop(c, SIGKILL);
    harness_munge_stop(&c->munge);
    if (c->dir[0])
        harness_rmrf(c->dir);
    c->dir[0] = '\0';
}
