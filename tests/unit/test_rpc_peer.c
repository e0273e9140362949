/* rpc_peer against a real RPC server (its own loop, on a thread) and a private munged:
 * pipelined calls, out-of-order answers, refusals, timeouts, failures and reconnection. */
#include "common/net/frame.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_peer.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "harness.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct harness_munge munge;

struct server {
    struct loop *loop;
    struct rpc_server *srv;
    pthread_t thread;
    uint16_t port;
};

static void handle_ping(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.uid = (uint32_t)rpc_request_uid(req);
    ping.cluster = (char *)"peer-test";
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

static void late_reply(struct loop *loop, struct loop_timer *t, void *arg)
{
    handle_ping(arg, NULL, NULL);
}

/* show_config: answered 200 ms later, so a ping sent after it is answered first */
static void handle_slow(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    loop_timer_add(arg, 200, 0, late_reply, req);
}

/* schedule: never answered (the requests are dropped when the server goes) */
static struct rpc_request *held[8];
static size_t nheld;
static void handle_never(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    assert_true(nheld < 8);
    held[nheld++] = req;
}

#define NAME "test/peer" /* the server's name in credentials */

static const struct rpc_handler handlers[] = {
    {TESSERA__REQUEST__MSG_PING, "ping", handle_ping, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SHOW_CONFIG, "slow", handle_slow, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SCHEDULE, "never", handle_never, RPC_ROLE_USER},
};

static void *server_thread(void *arg)
{
    struct server *s = arg;
    loop_run(s->loop);
    return NULL;
}

static struct server *server_start(uint16_t port)
{
    struct server *s = calloc(1, sizeof(*s));
    s->loop = loop_create();
    struct rpc_server_config cfg = {.host = "127.0.0.1", .port = port,
                                    .munge_socket = munge.socket, .uid = geteuid(),
                                    .identity = NAME, .auth_threads = 1};
    assert_int_equal(rpc_server_create(s->loop, &cfg, handlers, 3, s->loop, &s->srv), TS_OK);
    s->port = rpc_server_port(s->srv);
    assert_int_equal(pthread_create(&s->thread, NULL, server_thread, s), 0);
    return s;
}

static void server_stop(struct server *s)
{
    loop_stop(s->loop);
    pthread_join(s->thread, NULL);
    rpc_server_destroy(s->srv);
    for (size_t i = 0; i < nheld; i++) /* its connection is gone: the answer goes nowhere */
        assert_int_equal(rpc_respond_error(held[i], TS_ESHUTDOWN, NULL), TS_ECLOSED);
    nheld = 0;
    for (int i = 0; i < 5; i++)
        loop_run_once(s->loop, 0);
    loop_destroy(s->loop);
    free(s);
}

/* ------------------------------------------------------------------------------------ */

struct outcome {
    int done;
    int err;
    int kind;   /* Response.msg_case */
    int order;  /* when it completed */
};
static int completions;

static void record(void *arg, int err, const Tessera__Response *resp)
{
    struct outcome *o = arg;
    o->done = 1;
    o->err = err;
    o->kind = resp ? (int)resp->msg_case : -1;
    o->order = ++completions;
}

static void call_as(struct rpc_peer *p, Tessera__Request__MsgCase kind, struct outcome *o,
                    int hold)
{
    static Tessera__PingRequest ping = TESSERA__PING_REQUEST__INIT;
    static Tessera__ShowConfigRequest sc = TESSERA__SHOW_CONFIG_REQUEST__INIT;
    static Tessera__ScheduleRequest sched = TESSERA__SCHEDULE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = kind;
    if (kind == TESSERA__REQUEST__MSG_PING)
        req.ping = &ping;
    else if (kind == TESSERA__REQUEST__MSG_SHOW_CONFIG)
        req.show_config = &sc;
    else
        req.schedule = &sched;
    memset(o, 0, sizeof(*o));
    int err = hold ? rpc_peer_call_held(p, &req, record, o) : rpc_peer_call(p, &req, record, o);
    assert_int_equal(err, TS_OK);
    assert_false(o->done); /* never from within the call */
}

static void call(struct rpc_peer *p, Tessera__Request__MsgCase kind, struct outcome *o)
{
    call_as(p, kind, o, 0);
}

static void run_until(struct loop *loop, const struct outcome *o, int ms)
{
    for (int i = 0; i < ms / 10 && !o->done; i++)
        loop_run_once(loop, 10);
    assert_true(o->done);
}

static struct rpc_peer *peer(struct loop *loop, uint16_t port, uid_t uid, unsigned timeout)
{
    struct rpc_peer_config cfg = {.host = "127.0.0.1", .port = port,
                                  .munge_socket = munge.socket, .server_uid = uid,
                                  .target = NAME, .timeout_ms = timeout};
    struct rpc_peer *p = NULL;
    assert_int_equal(rpc_peer_create(loop, &cfg, &p), TS_OK);
    return p;
}

static void test_pipelined_and_out_of_order(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 5000);
    struct outcome slow, a, b;
    call(p, TESSERA__REQUEST__MSG_SHOW_CONFIG, &slow);
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    assert_int_equal(rpc_peer_pending(p), 3);
    run_until(loop, &slow, 5000);
    assert_int_equal(a.err, TS_OK);
    assert_int_equal(a.kind, TESSERA__RESPONSE__MSG_PING);
    assert_true(a.order < b.order && b.order < slow.order); /* matched by id, not order */
    assert_int_equal(slow.kind, TESSERA__RESPONSE__MSG_PING);
    assert_true(rpc_peer_is_up(p));
    /* later calls reuse the connection */
    struct outcome c;
    call(p, TESSERA__REQUEST__MSG_PING, &c);
    run_until(loop, &c, 2000);
    assert_int_equal(c.err, TS_OK);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

static void test_nobody_listening_then_reconnect(void **state)
{
    uint16_t port = harness_free_port();
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, port, geteuid(), 2000);
    struct outcome a;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    run_until(loop, &a, 3000);
    assert_int_equal(a.err, TS_ECONNECT);
    assert_false(rpc_peer_is_up(p));
    /* the daemon comes up: the next call connects */
    struct server *s = server_start(port);
    struct outcome b;
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 3000);
    assert_int_equal(b.err, TS_OK);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

