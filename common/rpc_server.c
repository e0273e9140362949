#include "common/rpc_server.h"

#include "common/auth.h"
#include "common/authpool.h"
#include "common/errors.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/outbuf.h"
#include "common/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK (64u << 10)
#define MAX_INFLIGHT 64           /* requests a connection may have unanswered */
#define OUTPUT_HIGH_WATER (8u << 20) /* stop reading while this much output waits */
#define CLOSE_LINGER_MS 5000      /* how long a refusal may take to drain */

enum conn_state {
    CONN_HANDSHAKE, /* waiting for the first frame */
    CONN_AUTHING,   /* the first frame's credential is with the auth pool */
    CONN_OPEN,      /* authenticated */
    CONN_CLOSING,   /* draining a final response, reading nothing more */
    CONN_DEAD,      /* fd closed; memory lives on while references remain */
};

struct conn {
    struct rpc_server *srv;
    struct conn *prev, *next; /* the server's list of live connections */
    int fd;
    int refs;
    enum conn_state state;
    char peer[64];

    struct frame_reader reader;
    uint8_t *rbuf; /* bytes read from the socket and not yet fed to the reader */
    size_t rlen, roff;
    int leftover_posted;

    struct outbuf out; /* output waiting for the socket */

    struct wire_session session;
    Tessera__Envelope *first; /* the first frame, kept while its credential is decoded */
    uid_t uid;
    gid_t gid;
    unsigned inflight;
    struct loop_timer *deadline; /* handshake or close deadline */
};

struct rpc_request {
    struct conn *conn;
    uint64_t id;
    Tessera__Request *msg;
};

struct rpc_server {
    struct loop *loop;
    struct authpool *auth;
    int listen_fd;
    uint16_t port;
    size_t max_frame;
    unsigned handshake_timeout_ms;
    unsigned max_connections;
    const struct rpc_handler *handlers;
    size_t nhandlers;
    void *arg;
    struct conn *conns;
    unsigned conns_allocated; /* live and dead-but-referenced: the server is freed at 0 */
    int destroyed;
    struct rpc_server_stats stats;
};

static void conn_close(struct conn *c);
static void conn_process(struct conn *c);
static void conn_update_events(struct conn *c);

/* ------------------------------------------------------------------------------------ */
/* lifetime */

static void server_free(struct rpc_server *srv)
{
    authpool_destroy(srv->auth);
    free(srv);
}

static void conn_ref(struct conn *c)
{
    c->refs++;
}

static void conn_unref(struct conn *c)
{
    if (--c->refs > 0)
        return;
    struct rpc_server *srv = c->srv;
    frame_reader_release(&c->reader);
    wire_session_clear(&c->session);
    if (c->first)
        tessera__envelope__free_unpacked(c->first, NULL);
    free(c->rbuf);
    outbuf_free(&c->out);
    free(c);
    if (--srv->conns_allocated == 0 && srv->destroyed)
        server_free(srv);
}

static void conn_close(struct conn *c)
{
    if (c->state == CONN_DEAD)
        return;
    struct rpc_server *srv = c->srv;
    loop_fd_remove(srv->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    loop_timer_cancel(srv->loop, c->deadline);
    c->deadline = NULL;
    c->state = CONN_DEAD;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->stats.open--;
    conn_unref(c); /* the list's reference */
}

static void deadline_expired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct conn *c = arg;
    c->deadline = NULL;
    if (c->state == CONN_HANDSHAKE || c->state == CONN_AUTHING)
        log_info("rpc: %s: no authenticated request in time, closing", c->peer);
    conn_close(c);
}

static void set_deadline(struct conn *c, unsigned ms)
{
    loop_timer_cancel(c->srv->loop, c->deadline);
    c->deadline = loop_timer_add(c->srv->loop, ms, 0, deadline_expired, c);
}

/* ------------------------------------------------------------------------------------ */
/* output */

