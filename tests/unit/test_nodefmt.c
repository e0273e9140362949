/* Unit tests for common/nodefmt: sinfo's tables (default, -N, -l, -s, -R, -o with every
 * letter and widths), the grouping and order of its lines, state names and -t, and
 * scontrol show node.
 *
 * The records copy the reference cluster (Slurm 22.05.8, partition debug = n[1-4], 4
 * CPUs and 2000 MB each, NodeAddr 127.0.0.1, NodeHostname vm, ports 17001-17004) in the
 * states it was observed in, and the expected texts are what Slurm printed for them,
 * except where a comment says how Tessera differs. Two differences recur:
 *  - Slurm's backfill had flagged n1 PLANNED, a state flag Tessera does not have, which
 *    made Slurm sort n1's line first (flags outrank base states in its numeric order).
 *    Without it n1 (ALLOCATED = 3) sorts below MIXED (5) and DRAIN (0x200) lines, as
 *    Slurm sorted n1 in a capture where it was not planned ("mix n2" above "alloc n1").
 *  - CPU load and free memory are unknown to Tessera: "N/A", Slurm's text for a node
 *    that never reported them, where Slurm printed "0.49" and "23657".
 * Times are UTC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/nodefmt.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T_START ((int64_t)1795359954) /* 2026-11-22T15:05:54, SlurmdStartTime */
#define T_DRAIN1 ((int64_t)1795363627) /* 2026-11-22T16:07:07 */
#define T_DRAIN2 ((int64_t)1795363643) /* 2026-11-22T16:07:23 */
#define NOW ((time_t)1795363696)
#define SLURMD_PORT 16818
#define MAXN 16

static char *debug_parts[] = {(char *)"debug"};

struct fx {
    Tessera__PartitionInfo part[3];
    Tessera__PartitionInfo *parts[3];
    size_t nparts;
    Tessera__NodeInfo node[MAXN];
    Tessera__NodeInfo *nodes[MAXN];
    char names[MAXN][16];
    size_t nnodes;
};

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

/* ---- records ---------------------------------------------------------------------------- */

static Tessera__PartitionInfo *add_part(struct fx *f, const char *name, const char *nodes,
                                        int is_default)
{
    Tessera__PartitionInfo p = TESSERA__PARTITION_INFO__INIT;

    p.name = (char *)name;
    p.nodes = (char *)nodes;
    p.is_default = is_default;
    p.max_time = 3600; /* MaxTime=60 */
    p.default_time = -1;
    p.max_nodes = UINT32_MAX;
    p.priority_tier = 1;
    p.state = (char *)"UP";
    f->part[f->nparts] = p;
    f->parts[f->nparts] = &f->part[f->nparts];
    return f->parts[f->nparts++];
}

/* Node n<i> of the reference cluster in the given state. */
static Tessera__NodeInfo *add_node(struct fx *f, const char *state, uint32_t alloc_cpus,
                                   uint64_t alloc_mem)
{
    Tessera__NodeInfo n = TESSERA__NODE_INFO__INIT;
    size_t i = f->nnodes;

    snprintf(f->names[i], sizeof(f->names[i]), "n%zu", i + 1);
    n.name = f->names[i];
    n.state = (char *)state;
    n.cpus = 4;
    n.alloc_cpus = alloc_cpus;
    n.real_memory_mb = 2000;
    n.alloc_mem_mb = alloc_mem;
    n.addr = (char *)"127.0.0.1";
    n.hostname = (char *)"vm";
    n.port = 17001 + (uint32_t)i;
    n.boot_time = n.last_seen = T_START;
    n.partitions = debug_parts;
    n.n_partitions = 1;
    n.sockets = 4;
    n.cores_per_socket = 1;
    n.threads_per_core = 1;
    n.weight = 1;
    n.version = (char *)"22.05.8";
    f->node[i] = n;
    f->nodes[i] = &f->node[i];
    f->nnodes++;
    return f->nodes[i];
}

static void set_reason(Tessera__NodeInfo *n, const char *reason, int64_t when)
{
    n->reason = (char *)reason;
    n->reason_time = when;
    n->reason_uid = 0;
}

/* The cluster as "scontrol update nodename=n4 state=drain reason=..." left it, with jobs
 * of 4 CPUs on n1 and 1 CPU on n2 (snapshot 1). */
static void snapshot1(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    add_part(f, "debug", "n[1-4]", 1);
    add_node(f, "ALLOCATED", 4, 100);
    add_node(f, "MIXED", 1, 100);
    add_node(f, "IDLE", 0, 0);
    set_reason(add_node(f, "IDLE+DRAIN", 0, 0), "test drain", T_DRAIN1);
}

/* n2 drained while its job runs, n4 drained idle (snapshot 2). */
static void snapshot2(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    add_part(f, "debug", "n[1-4]", 1);
    add_node(f, "ALLOCATED", 4, 100);
    set_reason(add_node(f, "MIXED+DRAIN", 1, 100), "test drng", T_DRAIN2);
    add_node(f, "IDLE", 0, 0);
    set_reason(add_node(f, "IDLE+DRAIN", 0, 0), "test drain", T_DRAIN2);
}

