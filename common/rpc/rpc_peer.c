#include "common/rpc/rpc_peer.h"

#include "common/auth/auth.h"
#include "common/net/frame.h"
#include "common/net/loop.h"
#include "common/net/outbuf.h"
#include "common/net/wire.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum peer_state { PEER_IDLE, PEER_CONNECTING, PEER_OPEN };

/* A request from rpc_peer_call until its callback. */
struct call {
    struct call *next;
    uint64_t id;
    rpc_peer_cb cb;
    void *arg;
    uint8_t *body;     /* the packed Request, until it is sealed into the output */
    size_t blen;
    uint64_t deadline; /* loop milliseconds */
};

struct rpc_peer {
    struct loop *loop;
    char *host;
    char *munge_socket;
    char *target;
    uint16_t port;
    uid_t server_uid;
    int cred_ttl;
    unsigned timeout_ms;
    unsigned idle_close_ms;
    void (*on_lost)(void *arg, int err);
    void *lost_arg;

    enum peer_state state;
    int fd;
    int credential_sent; /* the first frame on this connection is out */
    int up;              /* a response came back on this connection */
    struct wire_session session;
    struct frame_reader reader;
    struct outbuf out;

    struct call *head, *tail; /* unanswered, oldest first; calls[0..nsent) are sent */
    size_t nsent;
    uint64_t next_id;
    struct loop_timer *kick;    /* a 0 ms timer: connect and send outside rpc_peer_call */
    struct loop_timer *timeout; /* the oldest call's deadline */
    struct loop_timer *idle;    /* no call waiting: close then */
    int busy;                   /* callbacks running: destroy waits for them */
    int destroyed;
};

static void peer_fail(struct rpc_peer *p, int err);
static void peer_send_queued(struct rpc_peer *p);
static void peer_update_events(struct rpc_peer *p);

/* ------------------------------------------------------------------------------------ */
/* lifetime */

