/* squeue: list jobs, as Slurm's squeue does: default columns, -o/-O formats, --json,
 * components as "<het_job_id>+<offset>". The controller selects the jobs (ids, users,
 * partitions, states, names); this command formats them. */
#include "cmds/cmdutil.h"

#include "common/conf/conf.h"
#include "common/format/jobfmt.h"
#include "common/format/stepfmt.h"
#include "common/job/jobid.h"
#include "common/job/jobstate.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PROG "squeue"
#define LONG_FORMAT "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"

struct options {
    struct cmd_list ids, users_text, partitions, states_text, names;
    uint32_t *uids;
    size_t nuids;
    Tessera__JobState *states;
    size_t nstates;
    int all_states;
    int noheader, json, longfmt;
    int start;               /* --start: pending jobs by expected start */
    int steps;               /* -s: steps rather than jobs */
    struct cmd_list step_ids;    /* -s's list ("93.1", "93") */
    const char *format, *fields;
    const char *nodelist;    /* -w: jobs on any of these nodes */
};

static int resolve_users(struct options *o)
{
    o->uids = calloc(o->users_text.n + 1, sizeof(*o->uids));
    if (!o->uids)
        return -1;
    for (size_t i = 0; i < o->users_text.n; i++) {
        const char *u = o->users_text.items[i];
        if (cmd_id_of(NAMECACHE_USER, u, &o->uids[o->nuids]) == 0)
            o->nuids++;
        else {
            fprintf(stderr, "%s: error: Invalid user: %s\n\n", PROG, u);
            return -1;
        }
    }
    return 0;
}

static int resolve_states(struct options *o)
{
    o->states = calloc(o->states_text.n + 1, sizeof(*o->states));
    if (!o->states)
        return -1;
    for (size_t i = 0; i < o->states_text.n; i++) {
        const char *t = o->states_text.items[i];
        if (!strcasecmp(t, "all")) {
            o->all_states = 1;
            continue;
        }
        if (jobstate_parse(t, &o->states[o->nstates])) {
            fprintf(stderr, "%s: error: Invalid job state specified: %s\n", PROG, t);
            fprintf(stderr, "%s: error: Valid job states include: PENDING,RUNNING,SUSPENDED,"
                            "COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,"
                            "DEADLINE,OUT_OF_MEMORY,COMPLETING\n", PROG);
            return -1;
        }
        o->nstates++;
    }
    if (o->all_states)
        o->nstates = 0; /* "all" wins over the others */
    else if (o->start && o->states_text.n == 0)
        o->states[o->nstates++] = TESSERA__JOB_STATE__JOB_PENDING; /* --start's default */
    return 0;
}

static int check_ids(const struct options *o)
{
    if (o->steps)
        return 0; /* "93.1" forms: the controller reads them */
    for (size_t i = 0; i < o->ids.n; i++) {
        struct jobid id;
        if (jobid_parse(o->ids.items[i], &id) != TS_OK) {
            fprintf(stderr, "%s: error: Invalid job id: %s\n", PROG, o->ids.items[i]);
            return -1;
        }
    }
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: squeue [OPTIONS]\n"
                 "  -h, --noheader          no header line\n"
                 "  -j, --jobs=list         these jobs (\"93\" = every component, \"93+1\" = one)\n"
                 "      --json              JSON output\n"
                 "  -l, --long              more columns\n"
                 "  -n, --name=list         jobs with these names\n"
                 "  -o, --format=format     columns as %%.18i %%.9P ... (see squeue(1))\n"
                 "  -O, --Format=fields     columns by name: JobID:10,Name,...\n"
                 "  -p, --partition=list    jobs in these partitions\n"
                 "  -w, --nodelist=hosts    jobs on any of these nodes\n"
                 "  -s, --steps [list]      steps (\"93.1\", or every step of \"93\") instead of jobs\n"
                 "      --start             pending jobs by expected start time\n"
                 "  -t, --states=list       jobs in these states (or all)\n"
                 "  -u, --user=list         jobs of these users\n"
                 "      --help              this text\n"
                 "  -V, --version           print the version\n");
}

