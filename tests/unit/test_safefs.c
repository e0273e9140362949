/* Unit tests for common/util/safefs.c: removal that never follows a link (the folder to remove
 * itself a link to a folder of victims, links inside, folders swapped for links while the
 * removal runs), exclusive and atomic writes, bounded reads, folder checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "common/util/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];
static int base_fd = -1;

static int setup(void **state)
{
    snprintf(base, sizeof(base), "/tmp/test_safefs.XXXXXX");
    if (!mkdtemp(base))
        return -1;
    base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return base_fd >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        return -1;
    close(base_fd);
    return 0;
}

static void make_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void make_dir(const char *rel)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

static void make_link(const char *target_rel, const char *rel)
{
    char path[256], target[256];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    snprintf(target, sizeof(target), "%s/%s", base, target_rel);
    assert_int_equal(symlink(target, path), 0);
}

static int exists(const char *rel)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    return lstat(path, &st) == 0;
}

/* Victim files a removal must never reach, named as the files of the trees removed
 * (f0..f29): a removal by path through a swapped folder would find them under its names. */
#define NVICTIMS 30

static void make_victims(void)
{
    make_dir("victims");
    for (int i = 0; i < NVICTIMS; i++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "victims/f%d", i);
        make_file(rel, "precious\n");
    }
}

static void expect_victims(void)
{
    for (int i = 0; i < NVICTIMS; i++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "victims/f%d", i);
        if (!exists(rel))
            fail_msg("victim %s was deleted", rel);
    }
}

static void test_removes_a_tree(void **state)
{
    make_dir("t");
    make_dir("t/a");
    make_dir("t/a/b");
    make_file("t/f", "x");
    make_file("t/a/g", "y");
    make_file("t/a/b/h", "z");
    assert_int_equal(safefs_remove_tree(base_fd, "t"), TS_OK);
    assert_false(exists("t"));
    assert_int_equal(safefs_remove_tree(base_fd, "t"), TS_OK); /* gone already: fine */
    make_file("plain", "x");
    assert_int_equal(safefs_remove_tree(base_fd, "plain"), TS_OK);
    assert_false(exists("plain"));
    assert_int_equal(safefs_remove_tree(base_fd, "../x"), TS_EINVAL);
    assert_int_equal(safefs_remove_tree(base_fd, ".."), TS_EINVAL);
}

/* The folder to remove is itself a link to a folder of victims: the link goes, the
 * victims stay (a removal that opened the path as a folder would empty theirs). */
static void test_top_level_link_is_not_followed(void **state)
{
    make_victims();
    make_link("victims", "job");
    assert_int_equal(safefs_remove_tree(base_fd, "job"), TS_OK);
    assert_false(exists("job"));
    expect_victims();
}

/* Links inside the tree, to the victims' folder and to one victim: only the links go. */
static void test_inner_links_are_not_followed(void **state)
{
    make_victims();
    make_dir("job");
    make_dir("job/sub");
    make_link("victims", "job/sub/dir");
    make_link("victims/f3", "job/file");
    assert_int_equal(safefs_remove_tree(base_fd, "job"), TS_OK);
    assert_false(exists("job"));
    expect_victims();
}

/* A subfolder swapped for a link to the victims while the removal runs (the attack on a
 * removal that checks a path and then opens it again): a thread keeps swapping, and the
 * victims survive every round. */
struct swapper {
    volatile int stop;
    int rounds;
};

static void *swap_loop(void *arg)
{
    struct swapper *sw = arg;
    char dir[256], link_path[256], target[256], moved[256];
    snprintf(dir, sizeof(dir), "%s/job/sub", base);
    snprintf(link_path, sizeof(link_path), "%s/job/sub.lnk", base);
    snprintf(target, sizeof(target), "%s/victims", base);
    snprintf(moved, sizeof(moved), "%s/job/sub.old", base);
    while (!sw->stop) {
        symlink(target, link_path);
        rename(dir, moved);
        rename(link_path, dir); /* sub is now a link to the victims */
        sw->rounds++;
        mkdir(dir, 0755);
    }
    return NULL;
}

static void test_swapped_subfolder_is_not_followed(void **state)
{
    make_victims();
    for (int round = 0; round < 50; round++) {
        make_dir("job");
        make_dir("job/sub");
        for (int i = 0; i < NVICTIMS; i++) {
            char rel[64];
            snprintf(rel, sizeof(rel), "job/sub/f%d", i);
            make_file(rel, "mine");
        }
        struct swapper sw = {0};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, swap_loop, &sw), 0);
        safefs_remove_tree(base_fd, "job"); /* may race with the swapper: anything goes but */
        sw.stop = 1;
        pthread_join(t, NULL);
        expect_victims(); /* ... the victims */
        safefs_remove_tree(base_fd, "job");
    }
}

