/* Attacks on the RPC layer of a live cluster, from the network (loopback only, bounded in
 * count and time), and what must hold meanwhile (docs/protocol.md, sections 3 and 6):
 *
 * - thousands of TCP connections that never authenticate, held open and reopened as the
 *   controller drops them, from many addresses: `scontrol ping` and `sbatch` keep
 *   working, the controller holds a bounded number of them, and its log stays small;
 *   the same with the controller short of file descriptors (its limit lowered with
 *   prlimit), where accept() fails with EMFILE;
 * - 40 connections whose first frame declares 16 MiB and streams it: refused at the
 *   header, and the controller's resident memory does not grow with them; a real first
 *   request over 64 KiB (a large batch script) still goes through;
 * - a credential made for one daemon presented to another that runs as the same uid:
 *   refused.
 */
#include "cluster.h"

#include "common/auth/auth.h"
#include "common/net/frame.h"
#include "common/net/wire.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define NOBODY 65534
#define FLOOD 3000            /* idle connections held open */
#define FLOOD_ADDRESSES 60    /* 127.0.0.2 ... : fewer than a host's cap from each */
#define REOPEN_PER_ROUND 200  /* the attacker's pace: connections reopened per 50 ms */
#define LOG_GROWTH_MAX (64u << 10)

static struct harness_cluster cluster;
static char outdir[400];

static int group_setup(void **state)
{
    /* the test's own descriptors: the flood needs a few thousand */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    return harness_cluster_up(&cluster, 2, "CPUs=2 RealMemory=1000", "MinJobAge=600\n", outdir,
                              sizeof(outdir));
}

static int group_teardown(void **state)
{
    int rc = harness_ctld_stop_clean(&cluster); /* under the sanitizers: leaks fail here */
    harness_cluster_fini(&cluster);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* the controller as /proc shows it */

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Descriptors the controller holds now. */
static int ctld_fds(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)cluster.ctld);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* VmRSS of the controller, in kB. */
static long ctld_rss_kb(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)cluster.ctld);
    char *text = harness_read_file(path);
    assert_non_null(text);
    const char *line = strstr(text, "\nVmRSS:");
    long kb = line ? strtol(line + 7, NULL, 10) : -1;
    free(text);
    return kb;
}

/* ------------------------------------------------------------------------------------ */
/* what legitimate users do meanwhile */

/* The end of the controller's log on stderr, before a failure. */
static void print_log_tail(void)
{
    char *log = harness_read_file(cluster.ctld_log);
    size_t len = log ? strlen(log) : 0;
    fprintf(stderr, "the controller's log ends:\n%s\n",
            log ? log + (len > 4000 ? len - 4000 : 0) : "");
    free(log);
}

static void expect_ping(void)
{
    const char *args[] = {"ping", NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, NOBODY, "scontrol", args, &out, &err);
    if (rc != 0 || !strstr(out, "is UP")) {
        print_log_tail();
        fail_msg("scontrol ping: exit %d: %s%s", rc, out ? out : "", err ? err : "");
    }
    free(out);
    free(err);
}

static void expect_sbatch(const char *script)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/job.sh", outdir);
    assert_int_equal(harness_write_file(path, script, 0644), 0);
    const char *args[] = {"--parsable", "-D", outdir, "-o", "/dev/null", path, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, NOBODY, "sbatch", args, &out, &err);
    if (rc != 0 || strtoul(out, NULL, 10) == 0) {
        print_log_tail();
        fail_msg("sbatch: exit %d: %s%s", rc, out ? out : "", err ? err : "");
    }
    free(out);
    free(err);
}

/* ------------------------------------------------------------------------------------ */
/* the attacker */

/* A non-blocking connection to port from source (any address of 127/8 is this host). */
static int open_from(uint16_t port, const char *source)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in src = {.sin_family = AF_INET};
    inet_pton(AF_INET, source, &src.sin_addr);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0 ||
        (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) != 0 && errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    return fd;
}

