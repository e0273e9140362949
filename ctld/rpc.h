/* The controller's RPC handlers (ctld/rpc.c holds the table). Each runs on the loop
 * thread with the uid and gid the request's connection proved. */
#ifndef TESSERA_CTLD_RPC_H
#define TESSERA_CTLD_RPC_H

#include "common/rpc/rpc_server.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ctld;

/* Query answers come in pages (docs/protocol.md, "Pages"), so that no answer nears the
 * frame limit however many or large the records: at most CTLD_PAGE_BYTES of records (a
 * larger record comes alone; submission limits keep every record well inside a frame)
 * and as many records as the request asks, CTLD_PAGE_ITEMS when it names no number,
 * never more than CTLD_PAGE_MAX_ITEMS. */
/* A build may set tiny pages to run every test through paging:
 * -DCMAKE_C_FLAGS="-DCTLD_PAGE_BYTES=120 -DCTLD_PAGE_ITEMS=2u". */
#ifndef CTLD_PAGE_BYTES
#define CTLD_PAGE_BYTES ((size_t)4 << 20)
#endif
#ifndef CTLD_PAGE_ITEMS
#define CTLD_PAGE_ITEMS 1000u
#endif
#define CTLD_PAGE_MAX_ITEMS 10000u

struct ctld_page {
    size_t max_items;
    size_t items;
    size_t bytes;
};

static inline struct ctld_page ctld_page_start(uint32_t asked)
{
    struct ctld_page p = {asked == 0                     ? CTLD_PAGE_ITEMS
                          : asked > CTLD_PAGE_MAX_ITEMS ? CTLD_PAGE_MAX_ITEMS
                                                         : asked,
                          0, 0};
    return p;
}

/* Whether a record of size bytes joins the page (the first always does); counts it. */
static inline int ctld_page_take(struct ctld_page *p, size_t size)
{
    if (p->items && (p->items >= p->max_items || p->bytes + size > CTLD_PAGE_BYTES))
        return 0;
    p->items++;
    p->bytes += size;
    return 1;
}

/* ctld/rpc_reply.c: an empty response of kind to req, at once; or once the changes
 * queued so far are durable (an error if the commit fails). */
void ctld_respond_empty(struct rpc_request *req, Tessera__Response__MsgCase kind);
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
/* sbcast's credential (ctld/rpc_bcast.c) */
void ctld_handle_bcast_cred(struct rpc_request *req, const Tessera__Request *msg, void *arg);
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
