/* A scheduling policy file on a live cluster (docs/07-policy.md): with sort_by:
 * shortest_job_first, jobs that each need the whole cluster start shortest first,
 * although they were submitted (and by the default priority would run) longest first;
 * prime and non-prime time, dedicated time, running-job limits, starving jobs,
 * strict_fifo, fair share by account (kept across a restart). A broken policy file is
 * refused by scontrol reconfigure and the running one stays.
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
static char outdir[512], policy[600];
static unsigned orphan; /* a pending job in partition ded1, which test_limits removes */

/* tessera.conf with the policy file, more keys, and more partitions after "debug". */
static int write_conf(const char *keys, const char *partitions)
{
    char nodes[1024], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\nPolicyFile=%s\n%s%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n%s",
             policy, keys, nodes, partitions);
    return harness_cluster_write_conf(&cluster, extra);
}

/* The same, taken up by the running controller. */
static void reconfigure(const char *keys, const char *partitions)
{
    assert_int_equal(write_conf(keys, partitions), 0);
    struct result r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);
}

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    snprintf(policy, sizeof(policy), "%s/sched_config", cluster.dir);
    if (harness_write_file(policy, "# shortest first\nsort_by: shortest_job_first all\n", 0644))
        return -1;
    if (write_conf("", ""))
        return -1;
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

static void wait_state(unsigned id, const char *want, int seconds)
{
    wait_for(id, "%T", want, seconds);
}

/* Wait until pending job id has waited more than secs seconds since its EligibleTime (what
 * the policies' starving and wait keys count). */
static void wait_eligible_for(unsigned id, int secs)
{
    time_t since = 0;
    for (int i = 0; i < 100 && !(since = show_time(id, "EligibleTime")); i++)
        usleep(100000);
    for (int i = 0; i < (secs + 10) * 10 && time(NULL) <= since + secs; i++)
        usleep(100000);
    if (time(NULL) <= since + secs)
        fail_msg("job %u: no EligibleTime %d s ago (%s)", id, secs, show_field(id, "EligibleTime"));
}

/* Wait until running job id has run at least secs seconds (squeue's %M). */
static void wait_time_used(unsigned id, int secs)
{
    long used = 0;
    for (int i = 0; i < (secs + 10) * 10 && used < secs; i++) {
        char *t = query(id, "%M");
        used = 0;
        for (char *p = t; p && *p;) {
            char *end = NULL;
            used = used * 60 + strtol(p, &end, 10);
            p = end && *end == ':' ? end + 1 : NULL;
        }
        free(t);
        if (used < secs)
            usleep(100000);
    }
    if (used < secs)
        fail_msg("job %u ran %ld s, not %d", id, used, secs);
}

/* Three jobs that each need the whole cluster, held, then released together; the order
 * they ran in, as "a\nb\nc\n". */
static char *run_three(const char *tag)
{
    char order[700], wrap[900];
    snprintf(order, sizeof(order), "%s/order-%s", outdir, tag);
    const char *names[] = {"long", "mid", "short"};
    const char *limits[] = {"30", "20", "10"};
    const char *mem[] = {"--mem=100", "--mem=300", "--mem=200"};
    unsigned ids[3];
    for (int i = 0; i < 3; i++) {
        snprintf(wrap, sizeof(wrap), "--wrap=echo %s >> %s; sleep 1", names[i], order);
        ids[i] = SUBMIT("-H", "-J", names[i], "-t", limits[i], mem[i], "-N2", "--exclusive",
                        wrap);
    }
    char list[64];
    snprintf(list, sizeof(list), "%u,%u,%u", ids[0], ids[1], ids[2]);
    struct result r = RUN("scontrol", "release", list);
    expect_ok(&r);
    result_free(&r);
    for (int i = 0; i < 3; i++)
        wait_state(ids[i], "COMPLETED\n", 30);
    return harness_read_file(order);
}

static void test_shortest_job_first(void **state)
{
    (void)state;
    char *text = run_three("prime");
    assert_string_equal(text, "short\nmid\nlong\n");
    free(text);
}

/* A holidays file that makes every day non-prime: the non-prime sort applies. */
static void test_non_prime_time(void **state)
{
    (void)state;
    char holidays[700], keys[800];
    snprintf(holidays, sizeof(holidays), "%s/holidays", cluster.dir);
    assert_int_equal(harness_write_file(holidays, "* never prime\nweekday none all\n"
                                                  "saturday none all\nsunday none all\n", 0644),
                     0);
    assert_int_equal(harness_write_file(policy, "sort_by: shortest_job_first prime\n"
                                                "sort_by: largest_memory_first non_prime\n",
                                        0644),
                     0);
    snprintf(keys, sizeof(keys), "HolidaysFile=%s\n", holidays);
    reconfigure(keys, "");
    char *text = run_three("non-prime");
    assert_string_equal(text, "mid\nshort\nlong\n");
    free(text);
}

