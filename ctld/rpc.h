/* The controller's RPC handlers (ctld/rpc.c holds the table). Each runs on the loop
 * thread with the uid and gid the request's connection proved. */
#ifndef TESSERA_CTLD_RPC_H
#define TESSERA_CTLD_RPC_H

#include "common/rpc_server.h"

#include <sys/types.h>

struct ctld;

/* Answer req with an empty response of kind once the changes queued so far are durable
 * (an error if the commit fails). */
void ctld_respond_after_commit(struct ctld *c, struct rpc_request *req,
                               Tessera__Response__MsgCase kind);

void ctld_handle_submit(struct rpc_request *req, const Tessera__Request *msg, void *arg);
/* The submission itself, once the submission filters passed (sub as they left it): check,
 * create, answer req after the commit. */
void ctld_submit_finish(struct ctld *c, struct rpc_request *req,
                        const Tessera__SubmitRequest *sub, uid_t uid, gid_t gid,
                        const char *host);
void ctld_handle_job_query(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_job_action(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_job_update(struct rpc_request *req, const Tessera__Request *msg, void *arg);
/* scontrol write batch_script: a job's private data, to its owner or an administrator
 * (ctld/job_private.c). */
void ctld_handle_job_script(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_alloc_wait(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_job_finish(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_step_create(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_step_complete(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_step_query(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_partition_query(struct rpc_request *req, const Tessera__Request *msg,
                                 void *arg);

void ctld_handle_node_register(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_node_heartbeat(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_job_complete(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_node_query(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_node_update(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_sched_stats(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_reconfigure(struct rpc_request *req, const Tessera__Request *msg, void *arg);
void ctld_handle_schedule(struct rpc_request *req, const Tessera__Request *msg, void *arg);

#endif
