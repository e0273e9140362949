/* A written history on a real controller (records put into the state before the
 * controller starts): AccountingRetention purges records older than the retention with
 * their steps and index keys; recent ones stay, and so does a record whose index key was
 * left stale by a crash (the stale key alone goes). Answers larger than a page come whole,
 * in order, through the end-time index and through the full scan.
 */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "ctld/acct_record.h"
#include "ctld/store.h"

#define DAY 86400

static struct harness_cluster cluster;
static time_t now;

struct state {
    struct loop *loop;
    struct store *st;
};

static void state_open(struct state *s)
{
    mkdir(cluster.state, 0700);
    assert_non_null(s->loop = loop_create());
    assert_int_equal(store_open(s->loop, cluster.state, STORE_DEFAULT_MAP_SIZE, &s->st), TS_OK);
}

static void state_close(struct state *s)
{
    assert_int_equal(store_sync(s->st), TS_OK);
    store_close(s->st);
    loop_destroy(s->loop);
}

static void put_job(struct state *s, uint32_t id, int64_t end, int64_t index_end)
{
    Tessera__AcctJob j = TESSERA__ACCT_JOB__INIT;
    j.job_id = id;
    j.name = id < 1000 ? "old" : "page";
    j.partition = "debug";
    j.submit_time = j.eligible_time = end - 120;
    j.start_time = end - 60;
    j.end_time = end;
    j.state = TESSERA__JOB_STATE__JOB_COMPLETED;
    j.alloc_cpus = 1;
    size_t len;
    uint8_t *buf = acct_job_pack(&j, &len), key[ACCT_JOB_KEY_LEN], ekey[ACCT_END_KEY_LEN];
    assert_non_null(buf);
    acct_job_key(key, id);
    assert_int_equal(store_put(s->st, STORE_DB_ACCT_JOBS, key, sizeof(key), buf, len), TS_OK);
    free(buf);
    acct_end_key(ekey, index_end, id);
    assert_int_equal(store_put(s->st, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey), "", 0), TS_OK);
    Tessera__AcctStep st = TESSERA__ACCT_STEP__INIT;
    st.job_id = id;
    st.step_id = ACCT_STEP_BATCH;
    st.name = "batch";
    st.state = j.state;
    st.start_time = j.start_time;
    st.end_time = end;
    buf = acct_step_pack(&st, &len);
    uint8_t skey[ACCT_STEP_KEY_LEN];
    acct_step_key(skey, id, ACCT_STEP_BATCH);
    assert_int_equal(store_put(s->st, STORE_DB_ACCT_STEPS, skey, sizeof(skey), buf, len), TS_OK);
    free(buf);
}

static int has(struct store *st, enum store_db db, const uint8_t *key, size_t len)
{
    void *val = NULL;
    size_t vlen;
    int rc = store_get(st, db, key, len, &val, &vlen);
    free(val);
    return rc == TS_OK;
}

static int group_setup(void **state)
{
    (void)state;
    now = time(NULL);
    char nodes[512], extra[1024];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, 1, "CPUs=1 RealMemory=100", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "AccountingRetention=2\nFirstJobId=100\n%s"
             "PartitionName=debug Nodes=n1 Default=YES MaxTime=UNLIMITED\n",
             nodes);
    return harness_cluster_write_conf(&cluster, extra);
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

static char *sacct_out(const char *const args[])
{
    struct result r = cmdcheck_run(&cluster, "sacct", args);
    if (r.rc != 0)
        fail_msg("sacct failed (%d): %s", r.rc, r.err);
    free(r.err);
    return r.out;
}
#define SACCT(...) sacct_out((const char *const[]){__VA_ARGS__, NULL})

/* out: job ids one per line, ascending: 11 (when with11 is 1 or 2), 13, then 1000..13000
 * (unless with11 is 2: 11 and 13 only). */
