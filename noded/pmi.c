/* The PMI-1 server of a step on one node (see pmi.h): line parsing, the commands, the
 * key-value space and the local half of barriers.
 *
 * Callbacks (ops->fence, ops->abort) run from a client's event handler and may call
 * pmi_fence_done() or pmi_destroy(). So a client closed while a handler runs is only
 * unlinked and its fd closed; its memory waits on a list until the handler returns, and
 * the handler checks c->closed after every step that can reach a callback.
 */
#include "noded/pmi.h"

#include "common/net/loop.h"
#include "common/net/outbuf.h"
#include "common/util/errors.h"
#include "common/util/growarray.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MPICH sends at most a handful of tokens; more are ignored rather than refused, so a
 * free-text abort message of many words still parses. */
#define PMI_MAX_TOKENS 64
/* A client that sends requests but does not read the answers stops being read once this
 * much waits for it, so its output cannot grow without bound. */
#define PMI_OUT_HIGH (1024u * 1024u)
#define PMI_IN_START 1024u

struct pmi_client {
    struct pmi *p;
    struct pmi_client *next_dead; /* on p->dead once closed during a handler */
    int fd;
    uint32_t rank;
    bool closed;
    bool in_barrier; /* entered the current barrier, waits for barrier_out */
    bool finalized;
    bool in_mcmd;            /* inside an mcmd=spawn block, until its endcmd line */
    long spawn_total, spawn_sofar;
    char *in;                /* bytes read, not yet a whole line */
    size_t inlen, incap;     /* incap grows up to PMI_LINE_MAX + 1 */
    struct outbuf out;
};

struct pmi {
    struct loop *loop;
    struct pmi_ops ops;
    void *arg;
    uint32_t size, universe_size, appnum;
    char *kvsname;
    size_t local_tasks;

    struct hashmap *kvs; /* key -> value (malloc'd) */
    size_t kvs_bytes;    /* keys and values in kvs */
    size_t max_pairs, max_bytes;
    /* Pairs put on this node since the last barrier, in first-put order, with copies of
     * their own so that ops->fence may see them while pmi_fence_done() rewrites the
     * KVS. fresh_index maps a key to its index + 1. */
    struct pmi_kv *fresh;
    size_t nfresh, fresh_cap;
    struct hashmap *fresh_index;

    struct pmi_client **clients; /* open ones */
    size_t nclients, clients_cap;
    size_t added;                /* clients ever added: at most local_tasks */
    struct pmi_client *dead;     /* closed during a handler, freed when it returns */

    uint32_t seq;   /* the barrier being gathered, or reported and not yet done */
    size_t entered; /* local tasks in barrier seq, closed ones included */
    bool fencing;   /* barrier seq went to ops->fence; pmi_fence_done() is due */
    int busy;       /* client handlers running */
    bool destroyed;
};

/* ------------------------------------------------------------------------------------ */
/* the key-value space */

/* Bytes the protocol can carry in a key or value: no separators, no control bytes.
 * Bytes from 0x80 pass, so UTF-8 text survives. */
static bool wire_safe(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch == 0x7f)
            return false;
    }
    return true;
}

static bool kv_valid(const struct pmi_kv *kv)
{
    if (!kv->key || !kv->value)
        return false;
    size_t klen = strlen(kv->key), vlen = strlen(kv->value);
    return klen > 0 && klen < PMI_KEYLEN_MAX && vlen < PMI_VALLEN_MAX &&
           wire_safe(kv->key, klen) && wire_safe(kv->value, vlen);
}

/* What setting key to a value of vlen bytes adds to the KVS: pairs and bytes (negative
 * when a shorter value replaces a longer one). */
static void kvs_growth(const struct pmi *p, const char *key, size_t klen, size_t vlen,
                       size_t *pairs, long long *bytes)
{
    const char *old = hashmap_get(p->kvs, key, klen);
    *pairs = old ? 0 : 1;
    *bytes = (long long)vlen - (old ? (long long)strlen(old) : -(long long)klen);
}

/* Whether the KVS stays within its caps with growth added. */
static bool kvs_fits(const struct pmi *p, size_t pairs, long long bytes)
{
    return hashmap_count(p->kvs) + pairs <= p->max_pairs &&
           (long long)p->kvs_bytes + bytes <= (long long)p->max_bytes;
}

