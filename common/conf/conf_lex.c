/* Reading tessera.conf: files read with a size bound, text walked line by line (comments,
 * continued lines, quotes), lines split into Key=Value tokens and handed to the directive,
 * node or partition parser, Include followed to a bounded depth; and the one message of
 * a failed parse, which names the file and line. */
#include "common/conf/conf_int.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_INCLUDE_DEPTH 8
#define MAX_CONF_SIZE (16u << 20) /* a configuration file larger than this is a mistake */

int conf_fail(struct conf_parse *p, const char *fmt, ...)
{
    if (p->failed)
        return TS_ECONF; /* keep the first message */
    p->failed = 1;
    int n = p->line > 0 ? snprintf(p->err, p->errlen, "%s:%d: ", p->file, p->line)
                        : snprintf(p->err, p->errlen, "%s: ", p->file);
    if (n < 0 || (size_t)n >= p->errlen)
        return TS_ECONF;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return TS_ECONF;
}

static int include_file(struct conf_parse *p, const char *path);

/* Split a logical line into Key=Value tokens (quotes keep spaces, and are removed). The
 * tokens point into line, which is modified. */
static int tokenize(struct conf_parse *p, char *line, struct conf_kv **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    char *s = line;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            return TS_OK;
        char *tok = s, *w = s;
        int quoted = 0;
        for (; *s && (quoted || !isspace((unsigned char)*s)); s++) {
            if (*s == '"')
                quoted = !quoted;
            else
                *w++ = *s;
        }
        if (quoted)
            return conf_fail(p, "unterminated quote");
        if (*s)
            s++;
        *w = '\0';
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            struct conf_kv *grown = realloc(*out, cap * sizeof(**out));
            if (!grown)
                return conf_fail(p, "out of memory");
            *out = grown;
        }
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = '\0';
        (*out)[*n].key = tok;
        (*out)[*n].value = eq ? eq + 1 : NULL;
        (*n)++;
    }
}

static int parse_line(struct conf_parse *p, char *line)
{
    struct conf_kv *kv = NULL;
    size_t n = 0;
    int err = tokenize(p, line, &kv, &n);
    if (err || n == 0)
        goto out;
    if (!strcasecmp(kv[0].key, "Include") && !kv[0].value) {
        if (n != 2 || kv[1].value)
            err = conf_fail(p, "Include takes one file name");
        else
            err = include_file(p, kv[1].key);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (!kv[i].value) {
            err = conf_fail(p, "expected Key=Value, found '%s'", kv[i].key);
            goto out;
        }
    if (!strcasecmp(kv[0].key, "NodeName"))
        err = conf_node_line(p, kv, n);
    else if (!strcasecmp(kv[0].key, "PartitionName"))
        err = conf_partition_line(p, kv, n);
    else
        for (size_t i = 0; i < n && !err; i++)
            err = conf_directive_token(p, &kv[i]);
out:
    free(kv);
    return err;
}

/* Walk text line by line: strip comments, join continued lines, parse each. */
int conf_parse_text(struct conf_parse *p, const char *text)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    if (!buf)
        return conf_fail(p, "out of memory");
    size_t blen = 0;
    int line = 1, start_line = 1, in_comment = 0, quoted = 0, err = TS_OK;
    for (size_t i = 0; i <= len && !err; i++) {
        char ch = i < len ? text[i] : '\n';
        if (ch == '\n') {
            int continued = !in_comment && blen > 0 && buf[blen - 1] == '\\';
            if (continued) {
                buf[blen - 1] = ' ';
            } else {
                buf[blen] = '\0';
                p->line = start_line;
                err = parse_line(p, buf);
                blen = 0;
                quoted = 0;
                start_line = line + 1;
            }
            in_comment = 0;
            line++;
            continue;
        }
        if (in_comment)
            continue;
        if (ch == '"')
            quoted = !quoted;
        if (ch == '#' && !quoted) {
            in_comment = 1;
            continue;
        }
        if (ch == '\0' || ch == '\r')
            ch = ' ';
        buf[blen++] = ch;
    }
    free(buf);
    return err;
}

static int read_file(const char *path, size_t max, char **out, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? TS_ECONF_NOTFOUND : TS_ESYS;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int err = TS_OK;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *grown = cap > max * 2 ? NULL : realloc(buf, cap);
            if (!grown) {
                err = TS_ETOOBIG;
                break;
            }
            buf = grown;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) {
            if (ferror(f))
                err = TS_ESYS;
            break;
        }
    }
    fclose(f);
    if (!err && n > max)
        err = TS_ETOOBIG;
    if (err) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return TS_OK;
}

int conf_read_text(const char *path, size_t max, char **text, char *errbuf, size_t errlen)
{
    size_t len;
    int err = read_file(path, max, text, &len);
    if (err == TS_ETOOBIG)
        snprintf(errbuf, errlen, "%s: too large", path);
    else if (err)
        snprintf(errbuf, errlen, "%s: cannot be read", path);
    return err ? TS_ECONF : TS_OK;
}

int conf_parse_file(struct conf_parse *p, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int err = read_file(path, MAX_CONF_SIZE, &text, &len);
    if (err) {
        int saved_line = p->line;
        if (p->depth == 0)
            p->line = 0;
        conf_fail(p, "cannot read %s: %s", path,
                  err == TS_ECONF_NOTFOUND ? "No such file or directory" : ts_strerror(err));
        p->line = saved_line;
        return err == TS_ECONF_NOTFOUND ? err : TS_ECONF;
    }
    const char *saved_file = p->file;
    int saved_line = p->line;
    p->file = path;
    err = conf_parse_text(p, text);
    p->file = saved_file;
    p->line = saved_line;
    free(text);
    return err;
}

static int include_file(struct conf_parse *p, const char *path)
{
    if (!p->allow_include)
        return conf_fail(p, "Include is not allowed here");
    if (p->depth >= MAX_INCLUDE_DEPTH)
        return conf_fail(p, "Include nested more than %d deep", MAX_INCLUDE_DEPTH);
    char full[PATH_MAX];
    if (path[0] == '/') {
        snprintf(full, sizeof(full), "%s", path);
    } else {
        const char *slash = strrchr(p->file, '/');
        int dirlen = slash ? (int)(slash - p->file) : 1;
        snprintf(full, sizeof(full), "%.*s/%s", dirlen, slash ? p->file : ".", path);
    }
    p->depth++;
    /* the included file's name must outlive its parse: messages point at it */
    char *keep = strdup(full);
    if (!keep)
        return conf_fail(p, "out of memory");
    int err = conf_parse_file(p, keep); /* its messages name the included file and line */
    free(keep);
    p->depth--;
    return err == TS_ECONF_NOTFOUND ? TS_ECONF : err;
}