/* Ten nodes in every state: two allocated, two mixed, a drained, a dead one, idle. */
static void ten_nodes(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    add_part(f, "debug", "n[1-10]", 1);
    add_node(f, "ALLOCATED", 4, 2000);
    add_node(f, "ALLOCATED", 4, 2000);
    add_node(f, "MIXED", 1, 500);
    set_reason(add_node(f, "IDLE+DRAIN", 0, 0), "bad disk", T_DRAIN1);
    add_node(f, "MIXED", 2, 500);
    add_node(f, "IDLE", 0, 0);
    add_node(f, "IDLE", 0, 0);
    add_node(f, "IDLE", 0, 0);
    set_reason(add_node(f, "DOWN+NOT_RESPONDING", 0, 0), "Not responding", T_DRAIN2);
    add_node(f, "IDLE", 0, 0);
}

/* ---- helpers ----------------------------------------------------------------------------- */

static char *table_opts(const struct fx *f, const char *format,
                        const struct nodefmt_sinfo_opts *opts)
{
    struct nodefmt *fmt = NULL;
    char err[256] = "";
    char *text;

    assert_int_equal(nodefmt_compile(format, &fmt, err, sizeof(err)), TS_OK);
    text = nodefmt_sinfo_table(fmt, f->parts, f->nparts, f->nodes, f->nnodes, opts);
    nodefmt_free(fmt);
    assert_non_null(text);
    return text;
}

static void check_table(const struct fx *f, const char *format,
                        const struct nodefmt_sinfo_opts *opts, const char *want)
{
    char *text = table_opts(f, format, opts);

    assert_string_equal(text, want);
    free(text);
}

static void check(const struct fx *f, const char *format, int node_oriented, const char *want)
{
    struct nodefmt_sinfo_opts opts = {.node_oriented = node_oriented};

    check_table(f, format, &opts, want);
}

/* Keep the nodes -t would keep, as the sinfo command does. */
static void filter_states(struct fx *f, const char *states)
{
    uint32_t mask;
    size_t k = 0;

    assert_int_equal(nodefmt_states_parse(states, &mask, NULL, 0), TS_OK);
    for (size_t i = 0; i < f->nnodes; i++)
        if (nodefmt_states_match(mask, f->nodes[i]))
            f->nodes[k++] = f->nodes[i];
    f->nnodes = k;
}

/* ---- default table ----------------------------------------------------------------------- */

static void test_default_ten_nodes(void **state)
{
    struct fx f;

    (void)state;
    ten_nodes(&f);
    /* Lines by Slurm's state number, highest first: down* (0x801), drain (0x202), mix
     * (5), alloc (3), idle (2); the nodes of a line as a host list. */
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*       up    1:00:00      1  down* n9\n"
          "debug*       up    1:00:00      1  drain n4\n"
          "debug*       up    1:00:00      2    mix n[3,5]\n"
          "debug*       up    1:00:00      2  alloc n[1-2]\n"
          "debug*       up    1:00:00      4   idle n[6-8,10]\n");
}

static void test_default_snapshot(void **state)
{
    struct fx f;

    (void)state;
    /* Slurm: "debug*       up    1:00:00      1  alloc n1" first (n1 was PLANNED), then
     * drain n4, mix n2, idle n3: every line is Slurm's, n1's moves (see the top). */
    snapshot1(&f);
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*       up    1:00:00      1  drain n4\n"
          "debug*       up    1:00:00      1    mix n2\n"
          "debug*       up    1:00:00      1  alloc n1\n"
          "debug*       up    1:00:00      1   idle n3\n");
    /* Slurm, verbatim: drng before drain (0x205 > 0x202). */
    snapshot2(&f);
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*       up    1:00:00      1   drng n2\n"
          "debug*       up    1:00:00      1  drain n4\n"
          "debug*       up    1:00:00      1  alloc n1\n"
          "debug*       up    1:00:00      1   idle n3\n");
}

static void test_default_grouping(void **state)
{
    struct fx f;

    (void)state;
    /* Slurm, verbatim, with n[2-4] idle: one line for them. */
    memset(&f, 0, sizeof(f));
    add_part(&f, "debug", "n[1-4]", 1);
    add_node(&f, "ALLOCATED", 4, 100);
    add_node(&f, "IDLE", 0, 0);
    add_node(&f, "IDLE", 0, 0);
    add_node(&f, "IDLE", 0, 0);
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*       up    1:00:00      1  alloc n1\n"
          "debug*       up    1:00:00      3   idle n[2-4]\n");
    /* Slurm, verbatim: sinfo -h with n[2-3] mixed, n[1,4] idle. */
    f.node[0].state = f.node[3].state = (char *)"IDLE";
    f.node[0].alloc_cpus = 0;
    f.node[1].state = f.node[2].state = (char *)"MIXED";
    f.node[1].alloc_cpus = 2;
    f.node[2].alloc_cpus = 1;
    struct nodefmt_sinfo_opts noheader = {.noheader = 1};
    check_table(&f, NODEFMT_SINFO_DEFAULT, &noheader,
                "debug*       up    1:00:00      2    mix n[2-3]\n"
                "debug*       up    1:00:00      2   idle n[1,4]\n");
}

