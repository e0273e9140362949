/* Generic resources (GPUs and other counted resources): the types the configuration
 * (gres_conf.h) and the requests (gres_req.h) share. docs/gres.md describes both. */
#ifndef TESSERA_COMMON_GRES_H
#define TESSERA_COMMON_GRES_H

#include <stdint.h>

#define GRES_NAME_MAX 32      /* "gpu", "bandwidth" */
#define GRES_TYPE_MAX 64      /* "a100", "" when untyped */
struct gres_count { char name[GRES_NAME_MAX]; char type[GRES_TYPE_MAX]; uint64_t count; };

#endif
