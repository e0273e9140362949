/* Unit tests for the checks on the state store's files (ctld/store_file.c): the meta
 * pages read as LMDB reads them, damaged copies of a real environment refused before
 * LMDB maps them, and the marker that keeps a lost state from passing for a new one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "ctld/store.h"
#include "ctld/store_file.h"

#include <fcntl.h>
#include <lmdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

struct fixture {
    char dir[256];  /* a store with some records, closed */
    char copy[256]; /* a second folder for damaged copies */
    struct loop *loop;
};

static void path_in(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void wait_commit_cb(void *arg, int err)
{
    *(int *)arg = err == TS_OK ? 1 : -1;
}

/* Open dir, put n records of vlen bytes, wait for the commit, close. */
static void fill_store(struct loop *loop, const char *dir, int n, size_t vlen)
{
    struct store *st;
    assert_int_equal(store_open(loop, dir, 64u << 20, &st), TS_OK);
    char *val = calloc(1, vlen);
    assert_non_null(val);
    for (int i = 0; i < n; i++) {
        uint8_t key[8];
        store_key_u64(key, (uint64_t)i);
        assert_int_equal(store_put(st, STORE_DB_JOBS, key, 8, val, vlen), TS_OK);
    }
    free(val);
    int done = 0;
    assert_int_equal(store_after_commit(st, wait_commit_cb, &done), TS_OK);
    for (int i = 0; i < 200 && !done; i++)
        assert_int_equal(loop_run_once(loop, 50), TS_OK);
    assert_int_equal(done, 1);
    assert_int_equal(store_close(st), TS_OK);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f || harness_tmpdir("storefile", f->dir, sizeof(f->dir)) ||
        harness_tmpdir("storefile-copy", f->copy, sizeof(f->copy)) ||
        !(f->loop = loop_create()))
        return -1;
    *state = f;
    fill_store(f->loop, f->dir, 50, 3000); /* some leaf and overflow pages */
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    loop_destroy(f->loop);
    harness_rmrf(f->dir);
    harness_rmrf(f->copy);
    free(f);
    return 0;
}

/* Copy dir's data.mdb (and marker, when mark) into the copy folder, cut to len bytes
 * (SIZE_MAX: whole). */
static void copy_state(struct fixture *f, size_t len, bool mark)
{
    char from[512], to[512];
    path_in(from, sizeof(from), f->dir, STORE_FILE_DATA);
    path_in(to, sizeof(to), f->copy, STORE_FILE_DATA);
    char *argv[] = {(char *)"/bin/cp", from, to, NULL};
    assert_int_equal(harness_run(argv, NULL, NULL, NULL, 10000), 0);
    if (len != SIZE_MAX)
        assert_int_equal(truncate(to, (off_t)len), 0);
    path_in(to, sizeof(to), f->copy, STORE_FILE_MARKER);
    if (mark)
        assert_int_equal(store_file_mark(f->copy), TS_OK);
    else
        unlink(to);
}

static off_t file_size(const char *dir)
{
    char path[512];
    struct stat stt;
    path_in(path, sizeof(path), dir, STORE_FILE_DATA);
    assert_int_equal(stat(path, &stt), 0);
    return stt.st_size;
}

/* The checked copy is refused, both by the check and by store_open, with a reason that
 * names the folder and says what to do. */
static void expect_damaged(struct fixture *f, const char *words)
{
    char why[1024];
    assert_int_equal(store_file_check(f->copy, NULL, why, sizeof(why)), TS_ESTORE_DAMAGED);
    if (!strstr(why, words) || !strstr(why, f->copy) || strchr(why, '\n'))
        fail_msg("unexpected reason: %s", why);
    struct store *st = (struct store *)1;
    assert_int_equal(store_open(f->loop, f->copy, 64u << 20, &st), TS_ESTORE_DAMAGED);
    assert_null(st);
}

/* Our reading of the meta pages agrees with LMDB's own. */
static void test_meta_as_lmdb_reads_it(void **state)
{
    struct fixture *f = *state;
    struct store_file_meta meta;
    char why[1024];
    assert_int_equal(store_file_check(f->dir, &meta, why, sizeof(why)), TS_OK);

    MDB_env *env;
    MDB_envinfo info;
    MDB_stat stat;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
    assert_int_equal(mdb_env_open(env, f->dir, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_env_info(env, &info), 0);
    assert_int_equal(mdb_env_stat(env, &stat), 0);
    mdb_env_close(env);
    assert_int_equal(meta.page_size, stat.ms_psize);
    assert_int_equal(meta.last_page, info.me_last_pgno);
    assert_int_equal(meta.txnid, info.me_last_txnid);
    assert_int_equal(meta.file_size, (uint64_t)file_size(f->dir));
    assert_true(meta.last_page > 10); /* the records took pages beyond the two metas */
}

/* Cut short anywhere: refused with a message, never mapped (LMDB would SIGBUS). */
static void test_truncated_copies_refused(void **state)
{
    struct fixture *f = *state;
    struct store_file_meta meta;
    char why[1024];
    assert_int_equal(store_file_check(f->dir, &meta, why, sizeof(why)), TS_OK);
    size_t whole = (size_t)file_size(f->dir), page = meta.page_size;

    copy_state(f, whole - page, true); /* the last page gone */
    expect_damaged(f, "cut short");
    copy_state(f, whole / 2, false); /* without the marker too */
    expect_damaged(f, "cut short");
    copy_state(f, 2 * page, false); /* the meta pages alone */
    expect_damaged(f, "cut short");
    copy_state(f, page + 100, false); /* into the second meta page */
    expect_damaged(f, "meta page 1 is cut off");
    copy_state(f, 100, false);
    expect_damaged(f, "meta page 0 is cut off");

    copy_state(f, SIZE_MAX, true); /* the whole copy opens */
    assert_int_equal(store_file_check(f->copy, NULL, why, sizeof(why)), TS_OK);
    struct store *st;
    assert_int_equal(store_open(f->loop, f->copy, 64u << 20, &st), TS_OK);
    void *val;
    size_t vlen;
    uint8_t key[8];
    store_key_u64(key, 49);
    assert_int_equal(store_get(st, STORE_DB_JOBS, key, 8, &val, &vlen), TS_OK);
    assert_int_equal(vlen, 3000);
    free(val);
    assert_int_equal(store_close(st), TS_OK);
}

static void overwrite(const char *dir, off_t at, const void *bytes, size_t n)
{
    char path[512];
    path_in(path, sizeof(path), dir, STORE_FILE_DATA);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, bytes, n, at), (ssize_t)n);
    close(fd);
}

