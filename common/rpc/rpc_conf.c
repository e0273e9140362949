#include "common/rpc/rpc_conf.h"

#include "common/conf/conf.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_peer.h"
#include "common/rpc/rpc_server.h"

#include <stdio.h>

static const char *cluster_of(const struct conf *conf)
{
    return conf->cluster_name ? conf->cluster_name : "";
}

const char *rpc_name_ctld(const struct conf *conf, char *buf, size_t len)
{
    snprintf(buf, len, "%s/ctld", cluster_of(conf));
    return buf;
}

const char *rpc_name_noded(const struct conf *conf, const char *node, char *buf, size_t len)
{
    snprintf(buf, len, "%s/noded/%s", cluster_of(conf), node);
    return buf;
}

const char *rpc_name_srun(const struct conf *conf, uint32_t job_id, uint32_t step_id, char *buf,
                          size_t len)
{
    snprintf(buf, len, "%s/srun/%u.%u", cluster_of(conf), job_id, step_id);
    return buf;
}

/* AuthInfo's ttl is how long MUNGE honours a credential: its time may differ from ours by
 * as much (MUNGE's own default otherwise). */
static unsigned cred_window(const struct conf *conf)
{
    return conf->cred_ttl ? conf->cred_ttl : AUTH_DEFAULT_WINDOW;
}

void rpc_conf_server(const struct conf *conf, struct rpc_server_config *cfg)
{
    cfg->munge_socket = conf->munge_socket;
    cfg->cred_window_s = cred_window(conf);
    cfg->handshake_timeout_ms = conf->rpc_handshake_timeout * 1000;
    cfg->frame_timeout_ms = conf->rpc_frame_timeout * 1000;
    cfg->idle_timeout_ms = conf->rpc_idle_timeout * 1000;
    cfg->max_connections = conf->rpc_max_connections;
    cfg->max_unauth = conf->rpc_max_unauth;
    cfg->max_unauth_per_host = conf->rpc_max_unauth_per_host;
    cfg->max_per_user = conf->rpc_max_user_connections;
    cfg->trusted_uids[0] = conf->slurm_user_uid;
    cfg->trusted_uids[1] = conf->noded_user_uid;
    cfg->ntrusted = 2;
}

unsigned rpc_conf_roles(const struct conf *conf, uid_t uid)
{
    if (uid == 0)
        return RPC_ROLE_ADMIN | RPC_ROLE_NODED;
    return (uid == conf->slurm_user_uid ? RPC_ROLE_ADMIN : 0u) |
           (uid == conf->noded_user_uid ? RPC_ROLE_NODED : 0u);
}

void rpc_conf_peer(const struct conf *conf, struct rpc_peer_config *cfg)
{
    cfg->munge_socket = conf->munge_socket;
    cfg->cred_ttl = (int)conf->cred_ttl;
    cfg->timeout_ms = conf->message_timeout * 1000;
    /* well before the server would close it: a request never meets the server's close */
    cfg->idle_close_ms = conf->rpc_idle_timeout * 500;
}

void rpc_conf_client(const struct conf *conf, struct rpc_client_config *cfg)
{
    cfg->munge_socket = conf->munge_socket;
    cfg->cred_ttl = (int)conf->cred_ttl;
    cfg->timeout_ms = (int)conf->message_timeout * 1000;
}
