/* srun and steps on a four-node cluster (docs/04-steps.md): labelled output over components,
 * global ranks and totals, the het-group bound error, step ids, exit codes, input,
 * steps in squeue and scontrol, scancel of a step, srun outside an allocation, a forged
 * and a replayed launch refused, and an MPICH program forming one world across
 * components (also with two components on one node).
 */
#include "cluster.h"

#include "common/auth/cred.h"
#include "common/rpc/rpc_client.h"
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 4

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=5\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

/* A shell script run by salloc with the given allocation options (before "--"). */
static struct result salloc_sh(const char *const opts[], const char *script)
{
    const char *args[40];
    size_t n = 0;
    args[n++] = "-Q";
    for (size_t i = 0; opts[i] && n < 34; i++)
        args[n++] = opts[i];
    args[n++] = "sh";
    args[n++] = "-c";
    args[n++] = script;
    args[n] = NULL;
    return cmdcheck_run(&cluster, "salloc", args);
}
#define SALLOC_SH(script, ...) salloc_sh((const char *const[]){__VA_ARGS__, NULL}, script)

/* ------------------------------------------------------------------------------------ */

/* docs/04-steps.md §2.3: "srun --label -n2 : -n1 hostname runs hostname three times,
 * labelled 0, 1, 2" */
static void test_label_over_components(void **state)
{
    (void)state;
    struct result r = SALLOC_SH("srun --label -n2 : -n1 hostname", "-n2", ":", "-n1");
    expect_ok(&r);
    char host[256];
    gethostname(host, sizeof(host));
    expect_line(r.out, "0: %s", host);
    expect_line(r.out, "1: %s", host);
    expect_line(r.out, "2: %s", host);
    assert_int_equal(count_lines(r.out), 3);
    result_free(&r);
}

/* salloc -N1 : -N2 then srun --het-group=0,1: three tasks, ranks 0-2, totals over both. */
static void test_het_group_ranks_and_totals(void **state)
{
    (void)state;
    struct result r = SALLOC_SH(
        "srun --het-group=0,1 --label sh -c 'echo $SLURM_PROCID/$SLURM_NTASKS/$SLURM_NPROCS/"
        "$SLURM_STEP_NUM_TASKS/$SLURM_JOB_ID/$SLURM_HET_SIZE/$SLURM_LOCALID/$SLURM_NODEID/"
        "$SLURM_STEP_ID'",
        "-N1", ":", "-N2");
    expect_ok(&r);
    assert_int_equal(count_lines(r.out), 3);
    unsigned job = 0;
    const char *p = strstr(r.out, "/3/3/3/");
    assert_non_null(p);
    job = (unsigned)strtoul(p + 7, NULL, 10);
    assert_true(job > 0);
    for (int rank = 0; rank < 3; rank++) {
        char want[64];
        snprintf(want, sizeof(want), "%d: %d/3/3/3/%u/2/", rank, rank, job);
        if (!strstr(r.out, want))
            fail_msg("no '%s' in:\n%s", want, r.out);
    }
    result_free(&r);

    /* a step on component 1 alone numbers from 0, and SLURM_JOB_ID is still the leader */
    r = SALLOC_SH("srun --het-group=1 sh -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_JOB_ID "
                  "$SLURM_JOB_ID_HET_GROUP_1'",
                  "-N1", ":", "-N2");
    expect_ok(&r);
    unsigned leader = 0, comp1 = 0;
    int rank = -1, total = 0;
    assert_int_equal(sscanf(r.out, "%d %d %u %u", &rank, &total, &leader, &comp1), 4);
    assert_int_equal(total, 2);
    assert_int_equal(comp1, leader + 1);
    assert_true(strstr(r.out, "0 2 ") && strstr(r.out, "1 2 "));
    result_free(&r);
}

/* docs/04-steps.md §4.1: "--het-group=0,2 A : --het-group=1 B gives ranks A, B, A": ranks follow
 * the components' order, whatever the command line's. */
