/* Logging: levels, the line format, files, level names. */
#include "common/util/errors.h"
#include "common/util/log.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_levels_and_format(void **state)
{
    char dir[256], path[300];
    assert_int_equal(harness_tmpdir("log", dir, sizeof(dir)), 0);
    snprintf(path, sizeof(path), "%s/x.log", dir);
    assert_int_equal(log_open("tester", LOG_LVL_INFO, path), TS_OK);
    log_debug("hidden %d", 1);
    log_info("shown %d", 2);
    log_error("bad %s", "thing");
    log_set_level(LOG_LVL_DEBUG);
    assert_int_equal(log_get_level(), LOG_LVL_DEBUG);
    log_debug("now visible");
    log_close();

    char *text = harness_read_file(path);
    assert_non_null(text);
    assert_null(strstr(text, "hidden"));
    assert_non_null(strstr(text, "] tester: shown 2\n"));
    assert_non_null(strstr(text, "] tester: error: bad thing\n"));
    assert_non_null(strstr(text, "] tester: debug: now visible\n"));
    assert_true(text[0] == '[' && text[5] == '-' && text[11] == 'T'); /* [YYYY-MM-DDT */
    free(text);
    harness_rmrf(dir);
}

static void test_long_line(void **state)
{
    char dir[256], path[300];
    assert_int_equal(harness_tmpdir("log", dir, sizeof(dir)), 0);
    snprintf(path, sizeof(path), "%s/x.log", dir);
    assert_int_equal(log_open("t", LOG_LVL_INFO, path), TS_OK);
    char *big = malloc(10000);
    memset(big, 'a', 9999);
    big[9999] = '\0';
    log_info("%s", big);
    log_info("next");
    log_close();
    free(big);
    char *text = harness_read_file(path);
    /* truncated to one line, still ending in a newline, and the next line intact */
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_true(nl - text < 4096);
    assert_memory_equal(nl - 3, "...", 3);
    assert_non_null(strstr(nl + 1, "] t: next\n"));
    free(text);
    harness_rmrf(dir);
}

static void test_level_names(void **state)
{
    enum log_level l;
    assert_int_equal(log_level_parse("debug2", &l), TS_OK);
    assert_int_equal(l, LOG_LVL_DEBUG2);
    assert_int_equal(log_level_parse("WARN", &l), TS_OK);
    assert_int_equal(l, LOG_LVL_WARN);
    assert_int_equal(log_level_parse("warning", &l), TS_OK);
    assert_int_equal(log_level_parse("quiet", &l), TS_OK);
    assert_int_equal(l, LOG_LVL_QUIET);
    assert_int_equal(log_level_parse("loud", &l), TS_EINVAL);
    assert_int_equal(log_level_parse(NULL, &l), TS_EINVAL);
    assert_string_equal(log_level_name(LOG_LVL_VERBOSE), "verbose");
}

static void test_unwritable(void **state)
{
    assert_int_equal(log_open("t", LOG_LVL_INFO, "/nonexistent/dir/x.log"), TS_ENOENT);
    log_close();
}

/* Lines a stranger can provoke: one per interval, the next one counting those left out. */
static void test_rate_limited(void **state)
{
    char dir[256], path[300];
    assert_int_equal(harness_tmpdir("log", dir, sizeof(dir)), 0);
    snprintf(path, sizeof(path), "%s/x.log", dir);
    assert_int_equal(log_open("t", LOG_LVL_INFO, path), TS_OK);
    struct log_rate rate = {0};
    for (int i = 0; i < 1000; i++)
        log_rate_msg(&rate, 5000 + (uint64_t)i, 10000, LOG_LVL_WARN, "accept: %d", i);
    log_rate_msg(&rate, 15000, 10000, LOG_LVL_WARN, "accept: %s", "later");
    log_rate_msg(&rate, 15001, 10000, LOG_LVL_DEBUG, "not at this level"); /* not counted */
    log_rate_msg(&rate, 25000, 10000, LOG_LVL_WARN, "accept: %s", "again");
    log_close();
    char *text = harness_read_file(path);
    assert_non_null(strstr(text, "] t: warning: accept: 0\n"));
    assert_null(strstr(text, "accept: 1\n"));
    assert_non_null(strstr(text, "accept: later (999 more like it since the last one, not logged)\n"));
    assert_non_null(strstr(text, "accept: again\n"));
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    free(text);
    harness_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_and_format),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_level_names),
        cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_rate_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
