/* Arrays that grow by doubling: the one way to make room for one more element. */
#ifndef TESSERA_COMMON_UTIL_GROWARRAY_H
#define TESSERA_COMMON_UTIL_GROWARRAY_H

#include <stddef.h>

/* items (n elements of size bytes, room for *cap; NULL when *cap is 0) with room for at
 * least one more: as it is when n < *cap, else reallocated to twice *cap (first when
 * *cap is 0) and *cap updated. NULL when out of memory or when the size would overflow:
 * then items and *cap are unchanged and still the caller's. */
void *growarray_room(void *items, size_t *cap, size_t n, size_t size, size_t first);

#endif
