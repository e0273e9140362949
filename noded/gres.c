/* The node's generic resources: what it has, found once at start, and how it tells the
 * controller (docs/gres.md §1.3-§1.4). */
#include "noded/gres.h"

#include "noded/noded.h"
#include "common/conf/conf.h"
#include "common/gres/gres_conf.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int noded_gres_resolve(struct noded *nd, char *errbuf, size_t errlen)
{
    char path[4096];
    if (conf_gres_conf_path(nd->conf, path, sizeof(path))) {
        snprintf(errbuf, errlen, "gres.conf's path is too long");
        return TS_ECONF;
    }
    struct gres_conf *gc = NULL;
    int err = gres_conf_load(path, &gc, errbuf, errlen);
    if (!err)
        err = gres_node_units(gc, nd->name, nd->conf->gres_types, nd->node->gres,
                              nd->node->ngres, "", &nd->gres, errbuf, errlen);
    gres_conf_destroy(gc);
    char missing[GRES_FILE_MAX + 1] = "";
    size_t gone = err ? 0 : gres_units_drop_missing(&nd->gres, "", missing, sizeof(missing));
    if (gone)
        log_error("gres: %zu device file%s missing (%s first): not counted", gone,
                  gone == 1 ? " is" : "s are", missing);
    for (size_t i = 0; !err && i < nd->gres.n; i++) {
        const struct gres_record *r = &nd->gres.v[i];
        log_info("gres %s%s%s: %llu%s%s", r->name, r->type[0] ? ":" : "", r->type,
                 (unsigned long long)r->count, r->nfiles ? " from " : "",
                 r->nfiles ? r->files[0] : "");
    }
    return err;
}

void noded_gres_clear(struct noded *nd)
{
    gres_units_clear(&nd->gres);
}

int noded_gres_report(struct noded *nd, Tessera__GresUnitReport ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!nd->gres.n)
        return TS_OK;
    Tessera__GresUnitReport **v = calloc(nd->gres.n, sizeof(*v));
    if (!v)
        return TS_ENOMEM;
    for (size_t i = 0; i < nd->gres.n; i++) {
        struct gres_record *r = &nd->gres.v[i];
        if (!(v[i] = malloc(sizeof(*v[i])))) {
            noded_gres_report_free(v, i);
            return TS_ENOMEM;
        }
        tessera__gres_unit_report__init(v[i]);
        v[i]->name = r->name;
        v[i]->type = r->type;
        v[i]->count = r->count;
        v[i]->files = r->files;
        v[i]->n_files = r->nfiles;
        v[i]->cores = r->cores ? r->cores : "";
        v[i]->links = r->links ? r->links : "";
        v[i]->flags = r->flags;
    }
    *out = v;
    *n = nd->gres.n;
    return TS_OK;
}

void noded_gres_report_free(Tessera__GresUnitReport **report, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(report[i]);
    free(report);
}
