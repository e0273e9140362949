#include "common/util/plugin.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct plugin {
    void *handle;
    const struct plugin_header *header;
};

/* "sched/backfill" -> "sched_backfill.so"; only [a-z0-9_] on both sides of one slash. */
static int file_name(const char *name, char *out, size_t len)
{
    const char *slash = strchr(name, '/');
    if (!slash || slash == name || !slash[1] || strchr(slash + 1, '/'))
        return TS_EINVAL;
    for (const char *s = name; *s; s++)
        if (s != slash && !islower((unsigned char)*s) && !isdigit((unsigned char)*s) &&
            *s != '_')
            return TS_EINVAL;
    int n = snprintf(out, len, "%.*s_%s.so", (int)(slash - name), name, slash + 1);
    return n > 0 && (size_t)n < len ? TS_OK : TS_EINVAL;
}

static int check_header(const struct plugin_header *h, const char *name, const char *type,
                        uint32_t abi, char *errbuf, size_t errlen)
{
    if (h->abi_version != abi) {
        snprintf(errbuf, errlen, "plugin %s was built for ABI version %u, this program needs %u",
                 name, h->abi_version, abi);
        return TS_EPLUGIN_ABI;
    }
    if (!h->type || strcmp(h->type, type) != 0 || !h->name || strcmp(h->name, name) != 0) {
        snprintf(errbuf, errlen, "plugin %s is a %s plugin named %s, not a %s plugin", name,
                 h->type ? h->type : "(null)", h->name ? h->name : "(null)", type);
        return TS_EPLUGIN_TYPE;
    }
    return TS_OK;
}

int plugin_load(const char *dir, const char *name, const char *type, uint32_t abi,
                void *init_arg, struct plugin **out, char *errbuf, size_t errlen)
{
    char dummy[1];
    if (!errbuf) {
        errbuf = dummy;
        errlen = sizeof(dummy);
    }
    errbuf[0] = '\0';
    *out = NULL;
    char file[NAME_MAX + 1], path[PATH_MAX];
    if (file_name(name, file, sizeof(file)) != TS_OK) {
        snprintf(errbuf, errlen, "invalid plugin name '%s' (expected type/name)", name);
        return TS_EINVAL;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, file);

    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(errbuf, errlen, "plugin %s not found: %s", name, dlerror());
        return TS_EPLUGIN_NOTFOUND;
    }
    const struct plugin_header *h = dlsym(handle, PLUGIN_SYMBOL);
    int err = TS_OK;
    if (!h) {
        snprintf(errbuf, errlen, "%s is not a Tessera plugin (no %s table)", path,
                 PLUGIN_SYMBOL);
        err = TS_EPLUGIN_NOTFOUND;
    }
    if (!err)
        err = check_header(h, name, type, abi, errbuf, errlen);
    if (!err && h->init && h->init(init_arg) != 0) {
        snprintf(errbuf, errlen, "plugin %s failed to initialise", name);
        err = TS_EPLUGIN_INIT;
    }
    struct plugin *pl = err ? NULL : calloc(1, sizeof(*pl));
    if (!err && !pl) {
        if (h->fini)
            h->fini();
        err = TS_ENOMEM;
    }
    if (err) {
        dlclose(handle);
        return err;
    }
    pl->handle = handle;
    pl->header = h;
    *out = pl;
    return TS_OK;
}

void plugin_unload(struct plugin *pl)
{
    if (!pl)
        return;
    if (pl->header->fini)
        pl->header->fini();
    dlclose(pl->handle);
    free(pl);
}

const void *plugin_ops(const struct plugin *pl)
{
    return pl->header;
}

const char *plugin_name(const struct plugin *pl)
{
    return pl->header->name;
}
