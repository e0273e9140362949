/* scancel: cancel or signal jobs by id ("93", "93+1") or by filters (-u -p -t -n -q -A -w);
 * -i asks about each job first.
 *
 * As Slurm's scancel, it says nothing about ids that are unknown or already finished
 * unless -v is given (scripts cancel jobs that may have ended), and its exit status is
 * Slurm's error number of the last failure, modulo 256. */
#include "cmds/cmdutil.h"

#include "common/conf/conf.h"
#include "common/job/jobstate.h"
#include "common/text/signame.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROG "scancel"

struct options {
    uint32_t signal;
    int verbose, quiet, batch, full, interactive;
    uint32_t *uids;
    size_t nuids;
    char **partitions;
    size_t npartitions;
    Tessera__JobState *states;
    size_t nstates;
    char **names;
    size_t nnames;
    char **qos;
    size_t nqos;
    char **accounts;
    size_t naccounts;
    const char *nodelist;
};

/* Slurm's error numbers for what scancel reports, for its exit status. */
static int slurm_errno(int code)
{
    switch (code) {
    case TS_EPERM: return 2002;
    case TS_EINVALID_JOB_ID: return 2017;
    case TS_ETRANSITION: return 2020;
    case TS_EALREADY_DONE: return 2021;
    case TS_ENOT_WHOLE_HET_JOB: return 2108;
    default: return 1;
    }
}

/* Slurm's syntax of an id on scancel's command line, checked for every id before any is
 * sent (one bad id cancels nothing): a job number other than 0, then optionally "+offset",
 * an array part ("_..."; the controller judges it), ".step". A number too large for any
 * job passes: like an unknown job, the controller's answer for it is quiet. */
