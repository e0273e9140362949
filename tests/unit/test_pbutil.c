/* Deep copies of protobuf-c messages outlive their originals. */
#include "common/util/pbutil.h"
#include "tessera.pb-c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_copy(void **state)
{
    char *name = strdup("job"), *env0 = strdup("A=1");
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.name = name;
    d.has_ntasks = 1;
    d.ntasks = 7;
    d.n_environment = 1;
    d.environment = &env0;
    Tessera__JobRecord r = TESSERA__JOB_RECORD__INIT;
    r.job_id = 42;
    r.desc = &d;
    Tessera__JobRecord *copy = pbutil_copy(&r.base);
    assert_non_null(copy);
    name[0] = 'X'; /* the copy owns its own strings */
    free(name);
    free(env0);
    assert_int_equal(copy->job_id, 42);
    assert_string_equal(copy->desc->name, "job");
    assert_true(copy->desc->has_ntasks);
    assert_int_equal(copy->desc->ntasks, 7);
    assert_false(copy->desc->has_min_nodes); /* absent stays absent */
    assert_null(copy->desc->partition);
    assert_int_equal(copy->desc->n_environment, 1);
    assert_string_equal(copy->desc->environment[0], "A=1");
    tessera__job_record__free_unpacked(copy, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_copy)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
