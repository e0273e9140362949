/* A real node daemon against a controller played by this test (an RPC server on the
 * controller's port), which can refuse end reports and go away at will:
 *   - an error answer to an end report is no acknowledgement: the report comes again,
 *     after about 1 s, then 2 s, and the daemon warns once;
 *   - a report not yet acknowledged survives the daemon's death: it is a root-only file
 *     of the state folder, and the restarted daemon sends it again, the same report;
 *   - when the line breaks while idle, the daemon registers again at once, not at its
 *     next heartbeat (30 s here).
 */
#include "cluster.h"

#include "common/net/loop.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_SEEN 64

static struct harness_cluster cluster;

/* The controller's part, on this test's loop. */
static struct fake {
    struct loop *loop;
    struct rpc_server *srv;
    int registrations;
    int registered;            /* since this server started */
    uint32_t listed[64];       /* running_jobs of the last registration */
    size_t nlisted;
    int refuse[1024];          /* by job id: end reports still to refuse */
    struct seen {
        uint32_t job_id;
        uint64_t seq;
        int status;
        uint64_t at;           /* loop ms */
    } seen[MAX_SEEN];
    int nseen;
} fake;

static void handle_register(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    const Tessera__NodeRegisterRequest *r = msg->node_register;
    fake.registrations++;
    fake.registered = 1;
    fake.nlisted = r->n_running_jobs < 64 ? r->n_running_jobs : 64;
    for (size_t i = 0; i < fake.nlisted; i++)
        fake.listed[i] = r->running_jobs[i];
    Tessera__NodeRegisterResponse nr = TESSERA__NODE_REGISTER_RESPONSE__INIT;
    nr.heartbeat_secs = 30;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_NODE_REGISTER;
    resp.node_register = &nr;
    rpc_respond(req, &resp);
}

static void handle_heartbeat(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    if (!fake.registered) { /* as the controller after a restart: register first */
        rpc_respond_error(req, TS_EINVALID_NODE_NAME, NULL);
        return;
    }
    Tessera__NodeHeartbeatResponse hb = TESSERA__NODE_HEARTBEAT_RESPONSE__INIT;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_NODE_HEARTBEAT;
    resp.node_heartbeat = &hb;
    rpc_respond(req, &resp);
}

static void handle_job_complete(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    const Tessera__JobCompleteRequest *jc = msg->job_complete;
    if (fake.nseen < MAX_SEEN)
        fake.seen[fake.nseen++] = (struct seen){.job_id = jc->job_id, .seq = jc->seq,
                                                .status = jc->status,
                                                .at = loop_now_ms(fake.loop)};
    if (jc->job_id < 1024 && fake.refuse[jc->job_id] > 0) {
        fake.refuse[jc->job_id]--;
        rpc_respond_error(req, TS_ESTORE_FAILING, NULL);
        return;
    }
    Tessera__Empty empty = TESSERA__EMPTY__INIT;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_JOB_COMPLETE;
    resp.job_complete = &empty;
    rpc_respond(req, &resp);
}

static const struct rpc_handler handlers[] = {
    {TESSERA__REQUEST__MSG_NODE_REGISTER, "node_register", handle_register, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_NODE_HEARTBEAT, "node_heartbeat", handle_heartbeat, RPC_ROLE_USER},
    {TESSERA__REQUEST__MSG_JOB_COMPLETE, "job_complete", handle_job_complete, RPC_ROLE_USER},
};

static int fake_start(void)
{
    struct rpc_server_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                    .munge_socket = cluster.munge.socket, .uid = geteuid(),
                                    .identity = HARNESS_CTLD_NAME, .auth_threads = 1};
    fake.registered = 0;
    return rpc_server_create(fake.loop, &cfg, handlers, sizeof(handlers) / sizeof(handlers[0]),
                             NULL, &fake.srv) == TS_OK ? 0 : -1;
}

static void fake_stop(void)
{
    rpc_server_destroy(fake.srv);
    fake.srv = NULL;
    for (int i = 0; i < 5; i++) /* what the auth threads posted */
        loop_run_once(fake.loop, 0);
}

/* Serve until cond() holds or ms pass; whether it holds. */
static int serve_until(int (*cond)(void *), void *arg, int ms)
{
    for (int i = 0; i < ms / 10 && !cond(arg); i++)
        loop_run_once(fake.loop, 10);
    return cond(arg);
}

static int registrations_above(void *arg)
{
    return fake.registrations > *(int *)arg;
}

static int reports_of(uint32_t job_id)
{
    int n = 0;
    for (int i = 0; i < fake.nseen; i++)
        n += fake.seen[i].job_id == job_id;
    return n;
}

struct count_goal {
    uint32_t job_id;
    int count;
};

static int reports_reach(void *arg)
{
    const struct count_goal *g = arg;
    return reports_of(g->job_id) >= g->count;
}

