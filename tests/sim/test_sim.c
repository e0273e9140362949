/* The simulator with the real plugins on hand-made traces: the sanity case under
 * each policy, the metrics, what the scheduler is shown, what the simulator refuses from a
 * scheduler, policies as parameter strings, and the command itself. */
#include "contrib/sim/sim.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "harness.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_JOBS 8

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

static const char *plugin_dir;

/* (submit, run, procs, estimate) on 10 single-CPU nodes: a wide job behind a wide one,
 * then short and long narrow ones that fit beside it. */
static const struct swf_job sanity[] = {
    {.id = 1, .submit = 0, .run = 100, .procs = 6, .estimate = 100, .user = 1, .group = 1},
    {.id = 2, .submit = 1, .run = 50, .procs = 6, .estimate = 50, .user = 2, .group = 1},
    {.id = 3, .submit = 2, .run = 10, .procs = 4, .estimate = 10, .user = 3, .group = 1},
    {.id = 4, .submit = 3, .run = 200, .procs = 4, .estimate = 200, .user = 4, .group = 2},
    {.id = 5, .submit = 4, .run = 5, .procs = 2, .estimate = 5, .user = 5, .group = 2},
};
#define NSANITY (sizeof(sanity) / sizeof(sanity[0]))

struct outcome {
    int err;
    char msg[512];
    int64_t start[MAX_JOBS];
    size_t njobs;
    struct sim_stats stats;
};

/* Runs jobs through the given scheduler ops (NULL: the plugin sched_name), under policy
 * (may be NULL) with the fair-share tree fs and the running-job limits of limits (may be
 * NULL). */
static struct outcome simulate_full(const char *sched_name, const struct sched_ops *ops,
                                    const char *params, const struct swf_job *jobs, size_t n,
                                    uint32_t nodes, uint32_t cpus,
                                    const struct policy_set *policy, struct fairshare *fs,
                                    const struct conf *limits)
{
    struct outcome o = {0};
    struct sim_plugins pl;
    o.err = sim_plugins_load(plugin_dir, sched_name, &pl, o.msg, sizeof(o.msg));
    if (o.err) {
        print_error("%s\n", o.msg);
        return o;
    }
    struct sim_config cfg = {.nodes = nodes, .cpus_per_node = cpus, .sched_params = params,
                             .select = pl.select, .sched = ops ? ops : pl.sched,
                             .policy = policy, .priority = pl.priority, .fairshare = fs,
                             .limits = limits};
    struct sim *s = NULL;
    o.err = sim_create(&cfg, jobs, n, &s, o.msg, sizeof(o.msg));
    if (!o.err)
        o.err = sim_run(s, o.msg, sizeof(o.msg));
    if (s) {
        o.njobs = sim_job_count(s);
        for (size_t i = 0; i < o.njobs && i < MAX_JOBS; i++)
            o.start[i] = sim_job_at(s, i)->start;
        sim_stats(s, &o.stats);
    }
    sim_destroy(s);
    sim_plugins_unload(&pl);
    return o;
}

static struct outcome simulate_with(const char *sched_name, const struct sched_ops *ops,
                                    const char *params, const struct swf_job *jobs, size_t n,
                                    uint32_t nodes, uint32_t cpus)
{
    return simulate_full(sched_name, ops, params, jobs, n, nodes, cpus, NULL, NULL, NULL);
}

static struct outcome simulate_policy(const char *sched_name, enum sim_policy p,
                                      const struct swf_job *jobs, size_t n, uint32_t nodes,
                                      uint32_t cpus)
{
    char *params = sim_policy_params(p, sim_window_minutes(jobs, n), NULL);
    assert_non_null(params);
    struct outcome o = simulate_with(sched_name, NULL, params, jobs, n, nodes, cpus);
    free(params);
    return o;
}

static void expect_starts(const struct outcome *o, const int64_t *expected, size_t n)
{
    if (o->err)
        print_error("%s\n", o->msg);
    assert_int_equal(o->err, TS_OK);
    assert_int_equal(o->njobs, n);
    for (size_t i = 0; i < n; i++) {
        if (o->start[i] != expected[i])
            print_error("job %zu started at %lld, expected %lld\n", i + 1,
                        (long long)o->start[i], (long long)expected[i]);
        assert_int_equal(o->start[i], expected[i]);
    }
}

