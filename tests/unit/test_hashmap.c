/* The hash map: insert, replace, delete, tombstones, growth, long keys, iteration. */
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_basic(void **state)
{
    struct hashmap *m = hashmap_create();
    int a = 1, b = 2;
    assert_null(hashmap_get_str(m, "x"));
    assert_int_equal(hashmap_put_str(m, "x", &a), TS_OK);
    assert_ptr_equal(hashmap_get_str(m, "x"), &a);
    assert_int_equal(hashmap_put_str(m, "x", &b), TS_OK); /* replace */
    assert_ptr_equal(hashmap_get_str(m, "x"), &b);
    assert_int_equal(hashmap_count(m), 1);
    assert_int_equal(hashmap_del_str(m, "x"), TS_OK);
    assert_int_equal(hashmap_del_str(m, "x"), TS_ENOENT);
    assert_null(hashmap_get_str(m, "x"));
    assert_int_equal(hashmap_count(m), 0);
    /* keys are bytes: "ab" and "ab\0" differ */
    assert_int_equal(hashmap_put(m, "ab", 2, &a), TS_OK);
    assert_int_equal(hashmap_put(m, "ab", 3, &b), TS_OK);
    assert_ptr_equal(hashmap_get(m, "ab", 2), &a);
    assert_ptr_equal(hashmap_get(m, "ab", 3), &b);
    hashmap_destroy(m);
    hashmap_destroy(NULL);
}

static void test_many(void **state)
{
    struct hashmap *m = hashmap_create();
    enum { N = 200000 };
    static int vals[N];
    char key[64];
    for (int i = 0; i < N; i++) {
        /* long keys (heap) and short ones (inline) */
        snprintf(key, sizeof(key), i % 2 ? "node-with-a-long-name-%d" : "n%d", i);
        vals[i] = i;
        assert_int_equal(hashmap_put_str(m, key, &vals[i]), TS_OK);
    }
    assert_int_equal(hashmap_count(m), N);
    for (int i = 0; i < N; i += 2) { /* delete half: tombstones */
        snprintf(key, sizeof(key), "n%d", i);
        assert_int_equal(hashmap_del_str(m, key), TS_OK);
    }
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), i % 2 ? "node-with-a-long-name-%d" : "n%d", i);
        int *v = hashmap_get_str(m, key);
        if (i % 2)
            assert_true(v && *v == i);
        else
            assert_null(v);
    }
    /* put after delete reuses the tombstones and finds the right values */
    for (int i = 0; i < N; i += 2) {
        snprintf(key, sizeof(key), "n%d", i);
        assert_int_equal(hashmap_put_str(m, key, &vals[i]), TS_OK);
    }
    assert_int_equal(hashmap_count(m), N);
    size_t cursor = 0, seen = 0;
    const void *k;
    size_t kl;
    void *v;
    while (hashmap_next(m, &cursor, &k, &kl, &v)) {
        assert_true(kl > 0);
        seen++;
    }
    assert_int_equal(seen, N);
    hashmap_destroy(m);
}

static void test_u32(void **state)
{
    struct hashmap *m = hashmap_create();
    int a;
    for (uint32_t id = 1; id < 5000; id++)
        assert_int_equal(hashmap_put_u32(m, id * 7919u, &a), TS_OK);
    assert_ptr_equal(hashmap_get_u32(m, 7919u * 4999u), &a);
    assert_null(hashmap_get_u32(m, 7918u));
    assert_int_equal(hashmap_del_u32(m, 7919u), TS_OK);
    assert_null(hashmap_get_u32(m, 7919u));
    hashmap_destroy(m);
}

static void test_churn(void **state)
{
    /* insert and delete forever: tombstones must not fill the table */
    struct hashmap *m = hashmap_create();
    int a;
    for (uint32_t i = 0; i < 100000; i++) {
        assert_int_equal(hashmap_put_u32(m, i, &a), TS_OK);
        assert_int_equal(hashmap_del_u32(m, i), TS_OK);
    }
    assert_int_equal(hashmap_count(m), 0);
    assert_null(hashmap_get_u32(m, 5));
    hashmap_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_u32),
        cmocka_unit_test(test_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
