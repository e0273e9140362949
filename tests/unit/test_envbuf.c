/* Unit tests for common/envbuf: names once, a later value replacing in place, take. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/envbuf.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(struct envbuf *e, const char *name, const char *value)
{
    envbuf_put(e, name, strlen(name), value);
}

static void free_env(char **env)
{
    for (char **p = env; p && *p; p++)
        free(*p);
    free(env);
}

static void test_order_and_replace(void **state)
{
    (void)state;
    struct envbuf e;
    assert_int_equal(envbuf_init(&e), TS_OK);
    put(&e, "A", "1");
    put(&e, "B", "2");
    put(&e, "A", "3"); /* replaces in its place */
    envbuf_put(&e, "C=ignored", 1, "x=y"); /* only nlen bytes of the name count */
    assert_true(envbuf_has(&e, "A", 1));
    assert_true(envbuf_has(&e, "Cxyz", 1));
    assert_false(envbuf_has(&e, "D", 1));
    assert_false(envbuf_has(&e, "AB", 2));
    char **env = envbuf_take(&e);
    assert_non_null(env);
    assert_string_equal(env[0], "A=3");
    assert_string_equal(env[1], "B=2");
    assert_string_equal(env[2], "C=x=y");
    assert_null(env[3]);
    free_env(env);
    envbuf_release(&e); /* after take: harmless */
}

static void test_empty_and_many(void **state)
{
    (void)state;
    struct envbuf e;
    assert_int_equal(envbuf_init(&e), TS_OK);
    char **env = envbuf_take(&e);
    assert_non_null(env);
    assert_null(env[0]);
    free(env);

    assert_int_equal(envbuf_init(&e), TS_OK);
    char name[32], value[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "V%d", i);
        snprintf(value, sizeof(value), "%d", i * 2);
        put(&e, name, value);
    }
    put(&e, "V500", "again");
    env = envbuf_take(&e);
    assert_non_null(env);
    assert_string_equal(env[500], "V500=again");
    assert_string_equal(env[999], "V999=1998");
    assert_null(env[1000]);
    free_env(env);
}

static void test_out_of_memory_sticks(void **state)
{
    (void)state;
    struct envbuf e;
    assert_int_equal(envbuf_init(&e), TS_OK);
    put(&e, "A", "1");
    e.oom = 1; /* as after a failed allocation */
    put(&e, "B", "2");
    assert_false(envbuf_has(&e, "B", 1));
    assert_null(envbuf_take(&e));
    struct envbuf none = {0}; /* never initialised: puts do nothing, take fails */
    put(&none, "A", "1");
    assert_null(envbuf_take(&none));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_and_replace),
        cmocka_unit_test(test_empty_and_many),
        cmocka_unit_test(test_out_of_memory_sticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
