/* The option table of sbatch, salloc and srun, the setters behind it, and the environment
 * defaults (SBATCH_*, SALLOC_*, SRUN_* and SLURM_*).
 *
 * Each row names the JobDesc field it sets, so propagating a field to the next component
 * and storing plain values needs no per-option code; only options with a syntax of their
 * own have their own setter. Error texts are Slurm's where Slurm has one.
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/text/hostlist.h"
#include "common/text/idset.h"
#include "common/text/licenses.h"
#include "common/text/signame.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- storing values ------------------------------------------------------------------ */

static void *field_at(Tessera__JobDesc *d, size_t off)
{
    return (char *)d + off;
}

static size_t kind_size(enum jobopt_kind k)
{
    switch (k) {
    case JOBOPT_K_BOOL: return sizeof(protobuf_c_boolean);
    case JOBOPT_K_U32:
    case JOBOPT_K_I32: return 4;
    case JOBOPT_K_U64:
    case JOBOPT_K_I64: return 8;
    default: return 0;
    }
}

/* value must point to the C type of def->kind (uint32_t for U32, ...). */
static void store(Tessera__JobDesc *d, const struct jobopt_def *def, const void *value)
{
    memcpy(field_at(d, def->off), value, kind_size(def->kind));
    *(protobuf_c_boolean *)field_at(d, def->has_off) = 1;
}

static int store_str(struct jobopt_ctx *c, const struct jobopt_def *def, const char *v)
{
    char **f = field_at(c->d, def->off);
    char *copy = strdup(v);

    if (!copy)
        return jobopt_fail(c->err, TS_ENOMEM, "Out of memory");
    free(*f);
    *f = copy;
    return TS_OK;
}

int jobopt_copy_field(Tessera__JobDesc *dst, const Tessera__JobDesc *src,
                      const struct jobopt_def *def)
{
    if (def->kind == JOBOPT_K_STR) {
        const char *v = *(char *const *)((const char *)src + def->off);
        char **f = field_at(dst, def->off);

        if (!v)
            return TS_OK;
        free(*f);
        *f = strdup(v);
        return *f ? TS_OK : TS_ENOMEM;
    }
    if (def->kind != JOBOPT_K_NONE &&
        *(const protobuf_c_boolean *)((const char *)src + def->has_off))
        store(dst, def, (const char *)src + def->off);
    return TS_OK;
}

void jobopt_clear_field(Tessera__JobDesc *d, const struct jobopt_def *def)
{
    if (def->kind == JOBOPT_K_STR) {
        char **f = field_at(d, def->off);

        free(*f);
        *f = NULL;
    } else if (def->kind != JOBOPT_K_NONE) {
        memset(field_at(d, def->off), 0, kind_size(def->kind));
        *(protobuf_c_boolean *)field_at(d, def->has_off) = 0;
    }
}

/* ---- setters: plain values ----------------------------------------------------------- */

static int set_str(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    return store_str(c, def, arg);
}

static int set_true(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    protobuf_c_boolean v = 1;

    store(c->d, def, &v);
    return TS_OK;
}

static int set_requeue(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    protobuf_c_boolean v = strcmp(def->name, "requeue") == 0;

    store(c->d, def, &v);
    return TS_OK;
}

/* -n, -c, --ntasks-per-node: a count of at least one, as Slurm demands. */
static int set_count(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    uint64_t v;
    uint32_t v32;

    if (jobopt_parse_u64(arg, UINT32_MAX, &v) != TS_OK || v == 0)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid numeric value \"%s\" for --%s.",
                           arg, def->name);
    v32 = (uint32_t)v;
    store(c->d, def, &v32);
    return TS_OK;
}

/* A node count: a number, optionally with Slurm's suffix k (x 1024) or m (x 1024 x 1024),
 * in either case; at least 1. */
static int parse_node_count(const char *text, uint64_t *out)
{
    size_t len = strlen(text);
    uint64_t unit = 1;
    if (len > 1 && strchr("kK", text[len - 1]))
        unit = 1024;
    else if (len > 1 && strchr("mM", text[len - 1]))
        unit = 1024 * 1024;
    char *digits = strndup(text, unit > 1 ? len - 1 : len);
    uint64_t v;
    int err = digits ? jobopt_parse_u64(digits, UINT32_MAX / unit, &v) : TS_ENOMEM;
    free(digits);
    if (err == TS_OK && v == 0)
        err = TS_EOPTVALUE;
    if (err == TS_OK)
        *out = v * unit;
    return err;
}

