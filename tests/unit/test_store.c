/* Unit tests for the LMDB store with group commit (ctld/store.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "ctld/store.h"

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 5000

struct fixture {
    char dir[64];
    struct loop *loop;
    struct store *st;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char file[512];
        snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
        unlink(file);
    }
    closedir(d);
    rmdir(path);
}

/* A temporary folder and a loop, but no store: for tests that open their own. */
static int setup_dir(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/tessera-store-XXXXXX");
    if (!mkdtemp(f->dir) || !(f->loop = loop_create())) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int setup(void **state)
{
    if (setup_dir(state) != 0)
        return -1;
    struct fixture *f = *state;
    return store_open(f->loop, f->dir, 64u << 20, &f->st) == TS_OK ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    store_close(f->st);
    loop_destroy(f->loop);
    remove_dir(f->dir);
    free(f);
    return 0;
}

static void reopen(struct fixture *f, size_t map_size)
{
    store_close(f->st);
    f->st = NULL;
    assert_int_equal(store_open(f->loop, f->dir, map_size, &f->st), TS_OK);
}

struct commit_wait {
    bool done;
    int err;
    int calls;
};

static void on_commit(void *arg, int err)
{
    struct commit_wait *w = arg;
    w->done = true;
    w->err = err;
    w->calls++;
}

static void run_until(struct loop *loop, const bool *flag)
{
    uint64_t end = now_ms() + DEADLINE_MS;
    while (!*flag) {
        assert_true(now_ms() < end);
        assert_int_equal(loop_run_once(loop, 50), TS_OK);
    }
}

/* Wait for everything queued so far, through the loop; returns the batch's result. */
static int commit(struct fixture *f)
{
    struct commit_wait w = {0};
    assert_int_equal(store_after_commit(f->st, on_commit, &w), TS_OK);
    run_until(f->loop, &w.done);
    assert_int_equal(w.calls, 1);
    return w.err;
}

static void put_str(struct fixture *f, enum store_db db, const char *key, const char *val)
{
    assert_int_equal(store_put(f->st, db, key, strlen(key), val, strlen(val)), TS_OK);
}

static void assert_value(struct fixture *f, enum store_db db, const char *key, const char *expect)
{
    void *val;
    size_t vlen;
    int rc = store_get(f->st, db, key, strlen(key), &val, &vlen);
    if (!expect) {
        assert_int_equal(rc, TS_ENOENT);
        assert_null(val);
        return;
    }
    assert_int_equal(rc, TS_OK);
    assert_int_equal(vlen, strlen(expect));
    assert_memory_equal(val, expect, vlen);
    free(val);
}

/* ---- round trips ------------------------------------------------------------------------ */

struct visit {
    uint64_t keys[32];
    int n;
    int stop_at;
};

static int visit_cb(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct visit *v = arg;
    assert_int_equal(klen, 8);
    assert_int_equal(vlen, 8);
    uint64_t k = store_key_get_u64(key);
    assert_int_equal(k * 10, store_key_get_u64(val));
    v->keys[v->n++] = k;
    return v->n == v->stop_at ? 42 : 0;
}

static void test_roundtrip(void **state)
{
    struct fixture *f = *state;
    assert_string_equal(store_db_name(STORE_DB_JOBS), "jobs");
    assert_string_equal(store_db_name(STORE_DB_FAIRSHARE), "fairshare");

    put_str(f, STORE_DB_META, "schema", "1");
    put_str(f, STORE_DB_NODES, "schema", "nodes-value");
    assert_int_equal(store_put(f->st, STORE_DB_META, "empty", 5, NULL, 0), TS_OK);
    /* Numeric keys, queued in descending order, come back in ascending order. */
    for (uint64_t i = 20; i >= 1; i--) {
        uint8_t k[8], v[8];
        store_key_u64(k, i * 1000);
        store_key_u64(v, i * 10000);
        assert_int_equal(store_put(f->st, STORE_DB_JOBS, k, 8, v, 8), TS_OK);
    }
    assert_int_equal(commit(f), TS_OK);

    assert_value(f, STORE_DB_META, "schema", "1");
    assert_value(f, STORE_DB_NODES, "schema", "nodes-value");
    assert_value(f, STORE_DB_STEPS, "schema", NULL);
    assert_value(f, STORE_DB_META, "empty", "");

    struct visit v = {.stop_at = -1};
    assert_int_equal(store_foreach(f->st, STORE_DB_JOBS, visit_cb, &v), TS_OK);
    assert_int_equal(v.n, 20);
    for (int i = 0; i < 20; i++)
        assert_int_equal(v.keys[i], (uint64_t)(i + 1) * 1000);
    struct visit stop = {.stop_at = 3};
    assert_int_equal(store_foreach(f->st, STORE_DB_JOBS, visit_cb, &stop), 42);
    assert_int_equal(stop.n, 3);
    struct visit none = {.stop_at = -1};
    assert_int_equal(store_foreach(f->st, STORE_DB_STEPS, visit_cb, &none), TS_OK);
    assert_int_equal(none.n, 0);

    /* Overwrite, delete, and delete a key that is not there (not an error). */
    put_str(f, STORE_DB_META, "schema", "2");
    assert_int_equal(store_del(f->st, STORE_DB_NODES, "schema", 6), TS_OK);
    assert_int_equal(store_del(f->st, STORE_DB_NODES, "missing", 7), TS_OK);
    assert_int_equal(commit(f), TS_OK);
    assert_value(f, STORE_DB_META, "schema", "2");
    assert_value(f, STORE_DB_NODES, "schema", NULL);

    /* Still there after reopening, even with another map size. */
    reopen(f, 128u << 20);
    assert_value(f, STORE_DB_META, "schema", "2");
    struct visit again = {.stop_at = -1};
    assert_int_equal(store_foreach(f->st, STORE_DB_JOBS, visit_cb, &again), TS_OK);
    assert_int_equal(again.n, 20);

    uint8_t k[8];
    store_key_u64(k, 0x0102030405060708u);
    static const uint8_t be[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_memory_equal(k, be, 8);
}

/* A reader is one snapshot: ranges are inclusive at both ends, stop when asked, and do
 * not see what commits after the reader opened. */
static void test_reader_range(void **state)
{
    struct fixture *f = *state;
    for (uint64_t k = 1; k <= 20; k++) {
        uint8_t key[8], val[8];
        store_key_u64(key, k);
        store_key_u64(val, k * 10);
        assert_int_equal(store_put(f->st, STORE_DB_ACCT_BY_END, key, 8, val, 8), TS_OK);
    }
    assert_int_equal(commit(f), TS_OK);
    struct store_reader *rd;
    assert_int_equal(store_reader_open(f->st, &rd), TS_OK);
    uint8_t from[8], to[8];
    store_key_u64(from, 5);
    store_key_u64(to, 9);
    struct visit v = {.stop_at = -1};
    assert_int_equal(store_reader_range(rd, STORE_DB_ACCT_BY_END, from, 8, to, 8, visit_cb, &v),
                     TS_OK);
    assert_int_equal(v.n, 5);
    assert_int_equal(v.keys[0], 5);
    assert_int_equal(v.keys[4], 9);
    /* open-ended, from nothing, and stopped by the callback */
    struct visit all = {.stop_at = -1}, some = {.stop_at = 3};
    assert_int_equal(store_reader_range(rd, STORE_DB_ACCT_BY_END, NULL, 0, NULL, 0, visit_cb,
                                        &all), TS_OK);
    assert_int_equal(all.n, 20);
    assert_int_equal(store_reader_range(rd, STORE_DB_ACCT_BY_END, from, 8, NULL, 0, visit_cb,
                                        &some), 42);
    assert_int_equal(some.n, 3);
    assert_int_equal(some.keys[2], 7);
    /* a range past the last key is empty */
    store_key_u64(from, 21);
    struct visit none = {.stop_at = -1};
    assert_int_equal(store_reader_range(rd, STORE_DB_ACCT_BY_END, from, 8, NULL, 0, visit_cb,
                                        &none), TS_OK);
    assert_int_equal(none.n, 0);
    /* get, and the snapshot: a later commit is not seen by this reader */
    uint8_t key[8];
    store_key_u64(key, 7);
    const void *val;
    size_t vlen;
    assert_int_equal(store_reader_get(rd, STORE_DB_ACCT_BY_END, key, 8, &val, &vlen), TS_OK);
    assert_int_equal(store_key_get_u64(val), 70);
    assert_int_equal(store_del(f->st, STORE_DB_ACCT_BY_END, key, 8), TS_OK);
    assert_int_equal(commit(f), TS_OK);
    assert_int_equal(store_reader_get(rd, STORE_DB_ACCT_BY_END, key, 8, &val, &vlen), TS_OK);
    store_reader_close(rd);
    assert_int_equal(store_reader_open(f->st, &rd), TS_OK);
    assert_int_equal(store_reader_get(rd, STORE_DB_ACCT_BY_END, key, 8, &val, &vlen),
                     TS_ENOENT);
    store_reader_close(rd);
}

static void test_not_visible_before_commit(void **state)
{
    struct fixture *f = *state;
    put_str(f, STORE_DB_JOBS, "job", "queued");
    assert_value(f, STORE_DB_JOBS, "job", NULL);
    assert_int_equal(commit(f), TS_OK);
    assert_value(f, STORE_DB_JOBS, "job", "queued");

    assert_int_equal(store_del(f->st, STORE_DB_JOBS, "job", 3), TS_OK);
    assert_value(f, STORE_DB_JOBS, "job", "queued");
    assert_int_equal(commit(f), TS_OK);
    assert_value(f, STORE_DB_JOBS, "job", NULL);
}

static void test_key_limits(void **state)
{
    struct fixture *f = *state;
    char key[512];
    memset(key, 'k', sizeof(key));
    assert_int_equal(store_put(f->st, STORE_DB_JOBS, key, 512, "v", 1), TS_EINVAL);
    assert_int_equal(store_del(f->st, STORE_DB_JOBS, key, 512), TS_EINVAL);
    assert_int_equal(store_put(f->st, STORE_DB_JOBS, key, 0, "v", 1), TS_EINVAL);
    assert_int_equal(store_put(f->st, STORE_DB_COUNT, "k", 1, "v", 1), TS_EINVAL);
    void *val;
    size_t vlen;
    assert_int_equal(store_get(f->st, STORE_DB_JOBS, key, 512, &val, &vlen), TS_EINVAL);

    assert_int_equal(store_put(f->st, STORE_DB_JOBS, key, 511, "v", 1), TS_OK);
    assert_int_equal(commit(f), TS_OK);
    assert_int_equal(store_get(f->st, STORE_DB_JOBS, key, 511, &val, &vlen), TS_OK);
    assert_int_equal(vlen, 1);
    free(val);
}

/* ---- after-commit callbacks and group commit ----------------------------------------- */

struct order_log {
    int seq[16];
    int errs[16];
    int n;
};

struct order_entry {
    struct order_log *log;
    int tag;
};

static void log_order(void *arg, int err)
{
    struct order_entry *e = arg;
    e->log->errs[e->log->n] = err;
    e->log->seq[e->log->n++] = e->tag;
}

static void order_entries(struct order_log *log, struct order_entry *e, int n)
{
    for (int i = 0; i < n; i++)
        e[i] = (struct order_entry){log, i};
}

/* Callbacks 0..n-1 ran, in that order, each with err. */
static void expect_in_order(const struct order_log *log, int n, int err)
{
    assert_int_equal(log->n, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(log->seq[i], i);
        assert_int_equal(log->errs[i], err);
    }
}

static void test_after_commit_order(void **state)
{
    struct fixture *f = *state;
    struct order_log log = {0};
    struct order_entry e[6];
    order_entries(&log, e, 6);

    put_str(f, STORE_DB_JOBS, "a", "1");
    assert_int_equal(store_after_commit(f->st, log_order, &e[0]), TS_OK);
    put_str(f, STORE_DB_JOBS, "b", "2");
    assert_int_equal(store_after_commit(f->st, log_order, &e[1]), TS_OK);
    /* Hand this batch to the writer; the next one accumulates behind it. */
    store_flush(f->st);
    put_str(f, STORE_DB_JOBS, "c", "3");
    assert_int_equal(store_after_commit(f->st, log_order, &e[2]), TS_OK);
    assert_int_equal(store_after_commit(f->st, log_order, &e[3]), TS_OK);
    store_flush(f->st); /* the writer is busy (or its result unread): stays open */
    assert_int_equal(store_after_commit(f->st, log_order, &e[4]), TS_OK);
    assert_int_equal(log.n, 0);

    struct commit_wait w = {0};
    assert_int_equal(store_after_commit(f->st, on_commit, &w), TS_OK);
    run_until(f->loop, &w.done);
    expect_in_order(&log, 5, TS_OK);
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_int_equal(stats.batches, 2);
    assert_int_equal(stats.ops, 3);
}

static void test_after_commit_empty_is_async(void **state)
{
    struct fixture *f = *state;
    struct commit_wait w = {0};
    assert_int_equal(store_after_commit(f->st, on_commit, &w), TS_OK);
    assert_false(w.done);
    run_until(f->loop, &w.done);
    assert_int_equal(w.err, TS_OK);
    assert_int_equal(w.calls, 1);
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_int_equal(stats.batches, 0); /* no write transaction for nothing */
}

static void test_group_commit(void **state)
{
    struct fixture *f = *state;
    for (uint64_t i = 0; i < 1000; i++) {
        uint8_t k[8];
        store_key_u64(k, i);
        assert_int_equal(store_put(f->st, STORE_DB_ACCT_JOBS, k, 8, "record", 6), TS_OK);
    }
    assert_int_equal(commit(f), TS_OK);
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_int_equal(stats.batches, 1);
    assert_int_equal(stats.ops, 1000);
    assert_int_equal(stats.max_batch, 1000);
    assert_int_equal(stats.failures, 0);
}

/* Changes keep coming in every iteration; while the writer commits one batch the next
 * one accumulates, so there are never more transactions than iterations. */
struct load_ctx {
    struct fixture *f;
    int iterations;
    int acked;
};

static void load_ack(void *arg, int err)
{
    struct load_ctx *ctx = arg;
    assert_int_equal(err, TS_OK);
    ctx->acked++;
}

static void load_hook(struct loop *loop, void *arg)
{
    struct load_ctx *ctx = arg;
    if (ctx->iterations >= 200)
        return;
    for (int i = 0; i < 5; i++) {
        uint8_t k[8];
        store_key_u64(k, (uint64_t)ctx->iterations * 5 + (uint64_t)i);
        assert_int_equal(store_put(ctx->f->st, STORE_DB_JOBS, k, 8, "x", 1), TS_OK);
    }
    assert_int_equal(store_after_commit(ctx->f->st, load_ack, ctx), TS_OK);
    ctx->iterations++;
}

static void test_group_commit_under_load(void **state)
{
    struct fixture *f = *state;
    struct load_ctx ctx = {.f = f};
    /* Added after the store's hook: the hook's changes wait for the next iteration. */
    assert_int_equal(loop_prepare_add(f->loop, load_hook, &ctx), TS_OK);
    uint64_t end = now_ms() + DEADLINE_MS;
    while (ctx.acked < 200) {
        assert_true(now_ms() < end);
        assert_int_equal(loop_run_once(f->loop, 0), TS_OK);
    }
    assert_int_equal(loop_prepare_remove(f->loop, load_hook, &ctx), TS_OK);
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_int_equal(stats.ops, 1000);
    assert_true(stats.batches <= 200);
    assert_true(stats.max_batch >= 5);
    print_message("under load: %llu batches for 200 iterations, largest %llu\n",
                  (unsigned long long)stats.batches, (unsigned long long)stats.max_batch);
}

static void chain_cb(void *arg, int err);

struct chain_ctx {
    struct fixture *f;
    int links;
    bool done;
};

static void chain_cb(void *arg, int err)
{
    struct chain_ctx *ctx = arg;
    assert_int_equal(err, TS_OK);
    if (++ctx->links == 5) {
        ctx->done = true;
        return;
    }
    /* A callback may queue the next change and wait for it in turn. */
    char key[16];
    snprintf(key, sizeof(key), "l%d", ctx->links);
    put_str(ctx->f, STORE_DB_META, key, "x");
    assert_int_equal(store_after_commit(ctx->f->st, chain_cb, ctx), TS_OK);
}

static void test_callback_queues_more(void **state)
{
    struct fixture *f = *state;
    struct chain_ctx ctx = {.f = f};
    assert_int_equal(store_after_commit(f->st, chain_cb, &ctx), TS_OK);
    run_until(f->loop, &ctx.done);
    assert_value(f, STORE_DB_META, "l4", "x");
}

/* ---- sync, close, durability ---------------------------------------------------------- */

static void test_sync(void **state)
{
    struct fixture *f = *state;
    struct commit_wait w1 = {0}, w2 = {0};
    put_str(f, STORE_DB_JOBS, "one", "1");
    assert_int_equal(store_after_commit(f->st, on_commit, &w1), TS_OK);
    store_flush(f->st);
    put_str(f, STORE_DB_JOBS, "two", "2");
    assert_int_equal(store_after_commit(f->st, on_commit, &w2), TS_OK);
    assert_int_equal(store_sync(f->st), TS_OK);
    assert_true(w1.done && w2.done);
    assert_value(f, STORE_DB_JOBS, "two", "2");
    assert_int_equal(store_sync(f->st), TS_OK); /* nothing queued */
    /* The writer's wake-up may still be pending: running the loop must be harmless. */
    assert_int_equal(loop_run_once(f->loop, 0), TS_OK);
    assert_int_equal(w1.calls + w2.calls, 2);
}

static void test_close_reopen(void **state)
{
    struct fixture *f = *state;
    struct commit_wait w = {0};
    put_str(f, STORE_DB_COUNTERS, "next_job_id", "1001");
    put_str(f, STORE_DB_FAIRSHARE, "alice", "0.5");
    assert_int_equal(store_after_commit(f->st, on_commit, &w), TS_OK);
    /* Close commits the queued changes and runs the pending callback. */
    store_close(f->st);
    f->st = NULL;
    assert_true(w.done);
    assert_int_equal(w.err, TS_OK);

    assert_int_equal(store_open(f->loop, f->dir, 64u << 20, &f->st), TS_OK);
    assert_value(f, STORE_DB_COUNTERS, "next_job_id", "1001");
    assert_value(f, STORE_DB_FAIRSHARE, "alice", "0.5");
    /* The closed store's hooks are gone: iterating must not touch it. */
    assert_int_equal(loop_run_once(f->loop, 0), TS_OK);
}

static void test_open_missing_dir(void **state)
{
    struct fixture *f = *state;
    struct store *st = (struct store *)1;
    char path[128];
    snprintf(path, sizeof(path), "%s/does-not-exist", f->dir);
    assert_int_not_equal(store_open(f->loop, path, 1u << 20, &st), TS_OK);
    assert_null(st);
}

/* What the store said about its health, through store_on_health. */
struct health_log {
    int errs[16];
    int n;
};

static void on_health(void *arg, int err)
{
    struct health_log *h = arg;
    if (h->n < 16)
        h->errs[h->n++] = err;
}

/* Run the loop until the store has failed at least `failures` commit attempts. */
static void run_until_failures(struct fixture *f, uint64_t failures)
{
    uint64_t end = now_ms() + DEADLINE_MS * 2;
    struct store_stats stats;
    for (store_get_stats(f->st, &stats); stats.failures < failures;
         store_get_stats(f->st, &stats)) {
        assert_true(now_ms() < end);
        assert_int_equal(loop_run_once(f->loop, 50), TS_OK);
    }
}

/* A batch that cannot commit (a map too small for it) is neither dropped nor answered:
 * it is retried, what comes later waits behind it, and only store_sync gives up on them
 * all, telling every callback. */
static void test_map_full(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(store_open(f->loop, f->dir, 64u << 10, &f->st), TS_OK);
    struct health_log health = {0};
    store_on_health(f->st, on_health, &health);
    put_str(f, STORE_DB_JOBS, "before", "ok");
    assert_int_equal(commit(f), TS_OK);
    assert_false(store_failing(f->st));

    size_t big_len = 256u << 10;
    char *big = malloc(big_len);
    assert_non_null(big);
    memset(big, 'b', big_len);
    struct order_log log = {0};
    struct order_entry e[4];
    order_entries(&log, e, 4);
    put_str(f, STORE_DB_JOBS, "small", "in the failing batch");
    assert_int_equal(store_after_commit(f->st, log_order, &e[0]), TS_OK);
    assert_int_equal(store_put(f->st, STORE_DB_JOBS, "big", 3, big, big_len), TS_OK);
    assert_int_equal(store_after_commit(f->st, log_order, &e[1]), TS_OK);
    free(big);
    store_flush(f->st);
    /* a later batch, queued behind the failing one */
    put_str(f, STORE_DB_JOBS, "later", "behind it");
    assert_int_equal(store_after_commit(f->st, log_order, &e[2]), TS_OK);
    assert_int_equal(store_after_commit(f->st, log_order, &e[3]), TS_OK);

    run_until_failures(f, 3); /* the first attempt and two retries */
    assert_true(store_failing(f->st));
    assert_int_equal(log.n, 0); /* nothing answered while nothing is durable */
    assert_int_equal(health.n, 1);
    assert_int_equal(health.errs[0], TS_ESTORE_FULL);
    assert_value(f, STORE_DB_JOBS, "small", NULL);
    assert_value(f, STORE_DB_JOBS, "later", NULL);

    /* store_sync tries once more, then gives up on both batches, callbacks in order */
    assert_int_equal(store_sync(f->st), TS_ESTORE_FULL);
    expect_in_order(&log, 4, TS_ESTORE_FULL);
    assert_value(f, STORE_DB_JOBS, "small", NULL);
    assert_value(f, STORE_DB_JOBS, "big", NULL);
    assert_value(f, STORE_DB_JOBS, "later", NULL);
    assert_value(f, STORE_DB_JOBS, "before", "ok");
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_true(stats.failures >= 4);
    assert_int_equal(stats.given_up, 2);
    assert_int_equal(stats.batches, 1);

    /* what fits commits again afterwards, and the store says it recovered */
    put_str(f, STORE_DB_JOBS, "after", "ok");
    assert_int_equal(commit(f), TS_OK);
    assert_value(f, STORE_DB_JOBS, "after", "ok");
    assert_false(store_failing(f->st));
    assert_int_equal(health.n, 2);
    assert_int_equal(health.errs[1], TS_OK);
}

/* A disk that fills up (here: the file size limit of the process, which makes LMDB's
 * writes past it fail as they would on a full file system): the batch is retried with a
 * back-off until the space is back, then commits with everything behind it, in order. */
static void test_failed_commit_retried_until_it_works(void **state)
{
    struct fixture *f = *state;
    struct health_log health = {0};
    store_on_health(f->st, on_health, &health);
    put_str(f, STORE_DB_META, "schema", "1");
    assert_int_equal(commit(f), TS_OK);

    char data[600];
    snprintf(data, sizeof(data), "%s/data.mdb", f->dir);
    struct stat stt;
    assert_int_equal(stat(data, &stt), 0);
    struct rlimit old, full;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    full = old;
    full.rlim_cur = (rlim_t)stt.st_size; /* no byte more: the file cannot grow */
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &full), 0);

    size_t big_len = 1u << 20;
    char *big = calloc(1, big_len);
    assert_non_null(big);
    struct order_log log = {0};
    struct order_entry e[3];
    order_entries(&log, e, 3);
    assert_int_equal(store_put(f->st, STORE_DB_JOBS, "big", 3, big, big_len), TS_OK);
    assert_int_equal(store_after_commit(f->st, log_order, &e[0]), TS_OK);
    free(big);
    store_flush(f->st);
    put_str(f, STORE_DB_JOBS, "second", "2");
    assert_int_equal(store_after_commit(f->st, log_order, &e[1]), TS_OK);

    run_until_failures(f, 3);
    struct store_stats stats;
    store_get_stats(f->st, &stats);
    assert_true(store_failing(f->st));
    assert_int_equal(log.n, 0);
    assert_int_equal(health.n, 1); /* told once, however many retries failed */
    assert_int_not_equal(health.errs[0], TS_OK);
    assert_int_equal(stats.batches, 1);
    /* a third change queued while failing waits too */
    put_str(f, STORE_DB_JOBS, "third", "3");
    assert_int_equal(store_after_commit(f->st, log_order, &e[2]), TS_OK);

    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0); /* space is back */
    signal(SIGXFSZ, prev);
    struct commit_wait w = {0};
    assert_int_equal(store_after_commit(f->st, on_commit, &w), TS_OK);
    run_until(f->loop, &w.done);
    assert_int_equal(w.err, TS_OK);
    expect_in_order(&log, 3, TS_OK);
    assert_false(store_failing(f->st));
    assert_int_equal(health.n, 2);
    assert_int_equal(health.errs[1], TS_OK);
    assert_value(f, STORE_DB_JOBS, "second", "2");
    assert_value(f, STORE_DB_JOBS, "third", "3");
    store_get_stats(f->st, &stats);
    assert_int_equal(stats.given_up, 0);
}

