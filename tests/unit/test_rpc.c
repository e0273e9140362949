/* The RPC server and client against a private munged: requests, delayed responses, and
 * every kind of bad input a peer can send, after which the server still serves; floods
 * of connections that do not authenticate, credentials for another daemon, large first
 * requests, per-user caps, partial-frame and idle deadlines. */
#include "common/auth/auth.h"
#include "common/net/frame.h"
#include "common/net/loop.h"
#include "common/net/wire.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct harness_munge munge;

#define NAME "test/srv" /* the server's name in credentials */

/* ------------------------------------------------------------------------------------ */
/* the server under test, its loop on a thread of its own */

struct server {
    struct loop *loop;
    struct rpc_server *srv;
    pthread_t thread;
    uint16_t port;
    struct rpc_server_stats stats; /* read after the loop stopped */
};

static void handle_ping(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.uid = (uint32_t)rpc_request_uid(req);
    ping.gid = (uint32_t)rpc_request_gid(req);
    ping.cluster = (char *)"test";
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

static void delayed_reply(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct rpc_request *req = arg;
    Tessera__ShowConfigResponse show = TESSERA__SHOW_CONFIG_RESPONSE__INIT;
    show.as_of = 4242;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_SHOW_CONFIG;
    resp.show_config = &show;
    rpc_respond(req, &resp);
}

/* Answers 100 ms later, from a timer: a handler that responds after returning. */
static void handle_show_config(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct loop *loop = arg;
    loop_timer_add(loop, 100, 0, delayed_reply, req);
}

/* schedule: held by the handler until the test decides (on the server's thread) */
static struct rpc_request *held_req;
static void handle_hold(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    held_req = req;
}

/* job_query: answers a ping whose uid is the number of ids asked about (a request as
 * large as the test likes) */
static void handle_count(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.uid = (uint32_t)msg->job_query->n_job_ids;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

/* node_update: for administrators only; counts the calls it gets */
static unsigned admin_only_calls;
static void handle_admin_only(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    __atomic_add_fetch(&admin_only_calls, 1, __ATOMIC_SEQ_CST);
    handle_ping(req, msg, arg);
}

static const struct rpc_handler handlers[] = {
    {TESSERA__REQUEST__MSG_PING, "ping", handle_ping, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SHOW_CONFIG, "show_config", handle_show_config, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SCHEDULE, "schedule", handle_hold, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_QUERY, "count", handle_count, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_UPDATE, "admin_only", handle_admin_only, RPC_ROLE_ADMIN},
};
#define NHANDLERS (sizeof(handlers) / sizeof(handlers[0]))

static void *server_thread(void *arg)
{
    struct server *s = arg;
    loop_run(s->loop);
    return NULL;
}

/* A server with cfg's limits (its address, MUNGE, uid and name filled in here). */
static struct server *server_start_with(struct rpc_server_config cfg)
{
    struct server *s = calloc(1, sizeof(*s));
    s->loop = loop_create();
    assert_non_null(s->loop);
    cfg.host = "127.0.0.1";
    cfg.munge_socket = munge.socket;
    cfg.uid = geteuid();
    cfg.identity = NAME;
    cfg.auth_threads = 2;
    assert_int_equal(rpc_server_create(s->loop, &cfg, handlers, NHANDLERS, s->loop, &s->srv),
                     TS_OK);
    s->port = rpc_server_port(s->srv);
    assert_true(s->port > 0);
    assert_int_equal(pthread_create(&s->thread, NULL, server_thread, s), 0);
    return s;
}

static struct server *server_start(unsigned handshake_ms, size_t max_frame)
{
    struct rpc_server_config cfg = {.handshake_timeout_ms = handshake_ms, .max_frame = max_frame};
    return server_start_with(cfg);
}

static void server_stop(struct server *s)
{
    if (!s->loop)
        return;
    loop_stop(s->loop);
    pthread_join(s->thread, NULL);
    rpc_server_get_stats(s->srv, &s->stats);
    rpc_server_destroy(s->srv);
    for (int i = 0; i < 5; i++) /* deliver what the auth threads posted */
        loop_run_once(s->loop, 0);
    loop_destroy(s->loop);
    s->loop = NULL;
}

static void server_free(struct server *s)
{
    server_stop(s);
    free(s);
}

static int setup(void **state)
{
    *state = server_start(0, 0);
    return 0;
}

static int teardown(void **state)
{
    server_free(*state);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* a well-behaved client */

static struct rpc_client *client(uint16_t port)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = port,
                                    .munge_socket = munge.socket, .server_uid = geteuid(),
                                    .target = NAME, .timeout_ms = 5000};
    struct rpc_client *cli = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    return cli;
}

static int ping(struct rpc_client *cli)
{
    Tessera__PingRequest p = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &p;
    Tessera__Response *resp = NULL;
    int err = rpc_client_call(cli, &req, &resp);
    if (err)
        return err;
    assert_null(resp->error);
    assert_int_equal(resp->msg_case, TESSERA__RESPONSE__MSG_PING);
    assert_int_equal(resp->ping->uid, geteuid());
    assert_int_equal(resp->ping->gid, getegid());
    assert_string_equal(resp->ping->cluster, "test");
    tessera__response__free_unpacked(resp, NULL);
    return TS_OK;
}

/* The server still serves a fresh client. */
static void assert_serving(struct server *s)
{
    struct rpc_client *cli = client(s->port);
    assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
}

static void test_ping(void **state)
{
    struct server *s = *state;
    struct rpc_client *cli = client(s->port);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
    server_stop(s);
    /* five requests, one connection, one MUNGE decode */
    assert_int_equal(s->stats.requests, 5);
    assert_int_equal(s->stats.authenticated, 1);
    assert_int_equal(s->stats.refused, 0);
}

static void test_delayed_response(void **state)
{
    struct server *s = *state;
    struct rpc_client *cli = client(s->port);
    Tessera__ShowConfigRequest sc = TESSERA__SHOW_CONFIG_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SHOW_CONFIG;
    req.show_config = &sc;
    for (int i = 0; i < 2; i++) {
        Tessera__Response *resp = NULL;
        assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
        assert_int_equal(resp->msg_case, TESSERA__RESPONSE__MSG_SHOW_CONFIG);
        assert_int_equal(resp->show_config->as_of, 4242);
        tessera__response__free_unpacked(resp, NULL);
    }
    assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
}

/* ---- a call interrupted by a signal, and one without a deadline ---- */

static volatile sig_atomic_t interrupted;
static void on_usr1(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void *send_usr1(void *arg)
{
    usleep(30000);
    pthread_kill(*(pthread_t *)arg, SIGUSR1);
    return NULL;
}

static int show_config(struct rpc_client *cli)
{
    Tessera__ShowConfigRequest sc = TESSERA__SHOW_CONFIG_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SHOW_CONFIG;
    req.show_config = &sc;
    Tessera__Response *resp = NULL;
    int err = rpc_client_call(cli, &req, &resp);
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    return err;
}

static void test_client_interrupt_and_no_deadline(void **state)
{
    struct server *s = *state;
    struct sigaction sa = {.sa_handler = on_usr1}; /* no SA_RESTART: poll sees EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    struct rpc_client *cli = client(s->port);
    rpc_client_set_interrupt(cli, &interrupted);
    pthread_t self = pthread_self(), t;
    interrupted = 0;
    assert_int_equal(pthread_create(&t, NULL, send_usr1, &self), 0);
    assert_int_equal(show_config(cli), TS_EINTR); /* answered after 100 ms: too late */
    pthread_join(t, NULL);
    assert_int_equal(ping(cli), TS_ECLOSED); /* unusable afterwards */
    rpc_client_close(cli);
    signal(SIGUSR1, SIG_DFL);

    /* no deadline: an answer 100 ms later arrives however long it takes */
    cli = client(s->port);
    rpc_client_set_timeout(cli, -1);
    assert_int_equal(show_config(cli), TS_OK);
    rpc_client_close(cli);
}

/* ---- whether a held request's peer is still there ---- */

struct alive_check {
    int done, alive;
};

static void check_alive(struct loop *loop, void *arg)
{
    struct alive_check *ac = arg;
    ac->alive = rpc_request_peer_alive(held_req);
    rpc_respond_error(held_req, TS_EINVAL, NULL);
    held_req = NULL;
    ac->done = 1;
}

static int held_peer_alive(struct server *s)
{
    for (int i = 0; i < 200 && !__atomic_load_n(&held_req, __ATOMIC_SEQ_CST); i++)
        usleep(10000);
    assert_non_null(held_req);
    struct alive_check ac = {0};
    assert_int_equal(loop_post(s->loop, check_alive, &ac), TS_OK);
    for (int i = 0; i < 200 && !__atomic_load_n(&ac.done, __ATOMIC_SEQ_CST); i++)
        usleep(10000);
    assert_true(ac.done);
    return ac.alive;
}

struct call_args {
    uint16_t port;
    int err;
    int code;
};

static void *schedule_call(void *arg)
{
    struct call_args *a = arg;
    Tessera__ScheduleRequest sc = TESSERA__SCHEDULE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SCHEDULE;
    req.schedule = &sc;
    Tessera__Response *resp = NULL;
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = a->port,
                                    .munge_socket = munge.socket, .server_uid = geteuid(),
                                    .target = NAME, .timeout_ms = 5000};
    struct rpc_client *cli = NULL;
    if (rpc_client_connect(&cfg, &cli) != TS_OK)
        return NULL;
    a->err = rpc_client_call(cli, &req, &resp);
    if (resp) {
        a->code = resp->error ? (int)resp->error->code : 0;
        tessera__response__free_unpacked(resp, NULL);
    }
    rpc_client_close(cli);
    return NULL;
}

static void test_request_peer_alive(void **state)
{
    struct server *s = *state;
    Tessera__ScheduleRequest sc = TESSERA__SCHEDULE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SCHEDULE;
    req.schedule = &sc;
    Tessera__Response *resp = NULL;
    /* a client that gives up (its deadline) and closes: gone */
    struct rpc_client *cli = client(s->port);
    rpc_client_set_timeout(cli, 100);
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_ETIMEDOUT);
    rpc_client_close(cli);
    usleep(50000);
    assert_false(held_peer_alive(s));
    /* a client that waits: there, and it gets the answer */
    struct call_args args = {.port = s->port, .err = -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, schedule_call, &args), 0);
    assert_true(held_peer_alive(s));
    pthread_join(t, NULL);
    assert_int_equal(args.err, TS_OK);
    assert_int_equal(args.code, TS_EINVAL);
}