static void test_rank_order_by_component(void **state)
{
    (void)state;
    struct result r = SALLOC_SH("srun --label --het-group=0,2 sh -c 'echo A' : "
                                "--het-group=1 sh -c 'echo B'",
                                "-N1", ":", "-N1", ":", "-N1");
    expect_ok(&r);
    expect_line(r.out, "0: A");
    expect_line(r.out, "1: B");
    expect_line(r.out, "2: A");
    assert_int_equal(count_lines(r.out), 3);
    result_free(&r);
}

/* Tasks run as the user who ran srun; the launch is authenticated as that user. */
static void test_runs_as_user(void **state)
{
    (void)state;
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, 65534, "srun",
                            (const char *const[]){"-D", "/tmp", "-n2", "--label", "sh", "-c",
                                                  "echo $(id -u) $SLURM_JOB_USER", NULL},
                            &out, &err);
    if (rc != 0)
        fail_msg("srun as nobody: exit %d\n%s\n%s", rc, out, err);
    expect_line(out, "0: 65534 nobody");
    expect_line(out, "1: 65534 nobody");
    free(out);
    free(err);
}

/* docs/04-steps.md §2.4's error for a het group beyond the allocation, exit status 1. */
static void test_het_group_bound(void **state)
{
    (void)state;
    struct result r = SALLOC_SH("srun --het-group=2 true", "-N1", ":", "-N2");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Requested het-group offset exceeds highest hetjob index "
                       "(2 > 1)");
    result_free(&r);
    /* one of several groups: Slurm 22.05's other wording ("het group", no hyphen) */
    r = SALLOC_SH("srun true : true : true", "-N1", ":", "-N2");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Attempt to run a job step with het group value of 2, but "
                       "the job allocation has maximum value of 1");
    result_free(&r);
    r = SALLOC_SH("srun --het-group=0-2 true", "-N1", ":", "-N2");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Attempt to run a job step with het group value of 2, but "
                       "the job allocation has maximum value of 1");
    result_free(&r);

    r = SALLOC_SH("srun --het-group=0 true : --het-group=0 true", "-N1", ":", "-N2");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: fatal: Duplicate het groups in single srun not supported");
    result_free(&r);
    r = SALLOC_SH("srun --het-group=x true", "-N1", ":", "-N2");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Invalid --het-group value: x");
    result_free(&r);
}

/* docs/04-steps.md §3.2's step ids: 0 on both, then 1 on component 0 only, then 2 on both. */
static void test_step_ids(void **state)
{
    (void)state;
    struct result r = SALLOC_SH(
        "srun --het-group=0,1 sh -c 'echo a$SLURM_PROCID $SLURM_STEP_ID'; "
        "srun --het-group=0 sh -c 'echo b$SLURM_PROCID $SLURM_STEP_ID'; "
        "srun --het-group=0,1 sh -c 'echo c$SLURM_PROCID $SLURM_STEP_ID'; "
        /* the node daemons report a step's end just after srun has seen its tasks end */
        "for i in $(seq 100); do "
        "squeue -h -s -t all -j $SLURM_JOB_ID -o '%T' | grep -q RUNNING || break; "
        "sleep 0.1; done; "
        "squeue -h -s -t all -j $SLURM_JOB_ID -o '%i %j %T'",
        "-N1", ":", "-N1");
    expect_ok(&r);
    expect_line(r.out, "a0 0");
    expect_line(r.out, "a1 0");
    expect_line(r.out, "b0 1");
    expect_line(r.out, "c0 2");
    expect_line(r.out, "c1 2");
    /* the records: 1721.0 1722.0, 1721.1 alone, 1721.2 1722.2 (docs/04-steps.md §3.2) */
    unsigned job = 0;
    const char *p = strstr(r.out, ".0 sh COMPLETED");
    while (p && p > r.out && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p)
        job = (unsigned)strtoul(p, NULL, 10);
    assert_true(job > 0);
    char want[64];
    const unsigned have[][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 2}};
    for (size_t i = 0; i < 5; i++) {
        snprintf(want, sizeof(want), "%u.%u sh COMPLETED", job + have[i][0], have[i][1]);
        expect_line(r.out, "%s", want);
    }
    snprintf(want, sizeof(want), "%u.1 ", job + 1);
    assert_null(strstr(r.out, want));
    result_free(&r);
}

