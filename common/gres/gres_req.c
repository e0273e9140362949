/* Requests for generic resources: the option forms, the stored forms, and the checks the
 * controller makes of every submission (gres_req.h; docs/gres.md §2). */
#include "common/gres/gres_req.h"

#include "common/util/arith.h"
#include "common/util/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STORED_PREFIX "gres:"
#define STORED_PREFIX_LEN 5
#define GPU "gpu"

/* ---- one item ------------------------------------------------------------------------ */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Names and types: letters, digits, '_', '-', '.'; a name starts with a letter. */
static int word_ok(const char *s, size_t len, size_t max, int is_name)
{
    if (len == 0 || len >= max)
        return 0;
    if (is_name && !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.", s[i]) ||
            s[i] == '\0')
            return 0;
    return 1;
}

/* A count: digits and an optional K, M, G, T or P (x 1024 each), at most
 * GRES_REQ_COUNT_MAX. Slurm's word for a malformed one is about TRES. */
static int parse_count(const char *s, size_t len, uint64_t *out)
{
    static const char units[] = "KMGTP";
    uint64_t v = 0, scale = 1;
    size_t i = 0;

    for (; i < len && is_digit(s[i]); i++) {
        if (v > GRES_REQ_COUNT_MAX)
            return TS_EINVALID_GRES; /* digits beyond any bound: not a malformed word */
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == 0)
        return TS_EINVALID_TRES;
    if (i + 1 == len) {
        const char *u = strchr(units, s[i] & ~0x20);
        if (!u || !*u)
            return TS_EINVALID_TRES;
        for (const char *k = units; k <= u; k++)
            scale *= 1024;
    } else if (i != len) {
        return TS_EINVALID_TRES;
    }
    if (v > GRES_REQ_COUNT_MAX / scale)
        return TS_EINVALID_GRES;
    *out = v * scale;
    return TS_OK;
}

/* NAME[:TYPE][:COUNT] of len characters at s. */
static int parse_item(const char *s, size_t len, struct gres_count *out)
{
    const char *field[3];
    size_t flen[3], n = 0;
    const char *end = s + len;

    for (const char *p = s; n < 3; n++) {
        const char *colon = memchr(p, ':', (size_t)(end - p));
        field[n] = p;
        flen[n] = colon ? (size_t)(colon - p) : (size_t)(end - p);
        if (!colon) {
            n++;
            break;
        }
        p = colon + 1;
        if (n == 2)
            return TS_EINVALID_GRES; /* a fourth field */
    }
    memset(out, 0, sizeof(*out));
    out->count = 1;
    /* "none" is the whole of a --gres list or nothing */
    if (!word_ok(field[0], flen[0], GRES_NAME_MAX, 1) ||
        (flen[0] == 4 && strncasecmp(field[0], "none", 4) == 0))
        return TS_EINVALID_GRES;
    memcpy(out->name, field[0], flen[0]);
    size_t count_at = n; /* no count */
    if (n == 3 || (n == 2 && flen[1] && is_digit(field[1][0])))
        count_at = n - 1;
    if (n >= 2 && count_at != 1) {
        if (!word_ok(field[1], flen[1], GRES_TYPE_MAX, 0))
            return TS_EINVALID_GRES;
        memcpy(out->type, field[1], flen[1]);
    }
    if (count_at < n)
        return parse_count(field[count_at], flen[count_at], &out->count);
    return TS_OK;
}

/* ---- lists --------------------------------------------------------------------------- */

/* Items separated by commas, each after prefix (stored forms) or not. */
static int parse_list(const char *s, const char *prefix, struct gres_req_list *out)
{
    size_t plen = prefix ? strlen(prefix) : 0;

    out->n = 0;
    if (!s || !*s)
        return TS_OK;
    if (strlen(s) > GRES_REQ_SPEC_MAX)
        return TS_EINVALID_GRES;
    for (;;) {
        size_t len = strcspn(s, ",");
        if (out->n == GRES_REQ_ITEMS_MAX || len < plen || strncmp(s, prefix ? prefix : "", plen))
            return TS_EINVALID_GRES;
        int err = parse_item(s + plen, len - plen, &out->item[out->n]);
        if (err)
            return err;
        out->n++;
        if (s[len] == '\0')
            return TS_OK;
        s += len + 1;
    }
}

int gres_req_parse(const char *stored, struct gres_req_list *out)
{
    return parse_list(stored, STORED_PREFIX, out);
}

/* A growing string, capped at GRES_REQ_SPEC_MAX. */
struct text {
    char buf[GRES_REQ_SPEC_MAX + 1];
    size_t len;
    int too_long;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(t->buf) - t->len)
        t->too_long = 1;
    else
        t->len += (size_t)n;
}

/* t's text in *out: NULL when empty. */
static int text_finish(const struct text *t, char **out)
{
    *out = NULL;
    if (t->too_long)
        return TS_EINVALID_GRES;
    if (t->len == 0)
        return TS_OK;
    *out = strdup(t->buf);
    return *out ? TS_OK : TS_ENOMEM;
}

