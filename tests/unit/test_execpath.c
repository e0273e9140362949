/* Unit tests for common/execpath: Slurm's search for a command's program. */
#include "harness.h"

#include "common/util/errors.h"
#include "common/util/execpath.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[256], here[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    if (!getcwd(here, sizeof(here)) || harness_tmpdir("execpath", dir, sizeof(dir)))
        return -1;
    char p[512];
    snprintf(p, sizeof(p), "%s/bin", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/cwd", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/cwd/sub", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/bin/tool", dir);
    harness_write_file(p, "#!/bin/sh\n", 0755);
    snprintf(p, sizeof(p), "%s/bin/plain", dir);
    harness_write_file(p, "not executable\n", 0644);
    snprintf(p, sizeof(p), "%s/cwd/local.sh", dir);
    harness_write_file(p, "#!/bin/sh\n", 0755);
    snprintf(p, sizeof(p), "%s/cwd/tool", dir);
    harness_write_file(p, "#!/bin/sh\n", 0755);
    snprintf(p, sizeof(p), "%s/cwd", dir);
    return chdir(p);
}

static int teardown(void **state)
{
    (void)state;
    int rc = chdir(here);
    harness_rmrf(dir);
    return rc;
}

static void expect_found(const char *prog, const char *path, const char *suffix)
{
    char out[PATH_MAX], want[PATH_MAX];
    assert_int_equal(execpath_find(prog, path, out, sizeof(out)), TS_OK);
    snprintf(want, sizeof(want), "%s%s", suffix[0] == '/' ? dir : "", suffix);
    assert_string_equal(out, want);
}

static void test_path_then_cwd(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof(path), "/nonexistent:%s/bin", dir);
    expect_found("tool", path, "/bin/tool");           /* PATH before the working folder */
    expect_found("local.sh", path, "/cwd/local.sh");   /* then the working folder */
    expect_found("local.sh", "/nonexistent", "/cwd/local.sh");
    char out[PATH_MAX];                                 /* the default PATH */
    assert_int_equal(execpath_find("sh", NULL, out, sizeof(out)), TS_OK);
    assert_true(!strcmp(out, "/usr/bin/sh") || !strcmp(out, "/bin/sh"));
    snprintf(path, sizeof(path), "%s/bin::/usr/bin", dir); /* an empty entry: here */
    expect_found("local.sh", path, "/cwd/local.sh");
}

static void test_slash_and_misses(void **state)
{
    (void)state;
    char out[PATH_MAX], path[512];
    snprintf(path, sizeof(path), "%s/bin", dir);
    expect_found("./local.sh", path, "./local.sh");     /* a '/' means: as given */
    assert_int_equal(execpath_find("./nosuch", path, out, sizeof(out)), TS_ENOENT);
    assert_int_equal(execpath_find("plain", path, out, sizeof(out)), TS_ENOENT); /* not +x */
    assert_int_equal(execpath_find("sub", path, out, sizeof(out)), TS_ENOENT);   /* a folder */
    assert_int_equal(execpath_find("nosuch", path, out, sizeof(out)), TS_ENOENT);
    assert_int_equal(execpath_find("", path, out, sizeof(out)), TS_ENOENT);
    assert_int_equal(execpath_find(NULL, path, out, sizeof(out)), TS_ENOENT);
    assert_int_equal(execpath_find("./local.sh", path, out, 4), TS_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_then_cwd),
        cmocka_unit_test(test_slash_and_misses),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
