/* Signals to running jobs through the real commands, with Slurm 22.05's behaviour (seen on
 * its own cluster) as the expectation: scancel --signal reaches the steps only, -b the
 * batch shell alone, -f everything; sbatch --signal=[B:]SIG@TIME warns TIME seconds before
 * the time limit, once per run, also across a controller restart; scancel's filters
 * (-q, -A, -w) and -i, and an unprivileged user who cannot reach other users' jobs.
 */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#define NODES 4
#define NOBODY 65534
#define JOB_FILTER_LIMIT 1024 /* JOB_FILTER_MAX_ITEMS of ctld/job.h */

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    char nodes[2048], extra[4096];
    harness_node_lines(&cluster, NODES, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "NodedTimeout=3\nKillWait=1\nMinJobAge=600\nMessageTimeout=5\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    if (harness_cluster_start(&cluster, NODES, outdir, sizeof(outdir)))
        return -1;
    /* a process that notes each signal it gets: "part.sh NAME FILE" */
    char path[600];
    snprintf(path, sizeof(path), "%s/part.sh", outdir);
    harness_write_file(path,
                       "#!/bin/bash\n"
                       "trap \"echo $1-USR1 >> $2\" USR1\n"
                       "trap \"echo $1-USR2 >> $2\" USR2\n"
                       "echo $1-ready >> $2\n"
                       "while :; do sleep 0.1; done\n",
                       0755);
    /* a batch shell that notes its signals, with a child and a step that note theirs */
    char text[2048];
    snprintf(path, sizeof(path), "%s/job.sh", outdir);
    snprintf(text, sizeof(text),
             "#!/bin/bash\n"
             "D=%s; F=$1\n" /* the script runs from the node's copy of it */
             "trap \"echo batch-USR1 >> $F\" USR1\n"
             "trap \"echo batch-USR2 >> $F\" USR2\n"
             "$D/part.sh child $F &\n"
             "srun -n1 $D/part.sh step $F &\n"
             "echo batch-ready >> $F\n"
             "while :; do sleep 0.1; done\n",
             outdir);
    harness_write_file(path, text, 0755);
    return 0;
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

static int count_note(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += !strncmp(p, line, len) && (p[len] == '\n' || p[len] == '\0');
    return n;
}

/* The notes file once it holds line at least `times` times (up to seconds); malloc'd. */
static char *wait_note(const char *path, const char *line, int times, int seconds)
{
    char *text = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(text);
        text = harness_read_file(path);
        if (text && count_note(text, line) >= times)
            return text;
        usleep(100000);
    }
    fail_msg("%s: no %d x '%s' after %d s; it holds:\n%s", path, times, line, seconds,
             text ? text : "(nothing)");
    return NULL;
}

static void notes_path(const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.notes", outdir, name);
}

/* job.sh with its notes in name.notes, submitted with args; running, all three ready. */
static unsigned start_noting_job(const char *name, const char *time_opt, const char *signal_opt)
{
    char script[600], notes[600];
    snprintf(script, sizeof(script), "%s/job.sh", outdir);
    notes_path(name, notes, sizeof(notes));
    unlink(notes);
    unsigned id = signal_opt ? SUBMIT("-n2", time_opt, signal_opt, script, notes)
                             : SUBMIT("-n2", time_opt, script, notes);
    char *text = wait_note(notes, "batch-ready", 1, 20);
    free(text);
    text = wait_note(notes, "step-ready", 1, 20);
    free(text);
    text = wait_note(notes, "child-ready", 1, 20);
    free(text);
    return id;
}

static void scancel_ok(const char *a, const char *b, const char *c, unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", a, b, c, sid);
    expect_ok(&r);
    result_free(&r);
}

/* scancel --signal: steps only; -b: the batch shell alone (not its child, not the
 * step); -f: the shell, its child and the step. The job lives on through all of it. */
