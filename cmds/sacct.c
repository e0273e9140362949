/* sacct: accounting records of jobs and their steps, as Slurm 22.05's sacct prints them
 * (docs/accounting.md). The controller selects the jobs; this command builds the
 * question, pages through the answers and lays the rows out (common/acctfmt). */
#include "cmds/cmdutil.h"

#include "common/format/acctfmt.h"
#include "common/format/jobfmt.h"
#include "common/job/jobstate.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PROG "sacct"

struct options {
    struct cmd_list ids, users, groups, accounts, partitions, states, names, formats;
    int whole_hetjob; /* 0 default, 1 yes, 2 no */
    int all_users, no_steps, noheader, json, brief, longfmt, help;
    enum acctfmt_mode mode;
    const char *start_text, *end_text;
};

/* What goes to the controller, resolved from the options. */
struct query {
    Tessera__AcctQueryRequest req;
    uint32_t *uids, *gids;
    Tessera__JobState *states;
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: sacct [OPTIONS]\n"
            "  -a, --allusers           jobs of every user\n"
            "  -A, --accounts=list      jobs charged to these accounts\n"
            "  -b, --brief              JobID, State and ExitCode only\n"
            "  -e, --helpformat         list the fields -o takes\n"
            "  -E, --endtime=time       jobs eligible before this time (default now)\n"
            "  -g, --gid, --group=list  jobs of these groups (names or gids)\n"
            "  -h, --help               this text\n"
            "  -j, --jobs=list          these jobs or steps: 93, 93+1, 93.0, 93.batch\n"
            "      --json               JSON output\n"
            "  -l, --long               many fields\n"
            "  -L, --allclusters        accepted; Tessera runs one cluster\n"
            "      --name=list          jobs with these names\n"
            "  -n, --noheader           no header\n"
            "  -o, --format=list        fields: JobID,JobName%%20,... (see --helpformat)\n"
            "  -p, --parsable           fields ended by '|'\n"
            "  -P, --parsable2          fields separated by '|'\n"
            "  -r, --partition=list     jobs in these partitions\n"
            "  -s, --state=list         jobs in these states (CD,F,CA,PD,R,TO,NF,OOM,...)\n"
            "  -S, --starttime=time     jobs eligible after this time (default midnight;\n"
            "                           the epoch with -j, now with -s)\n"
            "  -u, --uid, --user=list   jobs of these users (names or uids)\n"
            "      --usage              this text\n"
            "  -V, --version            print the version\n"
            "      --whole-hetjob[=yes|no]  every component of a het job, or only those asked\n"
            "  -X, --allocations        jobs only, no steps\n");
}

enum { OPT_JSON = 1000, OPT_NAME, OPT_USAGE, OPT_WHOLE };

static int whole_hetjob(const char *arg, int *out)
{
    if (!arg || !strcasecmp(arg, "yes") || !strcasecmp(arg, "y"))
        *out = 1;
    else if (!strcasecmp(arg, "no") || !strcasecmp(arg, "n"))
        *out = 2;
    else {
        fprintf(stderr, "%s: error: Invalid --whole-hetjob value \"%s\". Valid values: [yes|no].\n",
                PROG, arg);
        return -1;
    }
    return 0;
}

/* Options that only set a flag or a value. Returns 1 when ch is not one of them. */
static int simple_option(int ch, struct options *o)
{
    switch (ch) {
    case 'a': o->all_users = 1; break;
    case 'b': o->brief = 1; break;
    case 'e': o->help = 2; break;
    case 'h': o->help = 1; break;
    case 'l': o->longfmt = 1; break;
    case 'L': case 'v': case 'D': break; /* one cluster; no debug output; no duplicates */
    case 'n': o->noheader = 1; break;
    case 'p': o->mode = ACCTFMT_PARSABLE; break;
    case 'P': o->mode = ACCTFMT_PARSABLE2; break;
    case 'S': o->start_text = optarg; break;
    case 'E': o->end_text = optarg; break;
    case 'X': o->no_steps = 1; break;
    case OPT_JSON: o->json = 1; break;
    case OPT_USAGE: o->help = 1; break;
    case 'V': puts(TESSERA_VERSION_LINE); exit(0);
    default: return 1;
    }
    return 0;
}

