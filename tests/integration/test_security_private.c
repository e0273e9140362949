/* A job's private data and its licences, tried as an unprivileged user would.
 *
 * - Scripts, environments and arguments: user nobody asks the raw job query, the raw
 *   allocation and accounting queries and the script request for root's jobs, through a
 *   client of its own (the commands print none of these fields); nothing private comes
 *   back, and `scontrol write batch_script` refuses with Slurm's words, while the owner
 *   and root get the script. Even root's queries carry nothing private.
 * - Licences: raw submissions and updates with malformed or negative counts
 *   ("matlab:-5" once let three 2-licence jobs run on a pool of 2) are refused by the
 *   controller; the pool then holds (contrib/filters/licenses counts it).
 */
#include "cluster.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
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

#define NODES 2
#define NOBODY 65534

#define SCRIPT_SECRET "SCRIPT-SECRET-7f3a"
#define ENV_SECRET "ENV-SECRET-91bc"
#define ARGV_SECRET "ARGV-SECRET-55de"

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char path[600], nodes[1024], extra[4096];
    snprintf(path, sizeof(path), "%s/licenses.conf", cluster.dir);
    if (harness_write_file(path, "matlab 2\n", 0644))
        return -1;
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\nKillWait=1\nFilterTimeout=10\nFilterRetryInterval=1\n%s"
             "PartitionName=debug Nodes=n[1-%d] Default=YES MaxTime=UNLIMITED\n"
             "PartitionName=lic Nodes=n[1-%d] MaxTime=UNLIMITED "
             "ActivationFilters=%s/contrib/filters/licenses\n",
             nodes, NODES, NODES, TESSERA_SOURCE_DIR);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* a raw client, as any uid */

/* Send req as uid from a child that became uid, with a client of its own; the packed
 * answer comes back through a pipe. NULL when the call itself failed. */
static Tessera__Response *call_as(uid_t uid, const Tessera__Request *req)
{
    uid_t server_uid = geteuid(); /* SlurmUser of the test cluster */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (uid != 0 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
            _exit(2);
        struct rpc_client_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                        .munge_socket = cluster.munge.socket,
                                        .server_uid = server_uid,
                                        .target = HARNESS_CTLD_NAME, .timeout_ms = 10000};
        struct rpc_client *cli = NULL;
        Tessera__Response *resp = NULL;
        if (rpc_client_connect(&cfg, &cli) || rpc_client_call(cli, req, &resp))
            _exit(3);
        size_t len = tessera__response__get_packed_size(resp);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf)
            _exit(4);
        tessera__response__pack(resp, buf);
        for (size_t off = 0; off < len;) {
            ssize_t w = write(fds[1], buf + off, len - off);
            if (w <= 0)
                _exit(5);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (len == cap)
            buf = realloc(buf, cap *= 2);
        ssize_t r = read(fds[0], buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    Tessera__Response *resp = NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        resp = tessera__response__unpack(NULL, len, buf);
    free(buf);
    if (!resp)
        fail_msg("raw call as uid %u failed (status %d)", (unsigned)uid, status);
    return resp;
}

/* The error code of an answer (0: none). */
static unsigned error_of(const Tessera__Response *resp)
{
    return resp->error ? resp->error->code : 0;
}

/* No secret anywhere in what came back, whatever field it might hide in. */
static void expect_nothing_private(const Tessera__Response *resp)
{
    size_t len = tessera__response__get_packed_size(resp);
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    tessera__response__pack(resp, buf);
    static const char *const secrets[] = {SCRIPT_SECRET, ENV_SECRET, ARGV_SECRET};
    for (size_t i = 0; i < 3; i++)
        if (memmem(buf, len, secrets[i], strlen(secrets[i])))
            fail_msg("the answer carries %s", secrets[i]);
    free(buf);
}

static Tessera__Response *submit_raw(uid_t uid, Tessera__JobDesc *const *comps, size_t n)
{
    Tessera__SubmitRequest sub = TESSERA__SUBMIT_REQUEST__INIT;
    sub.components = (Tessera__JobDesc **)comps;
    sub.n_components = n;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
    req.submit = &sub;
    return call_as(uid, &req);
}

/* A held batch job of uid with every kind of private data; its id. script NULL: an
 * allocation's (no script). */
static unsigned submit_private(uid_t uid, const char *script, const char *partition,
                               const char *licenses)
{
    char *env[] = {(char *)"PATH=/usr/bin:/bin", (char *)"TOKEN=" ENV_SECRET};
    char *argv[] = {(char *)ARGV_SECRET};
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.name = (char *)"private";
    d.script = (char *)script;
    d.environment = env;
    d.n_environment = 2;
    d.argv = argv;
    d.n_argv = 1;
    d.work_dir = outdir;
    d.partition = (char *)partition;
    d.licenses = (char *)licenses;
    d.has_hold = 1;
    d.hold = 1;
    Tessera__JobDesc *comps[] = {&d};
    Tessera__Response *resp = submit_raw(uid, comps, 1);
    if (error_of(resp))
        fail_msg("raw submission refused: %s", resp->error->text);
    unsigned id = resp->submit->job_id;
    tessera__response__free_unpacked(resp, NULL);
    return id;
}

static Tessera__Response *job_query(uid_t uid, unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    char *ids[] = {sid};
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    if (id) {
        q.job_ids = ids;
        q.n_job_ids = 1;
    }
    q.all_states = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    return call_as(uid, &req);
}

static Tessera__Response *acct_query(uid_t uid, unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    char *ids[] = {sid};
    Tessera__AcctQueryRequest q = TESSERA__ACCT_QUERY_REQUEST__INIT;
    q.job_ids = ids;
    q.n_job_ids = 1;
    q.all_users = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_ACCT_QUERY;
    req.acct_query = &q;
    return call_as(uid, &req);
}

static Tessera__Response *script_request(uid_t uid, const char *id)
{
    Tessera__JobScriptRequest js = TESSERA__JOB_SCRIPT_REQUEST__INIT;
    js.job_id = (char *)id;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_SCRIPT;
    req.job_script = &js;
    return call_as(uid, &req);
}

static struct result run_as(uid_t uid, const char *cmd, const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, uid, cmd, args, &r.out, &r.err);
    return r;
}
#define RUN_AS(uid, cmd, ...) run_as(uid, cmd, (const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------------------------ */
/* scripts, environments, arguments */

