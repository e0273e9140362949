/* What the nodefmt_*.c files share: node states in Slurm's numeric layout, the compiled
 * sinfo format, the rows sinfo groups nodes into, and small value helpers. Not for use
 * outside common/nodefmt*.c; the public interface is common/format/nodefmt.h. */
#ifndef TESSERA_COMMON_NODEFMT_INT_H
#define TESSERA_COMMON_NODEFMT_INT_H

#include "common/format/fmtlist.h"
#include "common/format/nodefmt.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hostlist;

/* ---- states ------------------------------------------------------------------------- */

/* A node state as Slurm 22.05 numbers it: the base in the low bits, flags above. sinfo
 * sorts its lines by this number (highest first), so the values are Slurm's, not ours:
 * a drained node (0x202) sorts above a mixed one (5), which sorts above an idle one. */
enum nf_base {
    NF_UNKNOWN = 0,
    NF_DOWN = 1,
    NF_IDLE = 2,
    NF_ALLOCATED = 3,
    NF_MIXED = 5,
    NF_FUTURE = 6,
};
#define NF_BASE_MASK 0xfu
#define NF_DRAIN 0x200u
#define NF_COMPLETING 0x400u
#define NF_NO_RESPOND 0x800u

/* NodeInfo.state ("MIXED+DRAIN") as a number; see nodefmt.h for the accepted text. */
uint32_t nf_state_code(const char *state);
/* Slurm's node_state_string (upper case, "*" when not responding), used to decide whether
 * two nodes share a line. */
const char *nf_state_long_upper(uint32_t code, char *buf, size_t len);
const char *nf_state_compact_code(uint32_t code, char *buf, size_t len);
const char *nf_state_long_code(uint32_t code, char *buf, size_t len);
int nf_is_drain(uint32_t code);
int nf_is_draining(uint32_t code);

/* ---- formats ------------------------------------------------------------------------ */

/* What rows must share to be one line: bits of partition data, of node data, and of
 * sizes that only count with -e (otherwise a line shows their range, "4+"). */
enum nf_match {
    NFM_PART = 1u << 0,
    NFM_AVAIL = 1u << 1,
    NFM_TIME = 1u << 2,
    NFM_DEFTIME = 1u << 3,
    NFM_SIZE = 1u << 4,
    NFM_PRIO_TIER = 1u << 5,
    NFM_STATE = 1u << 8,
    NFM_FEATURES = 1u << 9,
    NFM_REASON = 1u << 10,
    NFM_REASON_TIME = 1u << 11,
    NFM_REASON_USER = 1u << 12,
    NFM_HOSTNAMES = 1u << 13,
    NFM_ADDRS = 1u << 14,
    NFM_GRES = 1u << 15,
    NFM_CPUS = 1u << 16, /* -e only, as the ones below */
    NFM_SOCKETS = 1u << 17,
    NFM_CORES = 1u << 18,
    NFM_THREADS = 1u << 19,
    NFM_MEMORY = 1u << 20,
    NFM_WEIGHT = 1u << 21,
    NFM_VERSION = 1u << 22,
};
#define NFM_PART_MASK 0xffu
#define NFM_EXACT_MASK 0xffff0000u

struct nf_row;
/* A cell's text. width is the column's (0: natural), for %P's "*". */
typedef const char *(*nf_getter)(const struct nf_row *row, int width, char *buf, size_t len);

struct nf_field {
    char letter;
    const char *header;
    nf_getter get;
    unsigned match;   /* enum nf_match bits */
    int header_uncut; /* Slurm never cuts this header when right-justified */
};

/* A compiled format: items whose fields are rows of struct nf_field ("#" grows a column
 * to at least its width, 9 when none, and to the longest value). */
struct nodefmt {
    struct fmtlist list;
    unsigned match; /* union of the fields' bits */
};

/* ---- rows --------------------------------------------------------------------------- */

/* One output line: a partition (or none with -R) and the nodes that share the shown
 * fields. Node-level text (state, features, reason) is the first node's. */
struct nf_row {
    const Tessera__PartitionInfo *part;
    size_t part_inx;
    size_t order; /* creation order, to keep sorts stable */
    const Tessera__NodeInfo *first;
    uint32_t state;
    struct hostlist *nodes, *addrs, *hosts;
    char *nodes_text; /* compressed, after sorting */
    uint32_t nodes_alloc, nodes_idle, nodes_other, nodes_total;
    uint32_t cpus_alloc, cpus_idle, cpus_other, cpus_total;
    uint32_t min_cpus, max_cpus, min_sockets, max_sockets, min_cores, max_cores;
    uint32_t min_threads, max_threads, min_weight, max_weight;
    uint64_t min_mem, max_mem;
};

/* ---- values ------------------------------------------------------------------------- */

/* s, or "(null)" when NULL or empty, as Slurm prints unset strings. */
const char *nf_or_null(const char *s);
int nf_is_set(const char *s);
/* Megabytes as Slurm's TRES strings print them: "2000M", "4G". */
const char *nf_mem_text(uint64_t mb, char *buf, size_t len);
/* Close a memstream and return its text, or NULL when writing failed. */
char *nf_memstream_done(FILE *f, char **text);

#endif
