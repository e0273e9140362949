/* File name patterns of the standard streams (sbatch -o/-e/-i, scontrol update
 * StdOut=..., srun -o/-e/-i): the one place their escapes are filled in, for what
 * scontrol and squeue show, for the batch script's files the node opens, for what srun
 * fills in before its launch and for each task's files on its node. The text is built
 * exactly (a memstream) and never past its limit: a pattern may repeat an escape any
 * number of times, and a zero-padding width is bounded too. */
#include "common/job/stdpath.h"

#include "common/util/errors.h"
#include "common/util/memstream.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm shows a job that is not part of an array with NO_VAL as its task id. */
#define NO_ARRAY_TASK 4294967294u
/* A width above any path's length only makes the name too long: read no further. */
#define WIDTH_MAX STDPATH_MAX

/* The record's description, or an empty one when it has none. */
static const Tessera__JobDesc *desc_of(const Tessera__JobRecord *job)
{
    static const Tessera__JobDesc empty = TESSERA__JOB_DESC__INIT;
    return job->desc ? job->desc : &empty;
}

static int is_set(const char *s)
{
    return s && *s;
}

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

/* A number zero-padded to width (Slurm's "%5j"). */
static void put_num(struct path_out *o, int64_t value, size_t width)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%" PRId64, value);
    for (size_t i = (size_t)n; i < width && !o->too_long; i++)
        put(o, "0", 1);
    put(o, num, (size_t)n);
}

static const char *user_of(const struct stdpath_values *v)
{
    if (v->user)
        return v->user;
    return v->user_lookup ? v->user_lookup(v->user_arg) : NULL;
}

/* One escape: "%<width><c>". 0 when the values leave it unknown (it stays as written). */
static int expand_escape(struct path_out *o, char c, size_t width,
                         const struct stdpath_values *v)
{
    const char *text = NULL;
    switch (c) {
    case 'j':
        if (v->job_id < 0)
            return 0;
        put_num(o, v->job_id, width);
        return 1;
    case 'A': /* the array's job id is the job's own id outside an array */
        if (v->job_id < 0)
            return 0;
        put_num(o, v->array_job_id > 0 ? v->array_job_id : v->job_id, width);
        return 1;
    case 'a':
        if (v->job_id < 0)
            return 0;
        put_num(o, v->array_task_id >= 0 ? v->array_task_id : NO_ARRAY_TASK, width);
        return 1;
    case 's':
    case 'J':
        if (v->job_id < 0 || (v->step_id < 0 && !v->step_name))
            return 0;
        if (c == 'J') { /* a batch script's is the job id alone, as Slurm names it */
            put_num(o, v->job_id, width);
            if (v->step_name)
                return 1;
            put(o, ".", 1);
        }
        if (v->step_name)
            put_str(o, v->step_name);
        else
            put_num(o, v->step_id, c == 's' ? width : 0);
        return 1;
    case 't':
    case 'n':
        if ((c == 't' ? v->task_id : v->node_id) < 0)
            return 0;
        put_num(o, c == 't' ? v->task_id : v->node_id, width);
        return 1;
    case 'N':
        text = v->host;
        break;
    case 'u':
        text = v->user || v->user_lookup ? user_of(v) : NULL;
        break;
    case 'x':
        text = v->job_name;
        break;
    case '%': /* kept as "%%" until the file is named; its second % starts nothing */
        put(o, "%%", v->final ? 1 : 2);
        return 1;
    default:
        return 0;
    }
    if (!text)
        return 0;
    /* a width means nothing for a name; a name holding "%t" is no escape for the next
     * fill either */
    for (const char *p = text; *p && !o->too_long; p++) {
        int doubled = *p == '%' && v->quote_inserted;
        put(o, doubled ? "%%" : p, doubled ? 2 : 1);
    }
    return 1;
}

/* The width digits of the escape at p (p[0] == '%'), and where its letter is. */
static const char *escape_letter(const char *p, size_t *width)
{
    const char *q = p + 1;
    size_t w = 0;
    while (isdigit((unsigned char)*q)) {
        if (w <= WIDTH_MAX)
            w = w * 10 + (size_t)(*q - '0');
        q++;
    }
    *width = w > WIDTH_MAX ? WIDTH_MAX : w;
    return q;
}

