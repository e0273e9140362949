/* Fair share (docs/07-policy.md §3, docs/policies.md): PBS's resource-group tree and the usage
 * charged to its entities.
 *
 * The tree comes from the resource-group file, one line per user, group or account:
 * "name id parent shares" ('#' comments; a parent before its children). The scheduler
 * adds "root" (the top) and "unknown" (a child of root with unknown_shares); a name not in
 * the file becomes a child of "unknown" with one share when it is first seen.
 *
 * A node's normalised share is its shares over the sum of its siblings' shares, times its
 * parent's. Usage (allocated CPU-seconds) is charged to a node and so to every ancestor;
 * it decays with half_life. A node's effective usage is its usage over root's, and its
 * fair-share factor is 2^(-effective usage / normalised share): 1 for an entity that used
 * nothing, 0.5 for one that used exactly its share, towards 0 above. The arithmetic is
 * clamped: no NaN, infinity or denormal comes out of it.
 */
#ifndef TESSERA_COMMON_FAIRSHARE_H
#define TESSERA_COMMON_FAIRSHARE_H

#include <stddef.h>
#include <stdint.h>

struct fairshare;
struct policy_unit;

#define FAIRSHARE_ROOT 0     /* node index of "root" */
#define FAIRSHARE_UNKNOWN 1  /* node index of "unknown" */

/* The tree of text (the file named in messages) with unknown_shares for "unknown". TS_OK,
 * or TS_ECONF with "FILE:LINE: why" in errbuf. text NULL: root and unknown alone. */
int fairshare_parse(const char *text, const char *file, uint32_t unknown_shares,
                    struct fairshare **out, char *errbuf, size_t errlen);
int fairshare_load(const char *path, uint32_t unknown_shares, struct fairshare **out,
                   char *errbuf, size_t errlen);
void fairshare_destroy(struct fairshare *fs);

/* The node of an entity name; a name the tree does not know is added under "unknown"
 * with one share. An empty name, "root" (the user root: the tree's root is no entity)
 * and "unknown" give "unknown" itself. -1 only when out of memory. */
int fairshare_entity(struct fairshare *fs, const char *name);
/* The node of a name without adding it; -1 if none. */
int fairshare_find(const struct fairshare *fs, const char *name);
/* The node the file gave id (cresgrp; a user's UID, say); -1 if none. */
int fairshare_find_id(const struct fairshare *fs, uint32_t id);

/* Charge cpu_seconds to node (and its ancestors); negative or non-finite amounts are
 * ignored. */
void fairshare_charge(struct fairshare *fs, int node, double cpu_seconds);
/* Decay every usage for dt seconds with half_life (<= 0: no decay). */
void fairshare_decay(struct fairshare *fs, double dt, double half_life);
/* A node's own charged usage (without its children's), as saved and restored: set
 * replaces it and fixes the ancestors' totals. */
double fairshare_own_usage(const struct fairshare *fs, int node);
void fairshare_set_own_usage(struct fairshare *fs, int node, double usage);

struct fairshare_info {
    const char *name;
    uint32_t id;          /* the file's cresgrp (0 for root, unknown and added names) */
    int parent;           /* -1 for root */
    int depth;            /* 0 for root */
    uint32_t shares;
    double norm_shares;   /* 0..1 */
    double usage;         /* the node's and its descendants', decayed CPU-seconds */
    double own_usage;     /* charged to the node itself */
    double effective_usage; /* 0..1: usage over root's */
    double factor;        /* 0..1: 2^(-effective_usage / norm_shares) */
};

/* Nodes in tree order (a parent before its children, siblings as the file lists them). */
size_t fairshare_count(const struct fairshare *fs);
int fairshare_info(const struct fairshare *fs, size_t pos, struct fairshare_info *out);
double fairshare_norm_shares(const struct fairshare *fs, int node);

/* Reorder units (each with fs_entity set) so that the next is always a unit of the
 * entity that is furthest below its share, counting what the units placed before it will
 * use (each its requested CPU time, cput); ties and an entity's own units keep their
 * order. TS_OK or TS_ENOMEM (units unchanged). */
int fairshare_order(const struct fairshare *fs, struct policy_unit *units, size_t n);

#endif
