/* Output patterns and request sizes as an attacker writes them, on a node with a
 * 12-character name: the unprivileged user nobody submits and updates jobs whose
 * patterns repeat %N (400 copies: 4,800 bytes of host names), directly or through the
 * job name, with and without --requeue; a job stored with such a pattern (as an older
 * version could store it) is released; raw submissions whose --mem-per-cpu x -c or
 * -N x --ntasks-per-node overflow 64 or 32 bits reach the controller. The controller
 * must stay up (scontrol ping), across restarts too, and every job is either refused
 * with Slurm's wording or runs writing the file its pattern names.
 */
#include "cluster.h"

#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#include "common/net/loop.h"
#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"
#include "ctld/store.h"

#define NOBODY 65534
#define HOST "nodename0001" /* 12 characters */

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    snprintf(cluster.nodes[0].name, sizeof(cluster.nodes[0].name), "%s", HOST);
    char extra[1024];
    snprintf(extra, sizeof(extra),
             "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n"
             "NodeName=%s NodeAddr=127.0.0.1 Port=%u CPUs=4 RealMemory=2000\n"
             "PartitionName=debug Nodes=%s Default=YES MaxTime=UNLIMITED\n",
             HOST, (unsigned)cluster.nodes[0].port, HOST);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, 1, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* prefix, then count copies of "%N" (malloc'd) */
static char *many_hosts(const char *prefix, int count)
{
    size_t len = strlen(prefix);
    char *s = malloc(len + 2 * (size_t)count + 1);
    assert_non_null(s);
    memcpy(s, prefix, len);
    for (int i = 0; i < count; i++)
        memcpy(s + len + 2 * (size_t)i, "%N", 2);
    s[len + 2 * (size_t)count] = '\0';
    return s;
}

/* Stop the controller with sig (0: already stopped) and start it again; its log says why when it does not come up. */
static void restart_controller(int sig)
{
    if (sig)
        harness_ctld_stop(&cluster, sig);
    if (harness_ctld_start(&cluster) != 0) {
        char *log = harness_read_file(cluster.ctld_log);
        fail_msg("the controller did not come back:\n%s", log ? log : "(no log)");
    }
    assert_int_equal(harness_wait_nodes(&cluster, 1, 15000), 0);
}

static void expect_controller_up(void)
{
    struct result r = RUN("scontrol", "ping");
    if (r.rc != 0 || !strstr(r.out, "is UP"))
        fail_msg("controller down (%d): %s%s", r.rc, r.out, r.err);
    result_free(&r);
}

/* sbatch as nobody; the exit status, with stdout and stderr in r. */
#define SBATCH_AS_NOBODY(r, ...)                                                              \
    ((r)->rc = harness_cmd_as(&cluster, NOBODY, "sbatch",                                     \
                              (const char *const[]){"--parsable", "-D", outdir, __VA_ARGS__,  \
                                                    NULL},                                    \
                              &(r)->out, &(r)->err))

/* scontrol as nobody. */
#define SCONTROL_AS_NOBODY(r, ...)                                                            \
    ((r)->rc = harness_cmd_as(&cluster, NOBODY, "scontrol",                                   \
                              (const char *const[]){__VA_ARGS__, NULL}, &(r)->out, &(r)->err))

static void expect_ok_done(struct result *r)
{
    expect_ok(r);
    result_free(r);
}

static unsigned submitted(struct result *r)
{
    if (r->rc != 0)
        fail_msg("sbatch as nobody failed (%d): %s", r->rc, r->err);
    unsigned id = (unsigned)strtoul(r->out, NULL, 10);
    result_free(r);
    assert_true(id > 0);
    return id;
}

static void expect_refused(struct result *r, const char *line)
{
    if (r->rc == 0)
        fail_msg("accepted: %s", r->out);
    if (!has_prefix_line(r->err, line))
        fail_msg("missing '%s' in:\n%s", line, r->err);
    result_free(r);
}

static void expect_file_of_nobody(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    struct stat st;
    if (stat(path, &st) != 0)
        fail_msg("no file %s", path);
    assert_int_equal(st.st_uid, NOBODY);
}

#define TOO_LONG "sbatch: error: Batch job submission failed: File name pattern is too long"

/* ------------------------------------------------------------------------------------ */

/* The attack as reported: 400 %N after an x, as -o, -e, -i, with --requeue. */
static void test_many_hosts_refused(void **state)
{
    (void)state;
    char *pattern = many_hosts("x", 400);
    struct result r;
    SBATCH_AS_NOBODY(&r, "-o", pattern, "--wrap=true");
    expect_refused(&r, TOO_LONG);
    expect_controller_up();
    SBATCH_AS_NOBODY(&r, "--requeue", "-o", pattern, "--wrap=true");
    expect_refused(&r, TOO_LONG);
    SBATCH_AS_NOBODY(&r, "-e", pattern, "--wrap=true");
    expect_refused(&r, TOO_LONG);
    SBATCH_AS_NOBODY(&r, "-i", pattern, "--wrap=true");
    expect_refused(&r, TOO_LONG);
    free(pattern);
    /* a pattern longer than PATH_MAX without any escape */
    char *plain = malloc(5000);
    assert_non_null(plain);
    memset(plain, 'a', 4999);
    plain[4999] = '\0';
    SBATCH_AS_NOBODY(&r, "-o", plain, "--wrap=true");
    expect_refused(&r, TOO_LONG);
    free(plain);
    expect_controller_up();
    /* the controller restarted: nothing of them was kept */
    restart_controller(SIGKILL);
    expect_controller_up();
}

/* Many %N that fit run, and the file has every host name in it. */
static void test_many_hosts_run(void **state)
{
    (void)state;
    char *pattern = many_hosts("m-%j-", 18); /* 12 x 18 = 216 bytes of host names */
    struct result r;
    SBATCH_AS_NOBODY(&r, "--requeue", "-o", pattern, "--wrap=true");
    unsigned id = submitted(&r);
    wait_for(id, "%T", "COMPLETED\n", 20);
    char name[512];
    int n = snprintf(name, sizeof(name), "m-%u-", id);
    for (int i = 0; i < 18; i++)
        n += snprintf(name + n, sizeof(name) - (size_t)n, "%s", HOST);
    expect_file_of_nobody(name);
    free(pattern);
    /* %% is one percent sign, and a job name holding %N is taken as it is (one pass) */
    const char *name_pattern = "%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N%N";
    SBATCH_AS_NOBODY(&r, "-J", name_pattern, "-o", "n-%x-%%-%N.out", "--wrap=true");
    id = submitted(&r);
    wait_for(id, "%T", "COMPLETED\n", 20);
    snprintf(name, sizeof(name), "n-%s-%%-%s.out", name_pattern, HOST);
    expect_file_of_nobody(name);
    expect_controller_up();
}

/* scontrol update StdOut=... is held to the same limit; a pattern that fits takes effect,
 * also after a restart, and the requeue-able job runs with it. */
static void test_update_pattern(void **state)
{
    (void)state;
    struct result r;
    SBATCH_AS_NOBODY(&r, "-H", "--requeue", "-o", "before.out", "--wrap=true");
    unsigned id = submitted(&r);
    char job[32], std_out[1024];
    snprintf(job, sizeof(job), "jobid=%u", id);
    char refusal[128]; /* scontrol's wording for a refused job update */
    snprintf(refusal, sizeof(refusal), "File name pattern is too long for job %u", id);
    char *pattern = many_hosts("StdOut=x", 400);
    SCONTROL_AS_NOBODY(&r, "update", job, pattern);
    expect_refused(&r, refusal);
    free(pattern);
    pattern = many_hosts("StdErr=e", 400);
    SCONTROL_AS_NOBODY(&r, "update", job, pattern);
    expect_refused(&r, refusal);
    free(pattern);
    expect_controller_up();
    snprintf(std_out, sizeof(std_out), "%s/before.out", outdir);
    assert_string_equal(show_field(id, "StdOut"), std_out);

    SCONTROL_AS_NOBODY(&r, "update", job, "StdOut=u-%j-%N%N.out");
    expect_ok_done(&r);
    restart_controller(SIGKILL);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    SCONTROL_AS_NOBODY(&r, "release", sid);
    expect_ok_done(&r);
    wait_for(id, "%T", "COMPLETED\n", 20);
    char name[256];
    snprintf(name, sizeof(name), "u-%u-%s%s.out", id, HOST, HOST);
    expect_file_of_nobody(name);
    expect_controller_up();
}

/* A job whose stored pattern is past the limit (an older version accepted it): its
 * launch fails with JobLaunchFailure, the controller stays up, and it stays FAILED (not
 * requeued, not retried) across a restart. */
static void test_stored_pattern_fails_launch(void **state)
{
    (void)state;
    struct result r;
    SBATCH_AS_NOBODY(&r, "-H", "--requeue", "-o", "short.out", "--wrap=true");
    unsigned id = submitted(&r);
    assert_int_equal(harness_ctld_stop(&cluster, SIGTERM), 0);

    /* rewrite its record as an older version would have stored it */
    struct loop *loop = loop_create();
    struct store *st = NULL;
    assert_non_null(loop);
    assert_int_equal(store_open(loop, cluster.state, STORE_DEFAULT_MAP_SIZE, &st), TS_OK);
    uint8_t key[8];
    store_key_u64(key, id);
    void *val = NULL;
    size_t len = 0;
    assert_int_equal(store_get(st, STORE_DB_JOBS, key, sizeof(key), &val, &len), TS_OK);
    Tessera__JobRecord *rec = tessera__job_record__unpack(NULL, len, val);
    free(val);
    assert_non_null(rec);
    free(rec->desc->std_out);
    rec->desc->std_out = many_hosts("x", 400);
    len = tessera__job_record__get_packed_size(rec);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    tessera__job_record__pack(rec, buf);
    tessera__job_record__free_unpacked(rec, NULL);
    assert_int_equal(store_put(st, STORE_DB_JOBS, key, sizeof(key), buf, len), TS_OK);
    free(buf);
    assert_int_equal(store_sync(st), TS_OK);
    store_close(st);
    loop_destroy(loop);

    restart_controller(0);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    SCONTROL_AS_NOBODY(&r, "release", sid);
    expect_ok_done(&r);
    wait_for(id, "%T %r", "FAILED JobLaunchFailure\n", 20);
    expect_controller_up();
    restart_controller(SIGKILL);
    expect_controller_up();
    wait_for(id, "%T %r", "FAILED JobLaunchFailure\n", 5);
    /* the node is free again: the next job runs */
    SBATCH_AS_NOBODY(&r, "-o", "after.out", "--wrap=true");
    id = submitted(&r);
    wait_for(id, "%T", "COMPLETED\n", 20);
}

/* ------------------------------------------------------------------------------------ */
/* raw submissions: what sbatch would never send, the controller must refuse itself */

/* Send one SubmitRequest of desc as nobody (a child that became nobody: MUNGE proves
 * the uid); the error code in the response (TS_OK when accepted), text into why. */
static int raw_submit_as_nobody(Tessera__JobDesc *desc, char *why, size_t whylen)
{
    uid_t controller_uid = geteuid(); /* SlurmUser: the test's own */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
            _exit(2);
        struct rpc_client_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                        .munge_socket = cluster.munge.socket,
                                        .server_uid = controller_uid,
                                        .target = HARNESS_CTLD_NAME, .timeout_ms = 10000};
        struct rpc_client *cli = NULL;
        char line[600];
        int code = -1;
        Tessera__Response *resp = NULL;
        if (rpc_client_connect(&cfg, &cli) == TS_OK) {
            Tessera__SubmitRequest sr = TESSERA__SUBMIT_REQUEST__INIT;
            sr.n_components = 1;
            sr.components = &desc;
            Tessera__Request req = TESSERA__REQUEST__INIT;
            req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
            req.submit = &sr;
            if (rpc_client_call(cli, &req, &resp) == TS_OK)
                code = resp->error ? (int)resp->error->code : TS_OK;
        }
        int n = snprintf(line, sizeof(line), "%d %s", code,
                         resp && resp->error ? resp->error->text : "");
        if (write(fds[1], line, (size_t)n) != n)
            _exit(3);
        _exit(0);
    }
    close(fds[1]);
    char line[600] = "";
    ssize_t n = read(fds[0], line, sizeof(line) - 1);
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(n > 0);
    line[n] = '\0';
    char *text = strchr(line, ' ');
    snprintf(why, whylen, "%s", text ? text + 1 : "");
    return atoi(line);
}

