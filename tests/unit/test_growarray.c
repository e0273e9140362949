/* Unit tests for common/util/growarray.c: room by doubling, failures leave the array. */
#include "common/util/growarray.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static void test_doubles_from_first(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0, n = 0;
    for (int i = 0; i < 100; i++) {
        int *grown = growarray_room(v, &cap, n, sizeof(*v), 4);
        assert_non_null(grown);
        v = grown;
        v[n++] = i;
        assert_true(n <= cap);
    }
    assert_int_equal(cap, 128); /* 4, 8, ... 128 */
    for (int i = 0; i < 100; i++)
        assert_int_equal(v[i], i);
    free(v);
}

static void test_room_left_is_untouched(void **state)
{
    (void)state;
    size_t cap = 8;
    int *v = malloc(cap * sizeof(*v));
    assert_ptr_equal(growarray_room(v, &cap, 3, sizeof(*v), 4), v);
    assert_int_equal(cap, 8);
    free(v);
}

static void test_overflow_refused(void **state)
{
    (void)state;
    size_t cap = SIZE_MAX / 4;
    char marker;
    assert_null(growarray_room(&marker, &cap, cap, 4, 1));
    assert_int_equal(cap, SIZE_MAX / 4); /* unchanged, the array still the caller's */
    cap = 0;
    assert_null(growarray_room(NULL, &cap, 0, 8, 0)); /* no first size: nothing to grow to */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_from_first),
        cmocka_unit_test(test_room_left_is_untouched),
        cmocka_unit_test(test_overflow_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