/* Write what the socket takes now; close on a hard error or once a refusal is out. */
static void conn_flush(struct conn *c)
{
    if (outbuf_flush(&c->out, c->fd) != TS_OK) {
        log_debug("rpc: %s: write: %s", c->peer, strerror(errno));
        conn_close(c);
        return;
    }
    if (outbuf_pending(&c->out) == 0 && c->state == CONN_CLOSING) {
        conn_close(c);
        return;
    }
    conn_update_events(c);
}

/* Queue one frame carrying payload. */
static int conn_send(struct conn *c, const uint8_t *payload, size_t len)
{
    return outbuf_frame(&c->out, payload, len);
}

static int send_response(struct conn *c, const Tessera__Response *resp)
{
    size_t blen = tessera__response__get_packed_size(resp);
    uint8_t *body = malloc(blen ? blen : 1);
    if (!body)
        return TS_ENOMEM;
    tessera__response__pack(resp, body);
    uint8_t *payload = NULL;
    size_t plen = 0;
    int err = wire_seal(&c->session, body, blen, NULL, &payload, &plen);
    free(body);
    if (!err)
        err = conn_send(c, payload, plen);
    free(payload);
    return err;
}

/* Answer with an error and close: sealed when the connection is authenticated, a plain
 * refusal otherwise (there is no key to seal it with). */
static void conn_refuse(struct conn *c, int code, const char *text, uint64_t id)
{
    c->srv->stats.refused++;
    if (c->state == CONN_OPEN) {
        Tessera__Error error = TESSERA__ERROR__INIT;
        error.code = (uint32_t)code;
        error.text = (char *)(text ? text : ts_strerror(code));
        Tessera__Response resp = TESSERA__RESPONSE__INIT;
        resp.id = id;
        resp.error = &error;
        send_response(c, &resp);
    } else {
        uint8_t *payload = NULL;
        size_t plen = 0;
        if (wire_refusal(code, text, &payload, &plen) == TS_OK)
            conn_send(c, payload, plen);
        free(payload);
    }
    c->state = CONN_CLOSING;
    set_deadline(c, CLOSE_LINGER_MS);
    conn_flush(c);
}

/* ------------------------------------------------------------------------------------ */
/* requests */

static const struct rpc_handler *find_handler(const struct rpc_server *srv, int msg)
{
    for (size_t i = 0; i < srv->nhandlers; i++)
        if ((int)srv->handlers[i].msg == msg)
            return &srv->handlers[i];
    return NULL;
}

/* An authenticated body: decode the Request and hand it to its handler. */
static void dispatch(struct conn *c, const uint8_t *body, size_t blen)
{
    Tessera__Request *msg = tessera__request__unpack(NULL, blen, body);
    if (!msg) {
        log_warn("rpc: %s: undecodable request", c->peer);
        conn_refuse(c, TS_EDECODE, NULL, 0);
        return;
    }
    struct rpc_request *req = calloc(1, sizeof(*req));
    if (!req) {
        tessera__request__free_unpacked(msg, NULL);
        conn_refuse(c, TS_ENOMEM, NULL, 0);
        return;
    }
    req->conn = c;
    req->id = msg->id;
    req->msg = msg;
    conn_ref(c);
    c->inflight++;
    c->srv->stats.requests++;

    const struct rpc_handler *h = find_handler(c->srv, (int)msg->msg_case);
    if (!h) {
        log_debug("rpc: %s: unknown request type %d", c->peer, (int)msg->msg_case);
        rpc_respond_error(req, TS_EUNKNOWN_RPC, NULL);
        return;
    }
    log_debug2("rpc: %s: %s from uid %u", c->peer, h->name, (unsigned)c->uid);
    h->fn(req, msg, c->srv->arg);
}

