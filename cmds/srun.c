/* srun: run a parallel step (docs/04-steps.md). Inside an allocation (SLURM_JOB_ID set: salloc, a
 * batch script) it creates a step of that job; outside one it first obtains an
 * allocation of its components, as salloc does, and releases it at the end.
 *
 * Components: `srun -n2 a : -n1 b` runs a on component 0 and b on component 1; within an
 * allocation `--het-group=EXPR` picks the job components an srun component runs on
 * (`--het-group=0,1 env` runs env on both). One step spans all of them, with one step id
 * and global ranks in ascending component order (docs/steps.md).
 */
#include "cmds/alloc.h"
#include "cmds/cmdutil.h"
#include "cmds/srun_multiprog.h"
#include "cmds/step_run.h"

#include "common/conf/conf.h"
#include "common/job/jobenv.h"
#include "common/jobopt/jobopt.h"
#include "common/text/idset.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "srun"
#define MAX_COMPONENTS 128

static volatile sig_atomic_t got_int; /* Ctrl-C while waiting for an allocation */

static void on_int(int sig)
{
    (void)sig;
    got_int = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: srun [OPTIONS(0)...] [ : [OPTIONS(N)...]] executable(0) [args(0)...]\n"
            "\n"
            "Components are separated by a lone \":\"; inside an allocation --het-group picks\n"
            "the job components a component runs on.\n"
            "\n"
            "  -A, --account=name          charge the job to this account (new allocation)\n"
            "  -c, --cpus-per-task=n       CPUs per task\n"
            "  -D, --chdir=path            working directory of the tasks\n"
            "  -e, --error=pattern         tasks' standard error to files (%%t %%n %%N %%j %%s)\n"
            "      --export=[ALL|NONE|vars]  environment passed to the tasks\n"
            "      --het-group=list        job components to run on (\"0,2\", \"1-3\")\n"
            "  -i, --input=pattern         tasks' standard input from files\n"
            "  -J, --job-name=name         name of the job (new allocation)\n"
            "  -K, --kill-on-bad-exit[=0|1]  end the step when a task exits non-zero\n"
            "  -l, --label                 prefix each output line with its task's rank\n"
            "      --cpu-bind=none         tasks are not bound to CPUs (the only binding yet)\n"
            "  -m, --distribution=block|cyclic[:LEVEL[:LEVEL]][,Pack|,NoPack]\n"
            "                              how tasks are laid over the nodes (lower levels:\n"
            "                              checked, without effect until CPUs are bound)\n"
            "      --mpi=pmi1|none         PMI-1 is always served\n"
            "      --multi-prog            the command is a file of \"ranks program args\"\n"
            "                              lines: each task runs its own (%%t %%o)\n"
            "  -N, --nodes=min[-max]       number of nodes\n"
            "  -n, --ntasks=n              number of tasks\n"
            "      --ntasks-per-node=n     tasks per node\n"
            "  -o, --output=pattern        tasks' standard output to files\n"
            "  -p, --partition=name        partition (new allocation)\n"
            "  -t, --time=limit            time limit (new allocation)\n"
            "  -u, --unbuffered            output as it is written (always so)\n"
            "  -W, --wait=seconds          end the rest this long after the first task ended\n"
            "  -w, --nodelist=hosts        run on these nodes\n"
            "  -x, --exclude=hosts         not on these nodes\n"
            "  -Q, --quiet                 fewer messages\n"
            "  -h, --help                  this text\n"
            "  -V, --version               print the version\n");
}

/* ------------------------------------------------------------------------------------ */
/* which job components each srun component runs on */

struct mapping {
    size_t n;                        /* job components of the step */
    uint32_t offset[MAX_COMPONENTS]; /* job component */
    size_t from[MAX_COMPONENTS];     /* the srun component it takes options from */
    int one_allocation;              /* offset[] are parts of a plain job's allocation */
};

/* A het group beyond the allocation, in Slurm's words: one group asked for alone is an
 * "offset", one of several a "het group value". */
static void report_beyond(uint32_t k, uint32_t het_size, int alone)
{
    uint32_t max = het_size ? het_size - 1 : 0;
    if (alone || !het_size)
        cmd_error(PROG, "Requested het-group offset exceeds highest hetjob index (%u > %u)", k, max);
    else
        cmd_error(PROG, "Attempt to run a job step with het group value of %u, but the job "
                        "allocation has maximum value of %u", k, max);
}

