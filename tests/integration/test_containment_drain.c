/* A node daemon told to contain jobs in a way the machine cannot (CgroupPlugin=cgroup/v2
 * with ConstrainRAMSpace where the v2 hierarchy offers no memory controller, as on a host
 * whose controllers are bound to cgroup v1) keeps serving, and its node is drained with the
 * reason, so no job is sent there to run uncontained (docs/containment.md §2). Skipped
 * where the cgroup2 root does offer the memory controller (there the node can contain). */
#include "cluster.h"

#include "noded/cgroup.h"

#include "common/util/errors.h"

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

static struct harness_cluster cluster;
static char outdir[512];
static int skipped;

static int group_setup(void **state)
{
    (void)state;
    if (geteuid() != 0 || cgroup_v2_offers("memory")) {
        skipped = 1;
        return 0;
    }
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char nodes[1024], extra[2048];
    harness_node_lines(&cluster, 1, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "ProctrackType=proctrack/cgroup\nCgroupPlugin=cgroup/v2\nConstrainRAMSpace=yes\n%s"
             "PartitionName=debug Nodes=n1 Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, 1, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    if (skipped)
        return 0;
    harness_cluster_fini(&cluster);
    harness_cgroup_cleanup("itest", "n1");
    return 0;
}

/* The node is drained with the daemon's reason; a job stays pending instead of running
 * uncontained; the daemon still answers. */
static void test_drained_with_reason(void **state)
{
    (void)state;
    if (skipped)
        skip();
    char *text = NULL;
    for (int i = 0; i < 100; i++) {
        struct result r = RUN("scontrol", "show", "node", "n1");
        free(text);
        text = strdup(r.out ? r.out : "");
        result_free(&r);
        if (strstr(text, "DRAIN"))
            break;
        usleep(100000);
    }
    if (!strstr(text, "DRAIN") ||
        !strstr(text, "Reason=cannot contain jobs: the cgroup v2 memory controller is not "
                      "available"))
        fail_msg("node n1 not drained with the daemon's reason:\n%s", text);
    free(text);
    unsigned id = SUBMIT("--wrap", "true");
    wait_for(id, "%T", "PENDING\n", 10);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    assert_int_equal(r.rc, 0);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drained_with_reason),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
