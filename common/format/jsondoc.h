/* Slurm 22.05's JSON documents (openapi v0.0.38), as squeue --json and sacct --json print
 * them: {"meta": {...}, "errors": [], "jobs": [...]}, and the small builder both use. */
#ifndef TESSERA_COMMON_JSONDOC_H
#define TESSERA_COMMON_JSONDOC_H

#include <jansson.h>

/* An object under construction; any failed allocation marks it failed, so that the many
 * keys need no check each. */
struct jsondoc_obj {
    json_t *o;
    int failed;
};

/* Set key to value (stolen); a NULL value or a failure marks b failed. */
void jsondoc_set(struct jsondoc_obj *b, const char *key, json_t *value);
/* A string ("" for NULL). */
json_t *jsondoc_str(const char *s);
/* b's object, or NULL (and b's object freed) when anything failed. */
json_t *jsondoc_finish(struct jsondoc_obj *b);

/* The whole document around jobs (an array, stolen), indented and ending in a newline;
 * malloc'd, NULL when out of memory. */
char *jsondoc_jobs(json_t *jobs);

#endif