static void test_refused_for_another_uid(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid() + 77, 3000);
    struct outcome a, b;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 3000);
    assert_int_equal(a.err, TS_EAUTH_UNAUTHORIZED);
    assert_int_equal(b.err, TS_EAUTH_UNAUTHORIZED);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

static void test_timeout(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 300);
    struct outcome a;
    call(p, TESSERA__REQUEST__MSG_SCHEDULE, &a); /* never answered */
    run_until(loop, &a, 3000);
    assert_int_equal(a.err, TS_ETIMEDOUT);
    /* the connection was dropped; a new one serves the next call */
    struct outcome b;
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 3000);
    assert_int_equal(b.err, TS_OK);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

/* A held call has no deadline: it waits while others come and go; a call behind it still
 * times out on its own deadline (which drops the connection, the held one with it). */
static void test_held_call(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 300);
    struct outcome waiting, a;
    call_as(p, TESSERA__REQUEST__MSG_SCHEDULE, &waiting, 1);
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    run_until(loop, &a, 3000);
    assert_int_equal(a.err, TS_OK);
    for (int i = 0; i < 80; i++) /* well past the 300 ms deadline of ordinary calls */
        loop_run_once(loop, 10);
    assert_false(waiting.done);
    assert_true(rpc_peer_is_up(p));
    struct outcome late;
    call(p, TESSERA__REQUEST__MSG_SCHEDULE, &late); /* never answered, and not held */
    run_until(loop, &late, 3000);
    assert_int_equal(late.err, TS_ETIMEDOUT);
    run_until(loop, &waiting, 1000);
    assert_int_equal(waiting.err, TS_ETIMEDOUT);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

static void test_server_goes_away(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 5000);
    struct outcome a;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    run_until(loop, &a, 3000);
    struct outcome b;
    call(p, TESSERA__REQUEST__MSG_SCHEDULE, &b); /* held by the server */
    for (int i = 0; i < 20; i++)
        loop_run_once(loop, 10);
    server_stop(s); /* closes the connection with the request unanswered */
    run_until(loop, &b, 3000);
    assert_int_equal(b.err, TS_ECLOSED);
    assert_false(rpc_peer_is_up(p));
    rpc_peer_destroy(p);
    loop_destroy(loop);
}

/* A first call larger than a handshake frame: the credential goes alone, the call right
 * behind it, and the answer comes as for any call (here: no handler for it). */
static void test_large_first_call(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 5000);
    size_t n = 40000;
    char **ids = calloc(n, sizeof(*ids));
    for (size_t i = 0; i < n; i++)
        ids[i] = (char *)"123456";
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.job_ids = ids;
    q.n_job_ids = n;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    assert_true(tessera__request__get_packed_size(&req) > FRAME_HANDSHAKE_MAX);
    struct outcome a, b;
    memset(&a, 0, sizeof(a));
    assert_int_equal(rpc_peer_call(p, &req, record, &a), TS_OK);
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 5000);
    assert_int_equal(a.err, TS_OK); /* answered: an error, no handler here */
    assert_int_equal(a.kind, TESSERA__RESPONSE__MSG__NOT_SET);
    assert_int_equal(b.err, TS_OK);
    assert_int_equal(b.kind, TESSERA__RESPONSE__MSG_PING);
    free(ids);
    rpc_peer_destroy(p);
    loop_destroy(loop);
    server_stop(s);
}

/* With idle_close_ms, a line with no call waiting closes itself (before a server's idle
 * deadline could close it under a request); the next call opens a new one. */
