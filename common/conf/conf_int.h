/* What the conf_*.c files share: the parser's state, its one way to fail with a
 * "file:line: ..." message, the value parsers, and each concern's entry points. Not for
 * use outside common/conf/; the public interface is common/conf/conf.h.
 *
 * The parser reads the text line by line (conf_lex.c); a line is a cluster-wide directive
 * (conf_directives.c), a node line (conf_nodes.c) or a partition line
 * (conf_partitions.c); after the text, defaults that depend on other keys, cross-references
 * and checks (conf_checks.c); conf.c holds the public functions around them. */
#ifndef TESSERA_COMMON_CONF_INT_H
#define TESSERA_COMMON_CONF_INT_H

#include "common/conf/conf.h"

#include <stddef.h>
#include <stdint.h>

struct hashmap;

#define CONF_MAX_DIRECTIVES 96 /* room in conf_parse.global_seen */

/* ---- parser state ------------------------------------------------------------------- */

struct conf_parse {
    struct conf *conf;
    const char *file; /* the file being read, for messages */
    int line;
    char *err;
    size_t errlen;
    int failed;
    int allow_include;
    int depth;
    int global_seen[CONF_MAX_DIRECTIVES]; /* line where each directive was set, 0 if not */

    /* NodeName=DEFAULT / PartitionName=DEFAULT values for later lines */
    struct conf_node node_default;
    struct conf_partition part_default;
    int *part_lines;      /* line of each partition, for messages when resolving */
    int *node_lines;
    size_t node_cap;            /* allocated entries of conf.nodes and node_lines */
    struct hashmap *node_index; /* name -> index + 1 (never NULL as a value) */
};

/* One Key=Value token of a line (value NULL: a bare word). */
struct conf_kv {
    char *key;
    char *value;
};

/* Record the first failure as "file:line: message" (no line before the text or after
 * it) and return TS_ECONF; later failures keep the first message. (conf_lex.c) */
__attribute__((format(printf, 2, 3))) int conf_fail(struct conf_parse *p, const char *fmt,
                                                    ...);

/* ---- values (conf_values.c): TS_OK or an error, *out untouched on error ------------ */

int conf_value_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int conf_value_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* YES/TRUE/1 or NO/FALSE/0, case-insensitive. */
int conf_value_bool(const char *s, int *out);
/* A time limit in Slurm's formats (bare number: minutes) or UNLIMITED. */
int conf_value_limit(const char *s, int64_t *out);
/* "512", "512M", "64G", "2T": megabytes; -1 when not such a size. */
int conf_value_mem_mb(const char *v, uint64_t *out);
/* A State= value: its index among names (case-insensitive) in *out, else a failure
 * "<what> State must be A, B or C, not '<value>'". */
int conf_value_state(struct conf_parse *p, const char *what, const char *value,
                     const char *const *names, size_t n, int *out);
/* *slot becomes a copy of value (the old one freed); TS_ENOMEM leaves it. */
int conf_replace_str(char **slot, const char *value);
/* Names of nodes, partitions and plugins: letters, digits, "_-.". */
int conf_valid_name(const char *s);
/* "a,b,c": names separated by single commas (or nothing). */
int conf_valid_features(const char *s);

/* ---- lines (conf_lex.c) ------------------------------------------------------------- */

/* Parse text as the file p->file: comments, continued lines, Include, each line. */
int conf_parse_text(struct conf_parse *p, const char *text);
/* Read path and parse it; TS_ECONF_NOTFOUND when it does not exist. */
int conf_parse_file(struct conf_parse *p, const char *path);

/* ---- cluster-wide directives (conf_directives.c) ------------------------------------ */

/* One Key=Value of a line that is neither a node nor a partition line. */
int conf_directive_token(struct conf_parse *p, const struct conf_kv *kv);
/* Set every directive that has a default, through the same setters as the file's values. */
int conf_directives_defaults(struct conf_parse *p);
/* Free what the directives hold in c. */
void conf_directives_free(struct conf *c);
/* A list of filters: absolute paths separated by commas, at most 16. */
int conf_check_filters(struct conf_parse *p, const char *v);

/* ---- node and partition lines (conf_nodes.c, conf_partitions.c) --------------------- */

/* kv[0] is NodeName=... / PartitionName=...; DEFAULT sets the template of later lines. */
int conf_node_line(struct conf_parse *p, struct conf_kv *kv, size_t nkv);
void conf_node_clear(struct conf_node *n);
int conf_partition_line(struct conf_parse *p, struct conf_kv *kv, size_t nkv);
void conf_partition_clear(struct conf_partition *pt);

/* ---- after the text (conf_checks.c) ------------------------------------------------- */

/* Node defaults that depend on other keys, unique addresses, partitions' nodes resolved,
 * their time limits and the one default partition checked. */
int conf_finish(struct conf_parse *p);

#endif
