/* Unit tests for common/idset: parsing, formatting, membership, iteration, edits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/text/idset.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

static void check_format(const struct idset *set, const char *expected)
{
    char *text = idset_format(set);

    assert_non_null(text);
    assert_string_equal(text, expected);
    free(text);
}

/* Parse in, check the formatted text and the member count. */
static void check_parse(const char *in, const char *expected, size_t count)
{
    struct idset *set = NULL;

    assert_int_equal(idset_parse(in, &set), TS_OK);
    assert_non_null(set);
    check_format(set, expected);
    assert_int_equal(idset_count(set), count);
    idset_destroy(set);
}

static void check_parse_error(const char *in, int expected)
{
    struct idset *set = (struct idset *)&set; /* must be reset to NULL */

    print_message("bad: \"%s\"\n", in);
    assert_int_equal(idset_parse(in, &set), expected);
    assert_null(set);
}

static void test_parse_good(void **state)
{
    (void)state;
    check_parse("", "", 0);
    check_parse(NULL, "", 0);
    check_parse("0", "0", 1);
    check_parse("1", "1", 1);
    check_parse("1,3-5,7", "1,3-5,7", 5);
    check_parse("123,125-127", "123,125-127", 4);
    check_parse("123-127", "123-127", 5);
    check_parse("[1-3]", "1-3", 3);
    check_parse("[7]", "7", 1);
    check_parse("[1,3-4]", "1,3-4", 3);
    check_parse("5,1,3", "1,3,5", 3);
    check_parse("1,2,3", "1-3", 3);
    check_parse("1-5,3-7", "1-7", 7);
    check_parse("3-7,1-5", "1-7", 7);
    check_parse("1-2,4-5,3", "1-5", 5);
    check_parse("7,7,7", "7", 1);
    check_parse("5-5", "5", 1);
    check_parse("007,08", "7-8", 2);
    check_parse("4294967294", "4294967294", 1);
    check_parse("4294967290-4294967294", "4294967290-4294967294", 5);
}