/* A partition whose nodes are all filtered away keeps a line, as Slurm's "sinfo -t down"
 * printed it, verbatim (trailing blank included). */
static void test_empty_partition(void **state)
{
    struct fx f;
    struct nodefmt_sinfo_opts reasons = {.list_reasons = 1};

    (void)state;
    snapshot1(&f);
    filter_states(&f, "down");
    assert_int_equal(f.nnodes, 0);
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*       up    1:00:00      0    n/a \n");
    /* sinfo -R -s on a cluster without down or drained nodes, verbatim. */
    check_table(&f, NODEFMT_SINFO_SUMMARIZE, &reasons,
                "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
                "debug*       up    1:00:00          0/0/0/0 \n");
    /* -N has no partition lines of its own: just the header. */
    check(&f, NODEFMT_SINFO_NODES, 1, "NODELIST   NODES PARTITION STATE \n");
}

/* ---- the other layouts --------------------------------------------------------------------- */

static void test_node_oriented(void **state)
{
    struct fx f;

    (void)state;
    snapshot2(&f); /* Slurm, verbatim */
    check(&f, NODEFMT_SINFO_NODES, 1,
          "NODELIST   NODES PARTITION STATE \n"
          "n1             1    debug* alloc \n"
          "n2             1    debug* drng  \n"
          "n3             1    debug* idle  \n"
          "n4             1    debug* drain \n");
    snapshot1(&f); /* Slurm, verbatim (sinfo -Nl without its date line) */
    check(&f, NODEFMT_SINFO_NODES_LONG, 1,
          "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT "
          "AVAIL_FE REASON              \n"
          "n1             1    debug*   allocated 4       4:1:1   2000        0      1   "
          "(null) none                \n"
          "n2             1    debug*       mixed 4       4:1:1   2000        0      1   "
          "(null) none                \n"
          "n3             1    debug*        idle 4       4:1:1   2000        0      1   "
          "(null) none                \n"
          "n4             1    debug*     drained 4       4:1:1   2000        0      1   "
          "(null) test drain          \n");
}

static void test_long(void **state)
{
    struct fx f;

    (void)state;
    snapshot1(&f); /* Slurm's lines; n1's moves (PLANNED, see the top) */
    check(&f, NODEFMT_SINFO_LONG, 0,
          "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
          "NODELIST\n"
          "debug*       up    1:00:00 1-infinite   no       NO        all      1     drained n4\n"
          "debug*       up    1:00:00 1-infinite   no       NO        all      1       mixed n2\n"
          "debug*       up    1:00:00 1-infinite   no       NO        all      1   allocated n1\n"
          "debug*       up    1:00:00 1-infinite   no       NO        all      1        idle n3\n");
}

static void test_summarize(void **state)
{
    struct fx f;
    struct nodefmt_sinfo_opts none = {0};

    (void)state;
    snapshot2(&f); /* Slurm, verbatim: n1 and draining n2 allocated, n4 other */
    check_table(&f, NODEFMT_SINFO_SUMMARIZE, &none,
                "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
                "debug*       up    1:00:00          2/1/1/4 n[1-4]\n");
    ten_nodes(&f);
    check_table(&f, "%P %F %C %A", &none,
                "PARTITION NODES(A/I/O/T) CPUS(A/I/O/T) NODES(A/I)\n"
                "debug* 4/4/2/10 11/21/8/40 4/4\n");
}

static void test_reasons(void **state)
{
    struct fx f;
    struct nodefmt_sinfo_opts reasons = {.list_reasons = 1};

    (void)state;
    snapshot2(&f); /* Slurm, verbatim */
    filter_states(&f, "down,fail,drain");
    check_table(&f, NODEFMT_SINFO_REASONS, &reasons,
                "REASON               USER      TIMESTAMP           NODELIST\n"
                "test drng            root      2026-11-22T16:07:23 n2\n"
                "test drain           root      2026-11-22T16:07:23 n4\n");
    check_table(&f, NODEFMT_SINFO_REASONS_LONG, &reasons,
                "REASON               USER         TIMESTAMP           STATE  NODELIST\n"
                "test drng            root(0)      2026-11-22T16:07:23 drng   n2\n"
                "test drain           root(0)      2026-11-22T16:07:23 drain  n4\n");
    /* Same reason, user and time: one line, whatever the state (%t is not shown). */
    ten_nodes(&f);
    f.node[8].reason = (char *)"bad disk";
    f.node[8].reason_time = T_DRAIN1;
    filter_states(&f, "down,fail,drain");
    check_table(&f, NODEFMT_SINFO_REASONS, &reasons,
                "REASON               USER      TIMESTAMP           NODELIST\n"
                "bad disk             root      2026-11-22T16:07:07 n[4,9]\n");
}

/* ---- every letter, widths ----------------------------------------------------------------- */

