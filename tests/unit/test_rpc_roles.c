/* The role columns of the controller's and the node daemon's handler tables (ctld/rpc.c,
 * noded/rpc.c), checked by the server's dispatcher (docs/security.md, section 1).
 *
 * Each daemon's real table is served with every handler replaced by a recorder that keeps
 * the entry's message, name and role, and the daemon's real roles_of over a configuration
 * with SlurmUser and NodedUser of their own. Children that became root, SlurmUser,
 * NodedUser and a plain user send every request of the table. A caller without the
 * role an entry needs must get "Access/permission denied" with the recorder not run; a
 * caller with it must reach the recorder. The roles expected are written here, entry by
 * entry: lowering a role in a table (or adding an entry without a role here) fails. */
#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_conf.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/ctld.h"
#include "harness.h"
#include "noded/noded.h"

#include <grp.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct harness_munge munge;

#define NAME "test/roles" /* the server's name in credentials */
#define ADMIN_UID 65531   /* SlurmUser */
#define NODED_UID 65532   /* NodedUser */
#define USER_UID 65534    /* nobody */
#define MAX_ENTRIES 64

/* What each request of each table needs: the document of the tables (docs/security.md,
 * section 1), in the tables' order. */
struct expected {
    Tessera__Request__MsgCase msg;
    enum rpc_role role;
};

static const struct expected ctld_expected[] = {
    {TESSERA__REQUEST__MSG_PING, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SHOW_CONFIG, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_SUBMIT, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_ACTION, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_UPDATE, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_PARTITION_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_REGISTER, RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_NODE_HEARTBEAT, RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_JOB_COMPLETE, RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_NODE_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_UPDATE, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_SCHED_STATS, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_RECONFIGURE, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_SCHEDULE, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_ALLOC_WAIT, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_FINISH, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_CREATE, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_COMPLETE, RPC_ROLE_NODED},
    {TESSERA__REQUEST__MSG_STEP_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_ACCT_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_FAIRSHARE_QUERY, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_SCRIPT, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_BCAST_CRED, RPC_ROLE_USER},
};

/* On a node daemon, the controller (SlurmUser) is the administrator. */
static const struct expected noded_expected[] = {
    {TESSERA__REQUEST__MSG_PING, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_BATCH_LAUNCH, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_JOB_SIGNAL, RPC_ROLE_ADMIN},
    {TESSERA__REQUEST__MSG_STEP_LAUNCH, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_STEP_SIGNAL, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_FILE_BCAST, RPC_ROLE_USER},
};

/* The roles each caller holds, as this test knows them (not asked of the code). */
struct caller {
    uid_t uid;
    unsigned roles;
};
static const struct caller callers[] = {
    {0, RPC_ROLE_ADMIN | RPC_ROLE_NODED},
    {ADMIN_UID, RPC_ROLE_ADMIN},
    {NODED_UID, RPC_ROLE_NODED},
    {USER_UID, 0},
};
#define NCALLERS (sizeof(callers) / sizeof(callers[0]))

/* ------------------------------------------------------------------------------------ */
/* the table under test, its handlers replaced by a recorder */

static unsigned ran[MAX_ENTRIES]; /* per entry; written on the server's thread */
static struct rpc_handler recorded[MAX_ENTRIES];
static size_t nrecorded;

/* Answers a ping whose uid is the entry's index: the client knows which handler ran. */
static void record(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    size_t i = 0;
    while (i < nrecorded && recorded[i].msg != msg->msg_case)
        i++;
    __atomic_add_fetch(&ran[i], 1, __ATOMIC_SEQ_CST);
    Tessera__PingResponse ping = TESSERA__PING_RESPONSE__INIT;
    ping.uid = (uint32_t)i;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_PING;
    resp.ping = &ping;
    rpc_respond(req, &resp);
}

static void record_table(const struct rpc_handler *table, size_t n)
{
    assert_true(n <= MAX_ENTRIES);
    for (size_t i = 0; i < n; i++) {
        recorded[i] = table[i];
        recorded[i].fn = record;
        ran[i] = 0;
    }
    nrecorded = n;
}

/* ------------------------------------------------------------------------------------ */
/* the server, its loop on a thread of its own */

struct server {
    struct loop *loop;
    struct rpc_server *srv;
    pthread_t thread;
    uint16_t port;
};

static void *server_thread(void *arg)
{
    loop_run(arg);
    return NULL;
}

