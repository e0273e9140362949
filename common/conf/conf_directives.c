/* tessera.conf's cluster-wide keys: the directive table (type, bounds, default, extra
 * check per key), the checks of the keys that need more than their type, and the lists
 * they hold (filters, SchedulerParameters). */
#include "common/conf/conf_int.h"

#include "common/gres/gres_conf.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum dir_type {
    DT_STRING,   /* any non-empty text */
    DT_PATH,     /* non-empty text starting with "/" */
    DT_PORT,     /* 1-65535 */
    DT_SECONDS,  /* unsigned seconds within [min, max] */
    DT_UINT,     /* unsigned number within [min, max] */
    DT_LOGLEVEL, /* a log level name */
    DT_BOOL,     /* yes/no, true/false, 1/0 (an int) */
};

struct directive {
    const char *key;
    enum dir_type type;
    size_t offset;
    uint64_t min, max;
    const char *def; /* default, parsed like a value from the file; NULL: unset */
    int (*check)(struct conf_parse *p, const char *value); /* extra rules for this key */
};

static int check_auth_type(struct conf_parse *p, const char *v);
static int check_auth_info(struct conf_parse *p, const char *v);
static int check_slurm_user(struct conf_parse *p, const char *v);
static int check_noded_user(struct conf_parse *p, const char *v);
static int check_scheduler_type(struct conf_parse *p, const char *v);
static int check_priority_type(struct conf_parse *p, const char *v);
static int check_proctrack_type(struct conf_parse *p, const char *v);
static int check_cgroup_plugin(struct conf_parse *p, const char *v);
static int check_select_type(struct conf_parse *p, const char *v);
static int check_scheduler_parameters(struct conf_parse *p, const char *v);
static int check_resources_max(struct conf_parse *p, const char *v);
static int check_resources_available(struct conf_parse *p, const char *v);
static int check_gres_types(struct conf_parse *p, const char *v);

