/* One user must not degrade the controller for everyone: each test is an attack by the
 * unprivileged user nobody (65534), through the commands or, where a command would refuse
 * first, through raw requests from a child that became nobody.
 *
 * - held jobs with 3 MiB scripts, then squeue and scontrol for another user;
 * - MaxJobCount and MaxSubmitJobs: refusals with Slurm's texts, nothing stored, sbatch
 *   retrying until there is room;
 * - scripts, environments and fields over their limits, from raw requests;
 * - 12,000 singleton dependency items, and more distinct items than the cap;
 * - a node query for 'a'*240+'[1-1000000]': the controller's peak memory barely moves.
 *
 * The tests share one controller (no node daemons: jobs stay pending) and set the limits
 * they need with a reconfigure; each starts from an empty queue.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define NOBODY 65534

static struct harness_cluster cluster;
static char nodes_conf[1024];

/* The basics every test keeps: finished jobs leave at once, two nodes nobody starts. */
static int write_conf(const char *limits)
{
    char conf[4096];
    snprintf(conf, sizeof(conf),
             "MinJobAge=0\n%s%sPartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n",
             limits, nodes_conf);
    return harness_cluster_write_conf(&cluster, conf);
}

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, 2, "CPUs=2 RealMemory=1000", nodes_conf, sizeof(nodes_conf));
    if (write_conf(""))
        return -1;
    return harness_ctld_start(&cluster);
}

static int group_teardown(void **state)
{
    (void)state;
    int rc = harness_ctld_stop_clean(&cluster); /* under the sanitizers: leaks fail here */
    harness_cluster_fini(&cluster);
    return rc;
}

/* ------------------------------------------------------------------------------------ */
/* commands */

struct result {
    int rc;
    char *out, *err;
};

static void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
}

static struct result run_as(uid_t uid, const char *cmd, const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, uid, cmd, args, &r.out, &r.err);
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

#define RUN(cmd, ...) run_as((uid_t)-1, cmd, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_AS(uid, cmd, ...) run_as(uid, cmd, (const char *const[]){__VA_ARGS__, NULL})

static void expect(struct result r, int rc, const char *out, const char *err)
{
    if (r.rc != rc || (out && strcmp(r.out, out)) || (err && strcmp(r.err, err)))
        fail_msg("exit %d, stdout '%.300s', stderr '%.300s'; expected %d, '%s', '%s'", r.rc,
                 r.out, r.err, rc, out ? out : "*", err ? err : "*");
    result_free(&r);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* squeue -h -t all (as root): one line per job the controller holds. */
static size_t jobs_held(void)
{
    struct result r = RUN("squeue", "-h", "-t", "all", "-o", "%i");
    if (r.rc != 0)
        fail_msg("squeue: %s", r.err);
    size_t n = count_lines(r.out);
    result_free(&r);
    return n;
}

/* Every test starts from an empty queue: cancel all, wait until they have left (MinJobAge=0:
 * within a housekeeping turn or two). */
static void empty_queue(void)
{
    struct result r = RUN("scancel", "-u", "nobody");
    result_free(&r);
    r = RUN("scancel", "-u", "root");
    result_free(&r);
    for (int i = 0; i < 200 && jobs_held() > 0; i++)
        usleep(50000);
    assert_int_equal(jobs_held(), 0);
}

static void reconfigure(const char *limits)
{
    assert_int_equal(write_conf(limits), 0);
    expect(RUN("scontrol", "reconfigure"), 0, "", "");
}

/* sbatch [args] --wrap=true as uid: the job id, or 0 when refused. */
static unsigned sbatch_as(uid_t uid, const char *const args[], char **err)
{
    const char *argv[16];
    size_t n = 0;
    argv[n++] = "--parsable";
    for (size_t i = 0; args && args[i] && n < 14; i++)
        argv[n++] = args[i];
    argv[n++] = "--wrap=true";
    argv[n] = NULL;
    struct result r = run_as(uid, "sbatch", argv);
    unsigned id = r.rc == 0 ? (unsigned)strtoul(r.out, NULL, 10) : 0;
    if (err)
        *err = strdup(r.err);
    result_free(&r);
    return id;
}

/* ------------------------------------------------------------------------------------ */
/* raw requests: a child becomes uid and talks to the controller itself */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void raw_child(int fd, uid_t uid, const Tessera__Request *req)
{
    if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
        _exit(2);
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                    .munge_socket = cluster.munge.socket, .server_uid = 0,
                                    .target = HARNESS_CTLD_NAME, .timeout_ms = 30000};
    struct rpc_client *cli = NULL;
    Tessera__Response *resp = NULL;
    if (rpc_client_connect(&cfg, &cli) != TS_OK || rpc_client_call(cli, req, &resp) != TS_OK)
        _exit(3);
    size_t len = tessera__response__get_packed_size(resp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        _exit(4);
    tessera__response__pack(resp, buf);
    _exit(write_all(fd, buf, len) ? 5 : 0);
}

/* Send req as uid; the response (free with tessera__response__free_unpacked). */
static Tessera__Response *call_as(uid_t uid, const Tessera__Request *req)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        raw_child(fds[1], uid, req);
    }
    close(fds[1]);
    size_t len = 0, cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    ssize_t r;
    while ((r = read(fds[0], buf + len, cap - len)) > 0) {
        len += (size_t)r;
        if (len == cap)
            assert_non_null(buf = realloc(buf, cap *= 2));
    }
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("raw request as %u failed (status %d)", (unsigned)uid, status);
    Tessera__Response *resp = tessera__response__unpack(NULL, len, buf);
    free(buf);
    assert_non_null(resp);
    return resp;
}

