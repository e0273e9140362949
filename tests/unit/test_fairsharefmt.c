/* Unit tests for "scontrol show fairshare"'s text (common/format/fairsharefmt.c): the header,
 * sshare's columns, indentation by depth, long names cut, impossible numbers shown as 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/fairsharefmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_table(void **state)
{
    (void)state;
    Tessera__FairshareNode n[3];
    Tessera__FairshareNode *p[3] = {&n[0], &n[1], &n[2]};
    for (int i = 0; i < 3; i++)
        tessera__fairshare_node__init(&n[i]);
    n[0].name = "root";
    n[0].shares = 1;
    n[0].norm_shares = 1;
    n[0].usage = 7200;
    n[0].effective_usage = 1;
    n[0].factor = 0.5;
    n[1].name = "physics";
    n[1].id = 50;
    n[1].depth = 1;
    n[1].shares = 10;
    n[1].norm_shares = 0.25;
    n[1].usage = 1800.4;
    n[1].effective_usage = 0.25;
    n[1].factor = 0.5;
    n[2].name = "a-very-long-user-name-indeed";
    n[2].id = 1000;
    n[2].depth = 2;
    n[2].shares = 3;
    n[2].norm_shares = NAN;
    n[2].usage = -4;
    n[2].effective_usage = INFINITY;
    n[2].factor = 1;
    Tessera__FairshareQueryResponse r = TESSERA__FAIRSHARE_QUERY_RESPONSE__INIT;
    r.nodes = p;
    r.n_nodes = 3;
    r.entity = "account";
    r.enabled = 1;
    r.half_life = 86400;
    char *t = fairsharefmt_table(&r);
    assert_non_null(t);
    const char *want =
        "Entity=account FairShare=on HalfLife=1-00:00:00\n"
        "Name                         ID  RawShares  NormShares    RawUsage  EffectvUsage  FairShare\n"
        "-------------------- ---------- ---------- ----------- ----------- ------------- ----------\n"
        "root                          0          1    1.000000        7200      1.000000   0.500000\n"
        " physics                     50         10    0.250000        1800      0.250000   0.500000\n"
        "  a-very-long-user-n       1000          3    0.000000           0      0.000000   1.000000\n";
    assert_string_equal(t, want);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
