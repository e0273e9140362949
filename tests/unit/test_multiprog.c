/* Unit tests for common/multiprog: srun --multi-prog configuration files. */
#include "common/job/multiprog.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char why[1024];

static struct multiprog *parse_ok(const char *text, uint32_t ntasks)
{
    struct multiprog *mp = NULL;
    int err = multiprog_parse(text, strlen(text), ntasks, "f.conf", &mp, why, sizeof(why));
    if (err)
        fail_msg("parse failed (%d): %s", err, why);
    return mp;
}

static int parse_err(const char *text, size_t len, uint32_t ntasks)
{
    struct multiprog *mp = (struct multiprog *)1;
    int err = multiprog_parse(text, len, ntasks, "f.conf", &mp, why, sizeof(why));
    assert_null(mp);
    return err;
}

/* rank's argv joined by '|'. */
static void expect_argv(const struct multiprog *mp, uint32_t rank, char *const *extra,
                        size_t nextra, const char *want)
{
    char **argv = NULL;
    assert_int_equal(multiprog_argv(mp, rank, extra, nextra, &argv), TS_OK);
    static char got[2 * MULTIPROG_MAX_ARG];
    got[0] = '\0';
    for (size_t i = 0; argv[i]; i++) {
        assert_true(strlen(got) + strlen(argv[i]) + 2 < sizeof(got));
        if (i)
            strcat(got, "|");
        strcat(got, argv[i]);
    }
    assert_string_equal(got, want);
    multiprog_argv_free(argv);
}

static void test_ranks_offsets_and_star(void **state)
{
    (void)state;
    struct multiprog *mp = parse_ok("# c\n\n  0 echo zero %t %o\n1,3 a %o-%t\n* b %t/%o\n", 4);
    char *extra[] = {"x", "%t"};
    expect_argv(mp, 0, extra, 2, "echo|zero|0|0|x|%t"); /* extra words are not expanded */
    expect_argv(mp, 1, NULL, 0, "a|0-1");
    expect_argv(mp, 3, NULL, 0, "a|1-3");
    expect_argv(mp, 2, NULL, 0, "b|2/2");
    char **argv = (char **)1;
    assert_int_equal(multiprog_argv(mp, 4, NULL, 0, &argv), TS_EINVAL);
    assert_null(argv);
    multiprog_destroy(mp);

    mp = parse_ok("1-3 r %o\r\n0 s\n", 4);
    expect_argv(mp, 3, NULL, 0, "r|2");
    expect_argv(mp, 0, NULL, 0, "s");
    multiprog_destroy(mp);
}

/* Single quotes group words, double quotes are ordinary; '%' with anything but t or o
 * disappears with it (as Slurm's srun). A '#' after the ranks is an argument. */
static void test_words(void **state)
{
    (void)state;
    struct multiprog *mp = parse_ok("* sh 'a b'  \"c d\" e%%f g%xh i% 'j'k'' # no\n", 1);
    expect_argv(mp, 0, NULL, 0, "sh|a b|\"c|d\"|ef|gh|i|jk|#|no");
    multiprog_destroy(mp);
}

static void test_slurm_messages(void **state)
{
    (void)state;
    const char *t = "0 a\n2-3 b\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Configuration file f.conf invalid, no record for task id 1");
    t = "0-1 a\n1-3 b\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Duplicate record for task 1\n"
                             "Line 2 of configuration file f.conf invalid");
    t = "0-3\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Line 1 of configuration file f.conf invalid");
    t = "x a\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Invalid task range specification (x)\n"
                             "Line 1 of configuration file f.conf invalid");
    t = "3-1 a\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Invalid task range, 3-1\n"
                             "Line 1 of configuration file f.conf invalid");
    t = "0-5 a\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Invalid task id, 5 >= ntasks\n"
                             "Line 1 of configuration file f.conf invalid");
    t = "* a\n0 b\n";
    assert_int_equal(parse_err(t, strlen(t), 4), TS_EINVAL);
    assert_string_equal(why, "Line 2 of configuration file f.conf invalid\n"
                             "Task range specification with asterisk must be last");
}

static void test_malformed(void **state)
{
    (void)state;
    const char *bad[] = {"0,,1 a\n", "-1 a\n", "0- a\n", "1-2-3 a\n", "99999999999 a\n",
                         "0 'open\n", ", a\n", "0x1 a\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse_err(bad[i], strlen(bad[i]), 4), TS_EINVAL);
    assert_int_equal(parse_err("0 a\0b\n", 6, 1), TS_EINVAL); /* a NUL is not text */
    assert_int_equal(parse_err("", 0, 1), TS_EINVAL);
    assert_int_equal(parse_err("0 a\n", 4, 0), TS_EINVAL); /* no task to name */
}

/* Every bound holds before memory is spent beyond it. */
static void test_bounds(void **state)
{
    (void)state;
    size_t n = MULTIPROG_MAX_BYTES + 1;
    char *text = malloc(n + MULTIPROG_MAX_ARG * 2 + 16);
    assert_non_null(text);
    memset(text, '#', n);
    assert_int_equal(parse_err(text, n, 1), TS_ETOOBIG);

    memset(text, '\n', MULTIPROG_MAX_LINES + 1); /* empty lines count too */
    assert_int_equal(parse_err(text, MULTIPROG_MAX_LINES + 1, 1), TS_ETOOBIG);
    struct multiprog *mp = NULL;
    text[MULTIPROG_MAX_LINES - 1] = '\0';
    strcat(text, "* a\n");
    mp = parse_ok(text, 1);
    multiprog_destroy(mp);

    char *p = text;
    p += sprintf(p, "0 ");
    memset(p, 'a', MULTIPROG_MAX_ARG);
    p[MULTIPROG_MAX_ARG] = '\0';
    mp = parse_ok(text, 1);
    expect_argv(mp, 0, NULL, 0, p);
    multiprog_destroy(mp);
    strcat(p, "a");
    assert_int_equal(parse_err(text, strlen(text), 1), TS_ETOOBIG);

    p = text + sprintf(text, "0");
    for (unsigned i = 0; i < MULTIPROG_MAX_ARGS; i++)
        p += sprintf(p, " w");
    mp = parse_ok(text, 1);
    multiprog_destroy(mp);
    strcat(p, " w");
    assert_int_equal(parse_err(text, strlen(text), 1), TS_ETOOBIG);
    free(text);
}

/* %t and %o at the largest rank fit, and errors are truncated, never overrun. */
static void test_large_ranks_and_short_error_buffer(void **state)
{
    (void)state;
    struct multiprog *mp = parse_ok("* %t%t%o%t\n", 100000);
    expect_argv(mp, 99999, NULL, 0, "99999999999999999999");
    multiprog_destroy(mp);
    char small[8];
    struct multiprog *none = NULL;
    assert_int_equal(multiprog_parse("x a", 3, 1, "f", &none, small, sizeof(small)),
                     TS_EINVAL);
    assert_int_equal(strlen(small), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranks_offsets_and_star),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_slurm_messages),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_large_ranks_and_short_error_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
