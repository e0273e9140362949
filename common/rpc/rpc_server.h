/* The framed, authenticated RPC server (docs/protocol.md).
 *
 * Runs on an event loop: accepts TCP connections, reads frames, has the first frame's
 * MUNGE credential decoded by the auth pool, checks every later frame's sequence number
 * and HMAC, decodes each Request and calls the handler registered for its message type
 * with the uid and gid the credential proved, once the caller holds the role the handler
 * table names for it (TS_EPERM otherwise, the handler not called). A handler answers with rpc_respond(), at
 * once or later (after a group commit, say); responses carry the request's id.
 *
 * Bad input never crashes the server or grows its memory without bound: an oversized,
 * truncated or undecodable frame, a wrong version, a bad credential, HMAC or sequence
 * number gets an error response where one can be sent, and the connection is closed.
 * A connection stops reading while it has too many requests in flight or too much
 * output queued. Before authentication a peer gets little: a 64 KiB first frame, a few
 * seconds, a place among a bounded number of such connections (the oldest is dropped for
 * a newcomer); afterwards per-user caps, a partial-frame deadline and an idle deadline
 * apply (docs/protocol.md, section 6). Running out of file descriptors pauses accepting
 * instead of spinning.
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

/* Who may send a request: the role column of a handler table. The dispatcher checks it
 * before the handler runs, so a handler never sees a caller without its role
 * (docs/security.md, section 1). A caller holds a set of roles; everyone authenticated
 * is a user. */
enum rpc_role {
    RPC_ROLE_USER = 0,       /* anyone authenticated */
    RPC_ROLE_ADMIN = 1u << 0, /* root and SlurmUser (the controller's uid) */
    RPC_ROLE_NODED = 1u << 1, /* root and NodedUser: a node daemon */
};

/* The roles (RPC_ROLE_* ored) uid holds; arg is the server's handler argument. */
typedef unsigned (*rpc_roles_fn)(void *arg, uid_t uid);

/* One entry of a daemon's static handler table. */
struct rpc_handler {
    Tessera__Request__MsgCase msg;
    const char *name; /* for logs and statistics */
    rpc_handler_fn fn;
    enum rpc_role role; /* the role a caller needs; others get TS_EPERM */
};

#define RPC_MAX_TRUSTED_UIDS 4

struct rpc_server_config {
    const char *host;                 /* address to listen on; NULL or "" for all */
    uint16_t port;                    /* 0: any free port (see rpc_server_port) */
    const char *munge_socket;         /* NULL: MUNGE's default */
    uid_t uid;                        /* the uid credentials must be restricted to */
    const char *identity;             /* this server's name: credentials must name it
                                       * (required; rpc_conf.h builds them) */
    unsigned cred_window_s;           /* a credential's time may differ from ours by this
                                       * much; 0: AUTH_DEFAULT_WINDOW */
    int auth_threads;                 /* 0: AUTHPOOL_DEFAULT_THREADS */
    size_t max_frame;                 /* after authentication; 0: FRAME_DEFAULT_MAX (before
                                       * it: FRAME_HANDSHAKE_MAX at most) */
    unsigned handshake_timeout_ms;    /* 0: RPC_DEFAULT_HANDSHAKE_MS */
    unsigned max_connections;         /* 0: RPC_DEFAULT_MAX_CONNECTIONS; never more than 3/4 of
                                       * the open-file limit */
    /* Connections that have not authenticated yet: in all, from one address, and the bytes
     * of their first frames. When one is full, the oldest still waiting for its first
     * frame is dropped for the newcomer (docs/protocol.md, section 6). 0: the defaults. */
    unsigned max_unauth;
    unsigned max_unauth_per_host;
    size_t max_unauth_bytes;
    /* Authenticated connections of one uid (root, uid and trusted_uids aside); 0: the
     * default. */
    unsigned max_per_user;
    /* An authenticated connection of a uid that is not trusted, with no request in flight
     * and no frame begun, is closed after this long; 0: never. */
    unsigned idle_timeout_ms;
    /* A frame begun and not complete after this long closes its connection; 0: the
     * default. */
    unsigned frame_timeout_ms;
    /* Besides root and uid: the daemons' own users, whose persistent lines are neither
     * capped per user nor closed when idle. */
    uid_t trusted_uids[RPC_MAX_TRUSTED_UIDS];
    size_t ntrusted;
    /* The roles of a caller, asked before each request that needs one (so that it follows
     * a daemon's configuration as it is reloaded); NULL: root holds every role, nobody
     * else any. */
    rpc_roles_fn roles_of;
};

#define RPC_DEFAULT_HANDSHAKE_MS 3000
#define RPC_DEFAULT_MAX_CONNECTIONS 8192
#define RPC_DEFAULT_MAX_UNAUTH 1024
#define RPC_DEFAULT_MAX_UNAUTH_PER_HOST 64
#define RPC_DEFAULT_MAX_UNAUTH_BYTES (16u << 20)
#define RPC_DEFAULT_MAX_PER_USER 1024
#define RPC_DEFAULT_FRAME_TIMEOUT_MS 60000

struct rpc_server_stats {
    uint64_t accepted;     /* connections accepted */
    uint64_t authenticated;
    uint64_t refused;      /* connections closed for bad input, failed authentication, or
                            * a limit */
    uint64_t evicted;      /* unauthenticated connections dropped to make room */
    uint64_t timed_out;    /* closed by a deadline: handshake, partial frame, idle */
    uint64_t requests;     /* requests dispatched to handlers */
    uint32_t open;         /* connections open now */
    uint32_t unauth;       /* of which not authenticated yet */
    uint64_t unauth_bytes; /* bytes their first frames declared, counted against the cap */
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

/* Whether a caller holding the roles held may send a request that needs role. */
int rpc_role_permits(enum rpc_role role, unsigned held);
/* "administrator", "node daemon", "user": for logs and documents. */
const char *rpc_role_name(enum rpc_role role);

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
