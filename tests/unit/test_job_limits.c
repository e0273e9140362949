/* ctld/job_limits.c: what a user may put into the controller, through job_submit and
 * job_update on a controller built in-process: field maxima, script, environment and
 * argument sizes, component counts, MaxJobCount (docs/configuration.md, "Limits"). */
#include "ctld_fixture.h"

#include "ctld/job.h"

#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const conf_text =
    "NodeName=n1 CPUs=4 RealMemory=1000\n"
    "PartitionName=debug Nodes=n1 Default=YES\n"
    "MaxScriptSize=1024\nMaxEnvCount=16\nMaxEnvSize=1024\nMaxJobCount=3\n";

static int setup(void **state)
{
    return ctld_fixture_setup(state, conf_text, 0);
}

static char *text_of(size_t len, char c)
{
    char *s = malloc(len + 1);
    assert_non_null(s);
    memset(s, c, len);
    s[len] = '\0';
    return s;
}

/* d refused with code and the line why; nothing stored. */
static void expect_refused(struct ctld_fixture *f, Tessera__JobDesc *d, int code,
                           const char *why)
{
    uint64_t next = f->c->next_job_id;
    size_t count = f->c->jobs.count;
    char err[512];
    assert_int_equal(ctld_fixture_submit(f, &d, 1, FIX_UID, NULL, err, sizeof(err)), code);
    if (why)
        assert_string_equal(err, why);
    assert_int_equal(f->c->next_job_id, next);
    assert_int_equal(f->c->jobs.count, count);
}

static void test_field_maxima(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    char *name = text_of(1025, 'j');
    d.name = name;
    expect_refused(f, &d, TS_ETOOBIG,
                   "Value too large (--job-name is longer than 1024 bytes)");
    name[1024] = '\0'; /* exactly the maximum */
    ctld_fixture_submit_one(f, &d, FIX_UID);
    ctld_fixture_desc(&d, NULL);
    char *part = text_of(1025, 'p');
    d.partition = part;
    expect_refused(f, &d, TS_EINVALID_PARTITION, NULL);
    free(name);
    free(part);
}

static void test_payload(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    char *script = text_of(1025, '#');
    d.script = script;
    expect_refused(f, &d, TS_ESCRIPT_TOOBIG, NULL);
    char err[256];
    assert_int_equal(job_limits_check_payload(f->c, &d, err, sizeof(err)), TS_ESCRIPT_TOOBIG);
    assert_non_null(strstr(err, "MaxScriptSize=1024 bytes"));
    free(script);
    ctld_fixture_desc(&d, NULL);
    char *env[17];
    for (size_t i = 0; i < 17; i++)
        env[i] = (char *)"A=1";
    d.environment = env;
    d.n_environment = 17;
    expect_refused(f, &d, TS_EENV_TOOBIG, NULL);
    char *big = text_of(1030, 'e');
    big[0] = 'B';
    big[1] = '=';
    env[0] = big;
    d.n_environment = 1;
    expect_refused(f, &d, TS_EENV_TOOBIG, NULL);
    free(big);
}

/* A job has 1 to JOB_MAX_COMPONENTS components. */
static void test_component_count(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    Tessera__JobDesc *comps[JOB_MAX_COMPONENTS + 1];
    for (size_t i = 0; i <= JOB_MAX_COMPONENTS; i++)
        comps[i] = &d;
    char err[256];
    assert_int_equal(ctld_fixture_submit(f, comps, 0, FIX_UID, NULL, err, sizeof(err)),
                     TS_EINVAL);
    assert_string_equal(err, "a job has 1 to 128 components");
    assert_int_equal(ctld_fixture_submit(f, comps, JOB_MAX_COMPONENTS + 1, FIX_UID, NULL, err,
                                         sizeof(err)),
                     TS_EINVAL);
    assert_int_equal(f->c->jobs.count, 0);
}

/* MaxJobCount=3: every component in memory, finished ones included. */
static void test_max_job_count(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d0, d1;
    ctld_fixture_desc(&d0, NULL);
    ctld_fixture_desc(&d1, NULL);
    Tessera__JobDesc *comps[] = {&d0, &d1};
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_UID, NULL, NULL, 0), TS_OK);
    assert_int_equal(ctld_fixture_submit(f, comps, 2, FIX_OTHER_UID, NULL, NULL, 0),
                     TS_EMAX_JOB_COUNT);
    uint32_t id = ctld_fixture_submit_one(f, &d0, FIX_OTHER_UID);
    job_end_unit(f->c, ctld_fixture_job(f, id), TESSERA__JOB_STATE__JOB_COMPLETED, 0);
    expect_refused(f, &d0, TS_EMAX_JOB_COUNT, NULL);
}

/* Updates are held to the same field maxima. */
static void test_update_fields(void **state)
{
    struct ctld_fixture *f = *state;
    Tessera__JobDesc d;
    ctld_fixture_desc(&d, NULL);
    uint32_t id = ctld_fixture_submit_one(f, &d, FIX_UID);
    Tessera__JobDesc ch = TESSERA__JOB_DESC__INIT;
    char *comment = text_of(64 * 1024 + 1, 'c');
    ch.comment = comment;
    char text[16], why[256];
    snprintf(text, sizeof(text), "%u", id);
    Tessera__JobUpdateRequest u = TESSERA__JOB_UPDATE_REQUEST__INIT;
    u.job_id = text;
    u.changes = &ch;
    assert_int_equal(job_update(f->c, &u, FIX_UID, why, sizeof(why)), TS_ETOOBIG);
    assert_null(ctld_fixture_job(f, id)->rec->desc->comment);
    free(comment);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_field_maxima, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_payload, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_component_count, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_max_job_count, setup, ctld_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_update_fields, setup, ctld_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