/* -N N or -N MIN-MAX. A plain N clears a maximum set by a lower-precedence source. */
static int set_nodes(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    const char *dash = strchr(arg, '-');
    char *min_text = strndup(arg, dash ? (size_t)(dash - arg) : strlen(arg));
    uint64_t lo, hi = 0;
    int bad;

    if (!min_text)
        return jobopt_fail(c->err, TS_ENOMEM, "Out of memory");
    bad = parse_node_count(min_text, &lo) != TS_OK ||
          (dash && parse_node_count(dash + 1, &hi) != TS_OK);
    free(min_text);
    if (bad)
        return jobopt_fail(c->err, TS_EOPTSPEC, "\"%s\" is not a valid node count", arg);
    if (dash && hi < lo)
        return jobopt_fail(c->err, TS_EOPTSPEC,
                           "Maximum node count %llu is less than minimum node count %llu",
                           (unsigned long long)hi, (unsigned long long)lo);
    c->d->has_min_nodes = 1;
    c->d->min_nodes = (uint32_t)lo;
    c->d->has_max_nodes = dash != NULL;
    c->d->max_nodes = (uint32_t)hi;
    return TS_OK;
}

/* --mem, --mem-per-cpu and --mem-per-gpu exclude each other. One given by a
 * higher-precedence source (or here, after a propagated --mem) replaces the others; two
 * from the same source of one component are a contradiction, as in Slurm. */
enum mem_kind { MEM_NODE, MEM_CPU, MEM_GPU, MEM_KINDS };

static enum mem_kind mem_kind_of(const struct jobopt_def *def)
{
    if (def->off == offsetof(Tessera__JobDesc, mem_per_cpu_mb))
        return MEM_CPU;
    return def->off == offsetof(Tessera__JobDesc, mem_per_tres) ? MEM_GPU : MEM_NODE;
}

static void mem_clear(Tessera__JobDesc *d, enum mem_kind k)
{
    if (k == MEM_NODE) {
        d->has_mem_per_node_mb = 0;
        d->mem_per_node_mb = 0;
    } else if (k == MEM_CPU) {
        d->has_mem_per_cpu_mb = 0;
        d->mem_per_cpu_mb = 0;
    } else {
        free(d->mem_per_tres);
        d->mem_per_tres = NULL;
    }
}

