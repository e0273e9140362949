/* sinfo: partitions and nodes, as Slurm's sinfo shows them: the default table, -N (one
 * line per node), -l, -s, -R, -o formats, filters by partition, node and state. The
 * controller sends every partition and node; this command picks and formats them
 * (common/format/nodefmt.h), so that an unknown partition name shows an empty table, as in
 * Slurm, rather than an error. */
#include "cmds/cmdutil.h"

#include "common/format/nodefmt.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "sinfo"
/* What -R lists unless -t says otherwise ("fail" matches nothing in Tessera). */
#define REASON_STATES "down,fail,drain"

struct options {
    int all, dead, responding, exact, noheader, longfmt, node, reasons, summarize, verbose;
    const char *format;     /* -o */
    const char *partitions; /* -p "a,b" */
    const char *nodes_text; /* -n */
    const char *states_text;
    struct hostlist *nodes;
    uint32_t states;
};

static void help(void)
{
    printf("Usage: sinfo [OPTIONS]\n"
           "  -a, --all                  show all partitions (including hidden and those\n"
           "\t\t\t     not accessible)\n"
           "  -d, --dead                 show only non-responding nodes\n"
           "  -e, --exact                group nodes only on exact match of configuration\n"
           "  -h, --noheader             no headers on output\n"
           "  --hide                     do not show hidden or non-accessible partitions\n"
           "  -l, --long                 long output - displays more information\n"
           "  -n, --nodes=NODES          report on specific node(s)\n"
           "  -N, --Node                 Node-centric format\n"
           "  -o, --format=format        format specification\n"
           "  -p, --partition=PARTITION  report on specific partition\n"
           "  -r, --responding           report only responding nodes\n"
           "  -R, --list-reasons         list reason nodes are down or drained\n"
           "  -s, --summarize            report state summary only\n"
           "  -t, --states=node_state    specify the what states of nodes to view\n"
           "  -v, --verbose              verbosity level\n"
           "  -V, --version              output version information and exit\n"
           "\nHelp options:\n"
           "  --help                     show this help message\n"
           "  --usage                    display brief usage message\n");
}

static void usage(void)
{
    printf("Usage: sinfo [-adelNRrsv] [-t states] [-p partition] [-n nodes] [-o format]\n");
}

enum { OPT_HELP = 0x100, OPT_USAGE, OPT_HIDE };

static int set_nodes(struct options *o, const char *text)
{
    hostlist_destroy(o->nodes);
    o->nodes = NULL;
    o->nodes_text = text;
    if (hostlist_expand(text, &o->nodes) != TS_OK) {
        cmd_error(PROG, "'%s' invalid entry for --nodes", text);
        return -1;
    }
    return 0;
}

/* One option; -1 on a bad one (already reported). */
static int take_option(struct options *o, int ch)
{
    switch (ch) {
    case 'a': o->all = 1; break;
    case 'd': o->dead = 1; break;
    case 'e': o->exact = 1; break;
    case 'h': o->noheader = 1; break;
    case 'l': o->longfmt = 1; break;
    case 'n': return set_nodes(o, optarg);
    case 'N': o->node = 1; break;
    case 'o': o->format = optarg; break;
    case 'p': o->partitions = optarg; break;
    case 'r': o->responding = 1; break;
    case 'R': o->reasons = 1; break;
    case 's': o->summarize = 1; break;
    case 't': o->states_text = optarg; break;
    case 'v': o->verbose++; break;
    case OPT_HIDE: o->all = 0; break; /* nothing is hidden in Tessera */
    case 'V': puts(TESSERA_VERSION_LINE); exit(0);
    case OPT_HELP: help(); exit(0);
    case OPT_USAGE: usage(); exit(0);
    default: fprintf(stderr, "Try \"sinfo --help\" for more information\n"); return -1;
    }
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"all", no_argument, NULL, 'a'},           {"dead", no_argument, NULL, 'd'},
        {"exact", no_argument, NULL, 'e'},         {"noheader", no_argument, NULL, 'h'},
        {"long", no_argument, NULL, 'l'},          {"nodes", required_argument, NULL, 'n'},
        {"Node", no_argument, NULL, 'N'},          {"format", required_argument, NULL, 'o'},
        {"partition", required_argument, NULL, 'p'}, {"responding", no_argument, NULL, 'r'},
        {"list-reasons", no_argument, NULL, 'R'},  {"summarize", no_argument, NULL, 's'},
        {"states", required_argument, NULL, 't'},  {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},       {"help", no_argument, NULL, OPT_HELP},
        {"usage", no_argument, NULL, OPT_USAGE},   {"hide", no_argument, NULL, OPT_HIDE},
        {NULL, 0, NULL, 0},
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "adehln:No:p:rRst:vV", longopts, NULL)) != -1)
        if (take_option(o, ch))
            return -1;
    if (optind < argc) {
        cmd_error(PROG, "Unrecognized option: %s", argv[optind]);
        return -1;
    }
    return 0;
}