/* ---- the sanity case ---- */

static const int64_t fcfs_starts[NSANITY] = {0, 100, 100, 110, 150};
/* job 3 fits beside job 1 and ends before job 2's reservation; job 4 fits beside job 2's
 * reservation once job 3 ends; job 5 would need job 2's CPUs */
static const int64_t backfill_starts[NSANITY] = {0, 100, 2, 12, 150};

static void test_sanity_fcfs(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_FCFS, sanity, NSANITY, 10, 1);
    expect_starts(&o, fcfs_starts, NSANITY);
}

static void test_sanity_easy(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_EASY, sanity, NSANITY, 10, 1);
    expect_starts(&o, backfill_starts, NSANITY);
}

static void test_sanity_conservative(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_CONSERVATIVE, sanity, NSANITY, 10, 1);
    expect_starts(&o, backfill_starts, NSANITY);
}

/* Where the two differ: job 4 fits beside job 1 now and runs past 100 without delaying
 * job 2, but on the CPUs job 3 would use beside job 2 from 100. EASY protects only the
 * first waiting job, so job 4 starts and job 3 waits for it; conservative protects job 3's
 * reservation too, so job 4 waits until both end. */
static const struct swf_job second_in_line[] = {
    {.id = 1, .submit = 0, .run = 100, .procs = 8, .estimate = 100},
    {.id = 2, .submit = 1, .run = 100, .procs = 6, .estimate = 100},
    {.id = 3, .submit = 2, .run = 100, .procs = 4, .estimate = 100},
    {.id = 4, .submit = 3, .run = 150, .procs = 2, .estimate = 150},
};

static void test_easy_delays_the_second(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_EASY, second_in_line, 4, 10, 1);
    static const int64_t expected[] = {0, 100, 153, 3};
    expect_starts(&o, expected, 4);
}

static void test_conservative_protects_the_second(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_CONSERVATIVE, second_in_line, 4, 10, 1);
    static const int64_t expected[] = {0, 100, 100, 200};
    expect_starts(&o, expected, 4);
}

/* No expectation of the daemon's defaults beyond sanity: every job runs, none early. */
static void test_sanity_default(void **state)
{
    struct outcome o = simulate_policy(NULL, SIM_POLICY_DEFAULT, sanity, NSANITY, 10, 1);
    if (o.err)
        print_error("%s\n", o.msg);
    assert_int_equal(o.err, TS_OK);
    for (size_t i = 0; i < NSANITY; i++)
        assert_true(o.start[i] >= sanity[i].submit);
}

/* sched/builtin never jumps the queue: FCFS whatever the parameters say. */
static void test_sanity_builtin(void **state)
{
    struct outcome o = simulate_policy("sched/builtin", SIM_POLICY_EASY, sanity, NSANITY, 10, 1);
    expect_starts(&o, fcfs_starts, NSANITY);
}

/* ---- metrics ---- */

static void test_stats(void **state)
{
    struct outcome o = simulate_policy("sched/builtin", SIM_POLICY_FCFS, sanity, NSANITY, 10, 1);
    assert_int_equal(o.err, TS_OK);
    /* waits 0 99 98 107 146 */
    assert_int_equal(o.stats.jobs, 5);
    assert_int_equal(o.stats.dropped, 0);
    assert_near(o.stats.mean_wait, 90.0);
    assert_int_equal(o.stats.max_wait, 146);
    /* (w + r) / max(r, 10): 1, 149/50, 108/10, 307/200, 151/10 */
    assert_near(o.stats.mean_bsld, (1 + 2.98 + 10.8 + 1.535 + 15.1) / 5);
    /* 1750 processor-seconds on 10 processors from 0 to job 4's end at 310 */
    assert_int_equal(o.stats.first_submit, 0);
    assert_int_equal(o.stats.last_end, 310);
    assert_int_equal(o.stats.makespan, 310);
    assert_near(o.stats.utilisation, 1750.0 / 3100.0);
}

/* ---- the machine ---- */

/* Two nodes of 4 CPUs: a 6-processor job spans both, a 9-processor one is dropped, and
 * arrival order is (submit, id) whatever the file's order. */
