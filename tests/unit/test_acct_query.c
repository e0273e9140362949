/* Unit tests for sacct's question as the controller answers it (ctld/acct_query.c):
 * docs/06-sacct.md §2's -j rules with --whole-hetjob, the filters, Slurm's time window and the
 * plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "ctld/acct_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The store of the tests: het job 67767 (three components), plain job 100, het job 200
 * (two components). */
static const struct {
    uint32_t id, het, off;
} known[] = {
    {100, 0, 0}, {200, 200, 0}, {201, 200, 1}, {67767, 67767, 0}, {67768, 67767, 1},
    {67769, 67767, 2},
};

static int lookup(void *arg, uint32_t id, uint32_t *het, uint32_t *off)
{
    (void)arg;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (known[i].id == id) {
            *het = known[i].het;
            *off = known[i].off;
            return 1;
        }
    }
    return 0;
}

/* The ids "items" (comma-separated) select with whole (0, 1 yes, 2 no), as "a,b,c". */
static void selected(const char *items, uint32_t whole, char *out, size_t len)
{
    char *copy = strdup(items), *save = NULL;
    char *ptrs[16];
    size_t n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        ptrs[n++] = t;
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    req.job_ids = ptrs;
    req.n_job_ids = n;
    req.whole_hetjob = whole;
    struct acct_query q;
    assert_int_equal(acct_query_init(&q, &req, 0, 1, 1000), TS_OK);
    uint32_t *ids = NULL;
    size_t nids = 0;
    assert_int_equal(acct_query_select_ids(&q, lookup, NULL, &ids, &nids), TS_OK);
    out[0] = '\0';
    for (size_t i = 0; i < nids; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%u", i ? "," : "", ids[i]);
    }
    free(ids);
    acct_query_fini(&q);
    free(copy);
}

#define ASSERT_SELECTS(items, whole, expect)                                                 \
    do {                                                                                     \
        char got[256];                                                                       \
        selected(items, whole, got, sizeof(got));                                            \
        assert_string_equal(got, expect);                                                    \
    } while (0)

static void test_spec_examples(void **state)
{
    (void)state;
    /* docs/06-sacct.md §2.4: the leader's id reports every component; 67767+1 only that one;
     * --whole-hetjob=yes all whatever was asked; =no only what was asked */
    ASSERT_SELECTS("67767", 0, "67767,67768,67769");
    ASSERT_SELECTS("67767+1", 0, "67768");
    ASSERT_SELECTS("67767", 2, "67767");
    ASSERT_SELECTS("67767+1", 1, "67767,67768,67769");
}

static void test_other_forms(void **state)
{
    (void)state;
    ASSERT_SELECTS("67768", 0, "67768");             /* a component's own id */
    ASSERT_SELECTS("67768", 1, "67767,67768,67769"); /* ... with the whole job */
    ASSERT_SELECTS("67767+0", 0, "67767");
    ASSERT_SELECTS("67767+2", 2, "67769");
    ASSERT_SELECTS("67767+3", 0, "");                /* no such component */
    ASSERT_SELECTS("67768+1", 0, "");                /* "+" on a non-leader */
    ASSERT_SELECTS("100", 0, "100");
    ASSERT_SELECTS("100", 1, "100");
    ASSERT_SELECTS("100+0", 0, "");                  /* a plain job has no components */
    ASSERT_SELECTS("999", 0, "");
    ASSERT_SELECTS("67767.batch,200.0", 0, "200,201,67767,67768,67769"); /* steps: the jobs */
    ASSERT_SELECTS("201,200,67768,67767+1,100", 0, "100,200,201,67768"); /* sorted, once */
}

static void test_bad_ids(void **state)
{
    (void)state;
    const char *bad[] = {"abc", "", "93.", ".1", "93+x", "0", "12345678901234567890"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *item = (char *)bad[i];
        Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
        req.job_ids = &item;
        req.n_job_ids = 1;
        struct acct_query q;
        assert_int_equal(acct_query_init(&q, &req, 0, 1, 1000), TS_EINVALID_JOB_ID);
    }
}

/* ---- filters ---------------------------------------------------------------------------- */

static Tessera__AcctJob job(uint32_t uid, int64_t eligible, int64_t start, int64_t end,
                            Tessera__JobState st)
{
    Tessera__AcctJob j = TESSERA__ACCT_JOB__INIT;
    j.job_id = 1;
    j.user_id = uid;
    j.group_id = uid + 1000;
    j.account = (char *)"acct";
    j.partition = (char *)"debug";
    j.name = (char *)"foo";
    j.submit_time = eligible;
    j.eligible_time = eligible;
    j.start_time = start;
    j.end_time = end;
    j.state = st;
    return j;
}