#define OFF(field) offsetof(struct conf, field)
/* In alphabetical order (ignoring case): conf_foreach_entry lists them as they stand. */
static const struct directive directives[] = {
    {"AccountingRetention", DT_UINT, OFF(accounting_retention), 0, 1200, "0", NULL},
    {"ActivationFilters", DT_STRING, OFF(activation_filters), 0, 0, NULL, conf_check_filters},
    {"AllowedProcesses", DT_UINT, OFF(allowed_processes), 0, 4000000000u, "0", NULL},
    {"AllowedRAMSpace", DT_UINT, OFF(allowed_ram_space), 1, 10000, "100", NULL},
    {"AllowedSwapSpace", DT_UINT, OFF(allowed_swap_space), 0, 10000, "0", NULL},
    {"AuthInfo", DT_STRING, OFF(auth_info), 0, 0, NULL, check_auth_info},
    {"AuthType", DT_STRING, OFF(auth_type), 0, 0, "auth/munge", check_auth_type},
    {"CgroupPlugin", DT_STRING, OFF(cgroup_plugin), 0, 0, "autodetect", check_cgroup_plugin},
    {"ClusterName", DT_STRING, OFF(cluster_name), 0, 0, "tessera", NULL},
    {"ConstrainCores", DT_BOOL, OFF(constrain_cores), 0, 0, "no", NULL},
    {"ConstrainRAMSpace", DT_BOOL, OFF(constrain_ram_space), 0, 0, "no", NULL},
    {"CtldDebug", DT_LOGLEVEL, OFF(ctld_debug), 0, 0, "info", NULL},
    {"CtldHost", DT_STRING, OFF(ctld_host), 0, 0, "localhost", NULL},
    {"CtldLogFile", DT_PATH, OFF(ctld_log_file), 0, 0, NULL, NULL},
    {"CtldPidFile", DT_PATH, OFF(ctld_pid_file), 0, 0, NULL, NULL},
    {"CtldPort", DT_PORT, OFF(ctld_port), 1, 65535, "6917", NULL},
    {"DedicatedTimeFile", DT_PATH, OFF(dedicated_time_file), 0, 0, NULL, NULL},
    {"DefaultHoldDuration", DT_SECONDS, OFF(default_hold_duration), 60, 604800, "900", NULL},
    {"FilterRetryInterval", DT_SECONDS, OFF(filter_retry_interval), 1, 86400, "60", NULL},
    {"FilterTimeout", DT_SECONDS, OFF(filter_timeout), 1, 86400, "15", NULL},
    {"FirstJobId", DT_UINT, OFF(first_job_id), 1, 0x7fffffff, "1", NULL},
    {"GresConf", DT_PATH, OFF(gres_conf), 0, 0, NULL, NULL},
    {"GresTypes", DT_STRING, OFF(gres_types), 0, 0, NULL, check_gres_types},
    {"HolidaysFile", DT_PATH, OFF(holidays_file), 0, 0, NULL, NULL},
    {"JobCredentialPrivateKey", DT_PATH, OFF(cred_private_key), 0, 0, NULL, NULL},
    {"JobCredentialPublicCertificate", DT_PATH, OFF(cred_public_key), 0, 0, NULL, NULL},
    {"KillWait", DT_SECONDS, OFF(kill_wait), 0, 86400, "30", NULL},
    {"MaxEnvCount", DT_UINT, OFF(max_env_count), 16, 1000000, "8192", NULL},
    {"MaxEnvSize", DT_UINT, OFF(max_env_size), 1024, CONF_MAX_ENV_SIZE, "2097152", NULL},
    {"MaxGroupRunning", DT_UINT, OFF(max_group_running), 0, 4000000000u, "0", NULL},
    {"MaxJobCount", DT_UINT, OFF(max_job_count), 1, 4000000000u, "10000", NULL},
    {"MaxRunning", DT_UINT, OFF(max_running), 0, 4000000000u, "0", NULL},
    {"MaxScriptSize", DT_UINT, OFF(max_script_size), 1024, CONF_MAX_SCRIPT_SIZE, "4194304",
     NULL},
    {"MaxSubmitJobs", DT_UINT, OFF(max_submit_jobs), 0, 4000000000u, "0", NULL},
    {"MaxUserRunning", DT_UINT, OFF(max_user_running), 0, 4000000000u, "0", NULL},
    {"MessageTimeout", DT_SECONDS, OFF(message_timeout), 1, 3600, "10", NULL},
    {"MinJobAge", DT_SECONDS, OFF(min_job_age), 0, 31536000, "300", NULL},
    {"NodedDebug", DT_LOGLEVEL, OFF(noded_debug), 0, 0, "info", NULL},
    {"NodedLogFile", DT_PATH, OFF(noded_log_file), 0, 0, NULL, NULL},
    {"NodedPidFile", DT_PATH, OFF(noded_pid_file), 0, 0, NULL, NULL},
    {"NodedPort", DT_PORT, OFF(noded_port), 1, 65535, "6918", NULL},
    {"NodedTimeout", DT_SECONDS, OFF(noded_timeout), 1, 86400, "300", NULL},
    {"NodedUser", DT_STRING, OFF(noded_user), 0, 0, "root", check_noded_user},
    {"PluginDir", DT_PATH, OFF(plugin_dir), 0, 0, TESSERA_PLUGIN_DIR, NULL},
    {"PolicyFile", DT_PATH, OFF(policy_file), 0, 0, NULL, NULL},
    {"PriorityType", DT_STRING, OFF(priority_type), 0, 0, "priority/pbs", check_priority_type},
    {"ProctrackType", DT_STRING, OFF(proctrack_type), 0, 0, "proctrack/pgid",
     check_proctrack_type},
    {"ResourceGroupFile", DT_PATH, OFF(resource_group_file), 0, 0, NULL, NULL},
    {"ResourcesAvailable", DT_STRING, OFF(resources_available), 0, 0, NULL,
     check_resources_available},
    {"ResourcesMax", DT_STRING, OFF(resources_max), 0, 0, NULL, check_resources_max},
    {"RpcFrameTimeout", DT_SECONDS, OFF(rpc_frame_timeout), 1, 3600, "60", NULL},
    {"RpcHandshakeTimeout", DT_SECONDS, OFF(rpc_handshake_timeout), 1, 60, "3", NULL},
    {"RpcIdleTimeout", DT_SECONDS, OFF(rpc_idle_timeout), 0, 604800, "600", NULL},
    {"RpcMaxConnections", DT_UINT, OFF(rpc_max_connections), 16, 1000000, "8192", NULL},
    {"RpcMaxUnauthConnections", DT_UINT, OFF(rpc_max_unauth), 1, 1000000, "1024", NULL},
    {"RpcMaxUnauthPerHost", DT_UINT, OFF(rpc_max_unauth_per_host), 1, 1000000, "64", NULL},
    {"RpcMaxUserConnections", DT_UINT, OFF(rpc_max_user_connections), 1, 1000000, "1024",
     NULL},
    {"SbcastMaxFileMB", DT_UINT, OFF(sbcast_max_file_mb), 1, 1048576, "4096", NULL},
    {"SchedulerParameters", DT_STRING, OFF(scheduler_parameters), 0, 0, NULL,
     check_scheduler_parameters},
    {"SchedulerType", DT_STRING, OFF(scheduler_type), 0, 0, "sched/backfill",
     check_scheduler_type},
    {"SelectType", DT_STRING, OFF(select_type), 0, 0, "select/consumable", check_select_type},
    {"SlurmUser", DT_STRING, OFF(slurm_user), 0, 0, "root", check_slurm_user},
    {"SpoolDir", DT_PATH, OFF(spool_dir), 0, 0, "/var/spool/tessera", NULL},
    {"StateMinFreeMB", DT_UINT, OFF(state_min_free_mb), 0, 1048576, "64", NULL},
    {"StateSaveLocation", DT_PATH, OFF(state_save_location), 0, 0, "/var/lib/tessera", NULL},
    {"SubmitFilters", DT_STRING, OFF(submit_filters), 0, 0, NULL, conf_check_filters},
};
#undef OFF
#define NDIRECTIVES (sizeof(directives) / sizeof(directives[0]))
_Static_assert(NDIRECTIVES <= CONF_MAX_DIRECTIVES, "grow CONF_MAX_DIRECTIVES");

