/* sbcast through the real commands and daemons, and as the attacks it must refuse:
 *   - an unprivileged user (nobody) copies a file to both nodes of their job: the file is
 *     theirs, with the source's mode and contents (in several blocks; times with -p), and
 *     each node daemon wrote it; without -f an existing file is never replaced;
 *   - one component of a het job (--jobid=N.1, the source document's form; N+1);
 *   - a job of another user is refused by the controller ("Invalid user id");
 *   - a path the user cannot write (/etc), another user's file (-f), a symlink planted at
 *     the destination: the write happens as the user, without following a link;
 *   - a file larger than SbcastMaxFileMB is refused ("File too large");
 *   - forged credentials (a flipped byte, a step credential passed for a broadcast one),
 *     a credential used by another uid or on a node it does not name, one replayed after
 *     the node daemon restarted and one after its job ended: refused by the node daemon
 *     itself.
 * Both nodes run on this host and share /tmp, as the nodes of Slurm's reference cluster
 * do: a second node finds the file the first one wrote.
 */
#include "cluster.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NOBODY 65534

static struct harness_cluster cluster;
static char outdir[512];
static char shared[512]; /* a /tmp-like folder (1777, root's) for destinations */

static int group_setup(void **state)
{
    if (harness_cluster_up(&cluster, 2, "CPUs=2 RealMemory=1000",
                           "KillWait=1\nMinJobAge=600\nSbcastMaxFileMB=1\n", outdir,
                           sizeof(outdir)))
        return -1;
    snprintf(shared, sizeof(shared), "%s/tmp", cluster.dir);
    if (mkdir(shared, 0755) || chmod(shared, 01777) || chmod(cluster.dir, 0755))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

static struct result sbcast_as(uid_t uid, const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, uid, "sbcast", args, &r.out, &r.err);
    return r;
}
#define SBCAST_AS(uid, ...) sbcast_as(uid, (const char *const[]){__VA_ARGS__, NULL})

/* A running job of uid on nodes ("n1", "n[1-2]"). */
static unsigned running_job(uid_t uid, const char *nodes)
{
    unsigned id = SUBMIT_AS(uid, nodes, "exec sleep 300");
    wait_for(id, "%T", "RUNNING\n", 20);
    return id;
}

