/* tessera.conf's node lines: NodeName=DEFAULT templates, host lists expanded to one node
 * each (with per-node NodeHostname, NodeAddr and Port lists), duplicates refused. */
#include "common/conf/conf_int.h"

#include "common/gres/gres_conf.h"
#include "common/text/hostlist.h"
#include "common/text/idset.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void conf_node_clear(struct conf_node *n)
{
    free(n->name);
    free(n->hostname);
    free(n->addr);
    free(n->features);
    free(n->gres);
    memset(n, 0, sizeof(*n));
}

static int node_copy(struct conf_node *dst, const struct conf_node *src)
{
    *dst = *src;
    dst->name = dst->hostname = dst->addr = dst->features = NULL;
    dst->gres = NULL;
    if ((src->ngres && !(dst->gres = malloc(src->ngres * sizeof(*dst->gres)))) ||
        (src->name && !(dst->name = strdup(src->name))) ||
        (src->hostname && !(dst->hostname = strdup(src->hostname))) ||
        (src->addr && !(dst->addr = strdup(src->addr))) ||
        (src->features && !(dst->features = strdup(src->features)))) {
        conf_node_clear(dst);
        return TS_ENOMEM;
    }
    if (src->ngres)
        memcpy(dst->gres, src->gres, src->ngres * sizeof(*dst->gres));
    return TS_OK;
}

/* Gres=gpu:a100:4,bandwidth:10G; its names are checked against GresTypes once the whole
 * file is read (conf_checks.c), as GresTypes may come later. */
static int node_set_gres(struct conf_parse *p, struct conf_node *n, const char *value)
{
    struct gres_count *items = NULL;
    size_t count = 0;
    char why[256];
    int err = gres_spec_parse(value, &items, &count, why, sizeof(why));
    if (err == TS_ENOMEM)
        return conf_fail(p, "out of memory");
    if (err)
        return conf_fail(p, "invalid Gres '%s': %s", value, why);
    free(n->gres);
    n->gres = items;
    n->ngres = count;
    return TS_OK;
}

/* Set one key of a node template. Name-like keys (NodeName, NodeHostname, NodeAddr, Port)
 * are handled by the caller since they expand per node. */
static int node_set(struct conf_parse *p, struct conf_node *n, const char *key, const char *value)
{
    uint32_t u32;
    uint64_t u64;
    if (!strcasecmp(key, "CPUs") || !strcasecmp(key, "Procs")) {
        if (conf_value_u32(value, 1, CONF_MAX_NODE_CPUS, &u32))
            return conf_fail(p, "CPUs must be a number from 1 to %u, not '%s'", CONF_MAX_NODE_CPUS,
                             value);
        n->cpus = u32;
    } else if (!strcasecmp(key, "Sockets")) {
        if (conf_value_u32(value, 1, 4096, &n->sockets))
            return conf_fail(p, "invalid Sockets '%s'", value);
    } else if (!strcasecmp(key, "CoresPerSocket")) {
        if (conf_value_u32(value, 1, 65536, &n->cores_per_socket))
            return conf_fail(p, "invalid CoresPerSocket '%s'", value);
    } else if (!strcasecmp(key, "ThreadsPerCore")) {
        if (conf_value_u32(value, 1, 1024, &n->threads_per_core))
            return conf_fail(p, "invalid ThreadsPerCore '%s'", value);
    } else if (!strcasecmp(key, "RealMemory")) {
        if (conf_value_u64(value, 1, UINT64_C(1) << 40, &u64))
            return conf_fail(p, "RealMemory must be a number of megabytes, not '%s'", value);
        n->real_memory_mb = u64;
    } else if (!strcasecmp(key, "Features") || !strcasecmp(key, "Feature")) {
        if (!conf_valid_features(value))
            return conf_fail(p, "invalid Features '%s' (names separated by commas)", value);
        if (conf_replace_str(&n->features, value))
            return conf_fail(p, "out of memory");
    } else if (!strcasecmp(key, "Weight")) {
        if (conf_value_u32(value, 0, UINT32_MAX - 1, &n->weight))
            return conf_fail(p, "invalid Weight '%s'", value);
    } else if (!strcasecmp(key, "Gres")) {
        return node_set_gres(p, n, value);
    } else if (!strcasecmp(key, "State")) {
        static const char *const states[] = {[CONF_NODE_UNKNOWN] = "UNKNOWN",
                                              [CONF_NODE_DOWN] = "DOWN",
                                              [CONF_NODE_DRAIN] = "DRAIN",
                                              [CONF_NODE_FUTURE] = "FUTURE"};
        int i;
        if (conf_value_state(p, "node", value, states, sizeof(states) / sizeof(states[0]), &i))
            return TS_ECONF;
        n->state = (enum conf_node_state)i;
    } else {
        return conf_fail(p, "unknown node key '%s'", key);
    }
    return TS_OK;
}

/* Expand a per-node list (NodeHostname, NodeAddr) to exactly count entries: one entry is
 * shared by all nodes, otherwise the lengths must match. */
static int expand_per_node(struct conf_parse *p, const char *key, const char *expr, size_t count,
                           struct hostlist **out)
{
    int err = hostlist_expand(expr, out);
    if (err)
        return conf_fail(p, "invalid %s '%s': %s", key, expr, ts_strerror(err));
    size_t n = hostlist_count(*out);
    if (n != 1 && n != count) {
        hostlist_destroy(*out);
        *out = NULL;
        return conf_fail(p, "%s '%s' names %zu hosts for %zu nodes", key, expr, n, count);
    }
    return TS_OK;
}

/* Port=7001 or Port=7001-7004 / [7001-7004]: one port for all nodes, or one per node in
 * order. count 0 means "parse only". ports[] gets count entries. */