enum { OPT_JSON = 1000, OPT_HELP, OPT_START };

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, 'j'},   {"job", required_argument, NULL, 'j'},
        {"user", required_argument, NULL, 'u'},   {"partition", required_argument, NULL, 'p'},
        {"states", required_argument, NULL, 't'}, {"state", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'n'},   {"noheader", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, 'o'}, {"Format", required_argument, NULL, 'O'},
        {"long", no_argument, NULL, 'l'},         {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, OPT_HELP},    {"usage", no_argument, NULL, OPT_HELP},
        {"version", no_argument, NULL, 'V'},      {"all", no_argument, NULL, 'a'},
        {"steps", optional_argument, NULL, 's'},  {"start", no_argument, NULL, OPT_START},
        {"partitions", required_argument, NULL, 'p'}, {"nodelist", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    int ch, err = 0;
    while (!err && (ch = getopt_long(argc, argv, "j:u:p:t:n:ho:O:laVs::w:", longopts, NULL)) != -1) {
        switch (ch) {
        case 's': /* Slurm takes the list as the next word too ("-s 93.1") */
            o->steps = 1;
            if (!optarg && optind < argc && argv[optind][0] != '-')
                optarg = argv[optind++];
            if (optarg)
                err = cmd_list_add_split(&o->step_ids, optarg);
            break;
        case 'j': err = cmd_list_add_split(&o->ids, optarg); break;
        case 'u': err = cmd_list_add_split(&o->users_text, optarg); break;
        case 'p': err = cmd_list_add_split(&o->partitions, optarg); break;
        case 't': err = cmd_list_add_split(&o->states_text, optarg); break;
        case 'n': err = cmd_list_add_split(&o->names, optarg); break;
        case 'w': o->nodelist = optarg; break;
        case 'h': o->noheader = 1; break;
        case 'o': o->format = optarg; break;
        case 'O': o->fields = optarg; break;
        case 'l': o->longfmt = 1; break;
        case 'a': break; /* every partition is visible: nothing is hidden to show */
        case OPT_JSON: o->json = 1; break;
        case OPT_START: o->start = 1; break;
        case OPT_HELP: usage(stdout); exit(0);
        case 'V': puts(TESSERA_VERSION_LINE); exit(0);
        default: fprintf(stderr, "Try \"squeue --help\" for more information\n"); return -1;
        }
    }
    if (!err && optind < argc) {
        fprintf(stderr, "%s: error: Unrecognized option: %s\n", PROG, argv[optind]);
        return -1;
    }
    return err;
}

/* -w names configured nodes only: Slurm's squeue says which name is not one. The list
 * is the user's own, expanded here in their own process (the controller matches it
 * without expanding). */
