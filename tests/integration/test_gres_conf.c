/* Generic resources' configuration (docs/gres.md §1): nodes with Gres=gpu:4 and a gres.conf
 * beside tessera.conf naming fake device files, as Slurm's own tests do. n1's four units
 * exist: it registers and shows Gres=gpu:4 (scontrol, sinfo %G, also to nobody); n2's
 * gres.conf gives two of four: it is drained with Slurm's reason and no job goes there; n3
 * names four files of which one is missing: drained with the count it has; a
 * reconfiguration that asks n1 for eight drains it too. The device
 * files are made by the test in its folder (a container may lack /dev/tty0-3). */
#include "cluster.h"

#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

static struct harness_cluster cluster;
static char outdir[512];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char path[512], gres[2048], nodes[1024], extra[2048];
    snprintf(path, sizeof(path), "%s/dev", cluster.dir);
    if (mkdir(path, 0755))
        return -1;
    for (int i = 0; i < 4; i++) {
        if (i == 3)
            continue; /* gpu3 is missing */
        snprintf(path, sizeof(path), "%s/dev/gpu%d", cluster.dir, i);
        write_text(path, "");
    }
    snprintf(gres, sizeof(gres),
             "# fake units\n"
             "NodeName=n1 Name=gpu File=%s/dev/gpu[0-2],/dev/null\n"
             "NodeName=n2 Name=gpu File=%s/dev/gpu[0-1]\n"
             "NodeName=n3 Name=gpu File=%s/dev/gpu[0-3]\n",
             cluster.dir, cluster.dir, cluster.dir);
    snprintf(path, sizeof(path), "%s/gres.conf", cluster.dir);
    write_text(path, gres);
    harness_node_lines(&cluster, 3, "CPUs=2 RealMemory=1000 Gres=gpu:4", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "GresTypes=gpu\n%sPartitionName=debug Nodes=n[1-3] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, 3, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* scontrol show node's text for name once it contains want (10 s at most). */
static char *show_node_when(const char *name, const char *want)
{
    char *text = NULL;
    for (int i = 0; i < 100; i++) {
        struct result r = RUN("scontrol", "show", "node", name);
        free(text);
        text = strdup(r.out ? r.out : "");
        result_free(&r);
        if (strstr(text, want))
            break;
        usleep(100000);
    }
    return text;
}

static void test_node_with_its_units(void **state)
{
    (void)state;
    char *text = show_node_when("n1", "State=IDLE");
    if (!strstr(text, "State=IDLE ") || !strstr(text, "\n   Gres=gpu:4\n") ||
        !strstr(text, "\n   CfgTRES=cpu=2,mem=1000M,billing=2,gres/gpu=4\n") ||
        strstr(text, "Reason="))
        fail_msg("n1 should be idle with Gres=gpu:4:\n%s", text);
    free(text);
    const char *const args[] = {"-N", "-h", "-o", "%N %G %t", NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(harness_cmd_as(&cluster, 65534, "sinfo", args, &out, &err), 0);
    if (!has_line(out, "n1 gpu:4 idle") || !has_line(out, "n2 gpu:4 drain"))
        fail_msg("sinfo as nobody:\n%s", out);
    free(out);
    free(err);
}

static void test_fewer_units_drained(void **state)
{
    (void)state;
    char *text = show_node_when("n2", "Reason=");
    if (!strstr(text, "State=IDLE+DRAIN ") ||
        !strstr(text, "Reason=gres/gpu count reported lower than configured (2 < 4) [root@"))
        fail_msg("n2 not drained with Slurm's reason:\n%s", text);
    free(text);
    text = show_node_when("n3", "Reason=");
    if (!strstr(text, "Reason=gres/gpu count reported lower than configured (3 < 4)"))
        fail_msg("n3 (a missing device file) not drained:\n%s", text);
    free(text);
    /* no job goes to a drained node */
    unsigned id = SUBMIT("-w", "n2", "--wrap", "true");
    wait_for(id, "%T", "PENDING\n", 10);
    cancel_job(id);
}

/* A reconfiguration whose node line asks for more than the node reported drains it. */
static void test_reconfigure_asks_more(void **state)
{
    (void)state;
    char nodes[1024], extra[2048];
    harness_node_lines(&cluster, 3, "CPUs=2 RealMemory=1000 Gres=gpu:4", nodes, sizeof(nodes));
    char *first = strstr(nodes, "Gres=gpu:4");
    assert_non_null(first);
    first[9] = '8'; /* n1's line comes first */
    snprintf(extra, sizeof(extra),
             "GresTypes=gpu\n%sPartitionName=debug Nodes=n[1-3] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    struct result r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);
    char *text = show_node_when("n1", "Reason=");
    if (!strstr(text, "\n   Gres=gpu:8\n") ||
        !strstr(text, "Reason=gres/gpu count reported lower than configured (4 < 8)"))
        fail_msg("n1 not drained after asking for 8:\n%s", text);
    free(text);
}

/* A daemon whose gres.conf is wrong does not start, and says where. */
static void test_bad_gres_conf(void **state)
{
    (void)state;
    harness_noded_stop(&cluster, 1, SIGTERM);
    char path[512];
    snprintf(path, sizeof(path), "%s/gres.conf", cluster.dir);
    write_text(path, "NodeName=n1 Name=gpu Bogus=1\n");
    char conf[400];
    snprintf(conf, sizeof(conf), "%s", cluster.conf);
    const char *const args[] = {"-D", "-N", "n1", "-f", conf, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd(&cluster, "tessera-noded", args, &out, &err);
    if (rc == 0 || !strstr(err ? err : "", "gres.conf:1: Parsing error at unrecognized key: Bogus"))
        fail_msg("rc %d, stderr: %s", rc, err ? err : "");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_with_its_units),
        cmocka_unit_test(test_fewer_units_drained),
        cmocka_unit_test(test_reconfigure_asks_more),
        cmocka_unit_test(test_bad_gres_conf),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
