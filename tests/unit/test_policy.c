/* Unit tests for the policy file parser (common/sched/policy.c) and the order it gives
 * (common/sched/policy_order.c): PBS's defaults, the source's example file, prime/non-prime
 * values, multi_sort keys, errors with file and line; each sort key, starving units,
 * round robin over queues, fair share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Four units: id, priority, tier, partition, cput, walltime, memory. */
static const struct policy_unit units[4] = {
    {.id = 1, .priority = 10, .tier = 1, .partition = "b", .cput = 400, .walltime = 100,
     .mem_mb = 500},
    {.id = 2, .priority = 30, .tier = 1, .partition = "b", .cput = 100, .walltime = 100,
     .mem_mb = 2000},
    {.id = 3, .priority = 20, .tier = 1, .partition = "b", .cput = INT64_MAX,
     .walltime = INT64_MAX, .mem_mb = 0},
    {.id = 4, .priority = 20, .tier = 5, .partition = "a", .cput = 100, .walltime = 50,
     .mem_mb = 500},
};

static const struct policy_set *cmp_set;
static int cmp(const void *a, const void *b)
{
    return policy_compare(cmp_set, a, b);
}

/* The ids in the order s sorts the four units, as "a,b,c,d". */
static void order(const struct policy_set *s, char *out, size_t len)
{
    struct policy_unit v[4];
    memcpy(v, units, sizeof(v));
    cmp_set = s;
    qsort(v, 4, sizeof(v[0]), cmp);
    snprintf(out, len, "%u,%u,%u,%u", v[0].id, v[1].id, v[2].id, v[3].id);
}

static void expect_order(enum policy_sort key, int by_queue, const char *want)
{
    struct policy p;
    policy_defaults(&p);
    p.set[0].sort_by = key;
    p.set[0].by_queue = by_queue;
    char got[64];
    order(&p.set[0], got, sizeof(got));
    if (strcmp(got, want))
        fail_msg("%s (by_queue %d): %s, not %s", policy_sort_name(key), by_queue, got, want);
}

/* Each key alone (one pool), then by_queue putting the higher tier first. */
static void test_sort_keys(void **state)
{
    (void)state;
    expect_order(POLICY_SORT_SHORTEST_JOB, 0, "2,4,1,3"); /* no limit last; ties by id */
    expect_order(POLICY_SORT_LONGEST_JOB, 0, "3,1,2,4");
    expect_order(POLICY_SORT_SMALLEST_MEMORY, 0, "3,1,4,2");
    expect_order(POLICY_SORT_LARGEST_MEMORY, 0, "2,1,4,3");
    expect_order(POLICY_SORT_HIGH_PRIORITY, 0, "2,3,4,1");
    expect_order(POLICY_SORT_LOW_PRIORITY, 0, "1,3,4,2");
    expect_order(POLICY_SORT_LARGE_WALLTIME, 0, "3,1,2,4");
    expect_order(POLICY_SORT_SHORT_WALLTIME, 0, "4,1,2,3");
    expect_order(POLICY_SORT_NONE, 0, "1,2,3,4");
    expect_order(POLICY_SORT_SHORTEST_JOB, 1, "4,2,1,3"); /* partition a (tier 5) first */
}

/* multi_sort: the first key, then the next for its ties. */
static void test_multi_sort(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    char err[128];
    assert_int_equal(policy_parse("by_queue: false\nsort_by: multi_sort\n"
                                  "key: smallest_memory_first\nkey: high_priority_first\n",
                                  "f", &p, err, sizeof(err)),
                     TS_OK);
    char got[64];
    order(&p.set[0], got, sizeof(got));
    assert_string_equal(got, "3,4,1,2"); /* 0 MB, then 500 MB by priority, then 2000 MB */
    assert_int_equal(policy_parse("key: shortest_job_first\nkey: low_priority_first\n", "f",
                                  &p, err, sizeof(err)),
                     TS_OK);
    order(&p.set[0], got, sizeof(got));
    assert_string_equal(got, "4,2,1,3"); /* a later file's keys replace the list */
}

/* help_starving_jobs: units that waited past starve_max come first, the longest first;
 * the rest keep the sort key's order. */
static void test_starving(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    p.set[0].by_queue = 0;
    p.set[0].help_starving_jobs = 1;
    p.set[0].starve_max = 100;
    struct policy_unit v[4];
    memcpy(v, units, sizeof(v));
    v[0].waited = 50;  /* not starving */
    v[1].waited = 0;
    v[2].waited = 200; /* starving */
    v[3].waited = 500; /* starving longer */
    cmp_set = &p.set[0];
    qsort(v, 4, sizeof(v[0]), cmp);
    char got[64];
    snprintf(got, sizeof(got), "%u,%u,%u,%u", v[0].id, v[1].id, v[2].id, v[3].id);
    assert_string_equal(got, "4,3,2,1"); /* then shortest_job_first: 2 (100) before 1 */
    p.set[0].help_starving_jobs = 0;
    qsort(v, 4, sizeof(v[0]), cmp);
    snprintf(got, sizeof(got), "%u,%u,%u,%u", v[0].id, v[1].id, v[2].id, v[3].id);
    assert_string_equal(got, "2,4,1,3");
}

