#include "ctld/store.h"

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/growarray.h"
#include "common/util/log.h"
#include "ctld/store_file.h"

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define STORE_MAX_KEY 511 /* LMDB's default (and compiled-in) key size limit */

/* One queued change; key and value are copied inline after the header. */
struct store_op {
    struct store_op *next;
    enum store_db db;
    bool del;
    size_t klen, vlen;
    unsigned char data[]; /* key, then value */
};

struct store_cb {
    store_commit_cb cb;
    void *arg;
};

/* A group of changes committed in one write transaction. The op list belongs to the
 * writer while it is handed over; the callbacks are touched by the loop thread only. */
struct batch {
    struct store_op *head, **tail;
    size_t nops;
    struct store_cb *cbs;
    size_t ncbs, cbs_cap;
    int result;
    char why[160]; /* what failed, for the loop's log line (the writer logs nothing) */
};

struct store {
    struct loop *loop;
    MDB_env *env;
    MDB_dbi dbi[STORE_DB_COUNT];
    bool had_state; /* the marker was there at open */

    /* Loop thread only. */
    struct batch *open;     /* being filled */
    struct batch *inflight; /* handed to the writer, not yet completed */
    struct batch *failed;   /* failed, waiting for its retry; nothing goes before it */
    struct loop_timer *retry_timer;
    bool failing;           /* from a failed commit to the next successful one */
    unsigned backoff_ms;
    uint64_t failing_since_ms, failing_attempts;
    store_health_cb health_cb;
    void *health_arg;
    struct store_stats stats;
    bool hook_added;

    /* The writer reports completions on its own eventfd rather than with loop_post():
     * a watcher can be removed at store_close(), whereas a post cannot be withdrawn and
     * would reach a freed store (or leak when the loop drops it), and an eventfd write
     * cannot fail for lack of memory. */
    int donefd;

    /* Shared with the writer thread, under lock. */
    pthread_mutex_t lock;
    pthread_cond_t work_cond; /* todo set or stop */
    pthread_cond_t done_cond; /* done set */
    struct batch *todo;
    struct batch *done;
    bool stop;
    bool writer_started;
    pthread_t writer;
};

static const char *const db_names[STORE_DB_COUNT] = {
    [STORE_DB_META] = "meta",           [STORE_DB_COUNTERS] = "counters",
    [STORE_DB_JOBS] = "jobs",           [STORE_DB_STEPS] = "steps",
    [STORE_DB_NODES] = "nodes",         [STORE_DB_ACCT_JOBS] = "acct_jobs",
    [STORE_DB_ACCT_STEPS] = "acct_steps", [STORE_DB_ACCT_BY_END] = "acct_by_end",
    [STORE_DB_FAIRSHARE] = "fairshare",
};

const char *store_db_name(enum store_db db)
{
    if ((unsigned)db >= STORE_DB_COUNT)
        return NULL;
    return db_names[db];
}

void store_key_u64(uint8_t out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        out[i] = (uint8_t)v;
        v >>= 8;
    }
}

uint64_t store_key_get_u64(const uint8_t in[8])
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | in[i];
    return v;
}

static int mdb_to_ts(int rc)
{
    switch (rc) {
    case MDB_SUCCESS:
        return TS_OK;
    case MDB_NOTFOUND:
        return TS_ENOENT;
    case MDB_MAP_FULL:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return TS_ESTORE_FULL;
    case ENOMEM:
        return TS_ENOMEM;
    default:
        return TS_ESTORE;
    }
}

/* ---- batches ------------------------------------------------------------------------ */

static struct batch *batch_create(void)
{
    struct batch *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->tail = &b->head;
    return b;
}

static void batch_destroy(struct batch *b)
{
    if (!b)
        return;
    for (struct store_op *op = b->head, *next; op; op = next) {
        next = op->next;
        free(op);
    }
    free(b->cbs);
    free(b);
}

static bool batch_empty(const struct batch *b)
{
    return !b || (b->nops == 0 && b->ncbs == 0);
}

/* The open batch, created on first use. */
static struct batch *open_batch(struct store *st)
{
    if (!st->open)
        st->open = batch_create();
    return st->open;
}

