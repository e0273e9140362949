/* Steps against an unprivileged user (nobody, uid 65534) who wants more than their job:
 *   - a terminate of their own step with a huge kill_wait does not keep tasks that ignore
 *     SIGTERM alive past KillWait, and a later terminate (scancel) shortens an earlier,
 *     longer one;
 *   - a step credential obtained while the job ran is refused once the job ended, and no
 *     credential is signed for a job that ended;
 *   - processes of a job the controller has ended (while it could not reach the node) are
 *     killed at the node's next heartbeat;
 *   - a task's program is looked up in PATH as the user: root does not probe folders the
 *     user cannot enter.
 */
#include "cluster.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

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

#define NODES 3
#define NOBODY 65534

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=3\nKillWait=2\nMinJobAge=600\nMessageTimeout=10\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* One request to port from this process (root): the answer's error code (0: none), its
 * text into text; the response itself into keep when given. */
static int call_root(uint16_t port, const Tessera__Request *req, char *text, size_t len,
                     Tessera__Response **keep)
{
    char name[64];
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = port,
                                    .munge_socket = cluster.munge.socket, .server_uid = 0,
                                    .target = harness_daemon_name(&cluster, port, name, sizeof(name)),
                                    .timeout_ms = 10000};
    struct rpc_client *cli = NULL;
    Tessera__Response *resp = NULL;
    int code = -1;
    text[0] = '\0';
    if (rpc_client_connect(&cfg, &cli) == TS_OK && rpc_client_call(cli, req, &resp) == TS_OK) {
        code = resp->error ? (int)resp->error->code : 0;
        snprintf(text, len, "%s", resp->error ? resp->error->text : "");
    }
    rpc_client_close(cli);
    if (keep)
        *keep = resp;
    else if (resp)
        tessera__response__free_unpacked(resp, NULL);
    return code;
}

/* The same as uid, from a child that became it (MUNGE vouches for that uid). */
static int call_as(uid_t uid, uint16_t port, const Tessera__Request *req, char *text, size_t len)
{
    if (uid == 0)
        return call_root(port, req, text, len, NULL);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char msg[256];
        int code = -1;
        if (!setgroups(0, NULL) && !setgid(uid) && !setuid(uid))
            code = call_root(port, req, msg, sizeof(msg), NULL);
        if (write(fds[1], &code, sizeof(code)) != sizeof(code))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    int code = -1;
    assert_int_equal(read(fds[0], &code, sizeof(code)), sizeof(code));
    close(fds[0]);
    waitpid(pid, NULL, 0);
    text[0] = '\0';
    return code;
}

static uint16_t node_port(int i)
{
    return cluster.nodes[i - 1].port;
}

static int terminate_step(uid_t uid, int node, unsigned job, unsigned step, unsigned kill_wait)
{
    Tessera__StepSignalRequest sig = TESSERA__STEP_SIGNAL_REQUEST__INIT;
    sig.job_id = job;
    sig.step_id = step;
    sig.terminate = 1;
    sig.kill_wait = kill_wait;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_SIGNAL;
    req.step_signal = &sig;
    char text[256];
    return call_as(uid, node_port(node), &req, text, sizeof(text));
}

/* ------------------------------------------------------------------------------------ */
/* kill_wait */

/* nobody terminates their own step asking for a million seconds' grace: the task, which
 * ignores SIGTERM, is killed after KillWait (2 s) all the same. */
static void test_user_kill_wait_is_killwait(void **state)
{
    unsigned id = SUBMIT_AS(NOBODY, "n1",
                            "srun -n1 sh -c \"trap '' TERM; echo ready; exec sleep 3331\"");
    free(output_with(id, "ready", 20));
    assert_true(cmdcheck_process_running("^sleep 3331"));
    assert_int_equal(terminate_step(NOBODY, 1, id, 0, 1000000), 0);
    cmdcheck_expect_no_process("^sleep 3331", 12);
    cancel_job(id);
}

/* A terminate with a long wait (root may ask for one), then scancel: the controller's
 * terminate (KillWait) brings the SIGKILL forward. srun is stopped meanwhile, so that only
 * the step's own deadline can end the task (a running srun would learn of the job's end
 * and have the step daemon kill its tasks). */