static const struct directive *find_directive(const char *key)
{
    for (size_t i = 0; i < NDIRECTIVES; i++)
        if (!strcasecmp(directives[i].key, key))
            return &directives[i];
    return NULL;
}

static int set_directive(struct conf_parse *p, const struct directive *d, const char *value)
{
    char *base = (char *)p->conf;
    uint32_t u32;
    switch (d->type) {
    case DT_PATH:
        if (value[0] != '/')
            return conf_fail(p, "%s must be an absolute path, not '%s'", d->key, value);
        /* fall through */
    case DT_STRING:
        if (!*value)
            return conf_fail(p, "%s needs a value", d->key);
        if (conf_replace_str((char **)(base + d->offset), value))
            return conf_fail(p, "out of memory");
        break;
    case DT_LOGLEVEL: {
        enum log_level lvl;
        if (log_level_parse(value, &lvl))
            return conf_fail(p, "%s: unknown log level '%s'", d->key, value);
        if (conf_replace_str((char **)(base + d->offset), value))
            return conf_fail(p, "out of memory");
        break;
    }
    case DT_PORT:
        if (conf_value_u32(value, 1, 65535, &u32))
            return conf_fail(p, "%s: invalid port '%s'", d->key, value);
        *(uint16_t *)(base + d->offset) = (uint16_t)u32;
        break;
    case DT_BOOL:
        if (conf_value_bool(value, (int *)(base + d->offset)))
            return conf_fail(p, "%s must be yes or no, not '%s'", d->key, value);
        break;
    case DT_SECONDS:
    case DT_UINT:
        if (conf_value_u32(value, (uint32_t)d->min, (uint32_t)d->max, &u32))
            return conf_fail(p, "%s must be a whole number from %llu to %llu, not '%s'", d->key,
                             (unsigned long long)d->min, (unsigned long long)d->max, value);
        *(uint32_t *)(base + d->offset) = u32;
        break;
    }
    return d->check ? d->check(p, value) : TS_OK;
}

static int check_auth_type(struct conf_parse *p, const char *v)
{
    if (strcmp(v, "auth/munge") != 0)
        return conf_fail(p, "AuthType '%s' is not supported (only auth/munge)", v);
    return TS_OK;
}

/* AuthInfo=socket=/path[,ttl=N] */
static int check_auth_info(struct conf_parse *p, const char *v)
{
    struct conf *c = p->conf;
    free(c->munge_socket);
    c->munge_socket = NULL;
    c->cred_ttl = 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return conf_fail(p, "out of memory");
    int err = TS_OK;
    for (char *item = strtok_r(copy, ",", &save); item && !err;
         item = strtok_r(NULL, ",", &save)) {
        if (!strncmp(item, "socket=", 7) && item[7] == '/') {
            if (conf_replace_str(&c->munge_socket, item + 7))
                err = conf_fail(p, "out of memory");
        } else if (!strncmp(item, "ttl=", 4)) {
            if (conf_value_u32(item + 4, 1, 3600, &c->cred_ttl))
                err = conf_fail(p, "AuthInfo: invalid ttl '%s'", item + 4);
        } else {
            err = conf_fail(p, "AuthInfo: unknown item '%s' (expected socket=PATH or ttl=SECONDS)",
                            item);
        }
    }
    free(copy);
    return err;
}