static void test_scancel_signal_scopes(void **state)
{
    unsigned id = start_noting_job("scopes", "-t10", NULL);
    char notes[600];
    notes_path("scopes", notes, sizeof(notes));

    scancel_ok("--signal=USR1", "-v", "-Q", id);
    free(wait_note(notes, "step-USR1", 1, 10));
    scancel_ok("-b", "-s", "USR2", id);
    free(wait_note(notes, "batch-USR2", 1, 10));
    scancel_ok("--full", "--signal", "USR1", id);
    free(wait_note(notes, "batch-USR1", 1, 10));
    free(wait_note(notes, "child-USR1", 1, 10));
    char *text = wait_note(notes, "step-USR1", 2, 10);
    /* what reached whom, over all three */
    assert_int_equal(count_note(text, "batch-USR1"), 1); /* from -f alone */
    assert_int_equal(count_note(text, "child-USR1"), 1); /* from -f alone */
    assert_int_equal(count_note(text, "batch-USR2"), 1);
    assert_int_equal(count_note(text, "child-USR2"), 0); /* -b: the shell alone */
    assert_int_equal(count_note(text, "step-USR2"), 0);
    free(text);
    wait_for(id, "%T", "RUNNING\n", 5);
    scancel_ok("-f", "-Q", "-v", id); /* no --signal: the job ends, as always */
    wait_for(id, "%T", "CANCELLED\n", 20);
}

/* --signal=B:USR1@T reaches the batch shell alone, T seconds before the limit;
 * --signal=USR2@T the steps alone. */
static void test_warning_signal(void **state)
{
    unsigned b = start_noting_job("warn-batch", "-t0:30", "--signal=B:USR1@28");
    unsigned s = start_noting_job("warn-steps", "-t0:30", "--signal=USR2@28");
    char nb[600], ns[600];
    notes_path("warn-batch", nb, sizeof(nb));
    notes_path("warn-steps", ns, sizeof(ns));
    char *tb = wait_note(nb, "batch-USR1", 1, 15);
    char *ts = wait_note(ns, "step-USR2", 1, 15);
    /* the limit is not reached yet: both still run */
    wait_for(b, "%T", "RUNNING\n", 5);
    wait_for(s, "%T", "RUNNING\n", 5);
    scancel_ok("-Q", "-Q", "-Q", b);
    scancel_ok("-Q", "-Q", "-Q", s);
    wait_for(b, "%T", "CANCELLED\n", 20);
    wait_for(s, "%T", "CANCELLED\n", 20);
    free(tb);
    free(ts);
    tb = harness_read_file(nb);
    ts = harness_read_file(ns);
    assert_int_equal(count_note(tb, "step-USR1"), 0);
    assert_int_equal(count_note(tb, "child-USR1"), 0);
    assert_int_equal(count_note(ts, "batch-USR2"), 0);
    assert_int_equal(count_note(ts, "child-USR2"), 0);
    free(tb);
    free(ts);

    /* bad specifications are refused at once, by the command and by the controller */
    struct result r = RUN("sbatch", "--signal=R:USR1@10", "--wrap=true");
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "sbatch: error: --signal=R:USR1@10 is not supported\n");
    result_free(&r);
    r = RUN("sbatch", "--signal=USR1@70000", "--wrap=true");
    assert_int_equal(r.rc, 255); /* as Slurm's: a fatal option error */
    assert_string_equal(r.err, "sbatch: error: Invalid --signal specification\n");
    result_free(&r);
    /* a step's own warning is not built: refused, never ignored */
    unsigned id = SUBMIT("--wrap=srun --signal=USR1@5 true; echo rc=$?");
    char *out = output_with(id, "rc=", 20);
    assert_string_equal(out, "srun: error: --signal for a step within an allocation is not "
                             "supported\nrc=1\n");
    free(out);
}

/* The warning is in the job's record: a controller killed after sending it does not send
 * it again; the job still ends at its limit. */
