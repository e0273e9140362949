/* Envelopes and sessions: HMAC, sequence numbers, versions, refusals. */
#include "common/net/wire.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const uint8_t key[WIRE_KEY_SIZE] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

struct pair {
    struct wire_session client, server;
};

static int setup(void **state)
{
    struct pair *p = calloc(1, sizeof(*p));
    wire_session_init(&p->client, WIRE_CLIENT, key);
    wire_session_init(&p->server, WIRE_SERVER, key);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

/* Seal body on `from`, unpack and verify on `to`; returns wire_verify's result. */
static int transfer(struct wire_session *from, struct wire_session *to, const char *body)
{
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(from, (const uint8_t *)body, strlen(body), NULL, &payload, &len),
                     TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    int err = wire_verify(to, env);
    if (err == TS_OK) {
        assert_int_equal(env->body.len, strlen(body));
        assert_memory_equal(env->body.data, body, env->body.len);
    }
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
    return err;
}

static void test_round_trip(void **state)
{
    struct pair *p = *state;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(transfer(&p->client, &p->server, "request"), TS_OK);
        assert_int_equal(transfer(&p->server, &p->client, "response"), TS_OK);
    }
    assert_int_equal(p->client.send_seq, 5);
    assert_int_equal(p->server.recv_seq, 5);
    assert_int_equal(transfer(&p->client, &p->server, ""), TS_OK); /* empty body */
}

static void test_wrong_key(void **state)
{
    struct pair *p = *state;
    struct wire_session other;
    uint8_t k2[WIRE_KEY_SIZE] = {9};
    wire_session_init(&other, WIRE_SERVER, k2);
    assert_int_equal(transfer(&p->client, &other, "request"), TS_EAUTH_HMAC);
    assert_int_equal(other.recv_seq, 0); /* nothing changes on failure */
}

static void test_tampered_body(void **state)
{
    struct pair *p = *state;
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(&p->client, (const uint8_t *)"abcdef", 6, NULL, &payload, &len),
                     TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    env->body.data[0] ^= 1;
    assert_int_equal(wire_verify(&p->server, env), TS_EAUTH_HMAC);
    env->body.data[0] ^= 1;
    env->hmac.len = 31; /* short HMAC */
    assert_int_equal(wire_verify(&p->server, env), TS_EAUTH_HMAC);
    env->hmac.len = 32;
    assert_int_equal(wire_verify(&p->server, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
}

static void test_replayed_sequence(void **state)
{
    struct pair *p = *state;
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(&p->client, (const uint8_t *)"one", 3, NULL, &payload, &len),
                     TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    assert_int_equal(wire_verify(&p->server, env), TS_OK);
    /* the same frame again: an old sequence number */
    assert_int_equal(wire_verify(&p->server, env), TS_EAUTH_SEQ);
    /* a forged future sequence number fails as well (HMAC covers seq) */
    env->seq = 1;
    assert_int_equal(wire_verify(&p->server, env), TS_EAUTH_HMAC);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
}

static void test_skipped_sequence(void **state)
{
    struct pair *p = *state;
    uint8_t *payload = NULL;
    size_t len = 0;
    /* frame 0 is lost; frame 1 arrives first */
    assert_int_equal(wire_seal(&p->client, (const uint8_t *)"a", 1, NULL, &payload, &len), TS_OK);
    free(payload);
    assert_int_equal(transfer(&p->client, &p->server, "b"), TS_EAUTH_SEQ);
}

static void test_reflection(void **state)
{
    struct pair *p = *state;
    /* a client's own frame sent back to it must not pass as the server's */
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(&p->client, (const uint8_t *)"x", 1, NULL, &payload, &len), TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    assert_int_equal(wire_verify(&p->client, env), TS_EAUTH_HMAC);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
}

static void test_version_and_garbage(void **state)
{
    Tessera__Envelope e = TESSERA__ENVELOPE__INIT;
    e.version = WIRE_VERSION + 1;
    uint8_t buf[64];
    size_t len = tessera__envelope__pack(&e, buf);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(buf, len, &env), TS_EVERSION);
    assert_non_null(env);
    tessera__envelope__free_unpacked(env, NULL);

    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12};
    env = NULL;
    assert_int_equal(wire_unpack(garbage, sizeof(garbage), &env), TS_EDECODE);
    assert_null(env);

    /* an empty payload decodes to version 0 */
    assert_int_equal(wire_unpack(buf, 0, &env), TS_EVERSION);
    tessera__envelope__free_unpacked(env, NULL);
}

static void test_refusal(void **state)
{
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_refusal(TS_EAUTH_EXPIRED, NULL, &payload, &len), TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    assert_int_equal(env->hmac.len, 0);
    Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
    assert_non_null(r);
    assert_non_null(r->error);
    assert_int_equal(r->error->code, TS_EAUTH_EXPIRED);
    assert_string_equal(r->error->text, "Authentication credential expired");
    tessera__response__free_unpacked(r, NULL);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
}

static void test_credential_carried(void **state)
{
    struct pair *p = *state;
    uint8_t *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(&p->client, (const uint8_t *)"x", 1, "MUNGE:abc:", &payload, &len),
                     TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    assert_int_equal(env->credential.len, 10);
    assert_memory_equal(env->credential.data, "MUNGE:abc:", 10);
    assert_int_equal(wire_verify(&p->server, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
}

static void test_random_keys_differ(void **state)
{
    struct wire_session a, b;
    assert_int_equal(wire_session_init(&a, WIRE_CLIENT, NULL), TS_OK);
    assert_int_equal(wire_session_init(&b, WIRE_CLIENT, NULL), TS_OK);
    assert_false(wire_equal(a.key, b.key, WIRE_KEY_SIZE));
    wire_session_clear(&a);
    uint8_t zero[WIRE_KEY_SIZE] = {0};
    assert_true(wire_equal(a.key, zero, WIRE_KEY_SIZE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tampered_body, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replayed_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_skipped_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reflection, setup, teardown),
        cmocka_unit_test(test_version_and_garbage),
        cmocka_unit_test(test_refusal),
        cmocka_unit_test_setup_teardown(test_credential_carried, setup, teardown),
        cmocka_unit_test(test_random_keys_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
