/* Running-job limits hold for jobs that start after their activation filters (docs/05-filters.md §3.12,
 * docs/policies.md): a passed filter is a standing verdict that the next scheduling
 * cycle applies through the same checks as any other start, so a slow filter cannot let
 * several jobs past MaxRunning at once.
 *
 * The filter sleeps 2 s before it passes a job: long enough for the scheduler to have sent
 * every pending job to its filter if it did not count them against the limit.
 */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 2
#define JOBS 4

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char filter[400], nodes[1024], extra[4096];
    snprintf(filter, sizeof(filter), "%s/slow-filter", cluster.dir);
    if (harness_write_file(filter,
                           "#!/bin/sh\n"
                           "[ \"$2\" = --undo ] && exit 0\n"
                           "sleep 2\n"
                           "exit 0\n",
                           0755))
        return -1;
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\nKillWait=1\nFilterTimeout=10\nFilterRetryInterval=1\n"
             "MaxRunning=1\nActivationFilters=%s\n%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n",
             filter, nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* The states of the jobs, one line "<id> <state>" each. */
static char *states(const char *ids)
{
    struct result r = RUN("squeue", "-h", "-t", "all", "-o", "%i %T", "-j", ids);
    expect_ok(&r);
    free(r.err);
    return r.out;
}

/* MaxRunning=1 and a filter that takes 2 s: four jobs, which would all fit the nodes at
 * once, run one after the other; at no poll do two run. */
static void test_max_running_with_slow_filter(void **state)
{
    (void)state;
    char ids[JOBS * 12] = "";
    for (int i = 0; i < JOBS; i++) {
        unsigned id = SUBMIT("-n1", "--wrap=sleep 2");
        snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%u", i ? "," : "", id);
    }
    int most = 0;
    char *text = NULL;
    for (int poll = 0; poll < 600; poll++) { /* 60 s at most; about 16 s when right */
        free(text);
        text = states(ids);
        int running = 0, completed = 0;
        for (const char *p = text; (p = strchr(p, ' ')) != NULL; p++) {
            running += !strncmp(p + 1, "RUNNING\n", 8);
            completed += !strncmp(p + 1, "COMPLETED\n", 10);
        }
        if (running > 1)
            fail_msg("%d jobs run at once under MaxRunning=1:\n%s", running, text);
        if (running > most)
            most = running;
        if (completed == JOBS)
            break;
        usleep(100000);
    }
    if (count_lines(text) != JOBS || !strstr(text, "COMPLETED"))
        fail_msg("the jobs did not all complete:\n%s", text);
    for (const char *p = text; (p = strchr(p, ' ')) != NULL; p++)
        if (strncmp(p + 1, "COMPLETED\n", 10))
            fail_msg("the jobs did not all complete:\n%s", text);
    assert_int_equal(most, 1); /* they did run, one at a time */
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_max_running_with_slow_filter),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