/* The checks Slurm makes once every option is read. */
static int check_options(struct options *o)
{
    char bad[256];
    const char *states = o->states_text ? o->states_text : o->reasons ? REASON_STATES : NULL;

    if (o->all && o->partitions) {
        cmd_error(PROG, "Conflicting options, -a and -p, specified. Please choose one or "
                        "the other.");
        return -1;
    }
    if (o->format && o->longfmt) {
        fprintf(stderr, "%s: fatal: Options -o(--format) and -l(--long) are mutually "
                        "exclusive. Please remove one and retry.\n", PROG);
        return -1;
    }
    if (states && nodefmt_states_parse(states, &o->states, bad, sizeof(bad)) != TS_OK) {
        cmd_error(PROG, "Bad state string: \"%s\"", bad);
        cmd_error(PROG, "valid states: %s", nodefmt_states_valid());
        return -1;
    }
    return 0;
}

/* sinfo's choice of layout, in Slurm's order of precedence. */
static const char *pick_format(const struct options *o)
{
    const char *env = getenv("SINFO_FORMAT");

    if (o->format)
        return o->format;
    if (o->summarize)
        return NODEFMT_SINFO_SUMMARIZE;
    if (o->node)
        return o->longfmt ? NODEFMT_SINFO_NODES_LONG : NODEFMT_SINFO_NODES;
    if (o->reasons)
        return o->longfmt ? NODEFMT_SINFO_REASONS_LONG : NODEFMT_SINFO_REASONS;
    if (env && *env)
        return env;
    return o->longfmt ? NODEFMT_SINFO_LONG : NODEFMT_SINFO_DEFAULT;
}

static const char *yes_no(int v)
{
    return v ? "true" : "false";
}

/* -v: the settings, in the layout of Slurm's dump. */
static void print_settings(const struct options *o, const char *format)
{
    printf("-----------------------------\n");
    printf("dead        = %s\nexact       = %d\n", yes_no(o->dead), o->exact);
    printf("filtering   = %s\n", yes_no(o->dead || o->responding || o->nodes_text ||
                                        o->partitions || o->states_text || o->reasons));
    printf("format      = %s\niterate     = 0\n", format);
    printf("long        = %s\nno_header   = %s\n", yes_no(o->longfmt), yes_no(o->noheader));
    printf("node_field  = %s\n", yes_no(strstr(format, "%#N") != NULL));
    printf("node_format = %s\n", yes_no(o->node));
    printf("nodes       = %s\n", o->nodes_text ? o->nodes_text : "n/a");
    printf("part_field  = %s\n", yes_no(strstr(format, "#P") != NULL));
    printf("partition   = %s\n", o->partitions ? o->partitions : "n/a");
    printf("responding  = %s\n", yes_no(o->responding));
    printf("states      = %s\nsort        = (null)\n",
           o->states_text ? o->states_text : o->reasons ? REASON_STATES : "(null)");
    printf("summarize   = %s\nverbose     = %d\n", yes_no(o->summarize), o->verbose);
    printf("-----------------------------\n\n");
}

