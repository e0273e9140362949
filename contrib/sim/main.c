/* tessera-sim: replays an SWF trace through the real scheduler and select plugins in
 * simulated time, and prints the usual metrics (docs/simulator.md). */
#include "contrib/sim/sim.h"
#include "contrib/sim/swf.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "tessera-sim"

struct options {
    enum sim_policy policy;
    uint32_t nodes;           /* 0: the trace's size */
    uint32_t cpus;            /* 0: one CPU a node */
    const char *sched_params; /* appended to the policy's */
    const char *plugin_dir;   /* NULL: the build's, then the installed one */
    const char *scheduler;    /* NULL: sched/backfill */
    const char *csv;
    const char *trace;
    const char *policy_file;  /* --policy-file: a PBS-style sched_config */
    const char *groups_file;  /* --resource-group: the fair-share tree */
    const char *limits_file;  /* --limits: a tessera.conf's running-job limits */
    int non_prime;            /* the policy file's non-prime values */
    int per_user;
};

static void help(void)
{
    printf("Usage: " PROG " [OPTIONS] TRACE.swf[.gz]\n"
           "Replays a Standard Workload Format trace through the scheduler and select\n"
           "plugins in simulated time.\n"
           "  --policy=fcfs|easy|conservative|default  scheduling policy (default: default)\n"
           "  --nodes=N             nodes (default: the trace header's MaxNodes or\n"
           "                        MaxProcs, else the largest job)\n"
           "  --cpus=C              CPUs per node (default 1)\n"
           "  --sched-params=STR    SchedulerParameters added to the policy's, or\n"
           "                        replacing its entries of the same key\n"
           "  --plugin-dir=DIR      where the plugins are (default: the build's lib dir,\n"
           "                        then " TESSERA_PLUGIN_DIR ")\n"
           "  --scheduler=NAME      scheduler plugin (default " SIM_SCHED_TYPE ")\n"
           "  --csv=FILE            one line per job: "
           "id,submit,wait,start,end,run,procs,estimate,user,group\n"
           "  --policy-file=FILE    order the queue by a policy file (PBS sched_config\n"
           "                        syntax: sort keys, strict_fifo, starving jobs, fair\n"
           "                        share); its prime-time values\n"
           "  --non-prime           the policy file's non-prime values instead\n"
           "  --resource-group=FILE the fair-share tree (ids are the trace's user\n"
           "                        numbers, or group numbers with fairshare_entity: egroup)\n"
           "  --limits=FILE         the running-job limits of a tessera.conf (MaxRunning,\n"
           "                        MaxUserRunning, MaxGroupRunning, ResourcesMax,\n"
           "                        ResourcesAvailable) for the trace's users and groups\n"
           "  --per-user            wait and slowdown per user as well\n"
           "  --help                this help\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, PROG ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry '" PROG " --help' for more information.\n");
    return TS_EOPTION;
}

static int parse_count(const char *opt, const char *arg, uint32_t max, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > max)
        return bad_usage(opt, arg);
    *out = (uint32_t)v;
    return TS_OK;
}

static int parse_option(int c, struct options *o)
{
    switch (c) {
    case 'p':
        if (sim_policy_parse(optarg, &o->policy) != TS_OK)
            return bad_usage("unknown policy '%s' (fcfs, easy, conservative or default)",
                             optarg);
        return TS_OK;
    case 'N': return parse_count("invalid --nodes '%s'", optarg, CONF_MAX_NODES, &o->nodes);
    case 'c': return parse_count("invalid --cpus '%s'", optarg, UINT32_MAX, &o->cpus);
    case 's': o->sched_params = optarg; return TS_OK;
    case 'd': o->plugin_dir = optarg; return TS_OK;
    case 'S': o->scheduler = optarg; return TS_OK;
    case 'o': o->csv = optarg; return TS_OK;
    case 'P': o->policy_file = optarg; return TS_OK;
    case 'G': o->groups_file = optarg; return TS_OK;
    case 'L': o->limits_file = optarg; return TS_OK;
    case 'n': o->non_prime = 1; return TS_OK;
    case 'u': o->per_user = 1; return TS_OK;
    default: return TS_EOPTION;
    }
}