/* A raw submission of one component as nobody, with the basics a controller needs. */
static Tessera__Response *submit_raw(Tessera__JobDesc *d)
{
    static char workdir[] = "/tmp";
    static char wrap[] = "#!/bin/sh\ntrue\n";
    d->work_dir = workdir;
    if (!d->script)
        d->script = wrap;
    d->has_hold = d->hold = 1;
    Tessera__JobDesc *comps[1] = {d};
    Tessera__SubmitRequest sub = TESSERA__SUBMIT_REQUEST__INIT;
    sub.components = comps;
    sub.n_components = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
    req.submit = &sub;
    return call_as(NOBODY, &req);
}

static void expect_refusal(Tessera__Response *resp, int code, const char *text)
{
    if (!resp->error)
        fail_msg("accepted; expected error %d", code);
    if ((int)resp->error->code != code || (text && strcmp(resp->error->text, text)))
        fail_msg("error %u '%s'; expected %d '%s'", resp->error->code, resp->error->text, code,
                 text ? text : "*");
    tessera__response__free_unpacked(resp, NULL);
}

/* ------------------------------------------------------------------------------------ */
/* MaxJobCount and MaxSubmitJobs */

/* The controller holds MaxJobCount jobs: a raw submission is refused with Slurm's EAGAIN
 * text and stores nothing; sbatch says so once and waits until a job has left. */
static void test_max_job_count(void **state)
{
    (void)state;
    empty_queue();
    reconfigure("MaxJobCount=3\n");
    const char *hold[] = {"-H", NULL};
    unsigned first = sbatch_as(NOBODY, hold, NULL);
    assert_true(first > 0);
    assert_int_equal(sbatch_as(NOBODY, hold, NULL), first + 1);
    assert_int_equal(sbatch_as(NOBODY, hold, NULL), first + 2);

    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    expect_refusal(submit_raw(&d), TS_EMAX_JOB_COUNT,
                   "Slurm temporarily unable to accept job, sleeping and retrying");
    assert_int_equal(jobs_held(), 3);
    /* an allocation does not retry: Slurm's final words at once */
    expect(RUN_AS(NOBODY, "salloc", "true"), 1, "",
           "salloc: error: Job submit/allocate failed: Resource temporarily unavailable\n");

    char log[400];
    snprintf(log, sizeof(log), "%s/sbatch-retry.log", cluster.dir);
    pid_t pid = harness_cmd_spawn(&cluster, "sbatch",
                                  (const char *const[]){"-H", "--wrap=true", NULL}, log);
    assert_true(pid > 0);
    char *text = NULL;
    for (int i = 0; i < 400; i++) {
        free(text);
        text = harness_read_file(log);
        if (text && strstr(text, "temporarily"))
            break;
        usleep(25000);
    }
    assert_non_null(text);
    assert_string_equal(text, "sbatch: error: Slurm temporarily unable to accept job, "
                              "sleeping and retrying.\n");
    free(text);
    char id[32];
    snprintf(id, sizeof(id), "%u", first);
    expect(RUN("scancel", id), 0, "", "");
    int status = harness_wait(pid, 30000);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    text = harness_read_file(log);
    char want[256];
    snprintf(want, sizeof(want),
             "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying.\n"
             "Submitted batch job %u\n", first + 3);
    assert_string_equal(text, want); /* the refused raw submission spent no id */
    free(text);
    empty_queue();
    reconfigure("");
}

