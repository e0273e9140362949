/* Usage combined over a step's nodes and copied for a batch script (common/job/acctusage.c). */
#include "common/job/acctusage.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static Tessera__AcctUsage usage(uint64_t user, uint64_t sys, uint64_t rss, const char *node,
                                uint32_t task)
{
    Tessera__AcctUsage u = TESSERA__ACCT_USAGE__INIT;
    u.user_usec = user;
    u.sys_usec = sys;
    u.max_rss_kb = rss;
    u.max_rss_node = (char *)node;
    u.max_rss_task = task;
    return u;
}

static void test_merge(void **state)
{
    char *n1 = strdup("n1");
    Tessera__AcctUsage a = usage(100, 10, 5000, n1, 0);
    Tessera__AcctUsage b = usage(200, 20, 9000, "n2", 3);
    Tessera__AcctUsage c = usage(1, 2, 9000, "n3", 7); /* a tie: n2 stays */
    Tessera__AcctUsage *into = NULL;

    assert_int_equal(acctusage_merge(&into, NULL), TS_OK);
    assert_null(into); /* nothing reported: still nothing */

    assert_int_equal(acctusage_merge(&into, &a), TS_OK);
    assert_non_null(into);
    n1[0] = 'X'; /* the record owns its own copy */
    free(n1);
    assert_string_equal(into->max_rss_node, "n1");
    assert_int_equal(into->user_usec, 100);

    assert_int_equal(acctusage_merge(&into, &b), TS_OK);
    assert_int_equal(acctusage_merge(&into, &c), TS_OK);
    assert_int_equal(acctusage_merge(&into, NULL), TS_OK);
    assert_int_equal(into->user_usec, 301);
    assert_int_equal(into->sys_usec, 32);
    assert_int_equal(into->max_rss_kb, 9000);
    assert_string_equal(into->max_rss_node, "n2");
    assert_int_equal(into->max_rss_task, 3);

    /* freed as part of a record, by the record's free_unpacked */
    Tessera__StepRecord *rec = calloc(1, sizeof(*rec));
    assert_non_null(rec);
    tessera__step_record__init(rec);
    rec->usage = into;
    tessera__step_record__free_unpacked(rec, NULL);
}

static void test_merge_empty_node(void **state)
{
    /* a sender that named no node: proto3's empty string, never freed */
    Tessera__AcctUsage a = usage(1, 1, 0, NULL, 0);
    Tessera__AcctUsage b = usage(1, 1, 10, "n2", 1);
    Tessera__AcctUsage *into = NULL;
    assert_int_equal(acctusage_merge(&into, &a), TS_OK);
    assert_string_equal(into->max_rss_node, "");
    assert_int_equal(acctusage_merge(&into, &b), TS_OK);
    assert_string_equal(into->max_rss_node, "n2");
    tessera__acct_usage__free_unpacked(into, NULL);
}

static void test_replace(void **state)
{
    Tessera__AcctUsage a = usage(5, 6, 7, "n1", 0);
    Tessera__AcctUsage b = usage(8, 9, 10, "n2", 0);
    Tessera__AcctUsage *slot = NULL;
    assert_int_equal(acctusage_replace(&slot, &a), TS_OK);
    assert_int_equal(slot->user_usec, 5);
    assert_int_equal(acctusage_replace(&slot, &b), TS_OK); /* the old one freed */
    assert_int_equal(slot->max_rss_kb, 10);
    assert_string_equal(slot->max_rss_node, "n2");
    assert_int_equal(acctusage_replace(&slot, NULL), TS_OK);
    assert_null(slot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_merge_empty_node),
        cmocka_unit_test(test_replace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
