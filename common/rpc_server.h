/* The framed, authenticated RPC server (docs/protocol.md).
 *
 * Runs on an event loop: accepts TCP connections, reads frames, has the first frame's
 * MUNGE credential decoded by the auth pool, checks every later frame's sequence number
 * and HMAC, decodes each Request and calls the handler registered for its message type
 * with the uid and gid the credential proved. A handler answers with rpc_respond(), at
 * once or later (after a group commit, say); responses carry the request's id.
 *
 * Bad input never crashes the server or grows its memory without bound: an oversized,
 * truncated or undecodable frame, a wrong version, a bad credential, HMAC or sequence
 * number gets an error response where one can be sent, and the connection is closed.
 * A connection stops reading while it has too many requests in flight or too much
 * output queued, and one that does not finish its handshake in time is closed.
 */
#ifndef TESSERA_COMMON_RPC_SERVER_H
#define TESSERA_COMMON_RPC_SERVER_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct rpc_server;
struct rpc_request;

/* msg is the decoded request; it stays valid until the request is responded to. */
typedef void (*rpc_handler_fn)(struct rpc_request *req, const Tessera__Request *msg, void *arg);

/* One entry of a daemon's static handler table. */
struct rpc_handler {
    Tessera__Request__MsgCase msg;
    const char *name; /* for logs and statistics */
    rpc_handler_fn fn;
};

struct rpc_server_config {
    const char *host;                 /* address to listen on; NULL or "" for all */
    uint16_t port;                    /* 0: any free port (see rpc_server_port) */
    const char *munge_socket;         /* NULL: MUNGE's default */
    uid_t uid;                        /* the uid credentials must be restricted to */
    int auth_threads;                 /* 0: AUTHPOOL_DEFAULT_THREADS */
    size_t max_frame;                 /* 0: FRAME_DEFAULT_MAX */
    unsigned handshake_timeout_ms;    /* 0: 10 s */
    unsigned max_connections;         /* 0: 4096 */
};

struct rpc_server_stats {
    uint64_t accepted;     /* connections accepted */
    uint64_t authenticated;
    uint64_t refused;      /* connections closed for bad input or failed authentication */
    uint64_t requests;     /* requests dispatched to handlers */
    uint32_t open;         /* connections open now */
};

/* Bind and listen (TS_EADDRINUSE when the port is taken), start the auth threads. The
 * handler table must outlive the server. */
int rpc_server_create(struct loop *loop, const struct rpc_server_config *cfg,
                      const struct rpc_handler *handlers, size_t nhandlers, void *arg,
                      struct rpc_server **out);
/* Close the listener and every connection. Requests still held by handlers may be
 * responded to afterwards; their responses are dropped. */
void rpc_server_destroy(struct rpc_server *srv);

uint16_t rpc_server_port(const struct rpc_server *srv);
void rpc_server_get_stats(const struct rpc_server *srv, struct rpc_server_stats *out);

uid_t rpc_request_uid(const struct rpc_request *req);
gid_t rpc_request_gid(const struct rpc_request *req);
/* "127.0.0.1:40112", for logs. */
const char *rpc_request_peer(const struct rpc_request *req);

/* Whether the requester's connection still stands, as far as can be told without
 * waiting: for a request held a long time, before an answer whose loss matters. */
int rpc_request_peer_alive(const struct rpc_request *req);

/* Send resp (its id is set from the request) and release req. Returns TS_OK, or
 * TS_ECLOSED when the connection went away meanwhile (req is released all the same). */
int rpc_respond(struct rpc_request *req, const Tessera__Response *resp);
/* Respond with an Error (text NULL: the code's stable text). */
int rpc_respond_error(struct rpc_request *req, int code, const char *text);

#endif
