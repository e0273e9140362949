/* Generic resources' configuration: node Gres= specs and counts, gres.conf's lines (every
 * malformed or out-of-bounds one refused with its file and line), a node's units, and
 * the NVIDIA driver's procfs files on samples in a temporary folder. */
#include "common/gres/gres_conf.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void test_counts(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(gres_count_parse("4", &v), TS_OK);
    assert_int_equal(v, 4);
    assert_int_equal(gres_count_parse("10G", &v), TS_OK);
    assert_int_equal(v, UINT64_C(10737418240));
    assert_int_equal(gres_count_parse("3k", &v), TS_OK);
    assert_int_equal(v, 3072);
    static const char *const bad[] = {"", "0", "-1", "G", "4GG", "4X", " 4", "4 ",
                                      "99999999999999999999", "2048P", "1.5"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(gres_count_parse(bad[i], &v), TS_ENUMBER);
    char buf[32];
    gres_count_format(UINT64_C(10737418240), buf, sizeof(buf));
    assert_string_equal(buf, "10G");
    gres_count_format(4, buf, sizeof(buf));
    assert_string_equal(buf, "4");
    gres_count_format(1536, buf, sizeof(buf));
    assert_string_equal(buf, "1536");
}

static void test_spec(void **state)
{
    (void)state;
    struct gres_count *g = NULL;
    size_t n = 0;
    char err[256], buf[256];
    assert_int_equal(gres_spec_parse("gpu:a100:4,bandwidth:10G,mps", &g, &n, err, sizeof(err)),
                     TS_OK);
    assert_int_equal(n, 3);
    assert_string_equal(g[0].name, "gpu");
    assert_string_equal(g[0].type, "a100");
    assert_int_equal(g[0].count, 4);
    assert_string_equal(g[1].type, "");
    assert_int_equal(g[1].count, UINT64_C(10737418240));
    assert_int_equal(g[2].count, 1);
    assert_int_equal(gres_spec_format(g, n, buf, sizeof(buf)), TS_OK);
    assert_string_equal(buf, "gpu:a100:4,bandwidth:10G,mps:1");
    assert_int_equal(gres_spec_format(g, n, buf, 8), TS_ETOOBIG);
    free(g);
    assert_int_equal(gres_spec_parse("gpu:tesla", &g, &n, err, sizeof(err)), TS_OK);
    assert_string_equal(g[0].type, "tesla");
    assert_int_equal(g[0].count, 1);
    free(g);
    assert_int_equal(gres_spec_parse("", &g, &n, err, sizeof(err)), TS_OK);
    assert_int_equal(n, 0);
    static const char *const bad[] = {
        "gpu:0", "gpu:a:b:c", ":4", "gpu:", "gpu,,mps", "gpu,", "gp u:2", "gpu:a100:x",
        "gpu:2,gpu:3", "gpu:a/b:2", "gpu:a100:4:1", "g-pu:1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        assert_int_equal(gres_spec_parse(bad[i], &g, &n, err, sizeof(err)), TS_EINVAL);
        assert_null(g);
        assert_true(err[0] != '\0');
    }
    /* GRES_SPEC_MAX_ITEMS entries pass, one more does not; the length is bounded too */
    char spec[GRES_SPEC_MAX_LEN + 64] = "";
    for (int i = 0; i < GRES_SPEC_MAX_ITEMS; i++)
        snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%sr%d:1", i ? "," : "", i);
    assert_int_equal(gres_spec_parse(spec, &g, &n, err, sizeof(err)), TS_OK);
    free(g);
    strcat(spec, ",x:1");
    assert_int_equal(gres_spec_parse(spec, &g, &n, err, sizeof(err)), TS_EINVAL);
    memset(spec, 'a', sizeof(spec) - 1);
    spec[sizeof(spec) - 1] = '\0';
    assert_int_equal(gres_spec_parse(spec, &g, &n, err, sizeof(err)), TS_EINVAL);
}

