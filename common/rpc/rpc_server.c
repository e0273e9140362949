#include "common/rpc/rpc_server.h"

#include "common/auth/auth.h"
#include "common/auth/authpool.h"
#include "common/net/frame.h"
#include "common/net/loop.h"
#include "common/net/outbuf.h"
#include "common/net/wire.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (64u << 10)
#define MAX_INFLIGHT 64           /* requests a connection may have unanswered */
#define OUTPUT_HIGH_WATER (8u << 20) /* stop reading while this much output waits */
#define CLOSE_LINGER_MS 5000      /* how long a refusal may take to drain */
#define LOG_INTERVAL_MS 10000     /* lines others can provoke: one per kind this often */
#define ACCEPT_PAUSE_MS 100       /* out of descriptors and nothing to drop: wait this long */
#define FD_HEADROOM 16            /* descriptors left to the rest of the daemon once short */
#define FD_CAP_MS 10000           /* how long a connection cap learned from EMFILE holds */

enum conn_state {
    CONN_HANDSHAKE, /* waiting for the first frame */
    CONN_AUTHING,   /* the first frame's credential is with the auth pool */
    CONN_OPEN,      /* authenticated */
    CONN_CLOSING,   /* draining a final response, reading nothing more */
    CONN_DEAD,      /* fd closed; memory lives on while references remain */
};

/* What the connection's one timer stands for. */
enum deadline_kind { DL_NONE, DL_HANDSHAKE, DL_CLOSING, DL_FRAME, DL_IDLE };

struct conn {
    struct rpc_server *srv;
    struct conn *prev, *next;   /* the server's list of live connections */
    struct conn *hprev, *hnext; /* the server's queue of handshakes, oldest first */
    int in_queue;
    uint64_t round;             /* the accept round that took it (see accept_ready) */
    int fd;
    int refs;
    enum conn_state state;
    char peer[64];
    uint8_t src[16];            /* the peer's address (4 or 16 bytes), for per-host counts */
    size_t srclen;

    struct frame_reader reader;
    uint8_t *rbuf; /* bytes read from the socket and not yet fed to the reader (allocated
                    * at authentication: before it, reads never go past the first frame) */
    size_t rlen, roff;
    int leftover_posted;

    struct outbuf out; /* output waiting for the socket */

    struct wire_session session;
    Tessera__Envelope *first; /* the first frame, kept while its credential is decoded */
    uid_t uid;
    gid_t gid;
    int unauth;         /* counted among the unauthenticated */
    size_t charged;     /* bytes counted in the server's unauth_bytes */
    int user_counted;   /* counted in per_user */
    int trusted;        /* root, the server's uid or a trusted uid */
    unsigned inflight;
    struct loop_timer *deadline;
    enum deadline_kind deadline_kind;
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
    uid_t uid;
    char *identity;
    unsigned cred_window_s;
    size_t max_frame;
    unsigned handshake_timeout_ms;
    unsigned max_connections;
    unsigned max_unauth, max_unauth_per_host, max_per_user;
    size_t max_unauth_bytes;
    unsigned idle_timeout_ms, frame_timeout_ms;
    uid_t trusted[RPC_MAX_TRUSTED_UIDS];
    size_t ntrusted;
    const struct rpc_handler *handlers;
    size_t nhandlers;
    void *arg;
    rpc_roles_fn roles_of;
    struct conn *conns;
    struct conn *queue_head, *queue_tail; /* handshakes, oldest first */
    size_t unauth_bytes;
    struct hashmap *per_host; /* address -> unauthenticated connections from it */
    struct hashmap *per_user; /* uid -> authenticated connections of it */
    unsigned fd_cap;          /* connections we can hold, learned from EMFILE; 0: none */
    uint64_t fd_cap_until;
    struct loop_timer *accept_resume;
    uint64_t accept_round;    /* accept_ready's calls, counted */
    uint8_t *scratch;         /* READ_CHUNK bytes: handshakes read through it */
    struct log_rate log_accept, log_crowded, log_handshake, log_refused, log_role;
    unsigned conns_allocated; /* live and dead-but-referenced: the server is freed at 0 */
    int destroyed;
    struct rpc_server_stats stats;
};

