/* ctld/filter_activate.c: activation filters asked before a start, on a controller built
 * in-process with its scheduler (sched/builtin) and real filter programs: pass, block,
 * keep, hold and fail, chains and their undos, het jobs' strongest verdict, and a
 * verdict kept until it may be asked again (docs/filters.md, "Activation filters"). */
#include "ctld_fixture.h"

#include "ctld/acct_record.h"
#include "ctld/filter_activate.h"
#include "ctld/job.h"
#include "ctld/sched.h"
#include "ctld/store.h"

#include "common/job/jobstate.h"
#include "common/sched/sched.h"
#include "common/util/errors.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

/* Every filter logs its arguments (or "undo") and exits with the number in <name>.code
 * (0 without one). */
static const char filter_text[] =
    "#!/bin/sh\n"
    "name=${0##*/}\n"
    "dir=${0%/*}\n"
    "if [ \"$2\" = --undo ]; then echo \"$name undo\" >>\"$dir/log\"; exit 0; fi\n"
    "echo \"$name $2 $3 $4 $5\" >>\"$dir/log\"\n"
    "code=0\n"
    "[ -r \"$dir/$name.code\" ] && code=$(cat \"$dir/$name.code\")\n"
    "exit $code\n";

struct act_test {
    char dir[256]; /* the filters and their log */
    struct ctld_fixture f;
};

static void set_code(struct act_test *t, const char *name, int code)
{
    char path[512], text[16];
    snprintf(path, sizeof(path), "%s/%s.code", t->dir, name);
    snprintf(text, sizeof(text), "%d\n", code);
    assert_int_equal(harness_write_file(path, text, 0644), 0);
}

/* Partition "act" asks f_a then f_b, "act2" asks f_c, "free" nothing; two nodes of 4
 * CPUs, both registered. */
static int setup(void **state)
{
    struct act_test *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    assert_int_equal(harness_tmpdir("actfilters", t->dir, sizeof(t->dir)), 0);
    static const char *const names[] = {"f_a", "f_b", "f_c"};
    for (size_t i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", t->dir, names[i]);
        assert_int_equal(harness_write_file(path, filter_text, 0755), 0);
    }
    char conf[2048];
    snprintf(conf, sizeof(conf),
             "NodeName=n1 CPUs=4 RealMemory=1000\n"
             "NodeName=n2 CPUs=4 RealMemory=1000\n"
             "PartitionName=act Nodes=n1,n2 Default=YES ActivationFilters=%s/f_a,%s/f_b\n"
             "PartitionName=act2 Nodes=n1,n2 ActivationFilters=%s/f_c\n"
             "PartitionName=free Nodes=n1,n2\n"
             "SchedulerType=sched/builtin\nFilterRetryInterval=1\nFilterTimeout=10\n",
             t->dir, t->dir, t->dir);
    ctld_fixture_up(&t->f, conf, 1);
    ctld_fixture_register(&t->f, "n1");
    ctld_fixture_register(&t->f, "n2");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct act_test *t = *state;
    ctld_fixture_down(&t->f);
    harness_rmrf(t->dir);
    free(t);
    return 0;
}

/* The filters' log so far (never NULL). */
static char *filter_log(struct act_test *t)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/log", t->dir);
    char *text = harness_read_file(path);
    return text ? text : strdup("");
}

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += !strncmp(p, prefix, len);
    return n;
}

/* Waiting for a component's state and reason. */
struct want {
    uint32_t id;
    Tessera__JobState state;
    uint32_t reason; /* UINT32_MAX: any */
};

static int reached(struct ctld_fixture *f, void *arg)
{
    const struct want *w = arg;
    const struct job *j = job_find(&f->c->jobs, w->id);
    return j && j->rec->state == w->state && (w->reason == UINT32_MAX || j->rec->reason == w->reason);
}

static void wait_for(struct act_test *t, uint32_t id, Tessera__JobState state, uint32_t reason)
{
    struct want w = {id, state, reason};
    if (!ctld_fixture_turn(&t->f, reached, &w, 10000)) {
        const Tessera__JobRecord *r = ctld_fixture_job(&t->f, id)->rec;
        char *log = filter_log(t);
        fail_msg("job %u: state %d reason %u, want %d and %u; filters:\n%s", id, r->state,
                 r->reason, state, reason, log);
    }
}

/* Waiting for the filters to have logged count lines starting with prefix. */
struct want_log {
    struct act_test *t;
    const char *prefix;
    size_t count;
};

static int logged(struct ctld_fixture *f, void *arg)
{
    const struct want_log *w = arg;
    char *log = filter_log(w->t);
    int ok = count_lines(log, w->prefix) >= w->count;
    free(log);
    return ok;
}

