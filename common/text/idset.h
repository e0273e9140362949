/* Sets of unsigned 32-bit ids in range form: "123-127", "123,125-127", also "[1-3]".
 * Used for het_job_id_set, job id lists on command lines and the like. */
#ifndef TESSERA_COMMON_IDSET_H
#define TESSERA_COMMON_IDSET_H

#include <stddef.h>
#include <stdint.h>

#define IDSET_INVALID UINT32_MAX /* never a member; returned by iteration at the end */
/* A parsed set larger than this is refused (TS_ETOOBIG). */
#define IDSET_MAX_COUNT (1u << 24)

struct idset; /* sorted, without duplicates, kept as ranges */

struct idset *idset_create(void);
void idset_destroy(struct idset *set);

/* Parse "1,3-5,7" (whitespace not allowed, empty string gives an empty set). Errors:
 * TS_EIDSET (syntax, lo > hi, value > IDSET_INVALID-1), TS_ETOOBIG, TS_ENOMEM. */
int idset_parse(const char *s, struct idset **out);

int idset_add(struct idset *set, uint32_t id);
int idset_add_range(struct idset *set, uint32_t lo, uint32_t hi); /* inclusive */
int idset_remove(struct idset *set, uint32_t id);
int idset_contains(const struct idset *set, uint32_t id);
size_t idset_count(const struct idset *set);

/* Iteration in ascending order: first member / member after prev, IDSET_INVALID at end. */
uint32_t idset_first(const struct idset *set);
uint32_t idset_next(const struct idset *set, uint32_t prev);

/* "123,125-127" ("" when empty): malloc'd string, NULL on allocation failure. */
char *idset_format(const struct idset *set);

#endif