int gres_req_from_option(enum gres_req_option opt, const char *arg, char **out)
{
    struct gres_req_list l;
    struct text t = {.len = 0};

    *out = NULL;
    if (opt == GRES_REQ_OPT_GRES && strcasecmp(arg, "none") == 0)
        return TS_OK;
    if (!*arg) /* "--gres=": Slurm's controller words it as a TRES */
        return opt == GRES_REQ_OPT_GRES ? TS_EINVALID_TRES : TS_EINVALID_GRES;
    /* the items as written ("gpu" stays "gres:gpu", "1G" stays "1G"), as Slurm keeps them */
    for (const char *s = arg;;) {
        size_t len = strcspn(s, ",");
        text_add(&t, "%s" STORED_PREFIX "%s%.*s", t.len ? "," : "",
                 opt == GRES_REQ_OPT_GPUS ? GPU ":" : "", (int)len, s);
        if (s[len] == '\0')
            break;
        s += len + 1;
    }
    if (t.too_long)
        return TS_EINVALID_GRES;
    int err = gres_req_parse(t.buf, &l);
    return err ? err : text_finish(&t, out);
}

/* Whether list l has an item called name. */
static int names(const struct gres_req_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->item[i].name, name) == 0)
            return 1;
    return 0;
}

int gres_req_per_gpu(uint64_t value, char *buf, size_t len)
{
    int n = snprintf(buf, len, STORED_PREFIX GPU ":%llu", (unsigned long long)value);
    return n < 0 || (size_t)n >= len ? TS_EINVALID_GRES : TS_OK;
}

uint64_t gres_req_total(const struct gres_req_list *l, const char *name)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->item[i].name, name) == 0)
            sum = arith_add_sat(sum, l->item[i].count);
    return sum;
}

/* ---- checks -------------------------------------------------------------------------- */

static int refuse(char *why, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t len, int code, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A name asked for with and without a type in one list. */
static int typed_and_untyped(const struct gres_req_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        for (size_t k = 0; k < l->n; k++)
            if (!strcmp(l->item[i].name, l->item[k].name) && !l->item[i].type[0] &&
                l->item[k].type[0])
                return 1;
    return 0;
}

/* A list only of GPUs (what --gpus and --gpus-per-task give). */
static int gpus_only(const struct gres_req_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->item[i].name, GPU) != 0)
            return 0;
    return 1;
}

/* The one "gres:gpu:N" item of --cpus-per-gpu and --mem-per-gpu. */
static int per_gpu_ok(const char *spec, int zero_ok)
{
    struct gres_req_list l;
    if (gres_req_parse(spec, &l) != TS_OK || l.n != 1)
        return 0;
    return !strcmp(l.item[0].name, GPU) && !l.item[0].type[0] && (zero_ok || l.item[0].count);
}

static int parse_three(const struct gres_req_job *j, struct gres_req_list *node,
                       struct gres_req_list *job, struct gres_req_list *task, char *why,
                       size_t len)
{
    const char *spec[3] = {j->per_node, j->per_job, j->per_task};
    struct gres_req_list *list[3] = {node, job, task};
    for (size_t i = 0; i < 3; i++) {
        int err = gres_req_parse(spec[i], list[i]);
        if (err)
            return refuse(why, len, err, "%s", ts_strerror(err));
        if (typed_and_untyped(list[i]))
            return refuse(why, len, TS_EINVALID_GRES,
                          "Invalid GRES specification (with and without type identification)");
        if (i > 0 && !gpus_only(list[i]))
            return refuse(why, len, TS_EINVALID_GRES, "%s", ts_strerror(TS_EINVALID_GRES));
    }
    return TS_OK;
}

