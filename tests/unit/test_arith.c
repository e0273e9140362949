/* Unit tests for common/util/arith.h: products of user-chosen counts never wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/arith.h"

static void test_mul_sat(void **state)
{
    (void)state;
    assert_true(arith_mul_sat(0, UINT64_MAX) == 0);
    assert_true(arith_mul_sat(UINT64_MAX, 1) == UINT64_MAX);
    assert_true(arith_mul_sat(1000, 64) == 64000);
    assert_true(arith_mul_sat(UINT32_MAX, UINT32_MAX) == (uint64_t)UINT32_MAX * UINT32_MAX);
    /* --mem-per-cpu=2^63 -c 2 wrapped to 0 MB and passed every memory check */
    assert_true(arith_mul_sat(UINT64_C(1) << 63, 2) == UINT64_MAX);
    /* a product just past 2^64 and one far past it */
    assert_true(arith_mul_sat(UINT64_C(1) << 32, (UINT64_C(1) << 32) + 1) == UINT64_MAX);
    assert_true(arith_mul_sat(UINT64_MAX, UINT64_MAX) == UINT64_MAX);
    /* the largest product that fits */
    assert_true(arith_mul_sat(UINT64_MAX / 3, 3) == UINT64_MAX - UINT64_MAX % 3);
}

static void test_add_sat(void **state)
{
    (void)state;
    assert_true(arith_add_sat(1, 2) == 3);
    assert_true(arith_add_sat(UINT64_MAX - 1, 1) == UINT64_MAX);
    assert_true(arith_add_sat(UINT64_MAX, 1) == UINT64_MAX);
    assert_true(arith_add_sat(UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1) == UINT64_MAX);
}

static void test_mul_within(void **state)
{
    uint64_t out = 7;

    (void)state;
    assert_int_equal(arith_mul_within(65536, 65535, UINT32_MAX, &out), 0);
    assert_true(out == UINT64_C(65536) * 65535);
    /* -N 65536 --ntasks-per-node=65536: 2^32 tasks wrapped to 0 in 32 bits */
    out = 7;
    assert_int_equal(arith_mul_within(65536, 65536, UINT32_MAX, &out), -1);
    assert_true(out == 7);
    assert_int_equal(arith_mul_within(UINT64_C(1) << 63, 2, UINT64_MAX, &out), -1);
    assert_true(out == 7);
    assert_int_equal(arith_mul_within(0, UINT64_MAX, 0, &out), 0);
    assert_true(out == 0);
    assert_int_equal(arith_mul_within(10, 10, 100, &out), 0);
    assert_int_equal(arith_mul_within(10, 11, 100, &out), -1);
}

static void test_mul_u32_sat(void **state)
{
    (void)state;
    assert_true(arith_mul_u32_sat(4, 8) == 32);
    assert_true(arith_mul_u32_sat(UINT32_MAX, 1) == UINT32_MAX);
    assert_true(arith_mul_u32_sat(65536, 65536) == UINT32_MAX);
    assert_true(arith_mul_u32_sat(UINT64_MAX, UINT64_MAX) == UINT32_MAX);
    assert_true(arith_mul_u32_sat(0, UINT64_MAX) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mul_sat),
        cmocka_unit_test(test_add_sat),
        cmocka_unit_test(test_mul_within),
        cmocka_unit_test(test_mul_u32_sat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