static void server_start(struct server *s, rpc_roles_fn roles_of, void *daemon)
{
    s->loop = loop_create();
    assert_non_null(s->loop);
    struct rpc_server_config cfg = {.host = "127.0.0.1", .munge_socket = munge.socket,
                                    .uid = geteuid(), .identity = NAME, .auth_threads = 2,
                                    .roles_of = roles_of};
    assert_int_equal(rpc_server_create(s->loop, &cfg, recorded, nrecorded, daemon, &s->srv),
                     TS_OK);
    s->port = rpc_server_port(s->srv);
    assert_int_equal(pthread_create(&s->thread, NULL, server_thread, s->loop), 0);
}

static void server_stop(struct server *s)
{
    loop_stop(s->loop);
    pthread_join(s->thread, NULL);
    rpc_server_destroy(s->srv);
    for (int i = 0; i < 5; i++) /* deliver what the auth threads posted */
        loop_run_once(s->loop, 0);
    loop_destroy(s->loop);
}

static struct conf *load_conf(uid_t slurm_user, uid_t noded_user)
{
    char text[128], err[256] = "";
    snprintf(text, sizeof(text), "SlurmUser=%u\nNodedUser=%u\n", (unsigned)slurm_user,
             (unsigned)noded_user);
    struct conf *c = NULL;
    if (conf_parse_string(text, "t.conf", 0, &c, err, sizeof(err)) != TS_OK)
        fail_msg("%s", err);
    return c;
}

/* ------------------------------------------------------------------------------------ */
/* the callers: children that became their uid */

/* An empty request of kind msg (every field of a proto3 message may be left out). */
static void request_of(Tessera__Request *req, Tessera__Request__MsgCase msg, void **sub)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(&tessera__request__descriptor, (unsigned)msg);
    if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
        _exit(5);
    const ProtobufCMessageDescriptor *md = f->descriptor;
    *sub = calloc(1, md->sizeof_message);
    if (!*sub)
        _exit(6);
    md->message_init(*sub);
    tessera__request__init(req);
    req->msg_case = msg;
    memcpy((char *)req + f->offset, sub, sizeof(void *));
}

/* What one request got: TS_OK when the recorder of entry i answered, else the error's
 * code (or -1: anything else). */
static int call_one(struct rpc_client *cli, size_t i)
{
    Tessera__Request req;
    void *sub = NULL;
    request_of(&req, recorded[i].msg, &sub);
    Tessera__Response *resp = NULL;
    int err = rpc_client_call(cli, &req, &resp);
    free(sub);
    if (err)
        return -1;
    int got = resp->error ? (int)resp->error->code
              : resp->msg_case == TESSERA__RESPONSE__MSG_PING && resp->ping->uid == i ? TS_OK
                                                                                      : -1;
    tessera__response__free_unpacked(resp, NULL);
    return got;
}

/* The child: become uid, send every request of the table, write each answer's code. */
static void call_all_as(int fd, uid_t uid, uint16_t port, uid_t server_uid)
{
    if (uid != 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0))
        _exit(2);
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = port,
                                    .munge_socket = munge.socket, .server_uid = server_uid,
                                    .target = NAME, .timeout_ms = 5000};
    struct rpc_client *cli = NULL;
    if (rpc_client_connect(&cfg, &cli) != TS_OK)
        _exit(3);
    for (size_t i = 0; i < nrecorded; i++) {
        int got = call_one(cli, i);
        if (write(fd, &got, sizeof(got)) != sizeof(got))
            _exit(4);
    }
    rpc_client_close(cli);
    _exit(0);
}

/* got[i]: what uid's request of entry i got. */
static void call_all(uid_t uid, uint16_t port, int *got)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        call_all_as(p[1], uid, port, geteuid());
    }
    close(p[1]);
    size_t want = nrecorded * sizeof(int), have = 0;
    ssize_t n;
    while (have < want && (n = read(p[0], (char *)got + have, want - have)) > 0)
        have += (size_t)n;
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the caller of uid %u failed (status %d)", (unsigned)uid, status);
    assert_int_equal(have, want);
}

/* ------------------------------------------------------------------------------------ */
/* the checks */

static const struct expected *expected_of(const struct expected *exp, size_t nexp,
                                          Tessera__Request__MsgCase msg)
{
    for (size_t i = 0; i < nexp; i++)
        if (exp[i].msg == msg)
            return &exp[i];
    return NULL;
}

