/* GRES requests end to end (docs/gres.md §2): the options, #SBATCH lines and het
 * components shown back by scontrol and squeue in Slurm 22.05's forms; the refusals with
 * Slurm's texts, from the command and from the controller (which checks every request,
 * also one that never went through a command); as the unprivileged user nobody too; srun
 * refuses GRES for a step it cannot share them out to. */
#include "cluster.h"

#include "common/rpc/rpc_client.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static struct harness_cluster cluster;
static char outdir[512];

#include "cmdcheck.h"

#define NOBODY 65534
/* a list longer than the controller keeps (GRES_REQ_SPEC_MAX) */
#define GRES_LONG 2000

static int group_setup(void **state)
{
    (void)state;
    if (harness_cluster_up(&cluster, 2, "CPUs=4 RealMemory=2000 Gres=gpu:a100:4,bandwidth:10G",
                           "MinJobAge=600\nGresTypes=gpu,bandwidth\n", outdir, sizeof(outdir)))
        return -1;
    char path[700];
    snprintf(path, sizeof(path), "%s/ok.sh", outdir);
    harness_write_file(path, "#!/bin/sh\ntrue\n", 0755);
    snprintf(path, sizeof(path), "%s/gpus.sh", outdir);
    harness_write_file(path,
                       "#!/bin/sh\n#SBATCH --gpus-per-node=2 -n2\n#SBATCH --gpus-per-task=1\n"
                       "#SBATCH hetjob\n#SBATCH -n1 --gres=bandwidth:10G\ntrue\n",
                       0755);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

static char *path_in_out(const char *name)
{
    static char path[700];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    return path;
}

/* A refusal as nobody: exit status and the whole standard error. */
static void refused_as_nobody(const char *const args[], int rc, const char *err)
{
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, NOBODY, "sbatch", args, &r.out, &r.err);
    if (r.rc != rc || strcmp(r.err, err) != 0)
        fail_msg("exit %d, stderr:\n%s\nexpected %d:\n%s", r.rc, r.err, rc, err);
    result_free(&r);
}

#define REFUSED(rc, err, ...)                                                                  \
    refused_as_nobody((const char *const[]){"-D", "/tmp", __VA_ARGS__, "--wrap=true", NULL}, rc, \
                      err)
#define FAILED "sbatch: error: Batch job submission failed: "
#define GRES_TEXT "Invalid generic resource (gres) specification"
#define NODE_CONFIG "Requested node configuration is not available"

static void test_refusals(void **state)
{
    (void)state;
    REFUSED(1, FAILED GRES_TEXT " (--gpus-per-task used without either --gpus or -n/--ntasks "
                                "is not allowed.)\n",
            "--gpus-per-task=1");
    REFUSED(1, FAILED GRES_TEXT " (Based on --gpus and --gpus-per-task number of requested tasks "
                                "differ from -n/--ntasks.)\n",
            "--gpus=3", "-n2", "--gpus-per-task=1");
    REFUSED(1, FAILED GRES_TEXT " (Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                                "--gpus-per-socket)\n",
            "--gpus=1", "--gpus-per-node=2");
    REFUSED(1, FAILED GRES_TEXT " (--cpus-per-gpu is mutually exclusive with --cpus-per-task)\n",
            "--gpus=1", "-c2", "--cpus-per-gpu=2");
    REFUSED(1, FAILED GRES_TEXT " (Requested mem_per_tres=gres:gpu:100 but did not request any "
                                "GPU.)\n",
            "--mem-per-gpu=100");
    REFUSED(1, FAILED GRES_TEXT " (Invalid GRES specification (with and without type "
                                "identification))\n",
            "--gres=gpu:a100:1", "--gpus-per-node=2");
    REFUSED(1, "sbatch: error: Invalid Trackable RESource (TRES) specification\n", "--gres=gpu:1x");
    REFUSED(1, "sbatch: error: " GRES_TEXT "\n", "--gres=none,gpu:1");
    REFUSED(255, "sbatch: error: Invalid --gres-flags specification\n", "--gres-flags=bogus");
    REFUSED(1, "sbatch: error: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n",
            "--mem=100", "--gpus=1", "--mem-per-gpu=100");
    REFUSED(1, "sbatch: error: component 1: " GRES_TEXT "\n", "-n1", ":", "--gpus=x:y:1");
    /* against the nodes' Gres= and GresTypes */
    REFUSED(1, FAILED GRES_TEXT "\n", "--gres=mps:1");
    REFUSED(1, FAILED NODE_CONFIG "\n", "--gres=gpu:k80:1");
    REFUSED(1, FAILED NODE_CONFIG "\n", "--gres=gpu:5");
    REFUSED(1, FAILED NODE_CONFIG "\n", "--gpus=9");
    REFUSED(1, FAILED NODE_CONFIG "\n", "-n2", "--gpus-per-task=5");
    REFUSED(1, "sbatch: error: Batch job submission failed: component 1: " NODE_CONFIG "\n",
            "-n1", ":", "--gres=bandwidth:11G");
}

#define NOT_SCHEDULED                                                                     \
    "Generic resources are not scheduled yet: a job asking for them is refused rather than " \
    "run without them"

/* A well-formed request the nodes could meet, on the command line, in #SBATCH lines or in
 * one component only, held or not: refused until the scheduler counts units (docs/gres.md
 * §3), with nothing stored. A job asking for none (--gres=none) is accepted. */