static void conn_close(struct conn *c);
static void conn_process(struct conn *c);
static void conn_update_events(struct conn *c);

/* ------------------------------------------------------------------------------------ */
/* counts per address and per uid: a hash map of small numbers */

static unsigned count_get(const struct hashmap *m, const void *key, size_t klen)
{
    return (unsigned)(uintptr_t)hashmap_get(m, key, klen);
}

/* Add delta (+1 or -1); the entry goes at 0. TS_OK or TS_ENOMEM. */
static int count_add(struct hashmap *m, const void *key, size_t klen, int delta)
{
    unsigned n = count_get(m, key, klen) + (unsigned)delta;
    if (n == 0) {
        hashmap_del(m, key, klen);
        return TS_OK;
    }
    return hashmap_put(m, key, klen, (void *)(uintptr_t)n);
}

/* ------------------------------------------------------------------------------------ */
/* logging what outsiders can provoke */

#define LOG_RATED(srv, rate, level, ...) \
    log_rate_msg(&(srv)->rate, loop_now_ms((srv)->loop), LOG_INTERVAL_MS, level, __VA_ARGS__)

/* A connection's trouble: in full once authenticated; before that, rate-limited (anyone
 * can cause it, as often as they like). */
#define LOG_CONN(c, ...)                                                      \
    do {                                                                      \
        if ((c)->state == CONN_OPEN)                                          \
            log_warn(__VA_ARGS__);                                            \
        else                                                                  \
            LOG_RATED((c)->srv, log_refused, LOG_LVL_WARN, __VA_ARGS__);      \
    } while (0)

/* ------------------------------------------------------------------------------------ */
/* lifetime */

static void server_free(struct rpc_server *srv)
{
    authpool_destroy(srv->auth);
    hashmap_destroy(srv->per_host);
    hashmap_destroy(srv->per_user);
    free(srv->scratch);
    free(srv->identity);
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

static void queue_remove(struct conn *c)
{
    if (!c->in_queue)
        return;
    struct rpc_server *srv = c->srv;
    if (c->hprev)
        c->hprev->hnext = c->hnext;
    else
        srv->queue_head = c->hnext;
    if (c->hnext)
        c->hnext->hprev = c->hprev;
    else
        srv->queue_tail = c->hprev;
    c->hprev = c->hnext = NULL;
    c->in_queue = 0;
}

static void queue_append(struct conn *c)
{
    struct rpc_server *srv = c->srv;
    c->hprev = srv->queue_tail;
    c->hnext = NULL;
    if (srv->queue_tail)
        srv->queue_tail->hnext = c;
    else
        srv->queue_head = c;
    srv->queue_tail = c;
    c->in_queue = 1;
}

/* The connection no longer counts as unauthenticated (it authenticated, or it is gone). */
static void leave_unauth(struct conn *c)
{
    if (!c->unauth)
        return;
    struct rpc_server *srv = c->srv;
    queue_remove(c);
    count_add(srv->per_host, c->src, c->srclen, -1);
    srv->unauth_bytes -= c->charged;
    c->charged = 0;
    srv->stats.unauth--;
    c->unauth = 0;
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
    c->deadline_kind = DL_NONE;
    c->state = CONN_DEAD;
    leave_unauth(c);
    if (c->user_counted)
        count_add(srv->per_user, &c->uid, sizeof(c->uid), -1);
    c->user_counted = 0;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->stats.open--;
    conn_unref(c); /* the list's reference */
}

/* ------------------------------------------------------------------------------------ */
/* deadlines: one timer per connection, for the handshake, a closing linger, a frame
 * begun, or idleness */

static void deadline_expired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct conn *c = arg;
    struct rpc_server *srv = c->srv;
    enum deadline_kind kind = c->deadline_kind;
    c->deadline = NULL;
    c->deadline_kind = DL_NONE;
    if (kind == DL_HANDSHAKE)
        LOG_RATED(srv, log_handshake, LOG_LVL_INFO,
                  "rpc: %s: no authenticated request in time, closing", c->peer);
    else if (kind == DL_FRAME)
        log_warn("rpc: %s: a frame begun %u ms ago is not complete, closing", c->peer,
                 srv->frame_timeout_ms);
    else if (kind == DL_IDLE)
        log_debug("rpc: %s: idle for %u ms, closing", c->peer, srv->idle_timeout_ms);
    if (kind != DL_CLOSING)
        srv->stats.timed_out++;
    conn_close(c);
}