static void test_later_terminate_shortens(void **state)
{
    char log[600];
    snprintf(log, sizeof(log), "%s/shorten.log", cluster.dir);
    pid_t srun = harness_cmd_spawn(&cluster, "srun",
                                   (const char *const[]){"-w", "n2", "-n1", "-J", "shorten", "sh",
                                                         "-c",
                                                         "trap '' TERM; exec sleep 3332", NULL},
                                   log);
    assert_true(srun > 0);
    for (int i = 0; i < 200 && !cmdcheck_process_running("^sleep 3332"); i++)
        usleep(50000);
    struct result r = RUN("squeue", "-h", "-n", "shorten", "-o", "%i");
    expect_ok(&r);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    assert_true(id > 0);
    assert_int_equal(terminate_step(0, 2, id, 0, 1000000), 0);
    assert_int_equal(kill(srun, SIGSTOP), 0);
    assert_true(cmdcheck_process_running("^sleep 3332")); /* SIGTERM is ignored; the wait is long */
    cancel_job(id);
    cmdcheck_expect_no_process("^sleep 3332", 12);
    kill(srun, SIGCONT);
    harness_wait(srun, 20000);
}

/* ------------------------------------------------------------------------------------ */
/* credentials */

static int step_create(unsigned job, Tessera__Response **resp)
{
    Tessera__StepComponentRequest comp = TESSERA__STEP_COMPONENT_REQUEST__INIT;
    Tessera__StepComponentRequest *comps[] = {&comp};
    Tessera__StepCreateRequest sc = TESSERA__STEP_CREATE_REQUEST__INIT;
    sc.job_id = job;
    sc.components = comps;
    sc.n_components = 1;
    sc.name = (char *)"kept";
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_CREATE;
    req.step_create = &sc;
    char text[256];
    return call_root(cluster.ctld_port, &req, text, sizeof(text), resp);
}

static int launch(const Tessera__StepCreateResponse *sc, char *text, size_t len)
{
    Tessera__StepLaunchComponent comp = TESSERA__STEP_LAUNCH_COMPONENT__INIT;
    char *argv[] = {(char *)"sleep", (char *)"4443", NULL};
    comp.argv = argv;
    comp.n_argv = 2;
    Tessera__StepLaunchComponent *comps[] = {&comp};
    Tessera__StepLaunchRequest sl = TESSERA__STEP_LAUNCH_REQUEST__INIT;
    sl.credential = sc->credential;
    sl.signature = sc->signature;
    sl.components = comps;
    sl.n_components = 1;
    sl.io_host = (char *)"127.0.0.1";
    sl.io_port = 1; /* nobody listens: a step daemon that started would find srun gone */
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_LAUNCH;
    req.step_launch = &sl;
    return call_root((uint16_t)sc->layout->nodes[0]->port, &req, text, len, NULL);
}

/* A credential taken while the job ran, used after it ended: refused as revoked; and the
 * controller signs no credential for the ended job. */
static void test_credential_of_ended_job_refused(void **state)
{
    unsigned id = SUBMIT_AS(0, "n3", "sleep 60");
    wait_for(id, "%T", "RUNNING\n", 20);
    Tessera__Response *resp = NULL;
    assert_int_equal(step_create(id, &resp), 0);
    assert_non_null(resp->step_create);
    cancel_job(id);
    wait_for(id, "%T", "CANCELLED\n", 20);
    char text[256];
    assert_int_equal(launch(resp->step_create, text, sizeof(text)), TS_ECRED_REVOKED);
    assert_string_equal(text, "Job credential revoked");
    assert_false(cmdcheck_process_running("^sleep 4443"));
    tessera__response__free_unpacked(resp, NULL);
    resp = NULL;
    assert_int_equal(step_create(id, &resp), TS_EALREADY_DONE);
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
}

/* Ends of jobs and steps the controller does not know are acknowledged (nothing more to
 * do): a node daemon resends a report until it gets a success answer. */
