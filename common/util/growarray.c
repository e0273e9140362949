#include "common/util/growarray.h"

#include <stdint.h>
#include <stdlib.h>

void *growarray_room(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t grown = *cap ? *cap : first;
    if (grown == 0 || size == 0 || grown > SIZE_MAX / 2 / size)
        return NULL;
    if (*cap)
        grown *= 2;
    void *p = realloc(items, grown * size);
    if (p)
        *cap = grown;
    return p;
}