/* How the GPU options combine, in Slurm's words. */
static int check_gpu_counts(const struct gres_req_job *j, const struct gres_req_list *node,
                            const struct gres_req_list *job, const struct gres_req_list *task,
                            char *why, size_t len)
{
    uint64_t per_job = gres_req_total(job, GPU), per_node = gres_req_total(node, GPU);
    uint64_t per_task = gres_req_total(task, GPU);

    if (task->n && !job->n && !j->has_task_shape)
        return refuse(why, len, TS_EINVALID_GRES,
                      "--gpus-per-task used without either --gpus or -n/--ntasks is not "
                      "allowed.");
    if (task->n && job->n && j->has_ntasks && per_task &&
        (per_job % per_task || per_job / per_task != j->ntasks))
        return refuse(why, len, TS_EINVALID_GRES,
                      "Based on --gpus and --gpus-per-task number of requested tasks differ "
                      "from -n/--ntasks.");
    if (job->n && names(node, GPU) && per_job < per_node)
        return refuse(why, len, TS_EINVALID_GRES,
                      "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                      "--gpus-per-socket");
    return TS_OK;
}

int gres_req_check(const struct gres_req_job *j, char *why, size_t len)
{
    struct gres_req_list node = {.n = 0}, job = {.n = 0}, task = {.n = 0};
    int err = parse_three(j, &node, &job, &task, why, len);

    if (err || (err = check_gpu_counts(j, &node, &job, &task, why, len)))
        return err;
    if (j->flags && *j->flags && strcmp(j->flags, "enforce-binding") &&
        strcmp(j->flags, "disable-binding"))
        return refuse(why, len, TS_EINVALID_GRES, "Invalid --gres-flags specification");
    if (j->cpus_per_tres && *j->cpus_per_tres) {
        if (!per_gpu_ok(j->cpus_per_tres, 0))
            return refuse(why, len, TS_EINVALID_GRES, "%s", ts_strerror(TS_EINVALID_GRES));
        if (j->has_cpus_per_task)
            return refuse(why, len, TS_EINVALID_GRES,
                          "--cpus-per-gpu is mutually exclusive with --cpus-per-task");
    }
    if (j->mem_per_tres && *j->mem_per_tres) {
        if (!per_gpu_ok(j->mem_per_tres, 1))
            return refuse(why, len, TS_EINVALID_GRES, "%s", ts_strerror(TS_EINVALID_GRES));
        if (j->has_mem)
            return refuse(why, len, TS_EINVALID_GRES,
                          "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
        if (!names(&node, GPU) && !job.n && !task.n)
            return refuse(why, len, TS_EINVALID_GRES,
                          "Requested mem_per_tres=%s but did not request any GPU.",
                          j->mem_per_tres);
    }
    return TS_OK;
}

int gres_req_names_known(const struct gres_req_list *l, const char *types)
{
    for (size_t i = 0; i < l->n; i++) {
        size_t len = strlen(l->item[i].name);
        const char *p = types;
        int found = 0;
        while (p && *p && !found) {
            size_t wl = strcspn(p, ",");
            found = wl == len && strncmp(p, l->item[i].name, len) == 0;
            p += wl + (p[wl] == ',');
        }
        if (!found)
            return TS_EINVALID_GRES;
    }
    return TS_OK;
}

/* ---- nodes --------------------------------------------------------------------------- */

uint64_t gres_req_available(const struct gres_count *node, size_t n,
                            const struct gres_count *item)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(node[i].name, item->name) &&
            (!item->type[0] || !strcasecmp(node[i].type, item->type)))
            sum = arith_add_sat(sum, node[i].count);
    return sum;
}

/* What l asks of item's kind: the items of its type, or (untyped) of its name, together. */
static uint64_t asked_like(const struct gres_req_list *l, const struct gres_count *item)
{
    return gres_req_available(l->item, l->n, item);
}

int gres_req_fits(const struct gres_req_list *l, const struct gres_count *node, size_t n)
{
    for (size_t i = 0; i < l->n; i++)
        if (asked_like(l, &l->item[i]) > gres_req_available(node, n, &l->item[i]))
            return 0;
    return 1;
}

/* ---- could the nodes ever hold it ---------------------------------------------------- */

static int any_units(const struct gres_req_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->item[i].count)
            return 1;
    return 0;
}

int gres_req_tally_init(struct gres_req_tally *t, const struct gres_req_job *j,
                        const char *types)
{
    int err;
    memset(t, 0, sizeof(*t));
    if ((err = gres_req_parse(j->per_node, &t->per_node)) ||
        (err = gres_req_parse(j->per_job, &t->per_job)) ||
        (err = gres_req_parse(j->per_task, &t->per_task)))
        return err;
    if (gres_req_names_known(&t->per_node, types) || gres_req_names_known(&t->per_job, types) ||
        gres_req_names_known(&t->per_task, types))
        return TS_EINVALID_GRES;
    /* one node holds its per-node units and at least one task's */
    t->one_node = t->per_node;
    for (size_t i = 0; i < t->per_task.n && t->one_node.n < GRES_REQ_ITEMS_MAX; i++)
        t->one_node.item[t->one_node.n++] = t->per_task.item[i];
    if (t->one_node.n < t->per_node.n + t->per_task.n)
        return TS_EINVALID_GRES; /* more items together than one list may hold */
    t->asks = any_units(&t->per_node) || any_units(&t->per_job) || any_units(&t->per_task);
    return TS_OK;
}

void gres_req_tally_node(struct gres_req_tally *t, const struct gres_count *units, size_t n)
{
    if (!t->asks)
        return;
    if (gres_req_fits(&t->one_node, units, n))
        t->fitting_nodes++;
    for (size_t i = 0; i < t->per_job.n; i++)
        t->job_units[i] = arith_add_sat(t->job_units[i],
                                        gres_req_available(units, n, &t->per_job.item[i]));
}

int gres_req_tally_verdict(const struct gres_req_tally *t, uint32_t min_nodes)
{
    if (!t->asks)
        return TS_OK;
    if (t->fitting_nodes < (min_nodes ? min_nodes : 1))
        return TS_ENODE_CONFIG;
    for (size_t i = 0; i < t->per_job.n; i++)
        if (asked_like(&t->per_job, &t->per_job.item[i]) > t->job_units[i])
            return TS_ENODE_CONFIG;
    return TS_OK;
}
