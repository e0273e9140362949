/* Generic resources (GPUs and the like, docs/gres.md): the types every part shares. A
 * resource has a name ("gpu"), an optional type ("a100") and a count. */
#ifndef TESSERA_COMMON_GRES_H
#define TESSERA_COMMON_GRES_H

#include <stdint.h>

#define GRES_NAME_MAX 32      /* "gpu", "bandwidth" */
#define GRES_TYPE_MAX 64      /* "a100", "" when untyped */
struct gres_count { char name[GRES_NAME_MAX]; char type[GRES_TYPE_MAX]; uint64_t count; };

#endif