/* SchedulerParameters=disable_hetjob_steps: steps over components are refused with
 * Slurm's words; steps on one component still run. Cyclic distribution (docs/04-steps.md §4.2):
 * tasks go round-robin within each component. */
static void test_disable_hetjob_steps_and_cyclic(void **state)
{
    (void)state;
    char nodes[2048], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    const char *base = "NodedTimeout=5\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n";
    snprintf(extra, sizeof(extra),
             "%sSchedulerParameters=disable_hetjob_steps\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n",
             base, nodes);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    struct result r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);
    r = SALLOC_SH("srun --het-group=0,1 true; echo rc=$?; srun --het-group=1 true; echo rc=$?",
                  "-N1", ":", "-N1");
    expect_ok(&r);
    expect_line(r.out, "rc=1");
    expect_line(r.out, "rc=0");
    expect_line(r.err, "srun: fatal: Job steps that span multiple components of a "
                       "heterogeneous job are not currently supported");
    result_free(&r);
    snprintf(extra, sizeof(extra),
             "%s%sPartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n", base,
             nodes);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    r = RUN("scontrol", "reconfigure");
    expect_ok(&r);
    result_free(&r);

    /* 4 tasks on 2 nodes per component: cyclic gives 0,2 | 1,3 and 4,6 | 5,7 */
    r = SALLOC_SH("srun -m cyclic --label -n4 : -n4 sh -c 'echo $SLURMD_NODENAME'",
                  "-N2", "--ntasks-per-node=2", ":", "-N2", "--ntasks-per-node=2");
    expect_ok(&r);
    char node[8][16];
    for (int rank = 0; rank < 8; rank++) {
        char want[16];
        snprintf(want, sizeof(want), "%d: ", rank);
        const char *p = strstr(r.out, want);
        assert_non_null(p);
        sscanf(p + strlen(want), "%15s", node[rank]);
    }
    assert_string_equal(node[0], node[2]);
    assert_string_equal(node[1], node[3]);
    assert_string_not_equal(node[0], node[1]);
    assert_string_equal(node[4], node[6]);
    assert_string_equal(node[5], node[7]);
    assert_string_not_equal(node[4], node[5]);
    result_free(&r);
}

/* Exit codes as Slurm's srun: the highest, 128+signal; Slurm's error lines. */
static void test_exit_codes(void **state)
{
    (void)state;
    struct result r = SALLOC_SH("srun -n2 sh -c 'exit $((SLURM_PROCID + 2))'; echo rc=$?", "-n2");
    expect_ok(&r);
    expect_line(r.out, "rc=3");
    assert_non_null(strstr(r.err, ": task 0: Exited with exit code 2"));
    assert_non_null(strstr(r.err, ": task 1: Exited with exit code 3"));
    result_free(&r);

    r = SALLOC_SH("srun -n1 sh -c 'kill -9 $$'; echo rc=$?", "-n1");
    expect_ok(&r);
    expect_line(r.out, "rc=137");
    assert_non_null(strstr(r.err, ": task 0: Killed"));
    result_free(&r);

    r = SALLOC_SH("srun -n1 /no/such/program; echo rc=$?", "-n1");
    expect_ok(&r);
    expect_line(r.out, "rc=2");
    assert_non_null(strstr(r.err, "No such file or directory"));
    result_free(&r);
}

/* Input goes to task 0; output files with %t. */
static void test_input_and_files(void **state)
{
    (void)state;
    char script[2048];
    snprintf(script, sizeof(script),
             "echo hello | srun -n2 --label sh -c 'cat; echo done'; "
             "srun -n2 -o %s/out.%%t sh -c 'echo task $SLURM_PROCID'; "
             "cat %s/out.0 %s/out.1",
             outdir, outdir, outdir);
    struct result r = SALLOC_SH(script, "-n2");
    expect_ok(&r);
    expect_line(r.out, "0: hello");
    expect_line(r.out, "0: done");
    expect_line(r.out, "1: done");
    assert_null(strstr(r.out, "1: hello"));
    expect_line(r.out, "task 0");
    expect_line(r.out, "task 1");
    result_free(&r);
}

