/* The plugin loader.
 *
 * A plugin is one shared object exporting one ops table named "tessera_plugin" whose
 * first member is a struct plugin_header; the rest of the table is specific to the
 * plugin's type (sched, priority, select, ...). "sched/backfill" is looked for as
 * "<dir>/sched_backfill.so". The loader refuses a missing file, a missing table, a table
 * of another type and a table built against another ABI, each with a clear message. */
#ifndef TESSERA_COMMON_PLUGIN_H
#define TESSERA_COMMON_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Raise when any ops table or anything a plugin sees changes incompatibly. */
#define PLUGIN_ABI_VERSION 2
#define PLUGIN_SYMBOL "tessera_plugin"

struct plugin_header {
    const char *type;     /* "sched" */
    const char *name;     /* "sched/backfill" */
    uint32_t abi_version; /* PLUGIN_ABI_VERSION when built */
    int (*init)(void *arg); /* may be NULL; non-zero: refuse to load */
    void (*fini)(void);     /* may be NULL */
};

struct plugin;

/* Load name ("type/what") from dir, check it is of type and ABI abi, and call its init
 * with init_arg. Errors: TS_EINVAL (malformed name), TS_EPLUGIN_NOTFOUND,
 * TS_EPLUGIN_TYPE, TS_EPLUGIN_ABI, TS_EPLUGIN_INIT; errbuf gets a one-line reason. */
int plugin_load(const char *dir, const char *name, const char *type, uint32_t abi,
                void *init_arg, struct plugin **out, char *errbuf, size_t errlen);
/* Call fini and unload. NULL is ignored. */
void plugin_unload(struct plugin *pl);

/* The ops table (starts with the header). */
const void *plugin_ops(const struct plugin *pl);
const char *plugin_name(const struct plugin *pl);

#endif