static const char root_script[] = "#!/bin/sh\n# " SCRIPT_SECRET "\ntrue\n";

/* nobody's raw job query of root's job, and of every job: a record without anything
 * private; root's own query neither (queries never carry them, for anyone). */
static void test_job_query_carries_nothing_private(void **state)
{
    (void)state;
    unsigned id = submit_private(0, root_script, NULL, NULL);
    for (int all = 0; all < 2; all++) {
        Tessera__Response *resp = job_query(NOBODY, all ? 0 : id);
        assert_int_equal(error_of(resp), 0);
        assert_true(resp->job_query->n_jobs >= 1);
        int seen = 0;
        for (size_t i = 0; i < resp->job_query->n_jobs; i++) {
            const Tessera__JobRecord *r = resp->job_query->jobs[i];
            if (r->job_id != id)
                continue;
            seen = 1;
            assert_null(r->desc->script);
            assert_int_equal(r->desc->n_environment, 0);
            assert_int_equal(r->desc->n_argv, 0);
            assert_true(r->batch); /* still a batch job for squeue and scontrol */
        }
        assert_true(seen);
        expect_nothing_private(resp);
        tessera__response__free_unpacked(resp, NULL);
    }
    Tessera__Response *resp = job_query(0, id);
    assert_int_equal(error_of(resp), 0);
    assert_int_equal(resp->job_query->n_jobs, 1);
    expect_nothing_private(resp);
    tessera__response__free_unpacked(resp, NULL);
    /* what the commands print is unchanged: a batch job, its command line */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN_AS(NOBODY, "scontrol", "show", "job", sid);
    expect_ok(&r);
    assert_non_null(strstr(r.out, "BatchFlag=1"));
    assert_non_null(strstr(r.out, "\n   Command=(null)\n"));
    assert_non_null(strstr(r.out, "JobName=private"));
    result_free(&r);
    r = RUN_AS(NOBODY, "squeue", "-h", "-o", "%i %j %u %T %r", "-j", sid);
    expect_ok(&r);
    char want[128];
    snprintf(want, sizeof(want), "%u private root PENDING JobHeldUser\n", id);
    assert_string_equal(r.out, want);
    result_free(&r);
    cancel_job(id);
}

