/* squeue -s and scontrol show step.
 *
 * A format compiles to the list squeue's and sinfo's formats share (fmtlist.h) over one
 * table of step fields, as jobfmt does for jobs; the cells are padded and cut the same
 * way, so job and step columns line up alike.
 */
#include "common/format/stepfmt.h"

#include "common/format/fmtlist.h"
#include "common/util/errors.h"
/* jobfmt's own header: the context's clock (jobfmt.h has no accessor for it) and the
 * texts that job and step output must print alike: "(null)", timestamps, exit codes. */
#include "common/format/jobfmt_int.h"
#include "common/job/jobstate.h"
#include "common/text/timefmt.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef const char *(*getter_fn)(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len);

struct field {
    char letter;
    const char *header;
    getter_fn get;
    int header_left; /* header left-justified even under "." (Slurm's START_TIME) */
};

struct stepfmt {
    struct fmtlist list; /* over fields[] */
};

/* ---- values ------------------------------------------------------------------------- */

/* Seconds the step has run: to now while it runs, to end_time once it ended (a step is
 * never suspended on its own, so there is no suspended time to take off). */
static int64_t time_used(const Tessera__StepRecord *step, time_t now)
{
    int64_t until = now;

    if (step->start_time == 0)
        return 0;
    if (jobstate_is_finished(step->state) && step->end_time)
        until = step->end_time;
    return until > step->start_time ? until - step->start_time : 0;
}

static const char *step_id_text(const Tessera__StepRecord *step, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32 ".%" PRIu32, step->job_id, step->step_id);
    return buf;
}

static const char *put_u32(uint32_t v, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIu32, v);
    return buf;
}

/* ---- getters ------------------------------------------------------------------------ */

static const char *get_id(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx, char *buf,
                          size_t len)
{
    return step_id_text(step, buf, len);
}

static const char *get_name(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                            char *buf, size_t len)
{
    return jobfmt_or_null(step->name);
}

static const char *get_partition(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    return jobfmt_or_null(step->partition);
}

static const char *get_user(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                            char *buf, size_t len)
{
    return jobfmt_user_name(ctx, step->user_id);
}

static const char *get_uid(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx, char *buf,
                           size_t len)
{
    return put_u32(step->user_id, buf, len);
}

static const char *get_time_used(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                                 char *buf, size_t len)
{
    timefmt_format_elapsed(time_used(step, ctx->now), buf, len);
    return buf;
}

/* Steps run within their job's limit and have none of their own. */
static const char *get_time_limit(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                                  char *buf, size_t len)
{
    return "UNLIMITED";
}

static const char *get_tasks(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                             char *buf, size_t len)
{
    return put_u32(step->ntasks, buf, len);
}

static const char *get_nodes(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                             char *buf, size_t len)
{
    return jobfmt_or_empty(step->nodes);
}

/* Slurm prints the step's GRES request as it is, "(null)" without one; Tessera has no
 * GRES. */
static const char *get_tres_per_job(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                                    char *buf, size_t len)
{
    return "(null)";
}

static const char *get_start(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                             char *buf, size_t len)
{
    return jobfmt_time_text(step->start_time, "N/A", buf, len);
}

static const char *get_state(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx,
                             char *buf, size_t len)
{
    return jobstate_name(step->state);
}

/* ---- the table ---------------------------------------------------------------------- */

static const struct field fields[] = {
    {'i', "STEPID", get_id, 0},
    {'j', "NAME", get_name, 0},
    {'P', "PARTITION", get_partition, 0},
    {'u', "USER", get_user, 0},
    {'U', "UID", get_uid, 0},
    {'M', "TIME", get_time_used, 0},
    {'l', "TIME_LIMIT", get_time_limit, 0},
    {'A', "TASKS", get_tasks, 0},
    {'N', "NODELIST", get_nodes, 0},
    /* Slurm's header for its step "%b", although the value is the per-node request. */
    {'b', "TRES_PER_JOB", get_tres_per_job, 0},
    /* Slurm prints this one header left-justified whatever the format says. */
    {'S', "START_TIME", get_start, 1},
    {'T', "STATE", get_state, 0}, /* Tessera only: see stepfmt.h */
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static const void *field_by_letter(char c)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].letter == c)
            return &fields[i];
    return NULL;
}

/* ---- compiling ---------------------------------------------------------------------- */

void stepfmt_free(struct stepfmt *fmt)
{
    if (!fmt)
        return;
    fmtlist_clear(&fmt->list);
    free(fmt);
}

