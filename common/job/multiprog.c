/* srun --multi-prog configuration files (common/job/multiprog.h). */
#include "common/job/multiprog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/errors.h"

#define NO_LINE UINT32_MAX

struct mp_line {
    char **words; /* program and arguments, quotes removed */
    size_t nwords;
};

struct multiprog {
    struct mp_line *lines;
    size_t nlines;
    uint32_t ntasks;
    uint32_t *line_of;   /* per rank: index into lines, NO_LINE before it is named */
    uint32_t *offset_of; /* per rank: its position among its line's ranks */
};

/* One parse: where it is, and where its complaints go. */
struct mp_parse {
    struct multiprog *mp;
    const char *name;
    unsigned lineno;
    int star_seen;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 2, 3))) static void complain(struct mp_parse *p,
                                                           const char *fmt, ...)
{
    size_t used = strlen(p->err);
    if (used + 1 >= p->errlen)
        return;
    if (used)
        p->err[used++] = '\n', p->err[used] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + used, p->errlen - used, fmt, ap);
    va_end(ap);
}

static void line_invalid(struct mp_parse *p)
{
    complain(p, "Line %u of configuration file %s invalid", p->lineno, p->name);
}

static void words_free(char **words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(words[i]);
    free(words);
}

/* Splits one line (no newline in it) into words: the ranks, then up to MULTIPROG_MAX_ARGS. */
static int split_words(const char *s, size_t len, char ***out, size_t *nout)
{
    char **words = calloc(MULTIPROG_MAX_ARGS + 1, sizeof(*words)); /* and the ranks */
    char *buf = malloc(MULTIPROG_MAX_ARG + 1);
    size_t n = 0, i = 0;
    int err = words && buf ? TS_OK : TS_ENOMEM;
    while (!err) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i == len)
            break;
        size_t w = 0;
        int quoted = 0;
        for (; i < len && (quoted || (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')); i++) {
            if (s[i] == '\'') {
                quoted = !quoted;
                continue;
            }
            if (w == MULTIPROG_MAX_ARG) {
                err = TS_ETOOBIG;
                break;
            }
            buf[w++] = s[i];
        }
        if (!err && quoted)
            err = TS_EINVAL;
        else if (!err && n == MULTIPROG_MAX_ARGS + 1)
            err = TS_ETOOBIG;
        else if (!err && !(words[n++] = strndup(buf, w)))
            err = TS_ENOMEM;
    }
    free(buf);
    if (err) {
        words_free(words, n);
        return err;
    }
    *out = words;
    *nout = n;
    return TS_OK;
}

/* A rank as written: digits only, below ntasks. */
static int parse_rank(struct mp_parse *p, const char *s, size_t len, uint32_t *rank)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > UINT32_MAX) {
            complain(p, "Invalid task range specification (%.*s)", (int)len, s);
            return TS_EINVAL;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (len == 0 || v > UINT32_MAX) {
        complain(p, "Invalid task range specification (%.*s)", (int)len, s);
        return TS_EINVAL;
    }
    if (v >= p->mp->ntasks) {
        complain(p, "Invalid task id, %llu >= ntasks", (unsigned long long)v);
        return TS_EINVAL;
    }
    *rank = (uint32_t)v;
    return TS_OK;
}

static int assign(struct mp_parse *p, uint32_t rank, uint32_t line, uint32_t offset)
{
    if (p->mp->line_of[rank] != NO_LINE) {
        complain(p, "Duplicate record for task %u", rank);
        return TS_EINVAL;
    }
    p->mp->line_of[rank] = line;
    p->mp->offset_of[rank] = offset;
    return TS_OK;
}

/* One item of a rank list: N or N-M. */
static int assign_item(struct mp_parse *p, const char *s, size_t len, uint32_t line,
                       uint32_t *offset)
{
    const char *dash = memchr(s, '-', len);
    uint32_t lo, hi;
    size_t lo_len = dash ? (size_t)(dash - s) : len;
    if (parse_rank(p, s, lo_len, &lo))
        return TS_EINVAL;
    hi = lo;
    if (dash && parse_rank(p, dash + 1, len - lo_len - 1, &hi))
        return TS_EINVAL;
    if (hi < lo) {
        complain(p, "Invalid task range, %.*s", (int)len, s);
        return TS_EINVAL;
    }
    for (uint32_t r = lo;; r++) {
        if (assign(p, r, line, (*offset)++))
            return TS_EINVAL;
        if (r == hi)
            return TS_OK;
    }
}

static int assign_ranks(struct mp_parse *p, const char *spec, uint32_t line)
{
    if (strcmp(spec, "*") == 0) {
        p->star_seen = 1;
        for (uint32_t r = 0; r < p->mp->ntasks; r++)
            if (p->mp->line_of[r] == NO_LINE)
                assign(p, r, line, r);
        return TS_OK;
    }
    uint32_t offset = 0;
    const char *s = spec;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (assign_item(p, s, len, line, &offset))
            return TS_EINVAL;
        if (!comma)
            return TS_OK;
        s = comma + 1;
    }
}

