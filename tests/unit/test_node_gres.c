/* The generic resources a node daemon reports at registration (ctld/node_gres.c): a
 * malformed or oversized report is refused before anything is spent on it; a report
 * with fewer units than the node's Gres= gives Slurm's drain reason. */
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/gres/gres_conf.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct gres_count configured[] = {{"gpu", "", 4}};
static struct conf_node cfg = {.name = "n1", .gres = configured, .ngres = 1};
static struct node node = {.cfg = &cfg, .name = "n1"};

static int check(Tessera__GresUnitReport **gres, size_t n, char *why, char *err)
{
    Tessera__NodeRegisterRequest req = TESSERA__NODE_REGISTER_REQUEST__INIT;
    req.name = "n1";
    req.gres = gres;
    req.n_gres = n;
    return node_gres_check(&node, &req, why, 256, err, 256);
}

static void test_counts(void **state)
{
    (void)state;
    char *files[] = {"/dev/nvidia0", "/dev/nvidia1"};
    Tessera__GresUnitReport a = TESSERA__GRES_UNIT_REPORT__INIT, b = a;
    a.name = b.name = "gpu";
    a.type = "a100";
    a.count = 2;
    a.files = files;
    a.n_files = 2;
    b.count = 2;
    Tessera__GresUnitReport *both[] = {&a, &b};
    char why[256], err[256];
    assert_int_equal(check(both, 2, why, err), TS_OK);
    assert_string_equal(why, "");
    assert_int_equal(check(both, 1, why, err), TS_OK);
    assert_string_equal(why, "gres/gpu count reported lower than configured (2 < 4)");
    assert_int_equal(check(both, 2, why, err), TS_OK);
    /* the report is kept: a configuration that later asks for more is short of it */
    configured[0].count = 8;
    assert_int_equal(node_gres_short(&node, why, sizeof(why)), 1);
    assert_string_equal(why, "gres/gpu count reported lower than configured (4 < 8)");
    configured[0].count = 4;
    assert_int_equal(node_gres_short(&node, why, sizeof(why)), 0);
    assert_string_equal(why, "");
    assert_int_equal(check(NULL, 0, why, err), TS_OK);
    assert_string_equal(why, "gres/gpu count reported lower than configured (0 < 4)");
    free(node.gres_found);
    node.gres_found = NULL;
}

static void test_refused(void **state)
{
    (void)state;
    char why[256], err[256];
    Tessera__GresUnitReport g = TESSERA__GRES_UNIT_REPORT__INIT;
    Tessera__GresUnitReport *one[] = {&g};
    g.name = "gpu";
    g.count = 0;
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    assert_string_equal(err, "node n1 reports an invalid generic resource");
    g.count = GRES_COUNT_MAX + 1;
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    g.count = 1;
    g.name = "g/pu";
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    g.name = "gpu";
    g.type = "a b";
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    g.type = "";
    char longname[GRES_NAME_MAX + 8];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    g.name = longname;
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    g.name = "gpu";
    /* a file path beyond GRES_FILE_MAX, too many files in all, too many entries */
    char longpath[GRES_FILE_MAX + 8];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    char *files[GRES_UNITS_MAX + 1];
    for (size_t i = 0; i <= GRES_UNITS_MAX; i++)
        files[i] = "/dev/x";
    files[0] = longpath;
    g.files = files;
    g.n_files = 1;
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    files[0] = "/dev/x";
    g.n_files = GRES_UNITS_MAX;
    assert_int_equal(check(one, 1, why, err), TS_OK);
    free(node.gres_found);
    node.gres_found = NULL;
    g.n_files = GRES_UNITS_MAX + 1;
    assert_int_equal(check(one, 1, why, err), TS_EINVAL);
    g.n_files = GRES_UNITS_MAX;
    Tessera__GresUnitReport h = g;
    h.n_files = 1;
    Tessera__GresUnitReport *two[] = {&g, &h};
    assert_int_equal(check(two, 2, why, err), TS_EINVAL);
    Tessera__GresUnitReport **many = calloc(GRES_UNITS_MAX + 1, sizeof(*many));
    for (size_t i = 0; i <= GRES_UNITS_MAX; i++)
        many[i] = &h;
    h.n_files = 0;
    assert_int_equal(check(many, GRES_UNITS_MAX + 1, why, err), TS_EINVAL);
    assert_string_equal(err, "node n1 reports more than 1024 generic resources");
    free(many);
    /* a refused report keeps nothing */
    assert_null(node.gres_found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
