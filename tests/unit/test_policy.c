/* Unit tests for the policy file parser (common/policy.c): PBS's defaults, the source's
 * example file, prime/non-prime values, multi_sort keys, errors with file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/errors.h"
#include "common/policy.h"

#include <stdio.h>
#include <string.h>

static void test_defaults(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    for (int i = 0; i < 2; i++) {
        const struct policy_set *s = &p.set[i];
        assert_false(s->round_robin);
        assert_true(s->by_queue);
        assert_false(s->strict_fifo);
        assert_false(s->fair_share);
        assert_false(s->help_starving_jobs);
        assert_int_equal(s->sort_by, POLICY_SORT_SHORTEST_JOB);
        assert_int_equal(s->half_life, 86400);
        assert_int_equal(s->sync_time, 3600);
        assert_int_equal(s->unknown_shares, 10);
        assert_int_equal(s->log_filter, 256);
        assert_string_equal(s->dedicated_prefix, "ded");
    }
}

/* contrib/policy/sched_config: the source's example. */
static void test_source_example(void **state)
{
    (void)state;
    struct policy p;
    char err[256];
    char path[512];
    snprintf(path, sizeof(path), "%s/contrib/policy/sched_config", TESSERA_SOURCE_DIR);
    if (policy_load(path, &p, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    const struct policy_set *pr = &p.set[POLICY_PRIME], *np = &p.set[POLICY_NON_PRIME];
    assert_false(pr->round_robin);
    assert_false(np->round_robin);
    assert_true(pr->by_queue);
    assert_false(np->by_queue);
    assert_true(pr->strict_fifo && np->strict_fifo);
    assert_true(pr->fair_share);
    assert_false(np->fair_share);
    assert_true(pr->help_starving_jobs);
    assert_false(np->help_starving_jobs);
    for (int i = 0; i < 2; i++) {
        const struct policy_set *s = &p.set[i];
        assert_int_equal(s->sort_by, POLICY_SORT_MULTI);
        assert_int_equal(s->nkeys, 3);
        assert_int_equal(s->keys[0], POLICY_SORT_SHORTEST_JOB);
        assert_int_equal(s->keys[1], POLICY_SORT_SMALLEST_MEMORY);
        assert_int_equal(s->keys[2], POLICY_SORT_HIGH_PRIORITY);
        assert_int_equal(s->starve_max, 86400);
        assert_int_equal(s->sync_time, 3600);
        assert_int_equal(s->unknown_shares, 10);
    }
}

static void parse_fails(const char *text, const char *want)
{
    struct policy p;
    char err[256];
    policy_defaults(&p);
    assert_int_equal(policy_parse(text, "sched_config", &p, err, sizeof(err)), TS_ECONF);
    assert_string_equal(err, want);
}

static void test_forms_and_errors(void **state)
{
    (void)state;
    struct policy p;
    char err[256];
    policy_defaults(&p);
    assert_int_equal(policy_parse("# comment\n\nsort_by : largest_memory_first non_prime\n"
                                  "strict_fifo: TRUE prime # trailing\n"
                                  "dedicated_prefix: special\nsort_by no_sort prime\n",
                                  "f", &p, err, sizeof(err)),
                     TS_OK);
    assert_int_equal(p.set[POLICY_NON_PRIME].sort_by, POLICY_SORT_LARGEST_MEMORY);
    assert_int_equal(p.set[POLICY_PRIME].sort_by, POLICY_SORT_NONE);
    assert_true(p.set[POLICY_PRIME].strict_fifo);
    assert_false(p.set[POLICY_NON_PRIME].strict_fifo);
    assert_string_equal(p.set[POLICY_NON_PRIME].dedicated_prefix, "special");
    parse_fails("colour: red\n", "sched_config:1: unknown option 'colour'");
    parse_fails("\nstrict_fifo: maybe\n",
                "sched_config:2: strict_fifo must be true or false, not 'maybe'");
    parse_fails("sort_by: tallest_first\n", "sched_config:1: unknown sort_by 'tallest_first'");
    parse_fails("key: multi_sort\n", "sched_config:1: unknown key 'multi_sort'");
    parse_fails("half_life: soon\n",
                "sched_config:1: half_life must be a duration (HH:MM:SS), not 'soon'");
    parse_fails("unknown_shares: -3\n",
                "sched_config:1: unknown_shares must be a whole number, not '-3'");
    parse_fails("round_robin: true sometimes\n",
                "sched_config:1: the third word must be prime, non_prime or all, not "
                "'sometimes'");
    parse_fails("round_robin:\n", "sched_config:1: 'round_robin' has no value");
    parse_fails("sort_by: multi_sort\n", "sched_config:1: sort_by: multi_sort needs key: lines");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_source_example),
        cmocka_unit_test(test_forms_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