static void set_deadline(struct conn *c, enum deadline_kind kind, unsigned ms)
{
    loop_timer_cancel(c->srv->loop, c->deadline);
    c->deadline = NULL;
    c->deadline_kind = DL_NONE;
    if (kind == DL_NONE || ms == 0)
        return;
    c->deadline = loop_timer_add(c->srv->loop, ms, 0, deadline_expired, c);
    if (c->deadline)
        c->deadline_kind = kind;
}

/* An authenticated connection's deadline as its state asks: a frame begun must complete
 * in time; with nothing in flight, an untrusted connection is idle. A deadline already
 * running for the same reason keeps counting from when that began. */
static void conn_track_deadline(struct conn *c)
{
    if (c->state != CONN_OPEN)
        return;
    struct rpc_server *srv = c->srv;
    enum deadline_kind want = DL_NONE;
    if (frame_reader_partial(&c->reader))
        want = DL_FRAME;
    else if (c->inflight == 0 && !c->trusted && srv->idle_timeout_ms)
        want = DL_IDLE;
    if (want != c->deadline_kind)
        set_deadline(c, want, want == DL_FRAME ? srv->frame_timeout_ms : srv->idle_timeout_ms);
}

/* ------------------------------------------------------------------------------------ */
/* room for newcomers before authentication */

/* Connections the server holds at most now: the configured cap, or less while a shortage
 * of descriptors taught us less. */
static unsigned conn_cap(struct rpc_server *srv)
{
    if (srv->fd_cap && loop_now_ms(srv->loop) >= srv->fd_cap_until)
        srv->fd_cap = 0;
    return srv->fd_cap && srv->fd_cap < srv->max_connections ? srv->fd_cap : srv->max_connections;
}

/* Unauthenticated connections at most: never more than half of all, so that those who
 * authenticate always find room. */
static unsigned unauth_cap(struct rpc_server *srv)
{
    unsigned half = conn_cap(srv) / 2;
    unsigned cap = srv->max_unauth < half ? srv->max_unauth : half;
    return cap ? cap : 1;
}

/* Whether a handshake's first bytes wait in the kernel, not yet read: a client that sent
 * its frame while the loop was busy elsewhere. */