/* The het groups srun's components name, each an idset (the component's own index
 * without --het-group). */
static int component_groups(const struct jobopt *opt, int in_alloc, struct idset **groups)
{
    for (size_t i = 0; i < opt->ncomponents; i++) {
        const char *hg = opt->components[i]->het_group;
        if (hg && *hg && !in_alloc) {
            cmd_error(PROG, "--het-group is only meaningful within an allocation");
            return 1;
        }
        if (hg && *hg ? idset_parse(hg, &groups[i]) != TS_OK
                      : !(groups[i] = idset_create()) || idset_add(groups[i], (uint32_t)i)) {
            cmd_error(PROG, hg && *hg ? "Invalid --het-group value: %s" : "%s",
                      hg && *hg ? hg : ts_strerror(TS_ENOMEM));
            return 1;
        }
    }
    return 0;
}

/* srun A : B in a plain allocation: one step of parts laid out within it (Slurm 20.11+),
 * part i from srun component i; a --het-group there keeps its usual error. */
static int is_one_allocation(const struct jobopt *opt, uint32_t het_size, int in_alloc)
{
    if (!in_alloc || het_size || opt->ncomponents < 2 || opt->ncomponents > MAX_COMPONENTS)
        return 0;
    for (size_t i = 0; i < opt->ncomponents; i++)
        if (opt->components[i]->het_group && *opt->components[i]->het_group)
            return 0;
    return 1;
}

static int parts_of_one_allocation(const struct jobopt *opt, uint32_t het_size, int in_alloc,
                                   struct mapping *m)
{
    if (!is_one_allocation(opt, het_size, in_alloc))
        return 0;
    m->n = opt->ncomponents;
    for (size_t i = 0; i < m->n; i++) {
        m->offset[i] = (uint32_t)i;
        m->from[i] = i;
    }
    m->one_allocation = 1;
    return 1;
}

static int map_components(const struct jobopt *opt, uint32_t het_size, int in_alloc,
                          struct mapping *m)
{
    m->one_allocation = 0;
    if (parts_of_one_allocation(opt, het_size, in_alloc, m))
        return 0;
    struct idset *groups[MAX_COMPONENTS] = {0};
    if (opt->ncomponents > MAX_COMPONENTS) {
        cmd_error(PROG, "too many components");
        return 1;
    }
    int rc = component_groups(opt, in_alloc, groups);
    size_t named = 0;
    for (size_t i = 0; !rc && i < opt->ncomponents; i++)
        named += idset_count(groups[i]);
    m->n = 0;
    for (size_t i = 0; !rc && i < opt->ncomponents; i++) {
        for (uint32_t k = idset_first(groups[i]); !rc && k != IDSET_INVALID;
             k = idset_next(groups[i], k)) {
            if (k >= (het_size ? het_size : 1)) {
                report_beyond(k, het_size, named == 1);
                rc = 1;
            }
            for (size_t j = 0; !rc && j < m->n; j++) {
                if (m->offset[j] == k) {
                    fprintf(stderr, "%s: fatal: Duplicate het groups in single srun not "
                                    "supported\n", PROG);
                    rc = 1;
                }
            }
            if (!rc && m->n == MAX_COMPONENTS) {
                cmd_error(PROG, "too many components");
                rc = 1;
            }
            if (!rc) {
                m->offset[m->n] = k;
                m->from[m->n++] = i;
            }
        }
    }
    for (size_t i = 0; i < opt->ncomponents; i++)
        idset_destroy(groups[i]);
    return rc;
}

/* The allocation's counts, which srun takes as defaults for a step of the whole of it. */
static const char *const allocation_counts[] = {
    "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS", "SLURM_NPROCS",
    "SLURM_NTASKS_PER_NODE",
};

static int is_allocation_count(const char *entry)
{
    for (size_t i = 0; i < sizeof(allocation_counts) / sizeof(allocation_counts[0]); i++) {
        size_t len = strlen(allocation_counts[i]);
        if (!strncmp(entry, allocation_counts[i], len) && entry[len] == '=')
            return 1;
    }
    return 0;
}

/* Parts of one allocation take their node and task counts from their own options only
 * (Slurm 22.05: "srun -n2 a : -n2 b" in 2 nodes of 4 CPUs puts each part on one node):
 * parse again without the allocation's counts and take those fields from there. */