static void test_unknown_request(void **state)
{
    struct server *s = *state;
    struct rpc_client *cli = client(s->port);
    Tessera__Request req = TESSERA__REQUEST__INIT; /* no message at all */
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    assert_non_null(resp->error);
    assert_int_equal(resp->error->code, TS_EUNKNOWN_RPC);
    tessera__response__free_unpacked(resp, NULL);
    /* an unknown request is not a protocol violation: the connection goes on */
    assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
}

static void test_client_to_nowhere(void **state)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = harness_free_port(),
                                    .munge_socket = munge.socket, .target = NAME,
                                    .timeout_ms = 2000};
    struct rpc_client *cli = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK); /* resolved: no connection yet */
    Tessera__PingRequest p = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &p;
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_ECONNECT);
    assert_null(resp);
    rpc_client_close(cli);
    cfg.host = "no-such-host.invalid";
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_ECONNECT);
    assert_null(cli);
}

static void test_client_wrong_server_uid(void **state)
{
    struct server *s = *state;
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = s->port,
                                    .munge_socket = munge.socket, .target = NAME,
                                    .server_uid = geteuid() + 1000, .timeout_ms = 5000};
    struct rpc_client *cli = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    assert_int_equal(ping(cli), TS_EAUTH_UNAUTHORIZED);
    assert_string_equal(rpc_client_error_text(cli), "Authentication credential is for another user");
    assert_int_equal(ping(cli), TS_ECLOSED); /* unusable afterwards */
    rpc_client_close(cli);
    assert_serving(s);
}