int stepfmt_compile(const char *format, struct stepfmt **out, char *errbuf, size_t errlen)
{
    struct stepfmt *fmt = calloc(1, sizeof(*fmt));
    int rc;

    *out = NULL;
    if (!fmt)
        return TS_ENOMEM;
    /* "#" (sinfo's growing columns) means nothing to squeue and is ignored, as for jobs */
    rc = fmtlist_compile(&fmt->list, format, field_by_letter, "job step", errbuf, errlen);
    if (rc != TS_OK) {
        stepfmt_free(fmt);
        return rc;
    }
    *out = fmt;
    return TS_OK;
}

/* ---- printing ----------------------------------------------------------------------- */

/* What a row shows; the header is the line without one. */
struct row {
    const Tessera__StepRecord *step;
    struct jobfmt_ctx *ctx;
};

static void fill_cell(void *arg, size_t i, const struct fmtlist_item *it,
                      struct fmtlist_cell *cell, char *buf, size_t len)
{
    const struct row *r = arg;
    const struct field *fd = it->field;

    if (r) {
        cell->text = fd->get(r->step, r->ctx, buf, len);
        return;
    }
    /* Slurm leaves START_TIME's header left-justified whatever the format says. */
    cell->text = fd->header;
    cell->right = it->right && !fd->header_left;
}

char *stepfmt_header(const struct stepfmt *fmt)
{
    return fmtlist_line(&fmt->list, fill_cell, NULL, 1);
}

char *stepfmt_row(const struct stepfmt *fmt, const Tessera__StepRecord *step,
                  struct jobfmt_ctx *ctx)
{
    struct row r = {step, ctx};

    return fmtlist_line(&fmt->list, fill_cell, &r, JOBFMT_VALUE_MAX);
}

/* ---- scontrol show step ------------------------------------------------------------- */

#define TBUF 64

/* One line of the record: indented by three spaces after the first, or, on one line,
 * parted by a blank. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void show_line(FILE *f, int oneliner, const char *fmt, ...)
{
    va_list ap;

    if (ftell(f) > 0) /* not the record's first line */
        fputs(oneliner ? " " : "\n   ", f);
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

/* Slurm drops a step from its tables when it ends, so its layout has no place for how a
 * step ended. Tessera keeps ended steps a while (squeue -s -t all) and shows when and how
 * they ended on a line of its own after Slurm's lines, so that those keep their places
 * and a running step prints exactly as in Slurm. */
static void show_end(FILE *f, const Tessera__StepRecord *step, int oneliner)
{
    char end[TBUF], code[16];

    if (!jobstate_is_finished(step->state))
        return;
    show_line(f, oneliner, "EndTime=%s ExitCode=%s",
              jobfmt_time_text(step->end_time, "Unknown", end, sizeof(end)),
              jobfmt_exit_text(step->exit_code, code, sizeof(code)));
}

char *stepfmt_show(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx, int oneliner)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    char id[32], start[TBUF];

    if (!f)
        return NULL;
    /* UserId is the bare number in Slurm's step layout, unlike a job's "root(0)". */
    show_line(f, oneliner, "StepId=%s UserId=%" PRIu32 " StartTime=%s TimeLimit=UNLIMITED",
              step_id_text(step, id, sizeof(id)), step->user_id,
              jobfmt_time_text(step->start_time, "Unknown", start, sizeof(start)));
    show_line(f, oneliner, "State=%s Partition=%s NodeList=%s", jobstate_name(step->state),
              jobfmt_or_null(step->partition), jobfmt_or_null(step->nodes));
    show_line(f, oneliner, "Nodes=%" PRIu32 " CPUs=%" PRIu32 " Tasks=%" PRIu32 " Name=%s",
              step->nnodes, step->cpus, step->ntasks, jobfmt_or_null(step->name));
    /* A step's TRES has no billing; memory is left out: the record does not carry it. */
    show_line(f, oneliner, "TRES=cpu=%" PRIu32 ",node=%" PRIu32, step->cpus, step->nnodes);
    show_end(f, step, oneliner);
    fputs(oneliner ? "\n" : "\n\n", f);
    return memstream_done(f, &text);
}

/* ---- order -------------------------------------------------------------------------- */

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_default(const void *a, const void *b)
{
    const Tessera__StepRecord *x = *(Tessera__StepRecord *const *)a;
    const Tessera__StepRecord *y = *(Tessera__StepRecord *const *)b;
    int c = strcmp(jobfmt_or_empty(x->partition), jobfmt_or_empty(y->partition));

    if (c)
        return c;
    if ((c = cmp_u32(x->job_id, y->job_id)))
        return c;
    return cmp_u32(x->step_id, y->step_id);
}

void stepfmt_sort(Tessera__StepRecord **steps, size_t n)
{
    if (steps && n > 1)
        qsort(steps, n, sizeof(steps[0]), cmp_default);
}
