/* Node states: NodeInfo.state read into Slurm's numeric layout, the names sinfo and
 * scontrol print for it, and sinfo -t's state list.
 *
 * The names follow Slurm 22.05's node_state_string() and node_state_string_compact():
 * DRAIN wins over the base ("drain"/"drng"), COMPLETING shows as "comp" except on an
 * allocated node ("alloc+"), and "*" marks a node that does not respond. */
#include "common/format/nodefmt.h"

#include "common/format/nodefmt_int.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- reading NodeInfo.state ------------------------------------------------------------ */

struct named_bits {
    const char *name;
    uint32_t bits;
};

static const struct named_bits bases[] = {
    {"IDLE", NF_IDLE},     {"MIXED", NF_MIXED},     {"ALLOCATED", NF_ALLOCATED},
    {"DOWN", NF_DOWN},     {"UNKNOWN", NF_UNKNOWN}, {"FUTURE", NF_FUTURE},
};

/* In Slurm's bit order, which is also the order scontrol prints them in. */
static const struct named_bits flags[] = {
    {"DRAIN", NF_DRAIN},
    {"COMPLETING", NF_COMPLETING},
    {"NOT_RESPONDING", NF_NO_RESPOND},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t lookup_bits(const struct named_bits *t, size_t n, const char *s, size_t len,
                            uint32_t dflt)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && !strncasecmp(t[i].name, s, len))
            return t[i].bits;
    return dflt;
}

uint32_t nf_state_code(const char *state)
{
    const char *p = state ? state : "";
    size_t len = strcspn(p, "+");
    uint32_t code = lookup_bits(bases, COUNT(bases), p, len, NF_UNKNOWN);

    for (p += len; *p == '+'; p += len) {
        p++;
        len = strcspn(p, "+");
        code |= lookup_bits(flags, COUNT(flags), p, len, 0);
    }
    return code;
}

int nf_is_drain(uint32_t code)
{
    return (code & NF_DRAIN) != 0;
}

/* Slurm's IS_NODE_DRAINING: drained while jobs still run or end there. */
int nf_is_draining(uint32_t code)
{
    uint32_t base = code & NF_BASE_MASK;

    return nf_is_drain(code) &&
           (base == NF_ALLOCATED || base == NF_MIXED || (code & NF_COMPLETING));
}

/* ---- names ------------------------------------------------------------------------------- */

/* Both spellings of a state, without the "*". */
struct state_names {
    const char *compact;
    const char *full;
};

static struct state_names names_of(uint32_t code)
{
    uint32_t base = code & NF_BASE_MASK;
    int comp = (code & NF_COMPLETING) != 0;

    if (nf_is_drain(code))
        return nf_is_draining(code) ? (struct state_names){"DRNG", "DRAINING"}
                                    : (struct state_names){"DRAIN", "DRAINED"};
    if (base == NF_DOWN)
        return (struct state_names){"DOWN", "DOWN"};
    if (base == NF_ALLOCATED) /* "+" only when the "*" does not take its place */
        return comp && !(code & NF_NO_RESPOND) ? (struct state_names){"ALLOC+", "ALLOCATED+"}
                                               : (struct state_names){"ALLOC", "ALLOCATED"};
    if (comp)
        return (struct state_names){"COMP", "COMPLETING"};
    switch (base) {
    case NF_IDLE: return (struct state_names){"IDLE", "IDLE"};
    case NF_MIXED: return (struct state_names){"MIX", "MIXED"};
    case NF_FUTURE: return (struct state_names){"FUTR", "FUTURE"};
    default: return (struct state_names){"UNK", "UNKNOWN"};
    }
}

static const char *put_name(const char *name, uint32_t code, int lower, char *buf, size_t len)
{
    size_t i = 0;

    if (!buf || len == 0)
        return "";
    for (; name[i] && i + 1 < len; i++)
        buf[i] = lower ? (char)(name[i] | 0x20) : name[i];
    if ((code & NF_NO_RESPOND) && i + 1 < len)
        buf[i++] = '*';
    buf[i] = '\0';
    return buf;
}

const char *nf_state_long_upper(uint32_t code, char *buf, size_t len)
{
    return put_name(names_of(code).full, code, 0, buf, len);
}

const char *nf_state_compact_code(uint32_t code, char *buf, size_t len)
{
    return put_name(names_of(code).compact, code, 1, buf, len);
}

const char *nf_state_long_code(uint32_t code, char *buf, size_t len)
{
    return put_name(names_of(code).full, code, 1, buf, len);
}

const char *nodefmt_state_compact(const Tessera__NodeInfo *node, char *buf, size_t len)
{
    return nf_state_compact_code(nf_state_code(node ? node->state : NULL), buf, len);
}

const char *nodefmt_state_long(const Tessera__NodeInfo *node, char *buf, size_t len)
{
    return nf_state_long_code(nf_state_code(node ? node->state : NULL), buf, len);
}