static void path_in(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

/* A source file nobody can read: count copies of a line. */
static void make_source(const char *path, int copies, mode_t mode)
{
    size_t len = (size_t)copies * 32 + 1;
    char *text = malloc(len);
    assert_non_null(text);
    text[0] = '\0';
    for (int i = 0; i < copies; i++)
        snprintf(text + strlen(text), len - strlen(text), "line %05d of the sbcast source\n", i);
    assert_int_equal(harness_write_file(path, text, mode), 0);
    assert_int_equal(chmod(path, mode), 0);
    free(text);
}

static int same_contents(const char *a, const char *b)
{
    char *x = harness_read_file(a), *y = harness_read_file(b);
    int same = x && y && !strcmp(x, y);
    free(x);
    free(y);
    return same;
}

/* The node daemon of node i (1-based) logged that it wrote path for job id. */
static int node_wrote(int i, unsigned id, const char *path)
{
    char line[1200];
    snprintf(line, sizeof(line), "sbcast: job %u: wrote %s as uid", id, path);
    char *log = harness_read_file(cluster.nodes[i - 1].log);
    int found = log && strstr(log, line);
    free(log);
    return found;
}

static void expect_error(const struct result *r, int rc, const char *line)
{
    if (r->rc != rc || !has_line(r->err, line))
        fail_msg("sbcast: exit %d (wanted %d), stderr:\n%s(wanted the line '%s')", r->rc, rc,
                 r->err, line);
}

/* ------------------------------------------------------------------------------------ */
/* what users do */

static void test_two_nodes_as_user(void **state)
{
    unsigned id = running_job(NOBODY, "n[1-2]");
    char job[16], src[600], dst[600];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "two.src");
    path_in(dst, sizeof(dst), shared, "two.dst");
    make_source(src, 200, 0750); /* 6400 bytes: seven blocks of 1 KiB */
    assert_int_equal(chown(src, NOBODY, NOBODY), 0);
    struct result r = SBCAST_AS(NOBODY, "-f", "-s", "1k", "--jobid", job, src, dst);
    expect_ok(&r);
    result_free(&r);
    struct stat st;
    assert_int_equal(lstat(dst, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_uid, NOBODY);
    assert_int_equal(st.st_gid, NOBODY);
    assert_int_equal(st.st_mode & 07777, 0750);
    assert_true(same_contents(src, dst));
    assert_true(node_wrote(1, id, dst));
    assert_true(node_wrote(2, id, dst));

    /* without -f the file is not replaced: Slurm's line per node, exit EEXIST */
    r = SBCAST_AS(NOBODY, "--jobid", job, src, dst);
    expect_error(&r, EEXIST, "sbcast: error: REQUEST_FILE_BCAST(n1): File exists");
    assert_true(has_line(r.err, "sbcast: error: REQUEST_FILE_BCAST(n2): File exists"));
    result_free(&r);

    /* -p keeps the source's times; SLURM_JOB_ID names the job */
    struct timespec old[2] = {{.tv_sec = 1577934245}, {.tv_sec = 1577934245}};
    assert_int_equal(utimensat(AT_FDCWD, src, old, 0), 0);
    char env[32];
    snprintf(env, sizeof(env), "SLURM_JOB_ID=%u", id);
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_full(&cluster, NOBODY, (const char *const[]){env, NULL}, "sbcast",
                              (const char *const[]){"-f", "-p", src, dst, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("sbcast -f -p: exit %d: %s", rc, err);
    free(out);
    free(err);
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_mtim.tv_sec, 1577934245);
    cancel_job(id);
}

/* Root (an administrator) may broadcast to nobody's job: the file is still the job
 * user's, written as that user. */
static void test_admin_writes_as_the_job_user(void **state)
{
    unsigned id = running_job(NOBODY, "n1");
    char job[16], src[600], dst[600];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "admin.src");
    path_in(dst, sizeof(dst), shared, "admin.dst");
    make_source(src, 3, 0644);
    struct result r = SBCAST_AS(0, "--jobid", job, src, dst);
    expect_ok(&r);
    result_free(&r);
    struct stat st;
    assert_int_equal(lstat(dst, &st), 0);
    assert_int_equal(st.st_uid, NOBODY);
    assert_true(same_contents(src, dst));
    cancel_job(id);
}

/* --jobid=N.1 and N+1: the nodes of component 1 alone; N: every component's. */
static void test_het_component(void **state)
{
    char src[600], one[600], all[600], script[4000];
    path_in(src, sizeof(src), outdir, "het.src");
    path_in(one, sizeof(one), shared, "het.one");
    path_in(all, sizeof(all), shared, "het.all");
    make_source(src, 2, 0644);
    snprintf(script, sizeof(script),
             "sbcast --jobid=$SLURM_JOB_ID.1 %s %s && sbcast -j $SLURM_JOB_ID+1 -f %s %s && "
             "sbcast -f %s %s && echo $SLURM_JOB_ID",
             src, one, src, one, src, all);
    struct result r = RUN("salloc", "-Q", "-w", "n1", "-N1", ":", "-w", "n2", "-N1", "sh", "-c",
                          script);
    expect_ok(&r);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    assert_true(id > 0);
    assert_true(node_wrote(2, id, one));
    assert_false(node_wrote(1, id, one));
    assert_true(node_wrote(1, id, all));
    assert_true(node_wrote(2, id, all));
}

/* ------------------------------------------------------------------------------------ */
/* attacks through the command */

static void test_other_users_job_refused(void **state)
{
    unsigned id = running_job(0, "n1");
    char job[16], src[600], dst[600], line[128];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "other.src");
    path_in(dst, sizeof(dst), shared, "other.dst");
    make_source(src, 1, 0644);
    struct result r = SBCAST_AS(NOBODY, "--jobid", job, src, dst);
    snprintf(line, sizeof(line), "sbcast: error: Slurm job %u lookup error: Invalid user id", id);
    expect_error(&r, 255, line);
    result_free(&r);
    struct stat st;
    assert_int_equal(lstat(dst, &st), -1);
    cancel_job(id);
    /* an ended job of one's own: no credential */
    unsigned mine = running_job(NOBODY, "n1");
    snprintf(job, sizeof(job), "%u", mine);
    cancel_job(mine);
    wait_for(mine, "%T", "CANCELLED\n", 20);
    r = SBCAST_AS(NOBODY, "--jobid", job, src, dst);
    snprintf(line, sizeof(line),
             "sbcast: error: Slurm job %u lookup error: Job/step already completing or completed",
             mine);
    expect_error(&r, 255, line);
    result_free(&r);
}

