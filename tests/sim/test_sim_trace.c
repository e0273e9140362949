/* The KTH SP2 trace through each policy, when the traces are at hand (skipped otherwise):
 * sanity only, not timing. Every job runs, none before its submission nor for longer or
 * shorter than it did, the machine is never over-full, and utilisation is in (0, 1]. */
#include "contrib/sim/sim.h"

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

#define KTH TESSERA_TRACE_DIR "/KTH-SP2-1996-2.1-cln.swf.gz"
#define KTH_PROCS 100

static struct swf_trace *trace;
static struct sim_plugins plugins;

/* A start adds the job's processors, an end takes them away; ends first at equal times. */
struct step {
    int64_t time;
    int64_t delta;
};

static int step_cmp(const void *pa, const void *pb)
{
    const struct step *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->delta > b->delta) - (a->delta < b->delta);
}

static void check_never_overfull(const struct sim *s)
{
    size_t n = sim_job_count(s);
    struct step *steps = malloc(2 * n * sizeof(*steps));
    assert_non_null(steps);
    for (size_t i = 0; i < n; i++) {
        const struct sim_job *j = sim_job_at(s, i);
        steps[2 * i] = (struct step){j->start, j->swf.procs};
        steps[2 * i + 1] = (struct step){j->end, -(int64_t)j->swf.procs};
    }
    qsort(steps, 2 * n, sizeof(*steps), step_cmp);
    int64_t busy = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        busy += steps[i].delta;
        assert_true(busy >= 0 && busy <= KTH_PROCS);
    }
    free(steps);
}

static void run_policy(enum sim_policy p)
{
    if (!trace)
        skip();
    char *params = sim_policy_params(p, sim_window_minutes(trace->jobs, trace->njobs), NULL);
    assert_non_null(params);
    struct sim_config cfg = {.nodes = swf_machine_size(trace), .cpus_per_node = 1,
                             .sched_params = params, .select = plugins.select,
                             .sched = plugins.sched};
    assert_int_equal(cfg.nodes, KTH_PROCS);
    struct sim *s = NULL;
    char err[512] = "";
    int rc = sim_create(&cfg, trace->jobs, trace->njobs, &s, err, sizeof(err));
    if (!rc)
        rc = sim_run(s, err, sizeof(err));
    if (rc)
        print_error("%s: %s\n", sim_policy_name(p), err);
    assert_int_equal(rc, TS_OK);

    struct sim_stats st;
    sim_stats(s, &st);
    assert_int_equal(st.jobs + st.dropped, trace->njobs);
    assert_true(st.jobs > 0);
    for (size_t i = 0; i < sim_job_count(s); i++) {
        const struct sim_job *j = sim_job_at(s, i);
        assert_true(j->start >= j->swf.submit);
        assert_int_equal(j->end, j->start + j->swf.run);
    }
    check_never_overfull(s);
    assert_true(st.utilisation > 0 && st.utilisation <= 1);
    print_message("%s: %zu jobs, mean wait %.0f s, mean bsld %.2f, utilisation %.4f\n",
                  sim_policy_name(p), st.jobs, st.mean_wait, st.mean_bsld, st.utilisation);
    sim_destroy(s);
    free(params);
}

static void test_fcfs(void **state)
{
    run_policy(SIM_POLICY_FCFS);
}

static void test_easy(void **state)
{
    run_policy(SIM_POLICY_EASY);
}

static void test_conservative(void **state)
{
    run_policy(SIM_POLICY_CONSERVATIVE);
}

static void test_default(void **state)
{
    run_policy(SIM_POLICY_DEFAULT);
}

/* No traces here: every test skips. Plugins that do not load: every test fails. */
static int group_setup(void **state)
{
    char err[512];
    if (access(KTH, R_OK) != 0)
        return 0;
    if (swf_read(KTH, &trace, err, sizeof(err)) != TS_OK) {
        print_error("%s\n", err);
        return -1;
    }
    const char *dir = getenv("TESSERA_PLUGIN_DIR");
    if (!dir || sim_plugins_load(dir, NULL, &plugins, err, sizeof(err)) != TS_OK) {
        print_error("%s\n", dir ? err : "TESSERA_PLUGIN_DIR is not set");
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    sim_plugins_unload(&plugins);
    swf_destroy(trace);
    return 0;
}

/* "test_sim_trace easy" runs one policy: ctest runs each as an entry of its own, so that
 * the slow ones (conservative under the sanitizers) run side by side and time out alone. */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fcfs),
        cmocka_unit_test(test_easy),
        cmocka_unit_test(test_conservative),
        cmocka_unit_test(test_default),
    };
    size_t n = sizeof(tests) / sizeof(tests[0]);
    if (argc > 1) {
        char name[64];
        snprintf(name, sizeof(name), "test_%s", argv[1]);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(tests[i].name, name))
                return _cmocka_run_group_tests(name, &tests[i], 1, group_setup, group_teardown);
        fprintf(stderr, "no policy test named %s\n", argv[1]);
        return 1;
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
