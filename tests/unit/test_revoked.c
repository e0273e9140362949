/* Unit tests for noded/revoked.c: credentials issued up to a job's revocation are refused,
 * later ones (a requeued run) pass, and revocations are forgotten after they are kept.
 * Times are milliseconds; small numbers keep the arithmetic readable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util/errors.h"
#include "noded/revoked.h"

static void test_issued_before_is_refused(void **state)
{
    struct revoked *r = revoked_create(180);
    assert_non_null(r);
    assert_int_equal(revoked_check(r, 7, 1000), TS_OK);
    assert_int_equal(revoked_add(r, 7, 1000), TS_OK);
    assert_int_equal(revoked_check(r, 7, 900), TS_ECRED_REVOKED);
    assert_int_equal(revoked_check(r, 7, 1000), TS_ECRED_REVOKED); /* the same moment */
    assert_int_equal(revoked_check(r, 7, 1001), TS_OK);            /* a later run's */
    assert_int_equal(revoked_check(r, 8, 900), TS_OK);             /* another job */
    /* revoked again later: the later moment counts */
    assert_int_equal(revoked_add(r, 7, 1050), TS_OK);
    assert_int_equal(revoked_check(r, 7, 1020), TS_ECRED_REVOKED);
    assert_int_equal(revoked_count(r), 1);
    revoked_free(r);
}

static void test_forgotten_after_keep(void **state)
{
    struct revoked *r = revoked_create(100);
    for (uint32_t id = 1; id <= 1000; id++)
        assert_int_equal(revoked_add(r, id, 5000 + id / 10), TS_OK);
    assert_int_equal(revoked_count(r), 1000);
    assert_int_equal(revoked_add(r, 2000, 5150), TS_OK); /* forgets those before 5050 */
    assert_int_equal(revoked_check(r, 1, 5000), TS_OK);
    assert_int_equal(revoked_check(r, 499, 5000), TS_OK);
    assert_int_equal(revoked_check(r, 500, 5000), TS_ECRED_REVOKED);
    assert_int_equal(revoked_count(r), 502);
    /* an id revoked twice: its first entry going does not forget the second */
    assert_int_equal(revoked_add(r, 3000, 6000), TS_OK);
    assert_int_equal(revoked_add(r, 3000, 6090), TS_OK);
    assert_int_equal(revoked_add(r, 1, 6101), TS_OK); /* the 6000 entry expires */
    assert_int_equal(revoked_check(r, 3000, 6050), TS_ECRED_REVOKED);
    assert_int_equal(revoked_add(r, 1, 6191), TS_OK); /* now the 6090 one too */
    assert_int_equal(revoked_check(r, 3000, 6050), TS_OK);
    revoked_free(r);
    revoked_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issued_before_is_refused),
        cmocka_unit_test(test_forgotten_after_keep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