static void test_every_letter(void **state)
{
    struct fx f;

    (void)state;
    snapshot2(&f);
    /* Slurm's "sinfo -o" with every letter, verbatim but for %e and %O (see the top). */
    check(&f,
          "%P|%a|%l|%D|%t|%T|%N|%c|%C|%m|%f|%E|%H|%u|%U|%e|%O|%z|%w|%n|%o|%R|%s|%F|%A|%d|%X|"
          "%Y|%Z|%g|%h|%r|%L|%p|%v|%B|%b|%G|%S|%M|%I|%V",
          0,
          "PARTITION|AVAIL|TIMELIMIT|NODES|STATE|STATE|NODELIST|CPUS|CPUS(A/I/O/T)|MEMORY|"
          "AVAIL_FEATURES|REASON|TIMESTAMP|USER|USER|FREE_MEM|CPU_LOAD|S:C:T|WEIGHT|HOSTNAMES|"
          "NODE_ADDR|PARTITION|JOB_SIZE|NODES(A/I/O/T)|NODES(A/I)|TMP_DISK|SOCKETS|CORES|"
          "THREADS|GROUPS|OVERSUBSCRIBE|ROOT|DEFAULTTIME|PRIO_TIER|VERSION|MAX_CPUS_PER_NODE|"
          "ACTIVE_FEATURES|GRES|ALLOCNODES|PREEMPT_MODE|PRIO_JOB_FACTOR|CLUSTER\n"
          "debug*|up|1:00:00|1|drng|draining|n2|4|1/0/3/4|2000|(null)|test drng|"
          "2026-11-22T16:07:23|root|root(0)|N/A|N/A|4:1:1|1|vm|127.0.0.1|debug|1-infinite|"
          "1/0/0/1|1/0|0|4|1|1|all|NO|no|n/a|1|22.05.8|UNLIMITED|(null)|(null)|all|OFF|1|N/A\n"
          "debug*|up|1:00:00|1|drain|drained|n4|4|0/0/4/4|2000|(null)|test drain|"
          "2026-11-22T16:07:23|root|root(0)|N/A|N/A|4:1:1|1|vm|127.0.0.1|debug|1-infinite|"
          "0/0/1/1|0/0|0|4|1|1|all|NO|no|n/a|1|22.05.8|UNLIMITED|(null)|(null)|all|OFF|1|N/A\n"
          "debug*|up|1:00:00|1|alloc|allocated|n1|4|4/0/0/4|2000|(null)|none|Unknown|Unknown|"
          "Unknown|N/A|N/A|4:1:1|1|vm|127.0.0.1|debug|1-infinite|1/0/0/1|1/0|0|4|1|1|all|NO|"
          "no|n/a|1|22.05.8|UNLIMITED|(null)|(null)|all|OFF|1|N/A\n"
          "debug*|up|1:00:00|1|idle|idle|n3|4|0/4/0/4|2000|(null)|none|Unknown|Unknown|"
          "Unknown|N/A|N/A|4:1:1|1|vm|127.0.0.1|debug|1-infinite|0/1/0/1|0/1|0|4|1|1|all|NO|"
          "no|n/a|1|22.05.8|UNLIMITED|(null)|(null)|all|OFF|1|N/A\n");
}

static void test_widths(void **state)
{
    struct fx f;

    (void)state;
    snapshot2(&f);
    /* Slurm, verbatim: "." right-justifies, a long value is cut keeping its start
     * ("allocate", "1:0"), %P's "*" stays visible ("de*"), %N's header is never cut when
     * right-justified. */
    check(&f,
          "%.12P|%12P|%.3t|%3T|%.8T|%.20N|%4N|%.2D|%12C|%.15E|%5E|%.19H|%10u|%.3l|%.4a", 0,
          "   PARTITION|PARTITION   |STA|STA|   STATE|            NODELIST|NODE|NO|"
          "CPUS(A/I/O/T|         REASON|REASO|          TIMESTAMP|USER      |TIM|AVAI\n"
          "      debug*|debug*      |drn|dra|draining|                  n2|n2  | 1|"
          "1/0/3/4     |      test drng|test |2026-11-22T16:07:23|root      |1:0|  up\n"
          "      debug*|debug*      |dra|dra| drained|                  n4|n4  | 1|"
          "0/0/4/4     |     test drain|test |2026-11-22T16:07:23|root      |1:0|  up\n"
          "      debug*|debug*      |all|all|allocate|                  n1|n1  | 1|"
          "4/0/0/4     |           none|none |            Unknown|Unknown   |1:0|  up\n"
          "      debug*|debug*      |idl|idl|    idle|                  n3|n3  | 1|"
          "0/4/0/4     |           none|none |            Unknown|Unknown   |1:0|  up\n");
    /* Slurm, verbatim: "sinfo -o '%.3P|%3P|%0P|%P'" (grouped: no node field shown). */
    check(&f, "%.3P|%3P|%0P|%P", 0, "PAR|PAR|PARTITION|PARTITION\nde*|de*|debug*|debug*\n");
    /* Slurm, verbatim: "%.5N" keeps its whole header, "%5N" cuts it. */
    check(&f, "%.5N|%5N|%10N|", 0, "NODELIST|NODEL|NODELIST  |\nn[1-4|n[1-4|n[1-4]    |\n");
    /* Literal text around fields; "%%" is a percent sign (Slurm reads "%%z" as "%z"). */
    check(&f, "x%Dy%%z", 0, "xNODESy%z\nx4y%z\n");
}

