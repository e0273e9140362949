#include "common/rpc/rpc_client.h"

#include "common/auth/auth.h"
#include "common/net/frame.h"
#include "common/net/wire.h"
#include "common/util/errors.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct rpc_client {
    int fd;
    int broken;          /* a failure left the stream in an unknown state */
    int authenticated;   /* the first frame (with its credential) has been sent */
    struct addrinfo *addrs; /* the daemon's, tried in order when the first call connects */
    char *munge_socket;
    char *target;
    uid_t server_uid;
    int cred_ttl;
    int timeout_ms;      /* -1: none */
    const volatile sig_atomic_t *interrupt;
    uint64_t next_id;
    struct wire_session session;
    struct frame_reader reader;
    char error_text[256];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_error(struct rpc_client *cli, const char *fmt, const char *detail)
{
    snprintf(cli->error_text, sizeof(cli->error_text), fmt, detail);
}

static int64_t deadline_after(int timeout_ms)
{
    return timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
}

/* Wait until fd is ready for events or the deadline passes; a signal that set *intr ends
 * the wait with TS_EINTR. */
static int wait_fd(int fd, short events, int64_t deadline, const volatile sig_atomic_t *intr)
{
    for (;;) {
        if (intr && *intr)
            return TS_EINTR;
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return TS_ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0)
            return TS_OK;
        if (n < 0 && errno != EINTR)
            return TS_ESYS;
    }
}

static int connect_one(const struct addrinfo *ai, int64_t deadline, int *fd_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return TS_ESYS;
    int err = TS_OK;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS)
            err = TS_ECONNECT;
        else if ((err = wait_fd(fd, POLLOUT, deadline, NULL)) == TS_OK) {
            int soerr = 0;
            socklen_t sl = sizeof(soerr);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
            if (soerr)
                err = TS_ECONNECT;
        }
    }
    if (err) {
        close(fd);
        return err;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *fd_out = fd;
    return TS_OK;
}

int rpc_client_connect(const struct rpc_client_config *cfg, struct rpc_client **out)
{
    *out = NULL;
    struct rpc_client *cli = calloc(1, sizeof(*cli));
    if (!cli)
        return TS_ENOMEM;
    cli->fd = -1;
    cli->server_uid = cfg->server_uid;
    cli->cred_ttl = cfg->cred_ttl;
    cli->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 30000;
    cli->next_id = 1;
    frame_reader_init(&cli->reader, cfg->max_frame ? cfg->max_frame : FRAME_DEFAULT_MAX);
    if ((cfg->munge_socket && !(cli->munge_socket = strdup(cfg->munge_socket))) ||
        !(cli->target = strdup(cfg->target ? cfg->target : ""))) {
        rpc_client_close(cli);
        return TS_ENOMEM;
    }

    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%u", cfg->port);
    int gai = getaddrinfo(cfg->host, service, &hints, &res);
    if (gai != 0) {
        set_error(cli, "cannot resolve host: %s", gai_strerror(gai));
        rpc_client_close(cli);
        return TS_ECONNECT;
    }
    cli->addrs = res;
    int werr = wire_session_init(&cli->session, WIRE_CLIENT, NULL);
    if (werr) {
        rpc_client_close(cli);
        return werr;
    }
    *out = cli;
    return TS_OK;
}

void rpc_client_close(struct rpc_client *cli)
{
    if (!cli)
        return;
    if (cli->fd >= 0)
        close(cli->fd);
    if (cli->addrs)
        freeaddrinfo(cli->addrs);
    wire_session_clear(&cli->session);
    frame_reader_release(&cli->reader);
    free(cli->munge_socket);
    free(cli->target);
    free(cli);
}

void rpc_client_set_timeout(struct rpc_client *cli, int timeout_ms)
{
    cli->timeout_ms = timeout_ms < 0 ? -1 : timeout_ms > 0 ? timeout_ms : 30000;
}

void rpc_client_set_interrupt(struct rpc_client *cli, const volatile sig_atomic_t *flag)
{
    cli->interrupt = flag;
}

const char *rpc_client_error_text(const struct rpc_client *cli)
{
    return cli->error_text;
}

static int send_all(struct rpc_client *cli, const uint8_t *data, size_t len, int64_t deadline)
{
    while (len > 0) {
        ssize_t n = send(cli->fd, data, len, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            int err = wait_fd(cli->fd, POLLOUT, deadline, cli->interrupt);
            if (err)
                return err;
        } else {
            set_error(cli, "send: %s", strerror(errno));
            return TS_ECLOSED;
        }
    }
    return TS_OK;
}

/* Read until one frame is complete. */
static int recv_frame(struct rpc_client *cli, int64_t deadline, uint8_t **payload, size_t *len)
{
    uint8_t buf[16384];
    for (;;) {
        /* the server sends nothing unasked, so a frame never shares a read with the next */
        ssize_t n = recv(cli->fd, buf, sizeof(buf), 0);
        if (n > 0) {
            size_t used = 0, off = 0;
            while (off < (size_t)n) {
                int err = frame_reader_feed(&cli->reader, buf + off, (size_t)n - off, &used);
                if (err)
                    return err;
                off += used;
                if (frame_reader_ready(&cli->reader)) {
                    if (off != (size_t)n)
                        return TS_EPROTO; /* a frame nobody asked for */
                    *payload = frame_reader_take(&cli->reader, len);
                    return TS_OK;
                }
            }
        } else if (n == 0) {
            set_error(cli, "%s", "the daemon closed the connection");
            return frame_reader_eof(&cli->reader) ? TS_EFRAME_TRUNCATED : TS_ECLOSED;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            int err = wait_fd(cli->fd, POLLIN, deadline, cli->interrupt);
            if (err)
                return err;
        } else {
            set_error(cli, "recv: %s", strerror(errno));
            return TS_ECLOSED;
        }
    }
}