static int kvs_set(struct pmi *p, const char *key, size_t klen, const char *val, size_t vlen)
{
    char *old = hashmap_get(p->kvs, key, klen);
    if (old && strlen(old) == vlen && memcmp(old, val, vlen) == 0)
        return TS_OK; /* the common case when remote pairs come back: nothing to copy */
    size_t pairs;
    long long bytes;
    kvs_growth(p, key, klen, vlen, &pairs, &bytes);
    char *copy = strndup(val, vlen);
    if (!copy)
        return TS_ENOMEM;
    if (hashmap_put(p->kvs, key, klen, copy) != TS_OK) {
        free(copy);
        return TS_ENOMEM;
    }
    free(old);
    p->kvs_bytes = (size_t)((long long)p->kvs_bytes + bytes);
    return TS_OK;
}

static void kvs_free(struct hashmap *kvs)
{
    size_t cursor = 0;
    void *value;
    while (kvs && hashmap_next(kvs, &cursor, NULL, NULL, &value))
        free(value);
    hashmap_destroy(kvs);
}

static void pairs_free(struct pmi_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

/* Remember a local put for the next fence: a key put again keeps its place and takes the
 * new value. */
static int fresh_put(struct pmi *p, const char *key, size_t klen, const char *val, size_t vlen)
{
    uintptr_t slot = (uintptr_t)hashmap_get(p->fresh_index, key, klen);
    char *v = strndup(val, vlen);
    char *k = NULL;
    if (!v)
        return TS_ENOMEM;
    if (slot) {
        free((char *)p->fresh[slot - 1].value);
        p->fresh[slot - 1].value = v;
        return TS_OK;
    }
    struct pmi_kv *grown =
        growarray_room(p->fresh, &p->fresh_cap, p->nfresh, sizeof(*grown), 16);
    if (!grown)
        goto error;
    p->fresh = grown;
    if (!(k = strndup(key, klen)) ||
        hashmap_put(p->fresh_index, key, klen, (void *)(uintptr_t)(p->nfresh + 1)) != TS_OK)
        goto error;
    p->fresh[p->nfresh++] = (struct pmi_kv){.key = k, .value = v};
    return TS_OK;

error:
    free(k);
    free(v);
    return TS_ENOMEM;
}

/* Hand the fresh pairs over (the caller frees them) and start an empty list. */
static struct pmi_kv *fresh_take(struct pmi *p, size_t *n)
{
    struct pmi_kv *kv = p->fresh;
    *n = p->nfresh;
    for (size_t i = 0; i < *n; i++)
        hashmap_del_str(p->fresh_index, kv[i].key);
    p->fresh = NULL;
    p->nfresh = p->fresh_cap = 0;
    return kv;
}

/* ------------------------------------------------------------------------------------ */
/* clients: output and lifetime */

/* common/outbuf appends length-framed messages only; PMI lines go in raw, into the same
 * structure, so that outbuf_flush() sends them. */
static int out_append(struct outbuf *ob, const char *data, size_t len)
{
    if (ob->off == ob->len)
        ob->off = ob->len = 0;
    if (ob->len + len > ob->cap && ob->off > 0) {
        memmove(ob->data, ob->data + ob->off, ob->len - ob->off);
        ob->len -= ob->off;
        ob->off = 0;
    }
    if (ob->len + len > ob->cap) {
        size_t cap = ob->cap ? ob->cap : 4096;
        while (cap < ob->len + len)
            cap *= 2;
        uint8_t *grown = realloc(ob->data, cap);
        if (!grown)
            return TS_ENOMEM;
        ob->data = grown;
        ob->cap = cap;
    }
    memcpy(ob->data + ob->len, data, len);
    ob->len += len;
    return TS_OK;
}

__attribute__((format(printf, 2, 3))) static int client_reply(struct pmi_client *c,
                                                              const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return TS_EINVAL;
    if ((size_t)n < sizeof(small))
        return out_append(&c->out, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return TS_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int err = out_append(&c->out, big, (size_t)n);
    free(big);
    return err;
}

/* Read requests unless too many answers wait; ask for writability while any wait. */
static void client_watch(struct pmi_client *c)
{
    size_t pending = outbuf_pending(&c->out);
    unsigned events = (pending < PMI_OUT_HIGH ? LOOP_READ : 0) | (pending ? LOOP_WRITE : 0);
    loop_fd_modify(c->p->loop, c->fd, events);
}

static void client_free(struct pmi_client *c)
{
    outbuf_free(&c->out);
    free(c->in);
    free(c);
}

static void free_dead(struct pmi *p)
{
    while (p->dead) {
        struct pmi_client *c = p->dead;
        p->dead = c->next_dead;
        client_free(c);
    }
}

/* Close the connection. An entry into the current barrier stays counted: the others can
 * still complete it, and nobody is left to answer. */
static void client_close(struct pmi_client *c)
{
    struct pmi *p = c->p;
    if (c->closed)
        return;
    c->closed = true;
    loop_fd_remove(p->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    for (size_t i = 0; i < p->nclients; i++) {
        if (p->clients[i] == c) {
            p->clients[i] = p->clients[--p->nclients];
            break;
        }
    }
    if (p->busy) {
        c->next_dead = p->dead;
        p->dead = c;
    } else {
        client_free(c);
    }
}

/* Queue a line and try to send it at once; a client that cannot take it is closed. */
static void client_send_now(struct pmi_client *c, const char *line)
{
    if (out_append(&c->out, line, strlen(line)) != TS_OK ||
        outbuf_flush(&c->out, c->fd) != TS_OK) {
        log_debug("pmi %s: rank %u: cannot send to the task; closing", c->p->kvsname,
                  c->rank);
        client_close(c);
        return;
    }
    client_watch(c);
}

static struct pmi_client *find_client(const struct pmi *p, uint32_t rank)
{
    for (size_t i = 0; i < p->nclients; i++)
        if (p->clients[i]->rank == rank)
            return p->clients[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* requests: "cmd=NAME key=value key=value ..." */

struct token {
    const char *key, *val; /* val NULL: a bare word without '=' */
    size_t klen, vlen;
};

struct request {
    const char *line; /* not NUL-terminated: tokens point into it */
    size_t len;
    struct token tok[PMI_MAX_TOKENS]; /* tok[0] is cmd=NAME */
    size_t ntok;
};

/* Split at spaces, each token at its first '=' (values may hold more). */
static void parse_request(const char *line, size_t len, struct request *req)
{
    req->line = line;
    req->len = len;
    req->ntok = 0;
    size_t i = 0;
    while (i < len && req->ntok < PMI_MAX_TOKENS) {
        while (i < len && line[i] == ' ')
            i++;
        size_t start = i;
        while (i < len && line[i] != ' ')
            i++;
        if (i == start)
            break;
        struct token *t = &req->tok[req->ntok++];
        const char *eq = memchr(line + start, '=', i - start);
        t->key = line + start;
        t->klen = eq ? (size_t)(eq - t->key) : i - start;
        t->val = eq ? eq + 1 : NULL;
        t->vlen = eq ? (size_t)(line + i - t->val) : 0;
    }
}

static bool span_is(const char *s, size_t len, const char *word)
{
    return s && strlen(word) == len && memcmp(s, word, len) == 0;
}

/* The first argument called key (after cmd=), or NULL. */
static const struct token *req_find(const struct request *req, const char *key)
{
    for (size_t i = 1; i < req->ntok; i++)
        if (span_is(req->tok[i].key, req->tok[i].klen, key))
            return &req->tok[i];
    return NULL;
}

/* A token's decimal value; false when it has none or it is not a number. */
static bool tok_long(const struct token *t, long *out)
{
    char buf[32];
    if (!t || !t->val || t->vlen == 0 || t->vlen >= sizeof(buf))
        return false;
    memcpy(buf, t->val, t->vlen);
    buf[t->vlen] = '\0';
    char *end;
    errno = 0;
    *out = strtol(buf, &end, 10);
    return errno == 0 && *end == '\0';
}

static bool req_long(const struct request *req, const char *key, long *out)
{
    return tok_long(req_find(req, key), out);
}

/* A request naming another KVS is refused; one naming none means ours. */
static bool kvsname_ok(const struct pmi *p, const struct request *req)
{
    const struct token *t = req_find(req, "kvsname");
    return !t || span_is(t->val, t->vlen, p->kvsname);
}

/* ------------------------------------------------------------------------------------ */
/* barriers */

static void barrier_complete(struct pmi *p)
{
    size_t n;
    struct pmi_kv *pairs = fresh_take(p, &n);
    p->fencing = true;
    log_debug("pmi %s: barrier %u: the %zu local tasks are in, %zu pairs put here",
              p->kvsname, p->seq, p->local_tasks, n);
    /* The callback may finish the barrier (pmi_fence_done) or destroy p: touch neither
     * p's barrier state nor p itself after it. */
    p->ops.fence(p->arg, p->seq, pairs, n);
    pairs_free(pairs, n);
}

static int cmd_barrier_in(struct pmi_client *c, const struct request *req)
{
    struct pmi *p = c->p;
    if (c->in_barrier) {
        log_warn("pmi %s: rank %u entered barrier %u twice", p->kvsname, c->rank, p->seq);
        return TS_EPROTO;
    }
    c->in_barrier = true;
    if (++p->entered == p->local_tasks)
        barrier_complete(p);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the other commands; each returns TS_OK or the error that closes the client */

static int cmd_init(struct pmi_client *c, const struct request *req)
{
    const struct token *v = req_find(req, "pmi_version");
    bool ok = v && span_is(v->val, v->vlen, "1");
    if (!ok)
        log_warn("pmi %s: rank %u asks for PMI version %.*s; this server speaks 1",
                 c->p->kvsname, c->rank, v && v->val ? (int)v->vlen : 1,
                 v && v->val ? v->val : "?");
    return client_reply(c, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d\n",
                        ok ? 0 : -1);
}

/* Only for clients started with PMI_ID: size and rank come in three more lines. */
static int cmd_initack(struct pmi_client *c, const struct request *req)
{
    long id;
    if (req_long(req, "pmiid", &id) && id != (long)c->rank)
        log_debug("pmi %s: rank %u says pmiid=%ld; answering its rank", c->p->kvsname,
                  c->rank, id);
    return client_reply(c, "cmd=initack rc=0\ncmd=set size=%u\ncmd=set rank=%u\n"
                           "cmd=set debug=0\n",
                        c->p->size, c->rank);
}

static int cmd_get_maxes(struct pmi_client *c, const struct request *req)
{
    return client_reply(c, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n",
                        PMI_KVSNAME_MAX, PMI_KEYLEN_MAX, PMI_VALLEN_MAX);
}

static int cmd_get_appnum(struct pmi_client *c, const struct request *req)
{
    return client_reply(c, "cmd=appnum rc=0 appnum=%u\n", c->p->appnum);
}

static int cmd_get_my_kvsname(struct pmi_client *c, const struct request *req)
{
    return client_reply(c, "cmd=my_kvsname rc=0 kvsname=%s\n", c->p->kvsname);
}

static int cmd_get_universe_size(struct pmi_client *c, const struct request *req)
{
    return client_reply(c, "cmd=universe_size rc=0 size=%u\n", c->p->universe_size);
}

/* Why a put cannot be taken, as a msg token (no spaces), or NULL. */
static const char *put_refusal(const struct pmi *p, const struct request *req)
{
    const struct token *k = req_find(req, "key"), *v = req_find(req, "value");
    if (!kvsname_ok(p, req))
        return "kvsname_mismatch";
    if (!k || !k->val || k->vlen == 0)
        return "missing_key";
    if (!v || !v->val)
        return "missing_value";
    if (k->vlen >= PMI_KEYLEN_MAX)
        return "key_too_long";
    if (v->vlen >= PMI_VALLEN_MAX)
        return "value_too_long";
    size_t pairs;
    long long bytes;
    kvs_growth(p, k->val, k->vlen, v->vlen, &pairs, &bytes);
    if (!kvs_fits(p, pairs, bytes))
        return "kvs_full";
    return NULL;
}

static int cmd_put(struct pmi_client *c, const struct request *req)
{
    struct pmi *p = c->p;
    const char *refusal = put_refusal(p, req);
    if (refusal && !strcmp(refusal, "kvs_full"))
        log_verbose("pmi %s: rank %u: put refused, the KVS holds %zu pairs of %zu bytes",
                    p->kvsname, c->rank, hashmap_count(p->kvs), p->kvs_bytes);
    if (!refusal) {
        const struct token *k = req_find(req, "key"), *v = req_find(req, "value");
        /* fresh first: should the KVS copy fail, the pair still reaches every node */
        if (fresh_put(p, k->val, k->vlen, v->val, v->vlen) != TS_OK ||
            kvs_set(p, k->val, k->vlen, v->val, v->vlen) != TS_OK)
            refusal = "out_of_memory";
    }
    if (refusal)
        return client_reply(c, "cmd=put_result rc=-1 msg=%s\n", refusal);
    return client_reply(c, "cmd=put_result rc=0\n");
}

static int cmd_get(struct pmi_client *c, const struct request *req)
{
    struct pmi *p = c->p;
    const struct token *k = req_find(req, "key");
    if (!kvsname_ok(p, req))
        return client_reply(c, "cmd=get_result rc=-1 msg=kvsname_mismatch\n");
    if (!k || !k->val || k->vlen == 0)
        return client_reply(c, "cmd=get_result rc=-1 msg=missing_key\n");
    const char *value = hashmap_get(p->kvs, k->val, k->vlen);
    if (!value)
        return client_reply(c, "cmd=get_result rc=-1 msg=key_%.*s_not_found\n",
                            (int)k->vlen, k->val);
    return client_reply(c, "cmd=get_result rc=0 value=%s\n", value);
}

static int cmd_finalize(struct pmi_client *c, const struct request *req)
{
    c->finalized = true;
    return client_reply(c, "cmd=finalize_ack rc=0\n");
}

/* MPICH 4.0 sends exitcode only; later ones add message=TEXT with the text unescaped,
 * spaces included, so the message is the rest of the line. */
static int cmd_abort(struct pmi_client *c, const struct request *req)
{
    struct pmi *p = c->p;
    long code;
    if (!req_long(req, "exitcode", &code))
        code = 1;
    const struct token *m = req_find(req, "message");
    if (!m)
        m = req_find(req, "msg");
    char *msg = NULL;
    if (m && m->val)
        msg = strndup(m->val, (size_t)(req->line + req->len - m->val));
    log_info("pmi %s: rank %u aborts the job, exit code %ld%s%s", p->kvsname, c->rank, code,
             msg ? ": " : "", msg ? msg : "");
    if (p->ops.abort)
        p->ops.abort(p->arg, c->rank, (int)code, msg ? msg : "");
    free(msg);
    return TS_OK;
}

/* Commands this server refuses, with the answer name the client waits for, so that it
 * fails cleanly instead of on an unexpected reply. MPICH reads info= (name service) and
 * reason= (getbyidx) rather than rc in some of them. */
static const struct {
    const char *request, *response, *extra;
} unsupported[] = {
    {"publish_name", "publish_result", " info=unsupported"},
    {"unpublish_name", "unpublish_result", " info=unsupported"},
    {"lookup_name", "lookup_result", " info=unsupported"},
    {"spawn", "spawn_result", ""},
    {"create_kvs", "newkvs", ""},
    {"destroy_kvs", "kvs_destroyed", ""},
    {"getbyidx", "getbyidx_results", " reason=unsupported"},
};

static int cmd_unsupported(struct pmi_client *c, const struct request *req)
{
    const struct token *cmd = &req->tok[0];
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
        if (span_is(cmd->val, cmd->vlen, unsupported[i].request))
            return client_reply(c, "cmd=%s rc=-1 msg=unsupported%s\n", unsupported[i].response,
                                unsupported[i].extra);
    }
    log_debug("pmi %s: rank %u: unknown command %.*s", c->p->kvsname, c->rank,
              (int)cmd->vlen, cmd->val);
    return client_reply(c, "cmd=%.*s rc=-1 msg=unsupported\n", (int)cmd->vlen, cmd->val);
}

static const struct {
    const char *name;
    int (*fn)(struct pmi_client *c, const struct request *req);
} commands[] = {
    {"init", cmd_init},
    {"initack", cmd_initack},
    {"get_maxes", cmd_get_maxes},
    {"get_appnum", cmd_get_appnum},
    {"get_my_kvsname", cmd_get_my_kvsname},
    {"get_universe_size", cmd_get_universe_size},
    {"put", cmd_put},
    {"get", cmd_get},
    {"barrier_in", cmd_barrier_in},
    {"finalize", cmd_finalize},
    {"abort", cmd_abort},
};

static int dispatch(struct pmi_client *c, const struct request *req)
{
    const struct token *cmd = &req->tok[0];
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (span_is(cmd->val, cmd->vlen, commands[i].name))
            return commands[i].fn(c, req);
    return cmd_unsupported(c, req);
}

/* ------------------------------------------------------------------------------------ */
/* lines */

/* mcmd=spawn blocks run over several lines up to "endcmd"; the client sends one block
 * per command of the spawn, then waits for a single spawn_result. */
static int handle_mcmd_line(struct pmi_client *c, const char *line, size_t len)
{
    if (!span_is(line, len, "endcmd")) {
        /* one key=value a line; only the block counters matter here */
        struct request req;
        parse_request(line, len, &req);
        const struct token *t = req.ntok ? &req.tok[0] : NULL;
        if (t && span_is(t->key, t->klen, "totspawns"))
            tok_long(t, &c->spawn_total);
        else if (t && span_is(t->key, t->klen, "spawnssofar"))
            tok_long(t, &c->spawn_sofar);
        return TS_OK;
    }
    c->in_mcmd = false;
    if (c->spawn_sofar < c->spawn_total)
        return TS_OK; /* more blocks of the same spawn follow */
    log_debug("pmi %s: rank %u: spawn is not supported", c->p->kvsname, c->rank);
    return client_reply(c, "cmd=spawn_result rc=-1 msg=unsupported\n");
}

static int handle_line(struct pmi_client *c, const char *line, size_t len)
{
    struct pmi *p = c->p;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)line[i];
        if (ch < ' ' || ch == 0x7f) {
            log_warn("pmi %s: rank %u sent a control byte 0x%02x; closing its connection",
                     p->kvsname, c->rank, ch);
            return TS_EPROTO;
        }
    }
    if (c->in_mcmd)
        return handle_mcmd_line(c, line, len);
    if (len == 0)
        return TS_OK;
    if (len >= 5 && memcmp(line, "mcmd=", 5) == 0) {
        c->in_mcmd = true;
        c->spawn_total = c->spawn_sofar = 0;
        return TS_OK;
    }
    struct request req;
    parse_request(line, len, &req);
    if (req.ntok == 0 || !span_is(req.tok[0].key, req.tok[0].klen, "cmd") ||
        !req.tok[0].val || req.tok[0].vlen == 0) {
        log_warn("pmi %s: rank %u sent something that is not a PMI command; closing its "
                 "connection", p->kvsname, c->rank);
        return TS_EPROTO;
    }
    return dispatch(c, &req);
}

/* Handle every whole line in the input and keep the rest for later reads. */
static int client_lines(struct pmi_client *c)
{
    size_t start = 0;
    int err = TS_OK;
    while (!err && !c->closed) {
        char *nl = memchr(c->in + start, '\n', c->inlen - start);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (c->in + start));
        err = handle_line(c, c->in + start, len);
        start += len + 1;
    }
    if (err || c->closed)
        return err;
    memmove(c->in, c->in + start, c->inlen - start);
    c->inlen -= start;
    if (c->inlen > PMI_LINE_MAX) {
        log_warn("pmi %s: rank %u sent a line over %u bytes; closing its connection",
                 c->p->kvsname, c->rank, PMI_LINE_MAX);
        return TS_EPROTO;
    }
    return TS_OK;
}

static int client_read(struct pmi_client *c)
{
    if (c->inlen == c->incap) {
        /* never more than a longest line and its newline: a longer one is refused */
        if (c->incap == PMI_LINE_MAX + 1)
            return TS_EPROTO; /* client_lines() refuses such a line first */
        size_t cap = c->incap * 2 > PMI_LINE_MAX + 1 ? PMI_LINE_MAX + 1 : c->incap * 2;
        char *grown = realloc(c->in, cap);
        if (!grown)
            return TS_ENOMEM;
        c->in = grown;
        c->incap = cap;
    }
    ssize_t n = read(c->fd, c->in + c->inlen, c->incap - c->inlen);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return TS_OK;
    if (n <= 0)
        return TS_ECLOSED;
    c->inlen += (size_t)n;
    return client_lines(c);
}

static void pmi_free(struct pmi *p)
{
    while (p->nclients)
        client_close(p->clients[p->nclients - 1]);
    free_dead(p);
    free(p->clients);
    kvs_free(p->kvs);
    pairs_free(p->fresh, p->nfresh);
    hashmap_destroy(p->fresh_index);
    free(p->kvsname);
    free(p);
}

/* A handler returns: free what waited for it, p too when it was destroyed meanwhile. */
static void pmi_unbusy(struct pmi *p)
{
    if (--p->busy > 0)
        return;
    free_dead(p);
    if (p->destroyed)
        pmi_free(p);
}

static void client_event(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct pmi_client *c = arg;
    struct pmi *p = c->p;
    int err = TS_OK;
    p->busy++;
    if (events & LOOP_WRITE)
        err = outbuf_flush(&c->out, c->fd);
    if (!err && (events & (LOOP_READ | LOOP_ERROR)))
        err = client_read(c);
    if (!err && !c->closed)
        err = outbuf_flush(&c->out, c->fd);
    if (!c->closed && err) {
        /* a task that only shut down its sending side still gets what is ready */
        if (err == TS_ECLOSED && outbuf_pending(&c->out))
            (void)outbuf_flush(&c->out, c->fd);
        if (err == TS_ECLOSED && c->finalized)
            log_debug("pmi %s: rank %u closed its connection", p->kvsname, c->rank);
        else if (err == TS_ECLOSED)
            log_verbose("pmi %s: rank %u closed its connection without finalize",
                        p->kvsname, c->rank);
        else if (err == TS_ENOMEM)
            log_error("pmi %s: rank %u: out of memory; closing its connection", p->kvsname,
                      c->rank);
        client_close(c);
    } else if (!c->closed) {
        client_watch(c);
    }
    pmi_unbusy(p);
}

/* ------------------------------------------------------------------------------------ */
/* the module */

static bool config_valid(const struct pmi_config *cfg)
{
    if (cfg->size == 0 || cfg->local_tasks == 0 || cfg->local_tasks > cfg->size ||
        !cfg->kvsname || (cfg->npreset && !cfg->preset))
        return false;
    size_t len = strlen(cfg->kvsname);
    if (len == 0 || len >= PMI_KVSNAME_MAX || !wire_safe(cfg->kvsname, len))
        return false;
    for (size_t i = 0; i < cfg->npreset; i++)
        if (!kv_valid(&cfg->preset[i]))
            return false;
    return true;
}

int pmi_create(struct loop *loop, const struct pmi_config *cfg, const struct pmi_ops *ops,
               void *arg, struct pmi **out)
{
    if (!out)
        return TS_EINVAL;
    *out = NULL;
    if (!loop || !cfg || !ops || !ops->fence || !config_valid(cfg))
        return TS_EINVAL;
    struct pmi *p = calloc(1, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    p->loop = loop;
    p->ops = *ops;
    p->arg = arg;
    p->size = cfg->size;
    p->universe_size = cfg->universe_size ? cfg->universe_size : cfg->size;
    p->appnum = cfg->appnum;
    p->local_tasks = cfg->local_tasks;
    p->max_pairs = cfg->max_pairs ? cfg->max_pairs : PMI_KVS_MAX_PAIRS;
    p->max_bytes = cfg->max_bytes ? cfg->max_bytes : PMI_KVS_MAX_BYTES;
    if (!(p->kvsname = strdup(cfg->kvsname)) || !(p->kvs = hashmap_create()) ||
        !(p->fresh_index = hashmap_create()))
        goto error;
    for (size_t i = 0; i < cfg->npreset; i++) {
        const struct pmi_kv *kv = &cfg->preset[i];
        if (kvs_set(p, kv->key, strlen(kv->key), kv->value, strlen(kv->value)) != TS_OK)
            goto error;
    }
    *out = p;
    return TS_OK;

error:
    pmi_free(p);
    return TS_ENOMEM;
}

static int clients_reserve(struct pmi *p)
{
    if (p->nclients < p->clients_cap)
        return TS_OK;
    size_t cap = p->clients_cap ? p->clients_cap * 2 : 8;
    struct pmi_client **grown = realloc(p->clients, cap * sizeof(*grown));
    if (!grown)
        return TS_ENOMEM;
    p->clients = grown;
    p->clients_cap = cap;
    return TS_OK;
}

int pmi_add_client(struct pmi *p, int fd, uint32_t rank)
{
    if (!p || p->destroyed || fd < 0 || rank >= p->size)
        return TS_EINVAL;
    if (find_client(p, rank))
        return TS_EEXIST;
    if (p->added >= p->local_tasks)
        return TS_EBUSY;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return TS_EINVAL;
    if (clients_reserve(p) != TS_OK)
        return TS_ENOMEM;
    struct pmi_client *c = calloc(1, sizeof(*c));
    if (!c || !(c->in = malloc(PMI_IN_START))) {
        free(c);
        return TS_ENOMEM;
    }
    c->p = p;
    c->fd = fd;
    c->rank = rank;
    c->incap = PMI_IN_START;
    int err = loop_fd_add(p->loop, fd, LOOP_READ, client_event, c);
    if (err) {
        client_free(c);
        return err;
    }
    /* close-on-exec: tasks started later must not inherit another task's server end */
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    p->clients[p->nclients++] = c;
    p->added++;
    return TS_OK;
}

/* The current barrier is over: every local task waiting in it gets line. */
static void barrier_finish(struct pmi *p, const char *line)
{
    p->fencing = false;
    p->entered = 0;
    p->seq++;
    /* backwards: a client that cannot take the answer leaves the array */
    for (size_t i = p->nclients; i-- > 0;) {
        struct pmi_client *c = p->clients[i];
        if (!c->in_barrier)
            continue;
        c->in_barrier = false;
        client_send_now(c, line);
    }
}

/* Whether merging pairs keeps the KVS within its caps. A key given twice counts twice:
 * srun sends each key once, so only a list that is wrong anyway can be refused wrongly. */
static bool merge_fits(const struct pmi *p, const struct pmi_kv *pairs, size_t n)
{
    size_t new_pairs = 0;
    long long new_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t np;
        long long nb;
        kvs_growth(p, pairs[i].key, strlen(pairs[i].key), strlen(pairs[i].value), &np, &nb);
        new_pairs += np;
        new_bytes += nb > 0 ? nb : 0;
    }
    return kvs_fits(p, new_pairs, new_bytes);
}

int pmi_fence_done(struct pmi *p, uint32_t seq, const struct pmi_kv *pairs, size_t n)
{
    if (!p || p->destroyed || !p->fencing || seq != p->seq || (n && !pairs))
        return TS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!kv_valid(&pairs[i]))
            return TS_EINVAL;
    if (!merge_fits(p, pairs, n)) {
        log_warn("pmi %s: barrier %u brings %zu pairs, more than the KVS may hold (%zu pairs, "
                 "%zu bytes); the barrier fails", p->kvsname, seq, n, p->max_pairs,
                 p->max_bytes);
        barrier_finish(p, "cmd=barrier_out rc=-1 msg=kvs_full\n");
        return TS_ETOOBIG;
    }
    for (size_t i = 0; i < n; i++) {
        const struct pmi_kv *kv = &pairs[i];
        if (kvs_set(p, kv->key, strlen(kv->key), kv->value, strlen(kv->value)) != TS_OK)
            return TS_ENOMEM; /* what was merged stays: merging again is harmless */
    }
    log_debug("pmi %s: barrier %u done, %zu pairs in all", p->kvsname, seq, n);
    barrier_finish(p, "cmd=barrier_out rc=0\n");
    return TS_OK;
}

void pmi_destroy(struct pmi *p)
{
    if (!p || p->destroyed)
        return;
    p->destroyed = true;
    while (p->nclients)
        client_close(p->clients[p->nclients - 1]);
    if (p->busy == 0)
        pmi_free(p);
}
