/* Products of counts that users choose (tasks, CPUs per task, nodes, memory per CPU).
 * Each factor fits its field, but their product may not fit 64 bits: a wrapped product is
 * small and would pass a check it should fail. Every such product goes through here.
 */
#ifndef TESSERA_COMMON_ARITH_H
#define TESSERA_COMMON_ARITH_H

#include <stdint.h>

/* a * b, or UINT64_MAX when the product does not fit: compared with any real capacity it
 * is too large, which is what the request is. */
static inline uint64_t arith_mul_sat(uint64_t a, uint64_t b)
{
    uint64_t product;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

/* a + b, or UINT64_MAX when the sum does not fit. */
static inline uint64_t arith_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* a * b into *out when it fits in limit; 0 then, -1 (and *out untouched) when not. */
static inline int arith_mul_within(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out)
{
    uint64_t product;
    if (__builtin_mul_overflow(a, b, &product) || product > limit)
        return -1;
    *out = product;
    return 0;
}

/* a * b clamped to UINT32_MAX, for 32-bit fields that show a product. */
static inline uint32_t arith_mul_u32_sat(uint64_t a, uint64_t b)
{
    uint64_t product = arith_mul_sat(a, b);
    return product > UINT32_MAX ? UINT32_MAX : (uint32_t)product;
}

#endif
