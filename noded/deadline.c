/* Deadlines that only come forward (noded/deadline.h). */
#include "noded/deadline.h"

#include <stddef.h>

int deadline_at_most(struct loop *loop, struct deadline *d, uint64_t after_ms, loop_timer_cb cb,
                     void *arg)
{
    uint64_t at = loop_now_ms(loop) + after_ms;
    if (d->timer && d->at <= at)
        return 0;
    struct loop_timer *t = loop_timer_add(loop, after_ms, 0, cb, arg);
    if (!t)
        return -1;
    loop_timer_cancel(loop, d->timer);
    d->timer = t;
    d->at = at;
    return 1;
}

void deadline_fired(struct deadline *d)
{
    d->timer = NULL;
}

void deadline_cancel(struct loop *loop, struct deadline *d)
{
    loop_timer_cancel(loop, d->timer);
    d->timer = NULL;
}