struct flood {
    uint16_t port;
    int fds[FLOOD];
    int stop;                /* set by the test */
    unsigned long dropped;   /* connections the controller closed (we open them again) */
    pthread_t thread;
};

static void flood_open(struct flood *f, int i)
{
    char source[32];
    snprintf(source, sizeof(source), "127.0.0.%d", 2 + i % FLOOD_ADDRESSES);
    f->fds[i] = open_from(f->port, source);
}

/* Hold FLOOD connections open without a word, reopening those the controller drops, at
 * a bounded pace, until stopped (15 s at most). */
static void *flood_run(void *arg)
{
    struct flood *f = arg;
    static struct pollfd p[FLOOD];
    for (int i = 0; i < FLOOD; i++)
        flood_open(f, i);
    time_t end = time(NULL) + 15;
    while (!__atomic_load_n(&f->stop, __ATOMIC_SEQ_CST) && time(NULL) < end) {
        for (int i = 0; i < FLOOD; i++)
            p[i] = (struct pollfd){.fd = f->fds[i], .events = POLLIN};
        poll(p, FLOOD, 50);
        int reopened = 0;
        for (int i = 0; i < FLOOD && reopened < REOPEN_PER_ROUND; i++) {
            char buf[256];
            if (f->fds[i] >= 0) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                if (recv(f->fds[i], buf, sizeof(buf), MSG_DONTWAIT) > 0)
                    continue; /* a refusal's words; the close follows */
                close(f->fds[i]);
                __atomic_add_fetch(&f->dropped, 1, __ATOMIC_SEQ_CST);
            }
            flood_open(f, i);
            reopened++;
        }
        if (!reopened)
            usleep(50000);
    }
    return NULL;
}

static void flood_start(struct flood *f)
{
    memset(f, 0, sizeof(*f));
    f->port = cluster.ctld_port;
    assert_int_equal(pthread_create(&f->thread, NULL, flood_run, f), 0);
}

