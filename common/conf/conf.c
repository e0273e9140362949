#include "common/conf/conf.h"

#include "common/text/hostlist.h"
#include "common/text/idset.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_INCLUDE_DEPTH 8
#define MAX_CONF_SIZE (16u << 20) /* a configuration file larger than this is a mistake */

/* ======================================================================================
 * Parser state
 * ====================================================================================== */

struct parse {
    struct conf *conf;
    const char *file; /* the file being read, for messages */
    int line;
    char *err;
    size_t errlen;
    int failed;
    int allow_include;
    int depth;
    int global_seen[64];  /* line where each global directive was set, 0 if not */

    /* NodeName=DEFAULT / PartitionName=DEFAULT values for later lines */
    struct conf_node node_default;
    struct conf_partition part_default;
    int *part_lines;      /* line of each partition, for messages when resolving */
    int *node_lines;
    size_t node_cap;            /* allocated entries of conf.nodes and node_lines */
    struct hashmap *node_index; /* name -> index + 1 (never NULL as a value) */
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse *p, const char *fmt, ...)
{
    if (p->failed)
        return TS_ECONF; /* keep the first message */
    p->failed = 1;
    int n = p->line > 0 ? snprintf(p->err, p->errlen, "%s:%d: ", p->file, p->line)
                        : snprintf(p->err, p->errlen, "%s: ", p->file);
    if (n < 0 || (size_t)n >= p->errlen)
        return TS_ECONF;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return TS_ECONF;
}

/* ======================================================================================
 * Values
 * ====================================================================================== */

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return TS_ENUMBER;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return TS_ENUMBER;
    *out = v;
    return TS_OK;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    int err = parse_u64(s, min, max, &v);
    if (!err)
        *out = (uint32_t)v;
    return err;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcasecmp(s, "YES") || !strcasecmp(s, "TRUE") || !strcmp(s, "1"))
        *out = 1;
    else if (!strcasecmp(s, "NO") || !strcasecmp(s, "FALSE") || !strcmp(s, "0"))
        *out = 0;
    else
        return TS_EINVAL;
    return TS_OK;
}

/* A time limit in Slurm's formats (bare number: minutes) or UNLIMITED. */
static int parse_limit(const char *s, int64_t *out)
{
    int64_t v;
    if (timefmt_parse_duration(s, &v) != TS_OK)
        return TS_ETIMEFMT;
    *out = v == TIMEFMT_UNLIMITED ? CONF_UNLIMITED : v;
    return TS_OK;
}

/* The index of value (case-insensitive) among names, or -1. */
static int name_index(const char *value, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(value, names[i]))
            return (int)i;
    return -1;
}

static int replace_str(char **slot, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return TS_ENOMEM;
    free(*slot);
    *slot = copy;
    return TS_OK;
}

static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
            return 0;
    return 1;
}

static int valid_features(const char *s)
{
    /* "a,b,c": names separated by single commas */
    if (!*s)
        return 1;
    const char *start = s;
    for (;; s++) {
        if (*s == ',' || !*s) {
            if (s == start)
                return 0;
            if (!*s)
                return 1;
            start = s + 1;
        } else if (!isalnum((unsigned char)*s) && !strchr("_-.", *s)) {
            return 0;
        }
    }
}

/* ======================================================================================
 * Cluster-wide keys: the directive table
 * ====================================================================================== */

enum dir_type {
    DT_STRING,   /* any non-empty text */
    DT_PATH,     /* non-empty text starting with "/" */
    DT_PORT,     /* 1-65535 */
    DT_SECONDS,  /* unsigned seconds within [min, max] */
    DT_UINT,     /* unsigned number within [min, max] */
    DT_LOGLEVEL, /* a log level name */
};

struct directive {
    const char *key;
    enum dir_type type;
    size_t offset;
    uint64_t min, max;
    const char *def; /* default, parsed like a value from the file; NULL: unset */
    int (*check)(struct parse *p, const char *value); /* extra rules for this key */
};

static int check_auth_type(struct parse *p, const char *v);
static int check_auth_info(struct parse *p, const char *v);
static int check_slurm_user(struct parse *p, const char *v);
static int check_noded_user(struct parse *p, const char *v);
static int check_scheduler_type(struct parse *p, const char *v);
static int check_priority_type(struct parse *p, const char *v);
static int check_select_type(struct parse *p, const char *v);
static int check_scheduler_parameters(struct parse *p, const char *v);
static int check_filters(struct parse *p, const char *v);
static int check_resources_max(struct parse *p, const char *v);
static int check_resources_available(struct parse *p, const char *v);