static void test_warning_survives_restart(void **state)
{
    unsigned id = start_noting_job("warn-restart", "-t0:08", "--signal=B:USR1@6");
    char notes[600];
    notes_path("warn-restart", notes, sizeof(notes));
    free(wait_note(notes, "batch-USR1", 1, 15));
    harness_ctld_stop(&cluster, SIGKILL);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    wait_for(id, "%T", "TIMEOUT\n", 30);
    char *text = harness_read_file(notes);
    assert_int_equal(count_note(text, "batch-USR1"), 1);
    free(text);
}

/* ------------------------------------------------------------------------------------ */

static unsigned submit_as(uid_t uid, const char *a, const char *b)
{
    const char *args[] = {"--parsable", "-D", outdir, "-n1", a, b, "--wrap=sleep 300", NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, uid, "sbatch", args, &out, &err);
    if (rc != 0)
        fail_msg("sbatch as uid %u failed (%d): %s", (unsigned)uid, rc, err);
    unsigned id = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(err);
    wait_for(id, "%T", "RUNNING\n", 20);
    return id;
}

static struct result scancel_as(uid_t uid, const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, uid, "scancel", args, &r.out, &r.err);
    return r;
}

/* scancel -q, -A, -w choose among the caller's own jobs; another user's job with the same
 * QOS is out of reach (the controller decides, not the command). */
static void test_scancel_filters(void **state)
{
    unsigned root_high = submit_as(0, "-q", "high");
    unsigned high = submit_as(NOBODY, "-q", "high");
    unsigned low = submit_as(NOBODY, "-q", "low");
    unsigned proj = submit_as(NOBODY, "-A", "proj");
    unsigned on3 = submit_as(NOBODY, "-w", "n3");

    struct result r = scancel_as(NOBODY, (const char *const[]){"-q", "high", NULL});
    expect_ok(&r);
    result_free(&r);
    wait_for(high, "%T", "CANCELLED\n", 20);
    wait_for(low, "%T", "RUNNING\n", 5);
    wait_for(root_high, "%T", "RUNNING\n", 5);

    /* naming the other user does not help */
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", root_high);
    r = scancel_as(NOBODY, (const char *const[]){"-u", "root", "-q", "high", NULL});
    assert_int_equal(r.rc, 210);
    char want[200];
    snprintf(want, sizeof(want),
             "scancel: error: Kill job error on job id %u: Access/permission denied\n",
             root_high);
    assert_string_equal(r.err, want);
    result_free(&r);
    wait_for(root_high, "%T", "RUNNING\n", 5);

    r = scancel_as(NOBODY, (const char *const[]){"--account=proj", NULL});
    expect_ok(&r);
    result_free(&r);
    wait_for(proj, "%T", "CANCELLED\n", 20);

    r = scancel_as(NOBODY, (const char *const[]){"-w", "nosuch", NULL});
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "scancel: error: Invalid node name specified\n");
    result_free(&r);
    r = scancel_as(NOBODY, (const char *const[]){"--nodelist=n3", NULL});
    expect_ok(&r);
    result_free(&r);
    wait_for(on3, "%T", "CANCELLED\n", 20);
    wait_for(low, "%T", "RUNNING\n", 5);

    r = RUN("scancel", "-R", "resv", sid);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "scancel: error: --reservation is not supported\n");
    result_free(&r);
    scancel_ok("-Q", "-Q", "-Q", low);
    scancel_ok("-Q", "-Q", "-Q", root_high);
}

/* scancel -i through a pipe, as the unprivileged user. */
static struct result scancel_i(const char *answers, const char *args)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "printf '%s' | %s/scancel -i %s", answers, TESSERA_BIN_DIR, args);
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    char *env[] = {cluster.conf_env, cluster.path_env, NULL};
    struct result r = {0};
    r.rc = harness_run_as(argv, env, NOBODY, NOBODY, &r.out, &r.err, 20000);
    return r;
}

/* -i asks about each job on stdout, as Slurm does; y acts, n skips, anything else asks
 * again, and the end of input (no terminal in CI) answers no instead of asking for ever. */
