/* Unit tests for fair share (common/sched/fairshare.c): the source's resource-group tree
 * (shares, parents, "root" and "unknown"), names added under "unknown", usage charged up
 * the tree and decayed with a fixed clock, clamped arithmetic, file errors, and the
 * fair-share order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/util/errors.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static struct fairshare *source_tree(uint32_t unknown_shares)
{
    struct fairshare *fs;
    char err[256], path[512];
    snprintf(path, sizeof(path), "%s/contrib/policy/resource_group", TESSERA_SOURCE_DIR);
    if (fairshare_load(path, unknown_shares, &fs, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    return fs;
}

static struct fairshare_info info_of(const struct fairshare *fs, const char *name)
{
    struct fairshare_info in;
    for (size_t i = 0; fairshare_info(fs, i, &in) == TS_OK; i++)
        if (!strcmp(in.name, name))
            return in;
    fail_msg("no node %s", name);
    return in;
}

static void test_source_tree(void **state)
{
    (void)state;
    struct fairshare *fs = source_tree(10);
    assert_int_equal(fairshare_count(fs), 18); /* 16 lines, root and unknown */
    struct fairshare_info in;
    assert_int_equal(fairshare_info(fs, 0, &in), TS_OK);
    assert_string_equal(in.name, "root");
    assert_int_equal(in.parent, -1);
    NEAR(in.norm_shares, 1.0);
    /* root's children: grp1 10, grp2 20, grp3 10, usr1 5, unknown 10 */
    NEAR(info_of(fs, "grp1").norm_shares, 10.0 / 55);
    NEAR(info_of(fs, "grp2").norm_shares, 20.0 / 55);
    NEAR(info_of(fs, "usr1").norm_shares, 5.0 / 55);
    NEAR(info_of(fs, "unknown").norm_shares, 10.0 / 55);
    /* grp1: grp4 20, grp5 10, usr2 10 */
    NEAR(info_of(fs, "grp4").norm_shares, 10.0 / 55 * 20 / 40);
    NEAR(info_of(fs, "usr8").norm_shares, 10.0 / 55 * 20 / 40 / 2);
    /* grp2: grp6 20, usr3 10; grp6: usr4 10, usr5 10, usr6 20 */
    NEAR(info_of(fs, "usr6").norm_shares, 20.0 / 55 * 20 / 30 * 20 / 40);
    NEAR(info_of(fs, "usr3").norm_shares, 20.0 / 55 * 10 / 30);
    in = info_of(fs, "usr10");
    assert_int_equal(in.id, 69);
    assert_int_equal(in.depth, 3); /* root > grp1 > grp5 > usr10 */
    assert_int_equal(in.shares, 10);
    /* tree order: a node right after its parent or an earlier sibling's subtree */
    size_t pos_grp4 = 0, pos_usr8 = 0, pos_usr9 = 0, pos_grp5 = 0;
    for (size_t i = 0; fairshare_info(fs, i, &in) == TS_OK; i++) {
        if (!strcmp(in.name, "grp4")) pos_grp4 = i;
        if (!strcmp(in.name, "usr8")) pos_usr8 = i;
        if (!strcmp(in.name, "usr9")) pos_usr9 = i;
        if (!strcmp(in.name, "grp5")) pos_grp5 = i;
    }
    assert_int_equal(pos_usr8, pos_grp4 + 1);
    assert_int_equal(pos_usr9, pos_grp4 + 2);
    assert_int_equal(pos_grp5, pos_grp4 + 3);
    fairshare_destroy(fs);
}

static void test_unknown_names(void **state)
{
    (void)state;
    struct fairshare *fs = source_tree(10);
    assert_int_equal(fairshare_find(fs, "nobody"), -1);
    int a = fairshare_entity(fs, "nobody");
    assert_true(a >= 2);
    assert_int_equal(fairshare_entity(fs, "nobody"), a);
    assert_int_equal(fairshare_entity(fs, "usr3"), fairshare_find(fs, "usr3"));
    assert_int_equal(fairshare_entity(fs, ""), FAIRSHARE_UNKNOWN);
    assert_int_equal(fairshare_entity(fs, "root"), FAIRSHARE_UNKNOWN); /* the user root */
    assert_int_equal(fairshare_entity(fs, "unknown"), FAIRSHARE_UNKNOWN);
    NEAR(fairshare_norm_shares(fs, a), 10.0 / 55); /* alone under unknown */
    int b = fairshare_entity(fs, "somebody");
    NEAR(fairshare_norm_shares(fs, a), 10.0 / 55 / 2); /* one share each */
    NEAR(fairshare_norm_shares(fs, b), 10.0 / 55 / 2);
    struct fairshare_info in = info_of(fs, "somebody");
    assert_int_equal(in.parent, FAIRSHARE_UNKNOWN);
    assert_int_equal(fairshare_count(fs), 20);
    fairshare_destroy(fs);
}

