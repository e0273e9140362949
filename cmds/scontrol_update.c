/* Keys of "scontrol update jobid=..." (case-insensitive, as Slurm's), each setting one
 * field of the JobDesc of changes. A table, so each key's parser is its own small
 * function. */
#include "cmds/scontrol_update.h"

#include "common/jobopt/jobopt.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*setter)(Tessera__JobDesc *d, const char *key, const char *v, time_t now,
                      char *msg, size_t len);

static int set_string(char **slot, const char *v)
{
    free(*slot);
    *slot = strdup(v);
    return *slot ? 0 : -1;
}

#define STRING_SETTER(fn, field)                                                           \
    static int fn(Tessera__JobDesc *d, const char *key, const char *v, time_t now,        \
                  char *msg, size_t len)                                                   \
    {                                                                                      \
        return set_string(&d->field, v);                                                   \
    }
STRING_SETTER(set_name, name)
STRING_SETTER(set_account, account)
STRING_SETTER(set_partition, partition)
STRING_SETTER(set_qos, qos)
STRING_SETTER(set_comment, comment)
STRING_SETTER(set_dependency, dependency)
STRING_SETTER(set_features, constraint)
STRING_SETTER(set_nodelist, nodelist)
STRING_SETTER(set_exclude, exclude)
STRING_SETTER(set_work_dir, work_dir)
STRING_SETTER(set_mail_type, mail_type)
STRING_SETTER(set_mail_user, mail_user)
STRING_SETTER(set_std_out, std_out)
STRING_SETTER(set_std_err, std_err)
STRING_SETTER(set_std_in, std_in)
STRING_SETTER(set_licenses, licenses)
#undef STRING_SETTER

static int parse_u32(const char *v, uint32_t *out)
{
    if (!isdigit((unsigned char)*v))
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || *end || n > UINT32_MAX)
        return -1;
    *out = (uint32_t)n;
    return 0;
}

static int bad_number(const char *v, const char *what, char *msg, size_t len)
{
    snprintf(msg, len, "Invalid numeric value \"%s\" for %s.", v, what);
    return 1;
}

static int bad_value(const char *key, const char *v, char *msg, size_t len)
{
    snprintf(msg, len, "Invalid %s value: %s", key, v);
    return 1;
}

/* Limits: Slurm formats, "0" and UNLIMITED mean no limit (as sbatch -t). */
static int parse_limit(const char *v, int64_t *out)
{
    int64_t secs;
    if (timefmt_parse_duration(v, &secs) != TS_OK)
        return -1;
    *out = secs == 0 || secs == TIMEFMT_UNLIMITED ? -1 : secs;
    return 0;
}

/* TimeLimit=0 is a limit of zero here, as in Slurm: a running job ends at once. */
static int set_time_limit(Tessera__JobDesc *d, const char *key, const char *v, time_t now,
                          char *msg, size_t len)
{
    int64_t secs;
    if (timefmt_parse_duration(v, &secs) != TS_OK) {
        snprintf(msg, len, "Invalid TimeLimit value");
        return 1;
    }
    d->time_limit = secs == TIMEFMT_UNLIMITED ? -1 : secs;
    d->has_time_limit = 1;
    return 0;
}

/* TimeLimit=+N / -N: moves each component's current limit; the controller applies it. */
static int set_time_delta(Tessera__JobUpdateRequest *req, const char *v, char *msg, size_t len)
{
    int64_t secs;
    if (timefmt_parse_duration(v + 1, &secs) != TS_OK || secs == TIMEFMT_UNLIMITED) {
        snprintf(msg, len, "Invalid TimeLimit value");
        return 1;
    }
    req->time_limit_delta = *v == '-' ? -secs : secs;
    return 0;
}

static int set_time_min(Tessera__JobDesc *d, const char *key, const char *v, time_t now,
                        char *msg, size_t len)
{
    if (parse_limit(v, &d->time_min)) {
        snprintf(msg, len, "Invalid TimeMin value");
        return 1;
    }
    d->has_time_min = 1;
    return 0;
}

static int set_num_nodes(Tessera__JobDesc *d, const char *key, const char *v, time_t now,
                         char *msg, size_t len)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", v);
    char *dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (parse_u32(buf, &d->min_nodes) || (dash && parse_u32(dash + 1, &d->max_nodes)))
        return bad_number(v, "requested node count", msg, len);
    d->has_min_nodes = 1;
    d->has_max_nodes = dash != NULL;
    return 0;
}

#define U32_SETTER(fn, field, what)                                                        \
    static int fn(Tessera__JobDesc *d, const char *key, const char *v, time_t now,        \
                  char *msg, size_t len)                                                   \
    {                                                                                      \
        if (parse_u32(v, &d->field))                                                       \
            return bad_number(v, what, msg, len);                                          \
        d->has_##field = 1;                                                                \
        return 0;                                                                          \
    }
U32_SETTER(set_num_tasks, ntasks, "requested task count")
U32_SETTER(set_cpus_per_task, cpus_per_task, "CPUs per task")
U32_SETTER(set_ntasks_per_node, ntasks_per_node, "tasks per node")
U32_SETTER(set_priority, priority, "priority")
#undef U32_SETTER

