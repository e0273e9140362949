/* Activation filters on a live cluster (docs/05-filters.md §3): every row of the table for queued
 * jobs (start, block the queue, keep the resources, hold until HoldUntil, fail; others,
 * time-outs and missing filters as "keep"), the arguments, chains with their undo, the
 * periodic re-evaluation, and a het job activated as one unit.
 *
 * One filter script serves every test: it logs "<job name> <arguments>" and exits with
 * the number in verdict-<job name> (0 when there is none), so a test steers each job and
 * changes its mind by rewriting that file.
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

static struct harness_cluster cluster;
static char outdir[512], fdir[300], flog[400];

static void write_filter(const char *name, const char *tag)
{
    char path[400], text[2048];
    snprintf(path, sizeof(path), "%s/%s", fdir, name);
    snprintf(text, sizeof(text),
             "#!/bin/sh\n"
             "job=$(sed -n 's/^  \"name\": \"\\(.*\\)\",$/\\1/p' \"$1\")\n"
             "shift\n"
             "echo \"%s $job $*\" >> %s\n"
             "[ \"$1\" = --undo ] && exit 0\n"
             "[ -f %s/sleep-$job ] && sleep 30\n"
             "[ -f %s/pause-$job ] && sleep 1\n"
             "[ -f %s/%s-verdict-$job ] && exit $(cat %s/%s-verdict-$job)\n"
             "exit 0\n",
             tag, flog, fdir, fdir, fdir, tag, fdir, tag);
    assert_int_equal(harness_write_file(path, text, 0755), 0);
}

static void verdict(const char *tag, const char *job, int v)
{
    char path[500], text[16];
    snprintf(path, sizeof(path), "%s/%s-verdict-%s", fdir, tag, job);
    snprintf(text, sizeof(text), "%d\n", v);
    assert_int_equal(harness_write_file(path, text, 0644), 0);
}

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    snprintf(fdir, sizeof(fdir), "%s/filters", cluster.dir);
    snprintf(flog, sizeof(flog), "%s/filters.log", cluster.dir);
    mkdir(fdir, 0755);
    write_filter("act", "act");
    write_filter("first", "first");
    char nodes[1024], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\nKillWait=1\nFilterTimeout=2\nFilterRetryInterval=1\n"
             "ActivationFilters=%s/act\n%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n"
             "PartitionName=chain Nodes=n[1-2] MaxTime=UNLIMITED ActivationFilters=%s/first\n"
             "PartitionName=missing Nodes=n[1-2] MaxTime=UNLIMITED "
             "ActivationFilters=%s/not-there\n",
             fdir, nodes, fdir, fdir);
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

static char *log_text(void)
{
    char *t = harness_read_file(flog);
    return t ? t : strdup("");
}

/* 0 starts the job; the filter got the pass, the place in the queue, backfill and the
 * candidate CPUs. */
static void test_start(void **state)
{
    (void)state;
    unsigned id = SUBMIT("-J", "go", "-n", "2", "--wrap=sleep 1");
    wait_for(id, "%T", "COMPLETED\n", 20);
    char *t = log_text();
    char *line = strstr(t, "act go ");
    assert_non_null(line);
    unsigned pass = 0, pos = 0, bf = 9, cpus = 0;
    assert_int_equal(sscanf(line, "act go %u %u %u %u", &pass, &pos, &bf, &cpus), 4);
    assert_true(pass >= 1);
    assert_int_equal(pos, 1);
    assert_true(bf <= 1);
    assert_int_equal(cpus, 2);
    free(t);
}

/* 4 fails the job. */
static void test_fail(void **state)
{
    (void)state;
    verdict("act", "doomed", 4);
    unsigned id = SUBMIT("-J", "doomed", "--wrap=true");
    wait_for(id, "%T", "FAILED\n", 20);
    assert_string_equal(show_field(id, "Reason"), "activation_filter_failed_the_job");
}

/* 1 blocks the queue: nothing of equal or lower priority starts; a higher one does; once
 * the filter passes it (asked again every FilterRetryInterval) it starts, then the rest. */