/* ------------------------------------------------------------------------------------ */
/* a misbehaving peer, speaking the wire format by hand */

static int raw_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}

static void raw_send(int fd, const void *data, size_t len)
{
    assert_int_equal(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void raw_send_frame(int fd, const uint8_t *payload, size_t len)
{
    uint8_t h[FRAME_HEADER_SIZE];
    frame_header_encode(h, len);
    raw_send(fd, h, sizeof(h));
    raw_send(fd, payload, len);
}

/* Read one frame (or NULL at EOF) within 5 s. */
static uint8_t *raw_recv_frame(int fd, size_t *len)
{
    struct frame_reader r;
    frame_reader_init(&r, FRAME_DEFAULT_MAX);
    uint8_t byte;
    while (!frame_reader_ready(&r)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 5000), 1);
        if (recv(fd, &byte, 1, 0) != 1) {
            frame_reader_release(&r);
            return NULL;
        }
        size_t used;
        assert_int_equal(frame_reader_feed(&r, &byte, 1, &used), TS_OK);
    }
    return frame_reader_take(&r, len);
}

/* The next frame must be an error with code; then the server closes. sealed: whether it
 * comes with an HMAC (the session existed). */
static void expect_error_then_close(int fd, int code, int sealed)
{
    size_t len = 0;
    uint8_t *payload = raw_recv_frame(fd, &len);
    assert_non_null(payload);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    assert_int_equal(env->hmac.len != 0, sealed);
    Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
    assert_non_null(r);
    assert_non_null(r->error);
    assert_int_equal(r->error->code, code);
    tessera__response__free_unpacked(r, NULL);
    tessera__envelope__free_unpacked(env, NULL);
    free(payload);
    assert_null(raw_recv_frame(fd, &len)); /* closed */
    close(fd);
}

static uint8_t *ping_body(size_t *len)
{
    Tessera__PingRequest p = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.id = 7;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &p;
    *len = tessera__request__get_packed_size(&req);
    uint8_t *body = malloc(*len + 1);
    tessera__request__pack(&req, body);
    return body;
}

/* A correct first frame for session (its credential restricted to uid, bound to the
 * body given as bound_body, which may differ from the body sent). */
static uint8_t *first_frame(struct wire_session *session, uid_t uid, int ttl,
                            const uint8_t *bound_body, size_t bound_len, size_t *len)
{
    size_t blen;
    uint8_t *body = ping_body(&blen);
    char *cred = NULL;
    struct auth_client ac = {.socket = munge.socket, .server_uid = uid, .ttl = ttl,
                             .target = NAME};
    assert_int_equal(auth_encode(&ac, session->key, bound_body ? bound_body : body,
                                 bound_body ? bound_len : blen, &cred),
                     TS_OK);
    uint8_t *payload = NULL;
    assert_int_equal(wire_seal(session, body, blen, cred, &payload, len), TS_OK);
    free(cred);
    free(body);
    return payload;
}

/* Complete a handshake on fd and check the ping response. */
static void handshake(int fd, struct wire_session *session)
{
    size_t len;
    uint8_t *payload = first_frame(session, geteuid(), 0, NULL, 0, &len);
    raw_send_frame(fd, payload, len);
    free(payload);
    uint8_t *reply = raw_recv_frame(fd, &len);
    assert_non_null(reply);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(reply, len, &env), TS_OK);
    assert_int_equal(wire_verify(session, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    free(reply);
}

static void test_oversized_frame(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    uint8_t h[4] = {0x7f, 0xff, 0xff, 0xff};
    raw_send(fd, h, 4);
    expect_error_then_close(fd, TS_EFRAME_TOOBIG, 0);
    assert_serving(s);
}

static void test_oversized_after_handshake(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);
    uint8_t h[4] = {0x7f, 0xff, 0xff, 0xff};
    raw_send(fd, h, 4);
    expect_error_then_close(fd, TS_EFRAME_TOOBIG, 1);
    assert_serving(s);
}

static void test_undecodable_frame(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    raw_send_frame(fd, garbage, sizeof(garbage));
    expect_error_then_close(fd, TS_EDECODE, 0);
    assert_serving(s);
}