int nodefmt_node_responding(const Tessera__NodeInfo *node)
{
    return !(nf_state_code(node ? node->state : NULL) & NF_NO_RESPOND);
}

/* ---- sinfo -t ------------------------------------------------------------------------------ */

/* What a -t name selects. */
enum test {
    T_NEVER,      /* a Slurm state Tessera nodes are never in */
    T_BASE,       /* the base state is `base` */
    T_ALLOCATED,  /* CPUs are allocated */
    T_DRAIN,      /* the DRAIN flag */
    T_DRAINED,
    T_DRAINING,
    T_COMPLETING,
    T_NO_RESPOND,
};

/* The names in the order Slurm 22.05 tries them (a prefix matches the first entry that
 * has either spelling starting with it: "d" is DOWN, "dr" DRAIN). */
static const struct state_test {
    const char *compact, *full;
    enum test test;
    uint32_t base;
} tests[] = {
    {"UNK", "UNKNOWN", T_BASE, NF_UNKNOWN},
    {"DOWN", "DOWN", T_BASE, NF_DOWN},
    {"IDLE", "IDLE", T_BASE, NF_IDLE},
    {"ALLOC", "ALLOCATED", T_ALLOCATED, 0},
    {"MIX", "MIXED", T_BASE, NF_MIXED},
    {"FUTR", "FUTURE", T_BASE, NF_FUTURE},
    {"PLND", "PLANNED", T_NEVER, 0},
    {"DRAIN", "DRAIN", T_DRAIN, 0},
    {"DRAINED", "DRAINED", T_DRAINED, 0},
    {"RESV", "RESERVED", T_NEVER, 0},
    {"NPC", "PERFCTRS", T_NEVER, 0},
    {"DRNG", "DRAINING", T_DRAINING, 0},
    {"COMP", "COMPLETING", T_COMPLETING, 0},
    {"NO_RESPOND", "NO_RESPOND", T_NO_RESPOND, 0},
    {"POWERING_DOWN", "POWERING_DOWN", T_NEVER, 0},
    {"POWERED_DOWN", "POWERED_DOWN", T_NEVER, 0},
    {"POWER_DOWN", "POWER_DOWN", T_NEVER, 0},
    {"POWERING_UP", "POWERING_UP", T_NEVER, 0},
    {"FAIL", "FAIL", T_NEVER, 0},
    {"MAINT", "MAINT", T_NEVER, 0},
    {"REBOOT", "REBOOT_REQUESTED", T_NEVER, 0},
    {"REBOOT^", "REBOOT_ISSUED", T_NEVER, 0},
    {"CLOUD", "CLOUD", T_NEVER, 0},
};

const char *nodefmt_states_valid(void)
{
    /* Slurm 22.05's own list, word for word (its "?" and second "unknown" included). */
    return "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,"
           "reserved,perfctrs,cloud,completing,powering_down,powered_down,power_down,"
           "powering_up,fail,maint,reboot,reboot^,unknown";
}

static int prefix_of(const char *s, size_t len, const char *name)
{
    return strlen(name) >= len && !strncasecmp(name, s, len);
}

static int find_test(const char *s, size_t len)
{
    for (size_t i = 0; i < COUNT(tests); i++)
        if (prefix_of(s, len, tests[i].compact) || prefix_of(s, len, tests[i].full))
            return (int)i;
    return -1;
}

int nodefmt_states_parse(const char *list, uint32_t *mask, char *bad, size_t badlen)
{
    const char *p = list ? list : "";

    *mask = 0;
    if (!strcasecmp(p, "all"))
        return TS_OK;
    while (*p) {
        size_t len = strcspn(p, ",");
        int t = len ? find_test(p, len) : 0;

        if (len && t < 0) {
            if (bad && badlen)
                snprintf(bad, badlen, "%.*s", (int)len, p);
            return TS_EOPTVALUE;
        }
        if (len)
            *mask |= 1u << t;
        p += len + (p[len] == ',');
    }
    return TS_OK;
}

static int passes(const struct state_test *t, uint32_t code, const Tessera__NodeInfo *node)
{
    switch (t->test) {
    case T_BASE: return (code & NF_BASE_MASK) == t->base;
    case T_ALLOCATED:
        return node->alloc_cpus > 0 || (code & NF_BASE_MASK) == NF_ALLOCATED;
    case T_DRAIN: return nf_is_drain(code);
    case T_DRAINED: return nf_is_drain(code) && !nf_is_draining(code);
    case T_DRAINING: return nf_is_draining(code);
    case T_COMPLETING: return (code & NF_COMPLETING) != 0;
    case T_NO_RESPOND: return (code & NF_NO_RESPOND) != 0;
    default: return 0;
    }
}

int nodefmt_states_match(uint32_t mask, const Tessera__NodeInfo *node)
{
    uint32_t code = nf_state_code(node->state);

    if (mask == 0)
        return 1;
    for (size_t i = 0; i < COUNT(tests); i++)
        if ((mask & (1u << i)) && passes(&tests[i], code, node))
            return 1;
    return 0;
}
