/* Unit tests for the JobDesc JSON that filters read and write (ctld/jobjson.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "ctld/jobjson.h"

#include <stdlib.h>
#include <string.h>

static void assert_same(const Tessera__JobDesc *a, const Tessera__JobDesc *b)
{
    size_t la = tessera__job_desc__get_packed_size(a), lb = tessera__job_desc__get_packed_size(b);
    assert_int_equal(la, lb);
    uint8_t *pa = malloc(la + 1), *pb = malloc(lb + 1);
    tessera__job_desc__pack(a, pa);
    tessera__job_desc__pack(b, pb);
    assert_memory_equal(pa, pb, la);
    free(pa);
    free(pb);
}

static void test_round_trip(void **state)
{
    (void)state;
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    char *env[] = {"A=1", "PATH=/bin:/usr/bin", "Q=\"quoted\"\n"};
    char *argv[] = {"x", ""};
    d.name = "job \"one\"";
    d.account = "";
    d.has_ntasks = 1;
    d.ntasks = 4;
    d.has_time_limit = 1;
    d.time_limit = -1;
    d.has_mem_per_node_mb = 1;
    d.mem_per_node_mb = 1ull << 40;
    d.has_exclusive = 1;
    d.exclusive = 0; /* a flag set to false is kept */
    d.has_nice = 1;
    d.nice = -5;
    d.script = "#!/bin/sh\necho é\n";
    d.environment = env;
    d.n_environment = 3;
    d.argv = argv;
    d.n_argv = 2;
    d.has_user_id = 1;
    d.user_id = 1000;
    char *text = jobjson_dump(&d);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"ntasks\": 4"));
    assert_non_null(strstr(text, "\"exclusive\": false"));
    assert_null(strstr(text, "\"partition\"")); /* unset: no key */
    Tessera__JobDesc *back;
    char err[256];
    assert_int_equal(jobjson_parse(text, &back, err, sizeof(err)), TS_OK);
    assert_same(&d, back);
    tessera__job_desc__free_unpacked(back, NULL);
    free(text);

    Tessera__JobDesc empty = TESSERA__JOB_DESC__INIT;
    text = jobjson_dump(&empty);
    assert_string_equal(text, "{}\n");
    free(text);
}

/* What activation filters get: the ids first, then the description. */
static void test_with_ids(void **state)
{
    (void)state;
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.name = "x";
    char *text = jobjson_dump_job(&d, 94, 93, 1);
    assert_string_equal(text, "{\n  \"job_id\": 94,\n  \"het_job_id\": 93,\n"
                              "  \"het_job_offset\": 1,\n  \"name\": \"x\"\n}\n");
    free(text);
    text = jobjson_dump_job(&d, 7, 0, 0);
    assert_string_equal(text, "{\n  \"job_id\": 7,\n  \"name\": \"x\"\n}\n");
    free(text);
}

/* Text that is not UTF-8: refused where a filter could rewrite it, shown with '?' where
 * it only reads it. */
static void test_not_utf8(void **state)
{
    (void)state;
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    char *env[] = {"A=caf\xe9", "B=ok"};
    d.script = "echo \xff\xfe na\xc3\xafve\n";
    d.environment = env;
    d.n_environment = 2;
    assert_null(jobjson_dump(&d));
    char *text = jobjson_dump_job(&d, 5, 0, 0);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"echo ?? na\u00efve\\n\""));
    assert_non_null(strstr(text, "\"A=caf?\""));
    free(text);
}

static void test_null_is_absent(void **state)
{
    (void)state;
    Tessera__JobDesc *d;
    char err[256];
    assert_int_equal(jobjson_parse("{\"name\": null, \"ntasks\": 2}", &d, err, sizeof(err)), TS_OK);
    assert_null(d->name);
    assert_true(d->has_ntasks);
    assert_int_equal(d->ntasks, 2);
    assert_false(d->has_nice);
    tessera__job_desc__free_unpacked(d, NULL);
}

static void test_refused(void **state)
{
    (void)state;
    const struct {
        const char *text, *why;
    } cases[] = {
        {"[]", "not a JSON object"},
        {"{\"ntasks\": 1", "not a JSON object: "},
        {"{\"colour\": \"red\"}", "\"colour\": unknown key"},
        {"{\"ntasks\": -1}", "\"ntasks\": must be a whole number in range"},
        {"{\"ntasks\": 4294967296}", "\"ntasks\": must be a whole number in range"},
        {"{\"ntasks\": \"4\"}", "\"ntasks\": must be a whole number in range"},
        {"{\"nice\": 2147483648}", "\"nice\": must be a whole number in range"},
        {"{\"name\": 5}", "\"name\": must be a string"},
        {"{\"hold\": 1}", "\"hold\": must be true or false"},
        {"{\"environment\": \"A=1\"}", "\"environment\": must be an array of strings"},
        {"{\"argv\": [\"a\", 2]}", "\"argv\": must be an array of strings"},
        {"{\"name\": \"a\", \"name\": \"b\"}", "not a JSON object: "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Tessera__JobDesc *d = (Tessera__JobDesc *)1;
        char err[256];
        assert_int_equal(jobjson_parse(cases[i].text, &d, err, sizeof(err)), TS_EINVAL);
        assert_null(d);
        if (strncmp(err, cases[i].why, strlen(cases[i].why)) != 0)
            fail_msg("%s: '%s', not '%s...'", cases[i].text, err, cases[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_with_ids),
        cmocka_unit_test(test_not_utf8),
        cmocka_unit_test(test_null_is_absent),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