static void test_growing_columns(void **state)
{
    struct fx f;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_part(&f, "debug", "n[1-2]", 1);
    Tessera__PartitionInfo *p = add_part(&f, "verylongpartition", "n[2-3]", 0);
    p->max_time = -1;
    add_node(&f, "IDLE", 0, 0);
    add_node(&f, "MIXED", 2, 0);
    add_node(&f, "IDLE", 0, 0);
    /* %#P grows to the longest name, partitions in the order given, each with its own
     * lines; a node in two partitions shows in both. */
    check(&f, NODEFMT_SINFO_DEFAULT, 0,
          "PARTITION         AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
          "debug*               up    1:00:00      1    mix n2\n"
          "debug*               up    1:00:00      1   idle n1\n"
          "verylongpartition    up   infinite      1    mix n2\n"
          "verylongpartition    up   infinite      1   idle n3\n");
    /* -N: by node name; n2's partitions in their order. */
    check(&f, NODEFMT_SINFO_NODES, 1,
          "NODELIST   NODES         PARTITION STATE \n"
          "n1             1            debug* idle  \n"
          "n2             1            debug* mix   \n"
          "n2             1 verylongpartition mix   \n"
          "n3             1 verylongpartition idle  \n");
    /* Without a partition field, partitions share lines and a node counts once. */
    check(&f, "%.6D %t %N", 0, " NODES STATE NODELIST\n     1 mix n2\n     2 idle n[1,3]\n");
    /* %#N grows to the longest node list, at least 9 wide (or the width given). */
    check(&f, "%#N|%#12N|", 1,
          "NODELIST |NODELIST    |\nn1       |n1          |\nn2       |n2          |\n"
          "n2       |n2          |\nn3       |n3          |\n");
}

static void test_sizes_and_exact(void **state)
{
    struct fx f;
    struct nodefmt_sinfo_opts exact = {.exact = 1};

    (void)state;
    memset(&f, 0, sizeof(f));
    add_part(&f, "debug", "n[1-4]", 1);
    add_node(&f, "IDLE", 0, 0);
    add_node(&f, "IDLE", 0, 0)->cpus = 8;
    add_node(&f, "IDLE", 0, 0)->real_memory_mb = 4096;
    add_node(&f, "IDLE", 0, 0)->weight = 10;
    f.node[1].sockets = 8;
    /* Sizes do not split lines: the smallest with "+", as Slurm. */
    check(&f, "%c %m %w %z %X %N", 0, "CPUS MEMORY WEIGHT S:C:T SOCKETS NODELIST\n"
                                      "4+ 2000+ 1+ 4+:1:1 4+ n[1-4]\n");
    /* -e splits them. */
    check_table(&f, "%c %m %w %N", &exact,
                "CPUS MEMORY WEIGHT NODELIST\n4 2000 1 n1\n8 2000 1 n2\n4 4096 1 n3\n"
                "4 2000 10 n4\n");
    /* Counts go up a unit while exact, as Slurm's convert_num_unit: 2048 is 2K. */
    f.node[0].cpus = 2048;
    f.node[1].cpus = 1536;
    check_table(&f, "%c|", &exact, "CPUS|\n2K|\n1.50K|\n4|\n");
    /* Job sizes as ranges. */
    f.part[0].min_nodes = 2;
    f.part[0].max_nodes = 8;
    check(&f, "%s|%L|%p", 0, "JOB_SIZE|DEFAULTTIME|PRIO_TIER\n2-8|n/a|1\n");
}

static void test_node_text_grouping(void **state)
{
    struct fx f;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_part(&f, "debug", "n[1-4]", 1);
    add_node(&f, "IDLE", 0, 0)->features = (char *)"a,b";
    add_node(&f, "IDLE", 0, 0);
    add_node(&f, "IDLE", 0, 0)->features = (char *)"a,b";
    add_node(&f, "IDLE", 0, 0)->hostname = (char *)"other";
    check(&f, "%f %D %N", 0, "AVAIL_FEATURES NODES NODELIST\na,b 2 n[1,3]\n(null) 2 n[2,4]\n");
    /* %n and %o split by host name and address. */
    check(&f, "%n %o %N", 0, "HOSTNAMES NODE_ADDR NODELIST\nvm 127.0.0.1 n[1-3]\nother "
                             "127.0.0.1 n4\n");
    /* Partition availability. */
    f.part[0].state = (char *)"INACTIVE";
    check(&f, "%a|%.5a", 0, "AVAIL|AVAIL\ninactive|inact\n");
    f.part[0].state = (char *)"DRAIN";
    check(&f, "%a", 0, "AVAIL\ndrain\n");
    f.part[0].state = (char *)"DOWN";
    check(&f, "%a", 0, "AVAIL\ndown\n");
}

