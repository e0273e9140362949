/* MUNGE credentials for the connection handshake (docs/protocol.md, section 3).
 *
 * The client makes a credential whose payload is an AuthPayload: a fresh session key, the
 * SHA-256 of its first frame's body, the name of the daemon it is meant for and the time
 * it was made. It restricts decoding to the server's uid, so no one else who sees the
 * credential learns the key. The server decodes it (blocking: done on the auth threads of
 * authpool.h), insists on that restriction, compares the hash with the body that came
 * with it, and refuses a credential made for another daemon or outside its time window
 * (auth_check_destination: the one rule of every server).
 */
#ifndef TESSERA_COMMON_AUTH_H
#define TESSERA_COMMON_AUTH_H

#include "common/net/wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define AUTH_PAYLOAD_VERSION 2
#define AUTH_TARGET_MAX 256       /* a destination's name, its NUL included */
#define AUTH_DEFAULT_WINDOW 300   /* seconds a credential's time may differ from ours */

/* What a client needs to make credentials for one destination. */
struct auth_client {
    const char *socket;   /* the MUNGE socket; NULL: MUNGE's default */
    uid_t server_uid;     /* the uid the destination runs as: only it may decode */
    int ttl;              /* seconds; 0: MUNGE's default */
    const char *target;   /* the destination's name (rpc_conf.h builds them) */
};

struct auth_identity {
    uid_t uid;
    gid_t gid;
    uint8_t session_key[WIRE_KEY_SIZE];
    uint8_t body_sha256[WIRE_SHA256_SIZE];
    char target[AUTH_TARGET_MAX];
    int64_t time;
};

/* A credential for ac's destination, carrying key, binding body and stamped with the
 * current time. *cred is malloc'd. Errors: TS_EAUTH_MUNGE (daemon unreachable), TS_EAUTH,
 * TS_EINVAL (no target, or one too long), TS_ENOMEM. */
int auth_encode(const struct auth_client *ac, const uint8_t key[WIRE_KEY_SIZE],
                const uint8_t *body, size_t blen, char **cred);

/* Decode a credential as the server running as server_uid (blocking). Errors:
 * TS_EAUTH_EXPIRED, TS_EAUTH_REPLAYED, TS_EAUTH_UNAUTHORIZED (restricted to another uid, or
 * not restricted to ours), TS_EAUTH_CRED (invalid, or a payload that is not ours),
 * TS_EVERSION (a payload of another version), TS_EAUTH_MUNGE (daemon unreachable). */
int auth_decode(const char *socket, uid_t server_uid, const char *cred, struct auth_identity *id);

/* TS_OK when the credential's hash matches body, else TS_EAUTH_BINDING. */
int auth_check_binding(const struct auth_identity *id, const uint8_t *body, size_t blen);

/* The rule every server applies: the credential names this server (identity, its own
 * name) and was made within window seconds of now, either way (clocks differ).
 * TS_OK, TS_EAUTH_TARGET or TS_EAUTH_CLOCK. */
int auth_check_destination(const struct auth_identity *id, const char *identity, time_t now,
                           unsigned window);

/* The frames that carry one request body in session. The connection's first request
 * (opening) comes with ac's credential: in one frame when that fits in
 * FRAME_HANDSHAKE_MAX, else in a frame with the credential alone (an empty body, which the
 * credential binds) followed by body's own frame. Any other request is one frame. */
struct auth_frames {
    uint8_t *payload[2];
    size_t len[2];
    int n;
};
int auth_seal_frames(const struct auth_client *ac, int opening, struct wire_session *s,
                     const uint8_t *body, size_t blen, struct auth_frames *out);
void auth_frames_free(struct auth_frames *f);

/* Encode and decode one credential to ourselves: a daemon's start-up check that MUNGE is
 * reachable and works. */
int auth_selftest(const char *socket);

#endif
