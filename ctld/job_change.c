/* The job change notification (ctld/job_change.h): observers in registration order. */
#include "ctld/job_change.h"

#include "ctld/ctld.h"

#include "common/util/errors.h"

int job_change_observe(struct ctld *c, job_observer_fn *fn)
{
    if (c->njob_observers == JOB_OBSERVERS_MAX)
        return TS_ENOMEM;
    c->job_observers[c->njob_observers++] = fn;
    return TS_OK;
}

size_t job_change_observers(const struct ctld *c, job_observer_fn *const **out)
{
    *out = c->job_observers;
    return c->njob_observers;
}

void job_changed(struct ctld *c, const struct job_change *ch)
{
    for (size_t i = 0; i < c->njob_observers; i++)
        c->job_observers[i](c, ch);
}

/* A change of j (a unit's leader or a component, by kind), or of no job (NULL). */
static void unit_changed(struct ctld *c, enum job_change_kind kind, struct job *j,
                         time_t now)
{
    struct job_change ch = {.kind = kind, .job_id = j ? j->rec->job_id : 0, .job = j,
                            .now = now};
    job_changed(c, &ch);
}

void job_changed_waiting(struct ctld *c, struct job *leader)
{
    unit_changed(c, JOB_CHANGE_WAITING, leader, 0);
}

void job_changed_freed(struct ctld *c, struct job *leader)
{
    unit_changed(c, JOB_CHANGE_FREED, leader, 0);
}

void job_changed_ended(struct ctld *c, struct job *leader, time_t now)
{
    unit_changed(c, JOB_CHANGE_ENDED, leader, now);
}

void job_changed_stopping(struct ctld *c, struct job *j, time_t now)
{
    unit_changed(c, JOB_CHANGE_STOPPING, j, now);
}

void job_changed_hold_until(struct ctld *c, struct job *leader)
{
    unit_changed(c, JOB_CHANGE_HOLD_UNTIL, leader, 0);
}

void job_changed_nodes(struct ctld *c)
{
    unit_changed(c, JOB_CHANGE_NODES, NULL, 0);
}

void job_changed_store_back(struct ctld *c)
{
    unit_changed(c, JOB_CHANGE_STORE_BACK, NULL, 0);
}
