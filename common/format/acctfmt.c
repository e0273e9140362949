/* sacct's field lists and line layout, as Slurm's print_fields.c lays them out:
 * fixed width: every field padded to its width and followed by one space (the last one
 *   too); a value longer than the width is cut to it with its last character replaced by
 *   "+"; positive widths right-justify, negative ones left-justify; the header uses the
 *   same alignment, cut without "+", and a rule of dashes follows it;
 * --parsable: "|" after every field; --parsable2: "|" between fields. */
#include "common/format/acctfmt_int.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define VALUE_MAX 4096 /* longer values are cut (host lists, submit lines) */

struct column {
    const struct acctfmt_field *field;
    int width;
};

struct acctfmt {
    struct column *cols;
    size_t n;
};

/* ---- a growing text ---------------------------------------------------------------- */

struct text {
    char *s;
    size_t len, cap;
    int failed;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
    if (n)
        memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void text_pad(struct text *t, char c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        text_add(t, &c, 1);
}

static char *text_done(struct text *t)
{
    if (t->failed || !t->s) {
        free(t->s);
        return t->failed ? NULL : strdup("");
    }
    return t->s;
}

/* ---- compiling -o ------------------------------------------------------------------- */

/* The first field whose name starts with name (case-insensitive), as Slurm looks up. */
static const struct acctfmt_field *lookup_prefix(const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; n && i < acctfmt_nfields; i++)
        if (strncasecmp(acctfmt_fields[i].name, name, n) == 0)
            return &acctfmt_fields[i];
    return NULL;
}

static int add_column(struct acctfmt *fmt, const struct acctfmt_field *f, int has_width,
                      int width)
{
    struct column *grown = realloc(fmt->cols, (fmt->n + 1) * sizeof(*grown));

    if (!grown)
        return TS_ENOMEM;
    fmt->cols = grown;
    fmt->cols[fmt->n].field = f;
    fmt->cols[fmt->n].width = has_width ? width : f->width;
    fmt->n++;
    return TS_OK;
}

/* One item: "Name" or "Name%N"; "ALL" (or a prefix of it, as Slurm) adds every field. */
static int add_item(struct acctfmt *fmt, char *item, char *errbuf, size_t errlen)
{
    char *pct = strchr(item, '%');
    int has_width = pct != NULL;
    int width = pct ? atoi(pct + 1) : 0;
    const struct acctfmt_field *f;
    int rc = TS_OK;

    if (pct)
        *pct = '\0';
    if (has_width && width == 0)
        has_width = 0; /* "%0" would print nothing: keep the field's own width */
    if (*item && strncasecmp("ALL", item, strlen(item)) == 0) {
        for (size_t i = 0; rc == TS_OK && i < acctfmt_nfields; i++)
            rc = add_column(fmt, &acctfmt_fields[i], has_width, width);
        return rc;
    }
    if (!(f = lookup_prefix(item))) {
        snprintf(errbuf, errlen, "Invalid field requested: \"%s\"", item);
        return TS_EOPTVALUE;
    }
    return add_column(fmt, f, has_width, width);
}

static char *trim(char *s)
{
    char *end;

    while (isspace((unsigned char)*s))
        s++;
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

int acctfmt_compile(const char *list, struct acctfmt **out, char *errbuf, size_t errlen)
{
    struct acctfmt *fmt = calloc(1, sizeof(*fmt));
    char *copy = list ? strdup(list) : NULL;
    char *save = NULL;
    int rc = (fmt && copy) ? TS_OK : TS_ENOMEM;

    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && rc == TS_OK;
         t = strtok_r(NULL, ",", &save)) {
        char *item = trim(t);
        if (*item)
            rc = add_item(fmt, item, errbuf, errlen);
    }
    free(copy);
    if (rc == TS_OK && fmt->n == 0) {
        snprintf(errbuf, errlen, "No fields requested");
        rc = TS_EOPTVALUE;
    }
    if (rc != TS_OK) {
        acctfmt_free(fmt);
        return rc;
    }
    *out = fmt;
    return TS_OK;
}

