/* A SIGKILL deadline that later requests may only bring forward: every terminate of a step
 * or a job arms its timer through here, so a user's first terminate with a long wait can
 * no longer hold off the controller's (or KillWait) (noded/step.c, noded/job.c,
 * noded/stepd.c).
 */
#ifndef TESSERA_NODED_DEADLINE_H
#define TESSERA_NODED_DEADLINE_H

#include "common/net/loop.h"

#include <stdint.h>

struct deadline {
    struct loop_timer *timer; /* NULL: not armed (or fired) */
    uint64_t at;              /* loop milliseconds it fires at, while armed */
};

/* Arm d to call cb(arg) after_ms from now, unless it is armed to fire sooner already.
 * 1 when armed (or re-armed earlier), 0 when the earlier deadline stands, -1 when out of
 * memory (d is then left as it was). */
int deadline_at_most(struct loop *loop, struct deadline *d, uint64_t after_ms, loop_timer_cb cb,
                     void *arg);

/* The timer fired: call first thing in cb (the loop frees a one-shot timer after it). */
void deadline_fired(struct deadline *d);

void deadline_cancel(struct loop *loop, struct deadline *d);

#endif
