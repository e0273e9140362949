/* Unit tests for accounting records (ctld/acct_record.c): key layout and order, records
 * built from live ones, the batch script's step, and packing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ctld/acct_record.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void test_keys(void **state)
{
    (void)state;
    uint8_t a[ACCT_END_KEY_LEN], b[ACCT_END_KEY_LEN], c[ACCT_END_KEY_LEN];
    acct_end_key(a, 1000, 99);
    acct_end_key(b, 1000, 100);
    acct_end_key(c, 1001, 1);
    /* by end time first, then job id: a range over times is a range over keys */
    assert_true(memcmp(a, b, sizeof(a)) < 0);
    assert_true(memcmp(b, c, sizeof(b)) < 0);
    assert_int_equal(acct_end_key_job(b, sizeof(b)), 100);
    assert_int_equal(acct_end_key_time(c, sizeof(c)), 1001);
    assert_int_equal(acct_end_key_job(b, 8), 0); /* wrong length */
    acct_end_key(a, -5, 7);                      /* a negative time is "not ended" */
    assert_int_equal(acct_end_key_time(a, sizeof(a)), 0);

    uint8_t s1[ACCT_STEP_KEY_LEN], s2[ACCT_STEP_KEY_LEN], s3[ACCT_STEP_KEY_LEN];
    acct_step_key(s1, 67767, 0);
    acct_step_key(s2, 67767, ACCT_STEP_BATCH);
    acct_step_key(s3, 67768, 0);
    assert_true(memcmp(s1, s2, sizeof(s1)) < 0); /* a job's steps are together ... */
    assert_true(memcmp(s2, s3, sizeof(s2)) < 0); /* ... before the next job's */
    assert_int_equal(acct_step_key_job(s3, sizeof(s3)), 67768);
    uint8_t j1[ACCT_JOB_KEY_LEN], j2[ACCT_JOB_KEY_LEN];
    acct_job_key(j1, 255);
    acct_job_key(j2, 256);
    assert_true(memcmp(j1, j2, sizeof(j1)) < 0);
}

struct live {
    Tessera__JobRecord rec;
    Tessera__JobDesc desc;
    Tessera__NodeAlloc a0, a1;
    Tessera__NodeAlloc *allocs[2];
    Tessera__AcctUsage usage;
};

static void make_live(struct live *l)
{
    tessera__job_record__init(&l->rec);
    tessera__job_desc__init(&l->desc);
    tessera__node_alloc__init(&l->a0);
    tessera__node_alloc__init(&l->a1);
    tessera__acct_usage__init(&l->usage);
    l->desc.name = "foo";
    l->desc.account = "test";
    l->desc.partition = "debug";
    l->desc.user_id = 1000;
    l->desc.group_id = 100;
    l->desc.work_dir = "/home/u";
    l->desc.has_mem_per_cpu_mb = 1;
    l->desc.mem_per_cpu_mb = 512;
    l->desc.script = "#!/bin/sh\n";
    l->rec.desc = &l->desc;
    l->rec.job_id = 67767;
    l->rec.het_job_id = 67767;
    l->rec.het_job_offset = 0;
    l->rec.het_size = 2;
    l->rec.submit_time = 100;
    l->rec.eligible_time = 110;
    l->rec.start_time = 120;
    l->rec.end_time = 220;
    l->rec.state = TESSERA__JOB_STATE__JOB_COMPLETED;
    l->rec.alloc_cpus = 6;
    l->rec.alloc_nodes = 2;
    l->rec.alloc_mem_mb = 3072;
    l->rec.nodes = "n[1-2]";
    l->rec.time_limit = 3600;
    l->rec.min_cpus = 6;
    l->rec.min_nodes = 2;
    l->rec.batch = 1;
    l->rec.batch_host = "n2";
    l->a0.node = "n1";
    l->a0.cpus = 2;
    l->a1.node = "n2";
    l->a1.cpus = 4;
    l->allocs[0] = &l->a0;
    l->allocs[1] = &l->a1;
    l->rec.allocs = l->allocs;
    l->rec.n_allocs = 2;
    l->usage.user_usec = 1500000;
    l->usage.max_rss_kb = 2144;
    l->rec.batch_usage = &l->usage;
}

