/* The PBS sched_config parser: a directive table (name, kind, where the value goes), a
 * line at a time, each line for prime, non-prime or both. */
#include "common/sched/policy.h"

#include "common/conf/conf.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind { K_BOOL, K_DURATION, K_UINT, K_WORD, K_SORT, K_KEY, K_ENTITY, K_IGNORED };

struct directive {
    const char *name;
    enum kind kind;
    size_t offset; /* into struct policy_set */
};

#define OFF(field) offsetof(struct policy_set, field)
static const struct directive directives[] = {
    {"round_robin", K_BOOL, OFF(round_robin)},
    {"by_queue", K_BOOL, OFF(by_queue)},
    {"strict_fifo", K_BOOL, OFF(strict_fifo)},
    {"fair_share", K_BOOL, OFF(fair_share)},
    {"load_balancing", K_BOOL, OFF(load_balancing)},
    {"help_starving_jobs", K_BOOL, OFF(help_starving_jobs)},
    {"sort_by", K_SORT, OFF(sort_by)},
    {"key", K_KEY, OFF(keys)},
    {"starve_max", K_DURATION, OFF(starve_max)},
    {"max_starve", K_DURATION, OFF(starve_max)}, /* the name the source's example uses */
    {"half_life", K_DURATION, OFF(half_life)},
    {"sync_time", K_DURATION, OFF(sync_time)},
    {"unknown_shares", K_UINT, OFF(unknown_shares)},
    {"log_filter", K_UINT, OFF(log_filter)},
    {"dedicated_prefix", K_WORD, OFF(dedicated_prefix)},
    {"fairshare_entity", K_ENTITY, OFF(fairshare_entity)},
    {"debug_level", K_IGNORED, 0}, /* PBS's scheduler log level: Tessera logs its own way */
};
#undef OFF

static const struct {
    const char *name;
    enum policy_sort sort;
} sorts[] = {
    {"no_sort", POLICY_SORT_NONE},
    {"shortest_job_first", POLICY_SORT_SHORTEST_JOB},
    {"longest_job_first", POLICY_SORT_LONGEST_JOB},
    {"smallest_memory_first", POLICY_SORT_SMALLEST_MEMORY},
    {"largest_memory_first", POLICY_SORT_LARGEST_MEMORY},
    {"high_priority_first", POLICY_SORT_HIGH_PRIORITY},
    {"low_priority_first", POLICY_SORT_LOW_PRIORITY},
    {"large_walltime_first", POLICY_SORT_LARGE_WALLTIME},
    {"short_walltime_first", POLICY_SORT_SHORT_WALLTIME},
    {"cmp_job_walltime_asc", POLICY_SORT_SHORT_WALLTIME}, /* the source's other name */
    {"fair_share", POLICY_SORT_FAIR_SHARE},
    {"multi_sort", POLICY_SORT_MULTI},
};

const char *policy_sort_name(enum policy_sort s)
{
    for (size_t i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++)
        if (sorts[i].sort == s)
            return sorts[i].name;
    return "unknown";
}

void policy_defaults(struct policy *p)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < 2; i++) {
        struct policy_set *s = &p->set[i];
        s->by_queue = 1;
        s->sort_by = POLICY_SORT_SHORTEST_JOB;
        s->starve_max = 24 * 3600;
        s->half_life = 24 * 3600;
        s->sync_time = 3600;
        s->unknown_shares = 10;
        s->log_filter = 256;
        snprintf(s->dedicated_prefix, sizeof(s->dedicated_prefix), "ded");
    }
}

struct parse {
    const char *file;
    int line;
    char *err;
    size_t errlen;
    int keys_seen[2]; /* the first key: line of a period replaces the keys */
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse *ps, const char *fmt, ...)
{
    int n = snprintf(ps->err, ps->errlen, "%s:%d: ", ps->file, ps->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < ps->errlen)
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return TS_ECONF;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcmp(v, "0"))
        *out = 0;
    else
        return -1;
    return 0;
}

static int parse_sort(const char *v, enum policy_sort *out)
{
    for (size_t i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++) {
        if (!strcasecmp(v, sorts[i].name)) {
            *out = sorts[i].sort;
            return 0;
        }
    }
    return -1;
}

