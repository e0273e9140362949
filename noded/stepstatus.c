/* The step daemon's status file: encode, decode, and the tasks' sums (noded/stepstatus.h).
 */
#include "noded/stepstatus.h"

#include "common/errors.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int stepstatus_worse(int a, int b)
{
    int ka = WIFSIGNALED(a) ? 256 + WTERMSIG(a) : WEXITSTATUS(a);
    int kb = WIFSIGNALED(b) ? 256 + WTERMSIG(b) : WEXITSTATUS(b);
    return kb > ka ? b : a;
}

static uint64_t usec(const struct timeval *tv)
{
    if (tv->tv_sec < 0 || tv->tv_usec < 0)
        return 0;
    return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

void stepstatus_usage_add(struct stepstatus_usage *u, const struct rusage *ru, uint32_t rank)
{
    uint64_t rss = ru && ru->ru_maxrss > 0 ? (uint64_t)ru->ru_maxrss : 0; /* KB on Linux */
    if (ru) {
        u->user_usec += usec(&ru->ru_utime);
        u->sys_usec += usec(&ru->ru_stime);
    }
    if (u->ntasks == 0 || rss > u->max_rss_kb) {
        u->max_rss_kb = rss;
        u->max_rss_task = rank;
    }
    u->ntasks++;
}

void stepstatus_add_task(struct stepstatus *st, int status, const struct rusage *ru,
                         uint32_t rank)
{
    st->status = stepstatus_worse(st->status, status);
    stepstatus_usage_add(&st->usage, ru, rank);
    st->has_usage = 1;
}

size_t stepstatus_format(const struct stepstatus *st, char *buf, size_t len)
{
    int n;
    if (st->has_usage)
        n = snprintf(buf, len,
                     "status %d\nuser_usec %" PRIu64 "\nsys_usec %" PRIu64
                     "\nmax_rss_kb %" PRIu64 "\nmax_rss_task %" PRIu32 "\n",
                     st->status, st->usage.user_usec, st->usage.sys_usec,
                     st->usage.max_rss_kb, st->usage.max_rss_task);
    else
        n = snprintf(buf, len, "status %d\n", st->status);
    return n < 0 ? 0 : (size_t)n;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return TS_EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || (*end && *end != '\n') || v > max)
        return TS_EINVAL;
    *out = v;
    return TS_OK;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || (*end && *end != '\n') || v < INT32_MIN || v > INT32_MAX)
        return TS_EINVAL;
    *out = (int)v;
    return TS_OK;
}

int stepstatus_parse(const char *text, struct stepstatus *st)
{
    struct stepstatus r = {0};
    int have_status = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        const char *sp = strchr(line, ' ');
        const char *next = nl ? nl + 1 : NULL;
        if (!sp || (nl && sp > nl)) { /* not "key value" */
            if (line[0] != '\n')
                return TS_EINVAL;
            line = next;
            continue;
        }
        size_t klen = (size_t)(sp - line);
        const char *val = sp + 1;
        uint64_t v = 0;
        int err = TS_OK;
#define KEY(k) (klen == sizeof(k) - 1 && !memcmp(line, k, klen))
        if (KEY("status")) {
            err = parse_int(val, &r.status);
            have_status = 1;
        } else if (KEY("user_usec")) {
            err = parse_u64(val, UINT64_MAX, &r.usage.user_usec);
            r.has_usage = 1;
        } else if (KEY("sys_usec")) {
            err = parse_u64(val, UINT64_MAX, &r.usage.sys_usec);
            r.has_usage = 1;
        } else if (KEY("max_rss_kb")) {
            err = parse_u64(val, UINT64_MAX, &r.usage.max_rss_kb);
            r.has_usage = 1;
        } else if (KEY("max_rss_task")) {
            err = parse_u64(val, UINT32_MAX, &v);
            r.usage.max_rss_task = (uint32_t)v;
            r.has_usage = 1;
        } /* else: a key of a later writer */
#undef KEY
        if (err)
            return err;
        line = next;
    }
    if (!have_status)
        return TS_EINVAL;
    *st = r;
    return TS_OK;
}

int stepstatus_write(const char *path, const struct stepstatus *st)
{
    char text[256];
    size_t n = stepstatus_format(st, text, sizeof(text));
    if (n >= sizeof(text))
        return TS_ETOOBIG;
    /* written aside and renamed into place: a reader sees the whole file or none */
    char tmp[1100];
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return TS_ETOOBIG;
    FILE *f = fopen(tmp, "we");
    if (!f)
        return TS_ESYS;
    int ok = fwrite(text, 1, n, f) == n;
    if (fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok)
        unlink(tmp);
    return ok ? TS_OK : TS_ESYS;
}

int stepstatus_read(const char *path, struct stepstatus *st)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    char text[1024];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return TS_ESYS;
    text[n] = '\0';
    return stepstatus_parse(text, st);
}