/* The accounting query, raw: nobody gets none of root's jobs; root gets the records, and
 * nothing private in them, for a job still in memory and one that ran and ended. */
static void test_acct_query_carries_nothing_private(void **state)
{
    (void)state;
    unsigned held = submit_private(0, root_script, NULL, NULL);
    const char *const env[] = {"TOKEN=" ENV_SECRET, NULL};
    const char *const args[] = {"--parsable", "-D", outdir,
                                "--wrap=echo " SCRIPT_SECRET " >/dev/null", NULL};
    struct result r = {0};
    r.rc = harness_cmd_full(&cluster, (uid_t)-1, env, "sbatch", args, &r.out, &r.err);
    expect_ok(&r);
    unsigned ran = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    wait_for(ran, "%T", "COMPLETED\n", 20);
    unsigned ids[] = {held, ran};
    for (size_t i = 0; i < 2; i++) {
        Tessera__Response *resp = acct_query(NOBODY, ids[i]);
        assert_int_equal(error_of(resp), 0);
        assert_int_equal(resp->acct_query->n_jobs, 0);
        expect_nothing_private(resp);
        tessera__response__free_unpacked(resp, NULL);
        resp = acct_query(0, ids[i]);
        assert_int_equal(error_of(resp), 0);
        assert_int_equal(resp->acct_query->n_jobs, 1);
        expect_nothing_private(resp);
        tessera__response__free_unpacked(resp, NULL);
    }
    /* and the raw job query of the job that ran (its record still in memory) */
    Tessera__Response *resp = job_query(NOBODY, ran);
    assert_int_equal(resp->job_query->n_jobs, 1);
    expect_nothing_private(resp);
    tessera__response__free_unpacked(resp, NULL);
    /* sacct prints as before */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", ran);
    r = RUN("sacct", "-n", "-X", "-P", "-o", "JobID,JobName,State", "-j", sid);
    expect_ok(&r);
    char want[64];
    snprintf(want, sizeof(want), "%u|wrap|COMPLETED\n", ran);
    assert_string_equal(r.out, want);
    result_free(&r);
    cancel_job(held);
}

/* nobody asks for root's script: refused with Slurm's words, raw and through scontrol,
 * and no file is written; root gets it. */
static void test_write_batch_script_of_another_user(void **state)
{
    (void)state;
    unsigned id = submit_private(0, root_script, NULL, NULL);
    char sid[16], file[700];
    snprintf(sid, sizeof(sid), "%u", id);
    Tessera__Response *resp = script_request(NOBODY, sid);
    assert_int_equal(error_of(resp), TS_EUSER_ID);
    assert_int_equal(resp->msg_case, TESSERA__RESPONSE__MSG__NOT_SET);
    expect_nothing_private(resp);
    tessera__response__free_unpacked(resp, NULL);

    snprintf(file, sizeof(file), "%s/stolen.sh", outdir);
    struct result r = RUN_AS(NOBODY, "scontrol", "write", "batch_script", sid, file);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "job script retrieval failed: Invalid user id\n");
    assert_string_equal(r.out, "");
    result_free(&r);
    assert_int_equal(access(file, F_OK), -1);
    r = RUN_AS(NOBODY, "scontrol", "write", "batch_script", sid, "-");
    assert_int_equal(r.rc, 1);
    assert_null(strstr(r.out, SCRIPT_SECRET));
    result_free(&r);

    /* root (an administrator) gets the script, and the raw answer the rest */
    r = RUN("scontrol", "write", "batch_script", sid, "-");
    expect_ok(&r);
    assert_string_equal(r.out, root_script);
    result_free(&r);
    resp = script_request(0, sid);
    assert_int_equal(error_of(resp), 0);
    assert_string_equal(resp->job_script->script, root_script);
    assert_int_equal(resp->job_script->n_environment, 2);
    assert_string_equal(resp->job_script->environment[1], "TOKEN=" ENV_SECRET);
    assert_int_equal(resp->job_script->n_argv, 1);
    assert_string_equal(resp->job_script->argv[0], ARGV_SECRET);
    tessera__response__free_unpacked(resp, NULL);
    cancel_job(id);
}

