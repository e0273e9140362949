/* MUNGE credentials against a private munged: good, another body, replayed, expired,
 * restricted to another uid, unrestricted, garbage, daemon unreachable. */
#include "common/auth.h"
#include "common/errors.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

static char *make_cred(uid_t server_uid, int ttl)
{
    char *cred = NULL;
    assert_int_equal(auth_encode(munge.socket, server_uid, ttl, key, body, sizeof(body), &cred),
                     TS_OK);
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
    free(cred);
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
    assert_int_equal(auth_encode("/nonexistent/munge.socket", 0, 0, key, body, sizeof(body), &cred),
                     TS_EAUTH_MUNGE);
    assert_int_equal(auth_selftest("/nonexistent/munge.socket"), TS_EAUTH_MUNGE);
    assert_int_equal(auth_selftest(munge.socket), TS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),
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
