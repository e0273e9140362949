#include "cmds/cmdutil.h"

#include "common/conf/conf.h"
#include "common/jobopt/jobopt.h"
#include "common/rpc/rpc_client.h"
#include "common/rpc/rpc_conf.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void cmd_error(const char *prog, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: error: %s\n", prog, line);
}

int cmd_option_failure(const char *prog, const char *submit_failed, int err, const char *msg)
{
    if (err == TS_EOPTION) {
        fprintf(stderr, "%s: %s\nTry \"%s --help\" for more information\n", prog, msg, prog);
        return 255;
    }
    if (err == TS_EDEPENDENCY || err == TS_EJOB_ARRAY) {
        cmd_error(prog, "%s: %s", submit_failed, msg);
    } else {
        for (const char *line = msg; *line;) { /* each line of a longer text its own */
            size_t len = strcspn(line, "\n");
            cmd_error(prog, "%.*s", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
    return err == TS_EOPTSPEC ? 255 : 1;
}

int cmd_job_main(const struct cmd_start *start, int argc, char **argv)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd))) {
        cmd_error(start->prog, "cannot determine the working directory");
        return 1;
    }
    argv[0] = (char *)start->prog;
    struct jobopt_input in = {.cmd = start->cmd, .argc = argc, .argv = argv, .envp = environ,
                              .now = time(NULL), .cwd = cwd};
    struct jobopt opt;
    char msg[1024];
    int err = jobopt_parse(&in, &opt, msg, sizeof(msg));
    if (err)
        return cmd_option_failure(start->prog, start->submit_failed, err, msg);
    int rc = 0;
    if (opt.help)
        start->usage(stdout);
    else if (opt.version)
        puts(TESSERA_VERSION_LINE);
    else
        rc = start->run(&opt, &in);
    jobopt_free(&opt);
    return rc;
}

void cmd_fit_nodes_to_tasks(const char *prog, struct jobopt *opt)
{
    for (size_t i = 0; i < opt->ncomponents; i++) {
        Tessera__JobDesc *d = opt->components[i];
        if (!d->has_ntasks || !d->has_min_nodes || d->ntasks >= d->min_nodes)
            continue;
        fprintf(stderr, "%s: Warning: can't run %u processes on %u nodes, setting nnodes to %u\n",
                prog, d->ntasks, d->min_nodes, d->ntasks);
        d->min_nodes = d->ntasks;
        if (d->has_max_nodes && d->max_nodes > d->ntasks)
            d->max_nodes = d->ntasks;
    }
}

void cmd_refusal_detail(const char *prog, Tessera__JobDesc *const *components, size_t n,
                        const Tessera__Error *e)
{
    if (!e || e->code != TS_EINVALID_PARTITION)
        return;
    unsigned long which = 0;
    if (e->text && strncmp(e->text, "component ", 10) == 0)
        which = strtoul(e->text + 10, NULL, 10);
    if (which < n && components[which]->partition && *components[which]->partition)
        cmd_error(prog, "invalid partition specified: %s", components[which]->partition);
}

int ctl_load_conf(struct ctl *ctl, const char *prog, const char *conf_path)
{
    memset(ctl, 0, sizeof(*ctl));
    ctl->prog = prog;
    char err[1024];
    if (conf_load(conf_locate(conf_path), &ctl->conf, err, sizeof(err)) != TS_OK) {
        cmd_error(prog, "%s", err);
        return 1;
    }
    return 0;
}

int ctl_connect(struct ctl *ctl)
{
    if (ctl->cli)
        return TS_OK;
    char name[AUTH_TARGET_MAX];
    struct rpc_client_config cfg = {
        .host = ctl->conf->ctld_host,
        .port = ctl->conf->ctld_port,
        .server_uid = ctl->conf->slurm_user_uid,
        .target = rpc_name_ctld(ctl->conf, name, sizeof(name)),
    };
    rpc_conf_client(ctl->conf, &cfg);
    return rpc_client_connect(&cfg, &ctl->cli);
}

/* The longest a submission's filters may take (docs/05-filters.md §2.7: the client waits for the
 * whole chain): the longest chain of any partition, each filter and its undo to its time-out. */
static int submit_timeout_ms(const struct conf *conf)
{
    size_t longest = 0;
    for (size_t i = 0; i <= conf->npartitions; i++) {
        char **paths;
        size_t n;
        const struct conf_partition *p = i < conf->npartitions ? &conf->partitions[i] : NULL;
        if (conf_filters(conf, p, CONF_FILTER_SUBMIT, &paths, &n) == TS_OK) {
            longest = n > longest ? n : longest;
            conf_filters_free(paths, n);
        }
    }
    long ms = (long)conf->message_timeout * 1000 + (long)longest * 2 * conf->filter_timeout * 1000;
    return longest ? (int)(ms + 5000 < 3600000 ? ms + 5000 : 3600000) : (int)ms;
}

int ctl_call(struct ctl *ctl, const Tessera__Request *req, Tessera__Response **resp)
{
    *resp = NULL;
    int err = ctl_connect(ctl);
    if (err)
        return err;
    int submit = req->msg_case == TESSERA__REQUEST__MSG_SUBMIT;
    if (submit)
        rpc_client_set_timeout(ctl->cli, submit_timeout_ms(ctl->conf));
    err = rpc_client_call(ctl->cli, req, resp);
    if (submit && ctl->cli)
        rpc_client_set_timeout(ctl->cli, (int)ctl->conf->message_timeout * 1000);
    return err;
}

