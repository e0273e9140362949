/* Unit tests for common/hostlist: expansion, errors, limits, natural sort, compression,
 * matching without expanding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/text/hostlist.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expand expr and check the exact names, in order. */
static void check_hosts(const char *expr, const char *const *names, size_t n)
{
    struct hostlist *hl = NULL;

    assert_int_equal(hostlist_expand(expr, &hl), TS_OK);
    assert_non_null(hl);
    assert_int_equal(hostlist_count(hl), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(hostlist_nth(hl, i), names[i]);
    assert_null(hostlist_nth(hl, n));
    hostlist_destroy(hl);
}

#define HOSTS(expr, ...)                                                                  \
    check_hosts(expr, (const char *const[]){__VA_ARGS__},                                 \
                sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void check_error(const char *expr, int expected)
{
    struct hostlist *hl = (struct hostlist *)&hl; /* must be reset to NULL */

    assert_int_equal(hostlist_expand(expr, &hl), expected);
    assert_null(hl);
}

/* Expand, compress, compare the text, and check that the text expands to the same list. */
static void check_compress(const char *expr, const char *expected, int uniq)
{
    struct hostlist *a = NULL;
    struct hostlist *b = NULL;
    char *text;

    assert_int_equal(hostlist_expand(expr, &a), TS_OK);
    if (uniq)
        hostlist_uniq(a);
    text = hostlist_compress(a);
    assert_non_null(text);
    assert_string_equal(text, expected);
    assert_int_equal(hostlist_expand(text, &b), TS_OK);
    assert_int_equal(hostlist_count(a), hostlist_count(b));
    for (size_t i = 0; i < hostlist_count(a); i++)
        assert_string_equal(hostlist_nth(a, i), hostlist_nth(b, i));
    free(text);
    hostlist_destroy(a);
    hostlist_destroy(b);
}

/* A string of n copies of c followed by tail; caller frees. */
static char *repeat(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);

    assert_non_null(s);
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

static void test_expand_basic(void **state)
{
    (void)state;
    HOSTS("n[1-3,5],m7", "n1", "n2", "n3", "n5", "m7");
    HOSTS("n1", "n1");
    HOSTS("login", "login");
    HOSTS("a,b,a", "a", "b", "a");
    HOSTS("n[5]", "n5");
    HOSTS("n[1,3,2]", "n1", "n3", "n2");
    HOSTS("[1-2]", "1", "2");
    HOSTS("n[1-2],n1", "n1", "n2", "n1");
    HOSTS("n-1.example.org", "n-1.example.org");
}

static void test_expand_empty(void **state)
{
    struct hostlist *hl = NULL;
    char *text;

    (void)state;
    assert_int_equal(hostlist_expand(NULL, &hl), TS_OK);
    assert_int_equal(hostlist_count(hl), 0);
    assert_null(hostlist_nth(hl, 0));
    text = hostlist_compress(hl);
    assert_string_equal(text, "");
    free(text);
    hostlist_destroy(hl);
    assert_int_equal(hostlist_expand("", &hl), TS_OK);
    assert_int_equal(hostlist_count(hl), 0);
    hostlist_destroy(hl);
}

static void test_expand_padding(void **state)
{
    (void)state;
    HOSTS("nid[00011-00012]", "nid00011", "nid00012");
    HOSTS("n[9-10]", "n9", "n10");
    HOSTS("n[09-10]", "n09", "n10");
    HOSTS("n[01-3]", "n01", "n02", "n03");
    HOSTS("n[1-03]", "n1", "n2", "n3"); /* only the low bound sets the width */
    HOSTS("n[0-2]", "n0", "n1", "n2");
    HOSTS("n[00-02]", "n00", "n01", "n02");
    HOSTS("n[098-101]", "n098", "n099", "n100", "n101");
    HOSTS("n[0998-1000]", "n0998", "n0999", "n1000");
    HOSTS("n[98-100]", "n98", "n99", "n100");
    HOSTS("n[1,02-03]", "n1", "n02", "n03");
    HOSTS("n[000000000000000001-000000000000000002]", "n000000000000000001",
          "n000000000000000002");
}

static void test_expand_cartesian(void **state)
{
    (void)state;
    HOSTS("rack[1-2]-n[01-02]", "rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02");
    HOSTS("n[1-2][3-4]", "n13", "n14", "n23", "n24");
    HOSTS("n[1-2]-ib", "n1-ib", "n2-ib");
    HOSTS("a[1-2]b", "a1b", "a2b");
    HOSTS("r[1,3]c[7]s[0-1],x", "r1c7s0", "r1c7s1", "r3c7s0", "r3c7s1", "x");
    HOSTS("[1-2][1-2]", "11", "12", "21", "22");
}

static void test_expand_malformed(void **state)
{
    static const char *const bad[] = {
        "n[1-",   "n[]",     "n[3-1]",   "n[a-b]",  "n[1-2",   "n]1[",  "n1]",    "n[1[2]]",
        "n[[1]]", ",,",      "a,,b",     ",a",      "a,",      ",",     "n[1-]",  "n[-1]",
        "n[,1]",  "n[1,]",   "n[1--2]",  "n[1-2-3]", "n[ 1]",  "n[+1]", "n 1",    "n1 n2",
        "n\t1",   "n\n",     " ",        "[",       "]",       "[]",    "n[1]]",  "n[1-2]x]",
        "n[0x1]", "n[1.5]",  "n[99999999999999999999]", "n[1-99999999999999999999]",
        /* wider than HOSTLIST_MAX_WIDTH digits, leading zeros included */
        "n[0000000000000000001]", "n[1-0000000000000000002]",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        print_message("malformed: \"%s\"\n", bad[i]);
        check_error(bad[i], TS_EHOSTLIST);
    }
}

static void test_expand_name_length(void **state)
{
    char *s;
    struct hostlist *hl = NULL;

    (void)state;
    s = repeat('a', HOSTLIST_MAX_NAME, "");
    HOSTS(s, s);
    free(s);
    s = repeat('a', HOSTLIST_MAX_NAME + 1, "");
    check_error(s, TS_EHOSTLIST);
    free(s);
    /* the widest number of the range counts: 253 + "10" fits, 254 + "10" does not */
    s = repeat('a', HOSTLIST_MAX_NAME - 2, "[9-10]");
    assert_int_equal(hostlist_expand(s, &hl), TS_OK);
    assert_int_equal(strlen(hostlist_nth(hl, 1)), HOSTLIST_MAX_NAME);
    hostlist_destroy(hl);
    free(s);
    s = repeat('a', HOSTLIST_MAX_NAME - 1, "[9-10]");
    check_error(s, TS_EHOSTLIST);
    free(s);
    /* padding counts too */
    s = repeat('a', HOSTLIST_MAX_NAME - 4, "[00001-00002]");
    check_error(s, TS_EHOSTLIST);
    free(s);
    /* text after the bracket counts */
    s = repeat('a', HOSTLIST_MAX_NAME - 1, "[1]b");
    check_error(s, TS_EHOSTLIST);
    free(s);
}

static void test_expand_too_many(void **state)
{
    struct hostlist *hl = NULL;
    char expr[64];

    (void)state;
    check_error("n[0-999999999]", TS_ETOOBIG);
    check_error("a[1-1000]b[1-1000]c[1-1000]", TS_ETOOBIG);
    check_error("n[0-999999999999999999]", TS_ETOOBIG);
    check_error("n[0-999999999999999999,0-999999999999999999]", TS_ETOOBIG);
    check_error("a[1-1024]b[1-1024]c[1-1024]d[1-1024]e[1-1024]f[1-1024]", TS_ETOOBIG);
    /* 20 x 10^18 would wrap a 64-bit count if it were not capped */
    {
        char big[1024] = "n[";
        for (int i = 0; i < 20; i++)
            strcat(big, i ? ",0-999999999999999999" : "0-999999999999999999");
        strcat(big, "]");
        check_error(big, TS_ETOOBIG);
        strcat(big, "m[0-999999999999999999]"); /* and the product of such groups */
        check_error(big, TS_ETOOBIG);
    }
    check_error("n[0-600000],m[0-600000]", TS_ETOOBIG);
    /* syntax errors are reported before sizes */
    check_error("n[0-999999999],x[", TS_EHOSTLIST);

    snprintf(expr, sizeof(expr), "n[1-%u]", HOSTLIST_MAX_HOSTS + 1);
    check_error(expr, TS_ETOOBIG);
    snprintf(expr, sizeof(expr), "n[1-%u]", HOSTLIST_MAX_HOSTS);
    assert_int_equal(hostlist_expand(expr, &hl), TS_OK);
    assert_int_equal(hostlist_count(hl), HOSTLIST_MAX_HOSTS);
    assert_string_equal(hostlist_nth(hl, HOSTLIST_MAX_HOSTS - 1), "n1048576");
    /* the list is full: nothing more fits */
    assert_int_equal(hostlist_push(hl, "x"), TS_ETOOBIG);
    assert_int_equal(hostlist_push_expr(hl, "x"), TS_ETOOBIG);
    assert_int_equal(hostlist_count(hl), HOSTLIST_MAX_HOSTS);
    hostlist_destroy(hl);
}

static void test_push_and_find(void **state)
{
    struct hostlist *hl = hostlist_create();
    char *s;

    (void)state;
    assert_non_null(hl);
    assert_int_equal(hostlist_push(hl, "n1"), TS_OK);
    assert_int_equal(hostlist_push_expr(hl, "n[2-3],m1"), TS_OK);
    assert_int_equal(hostlist_push(hl, "n2"), TS_OK);
    assert_int_equal(hostlist_count(hl), 5);
    assert_int_equal(hostlist_find(hl, "n1"), 0);
    assert_int_equal(hostlist_find(hl, "n2"), 1);
    assert_int_equal(hostlist_find(hl, "m1"), 3);
    assert_int_equal(hostlist_find(hl, "n4"), -1);
    assert_int_equal(hostlist_find(hl, "n"), -1);

    /* errors leave the list as it was */
    assert_int_equal(hostlist_push_expr(hl, "x1,x2,y["), TS_EHOSTLIST);
    assert_int_equal(hostlist_push_expr(hl, "x[1-2],y[0-999999999]"), TS_ETOOBIG);
    assert_int_equal(hostlist_count(hl), 5);
    assert_int_equal(hostlist_find(hl, "x1"), -1);

    /* literal names must be names: no range syntax, blanks, empty or too long names */
    assert_int_equal(hostlist_push(hl, ""), TS_EHOSTLIST);
    assert_int_equal(hostlist_push(hl, "a,b"), TS_EHOSTLIST);
    assert_int_equal(hostlist_push(hl, "n[1-2]"), TS_EHOSTLIST);
    assert_int_equal(hostlist_push(hl, "a b"), TS_EHOSTLIST);
    assert_int_equal(hostlist_push(hl, NULL), TS_EINVAL);
    s = repeat('z', HOSTLIST_MAX_NAME + 1, "");
    assert_int_equal(hostlist_push(hl, s), TS_EHOSTLIST);
    s[HOSTLIST_MAX_NAME] = '\0';
    assert_int_equal(hostlist_push(hl, s), TS_OK);
    assert_int_equal(hostlist_find(hl, s), 5);
    free(s);
    assert_int_equal(hostlist_count(hl), 6);
    hostlist_destroy(hl);

    /* NULL lists are harmless */
    assert_int_equal(hostlist_count(NULL), 0);
    assert_null(hostlist_nth(NULL, 0));
    assert_int_equal(hostlist_find(NULL, "a"), -1);
    assert_int_equal(hostlist_push_expr(NULL, "a"), TS_EINVAL);
    assert_int_equal(hostlist_expand("a", NULL), TS_EINVAL);
    hostlist_uniq(NULL);
    hostlist_destroy(NULL);
}

/* Names do not move when the list grows: callers may keep hostlist_nth() pointers. */
static void test_nth_pointers_stable(void **state)
{
    struct hostlist *hl = hostlist_create();
    const char *first;
    const char *mid;

    (void)state;
    assert_int_equal(hostlist_push(hl, "first"), TS_OK);
    first = hostlist_nth(hl, 0);
    assert_int_equal(hostlist_push_expr(hl, "n[1-50000]"), TS_OK);
    mid = hostlist_nth(hl, 25000);
    assert_string_equal(mid, "n25000");
    assert_int_equal(hostlist_push_expr(hl, "m[1-50000]"), TS_OK);
    assert_int_equal(hostlist_push_expr(hl, "x,y["), TS_EHOSTLIST);
    assert_ptr_equal(hostlist_nth(hl, 0), first);
    assert_string_equal(first, "first");
    assert_ptr_equal(hostlist_nth(hl, 25000), mid);
    assert_string_equal(mid, "n25000");
    assert_string_equal(hostlist_nth(hl, 100000), "m50000");
    assert_int_equal(hostlist_count(hl), 100001);
    /* uniq keeps the surviving names where they are */
    assert_int_equal(hostlist_push(hl, "first"), TS_OK);
    hostlist_uniq(hl);
    assert_int_equal(hostlist_count(hl), 100001);
    assert_ptr_equal(hostlist_nth(hl, 0), first);
    assert_string_equal(hostlist_nth(hl, 50000), "m50000");
    assert_string_equal(hostlist_nth(hl, 50001), "n1");
    hostlist_destroy(hl);
}

static void test_compress(void **state)
{
    (void)state;
    check_compress("n1,n2,n3,m7", "n[1-3],m7", 0);
    check_compress("n1,m1,n2", "n1,m1,n2", 0);
    check_compress("n[1-3,5],m7", "n[1-3,5],m7", 0);
    check_compress("n9,n10", "n[9-10]", 0);
    check_compress("n09,n10", "n[09-10]", 0);
    check_compress("n1,n01", "n[1,01]", 0);
    check_compress("n01,n2", "n[01,2]", 0);
    check_compress("n099,n100", "n[099-100]", 0);
    check_compress("n98,n099", "n[98,099]", 0);
    check_compress("n[0998-1000]", "n[0998-1000]", 0);
    check_compress("n3,n1", "n[3,1]", 0);
    check_compress("n3,n2", "n[3,2]", 0);
    check_compress("n1,n1", "n[1,1]", 0);
    check_compress("n1", "n1", 0);
    check_compress("n01", "n01", 0);
    check_compress("a,b,c", "a,b,c", 0);
    check_compress("n,n1,n2", "n,n[1-2]", 0);
    check_compress("n1-ib,n2-ib", "n[1-2]-ib", 0);
    check_compress("n1-ib,n2,n3", "n1-ib,n[2-3]", 0);
    check_compress("x1y2,x1y3", "x1y[2-3]", 0);
    check_compress("rack[1-2]-n[01-02]", "rack1-n[01-02],rack2-n[01-02]", 0);
    check_compress("n[1-2][3-4]", "n[13-14,23-24]", 0);
    check_compress("1,2,3", "[1-3]", 0);
    check_compress("n[0-1048575]", "n[0-1048575]", 0);
    /* numbers too long to be numbers stay plain text */
    check_compress("n12345678901234567890,n12345678901234567891",
                   "n12345678901234567890,n12345678901234567891", 0);
    check_compress("n000000000000000000001,n000000000000000000002",
                   "n000000000000000000001,n000000000000000000002", 0);
    check_compress("n000000000000000001,n000000000000000002",
                   "n[000000000000000001-000000000000000002]", 0);
    check_compress("n999999999999999998,n999999999999999999,n1000000000000000000",
                   "n[999999999999999998-999999999999999999],n1000000000000000000", 0);
}

static void test_padding_round_trip(void **state)
{
    (void)state;
    HOSTS("nid[00011-00012]", "nid00011", "nid00012");
    check_compress("nid00011,nid00012", "nid[00011-00012]", 0);
    check_compress("nid00001,nid00011,nid00012", "nid[00001,00011-00012]", 0);
    check_compress("nid[00001,00011-00012]", "nid[00001,00011-00012]", 0);
}

static void test_uniq(void **state)
{
    (void)state;
    check_compress("n1,n2,m7", "m7,n[1-2]", 1);
    check_compress("n3,n1,n2,n1,n3", "n[1-3]", 1);
    check_compress("n10,n9,n1,n01,n,n1-ib,n2,n2-ib,n1",
                   "n,n1,n1-ib,n[01,2],n2-ib,n[9-10]", 1);
    check_compress("nid00011,nid00001,nid00012,nid00001", "nid[00001,00011-00012]", 1);
    check_compress("b,a,c,a", "a,b,c", 1);
    check_compress("rack2-n1,rack1-n2,rack1-n1", "rack1-n[1-2],rack2-n1", 1);
    check_compress("n[1-100],n[50-150]", "n[1-150]", 1);
    HOSTS("n1", "n1");
}

static void test_uniq_order(void **state)
{
    struct hostlist *hl = NULL;
    static const char *const want[] = {"a", "m7", "n", "n1", "n1-ib", "n01", "n2", "n10", "nx"};

    (void)state;
    assert_int_equal(hostlist_expand("nx,n10,n2,n01,n1-ib,n1,n,m7,a,n2,a", &hl), TS_OK);
    hostlist_uniq(hl);
    assert_int_equal(hostlist_count(hl), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(hostlist_nth(hl, i), want[i]);
    hostlist_destroy(hl);
}

static void test_round_trips(void **state)
{
    static const char *const exprs[] = {
        "n[1-3,5],m7",
        "rack[1-2]-n[01-02]",
        "a[1-3]b[07-09]c",
        "n[1-9,10-12,012,0013-0015]",
        "x,x,x,y[1-2],y[2-1000]",
        "node[1-100]-ib,node[50-60]",
        "[0-9][0-9]",
        "0,00,000,0000",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
        struct hostlist *a = NULL;
        char *text;
        assert_int_equal(hostlist_expand(exprs[i], &a), TS_OK);
        text = hostlist_compress(a);
        print_message("%s -> %s\n", exprs[i], text);
        check_compress(text, text, 0);
        hostlist_uniq(a);
        free(text);
        text = hostlist_compress(a);
        check_compress(text, text, 1);
        free(text);
        hostlist_destroy(a);
    }
}

/* ---- bounds of the parser ------------------------------------------------------------ */

static void test_parser_bounds(void **state)
{
    struct hostlist *hl = NULL;
    struct hostpattern *p = NULL;
    char *s;

    (void)state;
    /* the expression's length, before anything else */
    s = repeat('a', HOSTLIST_MAX_EXPR + 1, "");
    check_error(s, TS_ETOOBIG);
    assert_int_equal(hostpattern_parse(s, &p), TS_ETOOBIG);
    assert_null(p);
    free(s);
    /* the number of ranges: "n[1,1,...]" with one range too many */
    size_t n = HOSTLIST_MAX_RANGES + 1;
    s = malloc(2 * n + 3);
    assert_non_null(s);
    strcpy(s, "n[");
    for (size_t i = 0; i < n; i++)
        memcpy(s + 2 + 2 * i, i + 1 < n ? "1," : "1]", 2);
    s[2 + 2 * n] = '\0';
    check_error(s, TS_ETOOBIG);
    assert_int_equal(hostpattern_parse(s, &p), TS_ETOOBIG);
    /* one range fewer is fine, and means one name */
    s[2 + 2 * (n - 2) + 1] = ']';
    s[2 + 2 * (n - 1)] = '\0';
    assert_int_equal(hostpattern_parse(s, &p), TS_OK);
    assert_int_equal(hostpattern_size(p), 1);
    assert_true(hostpattern_contains(p, "n1"));
    hostpattern_destroy(p);
    assert_int_equal(hostlist_expand(s, &hl), TS_OK);
    assert_int_equal(hostlist_count(hl), HOSTLIST_MAX_RANGES);
    hostlist_destroy(hl);
    free(s);
    /* the width of numbers */
    assert_int_equal(hostpattern_parse("n[0000000000000000001]", &p), TS_EHOSTLIST);
    assert_int_equal(hostpattern_parse("n[000000000000000001]", &p), TS_OK);
    assert_true(hostpattern_contains(p, "n000000000000000001"));
    hostpattern_destroy(p);
}

/* ---- matching without expanding ------------------------------------------------------- */

/* contains() must agree with the expansion for every name in it and for near misses. */
static void check_agrees(const char *expr, const char *const *others, size_t nothers)
{
    struct hostlist *hl = NULL;
    struct hostpattern *p = NULL;

    print_message("match: \"%s\"\n", expr);
    assert_int_equal(hostlist_expand(expr, &hl), TS_OK);
    assert_int_equal(hostpattern_parse(expr, &p), TS_OK);
    for (size_t i = 0; i < hostlist_count(hl); i++)
        assert_true(hostpattern_contains(p, hostlist_nth(hl, i)));
    for (size_t i = 0; i < nothers; i++)
        assert_int_equal(hostpattern_contains(p, others[i]), hostlist_find(hl, others[i]) >= 0);
    /* tallying the distinct names completes it, and one short does not */
    hostlist_uniq(hl);
    assert_int_equal(hostpattern_size(p), hostlist_count(hl));
    for (size_t i = 0; i < hostlist_count(hl); i++)
        assert_true(hostpattern_tally(p, hostlist_nth(hl, i)));
    assert_true(hostpattern_complete(p));
    hostpattern_tally_reset(p);
    for (size_t i = 1; i < hostlist_count(hl); i++)
        hostpattern_tally(p, hostlist_nth(hl, i));
    assert_false(hostpattern_complete(p));
    hostpattern_destroy(p);
    hostlist_destroy(hl);
}

#define AGREES(expr, ...)                                                                 \
    check_agrees(expr, (const char *const[]){__VA_ARGS__},                                \
                 sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void test_match_agrees_with_expansion(void **state)
{
    (void)state;
    AGREES("n[1-3,5],m7", "n4", "n6", "n0", "n01", "m", "n", "m07", "n1x", "xn1");
    AGREES("nid[00011-00012]", "nid11", "nid0011", "nid000011", "nid00013");
    AGREES("n[9-10]", "n09", "n010", "n8", "n11");
    AGREES("n[09-10]", "n9", "n010", "n08", "n11");
    AGREES("n[098-101]", "n98", "n0100", "n102", "n097");
    AGREES("n[0-2]", "n00", "n3");
    AGREES("n[00-02]", "n0", "n2", "n03");
    AGREES("n[1-03]", "n01", "n03", "n4");
    AGREES("n[1,02-03]", "n2", "n01", "n1");
    AGREES("rack[1-2]-n[01-02]", "rack1-n1", "rack3-n01", "rack1-n03", "rack12-n01");
    AGREES("n[1-2][3-4]", "n12", "n34", "n134", "n3");
    AGREES("[1-2][1-2]", "1", "13", "111");
    AGREES("n[1-2]0", "n10", "n20", "n100", "n0", "n30");
    AGREES("a1[0-9]", "a1", "a10", "a19", "a110");
    AGREES("n[1-100],n[50-150]", "n0", "n151", "n050");
    AGREES("x,x,y[1-2],y[2-1000]", "y0", "y1001", "x1");
    AGREES("0,00,000,0000", "00000", "1");
    AGREES("n-1.example.org", "n-1", "n-2.example.org");
    AGREES("r[1,3]c[7]s[0-1],x", "r2c7s0", "r1c7s2", "r1c8s0");
}

/* The attack: a quarter-kilobyte prefix and a million numbers, matched in a few look-ups
 * and with memory for the text, not for the names. */
static void test_match_huge_list(void **state)
{
    struct hostpattern *p = NULL;
    char *expr = repeat('a', 240, "[1-1000000]");
    char *yes = repeat('a', 240, "500000");
    char *no = repeat('a', 240, "1000001");
    char *padded = repeat('a', 240, "0500000");

    (void)state;
    assert_int_equal(hostpattern_parse(expr, &p), TS_OK);
    assert_int_equal(hostpattern_size(p), 1000000);
    assert_true(hostpattern_contains(p, yes));
    assert_false(hostpattern_contains(p, no));
    assert_false(hostpattern_contains(p, padded));
    assert_false(hostpattern_contains(p, "n1"));
    /* a set of two names is not all of it */
    assert_true(hostpattern_tally(p, yes));
    assert_false(hostpattern_tally(p, "n1"));
    assert_false(hostpattern_complete(p));
    hostpattern_destroy(p);
    free(expr);
    free(yes);
    free(no);
    free(padded);
}

static void test_match_complete(void **state)
{
    struct hostpattern *p = NULL;

    (void)state;
    /* a name that several items mean still completes each of them */
    assert_int_equal(hostpattern_parse("n1,n[1-2],n[2,1]", &p), TS_OK);
    assert_int_equal(hostpattern_size(p), 3); /* n1 alone, and n[1-2] merged with n[2,1] */
    assert_true(hostpattern_tally(p, "n1"));
    assert_true(hostpattern_tally(p, "n2"));
    assert_false(hostpattern_tally(p, "n3"));
    assert_true(hostpattern_complete(p));
    hostpattern_destroy(p);
    /* groups that touch may mean one name twice: refused as incomplete, never accepted
     * wrongly */
    assert_int_equal(hostpattern_parse("[1,11][1,11]", &p), TS_OK);
    assert_true(hostpattern_tally(p, "11"));
    assert_true(hostpattern_tally(p, "111"));
    assert_true(hostpattern_tally(p, "1111"));
    assert_false(hostpattern_complete(p));
    hostpattern_destroy(p);
    /* nothing, and an empty expression */
    assert_int_equal(hostpattern_parse("", &p), TS_OK);
    assert_false(hostpattern_contains(p, "n1"));
    assert_true(hostpattern_complete(p));
    assert_int_equal(hostpattern_size(p), 0);
    hostpattern_destroy(p);
    assert_int_equal(hostpattern_parse(NULL, &p), TS_OK);
    hostpattern_destroy(p);
    hostpattern_destroy(NULL);
    assert_false(hostpattern_contains(NULL, "n1"));
    /* malformed text is refused as hostlist_expand refuses it */
    assert_int_equal(hostpattern_parse("n[1-", &p), TS_EHOSTLIST);
    assert_null(p);
    assert_int_equal(hostpattern_parse("a,,b", &p), TS_EHOSTLIST);
}

static void test_match_multi_items_bounded(void **state)
{
    struct hostpattern *p = NULL;
    size_t n = HOSTLIST_MAX_MULTI_ITEMS + 1;
    char *s = malloc(n * 16 + 1);
    size_t len = 0;

    (void)state;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(s + len, "%sa[1]b[%zu]", i ? "," : "", i);
    assert_int_equal(hostpattern_parse(s, &p), TS_ETOOBIG);
    assert_null(p);
    *strrchr(s, ',') = '\0';
    assert_int_equal(hostpattern_parse(s, &p), TS_OK);
    assert_true(hostpattern_contains(p, "a1b255"));
    assert_false(hostpattern_contains(p, "a1b256"));
    hostpattern_destroy(p);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_basic),
        cmocka_unit_test(test_expand_empty),
        cmocka_unit_test(test_expand_padding),
        cmocka_unit_test(test_expand_cartesian),
        cmocka_unit_test(test_expand_malformed),
        cmocka_unit_test(test_expand_name_length),
        cmocka_unit_test(test_expand_too_many),
        cmocka_unit_test(test_push_and_find),
        cmocka_unit_test(test_nth_pointers_stable),
        cmocka_unit_test(test_compress),
        cmocka_unit_test(test_padding_round_trip),
        cmocka_unit_test(test_uniq),
        cmocka_unit_test(test_uniq_order),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_parser_bounds),
        cmocka_unit_test(test_match_agrees_with_expansion),
        cmocka_unit_test(test_match_huge_list),
        cmocka_unit_test(test_match_complete),
        cmocka_unit_test(test_match_multi_items_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
