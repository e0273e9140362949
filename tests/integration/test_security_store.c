/* The controller's state attacked, and a step's PMI space flooded, on a one-node cluster
 * whose StateSaveLocation is a small tmpfs the test mounts:
 *
 * - a full disk: a completed --requeue job must neither come back RUNNING after a
 *   restart nor run twice; submissions get a clear error; a controller stopped while
 *   commits fail gives up loudly; once space is back everything commits again;
 * - a cancel's SIGTERM reaches the job only after the cancel is durable (kill -9 during
 *   submission bursts is test_durability's);
 * - damaged copies of a real state (truncated, zero-length) are refused in one line with
 *   exit status 1, no SIGBUS, while a fresh folder still starts a new cluster;
 * - a task that puts PMI keys without end is refused, and its step daemon survives.
 *
 * To make a commit need new space deterministically on a full disk, the test holds an
 * LMDB read transaction on the controller's environment (as any reader may): LMDB cannot
 * reuse pages freed after it began, so rewriting a job record of a megabyte must grow the
 * file, which the full tmpfs refuses.
 */
#include "cluster.h"

#include "common/util/errors.h"
#include "ctld/store_file.h"
#include "noded/pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NOBODY 65534
#define TMPFS_MB 16
#define FAILING_TEXT "store: cannot commit"

static struct harness_cluster cluster;
static char outdir[512];
static int have_tmpfs;

static const char *conf_extra(char *buf, size_t len)
{
    char nodes[512];
    harness_node_lines(&cluster, 1, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(buf, len,
             "NodedTimeout=6\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n"
             "StateMinFreeMB=2\n%sPartitionName=debug Nodes=n1 Default=YES "
             "MaxTime=UNLIMITED\n",
             nodes);
    return buf;
}

static int group_setup(void **state)
{
    (void)state;
    char extra[2048];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    mkdir(cluster.state, 0700);
    char opts[64];
    snprintf(opts, sizeof(opts), "size=%dm,mode=0700", TMPFS_MB);
    have_tmpfs = mount("tmpfs", cluster.state, "tmpfs", 0, opts) == 0;
    if (!have_tmpfs)
        fprintf(stderr, "cannot mount a tmpfs on %s (%s): the disk-full tests are skipped\n",
                cluster.state, strerror(errno));
    if (harness_cluster_write_conf(&cluster, conf_extra(extra, sizeof(extra))))
        return -1;
    return harness_cluster_start(&cluster, 1, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_ctld_stop(&cluster, SIGKILL); /* before the tmpfs goes */
    harness_noded_stop(&cluster, 1, SIGKILL);
    harness_kill_leftovers();
    if (have_tmpfs)
        umount2(cluster.state, MNT_DETACH);
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* helpers */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void out_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", outdir, name);
}

/* Occurrences of needle in the controller's log (all its runs: the file is appended). */
static int log_count(const char *needle)
{
    char *log = harness_read_file(cluster.ctld_log);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    free(log);
    return n;
}

static void wait_log(const char *needle, int count, int seconds)
{
    uint64_t end = now_ms() + (uint64_t)seconds * 1000u;
    while (log_count(needle) < count) {
        if (now_ms() > end) {
            char *log = harness_read_file(cluster.ctld_log);
            fail_msg("waited for '%s' %d times in the controller's log:\n%s", needle, count,
                     log ? log : "");
        }
        usleep(50000);
    }
}

static int file_lines(const char *path)
{
    char *text = harness_read_file(path);
    int n = count_lines(text);
    free(text);
    return n;
}

static void wait_lines(const char *path, int count, int seconds)
{
    uint64_t end = now_ms() + (uint64_t)seconds * 1000u;
    while (file_lines(path) < count) {
        if (now_ms() > end)
            fail_msg("waited for %d lines in %s, found %d", count, path, file_lines(path));
        usleep(50000);
    }
}

/* A batch script padded with pad bytes of comments before body: its job record is that
 * big, and every rewrite of it needs as many fresh pages. */
static void write_script(const char *path, size_t pad, const char *body)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/bash\n", f);
    static const char line[] =
        "# padding: this job's record is big, so that rewriting it needs fresh pages ---\n";
    for (size_t n = 0; n < pad; n += sizeof(line) - 1)
        fputs(line, f);
    fputs(body, f);
    fclose(f);
    chmod(path, 0755);
}

/* A read transaction on the controller's environment, keeping pages freed after it
 * from reuse. */
struct pin {
    MDB_env *env;
    MDB_txn *txn;
};

static void pin_open(struct pin *p)
{
    p->env = NULL;
    assert_int_equal(mdb_env_create(&p->env), 0);
    assert_int_equal(mdb_env_set_maxdbs(p->env, 16), 0);
    assert_int_equal(mdb_env_open(p->env, cluster.state, MDB_RDONLY, 0600), 0);
    assert_int_equal(mdb_txn_begin(p->env, NULL, MDB_RDONLY, &p->txn), 0);
}

static void pin_close(struct pin *p)
{
    if (!p->env)
        return;
    if (p->txn)
        mdb_txn_abort(p->txn);
    mdb_env_close(p->env);
    p->env = NULL;
    p->txn = NULL;
}

/* The one pin a test holds, closed by the test's teardown should it fail. */
static struct pin pin;

static void filler_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/filler", cluster.state);
}

