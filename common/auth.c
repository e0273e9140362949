#include "common/auth.h"

#include "common/errors.h"
#include "common/log.h"

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

int auth_encode(const char *socket, uid_t server_uid, int ttl, const uint8_t key[WIRE_KEY_SIZE],
                const uint8_t *body, size_t blen, char **cred)
{
    uint8_t hash[WIRE_SHA256_SIZE];
    wire_sha256(body, blen, hash);

    Tessera__AuthPayload p = TESSERA__AUTH_PAYLOAD__INIT;
    p.version = AUTH_PAYLOAD_VERSION;
    p.session_key.data = (uint8_t *)key;
    p.session_key.len = WIRE_KEY_SIZE;
    p.body_sha256.data = hash;
    p.body_sha256.len = sizeof(hash);
    uint8_t packed[128];
    size_t plen = tessera__auth_payload__get_packed_size(&p);
    if (plen > sizeof(packed))
        return TS_EAUTH;
    tessera__auth_payload__pack(&p, packed);

    munge_ctx_t ctx = make_ctx(socket);
    if (!ctx)
        return TS_ENOMEM;
    int err = TS_OK;
    if (munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, server_uid) != EMUNGE_SUCCESS ||
        (ttl > 0 && munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl) != EMUNGE_SUCCESS))
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
    if (p->version != AUTH_PAYLOAD_VERSION || p->session_key.len != WIRE_KEY_SIZE ||
        p->body_sha256.len != WIRE_SHA256_SIZE)
        err = TS_EAUTH_CRED;
    else {
        memcpy(id->session_key, p->session_key.data, WIRE_KEY_SIZE);
        memcpy(id->body_sha256, p->body_sha256.data, WIRE_SHA256_SIZE);
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

int auth_selftest(const char *socket)
{
    uint8_t key[WIRE_KEY_SIZE] = {0};
    static const uint8_t body[] = "selftest";
    char *cred = NULL;
    int err = auth_encode(socket, geteuid(), 0, key, body, sizeof(body), &cred);
    if (err)
        return err;
    struct auth_identity id;
    err = auth_decode(socket, geteuid(), cred, &id);
    if (!err)
        err = auth_check_binding(&id, body, sizeof(body));
    free(cred);
    return err;
}