/* One non-comment line: its words become lines[nlines] when its ranks are good. */
static int parse_line(struct mp_parse *p, const char *s, size_t len)
{
    char **words = NULL;
    size_t n = 0;
    int err = split_words(s, len, &words, &n);
    if (err == TS_ENOMEM)
        return err;
    if (err || n < 2 || p->star_seen) {
        if (!err)
            words_free(words, n);
        line_invalid(p);
        if (p->star_seen && !err)
            complain(p, "Task range specification with asterisk must be last");
        return err ? err : TS_EINVAL;
    }
    struct multiprog *mp = p->mp;
    if (assign_ranks(p, words[0], (uint32_t)mp->nlines)) {
        words_free(words, n);
        line_invalid(p);
        return TS_EINVAL;
    }
    free(words[0]);
    memmove(words, words + 1, (n - 1) * sizeof(*words));
    mp->lines[mp->nlines].words = words;
    mp->lines[mp->nlines].nwords = n - 1;
    mp->nlines++;
    return TS_OK;
}

static int parse_text(struct mp_parse *p, const char *text, size_t len)
{
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (++p->lineno > MULTIPROG_MAX_LINES) {
            complain(p, "Configuration file %s has more than %u lines", p->name,
                     MULTIPROG_MAX_LINES);
            return TS_ETOOBIG;
        }
        size_t i = start;
        while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
            i++;
        if (i < end && text[i] != '#') {
            int err = parse_line(p, text + i, end - i);
            if (err)
                return err;
        }
        start = end + 1;
    }
    for (uint32_t r = 0; r < p->mp->ntasks; r++) {
        if (p->mp->line_of[r] == NO_LINE) {
            complain(p, "Configuration file %s invalid, no record for task id %u", p->name,
                     r);
            return TS_EINVAL;
        }
    }
    return TS_OK;
}

int multiprog_parse(const char *text, size_t len, uint32_t ntasks, const char *name,
                    struct multiprog **out, char *err, size_t errlen)
{
    *out = NULL;
    if (errlen)
        err[0] = '\0';
    struct mp_parse p = {.name = name, .err = err, .errlen = errlen};
    if (len > MULTIPROG_MAX_BYTES) {
        complain(&p, "Configuration file %s is larger than %u bytes", name,
                 MULTIPROG_MAX_BYTES);
        return TS_ETOOBIG;
    }
    if (memchr(text, '\0', len)) {
        complain(&p, "Configuration file %s invalid, it is not text", name);
        return TS_EINVAL;
    }
    struct multiprog *mp = calloc(1, sizeof(*mp));
    if (!mp)
        return TS_ENOMEM;
    p.mp = mp;
    mp->ntasks = ntasks;
    /* A line holds at least two words, so at most half the text's bytes are lines. */
    size_t max_lines = len / 2 + 1 < MULTIPROG_MAX_LINES ? len / 2 + 1 : MULTIPROG_MAX_LINES;
    mp->lines = calloc(max_lines, sizeof(*mp->lines));
    mp->line_of = malloc((ntasks ? ntasks : 1) * sizeof(*mp->line_of));
    mp->offset_of = calloc(ntasks ? ntasks : 1, sizeof(*mp->offset_of));
    int rc = mp->lines && mp->line_of && mp->offset_of ? TS_OK : TS_ENOMEM;
    for (uint32_t r = 0; !rc && r < ntasks; r++)
        mp->line_of[r] = NO_LINE;
    if (!rc)
        rc = parse_text(&p, text, len);
    if (rc) {
        multiprog_destroy(mp);
        return rc;
    }
    *out = mp;
    return TS_OK;
}

/* word with %t and %o replaced; any other %x pair is dropped, as Slurm's srun does. */
static char *expand(const char *word, uint32_t rank, uint32_t offset)
{
    size_t len = strlen(word);
    char *out = malloc(len * 6 + 1); /* "%t" (2 bytes) becomes at most 10 digits */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (word[i] != '%') {
            out[o++] = word[i];
            continue;
        }
        if (++i == len)
            break;
        if (word[i] == 't' || word[i] == 'o')
            o += (size_t)sprintf(out + o, "%u", word[i] == 't' ? rank : offset);
    }
    out[o] = '\0';
    return out;
}

int multiprog_argv(const struct multiprog *mp, uint32_t rank, char *const *extra,
                   size_t nextra, char ***argv)
{
    *argv = NULL;
    if (rank >= mp->ntasks)
        return TS_EINVAL;
    const struct mp_line *line = &mp->lines[mp->line_of[rank]];
    char **v = calloc(line->nwords + nextra + 1, sizeof(*v));
    if (!v)
        return TS_ENOMEM;
    for (size_t i = 0; i < line->nwords; i++) {
        if (!(v[i] = expand(line->words[i], rank, mp->offset_of[rank]))) {
            multiprog_argv_free(v);
            return TS_ENOMEM;
        }
    }
    for (size_t i = 0; i < nextra; i++) {
        if (!(v[line->nwords + i] = strdup(extra[i]))) {
            multiprog_argv_free(v);
            return TS_ENOMEM;
        }
    }
    *argv = v;
    return TS_OK;
}

void multiprog_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

void multiprog_destroy(struct multiprog *mp)
{
    if (!mp)
        return;
    for (size_t i = 0; i < mp->nlines; i++)
        words_free(mp->lines[i].words, mp->lines[i].nwords);
    free(mp->lines);
    free(mp->line_of);
    free(mp->offset_of);
    free(mp);
}