static void test_unknown_ends_acknowledged(void **state)
{
    Tessera__JobCompleteRequest jc = TESSERA__JOB_COMPLETE_REQUEST__INIT;
    jc.job_id = 987654;
    jc.node = (char *)"n1";
    jc.batch = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_COMPLETE;
    req.job_complete = &jc;
    char text[256];
    assert_int_equal(call_root(cluster.ctld_port, &req, text, sizeof(text), NULL), 0);
    Tessera__StepCompleteRequest sc = TESSERA__STEP_COMPLETE_REQUEST__INIT;
    sc.job_id = 987654;
    sc.step_id = 3;
    sc.node = (char *)"n1";
    req.msg_case = TESSERA__REQUEST__MSG_STEP_COMPLETE;
    req.step_complete = &sc;
    assert_int_equal(call_root(cluster.ctld_port, &req, text, sizeof(text), NULL), 0);
}

/* ------------------------------------------------------------------------------------ */
/* a task's program */

/* The first folder of PATH is closed to nobody and holds a program of the same name as
 * one in an open folder later in PATH: searched as nobody, the open one runs (a search by
 * root would pick the closed one, which nobody cannot run). */
static void test_path_searched_as_the_user(void **state)
{
    char secret[600], pub[600], file[700], path_env[1400];
    snprintf(secret, sizeof(secret), "%s/secret", cluster.dir);
    snprintf(pub, sizeof(pub), "%s/pub", cluster.dir);
    assert_int_equal(mkdir(secret, 0700), 0);
    assert_int_equal(mkdir(pub, 0755), 0);
    snprintf(file, sizeof(file), "%s/tsprobe", secret);
    assert_int_equal(harness_write_file(file, "#!/bin/sh\necho secret\n", 0755), 0);
    snprintf(file, sizeof(file), "%s/tsprobe", pub);
    assert_int_equal(harness_write_file(file, "#!/bin/sh\necho public\n", 0755), 0);
    snprintf(path_env, sizeof(path_env), "PATH=%s:%s:/usr/bin:/bin", secret, pub);
    const char *env[] = {path_env, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_full(&cluster, NOBODY, env, "srun",
                              (const char *const[]){"-D", "/tmp", "-n1", "tsprobe", NULL}, &out,
                              &err);
    if (rc != 0 || strcmp(out, "public\n"))
        fail_msg("srun tsprobe as nobody: exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    free(out);
    free(err);
    /* a program nowhere in PATH: not found, as before */
    snprintf(path_env, sizeof(path_env), "PATH=%s:/usr/bin:/bin", pub);
    rc = harness_cmd_full(&cluster, NOBODY, env, "srun",
                          (const char *const[]){"-D", "/tmp", "-n1", "tsnowhere", NULL}, &out,
                          &err);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "No such file or directory"));
    free(out);
    free(err);
}

/* ------------------------------------------------------------------------------------ */
/* heartbeats */

/* The node daemon is stopped until the controller ends its job NODE_FAIL (no terminate
 * can reach it then); once it runs again, its next heartbeat learns that the job is not
 * running there and kills what is left. */
static void test_heartbeat_kills_what_the_controller_ended(void **state)
{
    unsigned id = SUBMIT_AS(NOBODY, "n3", "echo started; exec sleep 4444");
    wait_for(id, "%T", "RUNNING\n", 20);
    free(output_with(id, "started", 20));
    pid_t noded = cluster.nodes[2].pid;
    assert_int_equal(kill(noded, SIGSTOP), 0);
    wait_for(id, "%T", "NODE_FAIL\n", 20);
    assert_true(cmdcheck_process_running("^sleep 4444"));
    assert_int_equal(kill(noded, SIGCONT), 0);
    cmdcheck_expect_no_process("^sleep 4444", 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_kill_wait_is_killwait),
        cmocka_unit_test(test_later_terminate_shortens),
        cmocka_unit_test(test_credential_of_ended_job_refused),
        cmocka_unit_test(test_unknown_ends_acknowledged),
        cmocka_unit_test(test_path_searched_as_the_user),
        cmocka_unit_test(test_heartbeat_kills_what_the_controller_ended),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
