/* How commands print nodes and partitions as Slurm 22.05 does: sinfo's default layout,
 * -N (node oriented), -o with %P %a %l %D %t %T %N %c %m %f %C %E %H %e %O ..., and the
 * text of "scontrol show node". Pure functions of the records (no I/O). */
#ifndef TESSERA_COMMON_NODEFMT_H
#define TESSERA_COMMON_NODEFMT_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <time.h>

#define NODEFMT_SINFO_DEFAULT "%#P %.5a %.10l %.6D %.6t %N"
#define NODEFMT_SINFO_NODES "%#N %.6D %#P %6t"

struct nodefmt; /* a compiled sinfo format */

/* Compile an sinfo -o format. Errors (TS_EOPTVALUE) in errbuf, worded as sinfo's. */
int nodefmt_compile(const char *format, struct nodefmt **out, char *errbuf, size_t errlen);
void nodefmt_free(struct nodefmt *fmt);

/* sinfo's table: header (unless noheader) and lines, malloc'd. Rows group the nodes of
 * each partition by the fields the format shows (as sinfo does: nodes of a partition
 * with equal state, CPUs, memory, ... share one line, their names as a host list);
 * node_oriented (-N) gives one line per node and partition. Partitions in the order
 * given; the default partition's name carries a "*". */
char *nodefmt_sinfo(const struct nodefmt *fmt, Tessera__PartitionInfo *const *parts,
                    size_t nparts, Tessera__NodeInfo *const *nodes, size_t nnodes,
                    int node_oriented, int noheader);

/* "scontrol show node": Slurm's layout, one record (blank line after it). */
char *nodefmt_show_node(const Tessera__NodeInfo *node, time_t now, int oneliner);

/* sinfo's compact state names: "idle", "mix", "alloc", "down", "drain", "drng", "unk",
 * with "*" appended for a node that does not respond; long form for %T. */
const char *nodefmt_state_compact(const Tessera__NodeInfo *node, char *buf, size_t len);
const char *nodefmt_state_long(const Tessera__NodeInfo *node, char *buf, size_t len);

#endif
