/* The step daemon's status file: encode, decode, and the tasks' sums (noded/stepstatus.h).
 */
#include "noded/stepstatus.h"

#include "common/util/errors.h"
#include "common/util/safefs.h"

#include <errno.h>
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

/* Text into a buffer with snprintf's contract (need counts everything; buf holds what
 * fits, terminated), from system-call-free code: the batch script's waiter formats its
 * status between fork and exit, where stdio is unsafe (noded/job.c). */
struct sink {
    char *buf;
    size_t len, need;
};

static void put_char(struct sink *s, char c)
{
    if (s->need + 1 < s->len)
        s->buf[s->need] = c;
    s->need++;
}

static void put_str(struct sink *s, const char *text)
{
    while (*text)
        put_char(s, *text++);
}

static void put_u64(struct sink *s, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put_char(s, digits[--n]);
}

static void put_line(struct sink *s, const char *key, uint64_t v)
{
    put_str(s, key);
    put_char(s, ' ');
    put_u64(s, v);
    put_char(s, '\n');
}

size_t stepstatus_format(const struct stepstatus *st, char *buf, size_t len)
{
    struct sink s = {.buf = buf, .len = len};
    put_str(&s, "status ");
    if (st->status < 0)
        put_char(&s, '-');
    put_u64(&s, st->status < 0 ? (uint64_t)(-(int64_t)st->status) : (uint64_t)st->status);
    put_char(&s, '\n');
    if (st->has_usage) {
        put_line(&s, "user_usec", st->usage.user_usec);
        put_line(&s, "sys_usec", st->usage.sys_usec);
        put_line(&s, "max_rss_kb", st->usage.max_rss_kb);
        put_line(&s, "max_rss_task", st->usage.max_rss_task);
    }
    if (len)
        buf[s.need < len ? s.need : len - 1] = '\0';
    return s.need;
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

int stepstatus_write_at(int dirfd, const char *name, const struct stepstatus *st)
{
    char text[256];
    size_t n = stepstatus_format(st, text, sizeof(text));
    if (n >= sizeof(text))
        return TS_ETOOBIG;
    /* a reader sees the whole file or none */
    return safefs_write_atomic(dirfd, name, text, n, 0600);
}

int stepstatus_read_at(int dirfd, const char *name, struct stepstatus *st)
{
    char text[1024];
    size_t n;
    int err = safefs_read_small(dirfd, name, text, sizeof(text), &n);
    if (err == TS_ETOOBIG || err == TS_EPERM)
        return TS_EINVAL;
    return err ? err : stepstatus_parse(text, st);
}