int rpc_peer_create(struct loop *loop, const struct rpc_peer_config *cfg, struct rpc_peer **out)
{
    *out = NULL;
    struct rpc_peer *p = calloc(1, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    p->loop = loop;
    p->fd = -1;
    p->port = cfg->port;
    p->server_uid = cfg->server_uid;
    p->cred_ttl = cfg->cred_ttl;
    p->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 10000;
    p->idle_close_ms = cfg->idle_close_ms;
    p->on_lost = cfg->on_lost;
    p->lost_arg = cfg->lost_arg;
    p->next_id = 1;
    frame_reader_init(&p->reader, cfg->max_frame ? cfg->max_frame : FRAME_DEFAULT_MAX);
    if (!(p->host = strdup(cfg->host)) ||
        !(p->target = strdup(cfg->target ? cfg->target : "")) ||
        (cfg->munge_socket && !(p->munge_socket = strdup(cfg->munge_socket)))) {
        free(p->host);
        free(p->target);
        free(p);
        return TS_ENOMEM;
    }
    *out = p;
    return TS_OK;
}

static void peer_free(struct rpc_peer *p)
{
    frame_reader_release(&p->reader);
    outbuf_free(&p->out);
    wire_session_clear(&p->session);
    free(p->host);
    free(p->target);
    free(p->munge_socket);
    free(p);
}

void rpc_peer_destroy(struct rpc_peer *p)
{
    if (!p || p->destroyed)
        return;
    p->destroyed = 1;
    loop_timer_cancel(p->loop, p->kick);
    p->kick = NULL;
    p->busy++;
    peer_fail(p, TS_ESHUTDOWN);
    p->busy--;
    if (p->busy == 0)
        peer_free(p);
}

/* Release the peer if it was destroyed while its callbacks ran. */
static int peer_unbusy(struct rpc_peer *p)
{
    if (--p->busy == 0 && p->destroyed) {
        peer_free(p);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* deadlines */

static void timeout_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct rpc_peer *p = arg;
    p->timeout = NULL;
    log_debug("rpc peer %s:%u: no answer in time", p->host, p->port);
    p->busy++;
    peer_fail(p, TS_ETIMEDOUT);
    peer_unbusy(p);
}

/* The earliest deadline of the waiting calls (answers may come in any order, and held
 * calls have none). */
static void arm_timeout(struct rpc_peer *p)
{
    loop_timer_cancel(p->loop, p->timeout);
    p->timeout = NULL;
    if (p->destroyed)
        return;
    uint64_t first = UINT64_MAX;
    for (const struct call *c = p->head; c; c = c->next)
        if (c->deadline < first)
            first = c->deadline;
    if (first == UINT64_MAX)
        return;
    uint64_t now = loop_now_ms(p->loop);
    uint64_t after = first > now ? first - now : 0;
    p->timeout = loop_timer_add(p->loop, after, 0, timeout_fired, p);
}

/* ------------------------------------------------------------------------------------ */
/* failure */

static void close_fd(struct rpc_peer *p)
{
    loop_timer_cancel(p->loop, p->idle);
    p->idle = NULL;
    if (p->fd >= 0) {
        loop_fd_remove(p->loop, p->fd);
        close(p->fd);
    }
    p->fd = -1;
    p->state = PEER_IDLE;
    p->credential_sent = 0;
    p->up = 0;
    p->nsent = 0;
    frame_reader_release(&p->reader);
    outbuf_free(&p->out);
    wire_session_clear(&p->session);
}

/* Close the connection and give every waiting call its error. The list is taken first:
 * callbacks may queue new calls, which then wait for a new connection. */
static void peer_fail(struct rpc_peer *p, int err)
{
    int was_up = p->up;
    close_fd(p);
    loop_timer_cancel(p->loop, p->timeout);
    p->timeout = NULL;
    struct call *c = p->head;
    p->head = p->tail = NULL;
    while (c) {
        struct call *next = c->next;
        c->cb(c->arg, err, NULL);
        free(c->body);
        free(c);
        c = next;
    }
    if (was_up && p->on_lost && !p->destroyed && err != TS_ESHUTDOWN)
        p->on_lost(p->lost_arg, err);
}

void rpc_peer_reset(struct rpc_peer *p)
{
    p->busy++;
    peer_fail(p, TS_ECLOSED);
    peer_unbusy(p);
}

int rpc_peer_is_up(const struct rpc_peer *p)
{
    return p->state == PEER_OPEN && p->up;
}

size_t rpc_peer_pending(const struct rpc_peer *p)
{
    size_t n = 0;
    for (const struct call *c = p->head; c; c = c->next)
        n++;
    return n;
}

/* ------------------------------------------------------------------------------------ */
/* idleness: the client closes first, so that no request meets a server's idle close */

static void idle_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct rpc_peer *p = arg;
    p->idle = NULL;
    if (!p->head && p->state == PEER_OPEN) {
        log_debug("rpc peer %s:%u: idle, closing", p->host, p->port);
        close_fd(p);
    }
}

static void arm_idle(struct rpc_peer *p)
{
    if (p->head || p->idle || !p->idle_close_ms || p->state != PEER_OPEN || p->destroyed)
        return;
    p->idle = loop_timer_add(p->loop, p->idle_close_ms, 0, idle_fired, p);
}

/* ------------------------------------------------------------------------------------ */
/* receiving */

static struct call *take_call(struct rpc_peer *p, uint64_t id)
{
    struct call *prev = NULL;
    size_t index = 0;
    for (struct call *c = p->head; c; prev = c, c = c->next, index++) {
        if (c->id != id || index >= p->nsent)
            continue;
        if (prev)
            prev->next = c->next;
        else
            p->head = c->next;
        if (p->tail == c)
            p->tail = prev;
        p->nsent--;
        return c;
    }
    return NULL;
}

/* One frame from the server. Returns TS_OK, or the error that ends the connection. */
static int handle_frame(struct rpc_peer *p, uint8_t *payload, size_t len)
{
    Tessera__Envelope *env = NULL;
    int err = wire_unpack(payload, len, &env);
    Tessera__Response *resp = NULL;
    if (!err && env->hmac.len == 0) {
        /* a refusal: the server could not or would not authenticate us */
        resp = tessera__response__unpack(NULL, env->body.len, env->body.data);
        err = resp && resp->error && resp->error->code ? (int)resp->error->code : TS_EPROTO;
        log_warn("rpc peer %s:%u refused us: %s", p->host, p->port,
                 resp && resp->error ? resp->error->text : ts_strerror(err));
    } else if (!err && !(err = wire_verify(&p->session, env))) {
        resp = tessera__response__unpack(NULL, env->body.len, env->body.data);
        if (!resp)
            err = TS_EDECODE;
    }
    if (!err) {
        struct call *c = take_call(p, resp->id);
        p->up = 1;
        if (c) {
            c->cb(c->arg, TS_OK, resp);
            free(c->body);
            free(c);
        }
        arm_idle(p);
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    if (env)
        tessera__envelope__free_unpacked(env, NULL);
    return err;
}

static void peer_readable(struct rpc_peer *p)
{
    uint8_t buf[16384];
    ssize_t n = read(p->fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        peer_fail(p, TS_ECLOSED);
        return;
    }
    for (size_t off = 0; off < (size_t)n && p->state == PEER_OPEN;) {
        size_t used = 0;
        int err = frame_reader_feed(&p->reader, buf + off, (size_t)n - off, &used);
        off += used;
        if (!err && frame_reader_ready(&p->reader)) {
            size_t len = 0;
            uint8_t *payload = frame_reader_take(&p->reader, &len);
            err = handle_frame(p, payload, len);
            free(payload);
        }
        if (err) {
            peer_fail(p, err);
            return;
        }
    }
    arm_timeout(p);
}

/* ------------------------------------------------------------------------------------ */
/* connecting and sending */

static void peer_event(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct rpc_peer *p = arg;
    p->busy++;
    if (p->state == PEER_CONNECTING) {
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr) {
            log_debug("rpc peer %s:%u: connect: %s", p->host, p->port, strerror(soerr));
            peer_fail(p, TS_ECONNECT);
        } else {
            p->state = PEER_OPEN;
            peer_send_queued(p);
        }
    } else if (p->state == PEER_OPEN) {
        if (events & LOOP_WRITE) {
            if (outbuf_flush(&p->out, p->fd) != TS_OK)
                peer_fail(p, TS_ECLOSED);
        }
        if (p->state == PEER_OPEN && (events & (LOOP_READ | LOOP_ERROR)))
            peer_readable(p);
        if (p->state == PEER_OPEN)
            peer_update_events(p);
    }
    peer_unbusy(p);
}

static void peer_update_events(struct rpc_peer *p)
{
    if (p->fd < 0)
        return;
    unsigned ev = LOOP_READ;
    if (p->state == PEER_CONNECTING || outbuf_pending(&p->out))
        ev |= LOOP_WRITE;
    loop_fd_modify(p->loop, p->fd, ev);
}

static int peer_connect(struct rpc_peer *p)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%u", p->port);
    if (getaddrinfo(p->host, service, &hints, &res) != 0 || !res)
        return TS_ECONNECT;
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int err = fd < 0 ? TS_ESYS : TS_OK;
    if (!err && connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS)
        err = TS_ECONNECT;
    freeaddrinfo(res);
    if (!err && loop_fd_add(p->loop, fd, LOOP_WRITE, peer_event, p) != TS_OK)
        err = TS_ESYS;
    if (err) {
        if (fd >= 0)
            close(fd);
        return err;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    p->fd = fd;
    p->state = PEER_CONNECTING;
    return wire_session_init(&p->session, WIRE_CLIENT, NULL);
}

/* Seal one call's body into the output; the connection's first call comes with the
 * credential. */
static int seal_call(struct rpc_peer *p, struct call *c)
{
    struct auth_client ac = {.socket = p->munge_socket, .server_uid = p->server_uid,
                             .ttl = p->cred_ttl, .target = p->target};
    struct auth_frames frames;
    int err = auth_seal_frames(&ac, !p->credential_sent, &p->session, c->body, c->blen, &frames);
    for (int i = 0; i < frames.n && !err; i++)
        err = outbuf_frame(&p->out, frames.payload[i], frames.len[i]);
    auth_frames_free(&frames);
    if (!err) {
        p->credential_sent = 1;
        free(c->body);
        c->body = NULL;
    }
    return err;
}

/* Seal the calls not yet in the output. */
static int seal_queued(struct rpc_peer *p)
{
    size_t index = 0;
    struct call *c = p->head;
    for (; c && index < p->nsent; c = c->next)
        index++;
    for (; c; c = c->next) {
        int err = seal_call(p, c);
        if (err) {
            log_warn("rpc peer %s:%u: %s", p->host, p->port, ts_strerror(err));
            return err;
        }
        p->nsent++;
    }
    return TS_OK;
}

static void peer_send_queued(struct rpc_peer *p)
{
    int err = seal_queued(p);
    if (err) {
        peer_fail(p, err);
        return;
    }
    if (outbuf_flush(&p->out, p->fd) != TS_OK) {
        peer_fail(p, TS_ECLOSED);
        return;
    }
    peer_update_events(p);
}

static void kick_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct rpc_peer *p = arg;
    p->kick = NULL;
    p->busy++;
    if (p->state == PEER_IDLE && p->head) {
        /* the first frames are sealed while the connection is being made: they leave
         * the moment it stands (a server under a flood drops the oldest connections
         * still waiting for a first frame) */
        int err = peer_connect(p);
        if (!err)
            err = seal_queued(p);
        if (err)
            peer_fail(p, err);
    } else if (p->state == PEER_OPEN) {
        peer_send_queued(p);
    }
    peer_unbusy(p);
}