#define OFF(field) offsetof(struct conf, field)
/* In alphabetical order (ignoring case): conf_foreach_entry lists them as they stand. */
static const struct directive directives[] = {
    {"AccountingRetention", DT_UINT, OFF(accounting_retention), 0, 1200, "0", NULL},
    {"ActivationFilters", DT_STRING, OFF(activation_filters), 0, 0, NULL, check_filters},
    {"AuthInfo", DT_STRING, OFF(auth_info), 0, 0, NULL, check_auth_info},
    {"AuthType", DT_STRING, OFF(auth_type), 0, 0, "auth/munge", check_auth_type},
    {"ClusterName", DT_STRING, OFF(cluster_name), 0, 0, "tessera", NULL},
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
    {"SubmitFilters", DT_STRING, OFF(submit_filters), 0, 0, NULL, check_filters},
};
#undef OFF
#define NDIRECTIVES (sizeof(directives) / sizeof(directives[0]))
_Static_assert(NDIRECTIVES <= 64, "grow parse.global_seen");

static const struct directive *find_directive(const char *key)
{
    for (size_t i = 0; i < NDIRECTIVES; i++)
        if (!strcasecmp(directives[i].key, key))
            return &directives[i];
    return NULL;
}

static int set_directive(struct parse *p, const struct directive *d, const char *value)
{
    char *base = (char *)p->conf;
    uint32_t u32;
    switch (d->type) {
    case DT_PATH:
        if (value[0] != '/')
            return fail(p, "%s must be an absolute path, not '%s'", d->key, value);
        /* fall through */
    case DT_STRING:
        if (!*value)
            return fail(p, "%s needs a value", d->key);
        if (replace_str((char **)(base + d->offset), value))
            return fail(p, "out of memory");
        break;
    case DT_LOGLEVEL: {
        enum log_level lvl;
        if (log_level_parse(value, &lvl))
            return fail(p, "%s: unknown log level '%s'", d->key, value);
        if (replace_str((char **)(base + d->offset), value))
            return fail(p, "out of memory");
        break;
    }
    case DT_PORT:
        if (parse_u32(value, 1, 65535, &u32))
            return fail(p, "%s: invalid port '%s'", d->key, value);
        *(uint16_t *)(base + d->offset) = (uint16_t)u32;
        break;
    case DT_SECONDS:
    case DT_UINT:
        if (parse_u32(value, (uint32_t)d->min, (uint32_t)d->max, &u32))
            return fail(p, "%s must be a whole number from %llu to %llu, not '%s'", d->key,
                        (unsigned long long)d->min, (unsigned long long)d->max, value);
        *(uint32_t *)(base + d->offset) = u32;
        break;
    }
    return d->check ? d->check(p, value) : TS_OK;
}

static int check_auth_type(struct parse *p, const char *v)
{
    if (strcmp(v, "auth/munge") != 0)
        return fail(p, "AuthType '%s' is not supported (only auth/munge)", v);
    return TS_OK;
}

/* AuthInfo=socket=/path[,ttl=N] */
static int check_auth_info(struct parse *p, const char *v)
{
    struct conf *c = p->conf;
    free(c->munge_socket);
    c->munge_socket = NULL;
    c->cred_ttl = 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return fail(p, "out of memory");
    int err = TS_OK;
    for (char *item = strtok_r(copy, ",", &save); item && !err;
         item = strtok_r(NULL, ",", &save)) {
        if (!strncmp(item, "socket=", 7) && item[7] == '/') {
            if (replace_str(&c->munge_socket, item + 7))
                err = fail(p, "out of memory");
        } else if (!strncmp(item, "ttl=", 4)) {
            if (parse_u32(item + 4, 1, 3600, &c->cred_ttl))
                err = fail(p, "AuthInfo: invalid ttl '%s'", item + 4);
        } else {
            err = fail(p, "AuthInfo: unknown item '%s' (expected socket=PATH or ttl=SECONDS)",
                       item);
        }
    }
    free(copy);
    return err;
}

/* A user by name or uid. */
static int resolve_user(struct parse *p, const char *key, const char *v, uid_t *out)
{
    uint32_t uid;
    if (parse_u32(v, 0, UINT32_MAX - 1, &uid) == TS_OK) {
        *out = uid;
        return TS_OK;
    }
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(v, &pw, buf, sizeof(buf), &res) != 0 || !res)
        return fail(p, "%s '%s': no such user", key, v);
    *out = res->pw_uid;
    return TS_OK;
}

static int check_slurm_user(struct parse *p, const char *v)
{
    return resolve_user(p, "SlurmUser", v, &p->conf->slurm_user_uid);
}

static int check_noded_user(struct parse *p, const char *v)
{
    return resolve_user(p, "NodedUser", v, &p->conf->noded_user_uid);
}

#define CONF_MAX_FILTERS 16

/* "/a,/b": absolute paths, at most CONF_MAX_FILTERS. */
/* "512", "512M", "64G", "2T": megabytes. */
static int parse_mem_mb(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || n == 0)
        return -1;
    uint64_t scale = 1;
    if (*end == 'M' || *end == 'm')
        end++;
    else if (*end == 'G' || *end == 'g')
        scale = 1024, end++;
    else if (*end == 'T' || *end == 't')
        scale = 1024 * 1024, end++;
    if (*end || n > UINT64_MAX / scale)
        return -1;
    *out = n * scale;
    return 0;
}