static void auth_done(void *arg, int err, const struct auth_identity *id)
{
    struct conn *c = arg;
    if (c->state != CONN_AUTHING) { /* closed meanwhile */
        conn_unref(c);
        return;
    }
    Tessera__Envelope *env = c->first;
    c->first = NULL;
    if (!err)
        err = auth_check_binding(id, env->body.data, env->body.len);
    if (!err) {
        wire_session_init(&c->session, WIRE_SERVER, id->session_key);
        err = wire_verify(&c->session, env);
    }
    if (err) {
        log_warn("rpc: %s: authentication refused: %s", c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
    } else {
        c->uid = id->uid;
        c->gid = id->gid;
        c->state = CONN_OPEN;
        c->srv->stats.authenticated++;
        loop_timer_cancel(c->srv->loop, c->deadline);
        c->deadline = NULL;
        dispatch(c, env->body.data, env->body.len);
        if (c->state == CONN_OPEN)
            conn_process(c); /* frames that arrived behind the first one */
    }
    tessera__envelope__free_unpacked(env, NULL);
    conn_unref(c);
}

/* One complete frame payload. */
static void handle_frame(struct conn *c, uint8_t *payload, size_t len)
{
    Tessera__Envelope *env = NULL;
    int err = wire_unpack(payload, len, &env);
    free(payload);
    if (err) {
        log_warn("rpc: %s: %s", c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
        goto out;
    }
    if (c->state == CONN_HANDSHAKE) {
        if (env->credential.len == 0) {
            conn_refuse(c, TS_EAUTH, "Authentication failed: no credential", 0);
            goto out;
        }
        c->state = CONN_AUTHING;
        c->first = env;
        conn_ref(c);
        err = authpool_submit(c->srv->auth, (const char *)env->credential.data,
                              env->credential.len, auth_done, c);
        if (err) {
            conn_unref(c);
            c->first = NULL;
            c->state = CONN_HANDSHAKE;
            conn_refuse(c, err, NULL, 0);
            goto out;
        }
        conn_update_events(c);
        return;
    }
    if (env->credential.len != 0) {
        conn_refuse(c, TS_EPROTO, "Protocol violation: credential after the handshake", 0);
        goto out;
    }
    err = wire_verify(&c->session, env);
    if (err) {
        log_warn("rpc: %s: %s", c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
        goto out;
    }
    dispatch(c, env->body.data, env->body.len);
out:
    if (env)
        tessera__envelope__free_unpacked(env, NULL);
}

/* A connection reads no new request while it is not in a reading state, has too many
 * requests unanswered or too much output queued (the peer is not reading). */
static int conn_paused(const struct conn *c)
{
    if (c->state != CONN_HANDSHAKE && c->state != CONN_OPEN)
        return 1;
    return c->inflight >= MAX_INFLIGHT || outbuf_pending(&c->out) > OUTPUT_HIGH_WATER;
}

static void conn_update_events(struct conn *c)
{
    if (c->state == CONN_DEAD)
        return;
    unsigned ev = 0;
    /* read only once the previous chunk is used up: rbuf holds one chunk at a time */
    if (!conn_paused(c) && c->roff == c->rlen)
        ev |= LOOP_READ;
    if (outbuf_pending(&c->out))
        ev |= LOOP_WRITE;
    loop_fd_modify(c->srv->loop, c->fd, ev);
}

/* Feed buffered bytes to the frame reader and handle complete frames until the buffer is
 * empty or the connection pauses. */
static void conn_process(struct conn *c)
{
    conn_ref(c);
    while (c->roff < c->rlen && !conn_paused(c)) {
        size_t used = 0;
        int err = frame_reader_feed(&c->reader, c->rbuf + c->roff, c->rlen - c->roff, &used);
        c->roff += used;
        if (err) {
            log_warn("rpc: %s: %s", c->peer, ts_strerror(err));
            conn_refuse(c, err, NULL, 0);
            break;
        }
        if (frame_reader_ready(&c->reader)) {
            size_t len = 0;
            uint8_t *payload = frame_reader_take(&c->reader, &len);
            handle_frame(c, payload, len);
        }
    }
    if (c->roff == c->rlen)
        c->roff = c->rlen = 0;
    conn_update_events(c);
    conn_unref(c);
}

static void leftover_posted(struct loop *loop, void *arg)
{
    struct conn *c = arg;
    c->leftover_posted = 0;
    if (c->state != CONN_DEAD)
        conn_process(c);
    conn_unref(c);
}

/* A pause ended: bytes may wait in rbuf that no socket event will announce. */
static void conn_resume(struct conn *c)
{
    if (c->state == CONN_DEAD || conn_paused(c))
        return;
    if (c->roff < c->rlen && !c->leftover_posted) {
        conn_ref(c);
        c->leftover_posted = 1;
        if (loop_post(c->srv->loop, leftover_posted, c) != TS_OK) {
            c->leftover_posted = 0;
            conn_unref(c);
        }
    }
    conn_update_events(c);
}

static void conn_readable(struct conn *c)
{
    ssize_t n = read(c->fd, c->rbuf, READ_CHUNK);
    if (n > 0) {
        c->roff = 0;
        c->rlen = (size_t)n;
        conn_process(c);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n == 0 && frame_reader_eof(&c->reader) != TS_OK)
        log_warn("rpc: %s: %s", c->peer, ts_strerror(TS_EFRAME_TRUNCATED));
    else if (n < 0)
        log_debug("rpc: %s: read: %s", c->peer, strerror(errno));
    conn_close(c);
}

static void conn_event(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct conn *c = arg;
    conn_ref(c);
    if (events & LOOP_WRITE)
        conn_flush(c);
    if (c->state != CONN_DEAD && (events & (LOOP_READ | LOOP_ERROR)))
        conn_readable(c);
    conn_unref(c);
}

/* ------------------------------------------------------------------------------------ */
/* accepting */

static void format_peer(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)ss;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
    }
    snprintf(buf, len, "%s:%u", host, port);
}

static struct conn *conn_create(struct rpc_server *srv, int fd,
                                const struct sockaddr_storage *ss)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (!c || !(c->rbuf = malloc(READ_CHUNK))) {
        free(c);
        return NULL;
    }
    c->srv = srv;
    c->fd = fd;
    c->refs = 1; /* the server list's */
    c->state = CONN_HANDSHAKE;
    format_peer(ss, c->peer, sizeof(c->peer));
    frame_reader_init(&c->reader, srv->max_frame);
    if (loop_fd_add(srv->loop, fd, LOOP_READ, conn_event, c) != TS_OK) {
        free(c->rbuf);
        free(c);
        return NULL;
    }
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->conns_allocated++;
    srv->stats.open++;
    srv->stats.accepted++;
    set_deadline(c, srv->handshake_timeout_ms);
    return c;
}