static void test_scancel_interactive(void **state)
{
    unsigned keep = submit_as(NOBODY, "-J", "keepme");
    unsigned drop = submit_as(NOBODY, "-J", "dropme");
    char args[64], want[400];
    snprintf(args, sizeof(args), "%u %u", keep, drop);

    struct result r = scancel_i("", args);
    expect_ok(&r);
    snprintf(want, sizeof(want), "Cancel job_id=%u name=keepme partition=debug [y/n]? \n", keep);
    assert_string_equal(r.out, want);
    result_free(&r);
    wait_for(keep, "%T", "RUNNING\n", 5);

    r = scancel_i("x\\nn\\nyes\\n", args);
    expect_ok(&r);
    snprintf(want, sizeof(want),
             "Cancel job_id=%u name=keepme partition=debug [y/n]? "
             "Cancel job_id=%u name=keepme partition=debug [y/n]? "
             "Cancel job_id=%u name=dropme partition=debug [y/n]? ",
             keep, keep, drop);
    assert_string_equal(r.out, want);
    result_free(&r);
    wait_for(drop, "%T", "CANCELLED\n", 20);
    wait_for(keep, "%T", "RUNNING\n", 5);

    /* with a filter: the controller's matches are asked about */
    r = scancel_i("Y\\n", "--name=keepme");
    expect_ok(&r);
    snprintf(want, sizeof(want), "Cancel job_id=%u name=keepme partition=debug [y/n]? ", keep);
    assert_string_equal(r.out, want);
    result_free(&r);
    wait_for(keep, "%T", "CANCELLED\n", 20);
}

/* ------------------------------------------------------------------------------------ */

/* One raw request to the controller, as a client that skips the commands' checks. */
static int raw_error(const Tessera__Request *req)
{
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                    .munge_socket = cluster.munge.socket,
                                    .server_uid = geteuid(), .target = HARNESS_CTLD_NAME,
                                    .timeout_ms = 10000};
    struct rpc_client *cli = NULL;
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    assert_int_equal(rpc_client_call(cli, req, &resp), TS_OK);
    int code = resp->error ? (int)resp->error->code : TS_OK;
    tessera__response__free_unpacked(resp, NULL);
    rpc_client_close(cli);
    return code;
}

/* The controller checks what the commands check: a signal no node could send, a scope it
 * does not know, filter lists past their bound; the job is untouched. */
static void test_controller_checks(void **state)
{
    unsigned id = submit_as(0, "-J", "target");
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    char *ids[] = {sid};
    Tessera__JobActionRequest a = TESSERA__JOB_ACTION_REQUEST__INIT;
    a.action = TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL;
    a.job_ids = ids;
    a.n_job_ids = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &a;
    a.signal = 65;
    assert_int_equal(raw_error(&req), TS_EINVAL);
    a.signal = 10;
    a.signal_scope = (Tessera__JobSignalScope)7;
    assert_int_equal(raw_error(&req), TS_EINVAL);

    static char *many[JOB_FILTER_LIMIT + 1];
    for (size_t i = 0; i <= JOB_FILTER_LIMIT; i++)
        many[i] = "q";
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.qos = many;
    q.n_qos = JOB_FILTER_LIMIT + 1;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    assert_int_equal(raw_error(&req), TS_EINVAL);
    a.signal_scope = TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_STEPS;
    a.job_ids = NULL;
    a.n_job_ids = 0;
    a.accounts = many;
    a.n_accounts = JOB_FILTER_LIMIT + 1;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &a;
    assert_int_equal(raw_error(&req), TS_EINVAL);
    wait_for(id, "%T", "RUNNING\n", 5);
    scancel_ok("-Q", "-Q", "-Q", id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scancel_signal_scopes),
        cmocka_unit_test(test_warning_signal),
        cmocka_unit_test(test_warning_survives_restart),
        cmocka_unit_test(test_scancel_filters),
        cmocka_unit_test(test_scancel_interactive),
        cmocka_unit_test(test_controller_checks),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
