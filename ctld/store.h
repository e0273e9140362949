/* The LMDB state store with group commit.
 *
 * Writes are queued into an open batch by the loop thread. The batch is handed to one
 * writer thread (which owns every LMDB write transaction) at the end of the loop
 * iteration, by a prepare hook, or by store_flush(); while the writer commits one batch,
 * the loop fills the next, so under load many changes share one transaction and one
 * fsync. After a batch commits, the writer posts back to the loop, which runs the batch's
 * after-commit callbacks in order: replies, launches and other effects of a change wait
 * there, so nothing leaves the controller before the change is durable.
 *
 * Reads (store_get, store_foreach) see committed data only; the controller keeps its
 * live state in memory and reads the store at start-up.
 *
 * The environment is opened with an explicit map size and none of MDB_NOSYNC,
 * MDB_NOMETASYNC or MDB_MAPASYNC: a commit that returns is on disk.
 *
 * The store is fail-stop: a batch whose commit fails (a full disk, say) is never dropped.
 * It is retried after a back-off (STORE_RETRY_FIRST_MS, doubling up to
 * STORE_RETRY_MAX_MS), later batches wait behind it in order, and its after-commit
 * callbacks run only once it has committed: whatever waits for them (a reply, a launch)
 * waits too. store_failing() tells the owner to stop taking changes meanwhile; the
 * failure is logged once per episode, and once more when commits work again. Only
 * store_sync() and store_close() give up: they try once more, then drop what cannot be
 * committed and run its callbacks with the error (nothing of it was acknowledged).
 *
 * Before the environment is opened its data file is checked against its meta pages and
 * the folder's marker (ctld/store_file.h): a damaged file is refused, never mapped.
 */
#ifndef TESSERA_COMMON_STORE_H
#define TESSERA_COMMON_STORE_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct store;

/* The named databases of the environment. Numbers are indexes, names are on disk. */
enum store_db {
    STORE_DB_META = 0,     /* "meta": schema version and similar */
    STORE_DB_COUNTERS,     /* "counters": next job id, ... */
    STORE_DB_JOBS,         /* "jobs": live jobs by id */
    STORE_DB_STEPS,        /* "steps": live steps */
    STORE_DB_NODES,        /* "nodes": node state that outlives restarts */
    STORE_DB_ACCT_JOBS,    /* "acct_jobs": accounting records by job id */
    STORE_DB_ACCT_STEPS,   /* "acct_steps": accounting records by job id + step id */
    STORE_DB_ACCT_BY_END,  /* "acct_by_end": end time + job id -> nothing (index) */
    STORE_DB_FAIRSHARE,    /* "fairshare": decayed usage per entity */
    STORE_DB_COUNT
};

const char *store_db_name(enum store_db db);

/* Default map size: the most the environment may ever grow to (address space, not disk;
 * the file grows only as it is used). */
#define STORE_DEFAULT_MAP_SIZE ((size_t)32 << 30)

/* The first retry of a failed commit, and the longest wait between two. */
#define STORE_RETRY_FIRST_MS 100u
#define STORE_RETRY_MAX_MS 2000u

/* Open (creating the folder's files if needed) the environment in folder path, which must
 * exist. The data file is checked first (store_file_check): TS_ESTORE_DAMAGED when it is
 * damaged, or missing or empty where the folder's marker says a state was kept. Starts
 * the writer thread and registers the prepare hook on loop. Returns a ts_err; *out is
 * NULL on error. */
int store_open(struct loop *loop, const char *path, size_t map_size, struct store **out);
/* Commit everything queued (store_sync), stop the writer, close the environment. Pending
 * after-commit callbacks run (with their batch's result) before it returns. Returns
 * store_sync's result: not TS_OK when changes had to be given up. NULL ok. */
int store_close(struct store *st);

/* Queue a put/delete in the open batch (copies key and value). Keys are at most 511
 * bytes (LMDB's limit): TS_EINVAL beyond. */