/* "MM/DD/YYYY HH:MM" of t (local time). */
static void stamp(time_t t, char *buf, size_t len)
{
    struct tm tm;
    strftime(buf, len, "%m/%d/%Y %H:%M", localtime_r(&t, &tm));
}

static void use_dedicated(time_t from, time_t to)
{
    char ded[700], a[32], b[32], text[128], keys[800];
    snprintf(ded, sizeof(ded), "%s/dedicated_time", cluster.dir);
    stamp(from, a, sizeof(a));
    stamp(to, b, sizeof(b));
    snprintf(text, sizeof(text), "# one period\n%s %s\n", a, b);
    assert_int_equal(harness_write_file(ded, text, 0644), 0);
    assert_int_equal(harness_write_file(policy, "sort_by: shortest_job_first\n", 0644), 0);
    snprintf(keys, sizeof(keys), "DedicatedTimeFile=%s\n", ded);
    reconfigure(keys, "PartitionName=ded1 Nodes=n[1-2] MaxTime=UNLIMITED\n");
}

/* Inside a dedicated period only the dedicated partitions run; outside it, a job whose
 * limit would reach into the next period waits, a shorter one runs. */
static void test_dedicated_time(void **state)
{
    (void)state;
    time_t now = time(NULL);
    use_dedicated(now - 600, now + 3600);
    unsigned other = SUBMIT("-J", "other", "-t", "5", "--wrap=true");
    unsigned ded = SUBMIT("-J", "dedicated", "-p", "ded1", "-t", "5", "--wrap=true");
    wait_state(ded, "COMPLETED\n", 20);
    char *reason = query(other, "%T %r");
    assert_string_equal(reason, "PENDING DedicatedTime\n");
    free(reason);
    use_dedicated(now + 600, now + 3600); /* the next period starts in ten minutes */
    wait_state(other, "COMPLETED\n", 20);  /* 5 minutes fit before it */
    unsigned longer = SUBMIT("-J", "longer", "-t", "20", "--wrap=true");
    unsigned early = SUBMIT("-J", "early", "-p", "ded1", "-t", "5", "--wrap=true");
    wait_for(longer, "%T %r", "PENDING DedicatedTime\n", 10);
    wait_for(early, "%T %r", "PENDING DedicatedTime\n", 10);
    wait_sched_cycle(10);
    reason = query(longer, "%T %r");
    assert_string_equal(reason, "PENDING DedicatedTime\n");
    free(reason);
    reason = query(early, "%T %r");
    assert_string_equal(reason, "PENDING DedicatedTime\n");
    free(reason);
    char a[16];
    snprintf(a, sizeof(a), "%u", longer);
    struct result r = RUN("scancel", a);
    expect_ok(&r);
    result_free(&r);
    orphan = early; /* left pending for test_limits */
}

static void cancel(unsigned id)
{
    char a[16];
    snprintf(a, sizeof(a), "%u", id);
    struct result r = RUN("scancel", a);
    expect_ok(&r);
    result_free(&r);
}