static int bytes_waiting(const struct conn *c)
{
    int n = 0;
    return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

/* The oldest connection still waiting for its first frame, from src when given, holding
 * buffered bytes when asked, other than spare. One accepted in this accept round is never
 * taken: it has not had a chance to be read yet. With quiet, one whose first bytes wait
 * unread is not taken either: the silent ones, held open on purpose, go first. */
static struct conn *oldest_in_queue(struct rpc_server *srv, const uint8_t *src, size_t srclen,
                                    int holding, const struct conn *spare, int quiet)
{
    for (struct conn *c = srv->queue_head; c; c = c->hnext) {
        if (c == spare || (holding && c->charged == 0) || c->round == srv->accept_round)
            continue;
        if (src && (c->srclen != srclen || memcmp(c->src, src, srclen) != 0))
            continue;
        if (quiet && bytes_waiting(c))
            continue;
        return c;
    }
    return NULL;
}

static struct conn *oldest_handshake(struct rpc_server *srv, const uint8_t *src, size_t srclen,
                                     int holding, const struct conn *spare)
{
    struct conn *c = oldest_in_queue(srv, src, srclen, holding, spare, 1);
    return c ? c : oldest_in_queue(srv, src, srclen, holding, spare, 0);
}

/* Drop victim for a newcomer. A client that authenticates spends milliseconds in the
 * queue, so the oldest entry is the one most likely held open on purpose. */
static void evict(struct rpc_server *srv, struct conn *victim, const char *why)
{
    LOG_RATED(srv, log_crowded, LOG_LVL_WARN,
              "rpc: %s; dropped the oldest connection waiting for authentication (%s)", why,
              victim->peer);
    srv->stats.evicted++;
    conn_close(victim);
}

/* Make room for one more connection from src, dropping the oldest handshakes as needed.
 * 0 when it cannot be made (every connection in the way is authenticated or being
 * authenticated). */
static int make_room(struct rpc_server *srv, const uint8_t *src, size_t srclen)
{
    struct conn *victim;
    while (srv->stats.open >= conn_cap(srv) || srv->stats.unauth >= unauth_cap(srv)) {
        if (!(victim = oldest_handshake(srv, NULL, 0, 0, NULL)))
            return 0;
        evict(srv, victim, "too many connections");
    }
    while (count_get(srv->per_host, src, srclen) >= srv->max_unauth_per_host) {
        if (!(victim = oldest_handshake(srv, src, srclen, 0, NULL)))
            return 0;
        evict(srv, victim, "too many unauthenticated connections from one address");
    }
    return 1;
}

/* Count n bytes of c's first frame against the bytes all handshakes may buffer, dropping
 * older handshakes that hold some when needed. 0 when no room can be made. */
static int charge_bytes(struct conn *c, size_t n)
{
    struct rpc_server *srv = c->srv;
    struct conn *victim;
    while (srv->unauth_bytes + n > srv->max_unauth_bytes) {
        if (!(victim = oldest_handshake(srv, NULL, 0, 1, c)))
            return 0;
        evict(srv, victim, "too many bytes waiting for authentication");
    }
    srv->unauth_bytes += n;
    c->charged += n;
    return 1;
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
 * refusal otherwise (there is no key to seal it with). A refusal before authentication
 * is the first thing sent on its socket, so one write takes it: the connection is closed
 * at once rather than left holding a descriptor while a stranger does not read. */
static void conn_refuse(struct conn *c, int code, const char *text, uint64_t id)
{
    c->srv->stats.refused++;
    int open = c->state == CONN_OPEN;
    if (open) {
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
    if (open)
        set_deadline(c, DL_CLOSING, CLOSE_LINGER_MS);
    conn_flush(c);
    if (!open)
        conn_close(c);
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

int rpc_role_permits(enum rpc_role role, unsigned held)
{
    return role == RPC_ROLE_USER || (held & (unsigned)role) != 0;
}

const char *rpc_role_name(enum rpc_role role)
{
    switch (role) {
    case RPC_ROLE_ADMIN: return "administrator";
    case RPC_ROLE_NODED: return "node daemon";
    default: return "user";
    }
}

static unsigned caller_roles(const struct rpc_server *srv, uid_t uid)
{
    if (srv->roles_of)
        return srv->roles_of(srv->arg, uid);
    return uid == 0 ? RPC_ROLE_ADMIN | RPC_ROLE_NODED : 0;
}

/* The handler's role column, the one place where it is checked: a caller without the
 * role gets TS_EPERM and the handler never runs. Anyone can provoke the refusal, so its
 * line is rate-limited. */
static int role_admits(struct conn *c, const struct rpc_handler *h, struct rpc_request *req)
{
    if (h->role == RPC_ROLE_USER) /* nothing to ask the daemon */
        return 1;
    if (rpc_role_permits(h->role, caller_roles(c->srv, c->uid)))
        return 1;
    LOG_RATED(c->srv, log_role, LOG_LVL_WARN, "rpc: %s: %s from uid %u refused: needs the %s role",
              c->peer, h->name, (unsigned)c->uid, rpc_role_name(h->role));
    rpc_respond_error(req, TS_EPERM, NULL);
    return 0;
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
    if (role_admits(c, h, req))
        h->fn(req, msg, c->srv->arg);
}

static int uid_trusted(const struct rpc_server *srv, uid_t uid)
{
    if (uid == 0 || uid == srv->uid)
        return 1;
    for (size_t i = 0; i < srv->ntrusted; i++)
        if (srv->trusted[i] == uid)
            return 1;
    return 0;
}

/* The proven identity against the server's rules: the credential names us, in time, and
 * the uid has a connection left. */
static int admit_identity(struct conn *c, const struct auth_identity *id,
                          const Tessera__Envelope *env)
{
    struct rpc_server *srv = c->srv;
    int err = auth_check_binding(id, env->body.data, env->body.len);
    if (!err)
        err = auth_check_destination(id, srv->identity, time(NULL), srv->cred_window_s);
    if (!err) {
        wire_session_init(&c->session, WIRE_SERVER, id->session_key);
        err = wire_verify(&c->session, env);
    }
    if (err)
        return err;
    c->uid = id->uid;
    c->gid = id->gid;
    c->trusted = uid_trusted(srv, c->uid);
    if (!c->trusted) {
        if (count_get(srv->per_user, &c->uid, sizeof(c->uid)) >= srv->max_per_user) {
            log_warn("rpc: %s: uid %u has %u connections already, refusing one", c->peer,
                     (unsigned)c->uid, srv->max_per_user);
            return TS_EBUSY;
        }
        if (count_add(srv->per_user, &c->uid, sizeof(c->uid), +1) != TS_OK)
            return TS_ENOMEM;
        c->user_counted = 1;
    }
    if (!(c->rbuf = malloc(READ_CHUNK)))
        return TS_ENOMEM;
    return TS_OK;
}

static void auth_done(void *arg, int err, const struct auth_identity *id)
{
    struct conn *c = arg;
    if (c->state != CONN_AUTHING) { /* closed meanwhile */
        conn_unref(c);
        return;
    }
    struct rpc_server *srv = c->srv;
    Tessera__Envelope *env = c->first;
    c->first = NULL;
    if (!err)
        err = admit_identity(c, id, env);
    if (err) {
        LOG_RATED(srv, log_refused, LOG_LVL_WARN, "rpc: %s: authentication refused: %s",
                  c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
    } else {
        leave_unauth(c);
        c->state = CONN_OPEN;
        srv->stats.authenticated++;
        frame_reader_set_max(&c->reader, srv->max_frame);
        set_deadline(c, DL_NONE, 0);
        /* an empty body is a credential sent alone: its request follows in a frame of
         * its own, and it asks for no answer */
        if (env->body.len > 0)
            dispatch(c, env->body.data, env->body.len);
        if (c->state == CONN_OPEN)
            conn_process(c); /* frames that arrived behind the first one */
    }
    tessera__envelope__free_unpacked(env, NULL);
    conn_unref(c);
}

/* The first frame arrived whole: its credential goes to the auth pool. */
static void begin_auth(struct conn *c, Tessera__Envelope *env)
{
    if (env->credential.len == 0) {
        conn_refuse(c, TS_EAUTH, "Authentication failed: no credential", 0);
        tessera__envelope__free_unpacked(env, NULL);
        return;
    }
    queue_remove(c); /* it did its part: no longer the first to drop */
    c->state = CONN_AUTHING;
    c->first = env;
    conn_ref(c);
    int err = authpool_submit(c->srv->auth, (const char *)env->credential.data,
                              env->credential.len, auth_done, c);
    if (err) {
        conn_unref(c);
        c->first = NULL;
        conn_refuse(c, err, NULL, 0);
        tessera__envelope__free_unpacked(env, NULL);
        return;
    }
    conn_update_events(c);
}

/* One complete frame payload. */
static void handle_frame(struct conn *c, uint8_t *payload, size_t len)
{
    Tessera__Envelope *env = NULL;
    int err = wire_unpack(payload, len, &env);
    free(payload);
    if (err) {
        LOG_CONN(c, "rpc: %s: %s", c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
        goto out;
    }
    if (c->state == CONN_HANDSHAKE) {
        begin_auth(c, env);
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
            set_deadline(c, DL_NONE, 0); /* a frame: not idle, and no frame pending */
            handle_frame(c, payload, len);
        }
    }
    if (c->roff == c->rlen)
        c->roff = c->rlen = 0;
    conn_track_deadline(c);
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

/* read(2) returned n <= 0: the peer left (or the socket failed), unless it was only
 * nothing for now. */
static void conn_read_failed(struct conn *c, ssize_t n)
{
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n == 0 && frame_reader_eof(&c->reader) != TS_OK)
        LOG_CONN(c, "rpc: %s: %s", c->peer, ts_strerror(TS_EFRAME_TRUNCATED));
    else if (n < 0)
        log_debug("rpc: %s: read: %s", c->peer, strerror(errno));
    conn_close(c);
}

/* Before authentication: read no further than the first frame (what follows it stays in
 * the kernel until the credential is proven), through the server's scratch buffer, and
 * count the frame's bytes against what all handshakes may buffer. */
static void handshake_readable(struct conn *c)
{
    struct rpc_server *srv = c->srv;
    size_t want = frame_reader_need(&c->reader);
    ssize_t n = read(c->fd, srv->scratch, want < READ_CHUNK ? want : READ_CHUNK);
    if (n <= 0) {
        conn_read_failed(c, n);
        return;
    }
    size_t used = 0;
    int err = frame_reader_feed(&c->reader, srv->scratch, (size_t)n, &used);
    if (err) {
        LOG_CONN(c, "rpc: %s: %s", c->peer, ts_strerror(err));
        conn_refuse(c, err, NULL, 0);
        return;
    }
    size_t declared = frame_reader_declared(&c->reader);
    if (declared > c->charged && !charge_bytes(c, declared - c->charged)) {
        LOG_RATED(srv, log_crowded, LOG_LVL_WARN,
                  "rpc: %s: too many bytes waiting for authentication, refusing", c->peer);
        conn_refuse(c, TS_EBUSY, NULL, 0);
        return;
    }
    if (frame_reader_ready(&c->reader)) {
        size_t len = 0;
        uint8_t *payload = frame_reader_take(&c->reader, &len);
        handle_frame(c, payload, len);
    }
}

static void conn_readable(struct conn *c)
{
    if (c->state == CONN_HANDSHAKE) {
        handshake_readable(c);
        return;
    }
    ssize_t n = read(c->fd, c->rbuf, READ_CHUNK);
    if (n <= 0) {
        conn_read_failed(c, n);
        return;
    }
    c->roff = 0;
    c->rlen = (size_t)n;
    conn_process(c);
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

/* The peer's address as bytes: IPv4 as 4 (also when it comes mapped into IPv6), IPv6 as
 * 16, so that one host counts as one. */
static size_t source_of(const struct sockaddr_storage *ss, uint8_t out[16])
{
    if (ss->ss_family == AF_INET) {
        memcpy(out, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, 4);
        return 4;
    }
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            memcpy(out, a->s6_addr + 12, 4);
            return 4;
        }
        memcpy(out, a->s6_addr, 16);
        return 16;
    }
    return 0;
}

static struct conn *conn_create(struct rpc_server *srv, int fd, const struct sockaddr_storage *ss,
                                const uint8_t *src, size_t srclen)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->srv = srv;
    c->fd = fd;
    c->refs = 1; /* the server list's */
    c->state = CONN_HANDSHAKE;
    format_peer(ss, c->peer, sizeof(c->peer));
    memcpy(c->src, src, srclen);
    c->srclen = srclen;
    frame_reader_init(&c->reader, srv->max_frame < FRAME_HANDSHAKE_MAX ? srv->max_frame
                                                                       : FRAME_HANDSHAKE_MAX);
    if (count_add(srv->per_host, src, srclen, +1) != TS_OK) {
        free(c);
        return NULL;
    }
    if (loop_fd_add(srv->loop, fd, LOOP_READ, conn_event, c) != TS_OK) {
        count_add(srv->per_host, src, srclen, -1);
        free(c);
        return NULL;
    }
    c->unauth = 1;
    c->round = srv->accept_round;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    queue_append(c);
    srv->conns_allocated++;
    srv->stats.open++;
    srv->stats.unauth++;
    srv->stats.accepted++;
    set_deadline(c, DL_HANDSHAKE, srv->handshake_timeout_ms);
    return c;
}

/* A connection we will not take: say so in one write (nothing else is on its socket)
 * and close. */
static void refuse_fd(struct rpc_server *srv, int fd, const char *peer)
{
    LOG_RATED(srv, log_crowded, LOG_LVL_WARN, "rpc: too many connections (%u), refusing %s",
              srv->stats.open, peer);
    srv->stats.refused++;
    uint8_t *payload = NULL;
    size_t plen = 0;
    uint8_t header[FRAME_HEADER_SIZE];
    if (wire_refusal(TS_EBUSY, NULL, &payload, &plen) == TS_OK &&
        frame_header_encode(header, plen) == TS_OK) {
        struct iovec iov[2] = {{header, sizeof(header)}, {payload, plen}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        ssize_t w = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)w; /* best effort: the peer learns why, or sees the close */
    }
    free(payload);
    close(fd);
}

static void accept_resume(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct rpc_server *srv = arg;
    srv->accept_resume = NULL;
    loop_fd_modify(loop, srv->listen_fd, LOOP_READ);
}

/* accept(2) found no descriptor left. Its listener is level-triggered, so returning would
 * only bring us back at once (a spin, and a log line per turn). The connections held when
 * this happened are what the process can afford, less a margin for the rest of the daemon
 * (MUNGE sockets of the auth threads, the store, children's pipes): that becomes the cap
 * for a while, and the oldest handshakes make room under it. With nothing to drop, the
 * listener rests a moment; waiting clients stay in the kernel's backlog meanwhile.
 * Returns 1 when accepting may go on now. */
static int out_of_descriptors(struct rpc_server *srv, int errnum)
{
    LOG_RATED(srv, log_accept, LOG_LVL_WARN, "rpc: accept: %s (%u connections open)",
              strerror(errnum), srv->stats.open);
    srv->fd_cap = srv->stats.open > FD_HEADROOM ? srv->stats.open - FD_HEADROOM : 1;
    srv->fd_cap_until = loop_now_ms(srv->loop) + FD_CAP_MS;
    int dropped = 0;
    struct conn *victim;
    while (srv->stats.open >= srv->fd_cap && (victim = oldest_handshake(srv, NULL, 0, 0, NULL))) {
        evict(srv, victim, "out of file descriptors");
        dropped = 1;
    }
    if (dropped)
        return 1;
    loop_fd_modify(srv->loop, srv->listen_fd, 0);
    if (!srv->accept_resume)
        srv->accept_resume = loop_timer_add(srv->loop, ACCEPT_PAUSE_MS, 0, accept_resume, srv);
    return 0;
}

#define ACCEPT_BATCH 64 /* bounded, so one busy listener cannot starve others */

/* The connections the previous accept round took and that are still waiting: read what
 * they sent since. A client sends its first frame with the connection, so by now it is
 * there; a stranger who sends nothing stays in the queue, the first to be dropped. */
static void second_look(struct rpc_server *srv)
{
    struct conn *recent[ACCEPT_BATCH];
    size_t n = 0;
    for (struct conn *c = srv->queue_tail; c && c->round == srv->accept_round && n < ACCEPT_BATCH;
         c = c->hprev) {
        conn_ref(c);
        recent[n++] = c;
    }
    for (size_t i = 0; i < n; i++) {
        if (recent[i]->state == CONN_HANDSHAKE)
            handshake_readable(recent[i]);
        conn_unref(recent[i]);
    }
}

static void accept_ready(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct rpc_server *srv = arg;
    second_look(srv);
    srv->accept_round++;
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                if (out_of_descriptors(srv, errno))
                    continue;
                return;
            }
            if (errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                LOG_RATED(srv, log_accept, LOG_LVL_WARN, "rpc: accept: %s", strerror(errno));
            return;
        }
        uint8_t src[16];
        size_t srclen = source_of(&ss, src);
        char peer[64];
        if (!make_room(srv, src, srclen)) {
            format_peer(&ss, peer, sizeof(peer));
            refuse_fd(srv, cfd, peer);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct conn *c = conn_create(srv, cfd, &ss, src, srclen);
        if (!c) {
            log_error("rpc: out of memory accepting a connection");
            close(cfd);
            continue;
        }
        /* a client usually sent its first frame with the connection: taking it now
         * moves it out of the queue of handshakes the next newcomer may drop */
        conn_ref(c);
        handshake_readable(c);
        conn_unref(c);
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

/* The configured connection cap, but never more than three quarters of the descriptors
 * the process may open: the rest is the daemon's own (store, peers, children, MUNGE). */
static unsigned fit_descriptors(unsigned want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return want;
    rlim_t fit = rl.rlim_cur - rl.rlim_cur / 4;
    if (fit < 2)
        fit = 2;
    return fit < want ? (unsigned)fit : want;
}

#define OR_DEFAULT(v, d) ((v) ? (v) : (d))

static void apply_limits(struct rpc_server *srv, const struct rpc_server_config *cfg)
{
    srv->uid = cfg->uid;
    srv->cred_window_s = OR_DEFAULT(cfg->cred_window_s, AUTH_DEFAULT_WINDOW);
    srv->max_frame = OR_DEFAULT(cfg->max_frame, FRAME_DEFAULT_MAX);
    srv->handshake_timeout_ms = OR_DEFAULT(cfg->handshake_timeout_ms, RPC_DEFAULT_HANDSHAKE_MS);
    srv->max_connections =
        fit_descriptors(OR_DEFAULT(cfg->max_connections, RPC_DEFAULT_MAX_CONNECTIONS));
    srv->max_unauth = OR_DEFAULT(cfg->max_unauth, RPC_DEFAULT_MAX_UNAUTH);
    srv->max_unauth_per_host =
        OR_DEFAULT(cfg->max_unauth_per_host, RPC_DEFAULT_MAX_UNAUTH_PER_HOST);
    srv->max_unauth_bytes = OR_DEFAULT(cfg->max_unauth_bytes, RPC_DEFAULT_MAX_UNAUTH_BYTES);
    srv->max_per_user = OR_DEFAULT(cfg->max_per_user, RPC_DEFAULT_MAX_PER_USER);
    srv->idle_timeout_ms = cfg->idle_timeout_ms;
    srv->frame_timeout_ms = OR_DEFAULT(cfg->frame_timeout_ms, RPC_DEFAULT_FRAME_TIMEOUT_MS);
    srv->ntrusted = cfg->ntrusted < RPC_MAX_TRUSTED_UIDS ? cfg->ntrusted : RPC_MAX_TRUSTED_UIDS;
    memcpy(srv->trusted, cfg->trusted_uids, srv->ntrusted * sizeof(uid_t));
}

int rpc_server_create(struct loop *loop, const struct rpc_server_config *cfg,
                      const struct rpc_handler *handlers, size_t nhandlers, void *arg,
                      struct rpc_server **out)
{
    *out = NULL;
    if (!cfg->identity || !*cfg->identity || strlen(cfg->identity) >= AUTH_TARGET_MAX)
        return TS_EINVAL;
    struct rpc_server *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return TS_ENOMEM;
    srv->loop = loop;
    srv->listen_fd = -1;
    srv->handlers = handlers;
    srv->nhandlers = nhandlers;
    srv->arg = arg;
    srv->roles_of = cfg->roles_of;
    apply_limits(srv, cfg);

    int err = TS_ENOMEM;
    if (!(srv->identity = strdup(cfg->identity)) || !(srv->scratch = malloc(READ_CHUNK)) ||
        !(srv->per_host = hashmap_create()) || !(srv->per_user = hashmap_create()))
        goto error;
    err = listen_on(cfg->host, cfg->port, &srv->listen_fd, &srv->port);
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
    loop_timer_cancel(srv->loop, srv->accept_resume);
    srv->accept_resume = NULL;
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
    out->unauth_bytes = srv->unauth_bytes;
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
        conn_track_deadline(c);
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