/* Not LMDB at all, or meta pages with a broken magic or page size. */
static void test_garbage_refused(void **state)
{
    struct fixture *f = *state;
    char junk[8192];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (char)(i * 7 + 3);
    copy_state(f, SIZE_MAX, false);
    overwrite(f->copy, 0, junk, sizeof(junk));
    expect_damaged(f, "cannot be read as LMDB");

    struct store_file_meta meta;
    char why[1024];
    assert_int_equal(store_file_check(f->dir, &meta, why, sizeof(why)), TS_OK);
    copy_state(f, SIZE_MAX, false);
    overwrite(f->copy, (off_t)meta.page_size + (off_t)sizeof(size_t) + 8, junk, 4); /* magic */
    expect_damaged(f, "page 1 is not an LMDB meta page");
    copy_state(f, SIZE_MAX, false);
    uint32_t odd = 3000;
    overwrite(f->copy, (off_t)(sizeof(size_t) + 8 + 8 + 2 * sizeof(size_t)), &odd, 4);
    expect_damaged(f, "page size of 3000 bytes");
}

/* A zero-length or missing data file is a new state only where no state was kept. */
static void test_marker_keeps_a_lost_state_from_passing_for_new(void **state)
{
    struct fixture *f = *state;
    char path[512], why[1024];
    path_in(path, sizeof(path), f->copy, STORE_FILE_DATA);

    copy_state(f, 0, true);
    expect_damaged(f, "is empty");
    assert_int_equal(store_file_check(f->copy, NULL, why, sizeof(why)), TS_ESTORE_DAMAGED);
    assert_non_null(strstr(why, "remove"));
    assert_non_null(strstr(why, STORE_FILE_MARKER));
    assert_non_null(strstr(why, "mdb_copy"));

    unlink(path);
    expect_damaged(f, "is missing");

    /* the administrator removes the marker: a new, empty state */
    path_in(path, sizeof(path), f->copy, STORE_FILE_MARKER);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(store_file_check(f->copy, NULL, why, sizeof(why)), TS_OK);
    struct store *st;
    assert_int_equal(store_open(f->loop, f->copy, 64u << 20, &st), TS_OK);
    assert_false(store_had_state(st));
    assert_int_equal(store_close(st), TS_OK);
}

/* The marker is its owner's word: a store neither writes it nor needs it, and says
 * whether it was there when it opened. */
static void test_marker_is_the_owners(void **state)
{
    struct fixture *f = *state;
    struct store *st;
    assert_false(store_file_marked(f->dir)); /* committing records writes none */
    fill_store(f->loop, f->copy, 1, 10);
    assert_false(store_file_marked(f->copy));
    assert_int_equal(store_open(f->loop, f->copy, 64u << 20, &st), TS_OK);
    assert_false(store_had_state(st));
    assert_int_equal(store_close(st), TS_OK);

    assert_int_equal(store_file_mark(f->copy), TS_OK);
    assert_int_equal(store_file_mark(f->copy), TS_OK); /* again: still there, no error */
    assert_true(store_file_marked(f->copy));
    assert_int_equal(store_open(f->loop, f->copy, 64u << 20, &st), TS_OK);
    assert_true(store_had_state(st));
    assert_int_equal(store_close(st), TS_OK);
}

/* A symbolic link in place of the data file is not followed. */
static void test_symlink_refused(void **state)
{
    struct fixture *f = *state;
    char from[512], to[512], why[1024];
    path_in(from, sizeof(from), f->dir, STORE_FILE_DATA);
    path_in(to, sizeof(to), f->copy, STORE_FILE_DATA);
    assert_int_equal(symlink(from, to), 0);
    assert_int_equal(store_file_check(f->copy, NULL, why, sizeof(why)), TS_ESTORE_DAMAGED);
    assert_int_equal(unlink(to), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_meta_as_lmdb_reads_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_copies_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marker_keeps_a_lost_state_from_passing_for_new,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_marker_is_the_owners, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
