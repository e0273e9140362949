/* A controller built in-process for unit tests (ctld_fixture.h). */
#include "ctld_fixture.h"

#include "ctld/fairshare_usage.h"
#include "ctld/job.h"
#include "ctld/node.h"
#include "ctld/sched.h"

#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/sched/select.h"
#include "common/util/errors.h"
#include "common/util/namecache.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *plugin_dir(void)
{
    const char *env = getenv("TESSERA_PLUGIN_DIR");
    return env && *env ? env : TESSERA_LIB_DIR;
}

/* The controller for f's configuration and folder, as ctld_create builds its state. */
static void build(struct ctld_fixture *f)
{
    size_t len = strlen(f->conf_text) + 2048;
    char *text = malloc(len);
    assert_non_null(text);
    snprintf(text, len,
             "ClusterName=unit\nCtldHost=127.0.0.1\nStateSaveLocation=%s/state\n"
             "SlurmUser=%u\nPluginDir=%s\n%s",
             f->dir, (unsigned)geteuid(), plugin_dir(), f->conf_text);
    char err[512] = "";
    struct ctld *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    f->c = c;
    c->start_time = time(NULL);
    assert_int_equal(job_table_init(&c->jobs), TS_OK);
    assert_int_equal(ctld_observe_jobs(c), TS_OK); /* as ctld_create: the same observers */
    assert_non_null(c->names = namecache_create(NULL));
    int rc = conf_parse_string(text, "unit.conf", 0, &c->conf, err, sizeof(err));
    free(text);
    if (rc)
        fail_msg("configuration: %s", err);
    assert_non_null(c->loop = loop_create());
    struct fairshare *tree = NULL;
    if (fairshare_usage_load_tree(c->conf, NULL, &tree, err, sizeof(err)) ||
        ctld_state_open(c, tree, err, sizeof(err)))
        fail_msg("state: %s", err);
    if (f->with_sched && sched_init(c, err, sizeof(err)))
        fail_msg("scheduler: %s", err);
}

void ctld_fixture_up(struct ctld_fixture *f, const char *conf_text, int with_sched)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(harness_tmpdir("ctldunit", f->dir, sizeof(f->dir)), 0);
    assert_non_null(f->conf_text = strdup(conf_text));
    f->with_sched = with_sched;
    build(f);
}

void ctld_fixture_restart(struct ctld_fixture *f)
{
    assert_int_equal(ctld_destroy(f->c), TS_OK);
    f->c = NULL;
    build(f);
}

void ctld_fixture_down(struct ctld_fixture *f)
{
    if (f->c)
        assert_int_equal(ctld_destroy(f->c), TS_OK);
    f->c = NULL;
    if (f->dir[0])
        harness_rmrf(f->dir);
    f->dir[0] = '\0';
    free(f->conf_text);
    f->conf_text = NULL;
}

int ctld_fixture_setup(void **state, const char *conf_text, int with_sched)
{
    struct ctld_fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    ctld_fixture_up(f, conf_text, with_sched);
    *state = f;
    return 0;
}

int ctld_fixture_teardown(void **state)
{
    ctld_fixture_down(*state);
    free(*state);
    *state = NULL;
    return 0;
}

void ctld_fixture_desc(Tessera__JobDesc *d, const char *part)
{
    tessera__job_desc__init(d);
    d->partition = (char *)part;
    d->work_dir = (char *)"/tmp";
    d->name = (char *)"unit";
    d->has_ntasks = 1;
    d->ntasks = 1;
}

int ctld_fixture_submit(struct ctld_fixture *f, Tessera__JobDesc **comps, size_t n, uid_t uid,
                        uint32_t *id, char *errbuf, size_t errlen)
{
    Tessera__SubmitRequest req = TESSERA__SUBMIT_REQUEST__INIT;
    req.components = comps;
    req.n_components = n;
    char local[256];
    uint32_t local_id = 0;
    if (!errbuf) {
        errbuf = local;
        errlen = sizeof(local);
    }
    errbuf[0] = '\0';
    return job_submit(f->c, &req, uid, FIX_GID, "login", id ? id : &local_id, errbuf, errlen);
}

uint32_t ctld_fixture_submit_one(struct ctld_fixture *f, Tessera__JobDesc *d, uid_t uid)
{
    uint32_t id = 0;
    char err[256];
    int rc = ctld_fixture_submit(f, &d, 1, uid, &id, err, sizeof(err));
    if (rc)
        fail_msg("submission refused: %s (%s)", ts_strerror(rc), err);
    return id;
}

struct job *ctld_fixture_job(struct ctld_fixture *f, uint32_t id)
{
    struct job *j = job_find(&f->c->jobs, id);
    assert_non_null(j);
    return j;
}

void ctld_fixture_start(struct ctld_fixture *f, uint32_t id, const char *node, uint32_t cpus)
{
    struct job *lead = ctld_fixture_job(f, id)->leader;
    struct node *n = node_find(f->c, node);
    assert_non_null(n);
    size_t nc = job_ncomponents(lead);
    struct select_node_alloc slots[JOB_MAX_COMPONENTS];
    struct select_alloc allocs[JOB_MAX_COMPONENTS];
    for (size_t i = 0; i < nc; i++) {
        slots[i] = (struct select_node_alloc){
            .node = (uint32_t)node_index(f->c, n), .cpus = cpus, .tasks = 1};
        allocs[i] = (struct select_alloc){.nodes = &slots[i], .nnodes = 1};
    }
    assert_int_equal(job_start_unit(f->c, lead, allocs), TS_OK);
}

void ctld_fixture_register(struct ctld_fixture *f, const char *node)
{
    Tessera__NodeRegisterRequest req = TESSERA__NODE_REGISTER_REQUEST__INIT;
    Tessera__NodeRegisterResponse resp = TESSERA__NODE_REGISTER_RESPONSE__INIT;
    const struct conf_node *cfg = conf_find_node(f->c->conf, node);
    assert_non_null(cfg);
    req.name = (char *)node;
    req.cpus = cfg->cpus;
    req.real_memory_mb = cfg->real_memory_mb;
    req.boot_time = time(NULL);
    req.version = (char *)"unit";
    uint32_t *kill = NULL;
    char err[256] = "";
    assert_int_equal(node_register(f->c, &req, &resp, &kill, err, sizeof(err)), TS_OK);
    free(kill);
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int ctld_fixture_turn(struct ctld_fixture *f, int (*done)(struct ctld_fixture *, void *),
                      void *arg, int timeout_ms)
{
    uint64_t end = now_ms() + (uint64_t)timeout_ms;
    while (!done(f, arg)) {
        if (now_ms() >= end)
            return done(f, arg);
        loop_run_once(f->c->loop, 50);
    }
    return 1;
}
