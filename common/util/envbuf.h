/* An environment being built: "NAME=value" strings, each name once; a later value for a
 * name replaces the earlier one in its place (Slurm's env_array_merge). Shared by the
 * batch, salloc (common/job/jobenv.c) and task (common/job/stepenv.c) environments.
 *
 * Out of memory sticks: every later put does nothing and envbuf_take gives NULL, so
 * builders check once at the end. */
#ifndef TESSERA_COMMON_ENVBUF_H
#define TESSERA_COMMON_ENVBUF_H

#include <stddef.h>

struct hashmap;

struct envbuf {
    char **v;              /* NULL-terminated once anything is in */
    size_t n, cap;
    struct hashmap *index; /* name -> slot + 1 */
    int oom;
};

/* TS_OK or TS_ENOMEM. */
int envbuf_init(struct envbuf *e);
void envbuf_put(struct envbuf *e, const char *name, size_t nlen, const char *value);
/* Whether name is in. */
int envbuf_has(const struct envbuf *e, const char *name, size_t nlen);
/* The NULL-terminated array of malloc'd strings (an empty one when nothing was put; free
 * each and the array), or NULL after an allocation failure. e is released either way. */
char **envbuf_take(struct envbuf *e);
void envbuf_release(struct envbuf *e);

#endif
