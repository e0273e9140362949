/* sbcast: copy a file to the nodes of a running job (docs/protocol.md, "File broadcast").
 *
 * The job is SLURM_JOB_ID's, or --jobid's: "93" (every node of the job), "93+1" or "93.1"
 * (the nodes of component 1 of het job 93: the source document's spelling). The
 * controller hands a signed credential for the job's user and nodes; each node daemon
 * checks it and writes the blocks as the user. A node that refuses is reported as Slurm
 * does ("sbcast: error: REQUEST_FILE_BCAST(n1): File exists") and left out of the
 * following blocks; the exit status is the errno of the last failure (1 for a refusal
 * that has none). Nodes are served one after the other: -F is accepted and has no
 * effect, as -C (the file travels uncompressed). */
#include "cmds/cmdutil.h"

#include "common/auth/auth.h"
#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_conf.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "sbcast"
/* Slurm's default block; node daemons take at most this much in one request. */
#define BLOCK_DEFAULT (8u << 20)
/* A node daemon gives a block's writer a minute: wait a little longer by default. */
#define NODE_TIMEOUT_DEFAULT_S 90

struct options {
    const char *job_id;
    int force, preserve, verbose;
    size_t block;
    int timeout_s;
    const char *source;
    const char *dest_arg; /* DEST as given */
    char dest[PATH_MAX];  /* made absolute */
};

/* One node daemon: its line, and whether it still takes blocks. */
struct target {
    const Tessera__BcastNode *node;
    struct rpc_client *cli;
    int failed;
};

struct transfer {
    struct options *o;
    struct ctl ctl;
    Tessera__Response *cred;  /* the current credential (a bcast_cred response) */
    time_t cred_at;           /* when it was obtained (this clock) */
    struct target *targets;
    size_t ntargets;
    int fd;
    struct stat st;
    int rc;                   /* the exit status so far */
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: sbcast [OPTIONS] SOURCE DEST\n"
                 "  -C, --compress[=lib]  accepted; the file is sent uncompressed\n"
                 "  -f, --force           replace destination file as required\n"
                 "  -F, --fanout=num      accepted; nodes are served one after the other\n"
                 "  -j, --jobid=#[+#][.#] specify job ID with optional hetjob offset\n"
                 "  -p, --preserve        preserve modes and times of source file\n"
                 "  -s, --size=num        block size in bytes (rounded off)\n"
                 "  -t, --timeout=secs    specify message timeout (seconds)\n"
                 "  -v, --verbose         provide detailed event logging\n"
                 "  -V, --version         print version information and exit\n");
}

/* "-s 512k": Slurm's block size (k, m suffixes); 0 when invalid. At most BLOCK_DEFAULT. */
static size_t parse_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno || end == s || !isdigit((unsigned char)*s))
        return 0;
    unsigned long long unit = 1;
    if (*end == 'k' || *end == 'K')
        unit = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        unit = 1024 * 1024, end++;
    if (*end)
        return 0;
    if (n > BLOCK_DEFAULT / unit)
        return BLOCK_DEFAULT;
    return (size_t)(n * unit);
}

static int parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"compress", optional_argument, NULL, 'C'}, {"force", no_argument, NULL, 'f'},
        {"fanout", required_argument, NULL, 'F'},   {"jobid", required_argument, NULL, 'j'},
        {"preserve", no_argument, NULL, 'p'},       {"size", required_argument, NULL, 's'},
        {"timeout", required_argument, NULL, 't'},  {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, 'V'},        {"help", no_argument, NULL, 'h'},
        {"usage", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "C::fF:j:ps:t:vVh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'C': case 'F': break;
        case 'f': o->force = 1; break;
        case 'j': o->job_id = optarg; break;
        case 'p': o->preserve = 1; break;
        case 's':
            if (!(o->block = parse_size(optarg)))
                fprintf(stderr, "size specification is invalid, ignored\n");
            break;
        case 't': o->timeout_s = atoi(optarg); break;
        case 'v': o->verbose++; break;
        case 'V': puts(TESSERA_VERSION_LINE); exit(0);
        case 'h': usage(stdout); exit(0);
        default: fprintf(stderr, "Try \"sbcast --help\" for more information\n"); return 1;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "Need two file names, have %d names\n", argc - optind);
        fprintf(stderr, "Try \"sbcast --help\" for more information\n");
        return 1;
    }
    o->source = argv[optind];
    o->dest_arg = argv[optind + 1];
    return 0;
}

