/* The SWF reader (contrib/sim/swf.h). */
#include "contrib/sim/swf.h"

#include "common/util/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* SWF lines are about 100 characters; anything this long is not SWF. */
#define LINE_MAX_LEN 4096
/* Beyond this a time or count is not a real trace's, and doubles lose whole seconds. */
#define VALUE_MAX 1e15

/* Field numbers as the format counts them (1-based). */
enum { F_ID = 1, F_SUBMIT = 2, F_RUN = 4, F_ALLOC = 5, F_REQ_PROCS = 8, F_REQ_TIME = 9,
       F_USER = 12, F_GROUP = 13 };

struct reader {
    struct swf_trace *t;
    size_t cap;
    const char *name;
    size_t line;
    char *err;
    size_t errlen;
};

static int fail(struct reader *r, int code, const char *what)
{
    snprintf(r->err, r->errlen, "%s:%zu: %s", r->name, r->line, what);
    return code;
}

/* Splits a record into its fields; f[0] is unused so that f[k] is field k. */
static int split_fields(struct reader *r, const char *s, double f[SWF_FIELDS + 1])
{
    size_t n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            break;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v) || fabs(v) > VALUE_MAX ||
            (*end && *end != ' ' && *end != '\t' && *end != '\r'))
            return fail(r, TS_EINVAL, "a field is not a number");
        if (++n > SWF_FIELDS)
            return fail(r, TS_EINVAL, "more than 18 fields");
        f[n] = v;
        s = end;
    }
    if (n < SWF_FIELDS) {
        char what[64];
        snprintf(what, sizeof(what), "expected 18 fields, found %zu", n);
        return fail(r, TS_EINVAL, what);
    }
    return TS_OK;
}

static int push(struct reader *r, const struct swf_job *j)
{
    struct swf_trace *t = r->t;
    if (t->njobs == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        struct swf_job *jobs = realloc(t->jobs, cap * sizeof(*jobs));
        if (!jobs)
            return fail(r, TS_ENOMEM, "out of memory");
        t->jobs = jobs;
        r->cap = cap;
    }
    t->jobs[t->njobs++] = *j;
    return TS_OK;
}

/* -1 and other negative ids mean unknown in SWF; keep them as -1. */
static int32_t id_field(double v)
{
    return v < 0 || v > INT32_MAX ? -1 : (int32_t)llround(v);
}

static int parse_record(struct reader *r, const char *s)
{
    double f[SWF_FIELDS + 1];
    int err = split_fields(r, s, f);
    if (err)
        return err;
    double procs = ceil(f[F_REQ_PROCS] > 0 ? f[F_REQ_PROCS] : f[F_ALLOC]);
    if (f[F_ID] < 0 || f[F_ID] > UINT32_MAX || procs > UINT32_MAX)
        return fail(r, TS_EINVAL, "job id or processor count out of range");
    struct swf_job j = {
        .id = (uint32_t)llround(f[F_ID]),
        .submit = llround(f[F_SUBMIT]),
        .run = (int64_t)ceil(f[F_RUN]),
        .procs = procs > 0 ? (uint32_t)procs : 0,
        .estimate = (int64_t)ceil(f[F_REQ_TIME]),
        .user = id_field(f[F_USER]),
        .group = id_field(f[F_GROUP]),
    };
    /* nothing to replay: the job never ran, had no size, or has no known submit time */
    if (j.run <= 0 || j.procs == 0 || j.submit < 0) {
        r->t->dropped++;
        return TS_OK;
    }
    if (j.estimate < j.run)
        j.estimate = j.run; /* a job runs at least as long as it did */
    return push(r, &j);
}

/* "; MaxNodes: 100": the only header lines the simulator uses; others are notes, and a
 * note that does not parse is not an error. */
static void parse_header(struct reader *r, const char *s)
{
    s += strspn(s, " \t");
    uint32_t *slot = NULL;
    if (strncmp(s, "MaxNodes:", 9) == 0)
        slot = &r->t->max_nodes;
    else if (strncmp(s, "MaxProcs:", 9) == 0)
        slot = &r->t->max_procs;
    if (!slot)
        return;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s + 9, &end, 10);
    if (!errno && end != s + 9 && v > 0 && v <= UINT32_MAX)
        *slot = (uint32_t)v;
}