static void test_multicore_nodes(void **state)
{
    static const struct swf_job jobs[] = {
        {.id = 7, .submit = 0, .run = 10, .procs = 3, .estimate = 10},
        {.id = 9, .submit = 0, .run = 10, .procs = 9, .estimate = 10},
        {.id = 3, .submit = 0, .run = 10, .procs = 6, .estimate = 10},
        {.id = 8, .submit = 0, .run = 10, .procs = 2, .estimate = 10},
    };
    struct outcome o = simulate_policy("sched/builtin", SIM_POLICY_FCFS, jobs, 4, 2, 4);
    /* ids 3 (6 CPUs), 7 (3: waits for 3's end), 8 (2: behind 7) */
    static const int64_t expected[] = {0, 10, 10};
    expect_starts(&o, expected, 3);
    assert_int_equal(o.stats.dropped, 1);
    assert_near(o.stats.utilisation, 110.0 / (8 * 20));
}

/* ---- what the scheduler is shown ---- */

static const struct sched_ops *builtin;
static int64_t seen_hold_end, seen_limit;
static size_t spied;

/* sched/builtin's decisions, after checking the view against the simulator's promises. */
static enum sched_status spy_schedule(void *state, struct sched_view *view,
                                      struct sched_decision *decisions)
{
    assert_int_equal(view->kind, SCHED_BACKFILL);
    assert_int_equal(view->npartitions, 1);
    for (size_t i = 0; i < view->nunits; i++) {
        const struct sched_unit *u = &view->units[i];
        assert_int_equal(u->ncomponents, 1);
        assert_int_equal(u->partitions[0], 0);
        assert_int_equal(u->reqs[0].cpus_per_task, 1);
        assert_int_equal(u->reqs[0].min_nodes, 1);
        if (i)
            assert_true(u->priority < view->units[i - 1].priority);
        if (u->id == 2)
            seen_limit = u->time_limits[0];
        assert_int_equal(decisions[i].expected_start, 0); /* the caller zeroes it */
        assert_int_equal(decisions[i].reserved, 0);
    }
    for (size_t k = 0; k < view->nholds; k++) {
        assert_true(view->holds[k].end > view->now);
        if (view->now == 5)
            seen_hold_end = view->holds[k].end;
    }
    spied++;
    return builtin->schedule(state, view, decisions);
}

/* A running job is held until start + estimate; it really ends at start + run time. */
static void test_view(void **state)
{
    static const struct swf_job jobs[] = {
        {.id = 1, .submit = 0, .run = 10, .procs = 10, .estimate = 100},
        {.id = 2, .submit = 5, .run = 10, .procs = 10, .estimate = 30},
    };
    struct sim_plugins pl;
    assert_int_equal(sim_plugins_load(plugin_dir, "sched/builtin", &pl, NULL, 0), TS_OK);
    builtin = pl.sched;
    struct sched_ops spy = *builtin;
    spy.schedule = spy_schedule;
    spied = 0;
    struct outcome o = simulate_with("sched/builtin", &spy, NULL, jobs, 2, 10, 1);
    static const int64_t expected[] = {0, 10};
    expect_starts(&o, expected, 2);
    assert_int_equal(seen_hold_end, 100);
    assert_int_equal(seen_limit, 30);
    assert_int_equal(spied, 3); /* at 0, 5 and 10; none at 20, when nothing waits */
    assert_int_equal(o.stats.cycles, 3);
    assert_int_equal(o.stats.units, 3); /* job 1 at 0, job 2 at 5 and 10 */
    sim_plugins_unload(&pl);
}

/* ---- what the simulator refuses ---- */

static enum sched_status lazy_schedule(void *state, struct sched_view *view,
                                       struct sched_decision *decisions)
{
    for (size_t i = 0; i < view->nunits; i++)
        decisions[i].verdict = SCHED_RESOURCES;
    return SCHED_DONE;
}

/* Every unit on node 0, whether it fits or not. */
static enum sched_status greedy_schedule(void *state, struct sched_view *view,
                                         struct sched_decision *decisions)
{
    for (size_t i = 0; i < view->nunits; i++) {
        decisions[i].verdict = SCHED_START;
        decisions[i].allocs[0].nnodes = 1;
        decisions[i].allocs[0].nodes[0] = (struct select_node_alloc){
            .node = 0, .cpus = view->units[i].reqs[0].ntasks,
            .tasks = view->units[i].reqs[0].ntasks};
    }
    return SCHED_DONE;
}

