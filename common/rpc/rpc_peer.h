/* A persistent, non-blocking RPC connection from one daemon to another, on an event loop:
 * the node daemon's line to the controller, and the controller's line to each node
 * daemon.
 *
 * Requests are queued and sent in order; the connection is opened when needed (the first
 * request carries the MUNGE credential, docs/protocol.md section 3) and kept. Responses
 * may come in any order and are matched by id. When the connection fails, every request
 * still waiting gets its callback with the error, and the next request opens a new
 * connection: retrying is the caller's decision.
 *
 * The credential is made on the loop thread (one short call to munged per connection);
 * decoding, the costly and attackable half, stays on the receiving side's auth threads.
 */
#ifndef TESSERA_COMMON_RPC_PEER_H
#define TESSERA_COMMON_RPC_PEER_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct rpc_peer;

struct rpc_peer_config {
    const char *host;
    uint16_t port;
    const char *munge_socket;  /* NULL: MUNGE's default */
    uid_t server_uid;          /* the peer daemon's uid: only it may decode */
    const char *target;        /* the peer daemon's name for credentials (rpc_conf.h) */
    int cred_ttl;              /* 0: MUNGE's default */
    unsigned timeout_ms;       /* connect, and each request's answer; 0: 10 s */
    size_t max_frame;          /* 0: FRAME_DEFAULT_MAX */
    unsigned idle_close_ms;    /* close the connection when no call has waited this long
                                * (the next call opens a new one), before a server's idle
                                * time-out could close it under a request; 0: keep it */
    /* Optional: an authenticated connection broke (closed by the server, failed, timed
     * out), also when no request was waiting on it; called after the waiting requests'
     * callbacks, never for rpc_peer_destroy. */
    void (*on_lost)(void *arg, int err);
    void *lost_arg;
};

/* err is TS_OK when a response arrived (it may carry an Error), else why none will
 * (TS_ECONNECT, TS_ECLOSED, TS_ETIMEDOUT, TS_ESHUTDOWN, the server's refusal code).
 * resp is valid only during the call. */
typedef void (*rpc_peer_cb)(void *arg, int err, const Tessera__Response *resp);

int rpc_peer_create(struct loop *loop, const struct rpc_peer_config *cfg, struct rpc_peer **out);
/* Close; every waiting request gets its callback with TS_ESHUTDOWN first. NULL ok. */
void rpc_peer_destroy(struct rpc_peer *peer);

/* Queue req (its id is assigned here); cb runs later, never from within this call. */
int rpc_peer_call(struct rpc_peer *peer, const Tessera__Request *req, rpc_peer_cb cb, void *arg);

/* The same for a request the server holds until it has something to say (a barrier, input
 * that has not come yet): no deadline applies to it. */
int rpc_peer_call_held(struct rpc_peer *p, const Tessera__Request *req, rpc_peer_cb cb,
                       void *arg);

/* Drop the connection now (requests waiting get TS_ECLOSED); the next call reconnects. */
void rpc_peer_reset(struct rpc_peer *peer);
/* 1 while a connection is open and authenticated (a response has come back on it). */
int rpc_peer_is_up(const struct rpc_peer *peer);
/* Requests sent or queued and not yet answered. */
size_t rpc_peer_pending(const struct rpc_peer *peer);

#endif