static int set_mem(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    enum jobopt_src *src[MEM_KINDS] = {&c->mem_src, &c->mem_per_cpu_src, &c->mem_per_gpu_src};
    enum mem_kind mine = mem_kind_of(def);
    char per_gpu[64];
    uint64_t mb;

    if (jobopt_parse_size_mb(arg, &mb) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --%s specification", def->name);
    for (enum mem_kind k = MEM_NODE; k < MEM_KINDS; k++) {
        if (k == mine || *src[k] != c->src)
            continue;
        if (mine == MEM_GPU || k == MEM_GPU)
            return jobopt_fail(c->err, TS_EOPTVALUE,
                               "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
        return jobopt_fail(c->err, TS_EOPTVALUE, "--mem and --mem-per-cpu are mutually exclusive.");
    }
    for (enum mem_kind k = MEM_NODE; k < MEM_KINDS; k++) {
        if (k != mine) {
            mem_clear(c->d, k);
            *src[k] = JOBOPT_SRC_NONE;
        }
    }
    *src[mine] = c->src;
    if (mine != MEM_GPU) {
        store(c->d, def, &mb);
        return TS_OK;
    }
    gres_req_per_gpu(mb, per_gpu, sizeof(per_gpu)); /* 64 bytes hold any size */
    return store_str(c, def, per_gpu);
}

/* -t, --time-min: seconds; "0" is no limit, as in Slurm. */
static int set_time(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    int64_t secs;

    if (timefmt_parse_duration(arg, &secs) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --%s specification", def->name);
    if (secs == 0)
        secs = TIMEFMT_UNLIMITED;
    store(c->d, def, &secs);
    return TS_OK;
}

/* --begin, --deadline: absolute times from the caller's "now". */
static int set_stamp(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    time_t t;
    int64_t v;

    if (timefmt_parse_timestamp(arg, c->in->now, &t) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --%s specification", def->name);
    v = (int64_t)t;
    store(c->d, def, &v);
    return TS_OK;
}

/* ---- setters: values with a syntax --------------------------------------------------- */

static int set_hostlist(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    struct hostlist *hl = NULL;
    int rc = *arg ? hostlist_expand(arg, &hl) : TS_EHOSTLIST;

    hostlist_destroy(hl);
    if (rc == TS_ENOMEM)
        return jobopt_fail(c->err, rc, "Out of memory");
    if (rc != TS_OK)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid host list \"%s\" for --%s", arg,
                           def->name);
    return store_str(c, def, arg);
}

static int set_exclusive(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (arg && (strcmp(arg, "user") == 0 || strcmp(arg, "mcs") == 0))
        return jobopt_fail(c->err, TS_EOPTVALUE, "--exclusive=%s is not supported", arg);
    if (arg && strcmp(arg, "exclusive") != 0)
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --exclusive specification");
    return set_true(c, def, arg);
}

/* sbatch --get-user-env: the script starts from the login environment (read with the
 * node daemon's fixed bound; Slurm's "=timeout" and "S"/"L" modes are not built). salloc's
 * would load it into salloc's own command, which is not built either. */
static int set_get_user_env(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (c->in->cmd != JOBOPT_SBATCH)
        return jobopt_fail(c->err, TS_EOPTVALUE, "--%s is not supported", def->name);
    if (arg)
        return jobopt_fail(c->err, TS_EOPTVALUE, "--%s=%s is not supported", def->name, arg);
    return set_true(c, def, arg);
}

/* Arrays are not built: a list Slurm would take is "not supported", a malformed one
 * Slurm's own error, so a typo reads as a typo. */
static int set_array(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (jobopt_check_array(arg) != TS_OK)
        return jobopt_fail(c->err, TS_EJOB_ARRAY, "%s", ts_strerror(TS_EJOB_ARRAY));
    return jobopt_fail(c->err, TS_EOPTVALUE, "--%s is not supported", def->name);
}

/* --signal=[{R|B}:]SIG[@TIME]: the warning before the time limit (docs/slurm-differences.md
 * says why R:, about reservations, is refused). The letters before the colon may come in
 * either order, in either case. */
static int set_signal(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    const char *colon = strchr(arg, ':'), *sig = colon ? colon + 1 : arg;
    int batch = 0, reservation = 0;
    for (const char *p = arg; colon && p < colon; p++) {
        int *flag = *p == 'B' || *p == 'b' ? &batch : *p == 'R' || *p == 'r' ? &reservation : NULL;
        if (!flag || *flag)
            return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --signal specification");
        *flag = 1;
    }
    const char *at = strchr(sig, '@');
    int signo = signame_parse(sig, at ? (size_t)(at - sig) : strlen(sig));
    uint64_t secs = 60;
    if ((colon && colon == arg) || signo < 0 ||
        (at && jobopt_parse_u64(at + 1, JOBOPT_WARN_SECS_MAX, &secs) != TS_OK))
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --signal specification");
    if (reservation)
        return jobopt_fail(c->err, TS_EOPTVALUE, "--%s=%s is not supported", def->name, arg);
    c->d->has_warn_signal = c->d->has_warn_secs = c->d->has_warn_batch_shell = 1;
    c->d->warn_signal = (uint32_t)signo;
    c->d->warn_secs = (uint32_t)secs;
    c->d->warn_batch_shell = batch;
    return TS_OK;
}

static int set_dependency(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (jobopt_check_dependency(arg) != TS_OK)
        return jobopt_fail(c->err, TS_EDEPENDENCY, "%s", ts_strerror(TS_EDEPENDENCY));
    return store_str(c, def, arg);
}

static int all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* Slurm's range: the job's nice is stored with an offset of 2^31 and a few values at the
 * ends are reserved. */
#define NICE_MAX 2147483645

static int set_nice(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    const char *digits = arg && (*arg == '-' || *arg == '+') ? arg + 1 : arg;
    uint64_t v = 100; /* "--nice" alone, as in Slurm */
    int32_t nice;

    if (arg && !all_digits(digits))
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid numeric value \"%s\" for --nice.",
                           arg);
    if (arg && jobopt_parse_u64(digits, NICE_MAX, &v) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTVALUE,
                           "Invalid --nice value, out of range (+/- %d)", NICE_MAX);
    nice = arg && *arg == '-' ? -(int32_t)v : (int32_t)v;
    store(c->d, def, &nice);
    return TS_OK;
}

/* Slurm keeps the two highest values for "not set" and "infinite"; TOP is the highest
 * that remains. */
#define PRIORITY_TOP 4294967293u

static int set_priority(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    uint64_t v = PRIORITY_TOP;
    uint32_t v32;

    if (strcasecmp(arg, "TOP") != 0 && !all_digits(arg))
        return jobopt_fail(c->err, TS_EOPTVALUE,
                           "Invalid numeric value \"%s\" for --priority.", arg);
    if (strcasecmp(arg, "TOP") != 0 && jobopt_parse_u64(arg, PRIORITY_TOP, &v) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Priority must be < %u", PRIORITY_TOP + 1);
    v32 = (uint32_t)v;
    store(c->d, def, &v32);
    return TS_OK;
}

/* The two words, and the letters "a" and "t" that a batch script's SLURM_OPEN_MODE holds
 * (srun inside the job reads it back). */
static int set_open_mode(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (strcasecmp(arg, "append") == 0 || strcasecmp(arg, "a") == 0)
        return store_str(c, def, "append");
    if (strcasecmp(arg, "truncate") == 0 || strcasecmp(arg, "t") == 0)
        return store_str(c, def, "truncate");
    return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --open-mode specification");
}

/* A relative directory is relative to where the command runs, as in Slurm, so the job
 * does not depend on the node's idea of the current directory. */
static int set_chdir(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    const char *cwd = c->in->cwd;
    char *path;
    int rc;

    if (arg[0] == '/' || arg[0] == '\0' || !cwd || !*cwd)
        return store_str(c, def, arg);
    if (asprintf(&path, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", arg) < 0)
        return jobopt_fail(c->err, TS_ENOMEM, "Out of memory");
    rc = store_str(c, def, path);
    free(path);
    return rc;
}

/* One level below the first of --distribution: how CPUs are taken within a node. */
static int lower_distribution_ok(const char *level, size_t len)
{
    static const char *const known[] = {"*", "block", "cyclic", "fcyclic"};
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strlen(known[i]) == len && !strncmp(level, known[i], len))
            return 1;
    return 0;
}

/* srun -m FIRST[:SECOND[:THIRD]][,Pack|,NoPack]: the first level lays tasks over the
 * component's nodes (block, the default "*", or cyclic); the lower levels say how CPUs
 * within a node are taken for binding, which Tessera does not do yet, so they are checked
 * and have no effect (as in Slurm with TaskPlugin=task/none). */
static int set_distribution(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    size_t first = strcspn(arg, ":,");
    const char *rest = arg + first;
    int levels = 1;
    while (*rest == ':' && levels < 3) {
        size_t len = strcspn(rest + 1, ":,");
        if (!lower_distribution_ok(rest + 1, len))
            return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid --distribution specification");
        rest += 1 + len;
        levels++;
    }
    if (*rest == ',' && (!strcasecmp(rest + 1, "Pack") || !strcasecmp(rest + 1, "NoPack")))
        rest += strlen(rest);
    if (!strncmp(arg, "plane", 5) || (first == 9 && !strncmp(arg, "arbitrary", 9)))
        return jobopt_fail(c->err, TS_EOPTVALUE, "--distribution=%.*s is not supported",
                           (int)strcspn(arg, "=:,"), arg);
    int cyclic = first == 6 && !strncmp(arg, "cyclic", 6);
    int block = (first == 5 && !strncmp(arg, "block", 5)) || (first == 1 && arg[0] == '*');
    if (*rest || (!cyclic && !block))
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid --distribution specification");
    return store_str(c, def, cyclic ? "cyclic" : "block");
}

/* srun --cpu-bind: Tessera binds no task to CPUs yet, so "none" is the truth and any
 * binding is refused rather than ignored. */
static int set_cpu_bind(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    const char *v = arg;
    if (!strncasecmp(v, "quiet,", 6) || !strncasecmp(v, "verbose,", 8))
        v = strchr(v, ',') + 1;
    if (!strcasecmp(v, "none") || !strcasecmp(v, "no"))
        return TS_OK;
    return jobopt_fail(c->err, TS_EOPTVALUE, "--%s=%s is not supported", def->name, arg);
}

/* srun --het-group: "2", "0,4", "1,3-5". */
static int set_het_group(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    struct idset *ids = NULL;
    int rc = idset_parse(arg, &ids);
    idset_destroy(ids);
    if (rc == TS_ENOMEM)
        return jobopt_fail(c->err, rc, "Out of memory");
    if (rc != TS_OK || !*arg)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid --het-group value: %s", arg);
    return store_str(c, def, arg);
}

static int set_mail_type(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    char *norm;
    int rc = jobopt_norm_mail_type(arg, &norm);

    if (rc == TS_ENOMEM)
        return jobopt_fail(c->err, rc, "Out of memory");
    if (rc != TS_OK)
        return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --mail-type specification");
    rc = store_str(c, def, norm);
    free(norm);
    return rc;
}

static int set_licenses(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (licenses_check(arg) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid --licenses specification");
    return store_str(c, def, arg);
}

/* --gres, --gpus, --gpus-per-task, --gpus-per-node: Slurm's stored forms
 * (common/gres/gres_req.h). --gres=none asks for nothing. */
static int gres_spec(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg,
                     char **spec)
{
    int rc = gres_req_from_option(strcmp(def->name, "gres") == 0 ? GRES_REQ_OPT_GRES
                                                                 : GRES_REQ_OPT_GPUS,
                                  arg, spec);
    if (rc == TS_ENOMEM)
        return jobopt_fail(c->err, rc, "Out of memory");
    if (rc != TS_OK)
        return jobopt_fail(c->err, rc, "%s", ts_strerror(rc));
    return TS_OK;
}

static int set_gres(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    char *spec = NULL;
    int rc = gres_spec(c, def, arg, &spec);
    char **f = field_at(c->d, def->off);

    if (rc != TS_OK)
        return rc;
    free(*f);
    *f = spec;
    return TS_OK;
}

/* Kept aside: Slurm adds it to --gres's list rather than replacing that. */
static int set_gpus_per_node(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    char *spec = NULL;
    int rc = gres_spec(c, def, arg, &spec);

    if (rc != TS_OK)
        return rc;
    snprintf(c->gpus_per_node, sizeof(c->gpus_per_node), "%s", spec); /* bounded by the parse */
    free(spec);
    return TS_OK;
}

int jobopt_finish_component(struct jobopt_ctx *c)
{
    const char *gres = c->d->tres_per_node;
    char *joined;

    if (!c->gpus_per_node[0])
        return TS_OK;
    if (asprintf(&joined, "%s%s%s", gres ? gres : "", gres ? "," : "", c->gpus_per_node) < 0)
        return jobopt_fail(c->err, TS_ENOMEM, "Out of memory");
    free(c->d->tres_per_node);
    c->d->tres_per_node = joined;
    return TS_OK;
}

static int set_cpus_per_gpu(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    char spec[64];
    uint64_t v;

    if (jobopt_parse_u64(arg, UINT32_MAX, &v) != TS_OK || v == 0)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid numeric value \"%s\" for --%s.",
                           arg, def->name);
    gres_req_per_gpu(v, spec, sizeof(spec));
    return store_str(c, def, spec);
}

static int set_gres_flags(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (strcasecmp(arg, "enforce-binding") == 0)
        return store_str(c, def, "enforce-binding");
    if (strcasecmp(arg, "disable-binding") == 0)
        return store_str(c, def, "disable-binding");
    return jobopt_fail(c->err, TS_EOPTSPEC, "Invalid --gres-flags specification");
}

/* ---- setters: the command rather than the job ---------------------------------------- */

static int set_parsable(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->parsable = 1;
    return TS_OK;
}

static int set_test_only(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->test_only = 1;
    return TS_OK;
}

static int set_wait_end(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->wait_end = 1;
    return TS_OK;
}

/* srun's -K[=n] and -W n: a decimal number, as Slurm ("Invalid numeric value"). */
static int parse_srun_number(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg,
                             uint32_t *out)
{
    uint64_t v;
    if (!all_digits(arg) || jobopt_parse_u64(arg, UINT32_MAX, &v) != TS_OK)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid numeric value \"%s\" for --%s.", arg,
                           def->name);
    *out = (uint32_t)v;
    return TS_OK;
}

static int set_kill_on_bad_exit(struct jobopt_ctx *c, const struct jobopt_def *def,
                                const char *arg)
{
    uint32_t v = 1; /* -K alone */
    int err = arg ? parse_srun_number(c, def, arg, &v) : TS_OK;
    c->out->kill_on_bad_exit = v != 0;
    return err;
}

static int set_wait_secs(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    return parse_srun_number(c, def, arg, &c->out->wait_secs);
}

static int set_label(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->label = 1;
    return TS_OK;
}

static int set_multi_prog(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->multi_prog = 1;
    return TS_OK;
}

static int set_unbuffered(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->unbuffered = 1;
    return TS_OK;
}

/* srun --jobid=N: a job id, as Slurm reads it. */
static int set_jobid(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    uint64_t v;
    if (jobopt_parse_u64(arg, UINT32_MAX, &v) != TS_OK || v == 0)
        return jobopt_fail(c->err, TS_EOPTVALUE, "Invalid numeric value \"%s\" for --%s.",
                           arg, def->name);
    c->out->jobid = (uint32_t)v;
    return TS_OK;
}

static int set_overlap(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->overlap = 1;
    return TS_OK;
}

static int set_overcommit(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->overcommit = 1;
    return TS_OK;
}

/* PMI-1 is what every step serves: --mpi may name it (or none, or Slurm's default), and
 * anything else is refused rather than ignored. */
static int set_mpi(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (!strcmp(arg, "none") || !strcmp(arg, "pmi1") || !strcmp(arg, "pmi") ||
        !strcmp(arg, "list"))
        return TS_OK;
    return jobopt_fail(c->err, TS_EOPTVALUE, "--mpi=%s is not supported", arg);
}

static int set_quiet(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->quiet = 1;
    return TS_OK;
}

static int set_verbose(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->verbose++;
    return TS_OK;
}

static int set_help(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->help = strcmp(def->name, "usage") == 0 ? 2 : 1;
    return TS_OK;
}

static int set_version(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    c->out->version = 1;
    return TS_OK;
}

/* The driver takes --wrap from the command line before it reads any script; in a script
 * it could only contradict the script it is found in. */
static int set_wrap(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if (c->src != JOBOPT_SRC_CLI)
        return jobopt_fail(c->err, TS_EOPTVALUE, "--wrap is only allowed on the command line");
    return TS_OK;
}

/* ---- the table ----------------------------------------------------------------------- */

#define NONE JOBOPT_ARG_NONE
#define REQ JOBOPT_ARG_REQUIRED
#define OPT JOBOPT_ARG_OPTIONAL
#define SB JOBOPT_SB
#define SA JOBOPT_SA
#define SR JOBOPT_SR
#define ALL JOBOPT_ALLCMDS
#define P JOBOPT_F_PROPAGATE
#define CMD JOBOPT_F_COMMAND
#define STR(f) JOBOPT_K_STR, offsetof(Tessera__JobDesc, f), 0
#define NUM(k, f) JOBOPT_K_##k, offsetof(Tessera__JobDesc, f), offsetof(Tessera__JobDesc, has_##f)
#define NOFIELD JOBOPT_K_NONE, 0, 0
/* Known to Slurm, refused here: the argument kind must be right so that "--gres gpu:1"
 * is read as one option before it is refused. */
#define UNSUP(name, letter, arg, cmds) {name, letter, arg, cmds, JOBOPT_F_UNSUPPORTED, NOFIELD, NULL}

/* Alphabetical, as getopt lists the candidates of an ambiguous abbreviation in table
 * order. Names and letters follow Slurm 22.05's man pages. */
static const struct jobopt_def table[] = {
    UNSUP("acctg-freq", 0, REQ, ALL),
    {"account", 'A', REQ, ALL, P, STR(account), set_str},
    {"array", 'a', REQ, SB, 0, NOFIELD, set_array},
    UNSUP("batch", 0, REQ, SB),
    UNSUP("bb", 0, REQ, ALL),
    UNSUP("bbf", 0, REQ, ALL),
    {"begin", 'b', REQ, SB | SR, P, NUM(I64, begin_time), set_stamp},
    {"begin", 0, REQ, SA, P, NUM(I64, begin_time), set_stamp}, /* salloc has no -b */
    UNSUP("bell", 0, NONE, SA),
    {"chdir", 'D', REQ, ALL, P, STR(work_dir), set_chdir},
    UNSUP("cluster-constraint", 0, REQ, ALL),
    UNSUP("clusters", 'M', REQ, ALL),
    {"comment", 0, REQ, ALL, P, STR(comment), set_str},
    {"constraint", 'C', REQ, ALL, 0, STR(constraint), set_str},
    UNSUP("container", 0, REQ, ALL),
    UNSUP("contiguous", 0, NONE, ALL),
    UNSUP("core-spec", 'S', REQ, ALL),
    UNSUP("cores-per-socket", 0, REQ, ALL),
    {"cpu-bind", 0, REQ, SR, 0, NOFIELD, set_cpu_bind},
    UNSUP("cpu-freq", 0, REQ, ALL),
    {"cpu_bind", 0, REQ, SR, 0, NOFIELD, set_cpu_bind}, /* Slurm's older spelling */
    {"cpus-per-gpu", 0, REQ, ALL, 0, STR(cpus_per_tres), set_cpus_per_gpu},
    {"cpus-per-task", 'c', REQ, ALL, 0, NUM(U32, cpus_per_task), set_count},
    {"deadline", 0, REQ, ALL, P, NUM(I64, deadline), set_stamp},
    UNSUP("delay-boot", 0, REQ, ALL),
    {"dependency", 'd', REQ, ALL, P, STR(dependency), set_dependency},
    {"distribution", 'm', REQ, SR, P, STR(distribution), set_distribution},
    UNSUP("distribution", 'm', REQ, SB | SA),
    {"error", 'e', REQ, SB | SR, P, STR(std_err), set_str},
    {"exclude", 'x', REQ, ALL, P, STR(exclude), set_hostlist},
    UNSUP("exact", 0, NONE, SR),
    {"exclusive", 0, OPT, ALL, 0, NUM(BOOL, exclusive), set_exclusive},
    {"export", 0, REQ, SB | SR, P, STR(export_env), set_str},
    UNSUP("export-file", 0, REQ, SB),
    UNSUP("extra-node-info", 'B', REQ, ALL),
    {"get-user-env", 0, OPT, SB | SA, 0, NUM(BOOL, get_user_env), set_get_user_env},
    UNSUP("gid", 0, REQ, ALL),
    UNSUP("gpu-bind", 0, REQ, ALL),
    UNSUP("gpu-freq", 0, REQ, ALL),
    {"gpus", 'G', REQ, ALL, 0, STR(tres_per_job), set_gres},
    {"gpus-per-node", 0, REQ, ALL, 0, NOFIELD, set_gpus_per_node},
    UNSUP("gpus-per-socket", 0, REQ, ALL),
    {"gpus-per-task", 0, REQ, ALL, 0, STR(tres_per_task), set_gres},
    {"gres", 0, REQ, ALL, 0, STR(tres_per_node), set_gres},
    {"gres-flags", 0, REQ, ALL, 0, STR(gres_flags), set_gres_flags},
    {"het-group", 0, REQ, SR, 0, STR(het_group), set_het_group},
    {"help", 'h', NONE, ALL, JOBOPT_F_STOP | CMD, NOFIELD, set_help},
    UNSUP("hint", 0, REQ, ALL),
    {"hold", 'H', NONE, ALL, P, NUM(BOOL, hold), set_true},
    UNSUP("ignore-pbs", 0, NONE, SB),
    UNSUP("immediate", 'I', OPT, SA | SR),
    {"input", 'i', REQ, SB | SR, P, STR(std_in), set_str},
    {"job-name", 'J', REQ, ALL, P, STR(name), set_str},
    {"jobid", 0, REQ, SR, CMD, NOFIELD, set_jobid},
    UNSUP("kill-command", 'K', OPT, SA),
    UNSUP("kill-on-invalid-dep", 0, REQ, SB),
    {"kill-on-bad-exit", 'K', OPT, SR, CMD, NOFIELD, set_kill_on_bad_exit},
    {"label", 'l', NONE, SR, CMD, NOFIELD, set_label},
    {"licenses", 'L', REQ, ALL, JOBOPT_F_FIRST_ONLY, STR(licenses), set_licenses},
    {"mail-type", 0, REQ, ALL, JOBOPT_F_FIRST_DROP, STR(mail_type), set_mail_type},
    {"mail-user", 0, REQ, ALL, JOBOPT_F_FIRST_DROP, STR(mail_user), set_str},
    UNSUP("mcs-label", 0, REQ, ALL),
    {"mem", 0, REQ, ALL, P, NUM(U64, mem_per_node_mb), set_mem},
    UNSUP("mem-bind", 0, REQ, ALL),
    {"mem-per-cpu", 0, REQ, ALL, 0, NUM(U64, mem_per_cpu_mb), set_mem},
    {"mem-per-gpu", 0, REQ, ALL, 0, STR(mem_per_tres), set_mem},
    {"mpi", 0, REQ, SR, 0, NOFIELD, set_mpi},
    UNSUP("mincpus", 0, REQ, ALL),
    {"multi-prog", 0, NONE, SR, CMD, NOFIELD, set_multi_prog},
    UNSUP("network", 0, REQ, ALL),
    {"nice", 0, OPT, ALL, P, NUM(I32, nice), set_nice},
    UNSUP("no-bell", 0, NONE, SA),
    UNSUP("no-kill", 'k', OPT, ALL),
    {"no-requeue", 0, NONE, SB, P, NUM(BOOL, requeue), set_requeue},
    UNSUP("no-shell", 0, NONE, SA),
    UNSUP("nodefile", 'F', REQ, ALL),
    {"nodelist", 'w', REQ, ALL, 0, STR(nodelist), set_hostlist},
    {"nodes", 'N', REQ, ALL, 0, NUM(U32, min_nodes), set_nodes},
    {"ntasks", 'n', REQ, ALL, 0, NUM(U32, ntasks), set_count},
    UNSUP("ntasks-per-core", 0, REQ, ALL),
    UNSUP("ntasks-per-gpu", 0, REQ, ALL),
    {"ntasks-per-node", 0, REQ, ALL, 0, NUM(U32, ntasks_per_node), set_count},
    UNSUP("ntasks-per-socket", 0, REQ, ALL),
    {"open-mode", 0, REQ, SB | SR, P, STR(open_mode), set_open_mode},
    {"output", 'o', REQ, SB | SR, P, STR(std_out), set_str},
    {"overcommit", 'O', NONE, SR, CMD, NOFIELD, set_overcommit},
    UNSUP("overcommit", 'O', NONE, SB | SA),
    {"overlap", 0, NONE, SR, CMD, NOFIELD, set_overlap},
    UNSUP("oversubscribe", 's', NONE, ALL),
    {"parsable", 0, NONE, SB, P | CMD, NOFIELD, set_parsable},
    {"partition", 'p', REQ, ALL, 0, STR(partition), set_str},
    UNSUP("power", 0, REQ, ALL),
    UNSUP("prefer", 0, REQ, ALL),
    {"priority", 0, REQ, ALL, P, NUM(U32, priority), set_priority},
    UNSUP("profile", 0, REQ, ALL),
    UNSUP("propagate", 0, OPT, SB | SR),
    {"qos", 'q', REQ, ALL, P, STR(qos), set_str},
    {"quiet", 'Q', NONE, ALL, CMD, NOFIELD, set_quiet},
    UNSUP("reboot", 0, NONE, ALL),
    {"requeue", 0, NONE, SB, P, NUM(BOOL, requeue), set_requeue},
    UNSUP("reservation", 0, REQ, ALL),
    {"signal", 0, REQ, ALL, 0, NUM(U32, warn_signal), set_signal},
    UNSUP("sockets-per-node", 0, REQ, ALL),
    UNSUP("spread-job", 0, NONE, ALL),
    UNSUP("switches", 0, REQ, ALL),
    /* the older name of --ntasks-per-node, still in many scripts */
    {"tasks-per-node", 0, REQ, ALL, 0, NUM(U32, ntasks_per_node), set_count},
    {"test-only", 0, NONE, SB | SR, P | CMD, NOFIELD, set_test_only},
    UNSUP("thread-spec", 0, REQ, ALL),
    UNSUP("threads-per-core", 0, REQ, ALL),
    {"time", 't', REQ, ALL, P, NUM(I64, time_limit), set_time},
    {"time-min", 0, REQ, ALL, P, NUM(I64, time_min), set_time},
    UNSUP("tmp", 0, REQ, ALL),
    UNSUP("uid", 0, REQ, ALL),
    {"unbuffered", 'u', NONE, SR, CMD, NOFIELD, set_unbuffered},
    {"usage", 0, NONE, ALL, JOBOPT_F_STOP | CMD, NOFIELD, set_help},
    UNSUP("use-min-nodes", 0, NONE, ALL),
    {"verbose", 'v', NONE, ALL, CMD, NOFIELD, set_verbose},
    {"version", 'V', NONE, ALL, JOBOPT_F_STOP | CMD, NOFIELD, set_version},
    {"wait", 'W', NONE, SB, CMD, NOFIELD, set_wait_end},
    {"wait", 'W', REQ, SR, CMD, NOFIELD, set_wait_secs}, /* srun --wait=<seconds> */
    UNSUP("wait-all-nodes", 0, REQ, SB | SA),
    UNSUP("wckey", 0, REQ, ALL),
    /* Slurm dropped --workdir in 19.05; the behaviour contract still names it. */
    {"workdir", 0, REQ, ALL, P, STR(work_dir), set_chdir},
    {"wrap", 0, REQ, SB, CMD, NOFIELD, set_wrap},
    UNSUP("x11", 0, OPT, SA | SR),
};

const struct jobopt_def *jobopt_table(size_t *n)
{
    *n = sizeof(table) / sizeof(table[0]);
    return table;
}

const struct jobopt_def *jobopt_find(enum jobopt_cmd cmd, const char *name)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if ((table[i].cmds & JOBOPT_CMD(cmd)) && strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int jobopt_apply(struct jobopt_ctx *c, const struct jobopt_def *def, const char *arg)
{
    if ((def->flags & JOBOPT_F_FIRST_ONLY) && c->comp > 0)
        return jobopt_fail(c->err, TS_EOPTVALUE,
                           "--%s may only be requested on the first component", def->name);
    if (def->flags & JOBOPT_F_UNSUPPORTED)
        return jobopt_fail(c->err, TS_EOPTVALUE, "--%s is not supported", def->name);
    return def->set(c, def, arg);
}
