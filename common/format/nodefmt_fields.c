/* sinfo's format letters: one table of fields (header, value, what rows must share to be
 * one line) and the "-o" compiler over it (through fmtlist.h).
 *
 * Values follow Slurm 22.05's sinfo: sizes that differ within a line show the smallest
 * with a "+" ("4+"), ranges ("1-infinite") where Slurm prints ranges, and Slurm's own
 * words for what Tessera has no notion of (GRES "(null)", groups "all", CPU load and free
 * memory "N/A" as for a node that never reported them). */
#include "common/format/nodefmt.h"

#include "common/format/fmtlist.h"
#include "common/format/nodefmt_int.h"
#include "common/text/hostlist.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"
#include "common/util/namecache.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define INFINITE32 UINT32_MAX

/* ---- number helpers ------------------------------------------------------------------- */

/* Slurm's convert_num_unit with CONVERT_NUM_UNIT_EXACT, sinfo's default for CPU and
 * socket counts: 2048 is "2K", 1536 "1.50K", 4 stays "4". */
static void exact_unit(uint64_t n, char *buf, size_t len)
{
    static const char units[] = "\0KMGTP";
    double num = (double)n;
    int unit = 0;

    while (num >= 1024 && (uint64_t)num % 512 == 0 && unit < 5) {
        num /= 1024;
        unit++;
    }
    if ((double)(uint64_t)num == num)
        snprintf(buf, len, "%" PRIu64 "%.1s", (uint64_t)num, &units[unit]);
    else
        snprintf(buf, len, "%.2f%.1s", num, &units[unit]);
}

static void plain(uint64_t n, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu64, n);
}

/* "4" when all equal; else "4+", or "1-8" / "1-infinite" for ranges. */
static const char *min_max(uint64_t min, uint64_t max, int range, int units, char *buf,
                           size_t len)
{
    char lo[32], hi[32];

    (units ? exact_unit : plain)(min, lo, sizeof(lo));
    (units ? exact_unit : plain)(max, hi, sizeof(hi));
    if (min == max)
        snprintf(buf, len, "%s", hi);
    else if (!range)
        snprintf(buf, len, "%s+", lo);
    else if (max == INFINITE32)
        snprintf(buf, len, "%s-infinite", lo);
    else
        snprintf(buf, len, "%s-%s", lo, hi);
    return buf;
}

static const char *put_u32(uint32_t v, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32, v);
    return buf;
}

/* ---- partition fields -------------------------------------------------------------------- */

static const char *get_avail(const struct nf_row *r, int w, char *buf, size_t len)
{
    const char *s = r->part ? r->part->state : NULL;

    if (!r->part)
        return "n/a";
    if (!nf_is_set(s) || !strcasecmp(s, "UP"))
        return "up"; /* an unset state is the default, UP */
    if (!strcasecmp(s, "DOWN"))
        return "down";
    if (!strcasecmp(s, "DRAIN"))
        return "drain";
    if (!strcasecmp(s, "INACTIVE"))
        return "inactive";
    return "unknown";
}

/* "debug*"; when the column is too narrow for the "*", it replaces the last character
 * shown ("de*" in %.3P), as Slurm does. */
static const char *get_partition(const struct nf_row *r, int w, char *buf, size_t len)
{
    const char *name = r->part ? nf_or_null(r->part->name) : "n/a";
    size_t n = strlen(name);

    if (!r->part || !r->part->is_default)
        return name;
    if (w == 0 || n < (size_t)w)
        snprintf(buf, len, "%s*", name);
    else
        snprintf(buf, len, "%.*s*", w - 1, name);
    return buf;
}

static const char *get_partition_name(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->part ? nf_or_null(r->part->name) : "n/a";
}

static const char *secs_or(int64_t secs, const char *none, char *buf, size_t len)
{
    if (secs < 0)
        return none;
    timefmt_format_elapsed(secs, buf, len);
    return buf;
}

static const char *get_time(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->part ? secs_or(r->part->max_time, "infinite", buf, len) : "n/a";
}

static const char *get_default_time(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->part ? secs_or(r->part->default_time, "n/a", buf, len) : "n/a";
}

/* Job sizes in nodes: "1-infinite"; a minimum of 0 shows as 1, as in Slurm. */
static const char *get_size(const struct nf_row *r, int w, char *buf, size_t len)
{
    uint32_t lo;

    if (!r->part)
        return "n/a";
    lo = r->part->min_nodes < 1 && r->part->max_nodes > 0 ? 1 : r->part->min_nodes;
    return min_max(lo, r->part->max_nodes, 1, 1, buf, len);
}

static const char *get_prio_tier(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->part ? put_u32(r->part->priority_tier, buf, len) : "n/a";
}

/* ---- counts ---------------------------------------------------------------------------- */

static const char *get_nodes(const struct nf_row *r, int w, char *buf, size_t len)
{
    return put_u32(r->nodes_total, buf, len);
}

