/* What the priority plugins share: the default order. */
#include "common/priority.h"

#include <stdlib.h>

static int by_priority(const void *a, const void *b)
{
    const struct policy_unit *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

void priority_default_order(struct policy_unit *units, size_t n)
{
    if (n > 1)
        qsort(units, n, sizeof(*units), by_priority);
}