/* Slurm 22.05 with GresTypes=gpu,bandwidth: sinfo's %G is the node line's Gres= ("(null)"
 * without), and nodes group by it; scontrol shows it as Gres= and in CfgTRES, each
 * name once with its types summed. */
static void test_gres(void **state)
{
    struct fx f;

    (void)state;
    memset(&f, 0, sizeof(f));
    add_part(&f, "debug", "n[1-4]", 1);
    add_node(&f, "IDLE", 0, 0)->gres = (char *)"gpu:2";
    add_node(&f, "IDLE", 0, 0)->gres = (char *)"gpu:2";
    add_node(&f, "IDLE", 0, 0)->gres = (char *)"gpu:a100:2,gpu:v100:2,bandwidth:10G";
    add_node(&f, "IDLE", 0, 0);
    check(&f, "%G %D %N", 0, "GRES NODES NODELIST\ngpu:2 2 n[1-2]\n"
                             "gpu:a100:2,gpu:v100:2,bandwidth:10G 1 n3\n(null) 1 n4\n");
    char *text = nodefmt_show_node_port(f.nodes[2], NOW, 0, SLURMD_PORT);
    assert_non_null(strstr(text, "\n   Gres=gpu:a100:2,gpu:v100:2,bandwidth:10G\n"));
    assert_non_null(strstr(text, "\n   CfgTRES=cpu=4,mem=2000M,billing=4,gres/gpu=4,"
                                 "gres/bandwidth=10737418240\n"));
    free(text);
    text = nodefmt_show_node_port(f.nodes[3], NOW, 0, SLURMD_PORT);
    assert_non_null(strstr(text, "\n   Gres=(null)\n"));
    assert_non_null(strstr(text, "\n   CfgTRES=cpu=4,mem=2000M,billing=4\n"));
    free(text);
}

static void test_compile_errors(void **state)
{
    static const struct {
        const char *format, *error;
    } cases[] = {
        /* Slurm's words ("Invalid node format specification: k"); Slurm only warns */
        {"%k", "Invalid node format specification: k"},
        {"%P %-3P", "Invalid node format specification: -"},
        {"%5", "Invalid node format specification: "},
        {"%", "Invalid node format specification: "},
        {"", "Format option lacks specification"},
    };
    struct nodefmt *fmt = NULL;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        assert_int_equal(nodefmt_compile(cases[i].format, &fmt, err, sizeof(err)),
                         TS_EOPTVALUE);
        assert_null(fmt);
        assert_string_equal(err, cases[i].error);
    }
}

/* ---- states ------------------------------------------------------------------------------ */

static void test_state_names(void **state)
{
    static const struct {
        const char *state, *compact, *full;
    } cases[] = {
        {"IDLE", "idle", "idle"},
        {"MIXED", "mix", "mixed"},
        {"ALLOCATED", "alloc", "allocated"},
        {"DOWN", "down", "down"},
        {"UNKNOWN", "unk", "unknown"},
        {"FUTURE", "futr", "future"},
        {"IDLE+DRAIN", "drain", "drained"},
        {"DOWN+DRAIN", "drain", "drained"},
        {"MIXED+DRAIN", "drng", "draining"},
        {"ALLOCATED+DRAIN", "drng", "draining"},
        {"IDLE+COMPLETING+DRAIN", "drng", "draining"},
        {"IDLE+NOT_RESPONDING", "idle*", "idle*"},
        {"MIXED+NOT_RESPONDING", "mix*", "mixed*"},
        {"DOWN+NOT_RESPONDING", "down*", "down*"},
        {"IDLE+DRAIN+NOT_RESPONDING", "drain*", "drained*"},
        /* the base comes first: NOT_RESPONDING is no base (UNKNOWN), IDLE no flag */
        {"NOT_RESPONDING+DRAIN+IDLE", "drain", "drained"},
        {"IDLE+NOT_RESPONDING+DRAIN", "drain*", "drained*"},
        {"ALLOCATED+COMPLETING", "alloc+", "allocated+"},
        {"ALLOCATED+COMPLETING+NOT_RESPONDING", "alloc*", "allocated*"},
        {"IDLE+COMPLETING", "comp", "completing"},
        {"idle", "idle", "idle"},
        {"BOGUS+DRAIN", "drain", "drained"},
        {"IDLE+BOGUS", "idle", "idle"},
        {"", "unk", "unknown"},
    };
    Tessera__NodeInfo n = TESSERA__NODE_INFO__INIT;
    char buf[32];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n.state = (char *)cases[i].state;
        assert_string_equal(nodefmt_state_compact(&n, buf, sizeof(buf)), cases[i].compact);
        assert_string_equal(nodefmt_state_long(&n, buf, sizeof(buf)), cases[i].full);
    }
    n.state = (char *)"IDLE+NOT_RESPONDING";
    assert_false(nodefmt_node_responding(&n));
    n.state = (char *)"IDLE+DRAIN";
    assert_true(nodefmt_node_responding(&n));
}

