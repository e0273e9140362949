/* srun --multi-prog: each task runs the program its line of the configuration file gives,
 * with %t (rank) and %o (offset within the line) replaced, as Slurm 22.05 does on the
 * reference cluster; the file's faults get Slurm's messages before anything is allocated
 * (docs/steps.md, "Multiple programs").
 */
#include "cluster.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 2

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=5\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* Writes text to outdir/name; the path goes to path. */
static void write_conf(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", outdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ------------------------------------------------------------------------------------ */

/* Different programs per line, rank lists, '*' for the rest, %t and %o, comments, single
 * quotes, and srun's own arguments after the file's name appended to every task's. */
static void test_each_task_runs_its_line(void **state)
{
    (void)state;
    char conf[600];
    write_conf("mp.conf",
               "# programs per rank\n"
               "\n"
               "0 echo zero %t %o\n"
               "  1,3 sh -c 'echo odd %t %o at $0'\n"
               "* echo rest %t %o\n",
               conf, sizeof(conf));
    struct result r = RUN("srun", "-n4", "-l", "--multi-prog", conf, "extra");
    expect_ok(&r);
    expect_line(r.out, "0: zero 0 0 extra");
    expect_line(r.out, "1: odd 1 0 at extra");
    expect_line(r.out, "2: rest 2 2 extra");
    expect_line(r.out, "3: odd 3 1 at extra");
    assert_int_equal(count_lines(r.out), 4);
    result_free(&r);

    /* without -n the step's own task count is what the file must cover */
    write_conf("mp2.conf", "0-1 echo node%t\n", conf, sizeof(conf));
    r = RUN("srun", "-N2", "-l", "--multi-prog", conf);
    expect_ok(&r);
    expect_line(r.out, "0: node0");
    expect_line(r.out, "1: node1");
    result_free(&r);
}

/* Slurm's refusals, each before any job exists: the command fails with 1. */
static void expect_refused(const char *name, const char *text, const char *first,
                           const char *second)
{
    char conf[600], want[800];
    write_conf(name, text, conf, sizeof(conf));
    struct result r = RUN("srun", "-n4", "--multi-prog", conf);
    assert_int_equal(r.rc, 1);
    snprintf(want, sizeof(want), first, conf);
    expect_line(r.err, "srun: error: %s", want);
    if (second) {
        snprintf(want, sizeof(want), second, conf);
        expect_line(r.err, "srun: error: %s", want);
    }
    assert_null(strstr(r.err, "job "));
    result_free(&r);
}

static void test_bad_files_are_refused(void **state)
{
    (void)state;
    expect_refused("missing.conf", "0 echo a\n2-3 echo b\n",
                   "Configuration file %s invalid, no record for task id 1", NULL);
    expect_refused("twice.conf", "0-1 echo a\n1-3 echo b\n", "Duplicate record for task 1",
                   "Line 2 of configuration file %s invalid");
    expect_refused("noprog.conf", "0-3\n", "Line 1 of configuration file %s invalid", NULL);
    expect_refused("badrank.conf", "x echo a\n", "Invalid task range specification (x)",
                   "Line 1 of configuration file %s invalid");
    expect_refused("rev.conf", "3-1 echo r\n", "Invalid task range, 3-1",
                   "Line 1 of configuration file %s invalid");
    expect_refused("over.conf", "0-5 echo big\n", "Invalid task id, 5 >= ntasks",
                   "Line 1 of configuration file %s invalid");
    expect_refused("starfirst.conf", "* echo star\n0 echo zero\n",
                   "Line 2 of configuration file %s invalid",
                   "Task range specification with asterisk must be last");

    char path[600];
    snprintf(path, sizeof(path), "%s/no-such.conf", outdir);
    struct result r = RUN("srun", "-n4", "--multi-prog", path);
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Could not open multi_prog config file %s", path);
    result_free(&r);

    /* a file over the size bound is refused before it is sent anywhere */
    char *big = malloc((64u << 10) + 64);
    assert_non_null(big);
    memset(big, '#', (64u << 10) + 63);
    big[(64u << 10) + 63] = '\0';
    char conf[600];
    write_conf("big.conf", big, conf, sizeof(conf));
    free(big);
    r = RUN("srun", "-n1", "--multi-prog", conf);
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Configuration file %s is larger than 65536 bytes", conf);
    result_free(&r);
}

/* A het step (srun A : B) does not take --multi-prog: Slurm applies it to the wrong part;
 * Tessera refuses it with its reason. */
static void test_het_step_refused(void **state)
{
    (void)state;
    char conf[600];
    write_conf("het.conf", "* echo x\n", conf, sizeof(conf));
    struct result r = RUN("srun", "-n1", "--multi-prog", conf, ":", "-n1", "true");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: --multi-prog is not supported in a heterogeneous step");
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_task_runs_its_line),
        cmocka_unit_test(test_bad_files_are_refused),
        cmocka_unit_test(test_het_step_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