/* TS_OK, TS_EOPTION (reported), or TS_EINTR for --help (done). */
static int parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"policy", required_argument, NULL, 'p'},
        {"nodes", required_argument, NULL, 'N'},
        {"cpus", required_argument, NULL, 'c'},
        {"sched-params", required_argument, NULL, 's'},
        {"plugin-dir", required_argument, NULL, 'd'},
        {"scheduler", required_argument, NULL, 'S'},
        {"csv", required_argument, NULL, 'o'},
        {"policy-file", required_argument, NULL, 'P'},
        {"resource-group", required_argument, NULL, 'G'},
        {"limits", required_argument, NULL, 'L'},
        {"non-prime", no_argument, NULL, 'n'},
        {"per-user", no_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.policy = SIM_POLICY_DEFAULT};
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return TS_EINTR;
        }
        if (c == '?')
            return bad_usage("%s", "invalid option");
        int err = parse_option(c, o);
        if (err)
            return err;
    }
    if (optind != argc - 1)
        return bad_usage("%s", "expected one trace file");
    o->trace = argv[optind];
    return TS_OK;
}

/* The plugins from --plugin-dir, else from the build tree, else from the installed
 * folder: a built but not installed simulator finds its own plugins first. */
static int load_plugins(const struct options *o, struct sim_plugins *pl)
{
    static const char *const defaults[] = {SIM_BUILD_PLUGIN_DIR, TESSERA_PLUGIN_DIR};
    char err[512];
    int rc = TS_EPLUGIN_NOTFOUND;
    if (o->plugin_dir) {
        rc = sim_plugins_load(o->plugin_dir, o->scheduler, pl, err, sizeof(err));
    } else {
        for (size_t i = 0; i < 2 && rc == TS_EPLUGIN_NOTFOUND; i++)
            rc = sim_plugins_load(defaults[i], o->scheduler, pl, err, sizeof(err));
    }
    if (rc)
        fprintf(stderr, PROG ": %s\n", err);
    return rc;
}

static double mono_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_csv(const char *path, const struct sim *s)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return TS_ESYS;
    }
    fprintf(f, "id,submit,wait,start,end,run,procs,estimate,user,group\n");
    for (size_t i = 0; i < sim_job_count(s); i++) {
        const struct sim_job *j = sim_job_at(s, i);
        fprintf(f, "%u,%lld,%lld,%lld,%lld,%lld,%u,%lld,%d,%d\n", j->swf.id,
                (long long)j->swf.submit, (long long)(j->start - j->swf.submit),
                (long long)j->start, (long long)j->end, (long long)j->swf.run, j->swf.procs,
                (long long)j->swf.estimate, j->swf.user, j->swf.group);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return TS_ESYS;
    }
    return TS_OK;
}

static void report(const struct options *o, const struct sim_config *cfg,
                   const struct swf_trace *t, const struct sim *s, double wall,
                   int64_t window)
{
    struct sim_stats st;
    sim_stats(s, &st);
    printf("trace         %s\n", o->trace);
    printf("policy        %s (%s: %s)\n", sim_policy_name(o->policy),
           o->scheduler ? o->scheduler : SIM_SCHED_TYPE, cfg->sched_params);
    printf("machine       %u nodes x %u CPUs\n", cfg->nodes, cfg->cpus_per_node);
    printf("jobs          %zu simulated, %zu dropped (%zu without run time or size, "
           "%zu larger than the machine)\n",
           st.jobs, t->dropped + st.dropped, t->dropped, st.dropped);
    printf("mean wait     %.1f s\n", st.mean_wait);
    printf("mean bsld     %.2f (tau %d s)\n", st.mean_bsld, SIM_BSLD_TAU);
    printf("utilisation   %.4f\n", st.utilisation);
    printf("makespan      %lld s (%.1f days)\n", (long long)st.makespan,
           (double)st.makespan / 86400);
    printf("cycles        %llu (%.1f waiting jobs each on average)\n",
           (unsigned long long)st.cycles, st.cycles ? (double)st.units / (double)st.cycles : 0.0);
    if (o->policy_file)
        printf("policy file   %s (%s values)\n", o->policy_file,
               o->non_prime ? "non-prime" : "prime-time");
    if (o->limits_file)
        printf("limits        %s\n", o->limits_file);
    printf("wall time     %.2f s\n", wall);
    struct sim_user_stats *us = NULL;
    size_t nu = o->per_user ? sim_user_stats(s, &us) : 0;
    if (nu)
        printf("\n%8s %8s %12s %10s\n", "user", "jobs", "mean wait", "mean bsld");
    for (size_t i = 0; i < nu; i++)
        printf("%8d %8zu %12.1f %10.2f\n", us[i].user, us[i].jobs, us[i].mean_wait,
               us[i].mean_bsld);
    free(us);
    /* a plan that had to look further ahead than the window may have left jobs unplanned */
    if (o->policy != SIM_POLICY_FCFS && st.max_wait >= window * 60)
        fprintf(stderr, PROG ": warning: a job waited %lld s, bf_window is %lld min\n",
                (long long)st.max_wait, (long long)window);
}