static void test_wrong_version(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    Tessera__Envelope env = TESSERA__ENVELOPE__INIT;
    env.version = WIRE_VERSION + 7;
    uint8_t buf[64];
    size_t len = tessera__envelope__pack(&env, buf);
    raw_send_frame(fd, buf, len);
    expect_error_then_close(fd, TS_EVERSION, 0);
    assert_serving(s);
}

static void test_no_credential(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t blen, len;
    uint8_t *body = ping_body(&blen), *payload = NULL;
    assert_int_equal(wire_seal(&session, body, blen, NULL, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    expect_error_then_close(fd, TS_EAUTH, 0);
    free(body);
    free(payload);
}

static void test_credential_for_another_body(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    static const uint8_t other[] = "some other request";
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 0, other, sizeof(other), &len);
    raw_send_frame(fd, payload, len);
    free(payload);
    expect_error_then_close(fd, TS_EAUTH_BINDING, 0);
    assert_serving(s);
}

static void test_replayed_credential(void **state)
{
    struct server *s = *state;
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 0, NULL, 0, &len);

    int fd = raw_connect(s->port);
    raw_send_frame(fd, payload, len);
    size_t rlen;
    uint8_t *reply = raw_recv_frame(fd, &rlen); /* the first time it works */
    assert_non_null(reply);
    free(reply);
    close(fd);

    fd = raw_connect(s->port); /* a recorded handshake played again */
    raw_send_frame(fd, payload, len);
    expect_error_then_close(fd, TS_EAUTH_REPLAYED, 0);
    free(payload);
    assert_serving(s);
}

static void test_expired_credential(void **state)
{
    struct server *s = *state;
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 1, NULL, 0, &len);
    sleep(3);
    int fd = raw_connect(s->port);
    raw_send_frame(fd, payload, len);
    expect_error_then_close(fd, TS_EAUTH_EXPIRED, 0);
    free(payload);
}

static void test_bad_hmac(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);

    size_t blen, len;
    uint8_t *body = ping_body(&blen), *payload = NULL;
    assert_int_equal(wire_seal(&session, body, blen, NULL, &payload, &len), TS_OK);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    env->hmac.data[5] ^= 0x40;
    uint8_t buf[256];
    len = tessera__envelope__pack(env, buf);
    raw_send_frame(fd, buf, len);
    expect_error_then_close(fd, TS_EAUTH_HMAC, 1);
    tessera__envelope__free_unpacked(env, NULL);
    free(body);
    free(payload);
}

static void test_replayed_sequence(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);

    size_t blen, len, rlen;
    uint8_t *body = ping_body(&blen), *payload = NULL;
    assert_int_equal(wire_seal(&session, body, blen, NULL, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    uint8_t *reply = raw_recv_frame(fd, &rlen); /* seq 1 is fine */
    assert_non_null(reply);
    free(reply);
    raw_send_frame(fd, payload, len); /* seq 1 again */
    expect_error_then_close(fd, TS_EAUTH_SEQ, 1);
    free(body);
    free(payload);
}

static void test_credential_after_handshake(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 0, NULL, 0, &len);
    raw_send_frame(fd, payload, len);
    expect_error_then_close(fd, TS_EPROTO, 1);
    free(payload);
}

static void test_truncated_then_closed(void **state)
{
    struct server *s = *state;
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 0, NULL, 0, &len);
    /* cut the first frame at every position, each on a connection of its own */
    uint8_t h[4];
    frame_header_encode(h, len);
    for (size_t cut = 1; cut < len + 4; cut += 7) {
        int fd = raw_connect(s->port);
        raw_send(fd, h, cut < 4 ? cut : 4);
        if (cut > 4)
            raw_send(fd, payload, cut - 4);
        close(fd);
    }
    free(payload);
    assert_serving(s);
}

static void test_frame_in_single_bytes(void **state)
{
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t len;
    uint8_t *payload = first_frame(&session, geteuid(), 0, NULL, 0, &len);
    uint8_t h[4];
    frame_header_encode(h, len);
    for (size_t i = 0; i < 4; i++)
        raw_send(fd, h + i, 1);
    for (size_t i = 0; i < len; i++)
        raw_send(fd, payload + i, 1);
    free(payload);
    size_t rlen;
    uint8_t *reply = raw_recv_frame(fd, &rlen);
    assert_non_null(reply);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(reply, rlen, &env), TS_OK);
    assert_int_equal(wire_verify(&session, env), TS_OK);
    tessera__envelope__free_unpacked(env, NULL);
    free(reply);
    close(fd);
}

static void test_pipelined_requests(void **state)
{
    /* several sealed requests written at once behind the handshake frame: all answered,
     * in order */
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t len, blen;
    uint8_t *payload = first_frame(&session, geteuid(), 0, NULL, 0, &len);
    raw_send_frame(fd, payload, len);
    free(payload);
    uint8_t *body = ping_body(&blen);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(wire_seal(&session, body, blen, NULL, &payload, &len), TS_OK);
        raw_send_frame(fd, payload, len);
        free(payload);
    }
    free(body);
    for (int i = 0; i < 11; i++) {
        uint8_t *reply = raw_recv_frame(fd, &len);
        assert_non_null(reply);
        Tessera__Envelope *env = NULL;
        assert_int_equal(wire_unpack(reply, len, &env), TS_OK);
        assert_int_equal(env->seq, (uint64_t)i);
        assert_int_equal(wire_verify(&session, env), TS_OK);
        tessera__envelope__free_unpacked(env, NULL);
        free(reply);
    }
    close(fd);
}