static const char *get_nodes_ai(const struct nf_row *r, int w, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32 "/%" PRIu32, r->nodes_alloc, r->nodes_idle);
    return buf;
}

static const char *get_nodes_aiot(const struct nf_row *r, int w, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32 "/%" PRIu32 "/%" PRIu32 "/%" PRIu32, r->nodes_alloc,
             r->nodes_idle, r->nodes_other, r->nodes_total);
    return buf;
}

static const char *get_cpus_aiot(const struct nf_row *r, int w, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32 "/%" PRIu32 "/%" PRIu32 "/%" PRIu32, r->cpus_alloc,
             r->cpus_idle, r->cpus_other, r->cpus_total);
    return buf;
}

static const char *get_cpus(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_cpus, r->max_cpus, 0, 1, buf, len);
}

static const char *get_memory(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_mem, r->max_mem, 0, 0, buf, len);
}

static const char *get_weight(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_weight, r->max_weight, 0, 0, buf, len);
}

static const char *get_sockets(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_sockets, r->max_sockets, 0, 1, buf, len);
}

static const char *get_cores(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_cores, r->max_cores, 0, 1, buf, len);
}

static const char *get_threads(const struct nf_row *r, int w, char *buf, size_t len)
{
    return min_max(r->min_threads, r->max_threads, 0, 1, buf, len);
}

static const char *get_sct(const struct nf_row *r, int w, char *buf, size_t len)
{
    char s[32], c[32], t[32];

    min_max(r->min_sockets, r->max_sockets, 0, 1, s, sizeof(s));
    min_max(r->min_cores, r->max_cores, 0, 1, c, sizeof(c));
    min_max(r->min_threads, r->max_threads, 0, 1, t, sizeof(t));
    snprintf(buf, len, "%s:%s:%s", s, c, t);
    return buf;
}

/* ---- node text ------------------------------------------------------------------------- */

static const char *get_state_compact(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->nodes_total ? nf_state_compact_code(r->state, buf, len) : "n/a";
}

static const char *get_state_long(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->nodes_total ? nf_state_long_code(r->state, buf, len) : "n/a";
}

static const char *get_node_list(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->nodes_text ? r->nodes_text : "";
}

static const char *compressed(const struct hostlist *hl, char *buf, size_t len)
{
    char *text = hl ? hostlist_compress(hl) : NULL;

    snprintf(buf, len, "%s", text ? text : "");
    free(text);
    return buf;
}

static const char *get_hostnames(const struct nf_row *r, int w, char *buf, size_t len)
{
    return compressed(r->hosts, buf, len);
}

static const char *get_addrs(const struct nf_row *r, int w, char *buf, size_t len)
{
    return compressed(r->addrs, buf, len);
}

static const char *get_features(const struct nf_row *r, int w, char *buf, size_t len)
{
    return nf_or_null(r->first ? r->first->features : NULL);
}

static const char *get_gres(const struct nf_row *r, int w, char *buf, size_t len)
{
    return nf_or_null(r->first ? r->first->gres : NULL);
}

/* Slurm prints "none" for no reason, and for a reason that reads "(null)". */
static const char *get_reason(const struct nf_row *r, int w, char *buf, size_t len)
{
    const char *s = r->first ? r->first->reason : NULL;

    return !nf_is_set(s) || !strncmp(s, "(null)", 6) ? "none" : s;
}

static const char *get_reason_time(const struct nf_row *r, int w, char *buf, size_t len)
{
    if (!r->first || r->first->reason_time == 0)
        return "Unknown";
    timefmt_format_timestamp((time_t)r->first->reason_time, buf, len);
    return buf;
}

/* A reason's user means something only when there is a reason (Slurm's NO_VAL uid). */
static int has_reason_user(const struct nf_row *r)
{
    return r->first && nf_is_set(r->first->reason);
}

static const char *get_user(const struct nf_row *r, int w, char *buf, size_t len)
{
    if (!has_reason_user(r))
        return "Unknown";
    if (namecache_nss_lookup(NULL, NAMECACHE_USER, r->first->reason_uid, buf, len) != 1)
        snprintf(buf, len, "Unk(%" PRIu32 ")", r->first->reason_uid);
    return buf;
}

static const char *get_user_long(const struct nf_row *r, int w, char *buf, size_t len)
{
    char name[256];

    if (!has_reason_user(r))
        return "Unknown";
    uint32_t uid = r->first->reason_uid;
    if (namecache_nss_lookup(NULL, NAMECACHE_USER, uid, name, sizeof(name)) == 1)
        snprintf(buf, len, "%s(%" PRIu32 ")", name, uid);
    else
        snprintf(buf, len, "Unk(%" PRIu32 ")", uid);
    return buf;
}

static const char *get_version(const struct nf_row *r, int w, char *buf, size_t len)
{
    return r->first && nf_is_set(r->first->version) ? r->first->version : "N/A";
}

/* ---- constants ------------------------------------------------------------------------- */

#define CONSTANT(fn, text)                                                                  \
    static const char *fn(const struct nf_row *r, int w, char *buf, size_t len)            \
    {                                                                                       \
        return text;                                                                        \
    }