static int queue_op(struct store *st, enum store_db db, bool del, const void *key, size_t klen,
                    const void *val, size_t vlen)
{
    if ((unsigned)db >= STORE_DB_COUNT || !key || klen == 0 || klen > STORE_MAX_KEY ||
        (vlen && !val))
        return TS_EINVAL;
    struct batch *b = open_batch(st);
    if (!b)
        return TS_ENOMEM;
    struct store_op *op = malloc(sizeof(*op) + klen + vlen);
    if (!op)
        return TS_ENOMEM;
    *op = (struct store_op){.next = NULL, .db = db, .del = del, .klen = klen, .vlen = vlen};
    memcpy(op->data, key, klen);
    if (vlen)
        memcpy(op->data + klen, val, vlen);
    *b->tail = op;
    b->tail = &op->next;
    b->nops++;
    return TS_OK;
}

int store_put(struct store *st, enum store_db db, const void *key, size_t klen,
              const void *val, size_t vlen)
{
    return queue_op(st, db, false, key, klen, val, vlen);
}

int store_del(struct store *st, enum store_db db, const void *key, size_t klen)
{
    return queue_op(st, db, true, key, klen, NULL, 0);
}

int store_after_commit(struct store *st, store_commit_cb cb, void *arg)
{
    if (!cb)
        return TS_EINVAL;
    struct batch *b = open_batch(st);
    if (!b)
        return TS_ENOMEM;
    struct store_cb *cbs = growarray_room(b->cbs, &b->cbs_cap, b->ncbs, sizeof(*cbs), 8);
    if (!cbs)
        return TS_ENOMEM;
    b->cbs = cbs;
    b->cbs[b->ncbs++] = (struct store_cb){.cb = cb, .arg = arg};
    return TS_OK;
}

/* ---- the writer thread ------------------------------------------------------------ */

static int apply_op(struct store *st, MDB_txn *txn, const struct store_op *op)
{
    MDB_val k = {.mv_size = op->klen, .mv_data = (void *)op->data};
    if (op->del) {
        int rc = mdb_del(txn, st->dbi[op->db], &k, NULL);
        return rc == MDB_NOTFOUND ? MDB_SUCCESS : rc;
    }
    MDB_val v = {.mv_size = op->vlen, .mv_data = (void *)(op->data + op->klen)};
    return mdb_put(txn, st->dbi[op->db], &k, &v, 0);
}

/* One write transaction for the whole batch: all of it is applied, or none. A failure
 * is described in b->why for the loop thread, which decides what to log. */
static int commit_batch(struct store *st, struct batch *b)
{
    b->why[0] = '\0';
    if (!b->head)
        return TS_OK; /* callbacks only: nothing to make durable */
    MDB_txn *txn;
    int rc = mdb_txn_begin(st->env, NULL, 0, &txn);
    if (rc != MDB_SUCCESS) {
        snprintf(b->why, sizeof(b->why), "cannot begin a write transaction: %s",
                 mdb_strerror(rc));
        return mdb_to_ts(rc);
    }
    for (const struct store_op *op = b->head; op; op = op->next) {
        rc = apply_op(st, txn, op);
        if (rc != MDB_SUCCESS) {
            mdb_txn_abort(txn);
            snprintf(b->why, sizeof(b->why), "%s in \"%s\" failed: %s",
                     op->del ? "delete" : "put", db_names[op->db], mdb_strerror(rc));
            return mdb_to_ts(rc);
        }
    }
    /* mdb_txn_commit frees the transaction even when it fails. */
    rc = mdb_txn_commit(txn);
    if (rc != MDB_SUCCESS) {
        snprintf(b->why, sizeof(b->why), "commit failed: %s", mdb_strerror(rc));
        return mdb_to_ts(rc);
    }
    return TS_OK;
}

static void *writer_main(void *arg)
{
    struct store *st = arg;
    pthread_mutex_lock(&st->lock);
    for (;;) {
        while (!st->todo && !st->stop)
            pthread_cond_wait(&st->work_cond, &st->lock);
        if (!st->todo)
            break;
        struct batch *b = st->todo;
        st->todo = NULL;
        pthread_mutex_unlock(&st->lock);

        b->result = commit_batch(st, b);

        pthread_mutex_lock(&st->lock);
        st->done = b;
        pthread_cond_signal(&st->done_cond);
        uint64_t one = 1;
        if (write(st->donefd, &one, sizeof(one)) < 0 && errno != EAGAIN)
            log_error("store: eventfd write failed: %s", strerror(errno));
    }
    pthread_mutex_unlock(&st->lock);
    return NULL;
}