static int matches(const Tessera__AcctQueryRequest *req, uid_t caller, int admin,
                   const Tessera__AcctJob *j)
{
    struct acct_query q;
    assert_int_equal(acct_query_init(&q, req, caller, admin, 10000), TS_OK);
    int m = acct_query_matches(&q, j);
    acct_query_fini(&q);
    return m;
}

static void test_users(void **state)
{
    (void)state;
    Tessera__AcctJob mine = job(1000, 10, 20, 30, TESSERA__JOB_STATE__JOB_COMPLETED);
    Tessera__AcctJob roots = job(0, 10, 20, 30, TESSERA__JOB_STATE__JOB_COMPLETED);
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    /* an ordinary user: own jobs only, even with -a or -u root */
    assert_true(matches(&req, 1000, 0, &mine));
    assert_false(matches(&req, 1000, 0, &roots));
    req.all_users = 1;
    assert_false(matches(&req, 1000, 0, &roots));
    uint32_t root = 0;
    req.user_ids = &root;
    req.n_user_ids = 1;
    assert_false(matches(&req, 1000, 0, &roots));
    /* an administrator: -u picks, -a all, neither its own */
    assert_true(matches(&req, 0, 1, &roots));
    assert_false(matches(&req, 0, 1, &mine));
    req.n_user_ids = 0;
    assert_true(matches(&req, 0, 1, &mine));
    req.all_users = 0;
    assert_false(matches(&req, 0, 1, &mine));
    assert_true(matches(&req, 0, 1, &roots));
}

static void test_fields(void **state)
{
    (void)state;
    Tessera__AcctJob j = job(1000, 10, 20, 30, TESSERA__JOB_STATE__JOB_COMPLETED);
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    char *other = "other", *acct = "acct", *debug = "debug", *foo = "foo";
    req.accounts = &other;
    req.n_accounts = 1;
    assert_false(matches(&req, 1000, 0, &j));
    req.accounts = &acct;
    assert_true(matches(&req, 1000, 0, &j));
    req.partitions = &other;
    req.n_partitions = 1;
    assert_false(matches(&req, 1000, 0, &j));
    req.partitions = &debug;
    assert_true(matches(&req, 1000, 0, &j));
    req.names = &other;
    req.n_names = 1;
    assert_false(matches(&req, 1000, 0, &j));
    req.names = &foo;
    assert_true(matches(&req, 1000, 0, &j));
    uint32_t gids[] = {5, 2000};
    req.group_ids = gids;
    req.n_group_ids = 1;
    assert_false(matches(&req, 1000, 0, &j));
    req.n_group_ids = 2;
    assert_true(matches(&req, 1000, 0, &j));
    /* states without a window: the job's state now */
    Tessera__JobState cd = TESSERA__JOB_STATE__JOB_COMPLETED, f = TESSERA__JOB_STATE__JOB_FAILED;
    req.states = &f;
    req.n_states = 1;
    assert_false(matches(&req, 1000, 0, &j));
    req.states = &cd;
    assert_true(matches(&req, 1000, 0, &j));
}

/* Slurm's window: eligible before its end, not ended before its start. */
static void test_window(void **state)
{
    (void)state;
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    req.window_start = 1000;
    req.window_end = 2000;
    Tessera__JobState cd = TESSERA__JOB_STATE__JOB_COMPLETED;
    struct {
        int64_t eligible, start, end;
        int in;
    } cases[] = {
        {100, 200, 900, 0},     /* ended before the window */
        {100, 200, 1000, 1},    /* ended at its start */
        {100, 200, 5000, 1},    /* ran through it */
        {1500, 1600, 1700, 1},  /* inside */
        {1999, 0, 0, 1},        /* eligible just before its end, still pending */
        {2000, 2100, 2200, 0},  /* eligible at its end */
        {0, 0, 1500, 0},        /* never eligible (held, then cancelled) */
        {100, 200, 0, 1},       /* still running */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Tessera__AcctJob j = job(0, cases[i].eligible, cases[i].start, cases[i].end, cd);
        assert_int_equal(matches(&req, 0, 1, &j), cases[i].in);
    }
    /* -E alone: eligible before it */
    req.window_start = 0;
    Tessera__AcctJob early = job(0, 100, 200, 300, cd), late = job(0, 2500, 2600, 2700, cd);
    assert_true(matches(&req, 0, 1, &early));
    assert_false(matches(&req, 0, 1, &late));
    /* -S alone: up to now (10000 in these tests) */
    req.window_start = 1000;
    req.window_end = 0;
    assert_true(matches(&req, 0, 1, &late));
    Tessera__AcctJob future = job(0, 10001, 0, 0, TESSERA__JOB_STATE__JOB_PENDING);
    assert_false(matches(&req, 0, 1, &future));
    Tessera__AcctJob this_second = job(0, 10000, 10000, 10000, cd);
    assert_true(matches(&req, 0, 1, &this_second));
}