/* Running-job limits: per user in a partition, and for the whole cluster. */
static void test_limits(void **state)
{
    (void)state;
    assert_int_equal(harness_write_file(policy, "sort_by: no_sort\n", 0644), 0);
    reconfigure("MaxRunning=2\n",
                "PartitionName=lim Nodes=n[1-2] MaxTime=UNLIMITED MaxUserRunning=1\n");
    /* a pending job whose partition went away blocks nobody */
    if (orphan) {
        wait_for(orphan, "%T %r", "PENDING BadConstraints\n", 10);
    }
    /* the test ends the jobs itself: no job's run time decides what the checks see */
    unsigned lim[3];
    for (int i = 0; i < 3; i++)
        lim[i] = SUBMIT("-J", "lim", "-p", "lim", "-t", "1", "--wrap=sleep 300");
    wait_state(lim[0], "RUNNING\n", 20);
    wait_for(lim[1], "%T %r", "PENDING MaxUserRunningLimit\n", 10);
    wait_for(lim[2], "%T %r", "PENDING MaxUserRunningLimit\n", 10);
    /* one at a time, all of them in the end */
    cancel(lim[0]);
    wait_state(lim[1], "RUNNING\n", 20);
    char *t = query(lim[2], "%T %r");
    assert_string_equal(t, "PENDING MaxUserRunningLimit\n");
    free(t);
    char *start1 = query(lim[1], "%S"), *end0 = query(lim[0], "%e");
    assert_true(strcmp(start1, end0) >= 0);
    free(start1);
    free(end0);
    cancel(lim[1]);
    wait_state(lim[2], "RUNNING\n", 20);
    cancel(lim[2]);
    /* the cluster runs two jobs at most, though four CPUs are free */
    unsigned all[3];
    for (int i = 0; i < 3; i++)
        all[i] = SUBMIT("-J", "all", "-t", "1", "--wrap=sleep 300");
    wait_state(all[0], "RUNNING\n", 20);
    wait_state(all[1], "RUNNING\n", 20);
    wait_for(all[2], "%T %r", "PENDING MaxRunningLimit\n", 10);
    cancel(all[0]);
    wait_state(all[2], "RUNNING\n", 20);
    cancel(all[1]);
    cancel(all[2]);
    /* ResourcesMax: one job asks too much; with it alone it also caps what all running
     * jobs hold together, until ResourcesAvailable gives more */
    reconfigure("ResourcesMax=cpus=2\n", "");
    unsigned wide = SUBMIT("-J", "wide", "-n", "3", "-t", "1", "--wrap=true");
    unsigned two = SUBMIT("-J", "two", "-n", "2", "-t", "1", "--wrap=sleep 30");
    wait_state(two, "RUNNING\n", 20);
    unsigned one = SUBMIT("-J", "one", "-n", "1", "-t", "1", "--wrap=true");
    wait_for(one, "%T %r", "PENDING ResourcesAvailableLimit\n", 10);
    t = query(wide, "%T %r");
    assert_string_equal(t, "PENDING ResourcesMaxLimit\n");
    free(t);
    reconfigure("ResourcesMax=cpus=2\nResourcesAvailable=cpus=3\n", "");
    wait_state(one, "COMPLETED\n", 20);
    t = query(wide, "%T %r");
    assert_string_equal(t, "PENDING ResourcesMaxLimit\n");
    free(t);
    cancel(wide);
    cancel(two);
    reconfigure("", "");
}

/* help_starving_jobs: a job that waited past starve_max goes first, though the sort key
 * (shortest first) would put a later, shorter one ahead of it. */
static void test_starving(void **state)
{
    (void)state;
    char order[700], wrap[900];
    assert_int_equal(harness_write_file(policy, "sort_by: shortest_job_first\n"
                                                "help_starving_jobs: true\n"
                                                "starve_max: 00:00:02\n",
                                        0644),
                     0);
    reconfigure("", "");
    snprintf(order, sizeof(order), "%s/order-starving", outdir);
    unsigned blocker = SUBMIT("-J", "blocker", "-t", "1", "-N2", "--exclusive", "--wrap=sleep 6");
    wait_state(blocker, "RUNNING\n", 20);
    snprintf(wrap, sizeof(wrap), "--wrap=echo long >> %s", order);
    unsigned longer = SUBMIT("-J", "long", "-t", "30", "-N2", "--exclusive", wrap);
    wait_eligible_for(longer, 3); /* past starve_max */
    snprintf(wrap, sizeof(wrap), "--wrap=echo short >> %s", order);
    unsigned shorter = SUBMIT("-J", "short", "-t", "5", "-N2", "--exclusive", wrap);
    wait_state(longer, "COMPLETED\n", 30);
    wait_state(shorter, "COMPLETED\n", 30);
    char *text = harness_read_file(order);
    assert_string_equal(text, "long\nshort\n");
    free(text);
}

/* strict_fifo: a job that waits for the whole cluster holds back a later one that would
 * fit now but run past the first one's start (with backfill, a shorter one could still
 * go); with strict_fifo off (PBS's default) the later one starts. */
static void test_strict_fifo(void **state)
{
    (void)state;
    assert_int_equal(harness_write_file(policy, "sort_by: no_sort\nstrict_fifo: true\n", 0644),
                     0);
    reconfigure("", "");
    unsigned a = SUBMIT("-J", "a", "-t", "10", "-N1", "--exclusive", "--wrap=sleep 120");
    wait_state(a, "RUNNING\n", 20);
    unsigned b = SUBMIT("-J", "b", "-t", "5", "-N2", "--exclusive", "--wrap=true");
    unsigned c = SUBMIT("-J", "c", "-t", "30", "-N1", "--wrap=sleep 120");
    wait_for(b, "%T %r", "PENDING Resources\n", 10);
    wait_sched_cycle(10);
    char *t = query(c, "%T %r");
    assert_string_equal(t, "PENDING Priority\n");
    free(t);
    assert_int_equal(harness_write_file(policy, "sort_by: no_sort\nstrict_fifo: false\n", 0644),
                     0);
    reconfigure("", "");
    wait_state(c, "RUNNING\n", 10);
    t = query(b, "%T");
    assert_string_equal(t, "PENDING\n");
    free(t);
    cancel(a);
    cancel(b);
    cancel(c);
    wait_state(c, "CANCELLED\n", 20);
}

