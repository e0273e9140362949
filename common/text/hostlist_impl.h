/* What common/text/hostlist.c shares with common/text/hostlist_match.c: the syntax of names, numbers
 * and ranges. Not for other modules. */
#ifndef TESSERA_COMMON_HOSTLIST_IMPL_H
#define TESSERA_COMMON_HOSTLIST_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* One "lo[-hi]" of a bracket group. width > 0 pads every number to that many digits. */
struct hl_range {
    uint64_t lo;
    uint64_t hi;
    int width;
};

int hl_is_digit(char c);
/* Characters that may appear in a host name: printable, not blank, not range syntax. */
int hl_is_name_char(char c);
size_t hl_count_digits(uint64_t v);
/* Length of v printed with the range's padding. */
size_t hl_formatted_len(uint64_t v, int width);
/* Parse len digits at s. Fails (0) on an empty run, a non-digit or a run longer than
 * HOSTLIST_MAX_WIDTH. *width is the padding the run asks for: its length if it has
 * leading zeros. */
int hl_parse_number(const char *s, size_t len, uint64_t *val, int *width);
/* Parse one "lo" or "lo-hi" ending at ',' or ']' and advance *p to that character. */
int hl_parse_range(const char **p, struct hl_range *r);
/* Check a whole expression (syntax first, then HOSTLIST_MAX_EXPR and HOSTLIST_MAX_RANGES)
 * and count its names, saturated above HOSTLIST_MAX_HOSTS. */
int hl_scan_expr(const char *expr, uint64_t *count);

#endif