static void test_unwritable_paths(void **state)
{
    unsigned id = running_job(NOBODY, "n1");
    char job[16], src[600], theirs[600];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "unw.src");
    make_source(src, 1, 0644);
    struct result r = SBCAST_AS(NOBODY, "--jobid", job, src, "/etc/tessera-sbcast-x");
    expect_error(&r, EACCES, "sbcast: error: REQUEST_FILE_BCAST(n1): Permission denied");
    result_free(&r);
    struct stat st;
    assert_int_equal(lstat("/etc/tessera-sbcast-x", &st), -1);
    /* another user's file in a shared folder, even with -f */
    path_in(theirs, sizeof(theirs), shared, "theirs");
    assert_int_equal(harness_write_file(theirs, "root's\n", 0644), 0);
    r = SBCAST_AS(NOBODY, "-f", "--jobid", job, src, theirs);
    expect_error(&r, EACCES, "sbcast: error: REQUEST_FILE_BCAST(n1): Permission denied");
    result_free(&r);
    char *text = harness_read_file(theirs);
    assert_string_equal(text, "root's\n");
    free(text);
    cancel_job(id);
}

/* A link planted where the file goes (by root, the shared folder's owner: the kernel's
 * protected_symlinks would let the user follow it) is not followed, even with -f: the
 * file it points at, which the user could write, stays as it was. */
static void test_planted_symlink_not_followed(void **state)
{
    unsigned id = running_job(NOBODY, "n1");
    char job[16], src[600], target[600], link[600];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "link.src");
    path_in(target, sizeof(target), shared, "victim");
    path_in(link, sizeof(link), shared, "link.dst");
    make_source(src, 1, 0644);
    assert_int_equal(harness_write_file(target, "victim's\n", 0666), 0);
    assert_int_equal(chmod(target, 0666), 0);
    assert_int_equal(symlink(target, link), 0);
    struct result r = SBCAST_AS(NOBODY, "--jobid", job, src, link);
    expect_error(&r, EEXIST, "sbcast: error: REQUEST_FILE_BCAST(n1): File exists");
    result_free(&r);
    r = SBCAST_AS(NOBODY, "-f", "--jobid", job, src, link);
    expect_error(&r, ELOOP,
                 "sbcast: error: REQUEST_FILE_BCAST(n1): Too many levels of symbolic links");
    result_free(&r);
    char *text = harness_read_file(target);
    assert_string_equal(text, "victim's\n");
    free(text);
    cancel_job(id);
}

static void test_file_too_large(void **state)
{
    unsigned id = running_job(NOBODY, "n1");
    char job[16], src[600], dst[600];
    snprintf(job, sizeof(job), "%u", id);
    path_in(src, sizeof(src), outdir, "big.src");
    path_in(dst, sizeof(dst), shared, "big.dst");
    make_source(src, 40000, 0644); /* 1.28 MB, SbcastMaxFileMB=1 */
    struct result r = SBCAST_AS(NOBODY, "-s", "512k", "--jobid", job, src, dst);
    expect_error(&r, EFBIG, "sbcast: error: REQUEST_FILE_BCAST(n1): File too large");
    result_free(&r);
    struct stat st;
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, 1 << 20); /* the blocks within the limit, nothing beyond */
    cancel_job(id);
}

