/* tessera.conf's partition lines: PartitionName=DEFAULT templates, each key's value,
 * duplicates refused. Their Nodes= are resolved after the text (conf_checks.c). */
#include "common/conf/conf_int.h"

#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const part_states[] = {[CONF_PART_UP] = "UP", [CONF_PART_DOWN] = "DOWN",
                                          [CONF_PART_DRAIN] = "DRAIN",
                                          [CONF_PART_INACTIVE] = "INACTIVE"};

const char *conf_partition_state_name(enum conf_part_state state)
{
    return (unsigned)state < sizeof(part_states) / sizeof(part_states[0]) ? part_states[state]
                                                                         : "UNKNOWN";
}

void conf_partition_clear(struct conf_partition *pt)
{
    free(pt->name);
    free(pt->nodes);
    free(pt->submit_filters);
    free(pt->activation_filters);
    free(pt->node_index);
    memset(pt, 0, sizeof(*pt));
}

static int partition_set(struct conf_parse *p, struct conf_partition *pt, const char *key,
                         const char *value)
{
    if (!strcasecmp(key, "Nodes")) {
        if (conf_replace_str(&pt->nodes, value))
            return conf_fail(p, "out of memory");
    } else if (!strcasecmp(key, "Default")) {
        if (conf_value_bool(value, &pt->is_default))
            return conf_fail(p, "Default must be YES or NO, not '%s'", value);
    } else if (!strcasecmp(key, "MaxTime")) {
        if (conf_value_limit(value, &pt->max_time))
            return conf_fail(p, "invalid MaxTime '%s'", value);
    } else if (!strcasecmp(key, "DefaultTime")) {
        if (conf_value_limit(value, &pt->default_time))
            return conf_fail(p, "invalid DefaultTime '%s'", value);
    } else if (!strcasecmp(key, "MaxNodes")) {
        if (!strcasecmp(value, "UNLIMITED") || !strcasecmp(value, "INFINITE"))
            pt->max_nodes = UINT32_MAX;
        else if (conf_value_u32(value, 1, UINT32_MAX - 1, &pt->max_nodes))
            return conf_fail(p, "invalid MaxNodes '%s'", value);
    } else if (!strcasecmp(key, "MinNodes")) {
        if (conf_value_u32(value, 0, UINT32_MAX - 1, &pt->min_nodes))
            return conf_fail(p, "invalid MinNodes '%s'", value);
    } else if (!strcasecmp(key, "PriorityTier") || !strcasecmp(key, "Priority")) {
        if (conf_value_u32(value, 0, 65533, &pt->priority_tier))
            return conf_fail(p, "invalid %s '%s'", key, value);
    } else if (!strcasecmp(key, "MaxRunning") || !strcasecmp(key, "MaxUserRunning") ||
               !strcasecmp(key, "MaxGroupRunning")) {
        uint32_t *slot = !strcasecmp(key, "MaxRunning")       ? &pt->max_running
                         : !strcasecmp(key, "MaxUserRunning") ? &pt->max_user_running
                                                               : &pt->max_group_running;
        if (conf_value_u32(value, 0, 4000000000u, slot))
            return conf_fail(p, "invalid %s '%s'", key, value);
    } else if (!strcasecmp(key, "SubmitFilters") || !strcasecmp(key, "ActivationFilters")) {
        char **slot = !strcasecmp(key, "SubmitFilters") ? &pt->submit_filters
                                                         : &pt->activation_filters;
        if (conf_check_filters(p, value))
            return TS_ECONF;
        if (conf_replace_str(slot, value))
            return conf_fail(p, "out of memory");
    } else if (!strcasecmp(key, "State")) {
        int i;
        if (conf_value_state(p, "partition", value, part_states,
                             sizeof(part_states) / sizeof(part_states[0]), &i))
            return TS_ECONF;
        pt->state = (enum conf_part_state)i;
    } else {
        return conf_fail(p, "unknown partition key '%s'", key);
    }
    return TS_OK;
}

static int partition_copy(struct conf_partition *dst, const struct conf_partition *src)
{
    *dst = *src;
    dst->name = dst->nodes = dst->submit_filters = dst->activation_filters = NULL;
    dst->node_index = NULL;
    dst->nnodes = 0;
    if ((src->nodes && !(dst->nodes = strdup(src->nodes))) ||
        (src->submit_filters && !(dst->submit_filters = strdup(src->submit_filters))) ||
        (src->activation_filters && !(dst->activation_filters = strdup(src->activation_filters))))
        return TS_ENOMEM;
    return TS_OK;
}

int conf_partition_line(struct conf_parse *p, struct conf_kv *kv, size_t nkv)
{
    struct conf *c = p->conf;
    const char *name = kv[0].value;
    struct conf_partition pt;
    if (partition_copy(&pt, &p->part_default))
        return conf_fail(p, "out of memory");
    int err = TS_OK;
    for (size_t i = 1; i < nkv && !err; i++)
        err = partition_set(p, &pt, kv[i].key, kv[i].value);
    if (!err && !strcasecmp(name, "DEFAULT")) {
        conf_partition_clear(&p->part_default);
        p->part_default = pt;
        return TS_OK;
    }
    if (!err && !conf_valid_name(name))
        err = conf_fail(p, "invalid partition name '%s'", name);
    for (size_t i = 0; !err && i < c->npartitions; i++)
        if (!strcmp(c->partitions[i].name, name))
            err = conf_fail(p, "partition %s is defined twice (first at line %d)", name,
                            p->part_lines[i]);
    if (!err && !(pt.name = strdup(name)))
        err = conf_fail(p, "out of memory");
    if (!err) {
        struct conf_partition *parts =
            realloc(c->partitions, (c->npartitions + 1) * sizeof(*parts));
        int *lines = realloc(p->part_lines, (c->npartitions + 1) * sizeof(*lines));
        if (parts)
            c->partitions = parts;
        if (lines)
            p->part_lines = lines;
        if (!parts || !lines)
            err = conf_fail(p, "out of memory");
    }
    if (err) {
        conf_partition_clear(&pt);
        return err;
    }
    p->part_lines[c->npartitions] = p->line;
    c->partitions[c->npartitions++] = pt;
    return TS_OK;
}