/* Options that take a comma-separated list. */
static int list_option(int ch, struct options *o)
{
    switch (ch) {
    case 'j': return cmd_list_add_split(&o->ids, optarg);
    case 'u':
        if (!strcmp(optarg, "-1")) { /* Slurm's old spelling of "everyone" */
            o->all_users = 1;
            return 0;
        }
        return cmd_list_add_split(&o->users, optarg);
    case 'g': return cmd_list_add_split(&o->groups, optarg);
    case 'A': return cmd_list_add_split(&o->accounts, optarg);
    case 'r': return cmd_list_add_split(&o->partitions, optarg);
    case 's': return cmd_list_add_split(&o->states, optarg);
    case 'o': return cmd_list_add_split(&o->formats, optarg);
    case OPT_NAME: return cmd_list_add_split(&o->names, optarg);
    case OPT_WHOLE: return whole_hetjob(optarg, &o->whole_hetjob);
    default:
        fprintf(stderr, "Try \"sacct --help\" for more information\n");
        return -1;
    }
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"allusers", no_argument, NULL, 'a'},     {"accounts", required_argument, NULL, 'A'},
        {"allocations", no_argument, NULL, 'X'},  {"brief", no_argument, NULL, 'b'},
        {"duplicates", no_argument, NULL, 'D'},   {"helpformat", no_argument, NULL, 'e'},
        {"help-fields", no_argument, NULL, 'e'},  {"endtime", required_argument, NULL, 'E'},
        {"gid", required_argument, NULL, 'g'},    {"group", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},         {"name", required_argument, NULL, OPT_NAME},
        {"jobs", required_argument, NULL, 'j'},   {"long", no_argument, NULL, 'l'},
        {"allclusters", no_argument, NULL, 'L'},  {"noheader", no_argument, NULL, 'n'},
        {"fields", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'o'},
        {"parsable", no_argument, NULL, 'p'},     {"parsable2", no_argument, NULL, 'P'},
        {"partition", required_argument, NULL, 'r'}, {"state", required_argument, NULL, 's'},
        {"starttime", required_argument, NULL, 'S'}, {"uid", required_argument, NULL, 'u'},
        {"user", required_argument, NULL, 'u'},   {"usage", no_argument, NULL, OPT_USAGE},
        {"verbose", no_argument, NULL, 'v'},      {"version", no_argument, NULL, 'V'},
        {"whole-hetjob", optional_argument, NULL, OPT_WHOLE},
        {"json", no_argument, NULL, OPT_JSON},    {NULL, 0, NULL, 0},
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "aA:bDeE:g:hj:lLno:pPr:s:S:u:vVX", longopts, NULL)) !=
           -1)
        if (simple_option(ch, o) && list_option(ch, o))
            return -1;
    if (optind < argc) {
        fprintf(stderr, "%s: error: Unknown arguments:\n", PROG);
        for (int i = optind; i < argc; i++)
            fprintf(stderr, "%s: error:  %s\n", PROG, argv[i]);
        return -1;
    }
    return 0;
}

/* ---- resolving names ----------------------------------------------------------------- */

/* Names or numbers to ids, Slurm's error ("Invalid user id: x") on an unknown name. */
static int resolve_ids(const struct cmd_list *l, int groups, uint32_t **out)
{
    *out = calloc(l->n + 1, sizeof(**out));
    if (!*out)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        const char *name = l->items[i];
        if (cmd_id_of(groups ? NAMECACHE_GROUP : NAMECACHE_USER, name, &(*out)[i]) != 0) {
            fprintf(stderr, "Invalid %s id: %s\n", groups ? "group" : "user", name);
            return -1;
        }
    }
    return 0;
}

static int resolve_states(const struct cmd_list *l, Tessera__JobState **out)
{
    *out = calloc(l->n + 1, sizeof(**out));
    if (!*out)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        if (jobstate_parse(l->items[i], &(*out)[i])) {
            fprintf(stderr, "%s: fatal: unrecognized job state value %s\n", PROG, l->items[i]);
            return -1;
        }
    }
    return 0;
}

/* ---- the time window (the man page's DEFAULT TIME WINDOW) ----------------------------- */

static int read_time(const char *text, time_t now, int64_t *out)
{
    time_t t;

    if (timefmt_parse_past_timestamp(text, now, &t) != TS_OK) {
        fprintf(stderr, "Invalid time specification (pos=0): %s\n", text);
        return -1;
    }
    *out = (int64_t)t;
    return 0;
}

/* -S: as given; else the epoch with -j, now with -s, midnight today otherwise.
 * -E: as given; else -S's value when -s and -S are given, now (0) otherwise. */
static int window(const struct options *o, time_t now, int64_t *start, int64_t *end)
{
    time_t midnight;

    *start = *end = 0;
    if (o->start_text && read_time(o->start_text, now, start))
        return -1;
    if (o->end_text && read_time(o->end_text, now, end))
        return -1;
    if (!o->start_text && o->ids.n == 0) {
        if (o->states.n)
            *start = (int64_t)now;
        else if (timefmt_parse_past_timestamp("today", now, &midnight) == TS_OK)
            *start = (int64_t)midnight;
    }
    if (!o->end_text && o->states.n && o->start_text)
        *end = *start;
    return 0;
}