static void test_types_and_check(void **state)
{
    (void)state;
    assert_true(gres_types_valid("gpu"));
    assert_true(gres_types_valid("gpu,bandwidth,mps"));
    assert_false(gres_types_valid(""));
    assert_false(gres_types_valid("gpu,"));
    assert_false(gres_types_valid("gpu,,mps"));
    assert_false(gres_types_valid("gpu:a100"));
    assert_true(gres_types_contains("gpu,bandwidth", "bandwidth"));
    assert_false(gres_types_contains("gpu,bandwidth", "band"));
    assert_false(gres_types_contains(NULL, "gpu"));

    struct gres_count cfg[2] = {{"gpu", "", 4}, {"bandwidth", "", 100}};
    struct gres_count rep[3] = {{"gpu", "a100", 2}, {"gpu", "v100", 2}, {"bandwidth", "", 100}};
    char why[128] = "";
    assert_int_equal(gres_check_reported(cfg, 2, rep, 3, why, sizeof(why)), 0);
    assert_int_equal(gres_check_reported(cfg, 2, rep, 1, why, sizeof(why)), 1);
    assert_string_equal(why, "gres/gpu count reported lower than configured (2 < 4)");
    struct gres_count typed = {"gpu", "a100", 4};
    assert_int_equal(gres_check_reported(&typed, 1, rep, 3, why, sizeof(why)), 1);
    assert_string_equal(why, "gres/gpu count reported lower than configured (2 < 4)");
    assert_int_equal(gres_check_reported(&cfg[1], 1, rep, 0, why, sizeof(why)), 1);
    assert_string_equal(why, "gres/bandwidth count reported lower than configured (0 < 100)");
}

