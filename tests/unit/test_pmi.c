/* Unit tests for the PMI-1 server of the step daemon (noded/pmi.c): the test plays the
 * tasks, writing request lines into real socketpairs and reading the answers, while a
 * real event loop runs the module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "noded/pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEADLINE_MS 5000
#define MAX_TASKS 3
#define KVS "tessera.12.0"
#define STEP_SIZE 8  /* ranks of the whole step: the other nodes hold the rest */
#define FIRST_RANK 4 /* the global rank of this node's first task */

enum fence_mode {
    FENCE_RECORD,  /* only record the call; the test calls pmi_fence_done later */
    FENCE_AT_ONCE, /* a step on one node: done from within the callback */
    FENCE_DESTROY, /* the step ends from within the callback */
};

struct fx {
    struct loop *loop;
    struct pmi *pmi;
    int fd[MAX_TASKS]; /* the tasks' ends, -1 when not open */
    char rbuf[MAX_TASKS][16384];
    size_t rlen[MAX_TASKS];
    char line[16384];

    enum fence_mode fence_mode;
    int fences;
    uint32_t fence_seq;
    char fence_pairs[4096]; /* "k=v k=v" */

    int destroy_on_abort;
    int aborts;
    uint32_t abort_rank;
    int abort_code;
    char abort_msg[256];
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the callbacks ---------------------------------------------------------------- */

static void on_fence(void *arg, uint32_t seq, const struct pmi_kv *pairs, size_t n)
{
    struct fx *fx = arg;
    fx->fences++;
    fx->fence_seq = seq;
    fx->fence_pairs[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(fx->fence_pairs);
        snprintf(fx->fence_pairs + len, sizeof(fx->fence_pairs) - len, "%s%s=%s",
                 i ? " " : "", pairs[i].key, pairs[i].value);
    }
    if (fx->fence_mode == FENCE_AT_ONCE) {
        /* hand the module its own pairs back: they must stay valid while it merges */
        assert_int_equal(pmi_fence_done(fx->pmi, seq, pairs, n), TS_OK);
    } else if (fx->fence_mode == FENCE_DESTROY) {
        pmi_destroy(fx->pmi);
        fx->pmi = NULL;
    }
}

static void on_abort(void *arg, uint32_t rank, int exit_code, const char *msg)
{
    struct fx *fx = arg;
    fx->aborts++;
    fx->abort_rank = rank;
    fx->abort_code = exit_code;
    snprintf(fx->abort_msg, sizeof(fx->abort_msg), "%s", msg);
    if (fx->destroy_on_abort) {
        pmi_destroy(fx->pmi);
        fx->pmi = NULL;
    }
}

static const struct pmi_ops ops = {.fence = on_fence, .abort = on_abort};

/* ---- the fixture ---------------------------------------------------------------- */

static int setup(void **state)
{
    struct fx *fx = calloc(1, sizeof(*fx));
    if (!fx || !(fx->loop = loop_create())) {
        free(fx);
        return -1;
    }
    for (int i = 0; i < MAX_TASKS; i++)
        fx->fd[i] = -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fx *fx = *state;
    pmi_destroy(fx->pmi);
    for (int i = 0; i < MAX_TASKS; i++)
        if (fx->fd[i] >= 0)
            close(fx->fd[i]);
    loop_destroy(fx->loop);
    free(fx);
    return 0;
}

/* A module for ntasks local tasks (ranks FIRST_RANK...), each on a socketpair, with KVS
 * caps (0: the defaults). */
static void start_capped(struct fx *fx, int ntasks, const struct pmi_kv *preset,
                         size_t npreset, size_t max_pairs, size_t max_bytes)
{
    struct pmi_config cfg = {.size = STEP_SIZE, .universe_size = STEP_SIZE, .kvsname = KVS,
                             .local_tasks = (size_t)ntasks, .preset = preset,
                             .npreset = npreset, .max_pairs = max_pairs,
                             .max_bytes = max_bytes};
    assert_int_equal(pmi_create(fx->loop, &cfg, &ops, fx, &fx->pmi), TS_OK);
    for (int i = 0; i < ntasks; i++) {
        int sv[2];
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(pmi_add_client(fx->pmi, sv[0], FIRST_RANK + (uint32_t)i), TS_OK);
        fx->fd[i] = sv[1];
    }
}

static void start(struct fx *fx, int ntasks, const struct pmi_kv *preset, size_t npreset)
{
    start_capped(fx, ntasks, preset, npreset, 0, 0);
}

static void run_for(struct fx *fx, uint64_t ms)
{
    uint64_t end = now_ms() + ms;
    for (uint64_t t = now_ms(); t < end; t = now_ms())
        assert_int_equal(loop_run_once(fx->loop, (int)(end - t)), TS_OK);
}

static void run_until(struct fx *fx, const int *counter, int target)
{
    uint64_t end = now_ms() + DEADLINE_MS;
    while (*counter < target) {
        assert_true(now_ms() < end);
        assert_int_equal(loop_run_once(fx->loop, 10), TS_OK);
    }
}

static void send_text(struct fx *fx, int task, const char *text)
{
    size_t len = strlen(text);
    assert_int_equal(send(fx->fd[task], text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Take whatever task has been sent; 0 when the module closed the connection (a reset
 * when it left requests unread), -1 when nothing waits. */
static ssize_t receive(struct fx *fx, int task)
{
    size_t room = sizeof(fx->rbuf[task]) - fx->rlen[task];
    assert_true(room > 0);
    ssize_t n = recv(fx->fd[task], fx->rbuf[task] + fx->rlen[task], room, MSG_DONTWAIT);
    if (n < 0 && errno == ECONNRESET)
        return 0;
    if (n < 0)
        assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    if (n > 0)
        fx->rlen[task] += (size_t)n;
    return n;
}

/* The next line the task gets (newline dropped), running the loop while it waits. */
static const char *next_line(struct fx *fx, int task)
{
    uint64_t end = now_ms() + DEADLINE_MS;
    for (;;) {
        char *nl = memchr(fx->rbuf[task], '\n', fx->rlen[task]);
        if (nl) {
            size_t len = (size_t)(nl - fx->rbuf[task]);
            memcpy(fx->line, fx->rbuf[task], len);
            fx->line[len] = '\0';
            fx->rlen[task] -= len + 1;
            memmove(fx->rbuf[task], nl + 1, fx->rlen[task]);
            return fx->line;
        }
        ssize_t n = receive(fx, task);
        if (n == 0)
            fail_msg("task %d: connection closed while waiting for a line", task);
        if (n < 0) {
            assert_true(now_ms() < end);
            assert_int_equal(loop_run_once(fx->loop, 10), TS_OK);
        }
    }
}

#define expect_line(fx, task, text) assert_string_equal(next_line(fx, task), text)

/* The module sends the task nothing for a while. */
static void expect_quiet(struct fx *fx, int task)
{
    run_for(fx, 50);
    assert_int_equal(receive(fx, task), -1);
    assert_int_equal(fx->rlen[task], 0);
}

/* The module closes the task's connection (whatever it sent before is dropped). */
static void expect_closed(struct fx *fx, int task)
{
    uint64_t end = now_ms() + DEADLINE_MS;
    for (;;) {
        fx->rlen[task] = 0;
        ssize_t n = receive(fx, task);
        if (n == 0)
            return;
        if (n < 0) {
            assert_true(now_ms() < end);
            assert_int_equal(loop_run_once(fx->loop, 10), TS_OK);
        }
    }
}

/* ---- requests and answers --------------------------------------------------------- */

static void test_info_commands(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    expect_line(fx, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    send_text(fx, 0, "cmd=get_maxes\n");
    expect_line(fx, 0, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=1024");
    send_text(fx, 0, "cmd=get_appnum\n");
    expect_line(fx, 0, "cmd=appnum rc=0 appnum=0");
    send_text(fx, 0, "cmd=get_my_kvsname\n");
    expect_line(fx, 0, "cmd=my_kvsname rc=0 kvsname=" KVS);
    send_text(fx, 0, "cmd=get_universe_size\n");
    expect_line(fx, 0, "cmd=universe_size rc=0 size=8");
    send_text(fx, 0, "cmd=finalize\n");
    expect_line(fx, 0, "cmd=finalize_ack rc=0");
}

static void test_init_refuses_other_versions(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
    expect_line(fx, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
    send_text(fx, 0, "cmd=init\n");
    expect_line(fx, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
    /* the client may try again with the right version */
    send_text(fx, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    expect_line(fx, 0, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
}

static void test_put_then_get_local(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=bc-4 value=tcp://10.0.0.4:5000\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=bc-4\n");
    expect_line(fx, 0, "cmd=get_result rc=0 value=tcp://10.0.0.4:5000");
    /* another task of this node sees the put before any barrier */
    send_text(fx, 1, "cmd=get kvsname=" KVS " key=bc-4\n");
    expect_line(fx, 1, "cmd=get_result rc=0 value=tcp://10.0.0.4:5000");
    /* a put of an existing key replaces it; values keep their '=' characters */
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=bc-4 value=a=b==c=\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 1, "cmd=get kvsname=" KVS " key=bc-4\n");
    expect_line(fx, 1, "cmd=get_result rc=0 value=a=b==c=");
}

static void test_put_refusals(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=put kvsname=other key=k value=v\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=kvsname_mismatch");
    send_text(fx, 0, "cmd=put kvsname=" KVS " value=v\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=missing_key");
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=k\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=missing_value");

    char line[4096], key[PMI_KEYLEN_MAX + 1], value[PMI_VALLEN_MAX + 1];
    memset(key, 'k', PMI_KEYLEN_MAX);
    key[PMI_KEYLEN_MAX] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=" KVS " key=%s value=v\n", key);
    send_text(fx, 0, line);
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=key_too_long");
    memset(value, 'v', PMI_VALLEN_MAX);
    value[PMI_VALLEN_MAX] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=" KVS " key=k value=%s\n", value);
    send_text(fx, 0, line);
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=value_too_long");

    /* the longest that fit are taken */
    value[PMI_VALLEN_MAX - 1] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=" KVS " key=k value=%s\n", value);
    send_text(fx, 0, line);
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=k\n");
    snprintf(line, sizeof(line), "cmd=get_result rc=0 value=%s", value);
    expect_line(fx, 0, line);

    /* nothing refused was stored */
    send_text(fx, 0, "cmd=get kvsname=other key=k\n");
    expect_line(fx, 0, "cmd=get_result rc=-1 msg=kvsname_mismatch");
    send_text(fx, 0, "cmd=finalize\n");
    expect_line(fx, 0, "cmd=finalize_ack rc=0");
}

/* A task that puts without end is refused at the KVS's caps (pairs, then bytes), keeps
 * its connection, and may still replace what it put within them. */
static void test_kvs_caps_refuse_puts(void **state)
{
    struct fx *fx = *state;
    const struct pmi_kv preset[] = {{"PMI_process_mapping", "(vector,(0,1,1))"}}; /* 35 B */
    start_capped(fx, 1, preset, 1, 4, 64);
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=a value=1234567890\n"); /* 11 bytes */
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=b value=1\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=c value=1\n"); /* 4 pairs, 50 bytes */
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=d value=1\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=kvs_full");
    /* an existing key may take a value that still fits, not one that does not */
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=a value=123456789012345678901234\n");
    expect_line(fx, 0, "cmd=put_result rc=0"); /* 64 bytes exactly */
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=b value=12\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=kvs_full");
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=a value=x\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=a\n");
    expect_line(fx, 0, "cmd=get_result rc=0 value=x");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=d\n");
    expect_line(fx, 0, "cmd=get_result rc=-1 msg=key_d_not_found");

    /* bytes: with pairs to spare, a long value is refused */
    pmi_destroy(fx->pmi);
    close(fx->fd[0]);
    fx->fd[0] = -1;
    fx->rlen[0] = 0;
    start_capped(fx, 1, NULL, 0, 100, 64);
    char line[256], value[80];
    memset(value, 'v', 62);
    value[62] = '\0';
    snprintf(line, sizeof(line), "cmd=put kvsname=" KVS " key=k value=%s\n", value);
    send_text(fx, 0, line);
    expect_line(fx, 0, "cmd=put_result rc=0"); /* 63 bytes */
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=l value=1\n");
    expect_line(fx, 0, "cmd=put_result rc=-1 msg=kvs_full");
    send_text(fx, 0, "cmd=finalize\n");
    expect_line(fx, 0, "cmd=finalize_ack rc=0");
}

/* Pairs from the other nodes that would take the KVS beyond its caps are not merged: the
 * barrier ends with an error for its tasks, and the next one works. */
static void test_barrier_beyond_caps_fails(void **state)
{
    struct fx *fx = *state;
    start_capped(fx, 1, NULL, 0, 3, 1000);
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=k4 value=v4\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 1);
    const struct pmi_kv many[] = {{"k4", "v4"}, {"k0", "a"}, {"k1", "b"}, {"k2", "c"}};
    assert_int_equal(pmi_fence_done(fx->pmi, 0, many, 4), TS_ETOOBIG);
    expect_line(fx, 0, "cmd=barrier_out rc=-1 msg=kvs_full");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=k0\n");
    expect_line(fx, 0, "cmd=get_result rc=-1 msg=key_k0_not_found");

    send_text(fx, 0, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 2);
    assert_int_equal(fx->fence_seq, 1);
    assert_int_equal(pmi_fence_done(fx->pmi, 1, many, 3), TS_OK);
    expect_line(fx, 0, "cmd=barrier_out rc=0");
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=k1\n");
    expect_line(fx, 0, "cmd=get_result rc=0 value=b");
}

static void test_get_missing_key(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=nokey\n");
    expect_line(fx, 0, "cmd=get_result rc=-1 msg=key_nokey_not_found");
    send_text(fx, 0, "cmd=get kvsname=" KVS "\n");
    expect_line(fx, 0, "cmd=get_result rc=-1 msg=missing_key");
}

static void test_preset_process_mapping(void **state)
{
    struct fx *fx = *state;
    const struct pmi_kv preset[] = {{"PMI_process_mapping", "(vector,(0,2,4))"}};
    fx->fence_mode = FENCE_AT_ONCE;
    start(fx, 1, preset, 1);
    send_text(fx, 0, "cmd=get kvsname=" KVS " key=PMI_process_mapping\n");
    expect_line(fx, 0, "cmd=get_result rc=0 value=(vector,(0,2,4))");
    /* known from the start, so never reported as a local put */
    send_text(fx, 0, "cmd=barrier_in\n");
    expect_line(fx, 0, "cmd=barrier_out rc=0");
    assert_int_equal(fx->fences, 1);
    assert_string_equal(fx->fence_pairs, "");
}

/* ---- barriers -------------------------------------------------------------------- */

static void test_barrier_waits_for_every_local_task(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    assert_int_equal(pmi_fence_done(fx->pmi, 0, NULL, 0), TS_EINVAL); /* nothing to finish */

    send_text(fx, 0, "cmd=put kvsname=" KVS " key=k4 value=v4\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=barrier_in\n");
    expect_quiet(fx, 0);
    assert_int_equal(fx->fences, 0);

    send_text(fx, 1, "cmd=put kvsname=" KVS " key=k5 value=old\n");
    expect_line(fx, 1, "cmd=put_result rc=0");
    send_text(fx, 1, "cmd=put kvsname=" KVS " key=k5 value=v5\n");
    expect_line(fx, 1, "cmd=put_result rc=0");
    send_text(fx, 1, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 1);
    assert_int_equal(fx->fence_seq, 0);
    assert_string_equal(fx->fence_pairs, "k4=v4 k5=v5");
    /* nobody leaves before the other nodes are in */
    expect_quiet(fx, 0);
    expect_quiet(fx, 1);

    const struct pmi_kv all[] = {{"k4", "v4"}, {"k5", "v5"}, {"k0", "remote0"}, {"k1", "r=1"}};
    const struct pmi_kv bad[] = {{"k0", "has space"}};
    assert_int_equal(pmi_fence_done(fx->pmi, 1, all, 4), TS_EINVAL);
    assert_int_equal(pmi_fence_done(fx->pmi, 0, bad, 1), TS_EINVAL);
    assert_int_equal(pmi_fence_done(fx->pmi, 0, all, 4), TS_OK);
    expect_line(fx, 0, "cmd=barrier_out rc=0");
    expect_line(fx, 1, "cmd=barrier_out rc=0");
    assert_int_equal(pmi_fence_done(fx->pmi, 0, all, 4), TS_EINVAL); /* done already */

    send_text(fx, 0, "cmd=get kvsname=" KVS " key=k0\n");
    expect_line(fx, 0, "cmd=get_result rc=0 value=remote0");
    send_text(fx, 1, "cmd=get kvsname=" KVS " key=k1\n");
    expect_line(fx, 1, "cmd=get_result rc=0 value=r=1");

    /* the next barrier reports only what was put since, under the next number */
    send_text(fx, 1, "cmd=put kvsname=" KVS " key=late value=x\n");
    expect_line(fx, 1, "cmd=put_result rc=0");
    send_text(fx, 0, "cmd=barrier_in\n");
    send_text(fx, 1, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 2);
    assert_int_equal(fx->fence_seq, 1);
    assert_string_equal(fx->fence_pairs, "late=x");
    assert_int_equal(pmi_fence_done(fx->pmi, 1, NULL, 0), TS_OK);
    expect_line(fx, 0, "cmd=barrier_out rc=0");
    expect_line(fx, 1, "cmd=barrier_out rc=0");
}

static void test_fence_done_from_within_callback(void **state)
{
    struct fx *fx = *state;
    fx->fence_mode = FENCE_AT_ONCE;
    start(fx, 2, NULL, 0);
    for (int round = 0; round < 3; round++) {
        char put[128], get[128], want[128];
        snprintf(put, sizeof(put), "cmd=put kvsname=" KVS " key=r%d value=v%d\n", round, round);
        send_text(fx, 0, put);
        expect_line(fx, 0, "cmd=put_result rc=0");
        send_text(fx, 0, "cmd=barrier_in\n");
        send_text(fx, 1, "cmd=barrier_in\n");
        expect_line(fx, 0, "cmd=barrier_out rc=0");
        expect_line(fx, 1, "cmd=barrier_out rc=0");
        assert_int_equal(fx->fences, round + 1);
        assert_int_equal(fx->fence_seq, (uint32_t)round);
        snprintf(get, sizeof(get), "cmd=get kvsname=" KVS " key=r%d\n", round);
        send_text(fx, 1, get);
        snprintf(want, sizeof(want), "cmd=get_result rc=0 value=v%d", round);
        expect_line(fx, 1, want);
    }
}

static void test_barrier_twice_is_a_protocol_error(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    send_text(fx, 0, "cmd=barrier_in\ncmd=barrier_in\n");
    expect_closed(fx, 0);
    assert_int_equal(fx->fences, 0);
    /* its first entry still counts */
    send_text(fx, 1, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 1);
}

/* A task that entered the barrier and then went away does not hold the others; one that
 * went away before entering keeps the barrier from ever completing. */
static void test_disconnects_and_barriers(void **state)
{
    struct fx *fx = *state;
    start(fx, 3, NULL, 0);
    send_text(fx, 0, "cmd=barrier_in\n");
    run_for(fx, 20);
    close(fx->fd[0]);
    fx->fd[0] = -1;
    send_text(fx, 1, "cmd=barrier_in\n");
    send_text(fx, 2, "cmd=barrier_in\n");
    run_until(fx, &fx->fences, 1);
    assert_int_equal(pmi_fence_done(fx->pmi, 0, NULL, 0), TS_OK);
    expect_line(fx, 1, "cmd=barrier_out rc=0");
    expect_line(fx, 2, "cmd=barrier_out rc=0");

    close(fx->fd[1]); /* exits without finalize */
    fx->fd[1] = -1;
    send_text(fx, 2, "cmd=barrier_in\n");
    expect_quiet(fx, 2);
    assert_int_equal(fx->fences, 1);
    /* the survivor is still served */
    send_text(fx, 2, "cmd=get_appnum\n");
    expect_line(fx, 2, "cmd=appnum rc=0 appnum=0");
}

/* ---- the wire ------------------------------------------------------------------------ */

static void test_split_and_batched_commands(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=get_my");
    expect_quiet(fx, 0);
    send_text(fx, 0, "_kvsname\n");
    expect_line(fx, 0, "cmd=my_kvsname rc=0 kvsname=" KVS);

    send_text(fx, 0, "cmd=get_appnum\ncmd=get_universe_size\ncmd=put kvsname=" KVS " ke");
    expect_line(fx, 0, "cmd=appnum rc=0 appnum=0");
    expect_line(fx, 0, "cmd=universe_size rc=0 size=8");
    expect_quiet(fx, 0);
    send_text(fx, 0, "y=a value=b\ncmd=get kvsname=" KVS " key=a\n");
    expect_line(fx, 0, "cmd=put_result rc=0");
    expect_line(fx, 0, "cmd=get_result rc=0 value=b");

    /* one byte at a time, extra spaces between tokens */
    const char *slow = "cmd=get   kvsname=" KVS "  key=a \n";
    for (const char *s = slow; *s; s++) {
        assert_int_equal(write(fx->fd[0], s, 1), 1);
        assert_int_equal(loop_run_once(fx->loop, 0), TS_OK);
    }
    expect_line(fx, 0, "cmd=get_result rc=0 value=b");
}

static void test_initack(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    send_text(fx, 1, "cmd=initack pmiid=5\n");
    expect_line(fx, 1, "cmd=initack rc=0");
    expect_line(fx, 1, "cmd=set size=8");
    expect_line(fx, 1, "cmd=set rank=5");
    expect_line(fx, 1, "cmd=set debug=0");
}

static void test_abort(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    send_text(fx, 1, "cmd=abort exitcode=7\n");
    run_until(fx, &fx->aborts, 1);
    assert_int_equal(fx->abort_rank, 5);
    assert_int_equal(fx->abort_code, 7);
    assert_string_equal(fx->abort_msg, "");
    expect_quiet(fx, 1);

    /* later MPICH adds the message, unescaped, as the rest of the line */
    send_text(fx, 0, "cmd=abort exitcode=3 message=application called MPI_Abort(x, 3)\n");
    run_until(fx, &fx->aborts, 2);
    assert_int_equal(fx->abort_rank, 4);
    assert_int_equal(fx->abort_code, 3);
    assert_string_equal(fx->abort_msg, "application called MPI_Abort(x, 3)");
}

static void test_overlong_line_closes_only_that_client(void **state)
{
    struct fx *fx = *state;
    start(fx, 2, NULL, 0);
    /* one byte over the limit, newline and all in one write */
    char *line = malloc(PMI_LINE_MAX + 3);
    assert_non_null(line);
    memset(line, 'p', PMI_LINE_MAX + 1);
    memcpy(line, "cmd=noop pad=", 13);
    line[PMI_LINE_MAX + 1] = '\n';
    line[PMI_LINE_MAX + 2] = '\0';
    send_text(fx, 0, line);
    free(line);
    expect_closed(fx, 0);

    send_text(fx, 1, "cmd=get_appnum\n");
    expect_line(fx, 1, "cmd=appnum rc=0 appnum=0");
}

static void test_longest_line_is_taken(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    /* an unknown command with padding, exactly PMI_LINE_MAX bytes before the newline */
    char *line = malloc(PMI_LINE_MAX + 2);
    assert_non_null(line);
    memset(line, 'p', PMI_LINE_MAX);
    memcpy(line, "cmd=noop pad=", 13);
    line[PMI_LINE_MAX] = '\n';
    line[PMI_LINE_MAX + 1] = '\0';
    send_text(fx, 0, line);
    free(line);
    expect_line(fx, 0, "cmd=noop rc=-1 msg=unsupported");
}

static void test_garbage_closes_only_that_client(void **state)
{
    struct fx *fx = *state;
    start(fx, 3, NULL, 0);
    send_text(fx, 0, "cmd=get_appnum\x01\n");
    send_text(fx, 1, "hello there\n");
    expect_closed(fx, 0);
    expect_closed(fx, 1);
    send_text(fx, 2, "cmd=get_appnum\n");
    expect_line(fx, 2, "cmd=appnum rc=0 appnum=0");
}

static void test_unsupported_commands(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    send_text(fx, 0, "cmd=frobnicate a=b\n");
    expect_line(fx, 0, "cmd=frobnicate rc=-1 msg=unsupported");
    send_text(fx, 0, "cmd=publish_name service=s port=p\n");
    expect_line(fx, 0, "cmd=publish_result rc=-1 msg=unsupported info=unsupported");
    send_text(fx, 0, "cmd=lookup_name service=s\n");
    expect_line(fx, 0, "cmd=lookup_result rc=-1 msg=unsupported info=unsupported");

    /* a spawn of two commands: two multi-line blocks, one answer after the last */
    send_text(fx, 0, "mcmd=spawn\nnprocs=2\nexecname=/bin/a\ntotspawns=2\nspawnssofar=1\n"
                     "arg1=x = y\nargcnt=1\npreput_num=0\ninfo_num=0\nendcmd\n");
    expect_quiet(fx, 0);
    send_text(fx, 0, "mcmd=spawn\nnprocs=1\nexecname=/bin/b\ntotspawns=2\nspawnssofar=2\n"
                     "argcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n");
    expect_line(fx, 0, "cmd=spawn_result rc=-1 msg=unsupported");

    /* the client goes on as before */
    send_text(fx, 0, "cmd=get_appnum\n");
    expect_line(fx, 0, "cmd=appnum rc=0 appnum=0");
}

/* A task that does not read its answers: they wait in the module, which stops reading
 * that task's requests meanwhile; every answer arrives, whole and in order, once it
 * reads. */
static void test_slow_reader(void **state)
{
    struct fx *fx = *state;
    start(fx, 1, NULL, 0);
    char value[1001], put[1100], want[1100];
    memset(value, 'v', 1000);
    value[1000] = '\0';
    snprintf(put, sizeof(put), "cmd=put kvsname=" KVS " key=big value=%s\n", value);
    send_text(fx, 0, put);
    expect_line(fx, 0, "cmd=put_result rc=0");
    snprintf(want, sizeof(want), "cmd=get_result rc=0 value=%s", value);

    fcntl(fx->fd[0], F_SETFL, O_NONBLOCK);
    static const char get[] = "cmd=get kvsname=" KVS " key=big\n";
    const int cap = 20000;
    int sent = 0, stalled = 0;
    while (sent < cap && stalled < 20) {
        ssize_t n = write(fx->fd[0], get, sizeof(get) - 1);
        if (n == (ssize_t)sizeof(get) - 1) {
            sent++;
            stalled = 0;
        } else {
            assert_true(n < 0 && errno == EAGAIN);
            stalled++;
        }
        assert_int_equal(loop_run_once(fx->loop, 0), TS_OK);
    }
    assert_true(sent < cap); /* the module stopped taking requests */

    for (int got = 0; got < sent; got++)
        assert_string_equal(next_line(fx, 0), want);
    expect_quiet(fx, 0);
}

/* ---- lifetime ---------------------------------------------------------------------- */

static void test_create_and_add_errors(void **state)
{
    struct fx *fx = *state;
    struct pmi *p = NULL;
    struct pmi_config cfg = {.size = 4, .kvsname = KVS, .local_tasks = 2};
    const struct pmi_ops no_fence = {.abort = on_abort};
    const struct pmi_kv spaced[] = {{"PMI_process_mapping", "(vector, (0,1,4))"}};

    assert_int_equal(pmi_create(fx->loop, &cfg, &no_fence, fx, &p), TS_EINVAL);
    cfg.local_tasks = 5;
    assert_int_equal(pmi_create(fx->loop, &cfg, &ops, fx, &p), TS_EINVAL);
    cfg.local_tasks = 2;
    cfg.kvsname = "two words";
    assert_int_equal(pmi_create(fx->loop, &cfg, &ops, fx, &p), TS_EINVAL);
    cfg.kvsname = KVS;
    cfg.preset = spaced;
    cfg.npreset = 1;
    assert_int_equal(pmi_create(fx->loop, &cfg, &ops, fx, &p), TS_EINVAL);
    assert_null(p);
    cfg.preset = NULL;
    cfg.npreset = 0;
    assert_int_equal(pmi_create(fx->loop, &cfg, &ops, fx, &p), TS_OK);
    fx->pmi = p;

    int a[2], b[2], c[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c), 0);
    assert_int_equal(pmi_add_client(p, a[0], 4), TS_EINVAL); /* rank out of the step */
    assert_int_equal(pmi_add_client(p, -1, 0), TS_EINVAL);
    assert_int_equal(pmi_add_client(p, a[0], 1), TS_OK);
    assert_int_equal(pmi_add_client(p, b[0], 1), TS_EEXIST);
    assert_int_equal(pmi_add_client(p, b[0], 2), TS_OK);
    assert_int_equal(pmi_add_client(p, c[0], 3), TS_EBUSY); /* more than local_tasks */
    /* taken fds are non-blocking and close-on-exec; a refused one is the caller's */
    assert_true(fcntl(a[0], F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(a[0], F_GETFD) & FD_CLOEXEC);
    assert_int_equal(fcntl(c[0], F_GETFL) & O_NONBLOCK, 0);
    close(c[0]);
    close(c[1]);
    fx->fd[0] = a[1];
    fx->fd[1] = b[1];
    pmi_destroy(NULL);
}

static void test_destroy_with_clients_open(void **state)
{
    struct fx *fx = *state;
    start(fx, 3, NULL, 0);
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=k value=v\ncmd=barrier_in\n");
    send_text(fx, 1, "cmd=get_appn"); /* half a line */
    run_for(fx, 20);
    pmi_destroy(fx->pmi);
    fx->pmi = NULL;
    for (int i = 0; i < 3; i++)
        expect_closed(fx, i);
}

static void test_destroy_from_abort_callback(void **state)
{
    struct fx *fx = *state;
    fx->destroy_on_abort = 1;
    start(fx, 2, NULL, 0);
    /* more requests follow the abort in the same read: none may be handled */
    send_text(fx, 0, "cmd=abort exitcode=1\ncmd=get_appnum\ncmd=abort exitcode=2\n");
    run_until(fx, &fx->aborts, 1);
    assert_null(fx->pmi);
    expect_closed(fx, 0);
    expect_closed(fx, 1);
    run_for(fx, 20);
    assert_int_equal(fx->aborts, 1);
}

static void test_destroy_from_fence_callback(void **state)
{
    struct fx *fx = *state;
    fx->fence_mode = FENCE_DESTROY;
    start(fx, 2, NULL, 0);
    send_text(fx, 0, "cmd=put kvsname=" KVS " key=a value=1\ncmd=barrier_in\n");
    send_text(fx, 1, "cmd=barrier_in\ncmd=get_appnum\n");
    run_until(fx, &fx->fences, 1);
    assert_string_equal(fx->fence_pairs, "a=1");
    assert_null(fx->pmi);
    expect_closed(fx, 0);
    expect_closed(fx, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_info_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_refuses_other_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_then_get_local, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kvs_caps_refuse_puts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barrier_beyond_caps_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_missing_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_preset_process_mapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barrier_waits_for_every_local_task, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fence_done_from_within_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barrier_twice_is_a_protocol_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disconnects_and_barriers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_and_batched_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_initack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlong_line_closes_only_that_client, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_longest_line_is_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_closes_only_that_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsupported_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_and_add_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_clients_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_from_abort_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_from_fence_callback, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