static struct outcome simulate_fake(enum sched_status (*schedule)(void *, struct sched_view *,
                                                                   struct sched_decision *))
{
    struct sim_plugins pl;
    assert_int_equal(sim_plugins_load(plugin_dir, "sched/builtin", &pl, NULL, 0), TS_OK);
    struct sched_ops fake = *pl.sched;
    fake.schedule = schedule;
    struct outcome o = simulate_with("sched/builtin", &fake, NULL, sanity, NSANITY, 10, 2);
    sim_plugins_unload(&pl);
    return o;
}

static void test_stall_is_an_error(void **state)
{
    struct outcome o = simulate_fake(lazy_schedule);
    assert_int_equal(o.err, TS_EINVAL);
    assert_string_equal(o.msg, "t=0: the machine is empty and 1 jobs wait, but the scheduler "
                               "started none (first waiting: job 1, 6 processors, verdict "
                               "resources): a scheduler bug");
}

static void test_overcommit_is_an_error(void **state)
{
    struct outcome o = simulate_fake(greedy_schedule);
    assert_int_equal(o.err, TS_EINVAL);
    assert_string_equal(o.msg, "t=0: the scheduler started job 1 (6 processors) on a node "
                               "beyond its CPUs");
}

/* ---- set-up ---- */

static void test_policies(void **state)
{
    enum sim_policy p;
    assert_int_equal(sim_policy_parse("easy", &p), TS_OK);
    assert_int_equal(p, SIM_POLICY_EASY);
    assert_string_equal(sim_policy_name(p), "easy");
    assert_int_equal(sim_policy_parse("sjf", &p), TS_EINVAL);

    char *s = sim_policy_params(SIM_POLICY_FCFS, 10, NULL);
    assert_string_equal(s, "bf_mode=off");
    free(s);
    s = sim_policy_params(SIM_POLICY_CONSERVATIVE, 7, "");
    assert_string_equal(s, "bf_mode=whole,bf_reserve_depth=1000000000,bf_resolution=1,"
                           "bf_window=7");
    free(s);
    s = sim_policy_params(SIM_POLICY_EASY, 7, "bf_window=5,,bf_max_job_test=10,whole_hetjob");
    assert_string_equal(s, "bf_mode=whole,bf_reserve_depth=1,bf_resolution=1,bf_window=5,"
                           "bf_max_job_test=10,whole_hetjob");
    free(s);
    s = sim_policy_params(SIM_POLICY_DEFAULT, 60, "bf_resolution=60");
    assert_string_equal(s, "bf_mode=whole,bf_window=60,bf_resolution=60");
    free(s);

    /* 100 + 50 + 10 + 200 + 5 s of estimates: 7 minutes, rounded up */
    assert_int_equal(sim_window_minutes(sanity, NSANITY), 7);
    assert_int_equal(sim_window_minutes(sanity, 0), 1);
    static const struct swf_job huge[] = {{.estimate = INT64_MAX / 4},
                                          {.estimate = INT64_MAX / 4}};
    assert_int_equal(sim_window_minutes(huge, 2), SIM_WINDOW_MAX_MIN);
}

/* ---- a policy file ---- */