/* MaxSubmitJobs counts one user's pending and running components: nobody's third job,
 * or a het job of two with one slot left, is refused with Slurm's text; root is not held
 * back by nobody's jobs. */
static void test_max_submit_jobs(void **state)
{
    (void)state;
    empty_queue();
    reconfigure("MaxSubmitJobs=2\n");
    const char *hold[] = {"-H", NULL};
    unsigned first = sbatch_as(NOBODY, hold, NULL);
    assert_true(first > 0);
    char *err = NULL;
    const char *het[] = {"-H", ":", "-H", NULL};
    const char *policy = "sbatch: error: Batch job submission failed: Job violates "
                         "accounting/QOS policy (job submit limit, user's size and/or time "
                         "limits)\n";
    assert_int_equal(sbatch_as(NOBODY, het, &err), 0);
    assert_string_equal(err, policy);
    free(err);
    assert_int_equal(sbatch_as(NOBODY, hold, NULL), first + 1);
    assert_int_equal(sbatch_as(NOBODY, hold, &err), 0);
    assert_string_equal(err, policy);
    free(err);
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    expect_refusal(submit_raw(&d), TS_EACCOUNTING_POLICY, NULL);
    assert_int_equal(jobs_held(), 2);
    /* another user still submits; a finished job frees its slot */
    assert_int_equal(sbatch_as((uid_t)-1, hold, NULL), first + 2);
    char id[32];
    snprintf(id, sizeof(id), "%u", first);
    expect(RUN("scancel", id), 0, "", "");
    assert_int_equal(sbatch_as(NOBODY, hold, NULL), first + 3);
    empty_queue();
    reconfigure("");
}

/* ------------------------------------------------------------------------------------ */
/* sizes of what a job carries */

static char *filled(size_t n, char c)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_script_and_environment_limits(void **state)
{
    (void)state;
    empty_queue();
    reconfigure("MaxScriptSize=65536\nMaxEnvSize=65536\nMaxEnvCount=200\n");

    /* a script one byte over, from a raw request and from sbatch */
    char *script = filled(65537, '#');
    memcpy(script, "#!/bin/sh\n", 10);
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.script = script;
    expect_refusal(submit_raw(&d), TS_ESCRIPT_TOOBIG,
                   "Batch job script is larger than the controller accepts "
                   "(MaxScriptSize=65536 bytes)");
    char path[400];
    snprintf(path, sizeof(path), "%s/big.sh", cluster.dir);
    assert_int_equal(harness_write_file(path, script, 0644), 0);
    expect(RUN_AS(NOBODY, "sbatch", "-H", path), 1, "",
           "sbatch: error: Batch job submission failed: Batch job script is larger than the "
           "controller accepts (MaxScriptSize=65536 bytes)\n");
    script[65536] = '\0'; /* at the limit: fine */
    assert_int_equal(harness_write_file(path, script, 0644), 0);
    struct result r = RUN_AS(NOBODY, "sbatch", "-H", "--parsable", path);
    assert_int_equal(r.rc, 0);
    result_free(&r);
    free(script);

    /* an environment too large, or of too many variables */
    char *big = filled(70000, 'x');
    memcpy(big, "BIG=", 4);
    char *env1[] = {big};
    Tessera__JobDesc e1 = TESSERA__JOB_DESC__INIT;
    e1.environment = env1;
    e1.n_environment = 1;
    expect_refusal(submit_raw(&e1), TS_EENV_TOOBIG,
                   "Job environment is larger than the controller accepts "
                   "(MaxEnvSize=65536 bytes)");
    free(big);
    char *many[201];
    static char var[] = "A=1";
    for (size_t i = 0; i < 201; i++)
        many[i] = var;
    Tessera__JobDesc e2 = TESSERA__JOB_DESC__INIT;
    e2.environment = many;
    e2.n_environment = 201;
    expect_refusal(submit_raw(&e2), TS_EENV_TOOBIG,
                   "Job environment is larger than the controller accepts "
                   "(201 variables, MaxEnvCount=200)");

    /* a field the controller keeps, over its bound */
    char *comment = filled(64 * 1024 + 1, 'c');
    Tessera__JobDesc f = TESSERA__JOB_DESC__INIT;
    f.comment = comment;
    expect_refusal(submit_raw(&f), TS_ETOOBIG,
                   "Value too large (--comment is longer than 65536 bytes)");
    free(comment);
    assert_int_equal(jobs_held(), 1); /* the one at the limit */
    empty_queue();
    reconfigure("");
}