/* The machine: --nodes and --cpus, else as many processors as the trace's machine had. */
static int machine(const struct options *o, const struct swf_trace *t, struct sim_config *cfg)
{
    cfg->cpus_per_node = o->cpus ? o->cpus : 1;
    cfg->nodes = o->nodes;
    if (!cfg->nodes) {
        uint32_t procs = swf_machine_size(t);
        cfg->nodes = (uint32_t)((procs + (uint64_t)cfg->cpus_per_node - 1) / cfg->cpus_per_node);
    }
    if (!cfg->nodes || cfg->nodes > CONF_MAX_NODES) {
        fprintf(stderr, PROG ": %s: cannot size the machine (%u nodes); give --nodes\n",
                o->trace, cfg->nodes);
        return TS_EINVAL;
    }
    return TS_OK;
}

static int simulate(const struct options *o, const struct swf_trace *t, struct sim_config *cfg)
{
    int64_t window = sim_window_minutes(t->jobs, t->njobs);
    char *params = sim_policy_params(o->policy, window, o->sched_params);
    if (!params) {
        fprintf(stderr, PROG ": out of memory\n");
        return TS_ENOMEM;
    }
    cfg->sched_params = params;
    char err[512];
    struct sim *s = NULL;
    double t0 = mono_seconds();
    int rc = sim_create(cfg, t->jobs, t->njobs, &s, err, sizeof(err));
    if (!rc)
        rc = sim_run(s, err, sizeof(err));
    double wall = mono_seconds() - t0;
    if (rc)
        fprintf(stderr, PROG ": %s\n", err);
    else
        report(o, cfg, t, s, wall, window);
    if (!rc && o->csv)
        rc = write_csv(o->csv, s);
    sim_destroy(s);
    free(params);
    return rc;
}

/* --policy-file and --resource-group: the period's values and the tree (the tree only
 * when the policy orders by fair share). */
static int load_policy(const struct options *o, struct policy *pol, struct fairshare **fs)
{
    char err[512];
    *fs = NULL;
    if (!o->policy_file) {
        if (o->groups_file || o->non_prime)
            return bad_usage("%s", "--resource-group and --non-prime need --policy-file");
        return TS_OK;
    }
    if (policy_load(o->policy_file, pol, err, sizeof(err)) != TS_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return TS_ECONF;
    }
    const struct policy_set *set = &pol->set[o->non_prime ? POLICY_NON_PRIME : POLICY_PRIME];
    int rc = o->groups_file ? fairshare_load(o->groups_file, set->unknown_shares, fs, err,
                                             sizeof(err))
                            : fairshare_parse(NULL, "", set->unknown_shares, fs, err,
                                              sizeof(err));
    if (rc)
        fprintf(stderr, PROG ": %s\n", rc == TS_ENOMEM ? "out of memory" : err);
    return rc;
}

/* --limits: the file as the controller reads it; only its limits are used. */
static int load_limits(const struct options *o, struct conf **out)
{
    char err[512];
    *out = NULL;
    if (!o->limits_file)
        return TS_OK;
    int rc = conf_load(o->limits_file, out, err, sizeof(err));
    if (rc)
        fprintf(stderr, PROG ": %s\n", rc == TS_ENOMEM ? "out of memory" : err);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == TS_EINTR ? 0 : 1;
    char err[512];
    struct swf_trace *t = NULL;
    if (swf_read(o.trace, &t, err, sizeof(err)) != TS_OK) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    struct sim_config cfg = {0};
    struct sim_plugins pl = {0};
    struct policy pol;
    struct fairshare *fs = NULL;
    struct conf *limits = NULL;
    rc = load_policy(&o, &pol, &fs);
    if (!rc)
        rc = load_limits(&o, &limits);
    cfg.limits = limits;
    if (!rc && o.policy_file) {
        cfg.policy = &pol.set[o.non_prime ? POLICY_NON_PRIME : POLICY_PRIME];
        cfg.fairshare = fs;
    }
    if (!rc)
        rc = machine(&o, t, &cfg);
    if (!rc)
        rc = load_plugins(&o, &pl);
    if (!rc) {
        cfg.select = pl.select;
        cfg.sched = pl.sched;
        cfg.priority = pl.priority;
        rc = simulate(&o, t, &cfg);
    }
    sim_plugins_unload(&pl);
    fairshare_destroy(fs);
    conf_free(limits);
    swf_destroy(t);
    return rc ? 1 : 0;
}
