#include "common/format/fmtspec.h"

#include "common/util/errors.h"

#include <string.h>

/* One "%[.#][width]X" at p (after the '%'); *end past it. */
static int scan_field(const char *p, const char **end, const struct fmtspec_ops *ops, void *arg,
                      const char **bad, size_t *badlen)
{
    struct fmtspec_field f = {0};
    const char *spec = p;
    long w = 0;
    for (; *p == '.' || *p == '#'; p++)
        *(*p == '.' ? &f.right : &f.grow) = 1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if ((w = w * 10 + (*p - '0')) > FMTSPEC_MAX_WIDTH) {
            *bad = spec; /* the whole field: its width is what is wrong */
            *badlen = strlen(spec);
            return TS_EOPTVALUE;
        }
    }
    f.letter = *p;
    f.width = (int)w;
    int err = *p ? ops->field(arg, &f) : TS_EOPTVALUE;
    if (err == TS_EOPTVALUE) { /* Slurm names the letter, or nothing at the end */
        *bad = p;
        *badlen = *p ? 1 : 0;
    }
    *end = *p ? p + 1 : p;
    return err;
}

int fmtspec_scan(const char *format, const struct fmtspec_ops *ops, void *arg, const char **bad,
                 size_t *badlen)
{
    const char *p = format ? format : "";
    int err = TS_OK;
    while (*p && !err) {
        const char *pct = strchr(p, '%');
        if (!pct)
            return ops->literal(arg, p, strlen(p));
        if (pct > p && (err = ops->literal(arg, p, (size_t)(pct - p))))
            return err;
        if (pct[1] == '%') {
            err = ops->literal(arg, "%", 1);
            p = pct + 2;
            continue;
        }
        err = scan_field(pct + 1, &p, ops, arg, bad, badlen);
    }
    return err;
}