/* A user by name or uid. */
static int resolve_user(struct conf_parse *p, const char *key, const char *v, uid_t *out)
{
    uint32_t uid;
    if (conf_value_u32(v, 0, UINT32_MAX - 1, &uid) == TS_OK) {
        *out = uid;
        return TS_OK;
    }
    if (namecache_nss_id(NAMECACHE_USER, v, &uid) != 1)
        return conf_fail(p, "%s '%s': no such user", key, v);
    *out = uid;
    return TS_OK;
}

static int check_slurm_user(struct conf_parse *p, const char *v)
{
    return resolve_user(p, "SlurmUser", v, &p->conf->slurm_user_uid);
}

static int check_noded_user(struct conf_parse *p, const char *v)
{
    return resolve_user(p, "NodedUser", v, &p->conf->noded_user_uid);
}


/* "cpus=N,mem=SIZE,nodes=N[,walltime=T]" into r. */
static int parse_resources(struct conf_parse *p, const char *key, const char *v, int walltime,
                           struct conf_resources *r)
{
    memset(r, 0, sizeof(*r));
    char buf[256];
    if (strlen(v) >= sizeof(buf))
        return conf_fail(p, "%s is too long", key);
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return conf_fail(p, "%s: '%s' is not name=value", key, item);
        *eq++ = '\0';
        char *end;
        unsigned long long n = strtoull(eq, &end, 10);
        int number = isdigit((unsigned char)eq[0]) && !*end && n > 0;
        if (!strcasecmp(item, "cpus") || !strcasecmp(item, "ncpus")) {
            if (!number)
                return conf_fail(p, "%s: cpus must be a positive number, not '%s'", key, eq);
            r->cpus = n;
        } else if (!strcasecmp(item, "nodes") || !strcasecmp(item, "nodect")) {
            if (!number)
                return conf_fail(p, "%s: nodes must be a positive number, not '%s'", key, eq);
            r->nodes = n;
        } else if (!strcasecmp(item, "mem")) {
            if (conf_value_mem_mb(eq, &r->mem_mb))
                return conf_fail(p, "%s: mem must be a size (M, G or T), not '%s'", key, eq);
        } else if (walltime && !strcasecmp(item, "walltime")) {
            int64_t secs;
            if (timefmt_parse_duration(eq, &secs) != TS_OK || secs <= 0)
                return conf_fail(p, "%s: walltime must be a duration, not '%s'", key, eq);
            r->walltime = secs;
        } else {
            return conf_fail(p, "%s: unknown resource '%s' (cpus, mem, nodes%s)", key, item,
                             walltime ? ", walltime" : "");
        }
    }
    return TS_OK;
}

static int check_resources_max(struct conf_parse *p, const char *v)
{
    return parse_resources(p, "ResourcesMax", v, 1, &p->conf->res_max);
}

static int check_resources_available(struct conf_parse *p, const char *v)
{
    return parse_resources(p, "ResourcesAvailable", v, 0, &p->conf->res_available);
}

#define CONF_MAX_FILTERS 16

/* "/a,/b": absolute paths, at most CONF_MAX_FILTERS. */
int conf_check_filters(struct conf_parse *p, const char *v)
{
    size_t n = 0;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        if (len == 0 || s[0] != '/')
            return conf_fail(p, "filters are absolute paths separated by commas, not '%s'", v);
        if (++n > CONF_MAX_FILTERS)
            return conf_fail(p, "at most %d filters in a list", CONF_MAX_FILTERS);
        s += len;
        if (*s == ',')
            s++;
    }
    return TS_OK;
}

static int push_filters(const char *list, char ***paths, size_t *n)
{
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ",");
        char **grown = realloc(*paths, (*n + 1) * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        *paths = grown;
        if (!(grown[*n] = strndup(s, len)))
            return TS_ENOMEM;
        (*n)++;
        s += len;
        if (*s == ',')
            s++;
    }
    return TS_OK;
}