/* ------------------------------------------------------------------------------------ */
/* dependencies */

/* squeue -h -o FORMAT -j ID, as root. */
static char *squeue_job(unsigned id, const char *format)
{
    char ids[32];
    snprintf(ids, sizeof(ids), "%u", id);
    struct result r = RUN("squeue", "-h", "-t", "all", "-o", format, "-j", ids);
    if (r.rc != 0)
        fail_msg("squeue -j %u: %s", id, r.err);
    free(r.err);
    return r.out;
}

/* Wait until job id's reason is (want) or is not (!want) "Dependency". */
static void wait_dependency(unsigned id, int want)
{
    char *reason = NULL;
    for (int i = 0; i < 200; i++) {
        free(reason);
        reason = squeue_job(id, "%r");
        if ((strcmp(reason, "Dependency\n") == 0) == want)
            break;
        usleep(50000);
    }
    if ((strcmp(reason, "Dependency\n") == 0) != want)
        fail_msg("job %u: reason %s; expected %sDependency", id, reason, want ? "" : "not ");
    free(reason);
}

/* "singleton,singleton,..." n times. */
static char *singletons(size_t n)
{
    char *s = malloc(n * 10 + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + 10 * i, "singleton,", 10);
    s[n * 10 - 1] = '\0';
    return s;
}

/* Twenty jobs with 12,000 singleton items each: each is one item once parsed. The first
 * of the name runs first, the others wait their turn, also across a restart. */