static void accept_ready(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct rpc_server *srv = arg;
    for (int i = 0; i < 64; i++) { /* bounded, so one busy listener cannot starve others */
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                log_warn("rpc: accept: %s", strerror(errno));
            return;
        }
        if (srv->stats.open >= srv->max_connections) {
            log_warn("rpc: too many connections (%u), refusing one", srv->stats.open);
            srv->stats.refused++;
            close(cfd);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (!conn_create(srv, cfd, &ss)) {
            log_error("rpc: out of memory accepting a connection");
            close(cfd);
        }
    }
}

static int listen_on(const char *host, uint16_t port, int *fd_out, uint16_t *port_out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%u", port);
    int gai = getaddrinfo(host && *host ? host : NULL, service, &hints, &res);
    if (gai != 0) {
        log_error("rpc: cannot resolve %s: %s", host ? host : "*", gai_strerror(gai));
        return TS_EINVAL;
    }
    int err = TS_ESYS;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof(ss);
            getsockname(fd, (struct sockaddr *)&ss, &sl);
            *port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                       : ((struct sockaddr_in *)&ss)->sin_port);
            *fd_out = fd;
            err = TS_OK;
            break;
        }
        err = errno == EADDRINUSE ? TS_EADDRINUSE : TS_ESYS;
        close(fd);
    }
    freeaddrinfo(res);
    return err;
}