static void test_job_from_record(void **state)
{
    (void)state;
    struct live l;
    make_live(&l);
    Tessera__AcctJob a = TESSERA__ACCT_JOB__INIT;
    acct_job_from_record(&a, &l.rec, "cl");
    assert_int_equal(a.job_id, 67767);
    assert_int_equal(a.het_job_id, 67767);
    assert_string_equal(a.name, "foo");
    assert_string_equal(a.account, "test");
    assert_string_equal(a.partition, "debug");
    assert_string_equal(a.cluster, "cl");
    assert_string_equal(a.qos, ""); /* unset strings are empty, never NULL */
    assert_int_equal(a.user_id, 1000);
    assert_int_equal(a.group_id, 100);
    assert_int_equal(a.alloc_cpus, 6);
    assert_int_equal(a.req_mem_mb, 512);
    assert_true(a.req_mem_per_cpu);
    assert_int_equal(a.state, TESSERA__JOB_STATE__JOB_COMPLETED);
    assert_int_equal(a.end_time, 220);
    assert_int_equal(a.suspended_secs, 0);
    /* a component still completing is recorded with the state it ends in */
    l.rec.state = TESSERA__JOB_STATE__JOB_COMPLETING;
    l.rec.final_state = TESSERA__JOB_STATE__JOB_TIMEOUT;
    acct_job_from_record(&a, &l.rec, "cl");
    assert_int_equal(a.state, TESSERA__JOB_STATE__JOB_TIMEOUT);
    /* suspended for 30 s: resumed at 170 after 20 s of running */
    l.rec.state = TESSERA__JOB_STATE__JOB_COMPLETED;
    l.rec.suspend_time = 170;
    l.rec.pre_suspend_secs = 20;
    acct_job_from_record(&a, &l.rec, "cl");
    assert_int_equal(a.suspended_secs, 30);
}

static void test_batch_step(void **state)
{
    (void)state;
    struct live l;
    make_live(&l);
    Tessera__AcctStep s = TESSERA__ACCT_STEP__INIT;
    l.rec.exit_code = 0;
    acct_batch_step_from_record(&s, &l.rec);
    assert_int_equal(s.step_id, ACCT_STEP_BATCH);
    assert_string_equal(s.name, "batch");
    assert_string_equal(s.nodes, "n2");
    assert_int_equal(s.cpus, 4); /* the job's CPUs on the batch host */
    assert_int_equal(s.ntasks, 1);
    assert_int_equal(s.state, TESSERA__JOB_STATE__JOB_COMPLETED);
    assert_int_equal(s.end_time, 220);
    assert_ptr_equal(s.usage, &l.usage);
    l.rec.exit_code = 3 << 8;
    l.rec.state = TESSERA__JOB_STATE__JOB_FAILED;
    acct_batch_step_from_record(&s, &l.rec);
    assert_int_equal(s.state, TESSERA__JOB_STATE__JOB_FAILED);
    l.rec.state = TESSERA__JOB_STATE__JOB_TIMEOUT; /* ended by the job's end */
    acct_batch_step_from_record(&s, &l.rec);
    assert_int_equal(s.state, TESSERA__JOB_STATE__JOB_CANCELLED);
    l.rec.state = TESSERA__JOB_STATE__JOB_RUNNING;
    l.rec.end_time = 0;
    acct_batch_step_from_record(&s, &l.rec);
    assert_int_equal(s.state, TESSERA__JOB_STATE__JOB_RUNNING);
    assert_int_equal(s.end_time, 0);
}

static void test_step_and_pack(void **state)
{
    (void)state;
    Tessera__StepRecord r = TESSERA__STEP_RECORD__INIT;
    Tessera__AcctUsage u = TESSERA__ACCT_USAGE__INIT;
    u.sys_usec = 42;
    u.max_rss_node = "n1";
    r.job_id = 67768;
    r.step_id = 0;
    r.het_job_id = 67767;
    r.het_job_offset = 1;
    r.name = "hostname";
    r.state = TESSERA__JOB_STATE__JOB_COMPLETED;
    r.ntasks = 4;
    r.cpus = 4;
    r.nodes = "n[3-4]";
    r.usage = &u;
    Tessera__AcctStep s = TESSERA__ACCT_STEP__INIT;
    acct_step_from_record(&s, &r);
    size_t len;
    uint8_t *buf = acct_step_pack(&s, &len);
    assert_non_null(buf);
    Tessera__AcctStep *back = tessera__acct_step__unpack(NULL, len, buf);
    assert_non_null(back);
    assert_int_equal(back->job_id, 67768);
    assert_int_equal(back->het_job_offset, 1);
    assert_string_equal(back->name, "hostname");
    assert_string_equal(back->nodes, "n[3-4]");
    assert_int_equal(back->ntasks, 4);
    assert_non_null(back->usage);
    assert_int_equal(back->usage->sys_usec, 42);
    assert_string_equal(back->usage->max_rss_node, "n1");
    tessera__acct_step__free_unpacked(back, NULL);
    free(buf);

    struct live l;
    make_live(&l);
    Tessera__AcctJob a = TESSERA__ACCT_JOB__INIT;
    acct_job_from_record(&a, &l.rec, "cl");
    buf = acct_job_pack(&a, &len);
    assert_non_null(buf);
    Tessera__AcctJob *jb = tessera__acct_job__unpack(NULL, len, buf);
    assert_non_null(jb);
    assert_int_equal(jb->job_id, 67767);
    assert_string_equal(jb->nodes, "n[1-2]");
    assert_int_equal(jb->time_limit, 3600);
    tessera__acct_job__free_unpacked(jb, NULL);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_job_from_record),
        cmocka_unit_test(test_batch_step),
        cmocka_unit_test(test_step_and_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
