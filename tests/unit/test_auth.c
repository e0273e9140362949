/* MUNGE credentials against a private munged: good, another body, replayed, expired,
 * restricted to another uid, unrestricted, garbage, daemon unreachable; the destination
 * and time they carry; the frames that open a connection. */
#include "common/auth/auth.h"
#include "common/net/frame.h"
#include "common/util/errors.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <munge.h>

static struct harness_munge munge;
static const uint8_t key[WIRE_KEY_SIZE] = {42, 43, 44};
static const uint8_t body[] = "first request body";

static int group_setup(void **state)
{
    return harness_munge_start(&munge);
}

static int group_teardown(void **state)
{
    harness_munge_stop(&munge);
    return 0;
}

#define TARGET "t/noded/n1"

static char *make_cred(uid_t server_uid, int ttl)
{
    struct auth_client ac = {.socket = munge.socket, .server_uid = server_uid, .ttl = ttl,
                             .target = TARGET};
    char *cred = NULL;
    assert_int_equal(auth_encode(&ac, key, body, sizeof(body), &cred), TS_OK);
    return cred;
}

static void test_good(void **state)
{
    char *cred = make_cred(geteuid(), 0);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_OK);
    assert_int_equal(id.uid, geteuid());
    assert_int_equal(id.gid, getegid());
    assert_memory_equal(id.session_key, key, WIRE_KEY_SIZE);
    assert_int_equal(auth_check_binding(&id, body, sizeof(body)), TS_OK);
    assert_string_equal(id.target, TARGET);
    assert_true(llabs((long long)(id.time - (int64_t)time(NULL))) <= 2);
    assert_int_equal(auth_check_destination(&id, TARGET, time(NULL), 300), TS_OK);
    free(cred);
}

/* A credential made for node n1 is refused by any other daemon, whatever its uid. */
static void test_other_destination(void **state)
{
    char *cred = make_cred(geteuid(), 0);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_OK);
    time_t now = time(NULL);
    assert_int_equal(auth_check_destination(&id, "t/noded/n2", now, 300), TS_EAUTH_TARGET);
    assert_int_equal(auth_check_destination(&id, "t/ctld", now, 300), TS_EAUTH_TARGET);
    assert_int_equal(auth_check_destination(&id, "t/noded/n1x", now, 300), TS_EAUTH_TARGET);
    assert_int_equal(auth_check_destination(&id, "u/noded/n1", now, 300), TS_EAUTH_TARGET);
    assert_int_equal(auth_check_destination(&id, NULL, now, 300), TS_EAUTH_TARGET);
    /* and one made long ago, or in the future, is refused by the right one too */
    assert_int_equal(auth_check_destination(&id, TARGET, now + 301, 300), TS_EAUTH_CLOCK);
    assert_int_equal(auth_check_destination(&id, TARGET, now - 301, 300), TS_EAUTH_CLOCK);
    assert_int_equal(auth_check_destination(&id, TARGET, now + 299, 300), TS_OK);
    free(cred);
}

static void test_no_target(void **state)
{
    char *cred = NULL;
    struct auth_client ac = {.socket = munge.socket, .server_uid = geteuid()};
    assert_int_equal(auth_encode(&ac, key, body, sizeof(body), &cred), TS_EINVAL);
    char longname[AUTH_TARGET_MAX + 1];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ac.target = longname;
    assert_int_equal(auth_encode(&ac, key, body, sizeof(body), &cred), TS_EINVAL);
    assert_null(cred);
}

/* A payload of the previous version (no destination, no time) is another release's: said
 * so, not taken. */
static void test_old_payload(void **state)
{
    Tessera__AuthPayload p = TESSERA__AUTH_PAYLOAD__INIT;
    p.version = 1;
    p.session_key.data = (uint8_t *)key;
    p.session_key.len = WIRE_KEY_SIZE;
    uint8_t hash[WIRE_SHA256_SIZE] = {0};
    p.body_sha256.data = hash;
    p.body_sha256.len = sizeof(hash);
    uint8_t packed[128];
    size_t plen = tessera__auth_payload__pack(&p, packed);
    munge_ctx_t ctx = munge_ctx_create();
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge.socket);
    munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, geteuid());
    char *cred = NULL;
    assert_int_equal(munge_encode(&cred, ctx, packed, (int)plen), EMUNGE_SUCCESS);
    munge_ctx_destroy(ctx);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EVERSION);
    free(cred);
}

/* The opening frames: a small first request rides with the credential; a large one
 * follows a frame that carries the credential alone, bound to its empty body, small
 * enough for a server that reads 64 KiB before authentication. */