static int build_query(const struct options *o, struct query *q)
{
    Tessera__AcctQueryRequest init = TESSERA__ACCT_QUERY_REQUEST__INIT;

    q->req = init;
    if (resolve_ids(&o->users, 0, &q->uids) || resolve_ids(&o->groups, 1, &q->gids) ||
        resolve_states(&o->states, &q->states) ||
        window(o, time(NULL), &q->req.window_start, &q->req.window_end))
        return -1;
    q->req.job_ids = o->ids.items;
    q->req.n_job_ids = o->ids.n;
    q->req.whole_hetjob = (uint32_t)o->whole_hetjob;
    q->req.user_ids = q->uids;
    q->req.n_user_ids = o->all_users ? 0 : o->users.n;
    q->req.all_users = o->all_users || (o->users.n == 0 && o->ids.n > 0); /* as Slurm */
    q->req.accounts = o->accounts.items;
    q->req.n_accounts = o->accounts.n;
    q->req.partitions = o->partitions.items;
    q->req.n_partitions = o->partitions.n;
    q->req.states = q->states;
    q->req.n_states = o->states.n;
    q->req.no_steps = o->no_steps;
    q->req.group_ids = q->gids;
    q->req.n_group_ids = o->groups.n;
    q->req.names = o->names.items;
    q->req.n_names = o->names.n;
    return 0;
}

/* ---- asking, page by page ------------------------------------------------------------- */

/* Every page's records, kept with the responses that own them. */
struct answer {
    Tessera__Response **pages;
    size_t npages;
    Tessera__AcctJob **jobs;
    size_t njobs;
    Tessera__AcctStep **steps;
    size_t nsteps;
    time_t now;
};

static int append(void ***arr, size_t *n, void **items, size_t k)
{
    void **grown = realloc(*arr, (*n + k + 1) * sizeof(*grown));

    if (!grown)
        return -1;
    if (k)
        memcpy(grown + *n, items, k * sizeof(*grown));
    *arr = grown;
    *n += k;
    return 0;
}

static int keep_page(struct answer *a, Tessera__Response *resp)
{
    Tessera__AcctQueryResponse *r = resp->acct_query;
    void *page = resp;

    if (append((void ***)&a->pages, &a->npages, &page, 1)) {
        tessera__response__free_unpacked(resp, NULL);
        return -1;
    }
    a->now = (time_t)r->now;
    if (append((void ***)&a->jobs, &a->njobs, (void **)r->jobs, r->n_jobs) ||
        append((void ***)&a->steps, &a->nsteps, (void **)r->steps, r->n_steps))
        return -1;
    return 0;
}

static void answer_free(struct answer *a)
{
    for (size_t i = 0; i < a->npages; i++)
        tessera__response__free_unpacked(a->pages[i], NULL);
    free(a->pages);
    free(a->jobs);
    free(a->steps);
}