static void raw_desc(Tessera__JobDesc *d)
{
    tessera__job_desc__init(d);
    d->name = (char *)"overflow";
    d->script = (char *)"#!/bin/sh\ntrue\n";
    d->work_dir = outdir;
}

/* --mem-per-cpu=2^63 -c 2: the product wrapped to 0 MB and the job was accepted */
static void test_raw_mem_per_cpu_overflow(void **state)
{
    (void)state;
    Tessera__JobDesc d;
    char why[512];
    raw_desc(&d);
    d.has_cpus_per_task = 1;
    d.cpus_per_task = 2;
    d.has_mem_per_cpu_mb = 1;
    d.mem_per_cpu_mb = UINT64_C(1) << 63;
    assert_int_equal(raw_submit_as_nobody(&d, why, sizeof(why)), TS_EMEMORY);
    assert_string_equal(why, "Memory required by task is not available");
    /* the same through the product's other factor */
    d.cpus_per_task = 4;
    d.mem_per_cpu_mb = UINT64_C(1) << 62;
    assert_int_equal(raw_submit_as_nobody(&d, why, sizeof(why)), TS_EMEMORY);
    /* a fitting request is still accepted: 2 x 1000 MB on a 2000 MB node */
    d.cpus_per_task = 2;
    d.mem_per_cpu_mb = 1000;
    d.has_hold = 1;
    d.hold = 1;
    assert_int_equal(raw_submit_as_nobody(&d, why, sizeof(why)), TS_OK);
    expect_controller_up();
}