static void test_block(void **state)
{
    (void)state;
    verdict("act", "blocker", 1);
    unsigned a = SUBMIT("-J", "blocker", "--priority=500", "-n1", "--wrap=sleep 2");
    wait_for(a, "%r", "ActivationBlocked\n", 20);
    unsigned low = SUBMIT("-J", "low", "--priority=100", "-n1", "--wrap=sleep 1");
    unsigned high = SUBMIT("-J", "high", "--priority=900", "-n1", "--wrap=sleep 1");
    wait_for(high, "%T", "COMPLETED\n", 20);
    char *t = log_text();
    int asked = cmdcheck_count(t, "act blocker ");
    free(t);
    /* asked again twice: low still waits behind the blocker */
    free(cmdcheck_file_with_n(flog, "act blocker ", asked + 2, 10));
    wait_for(low, "%T", "PENDING\n", 1);
    wait_for(a, "%T %r", "PENDING ActivationBlocked\n", 1);
    verdict("act", "blocker", 0);
    wait_for(a, "%T", "RUNNING\n", 20);
    wait_for(low, "%T", "COMPLETED\n", 20);
    wait_for(a, "%T", "COMPLETED\n", 20);
}

/* 2 keeps the resources for the job; others go on elsewhere. */
static void test_reserve(void **state)
{
    (void)state;
    verdict("act", "keeper", 2);
    unsigned a = SUBMIT("-J", "keeper", "--priority=500", "-w", "n1", "-n2", "--wrap=sleep 1");
    wait_for(a, "%r", "ActivationReserved\n", 20);
    unsigned b = SUBMIT("-J", "other", "--priority=100", "-n1", "--wrap=sleep 3");
    wait_for(b, "%T %N", "RUNNING n2\n", 20);
    verdict("act", "keeper", 0);
    wait_for(a, "%T", "COMPLETED\n", 20);
    wait_for(b, "%T", "COMPLETED\n", 20);
}

/* 3 holds the job until its HoldUntil; it starts once that passed and the filter agrees. */
static void test_hold_until(void **state)
{
    (void)state;
    verdict("act", "later", 3);
    unsigned a = SUBMIT("-H", "-J", "later", "--wrap=true");
    char sid[16], until[64];
    snprintf(sid, sizeof(sid), "%u", a);
    time_t when = time(NULL) + 4;
    struct tm tm;
    strftime(until, sizeof(until), "holduntil=%Y-%m-%dT%H:%M:%S", localtime_r(&when, &tm));
    char jobid[32];
    snprintf(jobid, sizeof(jobid), "jobid=%u", a);
    struct result r = RUN("scontrol", "update", jobid, until);
    expect_ok(&r);
    result_free(&r);
    r = RUN("scontrol", "release", sid);
    expect_ok(&r);
    result_free(&r);
    wait_for(a, "%r", "ActivationHold\n", 20);
    assert_true(strlen(show_field(a, "HoldUntil")) == 19); /* shown while set */
    verdict("act", "later", 0);
    wait_for(a, "%T", "COMPLETED\n", 20);
    assert_true(show_time(a, "StartTime") >= when); /* held: not asked before HoldUntil */
}

/* A time-out and a missing filter count as 2: the resources are kept. */
static void test_timeout_and_missing(void **state)
{
    (void)state;
    char path[500];
    snprintf(path, sizeof(path), "%s/sleep-slow", fdir);
    harness_write_file(path, "", 0644);
    unsigned a = SUBMIT("-J", "slow", "--wrap=true");
    wait_for(a, "%r", "ActivationReserved\n", 20);
    struct result r = RUN("squeue", "-h"); /* the controller answers meanwhile */
    expect_ok(&r);
    result_free(&r);
    cancel_job(a);
    unlink(path);
    unsigned m = SUBMIT("-J", "lost", "-p", "missing", "--wrap=true");
    wait_for(m, "%r", "ActivationReserved\n", 20);
    cancel_job(m);
    verdict("act", "odd", 7); /* an exit the table does not name: as 2 too */
    unsigned o = SUBMIT("-J", "odd", "--wrap=true");
    wait_for(o, "%r", "ActivationReserved\n", 20);
    cancel_job(o);
}

/* A chain stops at its first non-zero exit and undoes what passed, last first. */
static void test_chain_undo(void **state)
{
    (void)state;
    verdict("act", "chained", 1);
    unsigned a = SUBMIT("-J", "chained", "-p", "chain", "--wrap=true");
    wait_for(a, "%r", "ActivationBlocked\n", 20);
    cancel_job(a);
    char *t = log_text();
    char *first = strstr(t, "first chained ");
    assert_non_null(first);
    char *act = strstr(first, "act chained ");
    assert_non_null(act);
    assert_non_null(strstr(act, "first chained --undo\n"));
    free(t);
}

/* A het job is one unit: every component must pass; else the strongest verdict stands
 * and the components that passed are undone. */
