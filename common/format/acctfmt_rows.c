/* Which rows sacct prints, in which order, and the step part of -j.
 *
 * The controller selects the jobs (ids by docs/06-sacct.md §2, users, window, ...) and
 * returns all their steps; here each job is followed by its steps in Slurm's order (the
 * batch script first, then by step id), and "-j 93.2" narrows a job's rows to the steps
 * named. */
#include "common/format/acctfmt.h"

#include "common/job/jobid.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

struct item {
    struct jobid id;
    int has_step;
    uint32_t step_id;
};

struct acctfmt_sel {
    struct item *items;
    size_t n;
    int any_step;     /* some item names a step */
    int whole_hetjob; /* 1: --whole-hetjob=yes */
};

/* "2", "batch": the step part of an item. */
static int parse_step(const char *s, uint32_t *out)
{
    char *end = NULL;
    unsigned long v;

    if (strcmp(s, "batch") == 0) {
        *out = ACCTFMT_STEP_BATCH;
        return TS_OK;
    }
    if (*s < '0' || *s > '9')
        return TS_EINVALID_JOB_ID;
    v = strtoul(s, &end, 10);
    if (*end || v >= ACCTFMT_STEP_BATCH)
        return TS_EINVALID_JOB_ID;
    *out = (uint32_t)v;
    return TS_OK;
}

static int parse_item(const char *text, struct item *it)
{
    char job[32];
    const char *dot = strchr(text, '.');
    size_t n = dot ? (size_t)(dot - text) : strlen(text);

    if (n >= sizeof(job))
        return TS_EINVALID_JOB_ID;
    memcpy(job, text, n);
    job[n] = '\0';
    if (jobid_parse(job, &it->id) != TS_OK)
        return TS_EINVALID_JOB_ID;
    it->has_step = dot != NULL;
    return dot ? parse_step(dot + 1, &it->step_id) : TS_OK;
}

int acctfmt_sel_parse(char *const *items, size_t n, int whole_hetjob,
                      struct acctfmt_sel **out, const char **bad)
{
    struct acctfmt_sel *sel = calloc(1, sizeof(*sel));

    if (!sel || !(sel->items = calloc(n + 1, sizeof(*sel->items)))) {
        free(sel);
        return TS_ENOMEM;
    }
    sel->whole_hetjob = whole_hetjob == 1;
    for (size_t i = 0; i < n; i++) {
        if (parse_item(items[i], &sel->items[i]) != TS_OK) {
            *bad = items[i];
            acctfmt_sel_free(sel);
            return TS_EINVALID_JOB_ID;
        }
        sel->any_step |= sel->items[i].has_step;
    }
    sel->n = n;
    *out = sel;
    return TS_OK;
}

void acctfmt_sel_free(struct acctfmt_sel *sel)
{
    if (!sel)
        return;
    free(sel->items);
    free(sel);
}

/* Does the item's job part name this component? "93": component 93, or every component
 * of het job 93; "93+1": that component; with --whole-hetjob=yes, every component of the
 * het job the item names. */
static int names_job(const struct item *it, const Tessera__AcctJob *job, int whole)
{
    uint32_t het = job->het_job_id;

    if (it->id.has_offset)
        return het == it->id.id && (whole || job->het_job_offset == it->id.offset);
    return job->job_id == it->id.id || (het && het == it->id.id);
}

/* With --whole-hetjob=yes an item naming a non-leader's own id ("94") names its whole
 * het job: the leader's id is that of the component returned under id 94. */
static int names_job_whole(const struct acctfmt_sel *sel, const struct item *it,
                           const Tessera__AcctJob *job, Tessera__AcctJob *const *jobs,
                           size_t njobs)
{
    if (names_job(it, job, sel->whole_hetjob))
        return 1;
    if (!sel->whole_hetjob || !job->het_job_id || it->id.has_offset)
        return 0;
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i]->job_id == it->id.id && jobs[i]->het_job_id == job->het_job_id)
            return 1;
    return 0;
}

/* The job row and all its steps are printed: no -j, or an item without a step part
 * names the job. */