static void test_singleton_flood(void **state)
{
    (void)state;
    empty_queue();
    char *many = singletons(12000);
    unsigned ids[20];
    const char *first[] = {"-H", "-J", "flood", NULL};
    ids[0] = sbatch_as(NOBODY, first, NULL);
    assert_true(ids[0] > 0);
    for (int i = 1; i < 20; i++) {
        const char *args[] = {"-J", "flood", "-d", many, NULL};
        ids[i] = sbatch_as(NOBODY, args, NULL);
        assert_int_equal(ids[i], ids[0] + (unsigned)i);
    }
    free(many);
    for (int i = 1; i < 20; i++)
        wait_dependency(ids[i], 1);
    char id[32];
    snprintf(id, sizeof(id), "%u", ids[0]);
    expect(RUN_AS(NOBODY, "scancel", id), 0, "", "");
    wait_dependency(ids[1], 0);
    wait_dependency(ids[2], 1);

    /* the parsed form is rebuilt from the stored text at start-up */
    assert_int_equal(harness_ctld_stop(&cluster, SIGTERM), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    wait_dependency(ids[2], 1);
    snprintf(id, sizeof(id), "%u", ids[1]);
    expect(RUN_AS(NOBODY, "scancel", id), 0, "", "");
    wait_dependency(ids[2], 0);
    wait_dependency(ids[3], 1);
    char *dep = squeue_job(ids[3], "%E");
    assert_int_equal(strncmp(dep, "singleton,singleton,", 20), 0); /* the text stays */
    free(dep);
    empty_queue();
}

/* Distinct items are capped: 1000 pass, 1001 are refused with a text that says why. */
static void test_dependency_items_capped(void **state)
{
    (void)state;
    empty_queue();
    const char *hold[] = {"-H", NULL};
    unsigned target = sbatch_as(NOBODY, hold, NULL);
    assert_true(target > 0);
    char *spec = malloc(1001 * 24);
    assert_non_null(spec);
    size_t len = 0;
    for (int i = 0; i < 1001; i++) /* after:T+0 ... after:T+1000: one target, distinct */
        len += (size_t)sprintf(spec + len, "%safter:%u+%d", i ? "," : "", target, i);
    char *err = NULL;
    const char *args[] = {"-H", "-d", spec, NULL};
    assert_int_equal(sbatch_as(NOBODY, args, &err), 0);
    assert_string_equal(err, "sbatch: error: Batch job submission failed: Job dependency "
                             "problem (1001 distinct items; at most 1000)\n");
    free(err);
    *strrchr(spec, ',') = '\0';
    assert_int_equal(sbatch_as(NOBODY, args, NULL), target + 1);
    free(spec);
    empty_queue();
}

/* ------------------------------------------------------------------------------------ */
/* answers in pages */

/* Held jobs with 3 MiB scripts (the limit allows them): together far over a frame. The
 * commands of another user, and of nobody, still get every job, page by page. */
static void test_big_scripts_do_not_block_queries(void **state)
{
    (void)state;
    empty_queue();
    size_t size = 3u << 20;
    char *script = filled(size, '#');
    memcpy(script, "#!/bin/sh\n", 10);
    script[size - 1] = '\n';
    char path[400];
    snprintf(path, sizeof(path), "%s/three-mib.sh", cluster.dir);
    assert_int_equal(harness_write_file(path, script, 0644), 0);
    free(script);
    unsigned first = 0;
    for (int i = 0; i < 6; i++) {
        struct result r = RUN_AS(NOBODY, "sbatch", "-H", "--parsable", path);
        if (r.rc != 0)
            fail_msg("sbatch: %s", r.err);
        unsigned id = (unsigned)strtoul(r.out, NULL, 10);
        result_free(&r);
        if (i == 0)
            first = id;
        assert_int_equal(id, first + (unsigned)i);
    }
    char want[256] = "";
    for (int i = 0; i < 6; i++)
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%u\n", first + (unsigned)i);
    expect(RUN("squeue", "-h", "-o", "%i"), 0, want, "");
    expect(RUN_AS(NOBODY, "squeue", "-h", "-o", "%i"), 0, want, "");
    struct result r = RUN("scontrol", "show", "job");
    assert_int_equal(r.rc, 0);
    size_t shown = 0;
    for (const char *p = r.out; (p = strstr(p, "JobId=")); p++)
        shown++;
    assert_int_equal(shown, 6);
    result_free(&r);
    empty_queue();
}

static Tessera__Response *job_page(uint32_t after, uint32_t max)
{
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.after_job_id = after;
    q.max_jobs = max;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    return call_as(NOBODY, &req);
}

/* The protocol itself: a cursor and a maximum in the request, "more" in the answer. */
static void test_query_pages(void **state)
{
    (void)state;
    empty_queue();
    const char *hold[] = {"-H", NULL};
    unsigned first = sbatch_as(NOBODY, hold, NULL);
    for (unsigned i = 1; i < 5; i++)
        assert_int_equal(sbatch_as(NOBODY, hold, NULL), first + i);
    uint32_t after = 0, seen = 0;
    for (int page = 0; page < 3; page++) {
        Tessera__Response *resp = job_page(after, 2);
        assert_null(resp->error);
        const Tessera__JobQueryResponse *jq = resp->job_query;
        assert_int_equal(jq->n_jobs, page < 2 ? 2 : 1);
        assert_int_equal(jq->more, page < 2);
        for (size_t i = 0; i < jq->n_jobs; i++)
            assert_int_equal(jq->jobs[i]->job_id, first + seen++);
        after = jq->jobs[jq->n_jobs - 1]->job_id;
        tessera__response__free_unpacked(resp, NULL);
    }
    assert_int_equal(seen, 5);

    /* nodes: two configured, one a page */
    Tessera__NodeQueryRequest nq = TESSERA__NODE_QUERY_REQUEST__INIT;
    nq.max_nodes = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &nq;
    Tessera__Response *resp = call_as(NOBODY, &req);
    assert_null(resp->error);
    assert_int_equal(resp->node_query->n_nodes, 1);
    assert_string_equal(resp->node_query->nodes[0]->name, "n1");
    assert_true(resp->node_query->more);
    nq.start_index = resp->node_query->next_index;
    tessera__response__free_unpacked(resp, NULL);
    resp = call_as(NOBODY, &req);
    assert_null(resp->error);
    assert_int_equal(resp->node_query->n_nodes, 1);
    assert_string_equal(resp->node_query->nodes[0]->name, "n2");
    assert_false(resp->node_query->more);
    tessera__response__free_unpacked(resp, NULL);
    empty_queue();
}

/* ------------------------------------------------------------------------------------ */
/* host lists */

/* The controller's peak resident memory (VmHWM), in kB. */
static long ctld_peak_kb(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)cluster.ctld);
    char *status = harness_read_file(path);
    assert_non_null(status);
    const char *line = strstr(status, "VmHWM:");
    assert_non_null(line);
    long kb = strtol(line + 6, NULL, 10);
    free(status);
    return kb;
}