/* One request; NULL after printing Slurm's "slurm_load_...: why". */
static Tessera__Response *call(struct ctl *ctl, Tessera__Request *req, const char *what)
{
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(ctl, req, &resp);

    if (err) {
        fprintf(stderr, "%s: %s\n", what,
                err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                                   : ts_strerror(err));
        return NULL;
    }
    if (resp->error) {
        fprintf(stderr, "%s: %s\n", what, resp->error->text);
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

static Tessera__Response *load_partitions(struct ctl *ctl)
{
    Tessera__PartitionQueryRequest q = TESSERA__PARTITION_QUERY_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;

    req.msg_case = TESSERA__REQUEST__MSG_PARTITION_QUERY;
    req.partition_query = &q;
    return call(ctl, &req, "slurm_load_partitions");
}

static Tessera__Response *load_nodes(struct ctl *ctl)
{
    Tessera__NodeQueryRequest q = TESSERA__NODE_QUERY_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;

    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &q;
    return call(ctl, &req, "slurm_load_node");
}

/* Whether name is one of the comma separated list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");

        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static size_t pick_partitions(const struct options *o, Tessera__PartitionQueryResponse *pq,
                              Tessera__PartitionInfo **out)
{
    size_t n = 0;

    for (size_t i = 0; i < pq->n_partitions; i++)
        if (!o->partitions || listed(o->partitions, pq->partitions[i]->name))
            out[n++] = pq->partitions[i];
    return n;
}

static int node_wanted(const struct options *o, const Tessera__NodeInfo *node)
{
    if (o->nodes && hostlist_find(o->nodes, node->name) < 0)
        return 0;
    if (o->dead && nodefmt_node_responding(node))
        return 0;
    if (o->responding && !nodefmt_node_responding(node))
        return 0;
    return nodefmt_states_match(o->states, node);
}

static size_t pick_nodes(const struct options *o, Tessera__NodeQueryResponse *nq,
                         Tessera__NodeInfo **out)
{
    size_t n = 0;

    for (size_t i = 0; i < nq->n_nodes; i++)
        if (node_wanted(o, nq->nodes[i]))
            out[n++] = nq->nodes[i];
    return n;
}

static void print_date(time_t now)
{
    char when[64];
    struct tm tm;

    strftime(when, sizeof(when), "%a %b %d %H:%M:%S %Y", localtime_r(&now, &tm));
    printf("%s\n", when);
}

static int print_table(const struct options *o, const struct nodefmt *fmt,
                       Tessera__PartitionQueryResponse *pq, Tessera__NodeQueryResponse *nq)
{
    Tessera__PartitionInfo **parts = calloc(pq->n_partitions + 1, sizeof(*parts));
    Tessera__NodeInfo **nodes = calloc(nq->n_nodes + 1, sizeof(*nodes));
    struct nodefmt_sinfo_opts opts = {.node_oriented = o->node, .noheader = o->noheader,
                                      .exact = o->exact, .list_reasons = o->reasons};
    char *text = NULL;

    if (parts && nodes) {
        size_t np = pick_partitions(o, pq, parts), nn = pick_nodes(o, nq, nodes);

        text = nodefmt_sinfo_table(fmt, parts, np, nodes, nn, &opts);
    }
    if (text && !o->noheader && (o->longfmt || o->verbose))
        print_date(nq->now ? (time_t)nq->now : time(NULL));
    if (text)
        fputs(text, stdout);
    else
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
    free(text);
    free(parts);
    free(nodes);
    return text ? 0 : 1;
}

static int run(const struct options *o, const struct nodefmt *fmt)
{
    struct ctl ctl = {0};
    Tessera__Response *presp = NULL, *nresp = NULL;
    int rc = 1;

    if (ctl_load_conf(&ctl, PROG, NULL) == 0 && (presp = load_partitions(&ctl)) &&
        (nresp = load_nodes(&ctl))) {
        if (presp->partition_query && nresp->node_query)
            rc = print_table(o, fmt, presp->partition_query, nresp->node_query);
        else /* an answer of another kind: a controller this command does not know */
            fprintf(stderr, "slurm_load_node: %s\n", ts_strerror(TS_EPROTO));
    }
    if (presp)
        tessera__response__free_unpacked(presp, NULL);
    if (nresp)
        tessera__response__free_unpacked(nresp, NULL);
    ctl_close(&ctl);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o = {0};
    struct nodefmt *fmt = NULL;
    char err[256];
    const char *format;
    int rc = 1;

    argv[0] = (char *)PROG;
    if (parse_options(argc, argv, &o) || check_options(&o))
        goto out;
    format = pick_format(&o);
    if (nodefmt_compile(format, &fmt, err, sizeof(err)) != TS_OK) {
        cmd_error(PROG, "%s", err);
        goto out;
    }
    if (o.verbose)
        print_settings(&o, format);
    rc = run(&o, fmt);
out:
    nodefmt_free(fmt);
    hostlist_destroy(o.nodes);
    return rc;
}