static void test_het_job(void **state)
{
    (void)state;
    verdict("act", "hetzero", 0);
    verdict("act", "hetfail", 4);
    unsigned a = SUBMIT("-J", "hetzero", "-n1", ":", "-J", "hetfail", "-n1", "--wrap=true");
    wait_for(a, "%T", "FAILED\nFAILED\n", 20);
    char *t = log_text();
    assert_non_null(strstr(t, "act hetzero --undo\n"));
    free(t);
    verdict("act", "hetblock", 1);
    verdict("act", "hethold", 3);
    unsigned b = SUBMIT("-J", "hetblock", "-n1", ":", "-J", "hethold", "-n1", "--wrap=true");
    wait_for(b, "%r", "ActivationHold\nActivationHold\n", 20);
    cancel_job(b);
}

/* contrib/filters/licenses: the last licence goes to the first job; the second waits
 * (keeping its resources) until the first ended, then gets it. */
static void test_licenses(void **state)
{
    (void)state;
    char path[600], keys[4096], nodes[1024];
    snprintf(path, sizeof(path), "%s/licenses.conf", cluster.dir);
    assert_int_equal(harness_write_file(path, "matlab 1\n", 0644), 0);
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(keys, sizeof(keys),
             "MinJobAge=600\nKillWait=1\nFilterTimeout=5\nFilterRetryInterval=1\n%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED "
             "ActivationFilters=%s/contrib/filters/licenses\n",
             nodes, TESSERA_SOURCE_DIR);
    assert_int_equal(harness_cluster_write_conf(&cluster, keys), 0);
    struct result r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);
    unsigned a = SUBMIT("-J", "lic1", "-L", "matlab", "-n1", "--wrap=sleep 3");
    wait_for(a, "%T", "RUNNING\n", 20);
    unsigned b = SUBMIT("-J", "lic2", "-L", "matlab", "-n1", "--wrap=true");
    wait_for(b, "%T %r", "PENDING ActivationReserved\n", 20);
    wait_for(a, "%T", "COMPLETED\n", 20);
    wait_for(b, "%T", "COMPLETED\n", 20);
    /* a licence nobody has fails the job */
    unsigned c = SUBMIT("-J", "lic3", "-L", "unobtainium", "--wrap=true");
    wait_for(c, "%T", "FAILED\n", 20);
}

/* Passed, but held while its filters ran: it does not start, and they are undone. */
static void test_changed_meanwhile(void **state)
{
    (void)state;
    char path[500];
    snprintf(path, sizeof(path), "%s/pause-heldlate", fdir);
    harness_write_file(path, "", 0644);
    unsigned a = SUBMIT("-J", "heldlate", "--wrap=true");
    free(file_with(flog, "act heldlate ", 10)); /* its filter runs (it pauses a second) */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", a);
    struct result r = RUN("scontrol", "hold", sid);
    expect_ok(&r);
    result_free(&r);
    free(file_with(flog, "act heldlate --undo\n", 10));
    wait_for(a, "%T %r", "PENDING JobHeldAdmin\n", 5); /* root held it */
    unlink(path);
    cancel_job(a);
}

/* HoldUntil changed after a hold verdict: the job is asked again at the new time. */
static void test_hold_until_moved(void **state)
{
    (void)state;
    verdict("act", "moved", 3);
    unsigned a = SUBMIT("-J", "moved", "--wrap=true");
    wait_for(a, "%r", "ActivationHold\n", 20); /* for DefaultHoldDuration: 60 s */
    verdict("act", "moved", 0);
    char jobid[32], until[64];
    snprintf(jobid, sizeof(jobid), "jobid=%u", a);
    time_t when = time(NULL) + 2;
    struct tm tm;
    strftime(until, sizeof(until), "holduntil=%Y-%m-%dT%H:%M:%S", localtime_r(&when, &tm));
    struct result r = RUN("scontrol", "update", jobid, until);
    expect_ok(&r);
    result_free(&r);
    wait_for(a, "%T", "COMPLETED\n", 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start),          cmocka_unit_test(test_fail),
        cmocka_unit_test(test_block),          cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_hold_until),     cmocka_unit_test(test_timeout_and_missing),
        cmocka_unit_test(test_chain_undo),     cmocka_unit_test(test_het_job),
        cmocka_unit_test(test_changed_meanwhile),
        cmocka_unit_test(test_hold_until_moved),
        cmocka_unit_test(test_licenses),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