static struct gres_conf *parse_ok(const char *text)
{
    struct gres_conf *gc = NULL;
    char err[256] = "";
    int rc = gres_conf_parse(text, "gres.conf", &gc, err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    return gc;
}

static void test_conf_lines(void **state)
{
    (void)state;
    struct gres_conf *gc = parse_ok(
        "# GPUs\n"
        "AutoDetect=off\n"
        "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-15 \\\n"
        "    Flags=nvidia_gpu_env   # four of them\n"
        "\n"
        "NodeName=n3 Name=bandwidth Count=10G Flags=CountOnly\n"
        "Name=mps Count=200\n");
    assert_int_equal(gc->nrecords, 4);
    const struct gres_record *r = &gc->records[0];
    assert_int_equal(r->autodetect, GRES_AUTODETECT_OFF);
    assert_null(r->nodes);
    assert_string_equal(r->name, "");
    r = &gc->records[1];
    assert_int_equal(r->line, 3);
    assert_string_equal(r->nodes, "n[1-2]");
    assert_string_equal(r->type, "a100");
    assert_int_equal(r->count, 4);
    assert_int_equal(r->nfiles, 4);
    assert_string_equal(r->files[3], "/dev/nvidia3");
    assert_string_equal(r->cores, "0-15");
    assert_int_equal(r->flags, 0x2);
    r = &gc->records[2];
    assert_int_equal(r->line, 6);
    assert_int_equal(r->count, UINT64_C(10737418240));
    assert_int_equal(r->nfiles, 0);
    assert_int_equal(r->flags, GRES_FLAG_COUNT_ONLY);
    assert_int_equal(gc->records[3].count, 200);
    gres_conf_destroy(gc);
}

static void expect_error(const char *text, const char *message)
{
    struct gres_conf *gc = (struct gres_conf *)1;
    char err[256] = "";
    assert_int_equal(gres_conf_parse(text, "/etc/tessera/gres.conf", &gc, err, sizeof(err)),
                     TS_ECONF);
    assert_null(gc);
    if (!strstr(err, message))
        fail_msg("'%s' gave '%s', not '%s'", text, err, message);
}

static void test_conf_errors(void **state)
{
    (void)state;
    expect_error("Name=gpu File=/dev/tty0\nNodeName=n1 Name=gpu Bogus=1",
                 "/etc/tessera/gres.conf:2: Parsing error at unrecognized key: Bogus");
    expect_error("Name=gpu File=/dev/tty[0-1] Count=3",
                 ":1: Invalid GRES record for gpu, count does not match File value");
    expect_error("Name=gpu Count=x", "Invalid GRES record for gpu, invalid count x");
    expect_error("Name=gpu Count=0", "invalid count 0");
    expect_error("\n\nName=g/pu", ":3: invalid name 'g/pu'");
    expect_error("Name=gpu Type=a100/b", "invalid Type");
    expect_error("Name=gpu File=dev/tty0", "not an absolute path");
    expect_error("Name=gpu File=/dev/tty[0-1025]", "more than 1024 files");
    expect_error("Name=gpu File=/dev/tty[0-99999999]", "more than 1024 files");
    expect_error("Name=gpu File=/dev/tty[0-", "invalid File");
    expect_error("Name=gpu File=/dev/tty0 File=/dev/tty1", "File is given twice");
    expect_error("Name=gpu Cores=x-y", "invalid Cores");
    expect_error("Name=gpu Links=a", "invalid Links");
    expect_error("Name=gpu Flags=CountOnly,Bogus", "unknown flag 'Bogus'");
    expect_error("AutoDetect=rsmi", "unknown autodetect flag 'rsmi'");
    expect_error("NodeName=n1 File=/dev/tty0", ":1: a line needs Name=");
    expect_error("AutoDetect=off Type=a100", "need Name=");
    expect_error("NodeName=n[1-", "invalid NodeName");
    expect_error("Name", "'Name' is not Key=Value");
    expect_error("Name=", "'Name=' is not Key=Value");
    /* a line longer than GRES_CONF_MAX_LINE, also when made of continued lines */
    char *big = malloc(GRES_CONF_MAX_LINE * 3);
    memset(big, 'a', GRES_CONF_MAX_LINE * 3 - 1);
    big[GRES_CONF_MAX_LINE * 3 - 1] = '\0';
    expect_error(big, ":1: line longer than");
    for (size_t i = 100; i < GRES_CONF_MAX_LINE * 3 - 1; i += 100)
        big[i - 1] = '\\', big[i] = '\n';
    expect_error(big, ":1: line longer than");
    free(big);
    /* more than GRES_CONF_MAX_RECORDS lines */
    size_t len = (GRES_CONF_MAX_RECORDS + 1) * 10 + 1;
    char *many = malloc(len);
    many[0] = '\0';
    for (int i = 0; i <= GRES_CONF_MAX_RECORDS; i++)
        strcat(many + (size_t)i * 9, "Name=gpu\n");
    expect_error(many, "more than 4096 lines");
    free(many);
}

/* A folder for sample files, removed by the test. */
static char *make_dir(void)
{
    char *dir = strdup("/tmp/test_gres_conf.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_dir(char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

/* The driver's format (NVIDIA's README, "Using the /proc File System Interface"). */
#define INFO(model, minor)                                                                   \
    "Model: \t\t " model "\nIRQ:   \t\t 0\nGPU UUID: \t GPU-3b5d6a8a-1f2e-4c5d-9e8f-0a1b2c3d4e5f\n" \
    "Video BIOS: \t 92.00.45.00.03\nBus Type: \t PCIe\nDMA Size: \t 47 bits\n"              \
    "DMA Mask: \t 0x7fffffffffff\nBus Location: \t 0000:00:1e.0\nDevice Minor: \t " minor      \
    "\nGPU Excluded:\t No\n"

static void test_detect_parse(void **state)
{
    (void)state;
    char type[GRES_TYPE_MAX];
    uint32_t minor = 99;
    assert_int_equal(gres_detect_parse_information(INFO("NVIDIA A100-SXM4-40GB", "3"), type,
                                                   sizeof(type), &minor), TS_OK);
    assert_string_equal(type, "nvidia_a100-sxm4-40gb");
    assert_int_equal(minor, 3);
    assert_int_equal(gres_detect_parse_information(INFO("Tesla V100 (PCIe) 16GB", "0"), type,
                                                   sizeof(type), &minor), TS_OK);
    assert_string_equal(type, "tesla_v100__pcie__16gb");
    assert_int_equal(gres_detect_parse_information("Model: x\n", type, sizeof(type), &minor),
                     TS_EINVAL);
    assert_int_equal(gres_detect_parse_information("Device Minor: 1\n", type, sizeof(type),
                                                   &minor), TS_EINVAL);
    assert_int_equal(gres_detect_parse_information(INFO("X", "255"), type, sizeof(type),
                                                   &minor), TS_EINVAL);
    assert_int_equal(gres_detect_parse_information(INFO("X", "1a"), type, sizeof(type), &minor),
                     TS_EINVAL);
    /* a long model is cut to a type's size */
    char longinfo[512];
    snprintf(longinfo, sizeof(longinfo), "Model: %0200d\nDevice Minor: 1\n", 0);
    assert_int_equal(gres_detect_parse_information(longinfo, type, sizeof(type), &minor), TS_OK);
    assert_int_equal(strlen(type), GRES_TYPE_MAX - 1);
}

static void test_detect_folder(void **state)
{
    (void)state;
    char *root = make_dir();
    struct gres_units u = {0};
    char err[256] = "";
    /* no driver: nothing */
    assert_int_equal(gres_detect_nvidia(root, &u, err, sizeof(err)), TS_OK);
    assert_int_equal(u.n, 0);
    write_file(root, "proc/driver/nvidia/gpus/0000:41:00.0/information",
               INFO("NVIDIA H100 80GB HBM3", "2"));
    write_file(root, "proc/driver/nvidia/gpus/0000:01:00.0/information",
               INFO("NVIDIA H100 80GB HBM3", "0"));
    assert_int_equal(gres_detect_nvidia(root, &u, err, sizeof(err)), TS_OK);
    assert_int_equal(u.n, 2);
    assert_string_equal(u.v[0].name, "gpu");
    assert_string_equal(u.v[0].type, "nvidia_h100_80gb_hbm3");
    assert_string_equal(u.v[0].files[0], "/dev/nvidia0");
    assert_string_equal(u.v[1].files[0], "/dev/nvidia2");
    assert_int_equal(u.v[1].count, 1);
    gres_units_clear(&u);
    /* a damaged file is an error that names it */
    write_file(root, "proc/driver/nvidia/gpus/0000:81:00.0/information", "garbage\n");
    assert_int_equal(gres_detect_nvidia(root, &u, err, sizeof(err)), TS_ECONF);
    assert_non_null(strstr(err, "0000:81:00.0/information"));
    assert_int_equal(u.n, 0);
    remove_dir(root);
}

static void test_node_units(void **state)
{
    (void)state;
    char *root = make_dir();
    write_file(root, "proc/driver/nvidia/gpus/0000:01:00.0/information",
               INFO("Tesla T4", "0"));
    struct gres_conf *gc = parse_ok("NodeName=n[1-2] Name=gpu File=/dev/tty[0-1]\n"
                                    "NodeName=n2 Name=gpu File=/dev/tty[2-3]\n"
                                    "NodeName=n3 AutoDetect=nvidia\n"
                                    "NodeName=n3 Name=gpu File=/dev/tty[0-7]\n"
                                    "Name=bandwidth Count=4G\n");
    struct gres_count cfg[2] = {{"gpu", "", 4}, {"lic", "", 3}};
    struct gres_units u;
    char err[256] = "";
    assert_int_equal(gres_node_units(gc, "n2", "gpu,bandwidth,lic", cfg, 2, root, &u, err,
                                     sizeof(err)), TS_OK);
    assert_int_equal(u.n, 4);
    assert_int_equal(u.v[0].count + u.v[1].count, 4);
    assert_string_equal(u.v[1].files[1], "/dev/tty3");
    assert_null(u.v[1].nodes);
    assert_string_equal(u.v[2].name, "bandwidth");
    /* what gres.conf does not name comes from the node line, without files */
    assert_string_equal(u.v[3].name, "lic");
    assert_int_equal(u.v[3].count, 3);
    assert_int_equal(u.v[3].flags, GRES_FLAG_COUNT_ONLY);
    gres_units_clear(&u);
    /* n3 detects: its gpu lines give way to what the driver lists */
    assert_int_equal(gres_node_units(gc, "n3", "gpu,bandwidth", cfg, 1, root, &u, err,
                                     sizeof(err)), TS_OK);
    assert_int_equal(u.n, 2);
    assert_string_equal(u.v[0].type, "tesla_t4");
    assert_string_equal(u.v[0].files[0], "/dev/nvidia0");
    gres_units_clear(&u);
    /* a name outside GresTypes is refused with its line */
    assert_int_equal(gres_node_units(gc, "n1", "gpu", cfg, 1, root, &u, err, sizeof(err)),
                     TS_ECONF);
    assert_string_equal(err, "gres.conf:5: invalid name 'bandwidth': not in GresTypes");
    assert_int_equal(u.n, 0);
    /* no gres.conf at all */
    assert_int_equal(gres_node_units(NULL, "n1", "gpu", cfg, 1, root, &u, err, sizeof(err)),
                     TS_OK);
    assert_int_equal(u.n, 1);
    assert_int_equal(u.v[0].count, 4);
    gres_units_clear(&u);
    gres_conf_destroy(gc);
    remove_dir(root);
}

/* Units whose device file is missing are not the node's. */
static void test_drop_missing(void **state)
{
    (void)state;
    char *root = make_dir();
    write_file(root, "dev/tty0", "");
    write_file(root, "dev/tty2", "");
    struct gres_conf *gc = parse_ok("Name=gpu File=/dev/tty[0-3]\n"
                                    "Name=mps File=/dev/tty[5-6]\n"
                                    "Name=bandwidth Count=4G\n");
    struct gres_units u;
    char err[256] = "", missing[64] = "";
    assert_int_equal(gres_node_units(gc, "n1", "gpu,mps,bandwidth", NULL, 0, root, &u, err,
                                     sizeof(err)), TS_OK);
    assert_int_equal(gres_units_drop_missing(&u, root, missing, sizeof(missing)), 4);
    assert_string_equal(missing, "/dev/tty1");
    assert_int_equal(u.n, 2);
    assert_int_equal(u.v[0].count, 2);
    assert_int_equal(u.v[0].nfiles, 2);
    assert_string_equal(u.v[0].files[1], "/dev/tty2");
    assert_string_equal(u.v[1].name, "bandwidth");
    assert_int_equal(gres_units_drop_missing(&u, root, missing, sizeof(missing)), 0);
    gres_units_clear(&u);
    gres_conf_destroy(gc);
    remove_dir(root);
}

static void test_load(void **state)
{
    (void)state;
    char *dir = make_dir();
    char path[512];
    snprintf(path, sizeof(path), "%s/gres.conf", dir);
    struct gres_conf *gc = NULL;
    char err[512] = "";
    assert_int_equal(gres_conf_load(path, &gc, err, sizeof(err)), TS_OK); /* absent: empty */
    assert_int_equal(gc->nrecords, 0);
    gres_conf_destroy(gc);
    write_file(dir, "gres.conf", "Name=gpu File=/dev/tty[0-3]\n");
    assert_int_equal(gres_conf_load(path, &gc, err, sizeof(err)), TS_OK);
    assert_int_equal(gc->records[0].count, 4);
    gres_conf_destroy(gc);
    write_file(dir, "gres.conf", "Name=gpu\nName=gpu Bogus=1\n");
    assert_int_equal(gres_conf_load(path, &gc, err, sizeof(err)), TS_ECONF);
    assert_non_null(strstr(err, "gres.conf:2: Parsing error"));
    /* larger than GRES_CONF_MAX_SIZE */
    FILE *f = fopen(path, "w");
    while (ftell(f) <= (long)GRES_CONF_MAX_SIZE)
        fputs("# a comment line\n", f);
    fclose(f);
    assert_int_equal(gres_conf_load(path, &gc, err, sizeof(err)), TS_ECONF);
    assert_non_null(strstr(err, "larger than"));
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),        cmocka_unit_test(test_spec),
        cmocka_unit_test(test_types_and_check), cmocka_unit_test(test_conf_lines),
        cmocka_unit_test(test_conf_errors),   cmocka_unit_test(test_detect_parse),
        cmocka_unit_test(test_detect_folder), cmocka_unit_test(test_node_units),
        cmocka_unit_test(test_drop_missing), cmocka_unit_test(test_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