static uint32_t submit(struct act_test *t, const char *part)
{
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, part);
    return ctld_fixture_submit_one(&t->f, &d, FIX_UID);
}

/* The standing verdict on the unit as the scheduler's view gets it. */
static struct sched_unit standing(struct act_test *t, uint32_t id, time_t now)
{
    struct sched_unit u;
    memset(&u, 0, sizeof(u));
    filter_activate_unit(t->f.c, ctld_fixture_job(&t->f, id)->leader, now, &u);
    return u;
}

/* Every filter passes: the job starts, with its HoldUntil cleared; each filter got the
 * place in the queue, the cycle's kind and the candidate CPUs. */
static void test_pass_starts(void **state)
{
    struct act_test *t = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.ntasks = 3;
    d.has_hold_until = 1;
    d.hold_until = time(NULL) + 3600;
    uint32_t id = ctld_fixture_submit_one(&t->f, &d, FIX_UID);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_RUNNING, UINT32_MAX);
    const Tessera__JobRecord *r = ctld_fixture_job(&t->f, id)->rec;
    assert_int_equal(r->alloc_cpus, 3);
    assert_false(r->desc->has_hold_until);
    char *log = filter_log(t);
    assert_int_equal(count_lines(log, "f_a "), 1);
    assert_int_equal(count_lines(log, "f_b "), 1);
    assert_int_equal(count_lines(log, "f_a undo"), 0);
    /* "f_a <pass> <position> <backfill> <cpus>": first in the queue, an event-driven
     * cycle, three candidate CPUs */
    const char *line = strstr(log, "f_a ");
    unsigned long pass;
    char rest[64];
    assert_int_equal(sscanf(line, "f_a %lu %63[^\n]", &pass, rest), 2);
    assert_true(pass >= 1);
    assert_string_equal(rest, "1 0 3");
    free(log);
}

/* Exit 3: held, holding nothing: a later job without filters starts on the nodes; the
 * hold stands until HoldUntil; the chain stopped at f_a. */
static void test_hold(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_a", 3);
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    d.ntasks = 2; /* both nodes whole: what a later job needs too */
    d.has_cpus_per_task = 1;
    d.cpus_per_task = 4;
    d.has_hold_until = 1;
    time_t until = time(NULL) + 3600;
    d.hold_until = until;
    uint32_t id = ctld_fixture_submit_one(&t->f, &d, FIX_UID);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_HOLD);
    ctld_fixture_desc(&d, "free");
    d.ntasks = 2;
    d.has_cpus_per_task = 1;
    d.cpus_per_task = 4;
    uint32_t later = ctld_fixture_submit_one(&t->f, &d, FIX_UID);
    wait_for(t, later, TESSERA__JOB_STATE__JOB_RUNNING, UINT32_MAX);
    assert_int_equal(ctld_fixture_job(&t->f, id)->rec->state, TESSERA__JOB_STATE__JOB_PENDING);
    time_t now = time(NULL);
    struct sched_unit u = standing(t, id, now);
    assert_int_equal(u.activation, SCHED_ACT_HOLD);
    assert_false(u.retry);
    assert_null(u.kept);
    assert_false(standing(t, id, until - 1).retry);
    assert_true(standing(t, id, until).retry);
    /* scontrol update HoldUntil= moves the next evaluation to the new time */
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    ch.has_hold_until = 1;
    ch.hold_until = now + 60;
    Tessera__JobUpdateRequest req = TESSERA__JOB_UPDATE_REQUEST__INIT;
    char text[16], why[256];
    snprintf(text, sizeof(text), "%u", id);
    req.job_id = text;
    req.changes = &ch;
    assert_int_equal(job_update(t->f.c, &req, FIX_UID, why, sizeof(why)), TS_OK);
    assert_int_equal(standing(t, id, now).activation, SCHED_ACT_HOLD);
    assert_false(standing(t, id, now + 59).retry);
    assert_true(standing(t, id, now + 60).retry);
    char *log = filter_log(t);
    assert_int_equal(count_lines(log, "f_a "), 1);
    assert_int_equal(count_lines(log, "f_b "), 0);
    free(log);
}

/* Exit 1: the queue is blocked: a later job does not start, even on free nodes, while
 * the verdict stands; asked again after FilterRetryInterval, it passes and both start. */
static void test_block_kept_then_passes(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_a", 1);
    uint32_t id = submit(t, NULL);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_BLOCKED);
    assert_int_equal(standing(t, id, time(NULL)).activation, SCHED_ACT_BLOCK);
    uint32_t later = submit(t, "free");
    /* asked again once (the verdict stood in between): the later job never started */
    struct want_log w = {t, "f_a ", 2};
    assert_true(ctld_fixture_turn(&t->f, logged, &w, 10000));
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_BLOCKED);
    assert_int_equal(ctld_fixture_job(&t->f, later)->rec->state,
                     TESSERA__JOB_STATE__JOB_PENDING);
    set_code(t, "f_a", 0);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_RUNNING, UINT32_MAX);
    /* the queue is no longer blocked: the next cycle starts the later job (a start by
     * the filters' verdict asks for no cycle of its own: scontrol schedule's) */
    sched_trigger(t->f.c, SCHED_TRIGGER_CMD);
    wait_for(t, later, TESSERA__JOB_STATE__JOB_RUNNING, UINT32_MAX);
}