static Tessera__Response *ask(struct ctl *ctl, Tessera__AcctQueryRequest *q)
{
    Tessera__Request req = TESSERA__REQUEST__INIT;
    Tessera__Response *resp = NULL;
    int err;

    req.msg_case = TESSERA__REQUEST__MSG_ACCT_QUERY;
    req.acct_query = q;
    if ((err = ctl_call(ctl, &req, &resp)) != TS_OK) {
        fprintf(stderr, "%s: error: %s\n", PROG,
                err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                                   : ts_strerror(err));
        return NULL;
    }
    if (resp->error || resp->msg_case != TESSERA__RESPONSE__MSG_ACCT_QUERY) {
        fprintf(stderr, "%s: error: %s\n", PROG,
                resp->error ? resp->error->text : ts_strerror(TS_EPROTO));
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

static int fetch(struct ctl *ctl, Tessera__AcctQueryRequest *q, struct answer *a)
{
    for (;;) {
        Tessera__Response *resp = ask(ctl, q);
        int more;
        if (!resp || keep_page(a, resp))
            return -1;
        const Tessera__AcctQueryResponse *r = resp->acct_query;
        int resumed = q->resume_job_id != 0; /* the page began with a cut job's steps */
        more = r->more && (r->n_jobs > 0 || r->resume_job_id || resumed);
        if (!more)
            return 0; /* nothing moved: asking the same again would not help */
        if (r->resume_job_id) /* it cut the steps of its last job: the rest of them first */
            q->after_job_id = r->resume_job_id;
        else if (r->n_jobs)
            q->after_job_id = a->jobs[a->njobs - 1]->job_id;
        q->resume_job_id = r->resume_job_id;
        q->resume_from_step = r->resume_from_step;
    }
}

/* ---- printing -------------------------------------------------------------------------- */

/* The -o list: -b, -l, -o as given (in that order, as Slurm appends them), else
 * $SACCT_FORMAT, else the default. */
static char *field_list(const struct options *o)
{
    size_t len = 64 + (o->brief ? strlen(ACCTFMT_BRIEF) : 0) +
                 (o->longfmt ? strlen(ACCTFMT_LONG) : 0);
    const char *env = getenv("SACCT_FORMAT");
    char *list;

    for (size_t i = 0; i < o->formats.n; i++)
        len += strlen(o->formats.items[i]) + 1;
    if (!(list = calloc(1, len + (env ? strlen(env) : 0) + strlen(ACCTFMT_DEFAULT))))
        return NULL;
    if (o->brief)
        strcat(strcat(list, ACCTFMT_BRIEF), ",");
    if (o->longfmt)
        strcat(strcat(list, ACCTFMT_LONG), ",");
    for (size_t i = 0; i < o->formats.n; i++)
        strcat(strcat(list, o->formats.items[i]), ",");
    if (!*list)
        strcat(list, env && *env ? env : ACCTFMT_DEFAULT);
    return list;
}

static int compile_fields(const struct options *o, struct acctfmt **fmt)
{
    char *list = field_list(o);
    char err[256] = "";
    int rc;

    if (!list)
        return -1;
    rc = acctfmt_compile(list, fmt, err, sizeof(err));
    free(list);
    if (rc != TS_OK) {
        fprintf(stderr, "%s: error: %s\n", PROG, rc == TS_EOPTVALUE ? err : ts_strerror(rc));
        return -1;
    }
    return 0;
}

static void put_text(char *text)
{
    fputs(text ? text : "", stdout);
    free(text);
}

static int print_rows(const struct options *o, const struct acctfmt *fmt,
                      const struct acctfmt_rows *rows, struct jobfmt_ctx *ctx)
{
    if (o->json) {
        char *doc = acctfmt_json(rows, ctx);
        put_text(doc);
        return doc ? 0 : -1;
    }
    for (size_t i = 0; i < rows->n; i++)
        put_text(acctfmt_line(fmt, o->mode, &rows->rows[i], ctx));
    return 0;
}

static int report(const struct options *o, const struct acctfmt *fmt, struct answer *a)
{
    struct acctfmt_sel *sel = NULL;
    struct acctfmt_rows rows = {0};
    struct jobfmt_ctx *ctx = jobfmt_ctx_create(a->now ? a->now : time(NULL));
    const char *bad = NULL;
    int rc = -1;

    if (ctx && acctfmt_sel_parse(o->ids.items, o->ids.n, o->whole_hetjob, &sel, &bad) == TS_OK &&
        acctfmt_rows_build(a->jobs, a->njobs, a->steps, a->nsteps, sel, o->no_steps, &rows) ==
            TS_OK)
        rc = print_rows(o, fmt, &rows, ctx);
    acctfmt_rows_free(&rows);
    acctfmt_sel_free(sel);
    jobfmt_ctx_destroy(ctx);
    return rc;
}

/* -j items are checked before anything is asked, with Slurm's words for a bad one. */
static int check_ids(const struct options *o)
{
    struct acctfmt_sel *sel = NULL;
    const char *bad = NULL;
    int rc = acctfmt_sel_parse(o->ids.items, o->ids.n, o->whole_hetjob, &sel, &bad);

    acctfmt_sel_free(sel);
    if (rc == TS_EINVALID_JOB_ID)
        fprintf(stderr, "%s: fatal: Bad job/step specified: %s\n", PROG, bad);
    return rc == TS_OK ? 0 : -1;
}

static int help(const struct options *o)
{
    if (o->help == 1) {
        usage(stdout);
    } else {
        char *text = acctfmt_helpformat();
        put_text(text);
    }
    return 0;
}

static int run(struct options *o)
{
    struct acctfmt *fmt = NULL;
    struct query q = {0};
    struct answer a = {0};
    struct ctl ctl = {0};
    int rc = 1;

    if (check_ids(o) || compile_fields(o, &fmt) || build_query(o, &q) ||
        ctl_load_conf(&ctl, PROG, NULL))
        goto out;
    if (fetch(&ctl, &q.req, &a) == 0) {
        if (!o->noheader && !o->json)
            put_text(acctfmt_header(fmt, o->mode));
        rc = report(o, fmt, &a) ? 1 : 0;
    }
out:
    answer_free(&a);
    ctl_close(&ctl);
    acctfmt_free(fmt);
    free(q.uids);
    free(q.gids);
    free(q.states);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    int rc;

    argv[0] = (char *)PROG;
    if (parse_options(argc, argv, &o))
        rc = 1;
    else if (o.help)
        rc = help(&o);
    else
        rc = run(&o);
    cmd_list_free(&o.ids);
    cmd_list_free(&o.users);
    cmd_list_free(&o.groups);
    cmd_list_free(&o.accounts);
    cmd_list_free(&o.partitions);
    cmd_list_free(&o.states);
    cmd_list_free(&o.names);
    cmd_list_free(&o.formats);
    return rc;
}