/* A frame without HMAC is the server refusing us before (or instead of) a session. */
static int read_refusal(struct rpc_client *cli, const Tessera__Envelope *env)
{
    Tessera__Response *r = tessera__response__unpack(NULL, env->body.len, env->body.data);
    int code = TS_EPROTO;
    if (r && r->error && r->error->code != TS_OK) {
        code = (int)r->error->code;
        set_error(cli, "%s", r->error->text ? r->error->text : ts_strerror(code));
    }
    if (r)
        tessera__response__free_unpacked(r, NULL);
    return code;
}

/* The request's frame(s): the connection's first request comes with the credential. */
static int seal_request(struct rpc_client *cli, const uint8_t *body, size_t blen,
                        struct auth_frames *frames)
{
    struct auth_client ac = {.socket = cli->munge_socket, .server_uid = cli->server_uid,
                             .ttl = cli->cred_ttl, .target = cli->target};
    int err = auth_seal_frames(&ac, !cli->authenticated, &cli->session, body, blen, frames);
    if (err)
        set_error(cli, "%s", ts_strerror(err));
    return err;
}

static int send_frame(struct rpc_client *cli, const uint8_t *payload, size_t plen,
                      int64_t deadline)
{
    uint8_t header[FRAME_HEADER_SIZE];
    int err = frame_header_encode(header, plen);
    if (!err)
        err = send_all(cli, header, sizeof(header), deadline);
    if (!err)
        err = send_all(cli, payload, plen, deadline);
    return err;
}

/* The connection, opened by the first call with its frames ready: a server that drops
 * the oldest connections still waiting for a first frame (under a flood of them) never
 * waits on us. */
static int open_connection(struct rpc_client *cli, int64_t deadline)
{
    int err = TS_ECONNECT;
    for (struct addrinfo *ai = cli->addrs; ai && err; ai = ai->ai_next)
        err = connect_one(ai, deadline, &cli->fd);
    if (err) {
        set_error(cli, "%s", "nobody answers at the daemon's address");
        return TS_ECONNECT;
    }
    return TS_OK;
}

/* Send the frames and read the one response they ask for (a credential-only frame asks
 * for none). */
static int exchange(struct rpc_client *cli, const struct auth_frames *frames,
                    Tessera__Envelope **env)
{
    int64_t deadline = deadline_after(cli->timeout_ms);
    int err = cli->fd < 0 ? open_connection(cli, deadline) : TS_OK;
    for (int i = 0; i < frames->n && !err; i++)
        err = send_frame(cli, frames->payload[i], frames->len[i], deadline);
    uint8_t *reply = NULL;
    size_t rlen = 0;
    if (!err)
        err = recv_frame(cli, deadline, &reply, &rlen);
    else if (err == TS_ECLOSED && recv_frame(cli, deadline, &reply, &rlen) == TS_OK)
        err = TS_OK; /* the server refused the opening frame and closed: its words */
    if (!err) {
        err = wire_unpack(reply, rlen, env);
        free(reply);
    }
    return err;
}

int rpc_client_call(struct rpc_client *cli, const Tessera__Request *req,
                    Tessera__Response **resp)
{
    *resp = NULL;
    cli->error_text[0] = '\0';
    if (cli->broken)
        return TS_ECLOSED;
    cli->broken = 1; /* until this call succeeds */

    Tessera__Request r = *req;
    r.id = cli->next_id++;
    size_t blen = tessera__request__get_packed_size(&r);
    uint8_t *body = malloc(blen ? blen : 1);
    if (!body)
        return TS_ENOMEM;
    tessera__request__pack(&r, body);
    struct auth_frames frames;
    int err = seal_request(cli, body, blen, &frames);
    free(body);
    if (err)
        return err;
    cli->authenticated = 1;

    Tessera__Envelope *env = NULL;
    err = exchange(cli, &frames, &env);
    auth_frames_free(&frames);
    if (!err && env->hmac.len == 0)
        err = read_refusal(cli, env);
    else if (!err)
        err = wire_verify(&cli->session, env);
    if (!err) {
        *resp = tessera__response__unpack(NULL, env->body.len, env->body.data);
        if (!*resp)
            err = TS_EDECODE;
        else if ((*resp)->id != r.id) {
            tessera__response__free_unpacked(*resp, NULL);
            *resp = NULL;
            err = TS_EPROTO;
        }
    }
    if (env)
        tessera__envelope__free_unpacked(env, NULL);
    if (!err)
        cli->broken = 0;
    else if (!cli->error_text[0])
        set_error(cli, "%s", ts_strerror(err));
    return err;
}