static void flood_stop(struct flood *f)
{
    __atomic_store_n(&f->stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(f->thread, NULL);
    for (int i = 0; i < FLOOD; i++)
        if (f->fds[i] >= 0)
            close(f->fds[i]);
}

/* While the flood stands (the controller has begun dropping strangers: its limits are
 * reached): pings and submissions, a few rounds. */
static void serve_through(struct flood *f, int *max_fds)
{
    for (int i = 0; i < 200 && !__atomic_load_n(&f->dropped, __ATOMIC_SEQ_CST); i++)
        usleep(50000);
    assert_true(__atomic_load_n(&f->dropped, __ATOMIC_SEQ_CST) > 0);
    for (int round = 0; round < 3; round++) {
        expect_ping();
        expect_sbatch("#!/bin/sh\ntrue\n");
        int n = ctld_fds();
        if (n > *max_fds)
            *max_fds = n;
    }
}

/* Wait until the controller has let go of a stopped flood's connections. */
static void wait_fds_below(int n)
{
    for (int i = 0; i < 200 && ctld_fds() >= n; i++)
        usleep(50000);
    assert_true(ctld_fds() < n);
}

static void test_flood_of_idle_connections(void **state)
{
    long log_before = file_size(cluster.ctld_log);
    int base = ctld_fds();
    assert_true(base > 0);

    /* the controller with its descriptors: at most its cap of strangers, not thousands */
    struct flood *f = calloc(1, sizeof(*f));
    int max_fds = 0;
    flood_start(f);
    serve_through(f, &max_fds);
    flood_stop(f);
    print_message("flood: %lu dropped by the controller, at most %d descriptors there\n",
                  f->dropped, max_fds);
    assert_true(max_fds < base + RPC_DEFAULT_MAX_UNAUTH + 64);
    wait_fds_below(base + 16);

    /* the controller short of descriptors: accept() fails with EMFILE; it neither spins
     * nor shuts clients out */
    struct rlimit old, low;
    assert_int_equal(prlimit(cluster.ctld, RLIMIT_NOFILE, NULL, &old), 0);
    low.rlim_cur = (rlim_t)ctld_fds() + 150;
    low.rlim_max = old.rlim_max;
    assert_int_equal(prlimit(cluster.ctld, RLIMIT_NOFILE, &low, NULL), 0);
    max_fds = 0;
    flood_start(f);
    serve_through(f, &max_fds);
    flood_stop(f);
    assert_int_equal(prlimit(cluster.ctld, RLIMIT_NOFILE, &old, NULL), 0);
    print_message("short of descriptors: %lu dropped by the controller\n", f->dropped);
    free(f);

    long growth = file_size(cluster.ctld_log) - log_before;
    print_message("the controller's log grew by %ld bytes\n", growth);
    assert_true(growth >= 0 && growth < (long)LOG_GROWTH_MAX);
    char *log = harness_read_file(cluster.ctld_log);
    assert_non_null(strstr(log, "Too many open files")); /* EMFILE did happen, once said */
    free(log);
    expect_ping();
}

/* ------------------------------------------------------------------------------------ */
/* memory before authentication */

#define BIG_FRAMES 40
#define BIG_FRAME (16u << 20)

static void test_large_first_frames(void **state)
{
    long rss_before = ctld_rss_kb();
    int fds[BIG_FRAMES];
    size_t sent[BIG_FRAMES] = {0};
    uint8_t header[FRAME_HEADER_SIZE];
    frame_header_encode(header, BIG_FRAME);
    static uint8_t chunk[1u << 16];
    memset(chunk, 'x', sizeof(chunk));
    for (int i = 0; i < BIG_FRAMES; i++) {
        fds[i] = open_from(cluster.ctld_port, "127.0.0.1");
        assert_true(fds[i] >= 0);
    }
    /* each declares 16 MiB and streams all but its last byte, as fast as the controller
     * takes it, for 10 s at most; a send that fails means the controller closed it */
    const size_t whole = FRAME_HEADER_SIZE + BIG_FRAME - 1;
    int active = BIG_FRAMES;
    int done[BIG_FRAMES] = {0};
    time_t end = time(NULL) + 10;
    while (active > 0 && time(NULL) < end) {
        struct pollfd p[BIG_FRAMES];
        for (int i = 0; i < BIG_FRAMES; i++)
            p[i] = (struct pollfd){.fd = done[i] ? -1 : fds[i], .events = POLLOUT};
        poll(p, BIG_FRAMES, 100);
        for (int i = 0; i < BIG_FRAMES; i++) {
            if (done[i] || !p[i].revents)
                continue;
            const uint8_t *data = sent[i] < sizeof(header) ? header + sent[i] : chunk;
            size_t want = sent[i] < sizeof(header) ? sizeof(header) - sent[i]
                                                   : whole - sent[i];
            ssize_t n = send(fds[i], data, want < sizeof(chunk) ? want : sizeof(chunk),
                             MSG_NOSIGNAL);
            if (n > 0)
                sent[i] += (size_t)n;
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                close(fds[i]);
                fds[i] = -1;
            }
            if (fds[i] < 0 || sent[i] == whole) {
                done[i] = 1;
                active--;
            }
        }
    }
    long rss_during = ctld_rss_kb();
    size_t total = 0;
    int refused = 0;
    for (int i = 0; i < BIG_FRAMES; i++) {
        total += sent[i];
        refused += fds[i] < 0;
        if (fds[i] >= 0)
            close(fds[i]);
    }
    print_message("%zu MiB offered; the controller's VmRSS %ld kB before, %ld kB during\n",
                  total >> 20, rss_before, rss_during);
    assert_int_equal(refused, BIG_FRAMES);
    assert_true(rss_during - rss_before < 32 * 1024);

    /* a real first request over 64 KiB: the credential goes alone, the script follows */
    size_t len = 100u << 10;
    char *script = malloc(len + 64);
    strcpy(script, "#!/bin/sh\n");
    size_t off = strlen(script);
    while (off + 80 < len) {
        memcpy(script + off, "# padding to make the request larger than a handshake frame .......\n",
               68);
        off += 68;
    }
    strcpy(script + off, "true\n");
    expect_sbatch(script);
    free(script);
}

