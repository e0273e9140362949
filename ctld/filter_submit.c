/* Submission filters: one chain per component, the components' chains side by side.
 *
 * Each component's description goes to a JSON file in StateSaveLocation/filters; each
 * filter of its chain (the partition's, then the cluster's) runs on it in turn: exit 0
 * passes it on as it is, 1 passes on the file as the filter rewrote it (read back and
 * checked: the filter may not change who submitted), anything else, a time-out or a
 * missing filter refuses the whole job. Once a chain fails, the chains still running stop
 * after their current filter, and every filter that passed a component is run again with
 * "--undo", last first, before the refusal is sent. When every chain passed, the job is
 * submitted as the filters left it, if the submitter is still there to hear of it. */
#include "ctld/filter_submit.h"

#include "ctld/ctld.h"
#include "ctld/filter_run.h"
#include "ctld/job.h"
#include "ctld/rpc.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/pbutil.h"
#include "ctld/jobjson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct chain {
    struct filter_submission *fs;
    size_t index;          /* the component */
    char **paths;
    size_t n;
    size_t passed;         /* filters 0..passed-1 passed it */
    size_t undo_left;      /* undo: filters still to undo (passed-1 down to 0) */
    int running;
    char json[1024];
};

struct filter_submission {
    struct ctld *c;
    struct filter_submission *next;
    struct rpc_request *req;
    Tessera__SubmitRequest *sub;   /* a copy; components replaced as filters rewrite them */
    uid_t uid;
    gid_t gid;
    char host[64];
    char what[64];
    struct chain *chains;
    size_t n;
    int err;                        /* the refusal (TS_OK while all goes well) */
    char why[512];
    int undoing;
};

static unsigned long submission_seq;

static void fs_free(struct filter_submission *fs)
{
    for (size_t i = 0; fs->chains && i < fs->n; i++) {
        if (fs->chains[i].json[0])
            unlink(fs->chains[i].json);
        conf_filters_free(fs->chains[i].paths, fs->chains[i].n);
    }
    free(fs->chains);
    if (fs->sub)
        tessera__submit_request__free_unpacked(fs->sub, NULL);
    free(fs);
}

static void fs_unlink(struct filter_submission *fs)
{
    for (struct filter_submission **p = &fs->c->submissions; *p; p = &(*p)->next) {
        if (*p == fs) {
            *p = fs->next;
            return;
        }
    }
}

static int write_json(const char *path, const Tessera__JobDesc *d)
{
    char *text = jobjson_dump(d);
    if (!text)
        return TS_EINVAL; /* not UTF-8 (or out of memory) */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    free(text);
    return ok ? TS_OK : TS_ESYS;
}

/* The file a filter rewrote: a regular file (never a FIFO or a device that could stall
 * the loop), not followed through a link. */