static void test_state_filter(void **state)
{
    static const struct {
        const char *list;
        const char *picks; /* of snapshot2 plus down n5 and a dead idle n6 */
    } cases[] = {
        /* Slurm 22.05: -t idle shows the drained idle node too */
        {"idle", "n3 n4 n6"},
        {"i", "n3 n4 n6"},
        {"alloc", "n1 n2"},
        {"allocated,mix", "n1 n2"},
        {"mix", "n2"}, /* the base: a draining mixed node is mixed */
        {"drain", "n2 n4"},
        {"dr", "n2 n4"},
        {"drained", "n4"},
        {"draining", "n2"},
        {"drng", "n2"},
        {"down", "n5"},
        {"d", "n5"},
        {"no_respond", "n6"},
        {"down,fail,drain", "n2 n4 n5"},
        {"DOWN,Planned", "n5"},
        {"all", "n1 n2 n3 n4 n5 n6"},
        {"", "n1 n2 n3 n4 n5 n6"},
    };
    struct fx f;
    char bad[64];
    uint32_t mask;

    (void)state;
    snapshot2(&f);
    add_node(&f, "DOWN", 0, 0);
    add_node(&f, "IDLE+NOT_RESPONDING", 0, 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char got[64] = "";

        assert_int_equal(nodefmt_states_parse(cases[i].list, &mask, bad, sizeof(bad)), TS_OK);
        for (size_t k = 0; k < f.nnodes; k++)
            if (nodefmt_states_match(mask, f.nodes[k]))
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
                         got[0] ? " " : "", f.nodes[k]->name);
        assert_string_equal(got, cases[i].picks);
    }
    assert_int_equal(nodefmt_states_parse("idle,badstate", &mask, bad, sizeof(bad)),
                     TS_EOPTVALUE);
    assert_string_equal(bad, "badstate");
    assert_int_equal(nodefmt_states_parse("resp", &mask, bad, sizeof(bad)), TS_EOPTVALUE);
    assert_string_equal(nodefmt_states_valid(),
                        "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,"
                        "no_respond,reserved,perfctrs,cloud,completing,powering_down,"
                        "powered_down,power_down,powering_up,fail,maint,reboot,reboot^,"
                        "unknown");
}

/* ---- scontrol show node ------------------------------------------------------------------ */

static void check_show(const Tessera__NodeInfo *n, int oneliner, const char *want)
{
    char *text = nodefmt_show_node_port(n, NOW, oneliner, SLURMD_PORT);

    assert_non_null(text);
    assert_string_equal(text, want);
    free(text);
}

/* What Slurm printed for a node, with Tessera's neutral values where it does not know
 * (nodefmt.h): no Arch= or OS=, CPULoad=N/A, FreeMem=N/A, BootTime=None with the
 * daemon's start as SlurmdStartTime, LastBusyTime=Unknown. */
static void test_show_drained(void **state)
{
    struct fx f;

    (void)state;
    snapshot2(&f);
    /* Slurm: "NodeName=n4 Arch=x86_64 CoresPerSocket=1 ", "CPULoad=0.39",
     * "OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0 ", "FreeMem=23861",
     * "BootTime=2026-11-22T14:54:04", "LastBusyTime=2026-11-22T16:06:55"; the rest
     * verbatim. */
    check_show(f.nodes[3], 0,
               "NodeName=n4 CoresPerSocket=1 \n"
               "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=N/A\n"
               "   AvailableFeatures=(null)\n"
               "   ActiveFeatures=(null)\n"
               "   Gres=(null)\n"
               "   NodeAddr=127.0.0.1 NodeHostName=vm Port=17004 Version=22.05.8\n"
               "   RealMemory=2000 AllocMem=0 FreeMem=N/A Sockets=4 Boards=1\n"
               "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
               "MCS_label=N/A\n"
               "   Partitions=debug \n"
               "   BootTime=None SlurmdStartTime=2026-11-22T15:05:54\n"
               "   LastBusyTime=Unknown\n"
               "   CfgTRES=cpu=4,mem=2000M,billing=4\n"
               "   AllocTRES=\n"
               "   CapWatts=n/a\n"
               "   CurrentWatts=0 AveWatts=0\n"
               "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
               "   Reason=test drain [root@2026-11-22T16:07:23]\n\n");
}

