/* The compiled output formats of squeue (jobs and steps) and sinfo: one list of items,
 * filled by the scanner they share (fmtspec.c), laid out one way. */
#include "common/format/fmtlist.h"

#include "common/format/fmtspec.h"
#include "common/util/errors.h"
#include "common/util/growarray.h"
#include "common/util/memstream.h"

#include <stdlib.h>
#include <string.h>

static struct fmtlist_item *add_item(struct fmtlist *l)
{
    struct fmtlist_item *items = growarray_room(l->items, &l->cap, l->n, sizeof(*items), 8);
    if (!items)
        return NULL;
    l->items = items;
    memset(&l->items[l->n], 0, sizeof(l->items[0]));
    return &l->items[l->n++];
}

int fmtlist_add_literal(struct fmtlist *l, const char *text, size_t len)
{
    struct fmtlist_item *it;

    if (len == 0)
        return TS_OK;
    it = add_item(l);
    if (!it)
        return TS_ENOMEM;
    if (!(it->text = strndup(text, len))) {
        l->n--; /* no half items */
        return TS_ENOMEM;
    }
    return TS_OK;
}

static int add_field(struct fmtlist *l, const void *field, int width, int right, int grow)
{
    struct fmtlist_item *it = add_item(l);

    if (!it)
        return TS_ENOMEM;
    *it = (struct fmtlist_item){.field = field, .width = width, .right = right, .grow = grow};
    return TS_OK;
}

int fmtlist_add_field(struct fmtlist *l, const void *field, int width, int right)
{
    return add_field(l, field, width, right, 0);
}

void fmtlist_clear(struct fmtlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].text);
    free(l->items);
    *l = (struct fmtlist){0};
}

int fmtlist_spec_error(char *errbuf, size_t errlen, const char *what, const char *spec,
                       size_t len)
{
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "Invalid %s format specification: %.*s", what, (int)len, spec);
    return TS_EOPTVALUE;
}

/* ---- compiling through the scanner ---------------------------------------------------- */

struct scan {
    struct fmtlist *list;
    fmtlist_lookup_fn lookup;
};

static int scan_literal(void *arg, const char *text, size_t len)
{
    struct scan *s = arg;

    return fmtlist_add_literal(s->list, text, len);
}

static int scan_field(void *arg, const struct fmtspec_field *f)
{
    struct scan *s = arg;
    const void *field = s->lookup(f->letter);

    if (!field)
        return TS_EOPTVALUE;
    return add_field(s->list, field, f->width, f->right, f->grow);
}

int fmtlist_compile(struct fmtlist *l, const char *format, fmtlist_lookup_fn lookup,
                    const char *what, char *errbuf, size_t errlen)
{
    static const struct fmtspec_ops ops = {scan_literal, scan_field};
    struct scan s = {l, lookup};
    const char *bad = "";
    size_t badlen = 0;
    int rc = fmtspec_scan(format ? format : "", &ops, &s, &bad, &badlen);

    if (rc == TS_EOPTVALUE)
        return fmtlist_spec_error(errbuf, errlen, what, bad, badlen);
    return rc;
}

/* ---- layout --------------------------------------------------------------------------- */

void fmtlist_put_cell(FILE *f, const struct fmtlist_cell *c)
{
    if (c->width <= 0)
        fputs(c->text, f);
    else if (c->right && !c->cut)
        fprintf(f, "%*s", c->width, c->text);
    else
        fprintf(f, c->right ? "%*.*s" : "%-*.*s", c->width, c->width, c->text);
}

void fmtlist_put_line(FILE *f, const struct fmtlist *l, fmtlist_cell_fn fill, void *arg,
                      char *buf, size_t len)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct fmtlist_item *it = &l->items[i];
        struct fmtlist_cell cell = {NULL, it->width, it->right, 1};

        if (!it->field) {
            fputs(it->text, f);
            continue;
        }
        fill(arg, i, it, &cell, buf, len);
        fmtlist_put_cell(f, &cell);
    }
    fputc('\n', f);
}

char *fmtlist_line(const struct fmtlist *l, fmtlist_cell_fn fill, void *arg, size_t buflen)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f;
    char *buf = malloc(buflen ? buflen : 1);

    if (!buf || !(f = open_memstream(&text, &size))) {
        free(buf);
        return NULL;
    }
    fmtlist_put_line(f, l, fill, arg, buf, buflen);
    free(buf);
    return memstream_done(f, &text);
}