/* DEST on the nodes: relative to this command's working folder, as Slurm's. */
static int set_dest(struct options *o, const char *dest)
{
    char cwd[PATH_MAX];
    int n;
    if (dest[0] == '/')
        n = snprintf(o->dest, sizeof(o->dest), "%s", dest);
    else if (getcwd(cwd, sizeof(cwd)))
        n = snprintf(o->dest, sizeof(o->dest), "%s/%s", cwd, dest);
    else
        n = -1;
    if (n < 0 || (size_t)n >= sizeof(o->dest)) {
        cmd_error(PROG, "Destination file name `%s` is too long", dest);
        return 1;
    }
    return 0;
}

/* "93.1" is the source document's "93+1". */
static const char *job_text(const char *id, char *buf, size_t len)
{
    snprintf(buf, len, "%s", id);
    char *dot = strchr(buf, '.');
    if (dot && !strchr(buf, '+'))
        *dot = '+';
    return buf;
}

/* ------------------------------------------------------------------------------------ */
/* the credential */

static int get_credential(struct transfer *t)
{
    char id[64];
    Tessera__BcastCredRequest bc = TESSERA__BCAST_CRED_REQUEST__INIT;
    bc.job_id = (char *)job_text(t->o->job_id, id, sizeof(id));
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_BCAST_CRED;
    req.bcast_cred = &bc;
    Tessera__Response *resp = NULL;
    int err = ctl_call(&t->ctl, &req, &resp);
    if (err) {
        cmd_error(PROG, "%s", err == TS_ECONNECT
                                  ? "Unable to contact slurm controller (connect failure)"
                                  : ctl_error_text(&t->ctl)[0] ? ctl_error_text(&t->ctl)
                                                               : ts_strerror(err));
        return 1;
    }
    if (resp->error || resp->msg_case != TESSERA__RESPONSE__MSG_BCAST_CRED ||
        !resp->bcast_cred->cred) {
        cmd_error(PROG, "Slurm job %s lookup error: %s", t->o->job_id,
                  resp->error ? resp->error->text : "unexpected answer");
        tessera__response__free_unpacked(resp, NULL);
        return 255;
    }
    if (t->cred)
        tessera__response__free_unpacked(t->cred, NULL);
    t->cred = resp;
    t->cred_at = time(NULL);
    return 0;
}

/* A credential lives CRED_BCAST_LIFETIME seconds: a long transfer takes a new one
 * halfway (its nodes are the same while the job runs). */
static int fresh_credential(struct transfer *t)
{
    if (time(NULL) - t->cred_at < CRED_BCAST_LIFETIME / 2)
        return 0;
    return get_credential(t);
}