static int check_nodes(struct ctl *ctl, const struct options *o)
{
    if (!o->nodelist)
        return 0;
    struct hostlist *wanted = NULL;
    if (hostlist_expand(o->nodelist, &wanted) != TS_OK) {
        fprintf(stderr, "%s: error: Invalid node name %s\n", PROG, o->nodelist);
        return -1;
    }
    Tessera__NodeQueryRequest nq = TESSERA__NODE_QUERY_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &nq;
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(ctl, &req, &resp);
    if (!err && resp->error)
        err = (int)resp->error->code;
    int rc = 0;
    if (err) {
        fprintf(stderr, "slurm_load_node error: %s\n", ts_strerror(err));
        rc = -1;
    }
    for (size_t i = 0; !rc && i < hostlist_count(wanted); i++) {
        const char *name = hostlist_nth(wanted, i);
        int known = 0;
        for (size_t k = 0; !known && k < resp->node_query->n_nodes; k++)
            known = !strcmp(resp->node_query->nodes[k]->name, name);
        if (!known) {
            fprintf(stderr, "%s: error: Invalid node name %s\n", PROG, name);
            rc = -1;
        }
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    hostlist_destroy(wanted);
    return rc;
}

static Tessera__Response *query(struct ctl *ctl, const struct options *o)
{
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    q.job_ids = o->ids.items;
    q.n_job_ids = o->ids.n;
    q.user_ids = o->uids;
    q.n_user_ids = o->nuids;
    q.partitions = o->partitions.items;
    q.n_partitions = o->partitions.n;
    q.states = o->states;
    q.n_states = o->nstates;
    q.all_states = o->all_states;
    q.names = o->names.items;
    q.n_names = o->names.n;
    q.nodelist = (char *)o->nodelist;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(ctl, &req, &resp);
    if (err) {
        fprintf(stderr, "slurm_load_jobs error: %s\n",
                err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                                   : ts_strerror(err));
        return NULL;
    }
    if (resp->error) {
        fprintf(stderr, "slurm_load_jobs error: %s\n", resp->error->text);
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

/* -t for steps: running ones by default; "all" or the states listed. */
static int state_wanted(const struct options *o, Tessera__JobState state)
{
    if (o->all_states)
        return 1;
    if (o->nstates == 0)
        return state == TESSERA__JOB_STATE__JOB_RUNNING;
    for (size_t i = 0; i < o->nstates; i++)
        if (o->states[i] == state)
            return 1;
    return 0;
}

/* squeue -s: steps of the jobs (-j) or the steps listed, of the users (-u). */
static int show_steps(struct ctl *ctl, const struct options *o)
{
    Tessera__StepQueryRequest q = TESSERA__STEP_QUERY_REQUEST__INIT;
    struct cmd_list ids = {0};
    for (size_t i = 0; i < o->ids.n; i++)
        if (cmd_list_add(&ids, o->ids.items[i]))
            return 1;
    for (size_t i = 0; i < o->step_ids.n; i++)
        if (cmd_list_add(&ids, o->step_ids.items[i]))
            return 1;
    q.job_ids = ids.items;
    q.n_job_ids = ids.n;
    q.user_ids = o->uids;
    q.n_user_ids = o->nuids;
    q.all_states = o->all_states || o->nstates > 0;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_QUERY;
    req.step_query = &q;
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(ctl, &req, &resp);
    cmd_list_free(&ids);
    if (err || resp->error) {
        fprintf(stderr, "slurm_load_job_steps error: %s\n",
                err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                : err              ? ts_strerror(err)
                                   : resp->error->text);
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
        return 1;
    }
    Tessera__StepQueryResponse *sq = resp->step_query;
    struct stepfmt *fmt = NULL;
    char why[256];
    int rc = 1;
    if (stepfmt_compile(o->format ? o->format : STEPFMT_SQUEUE_DEFAULT, &fmt, why, sizeof(why))) {
        fprintf(stderr, "%s: error: %s\n", PROG, why);
        goto out;
    }
    struct jobfmt_ctx *ctx = jobfmt_ctx_create((time_t)sq->now);
    if (!o->noheader) {
        char *h = stepfmt_header(fmt);
        fputs(h ? h : "", stdout);
        free(h);
    }
    stepfmt_sort(sq->steps, sq->n_steps);
    for (size_t i = 0; ctx && i < sq->n_steps; i++) {
        if (!state_wanted(o, sq->steps[i]->state))
            continue;
        char *row = stepfmt_row(fmt, sq->steps[i], ctx);
        fputs(row ? row : "", stdout);
        free(row);
    }
    jobfmt_ctx_destroy(ctx);
    stepfmt_free(fmt);
    rc = 0;
out:
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

static int print_table(const struct options *o, Tessera__JobQueryResponse *jq)
{
    struct jobfmt *fmt = NULL;
    char err[256];
    int e = o->fields ? jobfmt_compile_fields(o->fields, &fmt, err, sizeof(err))
                      : jobfmt_compile(o->format  ? o->format
                                       : o->start ? JOBFMT_SQUEUE_START
                                       : o->longfmt ? LONG_FORMAT
                                                    : JOBFMT_SQUEUE_DEFAULT,
                                       &fmt, err, sizeof(err));
    if (e) {
        fprintf(stderr, "%s: error: %s\n", PROG, err);
        return 1;
    }
    /* --start: by expected start time (Slurm's --sort=S); otherwise the default order. */
    if (!o->start)
        jobfmt_sort_default(jq->jobs, jq->n_jobs);
    else if ((e = jobfmt_sort_start(jq->jobs, jq->n_jobs, (time_t)jq->now)) != TS_OK) {
        fprintf(stderr, "%s: error: %s\n", PROG, ts_strerror(e));
        jobfmt_free(fmt);
        return 1;
    }
    struct jobfmt_ctx *ctx = jobfmt_ctx_create((time_t)jq->now);
    if (o->longfmt && !o->format && !o->fields) {
        char when[64];
        time_t now = (time_t)jq->now;
        struct tm tm;
        strftime(when, sizeof(when), "%a %b %d %H:%M:%S %Y", localtime_r(&now, &tm));
        printf("%s\n", when);
    }
    if (!o->noheader) {
        char *h = jobfmt_header(fmt);
        fputs(h ? h : "", stdout);
        free(h);
    }
    for (size_t i = 0; ctx && i < jq->n_jobs; i++) {
        char *row = jobfmt_row(fmt, jq->jobs[i], ctx);
        fputs(row ? row : "", stdout);
        free(row);
    }
    jobfmt_ctx_destroy(ctx);
    jobfmt_free(fmt);
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    argv[0] = (char *)PROG;
    int rc = 1;
    struct ctl ctl = {0};
    if (parse_options(argc, argv, &o) || check_ids(&o) || resolve_users(&o) ||
        resolve_states(&o) || ctl_load_conf(&ctl, PROG, NULL) || check_nodes(&ctl, &o))
        goto out;
    if (o.steps) {
        rc = show_steps(&ctl, &o);
        goto out;
    }
    Tessera__Response *resp = query(&ctl, &o);
    if (resp) {
        Tessera__JobQueryResponse *jq = resp->job_query;
        if (o.json) {
            struct jobfmt_ctx *ctx = jobfmt_ctx_create((time_t)jq->now);
            char *doc = ctx ? jobfmt_json(jq->jobs, jq->n_jobs, ctx) : NULL;
            if (doc)
                printf("%s\n", doc);
            rc = doc ? 0 : 1;
            free(doc);
            jobfmt_ctx_destroy(ctx);
        } else {
            rc = print_table(&o, jq);
        }
        tessera__response__free_unpacked(resp, NULL);
    }
out:
    ctl_close(&ctl);
    cmd_list_free(&o.ids);
    cmd_list_free(&o.users_text);
    cmd_list_free(&o.partitions);
    cmd_list_free(&o.states_text);
    cmd_list_free(&o.names);
    cmd_list_free(&o.step_ids);
    free(o.uids);
    free(o.states);
    return rc;
}
