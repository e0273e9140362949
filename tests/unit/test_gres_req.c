/* GRES requests: the option forms and their stored forms, every malformed or
 * out-of-bounds spec refused, Slurm's rules for combining the options, names against
 * GresTypes, and whether a node's units could hold a request. */
#include "common/gres/gres_req.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void from_option(enum gres_req_option opt, const char *arg, const char *want)
{
    char *out = (char *)"untouched";
    print_message("%s\n", arg);
    assert_int_equal(gres_req_from_option(opt, arg, &out), TS_OK);
    if (want)
        assert_string_equal(out, want);
    else
        assert_null(out);
    free(out);
}

static void test_option_forms(void **state)
{
    (void)state;
    from_option(GRES_REQ_OPT_GRES, "gpu", "gres:gpu");
    from_option(GRES_REQ_OPT_GRES, "gpu:2", "gres:gpu:2");
    from_option(GRES_REQ_OPT_GRES, "gpu:a100:2", "gres:gpu:a100:2");
    from_option(GRES_REQ_OPT_GRES, "gpu:a100:2,bandwidth:1G", "gres:gpu:a100:2,gres:bandwidth:1G");
    from_option(GRES_REQ_OPT_GRES, "gpu:0", "gres:gpu:0");
    from_option(GRES_REQ_OPT_GRES, "none", NULL);
    from_option(GRES_REQ_OPT_GRES, "NoNe", NULL);
    from_option(GRES_REQ_OPT_GPUS, "4", "gres:gpu:4");
    from_option(GRES_REQ_OPT_GPUS, "abc", "gres:gpu:abc"); /* a type, as Slurm reads it */
    from_option(GRES_REQ_OPT_GPUS, "a100:1,v100:2", "gres:gpu:a100:1,gres:gpu:v100:2");
}

static void refused(enum gres_req_option opt, const char *arg, int code)
{
    char *out = NULL;
    print_message("bad %s\n", arg);
    assert_int_equal(gres_req_from_option(opt, arg, &out), code);
    assert_null(out);
}

static void test_option_refusals(void **state)
{
    (void)state;
    static const char *const bad_gres[] = {
        ",", "gpu,", ",gpu", "gpu,,bw", "gpu:", ":1", "1gpu:1", "gpu:a:1:2", "gpu:a b:1",
        "gp u", "gpu;rm", "gpu:99999999999999999999", "gpu:2000000P", "none,gpu:1", "gpu,none",
        "g\xc3\xa9:1",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1", /* a name of 45 */
    };
    for (size_t i = 0; i < sizeof(bad_gres) / sizeof(bad_gres[0]); i++)
        refused(GRES_REQ_OPT_GRES, bad_gres[i], TS_EINVALID_GRES);
    static const char *const bad_count[] = {"gpu:1x", "gpu:a100:x1", "gpu:1.5", "gpu:1GB", "",
                                            "gpu:a100:"};
    for (size_t i = 0; i < sizeof(bad_count) / sizeof(bad_count[0]); i++)
        refused(GRES_REQ_OPT_GRES, bad_count[i], TS_EINVALID_TRES);
    refused(GRES_REQ_OPT_GPUS, "", TS_EINVALID_GRES);
    refused(GRES_REQ_OPT_GPUS, "a:b:1", TS_EINVALID_GRES);
    /* seventeen items, and a list longer than the bound */
    char many[256] = "gpu";
    for (int i = 0; i < 16; i++)
        strcat(many, ",gpu");
    refused(GRES_REQ_OPT_GRES, many, TS_EINVALID_GRES);
    char *longest = malloc(GRES_REQ_SPEC_MAX + 8);
    assert_non_null(longest);
    memset(longest, 'g', GRES_REQ_SPEC_MAX + 6);
    longest[GRES_REQ_SPEC_MAX + 6] = '\0';
    refused(GRES_REQ_OPT_GRES, longest, TS_EINVALID_GRES);
    free(longest);
}

