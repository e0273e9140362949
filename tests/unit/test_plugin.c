/* The plugin loader: a good plugin, a missing one, another ABI, another type, a failing
 * init, a library without an ops table, malformed names. */
#include "common/util/errors.h"
#include "common/util/plugin.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

struct testp_ops {
    struct plugin_header header;
    int (*answer)(void);
};

static int load(const char *name, const char *type, struct plugin **pl, char *err, size_t len)
{
    int arg = 42;
    return plugin_load(TESTP_DIR, name, type, PLUGIN_ABI_VERSION, &arg, pl, err, len);
}

static void test_good(void **state)
{
    struct plugin *pl = NULL;
    char err[256] = "";
    assert_int_equal(load("testp/good", "testp", &pl, err, sizeof(err)), TS_OK);
    assert_string_equal(err, "");
    const struct testp_ops *ops = plugin_ops(pl);
    assert_string_equal(plugin_name(pl), "testp/good");
    assert_int_equal(ops->answer(), 42); /* init ran with our argument */
    plugin_unload(pl);
    plugin_unload(NULL);
}

static void test_not_found(void **state)
{
    struct plugin *pl = NULL;
    char err[512];
    assert_int_equal(load("testp/missing", "testp", &pl, err, sizeof(err)), TS_EPLUGIN_NOTFOUND);
    assert_null(pl);
    assert_non_null(strstr(err, "plugin testp/missing not found: "));
    assert_non_null(strstr(err, "testp_missing.so"));
}

static void test_wrong_abi(void **state)
{
    struct plugin *pl = NULL;
    char err[256];
    assert_int_equal(load("testp/badabi", "testp", &pl, err, sizeof(err)), TS_EPLUGIN_ABI);
    assert_null(pl);
    char expect[256];
    snprintf(expect, sizeof(expect),
             "plugin testp/badabi was built for ABI version 9999, this program needs %u",
             PLUGIN_ABI_VERSION);
    assert_string_equal(err, expect);
}

static void test_wrong_type(void **state)
{
    struct plugin *pl = NULL;
    char err[256];
    assert_int_equal(load("testp/wrongtype", "testp", &pl, err, sizeof(err)), TS_EPLUGIN_TYPE);
    assert_string_equal(err, "plugin testp/wrongtype is a sched plugin named testp/wrongtype, "
                             "not a testp plugin");
    /* a good plugin asked for as another type */
    assert_int_equal(load("testp/good", "select", &pl, err, sizeof(err)), TS_EPLUGIN_TYPE);
    assert_null(pl);
}

static void test_failing_init(void **state)
{
    struct plugin *pl = NULL;
    char err[256];
    assert_int_equal(load("testp/failinit", "testp", &pl, err, sizeof(err)), TS_EPLUGIN_INIT);
    assert_string_equal(err, "plugin testp/failinit failed to initialise");
    assert_null(pl);
}

static void test_no_table(void **state)
{
    struct plugin *pl = NULL;
    char err[512];
    assert_int_equal(load("testp/notable", "testp", &pl, err, sizeof(err)), TS_EPLUGIN_NOTFOUND);
    assert_non_null(strstr(err, "is not a Tessera plugin (no tessera_plugin table)"));
}

static void test_bad_names(void **state)
{
    static const char *const bad[] = {"noslash", "/x", "x/", "a/b/c", "../etc/passwd",
                                      "a/../../b", "Sched/x", "a/b.c", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct plugin *pl = NULL;
        char err[256];
        assert_int_equal(load(bad[i], "testp", &pl, err, sizeof(err)), TS_EINVAL);
        assert_non_null(strstr(err, "invalid plugin name"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good),         cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_wrong_abi),    cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_failing_init), cmocka_unit_test(test_no_table),
        cmocka_unit_test(test_bad_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