static void test_not_scheduled_yet(void **state)
{
    (void)state;
    REFUSED(1, FAILED NOT_SCHEDULED "\n", "-H", "--gres=gpu:a100:2,bandwidth:1G",
            "--gres-flags=enforce-binding", "--gpus=a100:4", "--cpus-per-gpu=2",
            "--mem-per-gpu=1G", "-n4", "--gpus-per-task=a100:1");
    REFUSED(1, FAILED NOT_SCHEDULED "\n", "--gpus=1");
    REFUSED(1, FAILED "component 0: " NOT_SCHEDULED "\n", "--gpus=1", ":", "-n2");
    struct result r = RUN("sbatch", "-H", path_in_out("gpus.sh")); /* #SBATCH lines */
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, NOT_SCHEDULED));
    result_free(&r);
    r = RUN("squeue", "-h", "-t", "all", "-u", "nobody");
    expect_ok(&r);
    assert_string_equal(r.out, "");
    result_free(&r);
    unsigned id = SUBMIT("-H", "--gres=none", path_in_out("ok.sh"));
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    r = RUN("scontrol", "show", "job", sid);
    assert_null(strstr(r.out, "Tres"));
    assert_null(strstr(r.out, "GresEnforceBind"));
    result_free(&r);
    char *q = cmdcheck_query(&cluster, id, "%b");
    assert_string_equal(q, "N/A\n");
    free(q);
}

/* A request that never went through sbatch: the controller parses the stored forms. */
static Tessera__Response *submit_raw(Tessera__JobDesc *d)
{
    static char workdir[] = "/tmp", script[] = "#!/bin/sh\ntrue\n";
    d->work_dir = workdir;
    d->script = script;
    d->has_hold = d->hold = 1;
    Tessera__JobDesc *comps[1] = {d};
    Tessera__SubmitRequest sub = TESSERA__SUBMIT_REQUEST__INIT;
    sub.components = comps;
    sub.n_components = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
    req.submit = &sub;
    struct rpc_client_config cfg = {.host = "127.0.0.1", .port = cluster.ctld_port,
                                    .munge_socket = cluster.munge.socket, .server_uid = 0,
                                    .target = HARNESS_CTLD_NAME, .timeout_ms = 30000};
    struct rpc_client *cli = NULL;
    Tessera__Response *resp = NULL;
    assert_int_equal(rpc_client_connect(&cfg, &cli), TS_OK);
    assert_int_equal(rpc_client_call(cli, &req, &resp), TS_OK);
    rpc_client_close(cli);
    return resp;
}

static void test_raw_requests(void **state)
{
    (void)state;
    static const struct {
        size_t off;
        const char *value;
        int code;
    } cases[] = {
        {offsetof(Tessera__JobDesc, tres_per_node), "gpu:1", TS_EINVALID_GRES},
        {offsetof(Tessera__JobDesc, tres_per_node), "gres:gpu:1x", TS_EINVALID_TRES},
        {offsetof(Tessera__JobDesc, tres_per_node), "gres:gpu:99999999999999999999",
         TS_EINVALID_GRES},
        {offsetof(Tessera__JobDesc, tres_per_job), "gres:bandwidth:1", TS_EINVALID_GRES},
        {offsetof(Tessera__JobDesc, cpus_per_tres), "gres:gpu:0", TS_EINVALID_GRES},
        {offsetof(Tessera__JobDesc, mem_per_tres), "gres:gpu:a100:5", TS_EINVALID_GRES},
        {offsetof(Tessera__JobDesc, gres_flags), "enforce", TS_EINVALID_GRES},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
        char value[128];
        snprintf(value, sizeof(value), "%s", cases[i].value);
        *(char **)((char *)&d + cases[i].off) = value;
        if (cases[i].off == offsetof(Tessera__JobDesc, mem_per_tres) ||
            cases[i].off == offsetof(Tessera__JobDesc, cpus_per_tres))
            d.tres_per_job = (char *)"gres:gpu:1";
        Tessera__Response *resp = submit_raw(&d);
        print_message("%s\n", cases[i].value);
        assert_non_null(resp->error);
        assert_int_equal(resp->error->code, cases[i].code);
        tessera__response__free_unpacked(resp, NULL);
    }
    /* longer than the controller keeps */
    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    char *lng = malloc(GRES_LONG + 1);
    assert_non_null(lng);
    memset(lng, 'g', GRES_LONG);
    lng[GRES_LONG] = '\0';
    d.tres_per_task = lng;
    Tessera__Response *resp = submit_raw(&d);
    assert_non_null(resp->error);
    assert_int_equal(resp->error->code, TS_EINVALID_GRES);
    tessera__response__free_unpacked(resp, NULL);
    free(lng);
}

/* Steps do not share out GRES yet: refused, never ignored. */
static void test_step_refused(void **state)
{
    (void)state;
    struct result r = RUN("salloc", "-N1", "srun", "--gpus=1", "true");
    assert_int_not_equal(r.rc, 0);
    if (!strstr(r.err, "srun: error: --gres and --gpus* for a step within an allocation are "
                       "not supported"))
        fail_msg("stderr:\n%s", r.err);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_scheduled_yet),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_raw_requests),
        cmocka_unit_test(test_step_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