int conf_filters(const struct conf *conf, const struct conf_partition *part,
                 enum conf_filter_kind kind, char ***paths, size_t *n)
{
    int act = kind == CONF_FILTER_ACTIVATION;
    *paths = NULL;
    *n = 0;
    int err = part ? push_filters(act ? part->activation_filters : part->submit_filters, paths, n)
                   : TS_OK;
    if (!err)
        err = push_filters(act ? conf->activation_filters : conf->submit_filters, paths, n);
    if (err) {
        conf_filters_free(*paths, *n);
        *paths = NULL;
        *n = 0;
    }
    return err;
}

void conf_filters_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static int check_gres_types(struct conf_parse *p, const char *v)
{
    if (!gres_types_valid(v))
        return conf_fail(p, "GresTypes must be at most %d names separated by commas, not '%s'",
                         GRES_SPEC_MAX_ITEMS, v);
    return TS_OK;
}

static int check_priority_type(struct conf_parse *p, const char *v)
{
    if (strncmp(v, "priority/", 9) != 0 || !conf_valid_name(v + 9))
        return conf_fail(p, "PriorityType must be priority/NAME, not '%s'", v);
    return TS_OK;
}

static int check_proctrack_type(struct conf_parse *p, const char *v)
{
    if (strcmp(v, "proctrack/pgid") != 0 && strcmp(v, "proctrack/cgroup") != 0)
        return conf_fail(p, "ProctrackType must be proctrack/pgid or proctrack/cgroup, not '%s'",
                         v);
    return TS_OK;
}

static int check_cgroup_plugin(struct conf_parse *p, const char *v)
{
    if (strcmp(v, "autodetect") != 0 && strcmp(v, "cgroup/v1") != 0 &&
        strcmp(v, "cgroup/v2") != 0 && strcmp(v, "none") != 0)
        return conf_fail(p, "CgroupPlugin must be autodetect, cgroup/v1, cgroup/v2 or none, "
                            "not '%s'", v);
    return TS_OK;
}

static int check_scheduler_type(struct conf_parse *p, const char *v)
{
    if (strncmp(v, "sched/", 6) != 0 || !conf_valid_name(v + 6))
        return conf_fail(p, "SchedulerType must be sched/NAME, not '%s'", v);
    return TS_OK;
}

static int check_select_type(struct conf_parse *p, const char *v)
{
    if (strncmp(v, "select/", 7) != 0 || !conf_valid_name(v + 7))
        return conf_fail(p, "SelectType must be select/NAME, not '%s'", v);
    return TS_OK;
}

/* SchedulerParameters known to Tessera and the values they take; others (a site's Slurm
 * settings carried over) are kept and ignored, as Slurm ignores what it does not know. */
static const struct {
    const char *key;
    uint32_t min, max; /* numeric range; max 0: a flag without value */
} sched_params[] = {
    {"bf_interval", 1, 86400},      {"bf_max_job_test", 1, 1000000},
    {"bf_resolution", 1, 3600},     {"bf_reserve_depth", 1, 1000000},
    {"bf_window", 1, 43200},        {"sched_interval", 1, 86400},
    {"sched_min_interval", 0, 60000000}, {"whole_hetjob", 0, 0},
    {"disable_hetjob_steps", 0, 0}, {"bf_mode", 0, 0},
    {"bf_yield_interval", 1, 10000000}, {"bf_min_gap", 0, 3600000},
    {"default_queue_depth", 1, 1000000},
};

static int check_sched_item(struct conf_parse *p, const char *item)
{
    const char *eq = strchr(item, '=');
    size_t klen = eq ? (size_t)(eq - item) : strlen(item);
    for (size_t i = 0; i < sizeof(sched_params) / sizeof(sched_params[0]); i++) {
        if (strlen(sched_params[i].key) != klen || strncmp(sched_params[i].key, item, klen))
            continue;
        if (!strcmp(sched_params[i].key, "bf_mode")) {
            if (!eq || (strcmp(eq + 1, "partial") && strcmp(eq + 1, "whole") &&
                        strcmp(eq + 1, "off")))
                return conf_fail(p, "SchedulerParameters: bf_mode must be partial, whole or off");
            return TS_OK;
        }
        if (sched_params[i].max == 0) {
            if (eq)
                return conf_fail(p, "SchedulerParameters: %.*s takes no value", (int)klen, item);
            return TS_OK;
        }
        uint32_t v;
        if (!eq || conf_value_u32(eq + 1, sched_params[i].min, sched_params[i].max, &v))
            return conf_fail(p, "SchedulerParameters: %.*s needs a number from %u to %u", (int)klen,
                             item, sched_params[i].min, sched_params[i].max);
        return TS_OK;
    }
    return TS_OK;
}

