/* How commands print nodes and partitions as Slurm 22.05 does: sinfo's default layout,
 * -N (node oriented), -o with %P %a %l %D %t %T %N %c %m %f %C %E %H %e %O ..., and the
 * text of "scontrol show node". Pure functions of the records (no I/O besides user name
 * lookups).
 *
 * NodeInfo.state, as the controller sends it: a base state, then flags, joined by "+",
 * upper case, the base first:
 *   base:  IDLE, MIXED, ALLOCATED, DOWN, UNKNOWN, FUTURE
 *   flags: +DRAIN           drained (no jobs left) or draining (jobs still running)
 *          +COMPLETING      jobs are ending on the node
 *          +NOT_RESPONDING  the node daemon does not answer
 * e.g. "IDLE", "MIXED+DRAIN", "IDLE+DRAIN+NOT_RESPONDING", "DOWN+NOT_RESPONDING". This is
 * Slurm's own "State=" text of scontrol show node, which is printed as given (flags in the
 * order above). Flags may come in any order; an unknown base reads as UNKNOWN and unknown
 * flags are ignored, so that a newer controller cannot break an older command.
 * sinfo names: IDLE "idle", MIXED "mix"/"mixed", ALLOCATED "alloc"/"allocated", DOWN
 * "down", UNKNOWN "unk"/"unknown", FUTURE "futr"/"future"; with DRAIN, "drain"/"drained"
 * (no jobs) or "drng"/"draining" (ALLOCATED, MIXED or COMPLETING); COMPLETING alone
 * "comp"/"completing", on an ALLOCATED node "alloc+"/"allocated+"; "*" is appended for
 * NOT_RESPONDING ("idle*", "drain*"), as Slurm does.
 */
#ifndef TESSERA_COMMON_NODEFMT_H
#define TESSERA_COMMON_NODEFMT_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* sinfo's formats, as Slurm 22.05 builds them. "%#P" and "%#N" are Tessera's spelling of
 * what Slurm does behind its default formats: the column is at least 9 wide (or the
 * width given) and grows to the longest partition name (with its "*") or node list. */
#define NODEFMT_SINFO_DEFAULT "%#P %.5a %.10l %.6D %.6t %N"
#define NODEFMT_SINFO_LONG "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
#define NODEFMT_SINFO_NODES "%#N %.6D %.#P %6t"
#define NODEFMT_SINFO_NODES_LONG "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
#define NODEFMT_SINFO_SUMMARIZE "%#P %.5a %.10l %.16F %N"
#define NODEFMT_SINFO_REASONS "%20E %9u %19H %N"
#define NODEFMT_SINFO_REASONS_LONG "%20E %12U %19H %6t %N"

struct nodefmt; /* a compiled sinfo format */

/* Compile an sinfo -o format: literal text and "%[.][#][width]X" fields ("." right-
 * justifies; a longer value is cut to the width, keeping its start, as Slurm cuts; no
 * width or 0 is the value's own width; "#" as above; "%%" is a percent sign). Letters:
 *   a avail (up/down/drain/inactive)  A nodes alloc/idle      b active features
 *   B max CPUs per node (UNLIMITED)   c CPUs per node ("4+" when they differ)
 *   C CPUs alloc/idle/other/total     d tmp disk (0)          D node count
 *   e free memory (N/A: unknown)      E reason ("none")       f features
 *   F nodes alloc/idle/other/total    g groups (all)          G gres ((null))
 *   h oversubscribe (NO)              H reason time           I priority job factor (1)
 *   l time limit ("1:00:00", "infinite")                      L default time ("n/a")
 *   m memory (MB)                     M preempt mode (OFF)    n hostnames
 *   N node list                       o addresses             O CPU load (N/A: unknown)
 *   p priority tier                   P partition ("*" after the default one)
 *   r root only (no)                  R partition name        s job size ("1-infinite")
 *   S alloc nodes (all)               t compact state         T long state
 *   u reason user                     U reason user "name(uid)"
 *   v version                         V cluster (N/A)         w weight
 *   X sockets  Y cores  Z threads     z "S:C:T"
 * Values in parentheses are Slurm's own for what Tessera has no notion of. Errors
 * (TS_EOPTVALUE) in errbuf, worded as sinfo's ("Invalid node format specification: k");
 * Slurm only warns and prints the bad field as text, here it is an error. */