static void test_handshake_timeout(void **state)
{
    struct server *s = server_start(300, 0);
    int fd = raw_connect(s->port);
    size_t len;
    /* send nothing: the server gives up after 300 ms and closes */
    assert_null(raw_recv_frame(fd, &len));
    close(fd);
    assert_serving(s);
    server_free(s);
}

static void test_small_max_frame(void **state)
{
    struct server *s = server_start(0, 64);
    struct rpc_client *cli = client(s->port);
    /* a credential alone is larger than 64 bytes */
    assert_int_equal(ping(cli), TS_EFRAME_TOOBIG);
    rpc_client_close(cli);
    server_free(s);
}

/* ------------------------------------------------------------------------------------ */
/* the handshake: destination, size, a credential alone */

static void test_credential_for_another_daemon(void **state)
{
    /* a valid credential of ours, bound to the body, but made for another daemon: a
     * server that accepted it could be sent what another server was meant to get */
    struct server *s = *state;
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    size_t blen, len;
    uint8_t *body = ping_body(&blen);
    char *cred = NULL;
    struct auth_client ac = {.socket = munge.socket, .server_uid = geteuid(),
                             .target = "test/other"};
    assert_int_equal(auth_encode(&ac, session.key, body, blen, &cred), TS_OK);
    uint8_t *payload = NULL;
    assert_int_equal(wire_seal(&session, body, blen, cred, &payload, &len), TS_OK);
    int fd = raw_connect(s->port);
    raw_send_frame(fd, payload, len);
    expect_error_then_close(fd, TS_EAUTH_TARGET, 0);
    free(payload);
    free(cred);
    free(body);

    /* the client says so too */
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = s->port,
                                    .munge_socket = munge.socket, .server_uid = geteuid(),
                                    .target = "test/other", .timeout_ms = 5000};
    struct rpc_client *cli = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    assert_int_equal(ping(cli), TS_EAUTH_TARGET);
    assert_string_equal(rpc_client_error_text(cli), "Authentication credential is for another daemon");
    rpc_client_close(cli);
    assert_serving(s);
}

/* A first request of n job ids, through the client: answered with n. */
static int count_call(struct rpc_client *cli, size_t n)
{
    char **ids = calloc(n, sizeof(*ids));
    for (size_t i = 0; i < n; i++)
        ids[i] = (char *)"1234567";
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.job_ids = ids;
    q.n_job_ids = n;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    Tessera__Response *resp = NULL;
    int err = rpc_client_call(cli, &req, &resp);
    free(ids);
    if (err)
        return err;
    assert_null(resp->error);
    assert_int_equal(resp->ping->uid, n);
    tessera__response__free_unpacked(resp, NULL);
    return TS_OK;
}

static void test_large_first_request(void **state)
{
    /* 300 KiB as the very first request: the server reads 64 KiB at most before the
     * credential is proven, so the client sends the credential alone, then the request */
    struct server *s = *state;
    struct rpc_client *cli = client(s->port);
    assert_int_equal(count_call(cli, 32768), TS_OK);
    assert_int_equal(count_call(cli, 5), TS_OK);
    assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
    server_stop(s);
    assert_int_equal(s->stats.requests, 3); /* the credential alone asked for nothing */
    assert_int_equal(s->stats.refused, 0);
}