static void test_idle_close(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    struct rpc_peer_config cfg = {.host = "127.0.0.1", .port = s->port,
                                  .munge_socket = munge.socket, .server_uid = geteuid(),
                                  .target = NAME, .timeout_ms = 5000, .idle_close_ms = 100};
    struct rpc_peer *p = NULL;
    assert_int_equal(rpc_peer_create(loop, &cfg, &p), TS_OK);
    struct outcome a, waiting;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    run_until(loop, &a, 3000);
    assert_true(rpc_peer_is_up(p));
    for (int i = 0; i < 30; i++)
        loop_run_once(loop, 10);
    assert_false(rpc_peer_is_up(p));
    /* a held call keeps it open however long */
    call_as(p, TESSERA__REQUEST__MSG_SCHEDULE, &waiting, 1);
    struct outcome b;
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 3000);
    for (int i = 0; i < 30; i++)
        loop_run_once(loop, 10);
    assert_true(rpc_peer_is_up(p));
    assert_false(waiting.done);
    rpc_peer_destroy(p);
    assert_int_equal(waiting.err, TS_ESHUTDOWN);
    loop_destroy(loop);
    server_stop(s);
}

/* on_lost: an idle line the server closes is reported (after the waiting calls' own
 * callbacks when there are some); a refused connect or rpc_peer_destroy is not. */
static int lost_count, lost_err;
static void on_lost(void *arg, int err)
{
    lost_count++;
    lost_err = err;
}

static void test_idle_line_lost(void **state)
{
    struct server *s = server_start(0);
    uint16_t port = s->port;
    struct loop *loop = loop_create();
    struct rpc_peer_config cfg = {.host = "127.0.0.1", .port = port, .munge_socket = munge.socket,
                                  .server_uid = geteuid(), .target = NAME, .timeout_ms = 2000,
                                  .on_lost = on_lost};
    struct rpc_peer *p = NULL;
    assert_int_equal(rpc_peer_create(loop, &cfg, &p), TS_OK);
    lost_count = 0;
    struct outcome a;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    run_until(loop, &a, 3000);
    assert_int_equal(a.err, TS_OK);
    assert_int_equal(lost_count, 0);
    server_stop(s); /* nothing waits on the line */
    for (int i = 0; i < 300 && lost_count == 0; i++)
        loop_run_once(loop, 10);
    assert_int_equal(lost_count, 1);
    assert_int_equal(lost_err, TS_ECLOSED);
    /* a connect that fails is no lost line */
    struct outcome b;
    call(p, TESSERA__REQUEST__MSG_PING, &b);
    run_until(loop, &b, 3000);
    assert_int_equal(b.err, TS_ECONNECT);
    assert_int_equal(lost_count, 1);
    /* up again, then destroyed: not reported */
    s = server_start(port);
    struct outcome c;
    call(p, TESSERA__REQUEST__MSG_PING, &c);
    run_until(loop, &c, 3000);
    assert_int_equal(c.err, TS_OK);
    rpc_peer_destroy(p);
    assert_int_equal(lost_count, 1);
    loop_destroy(loop);
    server_stop(s);
}

static struct rpc_peer *self_destruct;
static void destroy_in_callback(void *arg, int err, const Tessera__Response *resp)
{
    record(arg, err, resp);
    rpc_peer_destroy(self_destruct);
}

static void test_destroy(void **state)
{
    struct server *s = server_start(0);
    struct loop *loop = loop_create();
    /* waiting calls get TS_ESHUTDOWN */
    struct rpc_peer *p = peer(loop, s->port, geteuid(), 5000);
    struct outcome a;
    call(p, TESSERA__REQUEST__MSG_PING, &a);
    rpc_peer_destroy(p);
    assert_true(a.done);
    assert_int_equal(a.err, TS_ESHUTDOWN);
    /* a callback may destroy its own peer, with more calls waiting */
    self_destruct = peer(loop, s->port, geteuid(), 5000);
    struct outcome b, c;
    Tessera__PingRequest ping = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &ping;
    memset(&b, 0, sizeof(b));
    assert_int_equal(rpc_peer_call(self_destruct, &req, destroy_in_callback, &b), TS_OK);
    call(self_destruct, TESSERA__REQUEST__MSG_PING, &c);
    run_until(loop, &b, 3000);
    assert_true(c.done);
    assert_int_equal(c.err, TS_ESHUTDOWN);
    for (int i = 0; i < 5; i++)
        loop_run_once(loop, 0);
    loop_destroy(loop);
    server_stop(s);
}

static int group_setup(void **state)
{
    log_open("test_rpc_peer", LOG_LVL_QUIET, NULL);
    return harness_munge_start(&munge);
}

static int group_teardown(void **state)
{
    harness_munge_stop(&munge);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipelined_and_out_of_order),
        cmocka_unit_test(test_nobody_listening_then_reconnect),
        cmocka_unit_test(test_refused_for_another_uid),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_held_call),
        cmocka_unit_test(test_server_goes_away),
        cmocka_unit_test(test_idle_line_lost),
        cmocka_unit_test(test_destroy),
        cmocka_unit_test(test_large_first_call),
        cmocka_unit_test(test_idle_close),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