int nodefmt_compile(const char *format, struct nodefmt **out, char *errbuf, size_t errlen);
void nodefmt_free(struct nodefmt *fmt);

struct nodefmt_sinfo_opts {
    int node_oriented; /* -N: one line per node and partition, sorted by node name */
    int noheader;      /* -h */
    int exact;         /* -e: CPUs, memory, weight, S:C:T ... must match exactly too */
    int list_reasons;  /* -R: nodes of every partition share lines */
};

/* sinfo's table: header (unless noheader) and lines, malloc'd. Rows group the nodes of
 * each partition by the fields the format shows (as sinfo does: nodes of a partition
 * with equal state, features, reason, ... share one line, their names as a host list;
 * CPUs, memory and the like show a range "4+" unless exact); node_oriented (-N) gives
 * one line per node and partition. A partition holds the nodes its host list names, in
 * the order of the nodes array. Partitions in the order given; the default partition's
 * name carries a "*". Lines come in Slurm's order: by partition, then by state, highest
 * Slurm state number first (drained and draining before mixed, allocated, idle, down),
 * then as created; -N sorts by node name. A partition without nodes to show still has a
 * line ("0 n/a") when the format shows partitions, as in Slurm. */
char *nodefmt_sinfo_table(const struct nodefmt *fmt, Tessera__PartitionInfo *const *parts,
                          size_t nparts, Tessera__NodeInfo *const *nodes, size_t nnodes,
                          const struct nodefmt_sinfo_opts *opts);
char *nodefmt_sinfo(const struct nodefmt *fmt, Tessera__PartitionInfo *const *parts,
                    size_t nparts, Tessera__NodeInfo *const *nodes, size_t nnodes,
                    int node_oriented, int noheader);

/* "scontrol show node": Slurm's layout, one record (blank line after it); oneliner puts
 * it on one line. Slurm's neutral values stand for what Tessera does not know:
 * CPULoad=N/A, FreeMem=N/A, Gres=(null), TmpDisk=0, Boards=1, Owner=N/A, MCS_label=N/A,
 * BootTime=None (Tessera knows the daemon's start, shown as SlurmdStartTime),
 * LastBusyTime=Unknown, CapWatts=n/a, CurrentWatts=0 AveWatts=0, ExtSensorsJoules=n/s
 * ExtSensorsWatts=0 ExtSensorsTemp=n/s; Arch= and OS= are left out, as Slurm leaves them
 * out for a node that never told them. Port= is shown when not default_port (0: when
 * known); nodefmt_show_node shows any known port. */
char *nodefmt_show_node(const Tessera__NodeInfo *node, time_t now, int oneliner);
char *nodefmt_show_node_port(const Tessera__NodeInfo *node, time_t now, int oneliner,
                             uint32_t default_port);

/* sinfo's compact state names: "idle", "mix", "alloc", "down", "drain", "drng", "unk",
 * with "*" appended for a node that does not respond; long form for %T. */
const char *nodefmt_state_compact(const Tessera__NodeInfo *node, char *buf, size_t len);
const char *nodefmt_state_long(const Tessera__NodeInfo *node, char *buf, size_t len);

/* sinfo -t: a comma separated list of state names, each matched as Slurm matches it (a
 * prefix of a compact or long name, case-insensitive: "i", "idle", "mix", "alloc",
 * "drain", "drained", "draining"/"drng", "down", "unk", "fut", "comp", "no_respond", ...;
 * "all" for every node). *mask receives what nodefmt_states_match tests, 0 for "all".
 * TS_EOPTVALUE with the bad name in bad. "idle" and "down" test the base state (a drained
 * idle node is idle, as in Slurm 22.05), "alloc" any node with allocated CPUs, "drain"
 * the flag, "drained" and "draining" as the names above. States Tessera does not have
 * (planned, reserved, maint, fail, power_*, reboot, cloud, ...) are valid and match
 * nothing. */
int nodefmt_states_parse(const char *list, uint32_t *mask, char *bad, size_t badlen);
int nodefmt_states_match(uint32_t mask, const Tessera__NodeInfo *node);
/* The "valid states: ..." list sinfo prints after a bad name. */
const char *nodefmt_states_valid(void);
/* Whether the node daemon answers (no NOT_RESPONDING flag): sinfo -d and -r. */
int nodefmt_node_responding(const Tessera__NodeInfo *node);

#endif
