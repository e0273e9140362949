/* Unit tests for common/fmtspec: the "%[.#][width]X" scanner behind squeue -o and
 * sinfo -o.  A recorder writes every literal as "L(text)" and every field as
 * "F(flags width letter)", so each test compares one string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/fmtspec.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>

struct recorder {
    char out[512];
    const char *known; /* letters the caller accepts */
    int fail_literal;  /* return this from the next literal */
};

static void append(struct recorder *r, const char *s, size_t len)
{
    size_t have = strlen(r->out);
    assert_true(have + len < sizeof(r->out));
    memcpy(r->out + have, s, len);
    r->out[have + len] = '\0';
}

static int rec_literal(void *arg, const char *text, size_t len)
{
    struct recorder *r = arg;
    if (r->fail_literal)
        return r->fail_literal;
    append(r, "L(", 2);
    append(r, text, len);
    append(r, ")", 1);
    return TS_OK;
}

static int rec_field(void *arg, const struct fmtspec_field *f)
{
    struct recorder *r = arg;
    if (!strchr(r->known, f->letter))
        return TS_EOPTVALUE;
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "F(%s%s%d%c)", f->right ? "." : "", f->grow ? "#" : "",
                     f->width, f->letter);
    append(r, buf, (size_t)n);
    return TS_OK;
}

static const struct fmtspec_ops ops = {rec_literal, rec_field};

static int scan(struct recorder *r, const char *format, const char **bad, size_t *badlen)
{
    r->out[0] = '\0';
    if (!r->known)
        r->known = "ijPu";
    return fmtspec_scan(format, &ops, r, bad, badlen);
}

static void check(const char *format, const char *expected)
{
    struct recorder r = {0};
    const char *bad = NULL;
    size_t badlen = 0;
    assert_int_equal(scan(&r, format, &bad, &badlen), TS_OK);
    assert_string_equal(r.out, expected);
    assert_null(bad);
}

static void check_bad(const char *format, const char *bad_text, size_t bad_len)
{
    struct recorder r = {0};
    const char *bad = NULL;
    size_t badlen = 99;
    assert_int_equal(scan(&r, format, &bad, &badlen), TS_EOPTVALUE);
    assert_non_null(bad);
    assert_int_equal(badlen, bad_len);
    assert_memory_equal(bad, bad_text, bad_len);
}

static void test_literals_and_fields(void **state)
{
    (void)state;
    check("", "");
    check(NULL, "");
    check("plain", "L(plain)");
    check("%i", "F(0i)");
    check("a%ib", "L(a)F(0i)L(b)");
    check("%i%j", "F(0i)F(0j)");
    check("100%%", "L(100)L(%)");
    check("%%%i%%", "L(%)F(0i)L(%)");
}

static void test_width_and_flags(void **state)
{
    (void)state;
    check("%18i", "F(18i)");
    check("%.10P", "F(.10P)");
    check("%#u", "F(#0u)");
    check("%.#4j", "F(.#4j)");
    check("%#.4j", "F(.#4j)");
    check("%0i", "F(0i)");
    check("%65535i", "F(65535i)");
}

static void test_errors_name_the_letter(void **state)
{
    (void)state;
    check_bad("%z", "z", 1);
    check_bad("x %.5Q y", "Q", 1);
    check_bad("%i%", "", 0);   /* nothing after the last '%' */
    check_bad("%.12", "", 0);  /* a width and no letter */
    check_bad("%65536i", "65536i", 6); /* the whole field, for its width */
}

static void test_literal_error_stops_the_scan(void **state)
{
    (void)state;
    struct recorder r = {.fail_literal = TS_ENOMEM};
    const char *bad = NULL;
    size_t badlen = 0;
    assert_int_equal(scan(&r, "abc%i", &bad, &badlen), TS_ENOMEM);
    assert_string_equal(r.out, "");
    assert_int_equal(scan(&r, "abc", &bad, &badlen), TS_ENOMEM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals_and_fields),
        cmocka_unit_test(test_width_and_flags),
        cmocka_unit_test(test_errors_name_the_letter),
        cmocka_unit_test(test_literal_error_stops_the_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