static int id_syntax_ok(const char *s)
{
    const char *p = s;
    int nonzero = 0;
    if (!isdigit((unsigned char)*p))
        return 0;
    for (; isdigit((unsigned char)*p); p++)
        nonzero |= *p != '0';
    if (!nonzero)
        return 0;
    if (*p == '+') {
        if (!isdigit((unsigned char)*++p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == '_')
        p += strcspn(p, ".");
    if (*p == '.') {
        if (!isdigit((unsigned char)*++p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

static int ids_syntax_ok(char **ids, int n)
{
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (!id_syntax_ok(ids[i])) {
            cmd_error(PROG, "Invalid job id %s", ids[i]);
            ok = 0;
        }
    }
    return ok;
}

static int push(void **array, size_t *n, size_t size, const void *item)
{
    void *grown = realloc(*array, (*n + 1) * size);
    if (!grown)
        return -1;
    memcpy((char *)grown + *n * size, item, size);
    *array = grown;
    (*n)++;
    return 0;
}

static int add_user(struct options *o, const char *name)
{
    uint32_t uid;
    if (cmd_id_of(NAMECACHE_USER, name, &uid) != 0) {
        cmd_error(PROG, "Invalid user name: %s", name);
        return -1;
    }
    return push((void **)&o->uids, &o->nuids, sizeof(uid), &uid);
}

/* -t takes the states a job can be cancelled in. */
static int add_state(struct options *o, const char *s)
{
    Tessera__JobState st;
    if (jobstate_parse(s, &st) || (st != TESSERA__JOB_STATE__JOB_PENDING &&
                                   st != TESSERA__JOB_STATE__JOB_RUNNING &&
                                   st != TESSERA__JOB_STATE__JOB_SUSPENDED)) {
        fprintf(stderr, "Invalid job state specified: %s\n"
                        "Valid job states are PENDING, RUNNING, and SUSPENDED\n", s);
        return -1;
    }
    return push((void **)&o->states, &o->nstates, sizeof(st), &st);
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: scancel [OPTIONS] [job_id[+offset][.step_id]]...\n"
                 "  -A, --account=account  jobs charging this account\n"
                 "  -b, --batch            signal the batch shell only\n"
                 "  -f, --full             signal the batch shell, what it started and all steps\n"
                 "  -H, --hurry            (no burst buffers here: nothing to stage out)\n"
                 "  -i, --interactive      ask before acting on each job\n"
                 "  -n, --name=name        jobs with this name\n"
                 "  -p, --partition=name   jobs in this partition\n"
                 "  -q, --qos=qos          jobs of this quality of service\n"
                 "  -Q, --quiet            no messages but errors\n"
                 "  -s, --signal=name      send this signal (to the steps) instead of cancelling\n"
                 "  -t, --state=state      jobs in this state (PENDING, RUNNING, SUSPENDED)\n"
                 "  -u, --user=name        jobs of this user\n"
                 "  -w, --nodelist=nodes   jobs on any of these nodes\n"
                 "  -v, --verbose          say what is done\n"
                 "  -h, --help             this text\n"
                 "  -V, --version          print the version\n");
}

/* Slurm's options for what Tessera does not have (clusters, federation, reservations,
 * workload keys): refused, never ignored. */
static int unsupported(const char *name)
{
    cmd_error(PROG, "--%s is not supported", name);
    return -1;
}

static int push_str(char ***list, size_t *n, char *item)
{
    return push((void **)list, n, sizeof(char *), &item);
}

static int parse_options(int argc, char **argv, struct options *o)
{
    enum { OPT_SIBLING = 0x100, OPT_WCKEY };
    static const struct option longopts[] = {
        {"signal", required_argument, NULL, 's'}, {"user", required_argument, NULL, 'u'},
        {"partition", required_argument, NULL, 'p'}, {"state", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'n'}, {"jobname", required_argument, NULL, 'n'},
        {"account", required_argument, NULL, 'A'}, {"qos", required_argument, NULL, 'q'},
        {"nodelist", required_argument, NULL, 'w'}, {"batch", no_argument, NULL, 'b'},
        {"full", no_argument, NULL, 'f'}, {"interactive", no_argument, NULL, 'i'},
        {"hurry", no_argument, NULL, 'H'}, {"clusters", required_argument, NULL, 'M'},
        {"reservation", required_argument, NULL, 'R'},
        {"sibling", required_argument, NULL, OPT_SIBLING},
        {"wckey", required_argument, NULL, OPT_WCKEY},
        {"verbose", no_argument, NULL, 'v'}, {"quiet", no_argument, NULL, 'Q'},
        {"help", no_argument, NULL, 'h'}, {"usage", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "s:u:p:t:n:A:q:w:bfiHM:R:vQhV", longopts, NULL)) != -1) {
        int err = 0;
        switch (ch) {
        case 's': {
            int sig = signame_parse(optarg, strlen(optarg));
            if (sig < 0) {
                fprintf(stderr, "Unknown job signal: %s\n", optarg);
                return 1;
            }
            o->signal = (uint32_t)sig;
            break;
        }
        case 'u': err = add_user(o, optarg); break;
        case 'p': err = push_str(&o->partitions, &o->npartitions, optarg); break;
        case 't': err = add_state(o, optarg); break;
        case 'n': err = push_str(&o->names, &o->nnames, optarg); break;
        case 'A': err = push_str(&o->accounts, &o->naccounts, optarg); break;
        case 'q': err = push_str(&o->qos, &o->nqos, optarg); break;
        case 'w': o->nodelist = optarg; break;
        case 'b': o->batch = 1; break;
        case 'f': o->full = 1; break;
        case 'i': o->interactive = 1; break;
        case 'H': break; /* Tessera stages nothing out: what -H avoids never happens */
        case 'M': err = unsupported("clusters"); break;
        case 'R': err = unsupported("reservation"); break;
        case OPT_SIBLING: err = unsupported("sibling"); break;
        case OPT_WCKEY: err = unsupported("wckey"); break;
        case 'v': o->verbose++; break;
        case 'Q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        case 'V': puts(TESSERA_VERSION_LINE); exit(0);
        default: fprintf(stderr, "Try \"scancel --help\" for more information\n"); return 1;
        }
        if (err)
            return 1;
    }
    return 0;
}

/* Report one result; returns the exit status it stands for. */
static int report(const struct options *o, const Tessera__JobActionResult *r)
{
    if (o->verbose) {
        if (o->signal)
            fprintf(stderr, "%s: Signal %u to job %s\n", PROG, o->signal, r->job_id);
        else
            fprintf(stderr, "%s: Terminating job %s\n", PROG, r->job_id);
    }
    if (r->code == TS_OK)
        return 0;
    /* gone or already over: only worth a word when asked for */
    int quiet_error = r->code == TS_EINVALID_JOB_ID || r->code == TS_EALREADY_DONE;
    if (quiet_error && !o->verbose)
        return 0;
    if (!o->quiet)
        cmd_error(PROG, "Kill job error on job id %s: %s", r->job_id, r->text);
    return quiet_error ? 0 : slurm_errno((int)r->code) & 0xff;
}

/* The action o asks for, on ids (none: on o's filters). */
static void fill_action(const struct options *o, char **ids, size_t nids,
                        Tessera__JobActionRequest *a)
{
    a->action = o->signal ? TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL
                          : TESSERA__JOB_ACTION__JOB_ACTION_CANCEL;
    a->signal = o->signal;
    /* Slurm: a signal reaches the steps only, unless -b (the batch shell alone) or -f
     * (everything) says otherwise; the controller sends SIGKILL everywhere */
    a->signal_scope = o->full    ? TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_ALL
                      : o->batch ? TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_BATCH_SHELL
                                 : TESSERA__JOB_SIGNAL_SCOPE__JOB_SIGNAL_STEPS;
    a->job_ids = ids;
    a->n_job_ids = nids;
    a->user_ids = o->uids;
    a->n_user_ids = o->nuids;
    a->partitions = o->partitions;
    a->n_partitions = o->npartitions;
    a->states = o->states;
    a->n_states = o->nstates;
    a->names = o->names;
    a->n_names = o->nnames;
    a->qos = o->qos;
    a->n_qos = o->nqos;
    a->accounts = o->accounts;
    a->n_accounts = o->naccounts;
    a->nodelist = (char *)(o->nodelist ? o->nodelist : "");
}

/* One request; a failure is printed unless quiet. Returns 0 with *resp set, or 1. */
static int call(struct ctl *ctl, Tessera__Request *req, int pages, int quiet,
                Tessera__Response **resp)
{
    *resp = NULL;
    int err = pages ? ctl_call_pages(ctl, req, resp) : ctl_call(ctl, req, resp);
    if (!err && !(*resp)->error)
        return 0;
    if (!quiet && err == TS_ECONNECT)
        cmd_error(PROG, "Unable to contact slurm controller (connect failure)");
    else if (!quiet && err)
        cmd_error(PROG, "%s", ctl_error_text(ctl)[0] ? ctl_error_text(ctl) : ts_strerror(err));
    else if (!quiet)
        cmd_error(PROG, "%s", (*resp)->error->text);
    if (*resp)
        tessera__response__free_unpacked(*resp, NULL);
    *resp = NULL;
    return 1;
}

/* The record an id as typed ("93", "93+1", "93.0") stands for among recs, or NULL. */
static const Tessera__JobRecord *record_of(const char *text, Tessera__JobRecord **recs, size_t n)
{
    char *end;
    unsigned long id = strtoul(text, &end, 10);
    int has_offset = *end == '+';
    unsigned long offset = has_offset ? strtoul(end + 1, NULL, 10) : 0;
    for (size_t i = 0; i < n; i++) {
        const Tessera__JobRecord *r = recs[i];
        if (has_offset ? r->het_job_id == id && r->het_job_offset == offset : r->job_id == id)
            return r;
    }
    return NULL;
}

/* Slurm's question, on stdout; a line starting with y or n answers it, anything else asks
 * again. End of input answers no (Slurm would ask for ever: docs/slurm-differences.md). */
static int ask(const char *text, const Tessera__JobRecord *r, int *eof)
{
    char *line = NULL;
    size_t cap = 0;
    int yes = 0;
    while (!*eof) {
        printf("Cancel %s=%s name=%s partition=%s [y/n]? ",
               strchr(text, '.') ? "step_id" : "job_id", text,
               r->desc->name ? r->desc->name : "", r->desc->partition ? r->desc->partition : "");
        fflush(stdout);
        if (getline(&line, &cap, stdin) < 0) {
            *eof = 1;
            putchar('\n');
        } else if (line[0] == 'y' || line[0] == 'Y' || line[0] == 'n' || line[0] == 'N') {
            yes = line[0] == 'y' || line[0] == 'Y';
            break;
        }
    }
    free(line);
    return yes;
}

/* The action o asks for on ids (none: on o's filters), or with list_only the ids the
 * controller would act on. Returns 0 with *resp set, or 1 (printed). */
static int send_action(struct ctl *ctl, const struct options *o, char **ids, size_t nids,
                       int list_only, Tessera__Response **resp)
{
    Tessera__JobActionRequest a = TESSERA__JOB_ACTION_REQUEST__INIT;
    fill_action(o, ids, nids, &a);
    a.list_only = list_only;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &a;
    if (call(ctl, &req, 0, 0, resp))
        return 1;
    if ((*resp)->msg_case == TESSERA__RESPONSE__MSG_JOB_ACTION)
        return 0;
    tessera__response__free_unpacked(*resp, NULL);
    *resp = NULL;
    return 1;
}

/* The ids the filters match, as the controller decides it: added to *ids. */
static int list_matches(struct ctl *ctl, const struct options *o, struct cmd_list *ids)
{
    Tessera__Response *resp;
    if (send_action(ctl, o, NULL, 0, 1, &resp))
        return 1;
    int rc = 0;
    for (size_t i = 0; !rc && i < resp->job_action->n_results; i++)
        rc = cmd_list_add(ids, resp->job_action->results[i]->job_id) ? 1 : 0;
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

/* -i: the ids (or the filters' matches) the user says yes to, into *chosen. Ids that name
 * no known job are kept without a question: the action reports them as usual. */
static int ask_each(struct ctl *ctl, const struct options *o, char **ids, size_t nids,
                    struct cmd_list *chosen)
{
    struct cmd_list cand = {0}, base = {0};
    int rc = 0;
    for (size_t i = 0; !rc && i < nids; i++)
        rc = cmd_list_add(&cand, ids[i]) ? 1 : 0;
    if (!rc && nids == 0)
        rc = list_matches(ctl, o, &cand);
    for (size_t i = 0; !rc && i < cand.n; i++) {
        char *b = strdup(cand.items[i]);
        if (!b)
            rc = 1;
        else {
            b[strcspn(b, "._")] = '\0';
            rc = cmd_list_add(&base, b) ? 1 : 0;
            free(b);
        }
    }
    Tessera__Response *resp = NULL;
    if (!rc && cand.n) {
        Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
        q.job_ids = base.items;
        q.n_job_ids = base.n;
        q.all_states = 1;
        Tessera__Request req = TESSERA__REQUEST__INIT;
        req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
        req.job_query = &q;
        if (call(ctl, &req, 1, 1, &resp))
            resp = NULL; /* unknown ids only: the action reports them, without a question */
    }
    int eof = 0;
    for (size_t i = 0; !rc && i < cand.n; i++) {
        const Tessera__JobRecord *r =
            resp && resp->msg_case == TESSERA__RESPONSE__MSG_JOB_QUERY
                ? record_of(cand.items[i], resp->job_query->jobs, resp->job_query->n_jobs)
                : NULL;
        if (!r || ask(cand.items[i], r, &eof))
            rc = cmd_list_add(chosen, cand.items[i]) ? 1 : 0;
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    cmd_list_free(&cand);
    cmd_list_free(&base);
    return rc;
}

static int act(struct ctl *ctl, const struct options *o, char **ids, size_t nids)
{
    Tessera__Response *resp;
    if (send_action(ctl, o, ids, nids, 0, &resp))
        return 1;
    int rc = 0;
    for (size_t i = 0; i < resp->job_action->n_results; i++) {
        int r = report(o, resp->job_action->results[i]);
        if (r)
            rc = r;
    }
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    argv[0] = (char *)PROG;
    if (parse_options(argc, argv, &o))
        return 1;
    int nids = argc - optind;
    if (nids == 0 && !o.nuids && !o.npartitions && !o.nstates && !o.nnames && !o.nqos &&
        !o.naccounts && !o.nodelist) {
        cmd_error(PROG, "No job identification provided");
        return 1;
    }
    if (!ids_syntax_ok(argv + optind, nids))
        return 1;
    struct ctl ctl;
    if (ctl_load_conf(&ctl, PROG, NULL))
        return 1;
    int rc;
    if (o.interactive) {
        struct cmd_list chosen = {0};
        rc = ask_each(&ctl, &o, argv + optind, (size_t)nids, &chosen);
        if (!rc && chosen.n)
            rc = act(&ctl, &o, chosen.items, chosen.n);
        cmd_list_free(&chosen);
    } else {
        rc = act(&ctl, &o, argv + optind, (size_t)nids);
    }
    ctl_close(&ctl);
    free(o.uids);
    free(o.partitions);
    free(o.states);
    free(o.names);
    free(o.qos);
    free(o.accounts);
    return rc;
}