void acctfmt_free(struct acctfmt *fmt)
{
    if (!fmt)
        return;
    free(fmt->cols);
    free(fmt);
}

/* ---- lines ------------------------------------------------------------------------- */

/* A fixed-width cell: the text cut to the width (with "+" in the last place when mark),
 * padded on the side the width's sign says, then a space. */
static void cell(struct text *t, const char *value, int width, int mark)
{
    size_t w = (size_t)(width < 0 ? -width : width);
    size_t n = strlen(value);
    char cut[VALUE_MAX];

    if (n > w) {
        n = w < sizeof(cut) ? w : sizeof(cut) - 1;
        memcpy(cut, value, n);
        cut[n] = '\0';
        if (mark && n)
            cut[n - 1] = '+';
        value = cut;
    }
    if (width > 0)
        text_pad(t, ' ', w - n);
    text_add(t, value, n);
    if (width < 0)
        text_pad(t, ' ', w - n);
    text_add(t, " ", 1);
}

static void parsable(struct text *t, const char *value, enum acctfmt_mode mode, int last)
{
    text_add(t, value, strlen(value));
    if (mode == ACCTFMT_PARSABLE || !last)
        text_add(t, "|", 1);
}

static void put_value(struct text *t, const struct column *c, enum acctfmt_mode mode, int last,
                      const char *value, int mark)
{
    if (mode == ACCTFMT_FIXED)
        cell(t, value, c->width, mark);
    else
        parsable(t, value, mode, last);
}

char *acctfmt_header(const struct acctfmt *fmt, enum acctfmt_mode mode)
{
    struct text t = {0};

    for (size_t i = 0; i < fmt->n; i++)
        put_value(&t, &fmt->cols[i], mode, i + 1 == fmt->n, fmt->cols[i].field->name, 0);
    text_add(&t, "\n", 1);
    if (mode == ACCTFMT_FIXED) {
        for (size_t i = 0; i < fmt->n; i++) {
            int w = fmt->cols[i].width;
            text_pad(&t, '-', (size_t)(w < 0 ? -w : w));
            text_add(&t, " ", 1);
        }
        text_add(&t, "\n", 1);
    }
    return text_done(&t);
}

char *acctfmt_line(const struct acctfmt *fmt, enum acctfmt_mode mode,
                   const struct acctfmt_row *row, struct jobfmt_ctx *ctx)
{
    struct text t = {0};
    char value[VALUE_MAX];

    for (size_t i = 0; i < fmt->n; i++) {
        value[0] = '\0';
        fmt->cols[i].field->fn(row, ctx, value, sizeof(value));
        put_value(&t, &fmt->cols[i], mode, i + 1 == fmt->n, value, 1);
    }
    text_add(&t, "\n", 1);
    return text_done(&t);
}

int acctfmt_value(const char *field, const struct acctfmt_row *row, struct jobfmt_ctx *ctx,
                  char *buf, size_t len)
{
    if (!buf || len == 0)
        return TS_ETOOBIG;
    for (size_t i = 0; i < acctfmt_nfields; i++) {
        if (strcasecmp(acctfmt_fields[i].name, field) == 0) {
            buf[0] = '\0';
            acctfmt_fields[i].fn(row, ctx, buf, len);
            return TS_OK;
        }
    }
    return TS_EINVAL;
}

char *acctfmt_helpformat(void)
{
    struct text t = {0};
    char col[32];

    for (size_t i = 0; i < acctfmt_nfields; i++) {
        if (i % 4)
            text_add(&t, " ", 1);
        else if (i)
            text_add(&t, "\n", 1);
        snprintf(col, sizeof(col), "%-19s", acctfmt_fields[i].name);
        text_add(&t, col, strlen(col));
    }
    text_add(&t, "\n", 1);
    return text_done(&t);
}
