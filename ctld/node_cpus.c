/* Which CPUs of a node running components hold (`scontrol -d show job`'s CPU_IDs=): each
 * component's NodeAlloc records the CPU indices chosen at its start (cpu_ids, stored with
 * the job), and the node counts, per index, the running components that hold it. The
 * counts are kept by node_hold and node_release, so they follow starts, ends, requeues
 * and a restart (running jobs are held again from their records) without a record of
 * their own. Indices are 0 .. CPUs-1 of the node's configuration. */
#include "ctld/node.h"

#include "common/conf/conf.h"
#include "common/text/idset.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct node *n, uint32_t len)
{
    if (len <= n->cpu_holds_len)
        return TS_OK;
    uint32_t *holds = realloc(n->cpu_holds, (size_t)len * sizeof(*holds));
    if (!holds)
        return TS_ENOMEM;
    memset(holds + n->cpu_holds_len, 0, (size_t)(len - n->cpu_holds_len) * sizeof(*holds));
    n->cpu_holds = holds;
    n->cpu_holds_len = len;
    return TS_OK;
}

static uint32_t holds_of(const struct node *n, uint32_t cpu)
{
    return cpu < n->cpu_holds_len ? n->cpu_holds[cpu] : 0;
}

int node_cpus_hold(struct node *n, const char *ids, int sign)
{
    if (!ids || !*ids)
        return TS_OK; /* a record from before CPU indices were chosen */
    struct idset *set = NULL;
    int err = idset_parse(ids, &set);
    uint32_t last = TS_OK == err && idset_count(set) ? idset_first(set) : 0;
    for (uint32_t id = last; !err && id != IDSET_INVALID; id = idset_next(set, id))
        last = id;
    /* an index beyond every node's CPUs is a damaged record: not worth memory */
    if (!err && idset_count(set) && last >= CONF_MAX_NODE_CPUS)
        err = TS_EIDSET;
    if (!err && idset_count(set))
        err = grow(n, last + 1);
    for (uint32_t id = err ? IDSET_INVALID : idset_first(set); id != IDSET_INVALID;
         id = idset_next(set, id)) {
        if (sign > 0)
            n->cpu_holds[id]++;
        else if (n->cpu_holds[id])
            n->cpu_holds[id]--;
    }
    idset_destroy(set);
    return err;
}

/* The fewest holds among the indices below ncpus not in set yet (UINT32_MAX: none). */
static uint32_t least_held(const struct node *n, uint32_t ncpus, const struct idset *set)
{
    uint32_t least = UINT32_MAX;
    for (uint32_t cpu = 0; cpu < ncpus; cpu++)
        if (holds_of(n, cpu) < least && !idset_contains(set, cpu))
            least = holds_of(n, cpu);
    return least;
}

/* Add to set, in ascending order, up to *left indices below ncpus held by exactly `holds`
 * components and not in set yet. */
static int pick_level(const struct node *n, uint32_t ncpus, uint32_t holds, struct idset *set,
                      uint32_t *left)
{
    for (uint32_t cpu = 0; *left && cpu < ncpus; cpu++) {
        if (holds_of(n, cpu) != holds || idset_contains(set, cpu))
            continue;
        if (idset_add(set, cpu) != TS_OK)
            return TS_ENOMEM;
        (*left)--;
    }
    return TS_OK;
}

char *node_cpus_pick(const struct node *n, uint32_t count)
{
    uint32_t ncpus = n->cfg ? n->cfg->cpus : 0;
    struct idset *set = idset_create();
    if (!set)
        return NULL;
    uint32_t left = count < ncpus ? count : ncpus;
    /* the free ones first; then, when the node is oversubscribed, the least shared: each
     * round takes at least one index */
    int err = TS_OK;
    while (!err && left)
        err = pick_level(n, ncpus, least_held(n, ncpus, set), set, &left);
    char *text = err ? NULL : idset_format(set);
    idset_destroy(set);
    return text;
}