/* ---- answers in pages (docs/protocol.md, "Pages") ------------------------------------ */

/* The records of a page of a job, step or node answer, and where they are counted. */
static void ***page_items(Tessera__Response *r, size_t **n)
{
    switch (r->msg_case) {
    case TESSERA__RESPONSE__MSG_JOB_QUERY:
        *n = &r->job_query->n_jobs;
        return (void ***)&r->job_query->jobs;
    case TESSERA__RESPONSE__MSG_STEP_QUERY:
        *n = &r->step_query->n_steps;
        return (void ***)&r->step_query->steps;
    case TESSERA__RESPONSE__MSG_NODE_QUERY:
        *n = &r->node_query->n_nodes;
        return (void ***)&r->node_query->nodes;
    default:
        return NULL;
    }
}

/* Move the cursor of req past page; 0 when page was the last. */
static int next_page(Tessera__Request *req, const Tessera__Response *page)
{
    switch (page->msg_case) {
    case TESSERA__RESPONSE__MSG_JOB_QUERY: {
        const Tessera__JobQueryResponse *r = page->job_query;
        if (!r->more || r->n_jobs == 0)
            return 0;
        req->job_query->after_job_id = r->jobs[r->n_jobs - 1]->job_id;
        return 1;
    }
    case TESSERA__RESPONSE__MSG_STEP_QUERY: {
        const Tessera__StepQueryResponse *r = page->step_query;
        if (!r->more || r->n_steps == 0)
            return 0;
        req->step_query->after_job_id = r->steps[r->n_steps - 1]->job_id;
        req->step_query->after_step_id = r->steps[r->n_steps - 1]->step_id;
        return 1;
    }
    case TESSERA__RESPONSE__MSG_NODE_QUERY: {
        const Tessera__NodeQueryResponse *r = page->node_query;
        if (!r->more || r->next_index <= req->node_query->start_index)
            return 0;
        req->node_query->start_index = r->next_index;
        return 1;
    }
    default:
        return 0;
    }
}

/* The records of page join those of whole (which then owns them); page is freed. */
static int adopt(Tessera__Response *whole, Tessera__Response *page)
{
    size_t *nw = NULL, *np = NULL;
    void ***w = page_items(whole, &nw), ***pi = page_items(page, &np);
    if (!w || !pi || page->msg_case != whole->msg_case)
        return TS_EPROTO;
    void **grown = realloc(*w, (*nw + *np + 1) * sizeof(*grown));
    if (!grown)
        return TS_ENOMEM;
    if (*np)
        memcpy(grown + *nw, *pi, *np * sizeof(*grown));
    *w = grown;
    *nw += *np;
    *np = 0; /* the records belong to whole now */
    tessera__response__free_unpacked(page, NULL);
    return TS_OK;
}

int ctl_call_pages(struct ctl *ctl, Tessera__Request *req, Tessera__Response **resp)
{
    Tessera__Response *whole = NULL;
    int err = ctl_call(ctl, req, &whole);
    int more = !err && !whole->error && next_page(req, whole);
    while (!err && more) {
        Tessera__Response *page = NULL;
        if ((err = ctl_call(ctl, req, &page)) != TS_OK)
            break;
        if (page->error) { /* the refusal is the answer */
            tessera__response__free_unpacked(whole, NULL);
            whole = page;
            break;
        }
        more = next_page(req, page);
        if ((err = adopt(whole, page)) != TS_OK)
            tessera__response__free_unpacked(page, NULL);
    }
    if (err && whole) {
        tessera__response__free_unpacked(whole, NULL);
        whole = NULL;
    }
    *resp = whole;
    return err;
}

const char *ctl_error_text(const struct ctl *ctl)
{
    return ctl->cli ? rpc_client_error_text(ctl->cli) : "";
}

void ctl_disconnect(struct ctl *ctl)
{
    rpc_client_close(ctl->cli);
    ctl->cli = NULL;
}

int cmd_id_of(enum namecache_kind kind, const char *text, uint32_t *id)
{
    if (namecache_nss_id(kind, text, id) == 1)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long v = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
    if (!end || *end || errno || v > UINT32_MAX)
        return -1;
    *id = (uint32_t)v;
    return 0;
}

int cmd_set_origin(const struct jobopt *opt, const char *cwd)
{
    char host[256];
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    for (size_t i = 0; i < opt->ncomponents; i++) {
        Tessera__JobDesc *d = opt->components[i];
        free(d->submit_dir);
        free(d->submit_host);
        d->submit_dir = strdup(cwd);
        d->submit_host = strdup(host);
        if (!d->submit_dir || !d->submit_host)
            return TS_ENOMEM;
    }
    return TS_OK;
}

void ctl_close(struct ctl *ctl)
{
    rpc_client_close(ctl->cli);
    ctl->cli = NULL;
    conf_free(ctl->conf);
    ctl->conf = NULL;
}

int cmd_list_add(struct cmd_list *l, const char *item)
{
    char **grown = realloc(l->items, (l->n + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    l->items = grown;
    if (!(grown[l->n] = strdup(item)))
        return -1;
    l->n++;
    return 0;
}

int cmd_list_add_split(struct cmd_list *l, const char *text)
{
    char *copy = strdup(text), *save = NULL;
    int err = copy ? 0 : -1;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !err;
         t = strtok_r(NULL, ",", &save))
        err = cmd_list_add(l, t);
    free(copy);
    return err;
}

void cmd_list_free(struct cmd_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}
