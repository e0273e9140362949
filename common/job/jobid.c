#include "common/job/jobid.h"

#include "common/util/errors.h"

#include <ctype.h>

/* A decimal number without sign or leading "+"; advances *s past it. */
static int parse_number(const char **s, uint32_t max, uint32_t *out)
{
    const char *p = *s;
    if (!isdigit((unsigned char)*p))
        return TS_EINVALID_JOB_ID;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > max)
            return TS_EINVALID_JOB_ID;
    }
    *out = (uint32_t)v;
    *s = p;
    return TS_OK;
}

int jobid_parse(const char *s, struct jobid *out)
{
    out->has_offset = 0;
    out->offset = 0;
    if (!s || parse_number(&s, JOBID_MAX, &out->id) || out->id == 0)
        return TS_EINVALID_JOB_ID;
    if (*s == '+') {
        s++;
        if (parse_number(&s, JOBID_MAX, &out->offset))
            return TS_EINVALID_JOB_ID;
        out->has_offset = 1;
    }
    return *s ? TS_EINVALID_JOB_ID : TS_OK;
}