/* ------------------------------------------------------------------------------------ */
/* forged and replayed requests, straight to the node daemons */

/* One request to port as uid (0: this process; else a child that became uid): the
 * answer's error code (0: none; -1: no answer) and the file errnum into *errnum. */
static int call_as(uid_t uid, uint16_t port, const Tessera__Request *req, int *errnum,
                   Tessera__Response **keep)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = uid ? fork() : 0;
    int res[2] = {-1, 0};
    if (pid == 0) {
        if (!uid || (!setgroups(0, NULL) && !setgid(uid) && !setuid(uid))) {
            char name[64];
            struct rpc_client_config cfg = {
                .host = "127.0.0.1", .port = port, .munge_socket = cluster.munge.socket,
                .target = harness_daemon_name(&cluster, port, name, sizeof(name)),
                .timeout_ms = 10000};
            struct rpc_client *cli = NULL;
            Tessera__Response *resp = NULL;
            if (rpc_client_connect(&cfg, &cli) == TS_OK &&
                rpc_client_call(cli, req, &resp) == TS_OK) {
                res[0] = resp->error ? (int)resp->error->code : 0;
                res[1] = resp->file_bcast ? resp->file_bcast->errnum : 0;
            }
            rpc_client_close(cli);
            if (keep && !uid)
                *keep = resp;
            else if (resp)
                tessera__response__free_unpacked(resp, NULL);
        }
        if (uid) {
            if (write(fds[1], res, sizeof(res)) != sizeof(res))
                _exit(1);
            _exit(0);
        }
    } else {
        assert_int_equal(read(fds[0], res, sizeof(res)), sizeof(res));
        waitpid(pid, NULL, 0);
    }
    close(fds[0]);
    close(fds[1]);
    if (errnum)
        *errnum = res[1];
    return res[0];
}

static Tessera__Response *bcast_cred(unsigned id)
{
    char job[16];
    snprintf(job, sizeof(job), "%u", id);
    Tessera__BcastCredRequest bc = TESSERA__BCAST_CRED_REQUEST__INIT;
    bc.job_id = job;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_BCAST_CRED;
    req.bcast_cred = &bc;
    Tessera__Response *resp = NULL;
    assert_int_equal(call_as(0, cluster.ctld_port, &req, NULL, &resp), 0);
    assert_non_null(resp->bcast_cred);
    return resp;
}

/* A block of path with credential and signature, sent to node i as uid. */
static int send_block(uid_t uid, int node, ProtobufCBinaryData cred, ProtobufCBinaryData sig,
                      const char *path, int *errnum)
{
    Tessera__FileBcastRequest fb = TESSERA__FILE_BCAST_REQUEST__INIT;
    fb.credential = cred;
    fb.signature = sig;
    fb.path = (char *)path;
    fb.mode = 0644;
    fb.data.data = (uint8_t *)"forged\n";
    fb.data.len = 7;
    fb.last = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_FILE_BCAST;
    req.file_bcast = &fb;
    return call_as(uid, cluster.nodes[node - 1].port, &req, errnum, NULL);
}