static int own_counts(struct jobopt_input in, struct jobopt *opt)
{
    size_t n = 0;
    while (in.envp[n])
        n++;
    char **envp = calloc(n + 1, sizeof(*envp));
    if (!envp)
        return TS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_allocation_count(in.envp[i]))
            envp[k++] = in.envp[i];
    in.envp = envp;
    struct jobopt again;
    char msg[256];
    int err = jobopt_parse(&in, &again, msg, sizeof(msg));
    free(envp);
    if (err)
        return err;
    for (size_t i = 0; i < opt->ncomponents && i < again.ncomponents; i++) {
        Tessera__JobDesc *d = opt->components[i];
        const Tessera__JobDesc *own = again.components[i];
        d->has_min_nodes = own->has_min_nodes;
        d->min_nodes = own->min_nodes;
        d->has_max_nodes = own->has_max_nodes;
        d->max_nodes = own->max_nodes;
        d->has_ntasks = own->has_ntasks;
        d->ntasks = own->ntasks;
        d->has_ntasks_per_node = own->has_ntasks_per_node;
        d->ntasks_per_node = own->ntasks_per_node;
    }
    jobopt_free(&again);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* the step */

/* A het allocation's per-component default (SLURM_NTASKS_HET_GROUP_<n>, ...): srun of a
 * het job takes each component's own, as Slurm's does; 0 when unset. */
static uint32_t component_env(const char *name, uint32_t offset)
{
    if (!getenv("SLURM_HET_SIZE"))
        return 0;
    char var[96];
    snprintf(var, sizeof(var), "%s_HET_GROUP_%u", name, offset);
    const char *v = getenv(var);
    return v && *v ? (uint32_t)strtoul(v, NULL, 10) : 0;
}