#define CRASH_RECORDS 200
#define CRASH_CHILD_ARG "--crash-child"

/* argv[0], to start the crash child (/proc/self/exe would be valgrind under valgrind). */
static const char *self_path;

static void crash_acked(void *arg, int err)
{
    int *result = arg;
    *result = err == TS_OK ? 1 : -1;
}

/* The child: commit records, acknowledge through the pipe, then die without closing.
 * It runs as a fresh exec of this program (see main), so that it neither inherits the
 * test framework's state nor is leak-checked for the store it deliberately abandons. */
static _Noreturn void crash_child(const char *dir, int ack_fd)
{
    struct loop *loop = loop_create();
    struct store *st;
    if (!loop || store_open(loop, dir, 64u << 20, &st) != TS_OK)
        _exit(10);
    int acked = 0;
    for (int i = 0; i < CRASH_RECORDS; i++) {
        uint8_t k[8], v[8];
        store_key_u64(k, (uint64_t)i);
        store_key_u64(v, (uint64_t)i * 7);
        if (store_put(st, STORE_DB_JOBS, k, 8, v, 8) != TS_OK)
            _exit(11);
        /* Spread the records over several batches. */
        if (i % 50 == 49 && loop_run_once(loop, 0) != TS_OK)
            _exit(12);
    }
    if (store_after_commit(st, crash_acked, &acked) != TS_OK)
        _exit(13);
    while (acked == 0)
        if (loop_run_once(loop, 1000) != TS_OK)
            _exit(14);
    if (acked != 1)
        _exit(15);
    /* Unacknowledged work queued after the acknowledgement may or may not survive. */
    uint8_t k[8];
    store_key_u64(k, 1000000);
    store_put(st, STORE_DB_JOBS, k, 8, "x", 1);
    store_flush(st);
    if (write(ack_fd, "A", 1) != 1)
        _exit(16);
    _exit(0); /* no store_close: as if killed right after replying */
}