static void test_forged_and_replayed_credentials(void **state)
{
    unsigned id = running_job(NOBODY, "n1");
    Tessera__Response *resp = bcast_cred(id);
    Tessera__BcastCredResponse *bc = resp->bcast_cred;
    char dst[600];
    path_in(dst, sizeof(dst), shared, "forged.dst");
    int errnum = -1;

    /* a byte of the credential changed (the uid, say): the signature fails */
    uint8_t *copy = malloc(bc->credential.len);
    assert_non_null(copy);
    memcpy(copy, bc->credential.data, bc->credential.len);
    copy[bc->credential.len / 2] ^= 1;
    ProtobufCBinaryData flipped = {.len = bc->credential.len, .data = copy};
    assert_int_equal(send_block(NOBODY, 1, flipped, bc->signature, dst, &errnum), TS_ECRED_INVALID);
    free(copy);

    /* a step credential of the same job, signed by the same key, is no broadcast one */
    Tessera__StepComponentRequest comp = TESSERA__STEP_COMPONENT_REQUEST__INIT;
    Tessera__StepComponentRequest *comps[] = {&comp};
    Tessera__StepCreateRequest sc = TESSERA__STEP_CREATE_REQUEST__INIT;
    sc.job_id = id;
    sc.components = comps;
    sc.n_components = 1;
    sc.name = (char *)"x";
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_CREATE;
    req.step_create = &sc;
    Tessera__Response *step = NULL;
    assert_int_equal(call_as(0, cluster.ctld_port, &req, NULL, &step), 0);
    assert_int_equal(send_block(NOBODY, 1, step->step_create->credential,
                                step->step_create->signature, dst, &errnum),
                     TS_ECRED_INVALID);
    tessera__response__free_unpacked(step, NULL);

    /* another uid with nobody's credential; a node the credential does not name */
    assert_int_equal(send_block(NOBODY - 1, 1, bc->credential, bc->signature, dst, &errnum),
                     TS_EPERM);
    assert_int_equal(send_block(NOBODY, 2, bc->credential, bc->signature, dst, &errnum),
                     TS_ECRED_INVALID);
    /* a relative path is refused; nothing written so far */
    assert_int_equal(send_block(NOBODY, 1, bc->credential, bc->signature, "rel", &errnum), 0);
    assert_int_equal(errnum, EINVAL);
    struct stat st;
    assert_int_equal(lstat(dst, &st), -1);

    /* the genuine credential works */
    assert_int_equal(send_block(NOBODY, 1, bc->credential, bc->signature, dst, &errnum), 0);
    assert_int_equal(errnum, 0);
    assert_int_equal(lstat(dst, &st), 0);
    assert_int_equal(st.st_uid, NOBODY);
    assert_int_equal(unlink(dst), 0);

    /* kept across a restart of the node daemon: refused there (it cannot know what the
     * credential did before), once the clock has left the credential's second */
    while (time(NULL) <= bc->cred->issued)
        usleep(50000);
    assert_int_equal(harness_noded_stop(&cluster, 1, SIGTERM), 0);
    assert_int_equal(harness_noded_start(&cluster, 1), 0);
    /* no answer while the daemon starts listening, and "Invalid job credential" until it
     * has the controller's key (registration) */
    int code = -1;
    for (int i = 0; i < 200 && (code == -1 || code == TS_ECRED_INVALID); i++)
        if ((code = send_block(NOBODY, 1, bc->credential, bc->signature, dst, &errnum)) == -1 ||
            code == TS_ECRED_INVALID)
            usleep(50000);
    assert_int_equal(code, TS_ECRED_REPLAYED);
    assert_int_equal(lstat(dst, &st), -1);
    tessera__response__free_unpacked(resp, NULL);

    /* a credential taken now, used once the job has ended: revoked on the node */
    resp = bcast_cred(id);
    bc = resp->bcast_cred;
    cancel_job(id);
    wait_for(id, "%T", "CANCELLED\n", 20);
    assert_int_equal(send_block(NOBODY, 1, bc->credential, bc->signature, dst, &errnum),
                     TS_ECRED_REVOKED);
    assert_int_equal(lstat(dst, &st), -1);
    tessera__response__free_unpacked(resp, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_nodes_as_user),
        cmocka_unit_test(test_admin_writes_as_the_job_user),
        cmocka_unit_test(test_het_component),
        cmocka_unit_test(test_other_users_job_refused),
        cmocka_unit_test(test_unwritable_paths),
        cmocka_unit_test(test_planted_symlink_not_followed),
        cmocka_unit_test(test_file_too_large),
        cmocka_unit_test(test_forged_and_replayed_credentials),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
