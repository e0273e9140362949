/* ctld/job_change.c: the one notification of job changes, its observers and their order. */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/fairshare_usage.h"
#include "ctld/filter_activate.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/sched.h"
#include "ctld/step.h"

#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What the test observers heard, in order: "<observer><kind>:<id>[@now]" separated by
 * spaces. */
static char heard[1024];

static void note(char who, const struct job_change *ch)
{
    size_t len = strlen(heard);
    snprintf(heard + len, sizeof(heard) - len, "%s%c%d:%u", len ? " " : "", who, (int)ch->kind,
             (unsigned)ch->job_id);
    if (ch->kind == JOB_CHANGE_ENDED || ch->kind == JOB_CHANGE_STOPPING) {
        len = strlen(heard);
        snprintf(heard + len, sizeof(heard) - len, "@%lld", (long long)ch->now);
    }
}

static void observer_a(struct ctld *c, const struct job_change *ch)
{
    (void)c;
    note('a', ch);
}

static void observer_b(struct ctld *c, const struct job_change *ch)
{
    (void)c;
    note('b', ch);
}

static void observer_c(struct ctld *c, const struct job_change *ch)
{
    (void)c;
    note('c', ch);
}

/* A pending plain job with id job_id, in c's table. */
static struct job *add_job(struct ctld *c, uint32_t job_id)
{
    Tessera__JobRecord *rec = calloc(1, sizeof(*rec));
    Tessera__JobDesc *desc = calloc(1, sizeof(*desc));
    assert_non_null(rec);
    assert_non_null(desc);
    tessera__job_record__init(rec);
    tessera__job_desc__init(desc);
    rec->desc = desc;
    rec->job_id = job_id;
    rec->state = TESSERA__JOB_STATE__JOB_PENDING;
    struct job *j = job_insert(&c->jobs, rec);
    assert_non_null(j);
    return j;
}

static struct ctld *ctld_new(void)
{
    struct ctld *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    assert_int_equal(job_table_init(&c->jobs), TS_OK);
    heard[0] = '\0';
    return c;
}

static void ctld_free(struct ctld *c)
{
    job_table_fini(&c->jobs);
    free(c);
}

/* Every observer hears every change, in the order they were registered. */
static void test_order_of_registration(void **state)
{
    (void)state;
    struct ctld *c = ctld_new();
    assert_int_equal(job_change_observe(c, observer_b), TS_OK);
    assert_int_equal(job_change_observe(c, observer_a), TS_OK);
    assert_int_equal(job_change_observe(c, observer_c), TS_OK);
    struct job *j = add_job(c, 42);
    job_changed_waiting(c, j);
    assert_string_equal(heard, "b2:42 a2:42 c2:42");
    heard[0] = '\0';
    struct job_change saved = {.kind = JOB_CHANGE_SAVED, .job_id = 42, .job = j, .stored = 1};
    job_changed(c, &saved);
    job_changed_freed(c, j);
    job_changed_ended(c, j, 1700000000);
    assert_string_equal(heard, "b0:42 a0:42 c0:42 b4:42 a4:42 c4:42 "
                               "b3:42@1700000000 a3:42@1700000000 c3:42@1700000000");
    ctld_free(c);
}

/* Each change says what changed: the component or the leader, or no job at all. */
static struct job_change last;

static void keep_last(struct ctld *c, const struct job_change *ch)
{
    (void)c;
    last = *ch;
}

static void test_what_each_change_carries(void **state)
{
    (void)state;
    struct ctld *c = ctld_new();
    assert_int_equal(job_change_observe(c, keep_last), TS_OK);
    struct job *j = add_job(c, 11);
    job_changed_stopping(c, j, 1700000005);
    assert_int_equal(last.kind, JOB_CHANGE_STOPPING);
    assert_ptr_equal(last.job, j);
    assert_int_equal(last.job_id, 11);
    assert_int_equal(last.now, 1700000005);
    job_changed_hold_until(c, j);
    assert_int_equal(last.kind, JOB_CHANGE_HOLD_UNTIL);
    assert_ptr_equal(last.job, j);
    job_changed_nodes(c);
    assert_int_equal(last.kind, JOB_CHANGE_NODES);
    assert_null(last.job);
    assert_int_equal(last.job_id, 0);
    job_changed_store_back(c);
    assert_int_equal(last.kind, JOB_CHANGE_STORE_BACK);
    assert_null(last.job);
    ctld_free(c);
}

/* No observer: nothing happens. A full table refuses more. */
static void test_none_and_full(void **state)
{
    (void)state;
    struct ctld *c = ctld_new();
    struct job *j = add_job(c, 7);
    job_changed_waiting(c, j);
    assert_string_equal(heard, "");
    for (int i = 0; i < JOB_OBSERVERS_MAX; i++)
        assert_int_equal(job_change_observe(c, observer_a), TS_OK);
    assert_int_equal(job_change_observe(c, observer_b), TS_ENOMEM);
    job_changed_freed(c, j);
    assert_int_equal(strlen(heard), (size_t)JOB_OBSERVERS_MAX * strlen("a4:7 ") - 1);
    assert_null(strchr(heard, 'b'));
    ctld_free(c);
}

/* The controller's observers, in the documented order: accounting (into the same batch),
 * dependencies, steps, allocation waiters, fair share, activation filters, and last the
 * scheduler. */
static void test_controller_order(void **state)
{
    (void)state;
    struct ctld *c = ctld_new();
    assert_int_equal(ctld_observe_jobs(c), TS_OK);
    job_observer_fn *const *fns = NULL;
    size_t n = job_change_observers(c, &fns);
    job_observer_fn *const want[] = {acct_job_changed,           job_dependency_changed,
                                     step_job_changed,           job_alloc_changed,
                                     fairshare_usage_job_changed, filter_activate_job_changed,
                                     sched_job_changed};
    assert_int_equal(n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(fns[i], want[i]);
    ctld_free(c);
}

/* The controller's observers act only on the kinds they care about: a unit that may start
 * or gave resources back, with no scheduler, no waiter and no store yet, touches nothing
 * (accounting writes only for a stored record, steps only at an end, waiters only after a
 * save or a forget). */
static void test_controller_kinds(void **state)
{
    (void)state;
    struct ctld *c = ctld_new();
    assert_int_equal(ctld_observe_jobs(c), TS_OK);
    struct job *j = add_job(c, 9);
    job_changed_waiting(c, j);
    job_changed_freed(c, j);
    struct job_change refused = {.kind = JOB_CHANGE_SAVED, .job_id = 9, .job = j};
    job_changed(c, &refused); /* the store refused it: no accounting record */
    assert_int_equal(j->acct_state, 0);
    job_changed_ended(c, j, 1700000000); /* no steps: nothing to end */
    assert_null(j->steps);
    /* no fair-share tree, no standing activation verdict, no scheduler yet */
    job_changed_stopping(c, j, 1700000000);
    job_changed_hold_until(c, j);
    job_changed_nodes(c);
    job_changed_store_back(c);
    assert_null(c->activations);
    ctld_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_of_registration),
        cmocka_unit_test(test_what_each_change_carries),
        cmocka_unit_test(test_none_and_full),
        cmocka_unit_test(test_controller_order),
        cmocka_unit_test(test_controller_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
