/* Unit tests for noded/deadline.c: a deadline comes forward, never goes back, and fires
 * once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/net/loop.h"
#include "noded/deadline.h"

struct fired {
    struct deadline d;
    int count;
};

static void on_fire(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct fired *f = arg;
    deadline_fired(&f->d);
    f->count++;
    loop_stop(loop);
}

static void guard_stop(struct loop *loop, struct loop_timer *t, void *arg)
{
    loop_stop(loop);
}

static void test_comes_forward_never_back(void **state)
{
    struct loop *loop = loop_create();
    assert_non_null(loop);
    struct fired f = {0};
    assert_int_equal(deadline_at_most(loop, &f.d, 600000, on_fire, &f), 1); /* ten minutes */
    assert_int_equal(deadline_at_most(loop, &f.d, 900000, on_fire, &f), 0); /* later: stands */
    assert_int_equal(deadline_at_most(loop, &f.d, 20, on_fire, &f), 1);     /* sooner: moves */
    assert_int_equal(deadline_at_most(loop, &f.d, 50000, on_fire, &f), 0);
    struct loop_timer *guard = loop_timer_add(loop, 5000, 0, guard_stop, NULL);
    loop_run(loop);
    assert_int_equal(f.count, 1); /* the 20 ms one, not the guard */
    assert_null(f.d.timer);
    loop_timer_cancel(loop, guard);
    /* fired: a new request arms it again */
    assert_int_equal(deadline_at_most(loop, &f.d, 10, on_fire, &f), 1);
    guard = loop_timer_add(loop, 5000, 0, guard_stop, NULL);
    loop_run(loop);
    assert_int_equal(f.count, 2);
    loop_timer_cancel(loop, guard);
    /* cancelled: never fires */
    assert_int_equal(deadline_at_most(loop, &f.d, 10, on_fire, &f), 1);
    deadline_cancel(loop, &f.d);
    guard = loop_timer_add(loop, 100, 0, guard_stop, NULL);
    loop_run(loop);
    assert_int_equal(f.count, 2);
    loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comes_forward_never_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