static void free_sched_params(struct conf *c)
{
    for (size_t i = 0; i < c->nsched_params; i++) {
        free(c->sched_params[i].key);
        free(c->sched_params[i].value);
    }
    free(c->sched_params);
    c->sched_params = NULL;
    c->nsched_params = 0;
}

static int add_sched_param(struct conf *c, const char *item)
{
    const char *eq = strchr(item, '=');
    size_t klen = eq ? (size_t)(eq - item) : strlen(item);
    struct conf_param *grown =
        realloc(c->sched_params, (c->nsched_params + 1) * sizeof(*grown));
    if (!grown)
        return TS_ENOMEM;
    c->sched_params = grown;
    struct conf_param *cp = &c->sched_params[c->nsched_params];
    cp->key = strndup(item, klen);
    cp->value = strdup(eq ? eq + 1 : "");
    if (!cp->key || !cp->value) {
        free(cp->key);
        free(cp->value);
        return TS_ENOMEM;
    }
    c->nsched_params++;
    return TS_OK;
}

static int check_scheduler_parameters(struct conf_parse *p, const char *v)
{
    free_sched_params(p->conf);
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return conf_fail(p, "out of memory");
    int err = TS_OK;
    for (char *item = strtok_r(copy, ",", &save); item && !err;
         item = strtok_r(NULL, ",", &save)) {
        err = check_sched_item(p, item);
        if (!err && add_sched_param(p->conf, item))
            err = conf_fail(p, "out of memory");
    }
    free(copy);
    return err;
}

int conf_directive_token(struct conf_parse *p, const struct conf_kv *kv)
{
    const struct directive *d = find_directive(kv->key);
    if (!d)
        return conf_fail(p, "unknown key '%s'", kv->key);
    size_t idx = (size_t)(d - directives);
    if (p->global_seen[idx])
        return conf_fail(p, "%s is set twice (first at line %d)", d->key, p->global_seen[idx]);
    p->global_seen[idx] = p->line;
    return set_directive(p, d, kv->value);
}

int conf_directives_defaults(struct conf_parse *p)
{
    for (size_t i = 0; i < NDIRECTIVES; i++) {
        int err = directives[i].def ? set_directive(p, &directives[i], directives[i].def) : TS_OK;
        if (err)
            return err;
    }
    return TS_OK;
}

void conf_directives_free(struct conf *c)
{
    for (size_t i = 0; i < NDIRECTIVES; i++) {
        const struct directive *d = &directives[i];
        if (d->type == DT_STRING || d->type == DT_PATH || d->type == DT_LOGLEVEL)
            free(*(char **)((char *)c + d->offset));
    }
    free(c->munge_socket);
    free_sched_params(c);
}

size_t conf_entry_count(void)
{
    return NDIRECTIVES;
}

void conf_foreach_entry(const struct conf *c, conf_entry_cb cb, void *arg)
{
    const char *base = (const char *)c;
    char buf[64];
    for (size_t i = 0; i < NDIRECTIVES; i++) {
        const struct directive *d = &directives[i];
        const char *value = buf;
        switch (d->type) {
        case DT_STRING:
        case DT_PATH:
        case DT_LOGLEVEL:
            value = *(char *const *)(base + d->offset);
            if (!value)
                value = "(null)";
            break;
        case DT_PORT:
            snprintf(buf, sizeof(buf), "%u", *(const uint16_t *)(base + d->offset));
            break;
        case DT_SECONDS:
            snprintf(buf, sizeof(buf), "%u sec", *(const uint32_t *)(base + d->offset));
            break;
        case DT_UINT:
            snprintf(buf, sizeof(buf), "%u", *(const uint32_t *)(base + d->offset));
            break;
        case DT_BOOL:
            value = *(const int *)(base + d->offset) ? "yes" : "no";
            break;
        }
        /* SchedulerParameters' value may be longer than buf: it is a string, passed as is */
        cb(arg, d->key, value);
    }
}