static int queue_call(struct rpc_peer *p, const Tessera__Request *req, rpc_peer_cb cb, void *arg,
                      int held);

int rpc_peer_call(struct rpc_peer *p, const Tessera__Request *req, rpc_peer_cb cb, void *arg)
{
    return queue_call(p, req, cb, arg, 0);
}

int rpc_peer_call_held(struct rpc_peer *p, const Tessera__Request *req, rpc_peer_cb cb, void *arg)
{
    return queue_call(p, req, cb, arg, 1);
}

static int queue_call(struct rpc_peer *p, const Tessera__Request *req, rpc_peer_cb cb, void *arg,
                      int held)
{
    if (p->destroyed)
        return TS_ESHUTDOWN;
    loop_timer_cancel(p->loop, p->idle);
    p->idle = NULL;
    struct call *c = calloc(1, sizeof(*c));
    if (!c)
        return TS_ENOMEM;
    Tessera__Request r = *req;
    r.id = p->next_id++;
    c->id = r.id;
    c->cb = cb;
    c->arg = arg;
    c->blen = tessera__request__get_packed_size(&r);
    c->body = malloc(c->blen ? c->blen : 1);
    if (!c->body) {
        free(c);
        return TS_ENOMEM;
    }
    tessera__request__pack(&r, c->body);
    c->deadline = held ? UINT64_MAX : loop_now_ms(p->loop) + p->timeout_ms;
    if (p->tail)
        p->tail->next = c;
    else
        p->head = c;
    p->tail = c;
    if (!p->timeout && !held)
        arm_timeout(p);
    if (!p->kick && p->state != PEER_CONNECTING)
        p->kick = loop_timer_add(p->loop, 0, 0, kick_fired, p);
    return TS_OK;
}