static int parse_line(struct reader *r, const char *s)
{
    r->line++;
    s += strspn(s, " \t\r");
    if (*s == ';') {
        parse_header(r, s + 1);
        return TS_OK;
    }
    if (!*s)
        return TS_OK;
    return parse_record(r, s);
}

static int reader_begin(struct reader *r, const char *name, char *errbuf, size_t errlen)
{
    static char dummy[1];
    *r = (struct reader){.name = name, .err = errbuf ? errbuf : dummy,
                         .errlen = errbuf ? errlen : sizeof(dummy)};
    r->err[0] = '\0';
    r->t = calloc(1, sizeof(*r->t));
    return r->t ? TS_OK : TS_ENOMEM;
}

/* Hands the trace over on success and frees it on failure. */
static int reader_end(struct reader *r, int err, struct swf_trace **out)
{
    if (err) {
        swf_destroy(r->t);
        return err;
    }
    *out = r->t;
    return TS_OK;
}

/* A read or decompression error (a truncated .gz among them), as the reader's error. */
static int gz_failed(struct reader *r, gzFile f)
{
    int zerr = Z_OK;
    const char *msg = gzerror(f, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return TS_OK;
    return fail(r, TS_ESYS, zerr == Z_ERRNO ? strerror(errno) : msg);
}

/* The line that gzgets left in buf, without its newline. A line without one is the last,
 * or cut short by an error, or longer than the buffer. */
static int chomp(struct reader *r, gzFile f, char *buf)
{
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n') {
        buf[len - 1] = '\0';
        return TS_OK;
    }
    if (gz_failed(r, f))
        return TS_ESYS;
    if (len == LINE_MAX_LEN - 1 && !gzeof(f)) {
        r->line++;
        return fail(r, TS_EINVAL, "line too long");
    }
    return TS_OK;
}

static int read_lines(struct reader *r, gzFile f)
{
    char buf[LINE_MAX_LEN];
    int err = TS_OK;
    while (!err && gzgets(f, buf, sizeof(buf))) {
        err = chomp(r, f, buf);
        if (!err)
            err = parse_line(r, buf);
    }
    return err ? err : gz_failed(r, f);
}

int swf_read(const char *path, struct swf_trace **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    struct reader r;
    if (reader_begin(&r, path, errbuf, errlen) != TS_OK)
        return TS_ENOMEM;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(r.err, r.errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        return reader_end(&r, TS_ENOENT, out);
    }
    gzbuffer(f, 1 << 17);
    int err = read_lines(&r, f);
    gzclose(f);
    return reader_end(&r, err, out);
}

int swf_parse(const char *name, const char *text, struct swf_trace **out, char *errbuf,
              size_t errlen)
{
    *out = NULL;
    struct reader r;
    if (reader_begin(&r, name, errbuf, errlen) != TS_OK)
        return TS_ENOMEM;
    char buf[LINE_MAX_LEN];
    int err = TS_OK;
    while (!err && *text) {
        size_t len = strcspn(text, "\n");
        if (len >= sizeof(buf)) {
            r.line++;
            err = fail(&r, TS_EINVAL, "line too long");
            break;
        }
        memcpy(buf, text, len);
        buf[len] = '\0';
        err = parse_line(&r, buf);
        text += len + (text[len] == '\n');
    }
    return reader_end(&r, err, out);
}

void swf_destroy(struct swf_trace *t)
{
    if (!t)
        return;
    free(t->jobs);
    free(t);
}

uint32_t swf_machine_size(const struct swf_trace *t)
{
    if (t->max_nodes)
        return t->max_nodes;
    if (t->max_procs)
        return t->max_procs;
    uint32_t largest = 0;
    for (size_t i = 0; i < t->njobs; i++)
        if (t->jobs[i].procs > largest)
            largest = t->jobs[i].procs;
    return largest;
}
