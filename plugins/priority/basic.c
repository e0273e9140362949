/* priority/basic: Slurm's plain order whatever the policy file says: the highest priority
 * (age, nice, size) first, then the lower job id; every waiting unit holds the later ones
 * back (nobody is greedy). */
#include "common/sched/priority.h"
#include "common/util/errors.h"

#include <string.h>

static int order(void *state, const struct priority_view *view, struct policy_unit *units,
                 size_t n, unsigned char *greedy)
{
    (void)state;
    (void)view;
    memset(greedy, 0, n);
    priority_default_order(units, n);
    return TS_OK;
}

const struct priority_ops tessera_plugin = {
    .header = {.type = PRIORITY_PLUGIN_TYPE, .name = "priority/basic",
               .abi_version = PLUGIN_ABI_VERSION},
    .create = priority_stateless_create,
    .destroy = priority_stateless_destroy,
    .order = order,
};