static int set_nice(Tessera__JobDesc *d, const char *key, const char *v, time_t now, char *msg,
                    size_t len)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < -10000 || n > 10000)
        return bad_value(key, v, msg, len);
    d->nice = (int32_t)n;
    d->has_nice = 1;
    return 0;
}

static int set_requeue(Tessera__JobDesc *d, const char *key, const char *v, time_t now,
                       char *msg, size_t len)
{
    if (strcmp(v, "0") && strcmp(v, "1"))
        return bad_value(key, v, msg, len);
    d->requeue = v[0] == '1';
    d->has_requeue = 1;
    return 0;
}

static int set_mem(Tessera__JobDesc *d, const char *key, const char *v, time_t now, char *msg,
                   size_t len)
{
    uint64_t mb;
    if (jobopt_parse_size_mb(v, &mb) != TS_OK)
        return bad_value(key, v, msg, len);
    if (!strcasecmp(key, "MinMemoryCPU")) {
        d->mem_per_cpu_mb = mb;
        d->has_mem_per_cpu_mb = 1;
    } else {
        d->mem_per_node_mb = mb;
        d->has_mem_per_node_mb = 1;
    }
    return 0;
}

static int set_time(Tessera__JobDesc *d, const char *key, const char *v, time_t now, char *msg,
                    size_t len)
{
    time_t t;
    if (timefmt_parse_timestamp(v, now, &t) != TS_OK)
        return bad_value(key, v, msg, len);
    if (!strcasecmp(key, "Deadline")) {
        d->deadline = t;
        d->has_deadline = 1;
    } else if (!strcasecmp(key, "HoldUntil")) {
        d->hold_until = t;
        d->has_hold_until = 1;
    } else {
        d->begin_time = t;
        d->has_begin_time = 1;
    }
    return 0;
}

static const struct {
    const char *key;
    setter fn;
} keys[] = {
    {"Account", set_account},         {"Comment", set_comment},
    {"CPUsPerTask", set_cpus_per_task}, {"Deadline", set_time},
    {"Dependency", set_dependency},   {"ExcNodeList", set_exclude},
    {"Features", set_features},       {"HoldUntil", set_time},
    {"JobName", set_name},
    {"Licenses", set_licenses},       {"MailType", set_mail_type},
    {"MailUser", set_mail_user},      {"MinMemoryCPU", set_mem},
    {"MinMemoryNode", set_mem},       {"Name", set_name},
    {"Nice", set_nice},               {"NodeList", set_nodelist},
    {"NTasksPerNode", set_ntasks_per_node}, {"NumNodes", set_num_nodes},
    {"NumTasks", set_num_tasks},      {"Partition", set_partition},
    {"Priority", set_priority},       {"QOS", set_qos},
    {"ReqNodeList", set_nodelist},    {"Requeue", set_requeue},
    {"StartTime", set_time},          {"StdErr", set_std_err},
    {"StdIn", set_std_in},            {"StdOut", set_std_out},
    {"TimeLimit", set_time_limit},    {"TimeMin", set_time_min},
    {"WorkDir", set_work_dir},
};

enum update_parse scontrol_update_parse(int nwords, char **words, time_t now,
                                        Tessera__JobUpdateRequest *req, char *msg, size_t len)
{
    tessera__job_update_request__init(req);
    req->job_id = NULL; /* init points it at protobuf-c's shared empty string */
    Tessera__JobDesc *d = calloc(1, sizeof(*d));
    if (!d)
        return UPDATE_BAD_VALUE;
    tessera__job_desc__init(d);
    req->changes = d;
    int changes = 0;
    for (int i = 0; i < nwords; i++) {
        char *eq = strchr(words[i], '=');
        if (!eq) {
            snprintf(msg, len, "%s", words[i]);
            return UPDATE_UNSUPPORTED;
        }
        *eq = '\0';
        const char *key = words[i], *v = eq + 1;
        if (!strcasecmp(key, "JobId") || !strcasecmp(key, "Job")) { /* Slurm takes both */
            *eq = '=';
            free(req->job_id);
            req->job_id = strdup(v);
            continue;
        }
        if (!strcasecmp(key, "TimeLimit") && (*v == '+' || *v == '-')) {
            if (set_time_delta(req, v, msg, len))
                return UPDATE_BAD_VALUE;
            *eq = '=';
            changes++;
            continue;
        }
        size_t k = 0;
        while (k < sizeof(keys) / sizeof(keys[0]) && strcasecmp(keys[k].key, key))
            k++;
        if (k == sizeof(keys) / sizeof(keys[0])) {
            *eq = '=';
            snprintf(msg, len, "%s", words[i]);
            return UPDATE_UNSUPPORTED;
        }
        if (keys[k].fn(d, keys[k].key, v, now, msg, len))
            return UPDATE_BAD_VALUE;
        *eq = '=';
        changes++;
    }
    if (!req->job_id)
        return UPDATE_NO_ENTITY;
    return changes ? UPDATE_OK : UPDATE_NO_CHANGES;
}

void scontrol_update_free(Tessera__JobUpdateRequest *req)
{
    free(req->job_id);
    if (req->changes)
        tessera__job_desc__free_unpacked(req->changes, NULL);
    req->job_id = NULL;
    req->changes = NULL;
}