static void test_usage_and_decay(void **state)
{
    (void)state;
    struct fairshare *fs = source_tree(10);
    int u4 = fairshare_find(fs, "usr4"), u1 = fairshare_find(fs, "usr1");
    fairshare_charge(fs, u4, 3000);
    fairshare_charge(fs, u1, 1000);
    NEAR(info_of(fs, "usr4").usage, 3000);
    NEAR(info_of(fs, "grp6").usage, 3000);
    NEAR(info_of(fs, "grp2").usage, 3000);
    NEAR(info_of(fs, "root").usage, 4000);
    NEAR(info_of(fs, "usr4").effective_usage, 0.75);
    NEAR(info_of(fs, "usr1").effective_usage, 0.25);
    /* usr1 used 0.25 of the machine against a share of 5/55: 2^(-0.25 * 11) */
    NEAR(info_of(fs, "usr1").factor, exp2(-0.25 * 11));
    NEAR(info_of(fs, "usr5").factor, 1.0); /* nothing used */
    /* one half-life halves, ten divide by 1024 */
    fairshare_decay(fs, 3600, 3600);
    NEAR(info_of(fs, "root").usage, 2000);
    NEAR(fairshare_own_usage(fs, u4), 1500);
    fairshare_decay(fs, 9 * 3600, 3600);
    NEAR(info_of(fs, "usr4").usage, 3000.0 / 1024);
    /* no decay without a half-life or time */
    fairshare_decay(fs, 3600, 0);
    fairshare_decay(fs, -5, 3600);
    NEAR(info_of(fs, "usr4").usage, 3000.0 / 1024);
    /* a very long time: usage goes to zero, never a denormal */
    fairshare_decay(fs, 1e9, 1);
    assert_true(info_of(fs, "root").usage == 0);
    fairshare_decay(fs, 3600.0 * 40, 3600);
    assert_true(info_of(fs, "usr4").usage == 0);
    NEAR(info_of(fs, "usr4").factor, 1.0);
    /* restored usage fixes the ancestors */
    fairshare_set_own_usage(fs, u4, 500);
    NEAR(info_of(fs, "grp2").usage, 500);
    NEAR(info_of(fs, "root").usage, 500);
    fairshare_destroy(fs);
}

static void test_clamped(void **state)
{
    (void)state;
    struct fairshare *fs;
    char err[256];
    assert_int_equal(fairshare_parse("a 1 root 1\nz 2 root 0\n", "f", 0, &fs, err, sizeof(err)),
                     TS_OK);
    int a = fairshare_find(fs, "a"), z = fairshare_find(fs, "z");
    fairshare_charge(fs, a, NAN);
    fairshare_charge(fs, a, INFINITY);
    fairshare_charge(fs, a, -5);
    assert_true(info_of(fs, "a").usage == 0);
    fairshare_charge(fs, a, DBL_MAX);
    fairshare_charge(fs, a, DBL_MAX);
    struct fairshare_info in = info_of(fs, "a");
    assert_true(isfinite(in.usage) && isfinite(in.factor) && isfinite(in.effective_usage));
    fairshare_charge(fs, z, 10);
    in = info_of(fs, "z"); /* no share: factor 0, not NaN */
    assert_true(in.norm_shares == 0 && in.factor == 0);
    in = info_of(fs, "unknown"); /* unknown_shares 0 */
    assert_true(in.norm_shares == 0 && in.factor == 0 && in.usage == 0);
    /* a unit of a share-less entity goes last */
    struct policy_unit u[2] = {{.id = 1, .fs_entity = z, .cput = 1},
                               {.id = 2, .fs_entity = a, .cput = 1}};
    assert_int_equal(fairshare_order(fs, u, 2), TS_OK);
    assert_int_equal(u[0].id, 2);
    fairshare_destroy(fs);
}

