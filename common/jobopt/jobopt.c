/* The job option parser's driver: splits the command line into components, reads the
 * batch script, and builds each component from its sources in precedence order.
 *
 * The option table, setters and environment defaults are in jobopt_table.c and
 * jobopt_env.c, the argv scanner in jobopt_args.c, scripts in jobopt_script.c.
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/util/errors.h"
#include "common/util/growarray.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and containers ----------------------------------------------------------- */

int jobopt_fail(struct jobopt_err *e, int code, const char *fmt, ...)
{
    va_list ap;

    if (e->code != TS_OK)
        return code; /* the first error is the one the user needs */
    e->code = code;
    e->comp = e->cur_comp;
    snprintf(e->where, sizeof(e->where), "%s", e->cur_where);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}

struct jobopt_seg *jobopt_segs_add(struct jobopt_segs *s)
{
    struct jobopt_seg *nv = growarray_room(s->v, &s->cap, s->n, sizeof(*nv), 4);
    if (!nv)
        return NULL;
    s->v = nv;
    memset(&s->v[s->n], 0, sizeof(s->v[0]));
    return &s->v[s->n++];
}

int jobopt_seg_add(struct jobopt_seg *s, const struct jobopt_def *def, const char *arg,
                   unsigned line)
{
    struct jobopt_occ *nv = growarray_room(s->occ, &s->cap, s->n, sizeof(*nv), 8);
    if (!nv)
        return TS_ENOMEM;
    s->occ = nv;
    s->occ[s->n++] = (struct jobopt_occ){def, arg, line};
    return TS_OK;
}

void jobopt_segs_free(struct jobopt_segs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].occ);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

char *jobopt_pool_keep(struct jobopt_pool *p, char *str)
{
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 16;
        char **nv = realloc(p->v, ncap * sizeof(*nv));

        if (!nv) {
            free(str);
            return NULL;
        }
        p->v = nv;
        p->cap = ncap;
    }
    p->v[p->n++] = str;
    return str;
}

