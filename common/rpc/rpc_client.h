/* The blocking RPC client used by commands (and by tests): one connection, requests
 * answered in order. The first request carries the MUNGE credential (or follows it at
 * once in a frame of its own when it is too large for the handshake frame); later ones
 * only their sequence number and HMAC, so a command that sends several requests pays for
 * MUNGE once. */
#ifndef TESSERA_COMMON_RPC_CLIENT_H
#define TESSERA_COMMON_RPC_CLIENT_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct rpc_client;

struct rpc_client_config {
    const char *host;         /* the daemon's address or name */
    uint16_t port;
    const char *munge_socket; /* NULL: MUNGE's default */
    uid_t server_uid;         /* the uid the daemon runs as: only it may decode */
    const char *target;       /* the daemon's name for credentials (rpc_conf.h) */
    int timeout_ms;           /* per call (connect, send, receive); 0: 30 s */
    int cred_ttl;             /* seconds; 0: MUNGE's default */
    size_t max_frame;         /* 0: FRAME_DEFAULT_MAX */
};

/* Resolve the daemon's address (TS_ECONNECT when it cannot be). The connection opens
 * with the first call, once its first frame is sealed, and that call fails with
 * TS_ECONNECT when nobody answers. */
int rpc_client_connect(const struct rpc_client_config *cfg, struct rpc_client **out);
void rpc_client_close(struct rpc_client *cli);
/* Per call from now on; 0: 30 s, negative: none (a request the server holds open). */
void rpc_client_set_timeout(struct rpc_client *cli, int timeout_ms);
/* A flag a signal handler sets: a call waiting for the server ends with TS_EINTR once it
 * is set (the connection is unusable afterwards, as after any failure). NULL: none. */
void rpc_client_set_interrupt(struct rpc_client *cli, const volatile sig_atomic_t *flag);

/* Send req (its id is assigned here) and wait for its response. TS_OK means a response
 * arrived: *resp is set (free with tessera__response__free_unpacked(*resp, NULL)) and may
 * hold an Error. Any other code is a failure of the connection or of authentication; the
 * server's own words, if it sent any, are in rpc_client_error_text(), and the connection
 * is unusable afterwards. */
int rpc_client_call(struct rpc_client *cli, const Tessera__Request *req,
                    Tessera__Response **resp);

/* Detail of the last failure ("" when none): the server's refusal text or a system
 * error. */
const char *rpc_client_error_text(const struct rpc_client *cli);

#endif