/* The writer must never take a signal meant for the loop's signalfd: with the signal
 * unblocked there, the kernel could deliver it to the writer instead. */
static int start_writer(struct store *st)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&st->writer, NULL, writer_main, st);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        log_error("store: cannot start writer thread: %s", strerror(rc));
        return TS_ESYS;
    }
    st->writer_started = true;
    return TS_OK;
}

static void stop_writer(struct store *st)
{
    if (!st->writer_started)
        return;
    pthread_mutex_lock(&st->lock);
    st->stop = true;
    pthread_cond_signal(&st->work_cond);
    pthread_mutex_unlock(&st->lock);
    pthread_join(st->writer, NULL);
    st->writer_started = false;
}

/* ---- handing batches over and completing them (loop thread) ------------------------ */

static void hand_over(struct store *st, struct batch *b)
{
    st->inflight = b;
    pthread_mutex_lock(&st->lock);
    st->todo = b;
    pthread_cond_signal(&st->work_cond);
    pthread_mutex_unlock(&st->lock);
}

void store_flush(struct store *st)
{
    /* While the writer is busy the open batch keeps growing: that is the group commit.
     * Behind a failed batch it waits too: batches commit in order or not at all. */
    if (st->inflight || st->failed || batch_empty(st->open))
        return;
    struct batch *b = st->open;
    st->open = NULL;
    hand_over(st, b);
}

/* Run b's callbacks with err and free it. Callbacks may queue more work; it lands in the
 * next open batch. */
static void batch_finish(struct batch *b, int err)
{
    for (size_t i = 0; i < b->ncbs; i++)
        b->cbs[i].cb(b->cbs[i].arg, err);
    batch_destroy(b);
}

static void tell_health(struct store *st, int err)
{
    if (st->health_cb)
        st->health_cb(st->health_arg, err);
}

static void retry_fired(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct store *st = arg;
    st->retry_timer = NULL;
    struct batch *b = st->failed;
    st->failed = NULL;
    if (b)
        hand_over(st, b);
}

/* b failed: keep it, and try it again after the back-off. The episode's first failure
 * is logged; the retries only at debug level. */
static void batch_failed(struct store *st, struct batch *b)
{
    st->failed = b;
    st->failing_attempts++;
    if (!st->failing) {
        st->failing = true;
        st->failing_since_ms = loop_now_ms(st->loop);
        st->backoff_ms = STORE_RETRY_FIRST_MS;
        log_error("store: cannot commit %zu change%s (%s); retrying until it works, and "
                  "new changes are refused meanwhile",
                  b->nops, b->nops == 1 ? "" : "s", b->why);
        tell_health(st, b->result);
    } else {
        log_debug("store: commit retry %llu failed (%s)",
                  (unsigned long long)st->failing_attempts, b->why);
        st->backoff_ms = st->backoff_ms * 2 > STORE_RETRY_MAX_MS ? STORE_RETRY_MAX_MS
                                                                 : st->backoff_ms * 2;
    }
    /* Without a timer (out of memory) the prepare hook's flush cannot go past the failed
     * batch: retry_fired hands it over at once instead, once per loop iteration. */
    st->retry_timer = loop_timer_add(st->loop, st->backoff_ms, 0, retry_fired, st);
    if (!st->retry_timer)
        log_error("store: out of memory for the retry timer");
}

static void recovered(struct store *st)
{
    if (!st->failing)
        return;
    st->failing = false;
    log_info("store: commits work again, after %llu failed attempts in %llu ms",
             (unsigned long long)st->failing_attempts,
             (unsigned long long)(loop_now_ms(st->loop) - st->failing_since_ms));
    st->failing_attempts = 0;
    tell_health(st, TS_OK);
}