static const struct seen *report_n(uint32_t job_id, int n)
{
    for (int i = 0; i < fake.nseen; i++)
        if (fake.seen[i].job_id == job_id && n-- == 0)
            return &fake.seen[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------ */

static int group_setup(void **state)
{
    char nodes[512], extra[1024];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, 1, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra), "MessageTimeout=5\n%sPartitionName=debug Nodes=n1\n", nodes);
    if (harness_cluster_write_conf(&cluster, extra) || !(fake.loop = loop_create()) ||
        fake_start() || harness_noded_start(&cluster, 1))
        return -1;
    int before = 0;
    return serve_until(registrations_above, &before, 15000) ? 0 : -1;
}

static int group_teardown(void **state)
{
    if (fake.srv)
        fake_stop();
    harness_cluster_fini(&cluster);
    loop_destroy(fake.loop);
    return 0;
}

/* Run job_id's batch script (script: its body) on n1, as root, as the controller would. */
static void launch(uint32_t job_id, const char *body)
{
    char out[600], script[256];
    snprintf(out, sizeof(out), "%s/job-%u.out", cluster.dir, job_id);
    snprintf(script, sizeof(script), "#!/bin/sh\n%s\n", body);
    Tessera__BatchLaunchRequest bl = TESSERA__BATCH_LAUNCH_REQUEST__INIT;
    bl.job_id = job_id;
    bl.user_name = (char *)"root";
    bl.script = script;
    bl.work_dir = (char *)"/tmp";
    bl.std_out = out;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_BATCH_LAUNCH;
    req.batch_launch = &bl;
    char name[64];
    struct rpc_client_config cfg = {
        .host = "127.0.0.1", .port = cluster.nodes[0].port, .munge_socket = cluster.munge.socket,
        .server_uid = 0, .timeout_ms = 10000,
        .target = harness_daemon_name(&cluster, cluster.nodes[0].port, name, sizeof(name))};
    struct rpc_client *cli = NULL;
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    if (resp->error)
        fail_msg("launch of job %u refused: %s", job_id, resp->error->text);
    tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
}

static int count_in_log(const char *needle)
{
    char *text = harness_read_file(cluster.nodes[0].log);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    free(text);
    return n;
}

/* ------------------------------------------------------------------------------------ */

/* The controller refuses a job's end twice (its store cannot commit, say): the report
 * comes again after about 1 s, then about 2 s, until accepted; then no more. */
static void test_refused_report_is_resent(void **state)
{
    fake.refuse[101] = 2;
    launch(101, "exit 3");
    struct count_goal three = {101, 3};
    assert_true(serve_until(reports_reach, &three, 15000));
    const struct seen *a = report_n(101, 0), *b = report_n(101, 1), *c = report_n(101, 2);
    assert_int_equal(a->status, 3 << 8);
    assert_int_equal(b->seq, a->seq); /* the same report */
    assert_int_equal(c->seq, a->seq);
    assert_true(b->at - a->at >= 900);
    assert_true(c->at - b->at >= 1900); /* the back-off grows */
    struct count_goal four = {101, 4};
    assert_false(serve_until(reports_reach, &four, 2500)); /* accepted: no more */
    assert_int_equal(count_in_log("job 101: the controller refused its end report"), 1);
}

static int file_gone(void *arg)
{
    struct stat st;
    return stat(arg, &st) != 0;
}

/* A report the controller has not accepted when the daemon is killed: the restarted
 * daemon lists the job at registration and sends the same report again. */
static void test_unacknowledged_report_survives_restart(void **state)
{
    fake.refuse[102] = 1000;
    launch(102, "exit 4");
    struct count_goal one = {102, 1};
    assert_true(serve_until(reports_reach, &one, 10000));
    uint64_t seq = report_n(102, 0)->seq;
    char path[700];
    snprintf(path, sizeof(path), "%s/spool/n1/state/report.%llu", cluster.dir,
             (unsigned long long)seq);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 0777, 0600);

    assert_true(harness_noded_stop(&cluster, 1, SIGKILL) != 0);
    fake.refuse[102] = 0;
    int before = fake.registrations, seen_before = reports_of(102);
    assert_int_equal(harness_noded_start(&cluster, 1), 0);
    assert_true(serve_until(registrations_above, &before, 15000));
    int listed = 0;
    for (size_t i = 0; i < fake.nlisted; i++)
        listed |= fake.listed[i] == 102;
    assert_true(listed); /* the controller does not take the job for lost */
    struct count_goal again = {102, seen_before + 1};
    assert_true(serve_until(reports_reach, &again, 10000));
    const struct seen *last = report_n(102, seen_before);
    assert_int_equal(last->seq, seq);
    assert_int_equal(last->status, 4 << 8);
    assert_true(serve_until(file_gone, path, 5000)); /* acknowledged: removed */
}

/* The controller goes away and comes back while the line is idle: the daemon registers
 * again at once (its next heartbeat would be 30 s away). */
static void test_reregisters_when_the_line_breaks(void **state)
{
    int before = fake.registrations;
    fake_stop();
    assert_int_equal(fake_start(), 0);
    assert_true(serve_until(registrations_above, &before, 8000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_report_is_resent),
        cmocka_unit_test(test_unacknowledged_report_survives_restart),
        cmocka_unit_test(test_reregisters_when_the_line_breaks),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