static Tessera__Response *node_query_as_nobody(const char *names)
{
    char *list[] = {(char *)names};
    Tessera__NodeQueryRequest q = TESSERA__NODE_QUERY_REQUEST__INIT;
    q.names = list;
    q.n_names = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &q;
    return call_as(NOBODY, &req);
}

/* 'a'*240+'[1-1000000]' means a million names of 247 characters: a controller that
 * expanded it would peak 250 MB higher. Matched against the nodes, it costs its text. The
 * same list as -w from a raw submission is refused as naming unknown nodes. */
static void test_huge_host_lists(void **state)
{
    (void)state;
    char expr[300];
    memset(expr, 'a', 240);
    strcpy(expr + 240, "[1-1000000]");
    long before = ctld_peak_kb();
    expect_refusal(node_query_as_nobody(expr), TS_EINVALID_NODE_NAME, NULL);
    Tessera__Response *resp = node_query_as_nobody("n[1-1000000]");
    assert_null(resp->error);
    assert_int_equal(resp->node_query->n_nodes, 2);
    tessera__response__free_unpacked(resp, NULL);
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    d.nodelist = expr;
    expect_refusal(submit_raw(&d), TS_EINVALID_NODE_NAME, NULL);
    d.nodelist = NULL;
    d.exclude = expr;
    expect_refusal(submit_raw(&d), TS_EINVALID_NODE_NAME, NULL);
    long after = ctld_peak_kb();
    if (after - before > 50 * 1024)
        fail_msg("the controller's peak memory grew from %ld kB to %ld kB", before, after);
    /* lists longer than a user may send are refused before they are parsed */
    char *long_list = filled(64 * 1024 + 1, 'n');
    expect_refusal(node_query_as_nobody(long_list), TS_EINVALID_NODE_NAME, NULL);
    free(long_list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: the controller's peak memory is still its own */
        cmocka_unit_test(test_huge_host_lists),
        cmocka_unit_test(test_big_scripts_do_not_block_queries),
        cmocka_unit_test(test_query_pages),
        cmocka_unit_test(test_max_job_count),
        cmocka_unit_test(test_max_submit_jobs),
        cmocka_unit_test(test_script_and_environment_limits),
        cmocka_unit_test(test_singleton_flood),
        cmocka_unit_test(test_dependency_items_capped),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