/* Drop b and every batch queued behind it: their callbacks learn the error. */
static void give_up(struct store *st, struct batch *b)
{
    size_t nops = b->nops, nbatches = 1;
    struct batch *behind = st->open;
    st->open = NULL;
    if (behind) {
        nops += behind->nops;
        nbatches++;
    }
    log_error("store: giving up on %zu changes in %zu batch%s (%s): none of them was "
              "acknowledged, and the state on disk stays as it was before them",
              nops, nbatches, nbatches == 1 ? "" : "es", b->why);
    st->stats.given_up += nbatches;
    int err = b->result;
    batch_finish(b, err);
    if (behind)
        batch_finish(behind, err);
}

/* Take the writer's finished batch, if any, and run its callbacks; returns its result
 * (TS_OK when there was none). A failed batch is kept for a retry, or given up when
 * final (store_sync). */
static int complete_done(struct store *st, bool final)
{
    pthread_mutex_lock(&st->lock);
    struct batch *b = st->done;
    st->done = NULL;
    pthread_mutex_unlock(&st->lock);
    if (!b)
        return TS_OK;

    st->inflight = NULL;
    int result = b->result;
    if (result != TS_OK) {
        st->stats.failures++;
        if (final)
            give_up(st, b);
        else
            batch_failed(st, b);
        store_flush(st);
        return result;
    }
    if (b->nops) {
        st->stats.batches++;
        st->stats.ops += b->nops;
        if (b->nops > st->stats.max_batch)
            st->stats.max_batch = b->nops;
    }
    recovered(st);
    batch_finish(b, TS_OK);
    store_flush(st);
    return result;
}

static void on_done(struct loop *loop, int fd, unsigned events, void *arg)
{
    struct store *st = arg;
    uint64_t count;
    (void)!read(fd, &count, sizeof(count));
    complete_done(st, false);
}

static void on_prepare(struct loop *loop, void *arg)
{
    struct store *st = arg;
    if (st->failed && !st->retry_timer)
        retry_fired(loop, NULL, st); /* no timer could be armed: retry once a turn */
    store_flush(st);
}

int store_sync(struct store *st)
{
    int first_err = TS_OK;
    if (st->failed) { /* once more, now, rather than after the back-off */
        loop_timer_cancel(st->loop, st->retry_timer);
        retry_fired(st->loop, NULL, st);
    }
    store_flush(st);
    while (st->inflight) {
        pthread_mutex_lock(&st->lock);
        while (!st->done)
            pthread_cond_wait(&st->done_cond, &st->lock);
        pthread_mutex_unlock(&st->lock);
        /* Also hands the next open batch over, so the loop ends when nothing is left. */
        int rc = complete_done(st, true);
        if (rc != TS_OK && first_err == TS_OK)
            first_err = rc;
    }
    return first_err;
}

int store_failing(const struct store *st)
{
    return st->failing;
}

void store_on_health(struct store *st, store_health_cb cb, void *arg)
{
    st->health_cb = cb;
    st->health_arg = arg;
}

int store_free_space(const struct store *st, uint64_t *bytes)
{
    int fd;
    struct statvfs sv;
    *bytes = 0;
    if (mdb_env_get_fd(st->env, &fd) != MDB_SUCCESS || fstatvfs(fd, &sv) != 0)
        return TS_ESYS;
    *bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    return TS_OK;
}

int store_had_state(const struct store *st)
{
    return st->had_state;
}

/* ---- open and close ----------------------------------------------------------------- */

static int open_env(struct store *st, const char *path, size_t map_size)
{
    int rc = mdb_env_create(&st->env);
    if (rc != MDB_SUCCESS)
        return mdb_to_ts(rc);
    if ((rc = mdb_env_set_maxdbs(st->env, STORE_DB_COUNT)) != MDB_SUCCESS ||
        (rc = mdb_env_set_mapsize(st->env, map_size)) != MDB_SUCCESS)
        goto error;
    /* No MDB_NOSYNC, MDB_NOMETASYNC or MDB_MAPASYNC: a commit that returns is on disk.
     * MDB_NOTLS: read transactions are not tied to the thread that started them. */
    rc = mdb_env_open(st->env, path, MDB_NOTLS, 0600);
    if (rc != MDB_SUCCESS)
        goto error;
    return TS_OK;

error:
    log_error("store: cannot open environment in %s: %s", path, mdb_strerror(rc));
    mdb_env_close(st->env);
    st->env = NULL;
    return rc == ENOENT ? TS_ENOENT : rc == EACCES ? TS_EPERM : mdb_to_ts(rc);
}