/* Set one directive's value in one period. */
static int set(struct parse *ps, const struct directive *d, struct policy_set *s, int period,
               const char *v)
{
    void *field = (char *)s + d->offset;
    char *end;
    switch (d->kind) {
    case K_BOOL:
        if (parse_bool(v, field))
            return fail(ps, "%s must be true or false, not '%s'", d->name, v);
        return TS_OK;
    case K_DURATION: {
        int64_t secs;
        if (timefmt_parse_duration(v, &secs) != TS_OK || secs < 0)
            return fail(ps, "%s must be a duration (HH:MM:SS), not '%s'", d->name, v);
        *(int64_t *)field = secs;
        return TS_OK;
    }
    case K_UINT: {
        unsigned long long n = strtoull(v, &end, 10);
        if (!isdigit((unsigned char)v[0]) || *end || n > UINT32_MAX)
            return fail(ps, "%s must be a whole number, not '%s'", d->name, v);
        *(uint32_t *)field = (uint32_t)n;
        return TS_OK;
    }
    case K_WORD:
        if (strlen(v) >= sizeof(s->dedicated_prefix))
            return fail(ps, "%s is too long", d->name);
        snprintf((char *)field, sizeof(s->dedicated_prefix), "%s", v);
        return TS_OK;
    case K_SORT:
        if (parse_sort(v, field))
            return fail(ps, "unknown sort_by '%s'", v);
        return TS_OK;
    case K_ENTITY:
        if (!strcasecmp(v, "euser"))
            *(enum policy_entity *)field = POLICY_ENTITY_USER;
        else if (!strcasecmp(v, "egroup"))
            *(enum policy_entity *)field = POLICY_ENTITY_GROUP;
        else if (!strcasecmp(v, "account") || !strcasecmp(v, "Account_Name"))
            *(enum policy_entity *)field = POLICY_ENTITY_ACCOUNT;
        else
            return fail(ps, "%s must be euser, egroup or account, not '%s'", d->name, v);
        return TS_OK;
    case K_KEY: {
        enum policy_sort k;
        if (parse_sort(v, &k) || k == POLICY_SORT_MULTI)
            return fail(ps, "unknown key '%s'", v);
        if (!ps->keys_seen[period]) {
            s->nkeys = 0;
            ps->keys_seen[period] = 1;
        }
        if (s->nkeys == POLICY_MAX_KEYS)
            return fail(ps, "at most %d key: lines", POLICY_MAX_KEYS);
        s->keys[s->nkeys++] = k;
        return TS_OK;
    }
    default:
        return TS_OK;
    }
}

static const struct directive *find(const char *name)
{
    for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
        if (!strcasecmp(directives[i].name, name))
            return &directives[i];
    return NULL;
}

/* "name: value [period]" (the colon may stand alone or be missing before the value). */
static int parse_line(struct parse *ps, char *line, struct policy *p)
{
    char *words[4];
    int n = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t\r", &save); w;
         w = strtok_r(NULL, " \t\r", &save)) {
        if (n == 4)
            return fail(ps, "too many words");
        words[n++] = w;
    }
    if (n == 0)
        return TS_OK;
    size_t len = strlen(words[0]);
    if (words[0][len - 1] == ':')
        words[0][len - 1] = '\0';
    else if (n > 1 && !strcmp(words[1], ":")) {
        for (int i = 1; i + 1 < n; i++)
            words[i] = words[i + 1];
        n--;
    }
    if (n < 2)
        return fail(ps, "'%s' has no value", words[0]);
    if (n > 3)
        return fail(ps, "too many words");
    const struct directive *d = find(words[0]);
    if (!d)
        return fail(ps, "unknown option '%s'", words[0]);
    int prime = 1, non_prime = 1;
    if (n == 3) {
        if (!strcasecmp(words[2], "prime"))
            non_prime = 0;
        else if (!strcasecmp(words[2], "non_prime") || !strcasecmp(words[2], "non-prime"))
            prime = 0;
        else if (strcasecmp(words[2], "all"))
            return fail(ps, "the third word must be prime, non_prime or all, not '%s'",
                        words[2]);
    }
    int err = TS_OK;
    if (prime)
        err = set(ps, d, &p->set[POLICY_PRIME], POLICY_PRIME, words[1]);
    if (!err && non_prime)
        err = set(ps, d, &p->set[POLICY_NON_PRIME], POLICY_NON_PRIME, words[1]);
    return err;
}