static void expect_ids(const char *out, int with11)
{
    const char *p = out;
    unsigned want[3] = {11, 13, 1000}, k = with11 ? 0 : 1;
    unsigned n = 0, next = want[k];
    while (*p) {
        unsigned id = (unsigned)strtoul(p, NULL, 10);
        if (id != next)
            fail_msg("line %u: job %u where %u was due", n + 1, id, next);
        n++;
        k++;
        next = k < 3 ? want[k] : id + 1;
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    unsigned total = with11 == 2 ? 2 : (with11 ? 3 : 2) + 12000;
    assert_int_equal(n, total);
}

static void test_old_records_purged(void **state)
{
    (void)state;
    struct state s = {0};
    state_open(&s);
    put_job(&s, 10, now - 100 * DAY, now - 100 * DAY); /* beyond two months: purged */
    put_job(&s, 11, now - 30 * DAY, now - 30 * DAY);   /* within: kept */
    /* 13's record ended 10 days ago; a stale key says 100 (a crash between two writes) */
    put_job(&s, 13, now - 10 * DAY, now - 10 * DAY);
    /* more than two pages of recent jobs */
    for (uint32_t id = 1000; id <= 13000; id++)
        put_job(&s, id, now - 5 * DAY + id, now - 5 * DAY + id);
    uint8_t stale[ACCT_END_KEY_LEN];
    acct_end_key(stale, now - 100 * DAY, 13);
    assert_int_equal(store_put(s.st, STORE_DB_ACCT_BY_END, stale, sizeof(stale), "", 0), TS_OK);
    state_close(&s);

    assert_int_equal(harness_ctld_start(&cluster), 0);
    /* the first housekeeping pass purges (within a second or two of the start) */
    char *out = NULL;
    for (int i = 0; i < 50; i++) {
        free(out);
        out = SACCT("-j", "10,11,13", "-n", "-P", "-o", "JobID");
        if (!strcmp(out, "11\n11.batch\n13\n13.batch\n"))
            break;
        usleep(100000);
    }
    assert_string_equal(out, "11\n11.batch\n13\n13.batch\n");
    free(out);
    /* a window over the last 200 days finds the kept ones through the end index */
    char since[32];
    struct tm tm;
    time_t t = now - 200 * DAY;
    strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    out = SACCT("-a", "-X", "-n", "-P", "-o", "JobID", "-S", since, "--name", "old", "-E",
                "now");
    expect_ids(out, 2);
    free(out);
    /* pages: through the end index (since 20 days), and every record (since the epoch) */
    t = now - 20 * DAY;
    strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%S", localtime_r(&t, &tm));
    out = SACCT("-a", "-X", "-n", "-P", "-o", "JobID", "-S", since);
    expect_ids(out, 0);
    free(out);
    out = SACCT("-a", "-X", "-n", "-P", "-o", "JobID", "-S", "1970-01-01T00:00:00");
    expect_ids(out, 1);
    free(out);
    harness_ctld_stop(&cluster, SIGTERM);

    /* in the store: 10 gone with its step and key, 13 kept without the stale key */
    state_open(&s);
    uint8_t key[ACCT_JOB_KEY_LEN], skey[ACCT_STEP_KEY_LEN], ekey[ACCT_END_KEY_LEN];
    acct_job_key(key, 10);
    acct_step_key(skey, 10, ACCT_STEP_BATCH);
    acct_end_key(ekey, now - 100 * DAY, 10);
    assert_false(has(s.st, STORE_DB_ACCT_JOBS, key, sizeof(key)));
    assert_false(has(s.st, STORE_DB_ACCT_STEPS, skey, sizeof(skey)));
    assert_false(has(s.st, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey)));
    assert_false(has(s.st, STORE_DB_ACCT_BY_END, stale, sizeof(stale)));
    acct_job_key(key, 13);
    acct_end_key(ekey, now - 10 * DAY, 13);
    assert_true(has(s.st, STORE_DB_ACCT_JOBS, key, sizeof(key)));
    assert_true(has(s.st, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey)));
    acct_job_key(key, 11);
    assert_true(has(s.st, STORE_DB_ACCT_JOBS, key, sizeof(key)));
    state_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_old_records_purged),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