static void test_parse_bad(void **state)
{
    static const char *const bad[] = {
        "1-",  "-1",   "3-1",  "a",    "1,,2", "4294967295", "4294967296", "1-4294967295",
        "99999999999999999999", ",1", "1,", ",", " 1", "1 ", "1, 2", "[", "[]", "[1-3",
        "1-3]", "[[1]]", "+1", "1--2", "1-2-3", "0x10", "1.5", "-", "1a", "1-2a", "[1],[2]",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_parse_error(bad[i], TS_EIDSET);
}

static void test_parse_too_big(void **state)
{
    struct idset *set = NULL;

    (void)state;
    /* exactly IDSET_MAX_COUNT members is fine, one more is not */
    assert_int_equal(idset_parse("0-16777215", &set), TS_OK);
    assert_int_equal(idset_count(set), IDSET_MAX_COUNT);
    idset_destroy(set);
    check_parse_error("0-16777216", TS_ETOOBIG);
    check_parse_error("0-4294967294", TS_ETOOBIG);
    check_parse_error("1-10000000,20000000-30000000", TS_ETOOBIG);
    /* overlaps are counted once */
    check_parse("0-10000000,5000000-16777215", "0-16777215", IDSET_MAX_COUNT);
    /* syntax errors win over size */
    check_parse_error("0-4294967294,x", TS_EIDSET);
    assert_int_equal(idset_parse("1", NULL), TS_EINVAL);
}

static void test_large_ranges(void **state)
{
    struct idset *set = idset_create();

    (void)state;
    assert_non_null(set);
    /* programmatic sets are not bound by the parse limit */
    assert_int_equal(idset_add_range(set, 0, IDSET_INVALID - 1), TS_OK);
    assert_int_equal(idset_count(set), (size_t)IDSET_INVALID);
    assert_true(idset_contains(set, 0));
    assert_true(idset_contains(set, IDSET_INVALID - 1));
    assert_false(idset_contains(set, IDSET_INVALID));
    assert_int_equal(idset_next(set, IDSET_INVALID - 2), IDSET_INVALID - 1);
    assert_int_equal(idset_next(set, IDSET_INVALID - 1), IDSET_INVALID);
    check_format(set, "0-4294967294");
    assert_int_equal(idset_remove(set, 2000000000), TS_OK);
    check_format(set, "0-1999999999,2000000001-4294967294");
    assert_int_equal(idset_count(set), (size_t)IDSET_INVALID - 1);
    idset_destroy(set);
}

static void test_add_and_merge(void **state)
{
    struct idset *set = idset_create();

    (void)state;
    assert_int_equal(idset_add(set, 5), TS_OK);
    assert_int_equal(idset_add(set, 3), TS_OK);
    assert_int_equal(idset_add(set, 7), TS_OK);
    assert_int_equal(idset_add(set, 1), TS_OK);
    check_format(set, "1,3,5,7");
    assert_int_equal(idset_add(set, 4), TS_OK); /* joins 3 and 5 */
    check_format(set, "1,3-5,7");
    assert_int_equal(idset_add(set, 4), TS_OK); /* already there */
    check_format(set, "1,3-5,7");
    assert_int_equal(idset_add(set, 8), TS_OK); /* extends the last range */
    check_format(set, "1,3-5,7-8");
    assert_int_equal(idset_add(set, 0), TS_OK); /* extends the first range down */
    check_format(set, "0-1,3-5,7-8");
    assert_int_equal(idset_add_range(set, 2, 6), TS_OK); /* bridges everything */
    check_format(set, "0-8");
    assert_int_equal(idset_add_range(set, 20, 30), TS_OK);
    assert_int_equal(idset_add_range(set, 10, 12), TS_OK);
    assert_int_equal(idset_add_range(set, 11, 25), TS_OK); /* overlaps two ranges */
    check_format(set, "0-8,10-30");
    assert_int_equal(idset_add_range(set, 9, 9), TS_OK);
    check_format(set, "0-30");
    assert_int_equal(idset_count(set), 31);
    assert_int_equal(idset_add_range(set, IDSET_INVALID - 1, IDSET_INVALID - 1), TS_OK);
    assert_int_equal(idset_add(set, IDSET_INVALID - 2), TS_OK);
    check_format(set, "0-30,4294967293-4294967294");

    /* IDSET_INVALID is never a member; ranges must be ordered */
    assert_int_equal(idset_add(set, IDSET_INVALID), TS_EIDSET);
    assert_int_equal(idset_add_range(set, 5, IDSET_INVALID), TS_EIDSET);
    assert_int_equal(idset_add_range(set, 9, 8), TS_EIDSET);
    assert_int_equal(idset_add(NULL, 1), TS_EINVAL);
    check_format(set, "0-30,4294967293-4294967294");
    idset_destroy(set);
}

static void test_add_ascending(void **state)
{
    struct idset *set = idset_create();
    char *text;

    (void)state;
    for (uint32_t i = 0; i < 1000000; i++)
        assert_int_equal(idset_add(set, i), TS_OK);
    check_format(set, "0-999999");
    idset_destroy(set);

    /* even ids: one range each */
    set = idset_create();
    for (uint32_t i = 0; i < 200000; i += 2)
        assert_int_equal(idset_add(set, i), TS_OK);
    assert_int_equal(idset_count(set), 100000);
    assert_true(idset_contains(set, 199998));
    assert_false(idset_contains(set, 199999));
    text = idset_format(set);
    assert_non_null(text);
    assert_memory_equal(text, "0,2,4,6,8,10,", 13);
    assert_string_equal(text + strlen(text) - 14, ",199996,199998");
    free(text);
    idset_destroy(set);
}

static void test_remove(void **state)
{
    struct idset *set = NULL;

    (void)state;
    assert_int_equal(idset_parse("1-10,20", &set), TS_OK);
    assert_int_equal(idset_remove(set, 5), TS_OK); /* splits */
    check_format(set, "1-4,6-10,20");
    assert_int_equal(idset_remove(set, 1), TS_OK);
    assert_int_equal(idset_remove(set, 10), TS_OK);
    check_format(set, "2-4,6-9,20");
    assert_int_equal(idset_remove(set, 20), TS_OK); /* drops a whole range */
    check_format(set, "2-4,6-9");
    assert_int_equal(idset_remove(set, 5), TS_OK); /* absent: no change, no error */
    assert_int_equal(idset_remove(set, 100), TS_OK);
    assert_int_equal(idset_remove(set, IDSET_INVALID), TS_OK);
    check_format(set, "2-4,6-9");
    assert_int_equal(idset_count(set), 7);
    for (uint32_t i = 0; i < 12; i++)
        assert_int_equal(idset_remove(set, i), TS_OK);
    check_format(set, "");
    assert_int_equal(idset_count(set), 0);
    assert_int_equal(idset_first(set), IDSET_INVALID);
    idset_destroy(set);
}

static void test_contains_and_iterate(void **state)
{
    struct idset *set = NULL;
    static const uint32_t members[] = {1, 3, 4, 5, 7};
    uint32_t id;
    size_t n = 0;

    (void)state;
    assert_int_equal(idset_parse("1,3-5,7", &set), TS_OK);
    for (id = idset_first(set); id != IDSET_INVALID; id = idset_next(set, id)) {
        assert_true(n < 5);
        assert_int_equal(id, members[n++]);
    }
    assert_int_equal(n, 5);
    assert_false(idset_contains(set, 0));
    assert_true(idset_contains(set, 1));
    assert_false(idset_contains(set, 2));
    assert_true(idset_contains(set, 4));
    assert_false(idset_contains(set, 6));
    assert_true(idset_contains(set, 7));
    assert_false(idset_contains(set, 8));
    assert_false(idset_contains(set, IDSET_INVALID));
    /* next works from any id, member or not */
    assert_int_equal(idset_next(set, 0), 1);
    assert_int_equal(idset_next(set, 2), 3);
    assert_int_equal(idset_next(set, 5), 7);
    assert_int_equal(idset_next(set, 6), 7);
    assert_int_equal(idset_next(set, 7), IDSET_INVALID);
    assert_int_equal(idset_next(set, 1000), IDSET_INVALID);
    assert_int_equal(idset_next(set, IDSET_INVALID), IDSET_INVALID);
    idset_destroy(set);

    set = idset_create();
    assert_int_equal(idset_first(set), IDSET_INVALID);
    assert_int_equal(idset_next(set, 0), IDSET_INVALID);
    assert_int_equal(idset_count(set), 0);
    idset_destroy(set);
    assert_int_equal(idset_first(NULL), IDSET_INVALID);
    assert_false(idset_contains(NULL, 1));
    idset_destroy(NULL);
}

/* Small deterministic generator for the model test below. */
static uint32_t lcg(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*seed >> 33);
}