int store_put(struct store *st, enum store_db db, const void *key, size_t klen,
              const void *val, size_t vlen);
int store_del(struct store *st, enum store_db db, const void *key, size_t klen);

/* cb(arg, err) runs on the loop thread once every change queued before this call is
 * durable (err TS_OK). A failing commit is retried until it succeeds, so err is an error
 * only when store_sync() or store_close() gave the batch up (TS_ESTORE_FULL for a full
 * map or disk). With nothing queued it still runs, in a later iteration, never
 * synchronously. */
typedef void (*store_commit_cb)(void *arg, int err);
int store_after_commit(struct store *st, store_commit_cb cb, void *arg);

/* Hand the open batch to the writer now (normally done by the prepare hook). Nothing is
 * handed over while a failed batch waits for its retry. */
void store_flush(struct store *st);
/* Flush and block until every queued change is committed; runs the pending callbacks.
 * A failed batch waiting for its retry is tried at once. A batch that fails here is given
 * up, with every batch queued behind it: their callbacks run with the error, the failure
 * is logged, and the first error is returned. For start-up and shutdown. */
int store_sync(struct store *st);

/* Whether a commit failed and has not succeeded since (changes are being retried). */
int store_failing(const struct store *st);
/* cb(arg, err) runs on the loop thread when commits start failing (err: the failure) and
 * when they work again (err TS_OK). One callback; NULL removes it. */
typedef void (*store_health_cb)(void *arg, int err);
void store_on_health(struct store *st, store_health_cb cb, void *arg);
/* Bytes free for unprivileged users on the file system of the environment. */
int store_free_space(const struct store *st, uint64_t *bytes);
/* Whether the folder's marker existed when the store was opened: its owner said a state
 * was committed there (ctld/store_file.h). */
int store_had_state(const struct store *st);

/* Read one committed value: *val is malloc'd (free it), TS_ENOENT when absent. */
int store_get(struct store *st, enum store_db db, const void *key, size_t klen, void **val,
              size_t *vlen);
/* Visit committed records in key order; a non-zero return from cb stops the walk and is
 * returned. */
typedef int (*store_visit_cb)(void *arg, const void *key, size_t klen, const void *val,
                              size_t vlen);
int store_foreach(struct store *st, enum store_db db, store_visit_cb cb, void *arg);

/* A consistent snapshot for several reads (one LMDB read transaction): values it hands
 * out point into the map and stay valid until store_reader_close(). Opened and closed on
 * the same thread; keep it short-lived, as an open reader keeps old pages from reuse. */
struct store_reader;
int store_reader_open(struct store *st, struct store_reader **out);
void store_reader_close(struct store_reader *r);
/* TS_ENOENT when absent. *val is not a copy. */
int store_reader_get(struct store_reader *r, enum store_db db, const void *key, size_t klen,
                     const void **val, size_t *vlen);
/* Visit the records with from <= key <= to in key order (to NULL: to the end; keys
 * compare bytewise, shorter first on a tie). A non-zero return from cb stops the walk and
 * is returned. */
int store_reader_range(struct store_reader *r, enum store_db db, const void *from,
                       size_t flen, const void *to, size_t tlen, store_visit_cb cb, void *arg);

struct store_stats {
    uint64_t batches;     /* committed write transactions */
    uint64_t ops;         /* puts and deletes committed */
    uint64_t failures;    /* commit attempts that failed (each retry counts) */
    uint64_t given_up;    /* batches dropped by store_sync() after failing */
    uint64_t max_batch;   /* most ops in one batch */
};
void store_get_stats(const struct store *st, struct store_stats *out);

/* Fixed-width big-endian keys, so cursor order is numeric order. */
void store_key_u64(uint8_t out[8], uint64_t v);
uint64_t store_key_get_u64(const uint8_t in[8]);

#endif
