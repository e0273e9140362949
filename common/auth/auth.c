#include "common/auth/auth.h"

#include "common/net/frame.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <munge.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static munge_ctx_t make_ctx(const char *socket)
{
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx && socket && *socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        munge_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static int map_munge_error(munge_err_t e)
{
    switch (e) {
    case EMUNGE_SUCCESS: return TS_OK;
    case EMUNGE_SOCKET: return TS_EAUTH_MUNGE;
    case EMUNGE_NO_MEMORY: return TS_ENOMEM;
    case EMUNGE_CRED_EXPIRED: return TS_EAUTH_EXPIRED;
    case EMUNGE_CRED_REPLAYED: return TS_EAUTH_REPLAYED;
    case EMUNGE_CRED_UNAUTHORIZED: return TS_EAUTH_UNAUTHORIZED;
    case EMUNGE_BAD_ARG:
    case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION:
    case EMUNGE_BAD_CIPHER:
    case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP:
    case EMUNGE_BAD_REALM:
    case EMUNGE_BAD_LENGTH:
    case EMUNGE_CRED_INVALID:
    case EMUNGE_CRED_REWOUND: return TS_EAUTH_CRED;
    default: return TS_EAUTH;
    }
}

/* The packed AuthPayload for ac's destination, now; TS_EINVAL without a usable target. */
static int pack_payload(const struct auth_client *ac, const uint8_t key[WIRE_KEY_SIZE],
                        const uint8_t *body, size_t blen, uint8_t *out, size_t cap,
                        size_t *outlen)
{
    if (!ac->target || !*ac->target || strlen(ac->target) >= AUTH_TARGET_MAX)
        return TS_EINVAL;
    uint8_t hash[WIRE_SHA256_SIZE];
    wire_sha256(body, blen, hash);

    Tessera__AuthPayload p = TESSERA__AUTH_PAYLOAD__INIT;
    p.version = AUTH_PAYLOAD_VERSION;
    p.session_key.data = (uint8_t *)key;
    p.session_key.len = WIRE_KEY_SIZE;
    p.body_sha256.data = hash;
    p.body_sha256.len = sizeof(hash);
    p.target = (char *)ac->target;
    p.time = (int64_t)time(NULL);
    *outlen = tessera__auth_payload__get_packed_size(&p);
    if (*outlen > cap)
        return TS_EAUTH;
    tessera__auth_payload__pack(&p, out);
    return TS_OK;
}

int auth_encode(const struct auth_client *ac, const uint8_t key[WIRE_KEY_SIZE],
                const uint8_t *body, size_t blen, char **cred)
{
    uint8_t packed[AUTH_TARGET_MAX + 128];
    size_t plen = 0;
    int err = pack_payload(ac, key, body, blen, packed, sizeof(packed), &plen);
    if (err)
        return err;

    munge_ctx_t ctx = make_ctx(ac->socket);
    if (!ctx) {
        OPENSSL_cleanse(packed, sizeof(packed));
        return TS_ENOMEM;
    }
    if (munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, ac->server_uid) != EMUNGE_SUCCESS ||
        (ac->ttl > 0 && munge_ctx_set(ctx, MUNGE_OPT_TTL, ac->ttl) != EMUNGE_SUCCESS))
        err = TS_EAUTH;
    if (!err) {
        munge_err_t e = munge_encode(cred, ctx, packed, (int)plen);
        if (e != EMUNGE_SUCCESS) {
            log_debug("munge_encode: %s", munge_ctx_strerror(ctx));
            err = map_munge_error(e);
            if (err == TS_EAUTH_CRED)
                err = TS_EAUTH;
        }
    }
    OPENSSL_cleanse(packed, sizeof(packed));
    munge_ctx_destroy(ctx);
    return err;
}

/* MUNGE proved who made the credential; now insist that it was meant for us alone. */
static int check_restriction(munge_ctx_t ctx, uid_t server_uid)
{
    uid_t restricted = MUNGE_UID_ANY;
    if (munge_ctx_get(ctx, MUNGE_OPT_UID_RESTRICTION, &restricted) != EMUNGE_SUCCESS)
        return TS_EAUTH;
    return restricted == server_uid ? TS_OK : TS_EAUTH_UNAUTHORIZED;
}