/* Create every named database up front, in one transaction, before the writer exists. */
static int open_dbs(struct store *st)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(st->env, NULL, 0, &txn);
    if (rc != MDB_SUCCESS)
        goto error;
    for (int i = 0; i < STORE_DB_COUNT; i++) {
        rc = mdb_dbi_open(txn, db_names[i], MDB_CREATE, &st->dbi[i]);
        if (rc != MDB_SUCCESS) {
            mdb_txn_abort(txn);
            goto error;
        }
    }
    rc = mdb_txn_commit(txn);
    if (rc != MDB_SUCCESS)
        goto error;
    return TS_OK;

error:
    log_error("store: cannot create databases: %s", mdb_strerror(rc));
    return mdb_to_ts(rc);
}

static int init_sync(struct store *st)
{
    if (pthread_mutex_init(&st->lock, NULL) != 0)
        return TS_ESYS;
    if (pthread_cond_init(&st->work_cond, NULL) != 0)
        goto error_lock;
    if (pthread_cond_init(&st->done_cond, NULL) != 0)
        goto error_work;
    return TS_OK;

error_work:
    pthread_cond_destroy(&st->work_cond);
error_lock:
    pthread_mutex_destroy(&st->lock);
    return TS_ESYS;
}

static void store_free(struct store *st)
{
    loop_timer_cancel(st->loop, st->retry_timer);
    if (st->hook_added)
        loop_prepare_remove(st->loop, on_prepare, st);
    if (st->donefd >= 0) {
        loop_fd_remove(st->loop, st->donefd);
        close(st->donefd);
    }
    if (st->env)
        mdb_env_close(st->env);
    batch_destroy(st->open);
    batch_destroy(st->failed);
    pthread_cond_destroy(&st->done_cond);
    pthread_cond_destroy(&st->work_cond);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

int store_open(struct loop *loop, const char *path, size_t map_size, struct store **out)
{
    *out = NULL;
    if (!loop || !path)
        return TS_EINVAL;
    struct store *st = calloc(1, sizeof(*st));
    if (!st)
        return TS_ENOMEM;
    st->loop = loop;
    st->donefd = -1;
    int rc = init_sync(st);
    if (rc != TS_OK) {
        free(st);
        return rc;
    }
    if (map_size == 0)
        map_size = STORE_DEFAULT_MAP_SIZE;
    char why[1024];
    /* before LMDB maps it: a damaged file is refused, a lost one never taken for new */
    st->had_state = store_file_marked(path);
    if ((rc = store_file_check(path, NULL, why, sizeof(why))) != TS_OK) {
        log_error("store: %s", why);
        goto error;
    }
    if ((rc = open_env(st, path, map_size)) != TS_OK || (rc = open_dbs(st)) != TS_OK)
        goto error;
    st->donefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (st->donefd < 0) {
        rc = TS_ESYS;
        goto error;
    }
    if ((rc = loop_fd_add(loop, st->donefd, LOOP_READ, on_done, st)) != TS_OK)
        goto error_fd;
    if ((rc = loop_prepare_add(loop, on_prepare, st)) != TS_OK)
        goto error;
    st->hook_added = true;
    if ((rc = start_writer(st)) != TS_OK)
        goto error;
    *out = st;
    return TS_OK;

error_fd:
    close(st->donefd);
    st->donefd = -1;
error:
    store_free(st);
    return rc;
}

int store_close(struct store *st)
{
    if (!st)
        return TS_OK;
    int err = store_sync(st);
    stop_writer(st);
    store_free(st);
    return err;
}

/* ---- reads ------------------------------------------------------------------------- */

int store_get(struct store *st, enum store_db db, const void *key, size_t klen, void **val,
              size_t *vlen)
{
    *val = NULL;
    *vlen = 0;
    if ((unsigned)db >= STORE_DB_COUNT || !key || klen == 0 || klen > STORE_MAX_KEY)
        return TS_EINVAL;
    MDB_txn *txn;
    int rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
    if (rc != MDB_SUCCESS)
        return mdb_to_ts(rc);
    MDB_val k = {.mv_size = klen, .mv_data = (void *)key}, v;
    rc = mdb_get(txn, st->dbi[db], &k, &v);
    if (rc == MDB_SUCCESS) {
        /* One spare byte so that an empty value still gets a real allocation. */
        void *copy = malloc(v.mv_size + 1);
        if (copy) {
            memcpy(copy, v.mv_data, v.mv_size);
            *val = copy;
            *vlen = v.mv_size;
        } else {
            rc = ENOMEM;
        }
    }
    mdb_txn_abort(txn);
    return mdb_to_ts(rc);
}

int store_foreach(struct store *st, enum store_db db, store_visit_cb cb, void *arg)
{
    if ((unsigned)db >= STORE_DB_COUNT || !cb)
        return TS_EINVAL;
    MDB_txn *txn;
    MDB_cursor *cur;
    int rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
    if (rc != MDB_SUCCESS)
        return mdb_to_ts(rc);
    rc = mdb_cursor_open(txn, st->dbi[db], &cur);
    if (rc != MDB_SUCCESS) {
        mdb_txn_abort(txn);
        return mdb_to_ts(rc);
    }
    MDB_val k, v;
    int ret = TS_OK;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        ret = cb(arg, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
        if (ret != 0)
            break;
    }
    if (ret == 0 && rc != MDB_NOTFOUND)
        ret = mdb_to_ts(rc);
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return ret;
}

struct store_reader {
    struct store *st;
    MDB_txn *txn;
};

int store_reader_open(struct store *st, struct store_reader **out)
{
    *out = NULL;
    struct store_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return TS_ENOMEM;
    int rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &r->txn);
    if (rc != MDB_SUCCESS) {
        free(r);
        return mdb_to_ts(rc);
    }
    r->st = st;
    *out = r;
    return TS_OK;
}