/* Ctrl-C: the first reaches the tasks; two within a second stop the step. */
static void test_interrupts(void **state)
{
    (void)state;
    char script[4096];
    /* each task says it is ready (its trap set) with a file; then the Ctrl-C */
    snprintf(script, sizeof(script),
             "rm -f %s/ready.*; "
             "srun -n2 --label sh -c 'trap \"echo got INT $SLURM_PROCID; exit 7\" INT; "
             "touch %s/ready.$SLURM_PROCID; while :; do sleep 0.1; done' & "
             "while [ ! -e %s/ready.0 -o ! -e %s/ready.1 ]; do sleep 0.1; done; "
             "kill -INT $!; wait $!; echo rc=$?",
             outdir, outdir, outdir, outdir);
    struct result r = SALLOC_SH(script, "-n2");
    expect_ok(&r);
    expect_line(r.out, "0: got INT 0");
    expect_line(r.out, "1: got INT 1");
    expect_line(r.out, "rc=7");
    assert_non_null(strstr(r.err, "srun: interrupt (one more within 1 sec to abort)"));
    result_free(&r);

    /* the second ^C once srun has taken the first (its words say so) */
    snprintf(script, sizeof(script),
             "rm -f %s/ready.* %s/int.err; "
             "srun -n1 sh -c \"trap '' INT TERM; touch %s/ready.0; sleep 20\" 2>%s/int.err & "
             "while [ ! -e %s/ready.0 ]; do sleep 0.1; done; "
             "kill -INT $!; until grep -q 'one more within' %s/int.err; do sleep 0.1; done; "
             "kill -INT $!; wait $!; echo rc=$?; cat %s/int.err >&2",
             outdir, outdir, outdir, outdir, outdir, outdir, outdir);
    r = SALLOC_SH(script, "-n1");
    expect_ok(&r);
    expect_line(r.out, "rc=137");
    assert_non_null(strstr(r.err, "srun: forcing job termination"));
    result_free(&r);
}

/* A step daemon that dies: srun learns from the controller that the step is over. */
static void test_step_daemon_killed(void **state)
{
    (void)state;
    /* only this cluster's step daemons: children of its node daemons (other tests may run
     * beside this one) */
    char parents[128] = "", script[512];
    for (int i = 0; i < NODES; i++)
        snprintf(parents + strlen(parents), sizeof(parents) - strlen(parents), "%s%d",
                 i ? "," : "", (int)cluster.nodes[i].pid);
    snprintf(script, sizeof(script),
             "srun -n1 sleep 20 & "
             "until pgrep -x -P %s tessera-stepd >/dev/null; do sleep 0.1; done; "
             "pkill -KILL -x -P %s tessera-stepd; wait $!; echo rc=$?",
             parents, parents);
    struct result r = SALLOC_SH(script, "-n1");
    expect_ok(&r);
    expect_line(r.out, "rc=1");
    assert_non_null(strstr(r.err, "ended without reporting"));
    result_free(&r);
}

/* A node daemon killed and restarted under a running step: the new daemon kills what its
 * earlier life left, the controller ends the step there, srun learns it and ends. */
