/* Feature expressions: syntax, and matching against node feature lists. */
#include "common/sched/features.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_syntax(void **state)
{
    static const char *const good[] = {"a", "a&b", "a|b", "a&b|c", "a&(b|c)", "[r1|r2]",
                                       "x-1.y_2", "((a))"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_int_equal(features_check(good[i]), TS_OK);
    assert_int_equal(features_check(""), TS_OK);
    assert_int_equal(features_check(NULL), TS_OK);
    static const char *const bad[] = {"&", "a&", "|b", "a||b", "(a", "a)", "[a|b)", "a b",
                                      "a*2", "a,b", "()"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(features_check(bad[i]), TS_EINVALID_FEATURE);
    char deep[200];
    memset(deep, '(', 100);
    deep[100] = 'a';
    memset(deep + 101, ')', 98);
    deep[199] = '\0';
    assert_int_equal(features_check(deep), TS_EINVALID_FEATURE); /* too deep, unbalanced */
}

static void test_match(void **state)
{
    assert_true(features_match("a", "a,b"));
    assert_false(features_match("c", "a,b"));
    assert_true(features_match("a&b", "a,b"));
    assert_false(features_match("a&c", "a,b"));
    assert_true(features_match("c|b", "a,b"));
    assert_true(features_match("c&d|a", "a")); /* & binds tighter */
    assert_false(features_match("c&(d|a)", "a"));
    assert_true(features_match("[r1|r2]", "r2,x"));
    assert_false(features_match("ab", "a,b")); /* whole names only */
    assert_false(features_match("a", ""));
    assert_true(features_match("", ""));
    assert_false(features_match("a&", "a")); /* malformed matches nothing */
}

static int collect(void *arg, const char *name, size_t len)
{
    char *buf = arg;
    strncat(buf, name, len);
    strcat(buf, ";");
    return 0;
}

static void test_names(void **state)
{
    char buf[128] = "";
    features_foreach_name("a&(bb|c)", collect, buf);
    assert_string_equal(buf, "a;bb;c;");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