/* The owner writes its own script: into slurm-<id>.sh in its working folder by default,
 * as itself, with Slurm's message; a het job's component gives its leader's script. */
static void test_write_batch_script_by_owner(void **state)
{
    (void)state;
    static const char script[] = "#!/bin/sh\necho mine\n";
    unsigned id = submit_private(NOBODY, script, NULL, NULL);
    char sid[16], want[128], path[700], cwd[4096];
    snprintf(sid, sizeof(sid), "%u", id);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(outdir), 0);
    struct result r = RUN_AS(NOBODY, "scontrol", "write", "batch_script", sid);
    assert_int_equal(chdir(cwd), 0);
    expect_ok(&r);
    snprintf(want, sizeof(want), "batch script for job %u written to slurm-%u.sh\n", id, id);
    assert_string_equal(r.out, want);
    result_free(&r);
    snprintf(path, sizeof(path), "%s/slurm-%u.sh", outdir, id);
    char *text = harness_read_file(path);
    assert_non_null(text);
    assert_string_equal(text, script);
    free(text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, NOBODY); /* written by the command, as the user */
    unlink(path);

    /* a symbolic link where the file goes is not followed */
    snprintf(path, sizeof(path), "%s/link-%u.sh", outdir, id);
    assert_int_equal(symlink("/dev/null", path), 0);
    r = RUN_AS(NOBODY, "scontrol", "write", "batch_script", sid, path);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "failed to open file"));
    result_free(&r);
    unlink(path);
    cancel_job(id);

    /* a het job: any of its ids means the leader's script */
    unsigned het = SUBMIT("-H", "-n1", "--wrap=echo leader", ":", "-n1");
    char ids[3][24];
    snprintf(ids[0], sizeof(ids[0]), "%u", het);
    snprintf(ids[1], sizeof(ids[1]), "%u+1", het);
    snprintf(ids[2], sizeof(ids[2]), "%u", het + 1);
    for (int i = 0; i < 3; i++) {
        r = RUN("scontrol", "write", "batch_script", ids[i], "-");
        expect_ok(&r);
        assert_non_null(strstr(r.out, "echo leader"));
        result_free(&r);
    }
    cancel_job(het);
}

/* Jobs without a script, ids that mean nothing, words scontrol does not know. */
static void test_write_batch_script_refusals(void **state)
{
    (void)state;
    unsigned id = submit_private(0, NULL, NULL, NULL); /* an allocation: no script */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scontrol", "write", "batch_script", sid, "-");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "job script retrieval failed: Job script not specified\n");
    result_free(&r);
    cancel_job(id);
    r = RUN("scontrol", "write", "batch_script", "999999", "-");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "job script retrieval failed: Invalid job id specified\n");
    result_free(&r);
    r = RUN("scontrol", "write", "batch_script", "abc", "-");
    assert_string_equal(r.err, "job script retrieval failed: Invalid job id specified\n");
    result_free(&r);
    r = RUN("scontrol", "write", "foo", "1");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "invalid write argument:foo\n");
    result_free(&r);
    r = RUN("scontrol", "write");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "too few arguments for keyword:write\n");
    result_free(&r);
    r = RUN("scontrol", "write", "batch_script", "1", "-", "x");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "too many arguments for keyword:write\n");
    result_free(&r);
}

/* ------------------------------------------------------------------------------------ */
/* licences */

static unsigned submit_licenses(uid_t uid, const char *licenses)
{
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.name = (char *)"licattack";
    d.script = (char *)"#!/bin/sh\ntrue\n";
    d.work_dir = outdir;
    d.partition = (char *)"lic";
    d.licenses = (char *)licenses;
    d.has_hold = 1;
    d.hold = 1;
    Tessera__JobDesc *comps[] = {&d};
    Tessera__Response *resp = submit_raw(uid, comps, 1);
    unsigned code = error_of(resp);
    tessera__response__free_unpacked(resp, NULL);
    return code;
}