/* "cpus=N,mem=SIZE,nodes=N[,walltime=T]" into r. */
static int parse_resources(struct parse *p, const char *key, const char *v, int walltime,
                           struct conf_resources *r)
{
    memset(r, 0, sizeof(*r));
    char buf[256];
    if (strlen(v) >= sizeof(buf))
        return fail(p, "%s is too long", key);
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return fail(p, "%s: '%s' is not name=value", key, item);
        *eq++ = '\0';
        char *end;
        unsigned long long n = strtoull(eq, &end, 10);
        int number = isdigit((unsigned char)eq[0]) && !*end && n > 0;
        if (!strcasecmp(item, "cpus") || !strcasecmp(item, "ncpus")) {
            if (!number)
                return fail(p, "%s: cpus must be a positive number, not '%s'", key, eq);
            r->cpus = n;
        } else if (!strcasecmp(item, "nodes") || !strcasecmp(item, "nodect")) {
            if (!number)
                return fail(p, "%s: nodes must be a positive number, not '%s'", key, eq);
            r->nodes = n;
        } else if (!strcasecmp(item, "mem")) {
            if (parse_mem_mb(eq, &r->mem_mb))
                return fail(p, "%s: mem must be a size (M, G or T), not '%s'", key, eq);
        } else if (walltime && !strcasecmp(item, "walltime")) {
            int64_t secs;
            if (timefmt_parse_duration(eq, &secs) != TS_OK || secs <= 0)
                return fail(p, "%s: walltime must be a duration, not '%s'", key, eq);
            r->walltime = secs;
        } else {
            return fail(p, "%s: unknown resource '%s' (cpus, mem, nodes%s)", key, item,
                        walltime ? ", walltime" : "");
        }
    }
    return TS_OK;
}

static int check_resources_max(struct parse *p, const char *v)
{
    return parse_resources(p, "ResourcesMax", v, 1, &p->conf->res_max);
}

static int check_resources_available(struct parse *p, const char *v)
{
    return parse_resources(p, "ResourcesAvailable", v, 0, &p->conf->res_available);
}

