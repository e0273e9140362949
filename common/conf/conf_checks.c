/* tessera.conf after its text: node values that default from others, one address and
 * port per node, partitions' node lists resolved against the nodes, their time limits
 * and the one default partition checked. */
#include "common/conf/conf_int.h"

#include "common/gres/gres_conf.h"
#include "common/text/hostlist.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static int resolve_partition_nodes(struct conf_parse *p, struct conf_partition *pt)
{
    struct conf *c = p->conf;
    if (!pt->nodes || !*pt->nodes)
        return TS_OK;
    struct hostlist *hl = NULL;
    int err = TS_OK;
    if (!strcasecmp(pt->nodes, "ALL")) {
        hl = hostlist_create();
        for (size_t i = 0; hl && !err && i < c->nnodes; i++)
            err = hostlist_push(hl, c->nodes[i].name);
        if (!hl || err) {
            hostlist_destroy(hl);
            return conf_fail(p, "out of memory");
        }
    } else if ((err = hostlist_expand(pt->nodes, &hl)) != TS_OK) {
        return conf_fail(p, "partition %s: invalid Nodes '%s': %s", pt->name, pt->nodes,
                         ts_strerror(err));
    }
    hostlist_uniq(hl);
    size_t n = hostlist_count(hl);
    pt->node_index = calloc(n ? n : 1, sizeof(size_t));
    if (!pt->node_index)
        err = conf_fail(p, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        const char *name = hostlist_nth(hl, i);
        uintptr_t j = (uintptr_t)hashmap_get_str(p->node_index, name);
        if (!j)
            err = conf_fail(p, "partition %s: node %s is not defined", pt->name, name);
        else
            pt->node_index[pt->nnodes++] = j - 1;
    }
    hostlist_destroy(hl);
    return err;
}

/* What a node line may leave out: the node daemons' port, a socket, a thread per core,
 * cores from CPUs (or CPUs from the rest), a megabyte of memory. */
static void node_defaults(const struct conf *c, struct conf_node *n)
{
    if (!n->port)
        n->port = c->noded_port;
    if (!n->sockets)
        n->sockets = 1;
    if (!n->threads_per_core)
        n->threads_per_core = 1;
    if (!n->cores_per_socket)
        n->cores_per_socket = n->cpus ? (n->cpus + n->sockets * n->threads_per_core - 1) /
                                            (n->sockets * n->threads_per_core)
                                      : 1;
    if (!n->cpus)
        n->cpus = n->sockets * n->cores_per_socket * n->threads_per_core;
    if (!n->real_memory_mb)
        n->real_memory_mb = 1;
}

/* Node i's address and port, unless another node has them. endpoints: "addr:port" ->
 * index + 1. */
static int add_endpoint(struct conf_parse *p, struct hashmap *endpoints, size_t i)
{
    const struct conf *c = p->conf;
    const struct conf_node *n = &c->nodes[i];
    char key[HOSTLIST_MAX_NAME + 8];
    int klen = snprintf(key, sizeof(key), "%s:%u", n->addr, n->port);
    uintptr_t j = (uintptr_t)hashmap_get(endpoints, key, (size_t)klen);
    if (j)
        return conf_fail(p, "nodes %s and %s both use %s port %u", c->nodes[j - 1].name,
                         n->name, n->addr, n->port);
    if (hashmap_put(endpoints, key, (size_t)klen, (void *)(uintptr_t)(i + 1)))
        return conf_fail(p, "out of memory");
    return TS_OK;
}

/* Slurm's words for a node line's resource that GresTypes does not list. */
static int check_node_gres(struct conf_parse *p, const struct conf_node *n)
{
    for (size_t i = 0; i < n->ngres; i++) {
        if (gres_types_contains(p->conf->gres_types, n->gres[i].name))
            continue;
        char item[GRES_NAME_MAX + GRES_TYPE_MAX + 32];
        gres_spec_format(&n->gres[i], 1, item, sizeof(item));
        return conf_fail(p, "Invalid GRES configured on node %s: %s", n->name, item);
    }
    return TS_OK;
}

static int finish_nodes(struct conf_parse *p)
{
    struct conf *c = p->conf;
    struct hashmap *endpoints = hashmap_create();
    if (!endpoints)
        return conf_fail(p, "out of memory");
    int err = TS_OK;
    for (size_t i = 0; !err && i < c->nnodes; i++) {
        p->line = p->node_lines[i];
        node_defaults(c, &c->nodes[i]);
        err = check_node_gres(p, &c->nodes[i]);
        if (!err)
            err = add_endpoint(p, endpoints, i);
    }
    hashmap_destroy(endpoints);
    return err;
}

static int finish_partitions(struct conf_parse *p)
{
    struct conf *c = p->conf;
    int default_line = 0;
    for (size_t i = 0; i < c->npartitions; i++) {
        struct conf_partition *pt = &c->partitions[i];
        p->line = p->part_lines[i];
        int err = resolve_partition_nodes(p, pt);
        if (err)
            return err;
        if (pt->max_time != CONF_UNLIMITED && pt->default_time != CONF_UNLIMITED &&
            pt->default_time > pt->max_time)
            return conf_fail(p, "partition %s: DefaultTime is longer than MaxTime", pt->name);
        if (pt->is_default) {
            if (default_line)
                return conf_fail(p, "partition %s: a default partition is already set at line %d",
                                 pt->name, default_line);
            default_line = p->line;
        }
    }
    return TS_OK;
}

int conf_finish(struct conf_parse *p)
{
    int err = finish_nodes(p);
    if (!err)
        err = finish_partitions(p);
    if (!err)
        p->line = 0;
    return err;
}