int policy_parse(const char *text, const char *file, struct policy *p, char *errbuf,
                 size_t errlen)
{
    struct parse ps = {.file = file, .err = errbuf, .errlen = errlen};
    errbuf[0] = '\0';
    int err = TS_OK;
    for (const char *s = text; *s && !err;) {
        size_t len = strcspn(s, "\n");
        ps.line++;
        char buf[1024];
        if (len >= sizeof(buf)) {
            err = fail(&ps, "line too long");
            break;
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        err = parse_line(&ps, buf, p);
        s += len;
        if (*s == '\n')
            s++;
    }
    for (int i = 0; !err && i < 2; i++)
        if (p->set[i].sort_by == POLICY_SORT_MULTI && p->set[i].nkeys == 0)
            err = fail(&ps, "sort_by: multi_sort needs key: lines");
    return err;
}

int policy_load(const char *path, struct policy *p, char *errbuf, size_t errlen)
{
    char *text;
    int err = conf_read_text(path, (size_t)1 << 20, &text, errbuf, errlen);
    if (err)
        return err;
    policy_defaults(p);
    err = policy_parse(text, path, p, errbuf, errlen);
    free(text);
    return err;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int compare_key(enum policy_sort key, const struct policy_unit *x,
                       const struct policy_unit *y)
{
    switch (key) {
    case POLICY_SORT_SHORTEST_JOB: return CMP(x->cput, y->cput);
    case POLICY_SORT_LONGEST_JOB: return CMP(y->cput, x->cput);
    case POLICY_SORT_SMALLEST_MEMORY: return CMP(x->mem_mb, y->mem_mb);
    case POLICY_SORT_LARGEST_MEMORY: return CMP(y->mem_mb, x->mem_mb);
    case POLICY_SORT_HIGH_PRIORITY: return CMP(y->priority, x->priority);
    case POLICY_SORT_LOW_PRIORITY: return CMP(x->priority, y->priority);
    case POLICY_SORT_LARGE_WALLTIME: return CMP(y->walltime, x->walltime);
    case POLICY_SORT_SHORT_WALLTIME: return CMP(x->walltime, y->walltime);
    case POLICY_SORT_FAIR_SHARE: return CMP(y->fs_norm, x->fs_norm); /* larger share first */
    default: return 0; /* no_sort */
    }
}

int policy_uses_fair_share(const struct policy_set *s)
{
    if (s->fair_share || s->sort_by == POLICY_SORT_FAIR_SHARE)
        return 1;
    for (size_t i = 0; s->sort_by == POLICY_SORT_MULTI && i < s->nkeys; i++)
        if (s->keys[i] == POLICY_SORT_FAIR_SHARE)
            return 1;
    return 0;
}

int policy_starving(const struct policy_set *s, const struct policy_unit *u)
{
    return s->help_starving_jobs && u->waited > s->starve_max;
}

int policy_compare(const struct policy_set *s, const struct policy_unit *x,
                   const struct policy_unit *y)
{
    int d = 0;
    if (s->by_queue) {
        d = CMP(y->tier, x->tier);
        if (!d)
            d = strcmp(x->partition ? x->partition : "", y->partition ? y->partition : "");
    }
    if (!d && s->help_starving_jobs) {
        int sx = policy_starving(s, x), sy = policy_starving(s, y);
        d = CMP(sy, sx);
        if (!d && sx)
            d = CMP(y->waited, x->waited); /* the longest starving first */
    }
    if (!d && s->sort_by == POLICY_SORT_MULTI)
        for (size_t i = 0; !d && i < s->nkeys; i++)
            d = compare_key(s->keys[i], x, y);
    else if (!d)
        d = compare_key(s->sort_by, x, y);
    return d ? d : CMP(x->id, y->id);
}