/* Raw submissions that sbatch would never send: refused by the controller, nothing made. */
static void test_malformed_licenses_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "matlab:-5", "matlab:0", "matlab:+5", "matlab:99999999999", "matlab:2x", "matlab:",
        ":2", ",", "matlab,,matlab", "mat lab:1", "matlab:1:2", "matlab:-1,matlab:2",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned code = submit_licenses(NOBODY, bad[i]);
        if (code != TS_EINVALID_LICENSES)
            fail_msg("licences '%s': code %u, expected %d", bad[i], code, TS_EINVALID_LICENSES);
    }
    /* licences on a later component of a het job */
    Tessera__JobDesc c0 = TESSERA__JOB_DESC__INIT, c1 = TESSERA__JOB_DESC__INIT;
    c0.name = c1.name = (char *)"licattack";
    c0.script = (char *)"#!/bin/sh\ntrue\n";
    c0.work_dir = c1.work_dir = outdir;
    c0.partition = c1.partition = (char *)"lic";
    c0.has_hold = 1;
    c0.hold = 1;
    c1.licenses = (char *)"matlab:1";
    Tessera__JobDesc *comps[] = {&c0, &c1};
    Tessera__Response *resp = submit_raw(NOBODY, comps, 2);
    assert_int_equal(error_of(resp), TS_EINVALID_LICENSES);
    tessera__response__free_unpacked(resp, NULL);
    /* nothing was made */
    struct result r = RUN("squeue", "-h", "-n", "licattack", "-t", "all");
    expect_ok(&r);
    assert_string_equal(r.out, "");
    result_free(&r);
}

/* An accepted request cannot be turned into a negative one by an update. */
static void test_update_to_malformed_licenses_refused(void **state)
{
    (void)state;
    unsigned id = submit_private(NOBODY, "#!/bin/sh\ntrue\n", "lic", "matlab:1");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    static const char *const bad[] = {"matlab:-5", "matlab:0", "matlab:1000001", "x,,y"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        Tessera__JobDesc changes = TESSERA__JOB_DESC__INIT;
        changes.licenses = (char *)bad[i];
        Tessera__JobUpdateRequest u = TESSERA__JOB_UPDATE_REQUEST__INIT;
        u.job_id = sid;
        u.changes = &changes;
        Tessera__Request req = TESSERA__REQUEST__INIT;
        req.msg_case = TESSERA__REQUEST__MSG_JOB_UPDATE;
        req.job_update = &u;
        Tessera__Response *resp = call_as(NOBODY, &req);
        assert_int_equal(error_of(resp), TS_EINVALID_LICENSES);
        tessera__response__free_unpacked(resp, NULL);
    }
    assert_string_equal(show_field(id, "Licenses"), "matlab:1");
    char set[64];
    snprintf(set, sizeof(set), "jobid=%s", sid);
    struct result r = RUN_AS(NOBODY, "scontrol", "update", set, "Licenses=matlab:2");
    expect_ok(&r);
    result_free(&r);
    assert_string_equal(show_field(id, "Licenses"), "matlab:2");
    cancel_job(id);
}

/* The pool of 2 holds: of three 2-licence jobs one runs, the others wait for it. */
static void test_license_pool_holds(void **state)
{
    (void)state;
    unsigned ids[3];
    for (int i = 0; i < 3; i++)
        ids[i] = SUBMIT("-p", "lic", "-L", "matlab:2", "-n1", "--wrap=sleep 30");
    wait_for(ids[0], "%T", "RUNNING\n", 20);
    wait_for(ids[1], "%T %r", "PENDING ActivationReserved\n", 20);
    wait_for(ids[2], "%T %r", "PENDING ActivationReserved\n", 20);
    for (int i = 0; i < 3; i++)
        cancel_job(ids[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_query_carries_nothing_private),
        cmocka_unit_test(test_acct_query_carries_nothing_private),
        cmocka_unit_test(test_write_batch_script_of_another_user),
        cmocka_unit_test(test_write_batch_script_by_owner),
        cmocka_unit_test(test_write_batch_script_refusals),
        cmocka_unit_test(test_malformed_licenses_refused),
        cmocka_unit_test(test_update_to_malformed_licenses_refused),
        cmocka_unit_test(test_license_pool_holds),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
