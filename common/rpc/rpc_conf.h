/* What tessera.conf says about RPC: the limits of servers, the settings of clients, and
 * the names daemons go by in credentials (docs/protocol.md, section 3).
 *
 * A credential names the daemon it is meant for, and a server accepts only its own name:
 * a credential made for one daemon is refused by any other, even one running as the same
 * uid with a MUNGE daemon of its own (whose replay cache never saw it). Names are built
 * from what both sides know from the configuration and the request at hand:
 *     "<ClusterName>/ctld"                  the controller
 *     "<ClusterName>/noded/<NodeName>"      a node daemon
 *     "<ClusterName>/srun/<job>.<step>"     srun's server for a step's daemons
 */
#ifndef TESSERA_COMMON_RPC_CONF_H
#define TESSERA_COMMON_RPC_CONF_H

#include "common/auth/auth.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conf;
struct rpc_server_config;
struct rpc_peer_config;
struct rpc_client_config;

/* A name in buf (AUTH_TARGET_MAX bytes is enough for any); buf is returned. */
const char *rpc_name_ctld(const struct conf *conf, char *buf, size_t len);
const char *rpc_name_noded(const struct conf *conf, const char *node, char *buf, size_t len);
/* srun's server for one step: job_id is the step's first component's own id, which names
 * the step with step_id (steplayout_step_job_id), not the leader's. */
const char *rpc_name_srun(const struct conf *conf, uint32_t job_id, uint32_t step_id, char *buf,
                          size_t len);

/* A server's limits and MUNGE settings from conf, with the daemons' users (SlurmUser,
 * NodedUser) trusted. Address, port, uid, identity and threads stay the caller's. */
void rpc_conf_server(const struct conf *conf, struct rpc_server_config *cfg);

/* The roles (RPC_ROLE_* of rpc_server.h, ored) uid holds under conf: root all of them,
 * SlurmUser administrator, NodedUser node daemon. The one answer to "who is an
 * administrator" (docs/security.md, section 1); daemons' rpc_roles_fn ask it with their
 * configuration of the moment. */
unsigned rpc_conf_roles(const struct conf *conf, uid_t uid);

/* A client's MUNGE settings and time-outs from conf. Host, port, server_uid and target
 * stay the caller's. */
void rpc_conf_peer(const struct conf *conf, struct rpc_peer_config *cfg);
void rpc_conf_client(const struct conf *conf, struct rpc_client_config *cfg);

#endif