static void ids(const struct policy_unit *v, size_t n, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, i ? ",%u" : "%u", v[i].id);
}

/* sort_by: fair_share orders by the entities' normalised shares (the strict-priority
 * recipe: shares as priorities). */
static void test_fair_share_key(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    p.set[0].by_queue = 0;
    p.set[0].sort_by = POLICY_SORT_FAIR_SHARE;
    struct policy_unit v[4];
    memcpy(v, units, sizeof(v));
    v[0].fs_norm = 0.5;
    v[1].fs_norm = 0.001;
    v[2].fs_norm = 0.9;
    v[3].fs_norm = 0.5;
    char got[64];
    assert_int_equal(policy_order(&p.set[0], v, 4, NULL), TS_OK);
    ids(v, 4, got, sizeof(got));
    assert_string_equal(got, "3,1,4,2");
}

/* round_robin: one unit of each queue in turn (queues by tier, then name), each queue in
 * its sort order; the same with by_queue off. */
static void test_round_robin(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    char err[128], got[64];
    assert_int_equal(policy_parse("round_robin: true\n", "f", &p, err, sizeof(err)), TS_OK);
    struct policy_unit v[6];
    memcpy(v, units, sizeof(units));
    v[4] = (struct policy_unit){.id = 5, .tier = 5, .partition = "a", .cput = 300};
    v[5] = (struct policy_unit){.id = 6, .tier = 1, .partition = "c", .cput = 1};
    assert_int_equal(policy_order(&p.set[0], v, 6, NULL), TS_OK);
    ids(v, 6, got, sizeof(got));
    /* a (tier 5): 4, 5; b: 2, 1, 3; c: 6 */
    assert_string_equal(got, "4,2,6,5,1,3");
    p.set[0].by_queue = 0;
    assert_int_equal(policy_order(&p.set[0], v, 6, NULL), TS_OK);
    ids(v, 6, got, sizeof(got));
    /* the pool 6,2,4,5,1,3 dealt out by queue, the queues in tier and name order */
    assert_string_equal(got, "4,2,6,5,1,3");
    p.set[0].round_robin = 0;
    assert_int_equal(policy_order(&p.set[0], v, 6, NULL), TS_OK);
    ids(v, 6, got, sizeof(got));
    assert_string_equal(got, "6,2,4,5,1,3");
}

/* fair_share: within a queue the under-served entity's units first; starving units keep
 * the head; fairshare_entity's values. */
static void test_fair_share(void **state)
{
    (void)state;
    struct policy p;
    policy_defaults(&p);
    char err[128], got[64];
    assert_int_equal(policy_parse("fair_share: true\nby_queue: false\nsort_by: no_sort\n"
                                  "help_starving_jobs: true\nstarve_max: 1:00:00\n"
                                  "fairshare_entity: Account_Name prime\n",
                                  "f", &p, err, sizeof(err)),
                     TS_OK);
    assert_int_equal(p.set[POLICY_PRIME].fairshare_entity, POLICY_ENTITY_ACCOUNT);
    assert_int_equal(p.set[POLICY_NON_PRIME].fairshare_entity, POLICY_ENTITY_USER);
    assert_int_equal(policy_parse("fairshare_entity: egroup\n", "f", &p, err, sizeof(err)), TS_OK);
    assert_int_equal(p.set[POLICY_NON_PRIME].fairshare_entity, POLICY_ENTITY_GROUP);
    parse_fails("fairshare_entity: queue\n",
                "sched_config:1: fairshare_entity must be euser, egroup or account, not 'queue'");
    struct fairshare *fs;
    assert_int_equal(fairshare_parse("heavy 1 root 1\nlight 2 root 1\n", "rg", 0, &fs, err,
                                     sizeof(err)),
                     TS_OK);
    int heavy = fairshare_find(fs, "heavy"), light = fairshare_find(fs, "light");
    fairshare_charge(fs, heavy, 1e6);
    struct policy_unit v[5] = {
        {.id = 1, .fs_entity = heavy, .cput = 10}, {.id = 2, .fs_entity = heavy, .cput = 10},
        {.id = 3, .fs_entity = heavy, .cput = 10, .waited = 7200},
        {.id = 4, .fs_entity = light, .cput = 10}, {.id = 5, .fs_entity = light, .cput = 10},
    };
    assert_int_equal(policy_order(&p.set[0], v, 5, fs), TS_OK);
    ids(v, 5, got, sizeof(got));
    assert_string_equal(got, "3,4,5,1,2");
    assert_true(v[0].starving && !v[1].starving);
    p.set[0].fair_share = 0;
    assert_int_equal(policy_order(&p.set[0], v, 5, fs), TS_OK);
    ids(v, 5, got, sizeof(got));
    assert_string_equal(got, "3,1,2,4,5");
    fairshare_destroy(fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_source_example),
        cmocka_unit_test(test_forms_and_errors),
        cmocka_unit_test(test_sort_keys),
        cmocka_unit_test(test_multi_sort),
        cmocka_unit_test(test_starving),
        cmocka_unit_test(test_fair_share_key),
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_fair_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
