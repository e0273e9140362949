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

/* An expansion larger than this is refused (TS_ETOOBIG): "n[0-999999999]" must not eat
 * the machine. */
#define HOSTLIST_MAX_HOSTS (1u << 20)
/* Longest host name accepted, without the terminating NUL. */
#define HOSTLIST_MAX_NAME 255

/* An ordered list of host names; duplicates are allowed until hostlist_uniq(). */
struct hostlist;

struct hostlist *hostlist_create(void);
void hostlist_destroy(struct hostlist *hl);

/* Parse expr and return a new list in expression order. Errors (ts_err): TS_EHOSTLIST for
 * malformed input (unbalanced or nested brackets, empty range, lo > hi, non-digits in a
 * range, empty host name, name too long), TS_ETOOBIG for more than HOSTLIST_MAX_HOSTS
 * names, TS_ENOMEM. On error *out is NULL. NULL or "" gives an empty list. */
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

#endif
