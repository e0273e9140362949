/* What the priority plugins share: the default order. */
#include "common/sched/priority.h"

#include "common/util/errors.h"

#include <stdlib.h>

static int by_priority(const void *a, const void *b)
{
    const struct policy_unit *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int priority_stateless_create(const char *params, void **state, char *errbuf, size_t errlen)
{
    (void)params;
    (void)errbuf;
    (void)errlen;
    *state = NULL;
    return TS_OK;
}

void priority_stateless_destroy(void *state)
{
    (void)state;
}

void priority_default_order(struct policy_unit *units, size_t n)
{
    if (n > 1)
        qsort(units, n, sizeof(*units), by_priority);
}