CONSTANT(get_unlimited, "UNLIMITED")
CONSTANT(get_zero, "0")
CONSTANT(get_na_upper, "N/A")
CONSTANT(get_all, "all")
CONSTANT(get_no_upper, "NO")
CONSTANT(get_one, "1")
CONSTANT(get_off, "OFF")
CONSTANT(get_no, "no")

/* ---- the table ------------------------------------------------------------------------- */

static const struct nf_field fields[] = {
    {'a', "AVAIL", get_avail, NFM_AVAIL, 0},
    {'A', "NODES(A/I)", get_nodes_ai, 0, 0},
    {'b', "ACTIVE_FEATURES", get_features, NFM_FEATURES, 0}, /* active = available here */
    {'B', "MAX_CPUS_PER_NODE", get_unlimited, 0, 0},
    {'c', "CPUS", get_cpus, NFM_CPUS, 0},
    {'C', "CPUS(A/I/O/T)", get_cpus_aiot, NFM_CPUS, 0},
    {'d', "TMP_DISK", get_zero, 0, 0},
    {'D', "NODES", get_nodes, 0, 0},
    {'e', "FREE_MEM", get_na_upper, 0, 0},
    {'E', "REASON", get_reason, NFM_REASON, 0},
    {'f', "AVAIL_FEATURES", get_features, NFM_FEATURES, 0},
    {'F', "NODES(A/I/O/T)", get_nodes_aiot, 0, 0},
    {'g', "GROUPS", get_all, 0, 0},
    {'G', "GRES", get_gres, NFM_GRES, 0},
    {'h', "OVERSUBSCRIBE", get_no_upper, 0, 0},
    {'H', "TIMESTAMP", get_reason_time, NFM_REASON_TIME, 0},
    {'I', "PRIO_JOB_FACTOR", get_one, 0, 0},
    {'l', "TIMELIMIT", get_time, NFM_TIME, 0},
    {'L', "DEFAULTTIME", get_default_time, NFM_DEFTIME, 0},
    {'m', "MEMORY", get_memory, NFM_MEMORY, 0},
    {'M', "PREEMPT_MODE", get_off, 0, 0},
    {'n', "HOSTNAMES", get_hostnames, NFM_HOSTNAMES, 1},
    {'N', "NODELIST", get_node_list, 0, 1},
    {'o', "NODE_ADDR", get_addrs, NFM_ADDRS, 1},
    {'O', "CPU_LOAD", get_na_upper, 0, 0},
    {'p', "PRIO_TIER", get_prio_tier, NFM_PRIO_TIER, 0},
    {'P', "PARTITION", get_partition, NFM_PART, 0},
    {'r', "ROOT", get_no, 0, 0},
    {'R', "PARTITION", get_partition_name, NFM_PART, 0},
    {'s', "JOB_SIZE", get_size, NFM_SIZE, 0},
    {'S', "ALLOCNODES", get_all, 0, 0},
    {'t', "STATE", get_state_compact, NFM_STATE, 0},
    {'T', "STATE", get_state_long, NFM_STATE, 0},
    {'u', "USER", get_user, NFM_REASON_USER, 0},
    {'U', "USER", get_user_long, NFM_REASON_USER, 0},
    {'v', "VERSION", get_version, NFM_VERSION, 0},
    {'V', "CLUSTER", get_na_upper, 0, 0},
    {'w', "WEIGHT", get_weight, NFM_WEIGHT, 0},
    {'X', "SOCKETS", get_sockets, NFM_SOCKETS, 0},
    {'Y', "CORES", get_cores, NFM_CORES, 0},
    {'Z', "THREADS", get_threads, NFM_THREADS, 0},
    {'z', "S:C:T", get_sct, NFM_SOCKETS | NFM_CORES | NFM_THREADS, 0},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const void *field_by_letter(char c)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].letter == c)
            return &fields[i];
    return NULL;
}

/* ---- compiling -------------------------------------------------------------------------- */

void nodefmt_free(struct nodefmt *fmt)
{
    if (!fmt)
        return;
    fmtlist_clear(&fmt->list);
    free(fmt);
}

int nodefmt_compile(const char *format, struct nodefmt **out, char *errbuf, size_t errlen)
{
    struct nodefmt *fmt = calloc(1, sizeof(*fmt));
    int rc;

    *out = NULL;
    if (!fmt)
        return TS_ENOMEM;
    if (!format || !*format) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "Format option lacks specification");
        rc = TS_EOPTVALUE;
    } else
        rc = fmtlist_compile(&fmt->list, format, field_by_letter, "node", errbuf, errlen);
    for (size_t i = 0; rc == TS_OK && i < fmt->list.n; i++) {
        const struct nf_field *nf = fmt->list.items[i].field;

        if (nf)
            fmt->match |= nf->match;
    }
    if (rc != TS_OK) {
        nodefmt_free(fmt);
        return rc;
    }
    *out = fmt;
    return TS_OK;
}