/* Exit 2: not started, its candidate resources kept for it. */
static void test_reserve(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_b", 2);
    uint32_t id = submit(t, NULL);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_RESERVED);
    struct sched_unit u = standing(t, id, time(NULL));
    assert_int_equal(u.activation, SCHED_ACT_RESERVE);
    assert_non_null(u.kept);
    assert_int_equal(u.kept[0].nnodes, 1);
    assert_int_equal(u.kept[0].nodes[0].cpus, 1);
    /* f_a had passed: it was undone, after f_b said no */
    char *log = filter_log(t);
    const char *b = strstr(log, "f_b ");
    assert_non_null(b);
    assert_non_null(strstr(b, "f_a undo"));
    assert_int_equal(count_lines(log, "f_b undo"), 0);
    free(log);
}

/* Exit 4: the job fails, saying why. */
static void test_fail(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_a", 4);
    uint32_t id = submit(t, NULL);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_FAILED, JOB_REASON_ACTIVATION_FAILED);
    assert_string_equal(ctld_fixture_job(&t->f, id)->rec->state_desc,
                        "activation filter failed the job");
    /* kept in the state */
    ctld_fixture_restart(&t->f);
    const Tessera__JobRecord *r = ctld_fixture_job(&t->f, id)->rec;
    assert_int_equal(r->state, TESSERA__JOB_STATE__JOB_FAILED);
    assert_int_equal(r->reason, JOB_REASON_ACTIVATION_FAILED);
    /* and in its accounting record, which sacct reads once the job is forgotten: the
     * reason is stored with the end, not after it */
    uint8_t key[ACCT_JOB_KEY_LEN];
    acct_job_key(key, id);
    void *val = NULL;
    size_t len = 0;
    assert_int_equal(store_get(t->f.c->store, STORE_DB_ACCT_JOBS, key, sizeof(key), &val, &len),
                     TS_OK);
    Tessera__AcctJob *acct = tessera__acct_job__unpack(NULL, len, val);
    free(val);
    assert_non_null(acct);
    assert_int_equal(acct->reason, JOB_REASON_ACTIVATION_FAILED);
    tessera__acct_job__free_unpacked(acct, NULL);
}

/* A het job is one unit: its components' chains (act: f_a, f_b; act2: f_c) must all
 * pass; here f_b blocks and f_c holds: the stronger, hold, stands on every component,
 * and every filter that passed is undone. */
static void test_het_strongest_verdict(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_b", 1);
    set_code(t, "f_c", 3);
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, "act");
    ctld_fixture_desc(&d1, "act2");
    Tessera__JobDesc *comps[] = {&d0, &d1};
    uint32_t id = 0;
    assert_int_equal(ctld_fixture_submit(&t->f, comps, 2, FIX_UID, &id, NULL, 0), TS_OK);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_HOLD);
    wait_for(t, id + 1, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_HOLD);
    assert_int_equal(standing(t, id, time(NULL)).activation, SCHED_ACT_HOLD);
    char *log = filter_log(t);
    assert_int_equal(count_lines(log, "f_a undo"), 1);
    assert_int_equal(count_lines(log, "f_b undo"), 0);
    assert_int_equal(count_lines(log, "f_c undo"), 0);
    free(log);
}

/* A cancelled job's standing verdict is forgotten (housekeeping). */
static void test_forgotten_when_gone(void **state)
{
    struct act_test *t = *state;
    set_code(t, "f_a", 1);
    uint32_t id = submit(t, NULL);
    wait_for(t, id, TESSERA__JOB_STATE__JOB_PENDING, JOB_REASON_ACTIVATION_BLOCKED);
    char text[16];
    snprintf(text, sizeof(text), "%u", id);
    assert_int_equal(job_action_by_id(t->f.c, TESSERA__JOB_ACTION__JOB_ACTION_CANCEL, text,
                                      FIX_UID, NULL),
                     TS_OK);
    assert_int_equal(ctld_fixture_job(&t->f, id)->rec->state,
                     TESSERA__JOB_STATE__JOB_CANCELLED);
    filter_activate_housekeeping(t->f.c, time(NULL));
    assert_null(t->f.c->activations);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pass_starts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block_kept_then_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserve, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_het_strongest_verdict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forgotten_when_gone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