static Tessera__StepComponentRequest *component_request(const Tessera__JobDesc *d,
                                                        uint32_t offset, int overcommit)
{
    Tessera__StepComponentRequest *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    tessera__step_component_request__init(c);
    c->het_group = offset;
    c->ntasks = d->has_ntasks ? d->ntasks : component_env("SLURM_NTASKS", offset);
    c->min_nodes = d->has_min_nodes ? d->min_nodes : 0;
    c->max_nodes = d->has_max_nodes ? d->max_nodes : 0;
    c->cpus_per_task = d->has_cpus_per_task ? d->cpus_per_task
                                             : component_env("SLURM_CPUS_PER_TASK", offset);
    c->ntasks_per_node = d->has_ntasks_per_node ? d->ntasks_per_node
                                                 : component_env("SLURM_NTASKS_PER_NODE", offset);
    c->distribution = d->distribution && !strcmp(d->distribution, "cyclic")
                          ? TESSERA__STEP_DISTRIBUTION__STEP_DIST_CYCLIC
                          : TESSERA__STEP_DISTRIBUTION__STEP_DIST_BLOCK;
    c->nodelist = d->nodelist ? d->nodelist : (char *)"";
    c->exclude = d->exclude ? d->exclude : (char *)"";
    c->overcommit = overcommit;
    return c;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* One step_create: TS_OK with the answer in *out, or the error (the controller's text
 * in *out's error when it answered). */
static int ask_step(struct ctl *ctl, uint32_t job_id, const struct jobopt *opt,
                    const struct mapping *m, Tessera__Response **out)
{
    Tessera__StepComponentRequest *comps[MAX_COMPONENTS];
    size_t n = 0;
    for (; n < m->n; n++)
        if (!(comps[n] = component_request(opt->components[m->from[n]], m->offset[n],
                                           opt->overcommit)))
            break;
    Tessera__StepCreateRequest sc = TESSERA__STEP_CREATE_REQUEST__INIT;
    sc.job_id = job_id;
    sc.components = comps;
    sc.n_components = n;
    sc.name = (char *)base_name(opt->components[m->from[0]]->argv[0]);
    sc.overlap = opt->overlap;
    sc.one_allocation = m->one_allocation;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_CREATE;
    req.step_create = &sc;
    *out = NULL;
    int err = n == m->n ? ctl_call(ctl, &req, out) : TS_ENOMEM;
    if (!err && (*out)->error)
        err = (*out)->error->code ? (*out)->error->code : TS_EINVAL;
    else if (!err && (*out)->msg_case != TESSERA__RESPONSE__MSG_STEP_CREATE)
        err = TS_EPROTO;
    for (size_t i = 0; i < n; i++)
        free(comps[i]);
    return err;
}

/* Slurm's lines for a step that cannot be created. */
static void report_refusal(uint32_t job_id, int err, const Tessera__Response *resp)
{
    const char *text = resp && resp->error && resp->error->text ? resp->error->text
                       : err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                                            : ts_strerror(err);
    if (err == TS_EHETJOB_STEPS) {
        fprintf(stderr, "%s: fatal: %s\n", PROG, text); /* Slurm's word for it */
    } else if (err == TS_EHET_GROUP || err == TS_ESTEP_COMPONENTS) {
        cmd_error(PROG, "%s", text);
    } else if (err == TS_ESTEP_NODELIST) {
        cmd_error(PROG, "%s", text);
        cmd_error(PROG, "Job not submitted.");
    } else if (err == TS_EINVALID_JOB_ID) {
        cmd_error(PROG, "Unable to confirm allocation for job %u: %s", job_id, text);
        fprintf(stderr, "%s: Check SLURM_JOB_ID environment variable. Expired or invalid job "
                        "%u\n", PROG, job_id);
    } else {
        cmd_error(PROG, "Unable to create step for job %u: %s", job_id, text);
    }
}

/* Ask the controller for the step; while other steps hold the CPUs it needs, wait and ask
 * again, with Slurm's lines (a step that just ended may hold them a moment longer, until
 * its nodes report: the first retry is quiet). */
static int create_step(struct ctl *ctl, uint32_t job_id, const struct jobopt *opt,
                       const struct mapping *m, Tessera__Response **out)
{
    useconds_t delay = 100000;
    int said = 0, err;
    for (int tries = 0; (err = ask_step(ctl, job_id, opt, m, out)) == TS_ESTEP_BUSY; tries++) {
        if (tries == 1 && !opt->quiet) {
            fprintf(stderr, "%s: Job %u step creation temporarily disabled, retrying (%s)\n",
                    PROG, job_id, ts_strerror(TS_ESTEP_BUSY));
            said = 1;
        }
        tessera__response__free_unpacked(*out, NULL);
        *out = NULL;
        usleep(delay);
        delay = delay < 1000000 ? delay * 2 : 2000000;
    }
    if (err) {
        report_refusal(job_id, err, *out);
        return 1;
    }
    if (said)
        fprintf(stderr, "%s: Step created for job %u\n", PROG, job_id);
    return 0;
}

/* argv of each layout component, from the srun component it came from. */
static Tessera__StepLaunchComponent **launch_components(const Tessera__StepLayout *l,
                                                        const struct jobopt *opt,
                                                        const struct mapping *m,
                                                        Tessera__StepLaunchComponent *store)
{
    Tessera__StepLaunchComponent **v = calloc(l->n_components ? l->n_components : 1, sizeof(*v));
    for (size_t i = 0; v && i < l->n_components; i++) {
        tessera__step_launch_component__init(&store[i]);
        for (size_t k = 0; k < m->n; k++) {
            if (m->offset[k] != l->components[i]->offset)
                continue;
            const Tessera__JobDesc *d = opt->components[m->from[k]];
            store[i].argv = d->argv;
            store[i].n_argv = d->n_argv;
        }
        v[i] = &store[i];
    }
    return v;
}

/* ------------------------------------------------------------------------------------ */

struct job_ref {
    uint32_t job_id;
    uint32_t het_size; /* 0: a plain job */
    int in_alloc;
};

/* The job to add the step to: --jobid (from outside the job: the controller lets only its
 * owner or an administrator), else the allocation srun runs in. The component count
 * comes from the allocation's environment (for another job: the controller's, below). */
static int job_to_join(const struct jobopt *opt, struct job_ref *j)
{
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id)
        id = getenv("SLURM_JOBID");
    uint32_t env_id = id && *id ? (uint32_t)strtoul(id, NULL, 10) : 0;
    j->job_id = opt->jobid ? opt->jobid : env_id;
    const char *hs = getenv("SLURM_HET_SIZE");
    j->het_size = hs && *hs && j->job_id == env_id ? (uint32_t)strtoul(hs, NULL, 10) : 0;
    j->in_alloc = j->job_id != 0;
    return j->in_alloc;
}

/* The tasks' environment: srun's as --export says, with the allocation's variables when
 * srun made the allocation itself. */
static char **task_environment(const struct jobopt *opt, const struct alloc *a)
{
    Tessera__JobDesc d = *opt->components[0];
    char **base = jobenv_exported(&d);
    if (!base || !a->grant)
        return base;
    char **env = jobenv_salloc((const Tessera__JobRecord *const *)a->grant->components,
                               a->grant->n_components, base, NULL);
    jobenv_free(base);
    return env;
}

/* Steps do not share out the job's generic resources yet (docs/gres.md). */
static int job_desc_asks_gres(const Tessera__JobDesc *d)
{
    return d->tres_per_node || d->tres_per_job || d->tres_per_task || d->cpus_per_tres ||
           d->mem_per_tres || d->gres_flags;
}

/* Options that would limit a step Tessera cannot honour yet: refused, never ignored. */
static int check_step_options(const struct jobopt *opt)
{
    for (size_t i = 0; i < opt->ncomponents; i++) {
        if (opt->components[i]->has_time_limit) {
            cmd_error(PROG, "--time for a step within an allocation is not supported");
            return 1;
        }
        if (opt->components[i]->has_warn_signal) {
            cmd_error(PROG, "--signal for a step within an allocation is not supported");
            return 1;
        }
        if (job_desc_asks_gres(opt->components[i])) {
            cmd_error(PROG, "--gres and --gpus* for a step within an allocation are not "
                            "supported");
            return 1;
        }
    }
    return 0;
}

/* -o, -e, -i with the job's and the step's values (cmds/step_streams.h). */
static int resolve_streams(const struct jobopt *opt, const struct job_ref *job,
                           const Tessera__StepLayout *l, struct step_streams *streams)
{
    const Tessera__JobDesc *d0 = opt->components[0];
    char user[NAMECACHE_NAME_MAX];
    int known = namecache_nss_lookup(NULL, NAMECACHE_USER, getuid(), user, sizeof(user)) == 1;
    const char *name = d0->name && *d0->name ? d0->name : getenv("SLURM_JOB_NAME");
    struct step_streams_params sp = {
        .std_out = d0->std_out,
        .std_err = d0->std_err,
        .std_in = d0->std_in,
        .work_dir = d0->work_dir,
        .append = d0->open_mode && !strcmp(d0->open_mode, "append"),
        .job_id = job->job_id,
        .step_id = l->step_id,
        .user = known ? user : NULL,
        .job_name = name ? name : base_name(opt->components[0]->argv[0]),
    };
    return step_streams_resolve(&sp, streams);
}

static int run(struct ctl *ctl, const struct jobopt *opt, struct alloc *a,
               const struct job_ref *job, const char *multi_prog)
{
    struct mapping m;
    if (job->in_alloc && check_step_options(opt))
        return 1;
    if (map_components(opt, job->het_size, job->in_alloc, &m))
        return 1;
    if (multi_prog && m.n > 1) {
        cmd_error(PROG, "--multi-prog is not supported in a heterogeneous step");
        return 1;
    }
    Tessera__Response *resp = NULL;
    if (create_step(ctl, job->job_id, opt, &m, &resp)) {
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
        return 1;
    }
    const Tessera__StepLayout *l = resp->step_create->layout;
    if (multi_prog &&
        srun_multiprog_check(PROG, multi_prog, opt->components[0]->argv[0], l->ntasks)) {
        tessera__response__free_unpacked(resp, NULL); /* only when -n was not given */
        return 1;
    }
    Tessera__StepLaunchComponent *store = calloc(l->n_components ? l->n_components : 1,
                                                 sizeof(*store));
    Tessera__StepLaunchComponent **comps = store ? launch_components(l, opt, &m, store) : NULL;
    char **env = task_environment(opt, a);
    int rc = 1;
    if (!comps || !env) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
    } else {
        const Tessera__JobDesc *d0 = opt->components[0];
        struct step_streams streams;
        if (resolve_streams(opt, job, l, &streams) == TS_OK) {
            struct step_run_params p = {
                .conf = ctl->conf,
                .step = resp->step_create,
                .components = comps,
                .env = env,
                .work_dir = d0->work_dir,
                .label = opt->label,
                .quiet = opt->quiet,
                .kill_on_bad_exit = opt->kill_on_bad_exit,
                .wait_secs = opt->wait_secs,
                .multi_prog = multi_prog,
                .streams = &streams,
            };
            ctl_disconnect(ctl); /* idle while the step runs; the release reconnects */
            rc = step_run(&p);
            step_streams_close(&streams);
        }
    }
    jobenv_free(env);
    free(comps);
    free(store);
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

/* srun outside an allocation: obtain one of the components first, quietly unless it
 * has to wait. */
static int allocate(struct ctl *ctl, const struct jobopt *opt, struct alloc *a,
                    struct job_ref *job)
{
    a->ctl = ctl;
    a->quiet = opt->quiet;
    a->srun = 1;
    if (alloc_submit(a, opt))
        return 1;
    switch (alloc_wait_grant(a, &got_int)) {
    case ALLOC_GRANTED:
        break;
    case ALLOC_INTERRUPTED:
        alloc_cancel(a);
        fprintf(stderr, "%s: Job allocation %u has been revoked.\n", PROG, a->job_id);
        return 1;
    default:
        return 1;
    }
    job->job_id = a->job_id;
    job->het_size = opt->ncomponents > 1 ? (uint32_t)opt->ncomponents : 0;
    return 0;
}

/* --jobid of a job srun does not run in: its component count, as the controller shows the
 * job (0: a plain job, or one it does not know, which step creation then reports). */
static uint32_t het_size_of(struct ctl *ctl, uint32_t job_id)
{
    char id[16];
    snprintf(id, sizeof(id), "%u", job_id);
    char *ids[1] = {id};
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.job_ids = ids;
    q.n_job_ids = 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    Tessera__Response *resp = NULL;
    uint32_t n = 0;
    if (ctl_call_pages(ctl, &req, &resp) == TS_OK && !resp->error &&
        resp->msg_case == TESSERA__RESPONSE__MSG_JOB_QUERY) {
        const Tessera__JobQueryResponse *jq = resp->job_query;
        for (size_t i = 0; i < jq->n_jobs; i++)
            n += jq->jobs[i]->het_job_id && jq->jobs[i]->het_job_id == jq->jobs[0]->het_job_id;
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    return n;
}

/* --multi-prog: the configuration file's text, checked before any allocation when the
 * task count is given (else against the step's layout); NULL after printing why not. */
static char *multi_prog_text(const struct jobopt *opt)
{
    const Tessera__JobDesc *d0 = opt->components[0];
    if (opt->ncomponents > 1) {
        cmd_error(PROG, "--multi-prog is not supported in a heterogeneous step");
        return NULL;
    }
    char *text = srun_multiprog_read(PROG, d0->argv[0]);
    if (text && d0->has_ntasks && srun_multiprog_check(PROG, text, d0->argv[0], d0->ntasks)) {
        free(text);
        return NULL;
    }
    return text;
}

/* The command, once its options are parsed (cmd_job_main frees them). */
static int srun_run(struct jobopt *opt, const struct jobopt_input *in)
{
    if (opt->ncomponents == 0 || opt->components[0]->n_argv == 0) {
        fprintf(stderr, "%s: fatal: No command given to execute.\n", PROG); /* Slurm's */
        return 1;
    }
    char *multi_prog = NULL;
    if (opt->multi_prog && !(multi_prog = multi_prog_text(opt)))
        return 1;
    struct ctl ctl;
    if (cmd_set_origin(opt, in->cwd) || ctl_load_conf(&ctl, PROG, NULL) != 0) {
        free(multi_prog);
        return 1;
    }
    struct alloc a = {.ctl = &ctl};
    struct job_ref job = {0};
    int rc = 1, err;
    int joined = job_to_join(opt, &job);
    if (joined && opt->jobid && !job.het_size)
        job.het_size = het_size_of(&ctl, job.job_id);
    if (!joined) {
        struct sigaction sa = {.sa_handler = on_int};
        sigaction(SIGINT, &sa, NULL);
        rc = allocate(&ctl, opt, &a, &job);
        signal(SIGINT, SIG_DFL);
        if (rc == 0) {
            rc = run(&ctl, opt, &a, &job, multi_prog);
            alloc_release(&a, rc << 8);
        }
    } else if (is_one_allocation(opt, job.het_size, job.in_alloc) &&
               (err = own_counts(*in, opt)) != TS_OK) {
        cmd_error(PROG, "%s", ts_strerror(err)); /* the first parse took the same text */
    } else {
        rc = run(&ctl, opt, &a, &job, multi_prog);
    }
    alloc_free(&a);
    ctl_close(&ctl);
    free(multi_prog);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct cmd_start start = {PROG, JOBOPT_SRUN, "Unable to allocate resources",
                                           usage, srun_run};
    return cmd_job_main(&start, argc, argv);
}