static int job_full(const struct acctfmt_sel *sel, const Tessera__AcctJob *job,
                    Tessera__AcctJob *const *jobs, size_t njobs)
{
    if (!sel || !sel->any_step)
        return 1;
    for (size_t i = 0; i < sel->n; i++)
        if (!sel->items[i].has_step && names_job_whole(sel, &sel->items[i], job, jobs, njobs))
            return 1;
    return 0;
}

static int step_named(const struct acctfmt_sel *sel, const Tessera__AcctJob *job,
                      const Tessera__AcctStep *step)
{
    for (size_t i = 0; i < sel->n; i++) {
        const struct item *it = &sel->items[i];
        if (it->has_step && it->step_id == step->step_id && names_job(it, job, 0))
            return 1;
    }
    return 0;
}

/* Steps by job id, then the batch script, then step id. */
static int step_order(const void *a, const void *b)
{
    const Tessera__AcctStep *x = *(const Tessera__AcctStep *const *)a;
    const Tessera__AcctStep *y = *(const Tessera__AcctStep *const *)b;
    int xb = x->step_id == ACCTFMT_STEP_BATCH;
    int yb = y->step_id == ACCTFMT_STEP_BATCH;

    if (x->job_id != y->job_id)
        return x->job_id < y->job_id ? -1 : 1;
    if (xb != yb)
        return xb ? -1 : 1;
    return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

/* The first of the sorted steps that belongs to job_id (or n when none). */
static size_t first_step(Tessera__AcctStep **sorted, size_t n, uint32_t job_id)
{
    size_t lo = 0;
    size_t hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid]->job_id < job_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void add_row(struct acctfmt_rows *out, const Tessera__AcctJob *job,
                    const Tessera__AcctStep *step, Tessera__AcctStep *const *steps, size_t ns)
{
    struct acctfmt_row *r = &out->rows[out->n++];

    r->job = job;
    r->step = step;
    r->steps = (const Tessera__AcctStep *const *)steps;
    r->nsteps = ns;
}

/* One job's rows; its steps are sorted[from..from+ns). */
static void job_rows(struct acctfmt_rows *out, const Tessera__AcctJob *job, int full,
                     const struct acctfmt_sel *sel, int no_steps,
                     Tessera__AcctStep *const *steps, size_t ns)
{
    if (full)
        add_row(out, job, NULL, steps, ns);
    for (size_t i = 0; !no_steps && i < ns; i++)
        if (full || step_named(sel, job, steps[i]))
            add_row(out, job, steps[i], steps, ns);
}

int acctfmt_rows_build(Tessera__AcctJob *const *jobs, size_t njobs,
                       Tessera__AcctStep *const *steps, size_t nsteps,
                       const struct acctfmt_sel *sel, int no_steps, struct acctfmt_rows *out)
{
    Tessera__AcctStep **sorted = malloc((nsteps + 1) * sizeof(*sorted));

    out->n = 0;
    out->steps = NULL;
    out->rows = malloc((njobs + nsteps + 1) * sizeof(*out->rows));
    if (!sorted || !out->rows) {
        free(sorted);
        free(out->rows);
        out->rows = NULL;
        return TS_ENOMEM;
    }
    if (nsteps) { /* steps is NULL when there are none */
        memcpy(sorted, steps, nsteps * sizeof(*sorted));
        qsort(sorted, nsteps, sizeof(*sorted), step_order);
    }
    for (size_t j = 0; j < njobs; j++) {
        size_t from = first_step(sorted, nsteps, jobs[j]->job_id);
        size_t to = from;
        while (to < nsteps && sorted[to]->job_id == jobs[j]->job_id)
            to++;
        job_rows(out, jobs[j], job_full(sel, jobs[j], jobs, njobs), sel, no_steps,
                 sorted + from, to - from);
    }
    out->steps = sorted; /* the rows point into it */
    return TS_OK;
}

void acctfmt_rows_free(struct acctfmt_rows *rows)
{
    free(rows->rows);
    free(rows->steps);
    rows->rows = NULL;
    rows->steps = NULL;
    rows->n = 0;
}