int rpc_server_create(struct loop *loop, const struct rpc_server_config *cfg,
                      const struct rpc_handler *handlers, size_t nhandlers, void *arg,
                      struct rpc_server **out)
{
    *out = NULL;
    struct rpc_server *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return TS_ENOMEM;
    srv->loop = loop;
    srv->listen_fd = -1;
    srv->handlers = handlers;
    srv->nhandlers = nhandlers;
    srv->arg = arg;
    srv->max_frame = cfg->max_frame ? cfg->max_frame : FRAME_DEFAULT_MAX;
    srv->handshake_timeout_ms = cfg->handshake_timeout_ms ? cfg->handshake_timeout_ms : 10000;
    srv->max_connections = cfg->max_connections ? cfg->max_connections : 4096;

    int err = listen_on(cfg->host, cfg->port, &srv->listen_fd, &srv->port);
    if (!err)
        err = authpool_create(loop, cfg->munge_socket, cfg->uid, cfg->auth_threads, &srv->auth);
    if (!err)
        err = loop_fd_add(loop, srv->listen_fd, LOOP_READ, accept_ready, srv);
    if (err)
        goto error;
    *out = srv;
    return TS_OK;
error:
    if (srv->listen_fd >= 0)
        close(srv->listen_fd);
    server_free(srv);
    return err;
}

void rpc_server_destroy(struct rpc_server *srv)
{
    if (!srv)
        return;
    loop_fd_remove(srv->loop, srv->listen_fd);
    close(srv->listen_fd);
    srv->destroyed = 1;
    /* The pool goes first, so no decoded credential arrives for a connection we free. */
    authpool_destroy(srv->auth);
    srv->auth = NULL;
    srv->conns_allocated++; /* hold the server while its connections go */
    while (srv->conns)
        conn_close(srv->conns);
    if (--srv->conns_allocated == 0)
        server_free(srv);
}

uint16_t rpc_server_port(const struct rpc_server *srv)
{
    return srv->port;
}

void rpc_server_get_stats(const struct rpc_server *srv, struct rpc_server_stats *out)
{
    *out = srv->stats;
}

/* ------------------------------------------------------------------------------------ */
/* responding */

uid_t rpc_request_uid(const struct rpc_request *req)
{
    return req->conn->uid;
}

gid_t rpc_request_gid(const struct rpc_request *req)
{
    return req->conn->gid;
}

const char *rpc_request_peer(const struct rpc_request *req)
{
    return req->conn->peer;
}

int rpc_respond(struct rpc_request *req, const Tessera__Response *resp)
{
    struct conn *c = req->conn;
    int err = TS_ECLOSED;
    c->inflight--;
    if (c->state == CONN_OPEN) {
        Tessera__Response r = *resp;
        r.id = req->id;
        err = send_response(c, &r);
        if (err)
            conn_close(c);
        else
            conn_flush(c);
        conn_resume(c);
    }
    tessera__request__free_unpacked(req->msg, NULL);
    free(req);
    conn_unref(c);
    return err;
}

int rpc_request_peer_alive(const struct rpc_request *req)
{
    const struct conn *c = req->conn;
    if (c->state != CONN_OPEN)
        return 0;
    /* The peer may have closed (or died) while the loop had not yet read the end: a peek
     * shows it at once. Bytes waiting (a pipelined request) mean it is there. */
    char byte;
    ssize_t n = recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return 0;
    return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

int rpc_respond_error(struct rpc_request *req, int code, const char *text)
{
    Tessera__Error error = TESSERA__ERROR__INIT;
    error.code = (uint32_t)code;
    error.text = (char *)(text ? text : ts_strerror(code));
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.error = &error;
    return rpc_respond(req, &resp);
}