static void test_show_draining_mixed_idle(void **state)
{
    struct fx f;

    (void)state;
    snapshot2(&f);
    check_show(f.nodes[1], 0,
               "NodeName=n2 CoresPerSocket=1 \n"
               "   CPUAlloc=1 CPUEfctv=4 CPUTot=4 CPULoad=N/A\n"
               "   AvailableFeatures=(null)\n"
               "   ActiveFeatures=(null)\n"
               "   Gres=(null)\n"
               "   NodeAddr=127.0.0.1 NodeHostName=vm Port=17002 Version=22.05.8\n"
               "   RealMemory=2000 AllocMem=100 FreeMem=N/A Sockets=4 Boards=1\n"
               "   State=MIXED+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
               "MCS_label=N/A\n"
               "   Partitions=debug \n"
               "   BootTime=None SlurmdStartTime=2026-11-22T15:05:54\n"
               "   LastBusyTime=Unknown\n"
               "   CfgTRES=cpu=4,mem=2000M,billing=4\n"
               "   AllocTRES=cpu=1,mem=100M\n"
               "   CapWatts=n/a\n"
               "   CurrentWatts=0 AveWatts=0\n"
               "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
               "   Reason=test drng [root@2026-11-22T16:07:23]\n\n");
    snapshot1(&f);
    f.node[1].partitions = NULL; /* a node in no partition has no Partitions= line */
    f.node[1].n_partitions = 0;
    check_show(f.nodes[1], 0,
               "NodeName=n2 CoresPerSocket=1 \n"
               "   CPUAlloc=1 CPUEfctv=4 CPUTot=4 CPULoad=N/A\n"
               "   AvailableFeatures=(null)\n"
               "   ActiveFeatures=(null)\n"
               "   Gres=(null)\n"
               "   NodeAddr=127.0.0.1 NodeHostName=vm Port=17002 Version=22.05.8\n"
               "   RealMemory=2000 AllocMem=100 FreeMem=N/A Sockets=4 Boards=1\n"
               "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
               "   BootTime=None SlurmdStartTime=2026-11-22T15:05:54\n"
               "   LastBusyTime=Unknown\n"
               "   CfgTRES=cpu=4,mem=2000M,billing=4\n"
               "   AllocTRES=cpu=1,mem=100M\n"
               "   CapWatts=n/a\n"
               "   CurrentWatts=0 AveWatts=0\n"
               "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n\n");
    /* One line: Slurm's one-liner keeps the trailing blanks, so two spaces follow them. */
    check_show(f.nodes[2], 1,
               "NodeName=n3 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=N/A "
               "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) "
               "NodeAddr=127.0.0.1 NodeHostName=vm Port=17003 Version=22.05.8 "
               "RealMemory=2000 AllocMem=0 FreeMem=N/A Sockets=4 Boards=1 State=IDLE "
               "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  "
               "BootTime=None SlurmdStartTime=2026-11-22T15:05:54 LastBusyTime=Unknown "
               "CfgTRES=cpu=4,mem=2000M,billing=4 AllocTRES= CapWatts=n/a CurrentWatts=0 "
               "AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n");
}

/* A node that never registered and is down: no version, no start time; the default
 * port is not shown; a reason over two lines. */
static void test_show_down(void **state)
{
    struct fx f;
    Tessera__NodeInfo *n;
    char *text;

    (void)state;
    snapshot1(&f);
    n = f.nodes[0];
    n->state = (char *)"DOWN+NOT_RESPONDING";
    n->alloc_cpus = 0;
    n->alloc_mem_mb = 0;
    n->version = (char *)"";
    n->boot_time = 0;
    n->port = SLURMD_PORT;
    n->real_memory_mb = 4096;
    n->features = (char *)"big,fast";
    set_reason(n, "Not responding\nsince boot", T_DRAIN1);
    n->reason_uid = 4242424; /* no such user */
    check_show(n, 0,
               "NodeName=n1 CoresPerSocket=1 \n"
               "   CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=N/A\n"
               "   AvailableFeatures=big,fast\n"
               "   ActiveFeatures=big,fast\n"
               "   Gres=(null)\n"
               "   NodeAddr=127.0.0.1 NodeHostName=vm \n"
               "   RealMemory=4096 AllocMem=0 FreeMem=N/A Sockets=4 Boards=1\n"
               "   State=DOWN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
               "MCS_label=N/A\n"
               "   Partitions=debug \n"
               "   BootTime=None SlurmdStartTime=None\n"
               "   LastBusyTime=Unknown\n"
               "   CfgTRES=cpu=4,mem=4G,billing=4\n"
               "   AllocTRES=\n"
               "   CapWatts=n/a\n"
               "   CurrentWatts=0 AveWatts=0\n"
               "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
               "   Reason=Not responding [nobody@2026-11-22T16:07:07]\n"
               "          since boot\n\n");
    /* nodefmt_show_node shows any known port. */
    text = nodefmt_show_node(n, NOW, 0);
    assert_non_null(strstr(text, "   NodeAddr=127.0.0.1 NodeHostName=vm Port=16818 \n"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_ten_nodes),
        cmocka_unit_test(test_default_snapshot),
        cmocka_unit_test(test_default_grouping),
        cmocka_unit_test(test_empty_partition),
        cmocka_unit_test(test_node_oriented),
        cmocka_unit_test(test_long),
        cmocka_unit_test(test_summarize),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_every_letter),
        cmocka_unit_test(test_widths),
        cmocka_unit_test(test_growing_columns),
        cmocka_unit_test(test_sizes_and_exact),
        cmocka_unit_test(test_node_text_grouping),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_state_filter),
        cmocka_unit_test(test_show_drained),
        cmocka_unit_test(test_show_draining_mixed_idle),
        cmocka_unit_test(test_show_down),
        cmocka_unit_test(test_gres),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
