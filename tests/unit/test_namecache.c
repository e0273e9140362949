/* The name cache: hits without lookups, expiry of found and missing names, failures kept
 * briefly, users and groups apart, the bound on entries, a clock that goes back; all with
 * a fake lookup and a fake clock (no NSS, no waiting); then the system's lookups by id, by
 * name and of a user's groups. */
#include "common/util/namecache.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Users 1000..1999 exist as "u<id>", groups 1000..1999 as "g<id>"; 666 fails. */
struct fake {
    time_t now;
    unsigned calls;
    int fail;          /* every lookup fails */
};

static int fake_lookup(void *arg, enum namecache_kind kind, uint32_t id, char *buf, size_t len)
{
    struct fake *f = arg;
    f->calls++;
    if (f->fail || id == 666)
        return -1;
    if (id < 1000 || id > 1999)
        return 0;
    snprintf(buf, len, "%c%u", kind == NAMECACHE_GROUP ? 'g' : 'u', (unsigned)id);
    return 1;
}

static time_t fake_clock(void *arg)
{
    return ((struct fake *)arg)->now;
}

static struct namecache *make(struct fake *f, size_t max)
{
    struct namecache_config cfg = {.max_entries = max, .ttl = 300, .negative_ttl = 60,
                                   .lookup = fake_lookup, .clock = fake_clock, .arg = f};
    struct namecache *nc = namecache_create(&cfg);
    assert_non_null(nc);
    return nc;
}

static const char *user(struct namecache *nc, uint32_t id)
{
    static char buf[64];
    return namecache_name(nc, NAMECACHE_USER, id, buf, sizeof(buf));
}

static void test_hit_without_lookup(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 16);
    assert_string_equal(user(nc, 1001), "u1001");
    assert_int_equal(f.calls, 1);
    for (int i = 0; i < 100; i++)
        assert_string_equal(user(nc, 1001), "u1001");
    assert_int_equal(f.calls, 1);
    namecache_destroy(nc);
}

static void test_found_names_expire(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 16);
    user(nc, 1001);
    f.now += 299;
    user(nc, 1001);
    assert_int_equal(f.calls, 1);
    f.now += 1; /* 300 s: asked again */
    assert_string_equal(user(nc, 1001), "u1001");
    assert_int_equal(f.calls, 2);
    assert_int_equal(namecache_count(nc), 1); /* refreshed in place */
    namecache_destroy(nc);
}

static void test_missing_names_cached_briefly(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 16);
    assert_string_equal(user(nc, 42), "42");
    f.now += 59;
    assert_string_equal(user(nc, 42), "42");
    assert_int_equal(f.calls, 1);
    f.now += 1; /* the negative ttl (60 s) is over */
    assert_string_equal(user(nc, 42), "42");
    assert_int_equal(f.calls, 2);
    namecache_destroy(nc);
}

static void test_failures_cached_briefly(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 16);
    assert_string_equal(user(nc, 666), "666");
    user(nc, 666);
    assert_int_equal(f.calls, 1); /* a failing NSS is not asked on every call */
    f.now += 60;
    user(nc, 666);
    assert_int_equal(f.calls, 2);
    /* a failure after a success replaces the name by the number, for the short while */
    user(nc, 1002);
    f.now += 300;
    f.fail = 1;
    assert_string_equal(user(nc, 1002), "1002");
    f.fail = 0;
    f.now += 59;
    assert_string_equal(user(nc, 1002), "1002");
    f.now += 1;
    assert_string_equal(user(nc, 1002), "u1002");
    namecache_destroy(nc);
}

static void test_users_and_groups_apart(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 16);
    char g[64];
    assert_string_equal(user(nc, 1500), "u1500");
    assert_string_equal(namecache_name(nc, NAMECACHE_GROUP, 1500, g, sizeof(g)), "g1500");
    assert_string_equal(user(nc, 1500), "u1500");
    assert_int_equal(f.calls, 2);
    namecache_destroy(nc);
}

static void test_bounded(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 8);
    for (uint32_t id = 1000; id < 1100; id++) {
        char want[16];
        snprintf(want, sizeof(want), "u%u", (unsigned)id);
        assert_string_equal(user(nc, id), want);
    }
    assert_int_equal(namecache_count(nc), 8);
    /* the newest eight are held, the oldest were forgotten */
    unsigned before = f.calls;
    for (uint32_t id = 1092; id < 1100; id++)
        user(nc, id);
    assert_int_equal(f.calls, before);
    user(nc, 1000);
    assert_int_equal(f.calls, before + 1);
    assert_int_equal(namecache_count(nc), 8);
    namecache_destroy(nc);
}

static void test_clock_going_back(void **state)
{
    (void)state;
    struct fake f = {.now = 100000};
    struct namecache *nc = make(&f, 16);
    user(nc, 1003);
    f.now -= 3600; /* an entry fetched "in the future" is not trusted for hours */
    user(nc, 1003);
    assert_int_equal(f.calls, 2);
    namecache_destroy(nc);
}

static void test_small_buffer_and_no_cache(void **state)
{
    (void)state;
    struct fake f = {.now = 1000};
    struct namecache *nc = make(&f, 4);
    char small[4];
    assert_string_equal(namecache_name(nc, NAMECACHE_USER, 1234, small, sizeof(small)), "u12");
    char buf[64];
    assert_string_equal(namecache_name(nc, NAMECACHE_USER, 1234, buf, sizeof(buf)), "u1234");
    namecache_destroy(nc);
    /* without a cache the system answers: root is root everywhere */
    assert_string_equal(namecache_name(NULL, NAMECACHE_USER, 0, buf, sizeof(buf)), "root");
    /* defaults */
    nc = namecache_create(NULL);
    assert_non_null(nc);
    assert_string_equal(namecache_name(nc, NAMECACHE_USER, 0, buf, sizeof(buf)), "root");
    namecache_destroy(nc);
}

/* The system's lookups the commands and daemons share: root is root everywhere, names
 * that exist nowhere are not found. */
static void test_system_lookups(void **state)
{
    (void)state;
    char buf[64];
    uint32_t id = 77;
    assert_int_equal(namecache_nss_lookup(NULL, NAMECACHE_GROUP, 0, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "root");
    assert_int_equal(namecache_nss_id(NAMECACHE_USER, "root", &id), 1);
    assert_int_equal(id, 0);
    id = 77;
    assert_int_equal(namecache_nss_id(NAMECACHE_GROUP, "root", &id), 1);
    assert_int_equal(id, 0);
    id = 77;
    assert_int_equal(namecache_nss_id(NAMECACHE_USER, "tessera-no-such-user", &id), 0);
    assert_int_equal(namecache_nss_id(NAMECACHE_GROUP, "tessera-no-such-group", &id), 0);
    assert_int_equal(id, 77);
    gid_t groups[64];
    int n = namecache_user_groups("root", 0, groups, 64);
    assert_true(n >= 1 && n <= 64);
    int has_primary = 0;
    for (int i = 0; i < n; i++)
        has_primary |= groups[i] == 0;
    assert_true(has_primary);
    /* unknown users keep their primary group alone */
    assert_int_equal(namecache_user_groups("tessera-no-such-user", 4321, groups, 64), 1);
    assert_int_equal(groups[0], 4321);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_without_lookup),
        cmocka_unit_test(test_found_names_expire),
        cmocka_unit_test(test_missing_names_cached_briefly),
        cmocka_unit_test(test_failures_cached_briefly),
        cmocka_unit_test(test_users_and_groups_apart),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_clock_going_back),
        cmocka_unit_test(test_small_buffer_and_no_cache),
        cmocka_unit_test(test_system_lookups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