/* ------------------------------------------------------------------------------------ */
/* a credential for one daemon presented to another */

/* Send a first frame (a ping) whose credential names target, restricted to root (every
 * daemon here runs as root), to port; returns the refusal's code, or TS_OK when the
 * daemon took the credential and answered. */
static int present(uint16_t port, const char *target)
{
    struct wire_session session;
    wire_session_init(&session, WIRE_CLIENT, NULL);
    Tessera__PingRequest ping = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.id = 1;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &ping;
    size_t blen = tessera__request__get_packed_size(&req);
    uint8_t *body = malloc(blen);
    tessera__request__pack(&req, body);
    struct auth_client ac = {.socket = cluster.munge.socket, .server_uid = 0, .target = target};
    struct auth_frames frames;
    assert_int_equal(auth_seal_frames(&ac, 1, &session, body, blen, &frames), TS_OK);
    free(body);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
    uint8_t header[FRAME_HEADER_SIZE];
    frame_header_encode(header, frames.len[0]);
    assert_int_equal(send(fd, header, sizeof(header), MSG_NOSIGNAL), sizeof(header));
    assert_int_equal(send(fd, frames.payload[0], frames.len[0], MSG_NOSIGNAL),
                     (ssize_t)frames.len[0]);
    auth_frames_free(&frames);

    struct frame_reader r;
    frame_reader_init(&r, FRAME_DEFAULT_MAX);
    uint8_t buf[4096];
    while (!frame_reader_ready(&r)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 10000), 1);
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        assert_true(n > 0);
        size_t used = 0;
        assert_int_equal(frame_reader_feed(&r, buf, (size_t)n, &used), TS_OK);
    }
    close(fd);
    size_t len = 0;
    uint8_t *payload = frame_reader_take(&r, &len);
    Tessera__Envelope *env = NULL;
    assert_int_equal(wire_unpack(payload, len, &env), TS_OK);
    free(payload);
    int code = TS_OK;
    if (env->hmac.len == 0) { /* a refusal: no session */
        Tessera__Response *resp =
            tessera__response__unpack(NULL, env->body.len, env->body.data);
        code = (int)resp->error->code;
        tessera__response__free_unpacked(resp, NULL);
    } else {
        assert_int_equal(wire_verify(&session, env), TS_OK);
    }
    tessera__envelope__free_unpacked(env, NULL);
    return code;
}

static void test_credential_for_another_daemon(void **state)
{
    /* the controller and both node daemons run as root, so MUNGE's uid restriction does
     * not tell them apart; the name in the credential does */
    uint16_t n1 = cluster.nodes[0].port, n2 = cluster.nodes[1].port;
    assert_int_equal(present(n2, "itest/noded/n1"), TS_EAUTH_TARGET);
    assert_int_equal(present(cluster.ctld_port, "itest/noded/n1"), TS_EAUTH_TARGET);
    assert_int_equal(present(n1, HARNESS_CTLD_NAME), TS_EAUTH_TARGET);
    assert_int_equal(present(n1, "other/noded/n1"), TS_EAUTH_TARGET); /* another cluster */
    /* made for the right one, each is taken */
    assert_int_equal(present(n1, "itest/noded/n1"), TS_OK);
    assert_int_equal(present(n2, "itest/noded/n2"), TS_OK);
    assert_int_equal(present(cluster.ctld_port, HARNESS_CTLD_NAME), TS_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_credential_for_another_daemon),
        cmocka_unit_test(test_large_first_frames),
        cmocka_unit_test(test_flood_of_idle_connections),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