static int check_filters(struct parse *p, const char *v)
{
    size_t n = 0;
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        if (len == 0 || s[0] != '/')
            return fail(p, "filters are absolute paths separated by commas, not '%s'", v);
        if (++n > CONF_MAX_FILTERS)
            return fail(p, "at most %d filters in a list", CONF_MAX_FILTERS);
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

static int check_priority_type(struct parse *p, const char *v)
{
    if (strncmp(v, "priority/", 9) != 0 || !valid_name(v + 9))
        return fail(p, "PriorityType must be priority/NAME, not '%s'", v);
    return TS_OK;
}

static int check_scheduler_type(struct parse *p, const char *v)
{
    if (strncmp(v, "sched/", 6) != 0 || !valid_name(v + 6))
        return fail(p, "SchedulerType must be sched/NAME, not '%s'", v);
    return TS_OK;
}

static int check_select_type(struct parse *p, const char *v)
{
    if (strncmp(v, "select/", 7) != 0 || !valid_name(v + 7))
        return fail(p, "SelectType must be select/NAME, not '%s'", v);
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

static int check_sched_item(struct parse *p, const char *item)
{
    const char *eq = strchr(item, '=');
    size_t klen = eq ? (size_t)(eq - item) : strlen(item);
    for (size_t i = 0; i < sizeof(sched_params) / sizeof(sched_params[0]); i++) {
        if (strlen(sched_params[i].key) != klen || strncmp(sched_params[i].key, item, klen))
            continue;
        if (!strcmp(sched_params[i].key, "bf_mode")) {
            if (!eq || (strcmp(eq + 1, "partial") && strcmp(eq + 1, "whole") &&
                        strcmp(eq + 1, "off")))
                return fail(p, "SchedulerParameters: bf_mode must be partial, whole or off");
            return TS_OK;
        }
        if (sched_params[i].max == 0) {
            if (eq)
                return fail(p, "SchedulerParameters: %.*s takes no value", (int)klen, item);
            return TS_OK;
        }
        uint32_t v;
        if (!eq || parse_u32(eq + 1, sched_params[i].min, sched_params[i].max, &v))
            return fail(p, "SchedulerParameters: %.*s needs a number from %u to %u", (int)klen,
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

static int check_scheduler_parameters(struct parse *p, const char *v)
{
    free_sched_params(p->conf);
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return fail(p, "out of memory");
    int err = TS_OK;
    for (char *item = strtok_r(copy, ",", &save); item && !err;
         item = strtok_r(NULL, ",", &save)) {
        err = check_sched_item(p, item);
        if (!err && add_sched_param(p->conf, item))
            err = fail(p, "out of memory");
    }
    free(copy);
    return err;
}

/* ======================================================================================
 * Node lines
 * ====================================================================================== */

struct kv {
    char *key;
    char *value;
};

static void node_clear(struct conf_node *n)
{
    free(n->name);
    free(n->hostname);
    free(n->addr);
    free(n->features);
    memset(n, 0, sizeof(*n));
}

static int node_copy(struct conf_node *dst, const struct conf_node *src)
{
    *dst = *src;
    dst->name = dst->hostname = dst->addr = dst->features = NULL;
    if ((src->name && !(dst->name = strdup(src->name))) ||
        (src->hostname && !(dst->hostname = strdup(src->hostname))) ||
        (src->addr && !(dst->addr = strdup(src->addr))) ||
        (src->features && !(dst->features = strdup(src->features)))) {
        node_clear(dst);
        return TS_ENOMEM;
    }
    return TS_OK;
}

/* Set one key of a node template. Name-like keys (NodeName, NodeHostname, NodeAddr, Port)
 * are handled by the caller since they expand per node. */
static int node_set(struct parse *p, struct conf_node *n, const char *key, const char *value)
{
    uint32_t u32;
    uint64_t u64;
    if (!strcasecmp(key, "CPUs") || !strcasecmp(key, "Procs")) {
        if (parse_u32(value, 1, CONF_MAX_NODE_CPUS, &u32))
            return fail(p, "CPUs must be a number from 1 to %u, not '%s'", CONF_MAX_NODE_CPUS,
                        value);
        n->cpus = u32;
    } else if (!strcasecmp(key, "Sockets")) {
        if (parse_u32(value, 1, 4096, &n->sockets))
            return fail(p, "invalid Sockets '%s'", value);
    } else if (!strcasecmp(key, "CoresPerSocket")) {
        if (parse_u32(value, 1, 65536, &n->cores_per_socket))
            return fail(p, "invalid CoresPerSocket '%s'", value);
    } else if (!strcasecmp(key, "ThreadsPerCore")) {
        if (parse_u32(value, 1, 1024, &n->threads_per_core))
            return fail(p, "invalid ThreadsPerCore '%s'", value);
    } else if (!strcasecmp(key, "RealMemory")) {
        if (parse_u64(value, 1, UINT64_C(1) << 40, &u64))
            return fail(p, "RealMemory must be a number of megabytes, not '%s'", value);
        n->real_memory_mb = u64;
    } else if (!strcasecmp(key, "Features") || !strcasecmp(key, "Feature")) {
        if (!valid_features(value))
            return fail(p, "invalid Features '%s' (names separated by commas)", value);
        if (replace_str(&n->features, value))
            return fail(p, "out of memory");
    } else if (!strcasecmp(key, "Weight")) {
        if (parse_u32(value, 0, UINT32_MAX - 1, &n->weight))
            return fail(p, "invalid Weight '%s'", value);
    } else if (!strcasecmp(key, "State")) {
        static const char *const states[] = {[CONF_NODE_UNKNOWN] = "UNKNOWN",
                                              [CONF_NODE_DOWN] = "DOWN",
                                              [CONF_NODE_DRAIN] = "DRAIN",
                                              [CONF_NODE_FUTURE] = "FUTURE"};
        int i = name_index(value, states, sizeof(states) / sizeof(states[0]));
        if (i < 0)
            return fail(p, "node State must be UNKNOWN, DOWN, DRAIN or FUTURE, not '%s'",
                        value);
        n->state = (enum conf_node_state)i;
    } else {
        return fail(p, "unknown node key '%s'", key);
    }
    return TS_OK;
}

/* Expand a per-node list (NodeHostname, NodeAddr) to exactly count entries: one entry is
 * shared by all nodes, otherwise the lengths must match. */
static int expand_per_node(struct parse *p, const char *key, const char *expr, size_t count,
                           struct hostlist **out)
{
    int err = hostlist_expand(expr, out);
    if (err)
        return fail(p, "invalid %s '%s': %s", key, expr, ts_strerror(err));
    size_t n = hostlist_count(*out);
    if (n != 1 && n != count) {
        hostlist_destroy(*out);
        *out = NULL;
        return fail(p, "%s '%s' names %zu hosts for %zu nodes", key, expr, n, count);
    }
    return TS_OK;
}

/* Port=7001 or Port=7001-7004 / [7001-7004]: one port for all nodes, or one per node in
 * order. count 0 means "parse only". ports[] gets count entries. */
static int expand_ports(struct parse *p, const char *expr, size_t count, uint16_t *ports)
{
    struct idset *set = NULL;
    if (idset_parse(expr, &set) != TS_OK || idset_count(set) == 0) {
        idset_destroy(set);
        return fail(p, "invalid Port '%s'", expr);
    }
    size_t n = idset_count(set);
    int err = TS_OK;
    if (n != 1 && n != count)
        err = fail(p, "Port '%s' gives %zu ports for %zu nodes", expr, n, count);
    uint32_t port = idset_first(set);
    for (size_t i = 0; !err && i < count; i++) {
        if (port == 0 || port > 65535)
            err = fail(p, "invalid Port %u", port);
        else
            ports[i] = (uint16_t)port;
        if (n > 1)
            port = idset_next(set, port);
    }
    idset_destroy(set);
    return err;
}

static int add_node(struct parse *p, const struct conf_node *tmpl, const char *name,
                    const char *hostname, const char *addr, uint16_t port)
{
    struct conf *c = p->conf;
    if (!valid_name(name))
        return fail(p, "invalid node name '%s'", name);
    uintptr_t seen = (uintptr_t)hashmap_get_str(p->node_index, name);
    if (seen)
        return fail(p, "node %s is defined twice (first at line %d)", name,
                    p->node_lines[seen - 1]);
    if (c->nnodes >= CONF_MAX_NODES)
        return fail(p, "more than %u nodes", CONF_MAX_NODES);
    if (c->nnodes == p->node_cap) { /* geometric: a line may add many thousand nodes */
        size_t cap = p->node_cap ? p->node_cap * 2 : 16;
        struct conf_node *nodes = realloc(c->nodes, cap * sizeof(*nodes));
        if (nodes)
            c->nodes = nodes;
        int *lines = realloc(p->node_lines, cap * sizeof(*lines));
        if (lines)
            p->node_lines = lines;
        if (!nodes || !lines)
            return fail(p, "out of memory");
        p->node_cap = cap;
    }
    struct conf_node *n = &c->nodes[c->nnodes];
    if (node_copy(n, tmpl))
        return fail(p, "out of memory");
    n->port = port;
    if (replace_str(&n->name, name) || replace_str(&n->hostname, hostname ? hostname : name) ||
        replace_str(&n->addr, addr ? addr : n->hostname) ||
        (!n->features && !(n->features = strdup("")))) {
        node_clear(n);
        return fail(p, "out of memory");
    }
    if (hashmap_put_str(p->node_index, n->name, (void *)(uintptr_t)(c->nnodes + 1))) {
        node_clear(n);
        return fail(p, "out of memory");
    }
    p->node_lines[c->nnodes++] = p->line;
    return TS_OK;
}

static int node_line(struct parse *p, struct kv *kv, size_t nkv)
{
    const char *names = kv[0].value, *hostnames = NULL, *addrs = NULL, *port_expr = NULL;
    int is_default = !strcasecmp(names, "DEFAULT");
    struct conf_node tmpl;
    if (node_copy(&tmpl, &p->node_default))
        return fail(p, "out of memory");
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
            err = fail(p, "NodeName=DEFAULT cannot set NodeHostname or NodeAddr");
        else if (port_expr)
            err = expand_ports(p, port_expr, 1, &tmpl.port);
        if (!err) {
            node_clear(&p->node_default);
            p->node_default = tmpl;
            return TS_OK;
        }
        node_clear(&tmpl);
        return err;
    }

    struct hostlist *hn = NULL, *hh = NULL, *ha = NULL;
    uint16_t *ports = NULL;
    if (!err && (err = hostlist_expand(names, &hn)) != TS_OK)
        err = fail(p, "invalid NodeName '%s': %s", names, ts_strerror(err));
    size_t count = err ? 0 : hostlist_count(hn);
    if (!err && count == 0)
        err = fail(p, "NodeName is empty");
    if (!err && hostnames)
        err = expand_per_node(p, "NodeHostname", hostnames, count, &hh);
    if (!err && addrs)
        err = expand_per_node(p, "NodeAddr", addrs, count, &ha);
    if (!err && !(ports = calloc(count, sizeof(*ports))))
        err = fail(p, "out of memory");
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
    node_clear(&tmpl);
    return err;
}

/* ======================================================================================
 * Partition lines
 * ====================================================================================== */

static const char *const part_states[] = {[CONF_PART_UP] = "UP", [CONF_PART_DOWN] = "DOWN",
                                          [CONF_PART_DRAIN] = "DRAIN",
                                          [CONF_PART_INACTIVE] = "INACTIVE"};

const char *conf_partition_state_name(enum conf_part_state state)
{
    return (unsigned)state < sizeof(part_states) / sizeof(part_states[0]) ? part_states[state]
                                                                         : "UNKNOWN";
}

static void partition_clear(struct conf_partition *pt)
{
    free(pt->name);
    free(pt->nodes);
    free(pt->submit_filters);
    free(pt->activation_filters);
    free(pt->node_index);
    memset(pt, 0, sizeof(*pt));
}

static int partition_set(struct parse *p, struct conf_partition *pt, const char *key,
                         const char *value)
{
    if (!strcasecmp(key, "Nodes")) {
        if (replace_str(&pt->nodes, value))
            return fail(p, "out of memory");
    } else if (!strcasecmp(key, "Default")) {
        if (parse_bool(value, &pt->is_default))
            return fail(p, "Default must be YES or NO, not '%s'", value);
    } else if (!strcasecmp(key, "MaxTime")) {
        if (parse_limit(value, &pt->max_time))
            return fail(p, "invalid MaxTime '%s'", value);
    } else if (!strcasecmp(key, "DefaultTime")) {
        if (parse_limit(value, &pt->default_time))
            return fail(p, "invalid DefaultTime '%s'", value);
    } else if (!strcasecmp(key, "MaxNodes")) {
        if (!strcasecmp(value, "UNLIMITED") || !strcasecmp(value, "INFINITE"))
            pt->max_nodes = UINT32_MAX;
        else if (parse_u32(value, 1, UINT32_MAX - 1, &pt->max_nodes))
            return fail(p, "invalid MaxNodes '%s'", value);
    } else if (!strcasecmp(key, "MinNodes")) {
        if (parse_u32(value, 0, UINT32_MAX - 1, &pt->min_nodes))
            return fail(p, "invalid MinNodes '%s'", value);
    } else if (!strcasecmp(key, "PriorityTier") || !strcasecmp(key, "Priority")) {
        if (parse_u32(value, 0, 65533, &pt->priority_tier))
            return fail(p, "invalid %s '%s'", key, value);
    } else if (!strcasecmp(key, "MaxRunning") || !strcasecmp(key, "MaxUserRunning") ||
               !strcasecmp(key, "MaxGroupRunning")) {
        uint32_t *slot = !strcasecmp(key, "MaxRunning")       ? &pt->max_running
                         : !strcasecmp(key, "MaxUserRunning") ? &pt->max_user_running
                                                               : &pt->max_group_running;
        if (parse_u32(value, 0, 4000000000u, slot))
            return fail(p, "invalid %s '%s'", key, value);
    } else if (!strcasecmp(key, "SubmitFilters") || !strcasecmp(key, "ActivationFilters")) {
        char **slot = !strcasecmp(key, "SubmitFilters") ? &pt->submit_filters
                                                         : &pt->activation_filters;
        if (check_filters(p, value))
            return TS_ECONF;
        if (replace_str(slot, value))
            return fail(p, "out of memory");
    } else if (!strcasecmp(key, "State")) {
        int i = name_index(value, part_states, sizeof(part_states) / sizeof(part_states[0]));
        if (i < 0)
            return fail(p, "partition State must be UP, DOWN, DRAIN or INACTIVE, not '%s'",
                        value);
        pt->state = (enum conf_part_state)i;
    } else {
        return fail(p, "unknown partition key '%s'", key);
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

static int partition_line(struct parse *p, struct kv *kv, size_t nkv)
{
    struct conf *c = p->conf;
    const char *name = kv[0].value;
    struct conf_partition pt;
    if (partition_copy(&pt, &p->part_default))
        return fail(p, "out of memory");
    int err = TS_OK;
    for (size_t i = 1; i < nkv && !err; i++)
        err = partition_set(p, &pt, kv[i].key, kv[i].value);
    if (!err && !strcasecmp(name, "DEFAULT")) {
        partition_clear(&p->part_default);
        p->part_default = pt;
        return TS_OK;
    }
    if (!err && !valid_name(name))
        err = fail(p, "invalid partition name '%s'", name);
    for (size_t i = 0; !err && i < c->npartitions; i++)
        if (!strcmp(c->partitions[i].name, name))
            err = fail(p, "partition %s is defined twice (first at line %d)", name,
                       p->part_lines[i]);
    if (!err && !(pt.name = strdup(name)))
        err = fail(p, "out of memory");
    if (!err) {
        struct conf_partition *parts =
            realloc(c->partitions, (c->npartitions + 1) * sizeof(*parts));
        int *lines = realloc(p->part_lines, (c->npartitions + 1) * sizeof(*lines));
        if (parts)
            c->partitions = parts;
        if (lines)
            p->part_lines = lines;
        if (!parts || !lines)
            err = fail(p, "out of memory");
    }
    if (err) {
        partition_clear(&pt);
        return err;
    }
    p->part_lines[c->npartitions] = p->line;
    c->partitions[c->npartitions++] = pt;
    return TS_OK;
}

/* ======================================================================================
 * Lines and tokens
 * ====================================================================================== */

static int include_file(struct parse *p, const char *path);

/* Split a logical line into Key=Value tokens (quotes keep spaces, and are removed). The
 * tokens point into line, which is modified. */
static int tokenize(struct parse *p, char *line, struct kv **out, size_t *n)
{
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    char *s = line;
    for (;;) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            return TS_OK;
        char *tok = s, *w = s;
        int quoted = 0;
        for (; *s && (quoted || !isspace((unsigned char)*s)); s++) {
            if (*s == '"')
                quoted = !quoted;
            else
                *w++ = *s;
        }
        if (quoted)
            return fail(p, "unterminated quote");
        if (*s)
            s++;
        *w = '\0';
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            struct kv *grown = realloc(*out, cap * sizeof(**out));
            if (!grown)
                return fail(p, "out of memory");
            *out = grown;
        }
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = '\0';
        (*out)[*n].key = tok;
        (*out)[*n].value = eq ? eq + 1 : NULL;
        (*n)++;
    }
}

static int global_token(struct parse *p, const struct kv *kv)
{
    const struct directive *d = find_directive(kv->key);
    if (!d)
        return fail(p, "unknown key '%s'", kv->key);
    size_t idx = (size_t)(d - directives);
    if (p->global_seen[idx])
        return fail(p, "%s is set twice (first at line %d)", d->key, p->global_seen[idx]);
    p->global_seen[idx] = p->line;
    return set_directive(p, d, kv->value);
}

static int parse_line(struct parse *p, char *line)
{
    struct kv *kv = NULL;
    size_t n = 0;
    int err = tokenize(p, line, &kv, &n);
    if (err || n == 0)
        goto out;
    if (!strcasecmp(kv[0].key, "Include") && !kv[0].value) {
        if (n != 2 || kv[1].value)
            err = fail(p, "Include takes one file name");
        else
            err = include_file(p, kv[1].key);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (!kv[i].value) {
            err = fail(p, "expected Key=Value, found '%s'", kv[i].key);
            goto out;
        }
    if (!strcasecmp(kv[0].key, "NodeName"))
        err = node_line(p, kv, n);
    else if (!strcasecmp(kv[0].key, "PartitionName"))
        err = partition_line(p, kv, n);
    else
        for (size_t i = 0; i < n && !err; i++)
            err = global_token(p, &kv[i]);
out:
    free(kv);
    return err;
}

/* Walk text line by line: strip comments, join continued lines, parse each. */
static int parse_text(struct parse *p, const char *text)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    if (!buf)
        return fail(p, "out of memory");
    size_t blen = 0;
    int line = 1, start_line = 1, in_comment = 0, quoted = 0, err = TS_OK;
    for (size_t i = 0; i <= len && !err; i++) {
        char ch = i < len ? text[i] : '\n';
        if (ch == '\n') {
            int continued = !in_comment && blen > 0 && buf[blen - 1] == '\\';
            if (continued) {
                buf[blen - 1] = ' ';
            } else {
                buf[blen] = '\0';
                p->line = start_line;
                err = parse_line(p, buf);
                blen = 0;
                quoted = 0;
                start_line = line + 1;
            }
            in_comment = 0;
            line++;
            continue;
        }
        if (in_comment)
            continue;
        if (ch == '"')
            quoted = !quoted;
        if (ch == '#' && !quoted) {
            in_comment = 1;
            continue;
        }
        if (ch == '\0' || ch == '\r')
            ch = ' ';
        buf[blen++] = ch;
    }
    free(buf);
    return err;
}

static int read_file(const char *path, size_t max, char **out, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? TS_ECONF_NOTFOUND : TS_ESYS;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int err = TS_OK;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *grown = cap > max * 2 ? NULL : realloc(buf, cap);
            if (!grown) {
                err = TS_ETOOBIG;
                break;
            }
            buf = grown;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) {
            if (ferror(f))
                err = TS_ESYS;
            break;
        }
    }
    fclose(f);
    if (!err && n > max)
        err = TS_ETOOBIG;
    if (err) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return TS_OK;
}

int conf_read_text(const char *path, size_t max, char **text, char *errbuf, size_t errlen)
{
    size_t len;
    int err = read_file(path, max, text, &len);
    if (err == TS_ETOOBIG)
        snprintf(errbuf, errlen, "%s: too large", path);
    else if (err)
        snprintf(errbuf, errlen, "%s: cannot be read", path);
    return err ? TS_ECONF : TS_OK;
}

static int parse_file(struct parse *p, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int err = read_file(path, MAX_CONF_SIZE, &text, &len);
    if (err) {
        int saved_line = p->line;
        if (p->depth == 0)
            p->line = 0;
        fail(p, "cannot read %s: %s", path,
             err == TS_ECONF_NOTFOUND ? "No such file or directory" : ts_strerror(err));
        p->line = saved_line;
        return err == TS_ECONF_NOTFOUND ? err : TS_ECONF;
    }
    const char *saved_file = p->file;
    int saved_line = p->line;
    p->file = path;
    err = parse_text(p, text);
    p->file = saved_file;
    p->line = saved_line;
    free(text);
    return err;
}

static int include_file(struct parse *p, const char *path)
{
    if (!p->allow_include)
        return fail(p, "Include is not allowed here");
    if (p->depth >= MAX_INCLUDE_DEPTH)
        return fail(p, "Include nested more than %d deep", MAX_INCLUDE_DEPTH);
    char full[PATH_MAX];
    if (path[0] == '/') {
        snprintf(full, sizeof(full), "%s", path);
    } else {
        const char *slash = strrchr(p->file, '/');
        int dirlen = slash ? (int)(slash - p->file) : 1;
        snprintf(full, sizeof(full), "%.*s/%s", dirlen, slash ? p->file : ".", path);
    }
    p->depth++;
    /* the included file's name must outlive its parse: messages point at it */
    char *keep = strdup(full);
    if (!keep)
        return fail(p, "out of memory");
    int err = parse_file(p, keep); /* its messages name the included file and line */
    free(keep);
    p->depth--;
    return err == TS_ECONF_NOTFOUND ? TS_ECONF : err;
}

/* ======================================================================================
 * After the text: defaults that depend on other keys, cross-references, checks
 * ====================================================================================== */

static int resolve_partition_nodes(struct parse *p, struct conf_partition *pt)
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
            return fail(p, "out of memory");
        }
    } else if ((err = hostlist_expand(pt->nodes, &hl)) != TS_OK) {
        return fail(p, "partition %s: invalid Nodes '%s': %s", pt->name, pt->nodes,
                    ts_strerror(err));
    }
    hostlist_uniq(hl);
    size_t n = hostlist_count(hl);
    pt->node_index = calloc(n ? n : 1, sizeof(size_t));
    if (!pt->node_index)
        err = fail(p, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        const char *name = hostlist_nth(hl, i);
        uintptr_t j = (uintptr_t)hashmap_get_str(p->node_index, name);
        if (!j)
            err = fail(p, "partition %s: node %s is not defined", pt->name, name);
        else
            pt->node_index[pt->nnodes++] = j - 1;
    }
    hostlist_destroy(hl);
    return err;
}