/* One line of "scontrol show fairshare": the usage of name. */
static double fairshare_usage_of(const char *name)
{
    struct result r = RUN("scontrol", "show", "fairshare");
    expect_ok(&r);
    double usage = -1;
    for (const char *line = r.out; line && *line;) {
        char n[64];
        unsigned id, raw;
        double norm, u;
        if (sscanf(line, "%63s %u %u %lf %lf", n, &id, &raw, &norm, &u) == 5 && !strcmp(n, name))
            usage = u;
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (usage < 0)
        fail_msg("no %s in: %s", name, r.out);
    result_free(&r);
    return usage;
}

/* Fair share by account: after physics used the cluster, a chemistry job submitted after
 * two physics jobs runs first. The usage shows in scontrol show fairshare and survives a
 * restart of the controller. */
static void test_fair_share(void **state)
{
    (void)state;
    char groups[700], keys[800], order[700], wrap[900];
    snprintf(groups, sizeof(groups), "%s/resource_group", cluster.dir);
    assert_int_equal(harness_write_file(groups, "# name id parent shares\n"
                                                "physics 10 root 1\nchemistry 11 root 1\n",
                                        0644),
                     0);
    assert_int_equal(harness_write_file(policy, "sort_by: no_sort\nfair_share: true\n"
                                                "fairshare_entity: account\n",
                                        0644),
                     0);
    snprintf(keys, sizeof(keys), "ResourceGroupFile=%s\n", groups);
    reconfigure(keys, "");
    snprintf(order, sizeof(order), "%s/order-fair", outdir);
    unsigned blocker = SUBMIT("-J", "blocker", "-A", "physics", "-t", "1", "-N2", "--exclusive",
                              "--wrap=sleep 60");
    wait_state(blocker, "RUNNING\n", 20);
    const char *who[] = {"p1", "p2", "c1"};
    const char *acct[] = {"physics", "physics", "chemistry"};
    unsigned ids[3];
    for (int i = 0; i < 3; i++) {
        snprintf(wrap, sizeof(wrap), "--wrap=echo %s >> %s", who[i], order);
        ids[i] = SUBMIT("-J", who[i], "-A", acct[i], "-t", "1", "-N2", "--exclusive", wrap);
    }
    wait_time_used(blocker, 3);
    cancel(blocker); /* physics is charged its 4 CPUs for those seconds */
    for (int i = 0; i < 3; i++)
        wait_state(ids[i], "COMPLETED\n", 30);
    char *text = harness_read_file(order);
    assert_string_equal(text, "c1\np1\np2\n");
    free(text);
    double physics = fairshare_usage_of("physics");
    if (physics < 8)
        fail_msg("physics used %.0f CPU-seconds, not 8 or more", physics);
    struct result r = RUN("scontrol", "show", "fairshare");
    assert_true(has_line(r.out, "Entity=account FairShare=on HalfLife=1-00:00:00"));
    result_free(&r);
    /* kept across a restart */
    harness_ctld_stop(&cluster, SIGTERM);
    if (harness_ctld_start(&cluster)) {
        char *log = harness_read_file(cluster.ctld_log);
        fail_msg("the controller did not come back: %s", log ? log : "(no log)");
    }
    double again = fairshare_usage_of("physics");
    if (again < physics * 0.99 || again > physics + 1)
        fail_msg("physics used %.0f CPU-seconds before the restart, %.0f after", physics, again);
}

static void test_broken_file_refused(void **state)
{
    (void)state;
    assert_int_equal(harness_write_file(policy, "sort_by: tallest_first\n", 0644), 0);
    struct result r = RUN("scontrol", "reconfigure");
    assert_int_not_equal(r.rc, 0);
    char want[800];
    snprintf(want, sizeof(want), "%s:1: unknown sort_by 'tallest_first'", policy);
    if (!strstr(r.err, want))
        fail_msg("scontrol reconfigure said: %s", r.err);
    result_free(&r);
    r = RUN("scontrol", "ping");
    expect_ok(&r);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shortest_job_first),
        cmocka_unit_test(test_non_prime_time),
        cmocka_unit_test(test_dedicated_time),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_starving),
        cmocka_unit_test(test_strict_fifo),
        cmocka_unit_test(test_fair_share),
        cmocka_unit_test(test_broken_file_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
