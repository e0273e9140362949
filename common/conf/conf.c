/* tessera.conf: what the parser's callers use (load a file or a text, free, look up
 * nodes, partitions and SchedulerParameters). The parser itself is the conf_*.c files
 * (common/conf/conf_int.h). */
#include "common/conf/conf.h"

#include "common/conf/conf_int.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *conf_locate(const char *path)
{
    if (path && *path)
        return path;
    const char *env = getenv(CONF_ENV);
    if (env && *env)
        return env;
    return CONF_DEFAULT_PATH;
}

static struct conf *conf_new(struct conf_parse *p)
{
    struct conf *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    p->conf = c;
    /* Defaults go through the same setters as the file's values. */
    const char *file = p->file;
    p->file = "(defaults)";
    int err = conf_directives_defaults(p);
    p->file = file;
    if (err)
        return c;
    p->part_default.max_time = CONF_UNLIMITED;
    p->part_default.default_time = CONF_UNLIMITED;
    p->part_default.max_nodes = UINT32_MAX;
    p->part_default.min_nodes = 0;
    return c;
}

static void parse_cleanup(struct conf_parse *p)
{
    hashmap_destroy(p->node_index);
    conf_node_clear(&p->node_default);
    conf_partition_clear(&p->part_default);
    free(p->part_lines);
    free(p->node_lines);
}

/* Shared by conf_load and conf_parse_string: text NULL means read path. */
static int load(const char *path, const char *text, int allow_include, struct conf **out,
                char *errbuf, size_t errlen)
{
    char dummy[1];
    struct conf_parse p = {.file = path,
                           .err = errbuf ? errbuf : dummy,
                           .errlen = errbuf ? errlen : sizeof(dummy),
                           .allow_include = allow_include};
    p.err[0] = '\0';
    *out = NULL;
    struct conf *c = conf_new(&p);
    p.node_index = hashmap_create();
    int err = c && p.node_index ? TS_OK : TS_ENOMEM;
    if (!err && !p.failed && !(c->path = strdup(path)))
        err = TS_ENOMEM;
    if (!err && !p.failed)
        err = text ? conf_parse_text(&p, text) : conf_parse_file(&p, path);
    if (!err && !p.failed)
        err = conf_finish(&p);
    parse_cleanup(&p);
    if (err || p.failed) {
        conf_free(c);
        return err == TS_ECONF_NOTFOUND || err == TS_ENOMEM ? err : TS_ECONF;
    }
    c->read_time = time(NULL);
    *out = c;
    return TS_OK;
}

int conf_load(const char *path, struct conf **out, char *errbuf, size_t errlen)
{
    return load(path, NULL, 1, out, errbuf, errlen);
}

int conf_parse_string(const char *text, const char *name, int allow_include,
                      struct conf **out, char *errbuf, size_t errlen)
{
    return load(name ? name : "(string)", text, allow_include, out, errbuf, errlen);
}

void conf_free(struct conf *c)
{
    if (!c)
        return;
    conf_directives_free(c);
    free(c->path);
    for (size_t i = 0; i < c->nnodes; i++)
        conf_node_clear(&c->nodes[i]);
    free(c->nodes);
    for (size_t i = 0; i < c->npartitions; i++)
        conf_partition_clear(&c->partitions[i]);
    free(c->partitions);
    free(c);
}

const struct conf_node *conf_find_node(const struct conf *c, const char *name)
{
    for (size_t i = 0; i < c->nnodes; i++)
        if (!strcmp(c->nodes[i].name, name))
            return &c->nodes[i];
    return NULL;
}

const struct conf_partition *conf_find_partition(const struct conf *c, const char *name)
{
    for (size_t i = 0; i < c->npartitions; i++)
        if (!strcmp(c->partitions[i].name, name))
            return &c->partitions[i];
    return NULL;
}

const struct conf_partition *conf_default_partition(const struct conf *c)
{
    for (size_t i = 0; i < c->npartitions; i++)
        if (c->partitions[i].is_default)
            return &c->partitions[i];
    return NULL;
}

int conf_gres_conf_path(const struct conf *c, char *buf, size_t len)
{
    if (c->gres_conf) {
        if ((size_t)snprintf(buf, len, "%s", c->gres_conf) >= len)
            return TS_ETOOBIG;
        return TS_OK;
    }
    const char *slash = c->path ? strrchr(c->path, '/') : NULL;
    int dirlen = slash ? (int)(slash - c->path) : 1;
    const char *dir = slash ? c->path : ".";
    if ((size_t)snprintf(buf, len, "%.*s/gres.conf", dirlen, dir) >= len)
        return TS_ETOOBIG;
    return TS_OK;
}

int conf_sched_param(const struct conf *c, const char *key, const char **value)
{
    /* the last setting of a repeated parameter wins */
    for (size_t i = c->nsched_params; i-- > 0;) {
        if (!strcmp(c->sched_params[i].key, key)) {
            if (value)
                *value = c->sched_params[i].value;
            return 1;
        }
    }
    return 0;
}