static void test_node_daemon_restarted(void **state)
{
    (void)state;
    char log[600], marker[600], cmd[700];
    snprintf(log, sizeof(log), "%s/restart.log", outdir);
    snprintf(marker, sizeof(marker), "%s/restart.started", outdir);
    snprintf(cmd, sizeof(cmd), "touch %s; exec sleep 60", marker);
    pid_t pid = harness_cmd_spawn(&cluster, "srun",
                                  (const char *const[]){"-w", "n4", "-n1", "sh", "-c", cmd, NULL},
                                  log);
    assert_true(pid > 0);
    /* the task runs (not merely the step exists: its launch may still be on its way) */
    for (int i = 0; i < 200 && access(marker, F_OK) != 0; i++)
        usleep(50000);
    assert_int_equal(access(marker, F_OK), 0);
    assert_int_equal(harness_noded_stop(&cluster, 4, SIGKILL) >= 0, 1);
    assert_int_equal(harness_noded_start(&cluster, 4), 0);
    int status = harness_wait(pid, 20000);
    assert_true(WIFEXITED(status));
    assert_int_not_equal(WEXITSTATUS(status), 0);
    char *text = harness_read_file(log);
    if (!text || !strstr(text, "ended without reporting"))
        fail_msg("srun said:\n%s", text ? text : "(nothing)");
    free(text);
    assert_int_equal(harness_wait_nodes(&cluster, NODES, 15000), 0);
}

/* srun outside an allocation makes one, runs, and releases it. */
static void test_srun_alone(void **state)
{
    (void)state;
    struct result r = RUN("srun", "--label", "-n2", ":", "-n1", "sh", "-c",
                          "echo $SLURM_PROCID of $SLURM_NTASKS in $SLURM_HET_SIZE");
    expect_ok(&r);
    expect_line(r.out, "0: 0 of 3 in 2");
    expect_line(r.out, "1: 1 of 3 in 2");
    expect_line(r.out, "2: 2 of 3 in 2");
    assert_string_equal(r.err, "");
    result_free(&r);

    r = RUN("squeue", "-h", "-t", "all", "-n", "sh", "-o", "%T");
    expect_ok(&r);
    expect_line(r.out, "COMPLETED");
    result_free(&r);

    r = RUN("srun", "-n1", "false");
    assert_int_equal(r.rc, 1);
    result_free(&r);
}

/* Steps in squeue -s and scontrol show step; scancel of one step. */
static void test_steps_shown_and_cancelled(void **state)
{
    (void)state;
    struct result r = SALLOC_SH(
        "srun --het-group=0,1 sleep 30 & "
        "until [ $(squeue -h -s -j $SLURM_JOB_ID | wc -l) = 2 ]; do sleep 0.1; done; "
        "squeue -h -s -j $SLURM_JOB_ID -o '%i %j %A'; "
        "scontrol show step $SLURM_JOB_ID.0 | head -1 | cut -d' ' -f1; "
        "scancel $SLURM_JOB_ID.0; wait $!; echo rc=$?; "
        /* the step ends once its nodes have reported, a moment after srun's end */
        "for i in $(seq 50); do squeue -h -s -j $SLURM_JOB_ID | grep -q . || break; "
        "sleep 0.1; done; "
        "squeue -h -s -t all -j $SLURM_JOB_ID -o '%i %T'",
        "-N1", ":", "-N2");
    unsigned job = 0;
    const char *p = strstr(r.out ? r.out : "", "StepId=");
    if (p)
        job = (unsigned)strtoul(p + 7, NULL, 10);
    if (!job)
        fail_msg("no StepId line:\nstdout:\n%s\nstderr:\n%s", r.out, r.err);
    expect_line(r.out, "%u.0 sleep 1", job);
    expect_line(r.out, "%u.0 sleep 2", job + 1);
    expect_line(r.out, "%u.0 CANCELLED", job);
    expect_line(r.out, "%u.0 CANCELLED", job + 1);
    assert_null(strstr(r.out, "rc=0"));
    result_free(&r);
}

/* ------------------------------------------------------------------------------------ */
/* forged and replayed launches */

/* A client of the daemon named target (rpc_conf.h) on port. */
static struct rpc_client *connect_to(uint16_t port, uid_t server_uid, const char *target)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = port,
                                    .munge_socket = cluster.munge.socket,
                                    .server_uid = server_uid, .target = target,
                                    .timeout_ms = 10000};
    struct rpc_client *cli = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    return cli;
}