static struct outcome simulate_policy_file(const char *text, const char *groups,
                                           const struct swf_job *jobs, size_t n,
                                           uint32_t nodes)
{
    struct policy pol;
    char err[256];
    policy_defaults(&pol);
    if (policy_parse(text, "sched_config", &pol, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    struct fairshare *fs = NULL;
    assert_int_equal(fairshare_parse(groups, "resource_group",
                                     pol.set[POLICY_PRIME].unknown_shares, &fs, err,
                                     sizeof(err)),
                     TS_OK);
    char *params = sim_policy_params(SIM_POLICY_DEFAULT, sim_window_minutes(jobs, n), NULL);
    struct outcome o = simulate_full(NULL, NULL, params, jobs, n, nodes, 1,
                                     &pol.set[POLICY_PRIME], fs, NULL);
    fairshare_destroy(fs);
    free(params);
    return o;
}

/* One CPU; user 1 queues three jobs, user 2 one a second later. By arrival user 2 waits
 * for all three; with fair share it goes once user 1 has used the machine. */
static const struct swf_job two_users[] = {
    {.id = 1, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 1, .group = 1},
    {.id = 2, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 1, .group = 1},
    {.id = 3, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 1, .group = 1},
    {.id = 4, .submit = 1, .run = 100, .procs = 1, .estimate = 100, .user = 2, .group = 1},
    {.id = 5, .submit = 1, .run = 100, .procs = 1, .estimate = 100, .user = 2, .group = 1},
};

static void test_policy_fair_share(void **state)
{
    static const int64_t by_arrival[5] = {0, 100, 200, 300, 400};
    static const int64_t fair[5] = {0, 200, 400, 100, 300};
    struct outcome o = simulate_policy_file("sort_by: no_sort\n", NULL, two_users, 5, 1);
    expect_starts(&o, by_arrival, 5);
    o = simulate_policy_file("sort_by: no_sort\nfair_share: true\n", NULL, two_users, 5, 1);
    expect_starts(&o, fair, 5);
    /* the tree by the users' numbers: with 9 shares of 10, user 1 runs twice as long
     * before user 2's second job */
    o = simulate_policy_file("sort_by: no_sort\nfair_share: true\nunknown_shares: 0\n",
                             "alice 1 root 9\nbob 2 root 1\n", two_users, 5, 1);
    static const int64_t weighted[5] = {0, 200, 300, 100, 400};
    expect_starts(&o, weighted, 5);
    /* sort_by: shortest_job_first against arrival */
    static const struct swf_job sizes[] = {
        {.id = 1, .submit = 0, .run = 50, .procs = 1, .estimate = 50, .user = 1},
        {.id = 2, .submit = 1, .run = 30, .procs = 1, .estimate = 30, .user = 1},
        {.id = 3, .submit = 1, .run = 10, .procs = 1, .estimate = 10, .user = 1},
    };
    static const int64_t shortest[3] = {0, 60, 50};
    o = simulate_policy_file("sort_by: shortest_job_first\n", NULL, sizes, 3, 1);
    expect_starts(&o, shortest, 3);
}

/* strict_fifo: on ten CPUs, A (5) runs, B (10) waits; C (5 for 200 s) would delay B.
 * With strict_fifo it waits for B; without (PBS's default) it starts and B waits. */
static void test_policy_strict_fifo(void **state)
{
    static const struct swf_job abc[] = {
        {.id = 1, .submit = 0, .run = 100, .procs = 5, .estimate = 100, .user = 1},
        {.id = 2, .submit = 1, .run = 50, .procs = 10, .estimate = 50, .user = 1},
        {.id = 3, .submit = 2, .run = 200, .procs = 5, .estimate = 200, .user = 1},
    };
    static const int64_t strict[3] = {0, 100, 150}, greedy[3] = {0, 202, 2};
    struct outcome o = simulate_policy_file("sort_by: no_sort\nstrict_fifo: true\n", NULL, abc,
                                            3, 10);
    expect_starts(&o, strict, 3);
    o = simulate_policy_file("sort_by: no_sort\n", NULL, abc, 3, 10);
    expect_starts(&o, greedy, 3);
    /* a starving B is not overtaken */
    o = simulate_policy_file("sort_by: no_sort\nhelp_starving_jobs: true\nstarve_max: 0:00:00\n",
                             NULL, abc, 3, 10);
    expect_starts(&o, strict, 3);
}

/* ---- running-job limits ---- */

/* Four one-CPU jobs on ten CPUs under EASY and a tessera.conf's limits (the controller's
 * decision, common/sched/limits.c). */
static struct outcome simulate_limits(const char *conf_text, const struct swf_job *jobs,
                                      size_t n)
{
    struct conf *conf = NULL;
    char err[256];
    if (conf_parse_string(conf_text, "t.conf", 0, &conf, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    char *params = sim_policy_params(SIM_POLICY_EASY, sim_window_minutes(jobs, n), NULL);
    assert_non_null(params);
    struct outcome o = simulate_full(NULL, NULL, params, jobs, n, 10, 1, NULL, NULL, conf);
    free(params);
    conf_free(conf);
    return o;
}

static const struct swf_job four_users[] = {
    {.id = 1, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 1, .group = 1},
    {.id = 2, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 1, .group = 1},
    {.id = 3, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 2, .group = 1},
    {.id = 4, .submit = 0, .run = 100, .procs = 1, .estimate = 100, .user = 2, .group = 2},
};

static void test_limits(void **state)
{
    static const int64_t none[4] = {0, 0, 0, 0}, one[4] = {0, 100, 200, 300},
                         per_user[4] = {0, 100, 0, 100}, per_group[4] = {0, 0, 100, 0},
                         two_cpus[4] = {0, 0, 100, 100};
    struct outcome o = simulate_limits("ClusterName=sim\n", four_users, 4);
    expect_starts(&o, none, 4);
    /* the starts of one cycle count together */
    o = simulate_limits("MaxRunning=1\n", four_users, 4);
    expect_starts(&o, one, 4);
    /* a job a limit holds back is out of the view: job 3 passes job 2 */
    o = simulate_limits("MaxUserRunning=1\n", four_users, 4);
    expect_starts(&o, per_user, 4);
    o = simulate_limits("MaxGroupRunning=2\n", four_users, 4);
    expect_starts(&o, per_group, 4);
    o = simulate_limits("ResourcesAvailable=cpus=2\n", four_users, 4);
    expect_starts(&o, two_cpus, 4);
    /* a job no limit ever lets start is refused, not forgotten */
    static const struct swf_job wide[] = {
        {.id = 1, .submit = 0, .run = 10, .procs = 1, .estimate = 10, .user = 1},
        {.id = 2, .submit = 0, .run = 10, .procs = 3, .estimate = 10, .user = 1},
    };
    o = simulate_limits("ResourcesMax=cpus=2\n", wide, 2);
    assert_int_equal(o.err, TS_EINVAL);
    assert_non_null(strstr(o.msg, "1 jobs wait that the running-job limits never let start "
                                  "(first waiting: job 2, 3 processors)"));
    assert_int_equal(o.start[0], 0);
}

/* ---- the command ---- */

static void test_command(void **state)
{
    char dir[PATH_MAX], swf[PATH_MAX + 16], csv[PATH_MAX + 16];
    assert_int_equal(harness_tmpdir("sim", dir, sizeof(dir)), 0);
    snprintf(swf, sizeof(swf), "%s/t.swf", dir);
    snprintf(csv, sizeof(csv), "%s/t.csv", dir);
    assert_int_equal(harness_write_file(swf,
                                        "; MaxNodes: 10\n"
                                        "1 0 -1 100 6 -1 -1 -1 100 -1 1 11 21 -1 -1 -1 -1 -1\n"
                                        "2 1 -1 50 6 -1 -1 6 50 -1 1 12 22 -1 -1 -1 -1 -1\n"
                                        "3 2 -1 10 4 -1 -1 4 -1 -1 1 13 23 -1 -1 -1 -1 -1\n"
                                        "4 3 -1 0 4 -1 -1 4 10 -1 1 13 23 -1 -1 -1 -1 -1\n"
                                        "5 4 -1 10 11 -1 -1 11 10 -1 1 13 23 -1 -1 -1 -1 -1\n",
                                        0644),
                     0);
    char *argv[] = {TESSERA_BIN_DIR "/tessera-sim", "--policy", "fcfs", "--scheduler",
                    "sched/builtin", "--sched-params", "bf_interval=30", "--plugin-dir",
                    (char *)plugin_dir, "--csv", csv, swf, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(harness_run(argv, NULL, &out, &err, 30000), 0);
    assert_non_null(strstr(out, "policy        fcfs (sched/builtin: bf_mode=off,bf_interval=30)\n"));
    assert_non_null(strstr(out, "machine       10 nodes x 1 CPUs\n"));
    assert_non_null(strstr(out, "jobs          3 simulated, 2 dropped (1 without run time or "
                                "size, 1 larger than the machine)\n"));
    assert_non_null(strstr(out, "mean wait     65.7 s\n"));
    assert_non_null(strstr(out, "utilisation   0.6267\n"));
    free(out);
    free(err);
    char *text = harness_read_file(csv);
    assert_non_null(text);
    assert_string_equal(text, "id,submit,wait,start,end,run,procs,estimate,user,group\n"
                              "1,0,0,0,100,100,6,100,11,21\n"
                              "2,1,99,100,150,50,6,50,12,22\n"
                              "3,2,98,100,110,10,4,10,13,23\n");
    free(text);

    /* usage errors are one line and status 1 */
    char *bad[] = {TESSERA_BIN_DIR "/tessera-sim", "--policy", "sjf", swf, NULL};
    assert_int_equal(harness_run(bad, NULL, &out, &err, 30000), 1);
    assert_non_null(strstr(err, "unknown policy 'sjf'"));
    free(out);
    free(err);

    /* a policy file, per user */
    char pol[PATH_MAX + 16], groups[PATH_MAX + 16];
    snprintf(pol, sizeof(pol), "%s/sched_config", dir);
    snprintf(groups, sizeof(groups), "%s/resource_group", dir);
    assert_int_equal(harness_write_file(pol, "fair_share: true\nsort_by: no_sort\n", 0644), 0);
    assert_int_equal(harness_write_file(groups, "u11 11 root 1\nu13 13 root 1\n", 0644), 0);
    char *with_policy[] = {TESSERA_BIN_DIR "/tessera-sim", "--policy-file", pol,
                           "--resource-group", groups, "--per-user", "--plugin-dir",
                           (char *)plugin_dir, swf, NULL};
    assert_int_equal(harness_run(with_policy, NULL, &out, &err, 30000), 0);
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want), "policy file   %s (prime-time values)\n", pol);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "    user     jobs    mean wait  mean bsld\n"));
    assert_non_null(strstr(out, "\n      11        1          0.0       1.00\n"));
    free(out);
    free(err);
    char *broken[] = {TESSERA_BIN_DIR "/tessera-sim", "--policy-file", groups, swf, NULL};
    assert_int_equal(harness_run(broken, NULL, &out, &err, 30000), 1);
    snprintf(want, sizeof(want), "%s:1: too many words", groups);
    if (!strstr(err, want))
        fail_msg("tessera-sim said: %s", err);
    free(out);
    free(err);

    /* running-job limits from a tessera.conf: one job at a time, so job 3 no longer
     * backfills beside job 1 and waits behind job 2 (starts 0, 100, 150) */
    char limits[PATH_MAX + 16];
    snprintf(limits, sizeof(limits), "%s/tessera.conf", dir);
    assert_int_equal(harness_write_file(limits, "MaxRunning=1\n", 0644), 0);
    char *with_limits[] = {TESSERA_BIN_DIR "/tessera-sim", "--limits", limits, "--plugin-dir",
                           (char *)plugin_dir, swf, NULL};
    assert_int_equal(harness_run(with_limits, NULL, &out, &err, 30000), 0);
    snprintf(want, sizeof(want), "limits        %s\n", limits);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "mean wait     82.3 s\n"));
    free(out);
    free(err);
    char *bad_limits[] = {TESSERA_BIN_DIR "/tessera-sim", "--limits", groups, swf, NULL};
    assert_int_equal(harness_run(bad_limits, NULL, &out, &err, 30000), 1);
    if (!strstr(err, groups))
        fail_msg("tessera-sim said: %s", err);
    free(out);
    free(err);
    assert_int_equal(harness_rmrf(dir), 0);
}

static int group_setup(void **state)
{
    plugin_dir = getenv("TESSERA_PLUGIN_DIR");
    return plugin_dir ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanity_fcfs),
        cmocka_unit_test(test_sanity_easy),
        cmocka_unit_test(test_sanity_conservative),
        cmocka_unit_test(test_sanity_default),
        cmocka_unit_test(test_easy_delays_the_second),
        cmocka_unit_test(test_conservative_protects_the_second),
        cmocka_unit_test(test_sanity_builtin),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_policy_fair_share),
        cmocka_unit_test(test_policy_strict_fifo),
        cmocka_unit_test(test_multicore_nodes),
        cmocka_unit_test(test_view),
        cmocka_unit_test(test_stall_is_an_error),
        cmocka_unit_test(test_overcommit_is_an_error),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
