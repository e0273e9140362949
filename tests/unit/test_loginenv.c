/* Unit tests for noded/loginenv.c: the login environment read from a "shell" the test
 * writes (a script that prints what a login shell would), merged under the job's
 * variables; and every failure (a refused login, a hang, a flood, no passwd entry) giving
 * the minimal environment within the time bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "noded/loginenv.h"
#include "tests/harness/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static int setup(void **state)
{
    return harness_tmpdir("loginenv", dir, sizeof(dir));
}

/* The background children the hanging shells started (their pid in bg.pid). */
static int teardown(void **state)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/bg.pid", dir);
    char *pid = harness_read_file(path);
    if (pid && atoi(pid) > 1)
        kill(atoi(pid), SIGKILL);
    free(pid);
    return harness_rmrf(dir);
}

/* A shell whose body is script; returns its path in buf. */
static const char *shell(const char *name, const char *body, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
    char text[2048];
    snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
    assert_int_equal(harness_write_file(buf, text, 0755), 0);
    return buf;
}

static const char *find(char **env, const char *name)
{
    size_t n = strlen(name);
    const char *found = NULL;
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') {
            assert_null(found); /* every name once */
            found = env[i] + n + 1;
        }
    return found;
}

/* The merge, with fd 2 caught in a file: returns what it wrote there (malloc'd). */
static char **merge_catching(struct loginenv *le, char *const *passed, char **warned)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/stderr", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    close(fd);
    char **env = loginenv_merge(le, passed);
    dup2(saved, 2);
    close(saved);
    *warned = harness_read_file(path);
    assert_non_null(*warned);
    return env;
}

static struct passwd user(const char *shell_path)
{
    return (struct passwd){.pw_name = (char *)"alice", .pw_uid = 1234, .pw_gid = 1234,
                           .pw_dir = dir, .pw_shell = (char *)shell_path};
}

static char *const passed[] = {(char *)"SLURM_JOB_ID=7", (char *)"PATH=/job/bin", NULL};

static char sh[300]; /* the last shell written */

/* The merge for a user whose shell has body, with job (NULL-terminated) passed. */
static char **login_with(struct loginenv *le, const char *name, const char *body,
                         char *const *job, unsigned timeout_ms, char **warned)
{
    shell(name, body, sh, sizeof(sh));
    struct passwd pw = user(sh);
    size_t n = 0;
    while (job && job[n])
        n++;
    assert_int_equal(loginenv_prepare(le, &pw, n, timeout_ms), TS_OK);
    return merge_catching(le, job, warned);
}

static void done(struct loginenv *le, char *warned)
{
    free(warned);
    loginenv_release(le);
}

/* The shell's environment (its own output, not its standard output, which a profile may
 * write to), under the job's variables; the login shell's folder names dropped; the
 * shell ran in the user's home with the minimal environment. */
static void test_login_environment(void **state)
{
    struct loginenv le;
    char *warned;
    char **env = login_with(
        &le, "sh-ok",
        "echo 'Welcome!'\n"
        "[ \"$1\" = -c ] || exit 9\n"
        "[ \"$(pwd)\" = \"$HOME\" ] && [ \"$USER\" = alice ] && [ \"$LOGNAME\" = alice ] || exit 8\n"
        "[ \"$PATH\" = /usr/local/bin:/usr/bin:/bin ] || exit 7\n"
        "printf 'FROM_PROFILE=a b\\nc\\0PATH=/login/bin\\0SLURM_JOB_ID=99\\0PWD=/x\\0=bad\\0noequals\\0' >&3",
        passed, 5000, &warned);
    assert_string_equal(warned, "");
    assert_string_equal(find(env, "FROM_PROFILE"), "a b\nc");
    assert_string_equal(find(env, "PATH"), "/job/bin");
    assert_string_equal(find(env, "SLURM_JOB_ID"), "7");
    assert_null(find(env, "PWD"));
    assert_null(find(env, "HOME")); /* the shell did not print it */
    done(&le, warned);
}

/* A shell that refuses the login (nologin's way): the minimal environment, the job's
 * variables over it, and a warning that says why. */
static void test_refused_login(void **state)
{
    struct loginenv le;
    char *warned;
    char **env = login_with(&le, "nologin",
                            "echo 'This account is currently not available.'; exit 1",
                            passed, 5000, &warned);
    assert_non_null(strstr(warned, "the shell exited with status 1"));
    assert_string_equal(find(env, "HOME"), dir);
    assert_string_equal(find(env, "USER"), "alice");
    assert_string_equal(find(env, "LOGNAME"), "alice");
    assert_string_equal(find(env, "SHELL"), sh);
    assert_string_equal(find(env, "PATH"), "/job/bin");
    assert_string_equal(find(env, "SLURM_JOB_ID"), "7");
    done(&le, warned);
}

/* A profile that hangs (and leaves a child holding the pipe): given up after the bound. */
static void test_hanging_profile(void **state)
{
    struct loginenv le;
    char *warned;
    char **env = login_with(&le, "hang",
                            "sleep 30 & echo $! > bg.pid; printf 'A=1\\0' >&3; exec sleep 30",
                            NULL, 300, &warned);
    assert_non_null(strstr(warned, "no answer within 300 ms"));
    assert_null(find(env, "A"));
    assert_string_equal(find(env, "USER"), "alice");
    done(&le, warned);
}

/* A child of the profile keeps the pipe open after the shell's exit: the output is taken
 * at the exit, without waiting for the child. */
static void test_lingering_child(void **state)
{
    struct loginenv le;
    char *warned;
    char **env = login_with(&le, "linger",
                            "sleep 30 & echo $! > bg.pid; printf 'A=1\\0' >&3; exit 0",
                            NULL, 20000, &warned);
    assert_string_equal(warned, "");
    assert_string_equal(find(env, "A"), "1");
    done(&le, warned);
}

/* More output than the bound: refused whole, never cut to a partial environment. */
static void test_flood(void **state)
{
    struct loginenv le;
    char *warned;
    char **env = login_with(&le, "flood",
                            "printf 'A=1\\0' >&3; exec yes B=2 >&3",
                            NULL, 5000, &warned);
    assert_non_null(strstr(warned, "more than"));
    assert_null(find(env, "A"));
    done(&le, warned);
}

/* No passwd entry: the job's variables alone. */
static void test_no_user(void **state)
{
    struct loginenv le;
    assert_int_equal(loginenv_prepare(&le, NULL, 2, 5000), TS_OK);
    char *warned;
    char **env = merge_catching(&le, passed, &warned);
    assert_non_null(strstr(warned, "no passwd entry"));
    assert_string_equal(find(env, "PATH"), "/job/bin");
    assert_null(find(env, "HOME"));
    done(&le, warned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_login_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_login, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hanging_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lingering_child, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_user, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