static int finish(struct parse *p)
{
    struct conf *c = p->conf;
    int default_line = 0;
    struct hashmap *endpoints = hashmap_create(); /* "addr:port" -> index + 1 */
    if (!endpoints)
        return fail(p, "out of memory");
    for (size_t i = 0; i < c->nnodes; i++) {
        struct conf_node *n = &c->nodes[i];
        p->line = p->node_lines[i];
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
        char key[HOSTLIST_MAX_NAME + 8];
        int klen = snprintf(key, sizeof(key), "%s:%u", n->addr, n->port);
        uintptr_t j = (uintptr_t)hashmap_get(endpoints, key, (size_t)klen);
        if (j) {
            hashmap_destroy(endpoints);
            return fail(p, "nodes %s and %s both use %s port %u", c->nodes[j - 1].name,
                        n->name, n->addr, n->port);
        }
        if (hashmap_put(endpoints, key, (size_t)klen, (void *)(uintptr_t)(i + 1))) {
            hashmap_destroy(endpoints);
            return fail(p, "out of memory");
        }
    }
    hashmap_destroy(endpoints);
    for (size_t i = 0; i < c->npartitions; i++) {
        struct conf_partition *pt = &c->partitions[i];
        p->line = p->part_lines[i];
        int err = resolve_partition_nodes(p, pt);
        if (err)
            return err;
        if (pt->max_time != CONF_UNLIMITED && pt->default_time != CONF_UNLIMITED &&
            pt->default_time > pt->max_time)
            return fail(p, "partition %s: DefaultTime is longer than MaxTime", pt->name);
        if (pt->is_default) {
            if (default_line)
                return fail(p, "partition %s: a default partition is already set at line %d",
                            pt->name, default_line);
            default_line = p->line;
        }
    }
    p->line = 0;
    return TS_OK;
}

