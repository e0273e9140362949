/* What the ids users type mean (docs/01-hetjob.md §3.3).
 *
 *   id      plain job    leader of a het job          non-leader's own id
 *   "N"     the job      every component (whole job)  that component (the whole job
 *                                                     for actions under whole_hetjob)
 *   "N+0"   invalid      display: the leader alone;   invalid (N must be a leader)
 *                        actions: the whole job
 *   "N+k"   invalid      component k alone            invalid
 */
#include "ctld/job.h"

#include "common/job/jobid.h"
#include "common/util/errors.h"

static int whole_job(struct job *leader, struct job **out, size_t max, int *whole)
{
    size_t n = job_ncomponents(leader);
    if (n > max)
        return -TS_ETOOBIG;
    for (size_t i = 0; i < n; i++)
        out[i] = job_component(leader, i);
    *whole = 1;
    return (int)n;
}

static int one(struct job *j, struct job **out, size_t max, int *whole)
{
    if (max < 1)
        return -TS_ETOOBIG;
    out[0] = j;
    /* a plain job is always whole */
    *whole = !job_is_het(j);
    return 1;
}

int job_resolve(const struct job_table *t, const char *text, enum job_scope scope,
                int whole_hetjob, struct job **out, size_t max, int *whole)
{
    struct jobid id;
    *whole = 0;
    if (jobid_parse(text, &id) != TS_OK)
        return -TS_EINVALID_JOB_ID;
    struct job *j = job_find(t, id.id);
    if (!j)
        return -TS_EINVALID_JOB_ID;

    if (!id.has_offset) {
        if (!job_is_het(j) || j->leader == j)
            return whole_job(j->leader, out, max, whole);
        /* a non-leader by its own id */
        if (scope == JOB_SCOPE_ACTION && whole_hetjob)
            return whole_job(j->leader, out, max, whole);
        return one(j, out, max, whole);
    }
    /* "N+k": N must be the leader of a het job with at least k+1 components */
    if (!job_is_het(j) || j->leader != j || id.offset >= j->rec->het_size)
        return -TS_EINVALID_JOB_ID;
    if (id.offset == 0 && scope == JOB_SCOPE_ACTION)
        return whole_job(j, out, max, whole);
    return one(j->components[id.offset], out, max, whole);
}
