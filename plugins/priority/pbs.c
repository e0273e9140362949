/* priority/pbs: the PBS-style policy file (docs/07-policy.md §2, docs/policies.md). With a policy
 * the units are ordered by common/sched/policy_order.c (queues, starving units, sort keys, fair
 * share, round robin) and, with strict_fifo off, every unit but the starving ones is
 * greedy. Without a policy file: the default order, nobody greedy. */
#include "common/sched/priority.h"
#include "common/util/errors.h"

#include <string.h>

static int order(void *state, const struct priority_view *view, struct policy_unit *units,
                 size_t n, unsigned char *greedy)
{
    (void)state;
    memset(greedy, 0, n);
    if (!view->policy) {
        priority_default_order(units, n);
        return TS_OK;
    }
    int err = policy_order(view->policy, units, n, view->fairshare);
    if (err)
        return err;
    for (size_t i = 0; i < n; i++)
        greedy[i] = !view->policy->strict_fifo && !units[i].starving;
    return TS_OK;
}

const struct priority_ops tessera_plugin = {
    .header = {.type = PRIORITY_PLUGIN_TYPE, .name = "priority/pbs",
               .abi_version = PLUGIN_ABI_VERSION},
    .create = priority_stateless_create,
    .destroy = priority_stateless_destroy,
    .order = order,
};