/* Every entry is one this test knows, and none is missing. */
static void check_covered(const struct expected *exp, size_t nexp)
{
    assert_int_equal(nrecorded, nexp);
    for (size_t i = 0; i < nrecorded; i++)
        if (!expected_of(exp, nexp, recorded[i].msg))
            fail_msg("entry %s has no expected role in this test", recorded[i].name);
}

/* Every caller sends every request: refused without the role, the recorder not run;
 * served with it. */
static void check_table(const struct expected *exp, size_t nexp, rpc_roles_fn roles_of,
                        void *daemon)
{
    check_covered(exp, nexp);
    struct server s;
    server_start(&s, roles_of, daemon);
    unsigned admitted[MAX_ENTRIES] = {0};
    for (size_t k = 0; k < NCALLERS; k++) {
        int got[MAX_ENTRIES];
        call_all(callers[k].uid, s.port, got);
        for (size_t i = 0; i < nrecorded; i++) {
            enum rpc_role need = expected_of(exp, nexp, recorded[i].msg)->role;
            int may = need == RPC_ROLE_USER || (callers[k].roles & (unsigned)need);
            admitted[i] += may ? 1u : 0u;
            if (got[i] != (may ? TS_OK : TS_EPERM))
                fail_msg("%s from uid %u: got %d, expected %s", recorded[i].name,
                         (unsigned)callers[k].uid, got[i], may ? "the handler" : "a refusal");
            /* the refusal happens before the handler: it did not run for this caller */
            assert_int_equal(__atomic_load_n(&ran[i], __ATOMIC_SEQ_CST), admitted[i]);
        }
    }
    server_stop(&s);
}

static void test_ctld_table(void **state)
{
    if (geteuid() != 0)
        skip();
    struct ctld c = {0};
    c.conf = load_conf(ADMIN_UID, NODED_UID);
    record_table(ctld_rpc_handlers, ctld_rpc_nhandlers);
    check_table(ctld_expected, sizeof(ctld_expected) / sizeof(ctld_expected[0]), ctld_rpc_roles,
                &c);
    conf_free(c.conf);
}

static void test_noded_table(void **state)
{
    if (geteuid() != 0)
        skip();
    struct noded nd = {0};
    nd.conf = load_conf(ADMIN_UID, NODED_UID);
    record_table(noded_rpc_handlers, noded_rpc_nhandlers);
    check_table(noded_expected, sizeof(noded_expected) / sizeof(noded_expected[0]),
                noded_rpc_roles, &nd);
    conf_free(nd.conf);
}

/* The roles follow the configuration the daemon holds now: after a reconfigure that
 * makes nobody SlurmUser, nobody may reconfigure; the former SlurmUser may not. */
static void test_roles_follow_reconfigure(void **state)
{
    if (geteuid() != 0)
        skip();
    struct ctld c = {0};
    c.conf = load_conf(ADMIN_UID, NODED_UID);
    record_table(ctld_rpc_handlers, ctld_rpc_nhandlers);
    size_t reconf = 0;
    while (reconf < nrecorded && recorded[reconf].msg != TESSERA__REQUEST__MSG_RECONFIGURE)
        reconf++;
    assert_true(reconf < nrecorded);
    struct server s;
    server_start(&s, ctld_rpc_roles, &c);
    int got[MAX_ENTRIES];
    call_all(USER_UID, s.port, got);
    assert_int_equal(got[reconf], TS_EPERM);
    /* the loop thread is the one that swaps the configuration in the daemon; here the
     * server is idle between calls, and the swap is seen by its next request */
    struct conf *old = c.conf;
    __atomic_store_n(&c.conf, load_conf(USER_UID, NODED_UID), __ATOMIC_SEQ_CST);
    call_all(USER_UID, s.port, got);
    assert_int_equal(got[reconf], TS_OK);
    call_all(ADMIN_UID, s.port, got);
    assert_int_equal(got[reconf], TS_EPERM);
    server_stop(&s);
    conf_free(old);
    conf_free(c.conf);
}

static int group_setup(void **state)
{
    log_open("test_rpc_roles", LOG_LVL_QUIET, NULL);
    return harness_munge_start(&munge);
}

static int group_teardown(void **state)
{
    harness_munge_stop(&munge);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctld_table),
        cmocka_unit_test(test_noded_table),
        cmocka_unit_test(test_roles_follow_reconfigure),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
