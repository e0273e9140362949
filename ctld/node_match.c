/* Host lists users send (node queries, -w and -x, scontrol update node) matched against
 * the configured nodes: each node's name is tested against the parsed list, which is
 * never expanded, so "a...a[1-1000000]" costs its text and a pass over the nodes, not a
 * million names (common/text/hostlist.h, matching). */
#include "ctld/ctld.h"
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

int node_list_match(const struct ctld *c, const char *expr, uint32_t **out, size_t *count,
                    int *complete)
{
    *out = NULL;
    *count = 0;
    *complete = 1;
    if (!expr || !*expr)
        return TS_OK;
    struct hostpattern *p = NULL;
    if (strnlen(expr, NODE_LIST_MAX_LEN + 1) > NODE_LIST_MAX_LEN)
        return TS_EINVALID_NODE_NAME;
    int err = hostpattern_parse(expr, &p);
    if (err)
        return err == TS_ENOMEM ? err : TS_EINVALID_NODE_NAME;
    const struct conf *conf = c->conf;
    uint32_t *idx = calloc(conf->nnodes + 1, sizeof(*idx));
    if (!idx) {
        hostpattern_destroy(p);
        return TS_ENOMEM;
    }
    for (size_t i = 0; i < conf->nnodes; i++)
        if (hostpattern_tally(p, conf->nodes[i].name))
            idx[(*count)++] = (uint32_t)i;
    *complete = hostpattern_complete(p);
    hostpattern_destroy(p);
    *out = idx;
    return TS_OK;
}