static void test_large_first_frame_refused(void **state)
{
    /* a stranger's first frame may not exceed 64 KiB, whatever the configured maximum:
     * refused at its header, before any of it is buffered */
    struct server *s = *state;
    int fd = raw_connect(s->port);
    uint8_t h[4];
    frame_header_encode(h, FRAME_HANDSHAKE_MAX + 1);
    raw_send(fd, h, 4);
    expect_error_then_close(fd, TS_EFRAME_TOOBIG, 0);

    /* once authenticated, a frame of 100 KiB is fine */
    fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);
    uint8_t *body = calloc(1, 100u << 10), *payload = NULL;
    size_t len = 0;
    assert_int_equal(wire_seal(&session, body, 100u << 10, NULL, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    /* (an undecodable request, but read whole: the answer is about its content) */
    expect_error_then_close(fd, TS_EDECODE, 1);
    free(payload);
    free(body);
}

static void test_credential_alone(void **state)
{
    /* a first frame with an empty body carries only the credential: no answer to it, and
     * the request behind it is answered as the first */
    struct server *s = *state;
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    static const uint8_t empty[1];
    char *cred = NULL;
    struct auth_client ac = {.socket = munge.socket, .server_uid = geteuid(), .target = NAME};
    assert_int_equal(auth_encode(&ac, session.key, empty, 0, &cred), TS_OK);
    size_t len, blen;
    uint8_t *payload = NULL, *body = ping_body(&blen);
    assert_int_equal(wire_seal(&session, empty, 0, cred, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    free(payload);
    assert_int_equal(wire_seal(&session, body, blen, NULL, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    free(payload);
    uint8_t *reply = raw_recv_frame(fd, &len);
    assert_non_null(reply);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(reply, len, &env), TS_OK);
    assert_int_equal(env->seq, 0);
    assert_int_equal(wire_verify(&session, env), TS_OK);
    Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
    assert_int_equal(r->id, 7);
    assert_int_equal(r->msg_case, TESSERA__RESPONSE__MSG_PING);
    tessera__response__free_unpacked(r, NULL);
    tessera__envelope__free_unpacked(env, NULL);
    free(reply);
    free(body);
    free(cred);
    close(fd);
}

/* ------------------------------------------------------------------------------------ */
/* floods of connections that never authenticate */

static void fetch_stats(struct loop *loop, void *arg)
{
    struct server *s = *(struct server **)arg;
    rpc_server_get_stats(s->srv, &s->stats);
    ((struct server **)arg)[1] = s; /* done */
}

/* The server's counters now, read on its own thread. */
static struct rpc_server_stats live_stats(struct server *s)
{
    struct server *box[2] = {s, NULL};
    assert_int_equal(loop_post(s->loop, fetch_stats, box), TS_OK);
    for (int i = 0; i < 500 && !__atomic_load_n(&box[1], __ATOMIC_SEQ_CST); i++)
        usleep(2000);
    assert_non_null(box[1]);
    return s->stats;
}

/* Wait until the server has accepted n connections in all. */
static void wait_accepted(struct server *s, uint64_t n)
{
    for (int i = 0; i < 500 && live_stats(s).accepted < n; i++)
        usleep(2000);
    assert_true(live_stats(s).accepted >= n);
}

/* A connection from source (an address of 127/8: every one of them is this host). */
static int raw_connect_from(uint16_t port, const char *source)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    inet_pton(AF_INET, source, &src.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}

/* A stranger's connection from source, once the server has taken it: the n-th of the
 * test. One at a time, each comes in an accept round of its own (a connection is never
 * dropped in the round that took it, before it could be read). */
static int stranger(struct server *s, const char *source, uint64_t n)
{
    int fd = raw_connect_from(s->port, source);
    wait_accepted(s, n);
    return fd;
}

/* Whether the server closed fd (within wait_ms), as far as the socket tells. */
static int closed_by_server(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, wait_ms) == 0)
        return 0;
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void test_flood_from_one_address(void **state)
{
    struct rpc_server_config cfg = {.max_unauth_per_host = 4};
    struct server *s = server_start_with(cfg);
    /* four idle strangers elsewhere, then twenty here: the oldest of this address go,
     * the others are untouched */
    int other[4], here[20];
    for (int i = 0; i < 4; i++)
        other[i] = stranger(s, "127.0.0.2", (uint64_t)i + 1);
    for (int i = 0; i < 20; i++)
        here[i] = stranger(s, "127.0.0.1", (uint64_t)i + 5);
    for (int i = 0; i < 16; i++)
        assert_true(closed_by_server(here[i], 2000));
    for (int i = 16; i < 20; i++)
        assert_false(closed_by_server(here[i], 0));
    for (int i = 0; i < 4; i++)
        assert_false(closed_by_server(other[i], 0));
    struct rpc_server_stats st = live_stats(s);
    assert_int_equal(st.evicted, 16);
    assert_int_equal(st.unauth, 8);
    /* a client from the crowded address gets in all the same */
    assert_serving(s);
    for (int i = 0; i < 20; i++)
        close(here[i]);
    for (int i = 0; i < 4; i++)
        close(other[i]);
    server_free(s);
}

static void test_flood_from_many_addresses(void **state)
{
    struct rpc_server_config cfg = {.max_unauth = 6};
    struct server *s = server_start_with(cfg);
    int fds[30];
    char addr[32];
    for (int i = 0; i < 30; i++) {
        snprintf(addr, sizeof(addr), "127.0.0.%d", 2 + i);
        fds[i] = stranger(s, addr, (uint64_t)i + 1);
    }
    for (int i = 0; i < 24; i++)
        assert_true(closed_by_server(fds[i], 2000));
    for (int i = 24; i < 30; i++)
        assert_false(closed_by_server(fds[i], 0));
    assert_int_equal(live_stats(s).unauth, 6);
    /* clients keep getting in while the strangers keep coming */
    for (int round = 0; round < 3; round++) {
        int more = raw_connect_from(s->port, "127.0.0.40");
        assert_serving(s);
        close(more);
    }
    for (int i = 0; i < 30; i++)
        close(fds[i]);
    server_free(s);
}

static void test_flood_of_bytes(void **state)
{
    /* strangers that begin large first frames and never finish them: the bytes all of
     * them may hold are bounded, the oldest holder makes room */
    struct rpc_server_config cfg = {.max_unauth_bytes = 150u << 10};
    struct server *s = server_start_with(cfg);
    int fds[3];
    uint8_t h[4], some[10] = {0};
    frame_header_encode(h, 60u << 10);
    for (int i = 0; i < 3; i++) {
        char addr[32];
        snprintf(addr, sizeof(addr), "127.0.0.%d", 2 + i);
        fds[i] = raw_connect_from(s->port, addr);
        raw_send(fds[i], h, 4);
        raw_send(fds[i], some, sizeof(some));
        uint64_t want = (i < 2 ? (uint64_t)i + 1 : 2) * (60u << 10);
        for (int t = 0; t < 500 && live_stats(s).unauth_bytes != want; t++)
            usleep(2000);
        assert_int_equal(live_stats(s).unauth_bytes, want);
    }
    assert_true(closed_by_server(fds[0], 2000));
    assert_false(closed_by_server(fds[1], 0));
    assert_false(closed_by_server(fds[2], 0));
    assert_serving(s);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    server_free(s);
}

/* ------------------------------------------------------------------------------------ */
/* another user: per-user caps and the idle deadline (root and the server's uid are
 * trusted, so these need a user that is not) */

#define OTHER_UID 65534

struct foreign {
    struct wire_session session; /* the key the child chose, seq 1 once its frame is sent */
    uint8_t *first;              /* the sealed first frame, credential included */
    size_t len;
};

static int read_all(int fd, void *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t n = read(fd, (uint8_t *)buf + off, len - off);
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* The child: become uid, make n first frames for the server running as server_uid, and
 * write each key, length and frame to fd. */
static void make_foreign_frames(int fd, uid_t uid, uid_t server_uid, int n)
{
    if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
        _exit(2);
    size_t blen;
    uint8_t *body = ping_body(&blen);
    for (int i = 0; i < n; i++) {
        struct wire_session sess;
        wire_session_init(&sess, WIRE_CLIENT, NULL);
        struct auth_client ac = {.socket = munge.socket, .server_uid = server_uid,
                                 .target = NAME};
        struct auth_frames f;
        if (auth_seal_frames(&ac, 1, &sess, body, blen, &f) != TS_OK || f.n != 1)
            _exit(3);
        if (write(fd, sess.key, WIRE_KEY_SIZE) != WIRE_KEY_SIZE ||
            write(fd, &f.len[0], sizeof(size_t)) != sizeof(size_t) ||
            write(fd, f.payload[0], f.len[0]) != (ssize_t)f.len[0])
            _exit(4);
        auth_frames_free(&f);
    }
    _exit(0);
}

/* n sessions of another user: a child that became that user made their credentials. */
static void foreign_sessions(struct foreign *out, int n)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        make_foreign_frames(p[1], OTHER_UID, geteuid(), n);
    }
    close(p[1]);
    for (int i = 0; i < n; i++) {
        uint8_t key[WIRE_KEY_SIZE];
        assert_int_equal(read_all(p[0], key, sizeof(key)), 0);
        wire_session_init(&out[i].session, WIRE_CLIENT, key);
        out[i].session.send_seq = 1; /* its first frame is sealed already */
        assert_int_equal(read_all(p[0], &out[i].len, sizeof(size_t)), 0);
        out[i].first = malloc(out[i].len);
        assert_int_equal(read_all(p[0], out[i].first, out[i].len), 0);
    }
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Send a foreign session's first frame on a new connection and read the answer:
 * TS_OK (a ping answered) or the refusal's code. *fd_out keeps the connection. */
static int foreign_open(struct server *s, struct foreign *f, int *fd_out)
{
    int fd = raw_connect(s->port);
    raw_send_frame(fd, f->first, f->len);
    size_t len = 0;
    uint8_t *reply = raw_recv_frame(fd, &len);
    assert_non_null(reply);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(reply, len, &env), TS_OK);
    free(reply);
    int code = TS_OK;
    if (env->hmac.len == 0) {
        Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
        code = (int)r->error->code;
        tessera__response__free_unpacked(r, NULL);
    } else {
        assert_int_equal(wire_verify(&f->session, env), TS_OK);
    }
    tessera__envelope__free_unpacked(env, NULL);
    *fd_out = fd;
    return code;
}

static void test_per_user_cap(void **state)
{
    if (geteuid() != 0)
        skip();
    struct rpc_server_config cfg = {.max_per_user = 2};
    struct server *s = server_start_with(cfg);
    struct foreign f[4];
    foreign_sessions(f, 4);
    int fds[4];
    assert_int_equal(foreign_open(s, &f[0], &fds[0]), TS_OK);
    assert_int_equal(foreign_open(s, &f[1], &fds[1]), TS_OK);
    assert_int_equal(foreign_open(s, &f[2], &fds[2]), TS_EBUSY); /* a third: refused */
    /* root is not counted: three clients at once are fine */
    struct rpc_client *c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = client(s->port);
        assert_int_equal(ping(c[i]), TS_OK);
    }
    for (int i = 0; i < 3; i++)
        rpc_client_close(c[i]);
    /* one of the user's goes: room for another */
    close(fds[0]);
    for (int i = 0; i < 100 && live_stats(s).open > 1; i++)
        usleep(10000);
    assert_int_equal(foreign_open(s, &f[3], &fds[3]), TS_OK);
    for (int i = 1; i < 4; i++)
        close(fds[i]);
    for (int i = 0; i < 4; i++)
        free(f[i].first);
    server_free(s);
}

/* Send req on a foreign session's connection, sealed with its key. */
static void foreign_send(struct foreign *f, int fd, const Tessera__Request *req)
{
    size_t blen = tessera__request__get_packed_size(req), len;
    uint8_t *body = malloc(blen), *payload = NULL;
    tessera__request__pack(req, body);
    assert_int_equal(wire_seal(&f->session, body, blen, NULL, &payload, &len), TS_OK);
    raw_send_frame(fd, payload, len);
    free(payload);
    free(body);
}

static void test_idle_deadline(void **state)
{
    if (geteuid() != 0)
        skip();
    struct rpc_server_config cfg = {.idle_timeout_ms = 300};
    struct server *s = server_start_with(cfg);
    struct foreign f[2];
    foreign_sessions(f, 2);
    /* a user's connection with nothing in flight is closed once idle */
    int fd;
    assert_int_equal(foreign_open(s, &f[0], &fd), TS_OK);
    assert_true(closed_by_server(fd, 3000));
    close(fd);
    /* but not while a request is held for it, however long */
    assert_int_equal(foreign_open(s, &f[1], &fd), TS_OK);
    Tessera__ScheduleRequest sc = TESSERA__SCHEDULE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.id = 8;
    req.msg_case = TESSERA__REQUEST__MSG_SCHEDULE;
    req.schedule = &sc;
    foreign_send(&f[1], fd, &req);
    assert_false(closed_by_server(fd, 1000));
    assert_true(held_peer_alive(s) == 1); /* answers it (an error) */
    size_t len;
    uint8_t *reply = raw_recv_frame(fd, &len);
    assert_non_null(reply);
    free(reply);
    assert_true(closed_by_server(fd, 3000)); /* idle again: closed */
    close(fd);
    /* root's connections are the daemons' persistent lines: never closed for idleness */
    struct rpc_client *cli = client(s->port);
    assert_int_equal(ping(cli), TS_OK);
    usleep(700000);
    assert_int_equal(ping(cli), TS_OK);
    rpc_client_close(cli);
    server_stop(s);
    assert_int_equal(s->stats.timed_out, 2);
    for (int i = 0; i < 2; i++)
        free(f[i].first);
    server_free(s);
}

/* A request whose role the caller lacks is refused by the dispatcher, before its handler
 * runs; the connection stays open. Without roles_of, root holds every role. */
static void test_role_refused_before_handler(void **state)
{
    if (geteuid() != 0)
        skip();
    struct server *s = server_start_with((struct rpc_server_config){0});
    Tessera__NodeUpdateRequest nu = TESSERA__NODE_UPDATE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.id = 9;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_UPDATE;
    req.node_update = &nu;
    __atomic_store_n(&admin_only_calls, 0, __ATOMIC_SEQ_CST);
    /* another user: error 10, the handler not called, the connection still serving */
    struct foreign f;
    foreign_sessions(&f, 1);
    int fd;
    assert_int_equal(foreign_open(s, &f, &fd), TS_OK);
    foreign_send(&f, fd, &req);
    size_t len;
    uint8_t *reply = raw_recv_frame(fd, &len);
    assert_non_null(reply);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(reply, len, &env), TS_OK);
    assert_int_equal(wire_verify(&f.session, env), TS_OK);
    Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
    assert_non_null(r);
    assert_non_null(r->error);
    assert_int_equal(r->error->code, TS_EPERM);
    assert_string_equal(r->error->text, "Access/permission denied");
    tessera__response__free_unpacked(r, NULL);
    tessera__envelope__free_unpacked(env, NULL);
    free(reply);
    assert_int_equal(__atomic_load_n(&admin_only_calls, __ATOMIC_SEQ_CST), 0);
    assert_false(closed_by_server(fd, 200));
    close(fd);
    free(f.first);
    /* root: answered by the handler */
    struct rpc_client *cli = client(s->port);
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    assert_null(resp->error);
    assert_int_equal(resp->msg_case, TESSERA__RESPONSE__MSG_PING);
    tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
    assert_int_equal(__atomic_load_n(&admin_only_calls, __ATOMIC_SEQ_CST), 1);
    server_free(s);
}