void store_reader_close(struct store_reader *r)
{
    if (!r)
        return;
    mdb_txn_abort(r->txn);
    free(r);
}

int store_reader_get(struct store_reader *r, enum store_db db, const void *key, size_t klen,
                     const void **val, size_t *vlen)
{
    if ((unsigned)db >= STORE_DB_COUNT || klen == 0 || klen > STORE_MAX_KEY)
        return TS_EINVAL;
    MDB_val k = {.mv_size = klen, .mv_data = (void *)key}, v;
    int rc = mdb_get(r->txn, r->st->dbi[db], &k, &v);
    if (rc != MDB_SUCCESS)
        return mdb_to_ts(rc);
    *val = v.mv_data;
    *vlen = v.mv_size;
    return TS_OK;
}

/* memcmp order with the shorter key first on a tie: LMDB's default key order */
static int key_cmp(const void *a, size_t alen, const void *b, size_t blen)
{
    int d = memcmp(a, b, alen < blen ? alen : blen);
    return d ? d : alen < blen ? -1 : alen > blen;
}

int store_reader_range(struct store_reader *r, enum store_db db, const void *from,
                       size_t flen, const void *to, size_t tlen, store_visit_cb cb, void *arg)
{
    if ((unsigned)db >= STORE_DB_COUNT || !cb || flen > STORE_MAX_KEY)
        return TS_EINVAL;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(r->txn, r->st->dbi[db], &cur);
    if (rc != MDB_SUCCESS)
        return mdb_to_ts(rc);
    MDB_val k = {.mv_size = flen, .mv_data = (void *)from}, v;
    int ret = TS_OK;
    for (rc = mdb_cursor_get(cur, &k, &v, flen ? MDB_SET_RANGE : MDB_FIRST);
         rc == MDB_SUCCESS; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (to && key_cmp(k.mv_data, k.mv_size, to, tlen) > 0)
            break;
        ret = cb(arg, k.mv_data, k.mv_size, v.mv_data, v.mv_size);
        if (ret != 0)
            break;
    }
    if (ret == 0 && rc != MDB_SUCCESS && rc != MDB_NOTFOUND)
        ret = mdb_to_ts(rc);
    mdb_cursor_close(cur);
    return ret;
}

void store_get_stats(const struct store *st, struct store_stats *out)
{
    *out = st->stats;
}
