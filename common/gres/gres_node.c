/* What one node has (docs/gres.md §1.3): gres.conf's records for it, the GPUs its driver
 * lists when detection is on, and what its Gres= says where neither speaks. */
#include "common/gres/gres_conf.h"

#include "common/text/hostlist.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void gres_units_clear(struct gres_units *u)
{
    for (size_t i = 0; i < u->n; i++)
        gres_record_clear(&u->v[i]);
    free(u->v);
    u->v = NULL;
    u->n = 0;
}

int gres_units_push(struct gres_units *u, const struct gres_record *src)
{
    struct gres_record *grown = realloc(u->v, (u->n + 1) * sizeof(*grown));
    if (!grown)
        return TS_ENOMEM;
    u->v = grown;
    struct gres_record *r = &u->v[u->n];
    *r = *src;
    r->nodes = r->cores = r->links = NULL;
    r->files = NULL;
    r->nfiles = 0;
    int rc = TS_OK;
    if ((src->cores && !(r->cores = strdup(src->cores))) ||
        (src->links && !(r->links = strdup(src->links))) ||
        (src->nfiles && !(r->files = calloc(src->nfiles, sizeof(*r->files)))))
        rc = TS_ENOMEM;
    for (size_t i = 0; !rc && i < src->nfiles; i++, r->nfiles++)
        if (!(r->files[i] = strdup(src->files[i])))
            rc = TS_ENOMEM;
    u->n++; /* cleared with the rest on failure */
    return rc;
}

static int record_for_node(const struct gres_record *r, const char *node)
{
    if (!r->nodes)
        return 1;
    struct hostpattern *pat = NULL;
    int match = hostpattern_parse(r->nodes, &pat) == TS_OK && hostpattern_contains(pat, node);
    hostpattern_destroy(pat);
    return match;
}

/* The node's last AutoDetect=, else the last one of a line without NodeName=. */
static enum gres_autodetect autodetect_for(const struct gres_conf *gc, const char *node)
{
    enum gres_autodetect global = GRES_AUTODETECT_OFF, mine = GRES_AUTODETECT_UNSET;
    for (size_t i = 0; gc && i < gc->nrecords; i++) {
        const struct gres_record *r = &gc->records[i];
        if (r->autodetect == GRES_AUTODETECT_UNSET)
            continue;
        if (!r->nodes)
            global = r->autodetect;
        else if (record_for_node(r, node))
            mine = r->autodetect;
    }
    return mine != GRES_AUTODETECT_UNSET ? mine : global;
}

static int has_name(const struct gres_units *u, const char *name)
{
    for (size_t i = 0; i < u->n; i++)
        if (!strcmp(u->v[i].name, name))
            return 1;
    return 0;
}

static int add_records(const struct gres_conf *gc, const char *node, const char *types,
                       int detected, struct gres_units *out, char *err, size_t errlen)
{
    for (size_t i = 0; gc && i < gc->nrecords; i++) {
        const struct gres_record *r = &gc->records[i];
        if (!r->name[0] || !record_for_node(r, node))
            continue;
        if (!gres_types_contains(types, r->name)) {
            snprintf(err, errlen, "%s:%d: invalid name '%s': not in GresTypes", gc->file,
                     r->line, r->name);
            return TS_ECONF;
        }
        if (detected && !strcmp(r->name, "gpu"))
            continue; /* detection speaks for the GPUs */
        int rc = gres_units_push(out, r);
        if (rc)
            return rc;
    }
    return TS_OK;
}

static int add_configured(const struct gres_count *configured, size_t nconfigured,
                          struct gres_units *out)
{
    for (size_t i = 0; i < nconfigured; i++) {
        if (has_name(out, configured[i].name))
            continue;
        struct gres_record r = {.count = configured[i].count, .flags = GRES_FLAG_COUNT_ONLY};
        memcpy(r.name, configured[i].name, sizeof(r.name));
        memcpy(r.type, configured[i].type, sizeof(r.type));
        int rc = gres_units_push(out, &r);
        if (rc)
            return rc;
    }
    return TS_OK;
}

int gres_node_units(const struct gres_conf *gc, const char *node, const char *types,
                    const struct gres_count *configured, size_t nconfigured, const char *root,
                    struct gres_units *out, char *err, size_t errlen)
{
    out->v = NULL;
    out->n = 0;
    int detect = autodetect_for(gc, node) == GRES_AUTODETECT_NVIDIA;
    int rc = detect ? gres_detect_nvidia(root, out, err, errlen) : TS_OK;
    if (!rc)
        rc = add_records(gc, node, types, detect, out, err, errlen);
    size_t files = 0;
    for (size_t i = 0; !rc && i < out->n; i++)
        files += out->v[i].nfiles;
    if (!rc && files > GRES_UNITS_MAX) {
        snprintf(err, errlen, "%s: more than %d device files for node %s",
                 gc ? gc->file : "gres.conf", GRES_UNITS_MAX, node);
        rc = TS_ECONF;
    }
    if (!rc)
        rc = add_configured(configured, nconfigured, out);
    if (rc)
        gres_units_clear(out);
    return rc;
}

static int file_exists(const char *root, const char *path)
{
    char full[GRES_FILE_MAX + 4096];
    struct stat st;
    snprintf(full, sizeof(full), "%s%s", root ? root : "", path);
    return stat(full, &st) == 0;
}

/* Drop record r's missing files; returns how many. */
static size_t drop_files(struct gres_record *r, const char *root, char *missing, size_t len,
                         size_t dropped)
{
    size_t kept = 0, before = r->nfiles;
    for (size_t i = 0; i < r->nfiles; i++) {
        if (file_exists(root, r->files[i])) {
            r->files[kept++] = r->files[i];
            continue;
        }
        if (dropped + i - kept == 0)
            snprintf(missing, len, "%s", r->files[i]);
        free(r->files[i]);
    }
    r->nfiles = kept;
    r->count = r->count > before - kept ? r->count - (before - kept) : 0; /* a unit a file */
    return before - kept;
}

size_t gres_units_drop_missing(struct gres_units *u, const char *root, char *missing,
                               size_t len)
{
    size_t dropped = 0, kept = 0;
    for (size_t i = 0; i < u->n; i++) {
        struct gres_record *r = &u->v[i];
        if (r->nfiles)
            dropped += drop_files(r, root, missing, len, dropped);
        if (r->count == 0)
            gres_record_clear(r);
        else
            u->v[kept++] = *r;
    }
    u->n = kept;
    return dropped;
}