static int parse_payload(const void *buf, int len, struct auth_identity *id)
{
    Tessera__AuthPayload *p = tessera__auth_payload__unpack(NULL, (size_t)len, buf);
    if (!p)
        return TS_EAUTH_CRED;
    int err = TS_OK;
    if (p->version != AUTH_PAYLOAD_VERSION)
        err = TS_EVERSION; /* a peer of another release: say so, not "invalid" */
    else if (p->session_key.len != WIRE_KEY_SIZE || p->body_sha256.len != WIRE_SHA256_SIZE ||
             !p->target || strlen(p->target) >= AUTH_TARGET_MAX)
        err = TS_EAUTH_CRED;
    else {
        memcpy(id->session_key, p->session_key.data, WIRE_KEY_SIZE);
        memcpy(id->body_sha256, p->body_sha256.data, WIRE_SHA256_SIZE);
        strcpy(id->target, p->target); /* length checked above */
        id->time = p->time;
    }
    OPENSSL_cleanse(p->session_key.data, p->session_key.len);
    tessera__auth_payload__free_unpacked(p, NULL);
    return err;
}

int auth_decode(const char *socket, uid_t server_uid, const char *cred, struct auth_identity *id)
{
    munge_ctx_t ctx = make_ctx(socket);
    if (!ctx)
        return TS_ENOMEM;
    void *buf = NULL;
    int len = 0;
    uid_t uid;
    gid_t gid;
    munge_err_t e = munge_decode(cred, ctx, &buf, &len, &uid, &gid);
    int err = map_munge_error(e);
    if (err)
        log_debug("munge_decode: %s", munge_ctx_strerror(ctx));
    if (!err)
        err = check_restriction(ctx, server_uid);
    if (!err)
        err = parse_payload(buf, len, id);
    if (!err) {
        id->uid = uid;
        id->gid = gid;
    }
    if (buf) {
        OPENSSL_cleanse(buf, (size_t)len);
        free(buf);
    }
    munge_ctx_destroy(ctx);
    return err;
}

int auth_check_binding(const struct auth_identity *id, const uint8_t *body, size_t blen)
{
    uint8_t hash[WIRE_SHA256_SIZE];
    wire_sha256(body, blen, hash);
    return wire_equal(hash, id->body_sha256, WIRE_SHA256_SIZE) ? TS_OK : TS_EAUTH_BINDING;
}

int auth_check_destination(const struct auth_identity *id, const char *identity, time_t now,
                           unsigned window)
{
    if (!identity || strcmp(id->target, identity) != 0)
        return TS_EAUTH_TARGET;
    int64_t diff = (int64_t)now - id->time;
    if (diff > (int64_t)window || diff < -(int64_t)window)
        return TS_EAUTH_CLOCK;
    return TS_OK;
}

/* Room left in a handshake frame for the credential (a few hundred bytes for a target of
 * AUTH_TARGET_MAX) and the envelope around it. */
#define OPENING_RESERVE 4096u

int auth_seal_frames(const struct auth_client *ac, int opening, struct wire_session *s,
                     const uint8_t *body, size_t blen, struct auth_frames *out)
{
    memset(out, 0, sizeof(*out));
    int alone = opening && blen > FRAME_HANDSHAKE_MAX - OPENING_RESERVE;
    static const uint8_t empty[1];
    char *cred = NULL;
    int err = TS_OK;
    if (opening)
        err = auth_encode(ac, s->key, alone ? empty : body, alone ? 0 : blen, &cred);
    if (!err && alone)
        err = wire_seal(s, empty, 0, cred, &out->payload[out->n], &out->len[out->n]);
    if (!err && alone)
        out->n++;
    if (!err)
        err = wire_seal(s, body, blen, alone ? NULL : cred, &out->payload[out->n],
                        &out->len[out->n]);
    if (!err)
        out->n++;
    free(cred);
    if (err)
        auth_frames_free(out);
    return err;
}

void auth_frames_free(struct auth_frames *f)
{
    for (int i = 0; i < 2; i++) {
        free(f->payload[i]);
        f->payload[i] = NULL;
    }
    f->n = 0;
}

int auth_selftest(const char *socket)
{
    uint8_t key[WIRE_KEY_SIZE] = {0};
    static const uint8_t body[] = "selftest";
    struct auth_client ac = {.socket = socket, .server_uid = geteuid(), .target = "selftest"};
    char *cred = NULL;
    int err = auth_encode(&ac, key, body, sizeof(body), &cred);
    if (err)
        return err;
    struct auth_identity id;
    err = auth_decode(socket, geteuid(), cred, &id);
    if (!err)
        err = auth_check_binding(&id, body, sizeof(body));
    if (!err)
        err = auth_check_destination(&id, "selftest", time(NULL), AUTH_DEFAULT_WINDOW);
    free(cred);
    return err;
}