static void check_opening(size_t blen, int expect_frames)
{
    uint8_t *big = calloc(1, blen + 1);
    memset(big, 'b', blen);
    struct wire_session client, server;
    assert_int_equal(wire_session_init(&client, WIRE_CLIENT, NULL), TS_OK);
    struct auth_client ac = {.socket = munge.socket, .server_uid = geteuid(), .target = TARGET};
    struct auth_frames f;
    assert_int_equal(auth_seal_frames(&ac, 1, &client, big, blen, &f), TS_OK);
    assert_int_equal(f.n, expect_frames);
    assert_true(f.len[0] <= FRAME_HANDSHAKE_MAX);

    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(f.payload[0], f.len[0], &env), TS_OK);
    assert_true(env->credential.len > 0);
    char *cred = strndup((const char *)env->credential.data, env->credential.len);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_OK);
    assert_int_equal(auth_check_binding(&id, env->body.data, env->body.len), TS_OK);
    assert_int_equal(env->body.len, expect_frames == 1 ? blen : 0);
    wire_session_init(&server, WIRE_SERVER, id.session_key);
    assert_int_equal(wire_verify(&server, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    if (expect_frames == 2) {
        assert_int_equal(wire_unpack(f.payload[1], f.len[1], &env), TS_OK);
        assert_int_equal(env->credential.len, 0);
        assert_int_equal(env->body.len, blen);
        assert_int_equal(wire_verify(&server, env), TS_OK);
        tessera__envelope__free_unpacked(env, NULL);
    }
    /* later requests: one frame, no credential */
    auth_frames_free(&f);
    assert_int_equal(auth_seal_frames(&ac, 0, &client, big, 10, &f), TS_OK);
    assert_int_equal(f.n, 1);
    assert_int_equal(wire_unpack(f.payload[0], f.len[0], &env), TS_OK);
    assert_int_equal(env->credential.len, 0);
    assert_int_equal(wire_verify(&server, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    auth_frames_free(&f);
    free(cred);
    free(big);
}

static void test_opening_frames(void **state)
{
    check_opening(100, 1);
    check_opening(FRAME_HANDSHAKE_MAX - 4096, 1);
    check_opening(FRAME_HANDSHAKE_MAX - 4095, 2);
    check_opening(3u << 20, 2);
}

static void test_other_body(void **state)
{
    char *cred = make_cred(geteuid(), 0);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_OK);
    static const uint8_t other[] = "another body";
    assert_int_equal(auth_check_binding(&id, other, sizeof(other)), TS_EAUTH_BINDING);
    assert_int_equal(auth_check_binding(&id, body, sizeof(body) - 1), TS_EAUTH_BINDING);
    free(cred);
}

static void test_replayed(void **state)
{
    char *cred = make_cred(geteuid(), 0);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_OK);
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_REPLAYED);
    free(cred);
}

static void test_expired(void **state)
{
    char *cred = make_cred(geteuid(), 1);
    sleep(3); /* MUNGE's clock works in whole seconds: 1 s TTL, then past it for sure */
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_EXPIRED);
    free(cred);
}

static void test_other_uid(void **state)
{
    /* a credential meant for another daemon's uid cannot be used against us */
    char *cred = make_cred(geteuid() + 4242, 0);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_UNAUTHORIZED);
    free(cred);
}

static void test_unrestricted(void **state)
{
    /* made without UID restriction (anyone could read the key): refused */
    munge_ctx_t ctx = munge_ctx_create();
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge.socket);
    char *cred = NULL;
    uint8_t payload[8] = {0};
    assert_int_equal(munge_encode(&cred, ctx, payload, sizeof(payload)), EMUNGE_SUCCESS);
    munge_ctx_destroy(ctx);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_UNAUTHORIZED);
    free(cred);
}

static void test_foreign_payload(void **state)
{
    /* a valid, restricted credential whose payload is not an AuthPayload */
    munge_ctx_t ctx = munge_ctx_create();
    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge.socket);
    munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, geteuid());
    char *cred = NULL;
    assert_int_equal(munge_encode(&cred, ctx, "\xff\xff\xff", 3), EMUNGE_SUCCESS);
    munge_ctx_destroy(ctx);
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_CRED);
    free(cred);
}

static void test_garbage(void **state)
{
    struct auth_identity id;
    assert_int_equal(auth_decode(munge.socket, geteuid(), "MUNGE:garbage:", &id), TS_EAUTH_CRED);
    assert_int_equal(auth_decode(munge.socket, geteuid(), "", &id), TS_EAUTH_CRED);
    char *cred = make_cred(geteuid(), 0);
    cred[strlen(cred) / 2] ^= 1; /* one bit flipped in the middle */
    assert_int_equal(auth_decode(munge.socket, geteuid(), cred, &id), TS_EAUTH_CRED);
    free(cred);
}

static void test_unreachable(void **state)
{
    char *cred = NULL;
    struct auth_client ac = {.socket = "/nonexistent/munge.socket", .target = TARGET};
    assert_int_equal(auth_encode(&ac, key, body, sizeof(body), &cred), TS_EAUTH_MUNGE);
    assert_int_equal(auth_selftest("/nonexistent/munge.socket"), TS_EAUTH_MUNGE);
    assert_int_equal(auth_selftest(munge.socket), TS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_other_destination),
        cmocka_unit_test(test_no_target),
        cmocka_unit_test(test_old_payload),
        cmocka_unit_test(test_opening_frames),
        cmocka_unit_test(test_other_body),
        cmocka_unit_test(test_replayed),
        cmocka_unit_test(test_expired),
        cmocka_unit_test(test_other_uid),
        cmocka_unit_test(test_unrestricted),
        cmocka_unit_test(test_foreign_payload),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_unreachable),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
