/* Envelopes and per-connection sessions (docs/protocol.md, sections 2 and 3).
 *
 * After the MUNGE handshake both ends hold a 32-byte session key. Every frame then carries
 * a sequence number (0, 1, 2, ... per direction) and an HMAC-SHA256 under that key over
 *     "TSRA" | direction | version (u32 BE) | seq (u64 BE) | body
 * where direction is 'C' for client-to-server frames and 'S' for server-to-client ones, so
 * a frame cannot be altered, replayed, reordered or reflected back to its sender.
 * This module is pure computation (no I/O, no MUNGE): it is tested on its own.
 */
#ifndef TESSERA_COMMON_WIRE_H
#define TESSERA_COMMON_WIRE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION 2
#define WIRE_KEY_SIZE 32
#define WIRE_HMAC_SIZE 32
#define WIRE_SHA256_SIZE 32

enum wire_role { WIRE_CLIENT, WIRE_SERVER };

struct wire_session {
    enum wire_role role;
    uint8_t key[WIRE_KEY_SIZE];
    uint64_t send_seq; /* next sequence number to send */
    uint64_t recv_seq; /* next sequence number expected */
};

/* A fresh session for role with key (NULL: generate a random key, for clients). */
int wire_session_init(struct wire_session *s, enum wire_role role, const uint8_t *key);
/* Wipe the key. */
void wire_session_clear(struct wire_session *s);

/* Seal body into a frame payload (a packed Envelope): next seq, HMAC; credential only on
 * the client's first frame (NULL otherwise). *out is malloc'd. */
int wire_seal(struct wire_session *s, const uint8_t *body, size_t blen,
              const char *credential, uint8_t **out, size_t *outlen);

/* Unpack a frame payload into an Envelope and check its version. Returns TS_EDECODE or
 * TS_EVERSION (with *env still set, so a refusal can be written) or TS_OK. Free *env with
 * tessera__envelope__free_unpacked(env, NULL). */
int wire_unpack(const uint8_t *payload, size_t len, Tessera__Envelope **env);

/* Check a received envelope's sequence number and HMAC and advance the session:
 * TS_EAUTH_SEQ, TS_EAUTH_HMAC or TS_OK. Nothing changes on failure. */
int wire_verify(struct wire_session *s, const Tessera__Envelope *env);

/* An unauthenticated refusal: an Envelope without HMAC whose body is a Response carrying
 * only an Error. Sent when no session key exists yet (bad credential, undecodable first
 * frame); the sender closes the connection after it. */
int wire_refusal(int code, const char *text, uint8_t **out, size_t *outlen);

void wire_sha256(const uint8_t *data, size_t len, uint8_t out[WIRE_SHA256_SIZE]);
/* Constant-time comparison. */
int wire_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
