/* What tessera.conf says about RPC: the names daemons go by in credentials, a server's
 * limits, a client's settings. */
#include "common/conf/conf.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_peer.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static struct conf *load(const char *text)
{
    char err[256] = "";
    struct conf *c = NULL;
    if (conf_parse_string(text, "t.conf", 0, &c, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    return c;
}

static void test_names(void **state)
{
    struct conf *c = load("ClusterName=blue\n");
    char buf[AUTH_TARGET_MAX];
    assert_string_equal(rpc_name_ctld(c, buf, sizeof(buf)), "blue/ctld");
    assert_string_equal(rpc_name_noded(c, "n17", buf, sizeof(buf)), "blue/noded/n17");
    assert_string_equal(rpc_name_srun(c, 93, 4, buf, sizeof(buf)), "blue/srun/93.4");
    conf_free(c);
    /* another cluster's daemons go by other names */
    c = load("ClusterName=red\n");
    assert_string_equal(rpc_name_noded(c, "n17", buf, sizeof(buf)), "red/noded/n17");
    conf_free(c);
}

static void test_server_settings(void **state)
{
    struct conf *c = load("SlurmUser=2 NodedUser=3 AuthInfo=socket=/m/s,ttl=120\n"
                          "RpcHandshakeTimeout=4 RpcFrameTimeout=30 RpcIdleTimeout=90\n"
                          "RpcMaxConnections=500 RpcMaxUnauthConnections=100\n"
                          "RpcMaxUnauthPerHost=7 RpcMaxUserConnections=9\n");
    struct rpc_server_config cfg = {0};
    rpc_conf_server(c, &cfg);
    assert_string_equal(cfg.munge_socket, "/m/s");
    assert_int_equal(cfg.cred_window_s, 120); /* a credential's time within its ttl */
    assert_int_equal(cfg.handshake_timeout_ms, 4000);
    assert_int_equal(cfg.frame_timeout_ms, 30000);
    assert_int_equal(cfg.idle_timeout_ms, 90000);
    assert_int_equal(cfg.max_connections, 500);
    assert_int_equal(cfg.max_unauth, 100);
    assert_int_equal(cfg.max_unauth_per_host, 7);
    assert_int_equal(cfg.max_per_user, 9);
    /* the daemons' users keep their persistent lines */
    assert_int_equal(cfg.ntrusted, 2);
    assert_int_equal(cfg.trusted_uids[0], 2);
    assert_int_equal(cfg.trusted_uids[1], 3);
    conf_free(c);

    c = load("");
    rpc_conf_server(c, &cfg);
    assert_int_equal(cfg.cred_window_s, AUTH_DEFAULT_WINDOW);
    conf_free(c);
}

/* Who holds which role: root all, SlurmUser administrator, NodedUser node daemon, the
 * rest none; one uid that is both users holds both. */
static void test_roles(void **state)
{
    struct conf *c = load("SlurmUser=2 NodedUser=3\n");
    assert_int_equal(rpc_conf_roles(c, 0), RPC_ROLE_ADMIN | RPC_ROLE_NODED);
    assert_int_equal(rpc_conf_roles(c, 2), RPC_ROLE_ADMIN);
    assert_int_equal(rpc_conf_roles(c, 3), RPC_ROLE_NODED);
    assert_int_equal(rpc_conf_roles(c, 1000), 0);
    assert_false(rpc_role_permits(RPC_ROLE_ADMIN, rpc_conf_roles(c, 3)));
    assert_false(rpc_role_permits(RPC_ROLE_NODED, rpc_conf_roles(c, 2)));
    assert_true(rpc_role_permits(RPC_ROLE_USER, rpc_conf_roles(c, 1000)));
    conf_free(c);

    c = load("SlurmUser=5 NodedUser=5\n");
    assert_int_equal(rpc_conf_roles(c, 5), RPC_ROLE_ADMIN | RPC_ROLE_NODED);
    conf_free(c);
}

static void test_client_settings(void **state)
{
    struct conf *c = load("AuthInfo=ttl=60 MessageTimeout=7 RpcIdleTimeout=100\n");
    struct rpc_peer_config peer = {0};
    rpc_conf_peer(c, &peer);
    assert_int_equal(peer.cred_ttl, 60);
    assert_int_equal(peer.timeout_ms, 7000);
    assert_int_equal(peer.idle_close_ms, 50000); /* before the server's 100 s */
    struct rpc_client_config cli = {0};
    rpc_conf_client(c, &cli);
    assert_int_equal(cli.cred_ttl, 60);
    assert_int_equal(cli.timeout_ms, 7000);
    conf_free(c);
    c = load("RpcIdleTimeout=0\n");
    rpc_conf_peer(c, &peer);
    assert_int_equal(peer.idle_close_ms, 0);
    conf_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_server_settings),
        cmocka_unit_test(test_client_settings),
        cmocka_unit_test(test_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