static int launch_with(const Tessera__StepCreateResponse *sc, const uint8_t *sig, size_t siglen,
                       char *text, size_t len)
{
    Tessera__StepLaunchComponent comp = TESSERA__STEP_LAUNCH_COMPONENT__INIT;
    char *argv[] = {(char *)"true", NULL};
    comp.argv = argv;
    comp.n_argv = 1;
    Tessera__StepLaunchComponent *comps[] = {&comp};
    Tessera__StepLaunchRequest sl = TESSERA__STEP_LAUNCH_REQUEST__INIT;
    sl.credential = sc->credential;
    sl.signature.data = (uint8_t *)sig;
    sl.signature.len = siglen;
    sl.components = comps;
    sl.n_components = 1;
    sl.io_host = (char *)"127.0.0.1";
    sl.io_port = 1; /* nobody: the step daemon finds srun gone and ends */
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_LAUNCH;
    req.step_launch = &sl;
    const Tessera__StepLayoutNode *n = sc->layout->nodes[0];
    char target[64];
    snprintf(target, sizeof(target), "itest/noded/%s", n->name);
    struct rpc_client *cli = connect_to((uint16_t)n->port, 0, target);
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    int code = resp->error ? (int)resp->error->code : 0;
    snprintf(text, len, "%s", resp->error ? resp->error->text : "");
    tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
    return code;
}

static void test_forged_and_replayed_launch(void **state)
{
    (void)state;
    struct result r = RUN("sbatch", "--parsable", "-D", outdir, "-N1", "--wrap", "sleep 60");
    expect_ok(&r);
    unsigned job = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", job);
    for (int i = 0; i < 100; i++) {
        r = RUN("squeue", "-h", "-j", sid, "-o", "%T");
        int running = r.out && !strcmp(r.out, "RUNNING\n");
        result_free(&r);
        if (running)
            break;
        usleep(100000);
    }

    /* a real step credential, as srun would get it */
    Tessera__StepComponentRequest comp = TESSERA__STEP_COMPONENT_REQUEST__INIT;
    Tessera__StepComponentRequest *comps[] = {&comp};
    Tessera__StepCreateRequest sc = TESSERA__STEP_CREATE_REQUEST__INIT;
    sc.job_id = job;
    sc.components = comps;
    sc.n_components = 1;
    sc.name = (char *)"forged";
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_CREATE;
    req.step_create = &sc;
    struct rpc_client *cli = connect_to(cluster.ctld_port, 0, HARNESS_CTLD_NAME);
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    assert_null(resp->error);
    const Tessera__StepCreateResponse *step = resp->step_create;
    char text[256];

    /* a flipped bit in the signature */
    uint8_t bad[64];
    memcpy(bad, step->signature.data, 64);
    bad[7] ^= 1;
    assert_int_equal(launch_with(step, bad, 64, text, sizeof(text)), TS_ECRED_INVALID);
    assert_string_equal(text, "Invalid job credential");
    /* the genuine launch, once */
    assert_int_equal(launch_with(step, step->signature.data, 64, text, sizeof(text)), 0);
    /* and its replay */
    assert_int_equal(launch_with(step, step->signature.data, 64, text, sizeof(text)),
                     TS_ECRED_REPLAYED);

    /* a credential signed with the controller's own key, but expired: refused as such */
    char keypath[600], why[256];
    snprintf(keypath, sizeof(keypath), "%s/cred_ed25519.pem", cluster.state);
    struct cred_key *key = NULL;
    assert_int_equal(cred_key_load_private(keypath, &key, why, sizeof(why)), TS_OK);
    Tessera__StepLayout *l = tessera__step_layout__unpack(NULL, step->credential.len,
                                                          step->credential.data);
    assert_non_null(l);
    l->step_id += 1000; /* not the launch seen above */
    l->expires = (int64_t)time(NULL) - 5;
    Tessera__StepCreateResponse old = *step;
    old.credential.len = tessera__step_layout__get_packed_size(l);
    old.credential.data = malloc(old.credential.len);
    tessera__step_layout__pack(l, old.credential.data);
    uint8_t sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(key, old.credential.data, old.credential.len, sig), TS_OK);
    assert_int_equal(launch_with(&old, sig, sizeof(sig), text, sizeof(text)), TS_ECRED_EXPIRED);
    free(old.credential.data);
    /* issued before the node daemon started: a replay across its restart */
    l->expires = (int64_t)time(NULL) + 60;
    l->issued = 1000;
    old.credential.len = tessera__step_layout__get_packed_size(l);
    old.credential.data = malloc(old.credential.len);
    tessera__step_layout__pack(l, old.credential.data);
    assert_int_equal(cred_sign(key, old.credential.data, old.credential.len, sig), TS_OK);
    assert_int_equal(launch_with(&old, sig, sizeof(sig), text, sizeof(text)),
                     TS_ECRED_REPLAYED);
    free(old.credential.data);
    tessera__step_layout__free_unpacked(l, NULL);
    cred_key_free(key);
    tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
    r = RUN("scancel", sid);
    result_free(&r);
}

