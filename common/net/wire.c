#include "common/net/wire.h"

#include "common/util/errors.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int wire_session_init(struct wire_session *s, enum wire_role role, const uint8_t *key)
{
    memset(s, 0, sizeof(*s));
    s->role = role;
    if (key) {
        memcpy(s->key, key, WIRE_KEY_SIZE);
        return TS_OK;
    }
    return RAND_bytes(s->key, WIRE_KEY_SIZE) == 1 ? TS_OK : TS_ESYS;
}

void wire_session_clear(struct wire_session *s)
{
    OPENSSL_cleanse(s->key, sizeof(s->key));
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The HMAC algorithm, fetched once per process: fetching is costly and the result is
 * immutable and thread-safe. */
static EVP_MAC *hmac_alg;
static pthread_once_t hmac_once = PTHREAD_ONCE_INIT;

static void fetch_hmac(void)
{
    hmac_alg = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* HMAC over the fixed header and the body; direction says who sent the frame. */
static int compute_hmac(const uint8_t key[WIRE_KEY_SIZE], char direction, uint32_t version,
                        uint64_t seq, const uint8_t *body, size_t blen,
                        uint8_t out[WIRE_HMAC_SIZE])
{
    uint8_t head[4 + 1 + 4 + 8];
    memcpy(head, "TSRA", 4);
    head[4] = (uint8_t)direction;
    put_be32(head + 5, version);
    put_be64(head + 9, seq);

    pthread_once(&hmac_once, fetch_hmac);
    if (!hmac_alg)
        return TS_ESYS;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    int ok = 0;
    size_t outlen = 0;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(hmac_alg);
    if (ctx && EVP_MAC_init(ctx, key, WIRE_KEY_SIZE, params) == 1 &&
        EVP_MAC_update(ctx, head, sizeof(head)) == 1 &&
        (blen == 0 || EVP_MAC_update(ctx, body, blen) == 1) &&
        EVP_MAC_final(ctx, out, &outlen, WIRE_HMAC_SIZE) == 1)
        ok = outlen == WIRE_HMAC_SIZE;
    EVP_MAC_CTX_free(ctx);
    return ok ? TS_OK : TS_ESYS;
}

static char sender_direction(enum wire_role role)
{
    return role == WIRE_CLIENT ? 'C' : 'S';
}

static int pack_envelope(const Tessera__Envelope *env, uint8_t **out, size_t *outlen)
{
    size_t len = tessera__envelope__get_packed_size(env);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return TS_ENOMEM;
    *outlen = tessera__envelope__pack(env, buf);
    *out = buf;
    return TS_OK;
}

int wire_seal(struct wire_session *s, const uint8_t *body, size_t blen,
              const char *credential, uint8_t **out, size_t *outlen)
{
    uint8_t mac[WIRE_HMAC_SIZE];
    int err = compute_hmac(s->key, sender_direction(s->role), WIRE_VERSION, s->send_seq, body,
                           blen, mac);
    if (err)
        return err;

    Tessera__Envelope env = TESSERA__ENVELOPE__INIT;
    env.version = WIRE_VERSION;
    env.seq = s->send_seq;
    env.hmac.data = mac;
    env.hmac.len = sizeof(mac);
    env.body.data = (uint8_t *)body;
    env.body.len = blen;
    if (credential) {
        env.credential.data = (uint8_t *)credential;
        env.credential.len = strlen(credential);
    }
    err = pack_envelope(&env, out, outlen);
    if (err == TS_OK)
        s->send_seq++;
    return err;
}

int wire_unpack(const uint8_t *payload, size_t len, Tessera__Envelope **env)
{
    *env = tessera__envelope__unpack(NULL, len, payload);
    if (!*env)
        return TS_EDECODE;
    if ((*env)->version != WIRE_VERSION)
        return TS_EVERSION;
    return TS_OK;
}

int wire_verify(struct wire_session *s, const Tessera__Envelope *env)
{
    if (env->seq != s->recv_seq)
        return TS_EAUTH_SEQ;
    if (env->hmac.len != WIRE_HMAC_SIZE)
        return TS_EAUTH_HMAC;
    enum wire_role peer = s->role == WIRE_CLIENT ? WIRE_SERVER : WIRE_CLIENT;
    uint8_t mac[WIRE_HMAC_SIZE];
    int err = compute_hmac(s->key, sender_direction(peer), env->version, env->seq,
                           env->body.data, env->body.len, mac);
    if (err)
        return err;
    if (!wire_equal(mac, env->hmac.data, WIRE_HMAC_SIZE))
        return TS_EAUTH_HMAC;
    s->recv_seq++;
    return TS_OK;
}

int wire_refusal(int code, const char *text, uint8_t **out, size_t *outlen)
{
    Tessera__Error error = TESSERA__ERROR__INIT;
    error.code = (uint32_t)code;
    error.text = (char *)(text ? text : ts_strerror(code));
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.error = &error;

    size_t blen = tessera__response__get_packed_size(&resp);
    uint8_t *body = malloc(blen ? blen : 1);
    if (!body)
        return TS_ENOMEM;
    tessera__response__pack(&resp, body);

    Tessera__Envelope env = TESSERA__ENVELOPE__INIT;
    env.version = WIRE_VERSION;
    env.body.data = body;
    env.body.len = blen;
    int err = pack_envelope(&env, out, outlen);
    free(body);
    return err;
}

void wire_sha256(const uint8_t *data, size_t len, uint8_t out[WIRE_SHA256_SIZE])
{
    unsigned int n = 0;
    EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

int wire_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    return CRYPTO_memcmp(a, b, len) == 0;
}
