/* A node daemon's generic resources at registration (docs/gres.md §1.4): the report is
 * bounded and checked, then compared with the node's Gres=. */
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/gres/gres_conf.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry is well formed: a name, a type or none, a count, files within bounds. */
static int entry_valid(const Tessera__GresUnitReport *g, size_t *files)
{
    if (!g->name || !gres_valid_name(g->name) || (g->type && g->type[0] &&
                                                  !gres_valid_type(g->type)))
        return 0;
    if (g->count == 0 || g->count > GRES_COUNT_MAX || g->n_files > GRES_UNITS_MAX - *files)
        return 0;
    *files += g->n_files;
    for (size_t i = 0; i < g->n_files; i++)
        if (!g->files[i] || strnlen(g->files[i], GRES_FILE_MAX + 1) > GRES_FILE_MAX)
            return 0;
    return 1;
}

int node_gres_check(struct node *n, const Tessera__NodeRegisterRequest *req, char *why,
                    size_t len, char *errbuf, size_t errlen)
{
    why[0] = '\0';
    size_t files = 0;
    if (req->n_gres > GRES_UNITS_MAX) {
        snprintf(errbuf, errlen, "node %s reports more than %d generic resources", n->name,
                 GRES_UNITS_MAX);
        return TS_EINVAL;
    }
    for (size_t i = 0; i < req->n_gres; i++)
        if (!entry_valid(req->gres[i], &files)) {
            snprintf(errbuf, errlen, "node %s reports an invalid generic resource", n->name);
            return TS_EINVAL;
        }
    struct gres_count *found = calloc(req->n_gres + 1, sizeof(*found));
    if (!found)
        return TS_ENOMEM;
    for (size_t i = 0; i < req->n_gres; i++) {
        const Tessera__GresUnitReport *g = req->gres[i];
        memcpy(found[i].name, g->name, strlen(g->name) + 1);
        if (g->type)
            memcpy(found[i].type, g->type, strlen(g->type) + 1);
        found[i].count = g->count;
    }
    free(n->gres_found);
    n->gres_found = found;
    n->ngres_found = req->n_gres;
    node_gres_short(n, why, len);
    return TS_OK;
}

int node_gres_short(const struct node *n, char *why, size_t len)
{
    why[0] = '\0';
    return gres_check_reported(n->cfg->gres, n->cfg->ngres, n->gres_found, n->ngres_found, why,
                               len);
}