/* With -s and a window: was it in one of those states during the window? */
static void test_state_window(void **state)
{
    (void)state;
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    req.window_start = 1000;
    req.window_end = 2000;
    Tessera__JobState st;
    req.states = &st;
    req.n_states = 1;
    /* pending from 500, started at 1500, completed at 3000 */
    Tessera__AcctJob j = job(0, 500, 1500, 3000, TESSERA__JOB_STATE__JOB_COMPLETED);
    st = TESSERA__JOB_STATE__JOB_PENDING;
    assert_true(matches(&req, 0, 1, &j));
    st = TESSERA__JOB_STATE__JOB_RUNNING;
    assert_true(matches(&req, 0, 1, &j));
    st = TESSERA__JOB_STATE__JOB_COMPLETED; /* it completed after the window */
    assert_false(matches(&req, 0, 1, &j));
    j.end_time = 1800;
    assert_true(matches(&req, 0, 1, &j));
    st = TESSERA__JOB_STATE__JOB_FAILED; /* an ending counts only as the job's own */
    assert_false(matches(&req, 0, 1, &j));
    /* cancelled while pending, before the window: not pending in it */
    st = TESSERA__JOB_STATE__JOB_PENDING;
    Tessera__AcctJob gone = job(0, 500, 0, 900, TESSERA__JOB_STATE__JOB_CANCELLED);
    assert_false(matches(&req, 0, 1, &gone));
    gone.end_time = 1100; /* ... cancelled during it: pending in it */
    assert_true(matches(&req, 0, 1, &gone));
    /* started before the window: not pending in it */
    j.start_time = 900;
    st = TESSERA__JOB_STATE__JOB_PENDING;
    assert_false(matches(&req, 0, 1, &j));
}

/* ---- the plan --------------------------------------------------------------------------- */

static void plan_of(const Tessera__AcctQueryRequest *req, int64_t span, struct acct_plan *p)
{
    struct acct_query q;
    assert_int_equal(acct_query_init(&q, req, 0, 1, 10000), TS_OK);
    acct_query_plan(&q, span, p);
    acct_query_fini(&q);
}

static void test_plan(void **state)
{
    (void)state;
    struct acct_plan p;
    Tessera__AcctQueryRequest req = TESSERA__ACCT_QUERY_REQUEST__INIT;
    plan_of(&req, 50, &p);
    assert_int_equal(p.kind, ACCT_PLAN_SCAN); /* no window, no ids: everything */
    char *id = "5";
    req.job_ids = &id;
    req.n_job_ids = 1;
    req.window_start = 1000;
    plan_of(&req, 50, &p);
    assert_int_equal(p.kind, ACCT_PLAN_IDS); /* ids win over a window */
    req.n_job_ids = 0;
    req.window_end = 2000;
    plan_of(&req, 50, &p);
    assert_int_equal(p.kind, ACCT_PLAN_END_RANGE);
    assert_int_equal(p.end_from, 1000);
    assert_int_equal(p.end_to, 2050); /* eligible before 2000 ends by 2000 + the longest span */
    assert_true(p.running_too);
    req.window_end = 0;
    plan_of(&req, 50, &p);
    assert_int_equal(p.end_to, 10051); /* the window ends now, this second included */
    Tessera__JobState endings[] = {TESSERA__JOB_STATE__JOB_COMPLETED,
                                   TESSERA__JOB_STATE__JOB_FAILED};
    req.states = endings;
    req.n_states = 2;
    req.window_end = 2000;
    plan_of(&req, 50, &p);
    assert_int_equal(p.end_to, 2000); /* endings only: the end is in the window */
    assert_false(p.running_too);
    Tessera__JobState running = TESSERA__JOB_STATE__JOB_RUNNING;
    req.states = &running;
    req.n_states = 1;
    plan_of(&req, 50, &p);
    assert_true(p.running_too);
    req.window_end = INT64_MAX - 10; /* no overflow past the largest time */
    plan_of(&req, 50, &p);
    assert_int_equal(p.end_to, INT64_MAX);
    req.window_end = 2000;
    req.window_start = 0; /* -E only: no lower bound on the end index */
    req.n_states = 0;
    plan_of(&req, 50, &p);
    assert_int_equal(p.kind, ACCT_PLAN_SCAN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_examples), cmocka_unit_test(test_other_forms),
        cmocka_unit_test(test_bad_ids),       cmocka_unit_test(test_users),
        cmocka_unit_test(test_fields),        cmocka_unit_test(test_window),
        cmocka_unit_test(test_state_window),  cmocka_unit_test(test_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
