/* Host lists in Slurm's range syntax: "n[1-3,5],m7", "nid[00011-00012]",
 * "rack[1-2]-n[01-02]" (several bracket groups expand as a cartesian product, leftmost
 * group slowest), "n[1-2]-ib" (text after a bracket).
 *
 * Zero padding is kept: a range whose low bound has leading zeros ("00011") pads every
 * number to that width; a range without leading zeros ("9-10") does not pad (n9, n10).
 * Compression is the inverse: hosts that share prefix and suffix and whose numbers are
 * compatible (same width, or both without leading zeros) merge into ranges.
 */
#ifndef TESSERA_COMMON_HOSTLIST_H
#define TESSERA_COMMON_HOSTLIST_H

#include <stddef.h>
#include <stdint.h>

/* An expansion larger than this is refused (TS_ETOOBIG): "n[0-999999999]" must not eat
 * the machine. */
#define HOSTLIST_MAX_HOSTS (1u << 20)
/* Longest host name accepted, without the terminating NUL. */
#define HOSTLIST_MAX_NAME 255
/* Bounds of the parser itself, checked before anything is allocated (TS_ETOOBIG): the
 * length of an expression (a frame's worth: whatever the daemons can send, they can read
 * back; what users send the controller is bounded lower, per field), the ranges in it,
 * and the digits of one number (TS_EHOSTLIST beyond: numbers stay below 10^18). */
#define HOSTLIST_MAX_EXPR ((size_t)16 << 20)
#define HOSTLIST_MAX_RANGES (1u << 20)
#define HOSTLIST_MAX_WIDTH 18

/* An ordered list of host names; duplicates are allowed until hostlist_uniq(). */
struct hostlist;

struct hostlist *hostlist_create(void);
void hostlist_destroy(struct hostlist *hl);

/* Parse expr and return a new list in expression order. Errors (ts_err): TS_EHOSTLIST for
 * malformed input (unbalanced or nested brackets, empty range, lo > hi, non-digits in a
 * range, a number wider than HOSTLIST_MAX_WIDTH, empty host name, name too long),
 * TS_ETOOBIG for more than HOSTLIST_MAX_HOSTS names, HOSTLIST_MAX_RANGES ranges or
 * HOSTLIST_MAX_EXPR characters, TS_ENOMEM. On error *out is NULL. NULL or "" gives an
 * empty list. */
int hostlist_expand(const char *expr, struct hostlist **out);

/* Append every host of expr (same rules and errors); the list is unchanged on error. */
int hostlist_push_expr(struct hostlist *hl, const char *expr);
/* Append one literal name (no range syntax). */
int hostlist_push(struct hostlist *hl, const char *name);

size_t hostlist_count(const struct hostlist *hl);
/* The i-th name, or NULL when i is out of range. */
const char *hostlist_nth(const struct hostlist *hl, size_t i);
/* Index of the first occurrence of name, or -1. */
long hostlist_find(const struct hostlist *hl, const char *name);

/* Sort in natural order (prefix, then number by value, then width, then suffix) and drop
 * duplicates. */
void hostlist_uniq(struct hostlist *hl);

/* The ranged form of the list, keeping list order: consecutive compatible names merge
 * ("n1,n2,n3,m7" -> "n[1-3],m7"; "nid00001,nid00011,nid00012" -> "nid[00001,00011-00012]"
 * after hostlist_uniq). Returns a malloc'd string ("" for an empty list) or NULL on
 * allocation failure. */
char *hostlist_compress(const struct hostlist *hl);

/* ---- matching without expanding (common/text/hostlist_match.c) ----------------------------
 *
 * A host list a user sends may mean a million names ("a...a[1-1000000]"); the daemons
 * only need to know which of the names they know it means. A pattern is the parsed
 * expression: literal names in a hash set, items with one bracket group merged by their
 * text before and after the group (their ranges sorted, so a name is checked with a few
 * hash look-ups and a binary search), items with several groups matched one by one (at
 * most HOSTLIST_MAX_MULTI_ITEMS of those). Memory is linear in the expression's length. */
struct hostpattern;

#define HOSTLIST_MAX_MULTI_ITEMS 256

/* Parse expr (the errors of hostlist_expand, and TS_ETOOBIG for more than
 * HOSTLIST_MAX_MULTI_ITEMS items with several bracket groups; never for the number of
 * names). NULL or "" gives a pattern that matches nothing. */
int hostpattern_parse(const char *expr, struct hostpattern **out);
void hostpattern_destroy(struct hostpattern *p);
/* Whether expr means name. */
int hostpattern_contains(const struct hostpattern *p, const char *name);
/* The same, counting the match: give each name of a set (the configured nodes, an
 * allocation) once, then hostpattern_complete tells whether every name the expression
 * means was among them. */
int hostpattern_tally(struct hostpattern *p, const char *name);
/* After tallying every name of a set: 1 when the expression names nothing outside it.
 * Never 1 when it does; it may say 0 for an expression whose bracket groups touch
 * ("n[1,11][1,11]" means n111 twice) although all its names were seen. */
int hostpattern_complete(const struct hostpattern *p);
/* How many distinct names the expression means at most (saturated at 2^62): exact but for
 * names that several items share. */
uint64_t hostpattern_size(const struct hostpattern *p);
void hostpattern_tally_reset(struct hostpattern *p);

#endif
