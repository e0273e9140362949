/* ctld/node_cpus.c: the CPU indices of a node that running components hold. */
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect_pick(const struct node *n, uint32_t count, const char *want)
{
    char *got = node_cpus_pick(n, count);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_pick_hold_release(void **state)
{
    struct conf_node cfg = {.name = (char *)"n1", .cpus = 4};
    struct node n = {.cfg = &cfg};
    expect_pick(&n, 2, "0-1");
    assert_int_equal(node_cpus_hold(&n, "0-1", 1), TS_OK);
    expect_pick(&n, 1, "2");
    assert_int_equal(node_cpus_hold(&n, "2", 1), TS_OK);
    assert_int_equal(node_cpus_hold(&n, "0-1", -1), TS_OK);
    expect_pick(&n, 2, "0-1");
    expect_pick(&n, 3, "0-1,3");
    expect_pick(&n, 0, "");
    /* never more than the node has */
    expect_pick(&n, 9, "0-3");
    free(n.cpu_holds);
}

/* Every CPU held (oversubscription): the least shared, lowest first. */
static void test_oversubscribed(void **state)
{
    struct conf_node cfg = {.name = (char *)"n1", .cpus = 3};
    struct node n = {.cfg = &cfg};
    assert_int_equal(node_cpus_hold(&n, "0-2", 1), TS_OK);
    assert_int_equal(node_cpus_hold(&n, "0", 1), TS_OK);
    expect_pick(&n, 2, "1-2");
    expect_pick(&n, 3, "0-2");
    free(n.cpu_holds);
}

/* Text that is no id set, or indices beyond any node, change nothing; an empty one (a
 * record from before indices were chosen) holds nothing; releases never go below zero. */
static void test_bad_records(void **state)
{
    struct conf_node cfg = {.name = (char *)"n1", .cpus = 2};
    struct node n = {.cfg = &cfg};
    assert_int_equal(node_cpus_hold(&n, "x", 1), TS_EIDSET);
    assert_int_equal(node_cpus_hold(&n, "4000000000", 1), TS_EIDSET);
    assert_int_equal(node_cpus_hold(&n, "", 1), TS_OK);
    assert_int_equal(node_cpus_hold(&n, NULL, 1), TS_OK);
    assert_int_equal(n.cpu_holds_len, 0);
    assert_int_equal(node_cpus_hold(&n, "1", -1), TS_OK);
    expect_pick(&n, 2, "0-1");
    free(n.cpu_holds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_hold_release),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_bad_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
