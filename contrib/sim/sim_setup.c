/* Setting a simulation up: policies as SchedulerParameters, and the plugins
 * (contrib/sim/sim.h). */
#include "contrib/sim/sim.h"

#include "common/util/errors.h"
#include "common/util/plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each policy asks of sched/backfill. "%s" is where bf_window goes. The simulator's
 * conventions hold for all: decisions at the second (bf_resolution=1), and a window that
 * covers the whole queue, so that no job goes without a plan for being far back. */
static const struct {
    const char *name;
    const char *params;
} policies[] = {
    [SIM_POLICY_FCFS] = {"fcfs", "bf_mode=off"},
    [SIM_POLICY_EASY] = {"easy", "bf_mode=whole,bf_reserve_depth=1,bf_resolution=1,"
                                 "bf_window=%lld"},
    [SIM_POLICY_CONSERVATIVE] = {"conservative", "bf_mode=whole,bf_reserve_depth=1000000000,"
                                                 "bf_resolution=1,bf_window=%lld"},
    [SIM_POLICY_DEFAULT] = {"default", "bf_mode=whole,bf_resolution=1,bf_window=%lld"},
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

int sim_policy_parse(const char *name, enum sim_policy *out)
{
    for (size_t i = 0; i < NPOLICIES; i++)
        if (!strcmp(name, policies[i].name)) {
            *out = (enum sim_policy)i;
            return TS_OK;
        }
    return TS_EINVAL;
}

const char *sim_policy_name(enum sim_policy p)
{
    return (size_t)p < NPOLICIES ? policies[p].name : "?";
}

int64_t sim_window_minutes(const struct swf_job *jobs, size_t n)
{
    int64_t seconds = 0;
    for (size_t i = 0; i < n && seconds < SIM_WINDOW_MAX_MIN * INT64_C(60); i++)
        seconds += jobs[i].estimate;
    int64_t minutes = (seconds + 59) / 60;
    if (minutes > SIM_WINDOW_MAX_MIN)
        return SIM_WINDOW_MAX_MIN;
    return minutes > 0 ? minutes : 1;
}

/* The length of the key of entry "key=value" or "flag". */
static size_t key_len(const char *entry, size_t len)
{
    const char *eq = memchr(entry, '=', len);
    return eq ? (size_t)(eq - entry) : len;
}

/* Whether the comma list holds an entry with this key. */
static int list_has_key(const char *list, const char *key, size_t klen)
{
    while (list && *list) {
        size_t len = strcspn(list, ",");
        if (len && key_len(list, len) == klen && !memcmp(list, key, klen))
            return 1;
        list += len + (list[len] == ',');
    }
    return 0;
}

/* Appends "entry" to out (with a comma after the first), out has room for it. */
static void append_entry(char *out, const char *entry, size_t len)
{
    size_t at = strlen(out);
    if (at)
        out[at++] = ',';
    memcpy(out + at, entry, len);
    out[at + len] = '\0';
}

char *sim_policy_params(enum sim_policy p, int64_t window_min, const char *extra)
{
    if ((size_t)p >= NPOLICIES)
        return NULL;
    char base[256];
    snprintf(base, sizeof(base), policies[p].params, (long long)window_min);
    size_t room = strlen(base) + (extra ? strlen(extra) : 0) + 2;
    char *out = calloc(room, 1);
    if (!out)
        return NULL;
    /* the policy's entries that extra does not set again, then extra's */
    for (const char *e = base; *e;) {
        size_t len = strcspn(e, ",");
        if (len && !list_has_key(extra, e, key_len(e, len)))
            append_entry(out, e, len);
        e += len + (e[len] == ',');
    }
    for (const char *e = extra; e && *e;) {
        size_t len = strcspn(e, ",");
        if (len)
            append_entry(out, e, len);
        e += len + (e[len] == ',');
    }
    return out;
}

int sim_plugins_load(const char *dir, const char *sched_name, struct sim_plugins *out,
                     char *errbuf, size_t errlen)
{
    *out = (struct sim_plugins){0};
    int err = plugin_load(dir, SIM_SELECT_TYPE, SELECT_PLUGIN_TYPE, PLUGIN_ABI_VERSION, NULL,
                          &out->select_plugin, errbuf, errlen);
    if (!err)
        err = plugin_load(dir, sched_name ? sched_name : SIM_SCHED_TYPE, SCHED_PLUGIN_TYPE,
                          PLUGIN_ABI_VERSION, NULL, &out->sched_plugin, errbuf, errlen);
    if (!err)
        err = plugin_load(dir, SIM_PRIORITY_TYPE, PRIORITY_PLUGIN_TYPE, PLUGIN_ABI_VERSION,
                          NULL, &out->priority_plugin, errbuf, errlen);
    if (err) {
        sim_plugins_unload(out);
        return err;
    }
    out->select = plugin_ops(out->select_plugin);
    out->sched = plugin_ops(out->sched_plugin);
    out->priority = plugin_ops(out->priority_plugin);
    return TS_OK;
}

void sim_plugins_unload(struct sim_plugins *p)
{
    plugin_unload(p->priority_plugin);
    plugin_unload(p->sched_plugin);
    plugin_unload(p->select_plugin);
    *p = (struct sim_plugins){0};
}