static void test_parse_stored(void **state)
{
    (void)state;
    struct gres_req_list l;
    assert_int_equal(gres_req_parse("gres:gpu:a100:2,gres:bandwidth:2K,gres:gpu,gres:mps:1:3", &l),
                     TS_OK);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.item[0].name, "gpu");
    assert_string_equal(l.item[0].type, "a100");
    assert_int_equal(l.item[0].count, 2);
    assert_string_equal(l.item[1].type, "");
    assert_int_equal(l.item[1].count, 2048);
    assert_int_equal(l.item[2].count, 1);
    assert_string_equal(l.item[3].type, "1"); /* Slurm reads the middle field as a type */
    assert_int_equal(l.item[3].count, 3);
    assert_int_equal(gres_req_parse("gres:gpu:1P", &l), TS_OK);
    assert_true(l.item[0].count == GRES_REQ_COUNT_MAX);
    assert_int_equal(gres_req_parse(NULL, &l), TS_OK);
    assert_int_equal(l.n, 0);
    assert_int_equal(gres_req_parse("", &l), TS_OK);
    assert_int_equal(l.n, 0);
    /* a raw request must carry the prefix on every item */
    assert_int_equal(gres_req_parse("gpu:1", &l), TS_EINVALID_GRES);
    assert_int_equal(gres_req_parse("gres:gpu:1,gpu:1", &l), TS_EINVALID_GRES);
    assert_int_equal(gres_req_parse("gres/gpu:1", &l), TS_EINVALID_GRES);
    assert_int_equal(gres_req_parse("gres:gpu:2P", &l), TS_EINVALID_GRES);
}

/* A component with the given GRES fields and task shape; returns the check's code and
 * leaves its sentence in why. */
static int check(const char *node, const char *job, const char *task, const char *cpus,
                 const char *mem, int ntasks, char *why)
{
    struct gres_req_job j = {.per_node = node, .per_job = job, .per_task = task,
                             .cpus_per_tres = cpus, .mem_per_tres = mem,
                             .has_ntasks = ntasks > 0, .ntasks = ntasks > 0 ? (uint32_t)ntasks : 0,
                             .has_task_shape = ntasks > 0};
    why[0] = '\0';
    return gres_req_check(&j, why, 200);
}