static int make_targets(struct transfer *t)
{
    const Tessera__BcastCredential *c = t->cred->bcast_cred->cred;
    t->targets = calloc(c->n_nodes ? c->n_nodes : 1, sizeof(*t->targets));
    if (!t->targets)
        return 1;
    t->ntargets = c->n_nodes;
    for (size_t i = 0; i < c->n_nodes; i++)
        t->targets[i].node = c->nodes[i];
    if (t->o->verbose)
        fprintf(stderr, "sbcast: jobid      : %s\nsbcast: node_cnt   : %zu\n", t->o->job_id,
                c->n_nodes);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the blocks */

static void node_failed(struct transfer *t, struct target *tg, const char *text, int rc)
{
    cmd_error(PROG, "REQUEST_FILE_BCAST(%s): %s", tg->node->name, text);
    tg->failed = 1;
    t->rc = rc;
}

static int connect_node(struct transfer *t, struct target *tg)
{
    if (tg->cli)
        return TS_OK;
    char name[AUTH_TARGET_MAX];
    struct rpc_client_config cfg = {
        .host = tg->node->addr,
        .port = (uint16_t)tg->node->port,
        .server_uid = t->ctl.conf->noded_user_uid,
        .target = rpc_name_noded(t->ctl.conf, tg->node->name, name, sizeof(name)),
    };
    rpc_conf_client(t->ctl.conf, &cfg);
    cfg.timeout_ms = (t->o->timeout_s > 0 ? t->o->timeout_s : NODE_TIMEOUT_DEFAULT_S) * 1000;
    return rpc_client_connect(&cfg, &tg->cli);
}

static void send_block(struct transfer *t, struct target *tg, Tessera__FileBcastRequest *fb)
{
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_FILE_BCAST;
    req.file_bcast = fb;
    Tessera__Response *resp = NULL;
    int err = connect_node(t, tg);
    if (!err)
        err = rpc_client_call(tg->cli, &req, &resp);
    if (err) {
        const char *why = tg->cli ? rpc_client_error_text(tg->cli) : "";
        node_failed(t, tg, why[0] ? why : ts_strerror(err), 1);
    } else if (resp->error) {
        node_failed(t, tg, resp->error->text, 1);
    } else if (resp->msg_case != TESSERA__RESPONSE__MSG_FILE_BCAST) {
        node_failed(t, tg, "unexpected answer", 1);
    } else if (resp->file_bcast->errnum) {
        int e = resp->file_bcast->errnum;
        node_failed(t, tg, strerror(e), e & 0xff);
    }
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
}

static int transfer_blocks(struct transfer *t)
{
    size_t bs = t->o->block ? t->o->block : BLOCK_DEFAULT;
    uint8_t *buf = malloc(bs);
    if (!buf)
        return 1;
    uint64_t off = 0;
    for (int last = 0; !last;) {
        ssize_t n = pread(t->fd, buf, bs, (off_t)off);
        if (n < 0) {
            cmd_error(PROG, "Can't read `%s`: %s", t->o->source, strerror(errno));
            free(buf);
            return 1;
        }
        last = n == 0 || off + (uint64_t)n >= (uint64_t)t->st.st_size;
        if (fresh_credential(t)) {
            free(buf);
            return 255;
        }
        Tessera__FileBcastRequest fb = TESSERA__FILE_BCAST_REQUEST__INIT;
        fb.credential = t->cred->bcast_cred->credential;
        fb.signature = t->cred->bcast_cred->signature;
        fb.path = t->o->dest;
        fb.mode = (uint32_t)(t->st.st_mode & 0777);
        fb.offset = off;
        fb.data.data = buf;
        fb.data.len = (size_t)n;
        fb.force = t->o->force;
        fb.last = last;
        fb.preserve = t->o->preserve;
        fb.atime = t->st.st_atim.tv_sec;
        fb.mtime = t->st.st_mtim.tv_sec;
        for (size_t i = 0; i < t->ntargets; i++)
            if (!t->targets[i].failed)
                send_block(t, &t->targets[i], &fb);
        off += (uint64_t)n;
    }
    free(buf);
    return t->rc;
}

/* ------------------------------------------------------------------------------------ */

static int open_source(struct transfer *t)
{
    t->fd = open(t->o->source, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
        cmd_error(PROG, "Can't open `%s`: %s", t->o->source, strerror(errno));
        return 255;
    }
    if (fstat(t->fd, &t->st) != 0 || !S_ISREG(t->st.st_mode)) {
        cmd_error(PROG, "Can't mmap file `%s`, %s.", t->o->source, strerror(ENODEV));
        return 255;
    }
    return 0;
}

static void transfer_fini(struct transfer *t)
{
    for (size_t i = 0; i < t->ntargets; i++)
        rpc_client_close(t->targets[i].cli);
    free(t->targets);
    if (t->cred)
        tessera__response__free_unpacked(t->cred, NULL);
    if (t->fd >= 0)
        close(t->fd);
    ctl_close(&t->ctl);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse_args(argc, argv, &o) || set_dest(&o, o.dest_arg))
        return 1;
    if (!o.job_id)
        o.job_id = getenv("SLURM_JOB_ID");
    if (!o.job_id || !*o.job_id) {
        cmd_error(PROG, "Need a job id to run this command.  Run from within a Slurm job or "
                        "use the --jobid option.");
        return 1;
    }
    struct transfer t = {.o = &o, .fd = -1};
    int rc = open_source(&t);
    if (!rc)
        rc = ctl_load_conf(&t.ctl, PROG, NULL);
    if (!rc)
        rc = get_credential(&t);
    if (!rc)
        rc = make_targets(&t);
    if (!rc)
        rc = transfer_blocks(&t);
    transfer_fini(&t);
    return rc;
}
