/* "scontrol show fairshare": sshare's layout for the resource-group tree. */
#include "common/format/fairsharefmt.h"

#include "common/text/timefmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number that is never NaN, infinite or negative on the screen. */
static double shown(double x)
{
    return isfinite(x) && x > 0 ? x : 0;
}

char *fairsharefmt_table(const Tessera__FairshareQueryResponse *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    char half[32];
    timefmt_format_duration(r->half_life, half, sizeof(half));
    fprintf(f, "Entity=%s FairShare=%s HalfLife=%s\n", r->entity ? r->entity : "euser",
            r->enabled ? "on" : "off", half);
    fprintf(f, "%-20s %10s %10s %11s %11s %13s %10s\n", "Name", "ID", "RawShares", "NormShares",
            "RawUsage", "EffectvUsage", "FairShare");
    fprintf(f, "-------------------- ---------- ---------- ----------- ----------- "
               "------------- ----------\n");
    for (size_t i = 0; i < r->n_nodes; i++) {
        const Tessera__FairshareNode *n = r->nodes[i];
        char name[64];
        unsigned depth = n->depth > 19 ? 19 : n->depth;
        snprintf(name, sizeof(name), "%*s%s", (int)depth, "", n->name ? n->name : "");
        name[20] = '\0';
        double usage = shown(n->usage);
        fprintf(f, "%-20s %10u %10u %11.6f %11.0f %13.6f %10.6f\n", name, n->id, n->shares,
                shown(n->norm_shares), usage > 1e15 ? 1e15 : usage, shown(n->effective_usage),
                shown(n->factor));
    }
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}