static char *read_text(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (cap - len < 2) {
            if (cap > ((size_t)64 << 20)) { /* larger than any job: refuse it */
                free(buf);
                buf = NULL;
                break;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------------------ */
/* the end of it */

static int any_running(const struct filter_submission *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        if (fs->chains[i].running)
            return 1;
    return 0;
}

static void conclude(struct filter_submission *fs)
{
    struct ctld *c = fs->c;
    fs_unlink(fs);
    if (fs->err) {
        log_info("%s refused by a submission filter: %s", fs->what, fs->why);
        rpc_respond_error(fs->req, fs->err, fs->why);
    } else if (!rpc_request_peer_alive(fs->req)) {
        /* nobody would hear of the job: it is not created (its filters were undone) */
        log_info("%s: the submitter went away while its filters ran; no job", fs->what);
        rpc_respond_error(fs->req, TS_ECLOSED, NULL);
    } else {
        ctld_submit_finish(c, fs->req, fs->sub, fs->uid, fs->gid, fs->host);
    }
    fs_free(fs);
}

static void start_undo(struct filter_submission *fs);

static void undo_done(struct ctld *c, void *arg, const struct filter_result *r)
{
    (void)c;
    struct chain *ch = arg;
    struct filter_submission *fs = ch->fs;
    ch->running = 0;
    if (r->end != FILTER_EXITED || r->code != 0)
        log_warn("%s: undo of filter %s did not succeed", fs->what,
                 filter_name(ch->paths[ch->undo_left]));
    start_undo(fs);
}

/* Run the next undo of every chain that has one (last passed first); conclude once none
 * is left or running. */
static void start_undo(struct filter_submission *fs)
{
    for (size_t i = 0; i < fs->n; i++) {
        struct chain *ch = &fs->chains[i];
        while (!ch->running && ch->undo_left > 0) {
            size_t k = --ch->undo_left;
            const char *args[] = {ch->json, "--undo", NULL};
            if (filter_run_start(fs->c, ch->paths[k], args, fs->what, undo_done, ch) == TS_OK)
                ch->running = 1;
            else
                log_error("%s: cannot run filter %s --undo", fs->what, ch->paths[k]);
        }
    }
    if (!any_running(fs))
        conclude(fs);
}

/* Nothing more starts; once every chain has stopped, the passed filters are undone. */
static void fail(struct filter_submission *fs, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct filter_submission *fs, int err, const char *fmt, ...)
{
    if (fs->err)
        return; /* the first failure is the one reported */
    fs->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fs->why, sizeof(fs->why), fmt, ap);
    va_end(ap);
}

static void settle(struct filter_submission *fs)
{
    if (any_running(fs))
        return;
    if (!fs->err && !rpc_request_peer_alive(fs->req))
        fs->err = TS_ECLOSED; /* undo, and no job */
    if (fs->err) {
        if (fs->undoing)
            return;
        fs->undoing = 1;
        for (size_t i = 0; i < fs->n; i++)
            fs->chains[i].undo_left = fs->chains[i].passed;
        start_undo(fs);
        return;
    }
    for (size_t i = 0; i < fs->n; i++)
        if (fs->chains[i].passed < fs->chains[i].n)
            return; /* cannot happen: a chain stops running only when done or failed */
    /* the job as the filters left it must be one the submitter may submit: if not, it is
     * refused like a failure in the chain (with the undos) */
    struct job_sizing sizing;
    int admin = job_is_admin(fs->c, fs->uid);
    for (size_t i = 0; i < fs->n; i++) {
        int err = job_check_component(fs->c, fs->sub->components[i], i, admin, &sizing, NULL, 0);
        if (err) {
            fail(fs, err, "%s", ts_strerror(err));
            settle(fs);
            return;
        }
    }
    conclude(fs);
}

/* ------------------------------------------------------------------------------------ */
/* the chain */

static void run_next(struct chain *ch);

/* The filter rewrote the job (exit 1): take the file back as the component. */
static int take_rewrite(struct chain *ch, const char *name)
{
    struct filter_submission *fs = ch->fs;
    char *text = read_text(ch->json), why[256];
    Tessera__JobDesc *d = NULL;
    int err = text ? jobjson_parse(text, &d, why, sizeof(why)) : TS_ESYS;
    free(text);
    if (err) {
        fail(fs, TS_ESUBMIT_FILTER_INVALID, "%s (%s: %s)",
             ts_strerror(TS_ESUBMIT_FILTER_INVALID), name,
             err == TS_ESYS ? "its file cannot be read" : why);
        return err;
    }
    /* who submitted is the controller's to say: a filter cannot make it someone else */
    if ((d->has_user_id && d->user_id != (uint32_t)fs->uid) ||
        (d->has_group_id && d->group_id != (uint32_t)fs->gid)) {
        tessera__job_desc__free_unpacked(d, NULL);
        fail(fs, TS_ESUBMIT_FILTER_INVALID, "%s (%s: it may not change user_id or group_id)",
             ts_strerror(TS_ESUBMIT_FILTER_INVALID), name);
        return TS_EPERM;
    }
    d->has_user_id = d->has_group_id = 1;
    d->user_id = (uint32_t)fs->uid;
    d->group_id = (uint32_t)fs->gid;
    tessera__job_desc__free_unpacked(fs->sub->components[ch->index], NULL);
    fs->sub->components[ch->index] = d;
    return TS_OK;
}

static void filter_done(struct ctld *c, void *arg, const struct filter_result *r)
{
    (void)c;
    struct chain *ch = arg;
    struct filter_submission *fs = ch->fs;
    const char *name = filter_name(ch->paths[ch->passed]);
    ch->running = 0;
    if (r->end == FILTER_EXITED && (r->code == 0 || (r->code == 1 && !take_rewrite(ch, name)))) {
        ch->passed++;
        if (!fs->err)
            run_next(ch);
    } else if (r->end == FILTER_TIMEOUT) {
        fail(fs, TS_ESUBMIT_FILTER_TIMEOUT, "%s (%s)", ts_strerror(TS_ESUBMIT_FILTER_TIMEOUT),
             name);
    } else if (r->end == FILTER_NOT_FOUND) {
        fail(fs, TS_ESUBMIT_FILTER_NOT_FOUND, "%s (%s)",
             ts_strerror(TS_ESUBMIT_FILTER_NOT_FOUND), ch->paths[ch->passed]);
    } else if (r->end != FILTER_EXITED || r->code != 1) {
        fail(fs, TS_ESUBMIT_FILTER_FAILED, "%s (%s%s%s)", ts_strerror(TS_ESUBMIT_FILTER_FAILED),
             name, r->first_err[0] ? ": " : "", r->first_err);
    }
    settle(fs);
}

/* Start the chain's next filter, if it has one left. */
static void run_next(struct chain *ch)
{
    struct filter_submission *fs = ch->fs;
    if (ch->passed >= ch->n)
        return;
    const char *args[] = {ch->json, NULL};
    int err = filter_run_start(fs->c, ch->paths[ch->passed], args, fs->what, filter_done, ch);
    if (err)
        fail(fs, err, "%s (%s: %s)", ts_strerror(TS_ESUBMIT_FILTER_FAILED),
             filter_name(ch->paths[ch->passed]), ts_strerror(err));
    else
        ch->running = 1;
}

/* ------------------------------------------------------------------------------------ */
/* the start */

static const struct conf_partition *partition_of(const struct conf *conf,
                                                 const Tessera__JobDesc *d)
{
    return d->partition && *d->partition ? conf_find_partition(conf, d->partition)
                                         : conf_default_partition(conf);
}

/* The chains, and each component's file as the filters will see it (with who submitted
 * and from where). Returns the number of filters over all chains, or -1. */
static long prepare(struct filter_submission *fs)
{
    struct ctld *c = fs->c;
    char dir[900];
    if ((size_t)snprintf(dir, sizeof(dir), "%s/filters", c->conf->state_save_location) >=
        sizeof(dir))
        return -1;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    long total = 0;
    unsigned long seq = ++submission_seq;
    for (size_t i = 0; i < fs->n; i++) {
        struct chain *ch = &fs->chains[i];
        Tessera__JobDesc *d = fs->sub->components[i];
        ch->fs = fs;
        ch->index = i;
        if (conf_filters(c->conf, partition_of(c->conf, d), CONF_FILTER_SUBMIT, &ch->paths,
                         &ch->n))
            return -1;
        total += (long)ch->n;
    }
    if (total == 0)
        return 0;
    for (size_t i = 0; i < fs->n; i++) {
        struct chain *ch = &fs->chains[i];
        Tessera__JobDesc *d = fs->sub->components[i];
        d->has_user_id = d->has_group_id = 1;
        d->user_id = (uint32_t)fs->uid;
        d->group_id = (uint32_t)fs->gid;
        if (!d->submit_host || !*d->submit_host)
            pbutil_set_string(&d->submit_host, fs->host);
        snprintf(ch->json, sizeof(ch->json), "%s/submit-%lu-%zu.json", dir, seq, i);
        int err = write_json(ch->json, d);
        if (err)
            return err == TS_EINVAL ? -2 : -1;
    }
    return total;
}

int filter_submit_start(struct ctld *c, struct rpc_request *req,
                        const Tessera__SubmitRequest *sub, uid_t uid, gid_t gid,
                        const char *host)
{
    if (!c->conf->submit_filters) {
        int any = 0; /* only partitions may have some */
        for (size_t i = 0; i < c->conf->npartitions && !any; i++)
            any = c->conf->partitions[i].submit_filters != NULL;
        if (!any)
            return 0;
    }
    struct filter_submission *fs = calloc(1, sizeof(*fs));
    if (!fs) {
        rpc_respond_error(req, TS_ENOMEM, NULL);
        return 1;
    }
    fs->c = c;
    fs->req = req;
    fs->uid = uid;
    fs->gid = gid;
    fs->n = sub->n_components;
    snprintf(fs->host, sizeof(fs->host), "%s", host);
    snprintf(fs->what, sizeof(fs->what), "submission from uid %u", (unsigned)uid);
    fs->sub = (Tessera__SubmitRequest *)pbutil_copy(&sub->base);
    fs->chains = calloc(fs->n ? fs->n : 1, sizeof(*fs->chains));
    long total = fs->sub && fs->chains ? prepare(fs) : -1;
    if (total == -2) {
        fs_free(fs);
        rpc_respond_error(req, TS_ESUBMIT_FILTER_INVALID,
                          "submission filters need the job as UTF-8 text");
        return 1;
    }
    if (total <= 0) {
        fs_free(fs);
        if (total == 0)
            return 0;
        log_error("submission filters cannot be prepared in %s/filters: %s",
                  c->conf->state_save_location, strerror(errno));
        rpc_respond_error(req, TS_ESUBMIT_FILTER_FAILED, NULL);
        return 1;
    }
    fs->next = c->submissions;
    c->submissions = fs;
    for (size_t i = 0; i < fs->n && !fs->err; i++)
        run_next(&fs->chains[i]);
    settle(fs); /* a chain that could not start at all */
    return 1;
}

void filter_submit_shutdown(struct ctld *c)
{
    while (c->submissions) {
        struct filter_submission *fs = c->submissions;
        c->submissions = fs->next;
        rpc_respond_error(fs->req, TS_ECLOSED, NULL); /* releases it; nobody hears it */
        fs_free(fs);
    }
}