/* -N 65536 --ntasks-per-node=65536: 2^32 tasks wrapped to 0 in 32 bits */
static void test_raw_task_count_overflow(void **state)
{
    (void)state;
    Tessera__JobDesc d;
    char why[512];
    raw_desc(&d);
    d.has_min_nodes = 1;
    d.min_nodes = 65536;
    d.has_ntasks_per_node = 1;
    d.ntasks_per_node = 65536;
    assert_int_equal(raw_submit_as_nobody(&d, why, sizeof(why)), TS_ETOO_MANY_CPUS);
    assert_string_equal(why, "More processors requested than permitted");
    /* -n 2^32-1 -c 2^32-1 */
    raw_desc(&d);
    d.has_ntasks = 1;
    d.ntasks = UINT32_MAX;
    d.has_cpus_per_task = 1;
    d.cpus_per_task = UINT32_MAX;
    assert_int_not_equal(raw_submit_as_nobody(&d, why, sizeof(why)), TS_OK);
    expect_controller_up();
}

/* What sbatch itself says about such values (it may refuse before the controller). */
static void test_sbatch_mem_per_cpu_overflow(void **state)
{
    (void)state;
    struct result r;
    SBATCH_AS_NOBODY(&r, "-c", "2", "--mem-per-cpu=8796093022208T", "--wrap=true");
    if (r.rc == 0)
        fail_msg("accepted: %s", r.out);
    if (!has_line(r.err,
                  "sbatch: error: Batch job submission failed: Memory required by task is not "
                  "available") &&
        !has_prefix_line(r.err, "sbatch: error: Invalid --mem-per-cpu"))
        fail_msg("unexpected refusal: %s", r.err);
    result_free(&r);
    expect_controller_up();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_hosts_refused),
        cmocka_unit_test(test_many_hosts_run),
        cmocka_unit_test(test_update_pattern),
        cmocka_unit_test(test_stored_pattern_fails_launch),
        cmocka_unit_test(test_raw_mem_per_cpu_overflow),
        cmocka_unit_test(test_raw_task_count_overflow),
        cmocka_unit_test(test_sbatch_mem_per_cpu_overflow),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
