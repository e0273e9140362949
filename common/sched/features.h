/* Feature expressions of -C/--constraint: names joined by "&" (and) and "|" (or), grouped
 * with "(...)" or "[...]" ("a&(b|c)", "[rack1|rack2]"). A node matches when the expression
 * is true of its Features= list. "&" binds tighter than "|", as in Slurm. Counts ("a*2")
 * and Slurm's matching-OR placement rules are not supported: parsing refuses them. */
#ifndef TESSERA_COMMON_FEATURES_H
#define TESSERA_COMMON_FEATURES_H

#include <stddef.h>

#define FEATURES_MAX_EXPR 1024 /* longest expression accepted */

/* TS_OK when expr is well formed, else TS_EINVALID_FEATURE. */
int features_check(const char *expr);
/* 1 when a node with the comma-separated feature list node_features satisfies expr
 * (a malformed expr matches nothing), else 0. An empty or NULL expr matches every node. */
int features_match(const char *expr, const char *node_features);
/* 1 when the comma-separated list (a node's Features=) holds the name of len bytes. */
int features_list_has(const char *list, const char *name, size_t len);
/* Call fn for every feature name used in expr (for "does any node have it" checks);
 * stops and returns fn's non-zero result. */
int features_foreach_name(const char *expr, int (*fn)(void *arg, const char *name, size_t len),
                          void *arg);

#endif