/* ======================================================================================
 * Public functions
 * ====================================================================================== */

const char *conf_locate(const char *path)
{
    if (path && *path)
        return path;
    const char *env = getenv(CONF_ENV);
    if (env && *env)
        return env;
    return CONF_DEFAULT_PATH;
}

static struct conf *conf_new(struct parse *p)
{
    struct conf *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    p->conf = c;
    /* Defaults go through the same setters as the file's values. */
    const char *file = p->file;
    p->file = "(defaults)";
    for (size_t i = 0; i < NDIRECTIVES; i++)
        if (directives[i].def && set_directive(p, &directives[i], directives[i].def)) {
            p->file = file;
            return c;
        }
    p->file = file;
    p->part_default.max_time = CONF_UNLIMITED;
    p->part_default.default_time = CONF_UNLIMITED;
    p->part_default.max_nodes = UINT32_MAX;
    p->part_default.min_nodes = 0;
    return c;
}

static void parse_cleanup(struct parse *p)
{
    hashmap_destroy(p->node_index);
    node_clear(&p->node_default);
    partition_clear(&p->part_default);
    free(p->part_lines);
    free(p->node_lines);
}

/* Shared by conf_load and conf_parse_string: text NULL means read path. */
static int load(const char *path, const char *text, int allow_include, struct conf **out,
                char *errbuf, size_t errlen)
{
    char dummy[1];
    struct parse p = {.file = path, .err = errbuf ? errbuf : dummy,
                      .errlen = errbuf ? errlen : sizeof(dummy), .allow_include = allow_include};
    p.err[0] = '\0';
    *out = NULL;
    struct conf *c = conf_new(&p);
    p.node_index = hashmap_create();
    int err = c && p.node_index ? TS_OK : TS_ENOMEM;
    if (!err && !p.failed && !(c->path = strdup(path)))
        err = TS_ENOMEM;
    if (!err && !p.failed)
        err = text ? parse_text(&p, text) : parse_file(&p, path);
    if (!err && !p.failed)
        err = finish(&p);
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
    for (size_t i = 0; i < NDIRECTIVES; i++) {
        const struct directive *d = &directives[i];
        if (d->type == DT_STRING || d->type == DT_PATH || d->type == DT_LOGLEVEL)
            free(*(char **)((char *)c + d->offset));
    }
    free(c->munge_socket);
    free_sched_params(c);
    free(c->path);
    for (size_t i = 0; i < c->nnodes; i++)
        node_clear(&c->nodes[i]);
    free(c->nodes);
    for (size_t i = 0; i < c->npartitions; i++)
        partition_clear(&c->partitions[i]);
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
        }
        /* SchedulerParameters' value may be longer than buf: it is a string, passed as is */
        cb(arg, d->key, value);
    }
}