/* Random adds, range adds and removes checked against a plain array of flags. */
static void test_against_model(void **state)
{
    enum { N = 600 };
    unsigned char model[N] = {0};
    struct idset *set = idset_create();
    uint64_t seed = 42;

    (void)state;
    for (int step = 0; step < 20000; step++) {
        uint32_t a = lcg(&seed) % N;
        uint32_t b = a + lcg(&seed) % 8;
        uint32_t op = lcg(&seed) % 3;
        if (b >= N)
            b = N - 1;
        if (op == 0) {
            assert_int_equal(idset_add(set, a), TS_OK);
            model[a] = 1;
        } else if (op == 1) {
            assert_int_equal(idset_add_range(set, a, b), TS_OK);
            memset(model + a, 1, b - a + 1);
        } else {
            assert_int_equal(idset_remove(set, a), TS_OK);
            model[a] = 0;
        }
        if (step % 500 == 0 || step == 19999) {
            size_t count = 0;
            uint32_t it = idset_first(set);
            for (uint32_t i = 0; i < N; i++) {
                assert_int_equal(idset_contains(set, i), model[i]);
                if (model[i]) {
                    assert_int_equal(it, i);
                    it = idset_next(set, it);
                    count++;
                }
            }
            assert_int_equal(it, IDSET_INVALID);
            assert_int_equal(idset_count(set), count);
            /* the text form parses back to the same set */
            {
                char *text = idset_format(set);
                struct idset *copy = NULL;
                assert_int_equal(idset_parse(text, &copy), TS_OK);
                check_format(copy, text);
                idset_destroy(copy);
                free(text);
            }
        }
    }
    idset_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_parse_too_big),
        cmocka_unit_test(test_large_ranges),
        cmocka_unit_test(test_add_and_merge),
        cmocka_unit_test(test_add_ascending),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_contains_and_iterate),
        cmocka_unit_test(test_against_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