static void test_crash_durability(void **state)
{
    struct fixture *f = *state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char fd_arg[16];
        close(p[0]);
        snprintf(fd_arg, sizeof(fd_arg), "%d", p[1]);
        execl(self_path, self_path, CRASH_CHILD_ARG, f->dir, fd_arg, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char byte = 0;
    assert_int_equal(read(p[0], &byte, 1), 1);
    assert_int_equal(byte, 'A');
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    assert_int_equal(store_open(f->loop, f->dir, 64u << 20, &f->st), TS_OK);
    for (int i = 0; i < CRASH_RECORDS; i++) {
        uint8_t k[8];
        void *val;
        size_t vlen;
        store_key_u64(k, (uint64_t)i);
        assert_int_equal(store_get(f->st, STORE_DB_JOBS, k, 8, &val, &vlen), TS_OK);
        assert_int_equal(vlen, 8);
        assert_int_equal(store_key_get_u64(val), (uint64_t)i * 7);
        free(val);
    }
    /* The reopened store accepts writes (no stale lock held by the dead writer). */
    put_str(f, STORE_DB_JOBS, "after-crash", "ok");
    assert_int_equal(commit(f), TS_OK);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], CRASH_CHILD_ARG) == 0)
        crash_child(argv[2], atoi(argv[3]));
    self_path = argv[0];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_visible_before_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_commit_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_after_commit_empty_is_async, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_under_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callback_queues_more, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_missing_dir, setup_dir, teardown),
        cmocka_unit_test_setup_teardown(test_map_full, setup_dir, teardown),
        cmocka_unit_test_setup_teardown(test_failed_commit_retried_until_it_works, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_crash_durability, setup_dir, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