/* Fill the tmpfs to the last page. */
static void fill_disk(void)
{
    char path[512];
    filler_path(path, sizeof(path));
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    static char block[1 << 16];
    while (write(fd, block, sizeof(block)) > 0)
        ;
    while (write(fd, block, 512) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    close(fd);
}

static void free_disk(void)
{
    char path[512];
    filler_path(path, sizeof(path));
    assert_int_equal(unlink(path), 0);
}

/* After each test, even a failed one: no pin, no filler, a controller serving. */
static int test_teardown(void **state)
{
    (void)state;
    char path[512];
    pin_close(&pin);
    filler_path(path, sizeof(path));
    unlink(path);
    if (cluster.ctld <= 0)
        harness_ctld_start(&cluster);
    return 0;
}

static void expect_refused(const char *text)
{
    struct result r = RUN("sbatch", "-o", "/dev/null", "--wrap=true");
    if (r.rc == 0 || !r.err || !strstr(r.err, text))
        fail_msg("sbatch: exit %d, stderr '%s'; wanted '%s'", r.rc, r.err, text);
    if (!has_prefix_line(r.err, "sbatch: error: "))
        fail_msg("not Slurm's error line: %s", r.err);
    result_free(&r);
}

/* Submit a job held (args: sbatch's, with -H first), pin the state, release the job and
 * wait until it runs: every rewrite of its record from then on needs fresh pages. */
static unsigned run_pinned(const char *const args[])
{
    unsigned id = cmdcheck_submit(&cluster, outdir, args);
    pin_open(&pin);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scontrol", "release", sid);
    expect_ok(&r);
    result_free(&r);
    wait_for(id, "%T", "RUNNING\n", 20);
    return id;
}

/* ------------------------------------------------------------------------------------ */
/* a full disk */

/* How often the log says job id started. */
static int starts_logged(unsigned id)
{
    char text[64];
    snprintf(text, sizeof(text), "job %u started on", id);
    return log_count(text);
}

/* A --requeue job ends while nothing can be stored. Before, its end was answered with an
 * error that its node daemon took for an acknowledgement, while the controller's memory
 * said COMPLETED and the disk RUNNING: after a restart the job was found gone from its
 * node, requeued, and ran a second time. And the job waiting for its CPUs was started,
 * its start failed to commit, it was requeued and started again, thousands of times. */
static void test_full_disk_requeue_job_ends_once(void **state)
{
    (void)state;
    if (!have_tmpfs)
        skip();
    char script[600], runs[600], go[600], body[2048], waiting[600];
    out_path(script, sizeof(script), "j1.sh");
    out_path(runs, sizeof(runs), "j1.runs");
    out_path(go, sizeof(go), "j1.go");
    out_path(waiting, sizeof(waiting), "j3.runs");
    snprintf(body, sizeof(body),
             "echo run >> %s\nwhile [ ! -e %s ]; do sleep 0.1; done\nexit 0\n", runs, go);
    write_script(script, 128u << 10, body);
    unsigned id = run_pinned((const char *const[]){"-H", "--requeue", "-c4", "-o", "/dev/null",
                                                   script, NULL});
    wait_lines(runs, 1, 20);
    snprintf(body, sizeof(body), "--wrap=echo ran >> %s", waiting);
    unsigned next = SUBMIT("-c4", "-o", "/dev/null", body); /* waits for J1's CPUs */
    wait_for(next, "%T %r", "PENDING Resources\n", 20);

    fill_disk();
    expect_refused("Too little free disk space for the controller's state");
    /* the job ends; its end must be durable before anyone hears of it */
    assert_int_equal(harness_write_file(go, "", 0644), 0);
    wait_log(FAILING_TEXT, 1, 20);
    expect_refused("State store cannot commit; changes are refused until it can");
    struct result r = RUN("squeue", "-h", "-o", "%i"); /* queries still answer */
    expect_ok(&r);
    result_free(&r);

    /* stopped now: one more try, then it gives up on what nobody was told */
    int status = harness_ctld_stop(&cluster, SIGTERM);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_int_equal(log_count("store: giving up"), 1);

    /* started again, still full: the job is RUNNING as the disk says, and its node
     * daemon, which got no answer, sends the end again */
    assert_int_equal(harness_ctld_start(&cluster), 0);
    wait_log(FAILING_TEXT, 2, 30);

    pin_close(&pin);
    free_disk();
    wait_log("store: commits work again", 1, 20);
    wait_for(id, "%T", "COMPLETED\n", 20);
    unsigned after = SUBMIT("-o", "/dev/null", "--wrap=true");
    wait_for(after, "%T", "COMPLETED\n", 20);

    status = harness_ctld_stop(&cluster, SIGTERM);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char *st = query(id, "%T");
    assert_string_equal(st, "COMPLETED\n");
    free(st);
    assert_int_equal(harness_wait_nodes(&cluster, 1, 15000), 0);
    st = query(id, "%T");
    assert_string_equal(st, "COMPLETED\n"); /* the node's registration changed nothing */
    free(st);
    assert_int_equal(file_lines(runs), 1); /* it ran once */
    st = query(after, "%T");
    assert_string_equal(st, "COMPLETED\n");
    free(st);
    /* the waiting job ran once: a start that could not be stored was neither requeued
     * nor tried again (it may show twice in the log: once in memory before the restart,
     * given up there, and once after) */
    st = query(next, "%T");
    assert_string_equal(st, "COMPLETED\n");
    free(st);
    assert_int_equal(file_lines(waiting), 1);
    assert_string_equal(show_field(next, "Restarts"), "0");
    if (starts_logged(next) > 2)
        fail_msg("job %u started %d times", next, starts_logged(next));
}

static int read_beat(const char *path)
{
    char *text = harness_read_file(path);
    int n = text ? atoi(text) : 0;
    free(text);
    return n;
}

/* A cancel accepted just as commits start failing: its SIGTERM must wait for the cancel
 * to be durable. Were it sent first, a controller restarted meanwhile would find the job
 * running nowhere and end or requeue it for a failure. */
static void test_terminate_leaves_after_its_commit(void **state)
{
    (void)state;
    if (!have_tmpfs)
        skip();
    char script[600], beat[600], term[600], body[4096], slog[600];
    out_path(script, sizeof(script), "j2.sh");
    out_path(beat, sizeof(beat), "j2.beat");
    out_path(term, sizeof(term), "j2.term");
    out_path(slog, sizeof(slog), "j2.scancel");
    /* bigger than any record freed before, so that no freed run of pages fits it */
    snprintf(body, sizeof(body),
             "trap 'echo term >> %s; exit 0' TERM\n"
             "n=0\nwhile :; do n=$((n+1)); echo $n > %s.new; mv -f %s.new %s; sleep 0.1; done\n",
             term, beat, beat, beat);
    write_script(script, 1u << 20, body);
    unsigned id = run_pinned((const char *const[]){"-H", "-o", "/dev/null", script, NULL});
    uint64_t end = now_ms() + 20000;
    while (read_beat(beat) < 1)
        assert_true(now_ms() < end);

    fill_disk();
    int failures = log_count(FAILING_TEXT);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    pid_t scancel = harness_cmd_spawn(&cluster, "scancel", (const char *const[]){sid, NULL},
                                      slog);
    assert_true(scancel > 0);
    wait_log(FAILING_TEXT, failures + 1, 20);
    /* the job goes on beating (a SIGTERM would have ended it at once) */
    int b0 = read_beat(beat);
    end = now_ms() + 20000;
    while (read_beat(beat) < b0 + 10) {
        if (now_ms() > end || access(term, F_OK) == 0)
            fail_msg("the job was signalled before its cancel was stored");
        usleep(50000);
    }
    assert_int_not_equal(access(term, F_OK), 0);
    assert_int_equal(waitpid(scancel, NULL, WNOHANG), 0); /* not answered either */

    pin_close(&pin);
    free_disk();
    int status = harness_wait(scancel, 30000);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    wait_lines(term, 1, 20);
    wait_for(id, "%T", "CANCELLED\n", 20);
}

/* ------------------------------------------------------------------------------------ */
/* damaged state files */

/* A configuration like the cluster's with another StateSaveLocation and port. */
static void write_conf_for(const char *conf, const char *state_dir, uint16_t port)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "ClusterName=itest\nCtldHost=127.0.0.1\nCtldPort=%u\nStateSaveLocation=%s\n"
             "SpoolDir=%s/spool\nAuthInfo=socket=%s\nSlurmUser=%u\nPluginDir=%s\n"
             "NodeName=n1 NodeAddr=127.0.0.1 Port=%u CPUs=4 RealMemory=2000\n"
             "PartitionName=debug Nodes=n1 Default=YES\n",
             port, state_dir, cluster.dir, cluster.munge.socket, (unsigned)geteuid(),
             TESSERA_LIB_DIR, harness_free_port());
    assert_int_equal(harness_write_file(conf, text, 0644), 0);
}