static void test_partial_frame_deadline(void **state)
{
    struct rpc_server_config cfg = {.frame_timeout_ms = 300};
    struct server *s = server_start_with(cfg);
    int fd = raw_connect(s->port);
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    handshake(fd, &session);
    /* a frame of 100 bytes begun with 10 of them, and nothing more */
    uint8_t h[4], some[10] = {0};
    frame_header_encode(h, 100);
    raw_send(fd, h, 4);
    raw_send(fd, some, sizeof(some));
    assert_true(closed_by_server(fd, 3000));
    close(fd);
    server_stop(s);
    assert_int_equal(s->stats.timed_out, 1);
    server_free(s);
}

static void test_port_in_use(void **state)
{
    struct server *s = *state;
    struct loop *loop = loop_create();
    struct rpc_server_config cfg = {.host = "127.0.0.1", .port = s->port,
                                    .munge_socket = munge.socket, .uid = geteuid(),
                                    .identity = NAME};
    struct rpc_server *srv = NULL;
    assert_int_equal(rpc_server_create(loop, &cfg, handlers, 2, loop, &srv), TS_EADDRINUSE);
    assert_null(srv);
    loop_destroy(loop);
}

static int group_setup(void **state)
{
    log_open("test_rpc", LOG_LVL_QUIET, NULL);
    return harness_munge_start(&munge);
}