static int expand_ports(struct conf_parse *p, const char *expr, size_t count, uint16_t *ports)
{
    struct idset *set = NULL;
    if (idset_parse(expr, &set) != TS_OK || idset_count(set) == 0) {
        idset_destroy(set);
        return conf_fail(p, "invalid Port '%s'", expr);
    }
    size_t n = idset_count(set);
    int err = TS_OK;
    if (n != 1 && n != count)
        err = conf_fail(p, "Port '%s' gives %zu ports for %zu nodes", expr, n, count);
    uint32_t port = idset_first(set);
    for (size_t i = 0; !err && i < count; i++) {
        if (port == 0 || port > 65535)
            err = conf_fail(p, "invalid Port %u", port);
        else
            ports[i] = (uint16_t)port;
        if (n > 1)
            port = idset_next(set, port);
    }
    idset_destroy(set);
    return err;
}

static int add_node(struct conf_parse *p, const struct conf_node *tmpl, const char *name,
                    const char *hostname, const char *addr, uint16_t port)
{
    struct conf *c = p->conf;
    if (!conf_valid_name(name))
        return conf_fail(p, "invalid node name '%s'", name);
    uintptr_t seen = (uintptr_t)hashmap_get_str(p->node_index, name);
    if (seen)
        return conf_fail(p, "node %s is defined twice (first at line %d)", name,
                         p->node_lines[seen - 1]);
    if (c->nnodes >= CONF_MAX_NODES)
        return conf_fail(p, "more than %u nodes", CONF_MAX_NODES);
    if (c->nnodes == p->node_cap) { /* geometric: a line may add many thousand nodes */
        size_t cap = p->node_cap ? p->node_cap * 2 : 16;
        struct conf_node *nodes = realloc(c->nodes, cap * sizeof(*nodes));
        if (nodes)
            c->nodes = nodes;
        int *lines = realloc(p->node_lines, cap * sizeof(*lines));
        if (lines)
            p->node_lines = lines;
        if (!nodes || !lines)
            return conf_fail(p, "out of memory");
        p->node_cap = cap;
    }
    struct conf_node *n = &c->nodes[c->nnodes];
    if (node_copy(n, tmpl))
        return conf_fail(p, "out of memory");
    n->port = port;
    if (conf_replace_str(&n->name, name) ||
        conf_replace_str(&n->hostname, hostname ? hostname : name) ||
        conf_replace_str(&n->addr, addr ? addr : n->hostname) ||
        (!n->features && !(n->features = strdup("")))) {
        conf_node_clear(n);
        return conf_fail(p, "out of memory");
    }
    if (hashmap_put_str(p->node_index, n->name, (void *)(uintptr_t)(c->nnodes + 1))) {
        conf_node_clear(n);
        return conf_fail(p, "out of memory");
    }
    p->node_lines[c->nnodes++] = p->line;
    return TS_OK;
}

int conf_node_line(struct conf_parse *p, struct conf_kv *kv, size_t nkv)
{
    const char *names = kv[0].value, *hostnames = NULL, *addrs = NULL, *port_expr = NULL;
    int is_default = !strcasecmp(names, "DEFAULT");
    struct conf_node tmpl;
    if (node_copy(&tmpl, &p->node_default))
        return conf_fail(p, "out of memory");
    int err = TS_OK;
    for (size_t i = 1; i < nkv && !err; i++) {
        if (!strcasecmp(kv[i].key, "NodeHostname"))
            hostnames = kv[i].value;
        else if (!strcasecmp(kv[i].key, "NodeAddr"))
            addrs = kv[i].value;
        else if (!strcasecmp(kv[i].key, "Port"))
            port_expr = kv[i].value;
        else
            err = node_set(p, &tmpl, kv[i].key, kv[i].value);
    }
    if (!err && is_default) {
        if (hostnames || addrs)
            err = conf_fail(p, "NodeName=DEFAULT cannot set NodeHostname or NodeAddr");
        else if (port_expr)
            err = expand_ports(p, port_expr, 1, &tmpl.port);
        if (!err) {
            conf_node_clear(&p->node_default);
            p->node_default = tmpl;
            return TS_OK;
        }
        conf_node_clear(&tmpl);
        return err;
    }

    struct hostlist *hn = NULL, *hh = NULL, *ha = NULL;
    uint16_t *ports = NULL;
    if (!err && (err = hostlist_expand(names, &hn)) != TS_OK)
        err = conf_fail(p, "invalid NodeName '%s': %s", names, ts_strerror(err));
    size_t count = err ? 0 : hostlist_count(hn);
    if (!err && count == 0)
        err = conf_fail(p, "NodeName is empty");
    if (!err && hostnames)
        err = expand_per_node(p, "NodeHostname", hostnames, count, &hh);
    if (!err && addrs)
        err = expand_per_node(p, "NodeAddr", addrs, count, &ha);
    if (!err && !(ports = calloc(count, sizeof(*ports))))
        err = conf_fail(p, "out of memory");
    if (!err && port_expr)
        err = expand_ports(p, port_expr, count, ports);
    for (size_t i = 0; !err && i < count; i++) {
        const char *h = hh ? hostlist_nth(hh, hostlist_count(hh) == 1 ? 0 : i) : NULL;
        const char *a = ha ? hostlist_nth(ha, hostlist_count(ha) == 1 ? 0 : i) : NULL;
        err = add_node(p, &tmpl, hostlist_nth(hn, i), h, a, port_expr ? ports[i] : tmpl.port);
    }
    free(ports);
    hostlist_destroy(hn);
    hostlist_destroy(hh);
    hostlist_destroy(ha);
    conf_node_clear(&tmpl);
    return err;
}