/* ------------------------------------------------------------------------------------ */
/* one MPI world */

static const char mpi_source[] =
    "#include <mpi.h>\n"
    "#include <stdio.h>\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    int rank, size, me, sum = 0;\n"
    "    MPI_Init(&argc, &argv);\n"
    "    MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
    "    MPI_Comm_size(MPI_COMM_WORLD, &size);\n"
    "    me = rank + 1;\n"
    "    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);\n"
    "    printf(\"rank %d of %d sum %d\\n\", rank, size, sum);\n"
    "    MPI_Finalize();\n"
    "    return 0;\n"
    "}\n";

static char mpi_program[600];

static int build_mpi(void)
{
    if (mpi_program[0])
        return 0;
    char src[600];
    snprintf(src, sizeof(src), "%s/mpi_hello.c", outdir);
    snprintf(mpi_program, sizeof(mpi_program), "%s/mpi_hello", outdir);
    if (harness_write_file(src, mpi_source, 0644))
        return -1;
    char *argv[] = {(char *)"/usr/bin/mpicc", src, (char *)"-o", mpi_program, NULL};
    char *err = NULL;
    int rc = harness_run(argv, NULL, NULL, &err, 120000);
    if (rc != 0)
        fail_msg("mpicc failed (%d): %s", rc, err);
    free(err);
    return 0;
}

static void check_world(const char *out, int size)
{
    for (int rank = 0; rank < size; rank++)
        expect_line(out, "%d: rank %d of %d sum %d", rank, rank, size, size * (size + 1) / 2);
}

static void test_mpi_world(void **state)
{
    (void)state;
    assert_int_equal(build_mpi(), 0);
    char script[1024];
    snprintf(script, sizeof(script), "srun --label -n2 : -n2 %s", mpi_program);
    struct result r = SALLOC_SH(script, "-n2", ":", "-n2");
    expect_ok(&r);
    check_world(r.out, 4);
    result_free(&r);

    /* two components placed on one node: one step instance, one PMI server */
    r = SALLOC_SH(script, "-n2", "-w", "n1", ":", "-n2", "-w", "n1");
    expect_ok(&r);
    check_world(r.out, 4);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_over_components),
        cmocka_unit_test(test_het_group_ranks_and_totals),
        cmocka_unit_test(test_rank_order_by_component),
        cmocka_unit_test(test_runs_as_user),
        cmocka_unit_test(test_het_group_bound),
        cmocka_unit_test(test_step_ids),
        cmocka_unit_test(test_disable_hetjob_steps_and_cyclic),
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_input_and_files),
        cmocka_unit_test(test_interrupts),
        cmocka_unit_test(test_step_daemon_killed),
        cmocka_unit_test(test_node_daemon_restarted),
        cmocka_unit_test(test_srun_alone),
        cmocka_unit_test(test_steps_shown_and_cancelled),
        cmocka_unit_test(test_forged_and_replayed_launch),
        cmocka_unit_test(test_mpi_world),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