static void test_check_combinations(void **state)
{
    (void)state;
    char why[200];
    assert_int_equal(check("gres:gpu:2", "gres:gpu:4", NULL, "gres:gpu:2", "gres:gpu:100", 0, why),
                     TS_OK);
    assert_int_equal(check(NULL, "gres:gpu:2", "gres:gpu:1", NULL, NULL, 2, why), TS_OK);
    assert_int_equal(check(NULL, NULL, "gres:gpu:1", NULL, NULL, 2, why), TS_OK);
    assert_int_equal(check(NULL, "gres:gpu:1", "gres:gpu:1", NULL, NULL, 0, why), TS_OK);

    assert_int_equal(check(NULL, NULL, "gres:gpu:1", NULL, NULL, 0, why), TS_EINVALID_GRES);
    assert_string_equal(why, "--gpus-per-task used without either --gpus or -n/--ntasks is not "
                             "allowed.");
    assert_int_equal(check(NULL, "gres:gpu:3", "gres:gpu:1", NULL, NULL, 2, why), TS_EINVALID_GRES);
    assert_string_equal(why, "Based on --gpus and --gpus-per-task number of requested tasks "
                             "differ from -n/--ntasks.");
    assert_int_equal(check("gres:gpu:2", "gres:gpu:1", NULL, NULL, NULL, 0, why), TS_EINVALID_GRES);
    assert_string_equal(why, "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                             "--gpus-per-socket");
    assert_int_equal(check("gres:gpu:a100:1,gres:gpu:2", NULL, NULL, NULL, NULL, 0, why),
                     TS_EINVALID_GRES);
    assert_string_equal(why, "Invalid GRES specification (with and without type identification)");
    assert_int_equal(check(NULL, NULL, NULL, NULL, "gres:gpu:100", 0, why), TS_EINVALID_GRES);
    assert_string_equal(why, "Requested mem_per_tres=gres:gpu:100 but did not request any GPU.");
    assert_int_equal(check("gres:bandwidth:1", NULL, NULL, NULL, "gres:gpu:100", 0, why),
                     TS_EINVALID_GRES);
    /* what only --gpus gives holds only GPUs; per-GPU values name the one plain GPU */
    assert_int_equal(check(NULL, "gres:bandwidth:1", NULL, NULL, NULL, 0, why), TS_EINVALID_GRES);
    assert_int_equal(check(NULL, "gres:gpu:1", NULL, "gres:gpu:0", NULL, 0, why), TS_EINVALID_GRES);
    assert_int_equal(check(NULL, "gres:gpu:1", NULL, "gres:gpu:a100:2", NULL, 0, why),
                     TS_EINVALID_GRES);
    assert_int_equal(check(NULL, "gres:gpu:1", NULL, "gres:gpu:1,gres:gpu:1", NULL, 0, why),
                     TS_EINVALID_GRES);
    assert_int_equal(check("gres:gpu:1x", NULL, NULL, NULL, NULL, 0, why), TS_EINVALID_TRES);
    assert_int_equal(check("gpu:1", NULL, NULL, NULL, NULL, 0, why), TS_EINVALID_GRES);

    struct gres_req_job j = {.per_job = "gres:gpu:1", .cpus_per_tres = "gres:gpu:2",
                             .has_cpus_per_task = 1};
    assert_int_equal(gres_req_check(&j, why, sizeof(why)), TS_EINVALID_GRES);
    assert_string_equal(why, "--cpus-per-gpu is mutually exclusive with --cpus-per-task");
    j = (struct gres_req_job){.per_job = "gres:gpu:1", .mem_per_tres = "gres:gpu:2", .has_mem = 1};
    assert_int_equal(gres_req_check(&j, why, sizeof(why)), TS_EINVALID_GRES);
    assert_string_equal(why, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
    j = (struct gres_req_job){.flags = "enforce-binding"};
    assert_int_equal(gres_req_check(&j, why, sizeof(why)), TS_OK);
    j = (struct gres_req_job){.flags = "bind-everything"};
    assert_int_equal(gres_req_check(&j, why, sizeof(why)), TS_EINVALID_GRES);
    assert_string_equal(why, "Invalid --gres-flags specification");
}

static void test_names_known(void **state)
{
    (void)state;
    struct gres_req_list l;
    assert_int_equal(gres_req_parse("gres:gpu:1,gres:bandwidth:1G", &l), TS_OK);
    assert_int_equal(gres_req_names_known(&l, "gpu,bandwidth"), TS_OK);
    assert_int_equal(gres_req_names_known(&l, "bandwidth,gpu,mps"), TS_OK);
    assert_int_equal(gres_req_names_known(&l, "gpu"), TS_EINVALID_GRES);
    assert_int_equal(gres_req_names_known(&l, "gpus,bandwidth"), TS_EINVALID_GRES);
    assert_int_equal(gres_req_names_known(&l, "gp,bandwidth"), TS_EINVALID_GRES);
    assert_int_equal(gres_req_names_known(&l, ""), TS_EINVALID_GRES);
    assert_int_equal(gres_req_names_known(&l, NULL), TS_EINVALID_GRES);
    assert_int_equal(gres_req_parse("gres:GPU:1", &l), TS_OK);
    assert_int_equal(gres_req_names_known(&l, "gpu"), TS_EINVALID_GRES); /* names keep case */
}

static void test_fits(void **state)
{
    (void)state;
    const struct gres_count node[] = {
        {"gpu", "a100", 2}, {"gpu", "v100", 1}, {"bandwidth", "", 10ull << 30},
    };
    struct gres_req_list l;
    static const struct {
        const char *spec;
        int fits;
    } cases[] = {
        {"gres:gpu:3", 1},          {"gres:gpu:4", 0},          {"gres:gpu:a100:2", 1},
        {"gres:gpu:A100:2", 1},     {"gres:gpu:a100:3", 0},     {"gres:gpu:k80:1", 0},
        {"gres:gpu:a100:1,gres:gpu:a100:1", 1}, {"gres:gpu:a100:2,gres:gpu:a100:1", 0},
        {"gres:gpu:a100:2,gres:gpu:v100:1", 1}, {"gres:gpu:2,gres:gpu:2", 0},
        {"gres:bandwidth:10G", 1},  {"gres:bandwidth:11G", 0},  {"gres:mps:1", 0},
        {"gres:gpu:0", 1},          {"gres:mps:0", 1},          {"", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("%s\n", cases[i].spec);
        assert_int_equal(gres_req_parse(cases[i].spec, &l), TS_OK);
        assert_int_equal(gres_req_fits(&l, node, 3), cases[i].fits);
        assert_int_equal(gres_req_fits(&l, NULL, 0), l.n == 0 || gres_req_total(&l, "gpu") +
                                                                         gres_req_total(&l, "mps") +
                                                                         gres_req_total(&l, "bandwidth") ==
                                                                     0);
    }
    assert_int_equal(gres_req_available(node, 3, &(struct gres_count){"gpu", "", 1}), 3);
    assert_int_equal(gres_req_available(node, 3, &(struct gres_count){"gpu", "v100", 1}), 1);
    /* counts that would overflow a sum saturate */
    const struct gres_count huge[] = {{"gpu", "", UINT64_MAX}, {"gpu", "", UINT64_MAX}};
    assert_true(gres_req_available(huge, 2, &(struct gres_count){"gpu", "", 1}) == UINT64_MAX);
}

/* A request against two nodes: n1 with two a100 GPUs, n2 with one v100 GPU and 10G of
 * bandwidth. */
static int tally(const char *node, const char *job, const char *task, const char *types,
                 uint32_t min_nodes)
{
    static const struct gres_count n1[] = {{"gpu", "a100", 2}};
    static const struct gres_count n2[] = {{"gpu", "v100", 1}, {"bandwidth", "", 10ull << 30}};
    struct gres_req_job j = {.per_node = node, .per_job = job, .per_task = task};
    struct gres_req_tally t;
    int err = gres_req_tally_init(&t, &j, types);
    if (err)
        return err;
    gres_req_tally_node(&t, n1, 1);
    gres_req_tally_node(&t, n2, 2);
    gres_req_tally_node(&t, NULL, 0); /* a node without any */
    return gres_req_tally_verdict(&t, min_nodes);
}

static void test_tally(void **state)
{
    (void)state;
    const char *types = "gpu,bandwidth";
    assert_int_equal(tally(NULL, NULL, NULL, NULL, 3), TS_OK); /* nothing asked, no GresTypes */
    assert_int_equal(tally("gres:gpu:2", NULL, NULL, types, 1), TS_OK);
    assert_int_equal(tally("gres:gpu:3", NULL, NULL, types, 1), TS_ENODE_CONFIG);
    assert_int_equal(tally("gres:gpu:1", NULL, NULL, types, 2), TS_OK);
    assert_int_equal(tally("gres:gpu:1", NULL, NULL, types, 3), TS_ENODE_CONFIG);
    assert_int_equal(tally("gres:gpu:k80:1", NULL, NULL, types, 1), TS_ENODE_CONFIG);
    assert_int_equal(tally("gres:gpu:v100:1,gres:bandwidth:1G", NULL, NULL, types, 1), TS_OK);
    assert_int_equal(tally("gres:gpu:a100:1,gres:bandwidth:1G", NULL, NULL, types, 1),
                     TS_ENODE_CONFIG); /* no one node has both */
    assert_int_equal(tally(NULL, "gres:gpu:3", NULL, types, 1), TS_OK); /* over the nodes */
    assert_int_equal(tally(NULL, "gres:gpu:4", NULL, types, 1), TS_ENODE_CONFIG);
    assert_int_equal(tally(NULL, "gres:gpu:a100:2", NULL, types, 1), TS_OK);
    assert_int_equal(tally(NULL, "gres:gpu:a100:3", NULL, types, 1), TS_ENODE_CONFIG);
    assert_int_equal(tally(NULL, "gres:gpu:a100:2,gres:gpu:v100:1", NULL, types, 1), TS_OK);
    assert_int_equal(tally(NULL, "gres:gpu:a100:2,gres:gpu:a100:1", NULL, types, 1),
                     TS_ENODE_CONFIG);
    assert_int_equal(tally("gres:gpu:1", NULL, "gres:gpu:1", types, 1), TS_OK);
    assert_int_equal(tally("gres:gpu:1", NULL, "gres:gpu:2", types, 1), TS_ENODE_CONFIG);
    assert_int_equal(tally("gres:gpu:0", "gres:gpu:0", NULL, types, 3), TS_OK);
    /* names against GresTypes */
    assert_int_equal(tally("gres:mps:1", NULL, NULL, types, 1), TS_EINVALID_GRES);
    assert_int_equal(tally(NULL, "gres:gpu:1", NULL, "bandwidth", 1), TS_EINVALID_GRES);
    assert_int_equal(tally(NULL, NULL, "gres:gpu:1", NULL, 1), TS_EINVALID_GRES);
    assert_int_equal(tally("gres:gpu:1x", NULL, NULL, types, 1), TS_EINVALID_TRES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_forms),       cmocka_unit_test(test_option_refusals),
        cmocka_unit_test(test_parse_stored),       cmocka_unit_test(test_check_combinations),
        cmocka_unit_test(test_names_known),        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_tally),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
