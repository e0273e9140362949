/* Unit tests for priority/pbs (plugins/priority/pbs.c): without a policy the default order
 * and nobody greedy; with one policy_order's order, greedy units with strict_fifo off
 * except starving ones, none with strict_fifo on; fair share read from the view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/fairshare.h"
#include "common/sched/priority.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>

extern const struct priority_ops tessera_plugin;

static void ids(const struct policy_unit *u, size_t n, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, i ? ",%u" : "%u", u[i].id);
}

static void units4(struct policy_unit u[4])
{
    memset(u, 0, 4 * sizeof(*u));
    u[0] = (struct policy_unit){.id = 1, .priority = 10, .cput = 300, .partition = ""};
    u[1] = (struct policy_unit){.id = 2, .priority = 30, .cput = 200, .partition = ""};
    u[2] = (struct policy_unit){.id = 3, .priority = 30, .cput = 100, .partition = "",
                                .waited = 1000};
    u[3] = (struct policy_unit){.id = 4, .priority = 20, .cput = 400, .partition = ""};
}

static void test_without_policy(void **state)
{
    (void)state;
    void *st = NULL;
    char err[64];
    assert_int_equal(tessera_plugin.create(NULL, &st, err, sizeof(err)), TS_OK);
    assert_string_equal(tessera_plugin.header.name, "priority/pbs");
    assert_string_equal(tessera_plugin.header.type, PRIORITY_PLUGIN_TYPE);
    struct policy_unit u[4];
    unsigned char greedy[4];
    units4(u);
    struct priority_view v = {.now = 5};
    assert_int_equal(tessera_plugin.order(st, &v, u, 4, greedy), TS_OK);
    char got[32];
    ids(u, 4, got, sizeof(got));
    assert_string_equal(got, "2,3,4,1"); /* priority, then id */
    for (int i = 0; i < 4; i++)
        assert_false(greedy[i]);
    tessera_plugin.destroy(st);
}

static void test_with_policy(void **state)
{
    (void)state;
    struct policy p;
    char err[128], got[32];
    policy_defaults(&p);
    assert_int_equal(policy_parse("help_starving_jobs: true\nstarve_max: 0:10:00\n", "f", &p,
                                  err, sizeof(err)),
                     TS_OK);
    struct policy_unit u[4];
    unsigned char greedy[4];
    units4(u);
    struct priority_view v = {.now = 5, .policy = &p.set[POLICY_PRIME]};
    assert_int_equal(tessera_plugin.order(NULL, &v, u, 4, greedy), TS_OK);
    ids(u, 4, got, sizeof(got));
    assert_string_equal(got, "3,2,1,4"); /* the starving 3, then shortest first */
    assert_false(greedy[0]);             /* starving: it keeps its reservation */
    assert_true(greedy[1] && greedy[2] && greedy[3]);
    p.set[POLICY_PRIME].strict_fifo = 1;
    assert_int_equal(tessera_plugin.order(NULL, &v, u, 4, greedy), TS_OK);
    for (int i = 0; i < 4; i++)
        assert_false(greedy[i]);
    /* fair share from the view's tree */
    struct fairshare *fs;
    assert_int_equal(fairshare_parse("a 1 root 1\nb 2 root 1\n", "rg", 0, &fs, err, sizeof(err)),
                     TS_OK);
    fairshare_charge(fs, fairshare_find(fs, "a"), 1e6);
    assert_int_equal(policy_parse("fair_share: true\nhelp_starving_jobs: false\n", "f", &p, err,
                                  sizeof(err)),
                     TS_OK);
    units4(u);
    u[0].fs_entity = u[1].fs_entity = fairshare_find(fs, "a");
    u[2].fs_entity = u[3].fs_entity = fairshare_find(fs, "b");
    v.fairshare = fs;
    assert_int_equal(tessera_plugin.order(NULL, &v, u, 4, greedy), TS_OK);
    ids(u, 4, got, sizeof(got));
    assert_string_equal(got, "3,4,2,1"); /* b's first (each by shortest first), then a's */
    fairshare_destroy(fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_policy),
        cmocka_unit_test(test_with_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