int stdpath_pattern_expand(const char *pattern, const char *work_dir,
                          const struct stdpath_values *v, size_t max, char **out)
{
    char *text = NULL;
    size_t size = 0;

    *out = NULL;
    if (strlen(pattern) > max)
        return TS_EPATH_TOOLONG;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return TS_ENOMEM;
    struct path_out o = {.f = f, .max = max};
    if (*pattern != '/' && is_set(work_dir)) {
        put_str(&o, work_dir);
        put(&o, "/", 1);
    }
    /* a backslash anywhere turns every escape off (Slurm's "\\"); the backslashes go */
    int literal = strchr(pattern, '\\') != NULL;
    for (const char *p = pattern; *p && !o.too_long; p++) {
        size_t width;
        const char *letter = *p == '%' && !literal ? escape_letter(p, &width) : NULL;
        if (letter && *letter && expand_escape(&o, *letter, width, v))
            p = letter;
        else if (!literal || *p != '\\')
            put(&o, p, 1);
    }
    if (!memstream_done(f, &text))
        return TS_ENOMEM;
    if (o.too_long) {
        free(text);
        return TS_EPATH_TOOLONG;
    }
    *out = text;
    return TS_OK;
}

int stdpath_pattern_per_node(const char *pattern)
{
    if (strchr(pattern, '\\'))
        return 0;
    for (const char *p = strchr(pattern, '%'); p; p = strchr(p + 1, '%')) {
        size_t width;
        const char *letter = escape_letter(p, &width);
        if (*letter == 't' || *letter == 'n' || *letter == 'N')
            return 1;
        if (*letter == '%')
            p = letter; /* "%%t" is a percent sign and a t */
    }
    return 0;
}

int stdpath_pattern_is_none(const char *pattern)
{
    return pattern && strcmp(pattern, "none") == 0;
}

/* ------------------------------------------------------------------------------------ */
/* a batch job's streams */

static const char *default_pattern(const Tessera__JobDesc *d, enum stdpath_stream which)
{
    if (which == STDPATH_STDIN)
        return is_set(d->std_in) ? d->std_in : "/dev/null";
    if (which == STDPATH_STDERR && is_set(d->std_err))
        return d->std_err;
    /* errors go where the output goes unless -e was given */
    return is_set(d->std_out) ? d->std_out : "slurm-%j.out";
}

/* The job's own values; what only the node knows stays unknown. */
static void job_values(const Tessera__JobRecord *job, struct stdpath_values *v)
{
    const Tessera__JobDesc *d = desc_of(job);
    *v = (struct stdpath_values)STDPATH_VALUES_INIT;
    v->job_id = job->job_id;
    v->job_name = is_set(d->name) ? d->name : "(null)";
}

static int expand_job(const Tessera__JobRecord *job, enum stdpath_stream which,
                      const struct stdpath_values *v, size_t max, char **out)
{
    const char *p = default_pattern(desc_of(job), which);
    if (stdpath_pattern_is_none(p)) /* "none": nowhere, as Slurm */
        p = "/dev/null";
    return stdpath_pattern_expand(p, desc_of(job)->work_dir, v, max, out);
}

char *stdpath_shown(const Tessera__JobRecord *job, enum stdpath_stream which,
                    const char *(*user_lookup)(void *arg), void *user_arg)
{
    struct stdpath_values v;
    char *path;

    job_values(job, &v);
    v.user_lookup = user_lookup;
    v.user_arg = user_arg;
    /* shown as stored, however long: a record from before the limit is still readable */
    return expand_job(job, which, &v, SIZE_MAX, &path) == TS_OK ? path : NULL;
}

int stdpath_expand(const Tessera__JobRecord *job, enum stdpath_stream which,
                       const struct stdpath_fill *fill, char **out)
{
    struct stdpath_values v;

    job_values(job, &v);
    v.user = fill->user ? fill->user : "";
    if (fill->host) { /* the batch script: step "batch", its one task on its first node */
        v.host = fill->host;
        v.step_name = "batch";
        v.task_id = 0;
        v.node_id = 0;
        v.final = 1;
    }
    return expand_job(job, which, &v, STDPATH_MAX - 1, out);
}
