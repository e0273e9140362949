/* Unit tests for priority/basic (plugins/priority/basic.c): the default order whatever the
 * policy says, nobody greedy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/priority.h"
#include "common/util/errors.h"

#include <string.h>

extern const struct priority_ops tessera_plugin;

static void test_default_order(void **state)
{
    (void)state;
    void *st = NULL;
    char err[64];
    assert_int_equal(tessera_plugin.create("", &st, err, sizeof(err)), TS_OK);
    assert_string_equal(tessera_plugin.header.name, "priority/basic");
    struct policy p;
    policy_defaults(&p); /* shortest first, greedy: ignored */
    struct policy_unit u[3] = {
        {.id = 7, .priority = 5, .cput = 1, .partition = ""},
        {.id = 3, .priority = 5, .cput = 9, .partition = ""},
        {.id = 9, .priority = 8, .cput = 5, .partition = ""},
    };
    unsigned char greedy[3] = {1, 1, 1};
    struct priority_view v = {.now = 1, .policy = &p.set[POLICY_PRIME]};
    assert_int_equal(tessera_plugin.order(st, &v, u, 3, greedy), TS_OK);
    assert_int_equal(u[0].id, 9);
    assert_int_equal(u[1].id, 3);
    assert_int_equal(u[2].id, 7);
    assert_true(!greedy[0] && !greedy[1] && !greedy[2]);
    tessera_plugin.destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