void jobopt_pool_free(struct jobopt_pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

/* ---- the parse ----------------------------------------------------------------------- */

struct parse {
    const struct jobopt_input *in;
    struct jobopt *out;
    struct jobopt_err err;
    struct jobopt_segs cli;    /* one segment per command-line component */
    struct jobopt_segs script; /* one segment per script component */
    struct jobopt_pool pool;
    int first_arg;             /* sbatch/salloc: argv index of the script or command */
    const char *wrap;
    char *script_text;
    const struct jobopt_def *stop;
};

static size_t ncomponents(const struct parse *p)
{
    return p->cli.n > p->script.n ? p->cli.n : p->script.n;
}

static void format_error(const struct parse *p, char *buf, size_t len)
{
    const struct jobopt_err *e = &p->err;
    char comp[48] = "";

    if (!buf || len == 0)
        return;
    if (ncomponents(p) > 1 && e->comp >= 0)
        snprintf(comp, sizeof(comp), "component %ld: ", e->comp);
    snprintf(buf, len, "%s%s%s%s", comp, e->where, e->where[0] ? ": " : "", e->msg);
}

static int new_segment(struct parse *p)
{
    if (!jobopt_segs_add(&p->cli))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    p->err.cur_comp = (long)p->cli.n - 1;
    return TS_OK;
}

/* sbatch, salloc: lone ":" arguments split the options; the first word that is not an
 * option is the script (or command), and everything after it is its arguments. */
static int scan_cli_batch(struct parse *p)
{
    char **argv = p->in->argv;
    int argc = p->in->argc, i = 1;

    if (new_segment(p) != TS_OK)
        return TS_ENOMEM;
    while (i < argc && !p->stop) {
        const char *a = argv[i];

        if (strcmp(a, ":") == 0) {
            if (new_segment(p) != TS_OK)
                return TS_ENOMEM;
            i++;
        } else if (!jobopt_is_option(a)) {
            i += strcmp(a, "--") == 0; /* "--" ends the options, as for getopt */
            p->first_arg = i < argc ? i : 0;
            break;
        } else if (jobopt_scan_option(p->in->cmd, argv, argc, &i, 1, 0,
                                      &p->cli.v[p->cli.n - 1], &p->err,
                                      &p->stop) == TS_ENOMEM) {
            return TS_ENOMEM;
        }
    }
    return p->err.code;
}

/* srun: every lone ":" splits, also after a program, since srun takes one program per
 * component ("srun -n1 a : -n2 b"). first_arg..end_arg of a segment is its program. */
static int scan_cli_srun(struct parse *p)
{
    char **argv = p->in->argv;
    int argc = p->in->argc, i = 1;
    struct jobopt_seg *seg;

    if (new_segment(p) != TS_OK)
        return TS_ENOMEM;
    for (seg = &p->cli.v[0]; i < argc && !p->stop; seg = &p->cli.v[p->cli.n - 1]) {
        const char *a = argv[i];

        if (strcmp(a, ":") == 0) {
            seg->end_arg = seg->first_arg ? i : 0;
            if (new_segment(p) != TS_OK)
                return TS_ENOMEM;
            i++;
        } else if (seg->first_arg || !jobopt_is_option(a)) {
            if (!seg->first_arg)
                seg->first_arg = strcmp(a, "--") == 0 ? i + 1 : i;
            i++;
        } else if (jobopt_scan_option(JOBOPT_SRUN, argv, argc, &i, 1, 0, seg, &p->err,
                                      &p->stop) == TS_ENOMEM) {
            return TS_ENOMEM;
        }
    }
    seg = &p->cli.v[p->cli.n - 1];
    if (seg->first_arg && !seg->end_arg)
        seg->end_arg = argc;
    return p->err.code;
}

/* The last --wrap of the command line: needed before the script is read. */
static void find_wrap(struct parse *p)
{
    for (size_t s = 0; s < p->cli.n; s++)
        for (size_t k = 0; k < p->cli.v[s].n; k++)
            if (strcmp(p->cli.v[s].occ[k].def->name, "wrap") == 0)
                p->wrap = p->cli.v[s].occ[k].arg;
}

static int load_script(struct parse *p)
{
    const char *path = p->first_arg ? p->in->argv[p->first_arg] : NULL;
    int rc;

    find_wrap(p);
    p->err.cur_comp = -1;
    if (p->wrap && path)
        return jobopt_fail(&p->err, TS_EOPTVALUE,
                           "Script arguments not permitted with --wrap option");
    if (path && !(p->out->script_path = strdup(path)))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    rc = jobopt_script_load(p->in, path, p->wrap, &p->script_text, &p->err);
    if (rc != TS_OK || p->wrap)
        return rc; /* a wrapped command is not a script with directives */
    return jobopt_script_directives(p->in->cmd, p->script_text, &p->script, &p->pool,
                                    &p->err);
}

/* ---- building components ------------------------------------------------------------- */

static int apply_segment(struct jobopt_ctx *c, const struct jobopt_seg *seg,
                         enum jobopt_src src)
{
    c->src = src;
    for (size_t k = 0; seg && k < seg->n; k++) {
        const struct jobopt_occ *o = &seg->occ[k];
        int rc;

        if (o->line)
            snprintf(c->err->cur_where, sizeof(c->err->cur_where), "batch script line %u",
                     o->line);
        rc = jobopt_apply(c, o->def, o->arg);
        c->err->cur_where[0] = '\0';
        if (rc != TS_OK)
            return rc;
    }
    return TS_OK;
}

/* Copy the propagated options of the finished component prev (docs/01-hetjob.md §2.2), or drop the
 * leader-only ones (mail, docs/01-hetjob.md §2.3) of a later component. */
static int for_flagged(Tessera__JobDesc *d, const Tessera__JobDesc *prev, unsigned flag)
{
    size_t n;
    const struct jobopt_def *t = jobopt_table(&n);

    for (size_t k = 0; k < n; k++) {
        if (!(t[k].flags & flag))
            continue;
        if (prev && jobopt_copy_field(d, prev, &t[k]) != TS_OK)
            return TS_ENOMEM;
        if (!prev)
            jobopt_clear_field(d, &t[k]);
    }
    return TS_OK;
}

static const struct jobopt_seg *segment(const struct jobopt_segs *s, size_t i)
{
    return i < s->n ? &s->v[i] : NULL;
}

static int has_program(const struct jobopt_seg *seg)
{
    return seg && seg->first_arg && seg->first_arg < seg->end_arg;
}

/* A component must ask for something; "sbatch -n1 : : x.sh" is more likely a slip than a
 * request for a default component (Slurm accepts it). */
static int check_not_empty(struct parse *p, size_t i)
{
    const struct jobopt_seg *s = segment(&p->script, i), *c = segment(&p->cli, i);

    if (ncomponents(p) < 2 || (s && s->n) || (c && c->n) || has_program(c))
        return TS_OK;
    return jobopt_fail(&p->err, TS_EOPTION, "no options given for this component");
}

static int build_component(struct parse *p, size_t i)
{
    Tessera__JobDesc *d = malloc(sizeof(*d));
    struct jobopt_ctx c = {.in = p->in, .out = p->out, .d = d, .comp = i, .err = &p->err};
    int rc;

    if (!d)
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    tessera__job_desc__init(d);
    p->out->components[p->out->ncomponents++] = d;
    p->err.cur_comp = (long)i;
    if (i > 0 && for_flagged(d, p->out->components[i - 1], JOBOPT_F_PROPAGATE) != TS_OK)
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    if (d->has_mem_per_node_mb)
        c.mem_src = JOBOPT_SRC_PROPAGATED;
    if ((rc = apply_segment(&c, segment(&p->script, i), JOBOPT_SRC_SCRIPT)) != TS_OK)
        return rc;
    c.src = JOBOPT_SRC_ENV;
    if ((rc = jobopt_apply_env(&c)) != TS_OK)
        return rc;
    if ((rc = apply_segment(&c, segment(&p->cli, i), JOBOPT_SRC_CLI)) != TS_OK ||
        (rc = jobopt_finish_component(&c)) != TS_OK)
        return rc;
    if (i > 0)
        for_flagged(d, NULL, JOBOPT_F_FIRST_DROP);
    return check_not_empty(p, i);
}

static int build_components(struct parse *p)
{
    size_t n = ncomponents(p);
    int rc;

    if (!(p->out->components = calloc(n, sizeof(*p->out->components))))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    for (size_t i = 0; i < n; i++)
        if ((rc = build_component(p, i)) != TS_OK)
            return rc;
    p->err.cur_comp = -1;
    return TS_OK;
}

/* ---- what is not an option ----------------------------------------------------------- */

/* argv[from..to) as a vector; *n its length. The strings are copies. */
static char **copy_words(char *const *argv, int from, int to, size_t *n)
{
    char **v = calloc((size_t)(to - from) + 1, sizeof(*v));

    if (!v)
        return NULL;
    for (int k = from; k < to; k++) {
        if (!(v[k - from] = strdup(argv[k]))) {
            for (int j = from; j < k; j++)
                free(v[j - from]);
            free(v);
            return NULL;
        }
    }
    *n = (size_t)(to - from);
    return v;
}

/* The NULL-terminated out->command from a component's argv. */
static int set_command(struct parse *p, char *const *argv, int from, int to)
{
    size_t n;

    if (from >= to)
        return TS_OK;
    if (!(p->out->command = copy_words(argv, from, to, &n)))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    return TS_OK;
}

/* srun: each component's program; one without takes the next component's. */
static int srun_programs(struct parse *p)
{
    Tessera__JobDesc **comp = p->out->components;

    for (size_t i = p->out->ncomponents; i-- > 0;) {
        const struct jobopt_seg *seg = segment(&p->cli, i);

        if (has_program(seg))
            comp[i]->argv = copy_words(p->in->argv, seg->first_arg, seg->end_arg,
                                       &comp[i]->n_argv);
        else if (i + 1 < p->out->ncomponents && comp[i + 1]->n_argv)
            comp[i]->argv = copy_words(comp[i + 1]->argv, 0, (int)comp[i + 1]->n_argv,
                                       &comp[i]->n_argv);
        else
            continue;
        if (!comp[i]->argv)
            return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    }
    return set_command(p, comp[0]->argv, 0, (int)comp[0]->n_argv);
}

static int set_words(struct parse *p, Tessera__JobDesc *d)
{
    const struct jobopt_input *in = p->in;
    int n = 0;

    while (in->envp && in->envp[n])
        n++;
    if (n && !(d->environment = copy_words(in->envp, 0, n, &d->n_environment)))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    if (in->cmd == JOBOPT_SRUN)
        return srun_programs(p);
    if (in->cmd == JOBOPT_SALLOC)
        return p->first_arg ? set_command(p, in->argv, p->first_arg, in->argc) : TS_OK;
    d->script = p->script_text; /* handed over */
    p->script_text = NULL;
    if (p->first_arg + 1 < in->argc && p->first_arg &&
        !(d->argv = copy_words(in->argv, p->first_arg + 1, in->argc, &d->n_argv)))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    return TS_OK;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* Slurm's default job names. */
static const char *default_name(const struct parse *p)
{
    const char *name = NULL;

    if (p->in->cmd == JOBOPT_SALLOC)
        return "interactive"; /* whatever the command, as Slurm's salloc */
    if (p->in->cmd == JOBOPT_SBATCH)
        name = p->wrap ? "wrap" : p->out->script_path ? base_name(p->out->script_path) : NULL;
    else if (p->out->command)
        name = base_name(p->out->command[0]);
    if (name && *name)
        return name;
    return p->in->cmd == JOBOPT_SBATCH ? "sbatch" : "srun";
}

/* An unset or empty field takes the default. */
static int set_default(char **field, const char *value)
{
    char *copy;

    if (*field && **field)
        return TS_OK;
    if (!(copy = strdup(value)))
        return TS_ENOMEM;
    free(*field);
    *field = copy;
    return TS_OK;
}

static int fill_defaults(struct parse *p)
{
    const char *name = default_name(p), *cwd = p->in->cwd;

    for (size_t i = 0; i < p->out->ncomponents; i++) {
        Tessera__JobDesc *d = p->out->components[i];

        if (set_default(&d->name, name) != TS_OK ||
            (cwd && set_default(&d->work_dir, cwd) != TS_OK))
            return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    }
    return TS_OK;
}

/* --help, --usage, --version: Slurm prints and exits as soon as it sees them. */
static int stop_here(struct parse *p)
{
    struct jobopt_ctx c = {.in = p->in, .out = p->out, .err = &p->err};

    p->out->components = calloc(1, sizeof(*p->out->components));
    if (!p->out->components || !(c.d = malloc(sizeof(*c.d))))
        return jobopt_fail(&p->err, TS_ENOMEM, "Out of memory");
    tessera__job_desc__init(c.d);
    p->out->components[0] = c.d;
    p->out->ncomponents = 1;
    return p->stop->set(&c, p->stop, NULL);
}

static int run(struct parse *p)
{
    int rc = p->in->cmd == JOBOPT_SRUN ? scan_cli_srun(p) : scan_cli_batch(p);

    if (p->stop)
        return stop_here(p);
    if (rc != TS_OK)
        return rc;
    if (p->in->cmd == JOBOPT_SBATCH && (rc = load_script(p)) != TS_OK)
        return rc;
    if ((rc = build_components(p)) != TS_OK)
        return rc;
    if ((rc = set_words(p, p->out->components[0])) != TS_OK)
        return rc;
    return fill_defaults(p);
}

int jobopt_parse(const struct jobopt_input *in, struct jobopt *out, char *errbuf,
                 size_t errlen)
{
    struct parse p = {.in = in, .out = out, .err = {.comp = -1, .cur_comp = 0}};
    int rc;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!out)
        return TS_EINVAL;
    memset(out, 0, sizeof(*out));
    if (!in || in->argc < 0 || (in->argc > 0 && !in->argv))
        return TS_EINVAL;
    out->cmd = in->cmd;
    rc = run(&p);
    if (rc != TS_OK) {
        rc = p.err.code ? p.err.code : rc;
        format_error(&p, errbuf, errlen);
        jobopt_free(out);
        out->cmd = in->cmd;
    }
    free(p.script_text);
    jobopt_segs_free(&p.cli);
    jobopt_segs_free(&p.script);
    jobopt_pool_free(&p.pool);
    return rc;
}

void jobopt_free(struct jobopt *opt)
{
    if (!opt)
        return;
    for (size_t i = 0; i < opt->ncomponents; i++)
        tessera__job_desc__free_unpacked(opt->components[i], NULL);
    free(opt->components);
    free(opt->script_path);
    for (size_t i = 0; opt->command && opt->command[i]; i++)
        free(opt->command[i]);
    free(opt->command);
    memset(opt, 0, sizeof(*opt));
}