static int group_teardown(void **state)
{
    harness_munge_stop(&munge);
    return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_ping),
        T(test_delayed_response),
        T(test_unknown_request),
        T(test_client_interrupt_and_no_deadline),
        T(test_request_peer_alive),
        cmocka_unit_test(test_client_to_nowhere),
        T(test_client_wrong_server_uid),
        T(test_oversized_frame),
        T(test_oversized_after_handshake),
        T(test_undecodable_frame),
        T(test_wrong_version),
        T(test_no_credential),
        T(test_credential_for_another_body),
        T(test_replayed_credential),
        T(test_expired_credential),
        T(test_bad_hmac),
        T(test_replayed_sequence),
        T(test_credential_after_handshake),
        T(test_truncated_then_closed),
        T(test_frame_in_single_bytes),
        T(test_pipelined_requests),
        cmocka_unit_test(test_handshake_timeout),
        cmocka_unit_test(test_small_max_frame),
        T(test_port_in_use),
        T(test_credential_for_another_daemon),
        T(test_large_first_request),
        T(test_large_first_frame_refused),
        T(test_credential_alone),
        cmocka_unit_test(test_flood_from_one_address),
        cmocka_unit_test(test_flood_from_many_addresses),
        cmocka_unit_test(test_flood_of_bytes),
        cmocka_unit_test(test_per_user_cap),
        cmocka_unit_test(test_idle_deadline),
        cmocka_unit_test(test_role_refused_before_handler),
        cmocka_unit_test(test_partial_frame_deadline),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
