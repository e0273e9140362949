/* srun --multi-prog: the configuration file that gives each task its own program.
 *
 * Each line is `RANKS PROGRAM ARGS...` (docs/steps.md, "Multiple programs"): RANKS is a
 * comma list of ranks and ranges (`0`, `1-3`, `4,6`) or `*` (every rank no earlier line
 * named; last line only). Arguments split on blanks; single quotes group, double quotes
 * are ordinary characters. In arguments `%t` is the task's rank and `%o` its offset among
 * the ranks of its line (for `*`, the rank); any other `%x` pair is dropped. A line whose
 * first non-blank character is `#` is a comment. Every rank must have exactly one line.
 *
 * srun parses the file to refuse a bad one before the step starts; the step daemon parses
 * the same text again, as received, because it trusts no sender: the bounds below hold
 * for both. */
#ifndef TESSERA_COMMON_MULTIPROG_H
#define TESSERA_COMMON_MULTIPROG_H

#include <stddef.h>
#include <stdint.h>

#define MULTIPROG_MAX_BYTES (64u << 10) /* the file's text */
#define MULTIPROG_MAX_LINES 4096u
#define MULTIPROG_MAX_ARGS 256u         /* program and arguments on one line */
#define MULTIPROG_MAX_ARG 4096u         /* bytes of one argument as written */

struct multiprog;

/* Parses len bytes of text for a step of ntasks tasks. On failure *out is NULL and err
 * holds the reasons, one per line, without a prefix (Slurm's words; name is the file's
 * name in them). TS_OK, TS_EINVAL, TS_ETOOBIG (over a bound), TS_ENOMEM. */
int multiprog_parse(const char *text, size_t len, uint32_t ntasks, const char *name,
                    struct multiprog **out, char *err, size_t errlen);

/* The NULL-terminated argv of rank: its line's words with %t and %o replaced, then the
 * extra words unchanged (srun's arguments after the file's name). Free it with
 * multiprog_argv_free. TS_OK, TS_EINVAL (rank out of range), TS_ENOMEM. */
int multiprog_argv(const struct multiprog *mp, uint32_t rank, char *const *extra,
                   size_t nextra, char ***argv);
void multiprog_argv_free(char **argv);

void multiprog_destroy(struct multiprog *mp);

#endif
