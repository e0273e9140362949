/* scancel: cancel or signal jobs by id ("93", "93+1") or by filters (-u -p -t -n).
 *
 * As Slurm's scancel, it says nothing about ids that are unknown or already finished
 * unless -v is given (scripts cancel jobs that may have ended), and its exit status is
 * Slurm's error number of the last failure, modulo 256. */
#include "cmds/cmdutil.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/jobstate.h"
#include "common/version.h"

#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROG "scancel"

struct options {
    uint32_t signal;
    int verbose, quiet;
    uint32_t *uids;
    size_t nuids;
    char **partitions;
    size_t npartitions;
    Tessera__JobState *states;
    size_t nstates;
    char **names;
    size_t nnames;
};

static const struct {
    const char *name;
    int number;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG},   {"XCPU", SIGXCPU},
};

static int parse_signal(const char *s)
{
    if (isdigit((unsigned char)*s)) {
        char *end = NULL;
        long n = strtol(s, &end, 10);
        return *end || n < 1 || n > 64 ? -1 : (int)n;
    }
    if (!strncasecmp(s, "SIG", 3))
        s += 3;
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (!strcasecmp(s, signals[i].name))
            return signals[i].number;
    return -1;
}

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
    struct passwd *pw = getpwnam(name);
    char *end = NULL;
    if (pw)
        uid = pw->pw_uid;
    else if (isdigit((unsigned char)*name) && (uid = (uint32_t)strtoul(name, &end, 10), !*end))
        ;
    else {
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
    fprintf(out, "Usage: scancel [OPTIONS] [job_id[+offset]]...\n"
                 "  -n, --name=name        jobs with this name\n"
                 "  -p, --partition=name   jobs in this partition\n"
                 "  -Q, --quiet            no messages but errors\n"
                 "  -s, --signal=name      send this signal instead of cancelling\n"
                 "  -t, --state=state      jobs in this state (PENDING, RUNNING, SUSPENDED)\n"
                 "  -u, --user=name        jobs of this user\n"
                 "  -v, --verbose          say what is done\n"
                 "  -h, --help             this text\n"
                 "  -V, --version          print the version\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"signal", required_argument, NULL, 's'}, {"user", required_argument, NULL, 'u'},
        {"partition", required_argument, NULL, 'p'}, {"state", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'n'}, {"jobname", required_argument, NULL, 'n'},
        {"verbose", no_argument, NULL, 'v'}, {"quiet", no_argument, NULL, 'Q'},
        {"help", no_argument, NULL, 'h'}, {"usage", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "s:u:p:t:n:vQhV", longopts, NULL)) != -1) {
        int err = 0;
        switch (ch) {
        case 's': {
            int sig = parse_signal(optarg);
            if (sig < 0) {
                fprintf(stderr, "Unknown job signal: %s\n", optarg);
                return 1;
            }
            o->signal = (uint32_t)sig;
            break;
        }
        case 'u': err = add_user(o, optarg); break;
        case 'p': err = push((void **)&o->partitions, &o->npartitions, sizeof(char *), &optarg); break;
        case 't': err = add_state(o, optarg); break;
        case 'n': err = push((void **)&o->names, &o->nnames, sizeof(char *), &optarg); break;
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

int main(int argc, char **argv)
{
    struct options o = {0};
    argv[0] = (char *)PROG;
    if (parse_options(argc, argv, &o))
        return 1;
    int nids = argc - optind;
    if (nids == 0 && !o.nuids && !o.npartitions && !o.nstates && !o.nnames) {
        cmd_error(PROG, "No job identification provided");
        return 1;
    }
    if (!ids_syntax_ok(argv + optind, nids))
        return 1;
    struct ctl ctl;
    if (ctl_load_conf(&ctl, PROG, NULL))
        return 1;
    Tessera__JobActionRequest a = TESSERA__JOB_ACTION_REQUEST__INIT;
    a.action = o.signal ? TESSERA__JOB_ACTION__JOB_ACTION_SIGNAL
                        : TESSERA__JOB_ACTION__JOB_ACTION_CANCEL;
    a.signal = o.signal;
    a.job_ids = argv + optind;
    a.n_job_ids = (size_t)nids;
    a.user_ids = o.uids;
    a.n_user_ids = o.nuids;
    a.partitions = o.partitions;
    a.n_partitions = o.npartitions;
    a.states = o.states;
    a.n_states = o.nstates;
    a.names = o.names;
    a.n_names = o.nnames;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &a;
    Tessera__Response *resp = NULL;
    int rc = 0, err = ctl_call(&ctl, &req, &resp);
    if (err) {
        cmd_error(PROG, "%s", err == TS_ECONNECT
                                  ? "Unable to contact slurm controller (connect failure)"
                                  : ctl_error_text(&ctl)[0] ? ctl_error_text(&ctl)
                                                            : ts_strerror(err));
        rc = 1;
    } else if (resp->error) {
        cmd_error(PROG, "%s", resp->error->text);
        rc = 1;
    } else if (resp->msg_case == TESSERA__RESPONSE__MSG_JOB_ACTION) {
        for (size_t i = 0; i < resp->job_action->n_results; i++) {
            int r = report(&o, resp->job_action->results[i]);
            if (r)
                rc = r;
        }
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    ctl_close(&ctl);
    free(o.uids);
    free(o.partitions);
    free(o.states);
    free(o.names);
    return rc;
}
