/* MUNGE credentials for the connection handshake (docs/protocol.md, section 3).
 *
 * The client makes a credential whose payload is an AuthPayload: a fresh session key and
 * the SHA-256 of its first frame's body. It restricts decoding to the server's uid, so no
 * one else who sees the credential learns the key. The server decodes it (blocking: done
 * on the auth threads of authpool.h), insists on that restriction, and compares the hash
 * with the body that came with it.
 */
#ifndef TESSERA_COMMON_AUTH_H
#define TESSERA_COMMON_AUTH_H

#include "common/wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AUTH_PAYLOAD_VERSION 1

struct auth_identity {
    uid_t uid;
    gid_t gid;
    uint8_t session_key[WIRE_KEY_SIZE];
    uint8_t body_sha256[WIRE_SHA256_SIZE];
};

/* A credential for a server running as server_uid, carrying key and binding body.
 * socket: the MUNGE socket (NULL: MUNGE's default). ttl: seconds, 0 for MUNGE's default.
 * *cred is malloc'd. Errors: TS_EAUTH_MUNGE (daemon unreachable), TS_EAUTH, TS_ENOMEM. */
int auth_encode(const char *socket, uid_t server_uid, int ttl, const uint8_t key[WIRE_KEY_SIZE],
                const uint8_t *body, size_t blen, char **cred);

/* Decode a credential as the server running as server_uid (blocking). Errors:
 * TS_EAUTH_EXPIRED, TS_EAUTH_REPLAYED, TS_EAUTH_UNAUTHORIZED (restricted to another uid, or
 * not restricted to ours), TS_EAUTH_CRED (invalid, or a payload that is not ours),
 * TS_EAUTH_MUNGE (daemon unreachable). */
int auth_decode(const char *socket, uid_t server_uid, const char *cred, struct auth_identity *id);

/* TS_OK when the credential's hash matches body, else TS_EAUTH_BINDING. */
int auth_check_binding(const struct auth_identity *id, const uint8_t *body, size_t blen);

/* Encode and decode one credential to ourselves: a daemon's start-up check that MUNGE is
 * reachable and works. */
int auth_selftest(const char *socket);

#endif