/* tessera-ctld -D on state_dir; its exit status (-1: it was still running after 10 s,
 * and killed) and stderr. */
static int run_ctld_on(const char *state_dir, char **err)
{
    char conf[600], bin[512];
    snprintf(conf, sizeof(conf), "%s/damaged.conf", cluster.dir);
    write_conf_for(conf, state_dir, harness_free_port());
    snprintf(bin, sizeof(bin), "%s/tessera-ctld", TESSERA_BIN_DIR);
    char *argv[] = {bin, (char *)"-D", (char *)"-f", conf, NULL};
    return harness_run(argv, NULL, NULL, err, 10000);
}

static void copy_file(const char *from, const char *to, off_t len)
{
    char *argv[] = {(char *)"/bin/cp", (char *)from, (char *)to, NULL};
    assert_int_equal(harness_run(argv, NULL, NULL, NULL, 10000), 0);
    if (len >= 0)
        assert_int_equal(truncate(to, len), 0);
}

/* A copy of the cluster's state in a new folder, data.mdb cut to len (-1: whole). */
static void damaged_copy(const char *name, off_t len, char *dir, size_t dlen)
{
    char from[600], to[600];
    snprintf(dir, dlen, "%s/%s", cluster.dir, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(from, sizeof(from), "%s/%s", cluster.state, STORE_FILE_DATA);
    snprintf(to, sizeof(to), "%s/%s", dir, STORE_FILE_DATA);
    copy_file(from, to, len);
    snprintf(from, sizeof(from), "%s/%s", cluster.state, STORE_FILE_MARKER);
    snprintf(to, sizeof(to), "%s/%s", dir, STORE_FILE_MARKER);
    copy_file(from, to, -1);
}

static void expect_refused_start(const char *dir, const char *words)
{
    char *err = NULL;
    int rc = run_ctld_on(dir, &err);
    char want[700];
    snprintf(want, sizeof(want), "tessera-ctld: error: the state in %s is damaged: ", dir);
    if (rc != 1 || !err || !has_prefix_line(err, want) || !strstr(err, words))
        fail_msg("tessera-ctld on %s: status %d (a SIGBUS is %d), stderr:\n%s", dir, rc,
                 128 + SIGBUS, err ? err : "");
    free(err);
}

static void test_damaged_state_refused(void **state)
{
    (void)state;
    /* a real state, at rest */
    unsigned id = SUBMIT("-H", "-o", "/dev/null", "--wrap=true");
    assert_true(id > 0);
    int status = harness_ctld_stop(&cluster, SIGTERM);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char data[600];
    snprintf(data, sizeof(data), "%s/%s", cluster.state, STORE_FILE_DATA);
    struct stat stt;
    assert_int_equal(stat(data, &stt), 0);

    char dir[600];
    damaged_copy("truncated", stt.st_size / 2, dir, sizeof(dir));
    expect_refused_start(dir, "cut short");
    damaged_copy("truncated-metas", 8192, dir, sizeof(dir));
    expect_refused_start(dir, "cut short");
    damaged_copy("zero-length", 0, dir, sizeof(dir));
    expect_refused_start(dir, "remove");
    struct stat after;
    char zero[700];
    snprintf(zero, sizeof(zero), "%s/%s", dir, STORE_FILE_DATA);
    assert_int_equal(stat(zero, &after), 0);
    assert_int_equal(after.st_size, 0); /* not turned into a new state */

    /* a fresh folder is a new cluster */
    char fresh[600], conf[600], bin[512], conf_env[700], marker[700];
    snprintf(fresh, sizeof(fresh), "%s/fresh", cluster.dir);
    assert_int_equal(mkdir(fresh, 0700), 0);
    snprintf(conf, sizeof(conf), "%s/fresh.conf", cluster.dir);
    write_conf_for(conf, fresh, harness_free_port());
    snprintf(bin, sizeof(bin), "%s/tessera-ctld", TESSERA_BIN_DIR);
    char log[600];
    snprintf(log, sizeof(log), "%s/fresh.log", cluster.dir);
    char *argv[] = {bin, (char *)"-D", (char *)"-f", conf, NULL};
    pid_t pid = harness_spawn(argv, NULL, log);
    assert_true(pid > 0);
    snprintf(conf_env, sizeof(conf_env), "TESSERA_CONF=%s", conf);
    char ping[512];
    snprintf(ping, sizeof(ping), "%s/scontrol", TESSERA_BIN_DIR);
    char *ping_argv[] = {ping, (char *)"ping", NULL};
    char *ping_env[] = {conf_env, NULL};
    uint64_t end = now_ms() + 10000;
    while (harness_run(ping_argv, ping_env, NULL, NULL, 5000) != 0) {
        assert_true(now_ms() < end);
        usleep(50000);
    }
    snprintf(marker, sizeof(marker), "%s/%s", fresh, STORE_FILE_MARKER);
    assert_int_equal(access(marker, F_OK), 0);
    status = harness_stop(pid, SIGTERM, 10000);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* and the cluster's own state still serves */
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char *st = query(id, "%T");
    assert_string_equal(st, "PENDING\n");
    free(st);
}

/* ------------------------------------------------------------------------------------ */
/* the PMI key space */

/* A raw PMI-1 client: puts 1000-byte values until refused, then shows that the server
 * still answers (get, barrier) and how much memory its step daemon holds. */
static const char pmi_flood_source[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
    "static int fd;\nstatic char in[1 << 16];\nstatic size_t have;\n"
    "static int line(char *out, size_t cap)\n{\n"
    "    for (;;) {\n"
    "        char *nl = memchr(in, '\\n', have);\n"
    "        if (nl) {\n"
    "            size_t n = (size_t)(nl - in), k = n < cap ? n : cap - 1;\n"
    "            memcpy(out, in, k);\n"
    "            out[k] = 0;\n"
    "            have -= n + 1;\n"
    "            memmove(in, nl + 1, have);\n"
    "            return 0;\n"
    "        }\n"
    "        ssize_t r = read(fd, in + have, sizeof(in) - have);\n"
    "        if (r <= 0)\n"
    "            return -1;\n"
    "        have += (size_t)r;\n"
    "    }\n}\n"
    "static int ask(const char *req, char *out, size_t cap)\n{\n"
    "    size_t len = strlen(req), off = 0;\n"
    "    while (off < len) {\n"
    "        ssize_t w = write(fd, req + off, len - off);\n"
    "        if (w <= 0)\n"
    "            return -1;\n"
    "        off += (size_t)w;\n"
    "    }\n"
    "    return line(out, cap);\n}\n"
    "static long parent_rss_kb(void)\n{\n"
    "    char path[64], l[256];\n"
    "    long kb = -1;\n"
    "    snprintf(path, sizeof(path), \"/proc/%d/status\", (int)getppid());\n"
    "    FILE *f = fopen(path, \"r\");\n"
    "    while (f && fgets(l, sizeof(l), f))\n"
    "        if (!strncmp(l, \"VmRSS:\", 6))\n"
    "            kb = atol(l + 6);\n"
    "    if (f)\n"
    "        fclose(f);\n"
    "    return kb;\n}\n"
    "int main(void)\n{\n"
    "    static char ans[4096], req[2048], kvs[300], value[1001], refusal[256] = \"none\";\n"
    "    const char *e = getenv(\"PMI_FD\");\n"
    "    if (!e)\n"
    "        return 2;\n"
    "    fd = atoi(e);\n"
    "    if (ask(\"cmd=init pmi_version=1 pmi_subversion=1\\n\", ans, sizeof(ans)) ||\n"
    "        ask(\"cmd=get_my_kvsname\\n\", ans, sizeof(ans)))\n"
    "        return 3;\n"
    "    char *k = strstr(ans, \"kvsname=\");\n"
    "    if (!k)\n"
    "        return 4;\n"
    "    snprintf(kvs, sizeof(kvs), \"%s\", k + 8);\n"
    "    kvs[strcspn(kvs, \" \")] = 0;\n"
    "    memset(value, 'v', 1000);\n"
    "    long accepted = 0;\n"
    "    for (long i = 0; i < 100000; i++) {\n"
    "        snprintf(req, sizeof(req), \"cmd=put kvsname=%s key=k%06ld value=%s\\n\", kvs, i,\n"
    "                 value);\n"
    "        if (ask(req, ans, sizeof(ans)))\n"
    "            return 5;\n"
    "        if (strstr(ans, \"rc=0\")) {\n"
    "            accepted++;\n"
    "            continue;\n"
    "        }\n"
    "        char *m = strstr(ans, \"msg=\");\n"
    "        snprintf(refusal, sizeof(refusal), \"%s\", m ? m + 4 : ans);\n"
    "        break;\n"
    "    }\n"
    "    long rss = parent_rss_kb();\n"
    "    snprintf(req, sizeof(req), \"cmd=get kvsname=%s key=k000000\\n\", kvs);\n"
    "    if (ask(req, ans, sizeof(ans)))\n"
    "        return 6;\n"
    "    int got = strstr(ans, \"rc=0 value=vvv\") != NULL;\n"
    "    if (ask(\"cmd=barrier_in\\n\", ans, sizeof(ans)))\n"
    "        return 7;\n"
    "    int barrier = strstr(ans, \"barrier_out rc=0\") != NULL;\n"
    "    if (ask(\"cmd=finalize\\n\", ans, sizeof(ans)))\n"
    "        return 8;\n"
    "    printf(\"accepted=%ld refusal=%s get=%d barrier=%d rss_kb=%ld\\n\", accepted, refusal,\n"
    "           got, barrier, rss);\n"
    "    return 0;\n}\n";

static void test_pmi_flood_refused(void **state)
{
    (void)state;
    char src[600], prog[600];
    out_path(src, sizeof(src), "pmi_flood.c");
    out_path(prog, sizeof(prog), "pmi_flood");
    assert_int_equal(harness_write_file(src, pmi_flood_source, 0644), 0);
    char *cc[] = {(char *)"/usr/bin/cc", (char *)"-O2", src, (char *)"-o", prog, NULL};
    char *err = NULL;
    int rc = harness_run(cc, NULL, NULL, &err, 60000);
    if (rc != 0)
        fail_msg("cc failed (%d): %s", rc, err);
    free(err);

    char *out = NULL;
    err = NULL;
    rc = harness_cmd_as(&cluster, NOBODY, "srun",
                        (const char *const[]){"-n1", "-D", "/tmp", prog, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("srun: exit %d\n%s\n%s", rc, out, err);
    long accepted = -1, rss = -1;
    int got = 0, barrier = 0;
    char refusal[64] = "";
    if (!out || sscanf(out, "accepted=%ld refusal=%63s get=%d barrier=%d rss_kb=%ld",
                       &accepted, refusal, &got, &barrier, &rss) != 5)
        fail_msg("unexpected output: %s / %s", out, err);
    /* keys of 7 bytes and values of 1000: the byte cap is reached first */
    long most = (long)(PMI_KVS_MAX_BYTES / 1007u);
    if (accepted < most - 1 || accepted > most || strcmp(refusal, "kvs_full"))
        fail_msg("%ld puts accepted (the cap allows %ld), then '%s'", accepted, most, refusal);
    assert_int_equal(got, 1);     /* the step daemon still answers */
    assert_int_equal(barrier, 1); /* and the capped space still fits a barrier */
    assert_true(rss > 0 && rss < 128 * 1024);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_full_disk_requeue_job_ends_once, test_teardown),
        cmocka_unit_test_teardown(test_terminate_leaves_after_its_commit, test_teardown),
        cmocka_unit_test_teardown(test_pmi_flood_refused, test_teardown),
        cmocka_unit_test_teardown(test_damaged_state_refused, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
