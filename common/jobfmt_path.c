/* File name patterns of a job's standard streams (sbatch -o/-e/-i, scontrol update
 * StdOut=...): the one place their escapes are filled in, both for what scontrol and
 * squeue show and for the file the node opens. The text is built exactly (a memstream)
 * and never past its limit: a pattern may repeat an escape any number of times. */
#include "common/jobfmt.h"

#include "common/errors.h"
#include "common/jobfmt_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm shows a job that is not part of an array with NO_VAL as its task id. */
#define NO_ARRAY_TASK "4294967294"

/* What the escapes become. user NULL: looked up through ctx (only when %u appears);
 * host NULL: %N and %% stay as written. */
struct fill_in {
    const char *user;
    struct jobfmt_ctx *ctx;
    const char *host;
};

/* The expansion so far: on f, never more than max bytes. */
struct path_out {
    FILE *f;
    size_t len, max;
    int too_long;
};

static void put(struct path_out *o, const char *s, size_t n)
{
    if (o->too_long || n > o->max - o->len) {
        o->too_long = 1;
        return;
    }
    fwrite(s, 1, n, o->f);
    o->len += n;
}

static void put_str(struct path_out *o, const char *s)
{
    put(o, s, strlen(s));
}

static const char *default_pattern(const Tessera__JobDesc *d, enum jobfmt_stream which)
{
    if (which == JOBFMT_STDIN)
        return jobfmt_is_set(d->std_in) ? d->std_in : "/dev/null";
    if (which == JOBFMT_STDERR && jobfmt_is_set(d->std_err))
        return d->std_err;
    /* errors go where the output goes unless -e was given */
    return jobfmt_is_set(d->std_out) ? d->std_out : "slurm-%j.out";
}

/* One "%c" escape; 0 when c is not one this fill knows (it stays as written). Every
 * escape a pattern may hold is filled in here. */
static int expand_escape(struct path_out *o, char c, const Tessera__JobRecord *job,
                         const struct fill_in *fill)
{
    const Tessera__JobDesc *d = jobfmt_desc(job);
    char num[16];

    switch (c) {
    case 'j':
    case 'A': /* the array's job id is the job's own id outside an array */
        snprintf(num, sizeof(num), "%" PRIu32, job->job_id);
        put_str(o, num);
        return 1;
    case 'a':
        put_str(o, NO_ARRAY_TASK);
        return 1;
    case 'u':
        put_str(o, fill->user ? fill->user : jobfmt_user_name(fill->ctx, d->user_id));
        return 1;
    case 'x':
        put_str(o, jobfmt_or_null(d->name));
        return 1;
    case 'N':
        if (!fill->host)
            return 0;
        put_str(o, fill->host);
        return 1;
    case '%': /* kept as "%%" until the file is named; its second % starts nothing */
        put(o, "%%", fill->host ? 1 : 2);
        return 1;
    default:
        return 0;
    }
}

/* One pass over the pattern: what an escape inserts (a job name holding "%N", a work
 * dir holding "%%") is never expanded again. */
static int expand(const Tessera__JobRecord *job, enum jobfmt_stream which,
                  const struct fill_in *fill, size_t max, char **out)
{
    const Tessera__JobDesc *d = jobfmt_desc(job);
    const char *p = default_pattern(d, which);
    char *text = NULL;
    size_t size = 0;

    *out = NULL;
    if (strlen(p) > max)
        return TS_EPATH_TOOLONG;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return TS_ENOMEM;
    struct path_out o = {.f = f, .max = max};
    if (*p != '/' && jobfmt_is_set(d->work_dir)) {
        put_str(&o, d->work_dir);
        put(&o, "/", 1);
    }
    for (; *p && !o.too_long; p++) {
        if (*p == '%' && p[1] && expand_escape(&o, p[1], job, fill))
            p++;
        else
            put(&o, p, 1);
    }
    if (!jobfmt_memstream_done(f, &text))
        return TS_ENOMEM;
    if (o.too_long) {
        free(text);
        return TS_EPATH_TOOLONG;
    }
    *out = text;
    return TS_OK;
}

char *jobfmt_std_path(const Tessera__JobRecord *job, enum jobfmt_stream which,
                      struct jobfmt_ctx *ctx)
{
    struct fill_in fill = {.ctx = ctx};
    char *path;

    /* shown as stored, however long: a record from before the limit is still readable */
    return expand(job, which, &fill, SIZE_MAX, &path) == TS_OK ? path : NULL;
}

int jobfmt_path_expand(const Tessera__JobRecord *job, enum jobfmt_stream which,
                       const struct jobfmt_path_fill *values, char **out)
{
    struct fill_in fill = {.user = values->user ? values->user : "", .host = values->host};

    return expand(job, which, &fill, JOBFMT_PATH_MAX - 1, out);
}