static void test_create_is_exclusive_and_never_through_a_link(void **state)
{
    make_victims();
    make_link("victims/f0", "script");
    int fd = -1;
    assert_int_equal(safefs_create(base_fd, "script", 0600, &fd), TS_EEXIST);
    assert_int_equal(fd, -1);
    make_link("victims/nothing-here", "dangling"); /* O_CREAT through it would make the target */
    assert_int_equal(safefs_create(base_fd, "dangling", 0600, &fd), TS_EEXIST);
    assert_false(exists("victims/nothing-here"));
    assert_int_equal(safefs_create(base_fd, "new", 0640, &fd), TS_OK);
    assert_int_equal(safefs_write_all(fd, "hello", 5), TS_OK);
    close(fd);
    char buf[16];
    size_t len = 0;
    assert_int_equal(safefs_read_small(base_fd, "new", buf, sizeof(buf), &len), TS_OK);
    assert_int_equal(len, 5);
    assert_string_equal(buf, "hello");
    expect_victims();
}

static void test_atomic_write_replaces(void **state)
{
    char buf[64];
    size_t len;
    assert_int_equal(safefs_write_atomic(base_fd, "rec", "one\n", 4, 0600), TS_OK);
    assert_int_equal(safefs_write_atomic(base_fd, "rec", "second\n", 7, 0600), TS_OK);
    assert_int_equal(safefs_read_small(base_fd, "rec", buf, sizeof(buf), &len), TS_OK);
    assert_string_equal(buf, "second\n");
    assert_false(exists("rec.tmp"));
    /* a temporary file left by a writer that died is replaced, not written through */
    make_victims();
    make_link("victims/f1", "rec2.tmp");
    assert_int_equal(safefs_write_atomic(base_fd, "rec2", "x", 1, 0600), TS_OK);
    char path[256];
    snprintf(path, sizeof(path), "%s/victims/f1", base);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    assert_string_equal(buf, "precious\n");
}

static void test_read_is_bounded_and_refuses_links_and_fifos(void **state)
{
    char buf[8];
    size_t len = 99;
    assert_int_equal(safefs_read_small(base_fd, "missing", buf, sizeof(buf), &len), TS_ENOENT);
    make_file("exact", "1234567");
    assert_int_equal(safefs_read_small(base_fd, "exact", buf, sizeof(buf), &len), TS_OK);
    assert_int_equal(len, 7);
    make_file("big", "12345678");
    assert_int_equal(safefs_read_small(base_fd, "big", buf, sizeof(buf), &len), TS_ETOOBIG);
    assert_int_equal(len, 0);
    make_link("exact", "lnk");
    assert_int_equal(safefs_read_small(base_fd, "lnk", buf, sizeof(buf), &len), TS_EPERM);
    char path[256];
    snprintf(path, sizeof(path), "%s/fifo", base);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(safefs_read_small(base_fd, "fifo", buf, sizeof(buf), &len), TS_EPERM);
    make_dir("adir");
    assert_int_equal(safefs_read_small(base_fd, "adir", buf, sizeof(buf), &len), TS_EPERM);
}

static void test_open_and_check_dirs(void **state)
{
    int fd = -1;
    assert_int_equal(safefs_open_dir(base_fd, "none", &fd), TS_ENOENT);
    assert_int_equal(safefs_make_dir(base_fd, "d", 0755, &fd), TS_OK);
    char why[128];
    assert_int_equal(safefs_check_dir(fd, geteuid(), S_IWGRP | S_IWOTH, why, sizeof(why)), TS_OK);
    assert_int_equal(safefs_check_dir(fd, geteuid() + 1, S_IWGRP | S_IWOTH, why, sizeof(why)),
                     TS_EPERM);
    assert_non_null(strstr(why, "owned by uid"));
    assert_int_equal(fchmod(fd, 0777), 0);
    assert_int_equal(safefs_check_dir(fd, geteuid(), S_IWGRP | S_IWOTH, why, sizeof(why)),
                     TS_EPERM);
    assert_string_equal(why, "mode 0777");
    close(fd);
    make_link("d", "dlink");
    assert_int_equal(safefs_open_dir(base_fd, "dlink", &fd), TS_EPERM);
    assert_int_equal(safefs_make_dir(base_fd, "dlink", 0700, &fd), TS_EPERM);
    make_file("f", "x");
    assert_int_equal(safefs_open_dir(base_fd, "f", &fd), TS_EPERM);
    assert_int_equal(safefs_open_dir(base_fd, "a/b", &fd), TS_EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_removes_a_tree),
        T(test_top_level_link_is_not_followed),
        T(test_inner_links_are_not_followed),
        T(test_swapped_subfolder_is_not_followed),
        T(test_create_is_exclusive_and_never_through_a_link),
        T(test_atomic_write_replaces),
        T(test_read_is_bounded_and_refuses_links_and_fifos),
        T(test_open_and_check_dirs),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