static void test_errors(void **state)
{
    (void)state;
    struct fairshare *fs;
    char err[256];
    assert_int_equal(fairshare_parse("a 1 root\n", "rg", 10, &fs, err, sizeof(err)), TS_ECONF);
    assert_null(fs);
    assert_string_equal(err,
                        "rg:1: a line is \"name id parent shares\" (id and shares whole numbers)");
    assert_int_equal(fairshare_parse("# c\nb 2 a 10\na 1 root 1\n", "rg", 10, &fs, err,
                                     sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "rg:2: the parent is not defined on a line above");
    assert_int_equal(fairshare_parse("a 1 root 1\na 2 root 1\n", "rg", 10, &fs, err, sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "rg:2: a name is given twice");
    assert_int_equal(fairshare_parse("a 1 root 1\nb 1 root 1\n", "rg", 10, &fs, err, sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "rg:2: an id is given twice");
    assert_int_equal(fairshare_parse("unknown 1 root 1\n", "rg", 10, &fs, err, sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "rg:1: \"root\" and \"unknown\" are added by the scheduler");
    assert_int_equal(fairshare_parse("a x root 1\n", "rg", 10, &fs, err, sizeof(err)), TS_ECONF);
    assert_int_equal(fairshare_parse("a 1 root -1\n", "rg", 10, &fs, err, sizeof(err)), TS_ECONF);
    assert_int_equal(fairshare_parse("a 1 root 1 extra\n", "rg", 10, &fs, err, sizeof(err)),
                     TS_ECONF);
    assert_int_equal(fairshare_load("/nonexistent/rg", 10, &fs, err, sizeof(err)), TS_ECONF);
    /* an empty file: root and unknown */
    assert_int_equal(fairshare_parse("", "rg", 10, &fs, err, sizeof(err)), TS_OK);
    assert_int_equal(fairshare_count(fs), 2);
    NEAR(info_of(fs, "unknown").norm_shares, 1.0);
    fairshare_destroy(fs);
}

static void ids_of(const struct policy_unit *u, size_t n, char *out, size_t len)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, i ? " %u" : "%u", u[i].id);
}

static void test_order(void **state)
{
    (void)state;
    struct fairshare *fs;
    char err[256], got[128];
    assert_int_equal(fairshare_parse("a 1 root 1\nb 2 root 1\n", "rg", 0, &fs, err, sizeof(err)),
                     TS_OK);
    int a = fairshare_find(fs, "a"), b = fairshare_find(fs, "b");
    /* nothing used: the entities take turns, each its own units in order */
    struct policy_unit u[5] = {
        {.id = 1, .fs_entity = a, .cput = 100}, {.id = 2, .fs_entity = a, .cput = 100},
        {.id = 3, .fs_entity = b, .cput = 100}, {.id = 4, .fs_entity = b, .cput = 100},
        {.id = 5, .fs_entity = a, .cput = 100},
    };
    assert_int_equal(fairshare_order(fs, u, 5), TS_OK);
    ids_of(u, 5, got, sizeof(got));
    assert_string_equal(got, "1 3 2 4 5");
    /* a used much more than its half: b's units first, until b has used as much */
    fairshare_charge(fs, a, 250);
    struct policy_unit v[5] = {
        {.id = 1, .fs_entity = a, .cput = 100}, {.id = 2, .fs_entity = a, .cput = 100},
        {.id = 3, .fs_entity = b, .cput = 100}, {.id = 4, .fs_entity = b, .cput = 100},
        {.id = 5, .fs_entity = b, .cput = 100},
    };
    assert_int_equal(fairshare_order(fs, v, 5), TS_OK);
    ids_of(v, 5, got, sizeof(got));
    assert_string_equal(got, "3 4 5 1 2");
    /* an entity unknown to the tree counts as "unknown" */
    struct policy_unit w[2] = {{.id = 7, .fs_entity = 99, .cput = 1},
                               {.id = 8, .fs_entity = b, .cput = 1}};
    assert_int_equal(fairshare_order(fs, w, 2), TS_OK);
    assert_int_equal(w[0].id, 8); /* unknown has no share here */
    assert_int_equal(w[1].fs_entity, FAIRSHARE_UNKNOWN);
    fairshare_destroy(fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_tree),   cmocka_unit_test(test_unknown_names),
        cmocka_unit_test(test_usage_and_decay), cmocka_unit_test(test_clamped),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
